"""Exact references for study results, where the physics allows one."""

from __future__ import annotations

import numpy as np

import shapes
from core.arm import Arm


def exact_locked_frequencies(arm: Arm, n: int) -> tuple[np.ndarray, str] | None:
    """Exact joint-locked natural frequencies [rad/s], or None when no closed form applies.

    With the joints locked, a single flexible link that is the last link, with
    no lumped masses and only point bodies (payloads) at its tip, is a
    clamped–mass beam: ω_k = β_k² √(EI/(ρA L⁴)) with the roots of
    ``shapes.ClampedMass(M/(ρA L), J/(ρA L³))``. (Gravity adds no stiffness
    here: the potential is linear in the deflection.) Proximal links do not
    matter when their joints are locked.
    """
    flexible = arm.flexible_links
    if len(flexible) != 1 or flexible[0] != arm.n_links:
        return None
    link = arm.links[-1]
    if link.lumped_masses or (link.EI_out is not None and not arm.is_planar):
        return None
    mass = inertia = 0.0
    for payload in (link.tip_payload, arm.payload):
        if payload is not None:
            mass += payload.mass
            inertia += float(payload.inertia_tensor()[2, 2])
    rho, L = link.mass_per_length, link.length
    family = shapes.ClampedMass(mass / (rho * L), inertia / (rho * L**3))
    omega = family.frequencies(n, EI=link.EI, mass_per_length=rho, length=L)
    return omega, f"exact: clamped-mass roots (mu={family.mass_ratio:.6g}, j={family.inertia_ratio:.6g})"
