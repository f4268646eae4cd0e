"""amm.symbolic on prismatic joints: a translating flexible link with frozen shapes (the RRP arm of
Theodore & Ghosal 1997) derived symbolically, against the engine's TranslatingBody."""

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

#: Agreement with the engine (docs/SYMBOLIC.md): 1e-10 relative; measured ≤ 1e-15 on M, ∂M/∂q,
#: h, G, the elastic forces and the forward dynamics (the same floating-frame model, round-off only).
AGREEMENT = 1e-10


def _random_state(engine, prismatic: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Joint angles in (−π, π), a free length in 0.2…1.25 m (of the 1.3 m beam), deflection
    coordinates of a few centimetres, random rates."""
    n = engine.n_dof
    q = RNG.uniform(-np.pi, np.pi, n)
    q[prismatic] = RNG.uniform(0.2, 1.25)
    q[engine.n_joints :] = RNG.uniform(-0.05, 0.05, n - engine.n_joints)
    return q, RNG.normal(size=n)


def _agreement(arm, options: dict, states: int) -> float:
    """Largest relative difference to the engine over M, ∂M/∂q, h, G, K(l), the elastic forces
    and their Jacobian, B, D, the tip, V and the forward dynamics on random states."""
    model = derive(arm, cache=False, **options).to_numeric()
    engine = AssumedModesModel(arm, **options)
    assert model.coordinates == engine.coordinates
    worst = 0.0
    for _ in range(states):
        q, qd = _random_state(engine)
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


def test_refusals_are_named():
    """The recursive form, length-following shapes, damping on the translating link and the
    compiled model (K depends on q) are refused with the joint or field named."""
    arm = rrp_translating()
    with pytest.raises(ValueError, match=r"^joint 3: kind 'prismatic' is derived in the closed form"):
        derive(arm, form="recursive", cache=False)
    with pytest.raises(
        ValueError, match=r"^joint 3: the translating link has length-following shapes.*frozen"
    ):
        derive(arm, shape="beta-ode", cache=False)
    with pytest.raises(ValueError, match=r"^link 3: structural damping on a translating link"):
        derive(_loaded_rrp(damping=Damping.rayleigh(alpha=0.1, beta=1e-4)), cache=False)
    eom = derive(arm, modes=1, cache=False)
    with pytest.raises(ValueError, match=r"^compiled=True: the stiffness depends on q"):
        eom.to_numeric(compiled=True)
    with pytest.raises(ValueError, match=r"^link: points of translating link 3"):
        eom.to_numeric().point_position(3, 0.1, np.array([0.0, 0.0, 0.5, 0.0, 0.0]))
