"""A root of a smooth function inside a sign-change bracket: Newton's method kept inside the
bracket by bisection (the "rtsafe" safeguard: Press et al., *Numerical Recipes*, 3rd ed., §9.4).

Why not ``scipy.optimize.brentq``: importing ``scipy.optimize`` costs ~0.5 s of process time
(it loads linprog, scipy.special, scipy.fft and scipy.spatial), a quarter of a small study's
budget, for the clamped-beam frequency equations, whose derivative is at hand anyway. With the
derivative, Newton converges quadratically near the root; the bracket [lo, hi] shrinks at every
evaluation, and a Newton step that would leave it (or a zero derivative) is replaced by the
bisection step, so the iteration never leaves the bracket and never diverges.
"""

from __future__ import annotations

import math
from collections.abc import Callable

#: Evaluations allowed: bisection alone takes ~60 halvings from an O(1)…O(10³) bracket to
#: round-off, Newton steps a handful near the root.
MAX_EVALUATIONS = 200


def safeguarded_newton(
    function: Callable[[float], tuple[float, float]],
    lo: float,
    hi: float,
    *,
    xtol: float,
    rtol: float,
) -> float:
    """The root of ``function`` in [lo, hi], where its value changes sign.

    Parameters
    ----------
    function : callable
        x ↦ (f(x), f′(x)), floats.
    lo, hi : float
        lo < hi with f(lo) and f(hi) of opposite signs (or one of them zero).
    xtol, rtol : float
        Stop when the last step is at most xtol + rtol |x| (as ``brentq``'s tolerances).

    Raises
    ------
    ValueError
        When f(lo) and f(hi) have the same sign, or the bracket is not finite and increasing.
    RuntimeError
        When :data:`MAX_EVALUATIONS` pass without meeting the tolerance.
    """
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"the bracket must be finite and increasing, got [{lo!r}, {hi!r}]")
    f_lo, _ = function(lo)
    if f_lo == 0.0:
        return lo
    f_hi, _ = function(hi)
    if f_hi == 0.0:
        return hi
    if (f_lo > 0) == (f_hi > 0):
        raise ValueError(f"f has the same sign at both ends of [{lo!r}, {hi!r}]: {f_lo!r}, {f_hi!r}")
    x = 0.5 * (lo + hi)
    for _ in range(MAX_EVALUATIONS):
        f, slope = function(x)
        if f == 0.0:
            return x
        if (f > 0) == (f_lo > 0):
            lo, f_lo = x, f
        else:
            hi = x
        step = f / slope if slope != 0.0 and math.isfinite(slope) else math.nan
        if abs(step) <= xtol + rtol * abs(x):
            return min(max(x - step, lo), hi)  # converged (a step this small may land on an end)
        following = x - step if lo < x - step < hi else 0.5 * (lo + hi)
        if abs(following - x) <= xtol + rtol * abs(following) or hi - lo <= xtol + rtol * abs(x):
            return following
        x = following
    raise RuntimeError(
        f"no root to the tolerance in {MAX_EVALUATIONS} evaluations; last bracket [{lo!r}, {hi!r}]"
    )
