"""Executors: how the independent cases of a study run. One registry.

Each executor takes a list of task tuples and yields ``(task, outcome)`` as
cases finish, in completion order; the runner writes each outcome to disk at
once, so nothing finished is lost if the run stops.
"""

from __future__ import annotations

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


def processes(
    function: Runner, tasks: list[Task], workers: int, scheduler: str | None
) -> Iterator[tuple[Task, dict]]:
    """A local process pool of ``workers`` processes."""
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(function, *task): task for task in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()


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
