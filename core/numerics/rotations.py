"""Rotations and frames, batched and written so that complex-step differentiation works.

The engine differentiates M(q), G(q) by the complex step (Squire & Trapp,
SIAM Rev. 40 (1998) 110–112): f'(x) = Im f(x + ih)/h, exact to round-off for
any tiny h, provided every operation is complex-analytic. Hence no ``abs``,
``conj`` or ``np.real`` on values that carry the step, and functions of a
rotation vector θ are written in x = θᵀθ (not |θ|²), with a Taylor series
near x = 0 that is accurate to round-off.

Every function takes arrays with any leading batch dimensions: a vector
argument has shape (..., 3), a matrix result shape (..., 3, 3). The engine
evaluates all complex-step directions in one batched pass.
"""

from __future__ import annotations

import numpy as np

#: Below this |x| (x = θᵀθ) the trigonometric ratios use their Taylor series.
SERIES_THRESHOLD = 1e-4


def skew(v: np.ndarray) -> np.ndarray:
    """Matrices ṽ with ṽ u = v × u, shape (..., 3, 3)."""
    v = np.asarray(v)
    out = np.zeros((*v.shape[:-1], 3, 3), dtype=v.dtype)
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (..., 3), written out: ``np.cross`` costs ~10–15 µs
    of axis bookkeeping per call, which dominates the per-body work on small arms."""
    a, b = np.asarray(a), np.asarray(b)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def rot_x(angle) -> np.ndarray:
    angle = np.asarray(angle)
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros((*angle.shape, 3, 3), dtype=c.dtype)
    out[..., 0, 0] = 1.0
    out[..., 1, 1], out[..., 1, 2], out[..., 2, 1], out[..., 2, 2] = c, -s, s, c
    return out


def rot_z(angle) -> np.ndarray:
    angle = np.asarray(angle)
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros((*angle.shape, 3, 3), dtype=c.dtype)
    out[..., 2, 2] = 1.0
    out[..., 0, 0], out[..., 0, 1], out[..., 1, 0], out[..., 1, 1] = c, -s, s, c
    return out


def _ratios(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a = sin r/r, b = (1 − cos r)/r², c = (r − sin r)/r³ with r² = x (entire in x)."""
    small = np.abs(x) < SERIES_THRESHOLD
    if small.all():  # the usual case for elastic tip rotations: series only
        return _series(x)
    xs = np.where(small, 1.0, x)  # keep the closed form away from 0/0
    r = np.sqrt(xs)
    closed = (np.sin(r) / r, (1 - np.cos(r)) / xs, (r - np.sin(r)) / (xs * r))
    if not small.any():
        return closed
    return tuple(np.where(small, s, c) for s, c in zip(_series(x), closed, strict=True))


def _series(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        1 - x / 6 + x**2 / 120 - x**3 / 5040,
        0.5 - x / 24 + x**2 / 720 - x**3 / 40320,
        1 / 6 - x / 120 + x**2 / 5040 - x**3 / 362880,
    )


def exp_so3(theta: np.ndarray) -> np.ndarray:
    """Rotation matrices of rotation vectors θ (Rodrigues), shape (..., 3, 3)."""
    x = np.einsum("...i,...i->...", theta, theta)
    a, b, _ = _ratios(x)
    t = skew(theta)
    return np.eye(3) + a[..., None, None] * t + b[..., None, None] * (t @ t)


def left_jacobian(theta: np.ndarray) -> np.ndarray:
    """J with skew(J θ̇) = Ṙ Rᵀ for R = exp(θ̃): the angular velocity in the outer frame."""
    x = np.einsum("...i,...i->...", theta, theta)
    _, b, c = _ratios(x)
    t = skew(theta)
    return np.eye(3) + b[..., None, None] * t + c[..., None, None] * (t @ t)


def spatial_inertia(mass: float, c: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """6×6 inertia for twists (v, ω) about a point of a rigid body of ``mass`` [kg] whose centre
    of mass is at ``c`` [m] from that point, with rotational inertia ``inertia`` [kg m²] about
    the centre of mass (all in the same axes, real)."""
    C = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    out = np.empty((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * C
    out[3:, :3] = mass * C
    out[3:, 3:] = inertia - mass * C @ C
    return out


def transpose(R: np.ndarray) -> np.ndarray:
    """Swap the last two axes (batched transpose)."""
    return np.swapaxes(R, -1, -2)


#: Rotation from a prismatic joint's link frame to its beam frame: the beam axis
#: x_b is the joint axis z, in-plane bending y_b along x, out-of-plane z_b along y.
PRISMATIC_BEAM = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
