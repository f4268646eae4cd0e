"""The tabulated linear flexible system of prescribed runs (core.analysis.prescribed) against
the evaluations it replaces: a bilinear toy system given in closed form, a nonlinear one it
must refuse, and the RRP arm's prescribed simulation (no reference numbers: the references are
the replaced evaluations, run here side by side)."""

from __future__ import annotations

import numpy as np
import pytest

from amm import AssumedModesModel
from core import AssumptionWarning, ParabolicBlend, simulate
from core.analysis.prescribed import (
    CHECK_TOLERANCE,
    auxiliary_history,
    linear_flexible,
    model_solver,
    simulate_linear,
)
from core.analysis.simulation import prescribed_motion
from core.arm.presets import rrp_translating
from core.numerics import derivatives
from studies.kinds.stability.analysis import initial_shape

ARM = rrp_translating()
N_F, N_J = 2, 2
RNG = np.random.default_rng(7)
PARTS = [RNG.standard_normal(shape) for shape in ((N_F, 2 * N_F), (N_F,), (N_F, N_J), (N_J, N_F, N_F))]
#: The stiffness-like scale of the toy's q_f columns (as a beam's ω²).
STIFF = 1e8


class Jumps:
    """q̈_r with jumps at t = 0.25 and 0.75 (a parabolic blend's pattern)."""

    def evaluate(self, t):
        level = 1.0 if t < 0.25 else (0.0 if t <= 0.75 else -1.0)
        return np.zeros(N_J), np.zeros(N_J), level * np.array([3.0, -2.0])


def toy_solve(nonlinear: float = 0.0, frequency: float = 3.0):
    """q̈_f = A0 z + b0 + N q̈_r + Σ_j q̈_r,j C_j q_f with smooth coefficients of t."""

    def solve(t, z, qdd_r):
        A0, b0, N, C = (p * (1.0 + 0.5 * np.sin(frequency * t + k)) for k, p in enumerate(PARTS))
        A0 = A0.copy()
        A0[:, :N_F] *= STIFF
        cross = np.tensordot(qdd_r, C, axes=1) @ z[:N_F]
        return A0 @ z + b0 + N @ qdd_r + cross + nonlinear * STIFF * z[0] ** 2

    return solve


def test_the_table_reproduces_a_bilinear_system_and_its_jacobian():
    """Off the check times and across the jumps of q̈_r the tabulated q̈_f is the closed form's
    within 1e-10 of its largest value (table tolerance 1e-12 per block, round-off of the
    stiff columns ~1e-16 · 1e8), and the exact Jacobian is the central differences of the
    right-hand side (exact for an affine map up to their round-off, 1e-7 relative)."""
    system = linear_flexible(toy_solve(), Jumps(), (0.0, 1.0), N_F, N_J, np.full(2 * N_F, 1e-3))
    assert system is not None and system.deviation <= CHECK_TOLERANCE
    for t in (0.01, 0.2, 0.25, 0.5, 0.75, 0.9):
        z = RNG.standard_normal(2 * N_F) * 1e-3
        expected = toy_solve()(t, z, Jumps().evaluate(t)[2])
        np.testing.assert_allclose(
            system.accelerations(t, z), expected, rtol=0, atol=1e-10 * np.abs(expected).max()
        )
        J = system.jacobian(t, z)
        differences = derivatives.central_difference_jacobian(lambda y, t=t: system.rates(t, y), z)
        np.testing.assert_allclose(J, differences, rtol=0, atol=1e-7 * np.abs(J).max())


def test_the_compiled_read_is_the_tables_series():
    """The compiled right-hand side reads the same series as the table's numpy evaluation
    (cos(k arccos t) there, the three-term recurrence here: both round to ~k ε): A and b from
    the series' values assembled by hand agree within 1e-13 of the block's largest entry, at
    the panel breaks too (the right panel's series, the last panel's at the end of the span);
    a time outside the span is refused, naming it. (Coefficients oscillating at 80 rad/s: the
    table needs several panels.)"""
    system = linear_flexible(toy_solve(frequency=80.0), Jumps(), (0.0, 1.0), N_F, N_J, np.full(2 * N_F, 1e-3))
    assert system is not None
    breaks = system.table.breaks
    assert len(breaks) > 2  # several panels: the break lookup is exercised
    end_a, end_b = 2 * N_F * N_F, 2 * N_F * N_F + N_F
    end_n = end_b + N_F * N_J
    for t in (*breaks, 0.123, 0.61, 0.999):
        values = system.table(t) * system.scales
        qdd_r = Jumps().evaluate(t)[2]
        A = values[:end_a].reshape(N_F, 2 * N_F).copy()
        A[:, :N_F] += np.tensordot(qdd_r, values[end_n:].reshape(N_J, N_F, N_F), axes=1)
        b = values[end_a:end_b] + values[end_b:end_n].reshape(N_F, N_J) @ qdd_r
        got_A, got_b = system.parts(t)
        np.testing.assert_allclose(got_A, A, rtol=0, atol=1e-13 * np.abs(A).max())
        np.testing.assert_allclose(got_b, b, rtol=0, atol=1e-13 * np.abs(b).max())
    for t in (-1e-9, 1.0 + 1e-9):
        with pytest.raises(ValueError, match=r"outside the tabulated span \[0.0, 1.0\]"):
            system.rates(t, np.zeros(2 * N_F))


def test_a_system_that_is_not_bilinear_is_refused():
    """A term quadratic in q_f of relative size ~1e-3 at the check's deflections fails it."""
    assert linear_flexible(toy_solve(1.0), Jumps(), (0.0, 1.0), N_F, N_J, np.full(2 * N_F, 1e-3)) is None


def frozen_model() -> AssumedModesModel:
    reference = ARM.home()
    reference[2] = 1.0
    return AssumedModesModel(ARM, shape="clamped-mass", modes=2, reference=reference)


def test_the_linear_run_is_the_prescribed_simulation():
    """The RRP arm with frozen clamped-mass shapes, 0.01 s retracting from 1.0 to 0.99 m with the
    other joints swinging, both runs at LSODA rtol 1e-9: the flexible coordinates and rates
    agree within 1e-6 of their largest value (the integration tolerance's scale), and the
    table's check passed."""
    model = frozen_model()
    assert not tuple(model.auxiliary_names)
    trajectory = ParabolicBlend((0.0, 0.0, 1.0), (0.05, -0.05, 0.99), 0.01, 0.0025)
    q0 = model.home()
    q0[:3] = (0.0, 0.0, 1.0)
    q0[3:] = initial_shape(model, 3, q0, 1e-3)
    times = np.linspace(0.0, 0.01, 11)
    options = {"method": "LSODA", "rtol": 1e-9, "atol": 1e-12, "t_eval": times}
    linear = simulate_linear(model, (0.0, 0.01), q0, trajectory, **options)
    direct = simulate(model, (0.0, 0.01), q0, trajectory=trajectory, prescribed=True, **options)
    assert linear is not None and linear.attrs["table_deviation"] <= CHECK_TOLERANCE
    columns = [*model.coordinates, *(f"{c}_dot" for c in model.coordinates), "extension_speed_ratio3"]
    for part in (columns[3 : model.n_dof], columns[model.n_dof + 3 : 2 * model.n_dof]):
        a, b = linear[part].to_numpy(), direct[part].to_numpy()
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6 * np.abs(b).max())
    joints = columns[:3] + columns[model.n_dof : model.n_dof + 3] + columns[-1:]
    np.testing.assert_allclose(linear[joints].to_numpy(), direct[joints].to_numpy(), rtol=1e-12, atol=1e-15)


def test_the_solver_is_the_prescribed_motion():
    """model_solver's q̈_f is :func:`prescribed_motion`'s flexible rows (the same call)."""
    model = frozen_model()
    trajectory = ParabolicBlend((0.0, 0.0, 1.0), (0.1, -0.1, 0.9), 0.02, 0.005)
    z = np.linspace(-1e-3, 1e-3, 2 * (model.n_dof - 3))
    qdd_r = np.array([1.0, 2.0, 3.0])
    got = model_solver(model, trajectory)(0.004, z, qdd_r)
    q_r, qd_r, _ = trajectory.evaluate(0.004)
    q, qd = np.concatenate([q_r, z[: model.n_dof - 3]]), np.concatenate([qd_r, z[model.n_dof - 3 :]])
    np.testing.assert_array_equal(got, prescribed_motion(model, q, qd, qdd_r)[0][3:])


def test_roots_integrated_first_give_the_prescribed_simulation():
    """Shapes that follow the free length ("ode" tracker: the roots are auxiliary states),
    0.02 s extending from 0.95 to 1.0 m with the other joints swinging, both runs at LSODA
    rtol 1e-8: the roots integrated on their own (DOP853 rtol 1e-13, tabulated to 1e-10) agree
    with those integrated with the motion within 1e-8 relative (the run's tolerance), the
    flexible coordinates and rates within 1e-5 of their largest value (its scale)."""
    reference = ARM.home()
    reference[2] = 1.0
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker="ode", reference=reference)
    roots = list(model.auxiliary_names)
    assert roots
    trajectory = ParabolicBlend((0.0, 0.0, 0.95), (0.05, -0.05, 1.0), 0.02, 0.01)
    q0 = model.home()
    q0[:3] = (0.0, 0.0, 0.95)
    q0[3:] = initial_shape(model, 3, q0, 1e-4)
    options = {"method": "LSODA", "rtol": 1e-8, "atol": 1e-11, "t_eval": np.linspace(0.0, 0.02, 11)}
    linear = simulate_linear(model, (0.0, 0.02), q0, trajectory, **options)
    direct = simulate(model, (0.0, 0.02), q0, trajectory=trajectory, prescribed=True, **options)
    assert linear is not None
    np.testing.assert_allclose(linear[roots].to_numpy(), direct[roots].to_numpy(), rtol=1e-8)
    flexible = [*model.coordinates[3:], *(f"{c}_dot" for c in model.coordinates[3:])]
    for part in (flexible[: model.n_dof - 3], flexible[model.n_dof - 3 :]):
        a, b = linear[part].to_numpy(), direct[part].to_numpy()
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * np.abs(b).max())


class FlexibleRoots:
    """A stub model whose one auxiliary rate reads a flexible rate (auxiliary_history must refuse it)."""

    n_dof, n_joints, auxiliary_names = 3, 1, ("a",)

    def auxiliary_initial(self, q):
        return np.ones(1)

    def auxiliary_rates(self, q, qd, a):
        return np.array([qd[0] + qd[2]])

    def auxiliary(self, a):
        import contextlib

        return contextlib.nullcontext()


def test_auxiliary_rates_that_read_the_flexible_coordinates_are_refused():
    trajectory = ParabolicBlend((0.0,), (1.0,), 1.0, 0.25)
    scale = np.full(4, 1e-3)
    assert auxiliary_history(FlexibleRoots(), trajectory, (0.0, 1.0), np.zeros(3), scale) is None


def test_a_fast_extension_warns_as_the_model_path_does():
    """The RRP beam driven from 0.3 to 1.0 m in 0.05 s reaches U/U_g = |l̇| l / √(EI/ρA) far
    above 0.1 (the shipped 1 s maneuver: 0.014): the tabulated run warns as
    :func:`simulate` does, naming the link and the ratio its rows reached."""
    model = frozen_model()
    trajectory = ParabolicBlend((0.0, 0.0, 0.3), (0.0, 0.0, 1.0), 0.05, 0.0125)
    q0 = model.home()
    q0[:3] = (0.0, 0.0, 0.3)
    options = {"method": "LSODA", "rtol": 1e-6, "atol": 1e-9, "t_eval": np.linspace(0.0, 0.05, 11)}
    with pytest.warns(AssumptionWarning, match=r"translating link 3: extension speed ratio U/U_g reached"):
        frame = simulate_linear(model, (0.0, 0.05), q0, trajectory, **options)
    assert frame is not None and frame["extension_speed_ratio3"].max() > 0.1
