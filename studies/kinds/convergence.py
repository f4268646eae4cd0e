"""``convergence``: frequencies swept over modes / elements, errors and fitted rates."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ConfigDict, Field, PositiveInt

from studies.discretizations import BACKENDS, per_case
from studies.kinds.frequencies import Frequencies, ModalAnalysis, add_references, frequency_rows

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Errors below this are round-off, not discretization error, and are left out of fits.
FIT_FLOOR = 1e-12


class ConvergenceAnalysis(ModalAnalysis):
    model_config = ConfigDict(extra="forbid", frozen=True)
    n_frequencies: PositiveInt = Field(3, description="Frequencies compared per case, lowest first.")


def fitted_rates(results: pd.DataFrame) -> pd.DataFrame:
    """Slope p of log|error| = c − p log(size) per (backend, shape, mode).

    Points at the round-off floor (|error| < 1e-12) and the reference case
    itself (error exactly 0) are left out; fewer than 3 points give NaN.
    """
    import pandas as pd

    rows = []
    for (backend, shape, mode), group in results.groupby(["backend", "shape", "mode"], sort=True):
        size = group[BACKENDS[backend].size_column]
        error = group["rel_error"].abs()
        keep = error > FIT_FLOOR
        rate = np.nan
        if keep.sum() >= 3:
            rate = -np.polyfit(np.log(size[keep].to_numpy(float)), np.log(error[keep].to_numpy()), 1)[0]
        rows.append(
            {"backend": backend, "shape": shape, "mode": mode, "points": int(keep.sum()), "rate": rate}
        )
    return pd.DataFrame(rows)


class Convergence(Frequencies):
    """Frequencies of every case against the reference, tabulated as errors with fitted rates."""

    name = "convergence"
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
                warnings.warn(
                    f"analysis.n_frequencies: the finest {backend} {shape} case has {available} "
                    f"frequencies ({analysis.joints} joints), fewer than the {analysis.n_frequencies} asked for",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return add_references(results, arm, analysis)

    def tables(self, results, arm, analysis):
        return {
            "relative errors": per_case(results, "mode", "rel_error", "rel_error_"),
            "fitted convergence rates": fitted_rates(results),
        }

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.plots import convergence_plot

        rates = fitted_rates(results)
        text = [
            f"Reference: {results['reference_source'].iloc[0]}. Joints {analysis.joints}. "
            "rel_error = (ω − reference)/reference; rates are fitted slopes of log|rel_error| "
            f"against log(modes or elements), points below {FIT_FLOOR:g} excluded."
        ]
        if plots:
            names = convergence_plot(results, rates, folder)
            text.append(f"![convergence]({names[0]}) ([PDF]({names[1]}))")
        return text
