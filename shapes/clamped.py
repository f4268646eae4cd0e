"""Clamped beam families: clamped–free (cantilever) and clamped–mass.

The link frame is tangent to the beam at the joint (w = w' = 0 there: the
"clamped" frame choice); the joint torque does not act on the flexible
coordinates directly (input-matrix entries φ_k'(0) = 0). The shape functions,
their stable evaluation, normalization and sign are those of
:mod:`shapes.clamped_functions`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.numerics import validation as check
from shapes.base import ShapeFamily, TipLoad
from shapes.clamped_functions import clamped_coefficients
from shapes.clamped_roots import clamped_free_roots, clamped_mass_roots
from shapes.following import LengthFollowing

# d^m/dx^m of cos and sin for m = 0..4, as (function, sign).
_COS_DERIVATIVES = ((np.cos, 1.0), (np.sin, -1.0), (np.cos, -1.0), (np.sin, 1.0), (np.cos, 1.0))
_SIN_DERIVATIVES = ((np.sin, 1.0), (np.cos, 1.0), (np.sin, -1.0), (np.cos, -1.0), (np.sin, 1.0))


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
        coefficients, _ = clamped_coefficients(betas, self._mu, self._j)
        coefficients.setflags(write=False)
        return coefficients

    def _slice_coefficients(self, coefficients: np.ndarray, n: int) -> np.ndarray:
        return coefficients[:n]

    def _evaluate(
        self, eta: np.ndarray, betas: np.ndarray, coefficients: np.ndarray, derivative: int
    ) -> np.ndarray:
        # Basis in ξ = 1 − η: cos βξ, sin βξ, e^{−βξ} (tip layer), e^{−βη} (root layer);
        # d/dη = −d/dξ. Batched and complex-safe (see clamped_evaluate).
        x = betas[..., :, None] * (1.0 - eta[None, :])
        cos_f, cos_s = _COS_DERIVATIVES[derivative]
        sin_f, sin_s = _SIN_DERIVATIVES[derivative]
        A, B, C, D = (coefficients[..., k, None] for k in range(4))
        values = (
            A * cos_s * cos_f(x)
            + B * sin_s * sin_f(x)
            + C * (-1.0) ** derivative * np.exp(-x)
            + D * np.exp(-betas[..., :, None] * eta[None, :])
        )
        return (-betas[..., :, None]) ** derivative * values

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
    needs_tip_load = True

    @classmethod
    def link_parameters(cls, parameters: dict[str, Any], load: TipLoad | None) -> dict[str, Any]:
        """The given ratios, else those of the link's tip load (everything distal to it)."""
        if parameters or load is None:
            return parameters
        return {"mass_ratio": load.mass_ratio, "inertia_ratio": load.inertia_ratio}

    def follower(
        self, load: TipLoad | None, modes: int, tracker: str, lengths: tuple[float, float]
    ) -> LengthFollowing | None:
        """Clamped–mass shapes of the current free length with the link's tip load, unless the
        tracker is ``"frozen"`` (:class:`shapes.following.LengthFollowing`)."""
        if tracker == "frozen" or load is None:
            return None
        return LengthFollowing(
            load.mass, load.inertia, load.mass_per_length, modes, tracker=tracker, lengths=tuple(lengths)
        )

    @property
    def parameters(self) -> dict[str, Any]:
        return {"mass_ratio": self._mu, "inertia_ratio": self._j}

    def _roots(self, n: int) -> np.ndarray:
        return clamped_mass_roots(n, self._mu, self._j)
