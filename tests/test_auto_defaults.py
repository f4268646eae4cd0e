"""Defaults that pick the right tool: ``simulate(method="auto")`` and
``forward_dynamics(solver="auto")`` / ``rates_function(solver="auto")`` (docs/MODEL.md).

No wall-clock assertions: costs are right-hand-side counts (``frame.attrs["nfev"]``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from amm import AssumedModesModel
from core import PD, Arm, Damping, Joint, Link, LumpedMass, ParabolicBlend, simulate
from core.analysis.method_choice import EXPLICIT_LIMIT, choose_method, stiffness_estimate
from core.arm.presets import one_flexible_link, space_arm_3link
from core.dynamics.model import RECURSIVE_MAX_BODY, STRUCTURED_MIN_DOF
from fem import FiniteElementModel


def one_link():
    """The one-link arm of the issue: 3 clamped-free modes, undamped, open loop."""
    model = AssumedModesModel(one_flexible_link(), shape="clamped-free", modes=3)
    q0 = model.home()
    q0[1:] = 0.01, 0.001, 1e-4
    return model, q0


def two_links(elements: int, damping=None, **options):
    arm = Arm.planar(
        [Link.flexible(1.0, 1.0, 10.0, damping=damping), Link.flexible(1.0, 1.0, 10.0, damping=damping)]
    )
    return FiniteElementModel(arm, elements=elements, **options)


def state(model, seed=0):
    rng = np.random.default_rng(seed)
    q = model.home() + 1e-3 * rng.standard_normal(model.n_dof)
    qd = 1e-2 * rng.standard_normal(model.n_dof)
    tau = rng.standard_normal(model.n_joints)
    return q, qd, tau


# --------------------------------------------------------------------------- simulate(method="auto")


def test_undamped_one_link_arm_is_integrated_explicitly_and_the_choice_is_recorded():
    """Undamped, open loop: the highest mode stays excited, span × ρ is small (~260 over 1 s),
    so ``"auto"`` takes DOP853 and records why; it costs what DOP853 costs and fewer right-hand
    sides than Radau (measured over 0.2 s: DOP853 ~4 000, Radau ~23 000)."""
    model, q0 = one_link()
    method, reason, estimate = choose_method(model, (0.0, 1.0), q0)
    assert method == "DOP853" and reason.startswith("not stiff")
    assert 0 < estimate["span_rho"] <= EXPLICIT_LIMIT and estimate["zeta"] == pytest.approx(0.0, abs=1e-12)
    auto = simulate(model, (0.0, 0.2), q0)
    assert auto.attrs["method"] == "DOP853" and auto.attrs["method_reason"].startswith("not stiff")
    assert auto.attrs["stiffness"]["rho"] == pytest.approx(estimate["rho"], rel=1e-12)
    explicit = simulate(model, (0.0, 0.2), q0, method="DOP853")
    assert explicit.attrs["method_reason"] == "given" and explicit.attrs["stiffness"] is None
    assert auto.attrs["nfev"] == explicit.attrs["nfev"]
    radau = simulate(model, (0.0, 0.2), q0, method="Radau")
    assert radau.attrs["method"] == "Radau" and radau.attrs["method_reason"] == "given"
    assert auto.attrs["nfev"] < radau.attrs["nfev"]


def test_heavily_damped_fine_mesh_is_integrated_implicitly():
    """Rayleigh damping β K on a fine mesh: the top modes are overdamped (ζ ≫ 1), the spectral
    radius ~β ω_max² is far beyond the explicit step bound: Radau, in the choice and in a run."""
    model = two_links(16, damping=Damping.rayleigh(0.0, 1e-3))
    q0 = model.home()
    q0[2] = 0.01
    method, reason, estimate = choose_method(model, (0.0, 0.1), q0)
    assert method == "Radau" and reason.startswith("stiff")
    assert estimate["zeta"] == pytest.approx(1.0) and estimate["span_rho"] > EXPLICIT_LIMIT
    span = 3 * EXPLICIT_LIMIT / estimate["rho"]  # a short run that is still stiff
    frame = simulate(model, (0.0, span), q0, t_eval=[0.0, span])
    assert frame.attrs["success"] and frame.attrs["stiffness"]["span_rho"] == pytest.approx(
        3 * EXPLICIT_LIMIT
    )
    assert frame.attrs["method"] == "Radau" and frame.attrs["method_reason"].startswith("stiff")


def test_power_iteration_estimate_matches_the_dense_one(monkeypatch):
    """Above DENSE_ESTIMATE coordinates ω_max comes from power iterations (M⁻¹ by the structured
    or the composite solver): the dense eigen-solve's to a few per cent, and the overdamped top
    mode (Rayleigh β K) gives ρ > ω_max in both."""
    import core.analysis.method_choice as method_choice

    model = two_links(64, damping=Damping.rayleigh(0.0, 1e-5))
    monkeypatch.setattr(method_choice, "DENSE_ESTIMATE", 10_000)
    dense = stiffness_estimate(model, model.home())
    assert dense["by"] == "eigenvalues" and dense["rho"] > dense["omega_max"]
    monkeypatch.setattr(method_choice, "DENSE_ESTIMATE", 10)
    for solver in ("structured", "composite"):
        power = stiffness_estimate(model, model.home(), solver=solver)
        assert power["by"] == "power iteration"
        assert power["omega_max"] == pytest.approx(dense["omega_max"], rel=0.05)
        assert power["rho"] == pytest.approx(dense["rho"], rel=0.1)


def test_controller_gains_and_friction_enter_the_estimate():
    """A stiff PD on a rigid joint raises ρ (ω ≈ √(kp/J)); the prescribed run counts only the
    flexible block."""
    model, q0 = one_link()
    trajectory = ParabolicBlend((0.0,), (0.5,), 0.5, 0.2)
    soft = simulate(model, (0.0, 0.01), q0, controller=PD(1.0, 0.1), trajectory=trajectory)
    hard = simulate(model, (0.0, 0.01), q0, controller=PD(1e9, 1e6), trajectory=trajectory)
    assert hard.attrs["stiffness"]["rho"] > 10 * soft.attrs["stiffness"]["rho"]
    assert hard.attrs["method"] == "Radau"
    # smoothed Coulomb friction F_c tanh(u/ε): a damping F_c/ε on the joint rate at u = 0
    rigid = Arm.planar([Link.rigid(1.0, 1.0)])
    rubbing = Arm.planar([Link.rigid(1.0, 1.0)], joints=[Joint(coulomb_friction=1.0)])
    smooth = AssumedModesModel(rubbing, coulomb_velocity=1e-4)
    J = smooth.mass_matrix(smooth.home())[0, 0]
    assert stiffness_estimate(smooth, smooth.home())["rho"] == pytest.approx(1.0 / 1e-4 / J, rel=1e-12)
    assert stiffness_estimate(AssumedModesModel(rigid), np.zeros(1))["rho"] == 0.0
    prescribed = stiffness_estimate(model, q0, prescribed=True)
    assert prescribed["omega_max"] == pytest.approx(model.natural_frequencies(q0).max(), rel=1e-9)


def test_explicit_method_is_honoured_and_auto_is_validated():
    model, q0 = one_link()
    for method in ("Radau", "BDF", "RK45"):
        frame = simulate(model, (0.0, 0.002), q0, method=method)
        assert frame.attrs["method"] == method and frame.attrs["method_reason"] == "given"
    with pytest.raises(ValueError, match="method must be one of"):
        simulate(model, (0.0, 0.01), q0, method="Euler")
    with pytest.raises(ValueError, match="solver must be one of"):
        simulate(model, (0.0, 0.01), q0, solver="pinocchio")


# --------------------------------------------------------------------------- solver="auto"


def test_auto_solver_choices():
    """recursive for the space arm (few flexible coordinates per body) and for element meshes
    below :data:`STRUCTURED_MIN_DOF` (their wide bodies solved without an m × m factor,
    core.dynamics.compiled.fine), also with geometric stiffening at any size (the structured
    path refuses it); structured for a fine mesh; composite for wide bodies with a dense mass
    block (assumed modes with a lumped mass) and off the compiled engine (the numpy oracle)."""
    space = AssumedModesModel(space_arm_3link(), shape="clamped-free", modes=2)
    assert space.auto_solver() == "recursive"
    fine = two_links(STRUCTURED_MIN_DOF // 2)
    assert fine.auto_solver() == "structured"
    assert two_links(STRUCTURED_MIN_DOF // 2, geometric_stiffening=True).auto_solver() == "recursive"
    assert two_links(RECURSIVE_MAX_BODY // 2).auto_solver() == "recursive"
    assert two_links(RECURSIVE_MAX_BODY // 2 + 8).auto_solver() == "recursive"
    lumped = Link.flexible(1.0, 1.0, 10.0, lumped_masses=[LumpedMass(position=0.5, mass=0.2)])
    wide = AssumedModesModel(
        Arm.planar([lumped, Link.flexible(1.0, 1.0, 10.0)]), modes=RECURSIVE_MAX_BODY + 2
    )
    assert wide.auto_solver() == "composite"
    assert space.replace(compiled=False).auto_solver() == "composite"


def test_auto_solver_agrees_with_composite_to_round_off():
    """The space arm: "auto" (recursive) and "composite" agree to 1e-10 of max|q̈|, in
    forward dynamics and in the simulation right-hand side; "auto" is exactly the solver it names."""
    model = AssumedModesModel(space_arm_3link(), shape="clamped-free", modes=2)
    q, qd, tau = state(model)
    composite = model.forward_dynamics(q, qd, tau, solver="composite")
    auto = model.forward_dynamics(q, qd, tau)
    np.testing.assert_array_equal(auto, model.forward_dynamics(q, qd, tau, solver=model.auto_solver()))
    np.testing.assert_allclose(auto, composite, rtol=0, atol=1e-10 * np.abs(composite).max())
    x = np.concatenate([q, qd, [0.0, 0.0]])
    rates = model.rates_function("composite")(x, tau)
    np.testing.assert_array_equal(model.rates_function()(x, tau), model.rates_function("recursive")(x, tau))
    np.testing.assert_allclose(
        model.rates_function()(x, tau), rates, rtol=0, atol=1e-10 * np.abs(rates).max()
    )


def test_auto_solver_on_a_fine_mesh_solves_the_dense_equations():
    """A fine damped mesh ("structured"): the accelerations of "auto" solve the dense
    equations M q̈ + h + G = Q to round-off (backward error 1e-12 of the terms' size; the
    forward difference to "composite" is bounded by cond(M) ε instead, tests/test_structured.py),
    and ``rates_function()`` is the structured one."""
    model = two_links(STRUCTURED_MIN_DOF // 2, damping=Damping.rayleigh(0.1, 1e-5))
    assert model.auto_solver() == "structured"
    q = model.home()
    q[:2] = 0.3, -0.4
    qd = np.zeros(model.n_dof)
    qd[:2] = 0.5, -0.2
    tau = np.array([1.0, -0.5])
    qdd = model.forward_dynamics(q, qd, tau)
    np.testing.assert_array_equal(qdd, model.forward_dynamics(q, qd, tau, solver="structured"))
    M = model.mass_matrix(q)
    forces = model._applied(q, qd, tau) - model.nonlinear_forces(q, qd)
    size = np.linalg.norm(M) * np.linalg.norm(qdd) + np.linalg.norm(forces)
    assert np.linalg.norm(M @ qdd - forces) <= 1e-12 * size
    composite = model.forward_dynamics(q, qd, tau, solver="composite")  # its own backward error is as small
    assert np.linalg.norm(M @ composite - forces) <= 1e-12 * size
    x = np.concatenate([q, qd, [0.0, 0.0]])
    np.testing.assert_array_equal(model.rates_function()(x, tau), model.rates_function("structured")(x, tau))


def test_explicit_solver_is_honoured_in_simulate_and_forward_dynamics():
    model = AssumedModesModel(space_arm_3link(), shape="clamped-free", modes=2)
    q0 = model.home()
    frame = simulate(model, (0.0, 0.01), q0, method="DOP853", solver="composite")
    assert frame.attrs["solver"] == "composite"
    frame = simulate(model, (0.0, 0.01), q0, method="DOP853")
    assert frame.attrs["solver"] == "recursive"
    with pytest.raises(ValueError, match="solver must be one of"):
        model.forward_dynamics(q0, None, np.zeros(3), solver="pinocchio")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning: auto never asks for an unsupported solver
        model.forward_dynamics(q0, None, np.zeros(3))
