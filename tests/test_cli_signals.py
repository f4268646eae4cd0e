"""Stopping ``flexlink run`` with a process pool leaves no worker behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CONFIG = """
[study]
name = "long"
kind = "simulation"
[arm]
preset = "lumped-two-link"
[sweep]
backends = ["amm"]
shapes = ["clamped-mass"]
modes = [1, 2]
[analysis]
t_end = 100000.0
output_points = 11
[execution]
executor = "processes"
workers = 2
"""


#: How long the run may take to start its pool [s] (its warm-up may compile the kernels).
POOL_START = 900


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except FileNotFoundError:
        return False


def _start(tmp_path) -> tuple[subprocess.Popen, list[int]]:
    (tmp_path / "long.toml").write_text(CONFIG)
    code = "import sys; from studies.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "run", str(tmp_path / "long.toml"), "--output", str(tmp_path / "out")]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The pool starts after the parent's warm-up, which compiles the kernels on an empty cache
    # (a machine's first run, as CI's: minutes on a busy two-core machine).
    deadline = time.monotonic() + POOL_START
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.2)
        workers = _children(process.pid)
    assert len(workers) >= 2, "the pool did not start"
    time.sleep(2.0)  # the workers are inside their cases
    return process, workers


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads children from /proc (Linux)")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_a_run_leaves_no_worker(tmp_path, stop):
    """SIGTERM: the run stops like Ctrl-C (exit 143 = 128 + SIGTERM, the resume hint, no traceback) and
    terminates its workers; SIGKILL (no handler can run): each worker notices its parent is
    gone within PARENT_POLL and exits. Before, both workers kept running with PPID 1."""
    process, workers = _start(tmp_path)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    if stop == signal.SIGTERM:
        assert process.returncode == 143, err
        assert "terminated (SIGTERM); finished cases are on disk (use --resume)" in err
        assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), [w for w in workers if _alive(w)]
