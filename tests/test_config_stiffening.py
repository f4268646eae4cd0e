"""The ``sweep.geometric_stiffening`` config key: accepted forms, refused values,
the models it builds, and where a run reports it (rows, summary, case records, manifest)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pandas as pd
import pytest

from studies import cli
from studies.config import build_arm, expand_cases, parse_config
from studies.discretizations import STIFFENING_COLUMN, Discretization
from studies.errors import ConfigError


def config(stiffening=None, kind: str = "frequencies", preset: str = "one-flexible-link") -> dict:
    sweep = {"backends": ["amm", "fem"], "modes": [2], "elements": [2]}
    if stiffening is not None:
        sweep["geometric_stiffening"] = stiffening
    return {"study": {"name": "s", "kind": kind}, "arm": {"preset": preset}, "sweep": sweep}


def test_without_the_key_cases_are_the_classic_ones_and_rows_have_no_column():
    cases = expand_cases(parse_config(config()))
    assert [c.discretization.geometric_stiffening for c in cases] == [None, None]
    assert all(STIFFENING_COLUMN not in c.columns() for c in cases)
    assert [c.discretization.label for c in cases] == ["AMM clamped-free x2", "FEM clamped x2"]


@pytest.mark.parametrize(
    "value, expected",
    [(True, [True, True]), (False, [False, False]), ([False, True], [False, True, False, True])],
)
def test_accepted_values_expand_the_sweep(value, expected):
    """A bool builds every case that way; [false, true] every discretization both ways, side by
    side (backend, shape, size, then stiffening); the column and the label say which."""
    cases = expand_cases(parse_config(config(value)))
    assert [c.columns()[STIFFENING_COLUMN] for c in cases] == expected
    assert [c.number for c in cases] == list(range(1, len(expected) + 1))
    for case in cases:
        assert case.discretization.label.endswith(" stiffened") == case.discretization.geometric_stiffening


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "yes",
            "sweep.geometric_stiffening: must be true or false, or a list of them like [false, true], got 'yes'",
        ),
        (1, "sweep.geometric_stiffening: must be true or false, or a list of them like [false, true], got 1"),
        (
            [],
            "sweep.geometric_stiffening: must be true or false, or a list of them like [false, true], got []",
        ),
        ([True, "no"], "sweep.geometric_stiffening: must be true or false"),
        ([True, True], "sweep.geometric_stiffening: must not repeat a value, got [True, True]"),
    ],
)
def test_refused_values_name_the_key_and_the_value(value, message):
    with pytest.raises(ConfigError) as error:
        parse_config(config(value))
    assert str(error.value).startswith(message)


def test_refused_where_it_cannot_be_built():
    """Translating links (the foreshortening of a sliding beam is not modelled) and the symbolic
    kind (its derivation is the classic one) refuse stiffening; false is accepted by both."""
    with pytest.raises(
        ConfigError, match=r"sweep.geometric_stiffening: not available for translating links \[3\]"
    ):
        parse_config(config(True, preset="rrp-translating"))
    parse_config(config(False, preset="rrp-translating"))
    symbolic = config([False, True], kind="symbolic")
    symbolic["sweep"]["backends"] = ["amm"]
    with pytest.raises(
        ConfigError, match=r"sweep\.geometric_stiffening: the symbolic kind builds the classic models"
    ):
        parse_config(symbolic)


def test_the_key_reaches_both_backends_models():
    """Each case's model is built with geometric_stiffening as the case says (None and False:
    the classic model); from_columns recovers it from a row read back from CSV (strings)."""
    parsed = parse_config(config([False, True]))
    arm = build_arm(parsed.arm)
    for case in expand_cases(parsed):
        model = case.discretization.build(arm)
        assert model.geometric_stiffening is case.discretization.geometric_stiffening
    for case in expand_cases(parse_config(config())):
        assert case.discretization.build(arm).geometric_stiffening is False
    row = {"backend": "fem", "shape": "clamped", "modes": np.nan, "elements": 2.0, STIFFENING_COLUMN: "True"}
    assert Discretization.from_columns(row) == Discretization("fem", "clamped", 2, True)
    row[STIFFENING_COLUMN] = np.nan
    assert Discretization.from_columns(row) == Discretization("fem", "clamped", 2, None)


def test_a_run_reports_the_key_in_rows_summary_case_records_and_manifest(tmp_path):
    """Locked frequencies of the lumped two-link arm under gravity with pinned-frame FEM, with
    and without stiffening: every row and the summary's tables carry the column, each case
    record its value, the manifest the key; and the stiffened case is the stiffened model (its
    frequencies differ from the classic ones: pinned frames pick up the gravity preload through
    the foreshortening, 2.7 % on ω₁ at 32 elements; here 12.209 against
    12.127 rad/s, bound > 0.1 %)."""
    text = textwrap.dedent(
        """
        [study]
        name = "stiffening"
        kind = "frequencies"
        [arm]
        preset = "lumped-two-link"
        [sweep]
        backends = ["fem"]
        shapes = ["pinned-pinned"]
        elements = [4]
        geometric_stiffening = [false, true]
        [analysis]
        configuration = [0.7853981633974483, -0.7853981633974483]
        joints = "locked"
        n_frequencies = 2
        [report]
        plots = false
        """
    )
    path = tmp_path / "study.toml"
    path.write_text(text)
    assert cli.main(["run", str(path), "--output", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out"
    results = pd.read_csv(folder / "results.csv")
    assert results[STIFFENING_COLUMN].tolist() == [False, False, True, True]
    omega = results.set_index([STIFFENING_COLUMN, "mode"])["omega"]
    assert abs(omega[True, 1] / omega[False, 1] - 1) > 1e-3
    summary = (folder / "summary.md").read_text()
    for table in ("## frequencies [rad/s]", "## wall time per case"):
        header = summary.split(table)[1].strip().splitlines()[0]
        assert STIFFENING_COLUMN in header, table
    records = [json.loads((folder / "cases" / f"000{n}.json").read_text()) for n in (1, 2)]
    assert [r["sweep"][STIFFENING_COLUMN] for r in records] == [False, True]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["config"]["sweep"]["geometric_stiffening"] == [False, True]
