"""Study configuration: TOML → validated schema (pydantic v2) → cases.

A study file has the tables ``[study]``, ``[arm]``, ``[sweep]``, ``[analysis]``,
``[report]`` and ``[execution]`` (see the shipped examples in
``studies/configs``). Every mistake is reported as a :class:`ConfigError`
whose message starts with the key path, list positions counted from 1 as
everywhere a user sees numbers: ``sweep.modes[3]: must be >= 1, got 0``.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    field_validator,
)

from core.arm import Arm, Joint, Link, Payload
from core.presets import PRESETS
from studies.errors import ConfigError
from studies.models import BACKENDS, Case, Discretization


def one_of(registry: dict[str, Any] | Any) -> AfterValidator:
    """A pydantic validator: the value must be a key of ``registry`` (a dict, or a callable returning
    the allowed names), looked up when validating, so variants registered later are accepted."""

    def check(value: str) -> str:
        names = registry() if callable(registry) else registry
        if value not in names:
            raise ValueError(f"must be one of {sorted(names)}")
        return value

    return AfterValidator(check)


def sweepable_families() -> list[str]:
    """The shape families a sweep may name: those for links of fixed length (not ``beta-ode``)."""
    import shapes

    return [name for name, cls in shapes.FAMILIES.items() if cls.fixed_length]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StudySection(_Section):
    name: str = Field(min_length=1, max_length=80)
    kind: Annotated[str, one_of(lambda: _kinds())]

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("must be letters, digits, '.', '_' or '-' (it names the output folder)")
        return value


class ArmSection(_Section):
    preset: Annotated[str, one_of(PRESETS)] | None = None
    links: list[dict[str, Any]] | None = None
    joints: list[dict[str, Any]] | None = None
    payload: dict[str, Any] | None = None
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tip_rotation: Literal["slope", "chord"] = "slope"


class SweepSection(_Section):
    backends: list[Annotated[str, one_of(BACKENDS)]] = Field(default=["amm"], min_length=1)
    shapes: list[Annotated[str, one_of(sweepable_families)]] = Field(default=["clamped-free"], min_length=1)
    modes: list[PositiveInt] = Field(default=[2], min_length=1)
    elements: list[PositiveInt] = Field(default=[4], min_length=1)


class ReportSection(_Section):
    formats: list[Literal["csv", "markdown", "latex"]] = Field(default=["csv", "markdown"], min_length=1)
    plots: bool = True


class ExecutionSection(_Section):
    executor: Literal["serial", "processes", "dask"] = "serial"
    workers: PositiveInt = 1
    scheduler: str | None = None


class StudyConfig(_Section):
    study: StudySection
    arm: ArmSection
    sweep: SweepSection = SweepSection()
    analysis: dict[str, Any] = {}
    report: ReportSection = ReportSection()
    execution: ExecutionSection = ExecutionSection()


def _path(location: tuple) -> str:
    parts = []
    for item in location:
        if isinstance(item, int):
            parts.append(f"[{item + 1}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _message(error: dict) -> str:
    kind, ctx, value = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "greater_than":
        text = f"must be > {ctx['gt']}"
    elif kind == "greater_than_equal":
        text = f"must be >= {ctx['ge']}"
    elif kind == "too_short":
        return "must not be empty"
    elif kind == "extra_forbidden":
        return "unknown key"
    elif kind == "missing":
        return "missing required key"
    elif kind == "literal_error":
        text = f"must be one of {ctx['expected']}"
    elif kind == "value_error":
        text = str(ctx.get("error", error["msg"]))
    else:
        text = error["msg"][0].lower() + error["msg"][1:]
    return f"{text}, got {value!r}"


def _validation_error(error: ValidationError, prefix: str = "") -> ConfigError:
    first = error.errors()[0]
    path = _path(first["loc"])
    where = f"{prefix}.{path}" if prefix and path else (prefix or path)
    return ConfigError(f"{where}: {_message(first)}")


def parse_config(data: dict[str, Any]) -> StudyConfig:
    """Validate a config dict (as read from TOML); raises :class:`ConfigError`."""
    try:
        config = StudyConfig.model_validate(data)
    except ValidationError as error:
        raise _validation_error(error) from None
    from studies.kinds import KINDS

    kind = KINDS[config.study.kind]
    try:
        kind.analysis_schema.model_validate(config.analysis)
    except ValidationError as error:
        raise _validation_error(error, "analysis") from None
    build_arm(config.arm)  # arm errors surface at load time
    return config


def load_config(path: str | Path) -> StudyConfig:
    """Read and validate a TOML study file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config file ({error.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    return parse_config(data)


def build_arm(section: ArmSection) -> Arm:
    """The :class:`~core.arm.Arm` a config describes; raises :class:`ConfigError`."""
    if (section.preset is None) == (section.links is None):
        raise ConfigError("arm: give either preset or [[arm.links]], not both and not neither")
    if section.preset is not None:
        extras = [k for k in ("joints", "payload") if getattr(section, k) is not None]
        if extras:
            raise ConfigError(f"arm.{extras[0]}: not allowed with a preset (the preset defines the arm)")
        return PRESETS[section.preset]()
    try:
        links = [_link(i, data) for i, data in enumerate(section.links, start=1)]
        payload = None if section.payload is None else _table(Payload, section.payload, "arm.payload")
        if section.joints is None:
            return Arm.planar(
                links, payload=payload, gravity=section.gravity, tip_rotation=section.tip_rotation
            )
        joints = [_table(Joint, data, f"arm.joints[{i}]") for i, data in enumerate(section.joints, start=1)]
        return Arm.from_dh(
            joints, links, payload=payload, gravity=section.gravity, tip_rotation=section.tip_rotation
        )
    except ConfigError:
        raise
    except ValueError as error:
        raise ConfigError(f"arm: {error}") from None


def _link(index: int, data: dict[str, Any]) -> Link:
    where = f"arm.links[{index}]"
    if "kind" not in data:
        raise ConfigError(f"{where}.kind: missing required key ('rigid' or 'flexible')")
    return _table(Link, data, where)


def _table(cls, data: dict[str, Any], where: str):
    try:
        return cls._from_dict(data, where)
    except ValueError as error:
        message = str(error)
        if message.startswith(where):
            raise ConfigError(message) from None
        for subject in ("link: ", "joint: ", "payload: ", "lumped mass: ", "damping: "):
            message = message.removeprefix(subject)
        raise ConfigError(f"{where}: {message}") from None


def expand_cases(config: StudyConfig) -> list[Case]:
    """The independent cases of the sweep, in a fixed order: per backend, per case shape, per size.

    A backend's case shapes are ``Backend.shape_of`` of the requested families (AMM: the family;
    FEM: the frame it implies, so the ``shape`` column then holds ``clamped`` / ``pinned``); its
    sizes are the ``[sweep]`` list named by ``Backend.size_field``.
    """
    sweep = config.sweep
    discretizations = []
    for name in sweep.backends:
        backend = BACKENDS[name]
        shapes = list(dict.fromkeys(backend.shape_of(s) for s in sweep.shapes))
        sizes = getattr(sweep, backend.size_field)
        discretizations += [Discretization(name, s, n) for s, n in itertools.product(shapes, sizes)]
    return [Case(number, d) for number, d in enumerate(discretizations, start=1)]


def _kinds() -> dict[str, Any]:
    from studies.kinds import KINDS  # the kinds import this module: resolved when validating

    return KINDS
