"""β-ODE family: implicit derivative of the frequency equation and root tracking."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shapes
from shapes.clamped_roots import clamped_mass_partials

# The RRP reference arm (docs/MODEL.md, Reference arms), link 3: 0.4303 kg over 1.3 m, payload 0.0828 kg; the tip
# inertia is not given in the source, 1e-4 kg m² is our documented choice here.
RHO_A = 0.4303 / 1.3
PAYLOAD = 0.0828
TIP_INERTIA = 1e-4


def rrp_beam(length=0.3):
    return shapes.BetaODE(PAYLOAD, TIP_INERTIA, RHO_A, length)


def extension(t):
    """Cubic 0.3 → 1.0 m in 1 s, zero end rates (a smooth stand-in for the RRP arm's maneuver, docs/MODEL.md, Reference arms)."""
    return 0.3 + 0.7 * t**2 * (3 - 2 * t)


def extension_rate(t):
    return 0.7 * 6 * t * (1 - t)


@given(
    beta=st.floats(0.05, 60.0),
    mu=st.floats(0.0, 1000.0),
    j=st.floats(0.0, 100.0),
)
def test_partial_derivatives_match_finite_differences(beta, mu, j):
    _f, f_beta, f_mu, f_j = clamped_mass_partials(beta, mu, j)

    def fd(g, x, h):
        return (g(x + h) - g(x - h)) / (2 * h)

    scale = 1 + mu * beta + j * beta**3 + mu * j * beta**4  # size of the terms of f̃
    hb = 1e-6 * beta
    assert abs(fd(lambda b: clamped_mass_partials(b, mu, j)[0], beta, hb) - f_beta) < 1e-6 * scale / beta
    hm = 1e-6 * max(mu, 1.0)
    assert abs(fd(lambda m: clamped_mass_partials(beta, m, j)[0], mu, hm) - f_mu) < 1e-6 * scale / max(
        mu, 1.0
    )
    hj = 1e-6 * max(j, 1.0)
    assert abs(fd(lambda r: clamped_mass_partials(beta, mu, r)[0], j, hj) - f_j) < 1e-6 * scale / max(j, 1.0)


@given(
    length=st.floats(0.2, 2.0),
    tip_mass=st.floats(0.0, 5.0),
    tip_inertia=st.floats(0.0, 0.5),
)
def test_dbeta_dlength_matches_finite_differences_of_roots(length, tip_mass, tip_inertia):
    beam = shapes.BetaODE(tip_mass, tip_inertia, 0.5, length)
    h = 1e-5 * length
    fd = (beam.at_length(length + h).betas(4) - beam.at_length(length - h).betas(4)) / (2 * h)
    np.testing.assert_allclose(beam.dbeta_dlength(4), fd, rtol=1e-6, atol=1e-6)


def test_no_tip_load_means_fixed_dimensionless_roots():
    # μ = j = 0 for every l: β_k·l are the cantilever roots, dβ/dl = 0.
    beam = shapes.BetaODE(0.0, 0.0, 1.0, 0.7)
    np.testing.assert_array_equal(beam.dbeta_dlength(5), np.zeros(5))
    np.testing.assert_allclose(beam.betas(5), shapes.ClampedFree().betas(5), rtol=1e-14)


def test_family_at_length_is_clamped_mass_with_the_length_ratios():
    beam = rrp_beam(0.6)
    mu, j = PAYLOAD / (RHO_A * 0.6), TIP_INERTIA / (RHO_A * 0.6**3)
    assert beam.ratios(0.6) == pytest.approx((mu, j), rel=1e-15)
    np.testing.assert_array_equal(beam.betas(6), shapes.ClampedMass(mu, j).betas(6))


@pytest.mark.parametrize("method, tolerance", [("ode", 1e-8), ("table", 1e-6), ("root", 0.0)])
def test_tracking_methods_agree_with_root_solves(method, tolerance):
    t = np.linspace(0.0, 1.0, 41)
    reference = rrp_beam().track(t, extension, 4, "root")
    history = rrp_beam().track(t, extension, 4, method, length_rate=extension_rate)
    np.testing.assert_allclose(history.length, extension(t), rtol=1e-15)
    np.testing.assert_allclose(history.betas, reference.betas, rtol=tolerance, atol=0)
    assert history.evaluations > 0
    assert np.max(history.root_error / history.betas) < max(tolerance, 1e-14)


def test_retraction_reverses_extension():
    t = np.linspace(0.0, 1.0, 21)
    out = rrp_beam().track(t, extension, 3, "ode", length_rate=extension_rate)
    back = rrp_beam(1.0).track(
        t, lambda s: extension(1 - s), 3, "ode", length_rate=lambda s: -extension_rate(1 - s)
    )
    np.testing.assert_allclose(back.betas[:, ::-1], out.betas, rtol=1e-8)


def test_tracking_errors_name_the_problem():
    beam = rrp_beam()
    t = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="method must be one of"):
        beam.track(t, extension, 2, "spline")
    with pytest.raises(ValueError, match="needs length_rate"):
        beam.track(t, extension, 2, "ode")
    with pytest.raises(ValueError, match=r"length\(t\) must be finite and > 0, got 0 at t=0.5"):
        beam.track(t, lambda s: 0.5 - s, 2, "root")
    with pytest.raises(ValueError, match="strictly increasing"):
        beam.track(t[::-1], extension, 2, "root")
    with pytest.raises(ValueError, match=r"length must be > 0, got 0.0"):
        shapes.BetaODE(0.1, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="tip_mass must be >= 0, got -1"):
        shapes.BetaODE(-1, 0.0, 1.0, 1.0)
