"""The study runner: config → cases → executor → files on disk → report.

Output folder layout (one folder per run)::

    <folder>/
      config.toml          the config as given (when run from a file)
      cases/0001.csv       rows of case 1, written the moment it finishes
      cases/0001.json      its status, error, warnings and wall time
      results.csv          every row of every successful case (tidy)
      failures.csv         failed cases and their errors (if any)
      summary.md           key tables and plots
      *.png, *.pdf, *.tex  plots and LaTeX tables
      manifest.json        config as run, versions, timestamps, wall time per case

A crash or Ctrl-C loses nothing finished; ``resume=True`` skips cases whose
files say they succeeded. A failing case is recorded and the others go on.
"""

from __future__ import annotations

import json
import os
import platform
import time
import traceback
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from core.arm import Arm
from studies.config import StudyConfig, build_arm, expand_cases
from studies.discretizations import Case, normalize_columns
from studies.executors import EXECUTORS
from studies.kinds import KINDS
from studies.progress import StatusLine, reporting
from studies.reports import write_reports

#: Default parent of output folders.
OUTPUT_ROOT = Path("flexlink-output")


@dataclass
class RunResult:
    """What a run did."""

    folder: Path
    cases: int
    succeeded: int
    failed: list[dict[str, Any]] = field(default_factory=list)
    resumed: int = 0
    wall_time: float = 0.0
    warnings: dict[str, list[int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed


def execute_case(
    kind_name: str,
    arm_data: dict,
    case: Case,
    analysis_data: dict,
    blas_threads: int = 1,
    status_file: str | None = None,
) -> dict[str, Any]:
    """Run one case with at most ``blas_threads`` BLAS threads; never raises (a failure
    is an outcome). Runs in workers too. What the case reports while it runs
    (:func:`studies.progress.report`) goes to ``status_file``."""
    warm_up = _warm_up(kind_name, blas_threads)
    start = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    with (
        threadpool_limits(limits=blas_threads, user_api="blas"),
        warnings.catch_warnings(record=True) as caught,
        reporting(None if status_file is None else Path(status_file)),
    ):
        warnings.simplefilter("always")
        try:
            kind = KINDS[kind_name]
            rows = kind.run_case(
                Arm.from_dict(arm_data), case, kind.analysis_schema.model_validate(analysis_data)
            )
            status, error, rows_out = "ok", None, rows
        except Exception as exc:
            status, rows_out = "failed", []
            error = f"{type(exc).__name__}: {exc}"
            error_trace = traceback.format_exc(limit=6)
        else:
            error_trace = None
    return {
        "case": case.number,
        "status": status,
        "error": error,
        "traceback": error_trace,
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
        "rows": rows_out,
        "started": started,
        "wall_time": time.perf_counter() - start,
        "warm_up": warm_up,
    }


#: Kinds warmed up in this process (see :func:`_warm_up`).
_WARM: set[str] = set()


def _warm_up(kind_name: str, blas_threads: int) -> float | None:
    """Run the kind's :meth:`~studies.kinds.base.StudyKind.warm_up` once per process, before the
    first case's clock starts, so that case's wall time does not carry the imports and the
    compiled kernels' loading (seconds) the others do not; returns its seconds (None when done
    before, or when it failed: the case itself then meets the problem and reports it)."""
    if kind_name in _WARM:
        return None
    _WARM.add(kind_name)
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=blas_threads, user_api="blas"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            KINDS[kind_name].warm_up()
    except Exception:  # the case itself will meet and report the problem
        return None
    return time.perf_counter() - start


def new_folder(name: str, output: Path | None) -> Path:
    """A fresh folder: ``output`` or OUTPUT_ROOT/name, suffixed -2, -3, … if taken."""
    base = Path(output) if output is not None else OUTPUT_ROOT / name
    candidate, k = base, 1
    while candidate.exists() and any(candidate.iterdir()):
        k += 1
        candidate = base.with_name(f"{base.name}-{k}")
    candidate.mkdir(parents=True, exist_ok=True)
    return candidate


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _finished_cases(folder: Path) -> dict[int, dict]:
    done = {}
    for meta in sorted((folder / "cases").glob("*.json")):
        info = json.loads(meta.read_text())
        if info["status"] == "ok" and meta.with_suffix(".csv").exists():
            done[info["case"]] = info
    return done


def run_study(
    config: StudyConfig,
    output: str | Path | None = None,
    resume: bool = False,
    workers: int | None = None,
    source: Path | None = None,
    progress: bool = False,
) -> RunResult:
    """Run every case of ``config`` and write the report; see the module docstring."""
    start = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    kind = KINDS[config.study.kind]
    analysis = kind.analysis_schema.model_validate(config.analysis)
    arm = build_arm(config.arm)
    cases = expand_cases(config)
    if resume:
        folder = Path(output) if output is not None else OUTPUT_ROOT / config.study.name
        if not folder.is_dir():
            raise FileNotFoundError(f"--resume: no earlier run in {folder}")
    else:
        folder = new_folder(config.study.name, None if output is None else Path(output))
    (folder / "cases").mkdir(exist_ok=True)
    if source is not None and not (folder / "config.toml").exists():
        (folder / "config.toml").write_text(Path(source).read_text())
    finished = _finished_cases(folder) if resume else {}
    todo = [case for case in cases if case.number not in finished]
    threads = config.execution.blas_threads
    for stale in (folder / "cases").glob("*.progress*"):  # left by a killed run
        stale.unlink()

    def status_file(case: Case) -> str | None:
        return str(folder / "cases" / f"{case.number:04d}.progress") if progress else None

    tasks = [
        (kind.name, arm.to_dict(), case, analysis.model_dump(), threads, status_file(case)) for case in todo
    ]
    n_workers = workers or config.execution.workers
    executor = EXECUTORS[config.execution.executor]
    outcomes: dict[int, dict] = dict(finished)
    bar = _progress(len(cases), len(finished), progress)
    status = None if bar is None else StatusLine(folder, bar)
    if status is not None:
        status.start()
    try:
        for task, outcome in executor(execute_case, tasks, n_workers, config.execution.scheduler):
            number = outcome["case"]
            stem = folder / "cases" / f"{number:04d}"
            pd.DataFrame(outcome["rows"]).to_csv(stem.with_suffix(".csv.tmp"), index=False)
            os.replace(stem.with_suffix(".csv.tmp"), stem.with_suffix(".csv"))
            info = {k: v for k, v in outcome.items() if k != "rows"}
            info["sweep"] = task[2].columns()
            _write_atomic(stem.with_suffix(".json"), json.dumps(info, indent=1))
            outcomes[number] = info
            if bar is not None:
                bar.update(1)
    finally:
        if status is not None:
            status.stop()
        if bar is not None:
            bar.close()
    frames = [
        pd.read_csv(folder / "cases" / f"{n:04d}.csv")
        for n in sorted(outcomes)
        if outcomes[n]["status"] == "ok" and (folder / "cases" / f"{n:04d}.csv").stat().st_size > 1
    ]
    failed = [
        {**case.columns(), "error": outcomes[case.number]["error"]}
        for case in cases
        if outcomes.get(case.number, {}).get("status") == "failed"
    ]
    results = normalize_columns(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()
    manifest = {
        "flexlink": _version("flexlink"),
        "study": config.study.name,
        "kind": config.study.kind,
        "config": config.model_dump(mode="json"),
        "config_file": None if source is None else str(source),
        "started": started,
        "finished": None,
        "executor": config.execution.executor,
        "workers": n_workers,
        "resumed_cases": len(finished),
        "versions": {p: _version(p) for p in ("numpy", "scipy", "sympy", "pandas", "pydantic", "matplotlib")}
        | {"python": platform.python_version()},
        "cases": {
            str(n): {k: outcomes[n].get(k) for k in ("status", "error", "wall_time", "warnings", "started")}
            for n in sorted(outcomes)
        },
    }
    wall_times = {
        n: o["wall_time"]
        for n, o in outcomes.items()
        if o["status"] == "ok" and o.get("wall_time") is not None
    }
    raised: dict[str, list[int]] = {}
    for n in sorted(outcomes):
        for message in outcomes[n].get("warnings") or []:
            raised.setdefault(message, []).append(n)
    write_reports(folder, config, kind, analysis, arm, results, failed, cases, wall_times, raised)
    manifest["finished"] = datetime.now(UTC).isoformat()
    manifest["wall_time"] = time.perf_counter() - start
    _write_atomic(folder / "manifest.json", json.dumps(manifest, indent=1, default=str))
    succeeded = sum(1 for o in outcomes.values() if o["status"] == "ok")
    return RunResult(folder, len(cases), succeeded, failed, len(finished), manifest["wall_time"], raised)


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="case", leave=False)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
