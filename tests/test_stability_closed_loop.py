"""The shortcuts of the stability kind's closed loop and of length-following bodies: each
gives what the longer evaluation it replaces gives (no reference numbers: the references are
the replaced evaluations, run here side by side)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amm import AssumedModesModel
from core import Decoupling, ParabolicBlend, simulate
from core.arm.presets import rrp_translating
from core.dynamics.flexible_body import TranslatingBody, _translating_arrays, taylor_sum
from core.numerics import derivatives
from studies.kinds.stability import closed_loop
from studies.kinds.stability.analysis import StabilityAnalysis, flexible_eigenvalues, initial_shape

ARM = rrp_translating()


def following_model(tracker: str = "root") -> AssumedModesModel:
    reference = ARM.home()
    reference[2] = 1.0
    return AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker=tracker, reference=reference)


@pytest.mark.parametrize("planes", [1, 2])
def test_body_arrays_of_following_shapes_are_those_of_the_placement(planes):
    """The body arrays of a length-following link from its precomputed linear map equal
    :func:`_translating_arrays` of the same unit integrals exactly (every entry is ρ times
    one integral), at two free lengths, every derivative order."""
    model = following_model()
    body = TranslatingBody(ARM.links[2], model.bases[3], planes)
    for l in (0.31, 0.77):
        unit = body.following.taylor(l, order=3)
        expected = _translating_arrays(unit, body.plane_columns, body.n_coordinates, body.rho, body.planes)
        body._taylor_cache.clear()
        got = body._taylor(l)
        assert set(got) == set(expected)
        for name, value in expected.items():
            if name in ("N0", "P"):
                for a in range(2):
                    for c in range(2):
                        np.testing.assert_array_equal(got[name][a][c], value[a][c])
            else:
                np.testing.assert_array_equal(got[name], value)


@pytest.mark.parametrize("step", [0.0, np.float64(0.0), np.zeros((3, 1, 1)), 1e-3, 1e-20j])
@pytest.mark.parametrize("derivative", [0, 1])
def test_taylor_sum_at_a_zero_step_is_the_full_sum(step, derivative):
    """A real zero step takes a shortcut; its value, shape and type are those of the sum
    Σ_k Δᵏ/k! terms[k + derivative] (the other steps check the sum itself)."""
    terms = np.random.default_rng(1).standard_normal((4, 3, 2, 2))
    total = 0.0 * step * terms[0]
    for k in range(terms.shape[0] - derivative):
        total = total + step**k / math.factorial(k) * terms[k + derivative]
    got = taylor_sum(terms, step, derivative)
    assert got.shape == total.shape and got.dtype == total.dtype
    np.testing.assert_array_equal(got, total)


def test_decoupling_gives_the_joints_its_error_law_accelerations():
    """Decoupling's torques, through the forward dynamics, give the joints exactly the
    accelerations of :meth:`Decoupling.joint_accelerations` (to round-off), off the
    trajectory and with bent flexible coordinates."""
    model = following_model()
    trajectory = ParabolicBlend((0.0, 0.0, 0.4), (1.0, -0.5, 0.9), 1.0, 0.25)
    controller = Decoupling(kp=100.0, kd=20.0)
    reference = trajectory.evaluate(0.3)
    q, qd = model.home(), np.zeros(model.n_dof)
    q[:3] = reference[0] + [0.01, -0.02, 0.003]
    qd[:3] = reference[1] + [0.1, 0.05, -0.02]
    q[3:] = [2e-3, -1e-3, 5e-4, 1e-4]
    qd[3:] = [0.1, -0.2, 0.05, 0.01]
    u = controller.joint_accelerations(q, qd, model, reference)
    kp, kd = controller.gains(3)
    np.testing.assert_allclose(u, reference[2] - kd * (qd[:3] - reference[1]) - kp * (q[:3] - reference[0]))
    tau = controller(0.3, q, qd, model, reference)
    qdd = model.forward_dynamics(q, qd, tau, solver="recursive")
    np.testing.assert_allclose(qdd[:3], u, rtol=1e-9, atol=1e-9 * np.abs(qdd).max())


def test_flexible_eigenvalues_are_those_of_the_controller_and_forward_dynamics():
    """The flexible eigenvalues by the prescribed joint accelerations equal those of central
    differences of the controller's torques through the forward dynamics, within the
    differences' noise (1e-7 of the largest |λ|)."""
    model = following_model()
    trajectory = ParabolicBlend((0.0, 0.0, 1.0), (math.pi, -math.pi / 2, 0.3), 1.0, 0.25)
    controller = Decoupling(kp=100.0, kd=20.0)
    flex = np.arange(model.n_dof)[model.flex]
    for t in (0.2, 0.6):
        q_d, qd_d, _ = trajectory.evaluate(t)
        q, qd = model.home(), np.zeros(model.n_dof)
        q[:3], qd[:3] = q_d, qd_d
        reference = trajectory.evaluate(t)

        def rates(z, q=q, qd=qd, reference=reference, t=t):
            x, xd = q.copy(), qd.copy()
            x[flex], xd[flex] = z[: flex.size], z[flex.size :]
            tau = controller(t, x, xd, model, reference)
            return np.concatenate([xd[flex], model.forward_dynamics(x, xd, tau, solver="recursive")[flex]])

        J = derivatives.central_difference_jacobian(rates, np.concatenate([q[flex], qd[flex]]))
        expected = np.sort_complex(np.linalg.eigvals(J))
        got = np.sort_complex(flexible_eigenvalues(model, controller, trajectory, t, q, qd))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7 * np.abs(expected).max())


def test_the_prescribed_simulation_is_the_decoupling_closed_loop():
    """From rest on the trajectory the decoupling law keeps the joint errors at zero, so the
    stability kind's prescribed simulation follows the closed loop: a maneuver of the
    following ("ode") model, 0.02 s from 0.95 to 1.0 m with the other joints swinging, both at
    rtol 1e-7: the flexible coordinates and the integrated roots agree within 1e-5 of their
    largest value (the integration tolerance's scale) and the closed loop's joints stay on the
    trajectory within 1e-8."""
    model = following_model("ode")
    analysis = StabilityAnalysis(method="LSODA", rtol=1e-7, atol=1e-10, T=0.02, blend=0.01)
    trajectory = ParabolicBlend((0.0, 0.0, 0.95), (0.05, -0.05, 1.0), 0.02, 0.01)
    q0 = model.home()
    q0[:3] = (0.0, 0.0, 0.95)
    q0[3:] = initial_shape(model, 3, q0, 1e-4)
    times = np.linspace(0.0, 0.02, 11)
    prescribed = closed_loop(model, trajectory, q0, 0.02, times, analysis, "extension")
    loop = simulate(
        model,
        (0.0, 0.02),
        q0,
        controller=Decoupling(kp=100.0, kd=20.0),
        trajectory=trajectory,
        method="LSODA",
        rtol=1e-7,
        atol=1e-10,
        t_eval=times,
    )
    assert prescribed.attrs["prescribed"] and not loop.attrs["prescribed"]
    flexible = [*model.coordinates[3:], *(f"{c}_dot" for c in model.coordinates[3:])]
    for columns in (flexible, list(model.auxiliary_names)):
        a, b = prescribed[columns].to_numpy(), loop[columns].to_numpy()
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * np.abs(b).max())
    joints = loop[list(model.coordinates[:3])].to_numpy()
    np.testing.assert_allclose(joints, prescribed[list(model.coordinates[:3])].to_numpy(), rtol=0, atol=1e-8)


def test_a_maneuver_off_its_trajectory_is_refused():
    model = following_model()
    trajectory = ParabolicBlend((0.0, 0.0, 0.9), (0.2, -0.2, 1.0), 0.05, 0.02)
    q0 = model.home()
    q0[:3] = (0.1, 0.0, 0.9)
    with pytest.raises(ValueError, match="start on its trajectory"):
        closed_loop(model, trajectory, q0, 0.05, np.linspace(0, 0.05, 3), StabilityAnalysis(), "extension")
