"""Exact references for study results, where the physics allows one."""

from __future__ import annotations

import numpy as np

import shapes
from core.arm import Arm
from core.numerics.rotations import PRISMATIC_BEAM


def exact_locked_frequencies(arm: Arm, n: int, joints=None) -> tuple[np.ndarray, str] | None:
    """Exact joint-locked natural frequencies [rad/s], or None when no closed form applies.

    With the joints locked, a single flexible link that is the last link, with
    no lumped masses and only point bodies (payloads) at its tip, is a
    clamped–mass beam: ω_k = β_k² √(EI/(ρA l⁴)) with the roots of
    ``shapes.ClampedMass(M/(ρA l), J/(ρA l³))``, where l is the bending length —
    the link length, or for a translating link its free length, the joint
    variable in ``joints`` (default: ``arm.home()``, fully extended) — and J
    the payloads' inertia about the in-plane bending axis through the tip (z of
    the beam frame: z of the link frame on a revolute joint, y on a prismatic
    one). (Gravity adds no stiffness here: the potential is linear in the
    deflection.) Proximal links do not matter when their joints are locked.
    """
    flexible = arm.flexible_links
    if len(flexible) != 1 or flexible[0] != arm.n_links:
        return None
    link = arm.links[-1]
    if link.lumped_masses or (link.EI_out is not None and not arm.is_planar):
        return None
    q = arm.home() if joints is None else np.asarray(joints, dtype=float)
    translating = arm.n_links in arm.translating_links
    length = float(q[arm.n_links - 1]) if translating else link.length
    axis = (PRISMATIC_BEAM if arm.joints[-1].kind == "prismatic" else np.eye(3))[:, 2]
    mass = inertia = 0.0
    for payload in (link.tip_payload, arm.payload):
        if payload is not None:
            mass += payload.mass
            inertia += float(axis @ payload.inertia_tensor() @ axis)
    rho = link.mass_per_length
    family = shapes.ClampedMass(mass / (rho * length), inertia / (rho * length**3))
    omega = family.frequencies(n, EI=link.EI, mass_per_length=rho, length=length)
    where = f", free length {length:.6g} m" if translating else ""
    return (
        omega,
        f"exact: clamped-mass roots (mu={family.mass_ratio:.6g}, j={family.inertia_ratio:.6g}{where})",
    )
