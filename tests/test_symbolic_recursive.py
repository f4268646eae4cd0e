"""amm.symbolic, recursive form: Newton–Euler in named intermediates against the closed form and
the engine, on small arms and on long chains (docs/SYMBOLIC.md, recursive form)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from amm import AssumedModesModel
from amm.symbolic import derive
from core import Arm, Link
from core.arm.presets import azimuth_elevation, rigid_two_link
from tests.strategies import everything_arm
from tests.strategies import relative_error as _relative

RNG = np.random.default_rng(20261126)

#: Agreement with the engine and with the closed form (docs/SYMBOLIC.md): 1e-10 relative.
AGREEMENT = 1e-10


def _states(model, count: int = 3):
    for _ in range(count):
        q = RNG.normal(size=model.n_dof)
        q[model.flex] *= 0.05  # deflections of a few cm
        yield q, RNG.normal(size=model.n_dof), RNG.normal(size=model.n_joints)


def _everything_arm(tip_rotation: str = "chord") -> Arm:
    """tests.strategies.everything_arm with joint 2's motor (2e-4 kg m² behind a gear of 5)."""
    return everything_arm(tip_rotation, motor_inertia=2e-4, gear_ratio=5)


def chain(kind: str, n: int) -> Arm:
    """n links: "rigid" (1 kg, 0.5 m), "flexible" (0.5 m, 0.5 kg/m, EI = 10 N m²) or "mixed"
    (rigid, flexible, rigid, …), gravity along −y."""

    def link(k):
        if kind == "rigid" or (kind == "mixed" and k % 2 == 0):
            return Link.rigid(0.5, 1.0)
        return Link.flexible(0.5, 0.5, 10.0)

    return Arm.planar([link(k) for k in range(n)], gravity=(0.0, -9.81))


def _agreement(generated, engine, states) -> dict:
    """Largest relative differences of M, h, G, tip, V, and of the forward dynamics: its forward
    error and its backward error ‖M q̈ − (τ − D q̇ − K q − h − G)‖ / ‖…‖ with the engine's terms."""
    worst: dict = {}
    for q, qd, tau in states:
        pairs = {
            "M": (generated.mass_matrix(q), engine.mass_matrix(q)),
            "h": (generated.bias_forces(q, qd), engine.bias_forces(q, qd)),
            "G": (generated.gravity_forces(q), engine.gravity_forces(q)),
            "tip": (generated.tip_position(q), engine.tip_position(q)),
            "V": (generated.potential_energy(q), engine.potential_energy(q)),
        }
        qdd = generated.forward_dynamics(q, qd, tau)
        pairs["forward"] = (qdd, engine.forward_dynamics(q, qd, tau))
        pairs["inverse"] = (
            generated.inertial_forces(q, qd, qd[::-1]),
            engine.inertial_forces(q, qd, qd[::-1]),
        )
        M = engine.mass_matrix(q)
        rhs = M @ engine.forward_dynamics(q, qd, tau)
        pairs["backward"] = (M @ qdd, rhs)
        for key, (a, b) in pairs.items():
            worst[key] = max(worst.get(key, 0.0), _relative(a, b))
    return worst


@pytest.mark.parametrize("shape", ["clamped-free", "pinned-pinned"])
@pytest.mark.parametrize("tip_rotation", ["chord", "slope"])
def test_recursive_form_agrees_with_the_closed_form_and_the_engine(shape, tip_rotation):
    arm = _everything_arm(tip_rotation)
    recursive = derive(arm, shape=shape, modes=2, form="recursive")
    closed = derive(arm, shape=shape, modes=2, form="closed")
    assert recursive.intermediates is not None and closed.intermediates is None
    engine = AssumedModesModel(arm, shape=shape, modes=2)
    ours, theirs = recursive.to_numeric(), closed.to_numeric()
    for q, qd, _ in _states(engine):
        assert _relative(ours.mass_matrix(q), theirs.mass_matrix(q)) < AGREEMENT
        assert _relative(ours.bias_forces(q, qd), theirs.bias_forces(q, qd)) < AGREEMENT
        assert _relative(ours.gravity_forces(q), theirs.gravity_forces(q)) < AGREEMENT
        assert _relative(ours.mass_matrix_derivatives(q), engine.mass_matrix_derivatives(q)) < AGREEMENT
        assert _relative(ours.coriolis_matrix(q, qd), engine.coriolis_matrix(q, qd)) < AGREEMENT
    for key, value in _agreement(ours, engine, _states(engine)).items():
        assert value < AGREEMENT, (key, value)
    assert ours.auto_solver() == "recursive" and theirs.auto_solver() == "composite"
    for q, qd, tau in _states(engine):  # the generated articulated bodies and the dense solve
        dense = ours.forward_dynamics(q, qd, tau, solver="composite")
        assert _relative(ours.forward_dynamics(q, qd, tau), dense) < AGREEMENT
    for name in ("K", "D", "B"):
        assert (
            _relative(
                np.array(recursive.numeric(getattr(recursive, name)).tolist(), float),
                np.array(closed.numeric(getattr(closed, name)).tolist(), float),
            )
            < AGREEMENT
        )


def test_expand_gives_the_closed_form_of_the_rigid_two_link_arm_exactly():
    """Spong, Hutchinson & Vidyasagar, Robot Modeling and Control (2006) §7.4: the closed
    derivation equals the textbook (tests/test_symbolic.py); the recursive form, expanded,
    equals the closed one exactly (sympy simplify of the difference is 0), and so does its C."""
    arm = rigid_two_link()
    recursive, closed = derive(arm, form="recursive"), derive(arm, form="closed")
    expanded = recursive.expand()
    assert expanded.intermediates is None
    for ours, theirs in ((expanded.M, closed.M), (expanded.h, closed.h), (expanded.G, closed.G)):
        assert (ours - theirs).applyfunc(sp.simplify) == sp.zeros(*ours.shape)
    assert (recursive.C - closed.C).applyfunc(lambda e: sp.simplify(recursive.closed(e))) == sp.zeros(2, 2)


def test_mdot_minus_2c_is_skew_through_the_intermediates():
    eom = derive(_everything_arm(), modes=1, form="recursive")
    n = len(eom.q)
    state = dict(zip(eom.q, RNG.normal(size=n), strict=True)) | dict(
        zip(eom.qd, RNG.normal(size=n), strict=True)
    )
    values = {s: v for s, v in eom.values.items()}
    M_dot = sum((eom.dM[k] * eom.qd[k] for k in range(n)), sp.zeros(n, n))
    N = M_dot - 2 * eom.C
    numbers = np.array(eom.closed(N).xreplace(values).xreplace(state).evalf().tolist(), dtype=float)
    assert np.max(np.abs(numbers + numbers.T)) < 1e-12 * np.max(np.abs(numbers))


def test_auto_form_and_refusals():
    assert derive(chain("rigid", 3)).intermediates is None  # closed up to three links
    assert derive(chain("rigid", 4)).intermediates is not None
    assert derive(azimuth_elevation(), form="auto").intermediates is None
    with pytest.raises(ValueError, match="form must be"):
        derive(chain("rigid", 2), form="fast")
    with pytest.raises(ValueError, match="planar arms only"):
        derive(azimuth_elevation(), form="recursive")


def _size(eom) -> int:
    """Operations of the generated M, h, G with the intermediates they need."""
    outputs = [eom.M, eom.h, eom.G]
    pairs = eom.intermediates.closure(outputs)
    return sum(sp.count_ops(e) for _, e in pairs) + sum(sp.count_ops(m) for m in outputs)


def test_expression_size_grows_at_most_quadratically_with_the_links():
    """M has n² entries, each a few named terms: doubling the links at most quadruples the size
    (the closed form grows combinatorially, about as n⁸)."""
    sizes = {n: _size(derive(chain("mixed", n), form="recursive")) for n in (5, 10)}
    assert sizes[10] < 4.5 * sizes[5], sizes


def test_latex_of_a_long_chain_prints_the_recursion():
    """One line per intermediate, each as long for 12 links as for 6 (a body's force, a link's
    kinematics), where the closed form's entries grow with the chain."""
    longest = {}
    for n in (6, 12):
        lines = derive(chain("mixed", n), form="recursive").latex().splitlines()
        assert any(line.startswith(f"F^{{h}}_{{{n - 1},2}} &= ") for line in lines)  # moment at joint n−1
        longest[n] = max(len(line) for line in lines)
    assert longest[12] < 1.1 * longest[6], longest


@pytest.mark.parametrize(
    "kind, n",
    [("rigid", 25), ("mixed", 16), pytest.param("flexible", 25, marks=pytest.mark.slow)],
)
def test_long_chains_agree_with_the_engine(kind, n):
    """M, h, G, tip, V, inverse dynamics and the generated articulated-body forward dynamics to
    1e-10 (measured ≤ 1.5e-12, docs/SYMBOLIC.md); the dense solve of the generated M
    (solver="composite") differs from the engine's articulated-body recursion by round-off times
    the condition of M: its forward error is bounded by 1e-15 κ(M)."""
    arm = chain(kind, n)
    eom = derive(arm, modes=2)
    assert eom.intermediates is not None and eom.forward is not None
    generated = eom.to_numeric()
    engine = AssumedModesModel(arm, modes=2)
    states = list(_states(engine, 2))
    for key, value in _agreement(generated, engine, states).items():
        assert value < AGREEMENT, (key, value)
    condition = max(np.linalg.cond(engine.mass_matrix(q)) for q, _, _ in states)
    dense = max(
        _relative(
            generated.forward_dynamics(q, qd, tau, solver="composite"), engine.forward_dynamics(q, qd, tau)
        )
        for q, qd, tau in states
    )
    assert dense < 1e-15 * condition, (dense, condition)


def test_generated_inverse_dynamics_recovers_the_joint_torques_of_a_rigid_chain():
    """The generated Newton–Euler pass (no M assembled) inverts the forward dynamics: every
    coordinate of a rigid chain is a joint, so τ = inverse(q, q̇, forward(q, q̇, τ))."""
    arm = chain("rigid", 8)
    eom = derive(arm)
    assert eom.inverse is not None and len(eom.qdd) == 8
    model = eom.to_numeric()
    for q, qd, tau in _states(model):
        qdd = model.forward_dynamics(q, qd, tau)
        assert _relative(model.inverse_dynamics(q, qd, qdd), tau) < AGREEMENT


@pytest.mark.slow
def test_compiled_articulated_bodies_agree_with_the_engine(tmp_path, monkeypatch):
    """to_numeric(compiled=True) of the recursive form: the numba module runs the generated
    articulated-body algorithm (the default solver) and the Cholesky composite one."""
    monkeypatch.setenv("FLEXLINK_SYMBOLIC_CACHE", str(tmp_path))
    arm = _everything_arm("slope")
    compiled = derive(arm, modes=2, form="recursive").to_numeric(compiled=True)
    engine = AssumedModesModel(arm, modes=2)
    for q, qd, tau in _states(engine):
        expected = engine.forward_dynamics(q, qd, tau)
        assert _relative(compiled.forward_dynamics(q, qd, tau), expected) < AGREEMENT
        assert _relative(compiled.forward_dynamics(q, qd, tau, solver="composite"), expected) < AGREEMENT
