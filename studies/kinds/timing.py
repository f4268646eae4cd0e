"""``timing``: what the dynamics cost, per solver, against modes, elements and links.

For every case of the sweep and every solver of ``analysis.solvers``:

* the median wall time of one ``forward_dynamics`` call (and its inverse, the
  evaluations per second) and of one ``mass_matrix`` call, each at a fresh
  random state (no per-configuration cache can answer), on the study's arm;
* the same on planar chains of ``chain_links`` copies of the arm's first
  flexible link with the case's discretization, from which the exponent p of
  time ∝ nᵖ is fitted (the recursive algorithm should give p ≈ 1; a dense
  factorization of M tends to 3);
* with ``simulate`` > 0, the wall time per simulated second of a free
  vibration of the arm (flexible coordinates displaced by ``1e-3``, no
  controller) under ``method``.

Wall times depend on the machine and its load: run serially (the shipped
config does) with one BLAS thread (``[execution] blas_threads = 1``, the
default). The first call of each model is made before timing, so numba's
loading of the compiled code (and any compilation) is not counted.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import Field, NonNegativeInt, PositiveInt

from core.analysis.simulation import ADAPTIVE_METHODS, simulate
from core.arm import Arm
from core.dynamics.model import SOLVERS
from studies.discretizations import discretization_columns, label_of
from studies.kinds.base import AnalysisSchema, StudyKind, with_rows
from studies.limits import AtMost, Duration, Span

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


def planar_chain(link, n: int) -> Arm:
    """A planar arm of n copies of ``link`` (revolute joints, a = the link length; in-plane
    bending only, so an out-of-plane stiffness is dropped)."""
    return Arm.planar([dataclasses.replace(link, EI_out=None)] * n)


def call_time(function, model, rng: np.random.Generator, budget: float, calls: int = 400) -> float:
    """Median wall time [µs] of ``function(q, qd)`` at fresh random states of ``model``:
    joint values uniform in ±1, flexible coordinates ~1e-2, rates standard normal; at least
    5 calls, then more within ``budget`` seconds (at most ``calls``)."""
    times: list[float] = []
    start = time.perf_counter()
    home = model.home()
    translating = [number - 1 for number in model.arm.translating_links]
    while len(times) < 5 or (time.perf_counter() - start < budget and len(times) < calls):
        q = home.copy()
        q[: model.n_joints] += rng.uniform(-1, 1, model.n_joints)
        for i in translating:  # a free length stays inside the beam
            q[i] = home[i] * rng.uniform(0.5, 1.0)
        q[model.n_joints :] = 0.01 * rng.standard_normal(model.n_dof - model.n_joints)
        qd = rng.standard_normal(model.n_dof)
        t = time.perf_counter()
        function(q, qd)
        times.append(time.perf_counter() - t)
    return 1e6 * float(np.median(times))


class TimingAnalysis(AnalysisSchema):
    solvers: list[str] = Field(
        default_factory=lambda: ["composite", "recursive"],
        min_length=1,
        description="Forward-dynamics solvers timed, keys of core.dynamics.model.SOLVERS.",
    )
    chain_links: list[
        Annotated[
            PositiveInt,
            AtMost(
                10_000,
                "a chain of n links has at least 2n coordinates: dense matrices of gigabytes, "
                "O(n^3) work per call",
                soft=256,
                soft_why="every chain is timed at least 5 calls per solver, O(n^3) for the composite one",
            ),
        ]
    ] = Field(
        default_factory=lambda: [2, 4, 8, 16, 32],
        description="Links of the planar chains of copies of the arm's first flexible link; empty: "
        "no chains.",
    )
    budget: Duration = Field(
        0.5, description="Time for timing each function: at least 5 calls, at most 400 [s]."
    )
    simulate: Span = Field(
        0.0,
        description="Simulated time of a free vibration (flexible coordinates displaced by 1e-3, no "
        "controller) whose wall time per simulated second is reported; 0: none [s].",
    )
    method: Literal[ADAPTIVE_METHODS] = Field(
        "Radau", description="scipy solve_ivp method of that simulation."
    )
    seed: NonNegativeInt = Field(0, description="Seed of the random states.")


def _measure(model, solvers, budget, rng) -> dict[str, float]:
    tau = np.zeros(model.n_joints)
    out = {}
    q, qd = model.home(), np.zeros(model.n_dof)
    for solver in solvers:
        model.forward_dynamics(q, qd, tau, solver=solver)  # load the compiled code first
        out[solver] = call_time(
            lambda q, qd, s=solver: model.forward_dynamics(q, qd, tau, solver=s), model, rng, budget
        )
    out["mass_matrix"] = call_time(lambda q, qd: model.mass_matrix(q), model, rng, budget)
    return out


class Timing(StudyKind):
    analysis_schema = TimingAnalysis

    def validate(self, arm, analysis):
        unknown = sorted(set(analysis.solvers) - set(SOLVERS))
        if unknown:
            raise ValueError(
                f"analysis.solvers: unknown solver {unknown[0]!r} (known: {', '.join(sorted(SOLVERS))})"
            )
        if analysis.chain_links and not arm.flexible_links:
            raise ValueError(
                "analysis.chain_links: the arm has no flexible link to repeat (set chain_links = [])"
            )

    def run_case(self, arm, case, analysis):
        rng = np.random.default_rng(analysis.seed)
        rows = []
        arms = [("arm", arm.n_links, arm)]
        if analysis.chain_links:
            link = arm.links[arm.flexible_links[0] - 1]
            arms += [("chain", n, planar_chain(link, n)) for n in analysis.chain_links]
        for what, links, body in arms:
            model = case.discretization.build(body)
            times = _measure(model, analysis.solvers, analysis.budget, rng)
            for solver in analysis.solvers:
                row = {**case.columns(), "arm": what, "links": links, "n_dof": model.n_dof, "solver": solver}
                row["fd_us"] = times[solver]
                row["evaluations_per_s"] = 1e6 / times[solver]
                row["mass_matrix_us"] = times["mass_matrix"]
                row["wall_s_per_simulated_s"] = np.nan
                if what == "arm" and analysis.simulate > 0:
                    q0 = model.home()
                    q0[model.n_joints :] += 1e-3
                    frame = simulate(
                        model, (0.0, analysis.simulate), q0, method=analysis.method, solver=solver
                    )
                    row["wall_s_per_simulated_s"] = frame.attrs["wall_time"] / analysis.simulate
                rows.append(row)
        return rows

    def tables(self, results, arm, analysis):
        return with_rows(
            {"cost on the arm": _arm_table(results)},
            {"fitted exponents (time ∝ links^p)": fitted_exponents(results)},
        )

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.kinds.timing_figures import loglog_plot

        text = [
            "Median wall time per call at fresh random states (one BLAS thread); "
            "chains are planar copies of the arm's first flexible link. These are "
            "measurements of this machine under its load, not reproducible numbers."
        ]
        exponents = fitted_exponents(results)
        if not exponents.empty:
            exponents.to_csv(folder / "exponents.csv", index=False)
            text.append("Fitted exponents: `exponents.csv`.")
        if plots:
            chains = results[results["arm"] == "chain"]
            if not chains.empty:
                names = loglog_plot(
                    chains,
                    "links",
                    "fd_us",
                    ["case"],
                    "solver",
                    "number of links in the chain",
                    "forward dynamics [µs]",
                    folder,
                    "timing_links",
                )
                text.append(
                    "Forward-dynamics time per call against the links of the chain (colour: case, line "
                    f"style: solver): ![forward dynamics against links]({names[0]}) ([PDF]({names[1]}))"
                )
            own = results[results["arm"] == "arm"]
            names = loglog_plot(
                own,
                "n_dof",
                "fd_us",
                ["solver"],
                "backend",
                "number of coordinates",
                "forward dynamics [µs]",
                folder,
                "timing_dof",
            )
            text.append(
                "Forward-dynamics time per call on the arm against its coordinates (colour: solver, line "
                f"style: backend): ![forward dynamics against coordinates]({names[0]}) ([PDF]({names[1]}))"
            )
        return text


def _arm_table(results: pd.DataFrame) -> pd.DataFrame:
    own = results[results["arm"] == "arm"]
    columns = [*discretization_columns(), "n_dof", "solver", "fd_us", "evaluations_per_s", "mass_matrix_us"]
    if own["wall_s_per_simulated_s"].notna().any():
        columns.append("wall_s_per_simulated_s")
    return own[columns].reset_index(drop=True)


def fitted_exponents(results: pd.DataFrame) -> pd.DataFrame:
    """p of fd_us ∝ links^p per case and solver, least squares in log-log over the chains
    with at least 8 links (all chains if fewer than two have 8 or more)."""
    import pandas as pd

    chains = results[results["arm"] == "chain"]
    rows = []
    for (_, solver), group in chains.groupby(["case", "solver"], sort=True):
        fitted = group[group["links"] >= 8]
        if len(fitted) < 2:
            fitted = group
        if fitted["links"].nunique() < 2:
            continue
        p = np.polyfit(np.log(fitted["links"]), np.log(fitted["fd_us"]), 1)[0]
        first = group.iloc[0]
        rows.append(
            {
                "case_label": label_of(first),
                "solver": solver,
                "links": f"{fitted['links'].min()}–{fitted['links'].max()}",
                "exponent": float(p),
                "fd_us_at_max_links": float(fitted.sort_values("links")["fd_us"].iloc[-1]),
            }
        )
    return pd.DataFrame(rows)
