"""The two numerical derivatives the engine uses, each written once.

Complex step (exact to round-off for complex-analytic functions)::

    ∂f/∂x · d  =  Im f(x + i h d) / h,   h = COMPLEX_STEP,

with no subtractive cancellation, so any tiny h works; every operation of the
engine (rotations, body mass matrices, kinematics) is written to be analytic.

Central differences, for functions that are not analytic (a controller, a
solve with pivoting, Coulomb friction)::

    ∂f/∂x_k ≈ (f(x + h_k e_k) − f(x − h_k e_k)) / (2 h_k),  h_k = CENTRAL_STEP · max(1, |x_k|),

with truncation error O(h²) and round-off O(ε/h): 1e-6 balances them to
about 1e-10 relative for smooth dynamics of unit scale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core.numerics import validation as check

#: Step of the complex-step derivative; any tiny value gives round-off accuracy.
COMPLEX_STEP = 1e-30
#: Relative step of the central differences.
CENTRAL_STEP = 1e-6


def complex_step_points(x: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """The points x + i h d for each row d of ``directions``, shape (k, n), complex."""
    x = np.asarray(x, dtype=float)
    return x + 1j * COMPLEX_STEP * np.atleast_2d(directions)


def complex_step_derivatives(values: np.ndarray) -> np.ndarray:
    """Directional derivatives Im f / h from values of f at :func:`complex_step_points`."""
    return np.imag(values) / COMPLEX_STEP


def complex_step_jacobian(
    function: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    columns: Sequence[int] | None = None,
    *,
    batched: bool = False,
    batch_size: int | None = None,
) -> np.ndarray:
    """∂f/∂x by the complex step; ``out[:, j] = ∂f/∂x_{columns[j]}``.

    Parameters
    ----------
    function : callable
        Complex-analytic f. With ``batched=False`` it takes one point (n,) and
        returns (m,); with ``batched=True`` it takes all shifted points at once,
        (k, n) → (k, m) (the engine pushes a batch through its link loop once).
    x : ndarray, shape (n,)
    columns : sequence of int, optional
        The coordinates to differentiate by (default: all).
    batch_size : int, optional
        With ``batched=True``, at most this many points per call (default: all in one call):
        a batch's arrays grow with its points, and past the caches a smaller batch is faster.

    Returns
    -------
    ndarray, shape (m, len(columns))
    """
    x = np.asarray(x, dtype=float)
    columns = range(x.size) if columns is None else columns
    points = complex_step_points(x, np.eye(x.size)[list(columns)])
    if not len(points):
        return np.zeros((np.size(function(x)), 0))
    if batched:
        size = len(points) if batch_size is None else check.integer(batch_size, "", "batch_size", minimum=1)
        values = np.concatenate([function(points[a : a + size]) for a in range(0, len(points), size)])
    else:
        values = np.array([function(p) for p in points])
    return complex_step_derivatives(values).reshape(len(points), -1).T


def central_difference_jacobian(
    function: Callable[[np.ndarray], np.ndarray], x: np.ndarray, step: float = CENTRAL_STEP
) -> np.ndarray:
    """∂f/∂x by central differences with relative step ``step``, shape (m, n)."""
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        h = step * max(1.0, abs(x[k]))
        forward, backward = x.copy(), x.copy()
        forward[k] += h
        backward[k] -= h
        columns.append((np.asarray(function(forward)) - np.asarray(function(backward))) / (2 * h))
    return np.array(columns).T


def central_difference_directions(function, x, directions, step: float = CENTRAL_STEP) -> np.ndarray:
    """Directional derivatives (f(x + h d_k) − f(x − h d_k)) / (2h), shape (k, ...), from one
    batch call: ``function`` maps points (2k, n) to values (2k, ...), ``directions`` (k, n) are
    the d_k (scaled by the caller to the size of the change they resolve), and the step
    h = step · max(1, max_j |x_j|) is the same for every direction."""
    x = np.asarray(x, dtype=float)
    directions = np.atleast_2d(directions)
    h = step * max(1.0, float(np.max(np.abs(x))))
    values = np.asarray(function(np.concatenate([x + h * directions, x - h * directions])))
    k = len(directions)
    return (values[:k] - values[k:]) / (2 * h)


__all__ = [
    "CENTRAL_STEP",
    "COMPLEX_STEP",
    "central_difference_directions",
    "central_difference_jacobian",
    "complex_step_derivatives",
    "complex_step_jacobian",
    "complex_step_points",
]
