"""FEM report (not a test; prints Markdown).

    python benchmarks/fem_report.py

1. Convergence of the first three cantilever frequencies with elements, fitted rates.
2. AMM vs FEM locked frequencies: three-link space arm (straight) and the
   lumped two-link arm at θ = (45°, −45°) without gravity.
3. Eigen-solve time of the lowest 10 cantilever frequencies vs element count
   (median of repeats, one run of this script), with the time ratios.
"""

from __future__ import annotations

import math
import time

import numpy as np

import fem
import shapes
from amm import AssumedModesModel
from core.arm.presets import lumped_two_link, space_arm_3link


def convergence() -> None:
    exact = shapes.ClampedFree().betas(3) ** 2
    counts = [1, 2, 4, 8, 16, 32, 64]
    print("| elements | error ω1 | error ω2 | error ω3 |")
    print("|---|---|---|---|")
    errors = []
    for count in counts:
        omega = fem.beam_frequencies(1.0, 1.0, 1.0, count, n=min(3, 2 * count))
        e = np.full(3, np.nan)
        e[: omega.size] = omega / exact[: omega.size] - 1
        errors.append(e)
        print(f"| {count} | " + " | ".join("-" if np.isnan(x) else f"{x:.3e}" for x in e) + " |")
    errors = np.array(errors)
    fit = np.array(counts) >= 8
    rates = [-np.polyfit(np.log(np.array(counts)[fit]), np.log(errors[fit, k]), 1)[0] for k in range(3)]
    print("\nfitted rates (8…64 elements): " + ", ".join(f"{r:.3f}" for r in rates))


def locked(model, joints):
    q = np.zeros(model.n_dof)
    q[: len(joints)] = joints
    return model.natural_frequencies(q, "locked")


def agreement() -> None:
    cases = [
        ("three-link space arm, θ = 0, first 5 locked ω [rad/s]", space_arm_3link(), [0.0, 0.0, 0.0], 5),
        (
            "lumped two-link arm, θ = (45°, −45°), no gravity, first 2 locked ω [rad/s]",
            lumped_two_link(gravity=False),
            [math.pi / 4, -math.pi / 4],
            2,
        ),
    ]
    for title, arm, joints, count in cases:
        print(f"\n{title}\n")
        print("| model | " + " | ".join(f"ω{k + 1}" for k in range(count)) + " |")
        print("|---|" + "---|" * count)
        for shape in ("clamped-free", "clamped-mass"):
            for modes in (1, 2, 4, 8):
                model = AssumedModesModel(arm, shape=shape, modes=modes, reference=joints)
                omega = locked(model, joints)[:count]
                print(f"| AMM {shape} × {modes} | " + " | ".join(f"{w:.6f}" for w in omega) + " |")
        for elements in (1, 2, 4, 8, 16):
            omega = locked(fem.FiniteElementModel(arm, elements=elements), joints)[:count]
            print(f"| FEM × {elements} | " + " | ".join(f"{w:.6f}" for w in omega) + " |")


def timing() -> None:
    print("\n| elements | time [s] | ratio to previous | error ω1 |")
    print("|---|---|---|---|")
    exact = shapes.ClampedFree().betas(1)[0] ** 2
    previous = None
    for count in (10, 100, 1000, 10000):
        times = []
        for _ in range(5 if count < 10000 else 3):
            start = time.perf_counter()
            omega = fem.beam_frequencies(1.0, 1.0, 1.0, count, n=10)
            times.append(time.perf_counter() - start)
        t = float(np.median(times))
        ratio = "" if previous is None else f"{t / previous:.1f}"
        print(f"| {count} | {t:.4f} | {ratio} | {omega[0] / exact - 1:.1e} |")
        previous = t


if __name__ == "__main__":
    convergence()
    agreement()
    timing()
