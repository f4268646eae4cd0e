"""Dynamics cost per call (not a test; prints a Markdown table). Run with one BLAS thread:

    OPENBLAS_NUM_THREADS=1 python benchmarks/dynamics_speed.py [--quick]

Median µs per call of ``forward_dynamics`` (each solver of ``core.dynamics.model.SOLVERS``)
and ``mass_matrix``, each call at a fresh random state (so no per-configuration
cache helps), for the rigid 3-link arm (the space arm's rigid equivalent), the
lumped two-link arm (``core.arm.presets.lumped_two_link``), the space arm (AMM, 2
modes per plane, 15 DOF) and planar chains of n flexible links (AMM, 2 modes,
3n DOF), with exponents p of time ∝ n^p fitted over the chains with n ≥ 8.
Columns: the compiled engine (:mod:`core.dynamics.compiled`, the default) with both
solvers, the numpy oracle (``compiled=False``: h from the Christoffel symbols of the
complex-step ∂M/∂q, composite solve — the independent check the tests compare the kernels
with, not a fast path: n complex passes per call), and — when Pinocchio is installed (``pip
install -e ".[bench]"``) — its ``aba`` and ``crba`` on a rigid chain of as many
revolute links as the arm has coordinates (a compiled C++ rigid-body library:
the speed a flexible arm of that size could aim at).

``--fem``: instead, the solvers on fine element meshes — the space arm and the lumped
two-link arm (``core.arm.presets.lumped_two_link``) with E = 16, 64, 256, 1024 Hermite
elements per link, without and with geometric stiffening — ms per ``forward_dynamics``
call of "composite", "recursive", "structured" and "auto" (with the solver "auto" takes), at
fresh smooth states (:func:`smooth_state`: random joints and rates, each link deflected
w = a s² + b s³ with random a, b ~ 1e-2, θ = dw/ds; random fine-mesh coordinates are rough
far beyond any physical state). Each entry: median of at least 3 calls, more within the
budget; a solver that refuses the model prints "—".

Run from another checkout (``cd /work/main && python <this file>``) it measures
that checkout's code (solvers it lacks are shown as "—"). Before the compiled
engine (2-core machine, medians, one thread) the space arm's ``forward_dynamics``
took 740 µs and its ``mass_matrix`` 671 µs (Pinocchio ``aba``, 15 links: 4.25 µs),
the 32-link planar chain's ``forward_dynamics`` 127 ms, time ∝ n^2.9–3.6; the
compiled engine's figures are what this script prints.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))  # the checkout to measure (see docstring)

from amm import AssumedModesModel
from core import ChainModel, Link
from core.arm.presets import lumped_two_link, space_arm_3link
from core.arm.rigid import rigid_equivalent
from core.dynamics.model import SOLVERS
from studies.kinds import timing

#: Chain lengths (links) of the planar flexible chains.
CHAINS = (2, 4, 8, 16, 32, 64)
QUICK_CHAINS = (2, 4, 8, 16, 32)


def planar_chain(n: int) -> AssumedModesModel:
    """n identical flexible links (1 m, 1 kg/m, EI = 50 N m²), 2 clamped-free modes each."""
    return AssumedModesModel(timing.planar_chain(Link.flexible(1.0, 1.0, 50.0), n), modes=2)


#: One stream for every measurement, so that no two calls see the same state (and no
#: per-configuration cache of the model can answer).
RNG = np.random.default_rng(1)


def per_call(function, model, budget: float) -> float:
    """Median wall time [µs] of ``function(q, qd)`` at fresh random states, within ``budget`` [s]
    (after one warm-up call: compiled code loaded, caches filled)."""
    function(model.home(), np.zeros(model.n_dof))
    return timing.call_time(function, model, RNG, budget)


def numpy_twin(model):
    """The same model on the numpy oracle (``compiled=False``), or None where that option is missing."""
    try:
        return model.replace(compiled=False)
    except TypeError:
        return None


def pinocchio_chain(n: int):
    """(model, data) of a chain of n revolute links in Pinocchio, or None without ``pin``."""
    try:
        import pinocchio
    except ImportError:
        return None
    model = pinocchio.Model()
    parent = 0
    for k in range(n):
        placement = pinocchio.SE3(np.eye(3), np.array([1.0, 0.0, 0.0]) if k else np.zeros(3))
        parent = model.addJoint(parent, pinocchio.JointModelRZ(), placement, f"j{k}")
        inertia = pinocchio.Inertia(1.0, np.array([0.5, 0.0, 0.0]), np.diag([0.01, 0.08, 0.08]))
        model.appendBodyToJoint(parent, inertia, pinocchio.SE3.Identity())
    return pinocchio, model, model.createData()


def pinocchio_times(n: int, budget: float) -> dict[str, float]:
    chain = pinocchio_chain(n)
    if chain is None:
        return {}
    pinocchio, model, data = chain
    rng = RNG
    out = {}
    for name, call in (
        ("aba", lambda q, v: pinocchio.aba(model, data, q, v, np.zeros(n))),
        ("crba", lambda q, v: pinocchio.crba(model, data, q)),
    ):
        times, start = [], time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start < budget and len(times) < 2000):
            q, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
            t = time.perf_counter()
            call(q, v)
            times.append(time.perf_counter() - t)
        out[name] = 1e6 * float(np.median(times))
    return out


def measure(model, budget: float) -> dict[str, float]:
    tau = np.zeros(model.n_joints)
    out = {}
    for solver in ("composite", "recursive"):
        if solver in SOLVERS:
            out[solver] = per_call(
                lambda q, qd, s=solver: model.forward_dynamics(q, qd, tau, solver=s), model, budget
            )
    out["mass_matrix"] = per_call(lambda q, qd: model.mass_matrix(q), model, budget)
    twin = numpy_twin(model)
    if twin is not None:
        out["numpy"] = per_call(lambda q, qd: twin.forward_dynamics(q, qd, tau), twin, budget)
    out.update(pinocchio_times(model.n_dof, budget))
    return out


#: Elements per link of the two-link meshes of ``--fem``.
FEM_ELEMENTS = (16, 64, 256, 1024)


def smooth_state(model, rng) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇): random joints (±1) and joint rates, each link's coordinates those of a smooth
    deflection w = a s² + b s³ (clamped Hermite nodes: value, slope; AMM coordinates ~1e-2) and
    rates of the same form, a, b ~ N(0, 1e-2) per link length."""
    q, qd = model.home(), np.zeros(model.n_dof)
    q[: model.n_joints] += rng.uniform(-1, 1, model.n_joints)
    qd[: model.n_joints] = rng.standard_normal(model.n_joints)
    for number, columns in model.flex_columns.items():
        size = q[columns].size
        L = model.arm.links[number - 1].length
        planes = model.bodies[number].planes
        n = size // planes
        if n % 2:  # not a Hermite mesh: small random modal coordinates
            q[columns], qd[columns] = 0.01 * rng.standard_normal((2, size))
            continue
        s = np.linspace(0.0, L, n // 2 + 1)[1:] / L
        for x in (q, qd):
            block = np.empty(size)
            for plane in range(planes):
                a, b = 0.01 * rng.standard_normal(2)
                block[plane * n : (plane + 1) * n : 2] = L * (a * s**2 + b * s**3)
                block[plane * n + 1 : (plane + 1) * n : 2] = 2 * a * s + 3 * b * s**2
            x[columns] = block
    return q, qd


def fem_time(model, solver: str, budget: float) -> float:
    """Median ms per ``forward_dynamics`` call at :func:`smooth_state` states (≥ 3 calls after one
    warm-up, more within ``budget`` s); NaN if the solver refuses the model."""
    rng = np.random.default_rng(2)
    tau = np.zeros(model.n_joints)
    try:
        model.forward_dynamics(*smooth_state(model, rng), tau, solver=solver)
    except ValueError:
        return float("nan")
    times, start = [], time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 200):
        q, qd = smooth_state(model, rng)
        t = time.perf_counter()
        model.forward_dynamics(q, qd, tau, solver=solver)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def fem_table(budget: float, elements=FEM_ELEMENTS) -> None:
    """The ``--fem`` table (module docstring)."""
    from fem import FiniteElementModel

    solvers = ("composite", "recursive", "structured", "auto")
    print("| arm | DOF | " + " | ".join(f"{s} [ms]" for s in solvers) + " | auto takes |")
    print("|---|---|" + "---|" * (len(solvers) + 1))
    cases = [("space arm (AMM)", lambda: AssumedModesModel(space_arm_3link(), modes=2))]
    for stiffened in (False, True):
        for E in elements:
            name = f"two-link FEM ×{E}" + (" stiffened" if stiffened else "")
            cases.append(
                (
                    name,
                    lambda E=E, g=stiffened: FiniteElementModel(
                        lumped_two_link(), elements=E, geometric_stiffening=g
                    ),
                )
            )
    for name, build in cases:
        model = build()
        cells = [fem_time(model, solver, budget) for solver in solvers]
        text = ["—" if np.isnan(x) else f"{x:.3g}" for x in cells]
        print(f"| {name} | {model.n_dof} | " + " | ".join(text) + f" | {model.auto_solver()} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="0.5 s per measurement, chains up to 32 links")
    parser.add_argument("--fem", action="store_true", help="the solvers on fine element meshes only")
    arguments = parser.parse_args()
    quick = arguments.quick
    if arguments.fem:
        fem_table(0.5 if quick else 2.0)
        return
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
    keys = ("recursive", "composite", "mass_matrix", "numpy", "aba", "crba")
    print(f"checkout: {Path.cwd()}\n")
    print(
        "| arm | DOF | fd recursive [µs] | fd composite [µs] | mass_matrix [µs] | fd numpy oracle [µs] "
        "| Pinocchio aba [µs] | Pinocchio crba [µs] | recursive / aba | numpy / recursive |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, model in cases:
        r = rows[name] = measure(model, budget)
        cells = [f"{r[k]:.1f}" if k in r else "—" for k in keys]
        ratios = [
            f"{r[a] / r[b]:.1f}" if a in r and b in r else "—"
            for a, b in (("recursive", "aba"), ("numpy", "recursive"))
        ]
        print(f"| {name} | {model.n_dof} | " + " | ".join(cells + ratios) + " |", flush=True)
    fitted = [n for n in chains if n >= 8]
    print(
        "\nFitted exponent p (time ∝ n^p) over the planar chains n = " + ", ".join(map(str, fitted)) + ":\n"
    )
    for key in keys:
        values = [rows[f"planar chain n={n}"].get(key) for n in fitted]
        if None in values:
            continue
        p = np.polyfit(np.log(fitted), np.log(values), 1)[0]
        print(f"- {key}: {p:.2f}")
    faster = [
        n
        for n in chains
        if rows[f"planar chain n={n}"].get("recursive", np.inf)
        < rows[f"planar chain n={n}"].get("composite", 0)
    ]
    print(
        f"\nRecursive faster than composite from n = {min(faster) if faster else '—'} links (chains measured: {list(chains)})."
    )


if __name__ == "__main__":
    main()
