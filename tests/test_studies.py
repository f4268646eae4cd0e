"""The study runner and the flexlink CLI, end to end."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from studies import cli, runner
from studies.config import load_config
from studies.runner import run_study

README = Path(__file__).resolve().parents[1] / "README.md"
FREQUENCY_COLUMNS = ["backend", "shape", "modes", "elements", "mode", "omega", "hz", "reference", "rel_error"]

SMALL = textwrap.dedent(
    """
    [study]
    name = "small"
    kind = "convergence"

    [arm]
    preset = "one-flexible-link"

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-free"]
    modes = [1, 2, 4]
    elements = [1, 2, 4]

    [analysis]
    n_frequencies = 2

    [report]
    formats = ["csv", "markdown", "latex"]
    plots = false
    """
)


def write(tmp_path: Path, text: str, name: str = "study.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_cli(*args: str) -> int:
    return cli.main(list(args))


#: Simulation examples run with this horizon in the test suite (their full
#: horizons are for the reports; the runs are otherwise the shipped configs).
SHORT_HORIZON = 0.2


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(cli.examples()))
def test_every_shipped_example_runs_end_to_end(example, tmp_path, capsys):
    path = cli.examples()[example]
    config = load_config(path)
    if config.study.kind == "simulation":
        analysis = dict(config.analysis, t_end=SHORT_HORIZON, output_points=41)
        text = path.read_text()
        short = tmp_path / f"{example}.toml"
        short.write_text(
            re.sub(
                r"(?m)^t_end = .*$",
                f"t_end = {SHORT_HORIZON}",
                re.sub(r"(?m)^output_points = .*$", "output_points = 41", text),
            )
        )
        assert load_config(short).analysis == analysis
        path = short
    if config.study.kind == "stability":  # the same maneuvers, shorter and between long lengths
        short = tmp_path / f"{example}.toml"
        text = path.read_text()
        for key, value in (("eigen_points", "3"), ("output_points", "11"), ("T", "0.1"), ("blend", "0.05")):
            text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        short.write_text(re.sub(r"(?m)^lengths = .*$", "lengths = [0.9, 1.0]", text))
        path = short
    if config.study.kind == "timing":  # the same measurements, shorter
        short = tmp_path / f"{example}.toml"
        text = re.sub(r"(?m)^budget = .*$", "budget = 0.005", path.read_text())
        text = re.sub(r"(?m)^chain_links = .*$", "chain_links = [2, 4]", text)
        short.write_text(re.sub(r"(?m)^simulate = .*$", "simulate = 0.005", text))
        path = short
    assert run_cli("run", str(path), "--output", str(tmp_path / example)) == 0
    folder = tmp_path / example
    manifest = json.loads((folder / "manifest.json").read_text())
    assert all(case["status"] == "ok" for case in manifest["cases"].values())
    assert "results:" in capsys.readouterr().out
    results = pd.read_csv(folder / "results.csv")
    assert sorted(results["case"].unique()) == list(range(1, len(manifest["cases"]) + 1))
    assert (folder / "summary.md").read_text().startswith(f"# {config.study.name}")
    # file names every file system, shell and LaTeX take (timing wrote 'fitted_exponents_(time_∝_links^p).csv')
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", path.name) for path in folder.rglob("*")), sorted(
        path.name for path in folder.rglob("*")
    )
    EXAMPLE_CHECKS[config.study.kind](results)


def _frequency_checks(results: pd.DataFrame) -> None:
    """Positive frequencies, but for rigid-body modes (free joints without gravity: exactly 0,
    the lowest modes, not tracked along a sweep); refining a discretization reduces its error
    on every mode (first against last size of each backend/shape, at each point of a sweep);
    from above against an exact reference (Ritz); the reference case itself has rel_error 0
    where it is the finest case."""
    rigid = results["omega"] == 0
    assert (results.loc[~rigid, "omega"] > 0).all()
    if rigid.any():
        assert results.loc[rigid, "tracked_mode"].isna().all()
        assert results.loc[rigid, "mode"].max() < results.loc[~rigid, "mode"].min()
        results = results[~rigid]
    by = ["backend", "shape", "mode", *(["point"] if "point" in results else [])]
    for _, group in results.groupby(by):
        size = group["modes"].fillna(group["elements"])
        errors = group.assign(size=size).sort_values("size")["rel_error"].abs().to_numpy()
        if len(errors) > 1:
            # Nested Ritz spaces: the error never grows; a mode the added shapes do not
            # couple to keeps its frequency, and then its error, to round-off (measured
            # 6e-16 apart on the azimuth-elevation arm's out-of-plane AMM mode).
            # About the equilibrium each case rests at its own sag, so the spaces are nested only
            # up to the difference of the sags (measured: growth 9e-10 on agreement.toml).
            slack = 1e-8 if (group.get("about", pd.Series(dtype=str)) == "equilibrium").any() else 1e-14
            assert errors[-1] <= errors[0] + slack, errors
    if results["reference_source"].iloc[0].startswith("exact"):
        assert (results["rel_error"] > -1e-9).all()
    else:
        finest = results["n_dof"].max()
        assert (results[results["n_dof"] == finest]["rel_error"].abs() < 1e-15).any()


def _verify_checks(results: pd.DataFrame) -> None:
    assert results["passed"].all()
    assert set(results["check"]) >= {"symmetry", "definiteness", "skew", "power", "energy"}


def _simulation_checks(results: pd.DataFrame) -> None:
    """Each simulation's own energy balance closes (measured worst |error| / max|E|:
    see the per-example figure in the assertion message)."""
    for _, group in results.groupby("case"):
        scale = max(group["energy"].abs().max(), group["work_input"].abs().max(), 1e-12)
        ratio = group["energy_balance_error"].abs().max() / scale
        assert ratio < 1e-4, ratio
        np.testing.assert_allclose(group["time"].iloc[-1], SHORT_HORIZON, rtol=1e-12)


def _zero_dynamics_checks(results: pd.DataFrame) -> None:
    """2 zeros per flexible coordinate, in ± / conjugate pairs (a Hamiltonian spectrum)."""
    for _, group in results.groupby("case"):
        zeros = group[group["set"] == "zero"]
        assert len(zeros) == 2 * (group["set"] == "stiffness").sum() > 0
        values = zeros["real"].to_numpy() + 1j * zeros["imag"].to_numpy()
        # Each −z is in the set (measured mismatch ≤ 1e-14 of the largest |z|).
        distance = np.abs(-values[:, None] - values[None, :]).min(axis=1)
        assert distance.max() <= 1e-9 * np.abs(values).max()


def _timing_checks(results: pd.DataFrame) -> None:
    """Every case timed on the arm and each chain with each solver; rates are the inverse
    times (no wall-time thresholds: those live in benchmarks/)."""
    assert (results["fd_us"] > 0).all() and (results["mass_matrix_us"] > 0).all()
    np.testing.assert_allclose(results["evaluations_per_s"] * results["fd_us"], 1e6, rtol=1e-12)
    for _, group in results.groupby("case"):
        assert sorted(set(zip(group["arm"], group["links"], strict=True))) == [
            ("arm", 3),
            ("chain", 2),
            ("chain", 4),
        ]
        assert set(group["solver"]) == {"composite", "recursive"}
        own = group[group["arm"] == "arm"]
        assert (own["wall_s_per_simulated_s"] > 0).all()


def _stability_checks(results: pd.DataFrame) -> None:
    """Both directions, eigenvalues and a completed simulation for every case."""
    from studies.kinds.stability import verdict_table

    verdicts = verdict_table(results)
    assert set(verdicts["direction"]) == {"extension", "retraction"}
    assert (verdicts["simulated"] == "completed").all()
    assert verdicts["max_real"].notna().all() and verdicts["energy_growth"].gt(0).all()


def _symbolic_checks(results: pd.DataFrame) -> None:
    """Every case derived and its generated model agrees with the engine within the kind's
    default tolerance, 1e-9 (measured ≤ 1.5e-13 for the shipped example); results.csv keeps
    the operation counts and none of the measured times (summary.md's cost table has them)."""
    from studies.kinds.symbolic import TIMED

    cost = results[results["group"] == "cost"]
    assert set(cost["quantity"]) == {"operations_M", "operations_C", "operations_G"}
    assert not cost["quantity"].isin(TIMED).any()
    compared = results[results["group"] != "cost"]
    assert set(compared["group"]) == {"agreement", "frequency", "zero"}
    assert compared["relative_difference"].max() <= 1e-9


EXAMPLE_CHECKS = {
    "symbolic": _symbolic_checks,
    "stability": _stability_checks,
    "timing": _timing_checks,
    "frequencies": _frequency_checks,
    "convergence": _frequency_checks,
    "verify": _verify_checks,
    "simulation": _simulation_checks,
    "zero-dynamics": _zero_dynamics_checks,
}


def test_quickstart_reference_is_exact_and_fem_converges_at_rate_four(tmp_path):
    assert run_cli("run", "--example", "quickstart", "--output", str(tmp_path / "q")) == 0
    results = pd.read_csv(tmp_path / "q" / "results.csv")
    assert [c for c in results.columns if c in FREQUENCY_COLUMNS] == FREQUENCY_COLUMNS  # in this order
    assert results["modes"].isna().eq(results["backend"] == "fem").all()  # blank where a size does not apply
    assert results["elements"].isna().eq(results["backend"] == "amm").all()
    np.testing.assert_allclose(results["hz"], results["omega"] / (2 * np.pi), rtol=1e-15)
    assert results["reference_source"].str.startswith("exact: clamped-mass roots").all()
    assert (results["rel_error"] > -1e-9).all()  # Ritz: from above (1e-9: eigen-solve round-off)
    rates = pd.read_csv(tmp_path / "q" / "fitted_convergence_rates.csv")
    fem_rates = rates[(rates["backend"] == "fem") & (rates["shape"] == "clamped")]["rate"]
    assert fem_rates.between(3.7, 4.3).all()  # h⁴ with a pre-asymptotic first point (1 element)
    assert (tmp_path / "q" / "convergence.png").exists()
    # The README's excerpt of the summary is this run's, to the printed digits.
    summary = (tmp_path / "q" / "summary.md").read_text()
    # PNG only unless report.pdf asks for PDFs, and no link to a PDF not written
    assert not list((tmp_path / "q").glob("*.pdf")) and "[PDF]" not in summary
    readme_rows = re.findall(r"(?m)^\s*(\| (?:amm|fem) \|.*\|)\s*$", README.read_text())
    assert len(readme_rows) == 3
    for row in readme_rows:
        assert row in summary, row


@pytest.mark.parametrize(
    "change, message",
    [
        (("modes = [1, 2, 4]", "modes = [1, 2, 0]"), "sweep.modes[3]: must be > 0, got 0"),
        (("modes = [1, 2, 4]", "modes = []"), "sweep.modes: must not be empty"),
        (("modes = [1, 2, 4]", 'modes = ["two"]'), "sweep.modes[1]: "),
        (("modes = [1, 2, 4]", "mode = [1]"), "sweep.mode: unknown key"),
        (('backends = ["amm", "fem"]', 'backends = ["amm", "bem"]'), "sweep.backends[2]: must be one of"),
        (('preset = "one-flexible-link"', 'preset = "two-flexible-links"'), "arm.preset: must be one of"),
        (('kind = "convergence"', 'kind = "convergance"'), "study.kind: must be one of"),
        (("n_frequencies = 2", "n_frequencies = -1"), "analysis.n_frequencies: must be > 0, got -1"),
        (("n_frequencies = 2", "n_frequency = 2"), "analysis.n_frequency: unknown key"),
        (("[study]", "[study\n"), "invalid TOML"),
    ],
)
def test_config_mistakes_exit_2_with_the_key_path(change, message, tmp_path, capsys):
    path = write(tmp_path, SMALL.replace(*change))
    assert run_cli("run", str(path), "--output", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_inline_arm_mistakes_name_the_link(tmp_path, capsys):
    text = SMALL.replace(
        'preset = "one-flexible-link"',
        '[[arm.links]]\nkind = "flexible"\nlength = -0.5\nmass_per_length = 1.0\nEI = 2.0',
    ).replace("[arm]\n", "[arm]\n", 1)
    assert run_cli("show", str(write(tmp_path, text))) == 2
    assert "arm.links[1]: length must be > 0, got -0.5" in capsys.readouterr().err
    text = SMALL.replace(
        'preset = "one-flexible-link"',
        '[[arm.links]]\nkind = "flexible"\nlength = 0.5\nmas_per_length = 1.0\nEI = 2.0',
    )
    assert run_cli("show", str(write(tmp_path, text))) == 2
    assert "arm.links[1].mas_per_length: unknown field" in capsys.readouterr().err
    assert run_cli("show", str(tmp_path / "missing.toml")) == 2
    assert "cannot read the config file" in capsys.readouterr().err


def test_show_lists_cases_and_presets_lists_arms(tmp_path, capsys):
    assert run_cli("show", str(write(tmp_path, SMALL))) == 0
    out = capsys.readouterr().out
    assert "6 cases" in out and "FEM clamped x4" in out and "AMM clamped-free x2" in out
    assert run_cli("presets") == 0
    out = capsys.readouterr().out
    for name in ("rigid-two-link", "one-flexible-link", "lumped-two-link", "space-arm-3link"):
        assert name in out


def test_same_config_gives_identical_csvs_and_never_overwrites(tmp_path):
    config = load_config(write(tmp_path, SMALL))
    first = run_study(config, output=tmp_path / "run")
    second = run_study(config, output=tmp_path / "run")
    assert second.folder == tmp_path / "run-2"
    assert (first.folder / "results.csv").read_bytes() == (second.folder / "results.csv").read_bytes()
    processes = run_study(
        config.model_copy(
            update={"execution": config.execution.model_copy(update={"executor": "processes", "workers": 2})}
        ),
        output=tmp_path / "p",
    )
    assert (processes.folder / "results.csv").read_bytes() == (first.folder / "results.csv").read_bytes()


def test_reports_follow_the_config(tmp_path):
    config = load_config(write(tmp_path, SMALL))
    folder = run_study(config, output=tmp_path / "r").folder
    assert (folder / "relative_errors.tex").exists() and (folder / "summary.md").exists()
    assert not list(folder.glob("*.png"))  # plots = false
    csv_only = load_config(
        write(tmp_path, SMALL.replace('formats = ["csv", "markdown", "latex"]', 'formats = ["csv"]'))
    )
    folder = run_study(csv_only, output=tmp_path / "c").folder
    assert not (folder / "summary.md").exists() and not list(folder.glob("*.tex"))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["versions"]["numpy"] and manifest["config"]["sweep"]["modes"] == [1, 2, 4]
    assert all(case["wall_time"] > 0 for case in manifest["cases"].values())


def test_interrupted_run_resumes_without_redoing_finished_cases(tmp_path, monkeypatch):
    config = load_config(write(tmp_path, SMALL))
    reference = run_study(config, output=tmp_path / "full").folder
    calls = []
    real = runner.execute_case

    def interrupted(kind, arm, case, *rest):
        calls.append(case.number)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(kind, arm, case, *rest)

    monkeypatch.setattr(runner, "execute_case", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_study(config, output=tmp_path / "partial")
    finished = sorted((tmp_path / "partial" / "cases").glob("*.json"))
    assert len(finished) == 2  # nothing finished was lost
    monkeypatch.setattr(runner, "execute_case", real)
    result = run_study(config, output=tmp_path / "partial", resume=True)
    assert result.resumed == 2 and result.succeeded == 6
    assert (result.folder / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()


def test_a_failing_case_is_recorded_and_the_others_go_on(tmp_path, capsys):
    # A translating link is clamped where it leaves its hub: the FEM cases with the pinned
    # frame (the frame the pinned-pinned family implies) fail when their model is built.
    text = textwrap.dedent(
        """
        [study]
        name = "mixed"
        kind = "frequencies"

        [arm]
        preset = "rrp-translating"

        [sweep]
        backends = ["fem"]
        shapes = ["clamped-free", "pinned-pinned"]
        elements = [1, 2]

        [analysis]
        n_frequencies = 3

        [report]
        plots = false
        """
    )
    assert run_cli("run", str(write(tmp_path, text)), "--output", str(tmp_path / "m")) == 1
    assert "a translating link is clamped at the hub exit, got 'pinned'" in capsys.readouterr().err
    failures = pd.read_csv(tmp_path / "m" / "failures.csv")
    assert list(failures["shape"]) == ["pinned", "pinned"]
    results = pd.read_csv(tmp_path / "m" / "results.csv")
    assert set(results["shape"]) == {"clamped"}


@pytest.mark.slow
def test_dask_executor_on_a_loopback_cluster(tmp_path):
    config = load_config(write(tmp_path, SMALL))
    serial = run_study(config, output=tmp_path / "s").folder
    dask = run_study(
        config.model_copy(
            update={"execution": config.execution.model_copy(update={"executor": "dask", "workers": 2})}
        ),
        output=tmp_path / "d",
    ).folder
    assert (dask / "results.csv").read_bytes() == (serial / "results.csv").read_bytes()


def test_verify_command_runs_property_checks(tmp_path):
    assert run_cli("verify", str(write(tmp_path, SMALL)), "--output", str(tmp_path / "v")) == 0
    results = pd.read_csv(tmp_path / "v" / "results.csv")
    checks = results[~results["check"].str.startswith("omega_")]
    assert set(checks["check"]) == {"symmetry", "definiteness", "skew", "power", "energy"}
    assert checks["passed"].all()
    assert "all checks passed" in (tmp_path / "v" / "summary.md").read_text()


def test_version_and_usage_errors(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("--version")
    assert exit_info.value.code == 0 and "flexlink" in capsys.readouterr().out
    assert run_cli("run") == 2
    assert capsys.readouterr().err == (
        "flexlink: error: run needs a CONFIG file or --example NAME, one of them (see flexlink run --help)\n"
    )
    assert run_cli("run", "--example", "nope") == 2
    assert "unknown example 'nope'" in capsys.readouterr().err
    # argparse's own refusals: the same one line, no usage block
    assert run_cli("run", "x.toml", "--workers", "abc") == 2
    assert capsys.readouterr().err == (
        "flexlink: error: argument --workers: invalid int value: 'abc' (see flexlink run --help)\n"
    )
    assert run_cli("frobnicate") == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("flexlink: error: argument command: invalid choice: 'frobnicate'")
        and err.count("\n") == 1
    )


def test_zero_dynamics_study_separates_the_frame_choices(tmp_path):
    """Seed 000 §4.2: pinned-pinned frames → zeros in the right half-plane;
    clamped-free → none (on the imaginary axis)."""
    assert run_cli("run", "--example", "zero-dynamics", "--output", str(tmp_path / "z")) == 0
    table = pd.read_csv(tmp_path / "z" / "zero_dynamics.csv")
    pinned = table[table["shape"] == "pinned-pinned"]
    clamped = table[table["shape"] == "clamped-free"]
    assert (pinned["right_half_plane"] > 0).all()
    assert (clamped["right_half_plane"] == 0).all()
    assert (tmp_path / "z" / "zero_dynamics.png").exists()


def test_simulation_study_reports_time_histories(tmp_path):
    text = textwrap.dedent(
        """
        [study]
        name = "sim"
        kind = "simulation"

        [arm]
        preset = "one-flexible-link"

        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-free"]
        modes = [2]
        elements = [2]

        [analysis]
        t_end = 0.2
        controller = { kind = "pd", kp = 5.0, kd = 0.5 }
        trajectory = { kind = "parabolic-blend", q_end = [0.3], T = 0.2, blend = 0.1 }
        output_points = 21
        spectrum = true

        [report]
        plots = true
        """
    )
    assert run_cli("run", str(write(tmp_path, text)), "--output", str(tmp_path / "s")) == 0
    results = pd.read_csv(tmp_path / "s" / "results.csv")
    assert len(results) == 2 * 21
    for column in ("time", "theta1", "tau1", "tip_w1", "energy", "energy_balance_error", "theta1_ref"):
        assert column in results.columns
    assert (tmp_path / "s" / "time_response.png").exists()
    summary = (tmp_path / "s" / "summary.md").read_text()
    assert "maxima and differences" in summary and "tip acceleration spectrum" in summary
    # No method or solver given: simulate's "auto" per case, the ones taken recorded (the
    # rows tagged by the solver taken, not "auto") and the method's reason in the summary
    assert set(results["method"]) <= {"DOP853", "Radau"} and "method_reason" in results
    assert set(results["solver"]) <= {"composite", "recursive", "structured"}
    sentence = summary.split("Method auto (simulate's choice per case): ")[1].split("\n")[0]
    assert sentence.count("span × spectral radius") >= 1 and "case" in sentence
    assert "| method |" in summary.split("## maxima and differences")[1].split("##")[0]
    # The cost table: wall time per case from the case records, per simulated second = wall / t_end.
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    section = summary.split("## wall time per case")[1]
    header = [c.strip() for c in section.strip().splitlines()[0].strip("|").split("|")]
    assert header[-2:] == ["wall_time_s", "wall_s_per_simulated_s"]
    for line in section.strip().splitlines()[2:4]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        wall = manifest["cases"][cells[0]]["wall_time"]
        assert float(cells[-2]) == pytest.approx(wall, rel=1e-5)
        assert float(cells[-1]) == pytest.approx(wall / 0.2, rel=1e-5)
    # results.csv stays a function of the config: the solver's cost is in the tables only
    assert not [c for c in results.columns if "wall" in c]
    bad = text.replace('kind = "pd"', 'kind = "pid"')
    assert run_cli("run", str(write(tmp_path, bad, "bad.toml"))) == 2


@pytest.mark.parametrize(
    "change, message",
    [
        (("modes = [1, 2, 4]", "modes = [true]"), "sweep.modes[1]: "),
        (
            ("n_frequencies = 2", "n_frequencies = 2\nconfiguration = [0.1, 0.2]"),
            "analysis.configuration: needs 1 joint value, got 2",
        ),
        (
            ("[report]", '[execution]\nexecutor = "dask"\nscheduler = "not a url"\n\n[report]'),
            "execution.scheduler: must be a scheduler address",
        ),
        (
            ("[report]", "[execution]\nworkers = 2\n\n[report]"),
            "execution: workers > 1 needs executor 'processes' or 'dask'",
        ),
        (
            ("modes = [1, 2, 4]", "modes = [100000]"),
            "sweep: case 1 (AMM clamped-free x100000) has 100001 coordinates, above the limit of 20000 of a "
            "convergence study",
        ),
        (('name = "small"', 'name = "' + "x" * 10_000 + '"'), "… (10002 characters)"),
    ],
)
def test_bad_inputs_are_refused_up_front(change, message, tmp_path, capsys):
    """The bad inputs that the config layer owns: exit 2, one line, no traceback."""
    path = write(tmp_path, SMALL.replace(*change))
    assert run_cli("show", str(path)) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 400


def test_gravity_needs_three_components(tmp_path, capsys):
    path = write(
        tmp_path,
        SMALL.replace('preset = "one-flexible-link"', 'preset = "one-flexible-link"\ngravity = [0.0, -9.81]'),
    )
    assert run_cli("show", str(path)) == 2
    assert "arm.gravity: must hold exactly 3 values (x, y, z), got [0.0, -9.81]" in capsys.readouterr().err


def test_command_line_mistakes_exit_2(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    (tmp_path / "a-file").write_text("x")
    assert run_cli("run", str(path), "--output", str(tmp_path / "a-file")) == 2
    assert "--output: " in capsys.readouterr().err
    assert run_cli("run", str(path), "--workers", "2") == 2
    assert "--workers: 2 workers need [execution] executor" in capsys.readouterr().err
    pooled = write(tmp_path, SMALL + '\n[execution]\nexecutor = "processes"\nworkers = 2\n', "pooled.toml")
    # --workers 1 with a serial executor set on the command line: one worker, valid (it was
    # refused: the file's 2 workers were checked against the new executor before --workers).
    assert run_cli("show", str(pooled), "--set", "execution.executor=serial") == 2
    assert (
        run_cli(
            "run",
            str(pooled),
            "--set",
            "execution.executor=serial",
            "--workers",
            "1",
            "--output",
            str(tmp_path / "one"),
        )
        == 0
    )
    latin = tmp_path / "latin.toml"
    latin.write_bytes(SMALL.replace('"small"', '"sm\xe4ll"').encode("latin-1"))
    assert run_cli("show", str(latin)) == 2
    assert "not a UTF-8 text file (byte 0xe4" in capsys.readouterr().err
    big = write(tmp_path, SMALL.replace("modes = [1, 2, 4]", "modes = [5000]"), "big.toml")
    assert run_cli("show", str(big), "--force") == 0


def test_nan_in_a_state_names_the_coordinate():
    from amm import AssumedModesModel
    from core.arm.presets import lumped_two_link

    model = AssumedModesModel(lumped_two_link(), modes=2)
    q = model.home()
    q[3] = np.nan
    with pytest.raises(ValueError, match=r"q must be finite, got nan at w1_2 \(index 3\)"):
        model.forward_dynamics(q, np.zeros(model.n_dof), np.zeros(2))


SLIDING = textwrap.dedent(
    """
    [study]
    name = "sliding"
    kind = "frequencies"

    [arm]
    payload = { mass = 0.3, inertia = [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.03]] }

    [[arm.joints]]
    kind = "prismatic"

    [[arm.links]]
    kind = "flexible"
    length = 1.0
    mass_per_length = 0.8
    EI = 15.0

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-mass"]
    modes = [4]
    elements = [16]

    [analysis]
    configuration = [0.5]
    n_frequencies = 2

    [report]
    plots = false
    """
)


def test_translating_link_reference_uses_the_free_length_and_its_bending_axis(tmp_path):
    """One beam sliding out of its hub to l = 0.5 m: the exact reference is the
    clamped-mass beam of length 0.5 with the payload's inertia about the link's y
    axis (the in-plane bending axis of a prismatic joint's beam), μ = 0.3/(0.8·0.5),
    j = 0.02/(0.8·0.5³). FEM with 16 elements is within its h⁴ error of it (measured
    1e-8 on ω₁ at 32 elements 6.4e-10), where the old reference (whole beam, I_zz)
    was off by a factor 4."""
    assert run_cli("run", str(write(tmp_path, SLIDING)), "--output", str(tmp_path / "out")) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert (
        results["reference_source"].iloc[0] == "exact: clamped-mass roots (mu=0.75, j=0.2, free length 0.5 m)"
    )
    first = results[results["mode"] == 1].set_index("backend")["rel_error"]
    assert 0 < first["fem"] < 2e-8
    assert abs(first["amm"]) < 1e-12  # exact modes at the reference free length: round-off of either sign


def test_init_copies_an_example_and_set_overrides_values(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_cli("init", "quickstart") == 0
    assert (tmp_path / "quickstart.toml").read_text() == cli.examples()["quickstart"].read_text()
    assert run_cli("init", "quickstart") == 2  # never over an existing file
    assert "exists" in capsys.readouterr().err
    args = ["show", "quickstart.toml", "--set", "sweep.modes=[1, 2]", "--set", 'sweep.backends=["amm"]']
    assert run_cli(*args) == 0
    assert "quickstart: kind convergence, 4 cases" in capsys.readouterr().out  # 2 families x 2 mode counts
    assert run_cli("show", "quickstart.toml", "--set", "sweep.modes=[0]") == 2
    assert "sweep.modes[1]: must be > 0, got 0" in capsys.readouterr().err
    assert run_cli("show", "quickstart.toml", "--set", "no-equals-sign") == 2
    assert "--set: expected KEY=VALUE" in capsys.readouterr().err


def test_schema_prints_the_config_and_kind_schemas(capsys):
    assert run_cli("schema") == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"study", "arm", "sweep", "analysis", "report", "execution"} <= set(schema["properties"])
    assert run_cli("schema", "--kind", "simulation") == 0
    analysis = json.loads(capsys.readouterr().out)
    assert {"t_end", "trajectory", "controller", "solver", "rtol"} <= set(analysis["properties"])
    assert run_cli("schema", "--kind", "nope") == 2


def test_warnings_reach_stderr_and_the_summary(tmp_path, capsys):
    """Asking for more frequencies than a 1-mode model has: the run succeeds, and the
    warning is on stderr and in summary.md's warnings section, with the case numbers."""
    text = (
        SMALL.replace("n_frequencies = 2", "n_frequencies = 3")
        .replace("modes = [1, 2, 4]", "modes = [1]")
        .replace('kind = "convergence"', 'kind = "frequencies"')
    )
    assert run_cli("run", str(write(tmp_path, text)), "--output", str(tmp_path / "out")) == 0
    err = capsys.readouterr().err
    assert (
        "warning (case 1): RuntimeWarning: analysis.n_frequencies: AMM clamped-free x1 has 1 frequencies"
        in err
    )
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "## Warnings" in summary and "fewer than the 3 asked for (case 1)" in summary


def test_a_convergence_study_warns_when_its_finest_case_is_short(tmp_path, capsys):
    """A convergence sweep expects its small cases to have fewer frequencies than asked for,
    not its finest: n_frequencies above the finest case's count is a study-wide warning on
    stderr and in summary.md (the finest AMM case has 4 modes, the finest FEM one 8)."""
    text = SMALL.replace("n_frequencies = 2", "n_frequencies = 6")
    assert run_cli("run", str(write(tmp_path, text)), "--output", str(tmp_path / "out")) == 0
    err = capsys.readouterr().err
    assert (
        "warning (study): RuntimeWarning: analysis.n_frequencies: the finest amm clamped-free case has 4"
        in err
    )
    assert "finest fem" not in err
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert (
        "the finest amm clamped-free case has 4 frequencies (locked joints), fewer than the 6 asked for (study)"
        in summary
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_an_output_folder_that_cannot_be_created_is_refused_naming_the_option(tmp_path, capsys):
    """/proc refuses new folders (and passes a permission check as root): the CLI tries to
    create --output (and removes what it created) before anything runs."""
    path = write(tmp_path, SMALL)
    assert run_cli("run", str(path), "--output", "/proc/flexlink-out") == 2
    err = capsys.readouterr().err
    assert err.startswith("flexlink: error: --output: cannot create")  # as root or not
    assert "'/proc/flexlink-out'" in err and err.count("\n") == 1
    assert run_cli("run", str(path), "--output", str(tmp_path / "a" / "b")) == 0
    capsys.readouterr()
    assert (tmp_path / "a" / "b" / "summary.md").exists()


def test_cases_run_with_the_configured_number_of_blas_threads(monkeypatch):
    """[execution] blas_threads (default 1) bounds the BLAS threads inside every case
    (this machine has 2 cores, so OpenBLAS would otherwise use 2)."""
    from threadpoolctl import threadpool_info

    from core.arm.presets import one_flexible_link
    from studies.config import expand_cases, parse_config

    seen = []

    class Probe:
        analysis_schema = runner.KINDS["frequencies"].analysis_schema

        def run_case(self, arm, case, analysis):
            seen.append(max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"))
            return []

    monkeypatch.setitem(runner.KINDS, "probe", Probe())
    config = parse_config(
        {"study": {"name": "p", "kind": "frequencies"}, "arm": {"preset": "one-flexible-link"}}
    )
    case = expand_cases(config)[0]
    assert config.execution.blas_threads == 1
    for threads in (1, 2):
        result = runner.execute_case("probe", one_flexible_link().to_dict(), case, {}, threads)
        assert result["status"] == "ok", result["error"]
    assert seen[0] == 1 and seen[1] <= 2


AGREEMENT = textwrap.dedent(
    """
    [study]
    name = "agreement"
    kind = "frequencies"

    [arm]
    preset = "lumped-two-link"

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-free", "pinned-pinned"]
    modes = [1, 3]
    elements = [6]

    [analysis]
    configuration = [0.785398, -0.785398]
    n_frequencies = 3

    [report]
    plots = false
    """
)


def test_frequency_studies_pair_mode_shapes_by_mac(tmp_path):
    """agreement.csv: every case's modes paired with the finest case's (FEM pinned x6) by
    MAC; the finest case pairs with itself at MAC 1; one cantilever-free pinned-pinned
    mode (1 mode per link) is flagged (measured MAC 0.768); the table is deterministic."""
    path = write(tmp_path, AGREEMENT)
    for name in ("a", "b"):
        assert run_cli("run", str(path), "--output", str(tmp_path / name)) == 0
    first = (tmp_path / "a" / "agreement.csv").read_text()
    assert first == (tmp_path / "b" / "agreement.csv").read_text()
    table = pd.read_csv(tmp_path / "a" / "agreement.csv", keep_default_na=False)
    assert list(table.columns) == [
        "case", "backend", "shape", "modes", "elements", "segments", "mode", "paired_mode", "mac", "omega",
        "reference_omega", "flag",
    ]  # fmt: skip
    finest = table[(table["backend"] == "fem") & (table["shape"] == "pinned")]
    np.testing.assert_allclose(finest["mac"].astype(float), 1.0, rtol=1e-12)
    assert (finest["paired_mode"].astype(int) == finest["mode"]).all()
    flagged = table[table["flag"] != ""]
    assert len(flagged) == 1 and flagged.iloc[0]["flag"] == "MAC < 0.9"
    assert float(flagged.iloc[0]["mac"]) == pytest.approx(0.785, abs=1e-3)  # about the equilibrium
    assert "1 pairing(s) flagged" in (tmp_path / "a" / "summary.md").read_text()


def test_timing_study_fits_exponents_and_checks_its_inputs(tmp_path):
    """A tiny timing study: one case, chains of 2, 4 and 8 links; the exponent table has
    one row per solver fitted over all three chains (fewer than two have ≥ 8 links),
    equal to a log-log least-squares fit of the results; bad solvers and chains on a
    rigid arm are refused naming the key."""
    from studies.kinds.timing import fitted_exponents

    config = """
[study]
name = "t"
kind = "timing"
[arm]
preset = "lumped-two-link"
[sweep]
backends = ["amm"]
shapes = ["clamped-free"]
modes = [1]
[analysis]
chain_links = [2, 4, 8]
budget = 0.001
"""
    assert run_cli("run", str(write(tmp_path, config)), "--output", str(tmp_path / "out")) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    exponents = pd.read_csv(tmp_path / "out" / "exponents.csv")
    assert list(exponents["solver"]) == ["composite", "recursive"]
    assert list(exponents["links"]) == ["2–8", "2–8"]
    for solver, p in zip(exponents["solver"], exponents["exponent"], strict=True):
        chains = results[(results["arm"] == "chain") & (results["solver"] == solver)]
        expected = np.polyfit(np.log(chains["links"]), np.log(chains["fd_us"]), 1)[0]
        assert p == pytest.approx(expected, rel=1e-12)
    pd.testing.assert_frame_equal(fitted_exponents(results), exponents, check_dtype=False)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "timing_links.png" in summary and (tmp_path / "out" / "timing_links.png").exists()
    bad = config.replace("budget = 0.001", 'budget = 0.001\nsolvers = ["cholesky"]')
    assert run_cli("run", str(write(tmp_path, bad, "bad.toml")), "--output", str(tmp_path / "o2")) != 0
    rigid = config.replace('preset = "lumped-two-link"', 'preset = "rigid-two-link"')
    assert run_cli("run", str(write(tmp_path, rigid, "rigid.toml")), "--output", str(tmp_path / "o3")) != 0


def test_simulation_with_two_solvers_tags_rows_and_agrees(tmp_path):
    """``solver = [...]`` runs each case once per solver: rows tagged by solver, one table row
    each with its cost, a tracking figure against the desired trajectory; the two solvers'
    joint histories agree to the integrator's tolerance (rtol 1e-7; measured 1.8e-11 rad of 7.4e-3, bound 1e-6)."""
    config = """
[study]
name = "two-solvers"
kind = "simulation"
[arm]
preset = "space-arm-3link"
[sweep]
backends = ["amm"]
shapes = ["clamped-free"]
modes = [1]
[analysis]
t_end = 0.5
controller = { kind = "feed-forward" }
trajectory = { kind = "cycloidal", k = [0.075, 0.05, 0.1], T = [10.0, 5.0, 5.0] }
solver = ["composite", "recursive"]
rtol = 1e-7
atol = 1e-9
output_points = 11
"""
    assert run_cli("run", str(write(tmp_path, config)), "--output", str(tmp_path / "out")) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(results["solver"].unique()) == ["composite", "recursive"]
    composite, recursive = (results[results["solver"] == s] for s in ("composite", "recursive"))
    joints = ["theta1", "theta2", "theta3"]
    assert np.max(np.abs(composite[joints].to_numpy() - recursive[joints].to_numpy())) < 1e-6
    assert (results["theta1_ddot"].abs() > 0).any() and "theta1_ref_dot" in results
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "tracking.png" in summary and (tmp_path / "out" / "tracking.png").exists()
    table = summary.split("## maxima and differences")[1]
    assert "| composite |" in table and "| recursive |" in table and "max_joint_error_to_reference" in table
    bad = config.replace('solver = ["composite", "recursive"]', "solver = []")
    assert run_cli("run", str(write(tmp_path, bad, "bad.toml")), "--output", str(tmp_path / "o2")) != 0
    # "auto" takes one of the named solvers: listed beside them its rows would merge with theirs
    bad = config.replace('solver = ["composite", "recursive"]', 'solver = ["auto", "recursive"]')
    assert run_cli("run", str(write(tmp_path, bad, "bad.toml")), "--output", str(tmp_path / "o3")) == 2


def test_the_command_line_starts_without_the_numerical_packages():
    """`flexlink --help`, `init` and command-line mistakes need none of numpy, scipy, pandas,
    pydantic or numba (~1.5 s of imports; `flexlink --help` measured 1.8 s before, 0.08 s
    after): importing the CLI must not load them (checked in a fresh interpreter)."""
    import subprocess
    import sys

    heavy = ["numpy", "scipy", "pandas", "pydantic", "numba", "matplotlib"]
    code = f"import sys, studies.cli; print([m for m in {heavy!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_show_validates_without_pandas_matplotlib_or_scipy_linear_algebra():
    """`flexlink show` validates every kind's config with pydantic and numpy only (pandas,
    matplotlib, SciPy's linear algebra and numba load on use: `show` 1.6 s -> 0.3 s), checked
    in a fresh interpreter on every shipped example."""
    import subprocess
    import sys

    from studies.cli import examples

    # (numba may load: validating a feed-forward controller builds its rigid model)
    heavy = ["pandas", "matplotlib", "scipy.linalg", "scipy.integrate", "sympy"]
    for name, path in sorted(examples().items()):
        code = (
            "import sys, contextlib, io\n"
            "from studies import cli\n"
            f"with contextlib.redirect_stdout(io.StringIO()): assert cli.main(['show', {str(path)!r}]) == 0\n"
            f"print([m for m in {heavy!r} if m in sys.modules])"
        )
        loaded = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert loaded.strip() == "[]", name


def test_counts_are_singular_for_one_case(tmp_path, capsys):
    """'1 case' in show, in the run line and in summary.md (it said '1 cases')."""
    text = SMALL.replace('backends = ["amm", "fem"]', 'backends = ["amm"]').replace(
        "modes = [1, 2, 4]", "modes = [2]"
    )
    path = write(tmp_path, text)
    assert run_cli("show", str(path)) == 0
    assert "kind convergence, 1 case, executor" in capsys.readouterr().out
    assert run_cli("run", str(path), "--output", str(tmp_path / "out")) == 0
    assert "1/1 case succeeded" in capsys.readouterr().out
    assert "; 1 case, 1 succeeded, 0 failed." in (tmp_path / "out" / "summary.md").read_text()


def test_cost_to_accuracy_takes_the_smallest_case_that_stays_within_the_target():
    """The trade-off table on constructed errors: a basis whose error dips below a target and
    rises again only counts from where it stays below; a case lacking a frequency has not
    reached; the finest case is left out when it is the reference."""
    import pandas as pd

    from studies.kinds.convergence import cheapest, tradeoff_table

    errors = {  # case: (backend, shape, size, n_dof, [errors of modes 1, 2])
        1: ("amm", "clamped-free", 1, 2, [3e-3]),  # one mode only: not reached
        2: ("amm", "clamped-free", 2, 3, [5e-5, 2e-3]),
        3: ("amm", "clamped-free", 4, 5, [1e-5, 3e-5]),
        4: ("fem", "clamped", 1, 3, [5e-7, 5e-7]),  # dips below 1e-6 ...
        5: ("fem", "clamped", 2, 5, [2e-6, 1e-7]),  # ... and rises again
        6: ("fem", "clamped", 4, 9, [3e-7, 1e-8]),
        7: ("fem", "clamped", 8, 17, [0.0, 0.0]),  # the finest: the reference itself
    }
    rows = [
        {
            "case": c,
            "backend": b,
            "shape": s,
            "modes": n if b == "amm" else None,
            "elements": n if b == "fem" else None,
            "n_dof": d,
            "mode": m,
            "rel_error": e,
            "reference_source": "finest: FEM clamped x8",
        }
        for c, (b, s, n, d, errs) in errors.items()
        for m, e in enumerate(errs, start=1)
    ]
    costs = pd.DataFrame({"case": list(errors), "wall_time_s": [0.1 * c for c in errors]})
    table = tradeoff_table(pd.DataFrame(rows), costs).set_index(["backend", "target"])
    assert table.loc[("amm", 1e-2), ["n_dof", "size"]].tolist() == [3, 2]
    assert table.loc[("amm", 1e-4), ["n_dof", "size"]].tolist() == [5, 4]
    assert pd.isna(table.loc[("amm", 1e-6), "n_dof"])
    assert table.loc[("fem", 1e-2), "n_dof"] == 3
    assert table.loc[("fem", 1e-6), ["n_dof", "size", "wall_time_s"]].tolist() == [9, 4, pytest.approx(0.6)]
    text = cheapest(table.reset_index(), 2)
    assert text[0] == (
        "|error| ≤ 0.01 on the first 2 frequencies: fewest coordinates AMM clamped-free ×2 (3), "
        "least time AMM clamped-free ×2 (0.2 s)."
    )
    assert text[2].startswith(
        "|error| ≤ 1e-06 on the first 2 frequencies: fewest coordinates FEM clamped ×4 (9)"
    )


def test_a_convergence_summary_weighs_accuracy_against_cost(tmp_path):
    """The cost-to-accuracy table reaches summary.md and its CSV, and stays out of results.csv
    (which depends on the config alone: a rerun gives the same bytes)."""
    config = load_config(write(tmp_path, SMALL))
    first = run_study(config, output=tmp_path / "a").folder
    second = run_study(config, output=tmp_path / "b").folder
    assert (first / "results.csv").read_bytes() == (second / "results.csv").read_bytes()
    summary = (first / "summary.md").read_text()
    assert "## cost to accuracy" in summary and "|error| ≤ 0.01 on the first 2 frequencies" in summary
    table = pd.read_csv(first / "cost_to_accuracy.csv")
    assert list(table.columns) == ["backend", "shape", "target", "n_dof", "size", "wall_time_s"]
    assert sorted(set(table["target"])) == [1e-6, 1e-4, 1e-2]


def test_the_first_case_of_a_worker_is_not_charged_for_the_warm_up(tmp_path, monkeypatch):
    """A kind's warm_up runs once per process before the first case's clock starts: its seconds
    are recorded beside the case (``warm_up``), not in its ``wall_time``, and later cases of the
    same process skip it (so the cost table compares cases, not their order in a worker).
    The runner's clock is a counter that only the warm-up advances (by 100 s), so the check
    holds on any machine load."""
    import types

    from studies.config import build_arm, expand_cases
    from studies.kinds import KINDS

    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(runner, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    config = load_config(write(tmp_path, SMALL))
    kind = KINDS[config.study.kind]
    monkeypatch.setattr(runner, "_WARM", set())
    original = type(kind).warm_up

    def warm_up(self, *args) -> None:
        original(self, *args)
        clock.now += 100.0

    monkeypatch.setattr(type(kind), "warm_up", warm_up)
    analysis = kind.analysis_schema.model_validate(config.analysis).model_dump()
    arm = build_arm(config.arm).to_dict()
    first, second = (
        runner.execute_case(config.study.kind, arm, case, analysis) for case in expand_cases(config)[:2]
    )
    assert first["status"] == second["status"] == "ok"
    assert first["warm_up"] == 100.0 and first["wall_time"] == 0.0
    assert second["warm_up"] is None


def test_table_files_are_named_in_ascii():
    from studies.text import file_stem

    assert file_stem("fitted exponents (time ∝ links^p)") == "fitted_exponents_time_links_p"
    assert file_stem("tip deflection at report times [m]") == "tip_deflection_at_report_times"
    assert file_stem("maxima and differences") == "maxima_and_differences"
    assert file_stem("∝ ∝") == "table"


def test_a_controller_without_a_trajectory_is_refused_before_any_case(tmp_path, capsys):
    """Before, `show` accepted it and every case failed at run time ('PD needs a trajectory')."""
    text = textwrap.dedent(
        """
        [study]
        name = "no-reference"
        kind = "simulation"
        [arm]
        preset = "one-flexible-link"
        [sweep]
        modes = [1, 2]
        [analysis]
        t_end = 0.1
        controller = { kind = "pd", kp = 5.0, kd = 0.5 }
        """
    )
    assert run_cli("show", str(write(tmp_path, text))) == 2
    assert capsys.readouterr().err == (
        "flexlink: error: analysis.trajectory: controller 'pd' tracks a reference trajectory; give "
        "analysis.trajectory (or controller kind 'none' for a free response)\n"
    )
    free = text.replace('{ kind = "pd", kp = 5.0, kd = 0.5 }', '{ kind = "none" }')
    assert run_cli("show", str(write(tmp_path, free, "free.toml"))) == 0
