"""amm.symbolic: the symbolic planar equations of motion against closed forms and the engine."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.linalg
import sympy as sp

from amm import AssumedModesModel
from amm.symbolic import SymbolicModel, derive
from core import Arm, Damping, Joint, Link, LumpedMass, Payload
from core.presets import (
    azimuth_elevation,
    lumped_two_link,
    one_flexible_link,
    rigid_flexible_rigid,
    rigid_two_link,
)
from core.simulation import simulate

RNG = np.random.default_rng(20261123)

#: Agreement with the engine (brief of issue 16): 1e-10 relative; measured ≤ 2e-15 on M, ∂M/∂q, G, C.
AGREEMENT = 1e-10


def _relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / scale) if scale else float(np.max(np.abs(a)))


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


def test_non_planar_arm_is_rejected_by_field():
    with pytest.raises(ValueError, match="is_planar"):
        derive(azimuth_elevation())
    with pytest.raises(ValueError, match="constants"):
        derive(rigid_two_link(), constants="sym")


# --------------------------------------------------------------------------- agreement with the engine
CASES = {
    "one-flexible-link": (one_flexible_link, {"shape": "clamped-free", "modes": 3}),
    "one-flexible-link-pinned": (one_flexible_link, {"shape": "pinned-pinned", "modes": 2}),
    "rigid-flexible-rigid": (rigid_flexible_rigid, {"shape": "clamped-mass", "modes": 2}),
    "lumped-two-link": (lumped_two_link, {"modes": 2}),
}


def _everything_arm() -> Arm:
    """Hubs, motor, lumped mass with rotary inertia, both payloads, offsets, both damping kinds,
    gravity along x and y, chord tip rotation."""
    return Arm.planar(
        [
            Link.rigid(0.3, 1.0, com=(0.1, 0.02, 0.0)),
            Link.flexible(
                0.8,
                0.6,
                20.0,
                damping=Damping.rayleigh(0.1, 0.01),
                lumped_masses=(LumpedMass(0.4, 0.2, 1e-3),),
                tip_payload=Payload(0.1, 1e-3),
            ),
            Link.flexible(0.5, 0.4, 10.0, damping=Damping.modal(0.02)),
        ],
        joints=[
            Joint(hub_inertia=0.01, motor_inertia=1e-4, gear_ratio=10, viscous_friction=0.1),
            Joint(hub_mass=0.3, hub_inertia=0.02, coulomb_friction=0.1),
            Joint(theta_offset=0.2, hub_inertia=0.01),
        ],
        payload=Payload(0.2, 1e-4),
        gravity=(1.0, -9.81),
        tip_rotation="chord",
    )


@pytest.mark.parametrize("name", [*CASES, "everything-clamped", "everything-pinned"])
def test_numeric_model_agrees_with_the_engine(name):
    if name.startswith("everything"):
        arm = _everything_arm()
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
    arm = _everything_arm()
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
    from core.presets import one_flexible_link

    arm = one_flexible_link()
    heavier = dataclasses.replace(arm, payload=Payload(0.5))
    model = derive(arm, shape="clamped-mass", modes=2).to_numeric()
    rebuilt = model.rebuild(heavier)
    fresh = derive(heavier, shape="clamped-mass", modes=2).to_numeric()
    q = np.array([0.3, 1e-3, -2e-3])
    np.testing.assert_array_equal(rebuilt.mass_matrix(q), fresh.mass_matrix(q))
    assert not np.allclose(rebuilt.mass_matrix(q), model.mass_matrix(q))
