"""A vector function of time tabulated once for one run: :func:`tabulate`, :class:`TimeTable`.

A right-hand side that depends on t alone (the open-loop torques of
:class:`~core.analysis.controllers.FeedForward`, the rigid inverse dynamics of a trajectory)
is the same in every simulation of that span, yet an integrator asks for it ~10⁵ times.
:func:`tabulate` fits it once over the span by the adaptive piecewise Chebyshev series of
:func:`core.numerics.chebyshev.fit` (nested Lobatto grids, the degree doubled on a panel until
its coefficient tail lies below the tolerance, a panel bisected when it does not decay) and
then checks the series against direct evaluations at the points between the nodes, so the
stated tolerance is a measured one:

    |f_table(t) − f(t)| ≤ :data:`RELATIVE_TOLERANCE` · max|f| + :data:`ABSOLUTE_TOLERANCE`,

max|f| over every sample of the span and every component. The function is evaluated
directly (exact either way), and :attr:`TimeTable.reason` says why, where the table cannot
meet this: on panels whose series did not converge (f not smooth there, e.g. a jump of a
trajectory's acceleration), everywhere when the check fails or the fit would need more than
:data:`MAX_SAMPLES` evaluations, and at any time outside the span.

Cost (one BLAS thread, process time, a machine at load 4 on 2 cores; the space-arm maneuver
of studies/configs/space-arm-maneuver.toml: three joints, 10 s, one panel of degree 35, checked
deviation 2.4e-11 against a tolerance of 1.0e-9 N·m): the fit and its check 138 evaluations,
8.5 ms; a call 4.3 µs (two numpy calls, T_k = cos(k arccos x) and one product with the
coefficients, and Python around them) against 36 µs for the trajectory and the compiled
inverse dynamics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.numerics.chebyshev import DEGREES, PiecewiseChebyshev, fit, lobatto_points

#: Tolerance of the table relative to max|f| over the span.
RELATIVE_TOLERANCE = 1e-12
#: Absolute floor of the tolerance, in the function's units (for f ≡ 0).
ABSOLUTE_TOLERANCE = 1e-15
#: The series is fitted to this fraction of the tolerance it is checked to: the fit's criterion
#: (the chopped coefficients sum to at most its tolerance) bounds the error only up to aliasing,
#: and at the full tolerance the check found 0.7 of it on the space-arm maneuver.
FIT_FRACTION = 0.1
#: Evaluations of f the fit may take before the table is given up (≈ 0.1 s of the rigid
#: inverse dynamics of a three-joint arm).
MAX_SAMPLES = 4096


def check_points(grid: int) -> np.ndarray:
    """The check points of a panel whose finest sampled Lobatto grid has degree ``grid``, on
    [−1, 1]: the ``grid`` odd points of the grid of degree 2·grid, halfway (in angle) between
    its nodes and so never on a node of any grid the fit sampled there (they are nested). (The
    odd points of the largest degree's doubled grid, 64 a panel, made the check cost 1.7 times
    the fit on the RRP tables, whose panels stop at degree 16.)"""
    return lobatto_points(2 * grid)[1::2]


class _SampleCap(Exception):
    """The fit asked for more than :data:`MAX_SAMPLES` evaluations."""


@dataclass(frozen=True)
class TimeTable:
    """f(t) over ``span``: its Chebyshev series where it was tabulated, else f itself.

    Attributes
    ----------
    function : callable
        t ↦ f(t), ndarray shape (P,): the direct evaluation.
    span : (float, float)
        The tabulated interval [s].
    series : PiecewiseChebyshev or None
        The fitted series (its panels with coefficients None are evaluated directly); None
        when nothing is tabulated.
    samples : int
        Evaluations of f the fit and its check took.
    deviation : float
        The largest |f_table − f| found by the check (nan when nothing was checked).
    tolerance : float
        The tolerance the table was fitted and checked to (module docstring).
    reason : str or None
        Why (and where) f is evaluated directly inside the span; None when it never is.
    """

    function: Callable[[float], np.ndarray]
    span: tuple[float, float]
    series: PiecewiseChebyshev | None
    samples: int
    deviation: float
    tolerance: float
    reason: str | None

    @property
    def breaks(self) -> tuple[float, ...]:
        """Panel ends, increasing (``(t0, t1)`` for one panel; empty when nothing is tabulated)."""
        return () if self.series is None else self.series.edges

    @property
    def panels(self) -> tuple:
        """Each panel's coefficients; None where f is evaluated directly."""
        return () if self.series is None else self.series.coefficients

    @property
    def tabulated(self) -> bool:
        """True when some part of the span is read from the series."""
        return any(panel is not None for panel in self.panels)

    def __call__(self, t: float) -> np.ndarray:
        """f(t), shape (P,): from the series inside a tabulated panel, else directly."""
        if self.series is not None:
            value = self.series(t)
            if value is not None:
                return value
        return np.asarray(self.function(t), dtype=float)

    def compiled(self) -> Callable[[float], np.ndarray]:
        """A reader of the same values as this table's call: one compiled read of the series
        (:func:`core.dynamics.compiled.series.series_value`, ~0.9 µs against ~2.6 µs) inside the
        span when every panel is tabulated, the direct evaluation outside it; the table itself
        when some panel is not. Loads numba (a run that integrates has it already). The reader's
        ``compiled_series`` is the packed table (edges, coefficients, lengths, scales) for a compiled
        caller that stays within the span (:mod:`core.analysis.explicit`)."""
        if self.series is None or not all(panel is not None for panel in self.panels):
            return self
        from core.dynamics.compiled.series import series_value

        edges, coefficients, lengths = self.series.packed()
        scales = np.ones(coefficients.shape[2])
        t0, t1 = float(edges[0]), float(edges[-1])

        def read(t: float) -> np.ndarray:
            if t0 <= t <= t1:
                return series_value(edges, coefficients, lengths, scales, float(t))
            return np.asarray(self.function(t), dtype=float)

        read.compiled_series = (edges, coefficients, lengths, scales)  # for compiled callers, within the span
        return read


def tabulate(
    function: Callable[[float], np.ndarray],
    span: tuple[float, float],
    *,
    relative_tolerance: float = RELATIVE_TOLERANCE,
    absolute_tolerance: float = ABSOLUTE_TOLERANCE,
    max_samples: int = MAX_SAMPLES,
) -> TimeTable:
    """``function`` tabulated over ``span`` (module docstring), checked between the nodes.

    Parameters
    ----------
    function : callable
        t ↦ f(t), ndarray shape (P,), at a float t in the span.
    span : (float, float)
        t0 < t1 [s], finite.
    relative_tolerance, absolute_tolerance : float
        The table's tolerance: relative_tolerance · max|f| + absolute_tolerance.
    max_samples : int
        Evaluations of f the fit may take; beyond them f is evaluated directly.

    Returns
    -------
    TimeTable
    """
    t0, t1 = (float(t) for t in span)
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise ValueError(f"span must be finite and increasing, got {span!r}")

    def direct(t: float) -> np.ndarray:
        return np.asarray(function(t), dtype=float)

    start = [direct(float(t)) for t in 0.5 * (t0 + t1) + 0.5 * (t1 - t0) * lobatto_points(DEGREES[0])]
    scale = max(float(np.max(np.abs(v), initial=0.0)) for v in start)
    tolerance = relative_tolerance * scale + absolute_tolerance
    try:
        fitted = FIT_FRACTION * tolerance
        series = fit(_capped(direct, max_samples), (t0, t1), lambda v: np.full(v.shape[1], fitted))
    except _SampleCap:
        reason = f"direct evaluation: the fit needs more than {max_samples} samples on [{t0:.6g}, {t1:.6g}] s (not smooth enough)"
        return TimeTable(function, (t0, t1), None, max_samples, math.nan, tolerance, reason)
    breaks, panels = series.edges, series.coefficients
    deviation, scale, worst = _check(direct, series, scale)
    tolerance = relative_tolerance * scale + absolute_tolerance
    samples = len(start) + series.samples + sum(grid for grid in series.grids if grid is not None)
    if deviation > tolerance:
        reason = f"direct evaluation: the series deviates by {deviation:.3g} (tolerance {tolerance:.3g}) at t = {worst:.6g} s"
        return TimeTable(function, (t0, t1), None, samples, deviation, tolerance, reason)
    return TimeTable(function, (t0, t1), series, samples, deviation, tolerance, _untabulated(breaks, panels))


def _capped(function: Callable[[float], np.ndarray], max_samples: int) -> Callable[[float], np.ndarray]:
    """``function``, raising :class:`_SampleCap` at its (max_samples + 1)-th call."""
    calls = [0]

    def counted(t: float) -> np.ndarray:
        calls[0] += 1
        if calls[0] > max_samples:
            raise _SampleCap
        return function(t)

    return counted


def _check(
    direct: Callable[[float], np.ndarray], series: PiecewiseChebyshev, scale: float
) -> tuple[float, float, float]:
    """(largest |series − f|, max|f| updated with the check samples, where the largest was)
    at the :func:`check_points` (inside each panel) of every tabulated panel."""
    deviation, worst = 0.0, math.nan
    breaks = series.edges
    for a, b, grid in zip(breaks[:-1], breaks[1:], series.grids, strict=True):
        if grid is None:
            continue
        for t in 0.5 * (a + b) + 0.5 * (b - a) * check_points(grid):
            value = direct(float(t))
            scale = max(scale, float(np.max(np.abs(value), initial=0.0)))
            error = float(np.max(np.abs(series(float(t)) - value), initial=0.0))
            if error > deviation:
                deviation, worst = error, float(t)
    return deviation, scale, worst


def _untabulated(breaks: tuple[float, ...], panels: tuple) -> str | None:
    """Where f is evaluated directly inside the span (panels that did not converge), or None."""
    missing = [(a, b) for a, b, p in zip(breaks[:-1], breaks[1:], panels, strict=True) if p is None]
    if not missing:
        return None
    where = ", ".join(f"[{a:.6g}, {b:.6g}]" for a, b in missing)
    return (
        f"direct evaluation on {len(missing)} of {len(panels)} panels, where the series did not "
        f"converge (not smooth there): {where} s"
    )
