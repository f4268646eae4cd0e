"""Bounds on what a study config may ask for, checked before anything is allocated or run.

Three layers, each refusing with one line that names the key path and the value:

* :func:`check_values` walks the whole config as read from TOML, before the schema:
  every float finite (TOML has ``nan`` and ``inf``, which no key of a study means)
  and at most :data:`MAX_MAGNITUDE` in magnitude, every integer within TOML's 64-bit
  range and no array longer than :data:`MAX_VALUES` (a pasted megabyte is refused
  before pydantic validates it). Keys with a physical meaning have tighter bounds
  (durations, tolerances, joint values below; the arm's in :mod:`core.arm`).
* :class:`AtMost` and :class:`AtMostItems` are ``Annotated`` metadata of a schema
  field: a count or a list above ``limit`` is refused when the config is read, in
  every context (the limit is beyond what any machine runs: the allocation or work
  it implies, or double precision, says why).
* ``AtMost.soft``, and the threads and workers against this machine's cores, are
  checked by :func:`studies.config.check_limits`, which the command line calls with its ``--force``:
  above them a run is possible but long, and is refused unless forced.

Repeated values of a list whose values are cases or runs (``sweep.modes = [2, 2]``,
``analysis.solvers``) are refused by :func:`check_repeats`: each would run twice.
"""

from __future__ import annotations

import math
import os
import types
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, NonNegativeFloat, PositiveFloat, PositiveInt
from pydantic.fields import FieldInfo
from pydantic_core import core_schema

from core.arm.bounds import ANGLE_MAX, LENGTH_RANGE
from studies.errors import ConfigError

#: No array of a study holds more values (checked on the raw TOML, before the schema).
MAX_VALUES = 10_000
#: TOML integers are 64-bit signed.
TOML_INTEGERS = (-(2**63), 2**63 - 1)
#: Threads or worker processes above this are refused in any context (no machine has that many cores).
MAX_THREADS = 1024
#: No number of a study, in SI units, is larger in magnitude (products of ten of them stay finite).
MAX_MAGNITUDE = 1e30


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


class _Bound(ABC):
    """The pydantic hooks of an ``Annotated`` bound: its ``_check`` runs on the value after
    pydantic's own validation (with :attr:`before`, before it), and the JSON schema shows
    what ``_schema`` returns (``maximum``, say)."""

    #: Check the value before pydantic validates it (a list before its values).
    before: ClassVar[bool] = False

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        validator = (
            core_schema.no_info_before_validator_function
            if self.before
            else core_schema.no_info_after_validator_function
        )
        return validator(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        found = handler(schema)
        found.update(self._schema())
        return found

    @abstractmethod
    def _check(self, value: Any) -> Any:
        """The value, or ValueError with the refusal."""

    @abstractmethod
    def _schema(self) -> dict[str, Any]:
        """What the bound adds to the field's JSON schema."""


@dataclass(frozen=True)
class AtMost(_Bound):
    """``Annotated`` metadata of a number: at most ``limit`` (``why``: the reason said in
    the refusal), and, unless ``--force``, at most ``soft`` (``soft_why``), see
    :func:`studies.config.check_limits`. Shown in the JSON schema as ``maximum`` and in docs/CONFIG.md."""

    limit: int | float
    why: str
    soft: int | None = None
    soft_why: str = ""
    #: Bound the magnitude: -limit <= value <= limit.
    signed: bool = False

    def _schema(self) -> dict[str, Any]:
        return {"maximum": self.limit, **({"minimum": -self.limit} if self.signed else {})}

    def _check(self, value: Any) -> Any:
        if self.signed and abs(value) > self.limit:
            raise ValueError(f"must be in [{_number(-self.limit)}, {_number(self.limit)}] ({self.why})")
        if value > self.limit:
            raise ValueError(f"must be <= {_number(self.limit)} ({self.why})")
        return value


@dataclass(frozen=True)
class AtMostItems(_Bound):
    """``Annotated`` metadata of a list: at most ``limit`` values (``why``: the reason said
    in the refusal), checked before its values are validated."""

    limit: int
    why: str
    before: ClassVar[bool] = True

    def _schema(self) -> dict[str, Any]:
        return {"maxItems": self.limit}

    def _check(self, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) > self.limit:
            raise ValueError(f"must hold at most {self.limit} values ({self.why})")
        return value


def exactly(count: int, names: str) -> AfterValidator:
    """``Annotated`` metadata of a list: exactly ``count`` values; ``names`` follows the count
    in the refusal (``" (x, y, z)"``: "must hold exactly 3 values (x, y, z)")."""

    def check(value: list) -> list:
        if len(value) != count:
            raise ValueError(f"must hold exactly {count} values{names}")
        return value

    return AfterValidator(check)


def _described(value: Any) -> str:
    """A value for a message: a long list by its length, not its text."""
    if isinstance(value, list):
        return f"a list of {len(value)} values"
    if isinstance(value, int) and value.bit_length() > 200:  # repr fails beyond 4300 digits
        return f"an integer of {value.bit_length()} bits"
    return repr(value)


def check_values(data: Any) -> None:
    """Refuse non-finite floats, integers beyond 64 bits and arrays of more than
    :data:`MAX_VALUES` values anywhere in a config dict (as read from TOML); raises
    :class:`ConfigError` naming the key path (list positions from 1)."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{path}: must be finite, got {value!r}")
        if isinstance(value, float) and abs(value) > MAX_MAGNITUDE:
            raise ConfigError(
                f"{path}: must be at most {MAX_MAGNITUDE:g} in magnitude (no quantity of a study is "
                f"larger in SI units), got {value!r}"
            )
        if isinstance(value, int) and not TOML_INTEGERS[0] <= value <= TOML_INTEGERS[1]:
            raise ConfigError(f"{path}: must be a 64-bit integer (as TOML has them), got {_described(value)}")
        if isinstance(value, dict):
            stack += [(f"{path}.{key}" if path else str(key), item) for key, item in reversed(value.items())]
        elif isinstance(value, list):
            if len(value) > MAX_VALUES:
                raise ConfigError(
                    f"{path}: must hold at most {MAX_VALUES} values (no key of a study needs more), "
                    f"got {_described(value)}"
                )
            stack += [(f"{path}[{k}]", item) for k, item in reversed(list(enumerate(value, start=1)))]


def work_count(limit: int, why: str, *, soft: int, soft_why: str) -> Any:
    """The annotation of a count of units of work (random states, evaluation times, samples):
    a positive int refused above ``limit`` (``why``) and warned about above ``soft``
    (``soft_why``), as :class:`AtMost` says."""
    return Annotated[PositiveInt, AtMost(limit, why, soft=soft, soft_why=soft_why)]


#: The longest time a study simulates or spends on one measurement [s]: 11.6 days.
MAX_TIME = 1e6
_TIME_WHY = "11.6 days; t keeps a resolution of 1e-10 s up to it"
#: A duration > 0 [s], at most :data:`MAX_TIME`.
Duration = Annotated[PositiveFloat, AtMost(MAX_TIME, _TIME_WHY)]
#: A time or duration >= 0 [s], at most :data:`MAX_TIME`.
Span = Annotated[NonNegativeFloat, AtMost(MAX_TIME, _TIME_WHY)]
#: A relative tolerance (or an absolute one in rad or m) > 0, at most 1.
Tolerance = Annotated[PositiveFloat, AtMost(1.0, "a tolerance above 1 accepts any answer")]
#: The largest joint value [rad or m] and deflection [m] a config may give: an angle's last
#: bit stays below 1e-10 rad and an offset within the arm's largest length.
MAX_JOINT_VALUE = min(ANGLE_MAX, LENGTH_RANGE[1])
#: A joint variable [rad or m].
JointValue = Annotated[float, AtMost(MAX_JOINT_VALUE, "as the arm's angles and offsets", signed=True)]
#: A length or deflection > 0 [m], at most the arm's largest length.
Deflection = Annotated[PositiveFloat, AtMost(MAX_JOINT_VALUE, "the arm's largest length")]


#: The lists whose values are each a case or a run; a repeat would run twice.
REPEATS_REFUSED = "each value runs once"


def check_repeats(model: BaseModel, prefix: str) -> None:
    """Refuse a repeated value in any list of strings or integers of ``model`` (and of the
    models it holds): each such value is a case, a solver, a direction, a chain or a
    format, and a repeat would run (or be written) twice. Lists of floats (joint values,
    gains) may repeat."""
    for path, _, values in _fields(model, prefix):
        if not isinstance(values, list):
            continue
        seen: dict[Any, int] = {}
        for position, value in enumerate(values, start=1):
            if isinstance(value, float) or not isinstance(value, str | int):
                break
            if value in seen:
                raise ConfigError(
                    f"{path}[{position}]: repeats {path}[{seen[value]}] ({REPEATS_REFUSED}), got {value!r}"
                )
            seen[value] = position


def _fields(model: BaseModel, prefix: str) -> Iterator[tuple[str, FieldInfo, Any]]:
    """(key path, field, value) of every field of ``model`` whose value is not a model; the
    fields of a model it holds come in its place, prefixed by its key."""
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(value, BaseModel):
            yield from _fields(value, path)
        else:
            yield path, field, value


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _unwrapped(annotation: Any) -> Iterator[tuple[Any, list[Any]]]:
    """(annotation, its ``Annotated`` metadata) of every member of a union (``X | None``)."""
    metadata: list[Any] = []
    while get_origin(annotation) is Annotated:
        annotation, *more = get_args(annotation)
        metadata += more
    if get_origin(annotation) in (Union, types.UnionType):
        for member in get_args(annotation):
            for inner, more in _unwrapped(member):
                yield inner, metadata + more
    else:
        yield annotation, metadata


def _soft_limits(annotation: Any, metadata: list[Any]) -> list[AtMost]:
    """The soft :class:`AtMost` limits of a field (its own metadata and its annotation's)."""
    found = [*metadata, *(item for _, more in _unwrapped(annotation) for item in more)]
    return [item for item in found if isinstance(item, AtMost) and item.soft is not None]


def _item_annotations(annotation: Any) -> list[Any]:
    """The item annotations of the ``list[X]`` members of an annotation."""
    return [get_args(inner)[0] for inner, _ in _unwrapped(annotation) if get_origin(inner) is list]


def soft_violations(model: BaseModel, prefix: str) -> Iterator[tuple[str, Any, AtMost]]:
    """(key path, value, limit) of every value of ``model`` above its soft limit."""
    for path, field, value in _fields(model, prefix):
        for limit in _soft_limits(field.annotation, field.metadata):
            if isinstance(value, int | float) and not isinstance(value, bool) and value > limit.soft:
                yield path, value, limit
        if not isinstance(value, list):
            continue
        for item in _item_annotations(field.annotation):
            for limit in _soft_limits(item, []):
                for position, entry in enumerate(value, start=1):
                    if isinstance(entry, int | float) and entry > limit.soft:
                        yield f"{path}[{position}]", entry, limit


__all__ = [
    "MAX_JOINT_VALUE",
    "MAX_MAGNITUDE",
    "MAX_THREADS",
    "MAX_TIME",
    "MAX_VALUES",
    "AtMost",
    "AtMostItems",
    "Deflection",
    "Duration",
    "JointValue",
    "Span",
    "Tolerance",
    "check_repeats",
    "check_values",
    "cores",
    "exactly",
    "soft_violations",
    "work_count",
]
