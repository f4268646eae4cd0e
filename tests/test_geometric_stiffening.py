"""Geometric stiffening (docs/MODEL.md, Dynamics): the axial foreshortening of the beams.

References and tolerances are stated per test. The model: core/dynamics/flexible_body.py (module
docstring), the tip's axial motion in core/dynamics/kinematics.py (``TipMap.foreshortening``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from amm import AssumedModesModel
from core import Arm, Joint, Link, LumpedMass, Payload
from core.arm import presets
from core.dynamics.basis import BeamBasis
from core.dynamics.engine import ChainModel
from core.dynamics.flexible_body import FlexibleBody
from core.numerics.derivatives import complex_step_jacobian
from fem import FiniteElementModel
from tests.strategies import mass_rate_by_differences, models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])
LOCKED_45 = (np.pi / 4, -np.pi / 4)


ENGINES = pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])


def stiffened(model, compiled: bool | None = None):
    """The same discretization of the same arm with geometric stiffening, on the default
    engine (the compiled kernels of core.dynamics.compiled), or ``compiled=True``/``False`` asked for."""
    return model.replace(geometric_stiffening=True, compiled=compiled)


# -- the derivation ------------------------------------------------------------------------


def test_body_inertia_matches_a_direct_derivation():
    """T of one beam (two polynomial shapes in both bending planes, a lumped mass) from
    ρ(s) = (s + u(s)) e_x + Φ(s)δ, u = −½ ∫₀ˢ |w'|² − ⅛ ∫₀ˢ |w'|⁴ (|w'|² = Σ_a w_a'²),
    T = ½ ∫ |v + Ω × ρ + ρ̇|² dm integrated by sympy *without truncation* (the Gram form,
    docs/MODEL.md), against ½ νᵀ M_b(δ) ν, ∂T/∂δ, S₁, the gravity force −∂V/∂δ and the tip's
    axial position (second order: the tip map keeps u₂) of the engine. Exact rational data and
    polynomial integrands the engine's quadrature integrates exactly: agreement to round-off,
    asserted 1e-12. Without the u₄ term T differs by 0.52 relative at this δ (measured): the
    check tells the two apart."""
    sp = pytest.importorskip("sympy")
    s, sig, eps = sp.symbols("s sigma epsilon")
    L, rho, mk, sk = sp.Rational(3, 2), sp.Rational(7, 10), sp.Rational(2, 5), sp.Rational(9, 10)
    phis = [s**2 / L**2, s**3 / L**3 - s**2 / L**2 / 2]
    # The velocities, rates and gravity enter as numbers, eighths that binary floats hold exactly
    # (as symbols, expanding |v|² took minutes); T is differentiated in δ by the chain rule at
    # the point, so no expression is ever expanded in δ.
    eighths = np.random.default_rng(1).choice([*range(-12, 0), *range(1, 13)], size=17)
    numbers = eighths / 8.0
    v, W, ry, rz, g = (
        [sp.Rational(int(k), 8) for k in eighths[a:b]]
        for a, b in ((0, 3), (3, 6), (10, 12), (12, 14), (14, 17))
    )
    dy, dz = sp.symbols("dy0:2"), sp.symbols("dz0:2")

    def w(c):
        return sum(p * d for p, d in zip(phis, c, strict=True))

    def integral_to(e, x, upper):  # ∫₀^upper e dx of a polynomial e in x, exactly
        return sp.Poly(sp.expand(e), x).integrate().as_expr().subs(x, upper)

    def u_of(c):
        return -sp.Rational(1, 2) * integral_to(sp.diff(w(c), s).subs(s, sig) ** 2, sig, s)

    slope_square = sum(sp.diff(w(c), s).subs(s, sig) ** 2 for c in (dy, dz))
    u = u_of(dy) + u_of(dz) - sp.Rational(1, 8) * integral_to(slope_square**2, sig, s)
    u_rate = sum(sp.diff(u, d) * r for d, r in zip(dy + dz, ry + rz, strict=True))
    position = sp.Matrix([s + u, w(dy), w(dz)])
    velocity = sp.Matrix(v) + sp.Matrix(W).cross(position) + sp.Matrix([u_rate, w(ry), w(rz)])
    scale = {x: eps * x for x in dy + dz}

    def second_order(e):
        e = sp.expand(sp.sympify(e).subs(scale, simultaneous=True))
        return sum(e.coeff(eps, k) for k in range(3))

    # T, S₁ and their δ-derivatives (chain rule, exact) at the point: polynomials in s only
    at = dict(zip(dy + dz, (sp.Rational(int(k), 8) for k in eighths[6:10]), strict=True))

    def mass_integral(e):  # ρ ∫₀ᴸ e ds + m e(s_m) of a polynomial e in s
        return rho * integral_to(e, s, L) + mk * e.subs(s, sk)

    speed = velocity.subs(at)
    T = mass_integral(speed.dot(speed)) / 2
    dT = [mass_integral(speed.dot(velocity.diff(d).subs(at))) for d in dy + dz]
    S1 = position.subs(at).applyfunc(mass_integral)
    dV = [
        -sum(gi * mass_integral(x) for gi, x in zip(g, position.diff(d).subs(at), strict=True))
        for d in dy + dz
    ]
    tip_x = second_order(L + u.subs(s, L))

    values = [sp.lambdify(s, p) for p in phis]
    slopes = [sp.lambdify(s, sp.diff(p, s)) for p in phis]

    def integral(e):
        return float(integral_to(e, s, L))

    def evaluate(x):
        x = np.asarray(x, dtype=float)
        return (
            np.array([np.broadcast_to(f(x), x.shape) for f in values], dtype=float),
            np.array([np.broadcast_to(f(x), x.shape) for f in slopes], dtype=float),
        )

    basis = BeamBasis(
        length=float(L),
        frame="clamped",
        mass=np.array([[integral(a * b) for b in phis] for a in phis]),
        first=np.array([integral(a) for a in phis]),
        moment=np.array([integral(s * a) for a in phis]),
        stiffness=np.array([[integral(sp.diff(a, s, 2) * sp.diff(b, s, 2)) for b in phis] for a in phis]),
        tip_value=np.array([float(p.subs(s, L)) for p in phis]),
        tip_slope=np.array([float(sp.diff(p, s).subs(s, L)) for p in phis]),
        root_slope=np.zeros(2),
        evaluate=evaluate,  # no slope_gram: the quadrature fallback of core.dynamics.basis.slope_products
    )
    link = Link.flexible(
        float(L), float(rho), 1.0, EI_out=1.0, lumped_masses=[LumpedMass(float(sk), float(mk))]
    )
    body = FlexibleBody(link, basis, 2, stiffening=True)
    nu, delta, g_b = np.concatenate([numbers[:6], numbers[10:14]]), numbers[6:10], numbers[14:17]

    def number(e):
        return float(sp.sympify(e).subs(at).subs(eps, 1))

    def kinetic_gradient(body, delta, nu):  # ∂T/∂δ at fixed ν of the engine's M_b(δ), complex step
        return complex_step_jacobian(
            lambda x: np.array([0.5 * nu @ body.mass_matrix(x[None])[0] @ nu]), delta
        )[0]

    checks = {
        "T": (0.5 * nu @ body.mass_matrix(delta[None])[0] @ nu, number(T)),
        "S1": (body.first_moment(delta), [number(x) for x in S1]),
        "dT/dδ": (kinetic_gradient(body, delta, nu), [number(x) for x in dT]),
        "gravity": (body.gravity_wrench(delta[None], g_b[None])[0, 6:], [-number(x) for x in dV]),
        "tip x": (float(L) - 0.5 * delta @ body.foreshortening["H"] @ delta, number(tip_x)),
    }
    for name, (engine, reference) in checks.items():
        np.testing.assert_allclose(engine, reference, rtol=1e-12, atol=1e-12, err_msg=name)


# -- frame independence --------------------------------------------------------------------


def locked_frequencies(model, count=2):
    q = np.zeros(model.n_dof)
    q[:2] = LOCKED_45
    return model.natural_frequencies(q, joints="locked", count=count)


def test_clamped_and_pinned_frames_agree_under_gravity_with_stiffening():
    """The frame-dependence table: the lumped two-link preset at θ = (45°, −45°), joints locked,
    32 Hermite elements per link, gravity on. Without stiffening the frames differ by
    2.7 % on ω₁ (12.5498 vs 12.2090 rad/s, the values first reported, reproduced to the printed
    digits); with it they agree to 1e-6 relative (measured 2e-15: both element spaces hold
    the same deflections, and the second-order energies now agree)."""
    arm = presets.lumped_two_link()
    classic = {
        f: locked_frequencies(FiniteElementModel(arm, elements=32, frame=f)) for f in ("clamped", "pinned")
    }
    np.testing.assert_allclose(classic["clamped"], [12.5498, 39.0389], atol=5e-5)
    np.testing.assert_allclose(classic["pinned"], [12.209, 38.9467], atol=5e-5)
    assert 0.026 < 1 - classic["pinned"][0] / classic["clamped"][0] < 0.028
    new = {
        f: locked_frequencies(FiniteElementModel(arm, elements=32, frame=f, geometric_stiffening=True))
        for f in ("clamped", "pinned")
    }
    np.testing.assert_allclose(new["pinned"], new["clamped"], rtol=1e-6)
    # Gravity off: the preload vanishes, stiffening changes nothing at δ = 0.
    arm = presets.lumped_two_link(gravity=False)
    for f in ("clamped", "pinned"):
        np.testing.assert_allclose(
            locked_frequencies(FiniteElementModel(arm, elements=32, frame=f, geometric_stiffening=True)),
            locked_frequencies(FiniteElementModel(arm, elements=32, frame=f)),
            rtol=1e-12,
        )


@st.composite
def planar_flexible_arms(draw):
    n = draw(st.integers(1, 3))
    links, joints = [], []
    for _ in range(n):
        L = draw(st.floats(0.3, 1.2))
        lumped = [
            LumpedMass(draw(st.floats(0.05, 1.0)) * L, draw(st.floats(0.0, 0.5)), draw(st.floats(0.0, 0.005)))
            for _ in range(draw(st.integers(0, 2)))
        ]
        links.append(
            Link.flexible(L, draw(st.floats(0.2, 2.0)), draw(st.floats(5.0, 100.0)), lumped_masses=lumped)
        )
        joints.append(Joint(a=L, hub_mass=draw(st.floats(0.0, 0.5)), hub_inertia=draw(st.floats(0.0, 0.01))))
    payload = Payload(draw(st.floats(0.0, 1.0)), draw(st.floats(0.0, 0.01))) if draw(st.booleans()) else None
    angles = draw(st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n))
    return Arm.planar(links, joints=joints, payload=payload, gravity=(0.0, -9.81, 0.0)), angles


@given(drawn=planar_flexible_arms(), elements=st.integers(2, 4))
@settings(max_examples=15, deadline=None)
def test_frames_agree_under_gravity_on_drawn_planar_arms(drawn, elements):
    """Drawn planar arms of 1–3 flexible links (lumped masses, hubs, payload) under gravity,
    joints locked at drawn angles: with stiffening, clamped and pinned element bases (the
    same deflection space) give the same lowest frequencies, 1e-6 relative."""
    arm, angles = drawn
    results = []
    for frame in ("clamped", "pinned"):
        model = FiniteElementModel(arm, elements=elements, frame=frame, geometric_stiffening=True)
        q = np.zeros(model.n_dof)
        q[: arm.n_joints] = angles
        K = model.elastic_stiffness(q) + model.gravity_stiffness(q)
        assume(np.linalg.eigvalsh(0.5 * (K + K.T))[0] > 0)  # a stable (not buckled) configuration
        results.append(model.natural_frequencies(q, joints="locked")[:3])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


# -- centrifugal stiffening ----------------------------------------------------------------


def southwell_reference() -> float:
    """k₁ = dω₁²/dΩ² at Ω = 0 of a uniform Euler–Bernoulli cantilever spinning about its root
    (zero hub radius, spin axis normal to the beam), flapwise: Rayleigh's quotient of the
    centrifugal tension ρΩ²(L² − s²)/2 with the exact first clamped-free mode, L = 1,
    k₁ = ∫ (1 − s²)/2 φ'² ds / ∫ φ² ds = 1.19334 (the classic Southwell coefficient 1.193 of
    the rotating-blade literature). Quadrature to 1e-13."""
    beta = scipy.optimize.brentq(lambda x: np.cos(x) * np.cosh(x) + 1, 1.5, 2.2)
    sigma = (np.sinh(beta) - np.sin(beta)) / (np.cosh(beta) + np.cos(beta))

    def phi(x):
        return np.cosh(beta * x) - np.cos(beta * x) - sigma * (np.sinh(beta * x) - np.sin(beta * x))

    def slope(x):
        return beta * (np.sinh(beta * x) + np.sin(beta * x) - sigma * (np.cosh(beta * x) - np.cos(beta * x)))

    def quad(f):
        return scipy.integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-13)[0]

    return quad(lambda x: 0.5 * (1 - x * x) * slope(x) ** 2) / quad(lambda x: phi(x) ** 2)


def spinning_frequencies(model, Omega: float) -> np.ndarray:
    """Bending frequencies about the steady spin q̇ = (Ω, 0…) at δ = 0 with the hub speed
    prescribed (the joint row dropped): M_δδ δ̈ + (K + ∂h_δ/∂δ) δ = 0. δ = 0 is a steady
    state (the centrifugal load is axial); ∂h_δ/∂δ by central differences of the bias forces
    C q̇, which are linear in δ at δ̇ = 0 (exact but for round-off); no gyroscopic δ–δ term
    (Ω_x = 0: the spin axis is normal to the beam)."""
    n, joints = model.n_dof, model.n_joints
    q, qd = np.zeros(n), np.zeros(n)
    qd[0] = Omega
    flex = np.arange(joints, n)

    def forces(delta):
        x = q.copy()
        x[flex] = delta
        return (model.bias_forces(x, qd) + model.elastic_forces(x))[flex]

    h = 1e-6
    K = np.array([(forces(h * e) - forces(-h * e)) / (2 * h) for e in np.eye(flex.size)]).T
    M = model.mass_matrix(q)[np.ix_(flex, flex)]
    return np.sqrt(scipy.linalg.eigh(0.5 * (K + K.T), M, eigvals_only=True))


def spinning_beam():
    """A unit cantilever (ρA = EI = 1, L = 1 m) on a revolute joint about z, bending in the
    plane of rotation (w_y, chordwise / lead-lag) and normal to it (w_z, flapwise)."""
    return Arm(joints=(Joint(a=1.0),), links=(Link.flexible(1.0, 1.0, 1.0, EI_out=1.0),))


@pytest.mark.parametrize(
    "make",
    [
        lambda arm, **o: AssumedModesModel(arm, modes=8, **o),
        lambda arm, **o: FiniteElementModel(arm, elements=24, **o),
    ],
    ids=["amm-8", "fem-24"],
)
def test_spinning_cantilever_follows_southwell(make):
    """ω² = ω₀² + k Ω²: flapwise k = k₁ (:func:`southwell_reference`), chordwise k₁ − 1 (the
    rotating frame's −Ω² on in-plane motion: the centrifugal force on a lateral displacement
    y is +Ω² y, which softens the in-plane mode by exactly Ω², so 0.19334). k from
    Ω = 0.25 and 0.5 rad/s (ω₀ = 3.516 rad/s) with Richardson's extrapolation in Ω²;
    1e-4 relative (measured ~1e-6 flapwise, ~2e-5 chordwise with FEM at 24 elements and
    AMM with 8 clamped-free modes). Without stiffening the flapwise mode does not stiffen
    and the chordwise one softens by Ω² (k = 0, −1), the classic failure."""
    k1 = southwell_reference()
    assert k1 == pytest.approx(1.19334, abs=1e-5)
    arm = spinning_beam()

    def coefficients(model):
        w0 = spinning_frequencies(model, 0.0)[:2]  # the first chordwise and flapwise modes
        k = [(spinning_frequencies(model, Om)[:2] ** 2 - w0**2) / Om**2 for Om in (0.25, 0.5)]
        return w0, (4 * k[0] - k[1]) / 3

    w0, k = coefficients(make(arm, geometric_stiffening=True))
    np.testing.assert_allclose(w0, 1.8751040687**2, rtol=1e-6)
    assert k[0] == pytest.approx(k1 - 1.0, rel=1e-4)  # chordwise (lower once spinning)
    assert k[1] == pytest.approx(k1, rel=1e-4)  # flapwise
    _, k = coefficients(make(arm))
    np.testing.assert_allclose(np.sort(k), [-1.0, 0.0], atol=1e-6)


# -- energy, structure, consistency --------------------------------------------------------


@ENGINES
@pytest.mark.parametrize(
    "make",
    [
        lambda arm, compiled: AssumedModesModel(arm, modes=2, geometric_stiffening=True, compiled=compiled),
        lambda arm, compiled: FiniteElementModel(
            arm, elements=1, frame="pinned", geometric_stiffening=True, compiled=compiled
        ),
    ],
    ids=["amm", "fem-pinned"],
)
def test_energy_is_conserved_with_stiffening(make, compiled):
    """A soft two-link arm (lumped mass, hub, payload; no damping, no input, no gravity)
    spinning at 6 rad/s with its links bent: 0.5 s of free motion on the compiled kernels, 0.1 s
    on the numpy engine, T + V constant to 1e-8 relative (DOP853 at rtol 1e-10; measured
    2.6e-11 AMM, 1.4e-12 FEM compiled; 6.1e-12 AMM, 3.5e-13 FEM numpy). On the compiled kernels the motion
    comes from the compiled M and Newton–Euler terms and T + V from the numpy engine's bodies and
    kinematics: an independent check of both. The numpy engine forms the stiffened M by
    quadrature at ~20 ms a right-hand side (0.5 s took 140 s); its M, bias and gravity equal the
    compiled ones state by state (test_compiled_mass_bias_and_gravity_equal_the_numpy_engine)."""
    arm = Arm.planar(
        [
            Link.flexible(0.8, 1.0, 20.0, lumped_masses=[LumpedMass(0.5, 0.2, 0.002)]),
            Link.flexible(0.6, 0.6, 8.0),
        ],
        payload=Payload(0.3, 0.001),
        joints=[Joint(a=0.8, hub_inertia=0.01), Joint(a=0.6, hub_mass=0.4, hub_inertia=0.005)],
    )
    model = make(arm, compiled)
    assert (model.compiled is not None) == compiled
    n = model.n_dof
    x0 = np.zeros(2 * n)
    x0[:2] = [0.3, -0.5]
    x0[2:n] = 0.02
    x0[n : n + 2] = [6.0, -2.0]

    def rhs(t, x):
        return np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], np.zeros(2))])

    solution = solve_ivp(rhs, (0.0, 0.5 if compiled else 0.1), x0, method="DOP853", rtol=1e-10, atol=1e-12)
    assert solution.success
    energies = np.array(
        [model.kinetic_energy(x[:n], x[n:]) + model.potential_energy(x[:n]) for x in solution.y.T]
    )
    drift = np.max(np.abs(energies - energies[0])) / abs(energies[0])
    print(f"energy drift {drift:.2e}, {solution.nfev} evaluations")
    assert drift < 1e-8


@ENGINES
@BACKENDS
@given(data=st.data())
@settings(max_examples=20, deadline=None)
def test_structure_with_stiffening(backend, compiled, data):
    """Drawn arms (no translating links) with stiffening, deflections with flexible coordinates
    within ±0.01 (the Gram-form M is positive definite at any deflection; the second-order
    truncation it replaced lost definiteness here: a link of 3 elements gave min eig M = −5.8e-6
    and one of 2 clamped-free modes −1.4e-5, so the range had been cut to ±0.002); rates zero or
    above 1e-100 (the bounds below scale with |q̇|): M symmetric positive definite;
    Ṁ − 2C skew (Ṁ by central differences, 1e-7 of ‖M‖|q̇|, as test_engine_properties);
    ∂V/∂q = elastic + gravity forces (central differences, 1e-7 as test_engine_energy);
    forward then inverse dynamics returns τ (1e-8); the recursive solver agrees with the
    composite one (1e-8)."""

    drawn = data.draw(models(backend, max_links=3))
    assume(not drawn.arm.translating_links)
    model = stiffened(drawn, compiled)
    assert (model.compiled is not None) == compiled and model.geometric_stiffening
    q, qd = data.draw(states(model, flex_scale=0.01, tiny_rates=False))
    M = model.mass_matrix(q)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.max(np.abs(M)))
    assert np.linalg.eigvalsh(M)[0] > 0
    S = mass_rate_by_differences(model, q, qd) - 2 * model.coriolis_matrix(q, qd)
    scale = np.max(np.abs(M)) * np.max(np.abs(qd))
    assert np.max(np.abs(S + S.T)) <= 1e-7 * scale
    h = 1e-6
    gradient = np.array(
        [
            (model.potential_energy(q + h * e) - model.potential_energy(q - h * e)) / (2 * h)
            for e in np.eye(model.n_dof)
        ]
    )
    expected = model.gravity_forces(q) + model.elastic_forces(q)
    assert np.max(np.abs(gradient - expected)) < 1e-7 * max(np.max(np.abs(expected)), 1.0)
    tau = np.linspace(-1.0, 1.0, model.n_joints)
    qdd = model.forward_dynamics(q, qd, tau)
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), tau, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(
        model.forward_dynamics(q, qd, tau, solver="recursive"), qdd, rtol=1e-8, atol=1e-8
    )


# -- the switch ----------------------------------------------------------------------------


def test_off_by_default_and_the_switch():
    """Default models are the classic formulation, unchanged (bit-identical M, h, G, V and
    frequencies with the keyword False; the issue-17 numbers in the frame test above); the
    keyword is kept by ``rebuild`` and named in the description, and so is the engine
    (compiled by default, ``compiled=False`` the numpy engine); the structured eigen-solve
    and translating links are refused with it."""
    arm = presets.lumped_two_link()
    default = FiniteElementModel(arm, elements=3, frame="pinned")
    explicit = FiniteElementModel(arm, elements=3, frame="pinned", geometric_stiffening=False)
    assert default.geometric_stiffening is False and default.compiled is not None
    assert "stiffening" not in default.description
    rng = np.random.default_rng(3)
    q, qd = 0.1 * rng.standard_normal(default.n_dof), rng.standard_normal(default.n_dof)
    for name in ("mass_matrix", "gravity_forces", "potential_energy", "tip_position"):
        assert np.array_equal(getattr(default, name)(q), getattr(explicit, name)(q)), name
    assert np.array_equal(default.bias_forces(q, qd), explicit.bias_forces(q, qd))

    model = FiniteElementModel(arm, elements=3, geometric_stiffening=True)
    assert model.compiled is not None and "geometric stiffening" in model.description
    again = model.rebuild(presets.lumped_two_link(gravity=False))
    assert again.geometric_stiffening and again.compiled is not None
    assert again.description.count("geometric stiffening") == 1
    numpy_engine = FiniteElementModel(arm, elements=3, geometric_stiffening=True, compiled=False)
    assert numpy_engine.compiled is None and numpy_engine.rebuild(arm).compiled is None
    amm = AssumedModesModel(arm, modes=2, geometric_stiffening=True)
    assert amm.rebuild(arm).geometric_stiffening and "geometric stiffening" in amm.description
    # The tip and the points of the beam move back along it by the foreshortening.
    q = np.zeros(model.n_dof)
    q[2:] = 0.05
    end = model.point_position(2, arm.links[1].length, q)
    np.testing.assert_allclose(end, model.tip_position(q), rtol=0, atol=1e-12)
    assert not np.allclose(model.tip_position(q), default.rebuild(arm).tip_position(q))

    with pytest.raises(ValueError, match="structured"):
        model.natural_frequencies(np.zeros(model.n_dof), count=2, method="structured")
    with pytest.raises(TypeError, match="geometric_stiffening"):
        ChainModel(arm, model.bases, geometric_stiffening="yes")
    translating = Arm(
        joints=(Joint(a=0.5), Joint(kind="prismatic", alpha=np.pi / 2)),
        links=(Link.rigid(0.5, 1.0), Link.flexible(1.0, 1.0, 10.0)),
    )
    with pytest.raises(ValueError, match="translating links"):
        AssumedModesModel(translating, geometric_stiffening=True)


# -- the compiled kernels against the numpy engine ----------------------------------------

#: Flexible-coordinate sizes of the compiled-vs-numpy draws [m or rad per coordinate]: the
#: second-order terms are then 1e-6 to 2.5e-3 of the first-order ones, far above the
#: tolerances below (a kernel missing one of them fails: checked by removing each in turn).
KERNEL_SCALES = (1e-3, 1e-2, 0.05)
#: Sizes for the solves: the truncated M stays positive definite (drawn arms with tiny hub
#: inertias lose it at 5e-3 already, see the module docstring of core.dynamics.flexible_body).
SOLVE_SCALES = (1e-4, 1e-3)


def engine_pair(data, backend: str, scales: tuple):
    """A drawn model without translating links (both backends: clamped and pinned frames,
    one and two bending planes, hubs, motors, lumped masses, payloads, gravity on or off)
    with stiffening on the compiled kernels, its numpy-engine twin, and a state whose
    flexible coordinates have a size drawn from ``scales``."""
    drawn = data.draw(models(backend, max_links=3))
    assume(not drawn.arm.translating_links)
    model, twin = stiffened(drawn), stiffened(drawn, compiled=False)
    assert model.compiled is not None and twin.compiled is None
    q, qd = data.draw(states(model, flex_scale=data.draw(st.sampled_from(scales))))
    return model, twin, q, qd


def kernel_errors(model, twin, q, qd, qdd) -> dict[str, float]:
    """Compiled − numpy engine of M (composite bodies), h and G (Newton–Euler) and
    M q̈ + h + G (one pass), each relative to its own scale as in tests/test_compiled.py
    (M: max|M|; h: max|M|·|q̇|²; G: max|G|; the sum: the three together)."""
    M, M_ref = model.mass_matrix(q), twin.mass_matrix(q)
    h, h_ref = model.bias_forces(q, qd), twin.bias_forces(q, qd)
    G, G_ref = model.gravity_forces(q), twin.gravity_forces(q)
    scale_M = np.max(np.abs(M_ref))
    scale_h = scale_M * max(qd @ qd, 1e-300)
    scale_G = max(np.max(np.abs(G_ref)), 1e-300)
    total = model.inertial_forces(q, qd, qdd)
    expected = M_ref @ qdd + h_ref + G_ref
    return {
        "M": np.max(np.abs(M - M_ref)) / scale_M,
        "h": np.max(np.abs(h - h_ref)) / scale_h,
        "G": np.max(np.abs(G - G_ref)) / scale_G,
        "M qdd + h + G": np.max(np.abs(total - expected))
        / (scale_M * np.max(np.abs(qdd)) + scale_h + scale_G),
    }


def acceleration_scale(twin, q, qd, tau) -> float:
    """The largest acceleration the separate terms produce: M⁻¹ of the applied forces, of
    velocity products of size ‖M‖|q̇|² and of gravity (the scale of tests/test_compiled.py)."""
    M = twin.mass_matrix(q)
    products = np.full(twin.n_dof, np.max(np.abs(M)) * (qd @ qd))
    terms = [twin._applied(q, qd, tau), products, twin.gravity_forces(q)]
    return max(max(np.max(np.abs(np.linalg.solve(M, f))) for f in terms), 1e-300)


def solve_errors(model, twin, q, qd, tau) -> dict[str, float]:
    """q̈ of the composite solve (compiled M, h, G), of the compiled articulated-body solve
    and of the fused compiled rates function (both solvers) against the numpy engine's
    composite solve, relative to the largest acceleration the separate terms produce
    (applied forces, velocity products at ‖M‖|q̇|², gravity: the scale of
    tests/test_compiled.py, since two backward-stable solves differ by ~cond(M) ε of it);
    the rates function's powers relative to |u||τ| + |q̇ᵀDq̇| + |u||τ_c|; q̇ copied exactly."""
    n = model.n_dof
    reference = twin.forward_dynamics(q, qd, tau)
    scale = acceleration_scale(twin, q, qd, tau)
    x = np.concatenate([q, qd, [0.3, -0.2]])
    rates_reference = twin.rates_function("composite")(x, tau)
    u, friction = twin.input_matrix(q).T @ qd, twin.friction_forces(q, qd)
    power_scale = (
        np.abs(u) @ np.abs(tau) + abs(qd @ twin.damping_matrix(q) @ qd) + np.abs(u) @ np.abs(friction)
    )
    errors = {
        "composite": np.max(np.abs(model.forward_dynamics(q, qd, tau, solver="composite") - reference))
        / scale,
        "recursive": np.max(np.abs(model.forward_dynamics(q, qd, tau, solver="recursive") - reference))
        / scale,
    }
    for solver in ("composite", "recursive"):
        rates = model.rates_function(solver)(x, tau)
        assert np.array_equal(rates[:n], qd)
        errors[f"rates {solver}"] = np.max(np.abs(rates[n : 2 * n] - rates_reference[n : 2 * n])) / scale
        errors[f"powers {solver}"] = np.max(np.abs(rates[2 * n :] - rates_reference[2 * n :])) / max(
            power_scale, 1e-300
        )
    return errors


@BACKENDS
@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_compiled_mass_bias_and_gravity_equal_the_numpy_engine(backend, data):
    """With stiffening, M, h, G and M q̈ + h + G of the compiled kernels equal the numpy
    engine (core.dynamics.flexible_body, core.dynamics.kinematics: an independent implementation) on drawn
    arms, each to 1e-12 of its scale (:func:`kernel_errors`; the tolerance of
    tests/test_compiled.py; measured worst over 1000 random draws per backend: M 9.5e-16,
    h 7.2e-15, G 1.4e-15, M q̈ + h + G 8.1e-15)."""
    model, twin, q, qd = engine_pair(data, backend, KERNEL_SCALES)
    qdd = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).standard_normal(model.n_dof)
    for name, error in kernel_errors(model, twin, q, qd, qdd).items():
        assert error <= 1e-12, name


@BACKENDS
@given(data=st.data())
@settings(max_examples=30, deadline=None)
def test_compiled_solves_and_rates_equal_the_numpy_engine(backend, data):
    """With stiffening, q̈ from the composite and the articulated-body solvers and from the
    fused rates function equal the numpy engine's composite solve to 1e-10 of the
    accelerations' scale (:func:`solve_errors`: two backward-stable solves differ by
    ~cond(M) ε, cond(M) up to ~1e7 for beam elements; the bound of tests/test_compiled.py),
    the powers to 1e-12. Measured worst over 1000 random draws per backend: composite
    2.5e-11, articulated bodies 1.1e-11, fused rates 1.6e-11 (FEM; AMM 5e-12, 1.1e-11,
    1.1e-11), powers 6.8e-16."""
    model, twin, q, qd = engine_pair(data, backend, SOLVE_SCALES)
    assume(np.linalg.eigvalsh(twin.mass_matrix(q))[0] > 0)
    torques = st.floats(-5, 5, allow_subnormal=False)
    tau = np.asarray(data.draw(st.lists(torques, min_size=model.n_joints, max_size=model.n_joints)))
    for name, error in solve_errors(model, twin, q, qd, tau).items():
        assert error <= (1e-12 if name.startswith("powers") else 1e-10), name


def jacobian_error(model, twin, x, tau) -> float:
    """The compiled state Jacobian (``rates_function(...).jacobian``: central differences
    inside one compiled call, steps h_j = ε^(1/3) max(|z_j|, 1)) against the same central
    differences, same steps, of the numpy engine's right-hand side. The truncation errors
    are then equal and the columns differ by the rates' disagreement over the step,
    (Δẋ_compiled − Δẋ_numpy)/2h_j, bounded like q̈ (:func:`solve_errors`) by a multiple of
    the accelerations' scale a at x ± h_j e_j, a + h_j max|∂ẋ/∂z_j|. Returns the worst
    column's error in units of (a + h_j max|∂ẋ/∂z_j|)/h_j."""
    n = model.n_dof
    scale = acceleration_scale(twin, x[:n], x[n : 2 * n], tau)
    J, J_tau = model.rates_function("recursive").jacobian(x, tau)
    rates = twin.rates_function("composite")
    z = np.concatenate([x, tau])
    step = np.cbrt(np.finfo(float).eps)
    worst = 0.0
    for j in range(z.size):
        if 2 * n <= j < x.size:
            assert not J[:, j].any()  # the work columns
            continue
        h = step * max(abs(z[j]), 1.0)
        up, down = z.copy(), z.copy()
        up[j] += h
        down[j] -= h
        reference = (rates(up[: x.size], up[x.size :]) - rates(down[: x.size], down[x.size :])) / (2 * h)
        ours = J[:, j] if j < x.size else J_tau[:, j - x.size]
        worst = max(worst, np.max(np.abs(ours - reference)) * h / (scale + h * np.max(np.abs(reference))))
    return worst


@BACKENDS
@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_compiled_state_jacobian_equals_the_numpy_engine(backend, data):
    """With stiffening, the compiled state Jacobian equals the numpy engine's central
    differences with the same steps to 1e-10 of the accelerations' scale over the step
    (:func:`jacobian_error`; the rates' bound of the solve test above; measured worst over
    100 random draws per backend 7.2e-13)."""
    model, twin, q, qd = engine_pair(data, backend, SOLVE_SCALES)
    assume(np.linalg.eigvalsh(twin.mass_matrix(q))[0] > 0)
    tau = np.linspace(-1.0, 1.0, model.n_joints)
    assert jacobian_error(model, twin, np.concatenate([q, qd, [1.0, 2.0]]), tau) <= 1e-10


def test_compiled_stiffening_terms_are_exercised():
    """A spatial arm, a lumped mass and a tip payload on its first link (pinned frame for
    FEM), the arm's payload on its second, which bends in two planes (EI_out), under
    gravity, both backends: the compiled kernels
    equal the numpy engine (M, h, G, M q̈ + h + G to 1e-12, q̈ of both solvers and the fused
    rates to 1e-10, as the drawn tests), while stiffening itself changes each of M, h, G
    and q̈ by more than 1e-6 of its scale at these deflections (5e-3 m per coordinate):
    the comparison sees every term. (Removing any one of the ten stiffening terms of
    core.dynamics.compiled in turn fails this test by 2.5e-5 to 2.6e-3 of the scale.)"""
    arm = Arm.from_dh(
        [Joint(a=0.6, alpha=np.pi / 2, hub_inertia=0.02), Joint(a=0.8, hub_mass=0.3, hub_inertia=0.01)],
        [
            Link.flexible(
                0.6, 1.2, 40.0, lumped_masses=[LumpedMass(0.3, 0.2, 0.001)], tip_payload=Payload(0.2, 0.001)
            ),
            Link.flexible(0.8, 0.8, 25.0, EI_out=15.0),
        ],
        payload=Payload(0.3, 0.002),
        gravity=(0.0, 0.0, -9.81),
    )
    rng = np.random.default_rng(17)
    for classic in (
        AssumedModesModel(arm, modes=2),
        FiniteElementModel(arm, elements=2, frame={1: "pinned", 2: "clamped"}),
    ):
        model, twin = stiffened(classic, compiled=True), stiffened(classic, compiled=False)
        n = model.n_dof
        q = np.concatenate([[0.4, -0.8], 5e-3 * rng.standard_normal(n - 2)])
        qd, qdd, tau = rng.standard_normal(n), rng.standard_normal(n), np.array([0.5, -0.3])
        for name, error in kernel_errors(model, twin, q, qd, qdd).items():
            assert error <= 1e-12, name
        for name, error in solve_errors(model, twin, q, qd, tau).items():
            assert error <= (1e-12 if name.startswith("powers") else 1e-10), name
        changes = kernel_errors(model, classic, q, qd, qdd)
        changes["qdd"] = solve_errors(model, classic, q, qd, tau)["recursive"]
        for name, change in changes.items():
            assert change > 1e-6, name


@pytest.mark.parametrize(
    "make",
    [
        lambda arm: FiniteElementModel(arm, elements=5, geometric_stiffening=True),
        lambda arm: AssumedModesModel(arm, modes=4, geometric_stiffening=True),
    ],
    ids=["fem", "amm"],
)
def test_foreshortening_at_points_is_the_slope_gram_form(make):
    """u(s) = −½ ∫₀ˢ |w'|² at a beam point (point_positions' axial shortening), integrated from
    the slopes, equals −½ Σ_a δ_aᵀ H(s) δ_a with H from slope_products (the element basis's exact
    slope Gram; the assumed modes' composite Gauss rule): the same integral, to round-off
    (measured 4.8e-16 FEM, 8.2e-16 AMM, of max|u|; bound 1e-13), at breaks, inside elements, at the ends."""
    from core.dynamics.basis import foreshortening_at, slope_products

    model = make(presets.lumped_two_link())
    basis, body = model.bases[2], model.bodies[2]
    rng = np.random.default_rng(7)
    delta = 0.05 * rng.standard_normal((3, body.n_coordinates))
    planes = [body.plane(delta, plane) for plane in range(body.planes)]
    length = basis.length
    points = np.array([0.0, 0.2, 0.4, 0.5137, 1.0]) * length
    got = foreshortening_at(basis, points, planes)
    assert got.shape == (3, points.size) and np.all(got[:, 0] == 0.0)
    for p, s in enumerate(points):
        H = slope_products(basis, (1.0,), s)
        expected = -0.5 * sum(np.einsum("bi,ij,bj->b", d, H, d) for d in planes)
        assert np.max(np.abs(got[:, p] - expected)) <= 1e-13 * max(np.max(np.abs(expected)), 1e-300), s
