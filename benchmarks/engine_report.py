"""Engine accuracy report (not a test; prints Markdown).

    python benchmarks/engine_report.py

* rigid two-link arm vs the textbook closed form (worst |error| over random states);
* worst skew-symmetry violation of Ṁ − 2C over random arms (Ṁ from a
  complex-step directional derivative of M, C from the Christoffel symbols);
* energy drift of a 2 s free simulation;
* clamped-mass single-link frequency error;
* first two locked frequencies of the lumped two-link arm at θ = (45°, −45°),
  no gravity, cantilever vs distal-load clamped-mass shapes.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import shapes
from amm import AssumedModesModel
from core import Arm, ChainModel, Link, Payload
from core.arm.presets import lumped_two_link
from core.numerics.derivatives import COMPLEX_STEP
from tests.strategies import amm_models, states
from tests.test_engine_energy import energy, two_link_flexible_arm
from tests.test_engine_reference import textbook_two_link


def rigid_error() -> float:
    m1, m2, l1, l2, lc1, lc2, I1, I2, g = 1.3, 0.7, 0.9, 0.6, 0.4, 0.25, 0.11, 0.05, 9.81
    arm = Arm.planar(
        [Link.rigid(l1, m1, com=lc1, inertia=I1), Link.rigid(l2, m2, com=lc2, inertia=I2)], gravity=(0, -g, 0)
    )
    model = ChainModel(arm, {})
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(1000):
        q, qd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2)
        M, Cqd, G = textbook_two_link(q, qd, m1, m2, l1, lc1, lc2, I1, I2, g)
        worst = max(
            worst,
            np.max(np.abs(model.mass_matrix(q) - M)),
            np.max(np.abs(model.coriolis_matrix(q, qd) @ qd - Cqd)),
            np.max(np.abs(model.gravity_forces(q) - G)),
        )
    return worst


def skew_violation(examples: int) -> tuple[float, int]:
    worst = [0.0, 0]

    @given(data=st.data())
    @settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(data):
        model = data.draw(amm_models())
        q, qd = data.draw(states(model))
        M_dot = np.imag(model.mass_matrix(q + 1j * COMPLEX_STEP * qd)) / COMPLEX_STEP
        S = M_dot - 2 * model.coriolis_matrix(q, qd)
        scale = np.max(np.abs(model.mass_matrix(q))) * np.max(np.abs(qd))
        worst[0] = max(worst[0], np.max(np.abs(S + S.T)) / scale)
        worst[1] += 1

    run()
    return worst[0], worst[1]


def energy_drift() -> float:
    model = AssumedModesModel(two_link_flexible_arm(), shape="clamped-mass", modes=2)
    n = model.n_dof
    x0 = np.zeros(2 * n)
    x0[:2], x0[2:n], x0[n : n + 2] = [0.3, -0.5], 0.02, [1.0, -1.5]
    sol = solve_ivp(
        lambda t, x: np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], np.zeros(2))]),
        (0, 2),
        x0,
        method="DOP853",
        rtol=1e-10,
        atol=1e-12,
    )
    E = np.array([energy(model, x) for x in sol.y.T])
    return float(np.max(np.abs(E - E[0])) / abs(E[0]))


def clamped_mass_error() -> float:
    L, rho, EI, M, J = 1.2, 0.8, 15.0, 0.5, 0.02
    arm = Arm.planar([Link.flexible(L, rho, EI)], payload=Payload(M, J))
    exact = shapes.ClampedMass(M / (rho * L), J / (rho * L**3)).frequencies(
        4, EI=EI, mass_per_length=rho, length=L
    )
    omega = AssumedModesModel(arm, shape="clamped-mass", modes=4).natural_frequencies()
    return float(np.max(np.abs(omega / exact - 1)))


def distal_table() -> list[str]:
    arm = lumped_two_link(gravity=False)
    joints = np.array([math.pi / 4, -math.pi / 4])
    rows = [
        "| modes per link | clamped-free ω1 | ω2 [rad/s] | clamped-mass (distal) ω1 | ω2 [rad/s] |",
        "|---|---|---|---|---|",
    ]
    for modes in (1, 2, 4, 8):
        cells = []
        for shape in ("clamped-free", "clamped-mass"):
            model = AssumedModesModel(arm, shape=shape, modes=modes, reference=joints)
            q = np.zeros(model.n_dof)
            q[:2] = joints
            cells += [f"{w:.6f}" for w in model.natural_frequencies(q, "locked")[:2]]
        rows.append(f"| {modes} | " + " | ".join(cells) + " |")
    return rows


if __name__ == "__main__":
    start = time.perf_counter()
    print(f"- rigid two-link vs textbook (1000 states): worst |error| {rigid_error():.2e}")
    worst, count = skew_violation(300)
    print(f"- Ṁ − 2C skew violation, relative to ‖M‖‖q̇‖: worst {worst:.2e} over {count} random arms/states")
    print(f"- energy drift, 2 s free motion, DOP853 rtol 1e-10: {energy_drift():.2e}")
    print(f"- clamped-mass single link, 4 modes: worst relative frequency error {clamped_mass_error():.2e}")
    print("\n".join(distal_table()))
    print(f"\n(wall time {time.perf_counter() - start:.0f} s)")
