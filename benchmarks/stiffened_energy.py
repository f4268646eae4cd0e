"""Energy of a stiffened free swing (not a test; prints Markdown): how well the stiffened FEM
model of the lumped two-link arm conserves energy, per mesh.

    OPENBLAS_NUM_THREADS=1 python benchmarks/stiffened_energy.py [--elements 8 32] [--rtol 1e-9]
    OPENBLAS_NUM_THREADS=1 python benchmarks/stiffened_energy.py --elements 8 32 --method Gauss --step 2e-4 --rtol 1e-7

The arm is ``presets.lumped_two_link`` with EI/20 (so that the swing bends the links), gravity
along −y, released at rest from (45°, −45°) with zero deflection, no damping, no torque, and
simulated for ``--t-end`` seconds (0.5) with ``--method`` (DOP853) at ``--rtol`` (atol 1e-2 of
it; for ``Gauss``, the fixed ``--step`` and the scale of its Newton iterations). The drift is
the largest |energy_balance_error| of the run divided by the swing of the potential energy over
it (the energy the swing exchanges), the measure of the stiffened model's consistency: M(q),
h(q, q̇) and the energy of a Gram-form kinetic energy agree only if the drift falls with the
tolerance to round-off.

The highest locked frequency grows as E² (×8 2.0e4, ×16 8.1e4, ×32 3.3e5 rad/s), so an explicit
method needs millions of right-hand sides at ×32: DOP853 at rtol 1e-9 had not finished after
2 h of one core (> 5.6 million right-hand sides). The symplectic ``Gauss`` method steps over
those modes without damping them. Measured (one BLAS thread, 2-core machine, both cores busy):

| method | elements | drift / swing | right-hand sides | Jacobians | CPU s |
|---|---:|---:|---:|---:|---:|
| DOP853, rtol 1e-11 | 8 | 1.0e-14 | 289 121 | 0 | 55 |
| Gauss, h 2e-4, rtol 1e-7 | 8 | 2.9e-10 | 26 727 | 1 | 8.8 |
| Gauss, h 2e-4, rtol 1e-7 | 32 | 4.9e-10 | 42 300 | 1 | 57 |
| Gauss, h 1e-4, rtol 1e-7 | 32 | 1.0e-10 | 78 876 | 2 | 101 |

The Gauss drift follows its Newton tolerance (×8 at h 5e-4 and rtol 1e-8: 1.0e-11), not its step.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import Arm, Joint
from core.analysis.simulation import simulate
from core.arm import presets
from fem import FiniteElementModel


def swinging_arm() -> Arm:
    """The lumped two-link arm with EI/20 under gravity along −y."""
    base = presets.lumped_two_link()
    links = [dataclasses.replace(link, EI=link.EI / 20) for link in base.links]
    joints = [Joint(a=base.joints[0].a), Joint(a=base.joints[1].a, hub_mass=base.joints[1].hub_mass)]
    return Arm.planar(links, payload=base.payload, gravity=(0.0, -9.81, 0.0), joints=joints)


def drift(elements: int, method: str, rtol: float, t_end: float, step: float | None = None) -> dict:
    """One free swing of the stiffened FEM model with ``elements`` per link (``step``: the
    fixed step of ``method="Gauss"``)."""
    model = FiniteElementModel(swinging_arm(), elements=elements, geometric_stiffening=True)
    q0 = np.zeros(model.n_dof)
    q0[:2] = math.pi / 4, -math.pi / 4
    start = time.process_time()
    frame = simulate(
        model,
        (0.0, t_end),
        q0,
        method=method,
        rtol=rtol,
        atol=rtol * 1e-2,
        t_eval=np.linspace(0.0, t_end, 201),
        step=step,
    )
    potential = frame["potential"].to_numpy()
    swing = float(np.max(np.abs(potential - potential[0])))
    return {
        "elements": elements,
        "drift": float(frame["energy_balance_error"].abs().max()) / swing,
        "swing_J": swing,
        "nfev": frame.attrs.get("nfev"),
        "njev": frame.attrs.get("njev"),
        "cpu_s": time.process_time() - start,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[8])
    parser.add_argument("--method", default="DOP853")
    parser.add_argument("--rtol", type=float, default=1e-11)
    parser.add_argument("--t-end", type=float, default=0.5)
    parser.add_argument("--step", type=float, default=None, help="the fixed step of --method Gauss [s]")
    args = parser.parse_args(argv)
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("warning: OPENBLAS_NUM_THREADS is not 1; timings are not comparable", file=sys.stderr)
    step = f", step {args.step:g} s" if args.step else ""
    print(f"{args.method}, rtol {args.rtol:g}{step}, {args.t_end:g} s\n")
    print("| elements per link | drift / swing | swing [J] | right-hand sides | Jacobians | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for elements in args.elements:
        row = drift(elements, args.method, args.rtol, args.t_end, args.step)
        print(
            f"| {row['elements']} | {row['drift']:.2e} | {row['swing_J']:.3g} | {row['nfev']} |"
            f" {row['njev']} | {row['cpu_s']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
