"""The rigid-body equivalent of an arm: every flexible link frozen undeformed.

Used for feed-forward torques from rigid-arm inverse dynamics (docs/MODEL.md, Analyses): each
flexible link becomes a rigid link with the same mass, centre of mass and
inertia tensor (uniform beam, lumped masses with their rotary inertia, tip
payload), so the rigid model equals the flexible one at δ = 0, δ̇ = 0. A
translating link (on a prismatic joint) becomes a rigid link sliding with the
joint, its frame at the beam's tip.
"""

from __future__ import annotations

import numpy as np

from core.arm import Arm, Link
from core.numerics.rotations import PRISMATIC_BEAM


def rigid_equivalent(arm: Arm) -> Arm:
    """``arm`` with every flexible link replaced by its undeformed rigid counterpart."""
    links, joints = [], []
    for joint, link in zip(arm.joints, arm.links, strict=True):
        if not link.is_flexible:
            links.append(link)
            joints.append(joint)
            continue
        beam = np.eye(3) if joint.kind == "revolute" else PRISMATIC_BEAM
        L, rho = link.length, link.mass_per_length
        # A translating beam becomes a rigid link whose frame is at its tip
        # (the rigid prismatic frame moves with d = q + d_offset): positions
        # along the beam are measured from the tip, s − l.
        tip = L if joint.kind == "revolute" else 0.0
        bodies = [(rho * L, np.array([tip - L / 2, 0, 0]), np.diag([0.0, 1.0, 1.0]) * rho * L**3 / 12)]
        bodies += [
            (lm.mass, np.array([lm.position, 0, 0]), np.diag([0.0, lm.inertia, lm.inertia]))
            for lm in link.lumped_masses
        ]
        if link.tip_payload is not None:
            # The payload's tensor is given in link-frame axes; bring it to the beam frame.
            bodies.append(
                (
                    link.tip_payload.mass,
                    np.array([tip, 0, 0]),
                    beam.T @ link.tip_payload.inertia_tensor() @ beam,
                )
            )
        mass = sum(m for m, _, _ in bodies)
        com = sum(m * r for m, r, _ in bodies) / mass
        inertia = sum(
            I + m * ((r - com) @ (r - com) * np.eye(3) - np.outer(r - com, r - com)) for m, r, I in bodies
        )
        com = beam @ com
        links.append(Link.rigid(L, mass, com=com, inertia=beam @ inertia @ beam.T))
        joints.append(joint)
    return Arm(tuple(joints), tuple(links), arm.payload, arm.gravity, arm.is_planar, arm.tip_rotation)
