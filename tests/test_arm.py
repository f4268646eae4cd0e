"""Tests of the arm description (core.arm): validation, defaults, dict round trip."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import Arm, Damping, Joint, Link, LumpedMass, Payload

NAN = math.nan
INF = math.inf


def flexible(length: float = 0.5, **kwargs) -> Link:
    return Link.flexible(length, mass_per_length=1.2, EI=40.0, **kwargs)


# --------------------------------------------------------------------------
# Validation: every bad value is a ValueError naming the field and the value

BAD_LINKS = [
    (lambda: Link.rigid(-0.3, 1.0), "link: length must be > 0, got -0.3"),
    (lambda: Link.rigid(0.0, 1.0), "link: length must be > 0, got 0.0"),
    (lambda: Link.rigid(True, 1.0), "link: length must be a real number, got True"),
    (lambda: Link.rigid("1", 1.0), "link: length must be a real number, got '1'"),
    (lambda: Link.rigid(NAN, 1.0), "link: length must be finite, got nan"),
    (lambda: Link.rigid(1.0, 0.0), "link: mass must be > 0, got 0.0"),
    (lambda: Link.rigid(1.0, -2.0), "link: mass must be > 0, got -2.0"),
    (lambda: Link.rigid(1.0, INF), "link: mass must be finite, got inf"),
    (lambda: Link.rigid(1.0, 1.0, inertia=-0.1), "link: inertia must be >= 0, got -0.1"),
    (
        lambda: Link.rigid(1.0, 1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]),
        "link: inertia must be symmetric",
    ),
    (
        lambda: Link.rigid(1.0, 1.0, inertia=np.diag([1.0, -1.0, 1.0])),
        r"link: inertia must be positive semi-definite \(smallest eigenvalue -1\), got \[\[1.0, 0.0, 0.0\]",
    ),
    (lambda: Link.rigid(1.0, 1.0, inertia=np.diag([1.0, NAN, 1.0])), "link: inertia must be finite"),
    (
        lambda: Link.rigid(1.0, 1.0, inertia=[[1, 0], [0, 1]]),
        "link: inertia must be a number >= 0 or a 3x3 tensor",
    ),
    (lambda: Link.rigid(1.0, 1.0, inertia=np.eye(3, dtype=bool)), "inertia must be a number >= 0 or a 3x3"),
    (lambda: Link.rigid(1.0, 1.0, com=[1.0, 2.0]), r"link: com must be a finite 3-vector, got \[1.0, 2.0\]"),
    (lambda: Link.rigid(1.0, 1.0, com=(0.0, NAN, 0.0)), "link: com must be a finite 3-vector"),
    (lambda: Link.rigid(1.0, 1.0, com=INF), "link: com must be finite, got inf"),
    (lambda: Link.flexible(0.5, -1.0, 10.0), "link: mass_per_length must be > 0, got -1.0"),
    (lambda: Link.flexible(0.5, 0.0, 10.0), "link: mass_per_length must be > 0, got 0.0"),
    (lambda: Link.flexible(0.5, 1.0, 0.0), "link: EI must be > 0, got 0.0"),
    (lambda: Link.flexible(0.5, 1.0, NAN), "link: EI must be finite, got nan"),
    (lambda: Link.flexible(0.5, 1.0, 10.0, EI_out=-5.0), "link: EI_out must be > 0, got -5.0"),
    (lambda: Link.flexible(-0.5, 1.0, 10.0), "link: length must be > 0, got -0.5"),
    (
        lambda: flexible(0.5, lumped_masses=[LumpedMass(0.7, 1.0)]),
        r"link: lumped_masses\[1\].position must be in \[0, 0.5\], got 0.7",
    ),
    (
        lambda: flexible(lumped_masses=[{"position": 0.1, "mass": 1}]),
        r"lumped_masses\[1\] must be a LumpedMass",
    ),
    (lambda: flexible(damping=0.02), "link: damping must be a Damping or None, got 0.02"),
    (lambda: flexible(tip_payload=0.1), "link: tip_payload must be a Payload or None, got 0.1"),
    (lambda: Link(kind="elastic", length=1.0), "link: kind must be 'rigid' or 'flexible', got 'elastic'"),
    (lambda: Link(kind="rigid", length=1.0), "link: mass is required for a rigid link"),
    (lambda: Link("rigid", 1.0, mass=1.0, EI=5.0), "link: EI does not apply to a rigid link, got 5.0"),
    (
        lambda: Link("rigid", 1.0, mass=1.0, lumped_masses=(LumpedMass(0.1, 1.0),)),
        "link: lumped_masses does not apply to a rigid link",
    ),
    (
        lambda: Link("flexible", 1.0, mass_per_length=1.0, EI=1.0, mass=2.0),
        "mass does not apply to a flexible link",
    ),
    (lambda: Link("flexible", 1.0, EI=1.0), "link: mass_per_length is required for a flexible link"),
]

BAD_PARTS = [
    (lambda: LumpedMass(-0.1, 1.0), "lumped mass: position must be >= 0, got -0.1"),
    (lambda: LumpedMass(0.1, -1.0), "lumped mass: mass must be >= 0, got -1.0"),
    (lambda: LumpedMass(0.1, 1.0, -0.01), "lumped mass: inertia must be >= 0, got -0.01"),
    (lambda: LumpedMass(0.1, NAN), "lumped mass: mass must be finite, got nan"),
    (lambda: Payload(-1.0), "payload: mass must be >= 0, got -1.0"),
    (lambda: Payload(1.0, -0.5), "payload: inertia must be >= 0, got -0.5"),
    (lambda: Payload(1.0, np.diag([1.0, 1.0, -2.0])), "payload: inertia must be positive semi-definite"),
    (lambda: Payload(False), "payload: mass must be a real number, got False"),
    (lambda: Damping.modal(-0.1), r"damping: ratios\[1\] must be >= 0, got -0.1"),
    (lambda: Damping.modal((0.01, -0.02)), r"damping: ratios\[2\] must be >= 0, got -0.02"),
    (lambda: Damping.modal(()), r"damping: ratios must hold at least one ratio"),
    (lambda: Damping.modal("0.1"), "damping: ratios must be a number or a sequence of numbers, got '0.1'"),
    (lambda: Damping.rayleigh(-1.0, 0.0), "damping: alpha must be >= 0, got -1.0"),
    (lambda: Damping.rayleigh(0.0, NAN), "damping: beta must be finite, got nan"),
    (lambda: Damping("viscous"), "damping: kind must be 'modal' or 'rayleigh', got 'viscous'"),
    (lambda: Damping("modal", (0.1,), alpha=1.0), "damping: alpha applies to Rayleigh damping only, got 1.0"),
    (
        lambda: Damping("rayleigh", (0.1,), beta=1.0),
        r"damping: ratios apply to modal damping only, got \(0.1,\)",
    ),
]

BAD_JOINTS = [
    (lambda: Joint(kind="spherical"), "joint: kind must be 'revolute' or 'prismatic', got 'spherical'"),
    (lambda: Joint(a=NAN), "joint: a must be finite, got nan"),
    (lambda: Joint(alpha=INF), "joint: alpha must be finite, got inf"),
    (lambda: Joint(d=True), "joint: d must be a real number, got True"),
    (lambda: Joint(theta_offset=-INF), "joint: theta_offset must be finite, got -inf"),
    (lambda: Joint(hub_mass=-1.0), "joint: hub_mass must be >= 0, got -1.0"),
    (lambda: Joint(hub_inertia=-1.0), "joint: hub_inertia must be >= 0, got -1.0"),
    (lambda: Joint(motor_inertia=-1e-5), "joint: motor_inertia must be >= 0, got -1e-05"),
    (lambda: Joint(gear_ratio=0.0), "joint: gear_ratio must be > 0, got 0.0"),
    (lambda: Joint(gear_ratio=-2.0), "joint: gear_ratio must be > 0, got -2.0"),
    (lambda: Joint(viscous_friction=-0.1), "joint: viscous_friction must be >= 0, got -0.1"),
    (lambda: Joint(coulomb_friction=-0.1), "joint: coulomb_friction must be >= 0, got -0.1"),
]

BAD_ARMS = [
    (lambda: Arm((), ()), "arm: an arm needs at least one joint and one link, got none"),
    (lambda: Arm((Joint(), Joint()), (Link.rigid(1.0, 1.0),)), "arm: got 2 joints and 1 links"),
    (lambda: Arm.planar([]), "arm: an arm needs at least one joint and one link"),
    (lambda: Arm.planar([Link.rigid(1, 1)], joints=[Joint(), Joint()]), "arm: got 2 joints and 1 links"),
    (lambda: Arm((Link.rigid(1.0, 1.0),), (Link.rigid(1.0, 1.0),)), "joint 1: expected a Joint, got Link"),
    (lambda: Arm((Joint(),), (Joint(),)), "link 1: expected a Link, got Joint"),
    (lambda: Arm(Joint(), Link.rigid(1.0, 1.0)), "arm: joints must be a sequence of Joint"),
    (
        lambda: Arm.planar([Link.rigid(1, 1)], tip_rotation="tangent"),
        "arm: tip_rotation must be 'slope' or 'chord'",
    ),
    (
        lambda: Arm.from_dh([Joint()], [Link.rigid(1, 1)], gravity=(0, 0)),
        r"arm: gravity must be a finite 3-vector",
    ),
    (
        lambda: Arm.from_dh([Joint()], [Link.rigid(1, 1)], gravity=(0, NAN, 0)),
        "arm: gravity must be a finite",
    ),
    (
        lambda: Arm.from_dh([Joint()], [Link.rigid(1, 1)], gravity="down"),
        "arm: gravity must be a finite 3-vector",
    ),
    (
        lambda: Arm((Joint(),), (Link.rigid(1, 1),), is_planar=1),
        "arm: is_planar must be True or False, got 1",
    ),
    (
        lambda: Arm.from_dh([Joint(a=1.0), Joint(a=0.3)], [Link.rigid(1.0, 1.0), flexible(0.5)]),
        re.escape("joint 2: a must equal the length of flexible link 2 (0.5 m), got 0.3"),
    ),
    (
        lambda: Arm.from_dh([Joint(kind="prismatic", a=0.1)], [flexible(1.3)]),
        "joint 1: a must be 0 for a prismatic joint carrying flexible link 1",
    ),
    (
        lambda: Arm.planar([Link.rigid(1, 1)], joints=[Joint(kind="prismatic")]),
        "joint 1: kind must be 'revolute' in a planar arm, got 'prismatic'",
    ),
    (
        lambda: Arm.planar([Link.rigid(1, 1), flexible()], joints=[Joint(), Joint(alpha=0.5)]),
        r"joint 2: alpha must be 0 in a planar arm \(parallel joint axes\), got 0.5",
    ),
    (
        lambda: Arm.planar([Link.rigid(1, 1), flexible(EI_out=30.0)]),
        "link 2: EI_out must be None in a planar arm .*, got 30.0",
    ),
    (
        lambda: Arm.planar([Link.rigid(1, 1)], gravity=(0.0, 0.0, -9.81)),
        re.escape(
            "arm: gravity must lie in the x-y plane of a planar arm (z component 0), got (0.0, 0.0, -9.81)"
        ),
    ),
    (
        lambda: Arm.planar([Link.rigid(1.0, 1.0), flexible(0.5)], joints=[Joint(), Joint(a=0.3)]),
        re.escape(
            "joint 2: a must be 0 (it is set from the link) or equal the length of link 2 (0.5 m), got 0.3"
        ),
    ),
    (
        lambda: Arm.planar([flexible(tip_payload=Payload(1.0))], payload=Payload(2.0)),
        "arm: payload and the tip_payload of link 1 both load the tip",
    ),
    (lambda: Arm.planar([Link.rigid(1, 1)], payload=1.0), "arm: payload must be a Payload or None, got 1.0"),
]


@pytest.mark.parametrize(("build", "message"), BAD_LINKS + BAD_PARTS + BAD_JOINTS + BAD_ARMS)
def test_invalid_values_raise_value_error_naming_field_and_value(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def planar_dict() -> dict:
    return Arm.planar(
        [
            Link.rigid(1.0, 2.0),
            flexible(0.5, lumped_masses=[LumpedMass(0.2, 1.0)], damping=Damping.modal(0.02)),
        ]
    ).to_dict()


def with_change(change) -> dict:
    data = planar_dict()
    change(data)
    return data


BAD_DICTS = [
    (
        lambda d: d["links"][1].update(mas=2.0),
        r"^links\[2\]\.mas: unknown field \(expected one of: kind, length",
    ),
    (lambda d: d.update(gravty=[0, 0, 0]), r"^gravty: unknown field"),
    (
        lambda d: d["links"][1]["lumped_masses"][0].update(s=0.1),
        r"^links\[2\]\.lumped_masses\[1\]\.s: unknown field",
    ),
    (lambda d: d["links"][1]["damping"].update(zeta=0.1), r"^links\[2\]\.damping\.zeta: unknown field"),
    (lambda d: d["joints"][0].update(offset=0.1), r"^joints\[1\]\.offset: unknown field"),
    (lambda d: d.update(payload={"mass": 1.0, "J": 0.1}), r"^payload\.J: unknown field"),
    (lambda d: d["links"][0].pop("length"), r"^links\[1\]\.length: missing required field"),
    (lambda d: d.pop("joints"), r"^joints: missing required field"),
    (lambda d: d["links"].__setitem__(0, 3.0), r"^links\[1\]: expected a mapping \(a table\), got 3.0"),
    (lambda d: d.update(links={"kind": "rigid"}), r"^links: expected a list"),
    (lambda d: d["links"][1].update(damping=0.02), r"^links\[2\]\.damping: expected a mapping"),
    # value errors of links and joints built from the dict carry the index
    (lambda d: d["links"][1].update(length=-0.3), r"^link 2: length must be > 0, got -0.3$"),
    (
        lambda d: d["links"][0].update(kind="elastic"),
        r"^link 1: kind must be 'rigid' or 'flexible', got 'elastic'",
    ),
    (
        lambda d: d["links"][1]["lumped_masses"][0].update(mass=-1),
        r"^link 2: lumped_masses\[1\]\.mass must be >= 0, got -1.0$",
    ),
    (
        lambda d: d["links"][1]["damping"].update(ratios=[0.01, -0.1]),
        r"^link 2: damping\.ratios\[2\] must be >= 0, got -0.1$",
    ),
    (
        lambda d: d["links"][1].update(tip_payload={"mass": -2.0}),
        r"^link 2: tip_payload\.mass must be >= 0, got -2.0$",
    ),
    (lambda d: d["joints"][1].update(hub_mass=-1.0), r"^joint 2: hub_mass must be >= 0, got -1.0$"),
    (lambda d: d["joints"][1].update(a=0.3), r"^joint 2: a must equal the length of flexible link 2"),
    (lambda d: d.update(payload={"mass": -1.0}), r"^payload: mass must be >= 0, got -1.0$"),
    (lambda d: d.update(tip_rotation="tangent"), r"^arm: tip_rotation must be 'slope' or 'chord'"),
]


@pytest.mark.parametrize(("change", "message"), BAD_DICTS)
def test_from_dict_reports_key_path_or_indexed_field(change, message):
    with pytest.raises(ValueError, match=message):
        Arm.from_dict(with_change(change))


def test_standalone_from_dict_errors():
    with pytest.raises(ValueError, match=r"^mas: unknown field"):
        Link.from_dict({"kind": "rigid", "length": 1.0, "mas": 1.0})
    with pytest.raises(ValueError, match=r"^link: length must be > 0, got -0.3$"):
        Link.from_dict({"kind": "rigid", "length": -0.3, "mass": 1.0})
    with pytest.raises(ValueError, match=r"^Joint: expected a mapping"):
        Joint.from_dict([("a", 1.0)])


# --------------------------------------------------------------------------
# Defaults, canonical forms and derived quantities


def test_rigid_defaults_are_a_uniform_slender_rod():
    link = Link.rigid(0.8, 3.0)
    assert link.com == (0.4, 0.0, 0.0)
    # uniform rod about its centre: m L^2 / 12
    assert link.inertia == pytest.approx(3.0 * 0.8**2 / 12, rel=1e-15)
    np.testing.assert_allclose(
        link.inertia_tensor(), np.diag([0.0, 1.0, 1.0]) * 3.0 * 0.8**2 / 12, rtol=1e-15
    )
    assert link.planar_inertia == link.inertia
    assert link.total_mass == link.beam_mass == 3.0
    assert not link.is_flexible


def test_rigid_com_and_inertia_forms():
    assert Link.rigid(1.0, 1.0, com=0.3).com == (0.3, 0.0, 0.0)
    assert Link.rigid(1.0, 1.0, com=np.array([0.3, 0.1, 0.0])).com == (0.3, 0.1, 0.0)
    tensor = np.array([[0.1, 0.01, 0.0], [0.01, 0.2, 0.0], [0.0, 0.0, 0.3]])
    link = Link.rigid(np.float64(1.0), 1, inertia=tensor)
    assert link.inertia == ((0.1, 0.01, 0.0), (0.01, 0.2, 0.0), (0.0, 0.0, 0.3))
    assert type(link.length) is float and type(link.mass) is float
    np.testing.assert_array_equal(link.inertia_tensor(), tensor)
    assert link.planar_inertia == 0.3
    assert hash(link) == hash(Link.rigid(1.0, 1.0, inertia=tensor.tolist()))
    # rounding-level asymmetry and negative eigenvalues are accepted
    Link.rigid(1.0, 1.0, inertia=tensor + np.diag([0.0, 0.0, 1e-17]) + np.triu(np.full((3, 3), 1e-18), 1))
    with pytest.raises(ValueError, match="applies to rigid links only"):
        flexible().inertia_tensor()


def test_flexible_masses():
    link = Link.flexible(
        0.5,
        mass_per_length=1.2,
        EI=40.0,
        lumped_masses=[LumpedMass(0.0, 0.25), LumpedMass(0.5, 0.5, 1e-3)],
        tip_payload=Payload(0.1),
    )
    assert link.is_flexible
    assert link.mass is None
    assert link.beam_mass == pytest.approx(0.6, rel=1e-15)
    assert link.total_mass == pytest.approx(0.6 + 0.25 + 0.5 + 0.1, rel=1e-15)
    assert isinstance(link.lumped_masses, tuple)
    assert link.EI_out is None and link.damping is None


def test_payload_inertia_forms():
    assert Payload(2.0).inertia == 0.0
    np.testing.assert_array_equal(Payload(1.0, 0.02).inertia_tensor(), 0.02 * np.eye(3))
    assert Payload(1.0, np.diag([1.0, 2.0, 3.0])).planar_inertia == 3.0


def test_reflected_inertia_is_motor_inertia_times_gear_ratio_squared():
    joint = Joint(motor_inertia=2e-5, gear_ratio=64)
    assert joint.reflected_inertia == pytest.approx(2e-5 * 4096, rel=1e-15)
    assert Joint().reflected_inertia == 0.0


def test_damping_constructors_and_ratio_lookup():
    single = Damping.modal(0.02)
    assert single.kind == "modal" and single.ratios == (0.02,)
    assert single.ratio(1) == single.ratio(7) == 0.02
    per_mode = Damping.modal([0.01, 0.03])
    assert per_mode.ratio(2) == 0.03
    with pytest.raises(ValueError, match="no ratio for mode 3"):
        per_mode.ratio(3)
    rayleigh = Damping.rayleigh(0.1, 1e-4)
    assert (rayleigh.kind, rayleigh.ratios, rayleigh.alpha, rayleigh.beta) == ("rayleigh", (), 0.1, 1e-4)
    with pytest.raises(ValueError, match="modal damping only"):
        rayleigh.ratio(1)
    assert rayleigh.to_dict() == {"kind": "rayleigh", "alpha": 0.1, "beta": 1e-4}
    assert single.to_dict() == {"kind": "modal", "ratios": [0.02]}


def test_arm_planar_sets_dh_parameters_from_link_lengths():
    links = [Link.rigid(0.475, 0.374), flexible(0.435)]
    joints = [Joint(hub_mass=2.0, gear_ratio=64.0), Joint(a=0.435, viscous_friction=0.0023)]
    arm = Arm.planar(links, joints=joints, gravity=(0.0, -9.81))
    assert [joint.a for joint in arm.joints] == [0.475, 0.435]
    assert all(joint.kind == "revolute" and joint.alpha == 0.0 and joint.d == 0.0 for joint in arm.joints)
    assert arm.joints[0].gear_ratio == 64.0 and arm.joints[1].viscous_friction == 0.0023
    assert arm.is_planar is True
    assert arm.gravity == (0.0, -9.81, 0.0)
    assert (arm.n_joints, arm.n_links, arm.flexible_links) == (2, 2, (2,))
    assert arm.tip_rotation == "slope"
    assert Arm.planar(links).joints == (Joint(a=0.475), Joint(a=0.435))


def test_arm_total_mass_counts_links_attachments_hubs_and_payload():
    arm = Arm.planar(
        [Link.rigid(1.0, 2.0), flexible(0.5, lumped_masses=[LumpedMass(0.5, 0.3)])],
        joints=[Joint(hub_mass=1.5), Joint(hub_mass=0.25)],
        payload=Payload(0.1),
    )
    assert arm.total_mass == pytest.approx(2.0 + 1.2 * 0.5 + 0.3 + 1.5 + 0.25 + 0.1, rel=1e-15)


def test_from_dh_is_the_spatial_constructor():
    joints = [Joint(alpha=math.pi / 2, d=0.1), Joint(a=0.3), Joint(kind="prismatic", d=0.3)]
    links = [
        Link.rigid(0.1, 3.7051),
        Link.rigid(0.3, 0.331),
        Link.flexible(1.3, 0.4303 / 1.3, 1165.4916, 1165.4916),
    ]
    arm = Arm.from_dh(joints, links, payload=Payload(0.0828))
    assert arm == Arm(tuple(joints), tuple(links), Payload(0.0828))
    assert arm.is_planar is False
    assert arm.flexible_links == (3,)


def test_descriptions_are_frozen_and_hashable():
    arm = Arm.planar([flexible(damping=Damping.rayleigh(0.0, 1e-3))])
    for obj, name, value in [
        (arm, "gravity", (0.0, -9.81, 0.0)),
        (arm, "planar", False),
        (arm.links[0], "length", 2.0),
        (arm.joints[0], "a", 2.0),
        (arm.links[0].damping, "alpha", 1.0),
        (Payload(1.0), "mass", 2.0),
        (LumpedMass(0.1, 1.0), "mass", 2.0),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, value)
    assert len({arm, Arm.from_dict(arm.to_dict())}) == 1


# --------------------------------------------------------------------------
# Dict round trip over random valid arms

positive = st.floats(min_value=1e-3, max_value=1e3)
non_negative = st.floats(min_value=0.0, max_value=1e3)
angle = st.floats(min_value=-math.pi, max_value=math.pi)
offset = st.floats(min_value=-2.0, max_value=2.0)


@st.composite
def inertia_tensors(draw) -> np.ndarray:
    factor = np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=9, max_size=9))).reshape(3, 3)
    tensor = factor @ factor.T  # positive semi-definite by construction
    return (tensor + tensor.T) / 2


inertias = st.one_of(non_negative, inertia_tensors())
payloads = st.builds(Payload, non_negative, inertias)
dampings = st.one_of(
    st.none(),
    st.builds(Damping.modal, non_negative),
    st.builds(Damping.modal, st.lists(non_negative, min_size=1, max_size=4)),
    st.builds(Damping.rayleigh, non_negative, non_negative),
)


@st.composite
def flexible_links(draw, planar: bool) -> Link:
    length = draw(positive)
    lumped = draw(
        st.lists(
            st.builds(LumpedMass, st.floats(0.0, 1.0).map(lambda x: x * length), non_negative, non_negative),
            max_size=3,
        )
    )
    return Link.flexible(
        length,
        mass_per_length=draw(positive),
        EI=draw(positive),
        EI_out=None if planar else draw(st.none() | positive),
        damping=draw(dampings),
        lumped_masses=lumped,
        tip_payload=draw(st.none() | payloads),
    )


rigid_links = st.builds(
    Link.rigid,
    positive,
    positive,
    com=st.none() | offset | st.tuples(offset, offset, offset),
    inertia=st.none() | inertias,
)


@st.composite
def joints_for(draw, link: Link, planar: bool) -> Joint:
    kind = "revolute" if planar else draw(st.sampled_from(["revolute", "prismatic"]))
    if link.is_flexible:
        a = link.length if kind == "revolute" else 0.0
    else:
        a = draw(offset)
    return Joint(
        kind=kind,
        a=a,
        alpha=0.0 if planar else draw(angle),
        d=draw(offset),
        theta_offset=draw(angle),
        hub_mass=draw(non_negative),
        hub_inertia=draw(non_negative),
        motor_inertia=draw(non_negative),
        gear_ratio=draw(positive),
        viscous_friction=draw(non_negative),
        coulomb_friction=draw(non_negative),
    )


@st.composite
def arms(draw) -> Arm:
    planar = draw(st.booleans())
    links = draw(st.lists(st.one_of(rigid_links, flexible_links(planar)), min_size=1, max_size=4))
    joints = [draw(joints_for(link, planar)) for link in links]
    # A flexible link on a prismatic joint translates and may carry no lumped masses.
    links = [
        dataclasses.replace(link, lumped_masses=())
        if link.is_flexible and joint.kind == "prismatic"
        else link
        for link, joint in zip(links, joints, strict=True)
    ]
    payload = None if links[-1].tip_payload is not None else draw(st.none() | payloads)
    gz = 0.0 if planar else draw(offset)
    gravity = (draw(offset), draw(offset), gz)
    return Arm(
        tuple(joints), tuple(links), payload, gravity, planar, draw(st.sampled_from(["slope", "chord"]))
    )


def assert_plain(value, path="arm"):
    """Only dict, list, str, float, int and bool, and no None (TOML has no null)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, path
            assert_plain(item, f"{path}.{key}")
    elif isinstance(value, list):
        for k, item in enumerate(value):
            assert_plain(item, f"{path}[{k}]")
    else:
        assert type(value) in (str, float, int, bool), f"{path}: {type(value).__name__}"


@given(arms())
def test_dict_round_trip_is_exact(arm):
    data = arm.to_dict()
    assert_plain(data)
    assert Arm.from_dict(data) == arm
    assert Arm.from_dict(json.loads(json.dumps(data))) == arm


@given(st.one_of(rigid_links, flexible_links(planar=False)))
def test_link_dict_round_trip_is_exact(link):
    assert Link.from_dict(link.to_dict()) == link


def test_round_trip_examples_with_every_feature():
    spatial = Arm.from_dh(
        [Joint(alpha=math.pi / 2, hub_inertia=0.352), Joint(a=0.3, motor_inertia=1e-5, gear_ratio=32)],
        [
            Link.rigid(0.1, 3.7, com=(0.05, 0.01, 0.0), inertia=np.diag([0.1, 0.2, 0.3])),
            Link.flexible(
                0.3,
                1.0,
                100.0,
                EI_out=80.0,
                damping=Damping.modal([0.01, 0.02]),
                lumped_masses=[LumpedMass(0.15, 0.2, 1e-4)],
                tip_payload=Payload(0.5, np.diag([1e-3, 2e-3, 3e-3])),
            ),
        ],
        gravity=(0.0, 0.0, -9.81),
        tip_rotation="chord",
    )
    data = spatial.to_dict()
    assert data["links"][0]["inertia"] == [[0.1, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 0.3]]
    assert data["links"][1]["tip_payload"]["inertia"][2][2] == 3e-3
    assert "payload" not in data and "EI" not in data["links"][0]
    assert Arm.from_dict(json.loads(json.dumps(data))) == spatial
