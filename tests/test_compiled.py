"""The compiled recursions (core.dynamics.compiled) against the numpy engine (``compiled=False``).

The two are independent implementations: the numpy engine builds M = Σ Jᵀ M_b J
from base-frame Jacobians (core.dynamics.oracle) and h = C q̇ from the Christoffel symbols of
the complex-step ∂M/∂q; the compiled one runs the
composite-body, Newton–Euler and articulated-body recursions on link-frame
twists. Hypothesis draws every feature of the strategies (hubs, motors, lumped
masses, payloads, pinned and clamped frames, one and two planes — pinned frames
bending in two planes too, whose root rotation the compiled kernels carry in their own way
(tests/test_pinned_frames.py) —, prismatic joints, translating links, gravity).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from amm import AssumedModesModel
from core.arm import presets
from tests.strategies import models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


def numpy_twin(model):
    """The same discretization on the numpy engine."""
    return model.replace(compiled=False)


def draw_case(data, backend):
    """A compiled model, its numpy twin, a state and a random q̈."""
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    return model, numpy_twin(model), q, qd, rng.standard_normal(model.n_dof)


@BACKENDS
@given(data=st.data())
def test_mass_bias_gravity_and_inverse_dynamics_equal_the_numpy_engine(backend, data):
    """M (composite bodies), h and G (Newton–Euler) and M q̈ + h + G in one pass equal the
    numpy engine, each relative to its own scale (M: max|M|; h: max|M|·|q̇|²; G: max|G|; the
    sum: the three together). Measured over 300 drawn arms of both backends: M 9.4e-16, h
    2.2e-15, G 6.0e-16, sum 1.5e-15; tolerance 1e-12."""
    model, twin, q, qd, qdd = draw_case(data, backend)
    assert model.compiled is not None and twin.compiled is None
    M, M_ref = model.mass_matrix(q), twin.mass_matrix(q)
    scale_M = np.max(np.abs(M_ref))
    assert np.max(np.abs(M - M_ref)) <= 1e-12 * scale_M
    assert np.array_equal(M, M.T)  # filled symmetrically by the recursion
    h, h_ref = model.bias_forces(q, qd), twin.bias_forces(q, qd)
    scale_h = scale_M * max(qd @ qd, 1e-300)
    assert np.max(np.abs(h - h_ref)) <= 1e-12 * scale_h
    G, G_ref = model.gravity_forces(q), twin.gravity_forces(q)
    scale_G = max(np.max(np.abs(G_ref)), 1e-300)
    assert np.max(np.abs(G - G_ref)) <= 1e-12 * scale_G
    total = model.inertial_forces(q, qd, qdd)
    expected = M_ref @ qdd + h_ref + G_ref
    scale = scale_M * np.max(np.abs(qdd)) + scale_h + scale_G
    assert np.max(np.abs(total - expected)) <= 1e-12 * scale


@BACKENDS
@given(data=st.data())
def test_compiled_forward_dynamics_equals_the_numpy_composite_solve(backend, data):
    """The compiled articulated-body algorithm (velocity products and gravity inside the
    recursion) equals the numpy engine's Cholesky solve of M q̈ = B τ − h − D q̇ − K q − G;
    tolerance 1e-10 of the accelerations the terms (‖M‖|q̇|² for the velocity products) produce separately (both solves are
    backward stable and differ by ~cond(M)·ε; cond(M) reaches ~1e7 for beam elements: measured
    worst 4.5e-11 over 300 drawn arms)."""
    model, twin, q, qd, _ = draw_case(data, backend)
    torques = st.floats(-5, 5, allow_subnormal=False)  # subnormal products round to 0 in one path only
    tau = np.asarray(data.draw(st.lists(torques, min_size=model.n_joints, max_size=model.n_joints)))
    compiled = model.forward_dynamics(q, qd, tau, solver="recursive")
    reference = twin.forward_dynamics(q, qd, tau)
    M = twin.mass_matrix(q)
    # The velocity products enter body by body at the size ‖M‖|q̇|² even where h cancels to 0.
    products = np.full(model.n_dof, np.max(np.abs(M)) * (qd @ qd))
    terms = [twin._applied(q, qd, tau), products, twin.gravity_forces(q)]
    scale = max(np.max(np.abs(np.linalg.solve(M, f))) for f in terms)
    assert np.max(np.abs(compiled - reference)) <= 1e-10 * scale


@BACKENDS
@given(data=st.data())
def test_compiled_recursion_inverts_the_mass_matrix(backend, data):
    """``solve`` (the recursion at rest without gravity) gives M q̈ = Q for any Q: residual
    ≤ 1e-13 of max|M| max|q̈| (round-off of a backward-stable solve; measured 2.1e-16)."""
    model, twin, q, _, Q = draw_case(data, backend)
    qdd = model.compiled.solve(q, Q)
    M = twin.mass_matrix(q)
    assert np.max(np.abs(M @ qdd - Q)) <= 1e-13 * np.max(np.abs(M)) * np.max(np.abs(qdd))


def test_translating_link_of_the_preset_equals_the_numpy_engine():
    """The rrp-translating preset (AMM and FEM, free length 0.6 of 1 m) with rates: M, h, q̈
    equal the numpy engine (measured ≤ 3.2e-15 relative; tolerance 1e-12), and a free
    length outside (0, L] is refused by the compiled path too."""
    from fem import FiniteElementModel

    for model in (
        AssumedModesModel(presets.rrp_translating(), modes=2),
        FiniteElementModel(presets.rrp_translating(), elements=2),
    ):
        twin = numpy_twin(model)
        rng = np.random.default_rng(2)
        q = model.home() + 0.01 * rng.standard_normal(model.n_dof)
        q[2] = 0.6
        qd, tau = rng.standard_normal(model.n_dof), rng.standard_normal(model.n_joints)
        for ours, reference in (
            (model.mass_matrix(q), twin.mass_matrix(q)),
            (model.bias_forces(q, qd), twin.bias_forces(q, qd)),
            (model.forward_dynamics(q, qd, tau, solver="recursive"), twin.forward_dynamics(q, qd, tau)),
        ):
            assert np.max(np.abs(ours - reference)) <= 1e-12 * np.max(np.abs(reference))
        q[2] = 1.5
        with pytest.raises(ValueError, match="d3: the free length of translating link 3 must lie in"):
            model.mass_matrix(q)


def test_modal_mass_matrix_takes_the_kernel_above_its_limit(monkeypatch):
    """natural_frequencies' M comes from the oracle up to ORACLE_MASS_LIMIT coordinates and from
    the compiled kernel above it (the oracle's pass grows as ~n^2.6); both are M to round-off
    (the bound of the test above, 1e-12 of max|M|; measured 1.2e-16 on these meshes)."""
    from core.dynamics import engine
    from fem import FiniteElementModel

    model = FiniteElementModel(presets.lumped_two_link(), elements=8, geometric_stiffening=True)
    q = np.zeros(model.n_dof)
    q[:2] = np.pi / 4, -np.pi / 4
    q[2:] = 1e-3 * np.sin(np.arange(model.n_dof - 2))
    oracle = model.modal_mass_matrix(q)  # 34 coordinates: the oracle
    assert np.max(np.abs(oracle - model.replace(compiled=False).mass_matrix(q))) == 0.0
    monkeypatch.setattr(engine, "ORACLE_MASS_LIMIT", model.n_dof - 1)
    calls, kernel_mass = [], type(model.compiled).mass
    monkeypatch.setattr(type(model.compiled), "mass", lambda self, x: calls.append(1) or kernel_mass(self, x))
    kernel = model.modal_mass_matrix(q)
    assert calls == [1]
    assert np.max(np.abs(kernel - oracle)) <= 1e-12 * np.max(np.abs(oracle))


def test_compiled_flag_is_checked():
    with pytest.raises(TypeError, match="compiled must be True or False, got 'yes'"):
        AssumedModesModel(presets.lumped_two_link(), modes=2, compiled="yes")


@BACKENDS
@given(data=st.data())
def test_one_call_simulation_rates_equal_the_numpy_engine(backend, data):
    """The right-hand side a simulation integrates, fused into one compiled call
    (``core.dynamics.compiled.rates``: Coulomb friction, B(τ + τ_c) − Dq̇ − Kq, q̈ by either solver,
    the input power q̇ᵀBτ and the dissipation q̇ᵀDq̇ − uᵀτ_c), equals the numpy engine's
    generic ``Model.rates_function``: q̇ exactly, q̈ to 1e-10 of the accelerations the
    separate terms produce (the bound of the forward-dynamics test above), the powers to
    1e-12 of |u||τ| + |q̇ᵀDq̇| + |u||τ_c|."""
    model, twin, q, qd, _ = draw_case(data, backend)
    torques = st.floats(-5, 5, allow_subnormal=False)
    tau = np.asarray(data.draw(st.lists(torques, min_size=model.n_joints, max_size=model.n_joints)))
    x = np.concatenate([q, qd, [0.3, -0.2]])
    n = model.n_dof
    reference = twin.rates_function("composite")(x, tau)
    M = twin.mass_matrix(q)
    products = np.full(n, np.max(np.abs(M)) * (qd @ qd))
    terms = [twin._applied(q, qd, tau), products, twin.gravity_forces(q)]
    scale = max(np.max(np.abs(np.linalg.solve(M, f))) for f in terms)
    u, friction = twin.input_matrix(q).T @ qd, twin.friction_forces(q, qd)
    power_scale = (
        np.abs(u) @ np.abs(tau) + abs(qd @ twin.damping_matrix(q) @ qd) + np.abs(u) @ np.abs(friction)
    )
    for solver in ("recursive", "composite"):
        rates = model.rates_function(solver)(x, tau)
        assert rates.shape == (2 * n + 2,)
        assert np.array_equal(rates[:n], qd)
        assert np.max(np.abs(rates[n : 2 * n] - reference[n : 2 * n])) <= 1e-10 * scale
        assert np.max(np.abs(rates[2 * n :] - reference[2 * n :])) <= 1e-12 * max(power_scale, 1e-300)


@pytest.mark.parametrize("backend", ["amm", "fem"])
def test_compiled_rates_jacobian_equals_differences_of_the_numpy_engine(backend):
    """∂ẋ/∂x and ∂ẋ/∂τ from the compiled central differences (steps ε^(1/3) max(|x|, 1) ≈
    6e-6) equal central differences of the numpy engine's right-hand side with steps 1e-5
    max(|x|, 1). Each carries truncation ~h²f‴ and round-off ~cond(M) ε |q̈|/h (cond(M) ~1e5–1e7
    with stiff flexible coordinates), so they agree to a few 1e-6 of each column's scale:
    measured 1.8e-6 (AMM) and 7.1e-6 (FEM) on the lumped two-link arm, friction away from
    its kink (|u| ≫ ε_c); tolerance 3e-5. The work columns are zero and the q̇ rows are the
    identity."""
    from fem import FiniteElementModel

    arm = presets.lumped_two_link()
    model = (
        AssumedModesModel(arm, shape="clamped-mass", modes=2)
        if backend == "amm"
        else FiniteElementModel(arm, elements=2)
    )
    twin = numpy_twin(model)
    n = model.n_dof
    rng = np.random.default_rng(7)
    q = model.home() + np.r_[0.4, -0.7, 1e-3 * rng.standard_normal(n - 2)]
    qd = np.r_[0.8, -0.5, 0.1 * rng.standard_normal(n - 2)]
    x, tau = np.concatenate([q, qd, [1.0, 2.0]]), np.array([0.6, -0.3])
    J, J_tau = model.rates_function("recursive").jacobian(x, tau)
    reference_rates = twin.rates_function("composite")

    def differences(function, point):
        columns = []
        for j in range(point.size):
            h = 1e-5 * max(abs(point[j]), 1.0)
            up, down = point.copy(), point.copy()
            up[j] += h
            down[j] -= h
            columns.append((function(up) - function(down)) / (2 * h))
        return np.column_stack(columns)

    J_ref = differences(lambda y: reference_rates(y, tau), x)
    J_tau_ref = differences(lambda t: reference_rates(x, t), tau)
    for ours, reference in ((J, J_ref), (J_tau, J_tau_ref)):
        scale = np.maximum(np.max(np.abs(reference), axis=0), 1e-300)
        assert np.max(np.abs(ours - reference) / scale) <= 3e-5
    assert not J[:, 2 * n :].any()
    np.testing.assert_allclose(J[:n, n : 2 * n], np.eye(n), rtol=0, atol=1e-9)
