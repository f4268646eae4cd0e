"""The engine against exact and independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import shapes
from amm import AssumedModesModel
from core import Arm, ChainModel, Damping, Joint, Link, LumpedMass, Payload, distal_load
from core.arm.presets import lumped_two_link
from fem import FiniteElementModel

RNG = np.random.default_rng(20261122)


# --------------------------------------------------------------------------- rigid
def textbook_two_link(q, qd, m1, m2, l1, lc1, lc2, I1, I2, g):
    """Spong, Hutchinson & Vidyasagar, Robot Modeling and Control (2006), eqs. 7.83–7.86."""
    c2, s2 = math.cos(q[1]), math.sin(q[1])
    d11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I1 + I2
    d12 = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    d22 = m2 * lc2**2 + I2
    h = -m2 * l1 * lc2 * s2
    Cqd = np.array([2 * h * qd[0] * qd[1] + h * qd[1] ** 2, -h * qd[0] ** 2])
    G = np.array(
        [
            (m1 * lc1 + m2 * l1) * g * math.cos(q[0]) + m2 * lc2 * g * math.cos(q[0] + q[1]),
            m2 * lc2 * g * math.cos(q[0] + q[1]),
        ]
    )
    return np.array([[d11, d12], [d12, d22]]), Cqd, G


def test_rigid_two_link_equals_textbook_closed_form():
    m1, m2, l1, l2, lc1, lc2, I1, I2, g = 1.3, 0.7, 0.9, 0.6, 0.4, 0.25, 0.11, 0.05, 9.81
    arm = Arm.planar(
        [Link.rigid(l1, m1, com=lc1, inertia=I1), Link.rigid(l2, m2, com=lc2, inertia=I2)],
        gravity=(0.0, -g, 0.0),
    )
    model = ChainModel(arm, {})
    worst = 0.0
    for _ in range(50):
        q, qd = RNG.uniform(-np.pi, np.pi, 2), RNG.normal(size=2)
        M, Cqd, G = textbook_two_link(q, qd, m1, m2, l1, lc1, lc2, I1, I2, g)
        worst = max(
            worst,
            np.max(np.abs(model.mass_matrix(q) - M)),
            np.max(np.abs(model.coriolis_matrix(q, qd) @ qd - Cqd)),
            np.max(np.abs(model.gravity_forces(q) - G)),
        )
    assert worst < 1e-12


def sympy_lagrange_reference():
    """Spatial RRP rigid arm by brute-force sympy Lagrange (independent of the engine).

    DH: A_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i); link frame = Rz Tz; centre of mass
    and inertia tensor in the link frame; hub of joint 2 (mass on the axis,
    inertia about it); reflected motor inertia on joint 1; payload at the tip.
    """
    q = sp.symbols("q1:4")
    qd = sp.symbols("qd1:4")

    def Rz(t):
        return sp.Matrix([[sp.cos(t), -sp.sin(t), 0], [sp.sin(t), sp.cos(t), 0], [0, 0, 1]])

    def Rx(t):
        return sp.Matrix([[1, 0, 0], [0, sp.cos(t), -sp.sin(t)], [0, sp.sin(t), sp.cos(t)]])

    dh = [  # (theta, d, a, alpha)
        (q[0] + sp.Rational(1, 5), sp.Rational(2, 5), sp.Rational(1, 10), sp.pi / 2),
        (q[1], sp.Rational(-1, 10), sp.Rational(1, 2), -sp.pi / 3),
        (sp.Rational(3, 10), q[2] + sp.Rational(1, 5), sp.Rational(3, 10), 0),
    ]
    masses = [2, sp.Rational(3, 2), sp.Rational(4, 5)]
    coms = [sp.Matrix([0.05, -0.1, 0.02]), sp.Matrix([0.25, 0.01, -0.03]), sp.Matrix([0.1, 0.0, 0.05])]
    tensors = [
        sp.Matrix([[0.03, 0.002, 0], [0.002, 0.02, 0.001], [0, 0.001, 0.025]]),
        sp.Matrix([[0.004, 0, 0], [0, 0.03, 0], [0, 0, 0.031]]),
        sp.Matrix([[0.002, 0, 0.0005], [0, 0.006, 0], [0.0005, 0, 0.006]]),
    ]
    hub_mass, hub_inertia, motor = sp.Rational(3, 10), sp.Rational(1, 100), (1e-4, 20)
    payload_mass, payload_tensor = sp.Rational(1, 2), sp.diag(0.001, 0.002, 0.003)
    g = sp.Matrix([0, 0, -9.81])
    R, p = sp.eye(3), sp.zeros(3, 1)
    T = sp.Integer(0)
    V = sp.Integer(0)

    def velocity(expr):
        # d/dt of an expression in q: Σ_k ∂expr/∂q_k q̇_k.
        return sum((sp.diff(expr, qk) * qdk for qk, qdk in zip(q, qd, strict=True)), sp.zeros(*expr.shape))

    def omega(Rm):
        W = velocity(Rm) * Rm.T
        return sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])

    for i, (theta, d, a, alpha) in enumerate(dh):
        R_link = R * Rz(theta)
        p_link = p + R * sp.Matrix([0, 0, d])
        w = omega(R_link)
        c = p_link + R_link * coms[i]
        vc = velocity(c)
        T += masses[i] * (vc.T * vc)[0] / 2 + (w.T * R_link * tensors[i] * R_link.T * w)[0] / 2
        V -= masses[i] * (g.T * c)[0]
        if i == 1:
            vh = velocity(p_link)
            axis = R[:, 2]
            T += hub_mass * (vh.T * vh)[0] / 2 + hub_inertia * ((axis.T * w)[0]) ** 2 / 2
            V -= hub_mass * (g.T * p_link)[0]
        R, p = R_link * Rx(alpha), p_link + R_link * sp.Matrix([a, 0, 0])
        if i == 2:
            vt = velocity(p)
            T += payload_mass * (vt.T * vt)[0] / 2 + (w.T * R_link * payload_tensor * R_link.T * w)[0] / 2
            V -= payload_mass * (g.T * p)[0]
    T += motor[0] * motor[1] ** 2 * qd[0] ** 2 / 2
    qdv, qv = sp.Matrix(qd), sp.Matrix(q)
    M = sp.hessian(T, qd)
    dTdqd = sp.Matrix([sp.diff(T, v) for v in qd])
    h = dTdqd.jacobian(qv) * qdv - sp.Matrix([sp.diff(T, v) for v in q])
    G = sp.Matrix([sp.diff(V, v) for v in q])
    f = sp.lambdify((q, qd), (M, h, G), "numpy", cse=True)

    joints = [
        Joint(theta_offset=0.2, d=0.4, a=0.1, alpha=math.pi / 2, motor_inertia=1e-4, gear_ratio=20),
        Joint(d=-0.1, a=0.5, alpha=-math.pi / 3, hub_mass=0.3, hub_inertia=0.01),
        Joint(kind="prismatic", theta_offset=0.3, d=0.2, a=0.3),
    ]
    links = [
        Link.rigid(0.1, 2.0, com=[0.05, -0.1, 0.02], inertia=np.array(tensors[0].tolist(), dtype=float)),
        Link.rigid(0.5, 1.5, com=[0.25, 0.01, -0.03], inertia=np.array(tensors[1].tolist(), dtype=float)),
        Link.rigid(0.3, 0.8, com=[0.1, 0.0, 0.05], inertia=np.array(tensors[2].tolist(), dtype=float)),
    ]
    arm = Arm.from_dh(
        joints, links, payload=Payload(0.5, np.diag([0.001, 0.002, 0.003])), gravity=(0, 0, -9.81)
    )
    return f, ChainModel(arm, {})


@pytest.mark.slow
def test_spatial_rigid_arm_equals_sympy_lagrange():
    reference, model = sympy_lagrange_reference()
    worst = 0.0
    for _ in range(20):
        q, qd = RNG.uniform(-2, 2, 3), RNG.normal(size=3)
        M, h, G = (np.array(x, dtype=float) for x in reference(q, qd))
        worst = max(
            worst,
            np.max(np.abs(model.mass_matrix(q) - M)),
            np.max(np.abs(model.coriolis_matrix(q, qd) @ qd - h.ravel())),
            np.max(np.abs(model.gravity_forces(q) - G.ravel())),
        )
    assert worst < 1e-12


# ------------------------------------------------------------------ single flexible link
L, RHO_A, EI = 1.2, 0.8, 15.0
TIP_MASS, TIP_INERTIA = 0.5, 0.02


def tip_loaded_link():
    return Arm.planar([Link.flexible(L, RHO_A, EI)], payload=Payload(TIP_MASS, TIP_INERTIA))


def test_clamped_mass_shapes_give_the_exact_locked_frequencies():
    # Reference: roots of the clamped-mass frequency equation (shapes, checked
    # against mpmath in test_shapes_roots), ω = β² √(EI/(ρA L⁴)).
    exact = shapes.ClampedMass(TIP_MASS / (RHO_A * L), TIP_INERTIA / (RHO_A * L**3)).frequencies(
        4, EI=EI, mass_per_length=RHO_A, length=L
    )
    model = AssumedModesModel(tip_loaded_link(), shape="clamped-mass", modes=4)  # distal load = payload
    np.testing.assert_allclose(model.natural_frequencies(joints="locked"), exact, rtol=1e-8)


@pytest.mark.parametrize("family", ["clamped-free", "pinned-pinned"])
def test_other_bases_converge_from_above(family):
    """Ritz: more modes → locked frequencies decrease monotonically towards the exact ones.

    For pinned-pinned shapes the locked hub (Bᵀq = q + w'(0) held) turns the chord
    frame into a clamped one, so they converge to the same clamped-mass roots.
    """
    exact = shapes.ClampedMass(TIP_MASS / (RHO_A * L), TIP_INERTIA / (RHO_A * L**3)).frequencies(
        2, EI=EI, mass_per_length=RHO_A, length=L
    )
    errors = []
    for modes in (2, 4, 8, 16, 32):
        omega = AssumedModesModel(tip_loaded_link(), shape=family, modes=modes).natural_frequencies()
        errors.append(omega[:2] / exact - 1)
    errors = np.array(errors)
    assert np.all(errors > -1e-12)
    assert np.all(np.diff(errors, axis=0) < 1e-12)


#: Fitted AMM rates p (error ∝ modes^−p, first three frequencies, 16/32/64 modes):
#: the bands (low, high). Shapes that violate a natural boundary condition of the
#: tip-loaded beam converge algebraically, at a rate set by the condition they miss:
#: cantilever shapes with a point tip mass (j = 0) miss only the shear condition
#: EI w‴ = −M ω² w → p = 3 (fitted 2.99–3.06); with tip rotary inertia they also miss
#: the moment condition EI w″ = −J ω² w′ → p = 1, mode 1 from above (fitted 1.01–1.23;
#: its local rates 1.54, 1.31, 1.16, 1.08 from 8 to 128 modes, the excess halving with
#: each doubling); pinned-pinned shapes miss the root slope condition → p = 1
#: (fitted 0.99–1.06).
AMM_RATES = {
    ("clamped-free", False): (2.9, 3.1),
    ("clamped-free", True): (0.95, 1.3),
    ("pinned-pinned", False): (0.9, 1.1),
    ("pinned-pinned", True): (0.9, 1.1),
}


@pytest.mark.parametrize("joints", ["locked", "free"])
@pytest.mark.parametrize(("family", "rotary"), list(AMM_RATES))
def test_assumed_modes_converge_at_the_rate_of_the_missed_boundary_condition(family, rotary, joints):
    """References: locked, the exact clamped-mass roots; free (hub inertia 0.3 kg m², the
    joint turns), FEM with 64 clamped elements (rate 4; its error ~1e-9 is below the
    AMM errors here, ≥ 4.9e-8)."""
    inertia = TIP_INERTIA if rotary else 0.0
    arm = Arm.planar(
        [Link.flexible(L, RHO_A, EI)], payload=Payload(TIP_MASS, inertia), joints=[Joint(hub_inertia=0.3)]
    )
    if joints == "locked":
        reference = shapes.ClampedMass(TIP_MASS / (RHO_A * L), inertia / (RHO_A * L**3)).frequencies(
            3, EI=EI, mass_per_length=RHO_A, length=L
        )
    else:
        reference = FiniteElementModel(arm, elements=64).natural_frequencies(joints="free")[1:4]
    counts = np.array([16, 32, 64])
    errors = []
    for modes in counts:
        omega = AssumedModesModel(arm, shape=family, modes=int(modes)).natural_frequencies(joints=joints)
        errors.append(omega[:3] / reference - 1 if joints == "locked" else omega[1:4] / reference - 1)
    rates = -np.polyfit(np.log(counts), np.log(np.abs(np.array(errors))), 1)[0]
    low, high = AMM_RATES[(family, rotary)]
    assert np.all((low <= rates) & (rates <= high)), rates


def test_distal_load_of_the_lumped_two_link_arm():
    """Beyond link 1: the hub of joint 2 (2.94 kg), link 2 as a rod (0.29 kg, 0.435 m)
    and the payload (0.343 kg); inertia about the tip of link 1: m L²/3 + m_p L²,
    the same for any θ2 (all in the plane)."""
    arm = lumped_two_link()
    for theta2 in (0.0, -math.pi / 4, 1.0):
        mass, inertia = distal_load(arm, 1, [0.3, theta2])
        assert mass == pytest.approx(2.94 + 0.29 + 0.343, rel=1e-14)
        assert inertia == pytest.approx(0.29 * 0.435**2 / 3 + 0.343 * 0.435**2, rel=1e-12)
    assert distal_load(arm, 2) == pytest.approx((0.343, 0.0), abs=1e-15)
    with pytest.raises(ValueError, match="link must be a link number from 1 to 2, got 3"):
        distal_load(arm, 3)


def test_distal_load_shapes_converge_with_two_modes():
    """docs/MODEL.md, Mode shapes: for an intermediate link, distal-load clamped-mass shapes converge with
    2 modes where cantilever shapes need many (lumped arm, no gravity, θ = (45°, −45°))."""
    arm = lumped_two_link(gravity=False)
    joints = np.array([math.pi / 4, -math.pi / 4])

    def first_two(shape, modes):
        model = AssumedModesModel(arm, shape=shape, modes=modes, reference=joints)
        q = np.zeros(model.n_dof)
        q[:2] = joints
        return model.natural_frequencies(q, "locked")[:2]

    reference = first_two("clamped-mass", 8)
    assert np.max(np.abs(first_two("clamped-mass", 2) / reference - 1)) < 1e-4
    assert np.max(np.abs(first_two("clamped-free", 8) / reference - 1)) > 1e-2


def test_lumped_mass_at_the_tip_equals_a_tip_payload_when_undeformed():
    # Two descriptions of the same body at δ = 0: a lumped mass (first-order
    # rotation Ψδ) and a payload on the tip frame (exact rotation).
    lumped = Arm.planar(
        [Link.flexible(L, RHO_A, EI, lumped_masses=[LumpedMass(L, 0.4, 0.03)]), Link.rigid(0.5, 0.3)]
    )
    payload = Arm.planar([Link.flexible(L, RHO_A, EI, tip_payload=Payload(0.4, 0.03)), Link.rigid(0.5, 0.3)])
    a = AssumedModesModel(lumped, modes=3)
    b = AssumedModesModel(payload, modes=3)
    q = np.array([0.3, -0.8, 0, 0, 0])
    np.testing.assert_allclose(a.mass_matrix(q), b.mass_matrix(q), rtol=1e-13, atol=1e-14)


def locked_eigenvalues(model):
    """Eigenvalues of the flexible subsystem with the joint locked: M_ff ẍ + D_ff ẋ + K_ff x = 0."""
    q = np.zeros(model.n_dof)
    f = model.flex
    M, D, K = (X[f, f] for X in (model.mass_matrix(q), model.damping_matrix(q), model.stiffness_matrix(q)))
    n = M.shape[0]
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    eigenvalues = np.linalg.eigvals(A)
    return eigenvalues[eigenvalues.imag > 0]


def test_modal_and_rayleigh_damping_ratios():
    """Joint locked: modal damping gives ζ on every mode of the link alone;
    Rayleigh gives ζ_k = α/(2ω_k) + βω_k/2 (ω_k the undamped frequency)."""
    zeta = 0.02
    arm = Arm.planar([Link.flexible(L, RHO_A, EI, damping=Damping.modal(zeta))])
    eigenvalues = locked_eigenvalues(AssumedModesModel(arm, modes=3))
    np.testing.assert_allclose(-eigenvalues.real / np.abs(eigenvalues), zeta, rtol=1e-9)
    alpha, beta = 0.3, 1e-4
    arm = Arm.planar([Link.flexible(L, RHO_A, EI, damping=Damping.rayleigh(alpha, beta))])
    eigenvalues = locked_eigenvalues(AssumedModesModel(arm, modes=3))
    omega = np.abs(eigenvalues)
    np.testing.assert_allclose(-eigenvalues.real / omega, alpha / (2 * omega) + beta * omega / 2, rtol=1e-9)


def test_input_matrix_rows():
    # Clamped frames: joint rows identity, flexible rows zero. Pinned: φ_k'(0)/L = √2 kπ/L.
    arm = Arm.planar([Link.flexible(L, RHO_A, EI)])
    B = AssumedModesModel(arm, shape="clamped-free", modes=3).input_matrix(None)
    np.testing.assert_array_equal(B, [[1], [0], [0], [0]])
    B = AssumedModesModel(arm, shape="pinned-pinned", modes=3).input_matrix(None)
    np.testing.assert_allclose(B[1:, 0], math.sqrt(2) * math.pi * np.arange(1, 4) / L, rtol=1e-14)


def test_static_tip_deflection_under_gravity_matches_beam_theory():
    # Cantilever (joint held) under its own weight: tip deflection ρA g L⁴/(8 EI)
    # (Euler–Bernoulli). Static equilibrium of the flexible coordinates:
    # K_ff δ = −G_f at δ = 0 (G is affine in δ here).
    g = 9.81
    arm = Arm.planar([Link.flexible(L, RHO_A, EI)], gravity=(0.0, -g, 0.0))
    model = AssumedModesModel(arm, modes=12)
    q = np.zeros(model.n_dof)
    flex = model.flex
    delta = np.linalg.solve(model.stiffness_matrix(q)[flex, flex], -model.gravity_forces(q)[flex])
    q[flex] = delta
    tip = model.tip_position(q)
    np.testing.assert_allclose(tip[1], -RHO_A * g * L**4 / (8 * EI), rtol=1e-6)


def test_bad_inputs_name_the_problem():
    arm = Arm.planar([Link.flexible(L, RHO_A, EI)])
    with pytest.raises(ValueError, match="link 1: flexible link has no basis"):
        ChainModel(arm, {})
    with pytest.raises(ValueError, match=r"shapes\[1\]: family must be one of"):
        AssumedModesModel(arm, shapes={1: ("beta-ode", 2)})
    with pytest.raises(ValueError, match=r"shapes\[1\]: number of modes must be an integer >= 1, got 0"):
        AssumedModesModel(arm, shapes={1: ("clamped-free", 0)})
    with pytest.raises(ValueError, match=r"shapes: links \[2\] are not flexible"):
        AssumedModesModel(arm, shapes={2: ("clamped-free", 2)})
    with pytest.raises(ValueError, match=r"link 1: .*mass_ratio must be >= 0"):
        AssumedModesModel(arm, shapes={1: ("clamped-mass", 2, {"mass_ratio": -1.0})})
    model = AssumedModesModel(arm)
    with pytest.raises(ValueError, match="solver must be one of"):
        model.forward_dynamics(np.zeros(3), np.zeros(3), np.zeros(1), solver="magic")
    with pytest.raises(ValueError, match=r"q must have shape \(3,\)"):
        model.mass_matrix(np.zeros(2))
    with pytest.raises(ValueError, match="not reachable with joint inputs"):
        model.inverse_dynamics(np.zeros(3), np.zeros(3), np.ones(3))
    # Pinned frames bend in two planes on revolute links (either engine; tests/test_pinned_frames.py),
    # not on a translating link, which leaves its hub tangent to it.
    sliding = Arm.from_dh(
        [Joint(a=0.0, alpha=math.pi / 2), Joint(kind="prismatic")],
        [Link.rigid(0.5, 1.0), Link.flexible(L, RHO_A, EI, EI_out=EI)],
    )
    with pytest.raises(ValueError, match=r"shapes\[2\]: family must be one of .* for a translating link"):
        AssumedModesModel(sliding, shape="pinned-pinned")


def test_clamped_free_zero_dynamics_of_lin_lewis_example_4_2():
    """Lin & Lewis (1994), example 4.2 (one flexible link, 2 clamped-free modes, joint angle as output):
    the zero dynamics are ±j76.98 and ±j1.0914 rad/s. Ours: ±j76.9535 and ±j1.09144 (0.034 % and
    0.004 %; the paper prints four digits of a Mathematica model with the same shapes), real parts
    ≤ 2e-15. Tolerances 0.1 % and 1e-12 of the largest zero. This pins the tip mass: the paper's
    "0.1 lbm" gives ±j13.4, ±j91.5; its numbers need 0.1 lbf·s²/in (see core.arm.presets)."""
    from core.analysis.linear import zero_dynamics
    from core.arm.presets import one_flexible_link

    model = AssumedModesModel(one_flexible_link(), shape="clamped-free", modes=2)
    zeros = zero_dynamics(model, model.home())
    magnitudes = np.sort(np.abs(zeros.imag))
    np.testing.assert_allclose(magnitudes, [1.0914, 1.0914, 76.98, 76.98], rtol=1e-3)
    assert np.max(np.abs(zeros.real)) <= 1e-12 * np.max(np.abs(zeros))
