"""Resume by case identity, the output folder as the record of what ran.

A case is reused on ``--resume`` only when the identity recorded with it (kind, arm,
discretization, analysis settings, numerics) equals the identity the current config gives
it; whatever else is in the folder is set aside in ``cases/superseded/`` and never reaches
results.csv. Every check compares the resumed folder's results.csv, byte for byte, with an
uninterrupted run of the same config.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from studies import cli, runner
from studies.config import expand_cases, load_config, parse_config
from studies.kinds import KINDS
from studies.record import config_toml

STUDY = textwrap.dedent(
    """
    [study]
    name = "resumed"
    kind = "convergence"

    [arm]
    preset = "one-flexible-link"

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-free", "pinned-pinned"]
    modes = [1, 2, 4]
    elements = [1, 2]

    [analysis]
    n_frequencies = 2

    [report]
    formats = ["csv"]
    plots = false
    """
)


def _write(folder: Path, text: str = STUDY, name: str = "study.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _results(folder: Path) -> bytes:
    return (folder / "results.csv").read_bytes()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted run of STUDY."""
    folder = tmp_path_factory.mktemp("reference")
    code = cli.main(["run", str(_write(folder)), "--output", str(folder / "out")])
    assert code == 0
    return folder / "out"


def _cases_match_their_numbers(folder: Path) -> None:
    """Every row of results.csv carries the sweep columns of the case its number names."""
    config = load_config(folder / "config.toml")
    expected = {case.number: case.columns() for case in expand_cases(config)}
    results = pd.read_csv(folder / "results.csv")
    assert sorted(results["case"].unique()) == sorted(expected)
    for row in results.drop_duplicates("case").to_dict("records"):
        columns = expected[row["case"]]
        assert row["backend"] == columns["backend"] and row["shape"] == columns["shape"]
        size = "modes" if columns["backend"] == "amm" else "elements"
        assert row[size] == columns[size]


def test_resume_of_a_narrower_run_gives_the_uninterrupted_table(tmp_path, capsys, reference):
    """The issue's reproduction: before, resume matched cases by number, and results.csv held
    `amm,pinned-pinned,1` as case 3 with AMM clamped-free cases missing."""
    path = _write(tmp_path)
    narrow = ["--set", "sweep.modes=[1, 4]", "--set", "sweep.elements=[2]"]
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), *narrow)[0] == 0
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume")
    assert code == 0
    # narrow cases: amm cf 1, 4 -> 1, 3; amm pp 1, 4 -> 4, 6; fem clamped 2 -> 8; fem pinned 2 -> 10
    assert "resume: reused 6 cases (1, 3-4, 6, 8, 10)" in out
    assert "resume: ran 4 cases (2, 5, 7, 9 new)" in out
    assert "10/10 cases succeeded (6 resumed)" in out
    assert _results(tmp_path / "R") == _results(reference)
    _cases_match_their_numbers(tmp_path / "R")


def test_a_reordered_sweep_reuses_every_case_under_its_new_number(tmp_path, capsys):
    path = _write(tmp_path)
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"))[0] == 0
    reordered = ["--set", "sweep.modes=[4, 2, 1]", "--set", 'sweep.shapes=["pinned-pinned", "clamped-free"]']
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume", *reordered)
    assert code == 0 and "resume: reused 10 cases (1-10)" in out and "ran" not in out
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "fresh"), *reordered)[0] == 0
    assert _results(tmp_path / "R") == _results(tmp_path / "fresh")
    _cases_match_their_numbers(tmp_path / "R")
    assert not list((tmp_path / "R" / "cases").glob("superseded/*"))  # nothing set aside


def test_changed_analysis_reruns_and_keeps_the_earlier_results_aside(tmp_path, capsys, reference):
    path = _write(tmp_path)
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"))[0] == 0
    more = ["--set", "analysis.n_frequencies=3"]
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume", *more)
    assert code == 0
    assert "resume: ran 10 cases (1-10 analysis settings changed)" in out
    assert "resume: dropped 10 earlier cases (1-10)" in out and "reused" not in out
    assert len(list((tmp_path / "R" / "cases" / "superseded").glob("*.csv"))) == 10
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "fresh"), *more)[0] == 0
    assert _results(tmp_path / "R") == _results(tmp_path / "fresh")
    # back to the first settings: the set-aside cases are found by identity and reused
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume")
    assert code == 0 and "resume: reused 10 cases (1-10)" in out and "ran" not in out
    assert _results(tmp_path / "R") == _results(reference)


def test_other_numerics_rerun_every_case(tmp_path, capsys, monkeypatch):
    path = _write(tmp_path)
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"))[0] == 0
    versions = runner.numerics_versions()
    monkeypatch.setattr(runner, "numerics_versions", lambda: {**versions, "numpy": "0.0.1"})
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume")
    assert (
        code == 0 and "resume: ran 10 cases (1-10 package versions, processor or BLAS threads changed)" in out
    )
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume")
    assert "resume: reused 10 cases (1-10)" in out


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ["--set", "study.kind=frequencies"],
            "were computed for another study kind (study.kind: 'convergence' before, 'frequencies' now)",
        ),
        (
            ["--set", "arm.gravity=[0.0, -9.81, 0.0]"],
            "were computed for another arm (arm.gravity[2]: 0.0 before, -9.81 now)",
        ),
    ],
)
def test_another_kind_or_arm_is_refused_and_the_folder_left_alone(tmp_path, capsys, change, message):
    path = _write(tmp_path)
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"))[0] == 0
    before = {p: p.read_bytes() for p in sorted((tmp_path / "R").rglob("*")) if p.is_file()}
    code, out, err = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume", *change)
    assert code == 2 and out == ""
    assert err.startswith("flexlink: error: --resume: the cases in ") and message in err
    assert err.count("\n") == 1
    after = {p: p.read_bytes() for p in sorted((tmp_path / "R").rglob("*")) if p.is_file()}
    assert after == before


def test_case_files_without_an_identity_are_never_mixed_in(tmp_path, capsys, reference):
    """Case files of a flexlink that recorded no identity (or edited by hand) are set aside."""
    path = _write(tmp_path)
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"))[0] == 0
    for meta in (tmp_path / "R" / "cases").glob("*.json"):
        info = json.loads(meta.read_text())
        del info["identity"]
        meta.write_text(json.dumps(info))
        rows = meta.with_suffix(".csv")
        rows.write_text(rows.read_text().replace(",0.", ",9."))  # values no run gives
    code, out, _ = _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), "--resume")
    assert code == 0 and "resume: ran 10 cases (1-10 no case identity recorded before)" in out
    assert _results(tmp_path / "R") == _results(reference)


def test_the_folder_config_is_the_effective_one_and_reproduces_results(tmp_path, capsys):
    path = _write(tmp_path)
    overrides = ["--set", "sweep.modes=[1, 3]", "--set", "analysis.n_frequencies=3"]
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "R"), *overrides)[0] == 0
    manifest = json.loads((tmp_path / "R" / "manifest.json").read_text())
    assert manifest["overrides"] == ["sweep.modes=[1, 3]", "analysis.n_frequencies=3"]
    assert manifest["config_file"] == str(path)
    recorded = tomllib.loads((tmp_path / "R" / "config.toml").read_text())
    assert recorded["sweep"]["modes"] == [1, 3] and recorded["analysis"]["n_frequencies"] == 3
    assert recorded["analysis"]["joints"] == "locked"  # the kind's default, written out
    assert manifest["config"] == recorded
    again = ["run", str(tmp_path / "R" / "config.toml"), "--output", str(tmp_path / "again")]
    assert _run(capsys, *again)[0] == 0
    assert _results(tmp_path / "again") == _results(tmp_path / "R")


@pytest.mark.parametrize("example", sorted(cli.examples()))
def test_every_example_round_trips_through_its_effective_config(example):
    """The effective config of each shipped example gives the same cases, arm, analysis,
    report and execution settings as the example itself (nothing is run)."""
    config = load_config(cli.examples()[example])
    again = parse_config(tomllib.loads(config_toml(config)))
    kind = KINDS[config.study.kind]
    assert expand_cases(again) == expand_cases(config)
    assert (
        again.study == config.study and again.report == config.report and again.execution == config.execution
    )
    from studies.config import build_arm

    assert build_arm(again.arm) == build_arm(config.arm)
    analysis = kind.analysis_schema.model_validate(config.analysis)
    assert kind.analysis_schema.model_validate(again.analysis) == analysis


#: Six simulation cases of 0.3-3 s each, on a process pool of two workers.
KILLED = textwrap.dedent(
    """
    [study]
    name = "killed"
    kind = "simulation"
    [arm]
    preset = "one-flexible-link"
    [sweep]
    backends = ["amm"]
    shapes = ["clamped-free", "pinned-pinned"]
    modes = [1, 2, 3]
    [analysis]
    t_end = 1.0
    controller = { kind = "pd", kp = 5.0, kd = 0.5 }
    trajectory = { kind = "parabolic-blend", q_end = [0.3], T = 0.5, blend = 0.2 }
    method = "DOP853"
    rtol = 1e-10
    atol = 1e-12
    output_points = 51
    [report]
    formats = ["csv"]
    plots = false
    [execution]
    executor = "processes"
    workers = 2
    """
)


@pytest.mark.slow
def test_a_killed_run_resumed_is_byte_identical_to_an_uninterrupted_one(tmp_path, capsys):
    """SIGKILL (no handler runs) once the first case is on disk, then --resume: results.csv
    equals an uninterrupted run's, serial, on the pool and on a local Dask cluster, byte for byte."""
    path = _write(tmp_path, KILLED)
    code = "import sys; from studies.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "run", str(path), "--output", str(tmp_path / "killed")]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cases = tmp_path / "killed" / "cases"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(cases.glob("*.json")):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    finished = len(list(cases.glob("*.json")))
    assert 1 <= finished < 6, finished  # killed mid-run
    code, out, err = _run(capsys, "run", str(path), "--output", str(tmp_path / "killed"), "--resume")
    assert code == 0, err
    assert f"6/6 cases succeeded ({finished} resumed)" in out
    serial = ["--set", 'execution.executor="serial"', "--set", "execution.workers=1"]
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "serial"), *serial)[0] == 0
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "pool"))[0] == 0
    dask = ["--set", 'execution.executor="dask"']
    assert _run(capsys, "run", str(path), "--output", str(tmp_path / "dask"), *dask)[0] == 0
    killed = _results(tmp_path / "killed")
    assert (
        killed == _results(tmp_path / "serial") == _results(tmp_path / "pool") == _results(tmp_path / "dask")
    )
