"""Progress inside a running case (studies.progress) and simulate's progress callback."""

from __future__ import annotations

import numpy as np
import pytest

from amm import AssumedModesModel
from core import PD, ParabolicBlend, simulate
from core.arm.presets import rigid_flexible_rigid
from studies import progress, runner


def test_report_writes_the_status_file_only_inside_reporting(tmp_path):
    path = tmp_path / "0003.progress"
    progress.report("ignored")  # outside reporting: a no-op
    assert not path.exists()
    with progress.reporting(path):
        progress.report("t = 1 of 10 s")
        assert path.read_text() == "t = 1 of 10 s"
        progress.report("t = 2 of 10 s")
        assert path.read_text() == "t = 2 of 10 s"
        assert [p.name for p in tmp_path.iterdir()] == ["0003.progress"]  # no temporary left
    assert not path.exists()  # removed when the case ends


def test_throttled_calls_at_most_once_per_interval(monkeypatch):
    clock = iter([0.0, 0.1, 0.49, 0.5, 0.7, 1.2])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    calls = []
    function = progress.throttled(calls.append, interval=0.5)
    for value in range(6):
        function(value)
    assert calls == [0, 3, 5]  # at 0.0, 0.5 and 1.2 s


def test_status_line_lists_the_running_cases_in_order(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "0012.progress").write_text("retraction: t = 0.4 of 1 s\n")
    (cases / "0002.progress").write_text("recursive: t = 3 of 10 s")
    (cases / "0002.csv").write_text("")
    assert progress.StatusLine(tmp_path, bar=None).text() == (
        "case 2: recursive: t = 3 of 10 s; case 12: retraction: t = 0.4 of 1 s"
    )


def test_simulate_reports_the_time_reached():
    """``progress(t)`` sees every right-hand side's time (DOP853: all of them counted in
    nfev; Radau's Jacobian differences are not): it ends at t_end and never leaves the span."""
    model = AssumedModesModel(rigid_flexible_rigid(), shape="clamped-mass", modes=1)
    q0 = model.home()
    times = []
    frame = simulate(
        model,
        (0.0, 0.05),
        q0,
        controller=PD(kp=20.0, kd=4.0),
        trajectory=ParabolicBlend((0.0, 0.0, 0.0), (0.2, -0.1, 0.1), 0.05, 0.02),
        method="DOP853",
        progress=times.append,
    )
    assert len(times) == frame.attrs["nfev"]
    assert min(times) == 0.0 and max(times) == pytest.approx(0.05, abs=1e-15)


def test_a_case_reports_its_status_to_the_file_the_runner_polls(monkeypatch, tmp_path):
    """execute_case routes a case's reports to its status file while it runs and removes the
    file when the case ends, whether it succeeds or fails."""
    from core.arm.presets import one_flexible_link
    from studies.config import expand_cases, parse_config

    path = tmp_path / "0001.progress"
    seen = []

    class Probe:
        analysis_schema = runner.KINDS["frequencies"].analysis_schema

        def run_case(self, arm, case, analysis):
            progress.report("halfway")
            seen.append(path.read_text())
            if seen[1:]:
                raise RuntimeError("second run fails")
            return []

    monkeypatch.setitem(runner.KINDS, "probe", Probe())
    config = parse_config(
        {"study": {"name": "p", "kind": "frequencies"}, "arm": {"preset": "one-flexible-link"}}
    )
    case = expand_cases(config)[0]
    for status in ("ok", "failed"):
        result = runner.execute_case("probe", one_flexible_link().to_dict(), case, {}, 1, str(path))
        assert result["status"] == status
        assert not path.exists()
    assert seen == ["halfway", "halfway"]


def test_a_run_with_progress_leaves_no_status_files(tmp_path):
    """run_study(progress=True) (what the CLI does on a terminal) polls and cleans up: after
    the run no ``*.progress`` file is left, and one left by a killed run is removed."""
    from studies.config import parse_config

    config = parse_config(
        {
            "study": {"name": "p", "kind": "simulation"},
            "arm": {"preset": "one-flexible-link"},
            "sweep": {"backends": ["amm"], "shapes": ["clamped-mass"], "modes": [1]},
            "analysis": {"t_end": 0.02, "output_points": 3},
        }
    )
    folder = tmp_path / "run"
    (folder / "cases").mkdir(parents=True)
    (folder / "cases" / "0001.progress").write_text("stale")
    result = runner.run_study(config, output=folder, resume=True, progress=True)
    assert result.ok
    assert not list((folder / "cases").glob("*.progress*"))
    assert np.isfinite(result.wall_time)
