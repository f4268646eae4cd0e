"""Pinned–pinned shapes: the link's floating frame along the chord joint → tip.

Frequency equation sin β = 0, roots β_k = kπ, and

    φ_k(η) = √2 sin(kπη),   ∫₀¹ φ_i φ_j dη = δ_ij.

"Pinned" here describes the frame choice, not a physical support: the link
frame's x-axis passes through the deformed tip, so the tip has no transverse
deflection in that frame (φ(0) = φ(1) = 0) and the bending moment vanishes at
both ends (φ''(0) = φ''(1) = 0). The joint torque then also drives the flexible
coordinates, through the input-matrix entries φ_k'(0) = √2 kπ.
Sign convention: φ_k'(0) > 0.
"""

from __future__ import annotations

import numpy as np

from shapes.base import ShapeFamily

_SQRT2 = np.sqrt(2.0)


class PinnedPinned(ShapeFamily):
    """Shapes √2 sin(kπη) of a beam with both ends pinned (chord frame)."""

    name = "pinned-pinned"
    frame = "pinned"

    def _roots(self, n: int) -> np.ndarray:
        return np.pi * np.arange(1, n + 1, dtype=float)

    def _coefficients_for(self, betas: np.ndarray) -> None:
        return None

    def _slice_coefficients(self, coefficients: None, n: int) -> None:
        return None

    def _evaluate(
        self, eta: np.ndarray, betas: np.ndarray, coefficients: None, derivative: int
    ) -> np.ndarray:
        phase = betas[:, None] * eta[None, :]
        # d^m/dη^m sin(βη) = β^m sin(βη + mπ/2); use exact cos/sin instead of the shifted phase.
        base = (np.sin, np.cos, np.sin, np.cos, np.sin)[derivative](phase)
        sign = (1.0, 1.0, -1.0, -1.0, 1.0)[derivative]
        return sign * _SQRT2 * betas[:, None] ** derivative * base

    def _boundary_residuals(self, betas: np.ndarray, coefficients: None) -> np.ndarray:
        ends = np.array([0.0, 1.0])
        value = self._evaluate(ends, betas, None, 0) / _SQRT2
        moment = self._evaluate(ends, betas, None, 2) / (_SQRT2 * betas[:, None] ** 2)
        return np.abs(np.column_stack([value[:, 0], value[:, 1], moment[:, 0], moment[:, 1]]))
