"""The rigid-body equivalent of an arm: every flexible link frozen undeformed.

Used for feed-forward torques from rigid-arm inverse dynamics (SPEC §7): each
flexible link becomes a rigid link with the same mass, centre of mass and
inertia tensor (uniform beam, lumped masses with their rotary inertia, tip
payload), so the rigid model equals the flexible one at δ = 0, δ̇ = 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from core.arm import Arm, Link
from core.rotations import PRISMATIC_BEAM


def rigid_equivalent(arm: Arm) -> Arm:
    """``arm`` with every flexible link replaced by its undeformed rigid counterpart."""
    links, joints = [], []
    for joint, link in zip(arm.joints, arm.links):
        if not link.is_flexible:
            links.append(link)
            joints.append(joint)
            continue
        beam = np.eye(3) if joint.kind == "revolute" else PRISMATIC_BEAM
        L, rho = link.length, link.mass_per_length
        bodies = [(rho * L, np.array([L / 2, 0, 0]), np.diag([0.0, 1.0, 1.0]) * rho * L**3 / 12)]
        bodies += [
            (lm.mass, np.array([lm.position, 0, 0]), np.diag([0.0, lm.inertia, lm.inertia]))
            for lm in link.lumped_masses
        ]
        if link.tip_payload is not None:
            # The payload's tensor is given in link-frame axes; bring it to the beam frame.
            bodies.append((link.tip_payload.mass, np.array([L, 0, 0]), beam.T @ link.tip_payload.inertia_tensor() @ beam))
        mass = sum(m for m, _, _ in bodies)
        com = sum(m * r for m, r, _ in bodies) / mass
        inertia = sum(I + m * ((r - com) @ (r - com) * np.eye(3) - np.outer(r - com, r - com)) for m, r, I in bodies)
        com = beam @ com
        if joint.kind == "prismatic":
            # A rigid link reaches the next joint through DH (Tx(a)) only; the
            # beam's tip is L further along the joint axis: move the link frame
            # there (d + L) and its centre of mass back.
            joint = dataclasses.replace(joint, d=joint.d + L)
            com = com - np.array([0.0, 0.0, L])
        links.append(Link.rigid(L, mass, com=com, inertia=beam @ inertia @ beam.T))
        joints.append(joint)
    return Arm(tuple(joints), tuple(links), arm.payload, arm.gravity, arm.is_planar, arm.tip_rotation)
