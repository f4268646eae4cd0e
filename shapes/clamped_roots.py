"""Frequency equations of clamped beams and robust root finding.

Clamped–free (cantilever)::

    1 + cos β cosh β = 0

Clamped–mass (cantilever with tip mass M and tip rotary inertia J; ratios
μ = M/(ρA L), j = J/(ρA L³)), derived from the tip conditions
φ'''(1) = −μβ⁴ φ(1) (shear) and φ''(1) = jβ⁴ φ'(1) (moment)::

    f(β) = (1 + cos β cosh β) − μβ (cosh β sin β − sinh β cos β)
           − jβ³ (cosh β sin β + sinh β cos β) + μ j β⁴ (1 − cos β cosh β)

Every term grows like e^β, so we work with the scaled function
f̃ = f / cosh β, which has the same roots and stays O(β⁴) for all β::

    f̃(β) = (sech β + cos β) − μβ (sin β − tanh β cos β)
           − jβ³ (sin β + tanh β cos β) + μ j β⁴ (sech β − cos β)

Root finding must never miss or duplicate a root, for μ up to 1000 and j up to
100, where the first roots crowd together near zero. Sign changes on a grid
cannot guarantee that; we count instead. The Wittrick–Williams algorithm
(Wittrick & Williams, Q. J. Mech. Appl. Math. 24 (1971) 263–284) gives the
number of eigenvalues below β exactly:

    N(β) = J₀(β) + s{K(β)}

where J₀ is the number of eigenvalues of the beam with *both* ends clamped
below β (closed form below) and s{K} is the number of negative eigenvalues of
the 2×2 dynamic stiffness of the cantilever at its tip, minus the tip inertia.
Bisection on N isolates each root in an interval that contains it alone; Newton's method on f̃
with its analytic derivative, kept inside that interval (:func:`core.numerics.roots.safeguarded_newton`),
then converges to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from core.numerics.roots import safeguarded_newton

#: Bisection on the eigenvalue count stops after this many splits (each halves
#: an interval); eigenvalues are simple, so this is never reached in practice.
MAX_SPLITS = 200
#: Absolute tolerance of the root refinement on β (roots are O(1)…O(10³)).
ROOT_XTOL = 1e-14
ROOT_RTOL = 4 * np.finfo(float).eps


def clamped_free_function(beta: np.ndarray | float) -> np.ndarray | float:
    """Scaled cantilever frequency function (1 + cos β cosh β) / cosh β."""
    beta = np.asarray(beta, dtype=float)
    return 1.0 / np.cosh(beta) + np.cos(beta)


def clamped_free_roots(n: int) -> np.ndarray:
    """First ``n`` roots of 1 + cos β cosh β = 0.

    Root k lies in [(k−1)π, kπ]: there the scaled function sech β + cos β
    changes sign exactly once (it is monotone on [0, π], and for β ≥ π the
    sech term is below 0.09, so the sign follows cos β).
    """

    def value_and_slope(beta: float) -> tuple[float, float]:  # f̃ and f̃′ = −sech β tanh β − sin β
        return float(clamped_free_function(beta)), -math.tanh(beta) / math.cosh(beta) - math.sin(beta)

    roots = np.empty(n)
    for k in range(1, n + 1):
        roots[k - 1] = safeguarded_newton(
            value_and_slope, (k - 1) * np.pi, k * np.pi, xtol=ROOT_XTOL, rtol=ROOT_RTOL
        )
    return roots


def clamped_mass_function(
    beta: np.ndarray | float, mass_ratio: float, inertia_ratio: float
) -> np.ndarray | float:
    """Scaled clamped–mass frequency function f̃(β; μ, j) = f / cosh β (see module docstring)."""
    return clamped_mass_partials(beta, mass_ratio, inertia_ratio)[0]


def sech_tanh(beta: np.ndarray, analytic: bool) -> tuple[np.ndarray, np.ndarray]:
    """(sech β, tanh β); ``analytic``: from e^{−β} and e^{−2β}, which a complex β takes
    without overflow of cosh and with no cancellation in the imaginary part."""
    if analytic:
        decay = np.exp(-beta)
        decay2 = decay * decay
        return 2.0 * decay / (1.0 + decay2), (1.0 - decay2) / (1.0 + decay2)
    return 1.0 / np.cosh(beta), np.tanh(beta)


def clamped_mass_partials(
    beta: np.ndarray | float, mass_ratio: float, inertia_ratio: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """f̃ and its partial derivatives with respect to β, μ and j.

    With S = sech β, T = tanh β, c = cos β, s = sin β (S' = −ST, T' = S²)::

        f̃   = (S + c) − μβ(s − Tc) − jβ³(s + Tc) + μjβ⁴(S − c)
        f̃_β = −(ST + s) − μ[(s − Tc) + βT(Tc + s)]
              − j[3β²(s + Tc) + β³((1 + S²)c − Ts)]
              + μj[4β³(S − c) + β⁴(s − ST)]
        f̃_μ = −β(s − Tc) + jβ⁴(S − c)
        f̃_j = −β³(s + Tc) + μβ⁴(S − c)

    (derived here from the definition; tested against finite differences).
    At a root, dβ/dp = −f̃_p / f̃_β equals that of the unscaled f, because
    the scale factor cosh β does not depend on μ or j and f = 0 there.

    Complex arguments (β, μ and j may all be complex arrays, broadcast
    together) give the analytic continuation: f̃ is analytic wherever
    cosh β ≠ 0, and there sech β = 2e^{−β}/(1 + e^{−2β}) and
    tanh β = (1 − e^{−2β})/(1 + e^{−2β}) are evaluated without overflow for
    Re β ≥ 0. Real arguments take the real path unchanged.

    Returns
    -------
    f, f_beta, f_mu, f_j : ndarray, shape of ``beta`` (broadcast with μ, j)
    """
    analytic = any(np.iscomplexobj(x) for x in (beta, mass_ratio, inertia_ratio))
    if analytic:
        b = np.asarray(beta, dtype=complex)
        mu, jr = np.asarray(mass_ratio), np.asarray(inertia_ratio)
    else:
        b = np.asarray(beta, dtype=float)
        mu, jr = _real_ratio(mass_ratio), _real_ratio(inertia_ratio)
    S, T = sech_tanh(b, analytic)
    c, s = np.cos(b), np.sin(b)
    f = (S + c) - mu * b * (s - T * c) - jr * b**3 * (s + T * c) + mu * jr * b**4 * (S - c)
    f_beta = (
        -(S * T + s)
        - mu * ((s - T * c) + b * T * (T * c + s))
        - jr * (3 * b**2 * (s + T * c) + b**3 * ((1 + S**2) * c - T * s))
        + mu * jr * (4 * b**3 * (S - c) + b**4 * (s - S * T))
    )
    f_mu = -b * (s - T * c) + jr * b**4 * (S - c)
    f_j = -(b**3) * (s + T * c) + mu * b**4 * (S - c)
    return f, f_beta, f_mu, f_j


def _real_ratio(value: float | np.ndarray) -> float | np.ndarray:
    """A real ratio as a Python float (scalars, as before) or a float array (broadcasting)."""
    return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)


def _clamped_clamped_count(beta: float) -> int:
    """Number of clamped–clamped eigenvalues (cos β cosh β = 1) strictly below β.

    Wittrick & Williams (1971): J₀ = i − ½[1 − (−1)^i sgn(1 − cos β cosh β)],
    i = ⌊β/π⌋; the sign is taken from the scaled form sech β − cos β.
    """
    i = int(np.floor(beta / np.pi))
    sign = np.sign(1.0 / np.cosh(beta) - np.cos(beta))
    return round(i - 0.5 * (1.0 - (-1) ** i * sign))


def _tip_stiffness(beta: float, mass_ratio: float, inertia_ratio: float) -> np.ndarray:
    """Scaled 2×2 dynamic stiffness at the tip of a cantilever, minus the tip inertia.

    Degrees of freedom (w(1), φ'(1)/β); the matrix is K/β³ in those
    coordinates, a congruence of the physical one (same inertia, Sylvester).
    """
    E = np.exp(-beta)
    c, s = np.cos(beta), np.sin(beta)
    # Rows: φ(0), φ'(0)/β, φ(1), φ'(1)/β on the basis cos βη, sin βη, e^{-βη}, e^{-β(1-η)}.
    system = np.array([[1, 0, 1, E], [0, 1, -1, E], [c, s, E, 1], [-s, c, -E, 1]])
    rhs = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    coefficients = np.linalg.solve(system, rhs)
    shear = -np.array([s, -c, -E, 1.0]) @ coefficients  # −φ'''(1)/β³
    moment = np.array([-c, -s, E, 1.0]) @ coefficients  # φ''(1)/β²
    stiffness = np.array(
        [[shear[0] - mass_ratio * beta, shear[1]], [moment[0], moment[1] - inertia_ratio * beta**3]]
    )
    return 0.5 * (stiffness + stiffness.T)


def clamped_mass_count(beta: float, mass_ratio: float, inertia_ratio: float) -> int:
    """Number of clamped–mass roots strictly below ``beta`` (Wittrick–Williams).

    s{K} for the 2×2 tip stiffness is read from det K and tr K. Near large β
    the cantilever root and the clamped–clamped pole of K lie within e^{−β} of
    each other, where K is huge and its small eigenvalue is lost to
    cancellation; but det K = f̃/g̃ exactly in our scaling (g̃ = sech β − cos β,
    the scaled clamped–clamped function; tested), and both f̃ and g̃ are
    evaluated without cancellation. So the count changes exactly where f̃ does.
    """
    if beta <= 0:
        return 0
    f = float(clamped_mass_function(beta, mass_ratio, inertia_ratio))
    g = 1.0 / np.cosh(beta) - np.cos(beta)
    if g == 0.0:
        # β is exactly a clamped–clamped eigenvalue (a pole of K); step off it.
        return clamped_mass_count(beta * (1 + 1e-13), mass_ratio, inertia_ratio)
    trace = float(np.trace(_tip_stiffness(beta, mass_ratio, inertia_ratio)))
    det_sign = np.sign(f) * np.sign(g)
    if det_sign < 0:
        negative = 1
    elif det_sign > 0:
        negative = 2 if trace < 0 else 0
    else:  # β is a root: one eigenvalue is zero, not negative
        negative = 1 if trace < 0 else 0
    return _clamped_clamped_count(beta) + negative


def clamped_mass_roots(n: int, mass_ratio: float, inertia_ratio: float) -> np.ndarray:
    """First ``n`` roots of the clamped–mass frequency equation, ascending.

    Each root is first isolated by bisection on the Wittrick–Williams count
    (so none is missed or found twice), then refined by safeguarded Newton on
    the scaled frequency function.

    Adding tip mass or inertia lowers every frequency (Rayleigh), so root k is
    below the k-th cantilever root, itself below kπ: [0, nπ] holds the first n.
    """
    mu, jr = float(mass_ratio), float(inertia_ratio)
    upper = n * np.pi
    if clamped_mass_count(upper, mu, jr) < n:
        raise RuntimeError(f"eigenvalue count below {upper} is less than {n} (mu={mu}, j={jr})")
    brackets: list[tuple[float, float]] = []
    pending = [(0.0, 0, upper, clamped_mass_count(upper, mu, jr))]
    splits = 0
    while pending:
        lo, count_lo, hi, count_hi = pending.pop()
        if count_lo >= n or count_hi == count_lo:
            continue
        if count_hi - count_lo == 1:
            brackets.append((lo, hi))
            continue
        splits += 1
        if splits > MAX_SPLITS * n:
            raise RuntimeError(f"could not isolate clamped-mass roots (mu={mu}, j={jr})")
        mid = 0.5 * (lo + hi)
        count_mid = clamped_mass_count(mid, mu, jr)
        pending.append((mid, count_mid, hi, count_hi))
        pending.append((lo, count_lo, mid, count_mid))
    brackets.sort()
    roots = np.empty(n)
    for k, (lo, hi) in enumerate(brackets[:n]):
        roots[k] = _refine(k + 1, lo, hi, mu, jr)
    return roots


def _refine(k: int, lo: float, hi: float, mu: float, jr: float) -> float:
    """Root k, isolated in (lo, hi], to round-off.

    The refinement needs a sign change of f̃. An end of the interval can sit
    within round-off of a neighbouring root (for large β the cantilever roots
    approach odd multiples of π/2, exactly where bisection lands), leaving the
    sign there undetermined; then bisection on the exact count shrinks the
    interval until the sign change is clear.
    """

    def value_and_slope(beta: float) -> tuple[float, float]:
        f, f_beta = clamped_mass_partials(beta, mu, jr)[:2]
        return float(f), float(f_beta)

    for _ in range(MAX_SPLITS):
        f_lo = clamped_mass_function(lo, mu, jr) if lo > 0 else 1.0  # f̃(0⁺) → 2 > 0
        f_hi = clamped_mass_function(hi, mu, jr)
        if f_hi == 0.0:
            return hi
        if np.sign(f_lo) != np.sign(f_hi):
            return safeguarded_newton(value_and_slope, max(lo, 1e-300), hi, xtol=ROOT_XTOL, rtol=ROOT_RTOL)
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid
        if clamped_mass_count(mid, mu, jr) >= k:
            hi = mid
        else:
            lo = mid
    raise RuntimeError(f"could not refine clamped-mass root {k} (mu={mu}, j={jr}) in [{lo}, {hi}]")
