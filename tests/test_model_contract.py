"""The Model contract callers rely on: ``arm`` and ``rebuild(arm)``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from amm import AssumedModesModel
from core import ChainModel, Payload
from core.arm.presets import lumped_two_link, rigid_two_link
from fem import FiniteElementModel

BUILDERS = {
    "amm clamped-mass": lambda arm: AssumedModesModel(arm, shape="clamped-mass", modes=3),
    "amm per-link": lambda arm: AssumedModesModel(
        arm, shapes={1: ("pinned-pinned", 2), 2: ("clamped-free", 3)}
    ),
    "fem graded": lambda arm: FiniteElementModel(arm, elements={2: 6}, frame="pinned", grading=0.8),
}


@pytest.mark.parametrize("name", BUILDERS)
def test_rebuild_on_the_same_arm_gives_identical_matrices(name):
    arm = lumped_two_link()
    model = BUILDERS[name](arm)
    again = model.rebuild(arm)
    assert type(again) is type(model) and again is not model and again.arm is arm
    assert again.coordinates == model.coordinates
    q = model.home()
    q[:2] = 0.4, -0.7
    q[2:] = 1e-3 * np.arange(1, model.n_dof - 1)
    for method in ("mass_matrix", "stiffness_matrix", "gravity_forces", "damping_matrix"):
        np.testing.assert_array_equal(getattr(again, method)(q), getattr(model, method)(q))


@pytest.mark.parametrize("name", BUILDERS)
def test_rebuild_on_another_arm_equals_a_fresh_model_of_that_arm(name):
    """A heavier payload: the rebuilt model is the fresh one (clamped-mass ratios recomputed)."""
    arm = lumped_two_link()
    heavier = dataclasses.replace(arm, payload=Payload(1.5))
    rebuilt = BUILDERS[name](arm).rebuild(heavier)
    fresh = BUILDERS[name](heavier)
    q = fresh.home()
    q[:2] = 0.4, -0.7
    np.testing.assert_array_equal(rebuilt.mass_matrix(q), fresh.mass_matrix(q))
    assert not np.allclose(rebuilt.mass_matrix(q), BUILDERS[name](arm).mass_matrix(q))


def test_plain_chain_model_rebuild_keeps_its_bases_and_options():
    model = ChainModel(rigid_two_link(), {}, coulomb="sign", coulomb_velocity=0.5)
    again = model.rebuild(dataclasses.replace(rigid_two_link(), gravity=(0.0, 0.0, 0.0)))
    assert again.coulomb == "sign" and again.coulomb_velocity == 0.5
    assert not np.any(again.gravity_forces(np.array([0.3, 0.2])))


@pytest.mark.parametrize("name", BUILDERS)
def test_arguments_are_recorded_once_as_given(name):
    """The base records the outermost constructor call; a backend's super().__init__ adds
    nothing (its bases and description are derived, not arguments)."""
    model = BUILDERS[name](lumped_two_link())
    arguments = model.arguments
    assert "bases" not in arguments and "description" not in arguments
    assert arguments["arm"] is model.arm
    arguments["arm"] = None  # a copy: the model's record is untouched
    assert model.arguments["arm"] is model.arm


def test_replace_changes_one_argument_and_keeps_the_others():
    arm = lumped_two_link()
    model = AssumedModesModel(arm, shape="clamped-mass", modes=2, coulomb="sign", compiled=False)
    finer = model.replace(modes=3)
    assert finer.n_dof == model.n_dof + 2 and finer.coulomb == "sign" and finer.compiled is None
    assert finer.arguments == {**model.arguments, "modes": 3}
    compiled = model.replace(compiled=True)
    q = model.home()
    q[:2] = 0.4, -0.7
    np.testing.assert_allclose(compiled.mass_matrix(q), model.mass_matrix(q), rtol=1e-13, atol=1e-15)
    with pytest.raises(TypeError, match="takes no argument 'mode'"):
        FiniteElementModel(arm, elements=2).replace(mode=3)
    plain = ChainModel(rigid_two_link(), {}, coulomb_velocity=0.5)
    with pytest.raises(TypeError, match="takes no argument 'modes'"):
        plain.replace(modes=3)
