"""Everyday cost: what the commands a user runs every day take, in CPU seconds, wall seconds
and peak memory, each in a fresh process with one BLAS thread.

    python benchmarks/everyday.py [--repeat 3] [--rows quickstart ...] [--slow]

Each row of :data:`ROWS` is a ``flexlink`` command (run as ``python -m studies.cli …``, the
``flexlink`` entry point's code, with its output in a temporary folder). All rows share one
numba cache folder (``FLEXLINK_CACHE_DIR``), empty when the first row starts: a row with
``cache="empty"`` runs in an empty cache folder (the shared one while nothing has run in it,
else a fresh one of its own) and so measures a first run on a machine (numba compiling the
kernels it needs and caching them), a row with
``cache="warm"`` first runs its command once untimed to fill the shared folder and then
measures ``--repeat`` runs (median shown), i.e. every run after the first on a machine.

CPU seconds are user + system of the child and its own children (the increase of
``resource.getrusage(RUSAGE_CHILDREN)`` over the run), wall seconds the child's lifetime and
peak MiB its largest resident set (``ru_maxrss`` of that child, from ``os.wait4``: the
``RUSAGE_CHILDREN`` maximum is that of all children so far, not of one row). The machine's
load enters the wall seconds more than the CPU seconds; compare CPU seconds across changes.

A new row is one entry of :data:`ROWS`; the slow examples (``slow=True``) run only with
``--slow``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Row:
    """One command to measure: ``flexlink`` arguments (``--output`` is added), its cache state."""

    name: str
    args: tuple[str, ...]
    #: "empty": a fresh, empty FLEXLINK_CACHE_DIR (first run on a machine); "warm": the shared
    #: one after an untimed run of the same command (every later run).
    cache: str = "warm"
    #: Minutes rather than seconds: measured only with ``--slow``.
    slow: bool = False


ROWS: list[Row] = [
    Row("quickstart, first run (empty cache)", ("run", "--example", "quickstart"), cache="empty"),
    Row("quickstart", ("run", "--example", "quickstart")),
    # The shipped multi-case example on its two-process pool, and the same cases one after the
    # other in one process: the wall seconds of the two compare the pool with a serial run.
    Row("convergence, 2 workers", ("run", "--example", "convergence")),
    Row(
        "convergence, serial",
        (
            "run",
            "--example",
            "convergence",
            "--set",
            'execution.executor="serial"',
            "--set",
            "execution.workers=1",
        ),
    ),
    # A multi-case example whose cases, not its imports and report, take the time: what the
    # pool can speed up (the convergence example's 15 cases take 0.15 s of its ~3 s).
    Row("spin-up, 2 workers", ("run", "--example", "spin-up"), slow=True),
    Row(
        "spin-up, serial",
        (
            "run",
            "--example",
            "spin-up",
            "--set",
            'execution.executor="serial"',
            "--set",
            "execution.workers=1",
        ),
        slow=True,
    ),
    Row("rrp-stability", ("run", "--example", "rrp-stability"), slow=True),
    # The finest stiffened meshes of the shipped examples (two links × 256 elements, 1026
    # coordinates, at rest under gravity): dense M, ∂G/∂q and eigen-solve.
    Row("discretizations", ("run", "--example", "discretizations"), slow=True),
    Row("space-arm-maneuver", ("run", "--example", "space-arm-maneuver"), slow=True),
]


@dataclass(frozen=True)
class Measured:
    cpu_s: float
    wall_s: float
    peak_mib: float


def environment(cache: Path) -> dict[str, str]:
    """The child's environment: one BLAS (and OpenMP) thread, ``cache`` as the numba cache, and
    Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` dropped: an installed package keeps
    its ``.pyc`` files, and without them every run compiles our modules again, ~0.3 CPU s of
    the quickstart)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        FLEXLINK_CACHE_DIR=str(cache),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    return env


def measure(args: tuple[str, ...], cache: Path) -> Measured:
    """Run ``flexlink args --output <temporary folder>`` once in a child process."""
    with tempfile.TemporaryDirectory(prefix="everyday-") as folder:
        command = [sys.executable, "-m", "studies.cli", *args, "--output", str(Path(folder) / "out")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        child = subprocess.Popen(
            command, cwd=ROOT, env=environment(cache), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        stderr = child.stderr.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}:\n{stderr.decode()[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(cpu, wall, usage.ru_maxrss / 1024)  # ru_maxrss is in KiB on Linux


def run_row(row: Row, shared_cache: Path, repeat: int) -> tuple[Measured, int]:
    """(median of the measured runs of ``row``, their number). A first run measured while the
    shared cache is still empty fills it (the later rows' untimed runs then compile nothing)."""
    if row.cache == "empty":
        if not any(shared_cache.iterdir()):
            return measure(row.args, shared_cache), 1
        with tempfile.TemporaryDirectory(prefix="everyday-cache-") as cache:
            return measure(row.args, Path(cache)), 1
    measure(row.args, shared_cache)  # untimed: fills the cache (a first run)
    runs = [measure(row.args, shared_cache) for _ in range(repeat)]
    return (
        Measured(
            statistics.median(r.cpu_s for r in runs),
            statistics.median(r.wall_s for r in runs),
            statistics.median(r.peak_mib for r in runs),
        ),
        len(runs),
    )


def table(results: list[tuple[Row, Measured, int]]) -> str:
    """A Markdown table of the measured rows."""
    lines = [
        "| command | cache | runs | CPU s | wall s | peak MiB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row, m, runs in results:
        lines.append(
            f"| flexlink {' '.join(row.args)} | {row.cache} | {runs} | {m.cpu_s:.2f} | {m.wall_s:.2f} "
            f"| {m.peak_mib:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="measured runs of a warm row (median shown)")
    parser.add_argument(
        "--rows", nargs="+", metavar="NAME", help="only the rows whose name contains one of these"
    )
    parser.add_argument("--slow", action="store_true", help="also the slow examples (minutes each)")
    options = parser.parse_args(argv)
    rows = [
        row
        for row in ROWS
        if (options.slow or not row.slow)
        and (not options.rows or any(part in row.name for part in options.rows))
    ]
    shared = Path(tempfile.mkdtemp(prefix="everyday-cache-"))
    try:
        results = []
        for row in rows:
            measured, runs = run_row(row, shared, max(options.repeat, 1))
            results.append((row, measured, runs))
            print(f"{row.name}: {measured.cpu_s:.2f} CPU s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
