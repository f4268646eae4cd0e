"""The config reference, ``docs/CONFIG.md``, generated from the schema so it cannot drift.

Every key the reference lists — its name, type, constraints, allowed values
and default — is read when the text is generated: from the pydantic sections
of :mod:`studies.config`, the ``analysis_schema`` of every registered study
kind (:data:`studies.kinds.KINDS`), the registries (presets, backends, shape
families, controllers, trajectories) and the fields of the arm dataclasses
of :mod:`core.arm`. Descriptions are a pydantic field's ``description``,
whose trailing ``[unit]`` fills the unit column, or the ``Parameters`` block
of a dataclass docstring (``name : type  [unit]``); trajectory parameters take
their units from the ``from_config`` docstring (``T [s]``). Examples are the
shipped configs of ``studies/configs``, read as they are. Regenerate with::

    python -m studies.config_doc > docs/CONFIG.md

``tests/test_config_doc.py`` fails when the committed file differs.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
import tomllib
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

import shapes
from core.analysis.controllers import CONTROLLERS
from core.analysis.trajectories import TRAJECTORIES
from core.arm import Arm, Joint, Link, Payload
from core.arm.presets import PRESETS
from shapes import translating_families
from studies.cli import EXAMPLES_PACKAGE, examples
from studies.config import config_schema, expand_cases
from studies.discretizations import BACKENDS, discretization_columns
from studies.kinds import KINDS
from studies.kinds.simulation import simulation_schema
from studies.limits import MAX_VALUES, AtMost, AtMostItems

#: The command that writes the reference.
REGENERATE = "python -m studies.config_doc > docs/CONFIG.md"
#: The arm tables whose keys are dataclass fields, by dotted name: (class, array of tables).
ARM_TABLES = {"arm.links": (Link, True), "arm.joints": (Joint, True), "arm.payload": (Payload, False)}
#: Columns of a key table; empty columns (no row has a value) are left out.
COLUMNS = ("key", "type", "unit", "default", "example", "description")
#: Headings of the simulation's nested tables.
CONTROLLER_HEADING = "`analysis.controller`"
TRAJECTORY_HEADING = "`analysis.trajectory`"

_UNIT = re.compile(r"\s*\[([^\[\]]+)\](\.?)$")
_PARAMETER = re.compile(r"^(\w+) : (.+?)(?:\s{2,}\[(.+)\])?$")


@dataclass(frozen=True)
class Example:
    """A shipped example config.

    Attributes
    ----------
    name : str
        Its name for ``flexlink init`` and ``flexlink run --example``.
    path : str
        Its path in the repository.
    text : str
        The file as shipped.
    data : dict
        The file read as TOML.
    """

    name: str
    path: str
    text: str
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        """Its ``study.kind``."""
        return self.data["study"]["kind"]


@dataclass(frozen=True)
class Key:
    """One row of a key table: the key's name, then Markdown cells."""

    key: str
    type: str
    unit: str
    default: str
    example: str
    description: str


def _public_path(cls: type) -> str:
    """The shortest import path that exports ``cls`` (``core.arm.Link``, not the module that
    defines it)."""
    parts = cls.__module__.split(".")
    for n in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:n]))
        if module is not None and getattr(module, cls.__name__, None) is cls and n > 1:
            return f"{'.'.join(parts[:n])}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__name__}"


def shipped_examples() -> list[Example]:
    """The shipped example configs, in name order."""
    folder = EXAMPLES_PACKAGE.replace(".", "/")
    found = []
    for name, path in sorted(examples().items()):
        text = path.read_text(encoding="utf-8")
        found.append(Example(name, f"{folder}/{path.name}", text, tomllib.loads(text)))
    return found


# -- text helpers ----------------------------------------------------------------


def toml_value(value: Any) -> str:
    """``value`` written as a TOML value (inline tables for mappings and models)."""
    if isinstance(value, BaseModel):
        return toml_value(value.model_dump())
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def markdown(text: str) -> str:
    """reStructuredText inline markup of a docstring as Markdown, on one line."""
    text = re.sub(
        r":[\w:]+:`(~?)([^`]+)`",
        lambda match: f"`{match[2].rsplit('.', 1)[-1] if match[1] else match[2]}`",
        text,
    )
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    return " ".join(text.split())


def paragraphs(doc: str | None) -> list[str]:
    """The paragraphs of a docstring, each as one line of Markdown."""
    return [markdown(block) for block in inspect.cleandoc(doc or "").split("\n\n") if block.strip()]


def blocks(texts: list[str]) -> list[str]:
    """Lines of Markdown: each text followed by a blank line."""
    return [line for text in texts for line in (text, "")]


def summary(obj: Any) -> str:
    """The first paragraph of the docstring of ``obj`` (a module, class or function)."""
    found = paragraphs(inspect.getdoc(obj))
    return found[0] if found else ""


def split_unit(description: str) -> tuple[str, str]:
    """(description, unit) of a description ending in ``[unit]`` (or ``[unit].``)."""
    match = _UNIT.search(description)
    if match is None:
        return description, ""
    return description[: match.start()] + match[2], match[1]


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def table(keys: list[Key]) -> list[str]:
    """A Markdown table of ``keys``; columns no row fills are left out."""
    columns = [c for c in COLUMNS if c in ("key", "type", "default") or any(getattr(k, c) for k in keys)]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for key in keys:
        cells = [getattr(key, column).replace("|", "\\|") for column in columns[1:]]
        lines.append(f"| `{key.key}` | " + " | ".join(cells) + " |")
    return lines


# -- types -------------------------------------------------------------------------


def _constraints(annotation: Any) -> tuple[Any, list[Any]]:
    """(the annotation without ``Annotated``, the constraint objects it carried)."""
    found: list[Any] = []
    while get_origin(annotation) is Annotated:
        annotation, *metadata = get_args(annotation)
        for item in metadata:
            found += item.metadata if isinstance(item, FieldInfo) else [item]
    return annotation, found


def _bounds(metadata: list[Any]) -> str:
    symbols = {
        annotated_types.Gt: ("gt", ">"),
        annotated_types.Ge: ("ge", "≥"),
        annotated_types.Lt: ("lt", "<"),
        annotated_types.Le: ("le", "≤"),
    }
    text = "".join(
        f" {symbol} {getattr(item, attribute)}"
        for item in metadata
        for kind, (attribute, symbol) in symbols.items()
        if isinstance(item, kind)
    )
    for item in metadata:
        if isinstance(item, AtMost):
            limit = item.limit if isinstance(item.limit, int) else f"{item.limit:g}"
            bound = f"in [-{limit}, {limit}]" if item.signed else f"≤ {limit}"
            text += f", {bound}" if text else f" {bound}"
            if item.soft is not None:
                text += f" (≤ {item.soft} without `--force`)"
    return text


def _length(metadata: list[Any], what: str) -> str:
    low = next((item.min_length for item in metadata if isinstance(item, annotated_types.MinLen)), None)
    high = next((item.max_length for item in metadata if isinstance(item, annotated_types.MaxLen)), None)
    high = next((item.limit for item in metadata if isinstance(item, AtMostItems)), high)
    if low is not None and high is not None:
        return f" ({low}–{high} {what})"
    if low == 1:
        return " (non-empty)"
    if low is not None:
        return f" (≥ {low} {what})"
    if high is not None:
        return f" (≤ {high} {what})"
    return ""


def type_text(annotation: Any, metadata: Sequence[Any] = (), see: Mapping[type, str] | None = None) -> str:
    """The TOML type of a field annotation with its constraints, e.g. ``integer > 0``.

    ``see`` maps a table's model or dataclass to a Markdown link to where its keys are listed.
    """
    see = see or {}
    annotation, more = _constraints(annotation)
    metadata = [*metadata, *more]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        parts = [type_text(arg, see=see) for arg in args if arg is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    if origin is Literal:
        return "one of " + ", ".join(f"`{toml_value(value)}`" for value in args)
    if origin is list or (origin is tuple and args[1:] == (...,)):
        item = type_text(args[0], see=see)
        if item.startswith("one of"):
            items = f"array, each {item}"
        else:
            items = "array of tables" if item == "table" else f"array of {item}"
        return items + _length(metadata, "items")
    if origin is tuple:
        inner = [get_args(_constraints(arg)[0]) for arg in args]
        if all(get_origin(_constraints(arg)[0]) is tuple for arg in args) and len(set(inner)) == 1:
            return f"{len(args)}×{len(inner[0])} array of {type_text(inner[0][0])}"
        return "[" + ", ".join(type_text(arg, see=see) for arg in args) + "]"
    if origin is dict:
        return "table"
    if isinstance(annotation, type) and (
        issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)
    ):
        return f"table ({see[annotation]})" if annotation in see else "table"
    if annotation is str:
        return "string" + _length(metadata, "characters")
    return {bool: "boolean", int: "integer", float: "float"}[annotation] + _bounds(metadata)


def _array_of_tables(annotation: Any) -> type | None:
    """The dataclass of ``tuple[Dataclass, ...]`` (an array of tables), else None."""
    args = get_args(annotation)
    if get_origin(annotation) is tuple and args[1:] == (...,) and dataclasses.is_dataclass(args[0]):
        return args[0]
    return None


def _table_class(annotation: Any) -> type | None:
    """The dataclass of ``Dataclass | None`` (a table), else None."""
    found = [arg for arg in get_args(annotation) or (annotation,) if dataclasses.is_dataclass(arg)]
    return found[0] if found else None


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through unions, ``Annotated`` and arrays)."""
    annotation, _ = _constraints(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in models_in(arg)]


# -- examples ----------------------------------------------------------------------


def _values(data: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """The values at ``path`` in a TOML document; an array of tables is searched table by table."""
    if isinstance(data, list):
        for item in data:
            yield from _values(item, path)
        return
    if not isinstance(data, dict) or path[0] not in data:
        return
    if len(path) == 1:
        yield data[path[0]]
    else:
        yield from _values(data[path[0]], path[1:])


def example_value(found: list[Example], path: tuple[str, ...]) -> str:
    """The first value at ``path`` in ``found`` (TOML), blank if none sets it or it is an array of tables."""
    for shipped in found:
        for value in _values(shipped.data, path):
            if not (isinstance(value, list) and value and isinstance(value[0], dict)):
                return f"`{toml_value(value)}`"
    return ""


# -- keys of models and dataclasses ------------------------------------------------


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "*required*"
    value = field.get_default(call_default_factory=True)
    return "—" if value is None else f"`{toml_value(value)}`"


def model_keys(
    model: type[BaseModel],
    found: list[Example],
    prefix: tuple[str, ...],
    units: Mapping[str, str] | None = None,
    see: Mapping[type, str] | None = None,
) -> list[Key]:
    """The keys of a pydantic model; examples from ``found`` under ``prefix``, units of keys
    without a description from ``units``, links to nested tables from ``see``."""
    keys = []
    for name, field in model.model_fields.items():
        description, unit = split_unit(field.description or "")
        keys.append(
            Key(
                name,
                type_text(field.annotation, field.metadata, see),
                unit or (units or {}).get(name, ""),
                _default(field),
                example_value(found, (*prefix, name)),
                markdown(description),
            )
        )
    return keys


def docstring_parameters(cls: type) -> dict[str, tuple[str, str]]:
    """name → (unit, description) from the ``Parameters`` block of a class docstring."""
    text = inspect.cleandoc(cls.__doc__ or "")
    block = text.partition("Parameters\n----------\n")[2]
    block = re.split(r"\n\n\S[^\n]*\n-{3,}\n", block)[0]
    parameters: dict[str, tuple[str, str]] = {}
    name = None
    for line in block.splitlines():
        match = _PARAMETER.match(line)
        if match:
            name = match[1]
            parameters[name] = (match[3] or "", "")
        elif name is not None and line.strip():
            unit, description = parameters[name]
            parameters[name] = (unit, f"{description} {line.strip()}".strip())
    return {key: (unit, markdown(description)) for key, (unit, description) in parameters.items()}


def dataclass_keys(cls: type, found: list[Example], name: str) -> list[Key]:
    """The keys of the arm dataclass ``cls`` given as the table ``name`` (``"arm.links"``),
    from its fields and its docstring; nested tables link to their own section."""
    hints = get_type_hints(cls)
    documented = docstring_parameters(cls)
    keys = []
    for field in dataclasses.fields(cls):
        unit, description = documented.get(field.name, ("", ""))
        if field.default is not dataclasses.MISSING:
            unset = field.default is None or field.default == ()
            default = "—" if unset else f"`{toml_value(field.default)}`"
        else:
            default = "*required*"
        annotation = hints[field.name]
        nested, table_class = _array_of_tables(annotation), _table_class(annotation)
        link = _link(_header(f"{name}.{field.name}", nested is not None))
        if nested is not None:
            kind = f"array of tables ({link})"
        else:
            kind = type_text(annotation, see={table_class: link} if table_class else None)
        keys.append(
            Key(
                field.name,
                kind,
                unit,
                default,
                example_value(found, (*name.split("."), field.name)),
                description,
            )
        )
    return keys


# -- sections ------------------------------------------------------------------------


def _arm_tables() -> list[tuple[str, type, bool]]:
    """Every arm table given by a dataclass: (dotted name, class, array of tables), nested
    tables right after their parent."""
    tables: list[tuple[str, type, bool]] = []

    def visit(name: str, cls: type, array: bool) -> None:
        tables.append((name, cls, array))
        hints = get_type_hints(cls)
        for field in dataclasses.fields(cls):
            nested = _array_of_tables(hints[field.name])
            if nested is not None:
                visit(f"{name}.{field.name}", nested, True)
            elif _table_class(hints[field.name]) is not None:
                visit(f"{name}.{field.name}", _table_class(hints[field.name]), False)

    for name, (cls, array) in ARM_TABLES.items():
        visit(name, cls, array)
    return tables


def _header(name: str, array: bool) -> str:
    """The heading of a TOML table: ``[name]``, or ``[[name]]`` for an array of tables."""
    return f"`[[{name}]]`" if array else f"`[{name}]`"


def _link(heading: str) -> str:
    """A Markdown link to a heading of the reference."""
    return f"[{heading}](#{slug(heading)})"


def study_section(found: list[Example]) -> list[str]:
    model = config_schema().model_fields["study"].annotation
    lines = [f"## {_header('study', False)}", "", *table(model_keys(model, found, ("study",))), ""]
    lines += ["### Study kinds", "", "| kind | what it does | shipped examples |", "|---|---|---|"]
    for name in sorted(KINDS):
        what = summary(sys.modules[type(KINDS[name]).__module__])
        what = what.removeprefix(f"`{name}`: ")
        shipped = ", ".join(f"`{e.name}`" for e in found if e.kind == name)
        lines.append(f"| [`{name}`](#{slug(_kind_heading(name))}) | {what} | {shipped} |")
    return [*lines, ""]


def arm_section(found: list[Example]) -> list[str]:
    model = config_schema().model_fields["arm"].annotation
    keys = []
    for key in model_keys(model, found, ("arm",)):
        name = f"arm.{key.key}"
        if name in ARM_TABLES:
            key = dataclasses.replace(key, type=f"{key.type} ({_link(_header(name, ARM_TABLES[name][1]))})")
        keys.append(key)
    lines = [f"## {_header('arm', False)}", "", *table(keys), ""]
    lines += [
        "### Presets",
        "",
        "| preset | joints | links | planar | arm |",
        "|---|---|---|---|---|",
    ]
    for name, build in PRESETS.items():
        arm: Arm = build()
        joints = ", ".join(joint.kind for joint in arm.joints)
        links = ", ".join(link.kind for link in arm.links)
        lines.append(
            f"| `{name}` | {joints} | {links} | {'yes' if arm.is_planar else 'no'} | {summary(build)} |"
        )
    lines.append("")
    for name, cls, array in _arm_tables():
        header = _header(name, array)
        lines += [f"### {header}", "", f"The fields of `{_public_path(cls)}`.", ""]
        lines += [*table(dataclass_keys(cls, found, name)), ""]
    return lines


def sweep_section(found: list[Example]) -> list[str]:
    model = config_schema().model_fields["sweep"].annotation
    lines = [f"## {_header('sweep', False)}", "", *blocks(paragraphs(model.__doc__))]
    cases = " ".join(paragraphs(expand_cases.__doc__))
    lines += [
        *table(model_keys(model, found, ("sweep",))),
        "",
        f"**Cases.** {cases} `flexlink show CONFIG` lists them.",
        "",
    ]
    lines += ["### Backends", "", "| backend | label | sized by |", "|---|---|---|"]
    for name, backend in BACKENDS.items():
        lines.append(f"| `{name}` | {backend.label} | `{backend.size_column}` |")
    columns = [
        "family",
        "frame",
        *(f"`{name}` case shape" for name in BACKENDS),
        "translating links",
        "shapes",
    ]
    lines += [
        "",
        "### Shape families",
        "",
        "The `shape` each family of `shapes` gives a backend's cases, and whether a translating link "
        "(a flexible link on a prismatic joint) can use it.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    translating = translating_families()
    for family in sorted(shapes.FAMILIES):
        cls = shapes.FAMILIES[family]
        cases = [f"`{backend.shapes([family])[0]}`" for backend in BACKENDS.values()]
        usable = (
            "only (its shapes follow the free length)"
            if cls.tracks_length
            else ("yes" if family in translating else "no")
        )
        lines.append(f"| `{family}` | `{cls.frame}` | {' | '.join(cases)} | {usable} | {summary(cls)} |")
    lines.append("")
    return lines + _expansion(found)


def _expansion(found: list[Example]) -> list[str]:
    """The cases of the first shipped config where a backend merges shape families (none: no text)."""

    def merges(config) -> bool:
        sweep = config.sweep
        return any(len(BACKENDS[name].shapes(sweep.shapes)) < len(sweep.shapes) for name in sweep.backends)

    configs = [(shipped, config_schema().model_validate(shipped.data)) for shipped in found]
    chosen = next(((shipped, config) for shipped, config in configs if merges(config)), None)
    if chosen is None:
        return []
    shipped, config = chosen
    sweep = config.sweep
    cases = expand_cases(config)
    settings = ", ".join(f"`{key} = {toml_value(getattr(sweep, key))}`" for key in type(sweep).model_fields)
    lines = [
        f"For example, the sweep of `{shipped.path}` ({settings}) gives {len(cases)} cases:",
        "",
        "| case | " + " | ".join(discretization_columns()) + " |",
        "|" + "---|" * (len(discretization_columns()) + 1),
    ]
    for case in cases:
        values = ["" if value is None else str(value) for value in case.discretization.columns().values()]
        lines.append(f"| {case.number} | " + " | ".join(values) + " |")
    return [*lines, ""]


def _kind_heading(name: str) -> str:
    return f'`study.kind = "{name}"`'


def _trajectory_heading(name: str) -> str:
    return f'`trajectory.kind = "{name}"`'


def _nested_links() -> dict[type, str]:
    """Where the keys of the simulation's nested tables are listed."""
    schema = simulation_schema()
    links = {
        model: _link(CONTROLLER_HEADING) for model in models_in(schema.model_fields["controller"].annotation)
    }
    for model in models_in(schema.model_fields["trajectory"].annotation):
        links[model] = _link(TRAJECTORY_HEADING)
    return links


def analysis_section(found: list[Example]) -> list[str]:
    lines = [
        f"## {_header('analysis', False)}",
        "",
        "Its keys depend on `study.kind`: one table per registered kind "
        "(`flexlink schema --kind KIND` prints its JSON schema).",
        "",
    ]
    see = _nested_links()
    for name in sorted(KINDS):
        kind = KINDS[name]
        shipped = [e for e in found if e.kind == name]
        lines += [f"### {_kind_heading(name)}", "", summary(sys.modules[type(kind).__module__]), ""]
        lines += [*table(model_keys(kind.analysis_schema, shipped, ("analysis",), see=see)), ""]
        if shipped:
            first, others = shipped[0], shipped[1:]
            also = f"; also of this kind: {', '.join(f'`{e.name}`' for e in others)}" if others else ""
            lines += [
                f"Example: `{first.path}` (`flexlink init {first.name}`{also}):",
                "",
                "```toml",
                first.text.rstrip("\n"),
                "```",
                "",
            ]
    return lines


def controller_section(found: list[Example]) -> list[str]:
    model = models_in(simulation_schema().model_fields["controller"].annotation)[0]
    with_controller = [e for e in found if "controller" in e.data.get("analysis", {})]
    lines = [
        f"## {CONTROLLER_HEADING}",
        "",
        "Of the `simulation` kind: an inline table whose `kind` names a controller of "
        "`core.analysis.controllers.CONTROLLERS` (or `none`).",
        "",
        *table(model_keys(model, with_controller, ("analysis", "controller"))),
        "",
        "| kind | control law | from the config |",
        "|---|---|---|",
    ]
    for name, cls in CONTROLLERS.items():
        lines.append(f"| `{name}` | {' '.join(paragraphs(cls.__doc__))} | {summary(cls.from_config)} |")
    return [*lines, ""]


def trajectory_section(found: list[Example]) -> list[str]:
    variants = models_in(simulation_schema().model_fields["trajectory"].annotation)
    lines = [
        f"## {TRAJECTORY_HEADING}",
        "",
        "Of the `simulation` kind: an inline table whose `kind` names a trajectory of "
        "`core.analysis.trajectories.TRAJECTORIES`; its other keys are the keyword parameters of that "
        "trajectory's `from_config`.",
        "",
    ]
    for name, cls in TRAJECTORIES.items():
        spec = next(m for m in variants if get_args(m.model_fields["kind"].annotation) == (name,))
        doc = summary(cls.from_config)
        units = {
            key: match[1]
            for key in spec.model_fields
            if (match := re.search(rf"(?<![\w`])`?{re.escape(key)}`?\s\[([^\]]+)\]", doc))
        }
        shipped = [e for e in found if e.data.get("analysis", {}).get("trajectory", {}).get("kind") == name]
        lines += [
            f"### {_trajectory_heading(name)}",
            "",
            *blocks(paragraphs(cls.__doc__)),
            f"Parameters: {doc}",
            "",
        ]
        lines += [*table(model_keys(spec, shipped, ("analysis", "trajectory"), units=units)), ""]
    return lines


def simple_section(name: str, found: list[Example]) -> list[str]:
    model = config_schema().model_fields[name].annotation
    return [f"## {_header(name, False)}", "", *table(model_keys(model, found, (name,))), ""]


def config_reference() -> str:
    """The Markdown text of ``docs/CONFIG.md``."""
    found = shipped_examples()
    sections = [
        study_section(found),
        arm_section(found),
        sweep_section(found),
        analysis_section(found),
        controller_section(found),
        trajectory_section(found),
        simple_section("report", found),
        simple_section("execution", found),
    ]
    required = [f"`[{name}]`" for name, field in config_schema().model_fields.items() if field.is_required()]
    optional = [
        f"`[{name}]`" for name, field in config_schema().model_fields.items() if not field.is_required()
    ]
    intro = [
        "# Study config reference",
        "",
        f"<!-- Generated from the config schema by `{REGENERATE}`; do not edit by hand. -->",
        "",
        f"A study is a TOML file with the tables {', '.join(required)} (required) and "
        f"{', '.join(optional)} (optional). Unknown keys are errors, and every error names its key "
        "path, list positions counted from 1. `flexlink show CONFIG` validates a file and lists its "
        "cases; `flexlink schema` prints the JSON schema of the file and `flexlink schema --kind KIND` "
        "that of one kind's `[analysis]` table.",
        "",
        f"Every number must be finite (`nan` and `inf` are refused wherever they stand), no array may "
        f"hold more than {MAX_VALUES} values, and a list of cases or runs (sizes, backends, shapes, "
        "solvers, directions, chain lengths, formats) may not repeat a value. Counts are bounded "
        "(**type** says by what); a few larger ones run only with `--force` (say *without `--force`*), "
        "as do more `blas_threads` than the machine's cores and more `workers` than twice them. The "
        "arm's values must keep the model meaningful in double precision: the bounds are in the "
        "descriptions of `[[arm.links]]`, `[[arm.joints]]` and the tables in them.",
        "",
        "In the tables: **type** is the TOML type with its constraints; **unit** is SI; **default** "
        "is the value of a key left out (*required*: it must be given; —: unset, see the description); "
        "**example** is the value in the first shipped config (`studies/configs`, in name order) that "
        "sets the key.",
        "",
        "Contents:",
        "",
    ]
    for section in sections:
        heading = section[0].removeprefix("## ")
        intro.append(f"- [{heading}](#{slug(heading)})")
    lines = [*intro, ""]
    for section in sections:
        lines += section
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.buffer.write(config_reference().encode("utf-8"))
