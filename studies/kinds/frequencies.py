"""``frequencies``: natural frequencies at a configuration for every case."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PositiveInt

from core.arm import Arm
from core.modes import mac, mode_fields, pair_modes
from studies.discretizations import (
    SWEEP_COLUMNS,
    Case,
    Discretization,
    case_keys,
    finest_case,
    joint_configuration,
    label_of,
    normalize_columns,
    per_case,
)
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


#: A pairing below this MAC is flagged in the agreement table.
MAC_FLAG = 0.9


def agreement(results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
    """Each case's modes paired with the finest case's by MAC of their displacement fields.

    One row per case × reference mode: the paired mode (maximum total MAC,
    :func:`core.modes.pair_modes`), its MAC, both frequencies, and ``flag``
    where MAC < :data:`MAC_FLAG` or the pairing differs from the frequency
    order. Fields are computed again here from each case's discretization (one
    eigen-solve per case, the same as the run's).
    """
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    keys = case_keys(results)
    count = int(results["mode"].max())
    fields = {}
    for _, row in keys.iterrows():
        model = Discretization.from_columns(row).build(arm, reference=joints)
        q = model.home()
        q[: arm.n_joints] = joints
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run has reported them already
            fields[int(row["case"])] = mode_fields(model, q, analysis.joints, count)
    reference = fields[finest_case(results)]
    rows = []
    for _, row in keys.iterrows():
        mine = fields[int(row["case"])]
        paired, values = pair_modes(mac(reference.fields, mine.fields, reference.weights))
        for k, (j, value) in enumerate(zip(paired, values, strict=True), start=1):
            flags = []
            if j >= 0 and value < MAC_FLAG:
                flags.append(f"MAC < {MAC_FLAG}")
            if j >= 0 and j != k - 1:
                flags.append("order differs")
            rows.append(
                {
                    **{c: row[c] for c in ("case", *SWEEP_COLUMNS)},
                    "mode": k,
                    "paired_mode": j + 1 if j >= 0 else pd.NA,
                    "mac": value if j >= 0 else np.nan,
                    "omega": mine.omega[j] if j >= 0 else np.nan,
                    "reference_omega": reference.omega[k - 1],
                    "flag": "; ".join(flags),
                }
            )
    return normalize_columns(pd.DataFrame(rows))


class Frequencies(StudyKind):
    name = "frequencies"
    analysis_schema = FrequencyAnalysis

    def validate(self, arm, analysis):
        joint_configuration(arm, analysis.configuration, "analysis.configuration")

    def run_case(self, arm, case, analysis):
        return frequency_rows(arm, case, analysis)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        return add_references(results, arm, analysis)

    def _agreement(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame | None:
        """The agreement table, computed once per study (one eigen-solve per case) and
        shared by :meth:`report` and :meth:`tables`; None for a single case."""
        if results["case"].nunique() < 2:
            return None
        key = (arm, analysis, tuple(results["case"]), tuple(results["omega"]))
        if getattr(self, "_last_agreement", (None,))[0] != key:
            self._last_agreement = (key, agreement(results, arm, analysis))
        return self._last_agreement[1]

    def tables(self, results, arm, analysis):
        tables = {"frequencies [rad/s]": per_case(results, "mode", "omega", "omega_")}
        table = self._agreement(results, arm, analysis)
        if table is not None:
            tables["agreement"] = table
        return tables

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        source = results["reference_source"].iloc[0]
        text = [f"Natural frequencies, joints {analysis.joints}; reference: {source}."]
        table = self._agreement(results, arm, analysis)
        if table is not None:
            flagged = table[table["flag"] != ""]
            reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
            text.append(
                f"Mode shapes against {reference} (MAC of the displacement fields, mass-weighted; "
                f"table `agreement`): lowest MAC {table['mac'].min():.6f}; "
                + (
                    f"every mode pairs with the same-numbered reference mode at MAC ≥ {MAC_FLAG}."
                    if flagged.empty
                    else f"{len(flagged)} pairing(s) flagged: "
                    + ", ".join(
                        f"{label_of(r)} mode {r['mode']} ({r['flag']})" for _, r in flagged.head(5).iterrows()
                    )
                    + ("…" if len(flagged) > 5 else "")
                    + "."
                )
            )
        return text
