"""Reference arms (docs/MODEL.md, Reference arms), shared by tests, benchmarks and study configs (``preset = "..."``).

Parameters come from the source papers; where a value is not given the
documented default here is ours. All SI.
"""

from __future__ import annotations

import math

from core.arm import Arm, Joint, Link, Payload

# Unit conversions (exact by definition of the inch and the pound-force).
INCH = 0.0254  # m
LBF = 4.4482216152605  # N


def rigid_two_link() -> Arm:
    """Textbook rigid planar two-link arm in a vertical plane (Spong et al. §7.4).

    Spong, Hutchinson & Vidyasagar, *Robot Modeling and Control*, §7.4, with
    m = (1.0, 0.8) kg, l = (1.0, 0.8) m, centres of mass at l/2 and
    slender-rod inertias; vertical plane, g = 9.81 m/s².
    """
    return Arm.planar([Link.rigid(1.0, 1.0), Link.rigid(0.8, 0.8)], gravity=(0.0, -9.81, 0.0))


def one_flexible_link() -> Arm:
    """One flexible link, horizontal, no gravity (Lin & Lewis (1994), example 4.2).

    Original units: EI = 4120 lbf·in², L = 47 in, ρA = 2.54e-4 × 0.14 lbf·s²/in²,
    tip mass "0.1 lbm" as printed — but the paper's clamped-free zero dynamics
    (±j76.98, ±j1.0914 rad/s) follow only from 0.1 lbf·s²/in (17.51 kg, the mass
    unit of its ρA; 0.1 lbm = 0.045 kg gives ±j13.4, ±j91.5), so that is the mass
    here (tests/test_engine_reference.py checks the zeros).
    """
    return Arm.planar(
        [
            Link.flexible(
                length=47 * INCH,
                mass_per_length=2.54e-4 * 0.14 * LBF / INCH**2,
                EI=4120 * LBF * INCH**2,
            )
        ],
        payload=Payload(0.1 * LBF / INCH),  # 0.1 lbf·s²/in
    )


def lumped_two_link(gravity: bool = True) -> Arm:
    """Two flexible links with lumped joint masses, vertical plane (the lumped-mass N-DOF paper, docs/REFERENCES.md).

    L = 0.475, 0.435 m; link masses 0.374, 0.29 kg; E = 2.06e11 Pa;
    I = 16e-11, 6.75e-11 m⁴; 2.94 kg at the end of link 1 (the second motor,
    modelled as the hub of joint 2) and 0.343 kg at the end of link 2 (the
    payload); gear ratios 64 and 32; Coulomb friction 0.0345, 0.0226 N·m;
    viscous friction 0.0037, 0.0023 N·m·s/rad. Motor inertias are not given in
    the source and are left at zero.
    """
    E = 2.06e11
    lengths, masses, inertias = (0.475, 0.435), (0.374, 0.29), (16e-11, 6.75e-11)
    links = [Link.flexible(L, m / L, E * I) for L, m, I in zip(lengths, masses, inertias, strict=True)]
    joints = [
        Joint(gear_ratio=64, coulomb_friction=0.0345, viscous_friction=0.0037),
        Joint(hub_mass=2.94, gear_ratio=32, coulomb_friction=0.0226, viscous_friction=0.0023),
    ]
    return Arm.planar(
        links,
        payload=Payload(0.343),
        gravity=(0.0, -9.81, 0.0) if gravity else (0.0, 0.0, 0.0),
        joints=joints,
    )


def space_arm_3link() -> Arm:
    """Three-link space arm, all links flexible, parallel axes, no gravity (Mohan & Saha, DeNOC).

    a = 6, 7, 2 m; link masses 140, 85, 95 kg; EI = 1e5 N·m² in both bending
    planes (the source uses 2 clamped-free modes per plane).
    """
    lengths, masses = (6.0, 7.0, 2.0), (140.0, 85.0, 95.0)
    links = [Link.flexible(L, m / L, 1e5, EI_out=1e5) for L, m in zip(lengths, masses, strict=True)]
    joints = [Joint(a=L) for L in lengths]
    return Arm.from_dh(joints, links)


def rigid_flexible_rigid() -> Arm:
    """Rigid–flexible–rigid planar arm; the middle link is flexible.

    Our parameters: 0.3 m / 1.0 kg rigid, 0.8 m steel-like strip
    ρA = 0.6 kg/m, EI = 20 N·m², 0.4 m / 0.8 kg rigid, payload 0.2 kg. Used
    with clamped-mass shapes whose tip load is the distal rigid link plus payload.
    """
    return Arm.planar(
        [Link.rigid(0.3, 1.0), Link.flexible(0.8, 0.6, 20.0), Link.rigid(0.4, 0.8)],
        payload=Payload(0.2, 1e-4),
    )


def azimuth_elevation() -> Arm:
    """Azimuth–elevation arm; the second link bends in both planes, under gravity.

    Vertical azimuth axis, horizontal elevation axis, second link flexible in
    both planes with a tip payload. Our parameters: column 0.3 m / 2 kg, beam
    1.0 m, ρA = 0.5 kg/m, EI = EI_out = 30 N·m², payload 0.1 kg; gravity
    −9.81 m/s² along base z.
    """
    joints = [Joint(alpha=math.pi / 2, d=0.3), Joint(a=1.0)]
    links = [
        Link.rigid(0.3, 2.0, com=(0.0, -0.15, 0.0), inertia=[[0.02, 0, 0], [0, 0.002, 0], [0, 0, 0.02]]),
        Link.flexible(1.0, 0.5, 30.0, EI_out=30.0),
    ]
    return Arm.from_dh(joints, links, payload=Payload(0.1), gravity=(0.0, 0.0, -9.81))


def rrp_translating() -> Arm:
    """Spatial RRP arm; the third link is a flexible beam sliding through a hub.

    Translating link of docs/MODEL.md, Reference arms, gravity-free.

    From the source: m1 = 3.7051 kg, m2 = 0.3310 kg, m3 = 0.4303 kg (whole
    beam), payload 0.0828 kg, l1 = 0.1 m, l2 = 0.3 m, total length of link 3
    1.3 m, joint rotary inertias I1 = 0.352 kg·m² and I2 = 3.2 kg·m² (as hub
    inertias about the joint axes; the links' own inertia is taken to be in
    them), E3I3 = 1165.4916 N·m² in both bending planes.

    Our geometry (the source gives lengths only): joint 1 turns about the
    vertical base axis; link 1 is the column of height l1 (centre of mass at
    mid-height); joint 2, at the top of the column, turns about a horizontal
    axis; link 2 is a rigid arm of length l2 from joint 2 to the hub of the
    prismatic joint 3, along the sliding axis (α2 = −90°: the beam points up at
    θ2 = 0 and is horizontal at θ2 = −90°). The joint variable d3 is the free
    length of the beam outside the hub, 0.3 … 1.0 m in the maneuvers.
    """
    joints = [
        Joint(alpha=math.pi / 2, d=0.1, hub_inertia=0.352),
        Joint(alpha=-math.pi / 2, hub_inertia=3.2),
        Joint(kind="prismatic", d=0.3),
    ]
    zero = [[0.0, 0.0, 0.0]] * 3
    links = [
        Link.rigid(0.1, 3.7051, com=(0.0, 0.0, -0.05), inertia=zero),
        Link.rigid(0.3, 0.3310, com=(0.0, 0.15, 0.0), inertia=zero),
        Link.flexible(1.3, 0.4303 / 1.3, 1165.4916, EI_out=1165.4916),
    ]
    return Arm.from_dh(joints, links, payload=Payload(0.0828))


#: Presets by name.
PRESETS = {
    "rigid-two-link": rigid_two_link,
    "one-flexible-link": one_flexible_link,
    "rigid-flexible-rigid": rigid_flexible_rigid,
    "azimuth-elevation": azimuth_elevation,
    "space-arm-3link": space_arm_3link,
    "rrp-translating": rrp_translating,
    "lumped-two-link": lumped_two_link,
}
