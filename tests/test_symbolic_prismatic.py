"""amm.symbolic on prismatic joints: a translating flexible link with frozen shapes and with shapes
that follow its free length (the RRP arm of Theodore & Ghosal 1997) derived symbolically, against
the engine's TranslatingBody."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amm import AssumedModesModel
from amm.symbolic import derive
from core import Arm, Damping, Joint, Link, Payload
from core.arm.presets import rrp_translating
from tests.strategies import relative_error as _relative

RNG = np.random.default_rng(20261126)

#: Agreement with the engine (docs/SYMBOLIC.md): 1e-10 relative; measured ≤ 6e-15 on M, ∂M/∂q,
#: h, G, the elastic forces and the forward dynamics (the same floating-frame model, round-off only).
AGREEMENT = 1e-10


def _random_state(engine, prismatic: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Joint angles in (−π, π), a free length in 0.15…0.96 of the beam (0.2…1.25 m of the RRP
    arm's 1.3 m; inside the range the engine fits length-following integrals over, 0.1…1 of the
    beam), deflection coordinates of a few centimetres, random rates."""
    n = engine.n_dof
    q = RNG.uniform(-np.pi, np.pi, n)
    q[prismatic] = RNG.uniform(0.15, 0.96) * engine.arm.links[prismatic].length
    q[engine.n_joints :] = RNG.uniform(-0.05, 0.05, n - engine.n_joints)
    return q, RNG.normal(size=n)


def _agreement(arm, options: dict, states: int, model=None) -> float:
    """Largest relative difference to the engine over M, ∂M/∂q, h, G (and ∂G/∂q, a complex step
    through the generated code), K(l), the elastic forces and their Jacobian, B, D, the tip, V
    and the forward dynamics on random states."""
    model = derive(arm, cache=False, **options).to_numeric() if model is None else model
    engine = AssumedModesModel(arm, **options)
    assert model.coordinates == engine.coordinates
    prismatic = arm.translating_links[0] - 1
    worst = 0.0
    for _ in range(states):
        q, qd = _random_state(engine, prismatic)
        tau = RNG.normal(size=engine.n_joints)
        pairs = [
            (model.mass_matrix(q), engine.mass_matrix(q)),
            (model.mass_matrix_derivatives(q), engine.mass_matrix_derivatives(q)),
            (model.bias_forces(q, qd), engine.bias_forces(q, qd)),
            (model.stiffness_matrix(q), engine.stiffness_matrix(q)),
            (model.elastic_forces(q), engine.elastic_forces(q)),
            (model.elastic_stiffness(q), engine.elastic_stiffness(q)),
            (model.damping_matrix(q), engine.damping_matrix(q)),
            (model.input_matrix(q), engine.input_matrix(q)),
            (model.tip_position(q), engine.tip_position(q)),
            ([model.potential_energy(q)], [engine.potential_energy(q)]),
            (model.forward_dynamics(q, qd, tau), engine.forward_dynamics(q, qd, tau)),
        ]
        if np.any(arm.gravity):
            pairs.append((model.gravity_forces(q), engine.gravity_forces(q)))
            pairs.append((model.gravity_stiffness(q), engine.gravity_stiffness(q)))
        else:
            assert not np.any(model.gravity_forces(q))
        worst = max(worst, *(_relative(ours, theirs) for ours, theirs in pairs))
    return worst


def _loaded_rrp(tip_rotation: str = "chord", damping=None) -> Arm:
    """The RRP arm with gravity along every axis, a payload with rotary inertia, a hub mass, motor
    and viscous friction on the prismatic joint and a softer out-of-plane bending stiffness."""
    joints = [
        Joint(alpha=math.pi / 2, d=0.1, hub_inertia=0.352),
        Joint(alpha=-math.pi / 2, hub_inertia=3.2, hub_mass=0.5),
        Joint(
            kind="prismatic", d=0.3, hub_mass=0.2, motor_inertia=0.01, gear_ratio=2.0, viscous_friction=0.3
        ),
    ]
    zero = [[0.0] * 3] * 3
    links = [
        Link.rigid(0.1, 3.7051, com=(0.0, 0.0, -0.05), inertia=zero),
        Link.rigid(0.3, 0.3310, com=(0.0, 0.15, 0.0), inertia=zero),
        Link.flexible(1.3, 0.4303 / 1.3, 1165.4916, EI_out=900.0, damping=damping),
    ]
    return Arm.from_dh(
        joints, links, payload=Payload(0.0828, 1e-4), gravity=(1.0, -2.0, -9.81), tip_rotation=tip_rotation
    )


def test_rrp_arm_agrees_with_the_engine():
    """The preset RRP arm (frozen clamped–free shapes, two bending planes), five random states."""
    assert _agreement(rrp_translating(), {"modes": 2}, states=5) < AGREEMENT  # measured ≤ 6e-15


def test_loaded_rrp_arm_agrees_with_the_engine():
    """Gravity, payload inertia (the exact tip rotation, which depends on the free length), chord
    tip rotation, a hub mass, motor and friction on the prismatic joint."""
    assert _agreement(_loaded_rrp(), {"modes": 2}, states=3) < AGREEMENT  # measured ≤ 1e-15


@pytest.mark.slow
def test_rrp_arm_with_length_following_shapes_agrees_with_the_engine():
    """The preset RRP arm with beta-ode shapes (clamped–mass roots β_k(l) following the free
    length): the modal integrals are functions of l bound to the engine's series, their
    l-derivatives enter ∂M/∂q, h, the elastic forces and the tip; five random states."""
    assert _agreement(rrp_translating(), {"modes": 2, "shape": "beta-ode"}, states=5) < AGREEMENT
    # measured ≤ 4e-15


@pytest.mark.slow
def test_loaded_rrp_arm_with_length_following_shapes_agrees_with_the_engine():
    """Following shapes under gravity along every axis (G, ∂G/∂q through l-dependent first
    moments), a payload with rotary inertia (the tip load the clamped–mass roots follow), chord
    tip rotation (Θ(l)δ/l and its l-derivative), hub mass, motor and friction."""
    arm = _loaded_rrp()
    assert _agreement(arm, {"modes": 2, "shape": "beta-ode"}, states=3) < AGREEMENT  # measured ≤ 2e-15


def _sliding_beam() -> Arm:
    """One prismatic joint carrying the RRP arm's beam (1.3 m, 0.331 kg/m, EI 1165 N m², one
    bending plane) and its payload of 0.0828 kg, under gravity across and along the beam."""
    link = Link.flexible(1.3, 0.4303 / 1.3, 1165.4916)
    return Arm.from_dh(
        [Joint(kind="prismatic")], [link], payload=Payload(0.0828, 0.0), gravity=(-9.81, 2.0, 1.0)
    )


def test_sliding_beam_with_length_following_shapes_agrees_with_the_engine():
    """A small arm (fast): beta-ode shapes, three random states; and with the
    roots of the "ode" tracker set (the model's auxiliary states, shared with the engine model
    whose series the generated code calls) the generated model follows them as the engine does."""
    arm = _sliding_beam()
    options = {"modes": 2, "shape": "beta-ode"}
    model = derive(arm, cache=False, **options).to_numeric()
    assert len(model.eom.functions) == 25 and model.auxiliary_names == ("beta1_1", "beta1_2")
    assert "ta1_1__l1(d1)" in str(model.eom.G)  # ∂/∂l of the first moment ρ l ∫ψ dη δ
    assert _agreement(arm, options, states=3, model=model) < AGREEMENT  # measured ≤ 3e-15
    engine = AssumedModesModel(arm, **options)
    q, qd = _random_state(engine, 0)
    tau = RNG.normal(size=1)
    roots = engine.auxiliary_initial(q) * (1 + 3e-7)  # off the exact roots, within the series' range
    exact = model.forward_dynamics(q, qd, tau)
    with model.auxiliary(roots), engine.auxiliary(roots):
        ours, theirs = model.forward_dynamics(q, qd, tau), engine.forward_dynamics(q, qd, tau)
        assert _relative(model.mass_matrix(q), engine.mass_matrix(q)) < AGREEMENT
    assert _relative(ours, theirs) < AGREEMENT
    assert _relative(ours, exact) > 1e-9  # the roots changed the dynamics (measured 2.4e-6)
    assert _relative(model.forward_dynamics(q, qd, tau), exact) == 0.0  # restored on exit
    assert _relative(model.auxiliary_rates(q, qd, roots), engine.auxiliary_rates(q, qd, roots)) == 0.0


def test_refusals_are_named():
    """The recursive form, damping on the translating link, the compiled model (K depends on q)
    and the standalone module of length-following shapes are refused with the joint or field
    named."""
    arm = rrp_translating()
    with pytest.raises(ValueError, match=r"^joint 3: kind 'prismatic' is derived in the closed form"):
        derive(arm, form="recursive", cache=False)
    with pytest.raises(ValueError, match=r"^link 3: structural damping on a translating link"):
        derive(_loaded_rrp(damping=Damping.rayleigh(alpha=0.1, beta=1e-4)), cache=False)
    eom = derive(arm, modes=1, cache=False)
    with pytest.raises(ValueError, match=r"^compiled=True: the stiffness depends on q"):
        eom.to_numeric(compiled=True)
    with pytest.raises(ValueError, match=r"^link: points of translating link 3"):
        eom.to_numeric().point_position(3, 0.1, np.array([0.0, 0.0, 0.5, 0.0, 0.0]))


def test_standalone_module_of_following_shapes_is_refused(tmp_path):
    """A numpy module cannot evaluate the engine's series of the l-dependent integrals."""
    eom = derive(_sliding_beam(), shape="beta-ode", modes=1, cache=False)
    with pytest.raises(ValueError, match=r"^to_python: the equations hold the modal integrals"):
        eom.to_python(tmp_path / "eom.py")
    assert "tk1_11" in eom.functions and "\\text{at the free length } d_{1}" in eom.latex()


@pytest.mark.slow
def test_simulation_with_ode_roots_follows_the_engine():
    """A simulation of the generated model integrates the "ode" tracker's roots with the motion
    (its auxiliary states are the engine model's): 0.05 s of the sliding beam extending at
    0.5 m/s, coordinates and roots as the engine's simulation to the integration tolerance
    (rtol 1e-9; stated 1e-7 relative to the largest state, measured 2e-15: the same right-hand
    sides to round-off, so the same steps)."""
    from core.analysis.simulation import simulate

    arm, options = _sliding_beam(), {"modes": 2, "shape": "beta-ode"}
    model, engine = derive(arm, cache=False, **options).to_numeric(), AssumedModesModel(arm, **options)
    q0, qd0 = np.array([0.6, 0.002, 0.0]), np.array([0.5, 0.0, 0.0])
    times = np.linspace(0.0, 0.05, 3)
    ours, theirs = (
        simulate(m, (0.0, 0.05), q0, qd0, rtol=1e-9, atol=1e-12, t_eval=times) for m in (model, engine)
    )
    columns = [*engine.coordinates, *engine.auxiliary_names]
    assert set(columns) <= set(ours.columns)
    assert _relative(ours[columns].to_numpy(), theirs[columns].to_numpy()) < 1e-7
