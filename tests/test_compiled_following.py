"""Translating links whose shapes follow the free length: the compiled kernels (core.dynamics.compiled)
against the numpy engine (``compiled=False``).

The compiled kernels read every unit integral and tip map row of a length-following link as
the Taylor polynomial F + dl (F1 + ½ dl F2) about the free length l₀ at which the chain wrote
them (``TranslatingBody.kernel_taylor``), and carry the shapes' l-dependence into the tip map's
l̇ column (U′δ, J_L Θ′δ/l) and the gravity correction (A₀ + l A₀′ − A_l0); the numpy engine
evaluates the same bodies batch-wise (``TranslatingBody.arrays``, ``TipMap.rows``). Clamped-mass
shapes with exact roots at every length (``tracker="root"``), seeded samples of 20 states with
free lengths in (0.3, 1.3) m. The arms: the RRP translating arm of docs/MODEL.md, Reference arms under gravity with a
payload of anisotropic rotary inertia (so the tip rotation Θ(l) δ/l and its l̇ column act on
an inertia; slope and chord tips), and the same arm with a rigid fourth link after the
translating one (the tip map then also drives a child body through the joint map).

Mutation check of these tests (kernels edited by hand, then restored): dropping F1 from the
Taylor values, F2 from the l̇ column's U′ and Θ′, U′δ or Θ′δ from that column, or l A₀′ from the
gravity correction each fails them by ≥ 1e-3 in h or G and ≥ 1e-6 in q̈; only F2 in the values
goes unseen, as it must (it is O(h²) at the complex step's imaginary dl).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from amm import AssumedModesModel
from core.arm import Arm, Joint, Link, Payload, presets

STATES = 20
INERTIA = [[2e-4, 0.0, 0.0], [0.0, 5e-4, 0.0], [0.0, 0.0, 8e-4]]  # kg m², anisotropic


def rrp(tip_rotation: str = "slope") -> Arm:
    """RRP translating arm under gravity (tilted, so every axis feels it), payload with inertia."""
    arm = presets.rrp_translating()
    return dataclasses.replace(
        arm, payload=Payload(0.0828, inertia=INERTIA), gravity=(1.2, -0.8, -9.81), tip_rotation=tip_rotation
    )


def rrpr() -> Arm:
    """The RRP arm with a rigid revolute fourth link at the beam's tip, under gravity."""
    arm = presets.rrp_translating()
    joints = [*arm.joints, Joint(a=0.2, alpha=0.4)]
    links = [*arm.links, Link.rigid(0.2, 0.1, com=(-0.1, 0.01, 0.0), inertia=INERTIA)]
    return Arm.from_dh(joints, links, payload=Payload(0.05, inertia=1e-4), gravity=(0.5, 0.0, -9.81))


ARMS = {"rrp-slope": lambda: rrp("slope"), "rrp-chord": lambda: rrp("chord"), "rrpr": rrpr}
MODES = {"rrp-slope": 2, "rrp-chord": 3, "rrpr": 2}


@pytest.fixture(scope="module", params=sorted(ARMS))
def case(request):
    """(compiled model, numpy twin, states) of one arm: clamped-mass shapes following l."""
    arm = ARMS[request.param]()
    options = dict(shape="clamped-mass", modes=MODES[request.param], tracker="root")
    model = AssumedModesModel(arm, **options)
    twin = AssumedModesModel(arm, compiled=False, **options)
    assert model.compiled is not None and twin.compiled is None
    (number,) = arm.translating_links
    assert model.bodies[number].following is not None
    rng = np.random.default_rng(20240611)
    states = []
    for _ in range(STATES):
        q = rng.uniform(-1.0, 1.0, model.n_dof)
        q[arm.n_joints :] *= 0.03  # deflections of a few cm
        q[number - 1] = rng.uniform(0.3, 1.3)
        qd = rng.standard_normal(model.n_dof)
        qd[arm.n_joints :] *= 0.3
        states.append((q, qd, rng.standard_normal(model.n_dof), rng.standard_normal(arm.n_joints)))
    return model, twin, states


def relative(value, reference, scale) -> float:
    return float(np.max(np.abs(value - reference)) / scale)


def test_mass_bias_gravity_and_inverse_dynamics_equal_the_numpy_engine(case):
    """M (composite bodies), h, G and M q̈ + h + G (Newton–Euler) equal the numpy engine, each
    relative to its own scale (M: max|M|; h: max|M|·|q̇|²; G: max|G|; the sum: the three
    together). Measured over the 3 arms × 20 states: M 1.3e-16, h 5.4e-17, G 4.1e-16, sum
    1.2e-16; tolerance 1e-13. (The following-specific terms are O(l̇ δ) ~ 1e-2 of these
    scales, so a lost l-derivative would show at ≳ 1e-5.)"""
    model, twin, states = case
    worst = dict.fromkeys(("M", "h", "G", "sum"), 0.0)
    for q, qd, qdd, _ in states:
        M, M_ref = model.mass_matrix(q), twin.mass_matrix(q)
        scale_M = np.max(np.abs(M_ref))
        h, h_ref = model.bias_forces(q, qd), twin.bias_forces(q, qd)
        scale_h = scale_M * (qd @ qd)
        G, G_ref = model.gravity_forces(q), twin.gravity_forces(q)
        scale_G = np.max(np.abs(G_ref))
        total = model.inertial_forces(q, qd, qdd)
        expected = M_ref @ qdd + h_ref + G_ref
        worst["M"] = max(worst["M"], relative(M, M_ref, scale_M))
        worst["h"] = max(worst["h"], relative(h, h_ref, scale_h))
        worst["G"] = max(worst["G"], relative(G, G_ref, scale_G))
        scale = scale_M * np.max(np.abs(qdd)) + scale_h + scale_G
        worst["sum"] = max(worst["sum"], relative(total, expected, scale))
        assert np.array_equal(M, M.T)
    assert all(value <= 1e-13 for value in worst.values()), worst


@pytest.mark.parametrize("solver", ["recursive", "composite"])
def test_forward_dynamics_equals_the_numpy_engine(case, solver):
    """q̈ of both compiled solvers (articulated bodies; composite bodies + Cholesky) equals the
    numpy engine's composite solve, relative to max|q̈|. Measured: recursive 3.5e-15, composite
    2.6e-15 (cond(M) ≤ 1e3 here); tolerance 1e-12."""
    model, twin, states = case
    worst = 0.0
    for q, qd, _, tau in states:
        reference = twin.forward_dynamics(q, qd, tau, solver="composite")
        qdd = model.forward_dynamics(q, qd, tau, solver=solver)
        worst = max(worst, relative(qdd, reference, np.max(np.abs(reference))))
    assert worst <= 1e-12, worst


def test_inverse_dynamics_equals_the_numpy_engine(case):
    """At the numpy engine's q̈(τ), the generalized forces Q and the joint torques of inverse
    dynamics equal the numpy engine's, and τ is recovered, each relative to the largest term of
    Q (M q̈, h, G, ∂V_e/∂q, D q̇: the elastic forces of the short stiff beam dwarf τ). Measured:
    Q 2.0e-15, τ against the numpy engine 6.0e-16, τ round trip 8.9e-16; tolerance 1e-13."""
    model, twin, states = case
    worst = dict.fromkeys(("Q", "tau", "round trip"), 0.0)
    for q, qd, _, tau in states:
        qdd = twin.forward_dynamics(q, qd, tau, solver="composite")
        terms = [
            twin.mass_matrix(q) @ qdd,
            twin.bias_forces(q, qd),
            twin.gravity_forces(q),
            twin.elastic_forces(q),
            twin.damping_matrix(q) @ qd,
        ]
        scale = max(np.max(np.abs(t)) for t in terms)
        Q, Q_ref = model.generalized_forces(q, qd, qdd), twin.generalized_forces(q, qd, qdd)
        worst["Q"] = max(worst["Q"], relative(Q, Q_ref, scale))
        torques = model.inverse_dynamics(q, qd, qdd)
        worst["tau"] = max(worst["tau"], relative(torques, twin.inverse_dynamics(q, qd, qdd), scale))
        worst["round trip"] = max(worst["round trip"], relative(torques, tau, scale))
    assert all(value <= 1e-13 for value in worst.values()), worst


def test_rows_are_rewritten_only_for_a_new_free_length(monkeypatch):
    """The chain calls ``kernel_taylor`` once per new free length, never for a repeated one,
    and again after ``invalidate``; results do not depend on the order of the lengths (no
    stale rows): an l₁, l₂, l₁ sequence gives at l₁ bit for bit what a fresh model gives."""
    options = dict(shape="clamped-mass", modes=2, tracker="root")
    model = AssumedModesModel(rrp(), **options)
    body = model.bodies[3]
    assert model.compiled is not None  # built on first use: rows written at the full length
    calls = []
    original = body.kernel_taylor

    def counted(l):
        calls.append(l)
        return original(l)

    monkeypatch.setattr(body, "kernel_taylor", counted)
    q = np.array([0.3, -0.7, 0.55, 0.01, -0.02, 0.015, 0.005])
    qd = np.array([0.4, -0.3, 0.2, 0.5, -0.6, 0.3, 0.2])
    first = model.compiled.bias(q, qd)
    model.compiled.mass(q)
    model.compiled.gravity_forces(q)
    assert calls == [0.55]
    other = q.copy()
    other[2] = 0.95
    model.compiled.mass(other)
    assert calls == [0.55, 0.95]
    again = model.compiled.bias(q, qd)
    assert calls == [0.55, 0.95, 0.55]
    assert np.array_equal(first, again)
    model.compiled.invalidate()
    model.compiled.bias(q, qd)
    assert calls == [0.55, 0.95, 0.55, 0.55]
    fresh = AssumedModesModel(rrp(), **options)
    fresh.compiled.mass(other)  # written at another length first
    assert np.array_equal(fresh.compiled.bias(q, qd), first)


def test_roots_of_the_ode_tracker_reach_the_compiled_rows():
    """With the ``"ode"`` tracker the shapes depend on the integrated roots, not on l alone:
    inside ``model.auxiliary(β)`` (which calls ``CompiledChain.invalidate``) the compiled h and
    M are those of the numpy engine at the same roots (measured h 1.1e-15 of max|h|, M 8e-18 of
    max|M|; tolerance 1e-13; roots 2 % off the exact ones move h by 2e-2), and on exit the
    exact-root values return bit for bit."""
    arm = rrp()
    options = dict(shape="clamped-mass", modes=2, tracker="ode")
    model = AssumedModesModel(arm, **options)
    twin = AssumedModesModel(arm, compiled=False, **options)
    q = np.array([0.3, -0.7, 0.55, 0.01, -0.02, 0.015, 0.005])
    qd = np.array([0.4, -0.3, 0.2, 0.5, -0.6, 0.3, 0.2])
    before = model.bias_forces(q, qd)
    roots = 1.02 * model.auxiliary_initial(q)
    with model.auxiliary(roots), twin.auxiliary(roots):
        h, h_ref = model.bias_forces(q, qd), twin.bias_forces(q, qd)
        M, M_ref = model.mass_matrix(q), twin.mass_matrix(q)
    assert relative(h, before, np.max(np.abs(before))) > 1e-3  # the roots matter
    assert relative(h, h_ref, np.max(np.abs(h_ref))) <= 1e-13
    assert relative(M, M_ref, np.max(np.abs(M_ref))) <= 1e-13
    assert np.array_equal(model.bias_forces(q, qd), before)


def test_gravity_correction_is_the_weight_of_the_deflected_exit():
    """The gravity correction's l-row factor A₀ + l A₀′ − A_l0 equals ρ U(l) (Leibniz's rule on
    S₁ = ∫ρ dm, with A_l0 δ = ∫Φ_l dm holding the shapes' own l-dependence): a consistency
    check of ``kernel_taylor``'s A₀, A₀′, A_l0 and U. Measured 2.2e-16 of max|ρU|; tolerance
    1e-13."""
    model = AssumedModesModel(rrp(), shape="clamped-mass", modes=3, tracker="root")
    body = model.bodies[3]
    for l in (0.3, 0.7, 1.3):
        arrays = body.kernel_taylor(l)
        factor = arrays["A0"][0] + l * arrays["A0"][1] - arrays["Al0"][0]
        expected = body.rho * arrays["translation"][0]
        assert np.max(np.abs(factor - expected)) <= 1e-13 * np.max(np.abs(expected))


def test_frozen_shapes_keep_constant_rows():
    """With frozen shapes (``tracker="frozen"``) no row follows the length: the derivative
    parts of the buffer are zero and the chain never asks for Taylor rows."""
    model = AssumedModesModel(rrp(), shape="clamped-mass", modes=2)
    chain = model.compiled
    assert model.bodies[3].following is None
    assert not chain.table["following"].any()
    size = chain.buffer.size // 3
    assert not chain.buffer[size:].any()
    assert chain._following == ()


def test_a_copied_chain_rewrites_its_own_rows():
    """A deep copy of a model keeps following the free length: its chain writes the rows into
    its own buffer (bit for bit what a fresh model gives at a new length), and the original is
    untouched."""
    import copy

    options = dict(shape="clamped-mass", modes=2, tracker="root")
    model = AssumedModesModel(rrp(), **options)
    q = np.array([0.3, -0.7, 0.55, 0.01, -0.02, 0.015, 0.005])
    qd = np.array([0.4, -0.3, 0.2, 0.5, -0.6, 0.3, 0.2])
    other = q.copy()
    other[2] = 1.1
    expected = model.bias_forces(q, qd)
    twin = copy.deepcopy(model)
    assert twin.compiled.buffer is not model.compiled.buffer
    fresh = AssumedModesModel(rrp(), **options).bias_forces(other, qd)
    assert np.array_equal(twin.bias_forces(other, qd), fresh)
    assert np.array_equal(model.bias_forces(q, qd), expected)
