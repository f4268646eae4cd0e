"""``convergence``: frequencies swept over modes / elements, errors and fitted rates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from studies.discretizations import BACKENDS, per_case, size_columns
from studies.kinds.base import caution
from studies.kinds.frequencies import (
    Frequencies,
    FrequencyCount,
    ModalAnalysis,
    add_references,
    frequency_rows,
)

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Errors below this are round-off, not discretization error, and are left out of fits.
FIT_FLOOR = 1e-12
#: Decimals a fitted rate is given to: the points just above :data:`FIT_FLOOR` carry the eigen-solve's
#: round-off (~1e-16 of ω, 1e-4 of a 1e-12 error), which moves a rate's fifth digit from one CPU to
#: another (measured 3.79785 and 3.79791 for the quickstart's FEM mode 1).
RATE_DECIMALS = 2
#: Accuracies of the trade-off table: |relative error| of every compared frequency.
TARGETS = (1e-2, 1e-4, 1e-6)


class ConvergenceAnalysis(ModalAnalysis):
    n_frequencies: FrequencyCount = Field(3, description="Frequencies compared per case, lowest first.")


#: Against the finest case, a refinement must shrink the error at least this much for the
#: errors to count as still falling (rate 1 halves it per doubling; a plateau keeps it).
FALLING = 0.8


def fitted_rates(results: pd.DataFrame) -> pd.DataFrame:
    """Slope p of log|error| = c − p log(size) per (backend, shape, mode), and ``falling``.

    Points at the round-off floor (|error| < 1e-12) and the reference case
    itself (error exactly 0) are left out; fewer than 3 points give NaN. Rates are rounded to
    :data:`RATE_DECIMALS` decimals, the digits that do not depend on round-off. Against the
    finest case (no exact reference), ``falling`` is False when the errors of the two
    finest compared cases above the floor no longer fall (the second does not shrink
    below :data:`FALLING` times the first): the reference is then not converged, or the
    path loses digits, and the rate would measure the reference, so it is left blank.
    """
    import pandas as pd

    against_finest = results["reference_source"].iloc[0].startswith("finest")
    rows = []
    for (backend, shape, mode), group in results.groupby(["backend", "shape", "mode"], sort=True):
        group = group.sort_values(BACKENDS[backend].size_column)
        size = group[BACKENDS[backend].size_column]
        error = group["rel_error"].abs()
        keep = error > FIT_FLOOR
        rate = np.nan
        tail = error[keep].to_numpy()
        falling = not (against_finest and tail.size >= 2 and tail[-1] > FALLING * tail[-2])
        if keep.sum() >= 3 and falling:
            slope = np.polyfit(np.log(size[keep].to_numpy(float)), np.log(error[keep].to_numpy()), 1)[0]
            rate = round(-float(slope), RATE_DECIMALS)
        rows.append(
            {
                "backend": backend,
                "shape": shape,
                "mode": mode,
                "points": int(keep.sum()),
                "rate": rate,
                "falling": falling,
            }
        )
    return pd.DataFrame(rows)


def tradeoff_table(results: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Per basis (backend, shape) and target accuracy: the smallest case from which on every
    larger case of that basis has all compared frequencies within the target, with its
    coordinates, size and wall time (``costs``); blank where no case gets there.

    The reference case is left out when it is the finest case itself (its error is 0 by
    definition). Frequencies a small case does not have count as not reached.
    """
    import pandas as pd

    from studies.discretizations import finest_case

    data = results
    if results["reference_source"].iloc[0].startswith("finest"):
        data = results[results["case"] != finest_case(results)]
    modes = int(results["mode"].max())
    seconds = costs.set_index("case")["wall_time_s"]
    rows = []
    for (backend, shape), group in data.groupby(["backend", "shape"], sort=True):
        cases = group.groupby("case").agg(
            n_dof=("n_dof", "first"), worst=("rel_error", lambda e: e.abs().max()), found=("mode", "nunique")
        )
        cases = cases.sort_values("n_dof")
        worst = np.where(cases["found"] >= modes, cases["worst"], np.inf)
        # the worst error of this case and every larger one: "stays within" from here on
        tail = np.maximum.accumulate(worst[::-1])[::-1]
        column = BACKENDS[backend].size_column
        for target in TARGETS:
            row = {"backend": backend, "shape": shape, "target": target}
            within = np.flatnonzero(tail <= target)
            if within.size:
                case = int(cases.index[within[0]])
                row.update(
                    n_dof=int(cases["n_dof"].iloc[within[0]]),
                    size=int(group.loc[group["case"] == case, column].iloc[0]),
                    wall_time_s=float(seconds.get(case, np.nan)),
                )
            else:
                row.update(n_dof=None, size=None, wall_time_s=None)
            rows.append(row)
    table = pd.DataFrame(rows)
    for column in ("n_dof", "size"):
        table[column] = table[column].astype("Int64")
    return table


def worst_errors(results: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Per case: backend, shape, n_dof, wall_time_s and the worst |rel_error| of its compared
    frequencies (the reference case itself, error 0 by definition, left out)."""
    cases = results.groupby("case").agg(
        backend=("backend", "first"),
        shape=("shape", "first"),
        n_dof=("n_dof", "first"),
        worst=("rel_error", lambda e: e.abs().max()),
    )
    cases = cases.join(costs.set_index("case")["wall_time_s"])
    return cases[cases["worst"] > 0].reset_index()


def cheapest(table: pd.DataFrame, modes: int) -> list[str]:
    """One sentence per target: the basis that reaches it with the fewest coordinates and the
    one that reaches it in the least wall time."""
    text = []
    for target, group in table.groupby("target", sort=False):
        reached = group.dropna(subset=["n_dof"])
        if reached.empty:
            text.append(f"|error| ≤ {target:g} on the first {modes} frequencies: no basis gets there.")
            continue

        def name(row) -> str:
            return f"{BACKENDS[row['backend']].label} {row['shape']} ×{row['size']}"

        fewest = reached.loc[reached["n_dof"].astype(float).idxmin()]
        fastest = reached.loc[reached["wall_time_s"].astype(float).idxmin()]
        text.append(
            f"|error| ≤ {target:g} on the first {modes} frequencies: fewest coordinates {name(fewest)} "
            f"({fewest['n_dof']}), least time {name(fastest)} ({fastest['wall_time_s']:.3g} s)."
        )
    return text


class Convergence(Frequencies):
    """Frequencies of every case against the reference, tabulated as errors with fitted rates."""

    analysis_schema = ConvergenceAnalysis

    def run_case(self, arm, case, analysis):
        return frequency_rows(arm, case, analysis, warn_short=False)

    def finalize(self, results, arm, analysis):
        """Errors against the reference (no mode pairing); warns when even the finest case of
        a backend and shape has fewer frequencies than ``analysis.n_frequencies`` (the small
        cases of a sweep are expected to)."""
        for (backend, shape), group in results.groupby(["backend", "shape"], sort=True):
            largest = group[group["n_dof"] == group["n_dof"].max()]
            available = largest["mode"].nunique()
            if available < analysis.n_frequencies:
                caution(
                    f"analysis.n_frequencies: the finest {backend} {shape} case has {available} "
                    f"frequencies ({analysis.joints} joints), fewer than the {analysis.n_frequencies} asked for"
                )
        results = add_references(results, arm, analysis)
        stalled = fitted_rates(results)
        stalled = stalled[~stalled["falling"]]
        if not stalled.empty:
            names = ", ".join(
                f"{BACKENDS[b].label} {s} ω{m}"
                for b, s, m in stalled[["backend", "shape", "mode"]].itertuples(False)
            )
            caution(
                f"the errors against the finest case stop falling ({names}): the finest case is not "
                "converged (or loses digits), so no rate is fitted against it; refine further or compare "
                "with an exact reference"
            )
        return results

    def tables(self, results, arm, analysis):
        return {
            "relative errors": per_case(results, "mode", "rel_error", "rel_error_"),
            "fitted convergence rates": fitted_rates(results),
        }

    def cost_report(self, results, costs, analysis, folder=None, plots=False):
        table = tradeoff_table(results, costs)
        modes = int(results["mode"].max())
        text = [
            "Cost to accuracy: per basis and target, the smallest case from which on every larger "
            f"case has all of the first {modes} frequencies within the target (|rel_error|), its "
            "coordinates and the wall time of that case in this run (model build and eigen-solve; each "
            "worker first loads the imports, and the compiled kernels where its cases use them, which no case is "
            "charged for). " + " ".join(cheapest(table, modes))
        ]
        if plots and folder is not None:
            from studies.kinds.convergence_figures import tradeoff_plot

            names = tradeoff_plot(worst_errors(results, costs), folder)
            text.append(
                f"Worst |rel_error| of the first {modes} frequencies against coordinates (one line per "
                "basis) and against wall time (one point per case, not joined: each time is a single "
                "measurement of this machine under its load, whose noise a line would draw as a trend): "
                f"![cost to accuracy]({names[0]}) ([PDF]({names[1]}))"
            )
        return text, {"cost to accuracy": table}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        rates = fitted_rates(results)
        text = [
            f"Reference: {results['reference_source'].iloc[0]}. Joints {analysis.joints}. "
            "rel_error = (ω − reference)/reference; rates are fitted slopes of log|rel_error| "
            f"against log({' or '.join(size_columns())}), points below {FIT_FLOOR:g} excluded, given to "
            f"{RATE_DECIMALS} decimals (the next digits move with round-off from one CPU to another)."
        ]
        if plots:  # matplotlib only when drawing
            from studies.kinds.convergence_figures import convergence_plot

            names = convergence_plot(results, rates, folder)
            text.append(f"![convergence]({names[0]}) ([PDF]({names[1]}))")
        return text
