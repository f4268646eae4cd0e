"""The integrals of length-following shapes read from Chebyshev series in the free length
(shapes.following_series, core.numerics.chebyshev) against their direct evaluation.

References:

* the direct evaluation, :meth:`shapes.following.LengthFollowing.taylor` with ``series=False``
  (contour quadrature at every length, tested in tests/test_following.py against
  ``shapes.ClampedMass`` integrals, differences and the complex step);
* for the generic fit, closed-form functions (1/x, e^x, a Runge-type pole near the interval,
  a jump);
* for the engine, a simulation of the rrp-stability study's following case (Theodore &
  Ghosal 1997: the RRP arm, beta-ode shapes, decoupling controller, extension) with the
  series and with the direct evaluation.

Errors of an integral's k-th l-derivative are relative to its size over the orders,
max_j |F⁽ʲ⁾| l^j / l^k (the measure of shapes.following).
"""

from __future__ import annotations

import numpy as np
import pytest

from amm import AssumedModesModel
from core.analysis.controllers import Decoupling
from core.analysis.simulation import simulate
from core.analysis.trajectories import ParabolicBlend
from core.arm.presets import rrp_translating
from core.numerics.chebyshev import PiecewiseChebyshev, fit
from shapes.following import LengthFollowing, _fitted_series
from shapes.following_series import MAX_DEVIATION

# The RRP link 3 of docs/MODEL.md, Reference arms, with its payload as the engine passes it
# (the lengths a model spans by default: a tenth of the beam to all of it), and a heavier load.
RRP = (0.0828, 0.0, 0.4303 / 1.3, 2, (0.13, 1.3))
HEAVY = (1.0, 0.01, 0.5, 3, (0.2, 2.0))
#: Stated bounds of the series against the direct evaluation, orders 0 … 3: the fit's
#: tolerance (1e-13, 1e-12, 1e-11, 1e-10) plus the direct evaluation's own error, which both
#: the fitted samples and the reference carry (≲ 3e-15, 7e-14, 3e-12, 4.4e-11 each).
BOUNDS = (1e-12, 1e-12, 2e-11, 2e-10)


def orders_error(result: dict, reference: dict, l: float) -> np.ndarray:
    """Largest error of each order over the integrals, in the measure of the module docstring."""
    worst = np.zeros(4)
    for key, value in reference.items():
        size = max(np.max(np.abs(value[k])) * l**k for k in range(4))
        for k in range(4):
            worst[k] = max(worst[k], np.max(np.abs(result[key][k] - value[k])) * l**k / size)
    return worst


# -- the generic fit ---------------------------------------------------------------------


def test_fit_reaches_its_tolerance_on_analytic_functions():
    def f(x):
        return np.array([1.0 / x, np.exp(x), 1.0 / ((x - 0.7) ** 2 + 1e-4)])

    series = fit(f, (0.13, 1.3), lambda v: 1e-13 * np.abs(v).max(axis=0))
    # The pole 0.01 from x = 0.7 makes one degree-64 series impossible: panels are bisected.
    assert len(series.degrees) > 1 and None not in series.degrees
    x = np.random.default_rng(3).uniform(0.13, 1.3, 500)
    sizes = np.abs(np.array([f(t) for t in np.linspace(0.13, 1.3, 2001)])).max(axis=0)
    error = max(float(np.max(np.abs(series(t) - f(t)) / sizes)) for t in x)
    # the tolerance: 1e-13 of each component's largest sample on the panel (≤ its largest value)
    assert error <= 1e-12, error  # measured 6e-14
    assert series(1.4) is None and series(0.1) is None


def test_fit_gives_up_on_a_jump():
    series = fit(lambda x: np.array([np.sign(x - 0.5)]), (0.0, 1.0), lambda v: np.full(v.shape[1], 1e-12))
    assert isinstance(series, PiecewiseChebyshev)
    assert None in series.degrees
    assert series(0.5 + 1e-9) is None or series(0.5 - 1e-9) is None
    assert series(0.1)[0] == pytest.approx(-1.0, abs=1e-12)
    with pytest.raises(ValueError, match="interval"):
        fit(lambda x: np.array([x]), (1.0, 1.0), lambda v: np.ones(1))


# -- the integrals -----------------------------------------------------------------------


@pytest.mark.parametrize("case", [RRP, HEAVY], ids=["rrp", "heavy"])
def test_series_equals_the_direct_evaluation(case):
    """``taylor`` with the series against the direct evaluation at 40 random lengths in range;
    measured 9e-15, 1.6e-14, 5.9e-13, 3.8e-11 (rrp, 200 lengths) and 1.8e-14, 1.5e-13, 4.4e-12,
    1.1e-10 (heavy) at orders 0–3. The heavy
    load has modes whose tip deflection changes sign (ψ jumps there, shapes.following): the
    panels the fit gives up are exactly around those lengths, and ``taylor`` evaluates there
    directly."""
    follow = LengthFollowing(*case[:4], lengths=case[4])
    direct = LengthFollowing(*case[:4], series=False)
    worst = np.zeros(4)
    for l in np.random.default_rng(7).uniform(*case[4], 40):
        worst = np.maximum(worst, orders_error(follow.taylor(l), direct.taylor(l), l))
    assert np.all(worst <= BOUNDS), worst
    series = _fitted_series(*case)
    breaks = series.series.breaks
    for i, degree in enumerate(series.degrees):
        if degree is None:
            # ψ_k(1) ≥ 0 by convention: it touches zero there with a kink, d/dl changes sign
            ends = [direct.taylor(x, 1)["tip_value"][1] for x in breaks[i : i + 2]]
            assert np.any(ends[0] * ends[1] < 0), (breaks[i : i + 2], ends)
    assert (None in series.degrees) == (case is HEAVY)
    assert follow.stats["series"] > 0


def test_roots_off_the_exact_ones_to_first_order():
    """Tracker roots β = β_exact (1 ± 9.9e-7): the series' first-order correction against the
    direct evaluation at those roots; the second-order remainder is ~ (β ε)² (measured
    2.6e-11 at order 0); beyond MAX_DEVIATION the series declines."""
    series = _fitted_series(*RRP)
    direct = LengthFollowing(*RRP[:4], series=False)
    rng = np.random.default_rng(11)
    worst = np.zeros(4)
    for l in rng.uniform(*RRP[4], 30):
        beta = direct.exact_roots(l) * (1 + 0.99 * MAX_DEVIATION * rng.choice([-1.0, 1.0], RRP[3]))
        worst = np.maximum(worst, orders_error(series(l, beta), direct._compute_taylor(l, beta), l))
    assert np.all(worst <= (1e-10, 1e-11, 2e-11, 2e-10)), worst
    assert series(0.5, direct.exact_roots(0.5) * (1 + 2 * MAX_DEVIATION)) is None


def test_taylor_uses_the_series_inside_its_lengths_only():
    follow = LengthFollowing(*RRP[:4], tracker="ode", lengths=RRP[4])
    reference = LengthFollowing(*RRP[:4], series=False)
    result = follow.taylor(0.6)
    assert follow.stats["series"] == 1 and follow.stats["contours"] == 0
    assert np.all(orders_error(result, reference.taylor(0.6), 0.6) <= BOUNDS)
    follow.taylor(1.5)  # outside: directly
    assert follow.stats["series"] == 1 and follow.stats["contours"] >= 1
    contours = follow.stats["contours"]
    follow.beta_state = follow.exact_roots(0.6) * (1 + 1e-4)  # too far from the exact roots
    far = follow.taylor(0.6)
    assert follow.stats["contours"] > contours
    np.testing.assert_allclose(
        far["mass"], reference._compute_taylor(0.6, follow.beta_state)["mass"], atol=1e-13
    )
    with pytest.raises(ValueError, match="series"):
        LengthFollowing(*RRP[:4], series=1)


# -- the engine ---------------------------------------------------------------------------


def _extension(series: bool):
    """The first 0.15 s of the rrp-stability extension (0.3 → 1.0 m in 1 s, joints 0 → (π, −π/2),
    decoupling controller kp 100, kd 20, beta-ode shapes with 2 modes, reference 1.0 m), from
    rest with the first in-plane modal coordinate at 1 mm, LSODA at the study's rtol 1e-5,
    atol 1e-7."""
    arm = rrp_translating()
    model = AssumedModesModel(arm, shape="beta-ode", modes=2, reference=[0.0, 0.0, 1.0])
    model.bodies[3].following.series = series
    start, end = np.array([0.0, 0.0, 0.3]), np.array([np.pi, -np.pi / 2, 1.0])
    trajectory = ParabolicBlend(tuple(start), tuple(end), 1.0, 0.25)
    q0 = model.home()
    q0[:3] = start
    q0[model.flex] = [1e-3, 0.0, 0.0, 0.0]
    times = np.linspace(0.0, 0.15, 16)
    frame = simulate(
        model,
        (0.0, 0.15),
        q0,
        controller=Decoupling(kp=100.0, kd=20.0),
        trajectory=trajectory,
        method="LSODA",
        solver="recursive",
        rtol=1e-5,
        atol=1e-7,
        t_eval=times,
    )
    return model, frame


@pytest.mark.slow
def test_simulated_extension_equals_the_direct_evaluation():
    """The series changes the right-hand side by ≲ 1e-12 relative, far below the integrator's
    tolerance, yet LSODA's step choices diverge between the runs, so they agree to the
    integration error: within atol = 1e-7 in every coordinate and integrated root (measured
    3.4e-9 at most over these 0.15 s, 2.5e-8 over 0.3 s, in the deflections of ~1e-3 m)."""
    model, fast = _extension(True)
    assert model.bodies[3].following.stats["series"] > 0
    _, slow = _extension(False)
    columns = ["d3", "w3_1", "w3_2", "v3_1", "v3_2", "beta3_1", "beta3_2"]
    difference = np.max(np.abs(fast[columns].to_numpy() - slow[columns].to_numpy()), axis=0)
    assert np.all(difference <= 1e-7), difference
