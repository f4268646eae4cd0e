"""The command line under generated input: corrupted TOML and random overrides at every level.

Whatever the config, ``flexlink`` must answer with exit code 0 (valid), 1 (a case failed,
others kept) or 2 (refused, one line on stderr) — never a traceback, never a file outside
the output folder. ``show`` validates everything ``run`` does (schema, arm, study-kind
checks, sizes) without running cases; ``run`` is driven with the tiny base config under
overrides of its analysis values, which keeps every example bounded (≤ 2 cases of ≤ 6
coordinates).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import tomllib
import types
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from core.arm import Joint, Link, Payload
from studies import cli
from studies.config import config_schema
from studies.kinds import KINDS
from studies.limits import MAX_VALUES

BASE = """[study]
name = "fuzz"
kind = "frequencies"

[arm]
preset = "lumped-two-link"

[sweep]
backends = ["amm", "fem"]
shapes = ["clamped-free"]
modes = [1]
elements = [1]

[analysis]
joints = "locked"
n_frequencies = 2

[execution]
executor = "serial"
"""

#: Keys the config knows, by section, and some it does not.
KEYS = {
    "study": ["name", "kind", "description"],
    "arm": ["preset", "gravity", "joints", "links", "payload", "tip_rotation"],
    "sweep": ["backends", "shapes", "modes", "elements", "frames"],
    "analysis": ["joints", "n_frequencies", "configuration", "t_end", "solver", "samples"],
    "execution": ["executor", "workers", "blas_threads", "scheduler"],
    "report": ["formats", "plots"],
    "nonsense": ["x"],
}


def _toml(value) -> str:
    """A TOML literal for a generated value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml(v) for v in value) + "]"


scalars = (
    st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.text(max_size=12)
    | st.sampled_from(["amm", "fem", "clamped-free", "pinned", "locked", "processes", "dask", "rigid"])
)
values = scalars.map(_toml) | st.lists(scalars, max_size=4).map(_toml) | st.text(max_size=20)


@st.composite
def overrides(draw) -> list[str]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(sorted(KEYS)))
        key = draw(st.sampled_from(KEYS[section]) | st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True))
        out.append(f"{section}.{key}={draw(values)}")
    return out


@st.composite
def corrupted(draw) -> bytes:
    """The base config with a slice deleted, garbage inserted or a byte flipped."""
    data = bytearray(BASE.encode())
    where = draw(st.integers(0, len(data) - 1))
    kind = draw(st.sampled_from(["delete", "insert", "flip"]))
    if kind == "delete":
        del data[where : where + draw(st.integers(1, 40))]
    elif kind == "insert":
        data[where:where] = draw(st.binary(min_size=1, max_size=12))
    else:
        data[where] ^= draw(st.integers(1, 255))
    return bytes(data)


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse refuses an argument: usage line and exit 2
        code = exit_.code
    err = capsys.readouterr().err
    return code, err


def _check(code: int, err: str, folder) -> None:
    assert code in (0, 1, 2), code
    assert "Traceback" not in err
    if code == 2:
        assert err.strip().startswith(("flexlink: error:", "usage:")), err
    stray = sorted(p.name for p in folder.iterdir() if p.name not in ("fuzz.toml", "out"))
    assert not stray, stray


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(changes=overrides())
def test_show_survives_random_overrides(tmp_path_factory, capsys, changes):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "fuzz.toml").write_text(BASE)
    argv = ["show", str(folder / "fuzz.toml")]
    for change in changes:
        argv += ["--set", change]
    code, err = _run(argv, capsys)
    _check(code, err, folder)


@FUZZ
@given(data=corrupted())
def test_show_survives_corrupted_files(tmp_path_factory, capsys, data):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "fuzz.toml").write_bytes(data)
    code, err = _run(["show", str(folder / "fuzz.toml")], capsys)
    _check(code, err, folder)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["n_frequencies", "joints", "configuration", "unknown"]),
    value=values,
)
def test_run_survives_random_analysis_values(tmp_path_factory, capsys, key, value):
    """A full ``run`` (≤ 2 tiny cases): refused up front, or every case finished or recorded."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "fuzz.toml").write_text(BASE)
    argv = [
        "run",
        str(folder / "fuzz.toml"),
        "--output",
        str(folder / "out"),
        "--set",
        f"analysis.{key}={value}",
    ]
    code, err = _run(argv, capsys)
    _check(code, err, folder)
    if code in (0, 1):
        assert (folder / "out" / "manifest.json").exists()


# -- absurd values at every numeric key --------------------------------------------------
#
# Every numeric key of the schema (each kind's [analysis] with its nested tables, [sweep],
# [execution], [arm] and the arm's dataclass tables) is enumerated from the models, so a new
# key is covered when it is added. Each gets NaN, ±inf, ±1e300, integers too large for it, and
# arrays too long, in a config that is otherwise valid (a shipped example of its kind); `show`
# (which never runs a case) must refuse each with exit 2 and one line naming the key path.

#: Keys where any integer of 64 bits is meaningful (10**9 is a valid seed).
ANY_INTEGER = {"seed"}
#: The arm of the arm keys: an inline spatial arm with a rigid and a flexible link, a lumped mass
#: and a payload (studies/configs/verify.toml).
ARM_EXAMPLE = "verify"
#: The arm tables given by dataclasses, where their first table sits in the example.
ARM_TABLES = {("arm", "links", 1): Link, ("arm", "joints", 0): Joint, ("arm", "payload"): Payload}


def _inline(value) -> str:
    """A TOML value, tables inline."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return _toml(value)


def _document(data: dict) -> str:
    return "".join(
        f"[{section}]\n" + "".join(f"{json.dumps(k)} = {_inline(v)}\n" for k, v in table.items())
        for section, table in data.items()
    )


def _example(name: str) -> dict:
    return tomllib.loads(cli.examples()[name].read_text())


def _examples_by_kind() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in sorted(cli.examples()):
        found.setdefault(_example(name)["study"]["kind"], name)
    return found


def _trajectory_examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in sorted(cli.examples()):
        trajectory = _example(name).get("analysis", {}).get("trajectory")
        if trajectory is not None:
            found.setdefault(trajectory["kind"], name)
    return found


def _numbers(annotation) -> tuple[set[str], bool, list]:
    """(the number types an annotation holds, whether as an array, the tables it holds)."""
    kinds: set[str] = set()
    array = False
    tables: list = []
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _numbers(args[0])
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            k, a, t = _numbers(arg)
            kinds |= k
            array |= a
            tables += t
        return kinds, array, tables
    if origin in (list, tuple):
        for arg in args:
            if arg is not Ellipsis:
                k, _, t = _numbers(arg)
                kinds |= k
                tables += [("array", table) for table in t]
        return kinds, True, tables
    if origin is typing.Literal:
        return ({"int"} if any(type(a) is int for a in args) else set()), False, []
    if annotation is float:
        return {"float"}, False, []
    if annotation is int:
        return {"int"}, False, []
    if isinstance(annotation, type) and (
        issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)
    ):
        return set(), False, [annotation]
    return set(), False, []


def _model_keys(model, path: tuple) -> list[tuple[tuple, str, bool, str | None]]:
    """(key path, 'int' or 'float', array, trajectory kind) of every numeric key of a model."""
    keys = []
    for name, field in model.model_fields.items():
        kinds, array, tables = _numbers(field.annotation)
        if kinds:
            keys.append(((*path, name), "float" if "float" in kinds else "int", array, None))
        for table in tables:
            if isinstance(table, tuple):  # an array of tables: its first
                keys += _model_keys(table[1], (*path, name, 0))
                continue
            spec = table.model_fields.get("kind")
            literal = typing.get_args(spec.annotation) if spec is not None else ()
            trajectory = literal[0] if name == "trajectory" and literal else None
            keys += [(p, k, a, trajectory or t) for p, k, a, t in _model_keys(table, (*path, name))]
    return keys


def _dataclass_keys(cls, path: tuple) -> list[tuple[tuple, str, bool, None]]:
    keys = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kinds, array, tables = _numbers(hints[field.name])
        if kinds:
            keys.append(((*path, field.name), "float" if "float" in kinds else "int", array, None))
        for table in tables:
            if isinstance(table, tuple):
                keys += _dataclass_keys(table[1], (*path, field.name, 0))
            else:
                keys += _dataclass_keys(table, (*path, field.name))
    return keys


def numeric_keys() -> list[tuple[str, tuple, str, bool]]:
    """(example config, key path, 'int' or 'float', array) of every numeric key of the schema."""
    by_kind, trajectories = _examples_by_kind(), _trajectory_examples()
    keys = []
    for kind, study_kind in KINDS.items():
        for path, number, array, trajectory in _model_keys(study_kind.analysis_schema, ("analysis",)):
            example = by_kind[kind] if trajectory is None else trajectories[trajectory]
            keys.append((example, path, number, array))
    for section in ("sweep", "execution", "arm"):
        model = config_schema().model_fields[section].annotation
        for path, number, array, _ in _model_keys(model, (section,)):
            keys.append((by_kind["convergence"], path, number, array))
    for path, cls in ARM_TABLES.items():
        keys += [(ARM_EXAMPLE, p, n, a) for p, n, a, _ in _dataclass_keys(cls, path)]
    return keys


def _key(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _with(data: dict, path: tuple, value) -> dict:
    """``data`` with ``value`` at ``path``, tables (and a first array entry) made as needed."""
    data = json.loads(json.dumps(data))  # a copy (the examples hold no nan)
    table = data
    for part, following in itertools.pairwise(path):
        empty = [] if isinstance(following, int) else {}
        if isinstance(part, int):
            while len(table) <= part:
                table.append(empty)
        elif part not in table or not isinstance(table[part], type(empty)):
            table[part] = empty
        table = table[part]
    table[path[-1]] = value
    return data


def _bad_values(path: tuple, number: str, array: bool, long: int) -> list:
    values: list = [math.nan, math.inf, -math.inf, 1e300, -1e300, [1] * long]
    if array:
        values += [[0.5, math.nan], [0.5, 1e300]]
    if number == "int":
        values += [2**63] + ([] if path[-1] in ANY_INTEGER else [10**9, [10**9]])
    return values


NUMERIC_KEYS = numeric_keys()


def test_every_kind_and_section_has_numeric_keys():
    assert {path[0] for _, path, _, _ in NUMERIC_KEYS} == {"analysis", "sweep", "execution", "arm"}
    kinds = {
        _example(example)["study"]["kind"] for example, path, _, _ in NUMERIC_KEYS if path[0] == "analysis"
    }
    assert kinds == set(KINDS), kinds  # every kind has numeric [analysis] keys
    assert len(NUMERIC_KEYS) > 80, len(NUMERIC_KEYS)


def _refused(tmp_path, capsys, example: str, path: tuple, value) -> None:
    config = tmp_path / "absurd.toml"
    config.write_text(_document(_with(_example(example), path, value)))
    code, err = _run(["show", str(config)], capsys)
    shown = f"{value[:3]}… ({len(value)} values)" if isinstance(value, list) and len(value) > 9 else value
    assert code == 2, (example, _key(path), shown, err)
    assert err.startswith("flexlink: error: ") and err.count("\n") == 1, err
    assert _key(path) in err, (_key(path), shown, err)


@pytest.mark.parametrize("example, path, number, array", NUMERIC_KEYS, ids=[_key(k[1]) for k in NUMERIC_KEYS])
def test_absurd_values_are_refused_at_every_numeric_key(example, path, number, array, tmp_path, capsys):
    """NaN, ±inf, ±1e300, integers beyond the key's bound and an array one value longer than any key
    may hold: exit 2 and one line naming the key path (list positions from 1), from `show`."""
    base = tmp_path / "base.toml"
    base.write_text(_document(_example(example)))
    assert _run(["show", str(base)], capsys)[0] == 0  # the example as written is valid
    for value in _bad_values(path, number, array, MAX_VALUES + 1):
        _refused(tmp_path, capsys, example, path, value)


@pytest.mark.slow
@pytest.mark.parametrize("example, path, number, array", NUMERIC_KEYS, ids=[_key(k[1]) for k in NUMERIC_KEYS])
def test_arrays_of_200000_values_are_refused_at_every_numeric_key(
    example, path, number, array, tmp_path, capsys
):
    _refused(tmp_path, capsys, example, path, [1] * 200_000)
