"""Linear state-space models about a rest point (``Model.state_space``, core/analysis/state_space.py),
and the linear analyses that take an ``Equilibrium``.

References, each with its tolerance at the test:

* the output matrix C against central differences of the nonlinear outputs (``tip_position``,
  ``tip_deflections``, and a deflection measured from ``point_position`` in the link's frame);
* A, B against ``Model.linearize`` (the same numbers) and against central differences of
  ``forward_dynamics``;
* transmission zeros against ``zero_dynamics`` and, for the motor-angle outputs, against
  ±i × the locked natural frequencies; textbook transfer functions with known zeros;
* the frequency response against ``scipy.signal.ss2tf`` and against the second-order solve
  C_q (K_t − ω²M + iωD)⁻¹ B_u;
* the poles of the undamped system against ±i × the free natural frequencies.

The arm is the lumped two-link preset (gravity, gear ratios, a heavy second motor) at a deflected
equilibrium θ = (45°, −45°), with and without geometric stiffening, clamped and pinned frames,
AMM and FEM.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np
import pytest
import scipy.signal
from scipy.optimize import linear_sum_assignment

from amm import AssumedModesModel
from core.analysis.equilibrium import Equilibrium
from core.analysis.linear import zero_dynamics
from core.analysis.state_space import NamedStateSpace, invariant_zeros, tip_jacobian
from core.arm import presets
from core.numerics.derivatives import central_difference_jacobian
from fem import FiniteElementModel

CASES = [
    (backend, frame, stiffening)
    for backend in ("amm", "fem")
    for frame in ("clamped", "pinned")
    for stiffening in (False, True)
]
IDS = [f"{b}-{f}-{'stiffened' if s else 'classic'}" for b, f, s in CASES]
#: The output rows are exact (analytic Jacobians); the reference, a Richardson-extrapolated
#: central difference (:func:`derivative`), carries ~1e-11 of truncation and round-off.
OUTPUT_RTOL = 1e-8


@functools.cache
def built(
    backend: str, frame: str, stiffening: bool, pose: tuple[float, float] = (math.pi / 4, -math.pi / 4)
):
    """(model, equilibrium) of the lumped two-link arm held at ``pose`` under gravity."""
    arm = presets.lumped_two_link()
    if backend == "amm":
        shape = "pinned-pinned" if frame == "pinned" else "clamped-free"
        model = AssumedModesModel(arm, shape=shape, modes=3, geometric_stiffening=stiffening)
    else:
        model = FiniteElementModel(arm, elements=4, frame=frame, geometric_stiffening=stiffening)
    q = model.home()
    q[:2] = pose
    return model, model.equilibrium(q)


def matched_distance(ours: np.ndarray, reference: np.ndarray) -> float:
    """Largest |ours − reference| over the pairing of least total distance, relative to each
    reference value's magnitude (the sets must have the same size)."""
    assert ours.shape == reference.shape
    cost = np.abs(ours[:, None] - reference[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(np.max(cost[rows, cols] / np.abs(reference[cols])))


def derivative(function, x: np.ndarray, step: float = 1e-4) -> np.ndarray:
    """∂f/∂x by Richardson extrapolation of central differences, (4 D(h/2) − D(h)) / 3: error
    O(h⁴) + O(ε/h) (plain central differences at h = 1e-5 leave 3e-8 of truncation on the
    third assumed mode, whose tip slope turns the next link: large third derivatives)."""
    half = central_difference_jacobian(function, x, step / 2)
    return (4 * half - central_difference_jacobian(function, x, step)) / 3


def link_deflection(model, link: int, s: float, q: np.ndarray) -> float:
    """In-plane deflection of the point at s on ``link`` measured from ``point_position``: its
    offset from where it is with the link's own flexible coordinates zeroed, in the link's beam
    frame (its y axis). Independent of the basis evaluation the state space uses."""
    R = model.kinematics.frames(q[None], jacobians=False)[link - 1].R_body[0]
    bare = q.copy()
    bare[model.flex_columns[link]] = 0.0
    return float(R[:, 1] @ (model.point_position(link, s, q) - model.point_position(link, s, bare)))


# ------------------------------------------------------------------------------ outputs
@pytest.mark.parametrize(("backend", "frame", "stiffening"), CASES, ids=IDS)
def test_output_matrix_is_the_derivative_of_the_outputs_at_a_deflected_equilibrium(
    backend, frame, stiffening
):
    """C = [∂y/∂q, 0] and D = 0 for the tip, the tip deflections and two point deflections,
    against central differences (:func:`derivative`) of tip_position, tip_deflections and the
    point_position deflection of :func:`link_deflection`, to 1e-8 of max |row|."""
    model, eq = built(backend, frame, stiffening)
    assert np.max(np.abs(eq.q[model.flex])) > 1e-4  # deflected under gravity
    outputs = ["tip", "tip_deflection", ("deflection", 1, 0.3), ("deflection", 2, 0.2)]
    ss = model.state_space(eq, outputs=outputs)
    n = model.n_dof
    assert ss.output_names == ("tip_x", "tip_y", "tip_w1", "tip_w2", "w1(0.3)", "w2(0.2)")
    assert not np.any(ss.C[:, n:]) and not np.any(ss.D) and ss.D.shape == (6, 2)
    references = [
        lambda q: model.tip_position(q)[:2],
        lambda q: np.array(list(model.tip_deflections(q).values())),
        lambda q: np.array([link_deflection(model, 1, 0.3, q)]),
        lambda q: np.array([link_deflection(model, 2, 0.2, q)]),
    ]
    expected = np.vstack([derivative(f, eq.q) for f in references])
    for row, name in enumerate(ss.output_names):
        scale = max(np.max(np.abs(expected[row])), 1e-300)
        assert np.max(np.abs(ss.C[row, :n] - expected[row])) <= OUTPUT_RTOL * scale, name
    if frame == "pinned":  # measured from the chord frame: no tip deflection (sin kπ for AMM)
        assert np.max(np.abs(ss.C[2:4])) <= 1e-14 * np.max(np.abs(ss.C))


def test_joint_outputs_are_the_motor_angles_and_the_joint_coordinates():
    """ "joints": Bᵀq (hub angles θ + φ'(0)ᵀδ for pinned frames); "joint_coordinates": q_r."""
    model, eq = built("fem", "pinned", True)
    ss = model.state_space(eq, outputs=["joints", "joint_coordinates"])
    n = model.n_dof
    assert ss.output_names == ("joint_1", "joint_2", "theta1", "theta2")
    np.testing.assert_array_equal(ss.C[:2, :n], model.input_matrix(eq.q).T)
    np.testing.assert_array_equal(ss.C[2:, :n], np.eye(n)[:2])
    assert np.any(ss.C[:2, 2:n])  # the root slopes


def test_the_tip_jacobian_without_the_engine_kinematics_is_a_central_difference():
    """Models without ``kinematics`` (the symbolic one) fall back to central differences of
    tip_position (step 1e-5): equal to the engine's analytic Jacobian to 1e-9 relative."""
    model, eq = built("amm", "clamped", True)

    class Plain:  # only what the fallback uses
        arm, tip_position = model.arm, model.tip_position

    analytic = tip_jacobian(model, eq.q)
    fallback = tip_jacobian(Plain(), eq.q)
    assert np.max(np.abs(fallback - analytic)) <= 1e-9 * np.max(np.abs(analytic))


@pytest.mark.parametrize("backend", ["amm", "fem"])
def test_translating_link_deflections_follow_the_free_length(backend):
    """rrp-translating (spatial, a link sliding through its hub): the tip deflections (w and v)
    against central differences of tip_deflections and tip_position, to 1e-8; the free-length column is the
    change of ψ(s/l) at fixed s, which a deflection at the tip (s = l, moving) does not have."""
    arm = presets.rrp_translating()
    model = AssumedModesModel(arm, modes=2) if backend == "amm" else FiniteElementModel(arm, elements=3)
    q = model.home()
    q[:3] = 0.3, 0.2, 0.7 * q[2]
    q[3:] = 1e-2 * np.arange(1, model.n_dof - 2)
    with pytest.warns(RuntimeWarning, match="not an equilibrium"):  # deflected, no torques
        ss = model.state_space(q, outputs=["tip", "tip_deflection", ("deflection", 3, 0.3)])
    assert ss.output_names == ("tip_x", "tip_y", "tip_z", "tip_w3", "tip_v3", "w3(0.3)", "v3(0.3)")
    n = model.n_dof
    expected = derivative(lambda x: np.array(list(model.tip_deflections(x).values())), q)
    assert np.max(np.abs(ss.C[3:5, :n] - expected)) <= OUTPUT_RTOL * np.max(np.abs(expected))
    tip = derivative(model.tip_position, q)
    assert np.max(np.abs(ss.C[:3, :n] - tip)) <= OUTPUT_RTOL * np.max(np.abs(tip))
    assert ss.C[5, 2] != 0.0  # ∂w(s)/∂l at fixed s


# ------------------------------------------------------------------------------ A and B
@pytest.mark.parametrize(("backend", "frame", "stiffening"), CASES, ids=IDS)
def test_a_and_b_are_linearize_and_the_derivative_of_forward_dynamics(backend, frame, stiffening):
    """A, B are Model.linearize's at (q, 0, holding torques), the same numbers; and central
    differences of forward_dynamics (friction off; relative step 1e-7: truncation ∝ h², measured
    ≤ 2.6e-9 of max |A|, AMM pinned stiffened) agree to 1e-8 of max |A| and of max |B|."""
    model, eq = built(backend, frame, stiffening)
    ss = model.state_space(eq)
    A, B = model.linearize(eq.q, None, eq.torques)
    np.testing.assert_array_equal(ss.A, A)
    np.testing.assert_array_equal(ss.B, B)
    n = model.n_dof
    x0 = np.concatenate([eq.q, np.zeros(n)])
    rates = central_difference_jacobian(
        lambda x: model.forward_dynamics(x[:n], x[n:], eq.torques, friction=False), x0, 1e-7
    )
    assert np.max(np.abs(rates - ss.A[n:])) <= 1e-8 * np.max(np.abs(ss.A[n:]))
    inputs = central_difference_jacobian(
        lambda tau: model.forward_dynamics(eq.q, np.zeros(n), tau, friction=False), eq.torques, 1e-7
    )
    assert np.max(np.abs(inputs - ss.B[n:])) <= 1e-8 * np.max(np.abs(ss.B[n:]))
    np.testing.assert_array_equal(ss.A[:n, n:], np.eye(n))
    assert not np.any(ss.A[:n, :n]) and not np.any(ss.B[:n])


def test_names_and_the_point_are_carried_by_a_scipy_state_space():
    model, eq = built("amm", "clamped", False)
    ss = model.state_space(eq, outputs="tip")
    assert isinstance(ss, scipy.signal.StateSpace) and isinstance(ss, scipy.signal.lti)
    assert isinstance(ss, NamedStateSpace) and ss.dt is None
    assert ss.state_names == (*model.coordinates, *(f"{c}_dot" for c in model.coordinates))
    assert ss.input_names == ("tau_1", "tau_2") and ss.output_names == ("tip_x", "tip_y")
    np.testing.assert_array_equal(ss.q0, eq.q)
    np.testing.assert_array_equal(ss.tau0, eq.torques)
    copy = ss.to_ss()
    assert copy.state_names == ss.state_names and copy is not ss
    siso = NamedStateSpace(ss.A, ss.B[:, :1], ss.C[:1], ss.D[:1, :1])
    assert siso.state_names[0] == "x1" and siso.output_names == ("y1",)


# ------------------------------------------------------------------------------ zeros
@pytest.mark.parametrize(("backend", "frame", "stiffening"), CASES, ids=IDS)
def test_transmission_zeros_are_the_zero_dynamics(backend, frame, stiffening):
    """Inputs the joint torques: the transmission zeros with outputs q_r ("joint_coordinates")
    are zero_dynamics(model, eq), and with outputs Bᵀq ("joints") zero_dynamics(..., "joints")
    and ±i × the locked frequencies; 1e-8 relative to each zero, paired by least distance
    (measured ≤ 4e-10, FEM's lowest zero; QZ on the balanced pencil). Clamped frames: one set.
    Pinned frames: q_r (the chord angles) gives zeros off the imaginary axis (non-minimum phase,
    Lin & Lewis 1994), Bᵀq (the hub angles, collocated) does not."""
    model, eq = built(backend, frame, stiffening)
    n_flex = model.n_dof - model.n_joints
    chord = zero_dynamics(model, eq)
    hub = zero_dynamics(model, eq, outputs="joints")
    found_chord = model.state_space(eq, outputs="joint_coordinates").transmission_zeros()
    found_hub = model.state_space(eq, outputs="joints").transmission_zeros()
    assert found_chord.shape == found_hub.shape == (2 * n_flex,)
    assert matched_distance(found_chord, chord) <= 1e-8
    assert matched_distance(found_hub, hub) <= 1e-8
    locked = model.natural_frequencies(eq)
    assert matched_distance(found_hub, np.concatenate([1j * locked, -1j * locked])) <= 1e-8
    if frame == "clamped":
        assert matched_distance(chord, hub) <= 1e-12
    else:
        assert np.max(chord.real) > 1e-3 * np.max(np.abs(chord))  # right half-plane zeros


def test_zero_dynamics_away_from_rest_include_the_inertia_of_the_acceleration():
    """Undeflected pose under gravity (not an equilibrium: the held arm accelerates). The zero
    dynamics linearize the motion with the outputs held about that moving state, so they
    include Σ_k ∂M/∂q_k q̈₀ e_kᵀ; they equal the transmission zeros of the state space at the
    torques that hold the outputs (computed here from the equations: ÿ = 0), to 1e-8. Both warn."""
    model, _ = built("fem", "pinned", True)
    q = model.home()
    q[:2] = math.pi / 4, -math.pi / 4
    M, B = model.mass_matrix(q), model.input_matrix(q)
    forces = model.gravity_forces(q) + model.elastic_forces(q)
    r, f = model.joints, model.flex
    a = np.linalg.solve(M[f, f] - B[f] @ M[r, f], B[f] @ forces[r] - forces[f])  # q̈_r = 0
    tau = M[r, f] @ a + forces[r]
    with pytest.warns(RuntimeWarning, match="zero_dynamics: the held arm is not at rest"):
        zeros = zero_dynamics(model, q)
    with pytest.warns(RuntimeWarning, match="state_space: the point is not an equilibrium"):
        ss = model.state_space(q, outputs="joint_coordinates", tau=tau)
    qdd = model.forward_dynamics(q, np.zeros(model.n_dof), tau, friction=False)
    assert np.max(np.abs(qdd[r])) <= 1e-9 * np.max(np.abs(qdd))  # the outputs are held
    assert matched_distance(ss.transmission_zeros(), zeros) <= 1e-8
    # without the ∂M/∂q q̈₀ term the zeros are far off (measured: the lowest 36.8 against 32.5 rad/s)
    K = model.elastic_stiffness(q) + model.gravity_stiffness(q)
    M_z, K_z = M[f, f] - B[f] @ M[r, f], K[f, f] - B[f] @ K[r, f]
    squares = np.linalg.eigvals(np.linalg.solve(M_z, K_z)).astype(complex)
    omitted = np.concatenate([1j * np.sqrt(squares), -1j * np.sqrt(squares)])
    assert matched_distance(omitted, zeros) > 0.1


def test_invariant_zeros_of_textbook_transfer_functions():
    """Zeros known in closed form: G(s) = (s + 2)(s − 1) / ((s + 3)(s + 4)(s + 5)) has −2 and 1;
    (s + 7)/(s + 1) (feedthrough 1) has −7; diag of the two a 2×2 system with −2, 1, −7; to 1e-12."""
    first = scipy.signal.tf2ss(np.poly([-2.0, 1.0]), np.poly([-3.0, -4.0, -5.0]))
    second = scipy.signal.tf2ss([1.0, 7.0], [1.0, 1.0])
    np.testing.assert_allclose(invariant_zeros(*first), [-2.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(invariant_zeros(*second), [-7.0], rtol=1e-12)
    A = scipy.linalg.block_diag(first[0], second[0])
    B = scipy.linalg.block_diag(first[1], second[1])
    C = scipy.linalg.block_diag(first[2], second[2])
    D = scipy.linalg.block_diag(first[3], second[3])
    np.testing.assert_allclose(invariant_zeros(A, B, C, D), [-7.0, -2.0, 1.0], rtol=1e-12)


def test_invariant_zeros_refuse_non_square_and_degenerate_systems():
    A, B = -np.eye(2), np.array([[1.0], [0.0]])
    with pytest.raises(ValueError, match="square system, got 2 outputs and 1 inputs"):
        invariant_zeros(A, B, np.eye(2), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="degenerate"):
        invariant_zeros(A, B, np.zeros((1, 2)), np.zeros((1, 1)))
    model, eq = built("amm", "clamped", False)
    with pytest.raises(ValueError, match="square system, got 4 outputs and 2 inputs"):
        model.state_space(eq, outputs=["tip", "tip_deflection"]).transmission_zeros()


# ------------------------------------------------------------------------------ frequency response
def test_frequency_response_equals_the_transfer_function_of_ss2tf():
    """A one-mode-per-link AMM arm (8 states): C(iωI − A)⁻¹B for output joint_1, input tau_2 is
    num(iω)/den(iω) of scipy.signal.ss2tf, to 1e-8 relative, at four frequencies."""
    arm = presets.lumped_two_link()
    model = AssumedModesModel(arm, modes=1)
    q = model.home()
    q[:2] = math.pi / 4, -math.pi / 4
    ss = model.state_space(model.equilibrium(q), outputs=["joints", "tip"])
    w = np.array([0.5, 3.0, 20.0, 150.0])
    numerator, denominator = scipy.signal.ss2tf(ss.A, ss.B, ss.C, ss.D, input=1)
    expected = np.polyval(numerator[0], 1j * w) / np.polyval(denominator, 1j * w)
    np.testing.assert_allclose(ss.frequency_response(w, output="joint_1", input="tau_2"), expected, rtol=1e-8)
    np.testing.assert_allclose(ss.frequency_response(w, output=0, input=1), expected, rtol=1e-8)


def test_frequency_response_is_the_second_order_solve():
    """Stiffened pinned FEM: G(iω) = C_q (K_t − ω²M + iωD)⁻¹ B_u with K_t the tangent stiffness
    (Model.tangent_stiffness at q̈₀, what linearize uses), for the tip deflections and the tip over both torques, to 1e-9;
    shapes (frequencies, outputs, inputs) with the axes of a named output or input dropped."""
    model, eq = built("fem", "pinned", True)
    ss = model.state_space(eq, outputs=[("deflection", 2, 0.2), "tip"])
    n = model.n_dof
    M, D, B = model.mass_matrix(eq.q), model.damping_matrix(eq.q), model.input_matrix(eq.q)
    K = model.tangent_stiffness(eq.q, model.forward_dynamics(eq.q, np.zeros(n), eq.torques, friction=False))
    w = np.array([1.0, 12.0, 80.0, 900.0])
    expected = np.array([ss.C[:, :n] @ np.linalg.solve(K - x**2 * M + 1j * x * D, B) for x in w])
    found = ss.frequency_response(w)
    assert found.shape == (4, 3, 2)
    size = np.max(np.abs(expected), axis=(1, 2))  # per frequency
    assert np.max(np.max(np.abs(found - expected), axis=(1, 2)) / size) <= 1e-9
    assert ss.frequency_response(w, output="tip_y").shape == (4, 2)
    assert ss.frequency_response(w, input="tau_1").shape == (4, 3)
    assert ss.frequency_response(w, output=["tip_y", "w2(0.2)"], input=[1]).shape == (4, 2, 1)
    assert ss.frequency_response(5.0, output="tip_y", input="tau_1").shape == ()
    with pytest.raises(ValueError, match=r"output 'tip_z' is not one of \['w2\(0.2\)', 'tip_x', 'tip_y'\]"):
        ss.frequency_response(w, output="tip_z")
    with pytest.raises(ValueError, match="input must be a name of"):
        ss.frequency_response(w, input=2)


def test_undamped_poles_are_the_free_natural_frequencies():
    """A pose where the free arm is stable under gravity (θ = (−60°, 17°)), damping set aside
    (A₂₂ = 0): the eigenvalues of A are ±i × natural_frequencies(eq, "free"), to 1e-8."""
    model, eq = built("amm", "pinned", True, pose=(-math.pi / 3, 0.3))
    ss = model.state_space(eq, outputs="joints")
    n = model.n_dof
    undamped = ss.A.copy()
    undamped[n:, n:] = 0.0
    free = model.natural_frequencies(eq, "free")
    assert np.all(free > 0)
    poles = np.linalg.eigvals(undamped)
    assert matched_distance(poles, np.concatenate([1j * free, -1j * free])) <= 1e-8


# ------------------------------------------------------------------------------ inputs and errors
def test_unknown_outputs_name_the_value_and_the_allowed_ones():
    model, eq = built("amm", "clamped", False)
    with pytest.raises(
        ValueError, match=r"unknown output 'tips'; allowed: 'joints', 'joint_coordinates', 'tip'"
    ):
        model.state_space(eq, outputs=["joints", "tips"])
    with pytest.raises(ValueError, match=r"unknown output \('deflection', 1\)"):
        model.state_space(eq, outputs=[("deflection", 1)])
    with pytest.raises(ValueError, match=r"s must lie in \[0.0, 0.475\] on link 1, got 0.9"):
        model.state_space(eq, outputs=[("deflection", 1, 0.9)])
    with pytest.raises(ValueError, match=r"\['tip_x', 'tip_y'\] requested more than once"):
        model.state_space(eq, outputs=["tip", "tip"])
    rigid = AssumedModesModel(presets.rigid_two_link())
    with pytest.raises(ValueError, match=r"link 1 is rigid"):
        rigid.state_space(outputs=[("deflection", 1, 0.5)])
    with pytest.raises(ValueError, match="'tip_deflection': the model reports no tip deflection"):
        rigid.state_space(outputs="tip_deflection")
    with pytest.raises(ValueError, match=r"tau must have shape \(2,\), got \(3,\)"):
        model.state_space(eq.q, tau=np.zeros(3))


def test_a_point_away_from_rest_warns_and_an_equilibrium_does_not():
    model, eq = built("fem", "clamped", False)
    with pytest.warns(RuntimeWarning, match=r"not an equilibrium \(unbalanced force .* of the loads"):
        model.state_space(eq.q)  # τ = 0: gravity pulls
    model.state_space(eq)  # warnings are errors in this suite
    model.state_space(eq.q, tau=eq.torques)


@pytest.mark.parametrize("frame", ["clamped", "pinned"])
def test_linear_analyses_accept_an_equilibrium(frame):
    """natural_frequencies, zero_dynamics, linearize and state_space take an Equilibrium: the
    same numbers as its q (and its holding torques; an explicit τ0 wins)."""
    model, eq = built("fem", frame, True)
    assert isinstance(eq, Equilibrium)
    np.testing.assert_array_equal(model.natural_frequencies(eq), model.natural_frequencies(eq.q))
    omega, modes = model.natural_frequencies(eq, vectors=True, count=3)
    np.testing.assert_array_equal(omega, model.natural_frequencies(eq.q, count=3))
    assert modes.shape == (model.n_dof, 3)
    np.testing.assert_array_equal(zero_dynamics(model, eq), zero_dynamics(model, eq.q))
    for got, expected in zip(model.linearize(eq), model.linearize(eq.q, None, eq.torques), strict=True):
        np.testing.assert_array_equal(got, expected)
    zero = np.zeros(2)
    with pytest.warns(RuntimeWarning):  # τ = 0 is not the holding torque: not a rest point
        moving = model.state_space(eq, tau=zero)
    np.testing.assert_array_equal(moving.A, model.linearize(eq, tau0=zero)[0])
    np.testing.assert_array_equal(moving.A, model.linearize(eq.q, None, zero)[0])


# ------------------------------------------------------------------------------ python-control
def test_to_control_without_python_control_says_how_to_install_it(monkeypatch):
    model, eq = built("amm", "clamped", False)
    ss = model.state_space(eq)
    monkeypatch.setitem(sys.modules, "control", None)  # import control raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'flexlink\[control\]'"):
        ss.to_control()


def test_to_control_keeps_the_matrices_and_the_names():
    control = pytest.importorskip("control")
    model, eq = built("amm", "pinned", False)
    ss = model.state_space(eq, outputs=["joints", "tip_deflection"])
    converted = ss.to_control()
    assert isinstance(converted, control.StateSpace) and converted.isctime()
    np.testing.assert_array_equal(converted.A, ss.A)
    np.testing.assert_array_equal(converted.C, ss.C)
    assert converted.state_labels == list(ss.state_names)
    assert converted.input_labels == ["tau_1", "tau_2"]
    assert converted.output_labels == ["joint_1", "joint_2", "tip_w1", "tip_w2"]
