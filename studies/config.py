"""Study configuration: TOML → validated schema (pydantic v2) → cases.

A study file has the tables ``[study]``, ``[arm]``, ``[sweep]``, ``[analysis]``,
``[report]`` and ``[execution]`` (see the shipped examples in
``studies/configs``). Every mistake is reported as a :class:`ConfigError`
whose message starts with the key path, list positions counted from 1 as
everywhere a user sees numbers: ``sweep.modes[3]: must be > 0, got 0``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    StrictInt,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from core.arm import Arm, Joint, Link, Payload
from core.arm.presets import PRESETS
from shapes import FAMILIES
from studies.discretizations import BACKENDS, Case, SizeColumn, discretizations, size_columns
from studies.errors import ConfigError
from studies.limits import (
    MAX_THREADS,
    AtMost,
    AtMostItems,
    check_repeats,
    check_values,
    cores,
    exactly,
    soft_violations,
)
from studies.text import shown


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StudySection(_Section):
    name: str = Field(
        min_length=1,
        max_length=80,
        description="Names the study and its output folder: letters, digits, '.', '_' or '-'.",
    )
    kind: str = Field(description="The study kind, a key of studies.kinds.KINDS; [analysis] holds its keys.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("must be letters, digits, '.', '_' or '-' (it names the output folder)")
        return value

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        from studies.kinds import KINDS

        if value not in KINDS:
            raise ValueError(f"must be one of {sorted(KINDS)}")
        return value


class ArmSection(_Section):
    preset: str | None = Field(
        None,
        description="A reference arm of core.arm.presets.PRESETS; give either preset or [[arm.links]], "
        "not both (a preset takes no joints or payload).",
    )
    links: list[dict[str, Any]] | None = Field(
        None, description="Links 1..n, one [[arm.links]] table each (the fields of core.arm.Link)."
    )
    joints: list[dict[str, Any]] | None = Field(
        None,
        description="Joints 1..n, one [[arm.joints]] table each (the fields of core.arm.Joint): a spatial "
        "arm placed by its Denavit-Hartenberg parameters (Arm.from_dh). Without them the arm is planar "
        "(Arm.planar): revolute joints about parallel z axes, a_i = length of link i, in-plane bending only.",
    )
    payload: dict[str, Any] | None = Field(
        None, description="A rigid body at the tip of the last link (the fields of core.arm.Payload)."
    )
    gravity: Annotated[list[float], exactly(3, " (x, y, z)")] = Field(
        [0.0, 0.0, 0.0],
        description="Gravitational acceleration (x, y, z) in the base frame; z = 0 for a planar arm; "
        "given with a preset, it replaces the preset's [m/s^2].",
    )
    tip_rotation: Literal["slope", "chord"] = Field(
        "slope",
        description="How a flexible link's tip rotates the next joint frame: by the tip slope w'(L) "
        "(slope) or by the chord angle w(L)/L (chord); given with a preset, it replaces the preset's.",
    )

    @field_validator("preset")
    @classmethod
    def _preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"must be one of {sorted(PRESETS)}")
        return value


#: Values of a sweep's size list (``sweep.modes``, ``sweep.elements``) above this are refused:
#: each one is a case.
MAX_SIZES = 1000


def _registered(registry: Callable[[], Any], what: str) -> Callable[[str], str]:
    """A validator: the value must be a key of the registry at validation time
    (so a variant registered after import is accepted)."""

    def check(value: str) -> str:
        names = list(registry())
        if value not in names:
            raise ValueError(f"must be one of {names}")
        return value

    check.__name__ = f"registered_{what}"
    return check


BackendName = Annotated[str, AfterValidator(_registered(lambda: BACKENDS, "backend"))]
FamilyName = Annotated[str, AfterValidator(_registered(lambda: FAMILIES, "family"))]


class SweepSection(_Section):
    """``[sweep]``: backends and shape families from their registries, one size list per
    size column a backend uses (``modes`` for AMM, ``elements`` for FEM)."""

    backends: list[BackendName] = Field(
        default=["amm"],
        min_length=1,
        description="Backends, keys of studies.discretizations.BACKENDS; each one sweeps its own cases.",
    )
    shapes: list[FamilyName] = Field(
        default=["clamped-free"],
        min_length=1,
        description="Shape families of shapes.FAMILIES: the AMM basis of every flexible link "
        "(clamped-mass takes all that is beyond the link's tip as its tip load); FEM takes the frame each "
        "family implies. A family that follows the free length of a translating link (beta-ode: "
        "clamped-mass shapes whose roots are integrated with the motion) needs every flexible link of "
        "the arm to translate when AMM runs.",
    )


class StiffeningOption(_Section):
    """The last key of ``[sweep]``, after the backends' size lists (:func:`config_schema`)."""

    geometric_stiffening: bool | list[bool] = Field(
        default=False,
        description="Keep the axial foreshortening u = -1/2 int w'^2 of every flexible link (geometric, e.g. "
        "centrifugal, stiffening; the models' geometric_stiffening keyword, both backends): true, false, or "
        "[false, true] to build every discretization both ways (neighbouring cases). Off by default (the "
        "classic floating-frame model); given, every result row has a geometric_stiffening column and the "
        "labels of stiffened cases end in 'stiffened'. Not for translating links.",
    )

    @field_validator("geometric_stiffening", mode="before")
    @classmethod
    def _stiffening(cls, value: Any) -> Any:
        # One message for every wrong form (pydantic's union would report each member's error).
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, bool) for v in values):
            raise ValueError("must be true or false, or a list of them like [false, true]")
        if len(set(values)) < len(values):
            raise ValueError("must not repeat a value")
        return value

    @property
    def stiffening_values(self) -> tuple[bool | None, ...]:
        """The cases' ``geometric_stiffening``: the values given, or (None,) when the key is not
        given (classic models, no column)."""
        if "geometric_stiffening" not in self.model_fields_set:
            return (None,)
        value = self.geometric_stiffening
        return tuple(value) if isinstance(value, list) else (value,)


def _size_list(column: SizeColumn) -> Any:
    """The annotation of a size list: strict integers (``true`` is not 1) > 0 and at most the
    column's limit, at most :data:`MAX_SIZES` of them."""
    size = Annotated[StrictInt, Field(gt=0), AtMost(column.limit, column.limit_why)]
    return Annotated[list[size], AtMostItems(MAX_SIZES, "each value is a case of every backend and family")]


class ReportSection(_Section):
    formats: list[Literal["csv", "markdown", "latex"]] = Field(
        default=["csv", "markdown"],
        min_length=1,
        description="What the kind's tables are written as besides results.csv: csv (one CSV each), "
        "markdown (summary.md), latex (one .tex each).",
    )
    plots: bool = Field(True, description="Write the kind's plots (PNG; with pdf, PDF too).")
    pdf: bool = Field(
        False,
        description="Also write every plot as a PDF (vector, fonts embedded) beside its PNG and link it "
        "from summary.md: about half a CPU second a figure more (the PDF drawing and its font subsets), "
        "so PNG only unless asked for.",
    )


#: A count of threads or processes: > 0 and at most :data:`studies.limits.MAX_THREADS`.
Threads = Annotated[PositiveInt, AtMost(MAX_THREADS, "no machine has that many cores")]


class ExecutionSection(_Section):
    executor: Literal["serial", "processes", "dask"] = Field(
        "serial",
        description="Where cases run: one after the other (serial), in a local process pool (processes) "
        "or on a Dask cluster (dask).",
    )
    workers: Threads = Field(
        1,
        description="Cases run at once: the processes of the pool or the workers of a local Dask "
        "cluster (serial runs one); more than twice the machine's cores only with --force.",
    )
    scheduler: str | None = Field(
        None,
        description="Dask only: the address of a running scheduler, e.g. tcp://127.0.0.1:8786; "
        "unset, a local cluster of workers is started.",
    )
    # OpenBLAS's default uses every core for each small matrix: measured 2.07 s
    # against 0.023 s for the quickstart's 32-element case.
    blas_threads: Threads = Field(
        1,
        description="BLAS threads per case (every BLAS library a case uses, SciPy's own included); more "
        "than the machine's cores only with --force. results.csv is the same byte for byte for the same "
        "config, package versions, blas_threads and processor type, whatever the executor, worker count "
        "or resume (CSV values are written with full round-trip precision; timing studies measure wall "
        "times and are the exception).",
    )

    @field_validator("scheduler")
    @classmethod
    def _scheduler(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(
            r"(tcp|tls|inproc|ucx|ws|wss)://[^\s/:]+(:\d{1,5})?/?", value
        ):
            raise ValueError("must be a scheduler address like 'tcp://host:8786'")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ExecutionSection:
        if self.scheduler is not None and self.executor != "dask":
            raise ValueError(f"scheduler applies to the dask executor only, got executor {self.executor!r}")
        if self.workers > 1 and self.executor == "serial":
            raise ValueError(
                "workers > 1 needs executor 'processes' or 'dask' (serial runs one case at a time)"
            )
        return self


class StudyConfig(_Section):
    """A validated study config. Its ``[sweep]`` holds the size lists of the registered
    backends, so a config is validated with :func:`config_schema`, this model with them."""

    study: StudySection
    arm: ArmSection
    sweep: SweepSection = SweepSection()
    analysis: dict[str, Any] = {}
    report: ReportSection = ReportSection()
    execution: ExecutionSection = ExecutionSection()


def config_schema() -> type[StudyConfig]:
    """The schema of a study config for the backends registered now: ``[sweep]`` has one size
    list per size column (:func:`studies.discretizations.size_columns`), between ``shapes`` and
    ``geometric_stiffening``. Built when a config is validated, so a backend registered after
    import is accepted with its own column."""
    return _config_schema(tuple((column, tuple(labels)) for column, labels in size_columns().values()))


@functools.lru_cache(maxsize=8)
def _config_schema(columns: tuple[tuple[SizeColumn, tuple[str, ...]], ...]) -> type[StudyConfig]:
    sizes = {
        column.name: (
            _size_list(column),
            Field(
                default=list(column.default),
                min_length=1,
                description=f"{' and '.join(labels)}: {column.description}",
            ),
        )
        for column, labels in columns
    }
    # Fields follow the bases from the last to the first: backends and shapes, the sizes, then
    # geometric_stiffening (the order of the reference and of a folder's config.toml).
    sized = create_model("SweepSizes", __base__=SweepSection, **sizes)
    sweep = create_model("SweepSection", __base__=(StiffeningOption, sized), __doc__=SweepSection.__doc__)
    return create_model(
        "StudyConfig", __base__=StudyConfig, __doc__=StudyConfig.__doc__, sweep=(sweep, sweep())
    )


def _path(location: tuple, data: Any = None) -> str:
    """The key path of a pydantic error location; with the validated ``data``, the steps that
    are no keys of it are left out: the labels pydantic gives the members of a union
    (``kp.float``, ``solver.literal[...]``) and the tags of a tagged one (``trajectory.circle``)."""
    parts = []
    current, known = data, data is not None
    for number, item in enumerate(location, start=1):
        if known and isinstance(item, str):
            is_key = isinstance(current, dict) and (item in current or number == len(location))
            if not is_key or (item not in current and item in current.values()):
                continue
        if isinstance(item, int):
            parts.append(f"[{item + 1}]")
        else:
            parts.append(("." if parts else "") + str(item))
        if known:
            try:
                current = current[item]
            except (KeyError, IndexError, TypeError):
                known = False
    return "".join(parts)


#: Refusals of pydantic's error types, filled from the error's context (``{gt}``: its bound).
MESSAGES = {
    "greater_than": "must be > {gt}",
    "greater_than_equal": "must be >= {ge}",
    "less_than": "must be < {lt}",
    "less_than_equal": "must be <= {le}",
    "too_short": "must hold at least {min_length} values",
    "too_long": "must hold at most {max_length} values",
    "literal_error": "must be one of {expected}",
}
#: Refusals that name no value.
BARE_MESSAGES = {"extra_forbidden": "unknown key", "missing": "missing required key"}


def _message(error: dict) -> str:
    kind, ctx, value = error["type"], error.get("ctx", {}), error.get("input")
    if kind in BARE_MESSAGES:
        return BARE_MESSAGES[kind]
    if kind == "too_short" and ctx.get("min_length", 1) <= 1:
        return "must not be empty"
    if kind in ("too_short", "too_long") and ctx.get("min_length") == ctx.get("max_length"):
        text = f"must hold exactly {ctx['min_length']} values"
    elif kind in MESSAGES:
        text = MESSAGES[kind].format(**ctx)
    elif kind == "value_error":
        text = str(ctx.get("error", error["msg"]))
    else:
        text = error["msg"][0].lower() + error["msg"][1:]
    return f"{text}, got {shown(value)}"


def _validation_error(error: ValidationError, prefix: str = "", data: Any = None) -> ConfigError:
    first = error.errors()[0]
    path = _path(first["loc"], data)
    where = f"{prefix}.{path}" if prefix and path else (prefix or path)
    return ConfigError(f"{where}: {_message(first)}")


def parse_config(data: dict[str, Any]) -> StudyConfig:
    """Validate a config dict (as read from TOML); raises :class:`ConfigError`.

    Every value is checked finite and every array bounded before the schema
    (:func:`studies.limits.check_values`), every count against its schema's limit, and a
    value repeated in a list of cases or runs is refused (:func:`studies.limits.check_repeats`).
    What this machine can run but not quickly (``--force``) is :func:`studies.limits.check_limits`.
    """
    check_values(data)
    try:
        config = config_schema().model_validate(data)
    except ValidationError as error:
        raise _validation_error(error, data=data) from None
    check_repeats(config.sweep, "sweep")
    check_repeats(config.report, "report")
    from studies.kinds import KINDS

    name = config.study.kind
    kind = KINDS[name]
    if kind.backends is not None:
        for position, backend in enumerate(config.sweep.backends, start=1):
            if backend not in kind.backends:
                raise ConfigError(
                    f"sweep.backends[{position}]: the {name} kind runs {' or '.join(map(repr, kind.backends))} "
                    f"cases only, got {backend!r}"
                )
    try:
        analysis = kind.analysis_schema.model_validate(config.analysis)
    except ValidationError as error:
        raise _validation_error(error, "analysis", config.analysis) from None
    check_repeats(analysis, "analysis")
    if True in config.sweep.stiffening_values and not kind.geometric_stiffening:
        raise ConfigError(
            f"sweep.geometric_stiffening: the {name} kind builds the classic models only, "
            f"got {config.sweep.geometric_stiffening!r}"
        )
    arm = build_arm(config.arm)  # arm errors surface at load time
    _check_following_families(config.sweep, arm)
    _check_stiffening(config.sweep, arm)
    try:
        kind.validate(arm, analysis)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return config


def _check_following_families(sweep: SweepSection, arm: Arm) -> None:
    """A family whose shapes follow a translating link's free length (``tracks_length``) is
    refused where a backend would give it to a flexible link of fixed length (the backends that
    take the family itself, AMM, give it to every flexible link; FEM takes its frame only)."""
    fixed = [k for k in arm.flexible_links if k not in arm.translating_links]
    if not fixed:
        return
    for position, name in enumerate(sweep.shapes, start=1):
        if not FAMILIES[name].tracks_length:
            continue
        takers = [b for b in sweep.backends if name in BACKENDS[b].shapes([name])]
        if takers:
            backends = " and ".join(BACKENDS[b].label for b in takers)
            raise ConfigError(
                f"sweep.shapes[{position}]: family {name!r} follows the free length of a translating link, "
                f"but link {fixed[0]} is a flexible link of fixed length (the {backends} cases give every "
                f"flexible link this family; translating links: {list(arm.translating_links) or 'none'})"
            )


def _check_stiffening(sweep: SweepSection, arm: Arm) -> None:
    """Geometric stiffening is refused on an arm with translating links (the foreshortening of
    a beam sliding through its hub is not modelled; the models refuse it too)."""
    if True in sweep.stiffening_values and arm.translating_links:
        raise ConfigError(
            f"sweep.geometric_stiffening: not available for translating links {list(arm.translating_links)} "
            f"(the foreshortening of a beam sliding through its hub is not modelled), got {sweep.geometric_stiffening!r}"
        )


def check_limits(config: Any, force: bool = False, workers: int | None = None) -> None:
    """Refuse, unless ``force``, what this machine can run but not in reasonable time or
    memory: values above their schema's soft limit (``AtMost.soft``), more BLAS threads
    than cores and more than twice as many worker processes as cores (``workers``: the
    command line's ``--workers``, which replaces ``[execution] workers``). A Dask run on a
    given scheduler runs elsewhere: its threads and workers are not this machine's. A
    ``workers`` above :data:`MAX_THREADS` is refused even with ``force``, as the schema
    refuses such an ``[execution] workers``.

    ``config`` is a validated :class:`~studies.config.StudyConfig`; raises
    :class:`ConfigError` naming the key path.
    """
    if workers is not None and workers > MAX_THREADS:  # the schema bounds [execution] workers
        raise ConfigError(
            f"--workers: must be <= {MAX_THREADS} (no machine has that many cores), got {workers}"
        )
    if force:
        return
    from studies.kinds import KINDS  # on use: validating a config loads no kind before it names one

    analysis = KINDS[config.study.kind].analysis_schema.model_validate(config.analysis)
    for section, prefix in ((config.sweep, "sweep"), (config.execution, "execution"), (analysis, "analysis")):
        for path, value, limit in soft_violations(section, prefix):
            raise ConfigError(
                f"{path}: must be <= {limit.soft} without --force ({limit.soft_why}; use --force to "
                f"run it anyway), got {value!r}"
            )
    execution = config.execution
    if execution.executor == "dask" and execution.scheduler is not None:
        return
    available = cores()
    if execution.blas_threads > available:
        raise ConfigError(
            f"execution.blas_threads: must be <= {available} without --force (the cores of this machine; "
            f"more threads per case only wait for each other; use --force to run it anyway), "
            f"got {execution.blas_threads}"
        )
    count, key = (execution.workers, "execution.workers") if workers is None else (workers, "--workers")
    if execution.executor != "serial" and count > 2 * available:
        raise ConfigError(
            f"{key}: must be <= {2 * available} without --force (twice the {available} cores of this "
            f"machine; more processes only share them and each loads the numerical libraries; use "
            f"--force to run it anyway), got {count}"
        )


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Set ``key.path=value`` in a config dict (``value`` in TOML syntax, or a bare string)."""
    key, sep, text = assignment.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*", key):
        raise ConfigError(
            f"--set: expected KEY=VALUE with a dotted key like analysis.t_end=0.5, got {shown(assignment)}"
        )
    try:
        value = tomllib.loads(f"value = {text.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        value = text.strip()  # a bare word, e.g. --set study.kind=verify
    *parents, last = key.split(".")
    table = data
    for part in parents:
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            raise ConfigError(f"--set: {key}: {part} is not a table")
    table[last] = value


#: The largest config file read [bytes]: the shipped examples are 1-3 KiB; a config is text
#: a person writes, and nothing larger is read into memory to find that out.
MAX_CONFIG_BYTES = 1 << 20


def read_config_file(path: Path) -> bytes:
    """The bytes of a config file, refused (:class:`ConfigError`) unless it is a regular file
    of at most :data:`MAX_CONFIG_BYTES`: a named pipe, a device (``/dev/zero``), a folder or
    a huge file is named and refused before anything is read. Opened without blocking, so a
    pipe with no writer cannot hang the command."""
    import os
    import stat

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config file ({error.strerror})") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            what = {
                stat.S_ISFIFO: "a named pipe",
                stat.S_ISCHR: "a character device",
                stat.S_ISBLK: "a block device",
                stat.S_ISDIR: "a folder",
                stat.S_ISSOCK: "a socket",
            }
            name = next((text for test, text in what.items() if test(status.st_mode)), "not a regular file")
            raise ConfigError(f"{path}: the config must be a regular file, got {name}")
        if status.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: the config file has {status.st_size} bytes, more than the {MAX_CONFIG_BYTES} "
                "a study config may have"
            )
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config file ({error.strerror})") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_CONFIG_BYTES:  # it grew after fstat
        raise ConfigError(
            f"{path}: the config file has more than the {MAX_CONFIG_BYTES} bytes a study config may have"
        )
    return data


def load_config(path: str | Path, overrides: list[str] = ()) -> StudyConfig:
    """Read and validate a TOML study file, with ``KEY=VALUE`` overrides applied first."""
    path = Path(path)
    try:
        text = read_config_file(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not a UTF-8 text file (byte {error.object[error.start]:#04x} at offset {error.start})"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    for assignment in overrides:
        apply_override(data, assignment)
    return parse_config(data)


def build_arm(section: ArmSection) -> Arm:
    """The :class:`~core.arm.Arm` a config describes; raises :class:`ConfigError`."""
    if (section.preset is None) == (section.links is None):
        raise ConfigError("arm: give either preset or [[arm.links]], not both and not neither")
    if section.preset is not None:
        extras = [k for k in ("joints", "payload") if getattr(section, k) is not None]
        if extras:
            raise ConfigError(f"arm.{extras[0]}: not allowed with a preset (the preset defines the arm)")
        arm = PRESETS[section.preset]()
        # gravity and tip_rotation given beside a preset replace the preset's
        changes = {
            k: getattr(section, k) for k in ("gravity", "tip_rotation") if k in section.model_fields_set
        }
        if not changes:
            return arm
        try:
            return dataclasses.replace(
                arm, **{k: tuple(v) if k == "gravity" else v for k, v in changes.items()}
            )
        except ValueError as error:
            raise ConfigError(f"arm: {error}") from None
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
        return cls.from_dict(data, where)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def expand_cases(config: StudyConfig) -> list[Case]:
    """The independent cases of the sweep, in a fixed order, numbered from 1.

    Backend by backend (:data:`~studies.discretizations.BACKENDS`), then shape,
    then size, then geometric stiffening: AMM one case per (family, modes), FEM one per
    (frame, elements), the frame being the one each requested family implies; each of
    them once per ``geometric_stiffening`` value when the sweep gives it.
    """
    sweep = config.sweep
    sizes = {backend.size_column: getattr(sweep, backend.size_column) for backend in BACKENDS.values()}
    found = discretizations(sweep.backends, sweep.shapes, sizes, sweep.stiffening_values)
    return [Case(number, d) for number, d in enumerate(found, start=1)]
