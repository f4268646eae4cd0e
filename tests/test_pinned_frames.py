"""Pinned (chord) frames on links that bend in two planes.

A pinned frame runs along the chord from root to tip. Out of the joint's plane there is no
joint to turn it, so the beam frame leaves that plane by the out-of-plane root slope,
ρ = (0, w_z'(0), 0) (:mod:`core.dynamics.kinematics`), while the hub turns with the in-plane root
slope about the joint axis only. References:

* the beam's kinetic energy integrated directly from point velocities
  (:func:`tests.strategies.beam_kinetic_energy`: kinematics and shape evaluation only);
* the clamped frame of the same arm: a frame is a choice of coordinates, so the converged
  frequencies of both frames must agree — exactly without gravity, and under gravity once
  the axial foreshortening is kept (``geometric_stiffening``; without it the gravity
  preload enters through the chord rotation of one frame only: a frame dependence of the
  frequencies);
* the clamping condition itself: the root tangent is normal to the joint axis, to second
  order in the deflection;
* energy conservation and Ṁ − 2C skew;
* the two engines, independent implementations of the root rotation: the numpy engine turns
  the beam's Jacobian (``LinkFrames.Jw_body``), the compiled kernels turn the body inertia
  and its forces into link axes (``core.dynamics.compiled.bodies.tilted_body``) and the tip map
  (``core.dynamics.compiled.kinematics.kinematics``). Both run every test here; they agree on fixed and on
  hypothesis-drawn arms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from amm import AssumedModesModel
from core.arm import Arm, Joint, Link, LumpedMass, Payload
from core.arm.presets import azimuth_elevation
from fem import FiniteElementModel
from tests.strategies import beam_kinetic_energy, mass_rate_by_differences, models, states


def spatial_arm(gravity=(0.0, 0.0, -9.81), rotary: bool = True) -> Arm:
    """Two flexible links, both bending in two planes (the first carrying a lumped mass,
    the second a payload; with ``rotary`` also hub, lumped and payload rotary inertias),
    the second joint's axis turned by α = 90°."""
    J = 1.0 if rotary else 0.0
    return Arm.from_dh(
        [
            Joint(a=0.6, alpha=math.pi / 2, hub_inertia=0.01 * J),
            Joint(a=1.0, hub_mass=0.2, hub_inertia=0.004 * J),
        ],
        [
            Link.flexible(0.6, 0.8, 80.0, EI_out=60.0, lumped_masses=[LumpedMass(0.4, 0.3, 0.002 * J)]),
            Link.flexible(1.0, 0.5, 30.0, EI_out=20.0),
        ],
        payload=Payload(0.1, 0.001 * J),
        gravity=gravity,
    )


MODELS = {
    "amm": lambda arm, **options: AssumedModesModel(arm, shape="pinned-pinned", modes=3, **options),
    "fem": lambda arm, **options: FiniteElementModel(arm, elements=4, frame="pinned", **options),
}


#: Both engines: the compiled kernels (the default) and the numpy engine.
ENGINES = pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])


def deflected_state(model, seed: int, scale: float = 0.05):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=model.n_dof) * 0.4
    q[model.n_joints :] *= scale
    return q, rng.normal(size=model.n_dof)


@ENGINES
@pytest.mark.parametrize("backend", sorted(MODELS))
def test_kinetic_energy_equals_direct_integration(backend, compiled):
    """½ q̇ᵀM q̇ = ½∫ρA|ṙ|² ds + point masses (lumped, payload, hub), from point velocities by
    central differences (step 1e-6: truncation ~1e-12, round-off ~1e-10 of the energy;
    Gauss–Legendre 40 points on 4 panels, exact for the cubic elements and far below that
    for the modes), on the arm without rotary inertias (the reference has none): 1e-8
    relative (measured on either engine 1.8e-9 AMM, 1.4e-11 FEM)."""
    model = MODELS[backend](spatial_arm(rotary=False), compiled=compiled)
    assert model.bases[2].frame == "pinned" and model.bodies[2].planes == 2
    assert (model.compiled is not None) == compiled
    for seed in range(3):
        q, qd = deflected_state(model, seed)
        kinetic = 0.5 * qd @ model.mass_matrix(q) @ qd
        direct = beam_kinetic_energy(model, q, qd, points=40, panels=4)
        assert abs(kinetic - _hub_energy(model, q, qd) - direct) <= 1e-8 * kinetic


def _hub_energy(model, q, qd, h: float = 1e-6) -> float:
    """The hub masses' kinetic energy (not part of the beams'): points at the link origins,
    velocities by central differences of the previous link's tip position."""
    energy = 0.0
    for i, joint in enumerate(model.arm.joints):
        if joint.hub_mass:
            ahead, behind = (
                model.point_position(i, model.arm.links[i - 1].length, q + sign * h * qd) for sign in (1, -1)
            )
            v = (ahead - behind) / (2 * h)
            energy += 0.5 * joint.hub_mass * v @ v
    return energy


@pytest.mark.parametrize("backend", sorted(MODELS))
def test_root_tangent_stays_normal_to_the_joint_axis(backend):
    """The beam is clamped to its hub: its root tangent has no component along the joint
    axis z_i to first order in the deflection. With β = w_z'(0) the out-of-plane root slope,
    the component is −sin β + β cos β = −β³/3 + O(β⁵) (the beam frame turned by exactly β);
    asserted ≤ β² at β of 0.004–0.04 (measured 2.1e-8 at β = 0.004 and 2.1e-5 at 0.04, i.e.
    β³/3), where a frame not turned — or turned the wrong way — would leave β or 2β. The
    tangent: Richardson-extrapolated one-sided differences of ``point_position`` (step 1e-5,
    error ~1e-10)."""
    model = MODELS[backend](spatial_arm())
    q, _ = deflected_state(model, 7, scale=1.0)
    flex = slice(model.n_joints, model.n_dof)
    n = model.bases[2].n
    for scale in (1e-3, 1e-2):
        x = q.copy()
        x[flex] = scale * q[flex]
        z = model.kinematics.frames(x[None], jacobians=False)[1].z_joint[0]
        h = 1e-5
        root = model.point_position(2, 0.0, x)
        tangent = (
            4 * (model.point_position(2, h, x) - root) / h
            - (model.point_position(2, 2 * h, x) - root) / (2 * h)
        ) / 3
        tangent /= np.linalg.norm(tangent)
        beta = model.bases[2].root_slope @ x[model.flex_columns[2]][n:]
        assert abs(beta) > 1e-3
        assert abs(tangent @ z) <= beta**2


@ENGINES
@pytest.mark.parametrize("backend", sorted(MODELS))
def test_recursive_equals_composite_and_mass_rate_minus_twice_coriolis_is_skew(backend, compiled):
    """The articulated-body recursion (whose body inertia turns with the root rotation) and
    the Cholesky solve give the same q̈ (1e-10 relative; measured numpy engine 1.7e-13 AMM,
    3.9e-12 FEM, compiled 9.4e-14 AMM, 8.3e-12 FEM); Ṁ (central differences) − 2C is skew to
    1e-7 of ‖Ṁ‖ (the differences' accuracy; measured on either engine 6.2e-10 AMM, 1.9e-8 FEM)."""
    model = MODELS[backend](spatial_arm(), compiled=compiled)
    for seed in range(3):
        q, qd = deflected_state(model, seed)
        tau = np.random.default_rng(seed + 10).normal(size=model.n_joints)
        composite = model.forward_dynamics(q, qd, tau, solver="composite")
        recursive = model.forward_dynamics(q, qd, tau, solver="recursive")
        assert np.max(np.abs(recursive - composite)) <= 1e-10 * np.max(np.abs(composite))
        rate = mass_rate_by_differences(model, q, qd)
        S = rate - 2 * model.coriolis_matrix(q, qd)
        assert np.max(np.abs(S + S.T)) <= 1e-7 * np.max(np.abs(rate))


@ENGINES
@pytest.mark.parametrize("backend", sorted(MODELS))
def test_energy_is_conserved(backend, compiled):
    """No damping, no input, gravity on: 0.2 s of free motion from a bent, spinning state,
    T + V constant to 1e-8 relative (DOP853 at rtol 1e-10; FEM with one element per link,
    whose highest modes set the explicit step; measured on either engine 4.6e-11 AMM,
    7.6e-13 FEM)."""
    model = (
        MODELS[backend](spatial_arm(), compiled=compiled)
        if backend == "amm"
        else FiniteElementModel(spatial_arm(), elements=1, frame="pinned", compiled=compiled)
    )
    n = model.n_dof
    q0, qd0 = deflected_state(model, 3, scale=0.02)
    qd0[model.n_joints :] = 0.0

    def rhs(t, x):
        return np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], np.zeros(model.n_joints))])

    solution = solve_ivp(rhs, (0.0, 0.2), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-10, atol=1e-12)
    assert solution.success
    energy = [
        model.kinetic_energy(x[:n], x[n:]) + model.potential_energy(x[:n])
        for x in solution.y[:, :: max(1, solution.y.shape[1] // 20)].T
    ]
    scale = max(abs(e) for e in energy)
    assert np.max(np.abs(np.array(energy) - energy[0])) <= 1e-8 * scale


@pytest.mark.parametrize("gravity", [(0.0, 0.0, 0.0), (0.0, 0.0, -9.81)], ids=["no-gravity", "gravity"])
def test_pinned_and_clamped_frames_agree_with_stiffening(gravity):
    """Locked frequencies of the spatial arm at θ = (0.3, 0.4) rad, FEM 16 elements per link,
    geometric stiffening on: the pinned and the clamped frame give the same six lowest
    frequencies to 1e-9 relative (1e-6 is asked of converged results; measured
    2.4e-15 without gravity, 1.5e-14 with it — the element spaces of both frames span the same beam deflections, so they
    agree at every mesh, not only in the limit)."""
    arm = spatial_arm(gravity)
    q = lambda model: np.concatenate([[0.3, 0.4], np.zeros(model.n_dof - 2)])  # noqa: E731
    found = {}
    for frame in ("clamped", "pinned"):
        model = FiniteElementModel(arm, elements=16, frame=frame, geometric_stiffening=True)
        found[frame] = model.natural_frequencies(q(model), count=6)
    np.testing.assert_allclose(found["pinned"], found["clamped"], rtol=1e-9)


def test_without_stiffening_gravity_separates_the_frames():
    """The same comparison without stiffening under gravity: the frames differ (the frame
    dependence the geometric stiffening removes), by more than 1e-4 on ω₁ (measured
    1.4e-3) — so the agreement above is not an accident of the configuration."""
    arm = spatial_arm()
    found = {}
    for frame in ("clamped", "pinned"):
        model = FiniteElementModel(arm, elements=16, frame=frame)
        found[frame] = model.natural_frequencies(
            np.concatenate([[0.3, 0.4], np.zeros(model.n_dof - 2)]), count=2
        )
    assert abs(found["pinned"][0] / found["clamped"][0] - 1.0) > 1e-4


def test_amm_pinned_pinned_shapes_converge_to_the_fem_frequencies():
    """Seed 000's azimuth–elevation arm (preset: payload at the tip, gravity) with
    pinned-pinned shapes in both planes: the lowest two locked frequencies at the home
    configuration approach FEM's (64 elements, pinned frame, converged to ~1e-9) as modes
    are added, at rate ≈ 1 in the mode count (the shapes cannot carry the payload's shear
    at the tip, so the Ritz error falls only like 1/n — the rate the trade-off study
    measured for pinned-pinned shapes on the lumped arm, 0.9–1.3). Asserted: errors falling
    at a fitted rate in [0.8, 1.5] over 2, 4, 8 modes (measured 0.98 and 1.00: 0.177,
    0.090, 0.045)."""
    arm = azimuth_elevation()
    reference = FiniteElementModel(arm, elements=64, frame="pinned")
    exact = reference.natural_frequencies(reference.home(), count=2)
    errors = []
    for modes in (2, 4, 8):
        model = AssumedModesModel(arm, shape="pinned-pinned", modes=modes)
        errors.append(np.max(np.abs(model.natural_frequencies(model.home(), count=2) / exact - 1.0)))
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((rates >= 0.8) & (rates <= 1.5)), (errors, rates)


def numpy_twin(model):
    """The same discretization on the numpy engine."""
    return model.replace(compiled=False)


def acceleration_scale(twin, q, qd, tau) -> float:
    """The largest acceleration the separate terms produce: M⁻¹ of the applied forces, of
    velocity products of size ‖M‖|q̇|² and of gravity (tests/test_compiled.py: two
    backward-stable solves differ by ~cond(M) ε of it)."""
    M = twin.mass_matrix(q)
    products = np.full(twin.n_dof, np.max(np.abs(M)) * (qd @ qd))
    terms = [twin._applied(q, qd, tau), products, twin.gravity_forces(q)]
    return max(max(np.max(np.abs(np.linalg.solve(M, f))) for f in terms), 1e-300)


def engine_errors(model, twin, q, qd, tau) -> dict[str, float]:
    """Compiled (``model``) − numpy engine (``twin``): M, h, G each relative to its own scale
    (M: max|M|; h: max|M|·|q̇|²; G: max|G|, as tests/test_compiled.py); q̈ of the compiled
    composite solve, of the articulated-body recursion and of the fused rates function (both
    solvers; arms without translating links) against the numpy engine's composite solve,
    relative to :func:`acceleration_scale`."""
    M, M_ref = model.mass_matrix(q), twin.mass_matrix(q)
    scale_M = np.max(np.abs(M_ref))
    h, h_ref = model.bias_forces(q, qd), twin.bias_forces(q, qd)
    G, G_ref = model.gravity_forces(q), twin.gravity_forces(q)
    errors = {
        "M": np.max(np.abs(M - M_ref)) / scale_M,
        "h": np.max(np.abs(h - h_ref)) / (scale_M * max(qd @ qd, 1e-300)),
        "G": np.max(np.abs(G - G_ref)) / max(np.max(np.abs(G_ref)), 1e-300),
    }
    reference = twin.forward_dynamics(q, qd, tau)
    scale = acceleration_scale(twin, q, qd, tau)
    for solver in ("composite", "recursive"):
        errors[f"qdd {solver}"] = np.max(
            np.abs(model.forward_dynamics(q, qd, tau, solver=solver) - reference)
        )
        if not model.arm.translating_links:
            n = model.n_dof
            rates = model.rates_function(solver)(np.concatenate([q, qd, [0.0, 0.0]]), tau)
            errors[f"rates {solver}"] = np.max(np.abs(rates[n : 2 * n] - reference))
    return {
        name: value / scale if name.startswith(("qdd", "rates")) else value for name, value in errors.items()
    }


@pytest.mark.parametrize("stiffening", [False, True], ids=["plain", "stiffening"])
@pytest.mark.parametrize("backend", sorted(MODELS))
def test_compiled_kernels_equal_the_numpy_engine(backend, stiffening):
    """The spatial arm runs the compiled kernels by default (both links tilted), and they
    equal the numpy engine at three deflected, moving states, with and without geometric
    stiffening: M, h, G to 1e-12 of their scales and q̈ (composite, recursive, fused rates
    function) to 1e-10 of the acceleration scale (the tolerances of tests/test_compiled.py;
    measured ≤ 1.6e-15 for M, h, G, and for q̈ ≤ 6.9e-15 AMM, 1.2e-11 FEM). The rates
    function's compiled Jacobian equals the same central differences of the numpy engine's
    right-hand side to the bound the q̈ tolerance implies (see below; measured ≤ 0.08 of it)."""
    model = MODELS[backend](spatial_arm(), geometric_stiffening=stiffening)
    twin = numpy_twin(model)
    assert model.compiled is not None and twin.compiled is None
    assert model.kinematics.tip_maps[0].root is not None and model.kinematics.tip_maps[1].root is not None
    for seed in range(3):
        q, qd = deflected_state(model, seed)
        tau = np.random.default_rng(seed + 10).normal(size=model.n_joints)
        errors = engine_errors(model, twin, q, qd, tau)
        assert max(errors[name] for name in ("M", "h", "G")) <= 1e-12, errors
        assert max(value for name, value in errors.items() if name not in ("M", "h", "G")) <= 1e-10, errors
    # The compiled Jacobian: central differences of the compiled rates with steps
    # h_j = ε^(1/3) max(|z_j|, 1), z = (x, τ) (core.dynamics.compiled.rates_jacobian). The same differences
    # of the numpy engine's rates differ from it by at most max|Δ|/h_j, Δ = the engines'
    # disagreement on q̈ (≤ 1e-10 of the acceleration scale, asserted above).
    n = model.n_dof
    x = np.concatenate([q, qd, [0.0, 0.0]])
    J, J_tau = model.rates_function("recursive").jacobian(x, tau)
    rates = twin.rates_function("composite")
    z = np.concatenate([x[: 2 * n], tau])
    steps = np.cbrt(np.finfo(float).eps) * np.maximum(np.abs(z), 1.0)

    def numpy_rates(point):
        return rates(np.concatenate([point[: 2 * n], x[2 * n :]]), point[2 * n :])[n : 2 * n]

    reference = np.column_stack(
        [
            (numpy_rates(z + h * e) - numpy_rates(z - h * e)) / (2 * h)
            for h, e in zip(steps, np.eye(z.size), strict=True)
        ]
    )
    ours = np.hstack([J[n : 2 * n, : 2 * n], J_tau[n : 2 * n]])
    bound = 1e-10 * acceleration_scale(twin, q, qd, tau) / steps
    assert np.all(np.abs(ours - reference) <= bound)


@pytest.mark.parametrize("backend", sorted(MODELS))
@given(data=st.data())
def test_compiled_kernels_equal_the_numpy_engine_on_drawn_arms(backend, data):
    """Drawn spatial arms with the pinned frame on every revolute link bending in two planes
    (at least one; ``tests.strategies`` ``tilted``: hubs, motors, lumped masses, payloads,
    prismatic joints and translating links, other links' frames and shapes drawn, gravity on
    or off) and geometric stiffening drawn (on arms without translating links, at
    deflections ≤ 1e-3 where its truncated M stays positive definite): the compiled kernels
    equal the numpy engine, M, h, G to 1e-12 and q̈ to 1e-10 of their scales (as
    tests/test_compiled.py; measured over 300 draws per backend: ≤ 6.2e-15 and ≤ 1.7e-12)."""
    drawn = data.draw(models(backend, tilted=True))
    stiffening = not drawn.arm.translating_links and data.draw(st.booleans())
    model = drawn.replace(geometric_stiffening=stiffening)
    twin = numpy_twin(model)
    assert model.compiled is not None and twin.compiled is None
    scale = data.draw(st.sampled_from((1e-4, 1e-3))) if stiffening else None
    q, qd = data.draw(states(model, flex_scale=scale))
    torques = st.floats(-5, 5, allow_subnormal=False)  # subnormal products round to 0 in one path only
    tau = np.asarray(data.draw(st.lists(torques, min_size=model.n_joints, max_size=model.n_joints)))
    errors = engine_errors(model, twin, q, qd, tau)
    assert max(errors[name] for name in ("M", "h", "G")) <= 1e-12, errors
    assert max(value for name, value in errors.items() if name not in ("M", "h", "G")) <= 1e-10, errors
