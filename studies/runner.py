"""The study runner: config → cases → executor → files on disk → report.

Output folder layout (one folder per run)::

    <folder>/
      config.toml          the effective config: overrides applied, [analysis] defaults written
                           out (``flexlink run <folder>/config.toml`` reproduces results.csv)
      cases/0001.csv       rows of case 1, written the moment it finishes
      cases/0001.json      its status, error, warnings, wall time and identity
      cases/superseded/    earlier cases no case of the current config reproduces (resume)
      results.csv          every row of every successful case (tidy)
      failures.csv         failed cases and their errors (if any)
      summary.md           key tables and plots
      *.png, *.tex         plots and LaTeX tables (*.pdf too with [report] pdf = true)
      manifest.json        config as run, the --set overrides as given, versions,
                           timestamps, wall time and identity per case

A crash or Ctrl-C loses nothing finished; ``resume=True`` reuses a finished case only
when its recorded identity (:func:`studies.record.case_identity`: kind, arm,
discretization, analysis settings, numerics) equals the one the config gives it, and
refuses a folder of another study kind or arm. A failing case is recorded and the others
go on.
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
from pathlib import Path
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from core.arm import Arm
from studies.config import StudyConfig, build_arm, expand_cases
from studies.discretizations import Case, normalize_columns
from studies.errors import ConfigError
from studies.executors import EXECUTORS
from studies.kinds import KINDS
from studies.progress import StatusLine, reporting
from studies.record import case_identity, config_toml, effective_config, numerics_versions, package_version
from studies.reports import write_reports
from studies.text import counted

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
    #: What a resume reused, ran and dropped, one line each (empty without resume).
    notes: list[str] = field(default_factory=list)

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
    warm_cases: list[Case] | None = None,
) -> dict[str, Any]:
    """Run one case with at most ``blas_threads`` BLAS threads; never raises (a failure
    is an outcome). Runs in workers too. What the case reports while it runs
    (:func:`studies.progress.report`) goes to ``status_file``. ``warm_cases``: the study's
    cases the kind's warm-up looks at (:func:`warm_cases`; default: this case alone)."""
    _load_blas()
    shown = [case] if warm_cases is None else warm_cases
    warm_up = _warm_up(kind_name, blas_threads, arm_data, shown, analysis_data)
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


def _load_blas() -> None:
    """Load every BLAS library a case may use before the first ``threadpool_limits``: those
    limit only the libraries already loaded, and one loaded inside keeps its default thread
    count (as many as cores) for good. SciPy ships its own OpenBLAS, loaded with its first
    use: the first case of every process (a resumed run, each pool worker) ran SciPy's
    LAPACK — Radau's complex LU solves, Cholesky, eigh — multithreaded and every later
    case with ``blas_threads``, and those round differently with the thread count (issue
    27: 1e-9 in a simulation's angles, other step counts). Numba's compiled ``@`` calls the
    same library."""
    import scipy.linalg  # noqa: F401


#: The progress bar's note while the runner warms up before its pool starts.
WARMING_UP = "warming up: imports and compiled kernels (compiled once per machine, 1-3 min)"

#: Kinds warmed up in this process (see :func:`_warm_up`).
_WARM: set[str] = set()


def warm_cases(arm: Arm, cases: list[Case]) -> list[Case]:
    """What a kind's warm-up is shown of the study's ``cases``: the lightest and the heaviest
    case (fewest and most coordinates, counted without building a model) of each backend, in
    the order of ``cases``. The warm-up runs the light ones and learns from the heavy ones
    which paths the study takes; a handful of cases, whatever the sweep's size, so every task
    sent to a worker can carry them."""
    chosen: dict[str, dict[str, Case]] = {}
    for case in cases:
        size = case.discretization.coordinates(arm)
        ends = chosen.setdefault(case.discretization.backend, {"light": case, "heavy": case})
        if size < ends["light"].discretization.coordinates(arm):
            ends["light"] = case
        if size > ends["heavy"].discretization.coordinates(arm):
            ends["heavy"] = case
    numbers = {c.number for ends in chosen.values() for c in ends.values()}
    return [case for case in cases if case.number in numbers]


def _warm_up(
    kind_name: str, blas_threads: int, arm_data: dict, cases: list[Case], analysis_data: dict
) -> float | None:
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
            kind = KINDS[kind_name]
            kind.warm_up(Arm.from_dict(arm_data), cases, kind.analysis_schema.model_validate(analysis_data))
    except Exception:  # the case itself will meet and report the problem
        return None
    return time.perf_counter() - start


def _forks() -> bool:
    """Whether a process pool starts its workers by forking this process (Linux's default up to
    Python 3.13; spawned or forkserver workers inherit nothing)."""
    import multiprocessing

    return multiprocessing.get_start_method() == "fork"


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


#: Where ``--resume`` keeps the case files of earlier runs that no case of the current config
#: reuses (a later resume back to the earlier settings finds them there).
SUPERSEDED = "superseded"


@dataclass
class _Earlier:
    """A case file of an earlier run: its status file, rows file and recorded status."""

    meta: Path
    info: dict

    @property
    def rows(self) -> Path:
        return self.meta.with_suffix(".csv")

    @property
    def identity(self) -> str | None:
        return (self.info.get("identity") or {}).get("case")

    @property
    def usable(self) -> bool:
        return self.info.get("status") == "ok" and self.identity is not None and self.rows.exists()


def _earlier_cases(folder: Path) -> tuple[list[_Earlier], list[_Earlier]]:
    """The case files in ``cases/`` and in ``cases/superseded/`` (unreadable ones skipped:
    a status file cut short by a kill names no case)."""
    found: dict[str, list[_Earlier]] = {"current": [], "superseded": []}
    for where, directory in (("current", folder / "cases"), ("superseded", folder / "cases" / SUPERSEDED)):
        for meta in sorted(directory.glob("*.json")):
            try:
                info = json.loads(meta.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(info, dict):
                found[where].append(_Earlier(meta, info))
    return found["current"], found["superseded"]


def _numbers(numbers: list[int]) -> str:
    """Case numbers as runs: ``1-3, 5``."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _renumbered(rows: Path, number: int) -> str:
    """The text of a case's rows file with its ``case`` column (the first) set to ``number``;
    every other cell is passed through as written."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with rows.open(newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return rows.read_text()
        writer.writerow(header)
        for row in reader:
            writer.writerow([str(number), *row[1:]] if header[0] == "case" else row)
    return out.getvalue()


@dataclass
class ResumePlan:
    """What ``--resume`` does with a folder: the earlier cases it reuses (current number →
    earlier case file), why each other case runs, and the earlier cases it drops."""

    reused: dict[int, _Earlier] = field(default_factory=dict)
    reasons: dict[int, str] = field(default_factory=dict)
    dropped: list[_Earlier] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line each for what was reused, run and dropped."""
        out = []
        if self.reused:
            out.append(f"resume: reused {counted(len(self.reused), 'case')} ({_numbers(list(self.reused))})")
        if self.reasons:
            by_reason: dict[str, list[int]] = {}
            for number, reason in self.reasons.items():
                by_reason.setdefault(reason, []).append(number)
            text = "; ".join(f"{_numbers(numbers)} {reason}" for reason, numbers in by_reason.items())
            out.append(f"resume: ran {counted(len(self.reasons), 'case')} ({text})")
        if self.dropped:
            earlier = sorted(e.info.get("case", 0) for e in self.dropped)
            out.append(
                f"resume: dropped {counted(len(self.dropped), 'earlier case')} ({_numbers(earlier)}) that no case "
                f"of this config reproduces; kept in cases/{SUPERSEDED}/, not in results.csv"
            )
        return out


def _resume_plan(
    folder: Path, config: StudyConfig, cases: list[Case], identities: dict[int, dict[str, str]]
) -> ResumePlan:
    """Match the cases of ``config`` with the finished cases of an earlier run in ``folder`` by
    :func:`~studies.record.case_identity` (never by number alone); refuse
    (:class:`ConfigError`) a folder whose cases were computed for another study kind or arm."""
    current, superseded = _earlier_cases(folder)
    recorded = next((e.info["identity"] for e in current if e.identity is not None), None)
    wanted = next(iter(identities.values()), None)
    if recorded is not None and wanted is not None:
        for part, what in (("kind", "study kind"), ("arm", "arm")):
            if recorded.get(part) != wanted[part]:
                raise ConfigError(_changed_study(folder, config, what))
    by_identity: dict[str, _Earlier] = {}
    for earlier in [*superseded, *current]:  # a current file wins over an archived copy
        if earlier.usable:
            by_identity[earlier.identity] = earlier

    def key(columns: dict) -> str:
        return json.dumps({k: v for k, v in columns.items() if k != "case"}, sort_keys=True, default=str)

    by_columns = {key(e.info.get("sweep") or {}): e for e in current}
    plan = ResumePlan()
    for case in cases:
        identity = identities[case.number]
        if identity["case"] in by_identity:
            plan.reused[case.number] = by_identity[identity["case"]]
            continue
        earlier = by_columns.get(key(case.columns()))
        if earlier is None:
            reason = "new"
        elif earlier.info.get("status") != "ok":
            reason = "failed before"
        elif earlier.identity is None:
            reason = "no case identity recorded before"
        else:
            changed = [
                part
                for part in ("analysis", "numerics")
                if earlier.info["identity"].get(part) != identity[part]
            ]
            reason = " and ".join(CHANGES[part] for part in changed) or "changed"
        plan.reasons[case.number] = reason
    wanted_identities = {identity["case"] for identity in identities.values()}
    plan.dropped = [e for e in current if e.usable and e.identity not in wanted_identities]
    return plan


#: Why a case whose discretization ran before runs again, by the part of its identity that changed.
CHANGES = {
    "analysis": "analysis settings changed",
    "numerics": "package versions, processor or BLAS threads changed",
}


def _changed_study(folder: Path, config: StudyConfig, what: str) -> str:
    """The refusal of a resume whose config changes the study kind or the arm, naming the
    first difference where the folder's config.toml can still be read."""
    from studies.config import load_config
    from studies.record import study_change

    detail = ""
    try:
        change = study_change(load_config(folder / "config.toml"), config)
    except ConfigError:
        change = None
    if change:
        detail = f" ({change})"
    return (
        f"--resume: the cases in {str(folder)!r} were computed for another {what}{detail}; they cannot be "
        "reused or mixed with this config's: run without --resume, or choose another --output"
    )


def _apply_plan(folder: Path, plan: ResumePlan, cases: list[Case]) -> None:
    """Move every case file that is not reused under its own number to ``cases/superseded/``
    (named by its identity), then write the reused ones under their current numbers. A kill
    in between loses nothing: the next resume finds the archived files by identity."""
    archive = folder / "cases" / SUPERSEDED
    in_place = {e.meta for n, e in plan.reused.items() if e.meta == folder / "cases" / f"{n:04d}.json"}
    moved: dict[Path, Path] = {}
    for earlier in _earlier_cases(folder)[0]:
        if earlier.meta in in_place:
            continue
        archive.mkdir(exist_ok=True)
        name = earlier.identity or f"unidentified-{earlier.meta.stem}"
        if earlier.info.get("status") != "ok":
            name = f"failed-{name}"
        for source in (earlier.rows, earlier.meta):
            if source.exists():
                os.replace(source, archive / f"{name}{source.suffix}")
        moved[earlier.meta] = archive / f"{name}.json"
    by_number = {case.number: case for case in cases}
    for number, earlier in plan.reused.items():
        meta = folder / "cases" / f"{number:04d}.json"
        if earlier.meta == meta:
            continue
        source = _Earlier(moved.get(earlier.meta, earlier.meta), earlier.info)
        _write_atomic(meta.with_suffix(".csv"), _renumbered(source.rows, number))
        info = {**earlier.info, "case": number, "sweep": by_number[number].columns()}
        _write_atomic(meta, json.dumps(info, indent=1))
        plan.reused[number] = _Earlier(meta, info)
        if source.meta in moved.values():  # archived above only to survive a kill until now
            source.meta.unlink()
            source.rows.unlink()


def run_study(
    config: StudyConfig,
    output: str | Path | None = None,
    resume: bool = False,
    workers: int | None = None,
    source: Path | None = None,
    progress: bool = False,
    overrides: list[str] | tuple[str, ...] = (),
) -> RunResult:
    """Run every case of ``config`` and write the report; see the module docstring.

    ``source`` is the config file and ``overrides`` the ``--set`` assignments applied to it
    (recorded in the manifest); the folder's ``config.toml`` is the effective config either
    way. ``resume`` reuses the finished cases of ``output`` whose identity the config
    reproduces (:func:`~studies.record.case_identity`) and runs the others; ``RunResult.notes``
    says what it reused, ran and dropped."""
    start = time.perf_counter()
    started = datetime.now(UTC).isoformat()
    kind = KINDS[config.study.kind]
    analysis = kind.analysis_schema.model_validate(config.analysis)
    arm = build_arm(config.arm)
    cases = expand_cases(config)
    threads = config.execution.blas_threads
    arm_data, analysis_data = arm.to_dict(), analysis.model_dump(mode="json")
    versions = numerics_versions()
    identities = {
        case.number: case_identity(
            config.study.kind, arm_data, case.discretization, analysis_data, threads, versions
        )
        for case in cases
    }
    folder, plan = _output_folder(config, output, resume, cases, identities)
    header = f"# The configuration these results were computed with (flexlink {package_version('flexlink')})"
    header += (f", from {source}" if source is not None else "") + (
        f" with --set {' --set '.join(overrides)}" if overrides else ""
    )
    _write_atomic(folder / "config.toml", config_toml(config, header + ".\n"))
    finished = {number: earlier.info for number, earlier in plan.reused.items()}
    todo = [case for case in cases if case.number not in finished]
    for stale in (folder / "cases").glob("*.progress*"):  # left by a killed run
        stale.unlink()

    def status_file(case: Case) -> str | None:
        return str(folder / "cases" / f"{case.number:04d}.progress") if progress else None

    warm = warm_cases(arm, todo)  # of the cases this run computes (a resume reuses the others)
    tasks = [
        (config.study.kind, arm_data, case, analysis_data, threads, status_file(case), warm) for case in todo
    ]
    n_workers = workers or config.execution.workers
    outcomes = _run_cases(folder, config, tasks, n_workers, identities, finished, len(cases), progress)
    manifest = {
        "flexlink": package_version("flexlink"),
        "study": config.study.name,
        "kind": config.study.kind,
        "config": effective_config(config),
        "config_file": None if source is None else str(source),
        "overrides": list(overrides),
        "started": started,
        "finished": None,
        "executor": config.execution.executor,
        "workers": n_workers,
        "resumed_cases": len(finished),
        "resume": plan.lines(),
        "numerics": {**versions, "blas_threads": threads},
        "versions": {
            p: package_version(p) for p in ("numpy", "scipy", "sympy", "pandas", "pydantic", "matplotlib")
        }
        | {"python": platform.python_version()},
        "cases": {
            str(n): {
                k: outcomes[n].get(k)
                for k in ("status", "error", "wall_time", "warnings", "started", "identity")
            }
            for n in sorted(outcomes)
        },
    }
    failed, raised = _report(folder, config, kind, analysis, arm, cases, outcomes)
    manifest["finished"] = datetime.now(UTC).isoformat()
    manifest["wall_time"] = time.perf_counter() - start
    _write_atomic(folder / "manifest.json", json.dumps(manifest, indent=1, default=str))
    succeeded = sum(1 for o in outcomes.values() if o["status"] == "ok")
    return RunResult(
        folder, len(cases), succeeded, failed, len(finished), manifest["wall_time"], raised, plan.lines()
    )


def _output_folder(
    config: StudyConfig,
    output: str | Path | None,
    resume: bool,
    cases: list[Case],
    identities: dict[int, dict[str, str]],
) -> tuple[Path, ResumePlan]:
    """The run's folder with its ``cases/``, and what a resume reuses there: an earlier run's
    folder, its case files matched and moved (:func:`_resume_plan`, :func:`_apply_plan`), or a
    fresh one (:func:`new_folder`) with an empty plan."""
    if not resume:
        folder = new_folder(config.study.name, None if output is None else Path(output))
        (folder / "cases").mkdir(exist_ok=True)
        return folder, ResumePlan()
    folder = Path(output) if output is not None else OUTPUT_ROOT / config.study.name
    if not folder.is_dir():
        raise FileNotFoundError(f"--resume: no earlier run in {folder}")
    (folder / "cases").mkdir(exist_ok=True)
    plan = _resume_plan(folder, config, cases, identities)
    _apply_plan(folder, plan, cases)
    return folder, plan


def _run_cases(
    folder: Path,
    config: StudyConfig,
    tasks: list[tuple],
    workers: int,
    identities: dict[int, dict[str, str]],
    finished: dict[int, dict],
    total: int,
    progress: bool,
) -> dict[int, dict]:
    """Run ``tasks`` on the config's executor, each case's rows and status written to
    ``cases/`` the moment it finishes; every case's outcome by number (``finished``: those
    reused, as recorded)."""
    executor = EXECUTORS[config.execution.executor]
    bar = _progress(total, len(finished), progress)
    outcomes: dict[int, dict] = dict(finished)
    status = None
    try:
        if config.execution.executor == "processes" and tasks and _forks():
            # The pool's workers are forked from this process: warmed up here, once, they start
            # with the imports and compiled kernels in (each worker's own warm-up cost the
            # convergence example, 15 cases of 8 ms, more than its two workers saved: 2.39 s wall
            # against 2.07 s serial). The warm-up's time then enters no case, as for a warm
            # worker's later cases.
            kind_name, arm_data, case, analysis_data, threads, _, warm = tasks[0]
            if bar is not None:  # minutes when a machine's first run compiles the kernels
                bar.set_postfix_str(WARMING_UP, refresh=True)
            _load_blas()
            _warm_up(kind_name, threads, arm_data, warm or [case], analysis_data)
        if bar is not None:
            status = StatusLine(folder, bar)
            status.start()
        for task, outcome in executor(execute_case, tasks, workers, config.execution.scheduler):
            number = outcome["case"]
            stem = folder / "cases" / f"{number:04d}"
            pd.DataFrame(outcome["rows"]).to_csv(stem.with_suffix(".csv.tmp"), index=False)
            os.replace(stem.with_suffix(".csv.tmp"), stem.with_suffix(".csv"))
            info = {k: v for k, v in outcome.items() if k != "rows"}
            info["sweep"] = task[2].columns()
            info["identity"] = identities[number]
            _write_atomic(stem.with_suffix(".json"), json.dumps(info, indent=1))
            outcomes[number] = info
            if bar is not None:
                bar.update(1)
    finally:
        if status is not None:
            status.stop()
        if bar is not None:
            bar.close()
    return outcomes


def _report(
    folder: Path, config: StudyConfig, kind, analysis, arm: Arm, cases: list[Case], outcomes: dict[int, dict]
) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """Read every successful case's rows back and write the reports
    (:func:`studies.reports.write_reports`); (the failed cases, warning text → case numbers)."""
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
    return failed, raised


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="case", leave=False)
