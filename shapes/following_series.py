"""The integrals of length-following shapes as Chebyshev series in the free length.

:meth:`shapes.following.LengthFollowing.taylor` evaluates the unit-length integrals of the
clamped–mass shapes of free length l, and their l-derivatives to the third order, by
quadrature on a complex contour around l (≈ 1 ms). Along a simulation every right-hand side
asks at a new l, so the direct evaluation dominates the run. The integrals are analytic in l
on the real interval (their singularities: the pole of μ, j at l = 0 and the complex branch
points of β_k(l)), so over the link's range of free lengths ``lengths`` they are fitted once,
component by component, by an adaptive piecewise Chebyshev series
(:func:`core.numerics.chebyshev.fit`: the degree on each panel is the shortest whose
coefficient tail lies below the tolerance, a panel is bisected when none does) and read back
in ≈ 40 µs.

What is fitted, at every sample length, from the direct evaluation with exact roots:

* the derivatives of order k = 0 … 3 of every integral of ``taylor`` (each order sampled on its
  own: the contour's derivatives, not derivatives of the series);
* their partial derivatives with respect to each root β_j (central differences of the
  direct evaluation, step :data:`BETA_STEP` β_j), for the trackers whose roots are not the
  exact ones (``"table"``, ``"ode"``): with ε = β_tracker − β_exact(l) the values are
  F(l; β_exact) + Σ_j ε_j ∂F/∂β_j, the first-order Taylor polynomial in ε of the direct
  evaluation at β_tracker; used while max_j |ε_j|/β_j ≤ :data:`MAX_DEVIATION` (the
  remainder is second order, O(1e-12) relative), otherwise the caller evaluates directly;
* the exact roots β_k(l), for ε.

Tolerances, relative to the size of each integral max_j |F⁽ʲ⁾| l^j (as the contour's error
in :mod:`shapes.following`) divided by l^k: :data:`ORDER_TOLERANCE`, a little above the
round-off of the contour at that order (the tail of a series fitted to noisy samples stops
decaying at the noise); the ∂F/∂β_j components to that over MAX_DEVIATION β_j (their error
enters multiplied by ε), the roots to 1e-14 β.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.numerics.chebyshev import PiecewiseChebyshev, fit

#: Highest l-derivative fitted.
ORDER = 3
#: Tolerance of the series of order k = 0 … 3 relative to max_j |F⁽ʲ⁾| l^(j − k).
ORDER_TOLERANCE = (1e-13, 1e-12, 1e-11, 1e-10)
#: Largest relative deviation |β_tracker − β_exact|/β of the tracker's roots for which the
#: series (to first order in the deviation) is used.
MAX_DEVIATION = 1e-6
#: Relative step of the central differences in β_j.
BETA_STEP = 1e-4
#: Tolerance of the fitted roots, relative.
ROOT_TOLERANCE = 1e-14


class LengthSeries:
    """The fitted integrals of :meth:`shapes.following.LengthFollowing.taylor` over ``lengths``.

    Parameters
    ----------
    taylor : callable
        (l, β) ↦ dict name → ndarray (ORDER + 1, *shape): the direct evaluation at free length
        l with roots β (values at β, derivatives of the exact roots' variation).
    roots : callable
        l ↦ the exact roots β(l), shape (n,).
    modes : int
        n.
    lengths : (float, float)
        The free lengths [m] fitted.
    shapes : dict
        name → shape of each integral (without the order axis), in the order of ``taylor``.
    """

    def __init__(
        self,
        taylor: Callable[[float, np.ndarray], dict],
        roots: Callable[[float], np.ndarray],
        modes: int,
        lengths: tuple[float, float],
        shapes: dict[str, tuple[int, ...]],
    ) -> None:
        self.modes = modes
        self.lengths = lengths
        self.shapes = dict(shapes)
        sizes = [(ORDER + 1) * int(np.prod(s, dtype=int)) for s in self.shapes.values()]
        self._size = sum(sizes)  # components of one part (all integrals, all orders)
        self._bounds = np.cumsum([0, *sizes])
        self._taylor, self._roots = taylor, roots
        self.series: PiecewiseChebyshev = fit(self._sample, lengths, self._tolerance)

    # -- fitting --------------------------------------------------------------------------
    def _flatten(self, values: dict) -> np.ndarray:
        return np.concatenate([np.asarray(values[name]).ravel() for name in self.shapes])

    def _sample(self, l: float) -> np.ndarray:
        """[F, ∂F/∂β_1, …, ∂F/∂β_n, β, l] at free length l, F all integrals and orders."""
        beta = np.asarray(self._roots(l), dtype=float)
        parts = [self._flatten(self._taylor(l, beta))]
        for j in range(self.modes):
            step = np.zeros(self.modes)
            step[j] = BETA_STEP * beta[j]
            up = self._flatten(self._taylor(l, beta + step))
            down = self._flatten(self._taylor(l, beta - step))
            parts.append((up - down) / (2.0 * step[j]))
        return np.concatenate([*parts, beta, [l]])

    def _tolerance(self, samples: np.ndarray) -> np.ndarray:
        """Absolute tolerance of every component of the samples (m, P) of one panel."""
        n, size = self.modes, self._size
        lengths = samples[:, -1]
        beta = np.abs(samples[:, -1 - n : -1]).max(axis=0)
        powers = lengths[:, None] ** np.arange(ORDER + 1)  # (m, orders)
        longest = float(lengths.max())
        base = np.empty(size)
        for start, stop in zip(self._bounds[:-1], self._bounds[1:], strict=True):
            block = np.abs(samples[:, start:stop]).reshape(len(samples), ORDER + 1, -1).max(axis=2)
            scale = max(float((block * powers).max()), np.finfo(float).tiny)  # max_j |F^(j)| l^j
            orders = np.array(ORDER_TOLERANCE) * scale / longest ** np.arange(ORDER + 1)
            base[start:stop] = np.repeat(orders, (stop - start) // (ORDER + 1))
        derivative = [base / (MAX_DEVIATION * beta[j]) for j in range(n)]
        return np.concatenate([base, *derivative, ROOT_TOLERANCE * beta, [ROOT_TOLERANCE * longest]])

    # -- evaluation -----------------------------------------------------------------------
    def __call__(self, l: float, beta: np.ndarray | None = None) -> dict[str, np.ndarray] | None:
        """The integrals and their derivatives at free length ``l`` (as ``taylor``, all orders),
        with the roots ``beta`` (None: the exact ones); None outside the fitted lengths, on a
        panel the fit gave up, or if ``beta`` deviates from the exact roots by more than
        :data:`MAX_DEVIATION` relative."""
        values = self.series(l)
        if values is None:
            return None
        n, size = self.modes, self._size
        flat = values[:size]
        if beta is not None:
            deviation = np.asarray(beta, dtype=float) - values[(n + 1) * size : (n + 1) * size + n]
            if np.max(np.abs(deviation) / np.abs(beta)) > MAX_DEVIATION:
                return None
            flat = flat + deviation @ values[size : (n + 1) * size].reshape(n, size)
        out = {}
        for (name, shape), start, stop in zip(
            self.shapes.items(), self._bounds[:-1], self._bounds[1:], strict=True
        ):
            value = flat[start:stop].reshape(ORDER + 1, *shape)
            value.setflags(write=False)
            out[name] = value
        return out

    @property
    def samples(self) -> int:
        """Free lengths at which the direct evaluation was sampled."""
        return self.series.samples

    @property
    def degrees(self) -> tuple[int | None, ...]:
        """The degree of the series on each panel (None: left to the direct evaluation)."""
        return self.series.degrees
