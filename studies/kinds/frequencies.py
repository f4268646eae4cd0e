"""``frequencies``: natural frequencies at a configuration for every case."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PositiveInt

from core.arm import Arm
from studies.discretizations import Case, finest_case, joint_configuration, label_of, per_case
from studies.kinds.base import StudyKind
from studies.references import exact_locked_frequencies


class FrequencyAnalysis(BaseModel):
    """``[analysis]`` of the frequencies and convergence kinds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    configuration: list[float] | None = (
        None  # joint variables [rad, m]; default Arm.home() (zero, translating links extended)
    )
    joints: Literal["locked", "free"] = "locked"
    n_frequencies: PositiveInt = 5


def frequency_rows(
    arm: Arm, case: Case, analysis: FrequencyAnalysis, warn_short: bool = True
) -> list[dict[str, Any]]:
    """Rows (one per mode) of one case; ``warn_short``: warn when the model has fewer
    frequencies than asked for (a convergence sweep expects that of its small cases)."""
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    model = case.discretization.build(arm, reference=joints)
    q = model.home()
    q[: arm.n_joints] = joints
    omega = model.natural_frequencies(q, analysis.joints)
    if warn_short and omega.size < analysis.n_frequencies:
        warnings.warn(
            f"analysis.n_frequencies: {case.discretization.label} has {omega.size} frequencies "
            f"({analysis.joints} joints), fewer than the {analysis.n_frequencies} asked for",
            RuntimeWarning,
            stacklevel=2,
        )
    return [
        {
            **case.columns(),
            "n_dof": model.n_dof,
            "mode": k,
            "omega": float(w),
            "hz": float(w / (2 * np.pi)),
        }
        for k, w in enumerate(omega[: analysis.n_frequencies], start=1)
    ]


def add_references(results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
    """Columns ``reference``, ``reference_source`` and ``rel_error`` = (ω − ref)/ref.

    The exact reference where one exists (:mod:`studies.references`, locked
    joints only); otherwise the case with the most coordinates (ties: FEM over
    AMM, then the later case), labelled as such.
    """
    results = results.copy()
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    exact = (
        exact_locked_frequencies(arm, int(results["mode"].max()), joints)
        if analysis.joints == "locked"
        else None
    )
    if exact is not None:
        values, source = exact
        results["reference"] = values[results["mode"].to_numpy() - 1]
        results["reference_source"] = source
    else:
        finest = finest_case(results)
        reference = results[results["case"] == finest].set_index("mode")["omega"]
        label = label_of(results[results["case"] == finest].iloc[0])
        results["reference"] = results["mode"].map(reference)
        results["reference_source"] = f"finest: {label}"
    results["rel_error"] = (results["omega"] - results["reference"]) / results["reference"]
    return results


class Frequencies(StudyKind):
    name = "frequencies"
    analysis_schema = FrequencyAnalysis

    def validate(self, arm, analysis):
        joint_configuration(arm, analysis.configuration, "analysis.configuration")

    def run_case(self, arm, case, analysis):
        return frequency_rows(arm, case, analysis)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        return add_references(results, arm, analysis)

    def tables(self, results, arm, analysis):
        return {"frequencies [rad/s]": per_case(results, "mode", "omega", "omega_")}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        source = results["reference_source"].iloc[0]
        return [f"Natural frequencies, joints {analysis.joints}; reference: {source}."]
