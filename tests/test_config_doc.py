"""``docs/CONFIG.md`` is generated from the schema (:mod:`studies.config_doc`) and up to date.

The key tables are checked against the schema walked here, independently of
the generator: every field of every ``[section]`` model, of every study kind's
``analysis_schema`` (with its nested tables) and of the arm dataclasses must
have its table, so a new key fails until the reference is regenerated.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from core.arm import Joint, Link, Payload
from studies.config import config_schema, parse_config
from studies.config_doc import REGENERATE, config_reference
from studies.kinds import KINDS

DOC = Path(__file__).resolve().parents[1] / "docs" / "CONFIG.md"
#: Arm tables whose keys are dataclass fields: heading → class (nested tables are walked).
ARM_TABLES = {"`[[arm.links]]`": Link, "`[[arm.joints]]`": Joint, "`[arm.payload]`": Payload}


@pytest.fixture(scope="module")
def reference() -> str:
    return config_reference()


def models(annotation) -> list[type[BaseModel]]:
    """The pydantic models held by an annotation (through unions, Annotated, lists)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in models(arg)]


def dataclass_tables(heading: str, cls: type) -> dict[str, set[str]]:
    """heading → keys of an arm dataclass table and of the tables nested in it."""
    tables = {heading: {field.name for field in dataclasses.fields(cls)}}
    name = heading.strip("`[]")
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        args = typing.get_args(hints[field.name])
        for arg in args:
            if dataclasses.is_dataclass(arg):
                array = typing.get_origin(hints[field.name]) is tuple
                nested = f"`[[{name}.{field.name}]]`" if array else f"`[{name}.{field.name}]`"
                tables.update(dataclass_tables(nested, arg))
    return tables


def expected_tables() -> dict[str, set[str]]:
    """heading → the keys its table must list, walked from the schema."""
    expected = {}
    for name, field in config_schema().model_fields.items():
        for model in models(field.annotation):
            expected[f"`[{name}]`"] = set(model.model_fields)
    for name, kind in KINDS.items():
        schema = kind.analysis_schema
        expected[f'`study.kind = "{name}"`'] = set(schema.model_fields)
        for key, field in schema.model_fields.items():
            for model in models(field.annotation):
                literal = typing.get_args(model.model_fields["kind"].annotation)
                heading = f'`{key}.kind = "{literal[0]}"`' if len(literal) == 1 else f"`analysis.{key}`"
                expected[heading] = set(model.model_fields)
    for heading, cls in ARM_TABLES.items():
        expected.update(dataclass_tables(heading, cls))
    return expected


def tables_by_heading(text: str) -> dict[str, list[set[str]]]:
    """heading → the first-column keys (`` `key` `` cells) of each table under it; code blocks skipped."""
    found: dict[str, list[set[str]]] = {}
    heading, rows, in_code = "", None, False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif in_code:
            continue
        elif line.startswith("#"):
            heading, rows = line.lstrip("#").strip(), None
        elif line.startswith("|"):
            if rows is None:
                rows = set()
                found.setdefault(heading, []).append(rows)
            match = re.fullmatch(r"`([^`]+)`", line.split("|")[1].strip())
            if match:
                rows.add(match[1])
        else:
            rows = None
    return found


def missing_keys(text: str) -> list[str]:
    """What the reference lacks: per heading, the schema keys no table under it lists exactly."""
    found = tables_by_heading(text)
    problems = []
    for heading, keys in expected_tables().items():
        tables = found.get(heading, [])
        if keys not in tables:
            closest = max(tables, key=lambda rows: len(rows & keys), default=set())
            problems.append(
                f"{heading}: missing {sorted(keys - closest)}, not in the schema {sorted(closest - keys)}"
            )
    return problems


def test_committed_reference_is_the_generated_one(reference):
    assert DOC.read_text(encoding="utf-8") == reference, (
        f"docs/CONFIG.md is out of date with the schema: run `{REGENERATE}`"
    )


def test_every_key_of_the_schema_has_its_table(reference):
    assert missing_keys(reference) == []


def test_a_key_left_out_of_the_reference_is_found(reference):
    simulation = reference.index('`study.kind = "simulation"`')
    row = re.compile(r"^\| `t_end` \|.*\n", flags=re.M).search(reference, simulation)
    text = reference[: row.start()] + reference[row.end() :]
    assert missing_keys(text) == ["`study.kind = \"simulation\"`: missing ['t_end'], not in the schema []"]


def test_every_section_and_analysis_key_has_a_description():
    sections = [
        model for field in config_schema().model_fields.values() for model in models(field.annotation)
    ]
    schemas = [kind.analysis_schema for kind in KINDS.values()]
    undescribed = [
        f"{model.__name__}.{name}"
        for model in sections + schemas
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert undescribed == []


def test_every_kind_has_an_example_and_every_example_is_valid(reference):
    examples = re.findall(r"^```toml\n(.*?)^```$", reference, flags=re.S | re.M)
    kinds = [parse_config(tomllib.loads(text)).study.kind for text in examples]
    assert sorted(kinds) == sorted(KINDS), "every study kind needs a shipped example in studies/configs"
