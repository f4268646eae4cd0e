"""Energy, power and consistency of the engine's dynamics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from amm import AssumedModesModel
from core import Arm, Damping, Joint, Link, LumpedMass, Payload
from fem import FiniteElementModel
from tests.strategies import beam_kinetic_energy, models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


@BACKENDS
@given(data=st.data())
@settings(max_examples=30)
def test_gravity_forces_are_the_gradient_of_the_potential(backend, data):
    model = data.draw(models(backend, max_links=3))
    q, _ = data.draw(states(model))
    h = 1e-6
    gradient = np.array(
        [
            (model.potential_energy(q + h * e) - model.potential_energy(q - h * e)) / (2 * h)
            for e in np.eye(model.n_dof)
        ]
    )
    expected = model.gravity_forces(q) + model.elastic_forces(q)
    scale = max(np.max(np.abs(expected)), 1.0)
    assert np.max(np.abs(gradient - expected)) < 1e-7 * scale


@pytest.mark.parametrize("shape", ["clamped-free", "clamped-mass", "pinned-pinned"])
def test_kinetic_energy_equals_direct_integration_over_the_beams(shape):
    """Spatial arm of two flexible links (the first bending in both planes for
    clamped bases) with point masses, deformed. The translating case is in
    ``test_translating.py``."""
    out_of_plane = None if shape == "pinned-pinned" else 40.0
    links = [
        Link.flexible(0.9, 1.1, 60.0, EI_out=out_of_plane, lumped_masses=[LumpedMass(0.4, 0.2)]),
        Link.flexible(0.6, 0.7, 25.0, tip_payload=Payload(0.15)),
    ]
    joints = [Joint(a=0.9, alpha=np.pi / 2, d=0.1), Joint(a=0.6, alpha=-0.7, d=0.05, theta_offset=0.4)]
    arm = Arm.from_dh(joints, links)
    model = AssumedModesModel(arm, shape=shape, modes=3)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = np.concatenate([rng.uniform(-2, 2, 2), 0.08 * rng.standard_normal(model.n_dof - 2)])
        qd = rng.standard_normal(model.n_dof)
        expected = beam_kinetic_energy(model, q, qd)
        assert model.kinetic_energy(q, qd) == pytest.approx(expected, rel=1e-8)


def two_link_flexible_arm(gravity=True):
    """Soft links (first locked frequencies ≈ 3, 12, 40 rad/s) keep the explicit
    integrator's step count, and so the test's run time, moderate."""
    return Arm.planar(
        [
            Link.flexible(0.8, 1.0, 4.0, lumped_masses=[LumpedMass(0.5, 0.2, 0.002)]),
            Link.flexible(0.6, 0.6, 1.5),
        ],
        payload=Payload(0.3, 0.001),
        joints=[
            Joint(hub_inertia=0.01),
            Joint(hub_mass=0.4, hub_inertia=0.005, motor_inertia=1e-5, gear_ratio=10),
        ],
        gravity=(0.0, -9.81, 0.0) if gravity else (0.0, 0.0, 0.0),
    )


def energy(model, x):
    n = model.n_dof
    return model.kinetic_energy(x[:n], x[n:]) + model.potential_energy(x[:n])


CONSERVATIVE_MODELS = {
    "amm-clamped-mass": lambda arm: AssumedModesModel(arm, shape="clamped-mass", modes=2),
    "amm-pinned-pinned": lambda arm: AssumedModesModel(arm, shape="pinned-pinned", modes=2),
    "fem-clamped": lambda arm: FiniteElementModel(arm, elements=1),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "solver"),
    [(variant, "composite") for variant in sorted(CONSERVATIVE_MODELS)]
    + [("amm-pinned-pinned", "recursive")],
)
def test_energy_is_conserved_without_damping_and_input(variant, solver):
    """2 s free motion under gravity from a deformed, moving state: T + V constant
    to 3e-8 relative (measured 9.0e-10 AMM clamped-mass, 2.5e-9 AMM pinned-pinned with
    either solver, 2.1e-9 FEM: the integrator's error at rtol 1e-9, DOP853). The
    recursive solver on pinned frames with hub and motor inertias, a lumped mass and a
    payload."""
    model = CONSERVATIVE_MODELS[variant](two_link_flexible_arm())
    n = model.n_dof
    x0 = np.zeros(2 * n)
    x0[:2] = [0.3, -0.5]
    x0[2:n] = 0.02
    x0[n : n + 2] = [1.0, -1.5]

    def rhs(t, x):
        return np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], np.zeros(2), solver=solver)])

    solution = solve_ivp(rhs, (0.0, 2.0), x0, method="DOP853", rtol=1e-9, atol=1e-11)
    assert solution.success
    energies = np.array([energy(model, x) for x in solution.y.T])
    drift = np.max(np.abs(energies - energies[0])) / abs(energies[0])
    assert drift < 3e-8


def damped_two_link_arm():
    """The soft two-link arm with structural damping (modal on link 1, Rayleigh on
    link 2), viscous and smooth Coulomb joint friction."""
    arm = two_link_flexible_arm()
    links = (
        dataclasses.replace(arm.links[0], damping=Damping("modal", ratios=(0.03,))),
        dataclasses.replace(arm.links[1], damping=Damping("rayleigh", alpha=0.1, beta=0.002)),
    )
    joints = tuple(
        dataclasses.replace(joint, viscous_friction=0.01 * k, coulomb_friction=0.02 * k)
        for k, joint in enumerate(arm.joints, start=1)
    )
    return dataclasses.replace(arm, links=links, joints=joints)


DAMPED_MODELS = {
    "amm-clamped-mass": lambda arm: AssumedModesModel(arm, shape="clamped-mass", modes=2),
    "amm-pinned-pinned": lambda arm: AssumedModesModel(arm, shape="pinned-pinned", modes=2),
    "fem-pinned": lambda arm: FiniteElementModel(arm, elements=2, frame="pinned"),
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(DAMPED_MODELS))
def test_power_balance_with_inputs_damping_and_friction(variant):
    """Along a trajectory: E(t) − E(0) = ∫ q̇ᵀBτ dt − ∫ (q̇ᵀDq̇ − q̇ᵀBτ_c) dt, the input
    work and the dissipation integrated alongside the state by the test itself
    (DOP853, rtol 1e-10). Measured |balance| / max(|E(0)|, |work|): 1.1e-11 (AMM
    clamped-mass), 1.4e-13 (FEM), with dissipation 4.8 J and 0.64 J against input
    work −0.15 J and −2.3 J. Pinned frames put the torque on the beam root too (B_f ≠ 0)."""
    model = DAMPED_MODELS[variant](damped_two_link_arm())
    n = model.n_dof

    def torque(t):
        return np.array([0.8 * np.sin(3 * t), -0.3 * np.cos(2 * t)])

    def rhs(t, x):
        q, qd = x[:n], x[n : 2 * n]
        tau = torque(t)
        B = model.input_matrix(q)
        work_rate = qd @ B @ tau
        dissipation = qd @ model.damping_matrix(q) @ qd - qd @ B @ model.friction_forces(q, qd)
        return np.concatenate([qd, model.forward_dynamics(q, qd, tau), [work_rate, dissipation]])

    x0 = np.zeros(2 * n + 2)
    x0[:2] = [0.3, -0.5]
    x0[2:n] = 0.01
    x0[n : n + 2] = [0.5, -0.4]
    solution = solve_ivp(rhs, (0.0, 1.5), x0, method="DOP853", rtol=1e-10, atol=1e-12)
    assert solution.success
    work, dissipated = solution.y[-2, -1], solution.y[-1, -1]
    assert dissipated > 0.05 * abs(work)  # damping and friction really act
    gained = energy(model, solution.y[: 2 * n, -1]) - energy(model, x0[: 2 * n])
    scale = max(abs(energy(model, x0[: 2 * n])), abs(work))
    assert abs(gained - work + dissipated) < 1e-9 * scale


@BACKENDS
@given(data=st.data())
@settings(max_examples=30)
def test_inverse_then_forward_dynamics_round_trip(backend, data):
    model = data.draw(models(backend, max_links=3))
    q, qd = data.draw(states(model))
    tau = data.draw(
        st.lists(st.floats(-5, 5), min_size=model.n_joints, max_size=model.n_joints).map(np.array)
    )
    qdd = model.forward_dynamics(q, qd, tau)
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), tau, rtol=1e-8, atol=1e-8)
