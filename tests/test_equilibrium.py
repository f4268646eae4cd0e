"""Static equilibrium (``Model.equilibrium``, core/analysis/equilibrium.py).

References: the cantilever under its own weight, tip deflection q L⁴/(8 EI) with q = ρA g
(Euler–Bernoulli beam theory, e.g. Gere & Timoshenko, Mechanics of Materials, cantilever with a
uniform load), which cubic Hermite elements reproduce at the nodes to round-off (their nodal
values are exact for a uniform load); a rigid pendulum hangs at θ = −π/2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from amm import AssumedModesModel
from core import Arm, EquilibriumError, Link
from core.arm import presets
from fem import FiniteElementModel

G = 9.81


def cantilever(length=1.0, rho_a=1.0, EI=100.0) -> Arm:
    """One flexible link, horizontal at θ = 0, gravity along −y (in the bending plane)."""
    return Arm.planar([Link.flexible(length, rho_a, EI)], gravity=(0.0, -G, 0.0))


def test_fem_cantilever_sags_by_the_beam_theory_value_to_round_off():
    """Locked hub, FEM ×4: tip deflection −ρA g L⁴/(8 EI) to 1e-12 relative (linear problem:
    one Newton step); AMM with 6 clamped-free modes within 1e-4 of it (Ritz convergence)."""
    exact = -1.0 * G * 1.0**4 / (8 * 100.0)
    fem = FiniteElementModel(cantilever(), elements=4)
    found = fem.equilibrium()
    assert found.iterations == 1
    assert found.q[0] == 0.0  # the hub held
    assert fem.tip_position(found.q)[1] == pytest.approx(exact, rel=1e-12)
    # the motor holds the weight's moment about the joint: ρA g L²/2 (rigid to first order)
    assert found.torques[0] == pytest.approx(1.0 * G * 1.0**2 / 2, rel=1e-3)
    amm = AssumedModesModel(cantilever(), modes=6)
    assert amm.tip_position(amm.equilibrium().q)[1] == pytest.approx(exact, rel=1e-4)


@pytest.mark.parametrize("frame", ["clamped", "pinned"])
def test_locked_equilibrium_holds_the_motor_angles_and_zeroes_the_free_residual(frame):
    """Lumped two-link preset at (45°, −45°), FEM ×4, geometric stiffening (nonlinear in q):
    Bᵀq stays at its start (1e-12), the residual along the admissible motions is below 1e-10 of
    the gravity load, evaluated here independently of the solver, and the holding torques are
    the joint rows of G + ∂V_e/∂q."""
    arm = presets.lumped_two_link()
    model = FiniteElementModel(arm, elements=4, frame=frame, geometric_stiffening=True)
    q0 = model.home()
    q0[:2] = math.pi / 4, -math.pi / 4
    found = model.equilibrium(q0)
    B = model.input_matrix(q0)
    np.testing.assert_allclose(B.T @ found.q, B.T @ q0, rtol=0, atol=1e-12)
    N = np.vstack([-B[model.flex].T, np.eye(model.n_dof - model.n_joints)])
    forces = model.gravity_forces(found.q) + model.elastic_forces(found.q)
    assert np.max(np.abs(N.T @ forces)) <= 1e-10 * np.max(np.abs(N.T @ model.gravity_forces(q0)))
    np.testing.assert_allclose(found.torques, forces[:2], rtol=1e-12)
    assert np.max(np.abs(found.q[model.flex])) > 0  # it sagged
    assert np.all(model.natural_frequencies(found.q, count=2) > 0)  # a stable rest position


def test_an_unloaded_arm_is_in_equilibrium_where_it_is():
    arm = Arm.planar([Link.flexible(1.0, 1.0, 100.0)])
    model = FiniteElementModel(arm, elements=2)
    q = model.home()
    q[0] = 0.3
    found = model.equilibrium(q, joints="free")
    assert found.iterations == 0 and np.array_equal(found.q, q)


def test_a_free_pendulum_hangs_down_and_a_horizontal_start_is_refused():
    """Free joint, rigid link: from 0.3 rad off the hanging position Newton converges to −π/2
    (1e-12); from the horizontal, where the gravity stiffness vanishes, the tangent is singular
    and the error says so and where it stopped."""
    arm = Arm.planar([Link.rigid(1.0, 1.0)], gravity=(0.0, -G, 0.0))
    model = AssumedModesModel(arm)
    found = model.equilibrium(np.array([-math.pi / 2 + 0.3]), joints="free")
    assert found.q[0] == pytest.approx(-math.pi / 2, abs=1e-12)
    with pytest.raises(EquilibriumError, match="singular") as error:
        model.equilibrium(np.array([0.0]), joints="free")
    assert error.value.q.shape == (1,) and error.value.residual > 0


def test_free_joints_balance_the_given_torque():
    """A torque m g l/2 · cos θ* holds the rigid pendulum at θ* = −0.5 rad: with tol = 1e-14 the
    angle is within 1e-13 (residual ≤ 1e-14 · 4.3 N m over a stiffness of 2.35 N m/rad)."""
    arm = Arm.planar([Link.rigid(1.0, 1.0)], gravity=(0.0, -G, 0.0))
    model = AssumedModesModel(arm)
    target = -0.5
    tau = np.array([1.0 * G * 0.5 * math.cos(target)])
    found = model.equilibrium(np.array([-0.3]), joints="free", tau=tau, tol=1e-14)
    assert found.q[0] == pytest.approx(target, abs=1e-13)
    np.testing.assert_array_equal(found.torques, tau)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"joints": "clamped"}, "joints must be 'locked' or 'free', got 'clamped'"),
        ({"tau": [1.0, 2.0]}, r"tau must have shape \(1,\), got \(2,\)"),
        ({"tol": 0.0}, "tol must be a relative residual in"),
        ({"q": [float("nan"), 0.0, 0.0]}, "q must be finite"),
    ],
)
def test_bad_arguments_name_the_argument_and_value(arguments, message):
    model = FiniteElementModel(cantilever(), elements=1)
    with pytest.raises(ValueError, match=message):
        model.equilibrium(**arguments)


# -- against the independent geometrically exact reference -----------------------------------


@pytest.fixture(scope="module")
def exact_lumped_arm():
    """tests/exact_beam.py: the inextensible elastica of the lumped two-link arm at (45°, −45°)
    under gravity (bar chain extrapolated in the bar count; error estimates ~1e-12 relative),
    its tip and the two lowest locked frequencies about its equilibrium."""
    from tests.exact_beam import lumped_two_link_reference

    return lumped_two_link_reference(angles=(math.pi / 4, -math.pi / 4), gravity=G, count=2)


@pytest.mark.parametrize("frame", ["pinned", "clamped"])
def test_stiffened_frequencies_at_the_equilibrium_match_the_exact_beam(exact_lumped_arm, frame):
    """Lumped two-link arm at (45°, −45°), FEM ×8, stiffened, locked, about ``equilibrium``:
    against the exact elastica (fixture). Pinned frame (the better one): ω₁, ω₂ within 0.1 %
    (measured +0.025 %, +0.011 %) and the tip within 0.1 mm (measured 0.013 mm); clamped frame:
    ω within 1 % (measured −0.73 %, −0.18 %) and the tip within 0.5 mm (measured 0.40 mm) — the
    clamped frame measures the deflection from the root tangent, where the second-order
    foreshortening is less accurate. About δ = 0 instead both frames are off by −1.16 % and
    +0.98 % (the frequencies move with the sag); without stiffening the clamped frame's ω₁ is
    +4.0 % off at its own equilibrium."""
    model = FiniteElementModel(presets.lumped_two_link(), elements=8, frame=frame, geometric_stiffening=True)
    q0 = model.home()
    q0[:2] = math.pi / 4, -math.pi / 4
    rest = model.equilibrium(q0)
    omega = model.natural_frequencies(rest, "locked", count=2)
    relative = np.abs(omega / exact_lumped_arm.frequencies - 1)
    tip = np.linalg.norm(model.tip_position(rest.q)[:2] - exact_lumped_arm.tip)
    if frame == "pinned":
        assert np.all(relative < 1e-3), relative
        assert tip < 1e-4, tip
    else:
        assert np.all(relative < 1e-2), relative
        assert tip < 5e-4, tip
    at_rest_shape = model.natural_frequencies(q0, "locked", count=2)
    assert np.all(np.abs(at_rest_shape / exact_lumped_arm.frequencies - 1) > 5e-3)  # δ = 0 is not the rest


# -- the matrix-free Newton step ---------------------------------------------------------------


@pytest.mark.parametrize("frame", ["clamped", "pinned"])
def test_matrix_free_steps_find_the_dense_equilibrium_without_forming_the_gravity_tangent(frame, monkeypatch):
    """Lumped two-link preset at (45°, −45°), FEM ×32 per link (130 coordinates, above
    KRYLOV_MINIMUM), stiffened: ``method="auto"`` takes GMRES steps on gravity products (the dense
    ∂G/∂q is never formed: calling it fails here) and lands on the dense-Newton equilibrium to
    1e-10 of the deflections (measured 5e-12); the residual test is the same for both."""
    model = FiniteElementModel(presets.lumped_two_link(), elements=32, frame=frame, geometric_stiffening=True)
    q0 = model.home()
    q0[:2] = math.pi / 4, -math.pi / 4
    dense = model.equilibrium(q0, method="dense")

    def refuse(q):
        raise AssertionError("the dense gravity stiffness was formed")

    monkeypatch.setattr(model, "gravity_stiffness", refuse)
    found = model.equilibrium(q0)
    assert found.residual <= 1e-10
    scale = np.max(np.abs(dense.q[model.flex]))
    np.testing.assert_allclose(found.q, dense.q, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(found.torques, dense.torques, rtol=1e-9)


def test_equilibrium_method_is_checked():
    """An unknown method names the value; "krylov" with free joints (no elastic stiffness along
    the joint motions to precondition with) is refused with the way out."""
    model = FiniteElementModel(cantilever(), elements=2)
    with pytest.raises(ValueError, match="method must be 'auto', 'dense' or 'krylov', got 'lu'"):
        model.equilibrium(method="lu")
    with pytest.raises(ValueError, match="use 'dense'"):
        model.equilibrium(joints="free", tau=np.array([4.905]), method="krylov")
