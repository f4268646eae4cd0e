"""The compiled DOP853 of :mod:`core.analysis.explicit` against SciPy's ``solve_ivp(method=
"DOP853")``, which it reimplements step for step: the same right-hand sides, the same times and
the same states to round-off; which runs take it; its errors and progress."""

from __future__ import annotations

import numpy as np
import pytest

from amm.model import AssumedModesModel
from core.analysis import explicit, simulation
from core.analysis.controllers import PD, Decoupling, FeedForward
from core.analysis.simulation import simulate
from core.analysis.trajectories import Cycloidal, ParabolicBlend
from core.arm.presets import PRESETS

#: The states of the two integrators agree far below the tolerance when they take the same steps
#: (measured, space arm over 1 s at rtol 1e-7: 5e-14 in the coordinates and rates, 1e-11 in the
#: joint accelerations); a different step sequence would differ by ~rtol.
SAME_STEPS = 1e-10


@pytest.fixture(scope="module")
def space_arm():
    arm = PRESETS["space-arm-3link"]()
    return arm, AssumedModesModel(arm, "clamped-free", 2)


def _scipy(monkeypatch):
    """Make every run take solve_ivp (what the compiled path is checked against)."""
    monkeypatch.setattr(simulation._Run, "compiled_explicit", lambda self, t0, t1: None)


def _states(frame):
    return frame.filter(regex=r"^(theta\d|[wv]\d_\d)(_dot)?$").to_numpy()


def test_feed_forward_maneuver_takes_scipys_steps(space_arm, monkeypatch):
    """The space-arm maneuver (rigid inverse-dynamics feed-forward read from its table) over 1 s
    at rtol 1e-7, 101 output times: the same count of right-hand sides as SciPy's DOP853
    (12 449 measured) and the same outputs within :data:`SAME_STEPS` of their scale."""
    arm, model = space_arm
    kwargs = dict(
        controller=FeedForward.from_config(arm),
        trajectory=Cycloidal(k=(0.075, 0.05, 0.1), T=(10.0, 5.0, 5.0), q0=(0.0, 0.0, 0.0)),
        method="DOP853",
        rtol=1e-7,
        atol=1e-9,
        solver="recursive",
        t_eval=np.linspace(0.0, 1.0, 101),
    )
    compiled = simulate(model, (0.0, 1.0), np.zeros(model.n_dof), **kwargs)
    _scipy(monkeypatch)
    reference = simulate(model, (0.0, 1.0), np.zeros(model.n_dof), **kwargs)
    assert compiled.attrs["integrator"] == "compiled DOP853"
    assert reference.attrs["integrator"] == "scipy solve_ivp"
    assert compiled.attrs["nfev"] == reference.attrs["nfev"]
    assert np.array_equal(compiled["time"], reference["time"])
    a, b = _states(compiled), _states(reference)
    assert a.shape == b.shape and a.shape[1] == 2 * model.n_dof
    assert np.max(np.abs(a - b)) <= SAME_STEPS * np.max(np.abs(b))
    for column in ("tau1", "theta3_ddot", "energy_balance_error"):
        scale = max(np.max(np.abs(reference[column])), 1.0)
        assert np.max(np.abs(compiled[column] - reference[column])) <= SAME_STEPS * scale, column


def test_free_vibration_every_step(space_arm, monkeypatch):
    """No controller and no output times: every accepted step is a row (t0 first, t1 last),
    as many as SciPy's, ending where SciPy's do within 1e-3 of a step, and the same final state.

    Not to round-off in time: the step factor reads the error estimate Σ E5_j K_j, a sum that
    cancels to ~1e-11 of its terms, so its rounding (a different summation order here and in
    SciPy's BLAS dot) moves a step by up to ~1e-4 of itself (measured 7e-8 s of steps ~1e-3 s);
    the states, accurate to rtol 1e-8 either way, then agree within :data:`SAME_STEPS` (6.6e-13
    of 0.13 measured at the end)."""
    _, model = space_arm
    q0 = np.zeros(model.n_dof)
    q0[model.n_joints] = 2e-3  # the first link's first in-plane mode
    compiled = simulate(model, (0.0, 0.05), q0, method="DOP853", rtol=1e-8, atol=1e-10, solver="composite")
    _scipy(monkeypatch)
    reference = simulate(model, (0.0, 0.05), q0, method="DOP853", rtol=1e-8, atol=1e-10, solver="composite")
    assert compiled.attrs["integrator"] == "compiled DOP853"
    assert compiled.attrs["nfev"] == reference.attrs["nfev"]
    assert len(compiled) == len(reference) > 10
    assert compiled["time"].iloc[0] == 0.0 and compiled["time"].iloc[-1] == 0.05
    steps = np.diff(reference["time"].to_numpy())
    assert np.max(np.abs(compiled["time"] - reference["time"])) <= 1e-3 * steps.min()
    a, b = _states(compiled), _states(reference)
    assert np.max(np.abs(a[-1] - b[-1])) <= SAME_STEPS * np.max(np.abs(b))


def test_progress_between_chunks(space_arm, monkeypatch):
    """``progress`` hears increasing times that end at t1 (once per chunk of steps; chunks of 20
    here), and the run in chunks is the run in one call."""
    _, model = space_arm
    q0 = np.zeros(model.n_dof)
    q0[model.n_joints] = 2e-3
    heard = []
    whole = simulate(model, (0.0, 0.3), q0, method="DOP853", solver="recursive", t_eval=[0.1, 0.2, 0.3])
    monkeypatch.setattr(explicit, "CHUNK", 20)
    frame = simulate(
        model,
        (0.0, 0.3),
        q0,
        method="DOP853",
        solver="recursive",
        t_eval=[0.1, 0.2, 0.3],
        progress=heard.append,
    )
    assert frame.attrs["integrator"] == "compiled DOP853"
    assert len(heard) >= 5 and np.all(np.diff(heard) > 0) and heard[-1] == 0.3
    assert frame.attrs["nfev"] == whole.attrs["nfev"]
    assert np.array_equal(_states(frame), _states(whole))


def test_pd_on_a_tabulated_reference_is_as_accurate_as_scipys(space_arm, monkeypatch):
    """Joint PD (k_p 2000, 1000, 200 N·m/rad, k_d a fifth of them in N·m·s/rad) along the
    cycloidal maneuver, 2 s at rtol 1e-7: the compiled loop reads the reference from its table
    (to 1e-12 of max|(q_d, q̇_d)|). The steps differ from SciPy's (the error estimate cancels to
    ~1e-11 of its terms, so the table's 1e-12 moves them), so both are compared with a run at
    rtol 1e-12: the compiled one is within 3 times SciPy's error (measured 5.2e-7 against
    3.6e-7 rad; their difference 4.9e-7, the size of the integration error at rtol 1e-7)."""
    arm, model = space_arm
    kwargs = dict(
        controller=PD.from_config(arm, kp=[2000.0, 1000.0, 200.0], kd=[400.0, 200.0, 40.0]),
        trajectory=Cycloidal(k=(0.075, 0.05, 0.1), T=(10.0, 5.0, 5.0), q0=(0.0, 0.0, 0.0)),
        method="DOP853",
        atol=1e-9,
        t_eval=np.linspace(0.0, 2.0, 101),
    )
    q0 = np.zeros(model.n_dof)
    compiled = simulate(model, (0.0, 2.0), q0, rtol=1e-7, **kwargs)
    _scipy(monkeypatch)
    reference = simulate(model, (0.0, 2.0), q0, rtol=1e-7, **kwargs)
    tight = simulate(model, (0.0, 2.0), q0, rtol=1e-12, **dict(kwargs, atol=1e-14))
    assert compiled.attrs["integrator"] == "compiled DOP853"
    exact = _states(tight)
    error, scipy_error = (np.max(np.abs(_states(frame) - exact)) for frame in (compiled, reference))
    assert 0 < scipy_error < 1e-5 and error <= 3 * scipy_error


def test_runs_that_need_python_take_solve_ivp(space_arm):
    """Closed loop beyond PD (model-based decoupling), PD and feed-forward along a trajectory whose
    table leaves panels to direct evaluation (a parabolic blend's kinks), a feed-forward of any
    function of t, a terminal event (deflection_limit) or an implicit method: solve_ivp."""
    arm, model = space_arm
    q0 = np.zeros(model.n_dof)
    q0[model.n_joints] = 2e-3
    cycloid = Cycloidal(k=(0.075, 0.05, 0.1), T=(10.0, 5.0, 5.0), q0=(0.0, 0.0, 0.0))
    blend = ParabolicBlend(q_start=(0.0, 0.0, 0.0), q_end=(0.05, 0.03, 0.02), T=0.01, blend=0.003)
    span = (0.0, 0.012)
    runs = {
        "decoupling": dict(controller=Decoupling(kp=10.0, kd=1.0), trajectory=cycloid),
        "PD, blend": dict(controller=PD(kp=10.0, kd=1.0), trajectory=blend),
        "feed-forward, blend": dict(controller=FeedForward.from_config(arm), trajectory=blend),
        "plain feed-forward": dict(controller=FeedForward(lambda t, reference: np.zeros(3))),
        "deflection limit": dict(deflection_limit=1.0),
    }
    for name, options in runs.items():
        frame = simulate(model, span, q0, method="DOP853", **options)
        assert frame.attrs["integrator"] == "scipy solve_ivp", name
    assert simulate(model, span, q0, method="Radau").attrs["integrator"] == "scipy solve_ivp"


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("rate", [1e150, 1e160])
def test_an_overflowing_run_ends_as_scipys(space_arm, monkeypatch, rate):
    """A joint rate of 1e150 rad/s: ‖f0‖ overflows, the first trial step is 0 and both runs go on
    with inf and NaN in their norms (numpy's division, not numba's ZeroDivisionError) to the same
    rows. 1e160: a stage's q̇² overflows, the right-hand side raises inside the compiled loop, and
    the run raises what the solve_ivp path raises (the Python right-hand side re-evaluated at that
    stage names the coordinate)."""
    _, model = space_arm
    q0, qd0 = np.zeros(model.n_dof), np.zeros(model.n_dof)
    qd0[0] = rate
    outcomes = []
    for patch in (False, True):
        if patch:
            _scipy(monkeypatch)
        try:
            frame = simulate(model, (0.0, 0.01), q0, qd0, method="DOP853")
            outcomes.append((len(frame), frame.attrs["nfev"], frame.attrs["integrator"]))
        except ValueError as error:
            outcomes.append(str(error))
    if rate == 1e150:
        assert outcomes[0][:2] == outcomes[1][:2] and outcomes[0][2] == "compiled DOP853"
    else:
        assert outcomes[0] == outcomes[1] == "q must be finite, got nan at theta1 (index 0)"


@pytest.mark.parametrize(
    ("t_eval", "message"),
    [([0.0, 0.02], "not within"), ([0.005, 0.001], "not properly sorted")],
)
def test_output_times_are_checked_as_scipy_checks_them(space_arm, t_eval, message):
    _, model = space_arm
    with pytest.raises(ValueError, match=message):
        simulate(model, (0.0, 0.01), np.zeros(model.n_dof), method="DOP853", t_eval=t_eval)


def test_a_step_below_the_spacing_of_times_fails_as_scipys(space_arm, monkeypatch):
    """From t0 = 2⁴² s (~1.4e5 years) the times are 2⁻¹⁰ s apart, and no step of the arm
    vibrating at up to 1035 rad/s can be ten of those (DOP853 stable to hω ≈ 3.3): both integrators stop at the first step with SciPy's message, and ``simulate``
    raises SimulationError keeping the rows computed (the start)."""
    _, model = space_arm
    q0 = np.zeros(model.n_dof)
    q0[model.n_joints] = 1e-12  # small: the trial steps (hω ~ 10) stay finite
    messages = []
    for patch in (False, True):
        if patch:
            _scipy(monkeypatch)
        with pytest.raises(simulation.SimulationError) as failure:
            simulate(model, (2.0**42, 2.0**42 + 1.0), q0, method="DOP853")
        frame = failure.value.frame
        messages.append((str(failure.value), len(frame), frame.attrs["integrator"]))
    assert messages[0][:2] == messages[1][:2]
    assert "Required step size is less than spacing between numbers" in messages[0][0]
    assert messages[0][2] == "compiled DOP853"


def test_the_tableau_is_scipys_and_the_compiled_path_skips_scipy_integrate(monkeypatch):
    """The coefficients read from SciPy's file are its module's, bit for bit; a compiled run in
    a fresh process leaves ``scipy.integrate`` unimported (its package import costs ~0.7 CPU s
    per process, measured in a study worker's profile)."""
    import subprocess
    import sys
    import textwrap

    from scipy.integrate._ivp import dop853_coefficients as c

    monkeypatch.delitem(sys.modules, c.__name__)  # read from the file, as a fresh process does
    explicit.dop853_tableau.cache_clear()
    try:
        tableau = explicit.dop853_tableau()
    finally:
        explicit.dop853_tableau.cache_clear()
    for ours, theirs in zip(tableau, (c.A, c.C, c.B, c.E3, c.E5, c.D), strict=True):
        assert np.array_equal(ours, theirs)
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from amm.model import AssumedModesModel
        from core.analysis.simulation import simulate
        from core.arm.presets import PRESETS

        model = AssumedModesModel(PRESETS["space-arm-3link"](), "clamped-free", 2)
        q0 = np.zeros(model.n_dof)
        q0[model.n_joints] = 2e-3
        frame = simulate(model, (0.0, 0.002), q0, method="DOP853")
        print(frame.attrs["integrator"], "scipy.integrate" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["compiled", "DOP853", "False"]
