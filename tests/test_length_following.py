"""Translating links whose clamped–mass shapes follow the free length (Theodore & Ghosal (1997)).

A beam sliding through its hub with a tip load has the ratios μ(l) = M/(ρA l),
j(l) = J/(ρA l³), so the roots β_k(l) of its frequency equation move with l. With
``tracker`` ``"root"``, ``"table"`` or ``"ode"`` the assumed-modes shapes follow them
(:mod:`shapes.following`); ``"frozen"`` keeps those of one reference length.

References
----------
* Exact locked frequencies at every free length: ω_k = β_k(l)² √(EI/(ρA l⁴)) with the
  roots of ``shapes.ClampedMass(M/(ρA l), J/(ρA l³))`` (Wittrick–Williams bracketing
  and Brent, tests/test_shapes_roots.py), M and J the distal load of the link.
* The kinetic energy, Ṁ − 2C skew-symmetry and the potential gradients of these shapes
  are checked against independent quadratures and differences in
  tests/test_translating.py (variant ``amm-following``).
"""

from __future__ import annotations

import numpy as np
import pytest

import shapes
from amm import AssumedModesModel
from core import simulate
from core.arm.loads import distal_load
from core.arm.presets import rrp_translating

ARM = rrp_translating()
BEAM = ARM.links[2]


def exact(l: float, n: int) -> np.ndarray:
    """ω_k of the rrp arm's beam clamped at free length l with its distal load."""
    q = ARM.home()
    q[2] = l
    mass, inertia = distal_load(ARM, 3, q)
    rho = BEAM.mass_per_length
    family = shapes.ClampedMass(mass / (rho * l), inertia / (rho * l**3))
    return family.frequencies(n, EI=BEAM.EI, mass_per_length=rho, length=l)


@pytest.mark.parametrize("tracker", ["root", "ode"])
@pytest.mark.parametrize("l", [0.3, 0.55, 0.9, 1.3])
def test_locked_frequencies_are_the_exact_roots_at_every_free_length(tracker, l):
    """Joints locked, the free part is a clamped–mass cantilever whose exact modes the
    following shapes are at every l: the lowest frequencies in both bending planes equal
    the exact ones to 1e-10 relative (measured ≤ 2e-15). Frozen shapes (chosen at the
    full length 1.3 m) are only a Ritz basis away from it (measured 1e-3 at 0.35 m):
    the test also asserts that they are off, so it cannot pass by not following."""
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker=tracker)
    q = model.home()
    q[2] = l
    omega = model.natural_frequencies(q)
    reference = exact(l, 2)
    np.testing.assert_allclose(omega[0::2], reference, rtol=1e-10)  # in-plane
    np.testing.assert_allclose(omega[1::2], reference, rtol=1e-10)  # out-of-plane (same EI)
    if l < 1.0:
        frozen = AssumedModesModel(ARM, shape="clamped-mass", modes=2).natural_frequencies(q)
        assert np.max(np.abs(frozen[0::2] / reference - 1)) > 1e-6


def test_table_tracker_frequencies_are_within_the_table_error():
    """The ``"table"`` tracker interpolates the roots (cubic Hermite on 64 lengths over a
    tenth of the beam to all of it): ω = β²·const, so the relative frequency error is
    twice the relative root error, bounded by the tracker's measured table error."""
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker="table")
    follow = model.bodies[3].following
    bound = 2 * follow.table_error() / np.min(follow.exact_roots(0.3))
    for l in (0.3, 0.55, 0.9):
        q = model.home()
        q[2] = l
        np.testing.assert_allclose(model.natural_frequencies(q)[0::2], exact(l, 2), rtol=max(bound, 1e-12))


def test_stiffness_follows_the_roots():
    """With orthonormal exact modes K(l) = EI diag(β_k(l)⁴)/l³ (∫ψ''ψ'' = β⁴ in the tip-mass
    inner product), so the l-row of the elastic forces ½ δᵀ(∂K/∂l)δ has
    ∂K/∂l = EI diag(4β³β' l − 3β⁴)/l⁴, with β' from the implicit derivative of the
    frequency equation (shapes.beta_ode.BetaODE.dbeta_dlength): 1e-9 relative (measured
    1e-13). Seed 002's eq. (43) keeps the shapes frozen and so has only the −3β⁴ part
    (and an extra term that integrates to it; docs/TRANSLATING.md)."""
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker="root")
    follow = model.bodies[3].following
    l = 0.65
    q = model.home()
    q[2] = l
    beta = follow.exact_roots(l)
    slope = shapes.BetaODE(*distal_load(ARM, 3, q), BEAM.mass_per_length, l).dbeta_dlength(2)
    K = model.stiffness_matrix(q)[model.flex, model.flex]
    # coordinates w3_1, w3_2 (in-plane), v3_1, v3_2 (out-of-plane)
    np.testing.assert_allclose(np.diag(K), np.tile(BEAM.EI * beta**4 / l**3, 2), rtol=1e-12)
    dK = BEAM.EI * (4 * beta**3 * slope * l - 3 * beta**4) / l**4
    rng = np.random.default_rng(4)
    delta = 1e-3 * rng.standard_normal(4)
    q[model.flex] = delta
    expected = 0.5 * (delta[:2] ** 2 @ dK + delta[2:] ** 2 @ dK)
    assert model.elastic_forces(q)[2] == pytest.approx(expected, rel=1e-9)


def _sliding(tracker: str):
    """Free motion of the rrp arm: no input, damping or friction; the beam slides out at
    ~1 m/s under its initial rate and the centrifugal pull, deflected."""
    model = AssumedModesModel(ARM, shape="clamped-mass", modes=1, tracker=tracker)
    q0 = model.home()
    q0[:3] = [0.0, -1.2, 0.5]
    q0[model.flex] = [2e-4, -1e-4]
    qd0 = np.zeros(model.n_dof)
    qd0[:3] = [1.5, 0.4, 1.0]
    frame = simulate(
        model, (0.0, 0.1), q0, qd0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 0.1, 21)
    )
    return model, frame


@pytest.mark.parametrize("tracker", ["root", "ode"])
def test_energy_is_conserved_while_shapes_follow_the_sliding_length(tracker):
    """T + V constant to 1e-8 relative over 0.1 s while l grows from 0.5 m by ~0.1 m
    (measured 1.1e-12 root, 7.2e-13 ode, DOP853 at rtol 1e-10): the l̇ terms of the
    following shapes (the change of ψ with β(l), μ(l), j(l)) enter M and K(l) consistently.
    With ``"ode"`` the roots are integrated with the motion (auxiliary states ``beta3_1``)
    and must stay on the exact roots of the current length (1e-8, the integration
    tolerance's reach; measured 1.1e-15)."""
    model, frame = _sliding(tracker)
    l = frame["d3"].to_numpy()
    assert l.max() - l.min() > 0.09
    energy = frame["energy"].to_numpy()
    assert np.max(np.abs(energy - energy[0])) <= 1e-8 * abs(energy[0])
    if tracker == "ode":
        follow = model.bodies[3].following
        roots = np.array([follow.exact_roots(x)[0] for x in l])
        np.testing.assert_allclose(frame["beta3_1"].to_numpy(), roots, rtol=1e-8)


def test_ode_and_root_trackers_give_the_same_motion():
    """The roots integrated with the state and the roots solved at every evaluation are
    the same functions of l up to the integration tolerance: the two simulations agree
    to 1e-7 of the deflection scale (measured ~1e-10)."""
    columns = ["d3", "w3_1", "v3_1"]
    _, root = _sliding("root")
    _, ode = _sliding("ode")
    scale = np.max(np.abs(root[columns].to_numpy()), axis=0)
    difference = np.max(np.abs(root[columns].to_numpy() - ode[columns].to_numpy()), axis=0)
    assert np.all(difference <= 1e-7 * scale)


def test_tracker_choice_is_validated():
    with pytest.raises(ValueError, match="tracker"):
        AssumedModesModel(ARM, shape="clamped-mass", modes=2, tracker="newton")
    model = AssumedModesModel(ARM, shapes={3: ("beta-ode", 2)})
    assert model.trackers == {3: "ode"}
    assert model.auxiliary_names == ("beta3_1", "beta3_2")
