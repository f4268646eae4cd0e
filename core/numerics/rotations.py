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

#: Below this |x| (x = θᵀθ) the trigonometric ratios use their Taylor series (:func:`ratio_series`,
#: to x⁸: the first omitted terms, x⁹/19!, x⁹/20!, x⁹/21!, are below 1e-17 of the ratios here).
#: Above it the closed forms lose about 6ε/|x| to cancellation: at the former threshold 1e-4 that
#: was 1e-11 relative, seen as a 1.6e-12 difference between the compiled and the numpy bias forces
#: of a link bending in two planes; at 1 it is 1.3e-15.
SERIES_THRESHOLD = 1.0


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


def _axis_rotation(angle, axis: int) -> np.ndarray:
    """Rotations by ``angle`` about the coordinate axis ``axis`` (0, 1, 2: x, y, z), shape (..., 3, 3)."""
    angle = np.asarray(angle)
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros((*angle.shape, 3, 3), dtype=c.dtype)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    out[..., axis, axis] = 1.0
    out[..., i, i], out[..., i, j], out[..., j, i], out[..., j, j] = c, -s, s, c
    return out


def rot_x(angle) -> np.ndarray:
    return _axis_rotation(angle, 0)


def rot_z(angle) -> np.ndarray:
    return _axis_rotation(angle, 2)


def _ratios(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a = sin r/r, b = (1 − cos r)/r², c = (r − sin r)/r³ with r² = x (entire in x)."""
    small = np.abs(x) < SERIES_THRESHOLD
    if small.all():  # the usual case for elastic tip rotations: series only
        return ratio_series(x)
    closed = ratio_closed_form(np.where(small, 1.0, x))  # keep the closed form away from 0/0
    if not small.any():
        return closed
    return tuple(np.where(small, s, c) for s, c in zip(ratio_series(x), closed, strict=True))


# The two forms of the ratios are written for numpy arrays and for scalars alike (operators and
# numpy ufuncs only, no globals): the compiled kernels compile these very functions
# (:mod:`core.dynamics.compiled.kinematics`), so there is one definition of the series.


def ratio_series(x):
    """(a, b, c) of :func:`_ratios` by their Taylor series in x = r² to x⁸, in Horner form
    (a = Σ (−x)ᵏ/(2k + 1)!, b = Σ (−x)ᵏ/(2k + 2)!, c = Σ (−x)ᵏ/(2k + 3)!: each term is the
    previous times −x/((n + 1)(n + 2)) for the factorial's n), accurate to round-off for
    |x| < ``SERIES_THRESHOLD`` (the first omitted terms are x⁹/19!, x⁹/20!, x⁹/21!)."""
    a = 1 - x / 272
    for divisor in (210, 156, 110, 72, 42, 20, 6):  # (2k)(2k + 1) for k = 7 … 1 (k = 8 starts it)
        a = 1 - x / divisor * a
    b = 1 - x / 306
    for divisor in (240, 182, 132, 90, 56, 30, 12):  # (2k + 1)(2k + 2), the same k
        b = 1 - x / divisor * b
    c = 1 - x / 342
    for divisor in (272, 210, 156, 110, 72, 42, 20):  # (2k + 2)(2k + 3), the same k
        c = 1 - x / divisor * c
    return a, 0.5 * b, c / 6


def ratio_closed_form(x):
    """(a, b, c) of :func:`_ratios` in closed form, r = √x (the principal root: the ratios are
    even in r); loses digits as x → 0, where :func:`ratio_series` takes over."""
    r = np.sqrt(x)
    return np.sin(r) / r, (1 - np.cos(r)) / x, (r - np.sin(r)) / (x * r)


def _quadratic_in_skew(theta: np.ndarray, first: int, second: int) -> np.ndarray:
    """I + f θ̃ + g θ̃² with f, g the ratios number ``first`` and ``second`` of :func:`_ratios`
    (a, b, c) at x = θᵀθ, shape (..., 3, 3)."""
    ratios = _ratios(np.einsum("...i,...i->...", theta, theta))
    f, g = ratios[first][..., None, None], ratios[second][..., None, None]
    t = skew(theta)
    return np.eye(3) + f * t + g * (t @ t)


def exp_so3(theta: np.ndarray) -> np.ndarray:
    """Rotation matrices of rotation vectors θ (Rodrigues), shape (..., 3, 3)."""
    return _quadratic_in_skew(theta, 0, 1)  # I + a θ̃ + b θ̃²


def left_jacobian(theta: np.ndarray) -> np.ndarray:
    """J with skew(J θ̇) = Ṙ Rᵀ for R = exp(θ̃): the angular velocity in the outer frame."""
    return _quadratic_in_skew(theta, 1, 2)  # I + b θ̃ + c θ̃²


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
