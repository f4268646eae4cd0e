"""The stiffened mass matrix is a Gram form (docs/MODEL.md, *The stiffened kinetic energy*).

M_b(δ) = ∫ J_pᵀ J_p dm with J_p = [1, −ρ̃, Φ − e_x hᵀ] for the foreshortened beam
ρ(s) = (s + u(s)) e_x + Φ(s)δ: positive definite for every deflection, which the second-order
truncation it replaces was not (the lumped two-link arm at (45°, −45°) with 16 elements per link
had min eig M(0)⁻¹M(q) = −1.3 at a tenth of its gravity sag, −170 with 64 elements).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from amm import AssumedModesModel
from core import Arm, Joint, Link, LumpedMass
from core.analysis.simulation import simulate
from core.arm import presets
from core.dynamics.basis import slope_products
from core.dynamics.flexible_body import FlexibleBody
from core.numerics.quadrature import composite_gauss
from core.numerics.rotations import skew
from fem import FiniteElementModel
from tests.strategies import models, states

GRAVITY = (0.0, -9.81, 0.0)


def brute_force_gram(body: FlexibleBody, delta: np.ndarray, rho: float, lumped) -> np.ndarray:
    """∫ J_pᵀ J_p dm written out point by point: 8-point Gauss on 40 panels, H(s) of every point
    by ``slope_products`` (independent of the segment bookkeeping of core.dynamics.foreshortening),
    the quartic foreshortening u₄(s) = −⅛∫₀ˢ|w'|⁴ and its gradient −h₄ by a 12-point Gauss rule on
    [0, s] split at the panel ends, plus the lumped masses (point masses: no rotary inertia)."""
    basis, n, m = body.basis, body.basis.n, body.n_coordinates
    edges = np.linspace(0.0, basis.length, 41)
    s_beam, w_beam = composite_gauss(edges, 8)
    points = [(s, rho * w) for s, w in zip(s_beam, w_beam, strict=True)] + [
        (p.position, p.mass) for p in lumped
    ]
    planes = [delta[:n], delta[n:] if m > n else np.zeros(n)]
    total = np.zeros((6 + m, 6 + m))
    for s, mass in points:
        values, _ = basis.evaluate(np.array([s]))
        H = slope_products(basis, (1.0,), s)
        nodes, weights = composite_gauss(np.append(edges[edges < s], s), 12)
        _, slopes = basis.evaluate(nodes)  # (n, g)
        w_slope = [d @ slopes for d in planes]
        square = sum(x * x for x in w_slope)
        u = -0.5 * sum(d @ H @ d for d in planes) - 0.125 * weights @ square**2
        h4 = [0.5 * slopes @ (weights * square * x) for x in w_slope]
        Phi = np.zeros((3, m))
        Phi[1, :n] = values[:, 0]
        h = H @ planes[0] + h4[0]
        if m > n:
            Phi[2, n:] = values[:, 0]
            h = np.concatenate([h, H @ planes[1] + h4[1]])
        rho_s = np.array([s + u, 0.0, 0.0]) + Phi @ delta
        J = np.hstack([np.eye(3), -skew(rho_s), Phi - np.outer([1.0, 0.0, 0.0], h)])
        total += mass * J.T @ J
    return total


@pytest.mark.parametrize("planes", [1, 2])
@pytest.mark.parametrize("backend", ["fem", "amm"])
def test_body_mass_matrix_is_the_gram_form(backend, planes):
    """M_b(δ) of a stiffened body (lumped mass, large δ: tip deflection ~0.2 L) equals the Gram
    form written out point by point, 1e-12 of its largest entry (measured 3e-15; both integrate
    the same polynomials exactly for elements, to ~1e-15 for assumed modes), and is positive
    semi-definite (a free body bending in two planes is singular: turning it about its axis is
    the same motion as turning its lateral deflection, ν = (0, e_x, (−δ_z, δ_y))). The lumped
    mass has no rotary inertia (a first-order term outside the Gram terms)."""
    lumped = [LumpedMass(0.55, 0.3)]
    link = Link.flexible(0.8, 1.3, 10.0, lumped_masses=lumped)
    model = (  # for its basis: the body's inertia does not depend on the bending stiffness
        FiniteElementModel(Arm.planar([link]), elements=4)
        if backend == "fem"
        else AssumedModesModel(Arm.planar([link]), modes=3)
    )
    body = FlexibleBody(link, model.bases[1], planes, stiffening=True)
    delta = 0.05 * np.random.default_rng(3).standard_normal(body.n_coordinates)
    engine = body.mass_matrix(delta[None])[0]
    reference = brute_force_gram(body, delta, 1.3, lumped)
    np.testing.assert_allclose(engine, reference, rtol=0, atol=1e-12 * np.max(np.abs(reference)))
    assert np.linalg.eigvalsh(engine)[0] > -1e-14 * np.max(np.abs(engine))


@pytest.mark.parametrize("backend", ["amm", "fem"])
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_compiled_gram_terms_equal_the_oracle(backend, data):
    """Drawn arms (planar and spatial, tilted pinned frames included), stiffened, at large
    deflections (flexible coordinates within ±0.05, where the Gram terms beyond second order are
    ~1e-3 of M): the compiled M and bias forces h equal the numpy oracle's (whose h comes from
    the complex-step Christoffel symbols of its M) to 1e-11 of their scale (|h|, or ‖M‖|q̇|² when
    h vanishes)."""
    drawn = data.draw(models(backend, max_links=3))
    assume(not drawn.arm.translating_links)
    compiled = drawn.replace(geometric_stiffening=True)
    oracle = compiled.replace(compiled=False)
    q, qd = data.draw(states(compiled, flex_scale=0.05, tiny_rates=False))
    M, M_oracle = compiled.mass_matrix(q), oracle.mass_matrix(q)
    np.testing.assert_allclose(M, M_oracle, rtol=0, atol=1e-11 * np.max(np.abs(M_oracle)))
    h, h_oracle = compiled.bias_forces(q, qd), oracle.bias_forces(q, qd)
    scale = max(np.max(np.abs(h_oracle)), np.max(np.abs(M_oracle)) * np.max(np.abs(qd)) ** 2)
    np.testing.assert_allclose(h, h_oracle, rtol=0, atol=1e-11 * scale)


def sagged(model, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(q at ``scale`` times the gravity sag of the locked arm at its home pose, that pose)."""
    q0 = model.home()
    sag = model.replace(geometric_stiffening=False).equilibrium(q0, tol=1e-8).q
    return q0 + scale * (sag - q0), q0


def relative_minimum(model, q, q0) -> float:
    """min eig M(q0)⁻¹ M(q) (Cholesky of M(q) must succeed: it raises otherwise)."""
    np.linalg.cholesky(model.mass_matrix(q))
    L = np.linalg.cholesky(model.mass_matrix(q0))
    X = np.linalg.solve(L, np.linalg.solve(L, model.mass_matrix(q)).T)
    return float(np.linalg.eigvalsh(0.5 * (X + X.T))[0])


@pytest.mark.parametrize("backend", ["amm", "fem"])
@given(data=st.data(), scale=st.sampled_from([1.0, 3.0]))
@settings(max_examples=10, deadline=None)
def test_stiffened_mass_is_positive_definite_at_three_times_the_sag(backend, data, scale):
    """Drawn arms under gravity (planar and spatial, both frames), up to 16 elements or 3 modes
    per link, stiffened: M at the gravity sag and at three times it is positive definite
    (Cholesky) — by construction, not by a deflection bound."""
    drawn = data.draw(models(backend, max_links=3, max_modes=3 if backend == "amm" else 16))
    assume(not drawn.arm.translating_links)
    arm = dataclasses.replace(drawn.arm, gravity=GRAVITY)
    model = drawn.rebuild(arm).replace(geometric_stiffening=True)
    assume(holds_itself_up(model.replace(geometric_stiffening=False)))
    q, q0 = sagged(model, scale)
    assert relative_minimum(model, q, q0) > 0


def holds_itself_up(model) -> bool:
    """Whether the locked arm's tangent stiffness K + ∂G/∂q of the flexible coordinates is
    positive definite at home: otherwise it buckles under its load and has no sag nearby (one
    drawn arm: a 1 m link of EI 5 N m² carrying 4 kg of rigid links, eigenvalues −126 N m)."""
    home, flexible = model.home(), slice(model.n_joints, None)
    tangent = model.stiffness_matrix(home) + model.gravity_stiffness(home)
    return bool(np.linalg.eigvalsh(0.5 * (tangent + tangent.T)[flexible, flexible])[0] > 0)


@pytest.mark.slow
@pytest.mark.parametrize("frame", ["clamped", "pinned"])
@pytest.mark.parametrize("elements", [64, 256])
def test_fine_meshes_stay_positive_definite(elements, frame):
    """The lumped two-link arm at (45°, −45°), stiffened, 64 and 256 elements per link, at the
    gravity sag and three times it: M positive definite. Measured min eig M(0)⁻¹M(q): pinned
    0.93 and 0.90 at any mesh; clamped 0.0075 and 0.0080 (64), 0.0045 and 0.0049 (256) — small
    because in a clamped frame a joint rotation and the elastic field that rotates the bent beam
    nearly coincide (the inextensible kinematics reproduce the rotation's axial motion too), not
    because M loses definiteness (the truncated form gave −170 with 64 elements)."""
    model = FiniteElementModel(
        presets.lumped_two_link(), elements=elements, frame=frame, geometric_stiffening=True
    )
    q0 = model.home()
    q0[:2] = math.pi / 4, -math.pi / 4
    # 256 elements: the residual's round-off floor is ~3e-8 of the load (K ~ EI/h³ times q), so 1e-7.
    sag = model.replace(geometric_stiffening=False).equilibrium(q0, tol=1e-7).q
    for scale in (1.0, 3.0):
        assert relative_minimum(model, q0 + scale * (sag - q0), q0) > 0


def _soft_swinging_arm() -> Arm:
    """The lumped arm's geometry and masses under gravity, no friction, links 20 times softer
    (so that a swing bends them)."""
    base = presets.lumped_two_link()
    links = [dataclasses.replace(link, EI=link.EI / 20) for link in base.links]
    joints = [Joint(a=base.joints[0].a), Joint(a=base.joints[1].a, hub_mass=base.joints[1].hub_mass)]
    return Arm.planar(links, payload=base.payload, gravity=GRAVITY, joints=joints)


@pytest.mark.slow
def test_stiffened_free_swing_conserves_energy():
    """A two-link arm under gravity (:func:`_soft_swinging_arm`), 4 elements per link,
    stiffened, joints free (τ = 0), released from (45°, −45°) with its links straight: over
    0.5 s T + V is constant to 1e-8 relative (DOP853, rtol 1e-11; measured 1.3e-14 of the
    30.6 J exchanged with 8 elements per link, 2.9e5 evaluations: an explicit method's step
    follows the highest element frequency; 32 elements: the next test). The motion comes from
    the compiled kernels, T from the compiled M and V from the strain and gravity energies."""
    model = FiniteElementModel(_soft_swinging_arm(), elements=4, geometric_stiffening=True)
    n = model.n_dof
    x0 = np.zeros(2 * n)
    x0[:2] = math.pi / 4, -math.pi / 4
    zero = np.zeros(model.n_joints)

    def rhs(t, x):
        return np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], zero)])

    solution = solve_ivp(rhs, (0.0, 0.5), x0, method="DOP853", rtol=1e-11, atol=1e-13)
    assert solution.success
    potential = np.array([model.potential_energy(x[:n]) for x in solution.y.T])
    energy = potential + np.array([model.kinetic_energy(x[:n], x[n:]) for x in solution.y.T])
    swing = np.max(np.abs(potential - potential[0]))  # y[:, 0] is x0
    assert swing > 1.0  # the arm really falls (joules of gravity energy exchanged)
    assert np.max(np.abs(solution.y[2:n])) > 1e-3  # and its links really bend
    drift = np.max(np.abs(energy - energy[0])) / swing
    print(f"energy drift {drift:.2e} of the exchanged {swing:.2f} J, {solution.nfev} evaluations")
    assert drift < 1e-8


@pytest.mark.slow
def test_stiffened_free_swing_on_32_elements_conserves_energy():
    """The same swing with 32 elements per link (highest locked frequency 3.3e5 rad/s, out of
    an explicit method's reach: DOP853 at rtol 1e-9 did not finish 0.5 s in 2 h), integrated by
    the symplectic Gauss method (h = 2e-4 s, Newton scale rtol 1e-7) for 0.15 s: T + V constant
    to 1e-8 of the energy exchanged (measured 2.0e-10 of 2.42 J, 11 373 evaluations, 17 s;
    benchmarks/stiffened_energy.py over 0.5 s: 4.9e-10 of 30.6 J)."""
    model = FiniteElementModel(_soft_swinging_arm(), elements=32, geometric_stiffening=True)
    q0 = np.zeros(model.n_dof)
    q0[:2] = math.pi / 4, -math.pi / 4
    frame = simulate(
        model,
        (0.0, 0.15),
        q0,
        method="Gauss",
        step=2e-4,
        rtol=1e-7,
        atol=1e-9,
        t_eval=np.linspace(0, 0.15, 31),
    )
    potential = frame["potential"].to_numpy()
    swing = np.max(np.abs(potential - potential[0]))
    assert swing > 1.0
    drift = frame["energy_balance_error"].abs().max() / swing
    print(f"energy drift {drift:.2e} of the exchanged {swing:.2f} J, {frame.attrs['nfev']} evaluations")
    assert drift < 1e-8
