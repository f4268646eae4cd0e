"""The command line under generated input: corrupted TOML and random overrides at every level.

Whatever the config, ``flexlink`` must answer with exit code 0 (valid), 1 (a case failed,
others kept) or 2 (refused, one line on stderr) — never a traceback, never a file outside
the output folder. ``show`` validates everything ``run`` does (schema, arm, study-kind
checks, sizes) without running cases; ``run`` is driven with the tiny base config under
overrides of its analysis values, which keeps every example bounded (≤ 2 cases of ≤ 6
coordinates).
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studies import cli

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
