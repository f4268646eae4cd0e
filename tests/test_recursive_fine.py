"""The articulated-body recursion on bodies with many flexible coordinates
(:mod:`core.dynamics.compiled.fine`): no m × m factor, the same accelerations as the composite
solve, and a backward-stable solve of the dense equations on fine meshes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.arm.presets import lumped_two_link
from core.dynamics.compiled.algorithms import forward_solve
from core.dynamics.compiled.packing import FINE_COORDINATES, bandwidth, compile_chain
from fem import FiniteElementModel
from tests.strategies import arms, tilts

EPS = np.finfo(float).eps


def smooth_state(model, rng, amplitude: float = 0.01):
    """(q, q̇): random joints and rates, every Hermite link deflected w = a s² + b s³ (values
    and slopes at the free nodes, a, b ~ amplitude) and moving likewise."""
    q, qd = model.home(), np.zeros(model.n_dof)
    q[: model.n_joints] += rng.uniform(-1, 1, model.n_joints)
    qd[: model.n_joints] = rng.standard_normal(model.n_joints)
    for number, columns in model.flex_columns.items():
        planes = model.bodies[number].planes
        size = q[columns].size
        n = size // planes
        s = np.linspace(0.0, 1.0, n // 2 + 1)[1:]
        for x in (q, qd):
            block = np.empty(size)
            for plane in range(planes):
                a, b = amplitude * rng.standard_normal(2)
                block[plane * n : (plane + 1) * n : 2] = a * s**2 + b * s**3
                block[plane * n + 1 : (plane + 1) * n : 2] = 2 * a * s + 3 * b * s**2
            x[columns] = block
    return q, qd


def dense_solution(model, q, qd, applied):
    """(M, rhs, q̈): M and rhs = applied − h − G from the engine, q̈ by LAPACK."""
    M = model.mass_matrix(q)
    rhs = applied - model.nonlinear_forces(q, qd)
    return M, rhs, np.linalg.solve(M, rhs)


def backward_error(M, rhs, qdd) -> float:
    """‖M q̈ − rhs‖∞ / (‖M‖∞ ‖q̈‖∞ + ‖rhs‖∞)."""
    scale = np.linalg.norm(M, np.inf) * np.abs(qdd).max() + np.abs(rhs).max()
    return np.abs(M @ qdd - rhs).max() / scale


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_fine_path_agrees_with_composite(data):
    """Every flexible body solved by the fine path (``fine_from=1``: 12–32 coordinates per body)
    on random arms — hubs, motors, payloads, lumped masses, one and two planes, clamped and
    pinned frames, with and without geometric stiffening — agrees with the composite (LAPACK)
    solve of M q̈ = applied − h − G to 1e-10 of the acceleration scale, or to 2 cond(M) ε of it
    where that is larger (two backward-stable solves differ by up to c·cond(M)·ε: c = 2 as in
    tests/test_recursive.py; cond(M) of these meshes is 1e6–1e8)."""
    arm = data.draw(arms(max_links=3))
    assume(not arm.translating_links and not any(tilts(arm, number) for number in arm.flexible_links))
    stiffening = data.draw(st.booleans())
    elements = data.draw(st.integers(6, 8))
    frames = {
        number: data.draw(st.sampled_from(["clamped", "pinned"]))
        if arm.joints[number - 1].kind == "revolute"
        else "clamped"
        for number in arm.flexible_links
    }
    model = FiniteElementModel(arm, elements=elements, frame=frames, geometric_stiffening=stiffening)
    chain = compile_chain(model, fine_from=1)
    assert chain.table["fine"][chain.table["flexible"]].all()
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, qd = smooth_state(model, rng, amplitude=data.draw(st.sampled_from([1e-3, 0.05])))
    tau = rng.standard_normal(model.n_joints)
    applied = model._applied(q, qd, tau)
    M, _, reference = dense_solution(model, q, qd, applied)
    qdd, largest = forward_solve(chain.table, chain.buffer, chain.smax, q, qd, applied, chain.gravity)
    assert largest <= 1  # only rigid bodies (k = 1) factor densely
    terms = (applied, model.bias_forces(q, qd), model.gravity_forces(q))
    scale = max(np.abs(np.linalg.solve(M, f)).max() for f in terms)
    bound = max(1e-10, 2 * np.linalg.cond(M) * EPS)
    assert np.abs(qdd - reference).max() <= bound * scale


@pytest.mark.parametrize("stiffening", [False, True])
def test_fine_mesh_is_backward_stable(stiffening):
    """Two links × 128 elements (256 coordinates per body: the fine path by default): the
    recursive q̈ solves the dense equations with backward error
    ‖M q̈ − (applied − h − G)‖∞ / (‖M‖∞‖q̈‖∞ + ‖applied − h − G‖∞) ≤ n ε (n = 514: 1.1e-13),
    M and h + G from the engine. Measured ≤ 2e-16; LAPACK's dense solve of the same
    system is held to the same bound (its forward difference to ours is cond(M) ε, cond(M) ~1e12)."""
    model = FiniteElementModel(lumped_two_link(), elements=128, geometric_stiffening=stiffening)
    assert (model.kernels.table["fine"]).all()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, qd = smooth_state(model, rng)
        tau = rng.standard_normal(model.n_joints)
        qdd = model.forward_dynamics(q, qd, tau, solver="recursive")
        M, rhs, reference = dense_solution(model, q, qd, model._applied(q, qd, tau))
        bound = model.n_dof * EPS
        assert backward_error(M, rhs, qdd) <= bound
        assert backward_error(M, rhs, reference) <= bound


def test_fine_path_forms_no_dense_factor():
    """The order of the largest dense joint-space factor a call forms (``forward_solve``): none on
    fine bodies (two links × 64 elements, 128 coordinates each, with stiffening at a smooth
    state), 1 + m on the same chain forced onto the dense path — the same q̈ both ways."""
    model = FiniteElementModel(lumped_two_link(), elements=64, geometric_stiffening=True)
    assert 128 >= FINE_COORDINATES
    fine, dense = compile_chain(model), compile_chain(model, fine_from=10**9)
    assert fine.table["fine"].all() and not dense.table["fine"].any()
    assert list(fine.table["mdd_band"]) == [3, 3]  # Hermite elements: value and slope per node
    q, qd = smooth_state(model, np.random.default_rng(4))
    applied = model._applied(q, qd, np.array([0.3, -0.2]))
    a, largest = forward_solve(fine.table, fine.buffer, fine.smax, q, qd, applied, fine.gravity)
    b, dense_largest = forward_solve(dense.table, dense.buffer, dense.smax, q, qd, applied, dense.gravity)
    assert largest == 0 and dense_largest == 129
    M, rhs, _ = dense_solution(model, q, qd, applied)
    assert backward_error(M, rhs, a) <= model.n_dof * EPS
    assert backward_error(M, rhs, b) <= model.n_dof * EPS


def test_bandwidth():
    """The bandwidth the packing reads the fine path's band factor with."""
    assert bandwidth(np.eye(4)) == 0
    assert bandwidth(np.diag(np.ones(3), 2) + np.eye(5)) == 2
    assert bandwidth(np.zeros((3, 3))) == 0
