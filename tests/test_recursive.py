"""Dynamics without ∂M/∂q (core.newton_euler) and the recursive solver, against the Christoffel oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from amm import AssumedModesModel
from core import presets
from tests.strategies import models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


@BACKENDS
@given(data=st.data())
def test_bias_forces_equal_christoffel_coriolis(backend, data):
    """h = C(q, q̇) q̇ body by body equals C from the complex-step ∂M/∂q (the oracle).

    Both are exact to round-off; measured worst 4.6e-16 of ‖M‖ |q̇|² over 150
    random arms of both backends, tolerance 1e-14.
    """
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    h = model.bias_forces(q, qd)
    oracle = model.coriolis_matrix(q, qd) @ qd
    scale = np.max(np.abs(model.mass_matrix(q))) * (qd @ qd)
    assert np.max(np.abs(h - oracle)) <= 1e-14 * scale


@BACKENDS
@given(data=st.data())
def test_mass_matrix_and_gravity_without_derivative_batch(backend, data):
    """M and G from one real pass (and from the complex pass of bias_forces) equal
    row 0 of the derivative batch; measured differences ≤ 2 ulp, tolerance 1e-14."""
    model = data.draw(models(backend))
    q, qd = data.draw(states(model))
    M_batch, _, G_batch = model._terms_from_bytes(q.tobytes())
    for first in ("real", "complex"):
        model._real_cache.clear()
        if first == "complex":
            model.bias_forces(q, qd)
        M, G = model.mass_matrix(q), model.gravity_forces(q)
        assert np.max(np.abs(M - M_batch)) <= 1e-14 * np.max(np.abs(M_batch))
        assert np.max(np.abs(G - G_batch)) <= 1e-14 * max(np.max(np.abs(G_batch)), 1.0)


def test_bias_forces_are_quadratic_in_the_rates():
    """h(q, 2q̇) = 4 h(q, q̇) and h(q, 0) = 0 on the space arm (15 DOF); measured
    differences ~1e-15 relative, tolerance 1e-13."""
    model = AssumedModesModel(presets.space_arm_3link(), modes=2)
    rng = np.random.default_rng(3)
    q = model.home() + 0.01 * rng.standard_normal(model.n_dof)
    qd = rng.standard_normal(model.n_dof)
    h = model.bias_forces(q, qd)
    assert np.max(np.abs(model.bias_forces(q, 2 * qd) - 4 * h)) <= 1e-13 * np.max(np.abs(4 * h))
    assert not np.any(model.bias_forces(q, 0 * qd))
