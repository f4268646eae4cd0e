"""Length-following clamped–mass shapes: roots along l, integrals and their l-derivatives.

References, each independent of the Cauchy-integral (contour DFT) derivatives under test:

* ``shapes.ClampedMass(μ(l), j(l)).integrals`` (its own roots, normalization and
  16-point composite Gauss rule) for the values at l;
* the tip-mass inner product, ∫ψψᵀ + μψ(1)ψ(1)ᵀ + jψ'(1)ψ'(1)ᵀ = I at every l,
  so all of its l-derivatives vanish, and ∫ψ''ψ''ᵀ = diag(β⁴) (two integrations
  by parts with the boundary conditions);
* five-point central differences of the values at l ± h, l ± 2h (exact roots);
* the complex step, F'(l) = Im F(l + ih)/h, h = 1e-20 l, of the same integrals
  computed directly at the complex length (no contour);
* ``shapes.clamped_roots.clamped_mass_roots`` (Wittrick–Williams) for the roots.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shapes
from core.numerics.quadrature import composite_gauss
from shapes.clamped_functions import basis_gram, clamped_coefficients, clamped_evaluate
from shapes.clamped_roots import clamped_mass_partials, clamped_mass_roots
from shapes.following import MAX_ORDER, LengthFollowing, quadrature_rule

# The RRP reference arm (docs/MODEL.md, Reference arms), link 3 (0.4303 kg over 1.3 m, payload 0.0828 kg; tip inertia 1e-4 kg m²
# is our choice, as in test_beta_ode.py), and heavier loads: a tip mass several times the
# beam's, a pure rotary inertia, a pure mass, and no load (the cantilever).
RHO_A = 0.4303 / 1.3
CASES = [
    # tip_mass, tip_inertia, mass_per_length, length, modes
    (0.0828, 1e-4, RHO_A, 0.6, 4),
    (0.0828, 1e-4, RHO_A, 0.3, 2),
    (1.0, 0.01, 0.5, 0.25, 4),
    (0.0, 0.05, 0.5, 0.4, 3),
    (5.0, 0.0, 0.5, 0.2, 3),
    (0.0, 0.0, 0.5, 0.7, 3),
]
IDS = [f"M={c[0]},J={c[1]},l={c[3]},n={c[4]}" for c in CASES]
PLAIN = ("mass", "first", "moment", "stiffness", "tip_value", "tip_slope")
RATES = ("rate_first", "rate_second", "rate_cross", "rate_mass")


def build(case, **options):
    tip_mass, tip_inertia, rho_a, length, modes = case
    return LengthFollowing(tip_mass, tip_inertia, rho_a, modes, **options), length


def scale(result, key, l):
    """The size of a quantity over the orders: max_k max|d^k F/dl^k| l^k."""
    return max(np.max(np.abs(result[key][k])) * l**k for k in range(result[key].shape[0]))


def fine_rule(beta_max):
    """Composite 16-point Gauss with four times the panels of ``gauss_rule`` (reference quadrature)."""
    return composite_gauss(np.linspace(0.0, 1.0, 4 * (int(np.ceil(beta_max / np.pi)) + 8) + 1), 16)


# -- values at l -------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_equal_the_clamped_mass_integrals_at_that_length(case):
    # Reference: shapes.ClampedMass at μ(l), j(l) — its own roots and quadrature; 1e-12.
    follow, l = build(case)
    n = follow.modes
    result = follow.taylor(l)
    mu, j = follow.ratios(l)
    reference = shapes.ClampedMass(mu, j).integrals(n)
    pairs = {
        "mass": reference.mass,
        "first": reference.mean,
        "moment": reference.first_moment,
        "stiffness": reference.stiffness,
        "tip_value": reference.tip_value,
        "tip_slope": reference.tip_slope,
    }
    for key, expected in pairs.items():
        assert result[key].shape == (MAX_ORDER + 1, *expected.shape)
        assert np.max(np.abs(result[key][0] - expected)) <= 1e-12 * np.max(np.abs(expected)), key
    # ∫ψ''ψ''ᵀ = diag(β⁴) exactly with the tip-mass inner product (integrate by parts twice:
    # the boundary terms ψ''(1)ψ'(1) − ψ'''(1)ψ(1) are β⁴ times the tip terms of ⟨ψ_i, ψ_j⟩).
    beta = follow.roots(l)
    assert np.max(np.abs(result["stiffness"][0] - np.diag(beta**4))) <= 1e-12 * beta[-1] ** 4


def test_quadrature_rule_is_exact_to_round_off():
    # Products of 30 shapes, their slopes and curvatures, weighted by 1, η and η²: the rule
    # of taylor() against one with four times the panels of the family's own rule; 1e-14
    # of the largest entry (β⁴ for the curvatures).
    family = shapes.ClampedMass(3.0, 0.2)
    beta = family.betas(30)

    def integrals(rule):
        nodes, weights = rule
        values = [family.evaluate(nodes, 30, m) for m in range(3)]
        return [(u * (weights * nodes**p)) @ v.T for u in values for v in values for p in (0, 1, 2)]

    for got, expected in zip(
        integrals(quadrature_rule(beta[-1])), integrals(fine_rule(beta[-1])), strict=True
    ):
        assert np.max(np.abs(got - expected)) <= 1e-14 * np.max(np.abs(expected))
    assert quadrature_rule(beta[-1])[0].size < fine_rule(beta[-1])[0].size / 4


@pytest.mark.parametrize("case", CASES[:4], ids=IDS[:4])
def test_rate_integrals_are_frozen_shapes_plus_the_shape_change(case):
    # g = −ηψ' + l ∂ψ/∂l. Remove l ∂ψ/∂l (from length_derivative, itself checked against
    # finite differences below) and the rest must be the frozen-shape integrals −∫ηψ',
    # −∫η²ψ', −∫ηψψ'ᵀ, ∫η²ψ'ψ'ᵀ, computed here with ClampedMass shapes on a fine rule; 1e-12.
    follow, l = build(case)
    n = follow.modes
    result = follow.taylor(l, 0)
    mu, j = follow.ratios(l)
    family = shapes.ClampedMass(mu, j)
    nodes, weights = fine_rule(family.betas(n)[-1])
    psi, slope = family.evaluate(nodes, n, 0), family.evaluate(nodes, n, 1)
    change = l * follow.length_derivative(nodes, l)  # l ∂ψ/∂l
    w1, w2 = weights * nodes, weights * nodes**2
    frozen = {
        "rate_first": (result["rate_first"][0] - change @ weights, -(slope @ w1)),
        "rate_second": (result["rate_second"][0] - change @ w1, -(slope @ w2)),
        "rate_cross": (result["rate_cross"][0] - (psi * weights) @ change.T, -(psi * w1) @ slope.T),
        "rate_mass": (
            result["rate_mass"][0]
            - (change * weights) @ change.T
            + (slope * w1) @ change.T
            + (change * w1) @ slope.T,
            (slope * w2) @ slope.T,
        ),
    }
    for key, (got, expected) in frozen.items():
        assert np.max(np.abs(got - expected)) <= 1e-12 * max(1.0, np.max(np.abs(expected))), key
    # ∫∂ψ/∂l = d/dl ∫ψ and ∫η ∂ψ/∂l = d/dl ∫ηψ: the same from taylor's own derivatives.
    full = follow.taylor(l, 1)
    np.testing.assert_allclose(
        full["rate_first"][0] - l * full["first"][1], frozen["rate_first"][1], atol=1e-12
    )
    np.testing.assert_allclose(
        full["rate_second"][0] - l * full["moment"][1], frozen["rate_second"][1], atol=1e-12
    )


# -- derivatives ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inner_product_is_the_identity_at_every_order(case):
    # d^k/dl^k [∫ψψᵀ + μψ(1)ψ(1)ᵀ + jψ'(1)ψ'(1)ᵀ] = δ_k0 I (Leibniz rule with the exact
    # derivatives of μ = M/(ρA l), j = J/(ρA l³)). Tolerances for l^k × error: the
    # round-off bound ε k! (l/r)^k of the contour (r = l/10) with a margin of 20.
    follow, l = build(case)
    result = follow.taylor(l)
    M, J, rho_a = follow.tip_mass, follow.tip_inertia, follow.mass_per_length
    from math import comb, factorial, prod

    mu = [M / rho_a * (-1) ** a * factorial(a) / l ** (a + 1) for a in range(4)]
    jr = [J / rho_a * (-1) ** a * prod(range(3, 3 + a)) / l ** (3 + a) for a in range(4)]
    for k in range(MAX_ORDER + 1):
        total = result["mass"][k] - (np.eye(follow.modes) if k == 0 else 0.0)
        for a in range(k + 1):
            for b in range(k + 1 - a):
                c = k - a - b
                weight = comb(k, a) * comb(k - a, b)
                total = total + weight * (
                    mu[a] * np.outer(result["tip_value"][b], result["tip_value"][c])
                    + jr[a] * np.outer(result["tip_slope"][b], result["tip_slope"][c])
                )
        bound = 20 * np.finfo(float).eps * factorial(k) * 10.0**k
        assert np.max(np.abs(total)) * l**k <= bound, k


@pytest.mark.parametrize("case", CASES[:3], ids=IDS[:3])
def test_stiffness_follows_beta_to_the_fourth(case):
    # ∫ψ''ψ''ᵀ = diag(β⁴) at every l (exact roots), so d/dl = diag(4β³ dβ/dl) and the
    # off-diagonal entries of every derivative vanish; dβ/dl from the implicit function
    # theorem (BetaODE's formula). Relative 1e-12.
    follow, l = build(case)
    result = follow.taylor(l, 1)
    beta = follow.exact_roots(l)
    expected = np.diag(4 * beta**3 * follow.dbeta_dlength(l, beta))
    assert np.max(np.abs(result["stiffness"][1] - expected)) * l <= 1e-12 * beta[-1] ** 4


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives_match_finite_differences(case):
    # Five-point central differences of the order-0 values at l ± h, l ± 2h, h = 3e-3 l:
    # F' error h⁴|F⁽⁵⁾|/30 + 1.5 δ/h, F'' error h⁴|F⁽⁶⁾|/90 + 5.3 δ/h² (δ ≈ 1e-14 relative
    # error of the values, from ∂ψ/∂l in the rate integrals). The Cauchy estimate
    # |F⁽ᵏ⁾| ≤ k! max|F| / ρ^k on a circle of radius ρ ≈ l/4 free of singularities bounds
    # the truncation by 4 (h/l)⁴ (l/ρ)⁵ ≈ 3e-7 relative for F' and 8 (h/l)⁴ (l/ρ)⁶ ≈ 3e-6
    # for F'' (pessimistic: measured 4e-10 and 3e-9 at worst here). Tolerance (relative to
    # the quantity's scale) 2e-9 and 2e-8; the third derivative against differences of
    # the second, 1e-6 (round-off ~1e-12 of the second derivatives over h).
    follow, l = build(case)
    result = follow.taylor(l)
    h = 3e-3 * l
    values = {s: follow.taylor(l + s * h) for s in (-2, -1, 0, 1, 2)}
    for key in result:
        size = scale(result, key, l)
        f = {s: values[s][key][0] for s in values}
        first = (-f[2] + 8 * f[1] - 8 * f[-1] + f[-2]) / (12 * h)
        second = (-f[2] + 16 * f[1] - 30 * f[0] + 16 * f[-1] - f[-2]) / (12 * h**2)
        d2 = {s: values[s][key][2] for s in values}
        third = (-d2[2] + 8 * d2[1] - 8 * d2[-1] + d2[-2]) / (12 * h)
        assert np.max(np.abs(first - result[key][1])) * l <= 2e-9 * size, key
        assert np.max(np.abs(second - result[key][2])) * l**2 <= 2e-8 * size, key
        assert np.max(np.abs(third - result[key][3])) * l**3 <= 1e-6 * size, key


def complex_step_integrals(follow, l, h):
    """The plain integrals at the complex length l + ih, directly (no contour): exact roots
    continued to first order, β + ih dβ/dl (the O(h²) error is ~1e-40), complex μ, j."""
    beta = follow.exact_roots(l)
    beta_c = beta + 1j * h * follow.dbeta_dlength(l, beta)
    mu, j = follow.ratios(l + 1j * h)
    coefficients, _ = clamped_coefficients(beta_c, mu, j)
    nodes, weights = fine_rule(beta[-1])
    psi, slope, curvature = clamped_evaluate(np.append(nodes, 1.0), beta_c, coefficients, (0, 1, 2))
    psi_q, curv_q = psi[:, :-1], curvature[:, :-1]
    return {
        "mass": (psi_q * weights) @ psi_q.T,
        "first": psi_q @ weights,
        "moment": psi_q @ (weights * nodes),
        "stiffness": (curv_q * weights) @ curv_q.T,
        "tip_value": psi[:, -1],
        "tip_slope": slope[:, -1],
    }


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_first_derivative_matches_the_complex_step(case):
    # F'(l) = Im F(l + ih)/h exactly up to O(h²) for analytic F (no cancellation);
    # 1e-12 relative to the quantity's scale (the contour's first-order round-off is ~1e-14).
    follow, l = build(case)
    result = follow.taylor(l, 1)
    h = 1e-20 * l
    stepped = complex_step_integrals(follow, l, h)
    for key in PLAIN:
        size = scale(result, key, l)
        assert np.max(np.abs(stepped[key].real - result[key][0])) <= 1e-12 * size, key
        assert np.max(np.abs(stepped[key].imag / h - result[key][1])) * l <= 1e-12 * size, key


@pytest.mark.parametrize("case", CASES[:4], ids=IDS[:4])
def test_length_derivative_matches_finite_differences_of_evaluate(case):
    # ∂ψ/∂l|η against five-point central differences of evaluate() (exact roots), h = 3e-3 l:
    # truncation ~1e-9 relative (as above); tolerance 1e-8 of max|ψ|/l.
    follow, l = build(case)
    eta = np.linspace(0.0, 1.0, 23)
    h = 3e-3 * l
    psi = {s: follow.evaluate(eta, l + s * h)[0] for s in (-2, -1, 1, 2)}
    fd = (-psi[2] + 8 * psi[1] - 8 * psi[-1] + psi[-2]) / (12 * h)
    got = follow.length_derivative(eta, l)
    assert got.shape == (follow.modes, eta.size)
    assert np.max(np.abs(got - fd)) * l <= 1e-8 * np.max(np.abs(psi[1]))
    # evaluate() is ClampedMass(μ(l), j(l)).evaluate: ψ and dψ/dη, 1e-13.
    mu, j = follow.ratios(l)
    family = shapes.ClampedMass(mu, j)
    value, slope = follow.evaluate(eta, l)
    np.testing.assert_allclose(value, family.evaluate(eta, follow.modes, 0), rtol=0, atol=1e-13)
    np.testing.assert_allclose(slope, family.evaluate(eta, follow.modes, 1), rtol=0, atol=1e-12)


def test_contour_radius_shrinks_when_the_series_decays_slowly(monkeypatch):
    # Safety net: a radius of 0.6 l (the pole of μ, j at l = 0 is at distance l, so the
    # Taylor coefficients decay only like 0.6^k) fails the tail test and is halved until
    # it passes; the results then agree with the default radius (orders 0-2, 1e-10).
    import shapes.following as following

    follow, l = build(CASES[0])
    reference = follow.taylor(l)
    assert follow.stats["halvings"] == 0
    monkeypatch.setattr(following, "RADIUS_FRACTION", 0.6)
    wide = LengthFollowing(*CASES[0][:3], CASES[0][4])
    result = wide.taylor(l)
    assert wide.stats["halvings"] >= 1
    for key in result:
        for k in range(3):
            assert np.max(np.abs(result[key][k] - reference[key][k])) * l**k <= 1e-10 * scale(
                reference, key, l
            )
    monkeypatch.setattr(following, "MAX_HALVINGS", 0)
    with pytest.warns(RuntimeWarning, match="Taylor coefficients decay slowly"):
        LengthFollowing(*CASES[0][:3], CASES[0][4]).taylor(l)


def test_newton_terms_are_the_frequency_function_and_its_slope():
    # following._frequency_terms shares subexpressions of clamped_mass_partials' formulas;
    # same values to round-off (relative to the size of the terms), real and complex.
    from shapes.following import _frequency_terms

    rng = np.random.default_rng(7)
    for _ in range(200):
        beta, mu, j = rng.uniform(0.05, 80.0), 10 ** rng.uniform(-3, 3), 10 ** rng.uniform(-4, 2)
        size = 1 + mu * beta + j * beta**3 + mu * j * beta**4
        for args in ((beta, mu, j), (beta + 0.3j, mu * (1 + 0.1j), j * (1 - 0.2j))):
            f, f_beta = _frequency_terms(np.asarray(args[0]), args[1], args[2])
            expected = clamped_mass_partials(*args)
            assert abs(f - expected[0]) <= 1e-14 * size
            assert abs(f_beta - expected[1]) <= 1e-14 * size * (4 + 1 / beta)


def test_no_tip_load_means_frozen_shapes():
    # μ = j = 0 at every l: ψ does not depend on l, all derivatives vanish, g = −ηψ'.
    follow = LengthFollowing(0.0, 0.0, 0.5, 3)
    result = follow.taylor(0.8)
    for key in result:
        assert np.max(np.abs(result[key][1:])) <= 1e-13 * scale(result, key, 0.8), key
    np.testing.assert_allclose(follow.roots(0.8), shapes.ClampedFree().betas(3), rtol=1e-14)


# -- roots ------------------------------------------------------------------------------


@settings(max_examples=25)
@given(
    tip_mass=st.floats(0.0, 2.0),
    tip_inertia=st.floats(0.0, 0.02),
    rho_a=st.floats(0.2, 2.0),
    modes=st.integers(1, 5),
    lengths=st.lists(st.floats(0.1, 2.0), min_size=1, max_size=6),
    steps=st.lists(st.floats(-0.05, 0.05), min_size=1, max_size=6),
)
def test_root_tracker_equals_wittrick_williams_roots(tip_mass, tip_inertia, rho_a, modes, lengths, steps):
    # Continuation from the last solved length, over small steps and large jumps (random
    # lengths anywhere in [0.1, 2]): never another branch; 1e-12 relative.
    follow = LengthFollowing(tip_mass, tip_inertia, rho_a, modes)
    sequence = [x * (1 + s) for x in lengths for s in [0.0, *steps]]
    for l in sequence:
        mu, j = follow.ratios(l)
        np.testing.assert_allclose(follow.roots(l), clamped_mass_roots(modes, mu, j), rtol=1e-12, atol=0)


def test_dbeta_dlength_is_the_beta_ode_formula():
    # The implicit derivative of shapes.BetaODE (tested there against differences of roots).
    follow = LengthFollowing(0.0828, 1e-4, RHO_A, 4)
    for l in (0.3, 0.77, 1.3):
        beam = shapes.BetaODE(0.0828, 1e-4, RHO_A, l)
        beta = follow.exact_roots(l)
        np.testing.assert_allclose(follow.dbeta_dlength(l, beta), beam.dbeta_dlength(4), rtol=1e-12)
        off = beta * (1 + 1e-3)  # off the roots, as the "ode" tracker evaluates it
        np.testing.assert_allclose(
            follow.dbeta_dlength(l, off), beam.dbeta_dlength(4, l, betas=off), rtol=1e-14
        )


def test_continuation_is_used_and_verified():
    follow = LengthFollowing(0.0828, 1e-4, RHO_A, 4)
    for l in np.linspace(0.3, 1.3, 21):
        follow.exact_roots(l)
    assert follow.stats["solved"] == 1 and follow.stats["continued"] == 20
    follow.exact_roots(5.0)  # a jump: solved afresh
    assert follow.stats["solved"] == 2
    # A cached length is returned as is, and the result is a copy.
    first = follow.exact_roots(0.8)
    first[0] = -1.0
    assert follow.exact_roots(0.8)[0] > 0


def test_table_tracker_is_within_its_stated_error():
    # Module docstring: 4.7e-7 for the RRP link over [0.3, 1.3] m with 64 lengths.
    follow = LengthFollowing(0.0828, 1e-4, RHO_A, 4, tracker="table", lengths=(0.3, 1.3))
    exact = LengthFollowing(0.0828, 1e-4, RHO_A, 4)
    error = max(np.max(np.abs(follow.roots(l) - exact.exact_roots(l))) for l in np.linspace(0.3, 1.3, 97))
    assert error < 5e-7
    assert follow.table_error() < 5e-7
    # Nodes of the table are exact; taylor() uses the table's β with the exact variation.
    np.testing.assert_allclose(follow.roots(0.3), exact.exact_roots(0.3), rtol=1e-14)
    l = 0.77
    beta = follow.roots(l)  # off the exact roots by ≲ 5e-7: ∫ψ''ψ''ᵀ = diag(β⁴) to O(1e-6) β⁴
    stiffness = follow.taylor(l, 0)["stiffness"][0]
    assert np.max(np.abs(stiffness - np.diag(beta**4))) <= 1e-5 * beta[-1] ** 4
    with pytest.raises(ValueError, match="outside the tabulated lengths"):
        follow.roots(1.4)


def test_ode_tracker_uses_the_integrated_roots():
    follow = LengthFollowing(0.0828, 1e-4, RHO_A, 3, tracker="ode")
    l = 0.6
    exact = follow.exact_roots(l)
    np.testing.assert_array_equal(follow.roots(l), exact)  # unset: exact roots
    exact_result = follow.taylor(l)
    state = exact * (1 + 1e-4)
    follow.beta_state = state
    np.testing.assert_array_equal(follow.roots(l), state)
    result = follow.taylor(l)
    assert not np.array_equal(result["mass"][0], exact_result["mass"][0])  # new cache key
    # Order 0: the shapes built on β = beta_state (ClampedMass's construction off the roots).
    mu, j = follow.ratios(l)
    coefficients, _ = clamped_coefficients(state, mu, j)
    nodes, weights = fine_rule(state[-1])
    (psi,) = clamped_evaluate(nodes, state, coefficients, (0,))
    np.testing.assert_allclose(result["mass"][0], (psi * weights) @ psi.T, atol=1e-13)
    # Derivatives: the exact roots' variation, so they differ from the exact-root ones
    # by O(1e-4) only.
    for key in result:
        assert np.max(np.abs(result[key][1:] - exact_result[key][1:])) <= 1e-2 * scale(exact_result, key, l)
    follow.beta_state = None
    np.testing.assert_array_equal(follow.taylor(l)["mass"], exact_result["mass"])
    with pytest.raises(ValueError, match="beta_state must be 3 finite positive roots"):
        follow.beta_state = [1.0, 2.0]


def test_taylor_results_are_cached_and_read_only():
    follow = LengthFollowing(0.0828, 1e-4, RHO_A, 2)
    first = follow.taylor(0.5)
    contours = follow.stats["contours"]
    again = follow.taylor(0.5, 2)
    assert follow.stats["contours"] == contours
    assert set(first) == set(PLAIN + RATES)
    assert again["mass"].shape == (3, 2, 2) and np.shares_memory(again["mass"], first["mass"])
    with pytest.raises(ValueError):
        first["mass"][0, 0, 0] = 1.0


# -- complex safety of the shape machinery ---------------------------------------------


@pytest.mark.parametrize("mu, j", [(0.0, 0.0), (1.0, 0.1), (1000.0, 0.0), (0.0, 100.0), (3.0, 2.0)])
def test_shapes_are_complex_analytic_in_beta(mu, j):
    # At β + i·1e-30: the real part is the real evaluation (1e-15 of the size of its terms) and the
    # imaginary part over 1e-30 is ∂/∂β (central differences, h = 1e-6 β: truncation
    # ~1e-12 β², round-off 1e-10; tolerance 1e-6 relative) — off the roots too, as the
    # "ode" tracker evaluates shapes there.
    family = shapes.ClampedMass(mu, j)
    n = 12
    for beta in (family.betas(n), family.betas(n) * (1 + 1e-3)):
        eta = np.linspace(0.0, 1.0, 31)
        tiny = 1e-30
        real, decisions = clamped_coefficients(beta, mu, j)
        stepped, _ = clamped_coefficients(beta + 1j * tiny, mu, j)
        np.testing.assert_array_equal(real, family._coefficients_for(beta))
        # The decisions of a real call carry over to a complex one (same branch, same sign).
        cast, _ = clamped_coefficients(beta + 0j, mu, j, decisions)
        np.testing.assert_allclose(cast, real, rtol=0, atol=1e-14 * np.max(np.abs(real)))
        h = 1e-6 * beta
        upper, _ = clamped_coefficients(beta + h, mu, j)
        lower, _ = clamped_coefficients(beta - h, mu, j)
        for m in range(5):
            value = family._evaluate(eta, beta, real, m)
            complex_value = family._evaluate(eta, beta + 1j * tiny, stepped, m)
            # Round-off scale of the evaluation: the terms' size Σ|coefficient| β^m.
            size = (np.abs(real).sum(axis=1) * beta**m)[:, None]
            assert np.max(np.abs(complex_value.real - value) / size) <= 1e-15
            fd = (family._evaluate(eta, beta + h, upper, m) - family._evaluate(eta, beta - h, lower, m)) / (
                2 * h[:, None]
            )
            derivative = complex_value.imag / tiny
            assert np.max(np.abs(derivative - fd) / (size * (beta[:, None] + 1))) <= 1e-6, m
            shared = clamped_evaluate(eta, beta + 1j * tiny, stepped, (m,))[0]
            np.testing.assert_allclose(shared, complex_value, rtol=1e-14, atol=1e-14 * np.max(size))


def test_frequency_function_and_gram_are_complex_analytic():
    # Complex step in β, μ and j of f̃ gives the partial derivatives (derived by hand in
    # clamped_roots, tested there against finite differences); and of the closed-form
    # Gram matrix, central differences. Relative 1e-12 and 1e-7.
    tiny = 1e-30
    for beta, mu, j in [(1.3, 0.5, 0.02), (7.9, 10.0, 0.0), (25.0, 0.0, 3.0), (40.0, 100.0, 100.0)]:
        f, f_beta, f_mu, f_j = clamped_mass_partials(beta, mu, j)
        scale_f = 1 + mu * beta + j * beta**3 + mu * j * beta**4
        assert abs(clamped_mass_partials(beta + 1j * tiny, mu, j)[0].imag / tiny - f_beta) <= 1e-12 * scale_f
        assert abs(clamped_mass_partials(beta, mu + 1j * tiny, j)[0].imag / tiny - f_mu) <= 1e-12 * scale_f
        assert abs(clamped_mass_partials(beta, mu, j + 1j * tiny)[0].imag / tiny - f_j) <= 1e-12 * scale_f
        assert abs(clamped_mass_partials(beta + 0j, mu, j)[0].real - f) <= 1e-14 * scale_f
        b = np.array([beta])
        h = 1e-6 * beta
        fd = (basis_gram(b + h) - basis_gram(b - h)) / (2 * h)
        np.testing.assert_allclose(basis_gram(b + 1j * tiny).imag / tiny, fd, atol=1e-7)
        np.testing.assert_allclose(basis_gram(b + 1j * tiny).real, basis_gram(b), rtol=1e-15, atol=1e-16)


# -- arguments --------------------------------------------------------------------------


def test_arguments_are_validated_with_the_field_named():
    with pytest.raises(ValueError, match="tracker must be 'root' or 'table' or 'ode', got 'spline'"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="spline")
    with pytest.raises(ValueError, match=r"tracker 'table' needs lengths=\(l_min, l_max\)"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="table")
    with pytest.raises(ValueError, match=re.escape("mass_per_length must be > 0, got 0.0")):
        LengthFollowing(0.1, 0.0, 0.0, 2)
    with pytest.raises(ValueError, match=re.escape("mass_per_length must be > 0, got -1.0")):
        LengthFollowing(0.1, 0.0, -1.0, 2)
    with pytest.raises(ValueError, match=re.escape("tip_mass must be >= 0, got -0.1")):
        LengthFollowing(-0.1, 0.0, 1.0, 2)
    with pytest.raises(ValueError, match=re.escape("tip_inertia must be >= 0, got -1.0")):
        LengthFollowing(0.1, -1.0, 1.0, 2)
    with pytest.raises(ValueError, match="tip_mass must be finite"):
        LengthFollowing(float("nan"), 0.0, 1.0, 2)
    with pytest.raises(ValueError, match="modes must be an integer >= 1, got 0"):
        LengthFollowing(0.1, 0.0, 1.0, 0)
    with pytest.raises(ValueError, match=re.escape("modes must be an integer, got 2.0")):
        LengthFollowing(0.1, 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="lengths must satisfy l_min < l_max"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="table", lengths=(1.0, 0.5))
    with pytest.raises(ValueError, match=r"lengths\[0\] must be > 0, got 0.0"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="table", lengths=(0.0, 0.5))
    with pytest.raises(ValueError, match="lengths must be a pair"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="table", lengths=0.5)
    with pytest.raises(ValueError, match="table_points must be an integer >= 4, got 2"):
        LengthFollowing(0.1, 0.0, 1.0, 2, tracker="table", lengths=(0.2, 0.5), table_points=2)
    follow = LengthFollowing(0.1, 0.0, 1.0, 2)
    with pytest.raises(ValueError, match=re.escape("length must be > 0, got -0.5")):
        follow.taylor(-0.5)
    with pytest.raises(ValueError, match=re.escape("length must be > 0, got 0.0")):
        follow.roots(0.0)
    with pytest.raises(ValueError, match="order must be 0 … 3, got 4"):
        follow.taylor(0.5, 4)
    with pytest.raises(ValueError, match="eta must lie in"):
        follow.evaluate([0.5, 1.5], 0.5)
    with pytest.raises(ValueError, match="table_error needs tracker 'table'"):
        follow.table_error()
