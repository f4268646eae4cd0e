"""The compiled kernels against the oracle: h by recursive Newton–Euler against the Christoffel
symbols of the complex-step ∂M/∂q, M and G against the oracle's complex pass, and the compiled
articulated-body solver (``solver="recursive"``) against the composite solve."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from amm import AssumedModesModel
from core import Arm, Joint, Link
from core.arm import presets
from tests.strategies import models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


@BACKENDS
@given(data=st.data())
def test_bias_forces_equal_christoffel_coriolis(backend, data):
    """h = C(q, q̇) q̇ body by body equals C from the complex-step ∂M/∂q (the oracle).

    Both are exact to round-off; measured worst 2.4e-15 of ‖M‖ |q̇|² over 300
    random arms of both backends, tolerance 1e-14.
    """
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    h = model.bias_forces(q, qd)
    oracle = model.coriolis_matrix(q, qd) @ qd
    scale = np.max(np.abs(model.mass_matrix(q))) * (qd @ qd)
    assert np.max(np.abs(h - oracle)) <= 1e-14 * scale


@BACKENDS
@given(data=st.data())
def test_mass_matrix_and_gravity_without_derivative_batch(backend, data):
    """M and G of the compiled kernels and of the oracle's real pass (``compiled=False``) equal
    the complex-arithmetic evaluation the derivative batch uses; measured differences ≤ 2 ulp,
    tolerance 1e-14."""
    model = data.draw(models(backend))
    q, _ = data.draw(states(model))
    M_batch = model.mass_matrix(q.astype(complex)).real
    G_batch = model.gravity_forces(q.astype(complex)).real
    for engine in (model, model.replace(compiled=False)):
        M, G = engine.mass_matrix(q), engine.gravity_forces(q)
        assert np.max(np.abs(M - M_batch)) <= 1e-14 * np.max(np.abs(M_batch))
        assert np.max(np.abs(G - G_batch)) <= 1e-14 * max(np.max(np.abs(G_batch)), 1.0)


def test_bias_forces_are_quadratic_in_the_rates():
    """h(q, 2q̇) = 4 h(q, q̇) and h(q, 0) = 0 on the space arm (15 DOF); measured
    differences ~1e-15 relative, tolerance 1e-13."""
    model = AssumedModesModel(presets.space_arm_3link(), modes=2)
    rng = np.random.default_rng(3)
    q = model.home() + 0.01 * rng.standard_normal(model.n_dof)
    qd = rng.standard_normal(model.n_dof)
    h = model.bias_forces(q, qd)
    assert np.max(np.abs(model.bias_forces(q, 2 * qd) - 4 * h)) <= 1e-13 * np.max(np.abs(4 * h))
    assert not np.any(model.bias_forces(q, 0 * qd))


@BACKENDS
@given(data=st.data())
def test_recursive_solver_agrees_with_composite(backend, data):
    """``solver="recursive"`` (articulated bodies) equals the Cholesky solve of M: every feature
    of the strategies (hubs, motors, lumped masses, payloads, pinned and clamped frames, one and
    two planes, prismatic joints, translating links). Both solves are backward stable, so they
    may differ by c·cond(M)·ε of the acceleration scale with c a small constant — asserted with
    c = 2 (the bound tightens with the conditioning: 2e-14 at cond 50, 4.4e-9 at cond 1e7).
    Measured: ≤ 0.51·cond(M)·ε over ~1600 draws, ≤ 0.74 over 517 more (the largest
    ratios at cond ≈ 85, where it is round-off of a 3-coordinate solve); the largest absolute
    figure, 1.4e-10 of the scale at cond(M) = 8.8e6 (0.07·cond·ε: a 3-element clamped FEM
    link at rest, where a 40-digit solve puts the Cholesky answer 4.5e-9 and the recursive
    one 9.0e-10 off)."""
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    tau = np.asarray(data.draw(st.lists(st.floats(-5, 5), min_size=model.n_joints, max_size=model.n_joints)))
    composite = model.forward_dynamics(q, qd, tau)
    recursive = model.forward_dynamics(q, qd, tau, solver="recursive")
    bound = 2 * np.linalg.cond(model.mass_matrix(q)) * np.finfo(float).eps
    assert np.max(np.abs(recursive - composite)) <= bound * acceleration_scale(model, q, qd, tau)


def acceleration_scale(model, q, qd, tau) -> float:
    """max |M⁻¹ f| over the force terms f of the right-hand side (applied, h, G): the size
    of the accelerations that cancel into q̈ (which may be exactly zero)."""
    M = model.mass_matrix(q)
    terms = [model._applied(q, qd, tau), model.bias_forces(q, qd), model.gravity_forces(q)]
    return max(np.max(np.abs(np.linalg.solve(M, f))) for f in terms)


@BACKENDS
@given(data=st.data())
def test_recursive_solver_inverts_the_mass_matrix(backend, data):
    """The compiled articulated-body recursion solves M q̈ = Q for any Q (not only dynamics
    right-hand sides): the residual ‖M q̈ − Q‖ against the oracle's M is round-off of ‖M‖‖q̈‖
    (tolerance 1e-14)."""
    model = data.draw(models(backend))
    q, _ = data.draw(states(model))
    Q = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).standard_normal(model.n_dof)
    qdd = model.kernels.solve(q, Q)
    M = model.replace(compiled=False).mass_matrix(q)
    assert np.max(np.abs(M @ qdd - Q)) <= 1e-14 * np.max(np.abs(M)) * np.max(np.abs(qdd))


@BACKENDS
@given(data=st.data())
def test_generalized_forces_equal_the_christoffel_expression(backend, data):
    """Inverse dynamics Q = M q̈ + h + D q̇ + ∂V_e/∂q + G − B τ_c (h without ∂M/∂q) equals the
    same sum with C q̇ from the Christoffel symbols; measured ≤ 1.1e-15 of the largest term,
    tolerance 1e-14."""
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    qdd = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).standard_normal(model.n_dof)
    terms = [
        model.mass_matrix(q) @ qdd,
        model.coriolis_matrix(q, qd) @ qd,
        model.damping_matrix(q) @ qd,
        model.elastic_forces(q),
        model.gravity_forces(q),
        -model.input_matrix(q) @ model.friction_forces(q, qd),
    ]
    scale = max(np.max(np.abs(t)) for t in terms)
    assert np.max(np.abs(model.generalized_forces(q, qd, qdd) - sum(terms))) <= 1e-14 * scale


def test_recursive_solver_falls_back_with_a_warning_for_other_models():
    """A Model that is not a ChainModel gets the composite solve and a RecursiveNotSupported warning."""
    from core.dynamics.model import Model
    from core.dynamics.recursive import RecursiveNotSupported

    chain = AssumedModesModel(presets.lumped_two_link(), modes=2)
    delegated = [*Model.__abstractmethods__, "elastic_forces", "bias_forces"]
    namespace = {name: (lambda n: lambda self, *args: getattr(chain, n)(*args))(name) for name in delegated}
    namespace["coordinates"] = property(lambda self: chain.coordinates)
    namespace["n_joints"] = property(lambda self: chain.n_joints)
    model = type("Wrapped", (Model,), namespace)()  # the primitives of ``chain``, not a ChainModel
    rng = np.random.default_rng(5)
    q, qd, tau = 0.1 * rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(2)
    with pytest.warns(RecursiveNotSupported, match="needs a ChainModel, got Wrapped"):
        qdd = model.forward_dynamics(q, qd, tau, solver="recursive")
    np.testing.assert_array_equal(qdd, model.forward_dynamics(q, qd, tau, solver="composite"))
    np.testing.assert_allclose(qdd, chain.forward_dynamics(q, qd, tau), rtol=1e-12)


def test_compiled_bias_forces_of_a_link_bending_in_two_planes_at_small_slopes():
    """The arm a Hypothesis draw found: link 2 bends in two planes, its tip slopes² ≈ 1e-4 — just
    above the former series threshold of the Rodrigues ratios, where their closed forms lost
    ~1e-11 relative: the compiled h differed from the numpy engine's (and its Christoffel form)
    by 6.5e-13 in that link's rows. Now within 1e-14 of max|h| (measured 2.2e-16)."""
    rigid = Link.rigid(length=1.0, mass=0.21875, com=(0.0, 0.0, 0.0), inertia=np.diag([0.25, 0.125, 0.125]))
    arm = Arm(
        joints=[Joint(a=0.5), Joint(a=0.3125), Joint(a=1.0)],
        links=[
            Link.flexible(length=0.5, mass_per_length=1.0, EI=5.0),
            Link.flexible(length=0.3125, mass_per_length=1.0, EI=5.0, EI_out=5.0),
            rigid,
        ],
    )
    model = AssumedModesModel(arm, modes=1)
    q = np.array([0.0, 0.0, 0.0, 8.0273e-4, 8.0273e-4, 8.0273e-4])
    qd = np.ones(6)
    h = model.bias_forces(q, qd)
    for reference in (model.replace(compiled=False).bias_forces(q, qd), model.coriolis_matrix(q, qd) @ qd):
        assert np.max(np.abs(h - reference)) <= 1e-14 * np.max(np.abs(h))
