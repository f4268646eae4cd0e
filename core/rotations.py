"""Rotations and frames, written so that complex-step differentiation works.

The engine differentiates M(q), G(q) and V(q) by the complex step
(Squire & Trapp, SIAM Rev. 40 (1998) 110–112): f'(x) = Im f(x + ih)/h, exact
to round-off for any tiny h, provided every operation is complex-analytic.
Hence no ``abs``, ``conj`` or ``np.real`` on values that carry the step, and
functions of a rotation vector θ are written in x = θᵀθ (not |θ|²), with a
Taylor series near x = 0 that is accurate to round-off.
"""

from __future__ import annotations

import numpy as np

#: Below this |x| (x = θᵀθ) the trigonometric ratios use their Taylor series.
SERIES_THRESHOLD = 1e-4


def skew(v: np.ndarray) -> np.ndarray:
    """The matrix ṽ with ṽ u = v × u, shape (3, 3)."""
    return np.array([[0 * v[0], -v[2], v[1]], [v[2], 0 * v[0], -v[0]], [-v[1], v[0], 0 * v[0]]])


def rot_x(angle) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    one, zero = 1 + 0 * c, 0 * c
    return np.array([[one, zero, zero], [zero, c, -s], [zero, s, c]])


def rot_z(angle) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    one, zero = 1 + 0 * c, 0 * c
    return np.array([[c, -s, zero], [s, c, zero], [zero, zero, one]])


def _ratios(x) -> tuple:
    """a = sin r / r, b = (1 − cos r)/r², c = (r − sin r)/r³ with r² = x (entire in x)."""
    if abs(x) < SERIES_THRESHOLD:
        a = 1 - x / 6 + x**2 / 120 - x**3 / 5040
        b = 0.5 - x / 24 + x**2 / 720 - x**3 / 40320
        c = 1 / 6 - x / 120 + x**2 / 5040 - x**3 / 362880
        return a, b, c
    r = np.sqrt(x)
    return np.sin(r) / r, (1 - np.cos(r)) / x, (r - np.sin(r)) / (x * r)


def exp_so3(theta: np.ndarray) -> np.ndarray:
    """Rotation matrix of the rotation vector θ (Rodrigues), shape (3, 3)."""
    x = theta @ theta
    a, b, _ = _ratios(x)
    t = skew(theta)
    return np.eye(3) + a * t + b * (t @ t)


def left_jacobian(theta: np.ndarray) -> np.ndarray:
    """J with skew(J θ̇) = Ṙ Rᵀ for R = exp(θ̃): the angular velocity in the outer frame."""
    x = theta @ theta
    _, b, c = _ratios(x)
    t = skew(theta)
    return np.eye(3) + b * t + c * (t @ t)


#: Rotation from a prismatic joint's link frame to its beam frame: the beam axis
#: x_b is the joint axis z, in-plane bending y_b along x, out-of-plane z_b along y.
PRISMATIC_BEAM = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
