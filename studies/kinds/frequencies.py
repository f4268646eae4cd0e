"""``frequencies``: natural frequencies at a configuration for every case."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PositiveInt

from core.arm import Arm
from studies.kinds.base import StudyKind, full_coordinates, joint_values
from studies.models import SWEEP_COLUMNS, Case, discretization_label, finest_case
from studies.references import exact_locked_frequencies


class FrequencyAnalysis(BaseModel):
    """``[analysis]`` of the frequencies and convergence kinds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    configuration: list[float] | None = (
        None  # joint variables [rad, m]; default Arm.home() (zero, translating links extended)
    )
    joints: Literal["locked", "free"] = "locked"
    n_frequencies: PositiveInt = 5


def frequency_rows(arm: Arm, case: Case, analysis: FrequencyAnalysis) -> list[dict[str, Any]]:
    joints = joint_values(arm, analysis.configuration, "configuration")
    model = case.discretization.build(arm, reference=joints)
    q = full_coordinates(model, joints)
    omega = model.natural_frequencies(q, analysis.joints)
    rows = []
    for k, w in enumerate(omega[: analysis.n_frequencies], start=1):
        rows.append(
            {
                **case.columns(),
                "n_dof": model.n_dof,
                "mode": k,
                "omega": float(w),
                "hz": float(w / (2 * np.pi)),
            }
        )
    return rows


def add_references(results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
    """Columns ``reference``, ``reference_source`` and ``rel_error`` = (ω − ref)/ref.

    The exact reference where one exists (:mod:`studies.references`, locked
    joints only); otherwise the case with the most coordinates (ties: FEM over
    AMM, then the later case), labelled as such.
    """
    results = results.copy()
    exact = exact_locked_frequencies(arm, int(results["mode"].max())) if analysis.joints == "locked" else None
    if exact is not None:
        values, source = exact
        results["reference"] = values[results["mode"].to_numpy() - 1]
        results["reference_source"] = source
    else:
        finest = finest_case(results)
        reference = results[results["case"] == finest].set_index("mode")["omega"]
        label = discretization_label(results[results["case"] == finest].iloc[0].to_dict())
        results["reference"] = results["mode"].map(reference)
        results["reference_source"] = f"finest: {label}"
    results["rel_error"] = (results["omega"] - results["reference"]) / results["reference"]
    return results


class Frequencies(StudyKind):
    name = "frequencies"
    analysis_schema = FrequencyAnalysis

    def run_case(self, arm, case, analysis):
        return frequency_rows(arm, case, analysis)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        return add_references(results, arm, analysis)

    def tables(self, results, analysis, arm):
        wide = results.pivot_table(index=list(SWEEP_COLUMNS), columns="mode", values="omega")
        wide.columns = [f"omega_{k}" for k in wide.columns]
        return {"frequencies [rad/s]": wide.reset_index()}

    def report(self, results, analysis, folder: Path, plots: bool, arm) -> list[str]:
        source = results["reference_source"].iloc[0]
        return [f"Natural frequencies, joints {analysis.joints}; reference: {source}."]
