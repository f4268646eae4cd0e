"""Dynamics cost per call (not a test; prints a Markdown table). Run with one BLAS thread:

    OPENBLAS_NUM_THREADS=1 python benchmarks/dynamics_speed.py [--quick]

Median µs per call of ``forward_dynamics`` (each solver of ``core.model.SOLVERS``)
and ``mass_matrix``, each call at a fresh random state (so no per-configuration
cache helps), for the rigid 3-link arm (the space arm's rigid equivalent), the
lumped two-link arm (``core.presets.lumped_two_link``), the space arm (AMM, 2
modes per plane, 15 DOF) and planar chains of n flexible links (AMM, 2 modes,
3n DOF), with exponents p of time ∝ n^p fitted over the chains with n ≥ 8.

Run from another checkout (``cd /work/main && python <this file>``) it measures
that checkout's code (solvers it lacks are shown as "—"), which gives the
"before" column. Issue 13's own figures (2-core machine, medians, one thread),
for comparison: space arm ``forward_dynamics`` 740 µs, ``mass_matrix`` 671 µs;
32-link planar chain ``forward_dynamics`` 127 ms, time ∝ n^2.9–3.6.

Measured (2-core machine, one thread, 2026-11-23; "before" = commit e2f8934,
the code of the issue, run by this script): composite forward dynamics of the
32-link chain 138 ms → 5.9 ms, of the 64-link chain 2.4 s → 14 ms (exponent
3.5 → 1.1); space arm 638 → 563 µs (recursive 544 µs); the rigid 3-link and
lumped two-link arms are unchanged within noise (222/468 µs before,
252/494 µs after). Both solvers now cost about the same: what remains is the
per-link overhead of numpy calls on 3×3…10×10 arrays (the kinematics pass
≈ 35–40 %, bias forces ≈ 25 %, the recursion's body data ≈ 20 %), not
arithmetic; the issue's µs targets need a compiled path over all three.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))  # the checkout to measure (see docstring)

from amm import AssumedModesModel
from core import Arm, ChainModel, Link
from core.model import SOLVERS
from core.presets import lumped_two_link, space_arm_3link
from core.rigid import rigid_equivalent

#: Chain lengths (links) of the planar flexible chains.
CHAINS = (2, 4, 8, 16, 32, 64)
QUICK_CHAINS = (2, 4, 8, 16, 32)


def planar_chain(n: int) -> AssumedModesModel:
    """n identical flexible links (1 m, 1 kg/m, EI = 50 N m²), 2 clamped-free modes each."""
    links = [Link.flexible(1.0, 1.0, 50.0) for _ in range(n)]
    return AssumedModesModel(Arm.planar(links), modes=2)


#: One stream for every measurement, so that no two calls see the same state (and no
#: per-configuration cache of the model can answer).
RNG = np.random.default_rng(1)


def per_call(function, model, budget: float) -> float:
    """Median wall time [µs] of ``function(q, qd)`` at fresh random states, within ``budget`` [s]."""
    rng = RNG
    times, start = [], time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < budget and len(times) < 400):
        q = model.home()
        q[: model.n_joints] += rng.uniform(-1, 1, model.n_joints)
        q[model.n_joints :] = 0.01 * rng.standard_normal(model.n_dof - model.n_joints)
        qd = rng.standard_normal(model.n_dof)
        t = time.perf_counter()
        function(q, qd)
        times.append(time.perf_counter() - t)
    return 1e6 * float(np.median(times))


def measure(model, budget: float) -> dict[str, float]:
    tau = np.zeros(model.n_joints)
    out = {}
    for solver in ("composite", "recursive"):
        if solver in SOLVERS:
            out[solver] = per_call(
                lambda q, qd, s=solver: model.forward_dynamics(q, qd, tau, solver=s), model, budget
            )
    out["mass_matrix"] = per_call(lambda q, qd: model.mass_matrix(q), model, budget)
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    budget = 0.5 if quick else 2.0
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("warning: run with OPENBLAS_NUM_THREADS=1 for comparable figures", file=sys.stderr)
    cases = [
        ("rigid 3-link", ChainModel(rigid_equivalent(space_arm_3link()), {})),
        ("lumped two-link", AssumedModesModel(lumped_two_link(), modes=2)),
        ("space arm", AssumedModesModel(space_arm_3link(), modes=2)),
    ]
    chains = QUICK_CHAINS if quick else CHAINS
    cases += [(f"planar chain n={n}", planar_chain(n)) for n in chains]
    rows = {}
    print(f"checkout: {Path.cwd()}\n")
    print("| arm | DOF | fd composite [µs] | fd recursive [µs] | mass_matrix [µs] |")
    print("|---|---|---|---|---|")
    for name, model in cases:
        r = rows[name] = measure(model, budget)
        cells = [f"{r[k]:.0f}" if k in r else "—" for k in ("composite", "recursive", "mass_matrix")]
        print(f"| {name} | {model.n_dof} | " + " | ".join(cells) + " |", flush=True)
    fitted = [n for n in chains if n >= 8]
    print(
        "\nFitted exponent p (time ∝ n^p) over the planar chains n = " + ", ".join(map(str, fitted)) + ":\n"
    )
    for key in ("composite", "recursive", "mass_matrix"):
        values = [rows[f"planar chain n={n}"].get(key) for n in fitted]
        if None in values:
            continue
        p = np.polyfit(np.log(fitted), np.log(values), 1)[0]
        print(f"- {key}: {p:.2f}")


if __name__ == "__main__":
    main()
