"""Shared by the test modules: hypothesis strategies (random arms, models and states)
and independent reference computations (direct integration, central differences)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from amm import AssumedModesModel
from core import Arm, Damping, Joint, Link, LumpedMass, Payload

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
    tip = draw(st.none() | payloads())
    return Link.flexible(
        L,
        draw(st.floats(0.2, 3.0)),
        draw(st.floats(5.0, 200.0)),
        EI_out=draw(st.floats(5.0, 200.0)) if out_of_plane else None,
        lumped_masses=lumped,
        tip_payload=tip,
    )


@st.composite
def rotations(draw) -> np.ndarray:
    """A rotation matrix about an arbitrary axis: a normalized quaternion of
    bounded components (drawn away from zero so the normalization is safe)."""
    quaternion = draw(hnp.arrays(float, 4, elements=st.floats(-1.0, 1.0)).filter(lambda v: v @ v > 0.01))
    w, x, y, z = quaternion / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


@st.composite
def inertia_tensors(draw, low: float = 1e-4, high: float = 0.2) -> np.ndarray:
    """A physical inertia tensor: principal moments obeying the triangle inequality
    (each at most the sum of the other two), in axes rotated about all three axes."""
    a, b = draw(st.floats(low, high)), draw(st.floats(low, high))
    c = draw(st.floats(max(abs(a - b), low), a + b))
    R = draw(rotations())
    tensor = R @ np.diag([a, b, c]) @ R.T
    return 0.5 * (tensor + tensor.T)


@st.composite
def payloads(draw) -> Payload:
    """A tip payload: a point mass, a scalar inertia or a full tensor."""
    mass = draw(st.floats(0.0, 1.0))
    inertia = draw(st.sampled_from(["point", "scalar", "tensor"]))
    if inertia == "point":
        return Payload(mass)
    if inertia == "scalar":
        return Payload(mass, draw(st.floats(0.0, 0.01)))
    return Payload(mass, draw(inertia_tensors(1e-5, 0.01)))


@st.composite
def rigid_links(draw, spatial: bool):
    L = draw(lengths)
    m = draw(masses)
    if not spatial:
        return Link.rigid(L, m, com=draw(st.floats(0.0, 1.0)) * L, inertia=draw(st.floats(1e-3, 0.2)))
    com = draw(st.tuples(*[st.floats(-0.3, 0.3)] * 3))
    return Link.rigid(L, m, com=com, inertia=draw(inertia_tensors(1e-3, 0.2)))


@st.composite
def arms(draw, max_links: int = 4, spatial: bool | None = None):
    """Random serial arms: 1..max_links links, rigid/flexible, planar or spatial DH
    (``spatial`` None: either, drawn)."""
    n = draw(st.integers(1, max_links))
    spatial = draw(st.booleans()) if spatial is None else spatial
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
        payload = draw(payloads())
    gravity = (0.0, -9.81, 0.0) if draw(st.booleans()) else (0.0, 0.0, 0.0)
    if spatial:
        return Arm.from_dh(joints, links, payload=payload, gravity=gravity)
    return Arm.planar(links, payload=payload, gravity=gravity, joints=joints)


def tilts(arm, number: int) -> bool:
    """Link ``number`` is flexible, on a revolute joint and bends in two planes: a pinned
    (chord) frame there turns with the out-of-plane root slope (core.dynamics.kinematics)."""
    link, joint = arm.links[number - 1], arm.joints[number - 1]
    return link.is_flexible and link.EI_out is not None and not arm.is_planar and joint.kind == "revolute"


def _drawn_arm(draw, max_links: int, tilted: bool):
    """An arm of :func:`arms`; ``tilted``: a spatial one with at least one link that :func:`tilts`."""
    if not tilted:
        return draw(arms(max_links))
    arm = draw(arms(max_links, spatial=True))
    assume(any(tilts(arm, number) for number in arm.flexible_links))
    return arm


@st.composite
def amm_models(draw, max_links: int = 4, max_modes: int = 3, tilted: bool = False):
    """Random assumed-modes models: every flexible link a shape family and a mode count, drawn
    (pinned-pinned on revolute links only). ``tilted``: pinned-pinned on every link that
    :func:`tilts`, at least one."""
    arm = _drawn_arm(draw, max_links, tilted)
    choices = {}
    for number in arm.flexible_links:
        families = ["clamped-free", "clamped-mass"]
        if arm.joints[number - 1].kind == "revolute":
            families.append("pinned-pinned")
        if tilted and tilts(arm, number):
            families = ["pinned-pinned"]
        choices[number] = (draw(st.sampled_from(families)), draw(st.integers(1, max_modes)))
    return AssumedModesModel(arm, shapes=choices)


#: Deflection scales drawn by :func:`states` [m or rad per coordinate]: from
#: round-off-sized to large (a fifth of a typical link length).
FLEX_SCALES = (1e-6, 1e-3, 0.05, 0.2)


@st.composite
def states(draw, model, flex_scale: float | None = None, tiny_rates: bool = True):
    """Random (q, q̇) for ``model``, drawn element by element so a failure shrinks:
    joint angles in ±π, prismatic joints in ±0.5 m (free lengths of translating
    links in [0.3 L, L]), flexible coordinates of size ``flex_scale`` (drawn from
    :data:`FLEX_SCALES` when not given), rates in ±3 (``tiny_rates=False``: none below
    1e-100 in magnitude but zero, for checks whose bound scales with |q̇|: the products of
    rates near the bottom of the float range underflow and keep no relative digits)."""
    scale = draw(st.sampled_from(FLEX_SCALES)) if flex_scale is None else flex_scale
    joints = []
    for joint, link in zip(model.arm.joints, model.arm.links, strict=True):
        if joint.kind == "revolute":
            joints.append(draw(st.floats(-math.pi, math.pi)))
        elif link.is_flexible:  # a translating link's joint variable is its free length
            joints.append(draw(st.floats(0.3 * link.length, link.length)))
        else:
            joints.append(draw(st.floats(-0.5, 0.5)))
    unit = st.floats(-1.0, 1.0)
    flexible = draw(hnp.arrays(float, model.n_dof - model.n_joints, elements=unit))
    q = np.concatenate([np.array(joints, dtype=float), scale * flexible])
    rates = st.floats(-3.0, 3.0)
    if not tiny_rates:
        rates = st.just(0.0) | st.floats(1e-100, 3.0) | st.floats(-3.0, -1e-100)
    qd = draw(hnp.arrays(float, model.n_dof, elements=rates))
    return q, qd


@st.composite
def fem_models(draw, max_links: int = 4, max_elements: int = 3, tilted: bool = False):
    """Random finite-element models: every flexible link an element count and a frame, drawn
    (pinned on revolute links only). ``tilted``: the pinned frame on every link that
    :func:`tilts`, at least one."""
    from fem import FiniteElementModel

    arm = _drawn_arm(draw, max_links, tilted)
    counts, frames = {}, {}
    for number in arm.flexible_links:
        options = ["clamped", "pinned"] if arm.joints[number - 1].kind == "revolute" else ["clamped"]
        if tilted and tilts(arm, number):
            options = ["pinned"]
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


# -- independent reference computations --------------------------------------


def mass_rate_by_differences(model, q, qd, step=1e-6):
    """Ṁ = dM/dt along q̇ by central differences (independent of the complex-step ∂M/∂q).

    The configuration moves by ``step`` (h = step / max|q̇|), so the round-off
    ε‖M‖/(2h) of the quotient scales with |q̇| like Ṁ itself (a fixed h made it
    an absolute ~1e-10‖M‖, which hypothesis exposed with rates shrunk to 2e-3).
    """
    h = step / max(np.max(np.abs(qd)), 1e-300)
    return (model.mass_matrix(q + h * qd) - model.mass_matrix(q - h * qd)) / (2 * h)


def beam_kinetic_energy(model, q, qd, points=40, h=1e-6, panels=1):
    """½∫ρA|ṙ|² ds over every flexible beam plus point masses, from point velocities.

    Independent of the engine's inertia integrals: positions from
    ``point_position`` (kinematics and basis evaluation only), velocities by
    central differences along q̇, Gauss–Legendre over each beam (on ``panels``
    equal pieces of it: a multiple of a uniform mesh's element count makes the
    rule exact for finite elements, whose integrand has kinks at the nodes).

    A translating link (flexible, on a prismatic joint) is integrated over the
    whole beam, s ∈ [l − L, 0] inside the hub and [0, l] outside; its material
    slides along the beam axis at l̇, so a point's velocity is the rate of the
    place at fixed s plus l̇ times the axis (the convective term l̇ ∂w/∂s is
    neglected, as in the model, docs/MODEL.md, Dynamics).
    """
    nodes, weights = np.polynomial.legendre.leggauss(points)
    translating = model.arm.translating_links
    total = 0.0
    for number, link in enumerate(model.arm.links, start=1):

        def position(s, sign, number=number):
            return model.point_position(number, s, q + sign * h * qd)

        def velocity(s):
            return (position(s, 1) - position(s, -1)) / (2 * h)

        for lumped in link.lumped_masses:
            total += 0.5 * lumped.mass * velocity(lumped.position) @ velocity(lumped.position)
        if number in translating:
            i = number - 1
            l, rate = q[i], qd[i]
            axis = model.kinematics.frames(q[None], jacobians=False)[i].R_body[0][:, 0]

            def material(s, rate=rate, axis=axis):
                return velocity(s) + rate * axis

            pieces = [(l - link.length, 0.0), (0.0, l)]
            if link.tip_payload is not None:
                # The payload sits on the tip s = l(t): it moves with the end of the beam.
                tip = (
                    model.point_position(number, q[i] + h * qd[i], q + h * qd)
                    - model.point_position(number, q[i] - h * qd[i], q - h * qd)
                ) / (2 * h)
                total += 0.5 * link.tip_payload.mass * tip @ tip
        else:
            material = velocity
            pieces = [(0.0, link.length)]
            if link.tip_payload is not None:
                total += 0.5 * link.tip_payload.mass * velocity(link.length) @ velocity(link.length)
        for a, b in pieces:
            if b - a <= 0:
                continue
            edges = np.linspace(a, b, panels + 1)
            for lo, hi in itertools.pairwise(edges):
                s = lo + 0.5 * (hi - lo) * (nodes + 1)
                speeds = np.array([material(si) @ material(si) for si in s])
                total += 0.5 * link.mass_per_length * 0.5 * (hi - lo) * (weights @ speeds)
    if model.arm.payload is not None:
        v = (model.tip_position(q + h * qd) - model.tip_position(q - h * qd)) / (2 * h)
        total += 0.5 * model.arm.payload.mass * v @ v
    return total


def everything_arm(tip_rotation: str = "chord", motor_inertia: float = 0.0, gear_ratio: float = 1.0) -> Arm:
    """A planar arm with every feature the equations carry: hubs, motors (joint 2's
    ``motor_inertia`` behind ``gear_ratio``), a lumped mass with rotary inertia, both payloads, offsets, both damping kinds,
    gravity along x and y."""
    return Arm.planar(
        [
            Link.rigid(0.3, 1.0, com=(0.1, 0.02, 0.0)),
            Link.flexible(
                0.8,
                0.6,
                20.0,
                damping=Damping.rayleigh(0.1, 0.01),
                lumped_masses=(LumpedMass(0.4, 0.2, 1e-3),),
                tip_payload=Payload(0.1, 1e-3),
            ),
            Link.flexible(0.5, 0.4, 10.0, damping=Damping.modal(0.02)),
        ],
        joints=[
            Joint(hub_inertia=0.01, motor_inertia=1e-4, gear_ratio=10, viscous_friction=0.1),
            Joint(
                hub_mass=0.3,
                hub_inertia=0.02,
                motor_inertia=motor_inertia,
                gear_ratio=gear_ratio,
                coulomb_friction=0.1,
            ),
            Joint(theta_offset=0.2, hub_inertia=0.01),
        ],
        payload=Payload(0.2, 1e-4),
        gravity=(1.0, -9.81),
        tip_rotation=tip_rotation,
    )


def relative_error(a, b) -> float:
    """max |a − b| over max |b| (max |a| when b is all zero): the agreement of two evaluations
    of the same quantity."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / scale) if scale else float(np.max(np.abs(a)))
