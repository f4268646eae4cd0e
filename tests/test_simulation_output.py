"""The output rows of ``simulate``: what each row costs in model calls, and that the batched
columns are those of the per-row primitives.

Counters instead of timings: ``simulate`` evaluates a row with one right-hand side (or one
prescribed-motion solve), one mass matrix (the kinetic energy; a prescribed row takes it from
the solve's M), no second trajectory evaluation, and the tip positions of all rows in one
kinematics pass (:meth:`Model.tip_positions`). The reference columns are recomputed here row
by row from the public primitives (``forward_dynamics``, ``kinetic_energy``,
``tip_position``, ``potential_energy``, ``prescribed_motion``): equal to round-off (1e-12
relative to each column's largest magnitude).
"""

from __future__ import annotations

import numpy as np

from amm import AssumedModesModel
from core.analysis.simulation import prescribed_motion, simulate
from core.analysis.trajectories import Cycloidal, SpinUp
from core.arm import Arm, Link
from core.arm.presets import azimuth_elevation, lumped_two_link, one_flexible_link, rrp_translating
from fem import FiniteElementModel
from fem.segments import FiniteSegmentModel

ROWS = 11


class Counted:
    """Counts the calls of the named methods of ``model`` (instance attributes shadow them)."""

    def __init__(self, model, names) -> None:
        self.calls = dict.fromkeys(names, 0)
        for name in names:
            method = getattr(model, name)

            def counted(*args, _name=name, _method=method, **kwargs):
                self.calls[_name] += 1
                return _method(*args, **kwargs)

            setattr(model, name, counted)


class CountedTrajectory:
    """A trajectory that counts its evaluations."""

    def __init__(self, trajectory) -> None:
        self.trajectory, self.calls = trajectory, 0

    def evaluate(self, t):
        self.calls += 1
        return self.trajectory.evaluate(t)


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert np.max(np.abs(a - b)) <= tol * max(np.max(np.abs(b)), 1e-300)


def _one_link():
    model = AssumedModesModel(one_flexible_link(), shape="clamped-free", modes=2)
    q0 = model.home()
    q0[model.flex] = [0.01, -0.002]
    return model, q0


def test_a_free_row_costs_one_mass_matrix_and_no_per_row_kinematics():
    model, q0 = _one_link()
    counter = Counted(
        model,
        [
            "mass_matrix",
            "forward_dynamics",
            "kinetic_energy",
            "tip_position",
            "tip_positions",
            "potential_energy",
            "potential_energies",
            "tip_deflections",
            "tip_deflection_rows",
        ],
    )
    times = np.linspace(0.0, 0.05, ROWS)
    frame = simulate(model, (0.0, 0.05), q0, method="DOP853", t_eval=times)
    assert len(frame) == ROWS
    # The compiled right-hand side needs no mass matrix: every call is a row's kinetic energy;
    # tip positions, potential energies and tip deflections are one batch each.
    assert counter.calls == {
        "mass_matrix": ROWS,
        "forward_dynamics": 0,
        "kinetic_energy": 0,
        "tip_position": 0,
        "tip_positions": 1,
        "potential_energy": 0,
        "potential_energies": 1,
        "tip_deflections": 0,
        "tip_deflection_rows": 1,
    }


def test_free_rows_equal_the_per_row_primitives():
    model, q0 = _one_link()
    trajectory = Cycloidal(k=(0.5,), T=(0.1,), q0=(q0[0],))

    def controller(t, q, qd, model, reference):
        return 40.0 * (reference[0] - q[:1]) + 4.0 * (reference[1] - qd[:1])

    frame = simulate(
        model,
        (0.0, 0.05),
        q0,
        controller=controller,
        trajectory=trajectory,
        method="DOP853",
        t_eval=np.linspace(0.0, 0.05, ROWS),
    )
    Q = frame[list(model.coordinates)].to_numpy()
    QD = frame[[f"{c}_dot" for c in model.coordinates]].to_numpy()
    tau, qdd, kinetic, potential, tips, deflections = [], [], [], [], [], []
    for t, q, qd in zip(frame["time"], Q, QD, strict=True):
        reference = trajectory.evaluate(t)
        tau.append(controller(t, q, qd, model, reference))
        qdd.append(model.forward_dynamics(q, qd, tau[-1])[:1])
        kinetic.append(model.kinetic_energy(q, qd))
        potential.append(model.potential_energy(q))
        tips.append(model.tip_position(q))
        deflections.append(model.tip_deflections(q)["tip_w1"])
    _close(frame[["tau1"]], np.array(tau))
    _close(frame[["theta1_ddot"]], np.array(qdd))
    _close(frame["kinetic"], kinetic)
    _close(frame["potential"], potential)
    _close(frame[["tip_x", "tip_y", "tip_z"]], np.array(tips))
    _close(frame["tip_w1"], deflections)
    _close(frame["theta1_ref"], [trajectory.evaluate(t)[0][0] for t in frame["time"]])


def _batched_models():
    """Each path of the batched row values: constant K under gravity (AMM, FEM; a spatial arm
    with out-of-plane deflections), K and tip values that follow a translating link's free
    length (the per-row fallback), and the generic per-row default (segments)."""
    yield AssumedModesModel(lumped_two_link(), shape="clamped-mass", modes=2)
    yield FiniteElementModel(azimuth_elevation(), elements=2)
    yield AssumedModesModel(rrp_translating(), shape="clamped-mass", modes=2, tracker="root")
    yield FiniteSegmentModel(lumped_two_link(), segments=3)


def test_batched_potential_energies_and_tip_deflections_equal_the_per_row_ones():
    """``potential_energies`` and ``tip_deflection_rows`` of a batch against ``potential_energy``
    and ``tip_deflections`` row by row: 1e-12 of each column's largest magnitude (the batch only
    sums in another order; translating links checked at free lengths 0.4–1.2 m)."""
    rng = np.random.default_rng(7)
    for model in _batched_models():
        Q = np.tile(model.home(), (5, 1))
        Q[:, model.n_joints :] = rng.uniform(-0.02, 0.02, (5, model.n_dof - model.n_joints))
        Q[:, : model.n_joints] += rng.uniform(-0.5, 0.5, (5, model.n_joints))
        for number in model.arm.translating_links:
            Q[:, number - 1] = rng.uniform(0.4, 1.2, 5)
        _close(model.potential_energies(Q), [model.potential_energy(q) for q in Q])
        rows = model.tip_deflection_rows(Q)
        assert rows, type(model).__name__  # every model here has a flexible link
        for name, values in rows.items():
            _close(values, [model.tip_deflections(q)[name] for q in Q])


def _spin_up_beam():
    arm = Arm.planar(links=[Link.flexible(length=10.0, mass_per_length=1.2, EI=1.4e4)])
    return AssumedModesModel(arm, modes=2, geometric_stiffening=True)


def _spin_up_run(model, trajectory, t_end: float):
    """The prescribed spin-up of ``model`` over [0, t_end] with ROWS output rows."""
    return simulate(
        model,
        (0.0, t_end),
        np.zeros(model.n_dof),
        trajectory=trajectory,
        prescribed=True,
        method="DOP853",
        rtol=1e-6,
        atol=1e-8,
        t_eval=np.linspace(0.0, t_end, ROWS),
    )


def test_a_prescribed_row_costs_one_solve_and_one_trajectory_evaluation():
    model = _spin_up_beam()
    fused, solves = model.prescribed_function, []

    def counting():
        function = fused()

        def counted(*args):
            solves.append(args)
            return function(*args)

        return counted

    model.prescribed_function = counting
    counter = Counted(model, ["mass_matrix", "kinetic_energy", "tip_position", "tip_positions"])
    trajectory = CountedTrajectory(SpinUp(omega=(6.0,), T=(15.0,)))
    frame = _spin_up_run(model, trajectory, 0.5)
    nfev = frame.attrs["nfev"]
    # One prescribed solve per right-hand side and one per row, M and the kinetic energy inside
    # it (the compiled call: no mass matrix apart); the trajectory once at the start, once per
    # right-hand side and once per row.
    assert len(solves) == nfev + ROWS
    assert counter.calls == {
        "mass_matrix": 0,
        "kinetic_energy": 0,
        "tip_position": 0,
        "tip_positions": 1,
    }
    assert trajectory.calls == 1 + nfev + ROWS


def test_prescribed_rows_equal_the_per_row_primitives():
    model = _spin_up_beam()
    trajectory = SpinUp(omega=(6.0,), T=(15.0,))
    frame = _spin_up_run(model, trajectory, 2.0)
    Q = frame[list(model.coordinates)].to_numpy()
    QD = frame[[f"{c}_dot" for c in model.coordinates]].to_numpy()
    tau, kinetic, tips = [], [], []
    for t, q, qd in zip(frame["time"], Q, QD, strict=True):
        q_r, qd_r, qdd_r = trajectory.evaluate(t)
        assert q[0] == q_r[0] and qd[0] == qd_r[0]  # the joint is the trajectory's, exactly
        tau.append(prescribed_motion(model, q, qd, qdd_r)[1])
        kinetic.append(model.kinetic_energy(q, qd))
        tips.append(model.tip_position(q))
    _close(frame[["tau1"]], np.array(tau))
    _close(frame["kinetic"], kinetic)
    _close(frame[["tip_x", "tip_y", "tip_z"]], np.array(tips))


def test_a_prescribed_right_hand_side_evaluates_the_elastic_forces_once():
    """A translating link with length-following shapes (rrp-translating, beta-ode, 2 modes): K(q)
    and the following stiffness cost most of ∂V_e/∂q, which the prescribed-motion solve needs in
    its applied forces and in the dissipated power; one evaluation serves both, and the applied
    forces are bitwise those of ``Model._applied`` (the same products in the same order)."""
    model = AssumedModesModel(rrp_translating(), shape="beta-ode", modes=2, reference=[0.0, 0.0, 1.0])
    q, qd = model.home(), np.zeros(model.n_dof)
    q[:3], qd[:3] = [0.4, -0.3, 0.6], [1.0, -0.5, 0.8]
    q[model.flex], qd[model.flex] = [1e-3, -2e-4, 5e-4, 1e-4], [0.02, -0.01, 0.03, 0.005]
    applied, elastic = model._applied_with_elastic(q, qd, np.zeros(model.n_joints))
    assert applied.tobytes() == model._applied(q, qd, np.zeros(model.n_joints)).tobytes()
    assert elastic.tobytes() == model.elastic_forces(q).tobytes()
    counter = Counted(model, ["elastic_forces"])
    model.prescribed_function()(q, qd, np.array([0.5, -1.0, 2.0]))
    assert counter.calls == {"elastic_forces": 1}
