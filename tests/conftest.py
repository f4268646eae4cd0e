"""Shared pytest configuration: hypothesis profiles, and the compiled kernels shared out
between the xdist workers.

``ci`` (the default) is derandomized with a fixed example budget so that every
run of the suite sees the same examples; ``dev`` explores more and randomly.
Select with ``HYPOTHESIS_PROFILE=dev pytest``.

**Kernels compiled once, not once per worker.** numba compiles a kernel on its first call in a
process and caches the machine code on disk (``core.cache``); a later process loads it (~0.1 s)
instead of compiling (~10–60 s). Two workers starting on an empty cache would each compile
every kernel (~170 CPU s each, measured on this suite's machine). So each worker, before its
first test, goes through :data:`KERNEL_ENTRIES` (longest first) as a shared queue: it compiles
an entry nobody holds (an exclusive ``flock`` on the entry's lock file beside the cache), skips
one the other worker is compiling, and at the end takes each skipped one once the other is done
(loaded from the cache). The machine code is the same either way; only who compiles it changes.
With a warm cache every entry is a load. Without ``fcntl`` (not POSIX), a cache folder, or a
second worker, nothing is done here and the kernels compile on first use as before.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _kernel_entries():
    """(name, call) of every kernel the models call from Python, longest to compile first
    (measured cold on one core: mass 63 s, forward 42, rates 24, rates_jacobian 16, inverse 12,
    prescribed 12, the series' two 1 s each); the calls give the argument types every model
    passes (the packed table, contiguous float arrays)."""
    import numpy as np

    from amm import AssumedModesModel
    from core.arm.presets import lumped_two_link
    from core.dynamics.compiled import series

    model = AssumedModesModel(lumped_two_link(), modes=2)
    chain = model.compiled
    q, qd, tau = model.home(), np.zeros(model.n_dof), np.zeros(model.n_joints)
    rates = model.rates_function("recursive")
    x = np.concatenate([q, qd])
    table = (np.array([0.0, 1.0]), np.zeros((1, 2, 9)), np.array([2]), np.ones(9))  # n_f 2, one joint
    return [
        ("mass", lambda: chain.mass(q)),
        ("forward", lambda: chain.forward(q, qd, qd)),
        ("rates", lambda: rates(x, tau)),
        ("rates_jacobian", lambda: rates.jacobian(x, tau)),
        ("inverse", lambda: chain.inverse(q, qd, qd)),
        ("prescribed", lambda: model.prescribed_function()(q, qd, tau)),
        ("linear_rates", lambda: series.linear_rates(*table, 0.5, np.zeros(1), np.zeros(4))),
        ("linear_jacobian", lambda: series.linear_jacobian(*table, 0.5, np.zeros(1), 2)),
    ]


def pytest_sessionstart(session):
    """In an xdist worker with a sibling: the kernels of :func:`_kernel_entries`, compiled by
    whichever worker reaches each first (module docstring)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) < 2:
        return
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker compiles what it uses
        return
    from core.dynamics.compiled import jit

    if jit.FOLDER is None:
        return
    skipped = []
    for name, call in _kernel_entries():
        with open(jit.FOLDER / f"{name}.compiling", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # the other worker is compiling it
                skipped.append((name, call))
                continue
            call()
    for name, call in skipped:
        with open(jit.FOLDER / f"{name}.compiling", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # until the other worker has cached it
            call()
