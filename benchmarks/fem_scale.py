"""FEM at scale (not a test; prints Markdown). Issue 14's measurements.

    OPENBLAS_NUM_THREADS=1 python benchmarks/fem_scale.py [--max-elements 4096] [--budget 30]

Run with one BLAS thread (multithreaded OpenBLAS on 2-core machines is 5–80×
slower and erratic on small matrices); the script warns if it is not set.

1. ``FiniteElementModel(arm, elements=E)``: its build, ``natural_frequencies(q, count=10)``
   (10 lowest, joints locked: the structured path of :mod:`core.structured`) and the dense
   path while it is cheap, for E = 8 … per link, on the one-link arm (``one_flexible_link``,
   error of ω₁ against the exact clamped-mass root) and the lumped two-link arm without
   gravity at θ = (45°, −45°): wall time (best of repeats), peak Python memory of build and
   solve (tracemalloc, which sees NumPy's buffers), fitted exponents in E.
2. ``forward_dynamics`` of the same models at a random state: the first call (which builds
   the dense data on first use: K, D, the bodies' m × m blocks and the compiled chain) and a
   second one. Forward dynamics stays dense (O(n_dof²) memory, O(m³) per link).
3. The standalone beam solver ``fem.beam_frequencies`` (10 lowest) beside
   ``scipy.sparse.linalg.eigsh`` shift-invert on the same assembled beam: time
   and the error of ω₁ against the exact cantilever root.

A series stops (and says so) once one call takes longer than ``--budget`` seconds.
The build and the structured eigen-solve are O(E) in time and memory (the bases are
sparse/operators, the dense blocks lazy), so only the dense columns are guarded: the dense
eigen-solve runs while it is cheap, and ``forward_dynamics`` is skipped (and says so) once
its dense data would exceed :data:`MEMORY_LIMIT`: nothing here is allowed to exhaust the
machine.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse.linalg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fem
import shapes
from core.presets import lumped_two_link, one_flexible_link
from fem import FiniteElementModel
from fem.assembly import assemble
from studies.references import exact_locked_frequencies

#: Skip a forward_dynamics call whose dense data (:func:`dense_bytes`) would exceed this [bytes].
MEMORY_LIMIT = 4 * 2**30


def dense_bytes(links: int, m: int, n_dof: int) -> int:
    """Estimated peak of the dense data forward dynamics builds on first use [bytes]: per
    flexible link of m coordinates about ten m × m float arrays (∫φφᵀ dm, N, M_δδ, the
    compiled chain's chunks, their concatenation and buffer), plus K and D (n_dof²)."""
    return 8 * (10 * links * m**2 + 2 * n_dof**2)


def best_time(setup, call, repeats: int) -> tuple[float, object]:
    """Best wall time [s] of ``call(setup())`` over ``repeats`` (setup not timed) and the last result.

    A fresh object per repeat: the engine caches M, ∂M/∂q and G per
    configuration, and a cache hit is not what a user's first call costs.
    """
    best, result = math.inf, None
    for _ in range(repeats):
        subject = setup()
        start = time.perf_counter()
        result = call(subject)
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_memory(function) -> float:
    """Peak traced allocation [MiB] of one call."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def exponent(sizes: list[int], times: list[float]) -> float:
    """Slope of log time against log size over the upper half of the series."""
    if len(sizes) < 3:
        return math.nan
    half = len(sizes) // 2
    return float(np.polyfit(np.log(sizes[half:]), np.log(times[half:]), 1)[0])


def model_series(name: str, arm, q_joints, counts: list[int], budget: float) -> None:
    """Build, the 10 lowest frequencies by the structured path (``count=10``: core.structured)
    and by the dense one (while it stays cheap), and one forward-dynamics call, per mesh."""
    exact = exact_locked_frequencies(arm, 1)
    print(f"\n### {name}\n")
    print(
        "| E per link | n_dof | build [s] | natural_frequencies(count=10) [s] | dense [s] | "
        "peak memory build + solve [MiB] | rel. error ω₁ | forward_dynamics: first call [s] | "
        "second call [s] |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    sizes, times, builds, sizes_fd, fd_times = [], [], [], [], []
    rng = np.random.default_rng(0)
    links = len(arm.flexible_links)
    dense_done = fd_done = False
    for count in counts:
        build = lambda c=count: FiniteElementModel(arm, elements=c)  # noqa: E731
        start = time.perf_counter()
        model = build()
        built = time.perf_counter() - start
        n = model.n_dof
        q = np.zeros(n)
        q[: len(q_joints)] = q_joints
        qd = rng.normal(scale=1e-3, size=n)
        repeats = 3 if n < 200 else 1
        seconds, omega = best_time(build, lambda m, q=q: m.natural_frequencies(q, count=10), repeats)
        dense = math.nan
        if not dense_done:
            dense, _ = best_time(build, lambda m, q=q: m.natural_frequencies(q, method="dense"), repeats)
            dense_done = dense > budget / 10
        memory = peak_memory(lambda q=q, build=build: build().natural_frequencies(q, count=10))
        error = omega[0] / exact[0][0] - 1 if exact is not None else math.nan
        fd = fd_second = math.nan
        need = dense_bytes(links, 2 * count, n)
        if not fd_done and need <= MEMORY_LIMIT:

            def twice(m, q=q, qd=qd):
                tau = np.zeros(m.n_joints)
                start = time.perf_counter()
                m.forward_dynamics(q, qd, tau)
                first = time.perf_counter() - start
                start = time.perf_counter()
                m.forward_dynamics(q, qd, tau)
                return first, time.perf_counter() - start

            runs = [twice(build()) for _ in range(repeats)]
            fd, fd_second = min(r[0] for r in runs), min(r[1] for r in runs)
            fd_done = fd > budget
            sizes_fd.append(count)
            fd_times.append(fd_second)
        skipped = "" if not math.isnan(fd) else f" (skipped: dense data ≈ {need / 2**30:.1f} GiB)"
        sizes.append(count)
        times.append(seconds)
        builds.append(built)
        print(
            f"| {count} | {n} | {built:.3g} | {seconds:.3g} | {dense:.3g} | {memory:.4g} | {error:.2e} | "
            f"{fd:.3g}{skipped} | {fd_second:.3g} |"
        )
        if max(seconds, built) > budget:
            print(f"| (series stopped: one call took more than {budget} s) | | | | | | | | |")
            break
    print(
        f"\nfitted exponents in E (upper half): build {exponent(sizes, builds):.2f}, "
        f"natural_frequencies {exponent(sizes, times):.2f}, build + natural_frequencies "
        f"{exponent(sizes, [b + t for b, t in zip(builds, times, strict=True)]):.2f}, "
        f"forward_dynamics (second call) {exponent(sizes_fd, fd_times):.2f}"
    )


def beam_series(counts: list[int], budget: float) -> None:
    exact = shapes.ClampedFree().betas(1)[0] ** 2
    print("\n### Standalone cantilever, 10 lowest frequencies\n")
    print(
        "| elements | beam_frequencies [s] | rel. error ω₁ | eigsh shift-invert on assembled K, M [s] | rel. error ω₁ |"
    )
    print("|---|---|---|---|---|")
    sizes, ours_t, theirs_t = [], [], []
    for count in counts:
        ours, omega = best_time(lambda c=count: c, lambda c: fem.beam_frequencies(1.0, 1.0, 1.0, c, n=10), 3)
        nodes = fem.uniform_mesh(1.0, count)
        a = assemble(nodes)
        free = np.arange(2, 2 * count + 2)
        K, M = a["stiffness"].tocsc()[free][:, free], a["mass"].tocsc()[free][:, free]
        theirs, lam = best_time(
            lambda K=K, M=M: (K, M),
            lambda KM: scipy.sparse.linalg.eigsh(KM[0], k=10, M=KM[1], sigma=0.0, return_eigenvectors=False),
            3,
        )
        naive = math.sqrt(np.min(lam))
        sizes.append(count)
        ours_t.append(ours)
        theirs_t.append(theirs)
        print(
            f"| {count} | {ours:.4g} | {omega[0] / exact - 1:.2e} | {theirs:.4g} | {naive / exact - 1:.2e} |"
        )
        if max(ours, theirs) > budget:
            break
    print(
        f"\nfitted exponents: beam_frequencies {exponent(sizes, ours_t):.2f}, eigsh {exponent(sizes, theirs_t):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-elements", type=int, default=4096)
    parser.add_argument("--budget", type=float, default=30.0, help="stop a series after a call this slow [s]")
    args = parser.parse_args()
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("warning: OPENBLAS_NUM_THREADS is not 1; timings of small dense matrices will be erratic\n")
    counts = [c for c in (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096) if c <= args.max_elements]
    print("## FEM at scale (one BLAS thread, best of repeats)")
    model_series(
        "One flexible link with tip mass (one_flexible_link), joints locked",
        one_flexible_link(),
        [0.0],
        counts,
        args.budget,
    )
    model_series(
        "Lumped two-link arm, no gravity, θ = (45°, −45°), joints locked",
        lumped_two_link(gravity=False),
        [math.pi / 4, -math.pi / 4],
        counts,
        args.budget,
    )
    beam_series(
        [c for c in (1000, 2000, 4000, 10000, 100000) if c <= max(args.max_elements, 100000)], args.budget
    )


if __name__ == "__main__":
    main()
