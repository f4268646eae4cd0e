"""Clamped–mass shapes that follow the free length of a translating link, with l-derivatives.

A prismatic joint slides a flexible beam through its hub; the free part of
length l carries the tip load (mass M, rotary inertia J). Its assumed modes
are the clamped–mass eigenfunctions of the *current* length,

    ψ_k(η; l),  η = s/l ∈ [0, 1],  ratios μ(l) = M/(ρA l),  j(l) = J/(ρA l³),

normalized in the tip-mass inner product ∫ψψ + μψ(1)ψ(1) + jψ'(1)ψ'(1) = δ
with a positive tip deflection (:mod:`shapes.clamped_functions`), and roots β_k(l) of
the clamped–mass frequency equation (:mod:`shapes.clamped_roots`). At fixed s
the deflection shape changes with l both through η = s/l and through
(β, μ, j), so the velocity field of l̇ has the shape

    g_k(η; l) = −η ψ_k'(η) + l ∂ψ_k/∂l|_η          (frozen shapes: g = −ηψ'),

and the kinetic energy needs the unit-length integrals of ψ and g *as
functions of l*, with their l-derivatives (for the Christoffel symbols and
their Jacobians). :meth:`LengthFollowing.taylor` returns them to third order.

Roots along l (:data:`TRACKERS`)
--------------------------------
``"root"``
    exact roots at every length: Newton continuation of f̃(β; μ(l), j(l)) = 0
    from the nearest length already solved within ±25 % (predictor
    β + (dβ/dl) Δl), each result *verified* by one Wittrick–Williams count
    (n distinct converged positive roots below a point where the count is n
    are exactly the first n roots); after a larger jump, or if Newton or the
    check fails, :func:`shapes.clamped_roots.clamped_mass_roots` afresh. Equal
    to ``clamped_mass_roots`` to 1e-12 relative (tested on random lengths and
    jumps; 3568 random lengths, μ ≤ 1000, j ≤ 100, up to 10 modes: no other
    branch, 2800 of them by continuation);
``"table"``
    cubic Hermite spline of the exact roots and dβ/dl on ``table_points``
    equally spaced lengths over ``lengths`` (as :mod:`shapes.beta_ode`'s
    ``"table"``). Its error is O(h⁴ max|β⁽⁴⁾|/384), largest where β changes
    fastest (short lengths); measured, max |β_table − β_exact| over 1001
    lengths: the RRP link 3 of docs/MODEL.md, Reference arms (M = 0.0828 kg, J = 1e-4 kg m²,
    ρA = 0.331 kg/m, l ∈ [0.3, 1.3] m, 4 or 8 modes) 4.7e-7 with 64 points,
    8.0e-6 with 32; M = 1 kg, J = 0.01 kg m², ρA = 0.5 kg/m,
    l ∈ [0.2, 2] m: 1.1e-6 with 64 points.
    :meth:`LengthFollowing.table_error` measures it for the table at hand;
``"ode"``
    the roots integrated with the state by a simulation
    (:attr:`LengthFollowing.beta_state`, set by the engine; dβ/dl from
    :meth:`LengthFollowing.dbeta_dlength`); exact roots while it is unset.

Derivatives with respect to l
-----------------------------
Along the path ψ(η; l) is the normalized clamped–mass shape with parameters
(β(l), μ(l), j(l)), β(l₀ + Δ) = β_tracker(l₀) + [β_exact(l₀ + Δ) − β_exact(l₀)]:
the tracker's value, the exact root's variation. Every step of the shape
construction (:func:`shapes.clamped_functions.clamped_coefficients`: coefficients,
closed-form Gram matrix, normalization; :func:`shapes.clamped_functions.clamped_evaluate`)
is analytic in (β, μ, j), its branch decisions (which root condition fixes
the mode, which coefficient scales it before the square root of the norm,
the sign) are those of the real point l₀, and μ, j and β_exact are analytic
in l away from l = 0 and from the complex lengths where two roots meet. So
every integral F(l) is analytic near the real axis, and its derivatives follow
from Cauchy's integral (Lyness & Moler, SIAM J. Numer. Anal. 4 (1967)
202–210): with K points l_m = l₀ + r ω^m, ω = e^{2πi/K},

    c_k = (1/K) Σ_m F(l_m) ω^{−mk} = F⁽ᵏ⁾(l₀) r^k/k! + F⁽ᵏ⁺ᴷ⁾(l₀) r^{k+K}/(k+K)! + …,

a discrete Fourier transform. β_exact(l_m) comes from complex Newton steps
on the scaled frequency function f̃ started at β₀ + β₀'Δ; ∂ψ/∂l at the
contour points is the spectral derivative of ψ on the circle,
Σ_k k c_k Δ^{k−1}/r^k, so the products in ∫ψg and ∫ggᵀ are formed pointwise
and transformed once. Since F(l̄) = conj F(l) only K/2 + 1 points are
evaluated; the values at l₀ itself are evaluated directly (order 0 free of
aliasing) and subtracted before the transforms (round-off relative to the
variation of F on the circle, not to F).

Accuracy: aliasing (truncation) is relative (r/R)^K, R the distance from l₀
to the nearest singularity: R ≤ l₀ (the pole of μ, j at l = 0), and a root
β_k(l) that changes fast (l dβ/dl ~ 2) has complex branch points nearer, down
to R ≈ 0.35 l₀ in the RRP link at 0.6 m. Round-off is ε k! (l₀/r)^k relative
to max|F| l₀^{−k}, one order more for the g-integrals (∂ψ/∂l is itself a
derivative). K = 24, r = 0.1 l₀ (and r ≤ 0.5/max|dβ/dl|, keeping |Im β| ≤ 1/2
on the circle): aliasing (0.1/0.35)^24 ≈ 1e-13 of c_k at worst and far less
typically, round-off 2e-15, 4e-14, 1.3e-12 at orders 1–3. (K = 16 at the same
radius left 1e-12 at order 1 in the RRP case; K = 16 at r = 0.05 l₀ costs 8×
the round-off at order 3.) As a safety net r is halved (up to
:data:`MAX_HALVINGS` times, counted in ``stats["halvings"]``) while the last
two c_k of ψ exceed :data:`TAIL_TOLERANCE` of ψ, and a RuntimeWarning says so
if that does not help.

Measured against a 50-digit reference (the same construction in mpmath,
K = 48, r = 0.05 l₀) for 6 arms (RRP link at 0.6 and 1.3 m with 2, 4 and 6
modes; μ ≈ 41 with j ≈ 1.5; M = 1 kg, J = 0.01 kg m²; J alone), the error
of d^k F/dl^k relative to the size of F, max_k |F⁽ᵏ⁾| l^k: orders 0, 1, 2, 3:
3e-15, 2e-15, 1.3e-13, 4.3e-12 for ψ-integrals (``mass`` … ``tip_slope``) and
2e-15, 7e-14, 3e-12, 4.4e-11 for the g-integrals (``rate_*``); the largest
errors are those of one mode with μ ≈ 41, whose g-integrals are small beside ψ.

Cost: one :meth:`LengthFollowing.taylor` for 2 modes takes ≈ 0.5 ms (0.7 ms
with the root continuation at a new length), 4 modes ≈ 0.85 ms (1.1 ms):
≈ 4.2 million instructions for 2 modes, almost all numpy call overhead on
small arrays (the contour, modes and quadrature points are vectorized). Inside
``lengths``, when given, :meth:`LengthFollowing.taylor` reads instead Chebyshev series in l
fitted once to this evaluation (:mod:`shapes.following_series`, ≈ 50 µs; within 1e-12,
1e-12, 2e-11, 2e-10 of it at orders 0–3, docs/TRANSLATING.md).

Quadrature: composite Gauss–Legendre (:func:`core.numerics.quadrature.composite_gauss`),
panels from the largest β as in :func:`amm.model.translating_basis` but
fewer: :data:`QUADRATURE_POINTS` = 12 points on each of ⌈(β_max + 1/2)/π⌉ +
:data:`EXTRA_PANELS` equal panels (the 1/2 covers Re β on the contour): exact
to round-off (≤ 1e-14 of the largest entry) for products of up to 30 of the
shapes, their η-derivatives and weights 1, η, η² (tested against four times the
panels of :func:`core.numerics.quadrature.gauss_rule` with 16 points each; 10 points
per panel still are).
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import numpy as np

from core.numerics import validation as check
from core.numerics.quadrature import panel_rule
from shapes.base import check_eta
from shapes.clamped_functions import clamped_coefficients, clamped_evaluate
from shapes.clamped_roots import clamped_mass_count, clamped_mass_partials, clamped_mass_roots, sech_tanh
from shapes.following_series import LengthSeries

#: Root trackers (see the module docstring).
TRACKERS = ("root", "table", "ode")
#: Highest l-derivative returned by :meth:`LengthFollowing.taylor`.
MAX_ORDER = 3
#: Points on the Cauchy contour.
CONTOUR_POINTS = 24
#: Contour radius as a fraction of l₀ …
RADIUS_FRACTION = 0.1
#: … and at most this over max |dβ/dl| (keeps |Im β| ≤ 1/2 on the contour).
RADIUS_BETA = 0.5
#: Halvings of the radius allowed when the Taylor coefficients decay too slowly.
MAX_HALVINGS = 4
#: Largest of the last two Taylor coefficients |c_{K−2}|, |c_{K−1}| of each shape
#: (at any η) relative to its largest one: a bound on the aliasing c_{k+K} of
#: the coefficients used (they keep decaying), else the radius is halved.
TAIL_TOLERANCE = 1e-12
#: Gauss points per panel, and panels beyond one per π/β_max, in the quadrature.
QUADRATURE_POINTS = 12
EXTRA_PANELS = 0
#: Newton on f̃: relative error accepted (estimated, see ``_newton``), and the iteration limit.
NEWTON_RTOL = 4 * np.finfo(float).eps
NEWTON_ITERATIONS = 12
#: Continuation is tried from a solved length within this relative distance; and
#: d²β/dl² for the contour's predictor is estimated from one within this.
CONTINUATION_STEP = 0.25
CURVATURE_STEP = 0.02
#: Lengths remembered for continuation, and taylor() results cached.
ROOT_CACHE = 16
TAYLOR_CACHE = 8

_KEYS = (
    "mass",
    "first",
    "moment",
    "stiffness",
    "tip_value",
    "tip_slope",
    "rate_first",
    "rate_second",
    "rate_cross",
    "rate_mass",
)


def quadrature_rule(max_beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss rule on [0, 1] for the integrals of :meth:`LengthFollowing.taylor`."""
    return panel_rule(math.ceil(max(float(max_beta), 0.0) / math.pi) + EXTRA_PANELS, QUADRATURE_POINTS)


@lru_cache(maxsize=8)
def _circle(K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Cauchy-contour transforms for K points, acting on the upper half circle.

    With u_m = F(l + r ω^m) for m = 0 … K/2 (the lower half is conj u_{K−m}):

    * Taylor coefficients c_k = F^(k) r^k / k! + aliasing, k = 0 … K−1:
      ``c = P @ u + Q @ conj(u)``;
    * ∂F/∂l at the same points, Σ_k k c_k Δ^{k−1}/r^k with Δ = r ω^m, times r:
      ``r ∂F/∂l = V @ (k c)``, V = ω^{m(k−1)} (the coefficients first: applying
      one precomputed product V·P instead loses the exact annihilation of
      constants to rounding of its large entries).

    Returns
    -------
    unit : ndarray (K,)
        ω^m.
    P, Q : ndarray (K, K/2 + 1)
    V : ndarray (K/2 + 1, K)
        ω^{m(k−1)} · k.
    """
    half = K // 2 + 1
    m = np.arange(K)
    unit = np.exp(2j * np.pi * m / K)
    dft = np.exp(-2j * np.pi * np.outer(m, m) / K) / K  # c = dft @ (full circle)
    P = dft[:, :half].copy()
    Q = np.zeros((K, half), dtype=complex)
    Q[:, 1 : K - half + 1] = dft[:, K - 1 : half - 1 : -1]  # column m' ← point K − m'
    V = m[None, :] * np.exp(2j * np.pi * np.outer(m[:half], m - 1) / K)
    for array in (unit, P, Q, V):
        array.setflags(write=False)
    return unit, P, Q, V


def _frequency_terms(beta: np.ndarray, mu: Any, jr: Any) -> tuple[np.ndarray, np.ndarray]:
    """f̃ and f̃_β of :func:`shapes.clamped_roots.clamped_mass_partials`, for Newton only.

    The same formulas with their common factors shared (u = s − Tc, v = s + Tc,
    w = S − c) and without f̃_μ, f̃_j: about half the work; real or complex
    (sech and tanh from e^{−2β} there, as in ``clamped_mass_partials``).
    """
    S, T = sech_tanh(beta, np.iscomplexobj(beta) or np.iscomplexobj(mu) or np.iscomplexobj(jr))
    c, s = np.cos(beta), np.sin(beta)
    Tc, Ts, ST = T * c, T * s, S * T
    u, v, w = s - Tc, s + Tc, S - c
    b2 = beta * beta
    b3 = b2 * beta
    mu_j = mu * jr
    f = (S + c) - mu * beta * u - jr * b3 * v + mu_j * (b3 * beta) * w
    f_beta = (
        -(ST + s)
        - mu * (u + beta * T * v)
        - jr * (3.0 * b2 * v + b3 * ((1.0 + S * S) * c - Ts))
        + mu_j * b3 * (4.0 * w + beta * (s - ST))
    )
    return f, f_beta


def _newton(beta: np.ndarray, mu: Any, jr: Any) -> tuple[np.ndarray, bool]:
    """Newton on the scaled frequency function f̃(β; μ, j) (real or complex), elementwise.

    Converged when the error left after the last step, estimated from quadratic
    convergence as |δ_k|³/|δ_{k−1}|² (the next step), is below 4ε|β|, or the
    step itself is.
    """
    previous = None
    for _ in range(NEWTON_ITERATIONS):
        f, f_beta = _frequency_terms(beta, mu, jr)
        step = f / f_beta
        beta = beta - step
        size = np.abs(step)
        if previous is None:
            left = size
        else:  # the next step is ≈ |δ_k| (|δ_k|/|δ_{k−1}|)², for a ratio below 1
            ratio = np.minimum(size / np.maximum(previous, 1e-300), 1.0)
            left = size * ratio * ratio
        worst = float((left / np.abs(beta)).max())
        if worst <= NEWTON_RTOL:
            return beta, True
        if not math.isfinite(worst):
            return beta, False
        previous = size
    return beta, False


def _hermite(x: np.ndarray, y: np.ndarray, slope: np.ndarray, at: float) -> np.ndarray:
    """Cubic Hermite interpolation of columns ``y`` (n, p) with slopes on the grid ``x`` (p,)."""
    i = int(np.clip(np.searchsorted(x, at) - 1, 0, x.size - 2))
    h = x[i + 1] - x[i]
    t = (at - x[i]) / h
    h00 = (1 + 2 * t) * (1 - t) ** 2
    h10 = t * (1 - t) ** 2
    h01 = t * t * (3 - 2 * t)
    h11 = t * t * (t - 1)
    return h00 * y[:, i] + h10 * h * slope[:, i] + h01 * y[:, i + 1] + h11 * h * slope[:, i + 1]


class LengthFollowing:
    """Clamped–mass shapes of a translating link as functions of its free length.

    Parameters
    ----------
    tip_mass : float
        M [kg] ≥ 0 at the tip of the free part.
    tip_inertia : float
        J [kg m²] ≥ 0 at the tip.
    mass_per_length : float
        ρA [kg/m] > 0.
    modes : int
        Number of modes n ≥ 1.
    tracker : {"root", "table", "ode"}
        How the roots follow l (module docstring).
    lengths : (float, float), optional
        (l_min, l_max), 0 < l_min < l_max [m]; required by ``"table"``.
    table_points : int
        Lengths in the ``"table"`` tracker (≥ 4).
    series : bool
        With ``lengths`` given: evaluate :meth:`taylor` inside them from Chebyshev series in l
        fitted once to the direct evaluation (:mod:`shapes.following_series`, shared by every
        instance with the same arguments in the process); False: always directly.

    Attributes
    ----------
    beta_state : ndarray, shape (n,), or None
        For ``"ode"``: the roots integrated with the state by the engine; None
        → exact roots. Ignored by the other trackers.
    stats : dict
        Counts of root solves by continuation (``"continued"``) and afresh
        (``"solved"``), of contours evaluated and of radius halvings.

    Methods
    -------
    ``ratios(l)``, ``exact_roots(l)``, ``roots(l)`` (the tracker's),
    ``dbeta_dlength(l, beta)``, ``evaluate(eta, l)`` → (ψ, ψ'),
    ``length_derivative(eta, l)`` → ∂ψ/∂l, ``taylor(l, order)`` → the integrals
    and their l-derivatives, ``table_error()``.

    Notes
    -----
    All returned quantities are for the unit-length beam on η ∈ [0, 1]; the
    engine scales them with ρA, EI and powers of l. ∫ψ''ψ''ᵀ = diag(β⁴)
    exactly when β are exact roots (integrate by parts twice; the tip terms
    are those of the inner product).

    The sign convention is that of :class:`shapes.ClampedMass`, a positive tip
    deflection. A mode whose tip deflection passes through zero as l changes
    flips sign at that length (e.g. mode 5 at j ≈ 5.04e-4 with μ = 0, found by
    scanning j): ψ(l) jumps there, and the derivatives of :meth:`taylor` are
    those of the branch taken at l.
    """

    def __init__(
        self,
        tip_mass: float,
        tip_inertia: float,
        mass_per_length: float,
        modes: int,
        tracker: str = "root",
        lengths: tuple[float, float] | None = None,
        table_points: int = 64,
        series: bool = True,
    ) -> None:
        self.tip_mass = check.nonnegative(tip_mass, "", "tip_mass")
        self.tip_inertia = check.nonnegative(tip_inertia, "", "tip_inertia")
        self.mass_per_length = check.positive(mass_per_length, "", "mass_per_length")
        self.modes = check.integer(modes, "", "modes", minimum=1)
        self.tracker = check.one_of(tracker, TRACKERS, "", "tracker")
        self.table_points = check.integer(table_points, "", "table_points", minimum=4)
        if not isinstance(series, bool):
            raise ValueError(f"series must be True or False, got {series!r}")
        self.series = series
        if lengths is None:
            if tracker == "table":
                raise ValueError("tracker 'table' needs lengths=(l_min, l_max), the range it tabulates")
            self.lengths = None
        else:
            items = check.sequence_items(lengths)
            if items is None or len(items) != 2:
                raise ValueError(f"lengths must be a pair (l_min, l_max), got {lengths!r}")
            lo = check.positive(items[0], "", "lengths[0]")
            hi = check.positive(items[1], "", "lengths[1]")
            if not lo < hi:
                raise ValueError(f"lengths must satisfy l_min < l_max, got {lengths!r}")
            self.lengths = (lo, hi)
        self._beta_state: np.ndarray | None = None
        self._solved: OrderedDict[float, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._taylor: OrderedDict[tuple[float, bytes], dict[str, np.ndarray]] = OrderedDict()
        self._last_series: tuple[Any, dict[str, np.ndarray] | None, dict] = (None, None, {})
        self._last_taylor: tuple[float, int, Any, dict[str, np.ndarray]] | None = None
        self._table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: Counters: root solves by continuation and afresh (Wittrick–Williams), contours
        #: evaluated, and halvings of their radius.
        self.stats = {"continued": 0, "solved": 0, "contours": 0, "halvings": 0, "series": 0}

    def __repr__(self) -> str:
        return (
            f"LengthFollowing(tip_mass={self.tip_mass!r}, tip_inertia={self.tip_inertia!r}, "
            f"mass_per_length={self.mass_per_length!r}, modes={self.modes!r}, tracker={self.tracker!r}, "
            f"lengths={self.lengths!r}, table_points={self.table_points!r}, series={self.series!r})"
        )

    # -- state ---------------------------------------------------------------
    @property
    def beta_state(self) -> np.ndarray | None:
        """Roots integrated with the state (tracker ``"ode"``), or None."""
        return self._beta_state

    @beta_state.setter
    def beta_state(self, value: Any) -> None:
        if value is None:
            self._beta_state = None
            return
        beta = np.array(value, dtype=float)
        if beta.shape != (self.modes,) or not np.all(np.isfinite(beta)) or not np.all(beta > 0):
            raise ValueError(
                f"beta_state must be {self.modes} finite positive roots, got shape {beta.shape}: {value!r}"
            )
        beta.setflags(write=False)
        self._beta_state = beta

    # -- roots ---------------------------------------------------------------
    def _length(self, l: Any) -> float:
        return check.positive(l, "", "length")

    def ratios(self, l: Any) -> tuple[Any, Any]:
        """(μ, j) = (M/(ρA l), J/(ρA l³)) at free length ``l`` (a float, array or complex)."""
        l = np.asarray(l)
        mu = self.tip_mass / (self.mass_per_length * l)
        jr = self.tip_inertia / (self.mass_per_length * l**3)
        if mu.ndim == 0:
            return mu.item(), jr.item()
        return mu, jr

    def dbeta_dlength(self, l: float, beta: Any) -> np.ndarray:
        """dβ_k/dl [1/m] at free length ``l`` and given roots β (shape (n,)).

        Implicit function theorem on f̃(β; μ(l), j(l)) = 0 (as
        :meth:`shapes.BetaODE.dbeta_dlength`): dβ/dl = (μ f̃_μ + 3 j f̃_j)/(l f̃_β).
        """
        l = self._length(l)
        beta = np.asarray(beta, dtype=float)
        return self._slope(l, beta)

    def _slope(self, l: Any, beta: np.ndarray) -> np.ndarray:
        mu, jr = self.ratios(l)
        _, f_beta, f_mu, f_j = clamped_mass_partials(beta, mu, jr)
        return (mu * f_mu + 3.0 * jr * f_j) / (l * f_beta)

    def exact_roots(self, l: float) -> np.ndarray:
        """The first n roots at free length ``l``, exact to round-off, shape (n,).

        Newton continuation from the nearest length solved before (within
        ±:data:`CONTINUATION_STEP` relative), verified by one Wittrick–Williams
        count; otherwise (or if Newton or the check fails)
        :func:`shapes.clamped_roots.clamped_mass_roots`. Cached per length.
        """
        return self._exact(self._length(l))[0].copy()

    def _exact(self, l: float) -> tuple[np.ndarray, np.ndarray]:
        """(roots, dβ/dl) at a validated length, cached."""
        if l in self._solved:
            self._solved.move_to_end(l)
            return self._solved[l]
        mu, jr = self.ratios(l)
        roots = None
        if self._solved:
            near = min(self._solved, key=lambda x: abs(x - l))
            if abs(near - l) <= CONTINUATION_STEP * near:
                previous, slope = self._solved[near]
                guess, converged = _newton(previous + slope * (l - near), mu, jr)
                if converged and self._verified(guess, mu, jr):
                    roots = guess
                    self.stats["continued"] += 1
        if roots is None:
            roots = clamped_mass_roots(self.modes, mu, jr)
            self.stats["solved"] += 1
        roots.setflags(write=False)
        slope = self._slope(l, roots)
        slope.setflags(write=False)
        self._solved[l] = (roots, slope)
        if len(self._solved) > ROOT_CACHE:
            self._solved.popitem(last=False)
        return roots, slope

    def _curvature(self, l: float, slope: np.ndarray) -> np.ndarray | None:
        """d²β/dl² from the slopes at l and at the nearest other solved length within 2 %.

        Only a predictor for the Newton steps on the contour (its error, of the
        order of the third derivative times the distance, is harmless); None
        when no such length is cached.
        """
        nearest, distance = None, CURVATURE_STEP * l
        for other in self._solved:
            if 0 < abs(other - l) <= distance:
                nearest, distance = other, abs(other - l)
        if nearest is None:
            return None
        return (slope - self._solved[nearest][1]) / (l - nearest)

    def _verified(self, roots: np.ndarray, mu: float, jr: float) -> bool:
        """True if ``roots`` are exactly the first n roots.

        They are distinct converged positive roots; if the count of roots below
        a point just above the largest is n, there are no others below it.
        """
        if not (np.all(np.isfinite(roots)) and roots[0] > 0):
            return False
        if roots.size > 1 and not np.all(np.diff(roots) > 1e-10 * roots[1:]):
            return False
        top = float(roots[-1]) * (1.0 + 1e-6)
        return clamped_mass_count(top, mu, jr) == roots.size

    def roots(self, l: float) -> np.ndarray:
        """The tracker's roots at free length ``l``, shape (n,).

        ``"root"``: :meth:`exact_roots`; ``"table"``: the Hermite spline
        (error in the module docstring; ``l`` must lie in ``lengths``);
        ``"ode"``: :attr:`beta_state` if set, else :meth:`exact_roots`.
        """
        return self._roots(self._length(l)).copy()

    def _roots(self, l: float) -> np.ndarray:
        if self.tracker == "table":
            lo, hi = self.lengths  # type: ignore[misc]
            if not lo * (1 - 1e-12) <= l <= hi * (1 + 1e-12):
                raise ValueError(f"length {l!r} lies outside the tabulated lengths {self.lengths!r}")
            grid, values, slopes = self._tabulate()
            return _hermite(grid, values, slopes, min(max(l, lo), hi))
        if self.tracker == "ode" and self._beta_state is not None:
            return self._beta_state
        return self._exact(l)[0]

    def _tabulate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._table is None:
            grid = np.linspace(*self.lengths, self.table_points)  # type: ignore[misc]
            pairs = [self._exact(float(x)) for x in grid]
            values = np.column_stack([p[0] for p in pairs])
            slopes = np.column_stack([p[1] for p in pairs])
            self._table = (grid, values, slopes)
        return self._table

    def table_error(self) -> float:
        """Largest |β_table − β_exact| at the midpoints of the table's intervals (tracker ``"table"``)."""
        if self.tracker != "table":
            raise ValueError(f"table_error needs tracker 'table', this one is {self.tracker!r}")
        grid, values, slopes = self._tabulate()
        mids = 0.5 * (grid[1:] + grid[:-1])
        return max(
            float(np.max(np.abs(_hermite(grid, values, slopes, m) - self._exact(float(m))[0]))) for m in mids
        )

    # -- shapes --------------------------------------------------------------
    def evaluate(self, eta: Any, l: float) -> tuple[np.ndarray, np.ndarray]:
        """(ψ, dψ/dη) at points ``eta`` (m,) for free length ``l``, each shape (n, m).

        Uses the tracker's roots; normalized and signed as
        :class:`shapes.ClampedMass` (μ(l), j(l)).
        """
        l = self._length(l)
        points = check_eta(eta)
        beta = np.asarray(self._roots(l))
        mu, jr = self.ratios(l)
        coefficients, _ = clamped_coefficients(beta, mu, jr)
        value, slope = clamped_evaluate(points, beta, coefficients, (0, 1))
        return value, slope

    def length_derivative(self, eta: Any, l: float) -> np.ndarray:
        """∂ψ/∂l at fixed η [1/m], shape (n, m), along the path of the module docstring.

        The velocity shape of l̇ is then g = −η ψ' + l ∂ψ/∂l.
        """
        l = self._length(l)
        points = check_eta(eta)
        radius, _, taylor = self._expand(l, np.asarray(self._roots(l)), points, (0,))
        return taylor[1].real.reshape(self.modes, points.size) / radius

    def _expand(
        self, l: float, beta: np.ndarray, eta: np.ndarray, derivatives: tuple[int, ...]
    ) -> tuple[float, list[np.ndarray], np.ndarray]:
        """The shapes on the Cauchy contour around l, and the Taylor coefficients of ψ.

        Returns r; for each derivative order asked, d^m ψ/dη^m at the K/2 + 1
        contour points l + r ω^m, m = 0 … K/2, and (last row) at l itself, shape
        (K/2 + 2, n, len(eta)); and c_k, k = 0 … K−1, of ψ − ψ(l) (c_0 ≈ 0),
        shape (K, n·len(eta)). The radius is halved while the last two c_k have
        not decayed to :data:`TAIL_TOLERANCE` of the values (or the complex
        Newton steps fail).
        """
        slope = self._exact(l)[1]
        K = CONTOUR_POINTS
        half = K // 2 + 1
        _, P, Q, _ = _circle(K)
        radius = RADIUS_FRACTION * l
        biggest = float(np.max(np.abs(slope)))
        if biggest > 0:
            radius = min(radius, RADIUS_BETA / biggest)
        for attempt in range(MAX_HALVINGS + 1):
            last = attempt == MAX_HALVINGS
            values = self._contour(l, beta, eta, derivatives, radius)
            if values is None:
                if last:
                    raise RuntimeError(f"complex Newton continuation of the roots failed around l={l!r}")
            else:
                # Differences from the value at l: the same c_k for k ≥ 1, with round-off
                # relative to the variation over the circle rather than to the values.
                psi = values[0]
                upper = (psi[:half] - psi[half].real).reshape(half, -1)
                taylor = P @ upper + Q @ upper.conj()
                size = np.abs(psi[half]).max(axis=1) + np.abs(upper).reshape(half, *psi.shape[1:]).max(
                    axis=(0, 2)
                )
                tail = np.abs(taylor[K - 2 :]).reshape(2, *psi.shape[1:]).max(axis=(0, 2))
                decayed = bool(np.all(tail <= TAIL_TOLERANCE * size))
                if decayed or last:
                    break
            radius *= 0.5
            self.stats["halvings"] += 1
        if not decayed:
            warnings.warn(
                f"l-derivatives of the shapes at l={l!r} may be inaccurate: their Taylor coefficients "
                f"decay slowly even on the contour radius {radius:g} (two roots nearly meet?)",
                RuntimeWarning,
                stacklevel=3,
            )
        return radius, values, taylor

    def _contour(
        self, l: float, beta: np.ndarray, eta: np.ndarray, derivatives: tuple[int, ...], radius: float
    ) -> list[np.ndarray] | None:
        """d^m ψ/dη^m at l + r ω^m, m = 0 … K/2, and (last row) at l; None if Newton fails."""
        exact, slope = self._exact(l)
        K = CONTOUR_POINTS
        unit = _circle(K)[0]
        delta = radius * unit[: K // 2 + 1]
        mu, jr = self.ratios(np.append(l + delta, l))
        guess = exact + slope * delta[:, None]
        curvature = self._curvature(l, slope)
        if curvature is not None:  # a second-order predictor saves a Newton step
            guess += 0.5 * curvature * (delta * delta)[:, None]
        moved, converged = _newton(guess, mu[:-1, None], jr[:-1, None])
        if not converged:
            return None
        # The contour points and (last row) l itself, whose branch decisions all rows take.
        betas = np.append(moved + (beta - exact), beta[None], axis=0)
        coefficients, _ = clamped_coefficients(betas, mu[:, None], jr[:, None], reference=-1)
        self.stats["contours"] += 1
        return clamped_evaluate(eta, betas, coefficients, derivatives)

    def taylor(self, l: float, order: int = MAX_ORDER) -> dict[str, np.ndarray]:
        """The unit-length integrals and their l-derivatives at free length ``l``.

        Parameters
        ----------
        l : float
            Free length [m].
        order : int
            Highest derivative, 0 … :data:`MAX_ORDER`.

        Returns
        -------
        dict of read-only ndarray, each shape (order + 1, *shape)
            ``out[key][k]`` = d^k/dl^k (at fixed η) of, with ψ' = dψ/dη and
            g = −ηψ' + l ∂ψ/∂l:

            ==============  ========  ==================
            key             shape     quantity
            ==============  ========  ==================
            ``mass``        (n, n)    ∫ψψᵀ
            ``first``       (n,)      ∫ψ
            ``moment``      (n,)      ∫ηψ
            ``stiffness``   (n, n)    ∫ψ''ψ''ᵀ
            ``tip_value``   (n,)      ψ(1)
            ``tip_slope``   (n,)      ψ'(1)
            ``rate_first``  (n,)      ∫g
            ``rate_second`` (n,)      ∫ηg
            ``rate_cross``  (n, n)    [i, j] = ∫ψ_i g_j
            ``rate_mass``   (n, n)    ∫ggᵀ
            ==============  ========  ==================

            Integrals over η ∈ [0, 1], exact to round-off in η. Error of
            order k relative to max_k |F⁽ᵏ⁾| l^k (module docstring): ≲ 3e-15,
            2e-15, 1.3e-13, 4.3e-12 for k = 0 … 3, and 2e-15, 7e-14, 3e-12,
            4.4e-11 for ``rate_*``. With the ``"table"`` and ``"ode"`` trackers the
            values are those of the shapes on the tracker's β, the
            derivatives those of the exact roots' variation.

        Results are cached (the last :data:`TAYLOR_CACHE`) by l and the
        tracker's roots, so repeated calls at one state are free. Inside ``lengths`` (with
        ``series``) they are read from the fitted series instead (module docstring).
        """
        last = self._last_taylor  # one state asks many times: (l, order, roots, result)
        if isinstance(l, float) and last is not None and last[0] == l and last[1] == order:
            if last[2] is self._beta_state:  # the same roots (each state is a new array)
                return dict(last[3])
        l = self._length(l)
        order = check.integer(order, "", "order", minimum=0)
        if order > MAX_ORDER:
            raise ValueError(f"order must be 0 … {MAX_ORDER}, got {order}")
        fitted = self._from_series(l, order)
        if fitted is not None:
            self.stats["series"] += 1
            self._last_taylor = (l, order, self._beta_state, fitted)
            return dict(fitted)
        beta = np.asarray(self._roots(l))
        key = (l, beta.tobytes())
        if key in self._taylor:
            self._taylor.move_to_end(key)
            full = self._taylor[key]
        else:
            full = self._compute_taylor(l, beta)
            self._taylor[key] = full
            if len(self._taylor) > TAYLOR_CACHE:
                self._taylor.popitem(last=False)
        result = {name: value[: order + 1] for name, value in full.items()}
        self._last_taylor = (l, order, self._beta_state, result)
        return dict(result)

    def _from_series(self, l: float, order: int) -> dict[str, np.ndarray] | None:
        """:meth:`taylor` from the fitted series, or None (no series, outside ``lengths``, or
        roots of the tracker too far from the exact ones: :mod:`shapes.following_series`).
        The last state's result is kept, per order: one right-hand side asks several times."""
        if not self.series or self.lengths is None or not self.lengths[0] <= l <= self.lengths[1]:
            return None
        tracked = self._roots(l) if self.tracker == "table" else None
        if self.tracker == "ode":
            tracked = self._beta_state  # None: the exact roots
        key = (l, None if tracked is None else tracked.tobytes())
        if self._last_series[0] != key:
            fitted = _fitted_series(
                self.tip_mass, self.tip_inertia, self.mass_per_length, self.modes, self.lengths
            )
            self._last_series = (key, fitted(l, tracked), {})
        _, full, orders = self._last_series
        if full is None:
            return None
        if order not in orders:
            orders[order] = {name: value[: order + 1] for name, value in full.items()}
        return orders[order]

    def _compute_taylor(self, l: float, beta: np.ndarray) -> dict[str, np.ndarray]:
        K = CONTOUR_POINTS
        half = K // 2 + 1
        unit, P, Q, V = _circle(K)
        nodes, weights = quadrature_rule(float(np.max(beta)) + RADIUS_BETA)
        q = nodes.size
        eta = np.append(nodes, 1.0)  # the tip, for ψ(1) and ψ'(1)
        radius, (psi, slope, curvature), taylor = self._expand(l, beta, eta, (0, 1, 2))
        psi_q, slope_q, curv_q = psi[..., :q], slope[..., :q], curvature[..., :q]
        # l ∂ψ/∂l on the circle, Σ_k k c_k Δ^{k−1}/r^k (the spectral derivative), and c_1 l/r at l.
        taylor = taylor.reshape(K, self.modes, q + 1)[..., :q].reshape(K, -1)
        shape_rate = np.empty((half + 1, taylor.shape[1]), dtype=complex)
        np.matmul(V, taylor, out=shape_rate[:half])
        shape_rate[:half] *= (l / radius + unit[:half])[:, None]  # (l + Δ)/r
        shape_rate[half] = taylor[1] * (l / radius)
        g = shape_rate.reshape(psi_q.shape)
        g -= nodes * slope_q
        n = self.modes
        both = np.concatenate([psi_q, g], axis=1)  # (rows, 2n, q): ψ and g
        gram = (both * weights) @ both.transpose(0, 2, 1)  # ∫ψψᵀ, ∫ψgᵀ; ∫gψᵀ, ∫ggᵀ
        moments = both @ np.stack([weights, weights * nodes], axis=1)  # ∫·, ∫η·
        quantities = (
            gram[:, :n, :n],
            moments[:, :n, 0],
            moments[:, :n, 1],
            (curv_q * weights) @ curv_q.transpose(0, 2, 1),
            psi[..., q],
            slope[..., q],
            moments[:, n:, 0],
            moments[:, n:, 1],
            gram[:, :n, n:],
            gram[:, n:, n:],
        )
        stacked = np.concatenate([x.reshape(half + 1, -1) for x in quantities], axis=1)
        circle = stacked[:half] - stacked[half].real
        coefficients = (P[: MAX_ORDER + 1] @ circle + Q[: MAX_ORDER + 1] @ circle.conj()).real
        coefficients[0] = stacked[half].real  # the value at l itself, free of aliasing
        factors = np.array([math.factorial(m) / radius**m for m in range(MAX_ORDER + 1)])
        derivatives = coefficients * factors[:, None]
        out: dict[str, np.ndarray] = {}
        start = 0
        for name, x in zip(_KEYS, quantities, strict=True):
            shape = x.shape[1:]
            size = math.prod(shape)
            value = derivatives[:, start : start + size].reshape(MAX_ORDER + 1, *shape)
            start += size
            if name in ("mass", "stiffness", "rate_mass"):
                value = 0.5 * (value + value.transpose(0, 2, 1))
            value.setflags(write=False)
            out[name] = value
        return out


@lru_cache(maxsize=8)
def _fitted_series(
    tip_mass: float, tip_inertia: float, mass_per_length: float, modes: int, lengths: tuple[float, float]
) -> LengthSeries:
    """The Chebyshev series of :meth:`LengthFollowing.taylor` over ``lengths``, fitted once per
    process to the direct evaluation with exact roots."""
    direct = LengthFollowing(tip_mass, tip_inertia, mass_per_length, modes, series=False)
    shapes = {name: value.shape[1:] for name, value in direct.taylor(lengths[1]).items()}
    return LengthSeries(direct._compute_taylor, lambda l: direct._exact(l)[0], modes, lengths, shapes)
