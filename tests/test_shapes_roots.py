"""Roots of the frequency equations against exact and independent references."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import shapes
from shapes.clamped_roots import (
    clamped_free_roots,
    clamped_mass_count,
    clamped_mass_function,
    clamped_mass_roots,
)

# Blevins, "Formulas for Natural Frequency and Mode Shape" (1979), Table 8-1,
# clamped-free λ_i, printed to 9 significant digits.
BLEVINS_CLAMPED_FREE = [1.87510407, 4.69409113, 7.85475744, 10.9955407, 14.1371684]


def mp_clamped_free_root(k: int) -> float:
    """Root k of 1 + cos x cosh x = 0 with mpmath at 50 digits (independent reference).

    Divided by cosh x so that findroot's residual test is meaningful for large x.
    """
    with mpmath.workdps(50):
        return float(
            mpmath.findroot(
                lambda x: (1 + mpmath.cos(x) * mpmath.cosh(x)) / mpmath.cosh(x), (k - 0.5) * mpmath.pi
            )
        )


def mp_clamped_mass_residual(beta: float, mu: float, j: float):
    """The clamped-mass frequency equation as printed in docs/MODEL.md, Mode shapes, in 60-digit arithmetic, over cosh β."""
    with mpmath.workdps(60):
        b = mpmath.mpf(beta)
        ch, sh, c, s = mpmath.cosh(b), mpmath.sinh(b), mpmath.cos(b), mpmath.sin(b)
        return (
            (1 + c * ch)
            - mu * b * (ch * s - sh * c)
            - j * b**3 * (ch * s + sh * c)
            + mu * j * b**4 * (1 - c * ch)
        ) / ch


def mp_clamped_mass_root(guess: float, mu: float, j: float) -> float:
    with mpmath.workdps(60):
        return float(mpmath.findroot(lambda x: mp_clamped_mass_residual(x, mu, j), mpmath.mpf(guess)))


def test_pinned_pinned_roots_are_k_pi():
    # Exact: sin β = 0.
    np.testing.assert_allclose(shapes.PinnedPinned().betas(100), np.pi * np.arange(1, 101), rtol=1e-15)


def test_clamped_free_roots_match_blevins_table():
    np.testing.assert_allclose(clamped_free_roots(5), BLEVINS_CLAMPED_FREE, rtol=1e-8)


def test_clamped_free_roots_match_mpmath_for_100_modes():
    ours = shapes.ClampedFree().betas(100)
    reference = np.array([mp_clamped_free_root(k) for k in range(1, 101)])
    assert np.max(np.abs(ours - reference) / reference) < 1e-14  # issue: 1e-10; we get round-off


def test_clamped_mass_with_zero_load_is_clamped_free():
    # Two different root finders (Wittrick–Williams bracketing vs fixed brackets).
    cf, cm = shapes.ClampedFree(), shapes.ClampedMass(0.0, 0.0)
    np.testing.assert_allclose(cm.betas(100), cf.betas(100), rtol=1e-14)
    eta = np.linspace(0, 1, 41)
    for m in range(4):
        np.testing.assert_allclose(
            cm.evaluate(eta, 100, m), cf.evaluate(eta, 100, m), atol=1e-12 * cf.betas(100)[-1] ** m
        )


@pytest.mark.parametrize(
    "mu, j", [(1.0, 0.0), (1.0, 0.1), (0.0, 1.0), (10.0, 1.0), (1000.0, 100.0), (1e-3, 1e-4)]
)
def test_clamped_mass_roots_match_mpmath(mu, j):
    ours = clamped_mass_roots(12, mu, j)
    reference = np.array([mp_clamped_mass_root(b, mu, j) for b in ours])
    np.testing.assert_allclose(ours, reference, rtol=1e-13)


def test_clamped_mass_roots_against_rayleigh_ritz_with_cantilever_basis():
    """No missed and no duplicated root: an independent Rayleigh–Ritz check.

    Ritz with N cantilever modes plus the tip terms in the mass matrix gives
    upper bounds that decrease towards the clamped-mass roots as N grows
    (slowly: the cantilever basis does not satisfy the tip shear condition).
    A missed root would put our k-th root a whole root spacing (≈ π) above
    the k-th Ritz value; a duplicated one a whole spacing below.
    """
    mu, j = 3.0, 0.5
    exact = clamped_mass_roots(8, mu, j)
    gaps = []
    for n_basis in (30, 60, 120):
        m = shapes.ClampedFree().integrals(n_basis)
        mass = m.mass + mu * np.outer(m.tip_value, m.tip_value) + j * np.outer(m.tip_slope, m.tip_slope)
        ritz = scipy.linalg.eigh(m.stiffness, mass, eigvals_only=True)[:8] ** 0.25
        assert np.all(ritz >= exact * (1 - 1e-12))
        gaps.append(ritz / exact - 1)
    assert np.all(np.diff(np.array(gaps), axis=0) <= 1e-15)  # monotone from above
    assert np.max(gaps[-1]) < 5e-3  # measured 3.4e-3 with 120 modes; root spacing ≈ π


def test_frequencies_scale_with_beam_properties():
    # ω = β² √(EI/(ρA L⁴)) (Euler–Bernoulli).
    fam = shapes.ClampedFree()
    omega = fam.frequencies(3, EI=2.0, mass_per_length=0.5, length=1.5)
    np.testing.assert_allclose(omega, fam.betas(3) ** 2 * np.sqrt(2.0 / (0.5 * 1.5**4)), rtol=1e-15)
    with pytest.raises(ValueError, match="EI"):
        fam.frequencies(3, EI=-1.0, mass_per_length=0.5, length=1.5)


ratios = st.one_of(st.just(0.0), st.floats(1e-4, 1e3)).map(float)
inertias = st.one_of(st.just(0.0), st.floats(1e-5, 1e2)).map(float)


@given(mu=ratios, j=inertias)
def test_clamped_mass_roots_are_complete_and_ordered(mu, j):
    """Hypothesis over μ ∈ [0, 1000], j ∈ [0, 100].

    * strictly increasing; f̃ ≈ 0 at each root;
    * the Wittrick–Williams count is k between roots k and k+1 (one root each);
    * bounds: cantilever root k ≥ β_k ≥ clamped–clamped root k−2 (rank-two
      interlacing: tip mass and inertia lower every frequency, and in the limit
      μ, j → ∞ the beam becomes clamped–clamped plus two zero modes).
    """
    n = 12
    roots = clamped_mass_roots(n, mu, j)
    assert np.all(np.diff(roots) > 0)
    scale = 1 + mu * roots + j * roots**3 + mu * j * roots**4
    assert np.max(np.abs(clamped_mass_function(roots, mu, j)) / scale) < 1e-12
    midpoints = np.append(0.5 * (roots[:-1] + roots[1:]), roots[-1] + 1e-3)
    assert [clamped_mass_count(b, mu, j) for b in midpoints] == list(range(1, n + 1))
    cantilever = clamped_free_roots(n)
    assert np.all(roots <= cantilever * (1 + 1e-12))
    with mpmath.workdps(30):
        clamped_clamped = [
            float(mpmath.findroot(lambda x: mpmath.cos(x) * mpmath.cosh(x) - 1, (k + 0.5) * mpmath.pi))
            for k in range(1, n - 1)
        ]
    assert np.all(roots[2:] >= np.array(clamped_clamped) * (1 - 1e-12))
