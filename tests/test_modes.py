"""Mode shapes as fields, MAC, pairing and tracking (core.analysis.modes)."""

from __future__ import annotations

import numpy as np
import pytest

from amm import AssumedModesModel
from core import Arm, Link, Payload
from core.analysis.modes import ModeFields, mac, mode_fields, pair_modes, track_modes
from core.arm.presets import lumped_two_link
from fem import FiniteElementModel


def test_mode_vectors_are_mass_normalized_eigenvectors_of_the_locked_problem():
    """(K − ω²M) v lies in the span of the joint constraint (its projection on the
    null space N of Bᵀ vanishes) and vᵀ M v = 1; measured residual ~1e-13."""
    model = AssumedModesModel(lumped_two_link(), shape="clamped-mass", modes=3)
    q = model.home()
    q[:2] = 0.7, -0.4
    omega, modes = model.natural_frequencies(q, "locked", vectors=True)
    M, K = model.mass_matrix(q), model.elastic_stiffness(q) + model.gravity_stiffness(q)
    B = model.input_matrix(q)
    N = np.vstack([-B[model.flex].T, np.eye(model.n_dof - model.n_joints)])
    residual = N.T @ (K @ modes - M @ modes * omega**2)
    assert np.max(np.abs(residual)) <= 1e-10 * np.max(np.abs(K @ modes))
    np.testing.assert_allclose(np.einsum("ik,ij,jk->k", modes, M, modes), 1.0, rtol=1e-12)
    np.testing.assert_allclose(B.T @ modes, 0.0, atol=1e-14)  # the actuated coordinates are held


def test_mac_is_one_for_the_same_shape_and_zero_for_orthogonal_ones():
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.1, 1.0, 30)
    a = rng.standard_normal((30, 3, 1))
    b = rng.standard_normal((30, 3, 1))
    # W-orthogonalize b against a.
    b -= a * np.einsum("p,pik,pik->", weights, a, b) / np.einsum("p,pik,pik->", weights, a, a)
    assert mac(a, a, weights)[0, 0] == pytest.approx(1.0, rel=1e-14)
    assert mac(a, -3.7 * a, weights)[0, 0] == pytest.approx(1.0, rel=1e-14)  # sign and scale
    assert mac(a, b, weights)[0, 0] == pytest.approx(0.0, abs=1e-28)


def test_amm_exact_modes_and_fine_fem_have_the_same_shapes():
    """One clamped-mass link, joints locked: clamped-mass shapes are the exact modes,
    FEM with 64 elements converges to them; MAC > 0.9999 for the first 5 modes
    (measured 1 − MAC ≤ 7.6e-13, largest for mode 5) and the pairing is the identity."""
    arm = Arm.planar([Link.flexible(1.2, 0.8, 15.0)], payload=Payload(0.5, 0.02))
    amm = mode_fields(AssumedModesModel(arm, shape="clamped-mass", modes=6), count=5)
    fem = mode_fields(FiniteElementModel(arm, elements=64), count=5)
    values = mac(amm.fields, fem.fields, amm.weights)
    paired, best = pair_modes(values)
    np.testing.assert_array_equal(paired, np.arange(5))
    assert np.all(best > 0.9999), best
    np.testing.assert_allclose(fem.omega, amm.omega, rtol=1e-6)


def test_a_crossing_is_tracked_where_frequency_order_swaps():
    """Two uncoupled shapes: A at a constant frequency, B whose frequency rises through
    A's along the sweep. Sorting by frequency swaps them at the crossing; tracking by
    MAC keeps A as A."""
    P = 20
    weights = np.ones(P)
    s = np.linspace(0, 1, P)
    shape_a = np.zeros((P, 3))
    shape_a[:, 1] = np.sin(np.pi * s)
    shape_b = np.zeros((P, 3))
    shape_b[:, 2] = np.sin(2 * np.pi * s)  # out of plane: W-orthogonal to A
    steps = []
    for omega_b in (5.0, 8.0, 12.0, 15.0):
        omega = np.array([10.0, omega_b])
        fields = np.stack([shape_a, shape_b], axis=-1)
        order = np.argsort(omega)  # what a solver returns: ascending frequencies
        steps.append(ModeFields(omega[order], fields[..., order], weights, np.ones(P, int), s))
    tracked = track_modes(steps)
    # Mode A started as index 1 (B was lower); after the crossing it is index 0.
    np.testing.assert_array_equal(tracked[:, 1], [1, 1, 0, 0])
    np.testing.assert_array_equal(tracked[:, 0], [0, 0, 1, 1])
    assert [step.omega[i] for step, i in zip(steps, tracked[:, 1], strict=True)] == [10.0] * 4


def test_grid_positions_are_point_position_in_one_batch():
    """Model.point_positions over a batch of configurations and points (what core.analysis.modes
    differentiates) equals point_position one configuration and one point at a time (itself
    checked against the engine's inertia integrals by the kinetic-energy tests), for both
    backends on every preset with a flexible link (planar, spatial, translating), at perturbed
    joint and flexible coordinates; tolerance 1e-13 m (round-off of the einsum order)."""
    from core.analysis.modes import grid, grid_positions
    from core.arm.presets import PRESETS

    rng = np.random.default_rng(3)
    for name, make in PRESETS.items():
        arm = make()
        if not arm.flexible_links:
            continue
        for model in (
            AssumedModesModel(arm, shape="clamped-mass", modes=3),
            FiniteElementModel(arm, elements=3),
        ):
            q = model.home()
            q[model.n_joints :] = 0.01 * rng.standard_normal(model.n_dof - model.n_joints)
            for number in range(1, arm.n_joints + 1):
                q[number - 1] = 0.7 if number in arm.translating_links else rng.uniform(-1, 1)
            links, s, _ = grid(model, q, 7)
            batch = np.stack([q, q + 0.01 * rng.standard_normal(model.n_dof)])
            for number in arm.translating_links:
                batch[:, number - 1] = 0.7, 0.72  # the grid spans 0 … 0.7 m
            got = grid_positions(model, links, s, batch)
            want = [
                [model.point_position(int(k), float(x), row) for k, x in zip(links, s, strict=True)]
                for row in batch
            ]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13, err_msg=name)


def test_link_axes_compare_shapes_where_base_axes_see_the_arm_turn():
    """One flexible link, joint locked, at θ = 0 and θ = 0.3 rad: the same modes, turned with
    the link. In link axes their MAC is 1; in base axes every displacement is turned by
    0.3 rad in the plane, so the MAC is cos²(0.3) = 0.9127 (exactly, to round-off)."""
    arm = Arm.planar([Link.flexible(1.2, 0.8, 15.0)], payload=Payload(0.5, 0.02))
    model = AssumedModesModel(arm, shape="clamped-mass", modes=4)
    turned = model.home()
    turned[0] = 0.3
    for axes, expected in (("link", 1.0), ("base", np.cos(0.3) ** 2)):
        a = mode_fields(model, model.home(), count=3, axes=axes)
        b = mode_fields(model, turned, count=3, axes=axes)
        np.testing.assert_allclose(np.diag(mac(a.fields, b.fields, a.weights)), expected, rtol=1e-9)
    with pytest.raises(ValueError, match="axes must be 'base' or 'link', got 'body'"):
        mode_fields(model, axes="body")


def test_two_uncoupled_beams_are_tracked_through_their_crossings():
    """Beam A (1 m) and beam B, whose length L_B goes from 1.3 m to 0.3 m, both clamped-free
    (exact modes: AMM clamped-free, joint locked), uncoupled: one field set on both grids,
    each mode zero on the other beam's points, sorted by frequency as a solver returns them.
    B's frequencies rise as β_k² √(EI/ρA) / L_B² through A's constant ones (B1 crosses A1 at
    L_B = 1 m and A2 at L_B = β₁/β₂ = 0.399 m); sorting swaps them, tracking keeps every
    branch: each tracked mode's frequency is its own beam's at every step (to 1e-12,
    measured 2.3e-15; at L_B = 1 m, B1 and A1 coincide), and tracking_mac stays 1 (measured 1 − 9e-16: each beam's shapes, scaled
    with its length, sampled at the same relative points)."""
    from core.analysis.modes import tracking_mac

    EI, rho, count = 15.0, 0.8, 3
    beam_a = mode_fields(
        AssumedModesModel(Arm.planar([Link.flexible(1.0, rho, EI)]), modes=count), count=count
    )
    steps, lengths = [], np.linspace(1.3, 0.3, 21)
    for length in lengths:
        beam_b = mode_fields(
            AssumedModesModel(Arm.planar([Link.flexible(length, rho, EI)]), modes=count), count=count
        )
        P = beam_a.s.size
        fields = np.zeros((2 * P, 3, 2 * count))
        fields[:P, :, :count] = beam_a.fields
        fields[P:, :, count:] = beam_b.fields
        omega = np.concatenate([beam_a.omega, beam_b.omega])
        order = np.argsort(omega, kind="stable")
        steps.append(
            ModeFields(
                omega[order],
                fields[..., order],
                np.concatenate([beam_a.weights, beam_b.weights]),
                np.concatenate([np.full(P, 1), np.full(P, 2)]),
                np.concatenate([beam_a.s, beam_b.s]),
            )
        )
    tracked = track_modes(steps)
    roots = np.array([1.8751040687119611, 4.6940911329741745, 7.8547574382376126])  # 1 + cos β cosh β = 0
    branches = [roots[k] ** 2 * np.sqrt(EI / rho) * np.ones_like(lengths) for k in range(count)]
    branches += [roots[k] ** 2 * np.sqrt(EI / rho) / lengths**2 for k in range(count)]
    first = steps[0].omega  # the identities: the first step's frequency order
    for identity in range(2 * count):
        along = np.array([step.omega[i] for step, i in zip(steps, tracked[:, identity], strict=True)])
        branch = min(branches, key=lambda b: abs(b[0] - first[identity]))
        np.testing.assert_allclose(along, branch, rtol=1e-12)
    # B1 (lowest at L_B = 1.3 m) climbs past A1 and then A2 in frequency order; A1 drops to first
    np.testing.assert_array_equal(np.unique(tracked[:, 0]), [0, 1, 2])
    assert (np.diff(tracked[:, 0]) >= 0).all() and tracked[-1, 1] == 0
    values = tracking_mac(steps, tracked)
    assert np.isnan(values[0]).all()
    np.testing.assert_allclose(values[1:], 1.0, rtol=1e-9)
