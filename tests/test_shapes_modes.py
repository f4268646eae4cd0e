"""Mode shapes: boundary conditions, orthonormality, modal integrals, registry."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.integrate
from hypothesis import given, settings
from hypothesis import strategies as st

import shapes

# Every family, including clamped-mass at the corners of the required range
# (μ ∈ [0, 1000], j ∈ [0, 100]) and a translating beam (RRP preset values, docs/MODEL.md, Reference arms).
FAMILIES = [
    shapes.PinnedPinned(),
    shapes.ClampedFree(),
    shapes.ClampedMass(1.0, 0.1),
    shapes.ClampedMass(1000.0, 0.0),
    shapes.ClampedMass(0.0, 100.0),
    shapes.ClampedMass(1000.0, 100.0),
    shapes.BetaODE(tip_mass=0.0828, tip_inertia=1e-4, mass_per_length=0.4303 / 1.3, length=0.3),
]
IDS = [repr(f) for f in FAMILIES]

# docs/MODEL.md, Mode shapes: "100 modes of every family orthonormal to 1e-10 and satisfying their
# boundary conditions to 1e-10 relative".
SPEC_TOLERANCE = 1e-10


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
@pytest.mark.parametrize("n", [10, 50, 100])
def test_orthonormal_in_the_family_inner_product(family, n):
    # Quadrature of ∫φ_iφ_j plus the tip terms, independent of the closed-form
    # Gram matrix used to normalize.
    error = np.max(np.abs(family.inner_product_matrix(n) - np.eye(n)))
    assert error < SPEC_TOLERANCE


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_boundary_conditions_hold_for_100_modes(family):
    assert np.max(family.boundary_residuals(100)) < SPEC_TOLERANCE


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_stiffness_integrals_are_beta_to_the_fourth(family):
    # ∫φ_i''φ_j'' = β_i⁴ δ_ij for every family (integrate by parts twice and
    # use the boundary conditions; see shapes.base).
    m = family.integrals(100)
    scaled = m.stiffness / np.outer(m.betas**2, m.betas**2)
    assert np.max(np.abs(scaled - np.eye(100))) < SPEC_TOLERANCE


def test_clamped_mass_tip_conditions_explicitly():
    # φ'''(1) = −μβ⁴φ(1) and φ''(1) = jβ⁴φ'(1): the shear and moment balance
    # of the tip mass M and inertia J, written out here rather than via
    # boundary_residuals().
    mu, j = 2.5, 0.3
    fam = shapes.ClampedMass(mu, j)
    b = fam.betas(20)
    tip = [fam.evaluate(1.0, 20, m)[:, 0] for m in range(4)]
    np.testing.assert_allclose(tip[3], -mu * b**4 * tip[0], rtol=1e-11, atol=1e-11 * b[-1] ** 3)
    np.testing.assert_allclose(tip[2], j * b**4 * tip[1], rtol=1e-11, atol=1e-11 * b[-1] ** 2)
    root = [fam.evaluate(0.0, 20, m)[:, 0] for m in range(2)]
    np.testing.assert_allclose(root[0], 0, atol=1e-13)
    np.testing.assert_allclose(root[1], 0, atol=1e-13 * b[-1])


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_shapes_satisfy_the_beam_equation(family):
    # φ'''' = β⁴ φ at interior points.
    eta = np.linspace(0.05, 0.95, 19)
    b = family.betas(30)
    np.testing.assert_allclose(
        family.evaluate(eta, 30, 4),
        b[:, None] ** 4 * family.evaluate(eta, 30, 0),
        atol=1e-12 * b[-1] ** 4,
    )


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_derivatives_match_finite_differences(family):
    eta = np.linspace(0.1, 0.9, 9)
    h = 1e-6
    for m in range(3):
        fd = (family.evaluate(eta + h, 8, m) - family.evaluate(eta - h, 8, m)) / (2 * h)
        exact = family.evaluate(eta, 8, m + 1)
        np.testing.assert_allclose(fd, exact, atol=1e-6 * family.betas(8)[-1] ** (m + 3))


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_fewer_modes_are_the_leading_block(family):
    # The n-mode basis is the leading part of the (n+k)-mode one, whatever
    # was computed first (fresh copies, large request first). Roots and
    # shapes are per-mode computations; the integrals use a quadrature rule
    # sized for the highest mode, so they agree to round-off.
    fresh = type(family)(*_params(family))
    big = fresh.integrals(40)
    small = fresh.integrals(7)
    np.testing.assert_allclose(small.betas, big.betas[:7], rtol=1e-15)
    np.testing.assert_allclose(small.mass, big.mass[:7, :7], rtol=0, atol=1e-14)
    np.testing.assert_allclose(
        small.stiffness, big.stiffness[:7, :7], rtol=0, atol=1e-14 * small.betas[-1] ** 4
    )
    np.testing.assert_allclose(small.mean, big.mean[:7], rtol=0, atol=1e-14)


def _params(family):
    if isinstance(family, shapes.BetaODE):
        return (family.tip_mass, family.tip_inertia, family.mass_per_length, family.length)
    if type(family) is shapes.ClampedMass:
        return (family.mass_ratio, family.inertia_ratio)
    return ()


def test_sign_conventions():
    # Documented: clamped families have φ(1) > 0; pinned-pinned has φ'(0) = √2 kπ > 0.
    for fam in FAMILIES[1:]:
        assert np.all(fam.evaluate(1.0, 50)[:, 0] > 0)
    pp = shapes.PinnedPinned().integrals(10)
    np.testing.assert_allclose(pp.root_slope, np.sqrt(2) * np.pi * np.arange(1, 11), rtol=1e-14)
    np.testing.assert_allclose(shapes.ClampedFree().integrals(10).root_slope, 0, atol=1e-12)


def test_known_cantilever_constants():
    # Blevins (1979), Table 8-1: the normalized cantilever tip deflection is
    # |φ(1)| = 2 for every mode, and σ₁ = 0.734095514 gives
    # ∫φ₁ dη = 2σ₁/β₁ = 0.7830 (the mode participation factor).
    m = shapes.ClampedFree().integrals(5)
    np.testing.assert_allclose(m.tip_value, 2.0, rtol=1e-12)
    np.testing.assert_allclose(m.mean[0], 2 * 0.734095514 / 1.87510407, rtol=1e-8)


@given(
    family_index=st.integers(0, len(FAMILIES) - 1),
    i=st.integers(0, 11),
    k=st.integers(0, 11),
)
@settings(max_examples=25)
def test_modal_integrals_match_brute_force_quadrature(family_index, i, k):
    """Adaptive scipy.integrate.quad on single entries vs the composite Gauss rule."""
    fam = FAMILIES[family_index]
    m = fam.integrals(12)

    def quad(fun, scale=1.0):
        # quad warns when round-off stops it short of the requested tolerance
        # (integrals that vanish by orthogonality); check its own error estimate instead.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)
            value, error = scipy.integrate.quad(fun, 0, 1, limit=400, epsabs=1e-14, epsrel=1e-13)
        assert error < 1e-11 * scale
        return value

    phi = lambda e, r, d=0: fam.evaluate(e, 12, d)[r, 0]  # noqa: E731
    assert abs(m.mass[i, k] - quad(lambda e: phi(e, i) * phi(e, k))) < 1e-11
    assert (
        abs(m.stiffness[i, k] - quad(lambda e: phi(e, i, 2) * phi(e, k, 2), m.betas[-1] ** 4))
        < 1e-11 * m.betas[-1] ** 4
    )
    assert (
        abs(m.slope_products[i, k] - quad(lambda e: phi(e, i, 1) * phi(e, k, 1), m.betas[-1] ** 2))
        < 1e-11 * m.betas[-1] ** 2
    )
    assert abs(m.mean[i] - quad(lambda e: phi(e, i))) < 1e-11
    assert abs(m.first_moment[i] - quad(lambda e: e * phi(e, i))) < 1e-11
    weighted = fam.weighted_slope_products(12, lambda e: 1 - e)
    assert (
        abs(weighted[i, k] - quad(lambda e: (1 - e) * phi(e, i, 1) * phi(e, k, 1), m.betas[-1] ** 2))
        < 1e-11 * m.betas[-1] ** 2
    )


def test_registry_builds_every_family_and_rejects_bad_input():
    assert set(shapes.FAMILIES) == {"pinned-pinned", "clamped-free", "clamped-mass", "beta-ode", "fe-modes"}
    assert shapes.family("clamped-mass", mass_ratio=1.0, inertia_ratio=0.1) == shapes.ClampedMass(1.0, 0.1)
    assert shapes.family("clamped-mass") == shapes.ClampedMass(0.0, 0.0)
    assert isinstance(shapes.family("pinned-pinned"), shapes.PinnedPinned)
    with pytest.raises(ValueError, match="unknown shape family 'free-free'"):
        shapes.family("free-free")
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['mass'\]"):
        shapes.family("clamped-mass", mass=1.0)
    with pytest.raises(ValueError, match=r"missing parameter\(s\) \['length'\]"):
        shapes.family("beta-ode", tip_mass=1.0, tip_inertia=0.0, mass_per_length=1.0)
    with pytest.raises(ValueError, match=r"mass_ratio must be >= 0, got -1.0"):
        shapes.family("clamped-mass", mass_ratio=-1.0)
    with pytest.raises(ValueError, match="inertia_ratio must be finite, got nan"):
        shapes.ClampedMass(0.0, float("nan"))


def test_argument_errors():
    fam = shapes.ClampedFree()
    with pytest.raises(ValueError, match="number of modes must be an integer >= 1, got 0"):
        fam.betas(0)
    with pytest.raises(ValueError, match="number of modes must be an integer, got"):
        fam.betas(2.5)
    with pytest.raises(ValueError, match="eta must lie in"):
        fam.evaluate([0.5, 1.2], 3)
    with pytest.raises(ValueError, match="derivative must be"):
        fam.evaluate([0.5], 3, derivative=5)
