"""Auxiliary states integrated with the motion (``Model.auxiliary_*``, ``simulate``).

The test model is the one-flexible-link arm (assumed modes) with an extra joint
spring k (s − s_rest) on θ1. In :class:`SpringOnJoint` the stretch s is θ1 itself;
in :class:`SpringOnAuxiliary` it is an auxiliary state a with ȧ = θ̇1, so
a(t) − a(0) = θ1(t) − θ1(0) and the two models have the same motion when
s_rest differs by a(0) − θ1(0). The auxiliary model refuses every evaluation of
its elastic forces or potential energy outside ``with model.auxiliary(a):``, so a
simulation that evaluates anything without the integrated a fails loudly.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod

import numpy as np
import pytest

from amm import AssumedModesModel
from core import PD, Decoupling, ParabolicBlend, energy_drift, simulate
from core.analysis import simulation
from core.arm.presets import one_flexible_link
from core.dynamics.model import Model

#: Joint spring [N m/rad]: ω ≈ √(k / I) ≈ 1.4 rad/s with the 17.5 kg payload at 1.19 m.
SPRING = 50.0
RTOL, ATOL = 1e-10, 1e-12
TIMES = np.linspace(0.0, 1.0, 11)


class _WithSpring(Model):
    """``inner`` (every primitive delegated) plus the joint spring k (s − rest) on q_1."""

    def __init__(self, inner: Model, rest: float, k: float = SPRING) -> None:
        self.inner, self.arm, self.rest, self.k = inner, inner.arm, float(rest), float(k)

    @abstractmethod
    def _stretch(self, q) -> float:
        """The spring's coordinate s (the auxiliary state, or q_1 itself)."""

    @property
    def coordinates(self):
        return self.inner.coordinates

    @property
    def n_joints(self):
        return self.inner.n_joints

    def rebuild(self, arm):
        return type(self)(self.inner.rebuild(arm), self.rest, self.k)

    def mass_matrix(self, q):
        return self.inner.mass_matrix(q)

    def mass_matrix_derivatives(self, q):
        return self.inner.mass_matrix_derivatives(q)

    def stiffness_matrix(self, q):
        return self.inner.stiffness_matrix(q)

    def damping_matrix(self, q):
        return self.inner.damping_matrix(q)

    def gravity_forces(self, q):
        return self.inner.gravity_forces(q)

    def input_matrix(self, q):
        return self.inner.input_matrix(q)

    def friction_forces(self, q, qd):
        return self.inner.friction_forces(q, qd)

    def point_position(self, link, s, q):
        return self.inner.point_position(link, s, q)

    def tip_position(self, q):
        return self.inner.tip_position(q)

    def tip_deflections(self, q):
        return self.inner.tip_deflections(q)

    def nonlinear_forces(self, q, qd):
        return self.inner.nonlinear_forces(q, qd)

    def elastic_forces(self, q):
        forces = self.inner.elastic_forces(q).copy()
        forces[0] += self.k * self._stretch(q)
        return forces

    def potential_energy(self, q):
        return self.inner.potential_energy(q) + 0.5 * self.k * self._stretch(q) ** 2


class SpringOnJoint(_WithSpring):
    """The spring stretched by θ1 directly: no auxiliary states."""

    def _stretch(self, q) -> float:
        return float(q[0]) - self.rest


class SpringOnAuxiliary(_WithSpring):
    """The spring stretched by the auxiliary state a, ȧ = θ̇1."""

    def __init__(self, inner: Model, rest: float, k: float = SPRING) -> None:
        super().__init__(inner, rest, k)
        self._a = None  # set only inside auxiliary()
        self.rate_calls = 0

    @property
    def auxiliary_names(self):
        return ("a",)

    def auxiliary_initial(self, q):
        return np.array([float(q[0])])

    def auxiliary_rates(self, q, qd, a):
        self.rate_calls += 1
        return np.array([float(qd[0])])

    @contextlib.contextmanager
    def auxiliary(self, a):
        previous, self._a = self._a, np.array(a, dtype=float)
        try:
            yield
        finally:
            self._a = previous

    def _stretch(self, q) -> float:
        if self._a is None:
            raise RuntimeError("evaluated outside model.auxiliary(a)")
        return float(self._a[0]) - self.rest


def inner_model():
    return AssumedModesModel(one_flexible_link(), shape="clamped-free", modes=2)


def start(model):
    q0 = np.zeros(model.n_dof)
    q0[0], q0[1:] = 0.2, 1e-4
    return q0


def maneuver():
    """Decoupling control along a blend 0.2 → 0.6 rad: the controller evaluates the
    model's elastic forces, so it too must run inside the auxiliary context."""
    return dict(
        controller=Decoupling(kp=25.0, kd=10.0),
        trajectory=ParabolicBlend((0.2,), (0.6,), 0.6, 0.2),
        t_eval=TIMES,
        rtol=RTOL,
        atol=ATOL,
    )


@pytest.fixture(scope="module")
def inner():
    return inner_model()


@pytest.mark.parametrize("method", ["DOP853", "Radau"])
def test_auxiliary_state_follows_the_joint_angle(inner, method):
    """ȧ = θ̇1 is integrated by the same stages as θ1 (the two rows of ẋ are the
    same number), so a(t) − a(0) = θ1(t) − θ1(0) holds to round-off rather than
    only to the tolerance rtol 1e-10: asserted to 1e-12 rad (angles ≤ 0.6 rad).
    The column sits after the rates and the layout of the rest is unchanged."""
    model = SpringOnAuxiliary(inner, rest=0.1)
    q0 = start(model)
    frame = simulate(model, (0.0, 1.0), q0, method=method, **maneuver())
    assert frame["a"].iloc[0] == q0[0]
    np.testing.assert_allclose(frame["a"] - frame["a"].iloc[0], frame["theta1"] - q0[0], rtol=0, atol=1e-12)
    assert frame["theta1"].max() - frame["theta1"].min() > 0.3  # it did move
    columns = list(frame.columns)
    assert columns.index("a") == columns.index(f"{model.coordinates[-1]}_dot") + 1
    assert model.rate_calls >= frame.attrs["nfev"]


@pytest.mark.parametrize(("method", "shift"), [("DOP853", 0.0), ("BDF", 0.05), ("LSODA", -0.03)])
def test_spring_on_the_auxiliary_state_equals_the_spring_on_the_joint(inner, method, shift):
    """Spring on a with rest r and a(0) = θ1(0) + shift is the spring on θ1 with rest
    r − shift: the same motion, torques and energies. The two runs take different
    steps (the error norm sees one more state), so they agree to the tolerance
    rtol 1e-10 (measured ≤ 6e-10 relative; asserted 1e-8 of each group's largest
    value: coordinates, rates, torques and accelerations, energies)."""
    auxiliary = SpringOnAuxiliary(inner, rest=0.1)
    direct = SpringOnJoint(inner, rest=0.1 - shift)
    q0 = start(inner)
    ours = simulate(auxiliary, (0.0, 1.0), q0, method=method, auxiliary0=[q0[0] + shift], **maneuver())
    reference = simulate(direct, (0.0, 1.0), q0, method=method, **maneuver())
    assert "a" not in reference.columns
    assert list(ours.columns.drop("a")) == list(reference.columns)
    np.testing.assert_allclose(ours["a"], ours["theta1"] + shift, rtol=0, atol=1e-12)
    names = list(inner.coordinates)
    for columns in (names, [f"{n}_dot" for n in names], ["tau1", "theta1_ddot"]):
        scale = reference[columns].abs().to_numpy().max()
        np.testing.assert_allclose(ours[columns], reference[columns], rtol=0, atol=1e-8 * scale)
    energies = ["kinetic", "potential", "energy", "work_input", "work_dissipated", "input_power"]
    scale = reference[energies].abs().to_numpy().max()
    np.testing.assert_allclose(ours[energies], reference[energies], rtol=0, atol=1e-8 * scale)
    # The spring did its part: without it the torques would differ by k·(θ1 − rest).
    assert abs(ours["potential"].iloc[0] - inner.potential_energy(q0)) > 1e-3


def test_energy_columns_use_the_integrated_auxiliary_values(inner):
    """Every row is evaluated with its own a: the potential column is V(q) + ½k(a − r)²
    of that row's a (the model raises outside the context), and the energy balance
    E − E(0) − W_in + W_diss stays at the integration tolerance (measured 4e-14 of
    the energy, asserted 1e-8) under PD control, where the spring does work. With a
    off by 0.1 rad the potential would be off by ½k(0.2(a − r) + 0.01) > 1 J."""
    model = SpringOnAuxiliary(inner, rest=-0.3)
    q0 = start(model)
    frame = simulate(
        model,
        (0.0, 1.0),
        q0,
        controller=PD(kp=80.0, kd=20.0),
        trajectory=ParabolicBlend((0.2,), (0.6,), 0.6, 0.2),
        t_eval=TIMES,
        rtol=RTOL,
        atol=ATOL,
    )
    assert energy_drift(frame) <= 1e-8
    assert frame["work_input"].abs().max() > 1.0  # the balance is not trivially conserved
    names = list(model.coordinates)
    for _, row in frame.iloc[[0, 4, 10]].iterrows():
        q = row[names].to_numpy(float)
        with model.auxiliary([row["a"]]):
            expected = model.potential_energy(q)
        assert row["potential"] == pytest.approx(expected, rel=1e-14)
        with model.auxiliary([row["a"] + 0.1]):
            assert abs(model.potential_energy(q) - row["potential"]) > 1.0
    with pytest.raises(RuntimeError, match="outside"):
        model.potential_energy(q0)


def test_auxiliary0_of_the_wrong_shape_is_refused(inner):
    model = SpringOnAuxiliary(inner, rest=0.0)
    q0 = start(model)
    for wrong in ([0.1, 0.2], 0.1, [[0.1]], []):
        with pytest.raises(ValueError, match=r"auxiliary0 must have shape \(1,\)"):
            simulate(model, (0.0, 0.1), q0, auxiliary0=wrong)
    with pytest.raises(ValueError, match="auxiliary0 must be finite"):
        simulate(model, (0.0, 0.1), q0, auxiliary0=[np.nan])
    with pytest.raises(
        ValueError, match=r"auxiliary0 must have shape \(0,\) \(the model has no auxiliary states\)"
    ):
        simulate(inner, (0.0, 0.1), q0, auxiliary0=[0.1])

    class Clashing(SpringOnAuxiliary):
        auxiliary_names = ("theta1",)

    with pytest.raises(ValueError, match=r"auxiliary_names must be distinct .* \['theta1'\]"):
        simulate(Clashing(inner, rest=0.0), (0.0, 0.1), q0)


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_implicit_methods_differentiate_the_whole_state_with_auxiliary_states(inner, method, monkeypatch):
    """The compiled Jacobian has no auxiliary block: an auxiliary model (and a model whose
    generic rates have no compiled Jacobian) hands solve_ivp central differences of its whole
    right-hand side — never SciPy's own differences, whose steps for the work-integral columns
    grow without bound (test_simulation) — while the engine model gets its compiled one."""
    import scipy.integrate

    seen = []
    original = scipy.integrate.solve_ivp

    def spy(fun, t_span, y0, **options):
        jac = options.get("jac")
        seen.append((getattr(jac, "__name__", None), y0.size))
        return original(fun, t_span, y0, **options)

    monkeypatch.setattr(scipy.integrate, "solve_ivp", spy)
    q0 = start(inner)
    common = dict(
        controller=PD(kp=80.0, kd=20.0),
        trajectory=ParabolicBlend((0.2,), (0.6,), 0.1, 0.05),
        method=method,
        jacobian=True,
        t_eval=[0.0, 0.05],
    )
    frame = simulate(SpringOnAuxiliary(inner, rest=0.1), (0.0, 0.05), q0, **common)
    simulate(SpringOnJoint(inner, rest=0.1), (0.0, 0.05), q0, **common)
    simulate(inner, (0.0, 0.05), q0, **common)
    n = inner.n_dof
    # generic Model.rates_function has no compiled Jacobian either; the engine's has one
    assert seen == [("<lambda>", 2 * n + 3), ("<lambda>", 2 * n + 2), ("compiled_jacobian", 2 * n + 2)]
    assert frame.attrs["success"] and frame["a"].iloc[-1] == pytest.approx(
        frame["theta1"].iloc[-1], abs=1e-12
    )


def test_model_without_auxiliary_states_keeps_its_state_and_columns(inner, monkeypatch):
    """No auxiliary states: the defaults of Model, the state x = (q, q̇, W_in, W_diss)
    handed to solve_ivp, its right-hand side exactly the model's own
    ``rates_function`` (the engine's compiled one), and the frame columns of before."""
    import scipy.integrate

    assert inner.auxiliary_names == ()
    assert inner.auxiliary_initial(start(inner)).shape == (0,)
    assert inner.auxiliary_rates(start(inner), np.zeros(inner.n_dof), np.zeros(0)).shape == (0,)
    before = inner.mass_matrix(start(inner))
    with inner.auxiliary(np.zeros(0)):  # a no-op for a model without auxiliary states
        np.testing.assert_array_equal(inner.mass_matrix(start(inner)), before)
    captured = {}
    original = scipy.integrate.solve_ivp

    def spy(fun, t_span, y0, **options):
        captured.update(fun=fun, t0=t_span[0], y0=y0.copy())
        return original(fun, t_span, y0, **options)

    monkeypatch.setattr(scipy.integrate, "solve_ivp", spy)
    # The solve_ivp path: this PD run would otherwise take the compiled DOP853, whose state and
    # steps tests/test_explicit_integration.py checks against solve_ivp's.
    monkeypatch.setattr(simulation._Run, "compiled_explicit", lambda self, t0, t1: None)
    controller = PD(kp=80.0, kd=20.0)
    trajectory = ParabolicBlend((0.2,), (0.6,), 0.1, 0.05)
    q0 = start(inner)
    qd0 = np.zeros(inner.n_dof)
    qd0[1] = 0.01
    frame = simulate(
        inner, (0.0, 0.1), q0, qd0, controller=controller, trajectory=trajectory, t_eval=[0.0, 0.1]
    )
    n = inner.n_dof
    np.testing.assert_array_equal(captured["y0"], np.concatenate([q0, qd0, [0.0, 0.0]]))
    tau0 = controller(0.0, q0, qd0, inner, trajectory.evaluate(0.0))
    np.testing.assert_array_equal(
        captured["fun"](0.0, captured["y0"]), inner.rates_function()(captured["y0"], tau0)
    )
    # the state columns at the end: x = (q, q̇, W_in, W_diss) in the frame
    names = list(inner.coordinates)
    x1 = np.concatenate(
        [
            frame[names].iloc[-1],
            frame[[f"{c}_dot" for c in names]].iloc[-1],
            frame[["work_input", "work_dissipated"]].iloc[-1],
        ]
    )
    tau1 = controller(0.1, x1[:n], x1[n : 2 * n], inner, trajectory.evaluate(0.1))
    rates = inner.rates_function()(x1, tau1)
    assert frame["theta1_ddot"].iloc[-1] == pytest.approx(rates[n], rel=1e-12)
    assert frame["input_power"].iloc[-1] == pytest.approx(rates[2 * n], rel=1e-12)
    derived = "tau1 tip_x tip_y tip_z tip_w1 theta1_ref theta1_ref_dot theta1_ddot kinetic potential"
    balance = "energy input_power work_input work_dissipated energy_balance_error"
    expected = ["time", *names, *(f"{c}_dot" for c in names), *derived.split(), *balance.split()]
    assert list(frame.columns) == expected
