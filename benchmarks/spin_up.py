"""Spin-up benchmark (Kane, Ryan & Banerjee 1987): cost and tip history per discretization.

    python benchmarks/spin_up.py [--rtol 1e-6] [--exudyn-python /tmp/exu/bin/python]

A cantilever beam (L = 10 m, EI = 1.4e4 N·m², ρA = 1.2 kg/m, no gravity, no
damping) whose hub angle is prescribed (:class:`core.analysis.trajectories.SpinUp`,
Ω = 6 rad/s, T = 15 s; ``simulate(..., prescribed=True)``), 0…20 s. For AMM
(clamped-free, 2/4/8 modes) and FEM (4/8/16 elements), with and without geometric
stiffening: the wall time of the integration and of the whole ``simulate`` call,
``simulate``'s overhead (the whole call over the integration: output rows, energies,
tip positions), simulated seconds per wall second of the whole call (what a user waits for, and
what Exudyn's ``SolveDynamic`` is timed as), right-hand sides and Jacobians, the tip
deflection in the rotating frame (``tip_w1``) at 5, 10, 15 s and its minimum
(value and time, on a 0.01 s grid), and the largest difference over the run to a
converged solution of the same model (FEM 32 elements, stiffened, rtol 1e-7; tighter
tolerances stall there: atol 1e-10 lies below the round-off of the fine mesh's
nodal-coordinate solve, and Radau's Newton iteration stops converging near t = 6.4 s).
Runs without stiffening stop when |tip_w1| reaches L (``deflection_limit``): the
table gives that time (the divergence after θ̇ passes ω₁ = 3.798 rad/s at 8.512 s).

Exudyn beside it (never a dependency of the project): the same beam as 8 ANCF
Cable2D elements (axial stiffness EA = 2.8e7 N, the benchmark's literature value),
node 0 clamped to a rigid hub whose rotation follows θ(t) through a coordinate
constraint, generalized-α (ρ∞ = 0.8) with fixed steps, modified Newton with
relative and absolute tolerances 1e-6 (the default absolute 1e-10 makes the
first steps crawl: 20 000 steps for the first 0.2 s). Its tip position is turned
into the rotating frame with θ(t). Exudyn runs when ``import exudyn`` works here,
or in the interpreter given by ``--exudyn-python`` (a throwaway venv:
``python3 -m venv /tmp/exu && /tmp/exu/bin/pip install exudyn numpy``), which runs
this file with ``--exudyn-only`` and hands back JSON. Its reference is 32 elements
with h = 1e-3 s.

All flexlink runs are in one process after a warm-up run (kernels loaded), one
BLAS thread (``OPENBLAS_NUM_THREADS=1``); the wall times compare as ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

L, EI, RHO_A, EA = 10.0, 1.4e4, 1.2, 2.8e7
OMEGA, T = 6.0, 15.0
T_END = 20.0
#: Output grid [s]: the report times 5, 10, 15 s lie on it.
STEP = 0.01
REPORT_TIMES = (5.0, 10.0, 15.0)


def hub_angle(t: float) -> float:
    """θ(t) of the spin-up (the same formula as core.analysis.trajectories.SpinUp, written out so the
    Exudyn side needs no flexlink)."""
    if t < T:
        return OMEGA / T * (t * t / 2 + (T / (2 * math.pi)) ** 2 * (math.cos(2 * math.pi * t / T) - 1))
    return OMEGA * (t - T / 2)


def grid() -> np.ndarray:
    return np.round(np.arange(0.0, T_END + STEP / 2, STEP), 10)


def summary(times: np.ndarray, tip: np.ndarray) -> dict:
    """Tip at the report times, its minimum and when."""
    row = {
        f"w({t:g} s)": float(tip[np.argmin(np.abs(times - t))]) if times[-1] >= t else math.nan
        for t in REPORT_TIMES
    }
    k = int(np.argmin(tip))
    row["min w"], row["t(min)"] = float(tip[k]), float(times[k])
    return row


# -- flexlink ------------------------------------------------------------------------------


def flexlink_run(model, rtol: float, limit: float | None) -> tuple[dict, np.ndarray]:
    """One prescribed spin-up of ``model``: (cost and tip values, tip history on the grid)."""
    from core.analysis.simulation import simulate
    from core.analysis.trajectories import SpinUp

    start = time.perf_counter()
    frame = simulate(
        model,
        (0.0, T_END),
        np.zeros(model.n_dof),
        trajectory=SpinUp(omega=(OMEGA,), T=(T,)),
        prescribed=True,
        method="Radau",
        rtol=rtol,
        atol=rtol * 1e-2,
        t_eval=grid(),
        deflection_limit=limit,
    )
    total = time.perf_counter() - start
    reached = float(frame["time"].iloc[-1])
    row = {
        "n_dof": model.n_dof,
        "integration s": frame.attrs["wall_time"],
        "total s": total,
        "total / integration": total / frame.attrs["wall_time"],
        "sim s / wall s": reached / total,  # the whole call, as Exudyn's SolveDynamic
        "rhs": frame.attrs["nfev"],
        "jac": frame.attrs["njev"],
        "stopped at": frame.attrs["stopped_at"],
        **summary(frame["time"].to_numpy(), frame["tip_w1"].to_numpy()),
    }
    return row, frame["tip_w1"].to_numpy()


def flexlink_table(rtol: float) -> tuple[list[dict], np.ndarray]:
    from amm import AssumedModesModel
    from core.arm import Arm, Link
    from fem import FiniteElementModel

    arm = Arm.planar(links=[Link.flexible(length=L, mass_per_length=RHO_A, EI=EI)])
    flexlink_run(AssumedModesModel(arm, modes=2, geometric_stiffening=True), 1e-3, None)  # warm-up
    _, reference = flexlink_run(FiniteElementModel(arm, elements=32, geometric_stiffening=True), 1e-7, None)
    rows = []
    for stiffened in (True, False):
        builds = [
            (
                f"AMM clamped-free x{n}",
                lambda n=n, s=stiffened: AssumedModesModel(arm, modes=n, geometric_stiffening=s),
            )
            for n in (2, 4, 8)
        ]
        builds += [
            (
                f"FEM x{n}",
                lambda n=n, s=stiffened: FiniteElementModel(arm, elements=n, geometric_stiffening=s),
            )
            for n in (4, 8, 16)
        ]
        for label, build in builds:
            row, tip = flexlink_run(build(), rtol, None if stiffened else L)
            error = float(np.max(np.abs(tip - reference[: tip.size]))) if stiffened else math.nan
            rows.append(
                {"case": label + (" stiffened" if stiffened else ""), **row, "max |w - w_conv|": error}
            )
    return rows, reference


# -- Exudyn ----------------------------------------------------------------------------------


def exudyn_run(elements: int, step: float) -> dict:
    """The spin-up with ``elements`` ANCF Cable2D elements and generalized-α steps of ``step`` [s]."""
    import exudyn as exu
    from exudyn.beams import GenerateStraightLineANCFCable2D
    from exudyn.itemInterface import (
        Cable2D,
        CoordinateConstraint,
        GenericJoint,
        MarkerBodyRigid,
        MarkerNodeCoordinate,
        MarkerNodeRigid,
        NodePointGround,
        ObjectGround,
        RevoluteJoint2D,
        SensorNode,
    )
    from exudyn.utilities import InertiaCuboid

    system = exu.SystemContainer()
    mbs = system.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    template = Cable2D(
        physicsMassPerLength=RHO_A,
        physicsBendingStiffness=EI,
        physicsAxialStiffness=EA,
        useReducedOrderIntegration=0,
    )
    nodes = GenerateStraightLineANCFCable2D(mbs, [0, 0, 0], [L, 0, 0], elements, template)[0]
    hub = mbs.CreateRigidBody(
        referencePosition=[0, 0, 0],
        inertia=InertiaCuboid(1000, [0.1, 0.1, 0.1]),
        create2D=True,
        returnDict=True,
    )
    hub_marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub["bodyNumber"], localPosition=[0, 0, 0]))
    root = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(GenericJoint(markerNumbers=[root, hub_marker], constrainedAxes=[1, 1, 0, 0, 0, 1]))
    mbs.AddObject(
        RevoluteJoint2D(
            markerNumbers=[
                hub_marker,
                mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0])),
            ]
        )
    )
    fixed = mbs.AddMarker(
        MarkerNodeCoordinate(
            nodeNumber=mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0])), coordinate=0
        )
    )
    angle = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=hub["nodeNumber"], coordinate=2))
    mbs.AddObject(
        CoordinateConstraint(
            markerNumbers=[fixed, angle],
            offset=0.0,
            offsetUserFunction=lambda mbs, t, item, offset: hub_angle(t),
        )
    )
    sensor = mbs.AddSensor(
        SensorNode(
            nodeNumber=nodes[-1], storeInternal=True, outputVariableType=exu.OutputVariableType.Position
        )
    )
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = round(T_END / step)
    settings.timeIntegration.endTime = T_END
    settings.timeIntegration.verboseMode = 0
    settings.timeIntegration.newton.useModifiedNewton = True
    settings.timeIntegration.newton.relativeTolerance = 1e-6
    settings.timeIntegration.newton.absoluteTolerance = 1e-6
    settings.timeIntegration.generalizedAlpha.spectralRadius = 0.8
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = STEP
    settings.show.computationTime = False
    settings.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    start = time.perf_counter()
    mbs.SolveDynamic(settings)
    wall = time.perf_counter() - start
    data = mbs.GetSensorStoredData(sensor)
    times, x, y = data[:, 0], data[:, 1], data[:, 2]
    theta = np.array([hub_angle(t) for t in times])
    tip = -x * np.sin(theta) + y * np.cos(theta)
    on_grid = np.interp(grid(), times, tip)
    return {
        "case": f"Exudyn ANCF x{elements}, h = {step:g} s",
        "n_dof": 4 * (elements + 1),
        "integration s": wall,
        "total s": wall,
        "sim s / wall s": T_END / wall,
        "steps": int(settings.timeIntegration.numberOfSteps),
        **summary(grid(), on_grid),
        "tip": on_grid.tolist(),
        "version": exu.GetVersionString(),
    }


def exudyn_table(python: str | None) -> list[dict] | None:
    """Exudyn's runs here if it imports, else through ``python`` (None: not available)."""
    plan = [(8, 2e-3), (8, 1e-3), (32, 1e-3)]
    try:
        import exudyn  # noqa: F401
    except ImportError:
        if python is None:
            return None
        output = subprocess.run(
            [python, __file__, "--exudyn-only"], capture_output=True, text=True, check=True
        ).stdout
        return json.loads(output.strip().splitlines()[-1])
    return [exudyn_run(n, h) for n, h in plan]


# -- report ------------------------------------------------------------------------------------


def markdown(rows: list[dict], columns: list[str]) -> str:
    def cell(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "–"
        if isinstance(value, float):
            return f"{value:.6g}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rtol", type=float, default=1e-6, help="Radau rtol of the flexlink runs (atol = rtol/100)"
    )
    parser.add_argument("--exudyn-python", help="an interpreter with exudyn installed (a throwaway venv)")
    parser.add_argument("--exudyn-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.exudyn_only:
        print(json.dumps([exudyn_run(n, h) for n, h in [(8, 2e-3), (8, 1e-3), (32, 1e-3)]]))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    rows, reference = flexlink_table(args.rtol)
    columns = [
        "case",
        "n_dof",
        "integration s",
        "total s",
        "total / integration",
        "sim s / wall s",
        "rhs",
        "jac",
        *(f"w({t:g} s)" for t in REPORT_TIMES),
        "min w",
        "t(min)",
        "stopped at",
        "max |w - w_conv|",
    ]
    print(f"## flexlink (Radau, rtol {args.rtol:g}; w_conv: FEM x32 stiffened, rtol 1e-7)\n")
    print(markdown(rows, columns))
    exudyn = exudyn_table(args.exudyn_python)
    if exudyn is None:
        print("\nExudyn: not installed (see --exudyn-python).")
        return
    converged = np.array(exudyn[-1]["tip"])
    for row in exudyn:
        tip = np.array(row.pop("tip"))
        row["max |w - w_conv|"] = float(np.max(np.abs(tip - converged)))
        row["max |w - flexlink FEM x32|"] = float(np.max(np.abs(tip - reference)))
    print(f"\n## Exudyn {exudyn[0]['version']} (w_conv: ANCF x32, h = 1e-3 s)\n")
    print(
        markdown(
            exudyn,
            [c for c in columns if c not in ("rhs", "jac", "stopped at", "total / integration")]
            + ["steps", "max |w - flexlink FEM x32|"],
        )
    )


if __name__ == "__main__":
    main()
