"""The Euler–Bernoulli beam element with cubic Hermite interpolation (shared by the
finite-element backend, :mod:`fem`, and the "fe-modes" shape family, :mod:`shapes.fe_modes`).

On an element of length h with local coordinate ξ = (s − s₀)/h ∈ [0, 1], the
deflection is w = N(ξ) · (w₁, θ₁, w₂, θ₂) with nodal deflections w and slopes
θ = dw/ds, and

    N₁ = 1 − 3ξ² + 2ξ³        N₂ = h (ξ − 2ξ² + ξ³)
    N₃ = 3ξ² − 2ξ³            N₄ = h (−ξ² + ξ³)

Element integrals (per unit ρA and EI) are computed by Gauss–Legendre
quadrature with :data:`GAUSS_POINTS` points, exact for the degree-6 products
N_i N_j and everything else here; tests compare them with the closed forms
(Przemieniecki, *Theory of Matrix Structural Analysis*, 1968, §11).
"""

from __future__ import annotations

import numpy as np

from core.numerics.quadrature import composite_gauss

#: Gauss points per element: exact for polynomials up to degree 2·4 − 1 = 7.
GAUSS_POINTS = 4
_XI, _WEIGHTS = composite_gauss([0.0, 1.0], GAUSS_POINTS)


def hermite(xi: np.ndarray, h: float, derivative: int = 0) -> np.ndarray:
    """d^m N/ds^m at local coordinates ξ on an element of length h, shape (4, len(ξ))."""
    xi = np.asarray(xi, dtype=float)
    one = np.ones_like(xi)
    if derivative == 0:
        rows = [
            1 - 3 * xi**2 + 2 * xi**3,
            h * (xi - 2 * xi**2 + xi**3),
            3 * xi**2 - 2 * xi**3,
            h * (-(xi**2) + xi**3),
        ]
    elif derivative == 1:
        rows = [
            (-6 * xi + 6 * xi**2) / h,
            1 - 4 * xi + 3 * xi**2,
            (6 * xi - 6 * xi**2) / h,
            -2 * xi + 3 * xi**2,
        ]
    elif derivative == 2:
        rows = [(-6 + 12 * xi) / h**2, (-4 + 6 * xi) / h, (6 - 12 * xi) / h**2, (-2 + 6 * xi) / h]
    elif derivative == 3:
        rows = [12 / h**3 * one, 6 / h**2 * one, -12 / h**3 * one, 6 / h**2 * one]
    else:
        raise ValueError(f"derivative must be 0, 1, 2 or 3, got {derivative}")
    return np.array(rows)


#: Integrals over the unit element (h = 1): every element's follow by scaling
#: the slope functions, N = S_h N₁ with S_h = diag(1, h, 1, h).
_N_UNIT = hermite(_XI, 1.0, 0)
_B_UNIT = hermite(_XI, 1.0, 2)
_MASS_UNIT = (_N_UNIT * _WEIGHTS) @ _N_UNIT.T
_STIFFNESS_UNIT = (_B_UNIT * _WEIGHTS) @ _B_UNIT.T
_FIRST_UNIT = _N_UNIT @ _WEIGHTS
_MOMENT_UNIT = _N_UNIT @ (_WEIGHTS * _XI)


def element_matrices(h: float | np.ndarray, s0: float | np.ndarray = 0.0) -> dict[str, np.ndarray]:
    """Integrals over elements starting at s0 with length h (unit ρA, EI).

    ``h`` and ``s0`` may be arrays (broadcast together, shape (...)): all
    elements of a mesh are then computed at once.

    Returns
    -------
    dict with
        ``mass`` (..., 4, 4) ∫NᵢNⱼ ds, ``stiffness`` (..., 4, 4) ∫Nᵢ''Nⱼ'' ds,
        ``first`` (..., 4) ∫Nᵢ ds, ``moment`` (..., 4) ∫ s Nᵢ ds.

    With ξ = (s − s₀)/h, N = S_h N₁(ξ) and N'' = S_h N₁''(ξ)/h², so
    ∫NNᵀ = h S M₁ S, ∫N''N''ᵀ = S K₁ S / h³, ∫N = h S f₁ and
    ∫sN = s₀ ∫N + h² S m₁ with the unit-element integrals by Gauss–Legendre.
    """
    h, s0 = np.broadcast_arrays(np.asarray(h, dtype=float), np.asarray(s0, dtype=float))
    one = np.ones_like(h)
    scale = np.stack([one, h, one, h], axis=-1)  # diagonal of S_h, (..., 4)
    outer = scale[..., :, None] * scale[..., None, :]
    first = h[..., None] * scale * _FIRST_UNIT
    return {
        "mass": h[..., None, None] * outer * _MASS_UNIT,
        "stiffness": outer * _STIFFNESS_UNIT / h[..., None, None] ** 3,
        "first": first,
        "moment": s0[..., None] * first + h[..., None] ** 2 * scale * _MOMENT_UNIT,
    }
