"""core.numerics.validation: every check names where the value sits, the field and the value."""

from __future__ import annotations

import numpy as np
import pytest

import fem
import shapes
from core import Link
from core.numerics import validation
from core.numerics.validation import InputError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: validation.finite("x", "link 2", "length"), "link 2: length must be a real number, got 'x'"),
        (lambda: validation.finite(True, "", "EI"), "EI must be a real number, got True"),
        (lambda: validation.finite(np.inf, "joint 1", "d"), "joint 1: d must be finite, got inf"),
        (lambda: validation.finite(10**400, "", "a"), "a must be finite, got inf"),
        (lambda: validation.positive(-0.3, "link 2", "length"), "link 2: length must be > 0, got -0.3"),
        (lambda: validation.positive(0, "", "EI"), "EI must be > 0, got 0.0"),
        (lambda: validation.nonnegative(-1, "payload", "mass"), "payload: mass must be >= 0, got -1.0"),
        (lambda: validation.integer(2.0, "", "n"), "n must be an integer, got 2.0"),
        (lambda: validation.integer(True, "", "n"), "n must be an integer, got True"),
        (
            lambda: validation.integer(0, "shapes[1]", "modes", minimum=1),
            r"shapes\[1\]: modes must be an integer >= 1, got 0",
        ),
        (
            lambda: validation.vector3([1, 2], "arm", "gravity"),
            r"arm: gravity must be a finite 3-vector, got \[1, 2\]",
        ),
        (lambda: validation.one_of("x", ("a", "b"), "arm", "kind"), "arm: kind must be 'a' or 'b', got 'x'"),
        (
            lambda: validation.inertia([[1, 2, 0], [0, 1, 0], [0, 0, 1]], "payload", "inertia"),
            "payload: inertia must be symmetric",
        ),
        (
            lambda: validation.inertia(np.diag([1.0, -1.0, 1.0]), "", "inertia"),
            r"inertia must be positive semi-definite \(smallest eigenvalue -1\)",
        ),
        (lambda: validation.finite_array([1, np.nan], "", "q"), r"q must be finite, got \[1, nan\]"),
        (
            lambda: validation.finite_array([1, -2], "", "gains", nonnegative=True),
            r"gains must be >= 0, got \[1, -2\]",
        ),
    ],
)
def test_messages_name_subject_field_and_value(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_located_relabels_the_subject_and_prefixes_the_field():
    with pytest.raises(InputError) as info, validation.located("link 3", "damping"):
        validation.nonnegative(-2, "damping", "alpha")
    assert str(info.value) == "link 3: damping.alpha must be >= 0, got -2.0"
    assert (info.value.subject, info.value.detail) == ("link 3", "damping.alpha must be >= 0, got -2.0")


def test_public_error_type_from_every_package():
    """Errors from core, shapes and fem are the one public InputError (a ValueError)."""
    for call in (
        lambda: Link.flexible(1.0, 1.0, EI=-1.0),
        lambda: shapes.ClampedMass(-1.0),
        lambda: fem.uniform_mesh(1.0, 0),
        lambda: fem.beam_frequencies(1.0, 1.0, np.nan, 4),
    ):
        with pytest.raises(InputError):
            call()
    assert issubclass(InputError, ValueError)


def test_from_dict_with_a_path_locates_field_errors():
    data = {
        "kind": "flexible",
        "length": 1.0,
        "mass_per_length": 1.0,
        "EI": 1.0,
        "damping": {"kind": "modal", "ratios": [-0.1]},
    }
    with pytest.raises(InputError, match=r"^arm\.links\[2\]: damping\.ratios\[1\] must be >= 0, got -0\.1$"):
        Link.from_dict(data, "arm.links[2]")
    with pytest.raises(InputError, match=r"^link: damping\.ratios\[1\] must be >= 0, got -0\.1$"):
        Link.from_dict(data)
    with pytest.raises(ValueError, match=r"^arm\.links\[2\]\.EJ: unknown field"):
        Link.from_dict({**data, "EJ": 1.0}, "arm.links[2]")
