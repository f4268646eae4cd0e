"""Clamped–mass shapes of a beam whose free length changes (translating links).

A prismatic joint slides a flexible beam through its hub: only the free length
l(t) outside the hub vibrates, with the tip load (mass M, rotary inertia J) at
its end. The ratios μ = M/(ρA l) and j = J/(ρA l³) change with l, and so do the
roots β_k(l) (β_k is the dimensionless β·l of the clamped–mass family).

Differentiating the frequency equation f(β, μ(l), j(l)) = 0 gives

    dβ/dl = −(f_μ dμ/dl + f_j dj/dl) / f_β = (μ f_μ + 3 j f_j) / (l f_β),

since dμ/dl = −μ/l and dj/dl = −3j/l (partials of the scaled function in
:func:`shapes.clamped_roots.clamped_mass_partials`, derived there and tested
against finite differences). Along a length history l(t) the roots can then be
followed three ways (:data:`TRACKERS`):

``"ode"``
    integrate dβ/dt = (dβ/dl)(β, l) · dl/dt from the roots at l(t₀);
``"root"``
    solve the frequency equation afresh at every output time;
``"table"``
    precompute roots and dβ/dl on a grid of lengths, then interpolate with
    cubic Hermite splines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.numerics import validation as check
from shapes.base import TipLoad, check_modes
from shapes.clamped import ClampedMass
from shapes.clamped_roots import clamped_mass_partials, clamped_mass_roots
from shapes.following import LengthFollowing

#: Default number of lengths in the ``"table"`` method.
TABLE_POINTS = 64
#: Default tolerances of the ``"ode"`` method.
ODE_RTOL = 1e-10
ODE_ATOL = 1e-12


def _positive(field: str, value: object) -> float:
    return check.positive(value, "", field)


def _non_negative(field: str, value: object) -> float:
    return check.nonnegative(value, "", field)


class BetaODE(ClampedMass):
    """Clamped–mass shapes of a beam of variable free length.

    Parameters
    ----------
    tip_mass : float
        M [kg] at the tip of the free part.
    tip_inertia : float
        J [kg m²] at the tip.
    mass_per_length : float
        ρA [kg/m].
    length : float
        Current free length l [m]; ``betas``, ``evaluate`` and ``integrals``
        describe the beam at this length (ratios μ(l), j(l)).
    """

    name = "beta-ode"
    tracks_length = True

    def __init__(self, tip_mass: float, tip_inertia: float, mass_per_length: float, length: float) -> None:
        self.tip_mass = _non_negative("tip_mass", tip_mass)
        self.tip_inertia = _non_negative("tip_inertia", tip_inertia)
        self.mass_per_length = _positive("mass_per_length", mass_per_length)
        self.length = _positive("length", length)
        super().__init__(*self.ratios(self.length))

    @classmethod
    def link_parameters(cls, parameters: dict[str, Any], load: TipLoad | None) -> dict[str, Any]:
        """The link's tip load and reference free length: the shapes are the clamped–mass shapes
        of that load (no parameters of their own)."""
        if parameters:
            raise ValueError(f"{cls.name!r} takes its tip load from the arm, got parameters {parameters}")
        if load is None:
            raise ValueError(f"{cls.name!r} needs the link's tip load")
        return {
            "tip_mass": load.mass,
            "tip_inertia": load.inertia,
            "mass_per_length": load.mass_per_length,
            "length": load.length,
        }

    def follower(
        self, load: TipLoad | None, modes: int, tracker: str, lengths: tuple[float, float]
    ) -> LengthFollowing | None:
        """Always follows the free length: with the ``"ode"`` tracker unless another is given."""
        return super().follower(load, modes, "ode" if tracker == "frozen" else tracker, lengths)

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "tip_mass": self.tip_mass,
            "tip_inertia": self.tip_inertia,
            "mass_per_length": self.mass_per_length,
            "length": self.length,
        }

    def ratios(self, length: float | np.ndarray) -> tuple:
        """(μ, j) = (M/(ρA l), J/(ρA l³)) at free length ``length``."""
        length = np.asarray(length, dtype=float)
        mu = self.tip_mass / (self.mass_per_length * length)
        jr = self.tip_inertia / (self.mass_per_length * length**3)
        if mu.ndim == 0:
            return float(mu), float(jr)
        return mu, jr

    def at_length(self, length: float) -> BetaODE:
        """The same beam at another free length."""
        return BetaODE(self.tip_mass, self.tip_inertia, self.mass_per_length, length)

    def dbeta_dlength(self, n: int, length: float | None = None, betas=None) -> np.ndarray:
        """dβ_k/dl [1/m] at free length ``length`` (default: the current one).

        ``betas`` (shape (n,)) evaluates the implicit derivative at given β
        instead of at the roots (used by the ``"ode"`` tracker).
        """
        n = check_modes(n)
        length = self.length if length is None else _positive("length", length)
        mu, jr = self.ratios(length)
        if betas is None:
            betas = clamped_mass_roots(n, mu, jr)
        _, f_beta, f_mu, f_j = clamped_mass_partials(betas, mu, jr)
        return (mu * f_mu + 3.0 * jr * f_j) / (length * f_beta)

    def track(
        self,
        time_points: np.ndarray,
        length: Callable[[float], float],
        n: int,
        method: str = "ode",
        length_rate: Callable[[float], float] | None = None,
        *,
        table_points: int = TABLE_POINTS,
        rtol: float = ODE_RTOL,
        atol: float = ODE_ATOL,
    ) -> BetaHistory:
        """Follow the roots β_k(t) along a length history l(t).

        Parameters
        ----------
        time_points : array_like, shape (m,)
            Strictly increasing output times [s].
        length : callable
            l(t) [m], the free length; must stay > 0.
        n : int
            Number of modes.
        method : {"ode", "root", "table"}
            See the module docstring.
        length_rate : callable, optional
            dl/dt [m/s]; required by ``"ode"``.
        table_points : int
            Grid size of the ``"table"`` method.
        rtol, atol : float
            Tolerances of the ``"ode"`` method.

        Returns
        -------
        BetaHistory
        """
        if method not in TRACKERS:
            raise ValueError(f"method must be one of {sorted(TRACKERS)}, got {method!r}")
        n = check_modes(n)
        t = np.asarray(time_points, dtype=float)
        if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
            raise ValueError("time_points must be a non-empty 1-D array of finite times")
        if np.any(np.diff(t) <= 0):
            raise ValueError("time_points must be strictly increasing")
        lengths = np.array([float(length(ti)) for ti in t])
        bad = ~(np.isfinite(lengths) & (lengths > 0))
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"length(t) must be finite and > 0, got {lengths[k]:g} at t={t[k]:g}")
        if method == "ode" and length_rate is None:
            raise ValueError("method 'ode' needs length_rate, the derivative dl/dt")
        start = time.perf_counter()
        betas, evaluations = TRACKERS[method](
            self, t, lengths, length, length_rate, n, table_points, rtol, atol
        )
        wall = time.perf_counter() - start
        mu, jr = self.ratios(lengths)
        error = np.empty_like(betas)
        for i in range(t.size):
            f, f_beta, _, _ = clamped_mass_partials(betas[:, i], mu[i], jr[i])
            error[:, i] = np.abs(f / f_beta)
        return BetaHistory(method, t, lengths, betas, error, evaluations, wall)


@dataclass(frozen=True)
class BetaHistory:
    """Roots β_k(t) along a length history, and what they cost.

    Attributes
    ----------
    method : str
    time : ndarray, shape (m,)
    length : ndarray, shape (m,)
    betas : ndarray, shape (n, m)
    root_error : ndarray, shape (n, m)
        |f̃ / f̃_β| at the returned β: a first-order estimate of |β − β_exact|.
    evaluations : int
        Root solves (``"root"``, ``"table"``) or right-hand-side evaluations (``"ode"``).
    wall_time : float
        Seconds spent following the roots.
    """

    method: str
    time: np.ndarray
    length: np.ndarray
    betas: np.ndarray
    root_error: np.ndarray
    evaluations: int
    wall_time: float


def _track_root(family, t, lengths, length, length_rate, n, table_points, rtol, atol):
    mu, jr = family.ratios(lengths)
    betas = np.column_stack([clamped_mass_roots(n, m, j) for m, j in zip(mu, jr, strict=True)])
    return betas, int(t.size)


def _track_ode(family, t, lengths, length, length_rate, n, table_points, rtol, atol):
    def rhs(time_now: float, beta: np.ndarray) -> np.ndarray:
        l_now = float(length(time_now))
        return family.dbeta_dlength(n, l_now, betas=beta) * float(length_rate(time_now))

    mu0, j0 = family.ratios(lengths[0])
    beta0 = clamped_mass_roots(n, mu0, j0)
    if t.size == 1:
        return beta0[:, None], 0
    from scipy.integrate import solve_ivp  # on use: the shapes registry loads with every config

    solution = solve_ivp(rhs, (t[0], t[-1]), beta0, method="DOP853", t_eval=t, rtol=rtol, atol=atol)
    if not solution.success:
        raise RuntimeError(f"beta-ode integration failed at t={solution.t[-1]}: {solution.message}")
    return solution.y, int(solution.nfev)


def _track_table(family, t, lengths, length, length_rate, n, table_points, rtol, atol):
    if table_points < 2:
        raise ValueError(f"table_points must be >= 2, got {table_points}")
    lo, hi = float(lengths.min()), float(lengths.max())
    if hi == lo:
        mu, jr = family.ratios(lo)
        return np.repeat(clamped_mass_roots(n, mu, jr)[:, None], t.size, axis=1), 1
    grid = np.linspace(lo, hi, table_points)
    roots = np.empty((n, table_points))
    slopes = np.empty((n, table_points))
    for i, l_i in enumerate(grid):
        mu, jr = family.ratios(l_i)
        roots[:, i] = clamped_mass_roots(n, mu, jr)
        slopes[:, i] = family.dbeta_dlength(n, l_i, betas=roots[:, i])
    from scipy.interpolate import CubicHermiteSpline

    spline = CubicHermiteSpline(grid, roots, slopes, axis=1)
    return spline(lengths), table_points


#: Root-tracking methods by name.
TRACKERS = {"ode": _track_ode, "root": _track_root, "table": _track_table}
