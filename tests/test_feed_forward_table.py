"""The open-loop feed-forward tabulated for one run (core.analysis.time_table, FeedForward.for_run)."""

from __future__ import annotations

import numpy as np

from amm import AssumedModesModel
from core import ChainModel, simulate
from core.analysis.controllers import FeedForward
from core.analysis.time_table import ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE, tabulate
from core.analysis.trajectories import TRAJECTORIES
from core.arm.presets import rigid_two_link, space_arm_3link

#: The trajectory of studies/configs/space-arm-maneuver.toml (Mohan & Saha, DeNOC).
MANEUVER = {"k": [0.075, 0.05, 0.1], "T": [10.0, 5.0, 5.0]}


def maneuver():
    """(space arm, its feed-forward from the rigid inverse dynamics, the cycloidal maneuver)."""
    arm = space_arm_3link()
    trajectory = TRAJECTORIES["cycloidal"].from_config(arm, np.zeros(3), **MANEUVER)
    return arm, FeedForward.from_config(arm), trajectory


def direct_torque(feed_forward: FeedForward, trajectory, t: float) -> np.ndarray:
    return feed_forward.rigid_model.inverse_dynamics(*trajectory.evaluate(t))


def test_table_equals_the_rigid_inverse_dynamics_over_the_span():
    """At random times of the 10 s maneuver the table is the direct rigid inverse dynamics
    to its stated tolerance, 1e-12 max|τ| + 1e-15 N·m, and needs no reference."""
    _, feed_forward, trajectory = maneuver()
    prepared = feed_forward.for_run(trajectory, (0.0, 10.0))
    assert prepared.table.reason is None and prepared.table.tabulated
    assert not prepared.reads_reference
    times = np.random.default_rng(7).uniform(0.0, 10.0, 300)
    direct = np.array([direct_torque(feed_forward, trajectory, t) for t in times])
    grid = np.array([direct_torque(feed_forward, trajectory, t) for t in np.linspace(0.0, 10.0, 2001)])
    scale = max(np.abs(direct).max(), np.abs(grid).max())
    table = np.array([prepared(t, None, None, None, None) for t in times])
    assert np.abs(table - direct).max() <= RELATIVE_TOLERANCE * scale + ABSOLUTE_TOLERANCE


def test_times_outside_the_span_are_evaluated_directly():
    _, feed_forward, trajectory = maneuver()
    prepared = feed_forward.for_run(trajectory, (0.0, 2.0))
    for t in (-0.5, 2.0 + 1e-9, 3.7):
        # a series read outside its span would extrapolate (or clip) and differ
        assert np.array_equal(prepared(t, None, None, None, None), direct_torque(feed_forward, trajectory, t))


def test_a_non_smooth_trajectory_is_evaluated_directly_at_its_kinks():
    """The parabolic blend's acceleration jumps at t_b, T − t_b and T (0.3, 0.7, 1.0 s): the
    series does not converge on the panels holding them, which are evaluated directly and named
    in the reason; the rest of the span is tabulated to the tolerance."""
    arm = space_arm_3link()
    feed_forward = FeedForward.from_config(arm)
    trajectory = TRAJECTORIES["parabolic-blend"].from_config(
        arm, np.zeros(3), q_end=[0.5, -0.3, 0.2], T=1.0, blend=0.3
    )
    prepared = feed_forward.for_run(trajectory, (0.05, 1.2))
    table = prepared.table
    assert table.reason is not None and "did not converge" in table.reason
    direct_panels = [
        (a, b) for a, b, p in zip(table.breaks[:-1], table.breaks[1:], table.panels, strict=True) if p is None
    ]
    for kink in (0.3, 0.7, 1.0):
        assert any(a <= kink <= b for a, b in direct_panels), (kink, direct_panels)
        t = kink + 1e-7
        assert np.array_equal(prepared(t, None, None, None, None), direct_torque(feed_forward, trajectory, t))
    for t in (0.1, 0.5, 0.85, 1.15):
        error = np.abs(prepared(t, None, None, None, None) - direct_torque(feed_forward, trajectory, t)).max()
        assert error <= table.tolerance


def test_the_compiled_read_is_the_tables_series():
    """``TimeTable.compiled`` reads the same series as the table's call at every panel end and at
    random times (the three-term recurrence against cos(k arccos t): bound 1e-13 of max|τ|,
    measured 5.6e-16), the direct evaluation outside the span, and is the table itself when a
    panel is evaluated directly."""
    _, feed_forward, trajectory = maneuver()
    table = feed_forward.for_run(trajectory, (0.0, 10.0)).table
    read = table.compiled()
    assert read is not table
    times = np.concatenate([table.breaks, np.random.default_rng(3).uniform(0.0, 10.0, 200)])
    expected = np.array([table(t) for t in times])
    got = np.array([read(t) for t in times])
    assert np.abs(got - expected).max() <= 1e-13 * np.abs(expected).max()
    for t in (-0.5, 10.0 + 1e-9):
        assert np.array_equal(read(t), direct_torque(feed_forward, trajectory, t))
    capped = tabulate(lambda t: direct_torque(feed_forward, trajectory, t), (0.0, 10.0), max_samples=40)
    assert capped.compiled() is capped


def test_the_sample_cap_keeps_the_direct_evaluation_and_says_why():
    _, feed_forward, trajectory = maneuver()
    table = tabulate(lambda t: direct_torque(feed_forward, trajectory, t), (0.0, 10.0), max_samples=40)
    assert not table.tabulated and "more than 40 samples" in table.reason
    assert np.array_equal(table(4.2), direct_torque(feed_forward, trajectory, 4.2))


def test_the_check_between_the_nodes_catches_what_the_fit_missed():
    """A spike of width 1e-5 s at the first check point lies far (≥ 4.8e-3 s) from every node
    the fit samples: the fit sees f ≡ 0 and converges on its first grid (degree 8), the check
    (halfway between that grid's nodes) finds the spike and the table keeps the direct
    evaluation."""
    t_spike = 0.5 + 0.5 * np.cos(np.pi / 16)  # the first check point of the degree-8 grid on [0, 1]

    def spike(t: float) -> np.ndarray:
        return np.array([np.exp(-(((t - t_spike) / 1e-5) ** 2))])

    table = tabulate(spike, (0.0, 1.0))
    assert not table.tabulated and "deviates" in table.reason
    assert table(t_spike)[0] == 1.0


class CountingTrajectory:
    """A trajectory that counts its evaluations."""

    def __init__(self, trajectory) -> None:
        self.trajectory, self.calls = trajectory, 0

    def evaluate(self, t: float):
        self.calls += 1
        return self.trajectory.evaluate(t)


def test_simulation_with_the_table_matches_the_direct_feed_forward():
    """0.2 s of the maneuver, AMM 2 clamped-free modes per plane, DOP853 at rtol 1e-10: the
    tabulated and the direct feed-forward give the same joint angles to 1e-9 of their largest.
    The torques differ by ≤ 1e-12 max|τ| (the table's checked tolerance), which moves the
    response by about as much; if the integrator then took other steps the runs could differ
    by its global error, rtol × a condition number of a few (here the steps are the same).
    With the table the trajectory is evaluated for the output rows, not per right-hand side."""
    arm, feed_forward, trajectory = maneuver()
    model = AssumedModesModel(arm, shape="clamped-free", modes=2)
    q0 = np.zeros(model.n_dof)
    frames = {}
    for name, controller in (("direct", FeedForward(feed_forward.torque)), ("table", feed_forward)):
        counting = CountingTrajectory(trajectory)
        frames[name] = simulate(
            model,
            (0.0, 0.2),
            q0,
            controller=controller,
            trajectory=counting,
            method="DOP853",
            rtol=1e-10,
            atol=1e-14,
            t_eval=np.linspace(0.0, 0.2, 11),
        )
        frames[name].attrs["evaluations"] = counting.calls
    angles = {name: frame[["theta1", "theta2", "theta3"]].to_numpy() for name, frame in frames.items()}
    assert np.abs(angles["table"] - angles["direct"]).max() <= 1e-9 * np.abs(angles["direct"]).max()
    assert frames["direct"].attrs["evaluations"] > frames["direct"].attrs["nfev"]
    assert frames["table"].attrs["evaluations"] < frames["table"].attrs["nfev"] / 10


def test_simulate_prepares_a_controller_once_for_its_run():
    """``for_run(trajectory, t_span)`` is called once, and the controller it returns is the one used."""
    calls = []

    class Prepared:
        def __call__(self, t, q, qd, model, reference):
            calls.append("prepared")
            return np.zeros(2)

    class Preparing:
        def for_run(self, trajectory, t_span):
            calls.append(("for_run", trajectory, t_span))
            return Prepared()

        def __call__(self, t, q, qd, model, reference):
            raise AssertionError("the unprepared controller must not be called")

    model = ChainModel(rigid_two_link(), {})
    trajectory = TRAJECTORIES["cycloidal"].from_config(
        rigid_two_link(), np.zeros(2), k=[0.1, 0.1], T=[1.0, 1.0]
    )
    simulate(model, (0.0, 0.1), np.zeros(2), controller=Preparing(), trajectory=trajectory, method="RK45")
    assert calls[0] == ("for_run", trajectory, (0.0, 0.1))
    assert calls.count("prepared") == len(calls) - 1 > 0


def test_a_table_is_hashable():
    """A TimeTable stays hashable (the controllers holding one are frozen dataclasses): its series
    is compared and hashed by identity, as the per-panel objects it replaced were."""
    table = tabulate(lambda t: np.array([np.sin(t)]), (0.0, 1.0))
    assert table.tabulated and hash(table) == hash(table)
