"""Translating (prismatic) flexible link: a beam sliding through a hub, free length l = joint variable.

References
----------
* Clamped beam with a tip mass: 1 + cos β cosh β + μβ(cos β sinh β − sin β cosh β) = 0,
  μ = M/(ρA l), ω = β² √(EI/(ρA l⁴)) (e.g. Blevins, *Formulas for Natural
  Frequency and Mode Shape*, table 8-1), solved here by bracketing on a fine grid.
* Uniformly loaded cantilever: tip deflection q l⁴/(8 EI) (any strength-of-materials
  text); cubic Hermite elements reproduce it exactly at the nodes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

from amm import AssumedModesModel
from core import Arm, AssumptionWarning, Joint, Link, LumpedMass, Payload, simulate
from core.arm.presets import rrp_translating
from core.arm.rigid import rigid_equivalent
from core.dynamics.engine import ChainModel
from fem import FiniteElementModel
from tests.strategies import beam_kinetic_energy, mass_rate_by_differences

ARM = rrp_translating()
BEAM = ARM.links[2]


def exact_frequencies(l: float, n: int) -> np.ndarray:
    """First n natural frequencies [rad/s] of the rrp arm's beam clamped at free length l with the payload."""
    rho, EI = BEAM.mass_per_length, BEAM.EI
    mu = ARM.payload.mass / (rho * l)

    def f(b):
        return 1 + np.cos(b) * np.cosh(b) + mu * b * (np.cos(b) * np.sinh(b) - np.sin(b) * np.cosh(b))

    grid = np.linspace(0.1, math.pi * (n + 1), 20_000)
    values = f(grid)
    brackets = np.nonzero(np.sign(values[:-1]) != np.sign(values[1:]))[0][:n]
    roots = np.array([brentq(f, grid[k], grid[k + 1], xtol=1e-15, rtol=1e-15) for k in brackets])
    return roots**2 * np.sqrt(EI / (rho * l**4))


def state(model, joints, flex_scale=0.0, seed=0):
    rng = np.random.default_rng(seed)
    q = model.home()
    q[: model.n_joints] = joints
    q[model.flex] = flex_scale * rng.standard_normal(model.n_dof - model.n_joints)
    return q, rng.standard_normal(model.n_dof)


# ------------------------------------------------------------------ frequencies
@pytest.mark.parametrize("l", [0.4, 0.8, 1.3])
def test_modes_chosen_at_the_free_length_give_the_exact_clamped_mass_frequencies(l):
    """Joints locked, the free part is a cantilever of length l with the payload:
    clamped-mass shapes with roots at l_ref = l are its exact modes (tolerance
    1e-11 relative; measured ≤ 3e-14). Both bending planes have EI = 1165.49 N·m²,
    so each frequency appears twice."""
    joints = np.array([0.2, -0.3, l])
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=4, reference=joints)
    q, _ = state(model, joints)
    omega = model.natural_frequencies(q)
    np.testing.assert_allclose(omega[0::2][:3], exact_frequencies(l, 3), rtol=1e-11)
    np.testing.assert_allclose(omega[1::2][:3], exact_frequencies(l, 3), rtol=1e-11)


def test_shapes_of_another_length_bound_the_frequencies_from_above_and_converge():
    """Shapes fixed at l_ref = 1.3 m used at l = 0.6 m are a Ritz basis: every
    frequency lies above the exact one and the error falls monotonically with
    the number of modes (measured first-mode error 5.3e-4 → 2.3e-7 for 1 → 6 modes)."""
    l = 0.6
    exact = exact_frequencies(l, 3)
    errors = []
    for modes in range(1, 7):
        model = AssumedModesModel(ARM, shape="clamped-mass", modes=modes)  # l_ref = L = 1.3 m
        assert model.reference[2] == pytest.approx(1.3)
        q, _ = state(model, [0.0, 0.0, l])
        omega = model.natural_frequencies(q)[0::2][:3]
        assert np.all(omega >= exact[: omega.size] * (1 - 1e-12))
        errors.append(omega[0] / exact[0] - 1)
    assert np.all(np.diff(errors) < 0)
    assert errors[-1] < 1e-6


def test_finite_elements_on_the_free_length_converge_from_above_at_rate_four():
    """Elements span the free length (they stretch with l): ω₁ error ∝ h⁴ for
    cubic Hermite elements. Fitted slope over 2…16 elements at l = 0.6 m in
    [3.8, 4.2] (measured 3.99); all frequencies above the exact ones."""
    l = 0.6
    exact = exact_frequencies(l, 2)
    counts = np.array([2, 4, 8, 16])
    errors = []
    for count in counts:
        model = FiniteElementModel(ARM, elements=count)
        q, _ = state(model, [0.0, 0.0, l])
        omega = model.natural_frequencies(q)[0::2][:2]
        assert np.all(omega >= exact * (1 - 1e-12))
        errors.append(omega[0] / exact[0] - 1)
    slope = -np.polyfit(np.log(counts), np.log(errors), 1)[0]
    assert 3.8 <= slope <= 4.2


# ------------------------------------------------------------------ statics and gravity
def single_translating_arm(gravity, **beam):
    """One beam (L = 1 m, ρA = 2 kg/m, EI = 50 N·m²) sliding along the vertical base axis z0."""
    link = Link.flexible(1.0, 2.0, 50.0, **beam)
    return Arm.from_dh([Joint(kind="prismatic", d=0.1)], [link], gravity=gravity)


@pytest.mark.parametrize("l", [0.35, 0.7, 1.0])
def test_uniform_load_deflects_the_free_part_as_a_cantilever_of_length_l(l):
    """Gravity across the beam, g = 9.81 m/s² along −x0 (the in-plane bending
    direction): the static tip deflection of the free part is ρA g l⁴/(8EI)
    (exact for Hermite elements at the nodes, 1e-12 relative; AMM with 6
    clamped-free modes within 1e-4, measured 2e-6). The part inside the hub
    carries no bending load."""
    arm = single_translating_arm((-9.81, 0.0, 0.0))
    expected = -2.0 * 9.81 * l**4 / (8 * 50.0)
    for model, rtol in (
        (FiniteElementModel(arm, elements=4), 1e-12),
        (AssumedModesModel(arm, modes=6), 1e-4),
    ):
        q = model.home()
        q[0] = l
        f = model.flex
        K = model.stiffness_matrix(q)[f, f]
        q[f] = np.linalg.solve(K, -model.gravity_forces(q)[f])
        assert model.tip_deflections(q)["tip_w1"] == pytest.approx(expected, rel=rtol)
        # At the static deflection the elastic and gravity forces balance in the beam's coordinates.
        residual = model.elastic_forces(q)[f] + model.gravity_forces(q)[f]
        assert np.max(np.abs(residual)) <= 1e-10 * np.max(np.abs(model.gravity_forces(q)[f]))


def test_gravity_along_the_axis_pulls_the_whole_beam():
    """Undeformed, the free-length coordinate feels the weight of the whole beam
    (inside part included) along the axis: ∂V/∂l = −m g·z0 = m·4 N/kg for g = (−3, 0, −4)."""
    arm = single_translating_arm((-3.0, 0.0, -4.0))
    for model in (AssumedModesModel(arm, modes=2), FiniteElementModel(arm, elements=2)):
        q = model.home()
        q[0] = 0.55
        assert model.gravity_forces(q)[0] == pytest.approx(2.0 * 1.0 * 4.0, rel=1e-14)


# ------------------------------------------------------------------ kinetic energy and properties
MODELS = {
    "amm-clamped-free": lambda arm: AssumedModesModel(arm, shape="clamped-free", modes=3),
    "amm-clamped-mass": lambda arm: AssumedModesModel(arm, shape="clamped-mass", modes=3),
    # shapes that follow the free length: the l̇ velocity shape g = −ηψ' + l ∂ψ/∂l
    "amm-following": lambda arm: AssumedModesModel(arm, shape="clamped-mass", modes=3, tracker="root"),
    "fem": lambda arm: FiniteElementModel(arm, elements=3),
}


def loaded_translating_arm(gravity=(0.0, 0.0, -9.81)):
    """The rrp geometry with a flexible second link, a payload with inertia on the
    sliding beam's tip and gravity: every term of the translating body at once."""
    joints = [
        Joint(alpha=math.pi / 2, d=0.1, hub_inertia=0.05),
        Joint(a=0.5, alpha=-math.pi / 2, hub_mass=0.3),
        Joint(kind="prismatic", d=0.05, theta_offset=0.3),
    ]
    links = [
        Link.rigid(0.1, 1.5, com=(0.0, 0.0, -0.05), inertia=np.diag([0.01, 0.01, 0.005])),
        Link.flexible(0.5, 0.8, 40.0, EI_out=60.0, lumped_masses=[LumpedMass(0.3, 0.1, 1e-3)]),
        Link.flexible(1.0, 0.35, 80.0, EI_out=120.0, tip_payload=Payload(0.2)),
    ]
    return Arm.from_dh(joints, links, gravity=gravity)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_kinetic_energy_equals_direct_integration_over_the_sliding_beam(variant):
    """T of the model = ½∫ρA|ṙ|² over both beams (the sliding one inside and
    outside its hub) + ½m|v|² of the point masses, from point positions only
    (see ``beam_kinetic_energy``), to 1e-8 relative (the difference step's error).
    A flexible link bending in two planes carries the translating one."""
    joints = [Joint(a=0.5, alpha=math.pi / 2, d=0.1), Joint(kind="prismatic", d=0.05, theta_offset=0.3)]
    links = [
        Link.flexible(0.5, 0.8, 40.0, EI_out=60.0, lumped_masses=[LumpedMass(0.3, 0.1)]),
        Link.flexible(1.0, 0.35, 80.0, EI_out=120.0, tip_payload=Payload(0.2)),
    ]
    model = MODELS[variant](Arm.from_dh(joints, links))
    for seed, l in enumerate((0.3, 0.75, 0.95)):
        q, qd = state(model, [0.4, l], flex_scale=0.03, seed=seed)
        # 3 panels of 10 Gauss points per beam piece: exact on the 3-element meshes.
        expected = beam_kinetic_energy(model, q, qd, points=10, panels=3)
        assert model.kinetic_energy(q, qd) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("variant", sorted(MODELS))
def test_translating_dynamics_properties(variant):
    """At random states: M symmetric positive definite; Ṁ − 2C skew (1e-7 of
    ‖M‖‖q̇‖, the difference step's error); ∂V/∂q = elastic + gravity forces and
    the elastic stiffness is the Jacobian of the elastic forces (central
    differences, 1e-7 relative); forward and inverse dynamics agree."""
    model = MODELS[variant](loaded_translating_arm())
    h = 1e-6
    rng = np.random.default_rng(11)
    for seed in range(4):
        q, qd = state(model, [*rng.uniform(-2, 2, 2), rng.uniform(0.3, 1.0)], flex_scale=0.03, seed=seed)
        M = model.mass_matrix(q)
        assert np.max(np.abs(M - M.T)) <= 1e-13 * np.max(np.abs(M))
        assert np.linalg.eigvalsh(M)[0] > 0
        S = mass_rate_by_differences(model, q, qd) - 2 * model.coriolis_matrix(q, qd)
        assert np.max(np.abs(S + S.T)) <= 1e-7 * np.max(np.abs(M)) * np.max(np.abs(qd))
        eye = np.eye(model.n_dof)
        gradient = np.array(
            [(model.potential_energy(q + h * e) - model.potential_energy(q - h * e)) / (2 * h) for e in eye]
        )
        forces = model.elastic_forces(q) + model.gravity_forces(q)
        assert np.max(np.abs(gradient - forces)) <= 1e-7 * np.max(np.abs(forces))
        jacobian = np.array(
            [(model.elastic_forces(q + h * e) - model.elastic_forces(q - h * e)) / (2 * h) for e in eye]
        ).T
        H = model.elastic_stiffness(q)
        assert np.max(np.abs(H - jacobian)) <= 1e-7 * np.max(np.abs(H))
        tau = rng.uniform(-3, 3, model.n_joints)
        qdd = model.forward_dynamics(q, qd, tau)
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), tau, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("variant", ["amm-clamped-free", pytest.param("fem", marks=pytest.mark.slow)])
def test_energy_is_conserved_while_the_beam_slides(variant):
    """Free motion (no input, damping or friction) of the rrp arm with the beam
    sliding out at ~1 m/s under its initial rate and the centrifugal pull:
    T + V constant to 1e-8 relative (the drift requirement of the energy tests) over 0.1 s.

    One shape per direction (AMM) or one element (FEM) keeps the fastest mode
    (≈ 480 and ≈ 5500 rad/s) cheap for an explicit DOP853 at rtol 1e-10;
    measured drift ≈ 1e-13 for both.
    """
    model = (
        FiniteElementModel(ARM, elements=1)
        if variant == "fem"
        else AssumedModesModel(ARM, shape="clamped-free", modes=1)
    )
    q0, _ = state(model, [0.0, -1.2, 0.5], flex_scale=1e-5, seed=3)
    qd0 = np.zeros(model.n_dof)
    qd0[:3] = [1.5, 0.4, 1.0]
    frame = simulate(
        model, (0.0, 0.1), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 0.1, 21)
    )
    l = frame["d3"].to_numpy()
    assert l.max() - l.min() > 0.09  # the beam did slide
    energy = frame["energy"].to_numpy()
    assert np.max(np.abs(energy - energy[0])) <= 1e-8 * abs(energy[0])


@pytest.mark.parametrize(("speed", "warns"), [(0.5, False), (2.0, True)])
def test_extension_speed_ratio_is_recorded_and_warned_about(speed, warns):
    """docs/MODEL.md, Dynamics: the convective terms are neglected, valid while U/U_g =
    |l̇| l / √(EI/ρA) is small; a simulation records the ratio and warns above 0.1.
    An undeformed beam without gravity slides at constant speed (M_δl = 0 at
    δ = 0), from l = 0.3 m for 0.2 s: √(EI/ρA) = 5 m²/s, so the ratio ends at
    0.04 (0.5 m/s) or 0.28 (2 m/s)."""
    model = AssumedModesModel(single_translating_arm((0.0, 0.0, 0.0)), modes=1)
    q0 = model.home()
    q0[0] = 0.3
    qd0 = np.zeros(model.n_dof)
    qd0[0] = speed
    run = lambda: simulate(model, (0.0, 0.2), q0, qd0, t_eval=np.linspace(0.0, 0.2, 5))  # noqa: E731
    if warns:
        with pytest.warns(
            AssumptionWarning, match=r"translating link 1: extension speed ratio U/U_g reached 0\.28"
        ):
            frame = run()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", AssumptionWarning)
            frame = run()
    l = 0.3 + speed * frame["time"].to_numpy()
    np.testing.assert_allclose(frame["d1"], l, rtol=1e-8)
    np.testing.assert_allclose(frame["extension_speed_ratio1"], speed * l / 5.0, rtol=1e-8)


def test_rigid_equivalent_is_the_undeformed_translating_arm():
    """The rigid arm of ``rigid_equivalent`` (the whole beam as one body sliding
    with the joint) has the flexible arm's joint block of M, its gravity forces
    and its tip, at δ = 0, to round-off."""
    arm = loaded_translating_arm()
    flexible = AssumedModesModel(arm, modes=2)
    rigid = ChainModel(rigid_equivalent(arm), {})
    for joints in np.random.default_rng(5).uniform((-2, -2, 0.2), (2, 2, 1.0), (4, 3)):
        q = flexible.home()
        q[:3] = joints
        np.testing.assert_allclose(
            rigid.mass_matrix(joints), flexible.mass_matrix(q)[:3, :3], rtol=1e-12, atol=1e-13
        )
        np.testing.assert_allclose(
            rigid.gravity_forces(joints), flexible.gravity_forces(q)[:3], rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(rigid.tip_position(joints), flexible.tip_position(q), atol=1e-14)


# ------------------------------------------------------------------ errors
def test_free_lengths_outside_the_beam_are_errors():
    model = AssumedModesModel(ARM, modes=2)
    for bad in (0.0, -0.1, 1.4):
        q = model.home()
        q[2] = bad
        with pytest.raises(
            ValueError, match=r"d3: the free length of translating link 3 must lie in \(0, 1.3\] m"
        ):
            model.mass_matrix(q)
        with pytest.raises(ValueError, match=r"d3"):
            model.stiffness_matrix(q)
    with pytest.raises(
        ValueError,
        match=r"reference: d3: the free length of translating link 3 must lie in \(0, 1.3\] m, got 2.0",
    ):
        AssumedModesModel(ARM, modes=2, reference=[0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match=r"s must lie in \[-0.5, 0.8\] on link 3"):
        q = model.home()
        q[2] = 0.8
        model.point_position(3, 0.9, q)


def test_translating_links_need_clamped_shapes_and_no_lumped_masses():
    with pytest.raises(
        ValueError,
        match=r"shapes\[3\]: family must be one of \['clamped-free', 'clamped-mass', 'beta-ode'\] for a translating link, "
        r"got 'pinned-pinned'",
    ):
        AssumedModesModel(ARM, shapes={3: ("pinned-pinned", 2)})
    planar_beam = single_translating_arm((0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"frame\[1\]|pinned"):
        FiniteElementModel(planar_beam, elements=2, frame="pinned")
    with pytest.raises(ValueError, match=r"link 1.*lumped masses are not allowed on a translating link"):
        single_translating_arm((0.0, 0.0, 0.0), lumped_masses=[LumpedMass(0.5, 0.1)])
