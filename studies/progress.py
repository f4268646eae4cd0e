"""Progress inside a running case: a status line beside the count of finished cases.

A case reports what it has reached (``report("t = 4.2 of 10 s")``, e.g. from
:func:`core.analysis.simulation.simulate`'s ``progress`` callback) while it runs in any
executor; the text goes to ``cases/NNNN.progress`` in the study folder (written
atomically, at most every :data:`INTERVAL` seconds, removed when the case ends).
The parent's :class:`StatusLine` polls those files and shows them on the case
progress bar. Workers on other machines (Dask) write to their own disks: their
cases then show only as counted.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

#: Seconds between two status writes of a case, and between two polls of the parent.
INTERVAL = 0.5

_status_file: ContextVar[Path | None] = ContextVar("status_file", default=None)


@contextlib.contextmanager
def reporting(path: Path | None) -> Iterator[None]:
    """Within this block, :func:`report` writes to ``path`` (None: reports are dropped);
    the file is removed at the end."""
    token = _status_file.set(path)
    try:
        yield
    finally:
        _status_file.reset(token)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def report(text: str) -> None:
    """The running case's status (one line); a no-op outside :func:`reporting`."""
    path = _status_file.get()
    if path is None:
        return
    temporary = path.with_name(path.name + ".tmp")
    with contextlib.suppress(OSError):  # a status line is never worth failing a case
        temporary.write_text(text)
        os.replace(temporary, path)


def throttled(function, interval: float = INTERVAL):
    """``function`` called at most once per ``interval`` seconds (later calls in between are dropped)."""
    last = [-float("inf")]

    def call(*args) -> None:
        now = time.monotonic()
        if now - last[0] >= interval:
            last[0] = now
            function(*args)

    return call


def simulation_progress(what: str, t_end: float):
    """A ``simulate(progress=...)`` callback that reports "``what``: t = … of ``t_end`` s" as the
    running case's status, at most once per :data:`INTERVAL`."""
    return throttled(lambda t: report(f"{what}: t = {t:.3g} of {t_end:g} s"))


class StatusLine:
    """Polls ``folder/cases/*.progress`` and shows the running cases on a tqdm ``bar``
    (``bar.set_postfix_str``) from :meth:`start` to :meth:`stop`."""

    def __init__(self, folder: Path, bar) -> None:
        self._folder = Path(folder) / "cases"
        self._bar = bar
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flexlink-status", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def text(self) -> str:
        """The status of every running case, ``case N: …``, by case number."""
        parts = []
        for path in sorted(self._folder.glob("*.progress")):
            with contextlib.suppress(OSError, ValueError):
                parts.append(f"case {int(path.stem)}: {path.read_text().strip()}")
        return "; ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            self._bar.set_postfix_str(self.text(), refresh=True)
