"""The elastic and dissipative blocks of a chain's flexible links: K, D and the deformation coordinates.

A flexible link's strain energy is ½ Σ_a EI_a δ_aᵀ (∫φ''φ''ᵀ) δ_a over its bending planes a
(EI in the joint's plane, EI_out out of it); a translating link's is the unit-length block
over l³, whose shapes may follow the free length (docs/MODEL.md, Dynamics). Its structural
damping is Rayleigh (α M_δδ + β K) or modal (ratios ζ_k on the link's own modes). These are
the functions :class:`~core.dynamics.engine.ChainModel` and the structured path
(:mod:`core.dynamics.structured`) build their K and D from.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.basis import dense
from core.dynamics.flexible_body import TAYLOR_ORDER, taylor_sum


def bending_block(link, body, X) -> np.ndarray:
    """Σ_a EI_a E_aᵀ X E_a (m, m): the basis block X (n, n; any representation) of each bending
    plane of ``body`` weighted by that plane's bending stiffness (EI, EI_out)."""
    X = dense(X)
    block = link.EI * body.plane_block(X, 0)
    if body.planes == 2:
        block = block + link.EI_out * body.plane_block(X, 1)
    return block


def following_stiffness(link, body, l, derivative: int = 0) -> np.ndarray:
    """EI ∫ψ''ψ''ᵀ dη (per plane) of a translating link whose shapes follow the free length, at
    a real or complex l (the engine's complex step), or its l-derivative."""
    l0 = float(np.real(l))
    terms = body.following.taylor(l0, order=TAYLOR_ORDER)["stiffness"]
    return bending_block(link, body, taylor_sum(terms, l - l0, derivative))


def link_damping(damping, K: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The damping block of one link with stiffness K and mass M_δδ (beam and lumped masses):
    Rayleigh α M + β K, or modal: Σ_k 2 ζ_k ω_k M x_k x_kᵀ M over the link's own modes x_k
    (mass-normalized)."""
    import scipy.linalg

    if damping.kind == "rayleigh":
        return damping.alpha * M + damping.beta * K
    omega2, modes = scipy.linalg.eigh(K, M)
    ratios = np.array([damping.ratio(k) for k in range(1, len(omega2) + 1)])
    modal = np.diag(2 * ratios * np.sqrt(np.clip(omega2, 0, None)))
    return M @ modes @ modal @ modes.T @ M


def deformation_coordinates(model) -> tuple[np.ndarray, np.ndarray]:
    """(Z, K_z) of a chain without translating links: q = Z z with the elastic stiffness
    Zᵀ K Z = K_z exact (each basis's ``deformations`` and ``deformation_stiffness``, see
    :class:`~core.dynamics.basis.BeamBasis`)."""
    Z = np.eye(model.n_dof)
    K_z = np.zeros((model.n_dof, model.n_dof))
    for number, basis in model.bases.items():
        link, body = model.arm.links[number - 1], model.bodies[number]
        T = np.eye(basis.n) if basis.deformations is None else dense(basis.deformations)
        K = basis.stiffness if basis.deformation_stiffness is None else basis.deformation_stiffness
        cols = model.flex_columns[number]
        Z[cols, cols] = body.plane_block(T, 0) + body.plane_block(T, 1)
        K_z[cols, cols] = bending_block(link, body, K)
    return Z, K_z
