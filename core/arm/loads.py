"""Loads that one link carries: the distal mass and inertia at its tip.

Used by the assumed-modes backend to choose clamped–mass shapes whose tip load
is "everything distal to the link" (docs/MODEL.md, Mode shapes): for an intermediate link these
converge with two modes where cantilever shapes need many.
"""

from __future__ import annotations

import numpy as np

from core.arm import Arm
from core.dynamics.kinematics import ChainKinematics
from core.numerics import validation as check


def _distal_bodies(arm: Arm, link: int, q) -> tuple[list, object]:
    """The rigid bodies beyond the tip of ``link`` as (mass, position, inertia tensor in base
    axes), with all links undeformed at ``q``, and the link's frame (see :func:`distal_load`)."""
    link = check.link_number(link, arm.n_links)
    if q is None:
        q_r = arm.home()
    else:
        q_r = np.asarray(q, dtype=float)[: arm.n_joints]
    if q_r.shape != (arm.n_joints,):
        raise ValueError(f"q must hold at least the {arm.n_joints} joint variables, got {np.shape(q)}")
    frames = [f.select(0) for f in ChainKinematics(arm, {}, arm.n_joints).frames(q_r[None], jacobians=False)]
    bodies: list[tuple[float, np.ndarray, np.ndarray]] = []  # (mass, position, inertia tensor in base axes)

    def payload(p, position, R) -> None:
        bodies.append((p.mass, position, R @ p.inertia_tensor() @ R.T))

    first = arm.links[link - 1]
    if first.tip_payload is not None:
        payload(first.tip_payload, frames[link - 1].p_tip, frames[link - 1].R_end)
    for number in range(link + 1, arm.n_links + 1):
        joint, body, f = arm.joints[number - 1], arm.links[number - 1], frames[number - 1]
        if joint.hub_mass or joint.hub_inertia:
            bodies.append(
                (joint.hub_mass, f.p_link, f.R_link @ np.diag([0.0, 0.0, joint.hub_inertia]) @ f.R_link.T)
            )
        if body.is_flexible:
            R = f.R_body
            beam_mass = body.mass_per_length * body.length
            rod = np.diag([0.0, 1.0, 1.0]) * beam_mass * body.length**2 / 12
            centre = q_r[number - 1] - body.length / 2 if number in arm.translating_links else body.length / 2
            bodies.append((beam_mass, f.p_link + R @ np.array([centre, 0.0, 0.0]), R @ rod @ R.T))
            for lumped in body.lumped_masses:
                position = f.p_link + R @ np.array([lumped.position, 0.0, 0.0])
                bodies.append((lumped.mass, position, R @ np.diag([0.0, 1.0, 1.0]) @ R.T * lumped.inertia))
            if body.tip_payload is not None:
                payload(body.tip_payload, f.p_tip, f.R_end)
        else:
            R = f.R_link
            bodies.append((body.mass, f.p_link + R @ np.asarray(body.com), R @ body.inertia_tensor() @ R.T))
    if arm.payload is not None:
        payload(arm.payload, frames[-1].p_tip, frames[-1].R_end)
    return bodies, frames[link - 1]


def distal_load(arm: Arm, link: int, q=None) -> tuple[float, float]:
    """Mass [kg] and rotary inertia [kg m²] beyond the tip of ``link`` (numbered from 1).

    Everything distal to the tip: the link's own tip payload, the hubs of the
    later joints, the later links (flexible ones as undeformed uniform rods
    with their lumped masses and tip payloads) and the arm's payload. The
    inertia is about the in-plane bending axis through the tip (z of the
    link's beam frame), including each body's m·d², evaluated with all links
    undeformed at the joint configuration ``q`` (default: all joint variables
    zero, translating links fully extended). A translating link counts as its
    whole beam, centred at l − L/2 from its hub exit. Reflected motor inertia
    is not part of it (it turns with the motor, not with the tip).
    """
    bodies, frame = _distal_bodies(arm, link, q)
    tip, axis = frame.p_tip, frame.R_body[:, 2]
    mass = sum(m for m, _, _ in bodies)
    inertia = sum(
        axis @ tensor @ axis + m * float(np.sum(np.cross(axis, position - tip) ** 2))
        for m, position, tensor in bodies
    )
    # a sum of nonnegative terms: a rod about its own axis gives axis·(R D Rᵀ)·axis = 0 up to
    # round-off (−8e-19 seen), which the shape families rightly refuse as a negative inertia
    return float(mass), max(float(inertia), 0.0)


def distal_static_moment(arm: Arm, link: int, q=None) -> float:
    """First moment of the mass beyond the tip of ``link`` [kg m] along the link's axis:
    S = Σ m (p − p_tip)·x̂, x̂ the beam's tangent at the tip (x of its beam frame), with the
    bodies of :func:`distal_load`. A rigid distal body turning with the tip slope θ and moving
    with the tip deflection w has the kinetic energy ½ (M ẇ² + 2 S ẇ θ̇ + J θ̇²)."""
    bodies, frame = _distal_bodies(arm, link, q)
    tangent = frame.R_body[:, 0]
    return float(sum(m * float(tangent @ (position - frame.p_tip)) for m, position, _ in bodies))
