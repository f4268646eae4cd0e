"""amm.symbolic: the symbolic planar and spatial equations of motion against closed forms and the engine."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
import sympy as sp

from amm import AssumedModesModel
from amm.symbolic import SymbolicModel, derive
from core import Arm, Damping, Joint, Link, LumpedMass, Payload
from core.analysis.simulation import simulate
from core.arm.presets import (
    azimuth_elevation,
    lumped_two_link,
    one_flexible_link,
    rigid_flexible_rigid,
    rigid_two_link,
    space_arm_3link,
)
from tests.strategies import everything_arm
from tests.strategies import relative_error as _relative

RNG = np.random.default_rng(20261123)

#: Agreement with the engine (docs/SYMBOLIC.md): 1e-10 relative; measured ≤ 2e-15 on M, ∂M/∂q, G, C.
AGREEMENT = 1e-10


def _random_state(model, flex_scale: float = 0.05):
    q = RNG.normal(size=model.n_dof)
    q[model.flex] *= flex_scale  # deflections of a few cm: the regime the models are used in
    return q, RNG.normal(size=model.n_dof)


# --------------------------------------------------------------------------- rigid closed form
def test_rigid_two_link_equals_textbook_term_by_term():
    """Spong, Hutchinson & Vidyasagar, Robot Modeling and Control (2006) §7.4, eqs. 7.83–7.86:
    M, C and G of the rigid planar two-link arm, exactly (sympy simplify of the difference is 0)."""
    eom = derive(rigid_two_link())
    t1, t2 = eom.q
    d1, d2 = eom.qd
    S = {name: sp.Symbol(name, real=True) for name in ("m1", "m2", "L1", "lc1", "lc2", "I1", "I2", "gy")}
    m1, m2, l1, lc1, lc2, I1, I2, gy = S.values()
    g = -gy  # the book's g points down; the arm's gravity is (0, gy) with gy = −9.81
    d11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * sp.cos(t2)) + I1 + I2
    d12 = m2 * (lc2**2 + l1 * lc2 * sp.cos(t2)) + I2
    d22 = m2 * lc2**2 + I2
    h = -m2 * l1 * lc2 * sp.sin(t2)
    M = sp.Matrix([[d11, d12], [d12, d22]])
    C = sp.Matrix([[h * d2, h * d2 + h * d1], [-h * d1, 0]])
    G = sp.Matrix(
        [
            (m1 * lc1 + m2 * l1) * g * sp.cos(t1) + m2 * lc2 * g * sp.cos(t1 + t2),
            m2 * lc2 * g * sp.cos(t1 + t2),
        ]
    )
    for ours, book in ((eom.M, M), (eom.C, C), (eom.G, G)):
        difference = (ours - book).applyfunc(sp.simplify)
        assert difference == sp.zeros(*book.shape)
    assert eom.K == sp.zeros(2, 2) and eom.B == sp.eye(2)
    # The symbols carry the preset's numbers (l1 = 1 m, lc = l/2, slender-rod inertia m l²/12).
    assert (
        eom.values[l1] == 1.0 and eom.values[lc2] == 0.4 and eom.values[I2] == pytest.approx(0.8 * 0.64 / 12)
    )


def test_all_rigid_arm_needs_no_shape_arguments_and_numeric_parameters_are_numbers():
    eom = derive(rigid_two_link(), symbols=False)
    assert eom.values == {} and eom.M.free_symbols <= set(eom.q)


# --------------------------------------------------------------------------- structure
def _rigid_flexible() -> Arm:
    return Arm.planar([Link.rigid(0.5, 1.2), Link.flexible(0.7, 0.5, 15.0)], payload=Payload(0.3, 1e-3))


def test_mdot_minus_2c_is_skew_symbolically_for_a_rigid_flexible_arm():
    eom = derive(_rigid_flexible(), modes=2)
    M_dot = sum((eom.dM[k] * eom.qd[k] for k in range(len(eom.q))), sp.zeros(*eom.M.shape))
    N = M_dot - 2 * eom.C
    assert (N + N.T).applyfunc(sp.expand) == sp.zeros(*N.shape)


def test_modal_constants_are_named_symbols_with_their_integrals():
    eom = derive(_rigid_flexible(), modes=2)
    names = {str(s) for s in eom.M.free_symbols | eom.K.free_symbols}
    assert {"a2_1", "b2_2", "N2_12", "phiL2_1", "dphiL2_2", "rhoA2", "EI2", "k2_11"} <= names
    a = sp.Symbol("a2_1", real=True)
    assert "\\int_0^L" in eom.definitions[a]
    assert eom.values[a] == pytest.approx(eom.model.bases[2].first[0], rel=1e-15)
    numeric = derive(_rigid_flexible(), modes=2, constants="numeric")
    assert not {str(s) for s in numeric.M.free_symbols} & {"a2_1", "N2_12", "phiL2_1"}


def test_refused_features_are_named():
    """Refused options are named (prismatic joints: tests/test_symbolic_prismatic.py)."""
    with pytest.raises(ValueError, match="constants"):
        derive(rigid_two_link(), constants="sym")


# --------------------------------------------------------------------------- agreement with the engine
CASES = {
    "one-flexible-link": (one_flexible_link, {"shape": "clamped-free", "modes": 3}),
    "one-flexible-link-pinned": (one_flexible_link, {"shape": "pinned-pinned", "modes": 2}),
    "rigid-flexible-rigid": (rigid_flexible_rigid, {"shape": "clamped-mass", "modes": 2}),
    "lumped-two-link": (lumped_two_link, {"modes": 2}),
}


@pytest.mark.parametrize("name", [*CASES, "everything-clamped", "everything-pinned"])
def test_numeric_model_agrees_with_the_engine(name):
    if name.startswith("everything"):
        arm = everything_arm()
        options = {"shape": "pinned-pinned" if name.endswith("pinned") else "clamped-free", "modes": 2}
    else:
        factory, options = CASES[name]
        arm = factory()
    model = derive(arm, **options).to_numeric()
    engine = AssumedModesModel(arm, **options)
    assert isinstance(model, SymbolicModel) and model.coordinates == engine.coordinates
    for _ in range(3):
        q, qd = _random_state(engine)
        tau = RNG.normal(size=engine.n_joints)
        pairs = [
            (model.mass_matrix(q), engine.mass_matrix(q)),
            (model.mass_matrix_derivatives(q), engine.mass_matrix_derivatives(q)),
            (model.coriolis_matrix(q, qd), engine.coriolis_matrix(q, qd)),
            (model.stiffness_matrix(q), engine.stiffness_matrix(q)),
            (model.damping_matrix(q), engine.damping_matrix(q)),
            (model.input_matrix(q), engine.input_matrix(q)),
            (model.friction_forces(q, qd), engine.friction_forces(q, qd)),
            (model.tip_position(q), engine.tip_position(q)),
            (
                model.point_position(arm.n_links, 0.6 * arm.links[-1].length, q),
                engine.point_position(arm.n_links, 0.6 * arm.links[-1].length, q),
            ),
            (model.forward_dynamics(q, qd, tau), engine.forward_dynamics(q, qd, tau)),
            ([model.potential_energy(q)], [engine.potential_energy(q)]),
        ]
        if np.any(arm.gravity):
            pairs.append((model.gravity_forces(q), engine.gravity_forces(q)))
        else:
            assert not np.any(model.gravity_forces(q))
        for ours, theirs in pairs:
            assert _relative(ours, theirs) < AGREEMENT


def _everything_spatial() -> Arm:
    """A spatial arm with every feature derive supports: twists α = π/2 and 0.3, DH offsets d,
    θ offset, a rigid link with an off-axis centre of mass and a full inertia tensor, hubs (mass,
    inertia), a motor, viscous and Coulomb friction, a two-plane link (EI ≠ EI_out, Rayleigh
    damping, a lumped mass with rotary inertia, a tip payload with an inertia tensor), a one-plane
    link (modal damping), the arm's payload, gravity along every axis, chord tip rotation."""
    joints = [
        Joint(
            alpha=np.pi / 2, d=0.3, hub_inertia=0.02, motor_inertia=1e-4, gear_ratio=10, viscous_friction=0.1
        ),
        Joint(
            a=0.8, alpha=0.3, d=0.05, theta_offset=0.2, hub_mass=0.3, hub_inertia=0.01, coulomb_friction=0.1
        ),
        Joint(a=0.5, hub_inertia=0.01),
    ]
    tensor = [[1e-3, 2e-4, 0.0], [2e-4, 2e-3, 0.0], [0.0, 0.0, 3e-3]]
    links = [
        Link.rigid(
            0.3, 2.0, com=(0.01, -0.15, 0.02), inertia=[[0.02, 1e-3, 0], [1e-3, 0.002, 0], [0, 0, 0.02]]
        ),
        Link.flexible(
            0.8,
            0.6,
            20.0,
            EI_out=25.0,
            damping=Damping.rayleigh(0.1, 0.01),
            lumped_masses=(LumpedMass(0.4, 0.2, 1e-3),),
            tip_payload=Payload(0.1, tensor),
        ),
        Link.flexible(0.5, 0.4, 10.0, damping=Damping.modal(0.02)),
    ]
    return Arm.from_dh(
        joints, links, payload=Payload(0.2, 1e-4), gravity=(1.0, -2.0, -9.81), tip_rotation="chord"
    )


SPATIAL = {
    "azimuth-elevation": (azimuth_elevation, {"modes": 2}),
    "everything-spatial": (_everything_spatial, {"modes": 2}),
    # the one-plane link with a pinned frame (pinned frames bend about the joint axis only)
    "everything-spatial-pinned": (
        _everything_spatial,
        {"shapes": {2: ("clamped-free", 2), 3: ("pinned-pinned", 2)}},
    ),
}


def _spatial_agreement(arm, options, model, states: int = 3) -> float:
    """Largest relative difference to the engine over M, ∂M/∂q, C, h, G, K, D, B, friction, forward
    dynamics, tip, a point and V on random states; also checks Ṁ − 2C skew."""
    engine = AssumedModesModel(arm, **options)
    assert model.coordinates == engine.coordinates
    worst = 0.0
    for _ in range(states):
        q, qd = _random_state(engine)
        tau = RNG.normal(size=engine.n_joints)
        dM = model.mass_matrix_derivatives(q)
        C = model.coriolis_matrix(q, qd)
        N = np.einsum("kij,k->ij", dM, qd) - 2 * C  # dM[k] = ∂M/∂q_k
        assert np.max(np.abs(N + N.T)) < AGREEMENT * np.max(np.abs(N))
        pairs = [
            (model.mass_matrix(q), engine.mass_matrix(q)),
            (dM, engine.mass_matrix_derivatives(q)),
            (C, engine.coriolis_matrix(q, qd)),
            (model.bias_forces(q, qd), engine.bias_forces(q, qd)),
            (model.gravity_forces(q), engine.gravity_forces(q)),
            (model.stiffness_matrix(q), engine.stiffness_matrix(q)),
            (model.damping_matrix(q), engine.damping_matrix(q)),
            (model.input_matrix(q), engine.input_matrix(q)),
            (model.friction_forces(q, qd), engine.friction_forces(q, qd)),
            (model.forward_dynamics(q, qd, tau), engine.forward_dynamics(q, qd, tau)),
            (model.tip_position(q), engine.tip_position(q)),
            (
                model.point_position(arm.n_links, 0.6 * arm.links[-1].length, q),
                engine.point_position(arm.n_links, 0.6 * arm.links[-1].length, q),
            ),
            ([model.potential_energy(q)], [engine.potential_energy(q)]),
        ]
        worst = max(worst, *(_relative(ours, theirs) for ours, theirs in pairs))
    return worst


@pytest.mark.parametrize("name", list(SPATIAL))
def test_spatial_arm_agrees_with_the_engine(name):
    factory, options = SPATIAL[name]
    arm = factory()
    model = derive(arm, **options).to_numeric()
    assert _spatial_agreement(arm, options, model) < AGREEMENT  # measured ≤ 3e-13 (forward dynamics)


@pytest.mark.slow
def test_space_arm_agrees_with_the_engine_compiled_and_lambdified():
    """The space arm (3 flexible links, 2 clamped-free modes per plane, 15 coordinates): the
    lambdified and the numba-compiled model agree with the engine (compiled: M, h, G and the
    forward dynamics; the rest is the lambdified code)."""
    arm = space_arm_3link()
    eom = derive(arm, modes=2)
    assert len(eom.q) == 15
    assert _spatial_agreement(arm, {"modes": 2}, eom.to_numeric(), states=2) < AGREEMENT
    compiled = eom.to_numeric(compiled=True)
    engine = AssumedModesModel(arm, modes=2)
    for _ in range(3):
        q, qd = _random_state(engine)
        tau = RNG.normal(size=3)
        assert (
            _relative(compiled.forward_dynamics(q, qd, tau), engine.forward_dynamics(q, qd, tau)) < AGREEMENT
        )
        assert _relative(compiled.bias_forces(q, qd), engine.bias_forces(q, qd)) < AGREEMENT
        assert _relative(compiled.mass_matrix(q), engine.mass_matrix(q)) < AGREEMENT


def test_compiled_model_is_cached_and_agrees(tmp_path, monkeypatch):
    """to_numeric(compiled=True) writes a numba module into the cache folder (keyed by a hash of
    the generated source) and compiles it once; a second build loads it. Its forward dynamics,
    M, h, G equal the lambdified model's and the engine's, here on the two-plane azimuth–elevation arm
    (the exact tip rotation: stumpff functions in the compiled code)."""
    monkeypatch.setenv("FLEXLINK_CACHE_DIR", str(tmp_path))
    arm = azimuth_elevation()
    eom = derive(arm, modes=1)
    first = eom.to_numeric(compiled=True)
    second = eom.to_numeric(compiled=True)
    assert (
        len(list(tmp_path.glob("symbolic/*/eom_*.py"))) == 1
        and "def stumpff" in next(tmp_path.glob("symbolic/*/eom_*.py")).read_text()
    )
    assert second.compile_seconds < first.compile_seconds
    plain, engine = eom.to_numeric(), AssumedModesModel(arm, modes=1)
    for _ in range(3):
        q, qd = _random_state(engine)
        tau = RNG.normal(size=2)
        expected = engine.forward_dynamics(q, qd, tau)
        assert _relative(second.forward_dynamics(q, qd, tau), expected) < AGREEMENT
        assert _relative(plain.forward_dynamics(q, qd, tau), expected) < AGREEMENT
        assert _relative(second.nonlinear_forces(q, qd), engine.nonlinear_forces(q, qd)) < AGREEMENT
        assert _relative(second.mass_matrix(q), engine.mass_matrix(q)) < AGREEMENT


def test_to_python_writes_a_standalone_module_for_a_spatial_arm(tmp_path):
    eom = derive(azimuth_elevation(), modes=1)
    path = eom.to_python(tmp_path / "spatial_eom.py")
    assert "sympy" not in path.read_text() and "def stumpff" in path.read_text()
    spec = importlib.util.spec_from_file_location("spatial_eom", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = eom.to_numeric()
    q, qd = _random_state(model)
    for ours, theirs in (
        (module.mass_matrix(q), model.mass_matrix(q)),
        (module.bias_forces(q, qd), model.bias_forces(q, qd)),
        (module.gravity_forces(q), model.gravity_forces(q)),
        (module.coriolis_matrix(q, qd), model.coriolis_matrix(q, qd)),
        (module.tip_position(q), model.tip_position(q)),
    ):
        assert _relative(ours, theirs) < AGREEMENT


@pytest.mark.parametrize("shape", ["clamped-free", "pinned-pinned"])
def test_generated_bias_forces_equal_c_qdot_and_the_engine(shape):
    """h is its own expression (no C, no ∂M/∂q): it equals C q̇ symbolically evaluated, the
    numeric model's C q̇ and the engine's Newton–Euler bias forces on random states."""
    arm = everything_arm()
    eom = derive(arm, shape=shape, modes=2)
    model, engine = eom.to_numeric(), AssumedModesModel(arm, shape=shape, modes=2)
    for _ in range(3):
        q, qd = _random_state(engine)
        h = model.bias_forces(q, qd)
        assert _relative(h, model.coriolis_matrix(q, qd) @ qd) < AGREEMENT
        assert _relative(h, engine.bias_forces(q, qd)) < AGREEMENT
        assert _relative(model.nonlinear_forces(q, qd), engine.nonlinear_forces(q, qd)) < AGREEMENT
        state = dict(zip(eom.q, q, strict=True)) | dict(zip(eom.qd, qd, strict=True))
        exact = np.array(eom.numeric((eom.h - eom.C * sp.Matrix(eom.qd)).xreplace(state)).tolist(), float)
        assert np.max(np.abs(exact)) < AGREEMENT * np.max(np.abs(h))
        # the composite path (one call of M, h, G) and the generic solver give the same q̈
        tau = RNG.normal(size=engine.n_joints)
        generic = scipy.linalg.solve(
            model.mass_matrix(q), model._applied(q, qd, tau) - model.nonlinear_forces(q, qd)
        )
        assert _relative(model.forward_dynamics(q, qd, tau), generic) < AGREEMENT


def test_forward_dynamics_needs_no_mass_matrix_derivatives():
    """The hot path evaluates M, h and G only: ∂M/∂q is generated when first asked for."""
    model = derive(_rigid_flexible(), modes=2).to_numeric()
    q, qd = _random_state(model)
    model.forward_dynamics(q, qd, np.zeros(model.n_joints))
    assert model._derivatives is None
    model.coriolis_matrix(q, qd)
    assert model._derivatives is not None
    # huge states give inf or nan, as numpy does, not an exception of the math module
    with np.errstate(all="ignore"):
        big = model.forward_dynamics(q, 1e200 * qd, np.zeros(model.n_joints))
    assert big.shape == (model.n_dof,)


def test_locked_frequencies_of_the_one_flexible_link_arm():
    """Eigenvalues of M_ff⁻¹K_ff from the generated matrices = the engine's locked natural frequencies²."""
    arm = one_flexible_link()
    eom = derive(arm, shape="clamped-free", modes=3)
    f = slice(arm.n_joints, len(eom.q))
    M_ff = np.array(eom.numeric(eom.M[f, f]).tolist(), dtype=float)
    K_ff = np.array(eom.numeric(eom.K[f, f]).tolist(), dtype=float)
    # The symmetric pencil (eigh): with the 17.5 kg tip mass M_ff spans ~4 decades, and the
    # non-symmetric eigvals of M⁻¹K lost ~3e-12 on the lowest frequency.
    ours = np.sqrt(scipy.linalg.eigh(K_ff, M_ff, eigvals_only=True))
    engine = AssumedModesModel(arm, shape="clamped-free", modes=3).natural_frequencies(joints="locked")
    np.testing.assert_allclose(ours, engine, rtol=1e-12)  # measured ≤ 5.1e-14


def test_generated_model_simulates_like_the_engine():
    arm = lumped_two_link()
    options = {"modes": 1}
    model, engine = derive(arm, **options).to_numeric(), AssumedModesModel(arm, **options)
    q0 = model.home()
    q0[0] = 0.3
    ours = simulate(model, (0.0, 0.05), q0, t_eval=[0.05])
    theirs = simulate(engine, (0.0, 0.05), q0, t_eval=[0.05])
    columns = [c for c in theirs.columns if c in model.coordinates]
    # Same equations, same integrator and tolerances: the trajectories differ by round-off only
    # (measured ≤ 7e-13 relative at t = 0.05 s).
    np.testing.assert_allclose(ours[columns].to_numpy(), theirs[columns].to_numpy(), rtol=1e-8, atol=1e-12)


# --------------------------------------------------------------------------- outputs
def test_to_python_writes_a_standalone_module(tmp_path):
    arm = everything_arm()
    eom = derive(arm, shape="pinned-pinned", modes=2)
    path = eom.to_python(tmp_path / "arm_eom.py")
    assert "sympy" not in path.read_text()
    spec = importlib.util.spec_from_file_location("arm_eom", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = eom.to_numeric()
    q, qd = _random_state(model)
    assert module.COORDINATES == model.coordinates
    for ours, theirs in (
        (module.mass_matrix(q), model.mass_matrix(q)),
        (module.mass_matrix_derivatives(q), model.mass_matrix_derivatives(q)),
        (module.gravity_forces(q), model.gravity_forces(q)),
        (module.coriolis_matrix(q, qd), model.coriolis_matrix(q, qd)),
        (module.bias_forces(q, qd), model.coriolis_matrix(q, qd) @ qd),
        (module.tip_position(q), model.tip_position(q)[:2]),
        (module.stiffness_matrix(), model.stiffness_matrix(q)),
        (module.damping_matrix(), model.damping_matrix(q)),
        (module.input_matrix(), model.input_matrix(q)),
    ):
        assert _relative(ours, theirs) < AGREEMENT


def test_latex_has_an_align_block_per_matrix_and_the_definitions():
    text = derive(_rigid_flexible(), modes=1).latex()
    # M, C, K and B; D and G are zero for this arm (no damping, no gravity) and get no block.
    assert text.count("\\begin{align}") == 4
    assert "M_{1,1} &=" in text and "K_{3,3} &= (EI)_{2} k_{2,11}" in text and "\\begin{align*}" in text
    assert "a_{2,1} &: \\int_0^L \\phi_{2,1}\\,ds" in text and "m_p &: \\text{payload mass [kg]}" in text


def test_rebuild_derives_the_same_discretization_of_another_arm():
    """Model.rebuild for the generated model: a heavier payload gives the equations a
    fresh derive() gives (clamped-mass ratios follow the new arm)."""
    import dataclasses

    from amm.symbolic import derive
    from core import Payload
    from core.arm.presets import one_flexible_link

    arm = one_flexible_link()
    heavier = dataclasses.replace(arm, payload=Payload(0.5))
    model = derive(arm, shape="clamped-mass", modes=2).to_numeric()
    rebuilt = model.rebuild(heavier)
    fresh = derive(heavier, shape="clamped-mass", modes=2).to_numeric()
    q = np.array([0.3, 1e-3, -2e-3])
    np.testing.assert_array_equal(rebuilt.mass_matrix(q), fresh.mass_matrix(q))
    assert not np.allclose(rebuilt.mass_matrix(q), model.mass_matrix(q))


def test_rebuild_keeps_compiled_and_the_friction_velocity(tmp_path, monkeypatch):
    """rebuild(arm) keeps every option of the generated model (a compiled model was once rebuilt
    lambdified): the rebuilt model runs compiled code (the heavier payload keeps the
    generated source, so numba loads it from the cache) with the same Coulomb velocity, and its
    forward dynamics are the fresh derivation's."""
    import dataclasses

    monkeypatch.setenv("FLEXLINK_CACHE_DIR", str(tmp_path))
    arm = one_flexible_link()
    heavier = dataclasses.replace(arm, payload=Payload(0.5))
    model = SymbolicModel(derive(arm, shape="clamped-mass", modes=2), coulomb_velocity=0.05, compiled=True)
    rebuilt = model.rebuild(heavier)
    assert rebuilt.compile_seconds > 0 and rebuilt.arguments["compiled"] is True
    assert rebuilt.coulomb_velocity == 0.05
    fresh = SymbolicModel(derive(heavier, shape="clamped-mass", modes=2), coulomb_velocity=0.05)
    q, qd, tau = np.array([0.3, 1e-3, -2e-3]), np.array([0.5, -0.1, 0.2]), np.array([0.4])
    assert _relative(rebuilt.forward_dynamics(q, qd, tau), fresh.forward_dynamics(q, qd, tau)) < AGREEMENT


# --------------------------------------------------------------------------- Lin & Lewis (1994)
# Example 4.2 of Lin & Lewis (1994): the one-flexible-link arm (core.arm.presets.one_flexible_link,
# docs/MODEL.md, Reference arms), its
# joint angle as the output. The paper prints 4 significant digits of its zeros; besides that rounding
# (≤ 8.5e-5 relative) its model differs from ours by up to 3.4e-4 where no convention differs (the
# clamped-free ±j76.98) and prints a first pinned eigenvalue 0.34 % off the closed form it must equal
# (test below). Hence PAPER = 5e-4 for the printed zeros; measured 3.4e-4 (76.98), 3.9e-5 (1.0914),
# 1.7e-4 (58.89), 2.6e-4 (76.06).
PAPER = 5e-4
#: Generated against engine or closed form, same equations: round-off (measured ≤ 6e-14 on the zeros).
SAME = 1e-10


def _zeros(model, q=None) -> np.ndarray:
    """core.analysis.linear.zero_dynamics of a gravity-free arm. It adds ∂G/∂q, a complex step of
    gravity_forces that SymbolicModel casts to real (numpy's ComplexWarning, see
    test_gravity_stiffness_of_the_generated_model_matches_the_engine): harmless here, where G ≡ 0."""
    from core.analysis.linear import zero_dynamics

    assert not np.any(model.arm.gravity)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return zero_dynamics(model, q)


def _matched(ours: np.ndarray, theirs) -> float:
    """Largest distance from a zero of ``ours`` to the nearest of ``theirs``, relative to max|theirs|."""
    theirs = np.asarray(theirs, dtype=complex)
    distance = np.abs(ours[:, None] - theirs[None, :]).min(axis=1)
    return float(distance.max() / np.abs(theirs).max())


def _blocks(model):
    """M, K and B of a model at its home configuration, as arrays."""
    q = model.home()
    return model.mass_matrix(q), model.stiffness_matrix(q), model.input_matrix(q)


def _zero_dynamics_with_coupling(model, coupling: float) -> np.ndarray:
    """Zeros of (M_ff − c·B_f M_rf) q̈_f + K_ff q_f = 0 (one joint, no damping or gravity): the
    zero dynamics of core.analysis.linear.zero_dynamics for c = 1; c scales the rigid–flexible coupling."""
    M, K, B = _blocks(model)
    r, f = model.joints, model.flex
    M_z = M[f, f] - coupling * B[f] @ M[r, f]
    squares = np.linalg.eigvals(-np.linalg.solve(M_z, K[f, f])).astype(complex)
    roots = np.sqrt(squares)
    return np.concatenate([roots, -roots])


def _pinned_closed_form(arm, coupling: float = 1.0) -> np.ndarray:
    """Zeros of one pinned-pinned beam with 2 modes, computed independently of shapes/ and the
    engine: φ_k = √2 sin(kπη) (∫₀¹φ_iφ_j dη = δ_ij), so M_ff = ρA L I, M_rf,k = ρA L² ∫₀¹ηφ_k dη,
    B_f,k = φ_k'(0)/L, K_ff = EI/L³ diag(∫₀¹φ_k''² dη); the tip mass adds nothing (φ_k(1) = 0)."""
    eta = sp.Symbol("eta")
    phi = [sp.sqrt(2) * sp.sin(k * sp.pi * eta) for k in (1, 2)]
    b = sp.Matrix([sp.integrate(eta * p, (eta, 0, 1)) for p in phi])
    u = sp.Matrix([p.diff(eta).subs(eta, 0) for p in phi])
    stiffness = sp.diag(*[sp.integrate(p.diff(eta, 2) ** 2, (eta, 0, 1)) for p in phi])
    reduced = (sp.eye(2) - sp.Rational(coupling) * u * b.T).inv() * stiffness
    link = arm.links[0]
    scale = link.EI / (link.mass_per_length * link.length**4)
    squares = -scale * np.array(sp.N(reduced, 30).tolist(), dtype=float)
    roots = np.sqrt(np.linalg.eigvals(squares).astype(complex))
    return np.concatenate([roots, -roots])


def test_lin_lewis_clamped_free_zero_dynamics_from_the_generated_equations():
    """Lin & Lewis (1994) §4.2, clamped-free, 2 modes: marginally stable zero dynamics ±j1.0914, ±j76.98
    (as printed). Clamped frames have B_f = 0, so the zeros are ±j√eig(M_ff⁻¹K_ff) of the generated
    matrices exactly; they equal the engine's (AssumedModesModel) to round-off."""
    arm = one_flexible_link()
    eom = derive(arm, shape="clamped-free", modes=2)
    model = eom.to_numeric()
    M, K, _ = _blocks(model)
    f = model.flex
    omega = np.sqrt(scipy.linalg.eigh(K[f, f], M[f, f], eigvals_only=True))
    zeros = _zeros(model)
    assert np.max(np.abs(zeros.real)) <= 1e-12 * np.max(np.abs(zeros))  # on the imaginary axis
    np.testing.assert_allclose(np.sort(np.abs(zeros.imag)), np.repeat(omega, 2), rtol=SAME)
    np.testing.assert_allclose(np.sort(np.abs(zeros.imag)), [1.0914, 1.0914, 76.98, 76.98], rtol=PAPER)
    assert _matched(zeros, _zeros(AssumedModesModel(arm, shape="clamped-free", modes=2))) < SAME


def test_lin_lewis_pinned_zero_dynamics_are_non_minimum_phase():
    """Lin & Lewis (1994) §4.2, pinned-pinned, 2 modes: zeros in both half-planes. Ours are real, ±56.42 and
    ±163.96 rad/s: the generated equations, the engine and the closed form of _pinned_closed_form
    agree to round-off. The paper prints −58.89 ± j76.06, 58.89 ± j76.06 (next test)."""
    arm = one_flexible_link()
    model = derive(arm, shape="pinned-pinned", modes=2).to_numeric()
    zeros = _zeros(model)
    assert np.max(zeros.real) > 0 and np.min(zeros.real) < 0  # non-minimum phase
    assert _matched(zeros, _pinned_closed_form(arm)) < SAME
    assert _matched(zeros, _zeros(AssumedModesModel(arm, shape="pinned-pinned", modes=2))) < SAME
    assert _matched(zeros, _zero_dynamics_with_coupling(model, 1.0)) < SAME


def test_lin_lewis_printed_pinned_zeros_follow_from_half_the_rigid_flexible_coupling():
    """docs/SYMBOLIC.md: the paper's pinned zeros −58.89 ± j76.06, 58.89 ± j76.06 are those of
    (M_ff − ½ B_f M_rf) q̈_f + K_ff q_f = 0, the zero dynamics with the coupling term halved; with
    two modes det(M_z) does not depend on that factor and tr(M_z⁻¹K_ff) does, so ½ is the only
    factor that gives both printed parts. Computed from the generated matrices and in closed form."""
    arm = one_flexible_link()
    model = derive(arm, shape="pinned-pinned", modes=2).to_numeric()
    printed = [complex(s * 58.89, t * 76.06) for s in (-1, 1) for t in (-1, 1)]
    halved = _zero_dynamics_with_coupling(model, 0.5)
    assert _matched(halved, printed) < PAPER  # measured 2.3e-4 (|Δz| / |z|)
    assert _matched(halved, _pinned_closed_form(arm, coupling=0.5)) < SAME
    assert _matched(_zero_dynamics_with_coupling(model, 1.0), printed) > 0.3  # ours: not the printed ones


def test_lin_lewis_pinned_eigenvalues_of_M_ff_inverse_K_ff_for_15_modes():
    """Lin & Lewis (1994) §4.2 prints the eigenvalues of M_FF⁻¹U_FF for 15 pinned-pinned modes. Reference:
    the closed form (kπ/L)⁴ EI/ρA (sin shapes are the exact pinned beam modes; the tip mass adds
    nothing, φ_k(L) = 0), to round-off. The printed values are 3 significant digits, truncated:
    k = 2…15 match ours that way once 3.70e5 is read as 3.70e4 (the list is ascending except that
    entry, and λ_2 = 16 λ_1 exactly). k = 1, printed 2320.64, is 0.34 % above the closed form
    2312.83; no uniform scale explains it (it would change the truncated digits of k = 9, 11–13)."""
    arm = one_flexible_link()
    model = derive(arm, shape="pinned-pinned", modes=15).to_numeric()
    M, K, _ = _blocks(model)
    f = model.flex
    ours = scipy.linalg.eigh(K[f, f], M[f, f], eigvals_only=True)
    link = arm.links[0]
    closed = (np.arange(1, 16) * np.pi / link.length) ** 4 * link.EI / link.mass_per_length
    np.testing.assert_allclose(ours, closed, rtol=SAME)
    printed = [2320.64, 1.87e5, 3.70e5, 5.92e5, 1.44e6, 2.99e6, 5.55e6, 9.47e6, 1.51e7, 2.31e7]
    printed += [3.38e7, 4.79e7, 6.60e7, 8.88e7, 1.17e8]
    corrected = sorted([*printed[1:2], 3.70e4, *printed[3:]])
    unit = 10.0 ** (np.floor(np.log10(corrected)) - 2)  # one unit in the third significant digit
    assert np.all((corrected <= ours[1:] * (1 + 1e-12)) & (ours[1:] < corrected + unit))
    assert ours[0] == pytest.approx(printed[0], rel=4e-3)  # the unexplained 0.34 %


def test_lin_lewis_rigid_flexible_rigid_zero_dynamics_from_the_generated_equations():
    """Lin & Lewis (1994) §4.4 (no numbers printed; §4.3 and §5 state the pattern for every example):
    the rigid–flexible–rigid arm with the three joint angles as outputs has marginally stable zero
    dynamics with clamped-mass modes (tip load: the distal link and payload) and non-minimum-phase
    ones with pinned-pinned modes; the generated zeros equal the engine's to round-off."""
    arm = rigid_flexible_rigid()
    for shape in ("clamped-mass", "pinned-pinned"):
        zeros = _zeros(derive(arm, shape=shape, modes=2).to_numeric())
        assert _matched(zeros, _zeros(AssumedModesModel(arm, shape=shape, modes=2))) < SAME
        largest_real = np.max(zeros.real) / np.max(np.abs(zeros))
        if shape == "clamped-mass":
            assert abs(largest_real) <= 1e-12
        else:
            assert largest_real > 0.1


# --------------------------------------------------------------------------- the lumped-mass N-DOF paper
def test_lumped_mass_paper_two_link_equations_agree_with_the_engine():
    """The two-link arm with lumped masses of the lumped-mass N-DOF paper (docs/REFERENCES.md;
    core.arm.presets.lumped_two_link: gravity, gear ratios, Coulomb and viscous friction), 2
    clamped-free modes per link: the generated model agrees
    with the engine at the paper's start pose θ = (45°, −45°) and on random states, by the symbolic
    study's own comparison (studies.kinds.symbolic.agreement). ∂G/∂q is the known exception
    (test below)."""
    from studies.kinds.symbolic import agreement, random_state

    arm = lumped_two_link()
    model, engine = derive(arm, modes=2).to_numeric(), AssumedModesModel(arm, modes=2)
    start = engine.home()
    start[:2] = np.radians([45.0, -45.0])
    rng = np.random.default_rng(3)
    states = [(start, rng.standard_normal(6), rng.standard_normal(2))]
    states += [random_state(engine, rng, 0.05) for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # from dG/dq, see below
        found = agreement(model, engine, states)
    assert found["G"][1] > 0 and found["friction"][1] > 0 and found["D"][1] > 0  # all present
    worst = {name: rel for name, (_, _, rel) in found.items() if name != "dG/dq"}
    assert max(worst.values()) < AGREEMENT, worst


def test_gravity_stiffness_of_the_generated_model_matches_the_engine():
    """∂G/∂q by the complex step through the generated code (it once cast complex q to
    float and returned 0) equals the engine's, under gravity: no ComplexWarning either."""
    arm = lumped_two_link()
    model, engine = derive(arm, modes=2).to_numeric(), AssumedModesModel(arm, modes=2)
    q = engine.home()
    q[:2] = np.radians([45.0, -45.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        ours = model.gravity_stiffness(q)
    assert np.abs(ours).max() > 0
    assert _relative(ours, engine.gravity_stiffness(q)) < AGREEMENT


# --------------------------------------------------------------------------- the symbolic study kind
def test_symbolic_study_writes_equations_module_and_agreement(tmp_path):
    """The shipped example (the arm of Lin & Lewis (1994), clamped-free and pinned-pinned): the written module
    evaluates the same M as the engine, the LaTeX holds every matrix, summary.md previews M, and
    every compared quantity is within the tolerance."""
    from studies.cli import examples
    from studies.config import load_config
    from studies.runner import run_study

    result = run_study(load_config(examples()["symbolic"]), output=tmp_path / "run")
    assert result.ok
    folder = result.folder
    results = pd.read_csv(folder / "results.csv")
    compared = results[results["group"] != "cost"]
    assert compared["relative_difference"].max() < 1e-9
    pinned = results[(results["shape"] == "pinned-pinned") & (results["quantity"].str.endswith(".real"))]
    assert pinned["generated"].max() > 0  # non-minimum phase, from the generated equations
    engine = AssumedModesModel(one_flexible_link(), shape="pinned-pinned", modes=2)
    spec = importlib.util.spec_from_file_location("eom_2", folder / "eom_2.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q = np.array([0.4, 0.01, -0.02])
    assert _relative(module.mass_matrix(q), engine.mass_matrix(q)) < AGREEMENT
    tex = (folder / "equations_1.tex").read_text()
    # M, C, K and B: D and G are zero (no damping, no gravity) and get no block
    assert tex.count("\\begin{align}") == 4 and "M_{1,1} &=" in tex and "K_{2,2} &=" in tex
    summary = (folder / "summary.md").read_text()
    assert "$$\n\\begin{aligned}\nM_{1,1} &=" in summary and "[`eom_1.py`](eom_1.py)" in summary
    assert (folder / "generation_cost.csv").exists() and (folder / "agreement_with_the_engine.csv").exists()


def test_symbolic_kind_refuses_fem_cases_and_underived_prismatic_joints(tmp_path):
    """Refused when the config is validated (``flexlink show``), naming the key and value: FEM
    cases, a prismatic joint carrying a rigid link, damping on a translating link; the RRP arm
    (a translating flexible link) is accepted."""
    from studies.config import parse_config
    from studies.errors import ConfigError

    data = {
        "study": {"name": "s", "kind": "symbolic"},
        "arm": {"preset": "one-flexible-link"},
        "sweep": {"backends": ["amm", "fem"], "elements": [2]},
    }
    with pytest.raises(
        ConfigError, match=r"^sweep\.backends\[2\]: the symbolic kind runs 'amm' cases only, got 'fem'"
    ):
        parse_config(data)
    data = {"study": {"name": "s", "kind": "symbolic"}, "arm": {"preset": "rrp-translating"}}
    parse_config(data)
    sliding = {
        "joints": [{"kind": "prismatic"}],
        "links": [{"kind": "rigid", "length": 1.0, "mass": 1.0, "inertia": 0.1}],
    }
    data["arm"] = sliding
    with pytest.raises(
        ConfigError, match=r"^arm\.joints\[1\]\.kind: the symbolic kind derives a prismatic joint only with"
    ):
        parse_config(data)
    sliding["links"] = [
        {
            "kind": "flexible",
            "length": 1.0,
            "mass_per_length": 0.8,
            "EI": 15.0,
            "damping": {"kind": "rayleigh", "alpha": 0.1, "beta": 0.0},
        }
    ]
    with pytest.raises(
        ConfigError, match=r"^arm\.links\[1\]\.damping: structural damping on a translating link.*'rayleigh'"
    ):
        parse_config(data)
    data["arm"] = {"preset": "azimuth-elevation"}  # spatial, revolute: derivable
    parse_config(data)
    data["arm"]["preset"] = "one-flexible-link"
    data["analysis"] = {"configuration": [0.1, 0.2]}
    with pytest.raises(ConfigError, match=r"^analysis\.configuration: needs 1 joint value, got 2"):
        parse_config(data)


@pytest.mark.slow
def test_symbolic_study_of_the_rrp_arm_runs_from_the_command_line(tmp_path):
    """``flexlink run`` of a symbolic study on the RRP arm (Theodore & Ghosal 1997): frozen
    clamped–mass shapes and beta-ode shapes that follow the free length, one mode per plane, two
    random states; every compared quantity within 1e-9 of the engine (the agreement of
    tests/test_symbolic_prismatic.py), the frozen case's numpy module written, the following
    case's replaced by a note."""
    from studies import cli

    path = tmp_path / "rrp.toml"
    path.write_text(
        """
        [study]
        name = "rrp-symbolic"
        kind = "symbolic"
        [arm]
        preset = "rrp-translating"
        [sweep]
        backends = ["amm"]
        shapes = ["clamped-mass", "beta-ode"]
        modes = [1]
        [analysis]
        check_states = 2
        budget = 0.0
        latex = false
        operations = false
        preview_characters = 0
        [execution]
        executor = "serial"
        [report]
        plots = false
        """.replace("\n        ", "\n")
    )
    assert cli.main(["run", str(path), "--output", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out"
    results = pd.read_csv(folder / "results.csv")
    compared = results[results["group"] != "cost"]
    assert set(compared["shape"]) == {"clamped-mass", "beta-ode"}
    assert compared["relative_difference"].max() < 1e-9  # measured ≤ 1.2e-15
    assert (folder / "eom_1.py").exists() and not (folder / "eom_2.py").exists()
    assert (
        "No numpy module: the modal integrals of the length-following shapes"
        in (folder / "summary.md").read_text()
    )
