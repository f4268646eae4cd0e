"""Hypothesis property suite of the engine, for both backends, over random arms and states."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amm import AssumedModesModel
from tests.strategies import mass_rate_by_differences, models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


@BACKENDS
@given(data=st.data())
@settings(max_examples=40)
def test_mass_matrix_is_symmetric_positive_definite(backend, data):
    model = data.draw(models(backend))
    q, _ = data.draw(states(model))
    M = model.mass_matrix(q)
    assert np.max(np.abs(M - M.T)) <= 1e-13 * np.max(np.abs(M))
    assert np.linalg.eigvalsh(M)[0] > 0


@BACKENDS
@given(data=st.data())
@settings(max_examples=40)
def test_stiffness_is_symmetric_positive_semidefinite(backend, data):
    model = data.draw(models(backend))
    q, _ = data.draw(states(model))  # K depends on q only through translating free lengths
    K = model.stiffness_matrix(q)
    assert np.array_equal(K, K.T)
    eigenvalues = np.linalg.eigvalsh(K)
    assert eigenvalues[0] >= -1e-12 * max(eigenvalues[-1], 1.0)
    # The joint rows and columns carry no elastic stiffness.
    assert not np.any(K[model.joints]) and not np.any(K[:, model.joints])


@BACKENDS
@given(data=st.data())
@settings(max_examples=40)
def test_mass_rate_minus_twice_coriolis_is_skew(backend, data):
    """Ṁ − 2C skew-symmetric; Ṁ from central differences of M, C from the model.

    Tolerance: the O(h²) truncation and O(ε/h) round-off of the central
    difference with h = 1e-6, i.e. ~1e-8 of ‖M‖‖q̇‖.
    """
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    S = mass_rate_by_differences(model, q, qd) - 2 * model.coriolis_matrix(q, qd)
    scale = np.max(np.abs(model.mass_matrix(q))) * np.max(np.abs(qd))
    assert np.max(np.abs(S + S.T)) <= 1e-7 * scale
    # And the complex-step Ṁ agrees with the differences.
    dM = model.mass_matrix_derivatives(q)
    assert np.max(np.abs(np.tensordot(qd, dM, 1) - mass_rate_by_differences(model, q, qd))) <= 1e-7 * scale


@given(data=st.data(), extra=st.integers(1, 3))
@settings(max_examples=25)
def test_fewer_modes_give_the_leading_block(data, extra):
    """M, K of the n-mode model are the corresponding sub-blocks of the (n+k)-mode model."""
    model = data.draw(models("amm", max_modes=2))
    bigger = AssumedModesModel(
        model.arm,
        shapes={k: (name, count + extra, params) for k, (name, count, params) in model.choices.items()},
    )
    index = [bigger.coordinates.index(name) for name in model.coordinates]
    q_small, _ = data.draw(states(model))
    q_big = np.zeros(bigger.n_dof)
    q_big[index] = q_small
    M, M_big = model.mass_matrix(q_small), bigger.mass_matrix(q_big)
    np.testing.assert_allclose(M_big[np.ix_(index, index)], M, rtol=0, atol=1e-12 * np.max(np.abs(M)))
    K, K_big = model.stiffness_matrix(q_small), bigger.stiffness_matrix(q_big)
    np.testing.assert_allclose(K_big[np.ix_(index, index)], K, rtol=0, atol=1e-12 * np.max(np.abs(K)))


@BACKENDS
@given(data=st.data())
@settings(max_examples=30)
def test_linearized_frequencies_are_real_and_non_negative(backend, data):
    """Without gravity, at rest and undeformed (an equilibrium for any joint angles):
    natural frequencies ≥ 0 and the linearization's eigenvalues are ±iω."""
    model = data.draw(models(backend, max_links=3))
    if np.any(model.arm.gravity):
        model = rebuild_without_gravity(model)
    q, _ = data.draw(states(model))
    q[model.flex] = 0.0
    for joints in ("locked", "free"):
        omega = model.natural_frequencies(q, joints)
        assert np.all(omega >= 0)
    A, _ = model.linearize(q)
    eigenvalues = np.linalg.eigvals(A)
    scale = max(np.max(np.abs(eigenvalues)), 1.0)
    assert np.max(np.abs(eigenvalues.real)) <= 1e-6 * scale


def rebuild_without_gravity(model):
    return model.rebuild(dataclasses.replace(model.arm, gravity=(0.0, 0.0, 0.0)))


def test_bias_forces_of_tiny_rates_scale_quadratically():
    """C q̇ is quadratic in q̇: rates of 1e-150 give 1e-300 times the unit-rate forces
    (the complex step runs along q̇/max|q̇|; along q̇ itself the products underflowed,
    found by a random hypothesis run)."""
    from amm import AssumedModesModel
    from core.arm.presets import lumped_two_link

    model = AssumedModesModel(lumped_two_link(), shape="pinned-pinned", modes=2)
    q = model.home()
    q[:2] = 0.4, -0.9
    q[2:] = 1e-3
    qd = np.linspace(-1.0, 1.0, model.n_dof)
    np.testing.assert_allclose(
        model.bias_forces(q, 1e-150 * qd), 1e-300 * model.bias_forces(q, qd), rtol=1e-12
    )
