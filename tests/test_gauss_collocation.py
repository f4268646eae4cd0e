"""Gauss–Legendre collocation (core.numerics.gauss_collocation) and ``simulate(method="Gauss")``.

References: the order conditions and the symplecticity condition b_i a_ij + b_j a_ji = b_i b_j
of the Gauss methods (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, 2nd ed.,
Thm. VI.4.3 and §II.1.3); a quadratic invariant (the energy of a linear oscillator) is kept
to round-off at any step; the pendulum reference is DOP853 at rtol 1e-13.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from amm import AssumedModesModel
from core import Arm, Joint
from core.analysis.simulation import SimulationError, energy_drift, simulate
from core.arm import presets
from core.numerics.gauss_collocation import GaussLegendre, butcher_tableau


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_tableau_order_and_symplecticity(stages):
    A, b, c = butcher_tableau(stages)
    for k in range(1, 2 * stages + 1):  # B(2s): quadrature of order 2s
        assert b @ c ** (k - 1) == pytest.approx(1.0 / k, abs=1e-14)
    for k in range(1, stages + 1):  # C(s): the stage order
        np.testing.assert_allclose(A @ c ** (k - 1), c**k / k, atol=1e-14)
    symplectic = b[:, None] * A + (b[:, None] * A).T - np.outer(b, b)
    np.testing.assert_allclose(symplectic, 0.0, atol=1e-14)


def _pendulum(t, y):
    return np.array([y[1], -np.sin(y[0])])


def _pendulum_jacobian(t, y):
    return np.array([[0.0, 1.0], [-np.cos(y[0]), 0.0]])


def test_pendulum_converges_at_order_six():
    """Fitted order of the end-point error over h = 0.4 … 0.05 on a 10 s swing from 2 rad: 6 ± 0.3."""
    reference = solve_ivp(_pendulum, (0, 10), [2.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    steps = np.array([0.4, 0.2, 0.1])
    errors = []
    for h in steps:
        solution = solve_ivp(
            _pendulum,
            (0, 10),
            [2.0, 0.0],
            method=GaussLegendre,
            step=h,
            jac=_pendulum_jacobian,
            rtol=1e-13,
            atol=1e-14,
        )
        assert solution.success
        errors.append(np.abs(solution.y[:, -1] - reference).max())
    order = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert order == pytest.approx(6.0, abs=0.3)


def test_pendulum_energy_error_stays_bounded():
    """No drift: over 400 s (≈ 50 periods) at h = 0.25 the energy error of the second half is
    no larger than 1.5 × the first half's, and below 1e-6 (it is O(h⁶))."""
    t_eval = np.arange(0.0, 400.0 + 1e-9, 0.25)
    solution = solve_ivp(_pendulum, (0, 400), [2.0, 0.0], method=GaussLegendre, step=0.25, t_eval=t_eval)
    energy = 0.5 * solution.y[1] ** 2 - np.cos(solution.y[0])
    error = np.abs(energy - energy[0])
    half = error.size // 2
    assert error.max() < 1e-6
    assert error[half:].max() <= 1.5 * error[:half].max()


def test_stiff_oscillator_keeps_its_energy_at_large_steps():
    """h ω = 100: the quadratic energy is kept to round-off (1e-12 relative, one Jacobian).
    The contrast, and why Radau's tolerance is loose here: at rtol 1e-3 Radau too takes steps
    that do not resolve the oscillation (1 733 steps over 0.1 s, h ω ≈ 0.6 on average), and it
    damps it: the energy falls by 1.8 % (measured; asserted > 1e-3). At rtol 1e-6 it has to
    resolve it (10 017 steps) and still loses 2.8e-6."""
    omega = 1e4

    def f(t, y):
        return np.array([y[1], -(omega**2) * y[0]])

    def jac(t, y):
        return np.array([[0.0, 1.0], [-(omega**2), 0.0]])

    def energy(y):
        return 0.5 * y[1] ** 2 + 0.5 * omega**2 * y[0] ** 2

    gauss = solve_ivp(f, (0, 1), [1.0, 0.0], method=GaussLegendre, step=1e-2, jac=jac)
    assert gauss.success and gauss.njev == 1
    assert np.abs(energy(gauss.y) / energy(gauss.y[:, 0]) - 1).max() < 1e-12
    radau = solve_ivp(f, (0, 0.1), [1.0, 0.0], method="Radau", jac=jac, rtol=1e-3, atol=1e-6, max_step=1e-2)
    assert energy(radau.y[:, -1]) / energy(radau.y[:, 0]) < 1 - 1e-3


def test_dense_output_is_the_collocation_polynomial():
    """At step ends the step values themselves; between them within O(h^(s+1)) of the reference."""
    h = 0.1
    solution = solve_ivp(_pendulum, (0, 2), [2.0, 0.0], method=GaussLegendre, step=h, dense_output=True)
    steps = solve_ivp(
        _pendulum, (0, 2), [2.0, 0.0], method=GaussLegendre, step=h, t_eval=np.arange(0, 2.05, h)
    )
    np.testing.assert_array_equal(solution.sol(steps.t[5]), steps.y[:, 5])
    reference = solve_ivp(
        _pendulum, (0, 2), [2.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-14, dense_output=True
    )
    middle = np.arange(0.05, 2.0, h)
    assert np.abs(solution.sol(middle) - reference.sol(middle)).max() < 1e-4  # h⁴ = 1e-4


def test_the_span_is_cut_into_equal_steps():
    solution = solve_ivp(_pendulum, (0, 1), [2.0, 0.0], method=GaussLegendre, step=0.3)
    np.testing.assert_allclose(np.diff(solution.t), 0.25, rtol=1e-12)
    assert solution.t[-1] == 1.0


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "step must be a positive number"),
        ({"step": -0.1}, "step must be a positive number"),
        ({"step": float("nan")}, "step must be a positive number"),
        ({"step": 0.1, "stages": 0}, "stages must be an integer from 1 to 6"),
        ({"step": 0.1, "rtol": 0.0}, "rtol must be positive"),
    ],
)
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        solve_ivp(_pendulum, (0, 1), [2.0, 0.0], method=GaussLegendre, **options)


def test_unknown_option_is_refused():
    with pytest.raises(TypeError, match="max_step"):
        solve_ivp(_pendulum, (0, 1), [2.0, 0.0], method=GaussLegendre, step=0.1, max_step=0.1)


def test_a_step_without_a_solution_fails_with_where_and_why():
    """y′ = y² from 1: the implicit midpoint equation z = (1 + z/2)² of a unit step has no real
    root, so the iterations cannot converge; the failure names the time and the step."""
    solution = solve_ivp(lambda t, y: y**2, (0, 2), [1.0], method=GaussLegendre, step=1.0, stages=1)
    assert solution.status == -1
    assert "did not converge at t = 0.0 with step 1.0" in solution.message


def _swinging_arm(friction: bool = False) -> AssumedModesModel:
    """The lumped two-link arm (2 clamped-mass modes per link) under gravity, its joint
    friction removed unless ``friction``."""
    arm = presets.lumped_two_link()
    if not friction:
        joints = [Joint(a=arm.joints[0].a), Joint(a=arm.joints[1].a, hub_mass=arm.joints[1].hub_mass)]
        arm = Arm.planar(arm.links, payload=arm.payload, gravity=(0.0, -9.81, 0.0), joints=joints)
    return AssumedModesModel(arm, modes=2)


def _start(model):
    q0 = np.zeros(model.n_dof)
    q0[:2] = math.pi / 4, -math.pi / 4
    return q0


def test_simulate_gauss_conserves_the_energy_of_a_flexible_swing():
    """The friction-free lumped arm released at rest from (45°, −45°), 0.2 s at h = 1e-3 and
    5e-4: the energy balance holds to 1e-10 relative at both (measured 1.5e-13, 1.9e-13), and
    the joint angle's error against DOP853 at rtol 1e-12 falls at order 6 ± 0.5 (measured
    2.4e-6 → 3.8e-8 rad, order 5.98); ``frame.attrs`` records the method and its Jacobians."""
    model = _swinging_arm()
    errors = []
    for step in (1e-3, 5e-4):
        frame = simulate(
            model, (0, 0.2), _start(model), method="Gauss", step=step, t_eval=np.linspace(0, 0.2, 21)
        )
        assert frame.attrs["method"] == "Gauss" and frame.attrs["njev"] >= 1
        assert energy_drift(frame) < 1e-10
        dop = simulate(
            model, (0, 0.2), _start(model), method="DOP853", rtol=1e-12, atol=1e-14, t_eval=frame["time"]
        )
        errors.append(np.abs(frame["theta1"] - dop["theta1"]).max())
    assert math.log2(errors[0] / errors[1]) == pytest.approx(6.0, abs=0.5)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"method": "Gauss"}, "step: the fixed step of method 'Gauss' only"),
        ({"method": "DOP853", "step": 1e-3}, "step"),
    ],
)
def test_simulate_step_belongs_to_gauss(options, match):
    model = _swinging_arm()
    with pytest.raises(ValueError, match=match):
        simulate(model, (0, 0.1), _start(model), **options)


def test_simulate_failing_before_the_first_output_keeps_an_empty_frame():
    """Smoothed Coulomb friction at rest is far from linear over a 1 ms step (the iterations
    contract at ≈ 0.6 and stop): the run fails in its first step, before any output time, and
    SimulationError carries an empty frame (SciPy leaves lists there)."""
    model = _swinging_arm(friction=True)
    with pytest.raises(SimulationError, match=r"did not converge at t = 0\.0 with step 0\.001") as failure:
        simulate(model, (0, 0.2), _start(model), method="Gauss", step=1e-3, t_eval=[0.1, 0.2])
    assert failure.value.frame.empty


_STUDY = """
[study]
name = "gauss"
kind = "simulation"

[arm]
preset = "one-flexible-link"

[sweep]
backends = ["fem"]
elements = [2]

[analysis]
t_end = 0.1
controller = {{ kind = "pd", kp = 5.0, kd = 0.0 }}
trajectory = {{ kind = "parabolic-blend", q_end = [0.3], T = 0.1, blend = 0.05 }}
output_points = 11
{method}
"""


def test_a_simulation_study_runs_gauss_with_its_step(tmp_path):
    """``method = "Gauss"`` with ``step`` in a study: the case runs and records the method; the
    undamped PD-driven arm's energy balance holds to 1e-9 of its energy (measured 6.3e-11)."""
    import pandas as pd

    from studies import cli

    config = tmp_path / "gauss.toml"
    config.write_text(_STUDY.format(method='method = "Gauss"\nstep = 1e-3'))
    assert cli.main(["run", str(config), "--output", str(tmp_path / "out")]) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(results) == 11
    assert results["energy_balance_error"].abs().max() <= 1e-9 * results["energy"].abs().max()


@pytest.mark.parametrize(
    ("method", "value"),
    [('method = "Gauss"', "step None"), ('method = "Radau"\nstep = 1e-3', "step 0.001")],
)
def test_a_study_step_belongs_to_gauss(tmp_path, capsys, method, value):
    from studies import cli

    config = tmp_path / "gauss.toml"
    config.write_text(_STUDY.format(method=method))
    assert cli.main(["show", str(config)]) == 2
    err = capsys.readouterr().err
    assert "analysis.step: the fixed step of method 'Gauss' only" in err and value in err
