"""Input validation, in one place for ``core``, ``shapes`` and ``fem``.

Every check raises :class:`InputError` (a :class:`ValueError`) whose message
names where the value sits, the field and the value::

    link 2: length must be > 0, got -0.3          (subject "link 2", field "length")
    EI must be > 0, got -1.0                      (no subject: a standalone function's argument)

The checks take ``(value, subject, name)`` and return the value in canonical
form (a float, a tuple); ``subject`` may be ``""``. :func:`located` relabels
the subject of errors raised inside it (an :class:`~core.arm.Arm` knows the
index of a link that a :class:`~core.arm.Link` does not).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

Tensor3 = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
"""A 3x3 inertia tensor stored as a tuple of rows, so a dataclass holding it stays hashable."""

# Inertia tensors typed in by hand are exactly symmetric, but tensors computed
# elsewhere (rotated, summed) carry rounding: accept asymmetry and negative
# eigenvalues up to this fraction of the largest entry.
TENSOR_RTOL = 1e-12


class InputError(ValueError):
    """An invalid input value, with the message ``"<subject>: <detail>"`` (or ``detail`` alone).

    ``subject`` says what the value belongs to (``"link"``, ``"joint 2"``) and
    ``detail`` names the field and the value. They are kept apart so that a
    caller that knows more (the index of a link inside an arm) can relabel the
    subject without parsing the message.
    """

    def __init__(self, subject: str, detail: str) -> None:
        super().__init__(f"{subject}: {detail}" if subject else detail)
        self.subject = subject
        self.detail = detail


@contextmanager
def located(subject: str, field_name: str = "") -> Iterator[None]:
    """Re-raise field errors of the enclosed construction as part of ``subject``.

    ``field_name`` (e.g. ``"lumped_masses[1]"``) is prefixed to the detail so
    the message keeps naming the offending field from the outer object's view.
    """
    try:
        yield
    except InputError as err:
        detail = f"{field_name}.{err.detail}" if field_name else err.detail
        raise InputError(subject, detail) from None


def is_real(value: object) -> bool:
    """True for real numbers (Python or NumPy), False for bools, which are not numbers here."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def finite(value: object, subject: str, name: str) -> float:
    if not is_real(value):
        raise InputError(subject, f"{name} must be a real number, got {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:  # a Python int beyond the float range
        number = math.inf
    if not math.isfinite(number):
        raise InputError(subject, f"{name} must be finite, got {number!r}")
    return number


def _signed(value: object, subject: str, name: str, strict: bool) -> float:
    """A finite number > 0 (``strict``) or >= 0, else an InputError."""
    number = finite(value, subject, name)
    if number < 0.0 or (strict and number == 0.0):
        raise InputError(subject, f"{name} must be {'>' if strict else '>='} 0, got {number!r}")
    return number


def positive(value: object, subject: str, name: str) -> float:
    return _signed(value, subject, name, strict=True)


def nonnegative(value: object, subject: str, name: str) -> float:
    return _signed(value, subject, name, strict=False)


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


def _within(number: float, subject: str, name: str, low: float, high: float, unit: str, why: str) -> float:
    """``number``, refused outside [low, high] (``unit`` and ``why`` are said in the refusal)."""
    if not low <= number <= high:
        raise InputError(
            subject, f"{name} must be in [{low:g}, {high:g}]{_unit(unit)} ({why}), got {number!r}"
        )
    return number


def in_range(value: object, subject: str, name: str, low: float, high: float, unit: str, why: str) -> float:
    """A number > 0 within [low, high] (``unit`` and ``why`` are said in the refusal)."""
    return _within(positive(value, subject, name), subject, name, low, high, unit, why)


def bounded(value: object, subject: str, name: str, high: float, unit: str, why: str) -> float:
    """A finite number of magnitude at most ``high`` (``unit`` and ``why`` are said in the refusal)."""
    return _within(finite(value, subject, name), subject, name, -high, high, unit, why)


def at_most(number: float, subject: str, name: str, high: float, unit: str, why: str) -> float:
    """``number`` (already checked finite), refused above ``high``."""
    if number > high:
        raise InputError(subject, f"{name} must be <= {high:g}{_unit(unit)} ({why}), got {number!r}")
    return number


def sequence_items(value: object) -> tuple[Any, ...] | None:
    """The elements of a list, tuple or array as a tuple; None for anything else."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return None


def vector3(value: object, subject: str, name: str) -> tuple[float, float, float]:
    entries = sequence_items(value)
    if entries is None or len(entries) != 3 or not all(is_real(x) and math.isfinite(x) for x in entries):
        raise InputError(subject, f"{name} must be a finite 3-vector, got {value!r}")
    return (float(entries[0]), float(entries[1]), float(entries[2]))


def inertia(value: object, subject: str, name: str) -> float | Tensor3:
    """A scalar inertia >= 0, or a finite, symmetric, positive semi-definite 3x3 tensor."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if is_real(value):
        return nonnegative(value, subject, name)
    rows = sequence_items(value)
    matrix = None if rows is None or len(rows) != 3 else [sequence_items(row) for row in rows]
    if matrix is None or not all(
        row is not None and len(row) == 3 and all(is_real(x) for x in row) for row in matrix
    ):
        raise InputError(subject, f"{name} must be a number >= 0 or a 3x3 tensor, got {value!r}")
    tensor = np.array(matrix, dtype=float)
    shown = tensor.tolist()
    if not np.all(np.isfinite(tensor)):
        raise InputError(subject, f"{name} must be finite, got {shown}")
    tolerance = TENSOR_RTOL * float(np.max(np.abs(tensor)))
    if np.max(np.abs(tensor - tensor.T)) > tolerance:
        raise InputError(subject, f"{name} must be symmetric, got {shown}")
    smallest = float(np.linalg.eigvalsh(tensor)[0])
    if smallest < -tolerance:
        raise InputError(
            subject,
            f"{name} must be positive semi-definite (smallest eigenvalue {smallest:.6g}), got {shown}",
        )
    return tuple(tuple(float(x) for x in row) for row in matrix)  # type: ignore[return-value]


def one_of(value: object, choices: tuple[str, ...], subject: str, name: str) -> str:
    if not isinstance(value, str) or value not in choices:
        options = " or ".join(repr(choice) for choice in choices)
        raise InputError(subject, f"{name} must be {options}, got {value!r}")
    return value


def instance_or_none(value: object, cls: type, subject: str, name: str) -> Any:
    if value is not None and not isinstance(value, cls):
        raise InputError(subject, f"{name} must be a {cls.__name__} or None, got {value!r}")
    return value


def integer(value: object, subject: str, name: str, minimum: int | None = None) -> int:
    """An integer (Python or NumPy, not a bool), at least ``minimum`` if given."""
    if isinstance(value, (bool, np.bool_)):
        raise InputError(subject, f"{name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise InputError(subject, f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise InputError(subject, f"{name} must be an integer >= {minimum}, got {number!r}")
    return number


def finite_array(value: object, subject: str, name: str, *, nonnegative: bool = False) -> np.ndarray:
    """A float array with finite entries (>= 0 if ``nonnegative``)."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(subject, f"{name} must be an array of real numbers, got {value!r}") from None
    if not np.all(np.isfinite(array)):
        raise InputError(subject, f"{name} must be finite, got {value!r}")
    if nonnegative and np.any(array < 0):
        raise InputError(subject, f"{name} must be >= 0, got {value!r}")
    return array


__all__ = [
    "TENSOR_RTOL",
    "InputError",
    "Tensor3",
    "at_most",
    "bounded",
    "finite",
    "finite_array",
    "in_range",
    "inertia",
    "instance_or_none",
    "integer",
    "is_real",
    "located",
    "nonnegative",
    "one_of",
    "positive",
    "sequence_items",
    "vector3",
]


def link_number(link: object, n_links: int) -> int:
    """A link number 1 … n_links (the argument of the point and load functions of a model)."""
    if not (isinstance(link, (int, np.integer)) and 1 <= link <= n_links):
        raise ValueError(f"link must be a link number from 1 to {n_links}, got {link!r}")
    return int(link)


def on_link(s: float, link: int, lower: float, upper: float, length: float) -> float:
    """A material coordinate s [m] of link ``link`` within [lower, upper], up to 1e-12 of its
    ``length`` (the ends as a user writes them)."""
    if not (np.isfinite(s) and lower - 1e-12 * length <= s <= upper * (1 + 1e-12)):
        raise ValueError(f"s must lie in [{lower}, {upper}] on link {link}, got {s!r}")
    return float(s)
