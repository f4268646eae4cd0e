"""Executors: how the independent cases of a study run. One registry.

Each executor takes a list of task tuples and yields ``(task, outcome)`` as
cases finish, in completion order; the runner writes each outcome to disk at
once, so nothing finished is lost if the run stops.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from studies.errors import ConfigError

Task = tuple
#: Seconds to wait for a Dask scheduler to answer.
DASK_CONNECT_TIMEOUT = 5
Runner = Callable[..., dict[str, Any]]


def serial(
    function: Runner, tasks: list[Task], workers: int, scheduler: str | None
) -> Iterator[tuple[Task, dict]]:
    """In this process, one case after the other."""
    for task in tasks:
        yield task, function(*task)


#: How often a pool worker checks that the run that started it is still alive [s].
PARENT_POLL = 0.5


def _exit_with_parent(parent: int) -> None:
    """Pool-worker initializer: a daemon thread ends this worker once its parent is gone
    (killed, even by SIGKILL, which no handler in the parent can see): the worker is then
    re-parented and ``os.getppid()`` changes. Ctrl-C (sent to the whole process group) is
    left to the parent, which terminates the workers; SIGTERM ends a worker quietly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def processes(
    function: Runner, tasks: list[Task], workers: int, scheduler: str | None
) -> Iterator[tuple[Task, dict]]:
    """A local process pool of ``workers`` processes.

    If the run stops early (an interrupt, SIGTERM, an error in the runner) the pool's
    pending cases are cancelled and its workers terminated at once, instead of the pool
    waiting for the running cases; workers whose parent is killed outright end themselves
    (:func:`_exit_with_parent`). Finished cases are on disk already.
    """
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_exit_with_parent, initargs=(os.getpid(),))
    try:
        futures = {pool.submit(function, *task): task for task in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.terminate()
        raise
    pool.shutdown()


def dask(
    function: Runner, tasks: list[Task], workers: int, scheduler: str | None
) -> Iterator[tuple[Task, dict]]:
    """A Dask cluster: the scheduler at ``scheduler`` (``tcp://host:port``), or a
    local cluster of ``workers`` single-threaded worker processes when none is given."""
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        )
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            raise ConfigError(
                f"execution.scheduler: no Dask scheduler answers at {scheduler!r} within {DASK_CONNECT_TIMEOUT} s"
            ) from None
    try:
        futures = {client.submit(function, *task, pure=False): task for task in tasks}
        for future in dask_completed(list(futures)):
            yield futures[future], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: Executors by name (the ``[execution] executor`` key).
EXECUTORS = {"serial": serial, "processes": processes, "dask": dask}
