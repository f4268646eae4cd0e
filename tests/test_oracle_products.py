"""The numpy engine's products with a body's Jacobian (core.dynamics.oracle): Jᵀ w formed
without J equals the product with J formed, on planar, spatial, stiffened and translating
arms, real and complex (the complex steps of the gravity stiffness)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amm import AssumedModesModel
from core.arm import presets
from core.dynamics import oracle
from fem import FiniteElementModel
from tests.strategies import everything_arm, models

FIXED = {
    "rrp-amm": lambda: AssumedModesModel(presets.rrp_translating(), modes=2),
    "rrp-fem": lambda: FiniteElementModel(presets.rrp_translating(), elements=2),
    "everything-stiffened": lambda: FiniteElementModel(
        everything_arm(), elements=2, geometric_stiffening=True
    ),
}


def check(model, seed: int) -> None:
    """Jᵀ w by :func:`oracle.body_jacobian_transpose` against J formed, for a batch of three
    complex configurations and wrenches: equal to 1e-13 of the product's terms (round-off of
    the two summation orders)."""
    rng = np.random.default_rng(seed)
    q = (
        model.home()[None]
        + 0.1 * rng.normal(size=(3, model.n_dof))
        + 1e-3j * rng.normal(size=(3, model.n_dof))
    )
    if model.translating:
        for number in model.translating:
            length = model.arm.links[number - 1].length
            q[:, number - 1] = length * (0.4 + 0.5 * rng.random(3))  # free lengths inside the link
    frames = model.kinematics.frames(q)
    for number in model.bodies:
        f = frames[number - 1]
        J = oracle.body_jacobian(model, f, number, complex)
        wrench = rng.normal(size=J.shape[:2]) + 1j * rng.normal(size=J.shape[:2])
        formed = np.einsum("bkn,bk->bn", J, wrench)
        scale = np.einsum("bkn,bk->bn", np.abs(J), np.abs(wrench)).max()
        np.testing.assert_allclose(
            oracle.body_jacobian_transpose(model, f, number, wrench), formed, rtol=0, atol=1e-13 * scale
        )


@pytest.mark.parametrize("name", sorted(FIXED))
def test_transpose_product_equals_the_formed_jacobian(name):
    check(FIXED[name](), 0)


@pytest.mark.parametrize("backend", ["amm", "fem"])
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_transpose_product_on_drawn_arms(backend, data):
    check(data.draw(models(backend, tilted=True)), data.draw(st.integers(0, 2**16)))
