"""Hypothesis strategies: random arms, models and states for the property suites."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import strategies as st

from amm import AssumedModesModel
from core import Arm, Joint, Link, LumpedMass, Payload

lengths = st.floats(0.3, 1.5)
masses = st.floats(0.2, 3.0)


@st.composite
def flexible_links(draw, out_of_plane: bool, length=None):
    L = draw(lengths) if length is None else length
    lumped = draw(
        st.lists(
            st.builds(
                LumpedMass,
                position=st.floats(0.0, 1.0).map(lambda f: f * L),
                mass=st.floats(0.0, 0.5),
                inertia=st.floats(0.0, 0.01),
            ),
            max_size=2,
        )
    )
    tip = draw(st.none() | st.builds(Payload, mass=st.floats(0.0, 0.5), inertia=st.floats(0.0, 0.01)))
    return Link.flexible(
        L,
        draw(st.floats(0.2, 3.0)),
        draw(st.floats(5.0, 200.0)),
        EI_out=draw(st.floats(5.0, 200.0)) if out_of_plane else None,
        lumped_masses=lumped,
        tip_payload=tip,
    )


@st.composite
def rigid_links(draw, spatial: bool):
    L = draw(lengths)
    m = draw(masses)
    if not spatial:
        return Link.rigid(L, m, com=draw(st.floats(0.0, 1.0)) * L, inertia=draw(st.floats(1e-3, 0.2)))
    com = draw(st.tuples(*[st.floats(-0.3, 0.3)] * 3))
    diag = draw(st.tuples(*[st.floats(0.001, 0.2)] * 3))
    angle = draw(st.floats(0, math.pi))
    c, s = math.cos(angle), math.sin(angle)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    tensor = R @ np.diag(diag) @ R.T
    return Link.rigid(L, m, com=com, inertia=tensor)


@st.composite
def arms(draw, max_links: int = 4):
    """Random serial arms: 1..max_links links, rigid/flexible, planar or spatial DH."""
    n = draw(st.integers(1, max_links))
    spatial = draw(st.booleans())
    pattern = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not any(pattern):
        pattern[draw(st.integers(0, n - 1))] = True  # at least one flexible link
    links, joints = [], []
    for i, flexible in enumerate(pattern):
        kind = draw(st.sampled_from(["revolute", "prismatic"])) if spatial and i > 0 else "revolute"
        hub = dict(
            hub_mass=draw(st.floats(0.0, 0.5)),
            hub_inertia=draw(st.floats(0.0, 0.01)),
            motor_inertia=draw(st.floats(0.0, 1e-4)),
            gear_ratio=draw(st.floats(1.0, 50.0)),
        )
        alpha = draw(st.sampled_from([0.0, math.pi / 2, -math.pi / 2, 0.7])) if spatial else 0.0
        d = draw(st.floats(-0.2, 0.3)) if spatial else 0.0
        if flexible:
            link = draw(flexible_links(out_of_plane=spatial and draw(st.booleans())))
            a = link.length if kind == "revolute" else 0.0
            if kind == "prismatic":  # a translating link carries no lumped masses
                link = dataclasses.replace(link, lumped_masses=())
        else:
            link = draw(rigid_links(spatial))
            a = link.length
        links.append(link)
        joints.append(
            Joint(
                kind=kind,
                a=a,
                alpha=alpha,
                d=d,
                theta_offset=draw(st.floats(-1, 1)) if spatial else 0.0,
                **hub,
            )
        )
    payload = None
    if links[-1].tip_payload is None and draw(st.booleans()):
        payload = Payload(draw(st.floats(0.0, 1.0)), draw(st.floats(0.0, 0.01)))
    gravity = (0.0, -9.81, 0.0) if draw(st.booleans()) else (0.0, 0.0, 0.0)
    if spatial:
        return Arm.from_dh(joints, links, payload=payload, gravity=gravity)
    return Arm.planar(links, payload=payload, gravity=gravity, joints=joints)


@st.composite
def amm_models(draw, max_links: int = 4, max_modes: int = 3):
    arm = draw(arms(max_links))
    choices = {}
    for number in arm.flexible_links:
        link = arm.links[number - 1]
        joint = arm.joints[number - 1]
        two_planes = link.EI_out is not None and not arm.is_planar
        families = ["clamped-free", "clamped-mass"]
        if not two_planes and joint.kind == "revolute":
            families.append("pinned-pinned")
        choices[number] = (draw(st.sampled_from(families)), draw(st.integers(1, max_modes)))
    return AssumedModesModel(arm, shapes=choices)


@st.composite
def states(draw, model, flex_scale: float = 0.05):
    """Random (q, q̇) for ``model``: joint angles in ±π, prismatic in ±0.5 m (free
    lengths of translating links in [0.3 L, L]), small deflections."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    q = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, model.n_joints),
            flex_scale * rng.standard_normal(model.n_dof - model.n_joints),
        ]
    )
    for i, (joint, link) in enumerate(zip(model.arm.joints, model.arm.links, strict=True)):
        if joint.kind == "prismatic":
            q[i] = rng.uniform(0.3 * link.length, link.length) if link.is_flexible else rng.uniform(-0.5, 0.5)
    qd = rng.standard_normal(model.n_dof)
    return q, qd


@st.composite
def fem_models(draw, max_links: int = 4, max_elements: int = 3):
    from fem import FiniteElementModel

    arm = draw(arms(max_links))
    counts, frames = {}, {}
    for number in arm.flexible_links:
        link = arm.links[number - 1]
        joint = arm.joints[number - 1]
        two_planes = link.EI_out is not None and not arm.is_planar
        options = ["clamped"] if two_planes or joint.kind != "revolute" else ["clamped", "pinned"]
        counts[number] = draw(st.integers(1, max_elements))
        frames[number] = draw(st.sampled_from(options))
    return FiniteElementModel(arm, elements=counts, frame=frames)


def models(backend: str, **kwargs):
    """Random models of either backend."""
    return (
        amm_models(**kwargs)
        if backend == "amm"
        else fem_models(**{k.replace("max_modes", "max_elements"): v for k, v in kwargs.items()})
    )
