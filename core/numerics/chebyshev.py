"""Adaptive piecewise Chebyshev interpolation of a smooth vector-valued function of one variable.

A function f: [a, b] → R^P that is analytic on the interval (its nearest complex singularity
at a distance from it) has Chebyshev coefficients that decay geometrically (Trefethen,
*Approximation Theory and Approximation Practice*, SIAM 2013, Thms 8.1–8.2): the
interpolant in n + 1 Chebyshev–Lobatto points x_j = cos(πj/n) has coefficients

    c_k = (2/n) Σ''_j f(x_j) cos(πjk/n)      (Σ'': the first and last terms halved; c_0, c_n halved),

and its error is bounded by the sum of the neglected |c_k| (twice the tail, with aliasing).
:func:`fit` samples f on nested Lobatto grids of :data:`DEGREES` (each grid reuses the
samples of the coarser), accepts a panel once the last :data:`TAIL` coefficients of every
component lie below its tolerance, chops the coefficients whose summed magnitude stays
below it (the degree is chosen from the decay, per panel), and bisects a panel whose
coefficients have not decayed at the largest degree (a nearby singularity), or decay by less
than :data:`DECAY` from one degree to the next (a jump, or too slowly to pay), at most
:data:`MAX_DEPTH` times; a panel that still fails is left out (:meth:`PiecewiseChebyshev.__call__`
returns None there, and the caller falls back to f itself).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

#: Nested Lobatto degrees tried on a panel (each doubles the previous: samples are reused).
DEGREES = (8, 16, 32, 64)
#: Coefficients at the end of the series that must lie below the tolerance.
TAIL = 3
#: A panel is bisected at once when doubling the degree shrank the tail by less than this factor
#: (a jump or a nearby singularity: the coefficients decay like 1/k or barely).
DECAY = 0.1
#: Bisections of the interval allowed before a panel is given up.
MAX_DEPTH = 10


@lru_cache(maxsize=16)
def _transform(n: int) -> np.ndarray:
    """The (n + 1, n + 1) matrix from values at x_j = cos(πj/n) to Chebyshev coefficients."""
    j = np.arange(n + 1)
    matrix = (2.0 / n) * np.cos(np.pi * np.outer(j, j) / n)
    matrix[:, [0, n]] *= 0.5
    matrix[[0, n], :] *= 0.5
    matrix.setflags(write=False)
    return matrix


@lru_cache(maxsize=16)
def _orders(count: int) -> np.ndarray:
    return np.arange(count, dtype=float)


def lobatto_points(n: int) -> np.ndarray:
    """The n + 1 Chebyshev–Lobatto points cos(πj/n), j = 0 … n, on [−1, 1] (decreasing)."""
    return np.cos(np.pi * np.arange(n + 1) / n)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: it holds arrays
class PiecewiseChebyshev:
    """Chebyshev series on the panels ``breaks[i] … breaks[i + 1]``.

    Attributes
    ----------
    breaks : ndarray, shape (p + 1,)
        Increasing panel ends.
    coefficients : tuple of (ndarray, shape (d_i + 1, P)) or None
        Per panel the coefficients of T_0 … T_{d_i} in t = (2x − a − b)/(b − a); None for a
        panel that did not converge.
    samples : int
        Evaluations of f the fit took.
    grids : tuple of int or None
        Per panel the degree n of the finest Lobatto grid sampled (n + 1 points; None for a
        panel that did not converge): the points halfway between its nodes in angle,
        ``lobatto_points(2 n)[1::2]``, are points the fit never sampled.
    """

    breaks: np.ndarray
    coefficients: tuple
    samples: int
    grids: tuple = ()
    edges: tuple = field(init=False, repr=False, compare=False)
    orders: tuple = field(init=False, repr=False, compare=False)

    @property
    def degrees(self) -> tuple[int | None, ...]:
        """The degree kept on each panel (None: not converged)."""
        return tuple(None if c is None else c.shape[0] - 1 for c in self.coefficients)

    def __post_init__(self) -> None:
        # Read per call: the breaks as floats (bisect on a tuple beats searchsorted on a few
        # panels) and each panel's orders k of T_k = cos(k arccos t).
        object.__setattr__(self, "edges", tuple(float(b) for b in self.breaks))
        orders = tuple(None if c is None else np.arange(c.shape[0], dtype=float) for c in self.coefficients)
        object.__setattr__(self, "orders", orders)

    def packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edges (panels + 1,), coefficients (panels, length, P) zero-padded, lengths (panels,)
        int64): the arrays a compiled reader takes
        (:func:`core.dynamics.compiled.series.series_value`). ValueError if a panel failed (its
        coefficients are None)."""
        panels = self.coefficients
        if any(c is None for c in panels):
            raise ValueError("a panel without coefficients cannot be packed (it is evaluated directly)")
        coefficients = np.zeros((len(panels), max(c.shape[0] for c in panels), panels[0].shape[1]))
        for i, c in enumerate(panels):
            coefficients[i, : c.shape[0]] = c
        lengths = np.array([c.shape[0] for c in panels], dtype=np.int64)
        return np.array(self.edges), coefficients, lengths

    def __call__(self, x: float) -> np.ndarray | None:
        """The series at ``x`` (P,), or None outside the breaks or on a panel that failed."""
        edges = self.edges
        if not edges[0] <= x <= edges[-1]:
            return None
        i = 0 if len(edges) == 2 else min(bisect.bisect_right(edges, x) - 1, len(edges) - 2)
        c = self.coefficients[i]
        if c is None:
            return None
        a, b = edges[i], edges[i + 1]
        t = min(max((2.0 * x - a - b) / (b - a), -1.0), 1.0)
        # T_k(t) = cos(k arccos t): one vector call (its rounding, ~k ε, is that of the recurrence)
        return np.dot(np.cos(self.orders[i] * math.acos(t)), c)


def _panel(
    function: Callable[[float], np.ndarray],
    a: float,
    b: float,
    tolerance: Callable[[np.ndarray], np.ndarray],
    cache: dict,
) -> tuple[np.ndarray | None, int | None]:
    """(chopped coefficients of ``function`` on [a, b], the degree of the grid sampled), or
    (None, None) if no degree of DEGREES decays."""
    values: np.ndarray | None = None
    previous = np.inf
    for n in DEGREES:
        points = 0.5 * (a + b) + 0.5 * (b - a) * lobatto_points(n)
        if values is None:
            rows = [_sample(function, float(x), cache) for x in points]
        else:  # the coarser grid is every other point of this one
            rows = [None] * (n + 1)
            for j in range(0, n + 1, 2):
                rows[j] = values[j // 2]
            for j in range(1, n + 1, 2):
                rows[j] = _sample(function, float(points[j]), cache)
        values = np.array(rows)
        scale = tolerance(values)
        coefficients = _transform(n) @ values
        tail = float(np.max(np.abs(coefficients[-TAIL:]) / scale))
        if tail > 1.0 and tail > DECAY * previous:
            return None, None  # not converging fast enough for a finer grid to pay: bisect
        previous = tail
        if tail <= 1.0:
            # Keep the shortest series whose dropped coefficients sum to at most the tolerance.
            dropped = np.cumsum(np.abs(coefficients[::-1]) / scale, axis=0)[::-1]  # [k]: Σ_{i ≥ k}
            fits = np.all(dropped <= 1.0, axis=1)
            keep = int(np.argmax(fits)) if fits.any() else n + 1
            return np.ascontiguousarray(coefficients[: max(keep, 1)]), n
    return None, None


def _sample(function: Callable[[float], np.ndarray], x: float, cache: dict) -> np.ndarray:
    if x not in cache:
        cache[x] = np.asarray(function(x), dtype=float)
    return cache[x]


def fit(
    function: Callable[[float], np.ndarray],
    interval: tuple[float, float],
    tolerance: Callable[[np.ndarray], np.ndarray],
) -> PiecewiseChebyshev:
    """Piecewise Chebyshev interpolant of ``function`` on ``interval`` (module docstring).

    Parameters
    ----------
    function : callable
        x ↦ f(x), ndarray shape (P,), at a float x in the interval.
    interval : (float, float)
        a < b.
    tolerance : callable
        Samples of one panel (m, P) ↦ the absolute tolerance of each component (P,), > 0.

    Returns
    -------
    PiecewiseChebyshev
    """
    a, b = float(interval[0]), float(interval[1])
    if not (np.isfinite(a) and np.isfinite(b) and a < b):
        raise ValueError(f"interval must be finite with a < b, got {interval!r}")
    cache: dict = {}
    breaks, pieces, grids = [a], [], []
    pending = [(a, b, 0)]  # depth-first, left to right
    while pending:
        lo, hi, depth = pending.pop()
        coefficients, grid = _panel(function, lo, hi, tolerance, cache)
        if coefficients is None and depth < MAX_DEPTH:
            middle = 0.5 * (lo + hi)
            pending += [(middle, hi, depth + 1), (lo, middle, depth + 1)]
            continue
        if coefficients is not None:
            coefficients.setflags(write=False)
        breaks.append(hi)
        pieces.append(coefficients)
        grids.append(grid)
    edges = np.array(breaks)
    edges.setflags(write=False)
    return PiecewiseChebyshev(edges, tuple(pieces), len(cache), tuple(grids))
