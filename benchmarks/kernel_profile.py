"""Where a compiled kernel spends its time, by function: Linux ``perf`` sampling a loop of one
kernel call, with the numba functions named (not a test; prints ``perf report``'s table).

    OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_profile.py [--case space-arm] [--seconds 6]

numba's machine code has no symbols ``perf`` can read, and its own profiling hook
(``NUMBA_ENABLE_PROFILING``) needs an LLVM built with perf support. This script compiles a
loop of the kernel (``rates`` of the space arm, or ``mass`` of a stiffened beam), asks
llvmlite for the address of every function linked into the loop's library, writes them as
``/tmp/perf-<pid>.map`` (perf's map of JIT code; a function's size is the distance to the
next one), and records the running loop with ``perf record -p``. Functions inlined into
their callers (``inline="always"``) are counted as the caller; NRT_incref / NRT_decref and
malloc / free are numba's reference counts and allocations.

Measured (2026-11-27, 2-core AMD EPYC, one BLAS thread): the space arm's right-hand side
(AMM, 2 modes per plane, 15 coordinates, articulated bodies, ~9.5 µs) spends 15 % in the
complex-step kinematics, 12 % in each of the articulated-body step and the beam's inertia, 14 %
in reference counts and ~15 % in allocation; the stiffened beam's mass matrix (AMM 8 modes,
~150 µs) half in the foreshortening quadrature (``stiffening.interval``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))  # the checkout to measure (as benchmarks/dynamics_speed.py)

from numba import njit

from core.dynamics.compiled import algorithms


@njit(cache=False)
def _rates_loop(count, table, buffer, smax, x, tau, B, D, K, coulomb, epsilon, gravity, composite):
    total = 0.0
    for _ in range(count):
        out = algorithms.rates(table, buffer, smax, x, tau, B, D, K, coulomb, epsilon, gravity, composite)
        total += out[0]
    return total


@njit(cache=False)
def _mass_loop(count, table, buffer, smax, q):
    total = 0.0
    for _ in range(count):
        total += algorithms.mass(table, buffer, smax, q)[0, 0]
    return total


def _space_arm():
    """(loop, arguments after the count): rates of the space arm at a random state."""
    from amm import AssumedModesModel
    from core.arm.presets import space_arm_3link

    model = AssumedModesModel(space_arm_3link(), shape="clamped-free", modes=2)
    table, buffer, smax, constants = model.rates_function("recursive").kernel_arguments
    rng = np.random.default_rng(0)
    n = model.n_dof
    x = np.concatenate([0.1 * rng.standard_normal(2 * n), [0.0, 0.0]])
    B, D, K, coulomb, epsilon, gravity, _ = constants
    tau = np.zeros(B.shape[1])
    return _rates_loop, (table, buffer, smax, x, tau, B, D, K, coulomb, epsilon, gravity, False)


def _stiffened_beam():
    """(loop, arguments after the count): M of the spin-up beam, AMM 8 modes, stiffened."""
    from amm import AssumedModesModel
    from core.arm import Arm, Link

    arm = Arm.planar([Link.flexible(10.0, 1.2, 1.4e4)])
    model = AssumedModesModel(arm, modes=8, geometric_stiffening=True)
    chain = model.compiled
    q = 0.01 * np.random.default_rng(0).standard_normal(model.n_dof)
    return _mass_loop, (chain.table, chain.buffer, chain.smax, q)


CASES = {"space-arm": _space_arm, "stiffened-beam": _stiffened_beam}


def _write_map(loop, path: Path) -> int:
    """perf's map of every function linked into ``loop``'s compiled library; their number."""
    entries = set()
    for compiled in loop.overloads.values():
        library = compiled.library
        for function in library._final_module.functions:
            if function.is_declaration:
                continue
            address = library.get_pointer_to_function(function.name)
            if address:
                entries.add((address, function.name))
    ordered = sorted(entries)
    with path.open("w") as out:
        for index, (address, name) in enumerate(ordered):
            size = ordered[index + 1][0] - address if index + 1 < len(ordered) else 4096
            out.write(f"{address:x} {size if 0 < size < 1 << 24 else 4096:x} {name}\n")
    return len(ordered)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), default="space-arm")
    parser.add_argument("--seconds", type=float, default=6.0, help="how long perf samples the loop")
    parser.add_argument("--rows", type=int, default=25, help="rows of perf's table to print")
    options = parser.parse_args()
    perf = shutil.which("perf")
    if perf is None:
        print("kernel_profile: needs Linux perf (`perf` on PATH)", file=sys.stderr)
        return 2
    loop, arguments = CASES[options.case]()
    loop(3, *arguments)  # compiles the loop (the kernels themselves load from the cache)
    start = time.perf_counter()
    loop(200, *arguments)
    per_call = (time.perf_counter() - start) / 200
    count = max(int(1.5 * options.seconds / per_call), 1)
    functions = _write_map(loop, Path(f"/tmp/perf-{os.getpid()}.map"))
    print(f"{options.case}: {per_call * 1e6:.2f} µs a call, {functions} functions mapped", flush=True)
    data = Path(f"/tmp/kernel-profile-{os.getpid()}.data")
    command = [perf, "record", "-q", "-F", "4000", "-p", str(os.getpid()), "-o", str(data)]
    recorder = subprocess.Popen(
        [*command, "--", "sleep", str(options.seconds)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)  # perf attached before the loop starts
    loop(count, *arguments)
    recorder.wait()
    report = subprocess.run(
        [perf, "report", "-i", str(data), "--no-children", "--sort", "symbol", "--stdio"],
        capture_output=True,
        text=True,
    ).stdout
    rows = [line for line in report.splitlines() if "%" in line and not line.startswith("#")]
    for line in rows[: options.rows]:
        share, _, name = line.strip().partition(" ")
        print(f"{share:>8}  {_readable(name.replace('[.]', '').split()[0])}")
    data.unlink(missing_ok=True)
    return 0


def _readable(symbol: str) -> str:
    """``core.dynamics.compiled.kinematics.kinematics`` from numba's mangled name (else as is)."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, rest = [], symbol[3:]
    while rest and rest[0].isdigit():
        digits = len(rest) - len(rest.lstrip("0123456789"))
        length = int(rest[:digits])
        parts.append(rest[digits : digits + length])
        rest = rest[digits + length :]
    return ".".join(parts) or symbol


if __name__ == "__main__":
    raise SystemExit(main())
