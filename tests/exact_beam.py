"""An independent, geometrically exact reference for planar chains of flexible links (numpy/scipy only).

Nothing here comes from flexlink's engine: no import from core, amm, fem, shapes or studies. The
module gives the static equilibrium under gravity with the motors locked, and the small vibrations
about it, of a planar serial chain of inextensible Euler–Bernoulli beams ("elastica") carrying point
masses, to be compared with the stiffened models of flexlink.

Discretization: the Hencky bar chain
------------------------------------
Link j (length L, mass per length ρA, bending stiffness EI) is cut into N rigid bars of length
h = L/N. Each bar is a uniform slender rod: mass ρA·h at its centre and rotary inertia ρA·h³/12 about
it, so the inertia of the chain is exact for a piecewise-rigid shape. The coordinates are the
absolute angles φ of the bars from the +x axis, so the kinematics (positions, velocities) are exact
and no small-rotation approximation enters anywhere:

* consecutive bars of one link are joined by rotational springs of stiffness EI/h
  (energy ½·(EI/h)·(φ_{i+1} − φ_i)², the bending energy ∫ EI κ²/2 ds of the cell of length h
  around the joint with κ ≈ Δφ/h);
* the two ends of a link carry half cells: the root bar hangs on the hub (or on the rotor of the
  motor that drives the link) through a spring 2EI/h, and the last bar on the link's massless tip
  frame (the tangent at s = L) through another 2EI/h. With these half cells the bending energy is
  the trapezoidal rule of ∫ M²/(2EI) ds over the nodes s = 0, h, …, L, and the bars' angles are
  the tangent angles at the bar centres to O(h²), so the chain converges as O(h²) (with an
  even-power expansion h², h⁴, … that Richardson extrapolation uses; the tests fit the rates
  rather than assume them). A root bar rigidly clamped to the hub instead drops the s = 0 term of
  that rule: for a tip load P the tip deflection is then Σ_{k=1}^{N−1} P h (L − kh)²/EI =
  PL³/(3EI)·(1 − 3/(2N) + 1/(2N²)), only O(h);
* the motor of joint j+1 sits on the tip frame of link j: its stator is clamped to link j's tip
  tangent, its rotor to link j+1's root, at the locked relative angle θ_{j+1}. The tip frame has
  no inertia (point masses have none), so its angle is eliminated exactly: the last bar of link j
  and the first bar of link j+1 are joined by the two half-cell springs in series,
  1/k = h_j/(2EI_j) + h_{j+1}/(2EI_{j+1}), with rest angle θ_{j+1}. The first hub is fixed at the
  origin and turned to the absolute angle θ_1.

Energies (gravity g along −y)
-----------------------------
With e(φ) = (cos φ, sin φ) the node after bar a is r_a = Σ_{b≤a} h_b e(φ_b) and the centre of bar
a is r_{a−1} + h_a e(φ_a)/2. Let m_a = ρA·h_a be the mass of bar a, P_a the point mass at its
outer node, and D_a = Σ_{b>a} m_b + Σ_{b≥a} P_b the mass outboard of its outer node. Then

* V = ½ Σ k_c (φ_{c+} − φ_{c−} − α_c)² + g Σ_a h_a (m_a/2 + D_a) sin φ_a,
  whose Hessian is tridiagonal (springs) plus diagonal (gravity, −g h_a (m_a/2 + D_a) sin φ_a);
  being the exact second derivative in exact coordinates, it contains the geometric (prestress)
  stiffness of the axial loads of the equilibrium;
* T = ½ φ̇ᵀ M(φ) φ̇ with M_ab = h_a h_b cos(φ_a − φ_b) (m_c/2 + D_c), c = max(a, b), for a ≠ b,
  and M_aa = h_a² (m_a/3 + D_a) (m_a/4 translation of the centre + m_a/12 rotation).

The equilibrium with the motors locked is found by Newton's method on the analytic gradient and
Hessian (banded Cholesky, energy line search), converged to round-off; the locked small vibrations
solve K_T v = ω² M v at that equilibrium. ``extrapolate`` and ``chain_reference`` run the chain
for N = N₀, 2N₀, 4N₀, … bars per link and Richardson-extrapolate the tip position and the
frequencies to the continuous beam, with an error estimate.

``lumped_two_link_reference`` is the arm of flexlink's preset ``core.arm.presets.lumped_two_link``
(the lumped-mass two-link arm of docs/REFERENCES.md), data copied here, not imported.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

__all__ = [
    "BarChain",
    "ChainReference",
    "EquilibriumNotFound",
    "Extrapolated",
    "FlexibleLink",
    "chain_reference",
    "fitted_rates",
    "lumped_two_link_links",
    "lumped_two_link_reference",
    "richardson",
]

STANDARD_GRAVITY = 9.81


class EquilibriumNotFound(RuntimeError):
    """Newton's method did not converge (the arm may have no stable equilibrium near the start)."""


@dataclass(frozen=True)
class FlexibleLink:
    """A uniform, inextensible Euler–Bernoulli link of a planar chain.

    length [m], mass_per_length ρA [kg/m], EI [N·m²]; tip_mass [kg] is a point mass (no rotary
    inertia) at the link's tip: the next motor for an inner link, the payload for the last one.
    EI = 0 makes the link a chain of pin-jointed rods (a hanging chain, say); ρA = 0 a massless
    beam (the tip-loaded elastica; only its point masses then vibrate).
    """

    length: float
    mass_per_length: float
    EI: float
    tip_mass: float = 0.0


class BarChain:
    """The Hencky bar chain of a planar serial chain of flexible links (see the module docstring).

    links: the links from the base outwards. angles: the locked motor angles [rad], angles[0] the
    absolute angle of link 1's root tangent from +x, angles[j] the angle of link j+1's root tangent
    relative to link j's tip tangent. gravity: g [m/s²] along −y (0 for none, any scale for a
    sweep). bars: the number N of bars of every link (h_j = L_j/N).

    Arrays are over all bars, link 1 first; ``phi`` always denotes the absolute bar angles.
    """

    def __init__(
        self,
        links: Sequence[FlexibleLink],
        angles: Sequence[float],
        gravity: float = STANDARD_GRAVITY,
        bars: int = 64,
    ):
        if len(links) != len(angles) or not links:
            raise ValueError(f"{len(links)} links but {len(angles)} motor angles")
        if bars < 1:
            raise ValueError(f"bars must be positive, got {bars}")
        if any(link.EI < 0.0 or link.length <= 0.0 or link.mass_per_length < 0.0 for link in links):
            raise ValueError("every link needs a positive length and non-negative EI and ρA")
        self.links = tuple(links)
        self.angles = np.asarray(angles, dtype=float)
        self.gravity = float(gravity)
        self.bars = int(bars)
        N = self.bars
        self.n = N * len(links)
        self.h = np.repeat([link.length / N for link in links], N)
        self.mass = np.repeat([link.mass_per_length * link.length / N for link in links], N)
        point = np.zeros(self.n)
        point[N - 1 :: N] = [link.tip_mass for link in links]
        # D_a: the mass outboard of the outer node of bar a (bars beyond it, point masses at or beyond it)
        outboard = np.cumsum((self.mass + point)[::-1])[::-1] - self.mass
        self._lever_off = self.mass / 2 + outboard  # m_a/2 + D_a
        self._lever_diag = self.mass / 3 + outboard  # m_a/3 + D_a
        self._weight = self.h * self._lever_off  # V_gravity = g Σ weight_a sin φ_a
        # springs: spring c joins bar c-1 (the ground for c = 0) to bar c, rest angle α_c
        half = np.array([2.0 * link.EI / link.length * N for link in links])  # 2EI/h per link
        stiffness = np.repeat([link.EI / link.length * N for link in links], N)
        rest = np.zeros(self.n)
        stiffness[0] = half[0]
        rest[0] = self.angles[0]
        for j in range(1, len(links)):
            series = half[j - 1] + half[j]
            stiffness[j * N] = half[j - 1] * half[j] / series if series > 0.0 else 0.0
            rest[j * N] = self.angles[j]
        self.stiffness, self.rest = stiffness, rest
        self._tip_stiffness = half  # the spring between a link's last bar and its tip frame

    # --- geometry -------------------------------------------------------------------------------------------

    def rigid_angles(self) -> np.ndarray:
        """The bar angles of the undeformed chain at the motor angles (the start of Newton's method)."""
        return np.cumsum(self.rest)

    def nodes(self, phi: np.ndarray) -> np.ndarray:
        """The (n+1, 2) positions of the hub and the outer node of every bar [m]."""
        steps = self.h[:, None] * np.column_stack((np.cos(phi), np.sin(phi)))
        return np.vstack((np.zeros(2), np.cumsum(steps, axis=0)))

    def tip(self, phi: np.ndarray) -> np.ndarray:
        """The position (x, y) of the last link's tip [m]."""
        return np.array([self.h @ np.cos(phi), self.h @ np.sin(phi)])

    def link_tip_angles(self, phi: np.ndarray) -> np.ndarray:
        """The absolute tangent angle at the tip of every link [rad] (its eliminated tip frame)."""
        N = self.bars
        last = phi[N - 1 :: N].copy()
        moments = self.stiffness[N::N] * (phi[N::N] - phi[N - 1 : -1 : N] - self.rest[N::N])
        tip = self._tip_stiffness[:-1]
        last[:-1] += np.divide(moments, tip, out=np.zeros_like(moments), where=tip > 0.0)
        return last

    # --- energies -------------------------------------------------------------------------------------------

    def _spring_stretch(self, phi: np.ndarray) -> np.ndarray:
        return np.diff(phi, prepend=0.0) - self.rest

    def potential(self, phi: np.ndarray) -> float:
        """V(φ): spring energy plus gravity [J]."""
        d = self._spring_stretch(phi)
        return 0.5 * float(self.stiffness @ d**2) + self.gravity * float(self._weight @ np.sin(phi))

    def gradient(self, phi: np.ndarray) -> np.ndarray:
        """∂V/∂φ [N·m]."""
        moment = self.stiffness * self._spring_stretch(phi)
        return moment - np.append(moment[1:], 0.0) + self.gravity * self._weight * np.cos(phi)

    def hessian_bands(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The diagonal and the superdiagonal of ∂²V/∂φ² (tridiagonal)."""
        k = self.stiffness
        diagonal = k + np.append(k[1:], 0.0) - self.gravity * self._weight * np.sin(phi)
        return diagonal, -k[1:]

    def hessian(self, phi: np.ndarray) -> np.ndarray:
        """∂²V/∂φ², the tangent stiffness K_T (dense)."""
        diagonal, upper = self.hessian_bands(phi)
        return np.diag(diagonal) + np.diag(upper, 1) + np.diag(upper, -1)

    def mass_matrix(self, phi: np.ndarray) -> np.ndarray:
        """M(φ) of T = ½ φ̇ᵀ M φ̇ [kg·m²] (dense, O(n²))."""
        index = np.arange(self.n)
        lever = self._lever_off[np.maximum.outer(index, index)]
        c, s = np.cos(phi), np.sin(phi)
        M = np.outer(self.h, self.h) * (np.outer(c, c) + np.outer(s, s)) * lever
        M[index, index] = self.h**2 * self._lever_diag
        return M

    # --- analyses -------------------------------------------------------------------------------------------

    def _newton_step(self, phi: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        diagonal, upper = self.hessian_bands(phi)
        shift = 0.0
        scale = float(np.max(np.abs(diagonal)))
        while True:
            bands = np.vstack((np.append(0.0, upper), diagonal + shift))
            try:
                return -scipy.linalg.solveh_banded(bands, gradient)
            except np.linalg.LinAlgError:  # not positive definite away from the minimum: regularize
                shift = max(2.0 * shift, 1e-6 * scale, 1e-300)
                if shift > 1e6 * scale + 1.0:
                    raise EquilibriumNotFound("the Hessian cannot be made positive definite") from None

    def equilibrium(self, start: np.ndarray | None = None, max_iterations: int = 200) -> np.ndarray:
        """The static equilibrium with the motors locked: the bar angles φ [rad].

        Newton's method from ``start`` (default: the undeformed chain) with a backtracking line
        search on V, a positive-definite shift of the Hessian where it is not, and iterations until
        the step stops shrinking at round-off; the final residual is checked against the scale of
        the weights' moments (plus the round-off of the spring moments). A descent method from the
        undeformed chain finds the branch reached by loading it gradually, not a buckled one.
        Raises ``EquilibriumNotFound``.
        """
        phi = self.rigid_angles() if start is None else np.array(start, dtype=float)
        moment_scale = abs(self.gravity) * float(np.sum(np.abs(self._weight))) + 1e-300
        gradient = self.gradient(phi)
        previous = math.inf
        for _ in range(max_iterations):
            step = self._newton_step(phi, gradient)
            size = float(np.max(np.abs(step)))
            if size < 1e-14 * (1.0 + float(np.max(np.abs(phi)))) or (size < 1e-9 and size >= 0.5 * previous):
                phi = phi + step
                gradient = self.gradient(phi)
                break  # the Newton steps have stopped shrinking quadratically: round-off is reached
            energy, slope, t = self.potential(phi), float(gradient @ step), 1.0
            while True:  # backtracking: the energy decreases, or at least the residual
                trial = phi + t * step
                trial_gradient = self.gradient(trial)
                if (
                    self.potential(trial) <= energy + 1e-4 * t * slope
                    or np.linalg.norm(trial_gradient) < np.linalg.norm(gradient)
                    or t < 1e-10
                ):
                    break
                t /= 2.0
            phi, gradient, previous = trial, trial_gradient, size
        else:
            raise EquilibriumNotFound(f"Newton's method did not converge in {max_iterations} iterations")
        residual = float(np.max(np.abs(gradient)))
        # the spring moments k·(Δφ − α) carry the round-off ε·k·|φ| of the differences of absolute angles
        round_off = (
            1e3 * np.finfo(float).eps * float(np.max(self.stiffness)) * (1.0 + float(np.max(np.abs(phi))))
        )
        if residual > 1e-9 * moment_scale + round_off:
            raise EquilibriumNotFound(
                f"residual {residual:.3e} N·m against weights' moments {moment_scale:.3e}"
            )
        return phi

    def frequencies(self, phi: np.ndarray, count: int = 2) -> np.ndarray:
        """The lowest ``count`` natural frequencies ω [rad/s] of small vibrations about φ, motors locked.

        Solves K_T v = ω² M v as M v = (1/ω²) K_T v for its largest eigenvalues: the Cholesky
        factor of the well-scaled K_T, not of M, then bounds the round-off of the lowest ω to
        ~ε·N² instead of ε·(ω_max/ω_1)² ~ ε·N⁴, and a singular M (massless bars) is harmless. K_T
        must be positive definite, a stable equilibrium (else numpy.linalg.LinAlgError).
        """
        n = self.n
        inverse_squares = scipy.linalg.eigh(
            self.mass_matrix(phi), self.hessian(phi), eigvals_only=True, subset_by_index=[n - count, n - 1]
        )
        return 1.0 / np.sqrt(inverse_squares[::-1])


# --- Richardson extrapolation ---------------------------------------------------------------------------------


def fitted_rates(values: Sequence, ratio: float = 2.0) -> np.ndarray:
    """Observed orders p of a sequence refined by ``ratio``: log(|Q_{k−1} − Q_{k−2}| / |Q_k − Q_{k−1}|)/log ratio.

    One rate per consecutive triple (elementwise for array-valued Q); NaN where a difference is zero
    (a quantity the discretization does not change, such as the tip of an unloaded chain).
    """
    q = np.asarray(values, dtype=float)
    differences = np.abs(np.diff(q, axis=0))
    coarse, fine = differences[:-1], differences[1:]
    defined = (coarse > 0.0) & (fine > 0.0)
    ratios = np.divide(coarse, fine, out=np.ones_like(coarse), where=defined)
    return np.where(defined, np.log(ratios) / math.log(ratio), np.nan)


@dataclass(frozen=True)
class Extrapolated:
    """The result of ``richardson``: value = T[K][J], the deepest entry of the finest row K; error =
    max(|T[K][J] − T[K][J−1]|, |T[K][J] − T[K−1][J]|), its differences from the second-deepest
    entry of the same row and from the deepest entry of the row before (the two finest extrapolated
    levels). The second term catches round-off amplified on the finest levels, which the first,
    the usual Romberg estimate, can miss; with J = K (a full table) the row before has no entry J,
    and T[K−1][J−1] takes its place."""

    value: np.ndarray
    error: np.ndarray
    table: list = field(repr=False)


def richardson(values: Sequence, ratio: float = 2.0, exponents: Sequence[int] = (2, 4, 6, 8)) -> Extrapolated:
    """Richardson extrapolation of Q(h_k), h_k = h_0/ratio^k, with error terms h^p, p in ``exponents``.

    Row k of the table holds Q_k then the successively extrapolated values T[k][j] = T[k][j−1] +
    (T[k][j−1] − T[k−1][j−1])/(ratio^{p_j} − 1); the depth is min(levels − 1, len(exponents)).
    """
    q = [np.asarray(v, dtype=float) for v in values]
    depth = min(len(q) - 1, len(exponents))
    if depth < 1:
        raise ValueError("Richardson extrapolation needs at least two levels")
    table = [[v] for v in q]
    for j in range(1, depth + 1):
        factor = ratio ** exponents[j - 1] - 1.0
        for k in range(j, len(q)):
            table[k].append(table[k][j - 1] + (table[k][j - 1] - table[k - 1][j - 1]) / factor)
    finest, before = table[-1], table[-2]
    value = finest[depth]
    error = np.maximum(np.abs(value - finest[depth - 1]), np.abs(value - before[min(depth, len(before) - 1)]))
    return Extrapolated(value=value, error=error, table=table)


@dataclass(frozen=True)
class ChainReference:
    """The continuous-beam values of a chain (``chain_reference``), each with its error estimate.

    tip: (x, y) of the last link's tip [m]; frequencies: the lowest natural frequencies with the
    motors locked [rad/s]; *_error: the Richardson error estimates (same units); *_rates: the
    observed convergence orders of the raw sequences over the finest three levels; bars: the
    levels N; raw_tip, raw_frequencies: the unextrapolated values per level.
    """

    tip: np.ndarray
    tip_error: np.ndarray
    frequencies: np.ndarray
    frequency_errors: np.ndarray
    tip_rates: np.ndarray
    frequency_rates: np.ndarray
    bars: tuple[int, ...]
    raw_tip: np.ndarray = field(repr=False)
    raw_frequencies: np.ndarray = field(repr=False)


DEFAULT_BARS = (16, 32, 64, 128, 256)


def chain_reference(
    links: Sequence[FlexibleLink],
    angles: Sequence[float],
    gravity: float = STANDARD_GRAVITY,
    count: int = 2,
    bars: Sequence[int] = DEFAULT_BARS,
    exponents: Sequence[int] = (2, 4, 6, 8),
) -> ChainReference:
    """Equilibrium tip and locked frequencies of the chain, Richardson-extrapolated in N.

    ``bars`` must double from level to level; each level starts Newton from the previous level's
    equilibrium. count = 0 skips the eigenproblem (statics only, e.g. massless links).
    """
    bars = tuple(int(b) for b in bars)
    if any(b2 != 2 * b1 for b1, b2 in itertools.pairwise(bars)):
        raise ValueError(f"the bar counts must double from level to level, got {bars}")
    tips, omegas, phi = [], [], None
    for N in bars:
        chain = BarChain(links, angles, gravity, N)
        # each bar of the coarser equilibrium splits into two at its angle: Newton's start
        phi = chain.equilibrium(None if phi is None else np.repeat(phi, 2))
        tips.append(chain.tip(phi))
        omegas.append(chain.frequencies(phi, count) if count else np.zeros(0))
    tip, omega = richardson(tips, 2.0, exponents), richardson(omegas, 2.0, exponents)
    return ChainReference(
        tip=tip.value,
        tip_error=tip.error,
        frequencies=omega.value,
        frequency_errors=omega.error,
        tip_rates=fitted_rates(tips)[-1] if len(bars) > 2 else np.full(2, np.nan),
        frequency_rates=fitted_rates(omegas)[-1] if len(bars) > 2 else np.full(count, np.nan),
        bars=bars,
        raw_tip=np.array(tips),
        raw_frequencies=np.array(omegas),
    )


# --- the lumped two-link arm ----------------------------------------------------------------------------------


def lumped_two_link_links() -> tuple[FlexibleLink, FlexibleLink]:
    """The links of flexlink's preset ``lumped_two_link`` (data copied, not imported).

    L = 0.475, 0.435 m; link masses 0.374, 0.29 kg (uniform); E = 2.06e11 Pa, I = 16e-11,
    6.75e-11 m⁴; 2.94 kg (the second motor) at the tip of link 1, 0.343 kg (the payload) at the tip
    of link 2, both without rotary inertia.
    """
    E = 2.06e11
    return (
        FlexibleLink(0.475, 0.374 / 0.475, E * 16e-11, tip_mass=2.94),
        FlexibleLink(0.435, 0.29 / 0.435, E * 6.75e-11, tip_mass=0.343),
    )


def lumped_two_link_reference(
    angles: Sequence[float] = (math.pi / 4, -math.pi / 4),
    gravity: float = STANDARD_GRAVITY,
    count: int = 2,
    bars: Sequence[int] = DEFAULT_BARS,
) -> ChainReference:
    """The lumped two-link arm at its static equilibrium in the vertical plane, motors locked.

    angles: (θ1, θ2) [rad], θ1 the absolute angle of link 1's root tangent from +x, θ2 link 2's
    root tangent relative to link 1's tip tangent; gravity: g [m/s²] along −y (scale it for a
    sweep; 0 gives the undeformed arm). Returns a ``ChainReference``: ``tip`` (x, y) of link 2 [m],
    ``frequencies`` the lowest ``count`` locked natural frequencies [rad/s], and ``tip_error``,
    ``frequency_errors`` their Richardson error estimates.
    """
    return chain_reference(lumped_two_link_links(), angles, gravity, count, bars)
