"""Clamped beam families: clamped–free (cantilever) and clamped–mass.

The link frame is tangent to the beam at the joint (w = w' = 0 there: the
"clamped" frame choice); the joint torque does not act on the flexible
coordinates directly (input-matrix entries φ_k'(0) = 0).

Numerically stable evaluation
-----------------------------
The textbook form φ = cosh βη − cos βη − σ(sinh βη − sin βη) subtracts numbers
of size e^β that agree to ~β/ln 10 digits, so it loses everything beyond about
the twelfth mode. We use the equivalent basis of bounded functions

    φ(η) = A cos βξ + B sin βξ + C e^{−βξ} + D e^{−βη},   ξ = 1 − η,

(E = e^{−β}). Both tip conditions are satisfied by construction: the tip data
P_m = φ^(m)(1)/β^m are parametrized as P0 = X/(1+μβ), P3 = −μβ X/(1+μβ),
P1 = Y/(1+jβ³), P2 = jβ³ Y/(1+jβ³), which fix A, B and C; D comes from the
clamp conditions, and the remaining clamp condition (the only place the root
error enters, unamplified) fixes X:Y. Every quantity is O(1), so all modes
keep full precision even when a large tip load makes the tip nearly clamped.

Normalization and sign
----------------------
⟨φ_i, φ_j⟩ = ∫₀¹ φ_i φ_j dη + μ φ_i(1) φ_j(1) + j φ_i'(1) φ_j'(1) = δ_ij (for
clamped–free μ = j = 0), with ∫ φ² evaluated in closed form on the basis
above. Sign convention: the tip deflection φ_k(1) is positive.
"""

from __future__ import annotations

import numpy as np

from core import validation as check
from shapes.base import ShapeFamily
from shapes.clamped_roots import clamped_free_roots, clamped_mass_roots

# d^m/dx^m of cos and sin for m = 0..4, as (function, sign).
PICK_RATIO = 0.1
_COS_DERIVATIVES = ((np.cos, 1.0), (np.sin, -1.0), (np.cos, -1.0), (np.sin, 1.0), (np.cos, 1.0))
_SIN_DERIVATIVES = ((np.sin, 1.0), (np.cos, 1.0), (np.sin, -1.0), (np.cos, -1.0), (np.sin, 1.0))


def _gram(beta: np.ndarray) -> np.ndarray:
    """Closed-form ∫₀¹ u_p u_q dη for u = (cos βη, sin βη, e^{−βη}, e^{−β(1−η)}).

    Returns
    -------
    ndarray, shape (n, 4, 4)
    """
    b = beta
    s, c, E = np.sin(b), np.cos(b), np.exp(-b)
    two_b = 2.0 * b
    G = np.empty((*b.shape, 4, 4))
    G[:, 0, 0] = 0.5 + np.sin(2 * b) / (2 * two_b)
    G[:, 1, 1] = 0.5 - np.sin(2 * b) / (2 * two_b)
    G[:, 0, 1] = s * s / two_b
    G[:, 0, 2] = (E * (s - c) + 1.0) / two_b
    G[:, 1, 2] = (1.0 - E * (s + c)) / two_b
    G[:, 0, 3] = (s + c - E) / two_b
    G[:, 1, 3] = (s - c + E) / two_b
    G[:, 2, 2] = G[:, 3, 3] = -np.expm1(-2 * b) / two_b
    G[:, 2, 3] = E
    for p, q in ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)):
        G[:, q, p] = G[:, p, q]
    return G


class _ClampedBeam(ShapeFamily):
    """Clamped at η = 0, tip mass ratio μ and tip inertia ratio j at η = 1."""

    frame = "clamped"

    def __init__(self, mass_ratio: float = 0.0, inertia_ratio: float = 0.0) -> None:
        super().__init__()
        self._mu = check.nonnegative(mass_ratio, "", "mass_ratio")
        self._j = check.nonnegative(inertia_ratio, "", "inertia_ratio")

    @property
    def mass_ratio(self) -> float:
        return self._mu

    @property
    def inertia_ratio(self) -> float:
        return self._j

    def _coefficients_for(self, betas: np.ndarray) -> np.ndarray:
        # Tip Cauchy data P_m = φ^(m)(1)/β^m satisfying both tip conditions for
        # any (X, Y): P3 = −μβ P0 and P2 = jβ³ P1, scaled so every P_m is O(|X|+|Y|).
        b = betas
        s, c, E = np.sin(b), np.cos(b), np.exp(-b)
        mu_t, j_t = self._mu * b, self._j * b**3
        zero = np.zeros_like(b)
        p_x = np.stack([1 / (1 + mu_t), zero, zero, -mu_t / (1 + mu_t)])
        p_y = np.stack([zero, 1 / (1 + j_t), j_t / (1 + j_t), zero])

        def tip_terms(P: np.ndarray) -> tuple[np.ndarray, ...]:
            # A, B, C from the tip data; Q = 4·D·E must vanish up to O(E).
            A = 0.5 * (P[0] - P[2])
            B = 0.5 * (P[3] - P[1])
            C = 0.25 * (P[0] + P[1] + P[2] + P[3])
            Q = 0.25 * (P[0] - P[1] + P[2] - P[3])
            return A, B, C, Q

        def root_rows(P: np.ndarray) -> np.ndarray:
            A, B, C, Q = tip_terms(P)
            clamp_sum = A * (c + s) + B * (s - c) + 2 * C * E  # φ(0) + φ'(0)/β
            consistency = -0.5 * E * (A * (c - s) + B * (s + c)) - Q  # D_root·E − D_tip·E
            return np.stack([clamp_sum, consistency], axis=-1)  # (n, 2)

        rows = np.stack([root_rows(p_x), root_rows(p_y)], axis=-1)  # (n, 2 rows, X/Y)
        norms = np.linalg.norm(rows, axis=2)
        pick = np.where(norms[:, 1] >= PICK_RATIO * norms[:, 0], 1, 0)
        row = rows[np.arange(b.size), pick]
        X, Y = row[:, 1], -row[:, 0]
        A, B, C, _ = tip_terms(X * p_x + Y * p_y)
        D = -0.5 * (A * (c - s) + B * (s + c))  # from φ(0) − φ'(0)/β = 0
        coefficients = np.column_stack([A, B, C, D])
        tip_value = X / (1 + mu_t)
        tip_slope = b * Y / (1 + j_t)
        norm2 = np.einsum("np,npq,nq->n", coefficients, _gram(b), coefficients)
        norm2 = norm2 + self._mu * tip_value**2 + self._j * tip_slope**2
        sign = np.where(tip_value < 0, -1.0, 1.0)
        coefficients = coefficients * (sign / np.sqrt(norm2))[:, None]
        coefficients.setflags(write=False)
        return coefficients

    def _slice_coefficients(self, coefficients: np.ndarray, n: int) -> np.ndarray:
        return coefficients[:n]

    def _evaluate(
        self, eta: np.ndarray, betas: np.ndarray, coefficients: np.ndarray, derivative: int
    ) -> np.ndarray:
        # Basis in ξ = 1 − η: cos βξ, sin βξ, e^{−βξ} (tip layer), e^{−βη} (root layer);
        # d/dη = −d/dξ.
        x = betas[:, None] * (1.0 - eta[None, :])
        cos_f, cos_s = _COS_DERIVATIVES[derivative]
        sin_f, sin_s = _SIN_DERIVATIVES[derivative]
        A, B, C, D = (coefficients[:, k, None] for k in range(4))
        values = (
            A * cos_s * cos_f(x)
            + B * sin_s * sin_f(x)
            + C * (-1.0) ** derivative * np.exp(-x)
            + D * np.exp(-betas[:, None] * eta[None, :])
        )
        return (-betas[:, None]) ** derivative * values

    def _boundary_residuals(self, betas: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
        # Normwise relative residuals: |Σ c_m φ^(m)| / Σ |c_m| β^m, i.e. each
        # condition divided by the size its terms have for a unit-amplitude shape.
        ends = np.array([0.0, 1.0])
        d = [self._evaluate(ends, betas, coefficients, m) for m in range(4)]
        b = betas
        mu, jr = self._mu, self._j
        return np.column_stack(
            [
                np.abs(d[0][:, 0]),
                np.abs(d[1][:, 0]) / b,
                np.abs(d[2][:, 1] - jr * b**4 * d[1][:, 1]) / (b**2 + jr * b**5),
                np.abs(d[3][:, 1] + mu * b**4 * d[0][:, 1]) / (b**3 + mu * b**4),
            ]
        )


class ClampedFree(_ClampedBeam):
    """Cantilever shapes: clamped at the joint, free at the tip (1 + cos β cosh β = 0)."""

    name = "clamped-free"

    def __init__(self) -> None:
        super().__init__(0.0, 0.0)

    def __repr__(self) -> str:
        return "ClampedFree()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ClampedFree

    def __hash__(self) -> int:
        return hash(type(self))

    def _roots(self, n: int) -> np.ndarray:
        return clamped_free_roots(n)


class ClampedMass(_ClampedBeam):
    """Cantilever with a tip mass and rotary inertia.

    Parameters
    ----------
    mass_ratio : float
        μ = M / (ρA L) ≥ 0, tip mass over beam mass.
    inertia_ratio : float
        j = J / (ρA L³) ≥ 0, tip rotary inertia over ρA L³.

    Tip conditions φ'''(1) = −μβ⁴ φ(1) and φ''(1) = jβ⁴ φ'(1); with
    μ = j = 0 the family is the cantilever. Roots are found by
    :func:`shapes.clamped_roots.clamped_mass_roots` (Wittrick–Williams
    counting, so no root is ever missed).
    """

    name = "clamped-mass"

    def __repr__(self) -> str:
        return f"ClampedMass(mass_ratio={self._mu!r}, inertia_ratio={self._j!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is ClampedMass and other.mass_ratio == self._mu and other.inertia_ratio == self._j

    def __hash__(self) -> int:
        return hash((type(self), self._mu, self._j))

    def _roots(self, n: int) -> np.ndarray:
        return clamped_mass_roots(n, self._mu, self._j)
