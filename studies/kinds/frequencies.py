"""``frequencies``: natural frequencies at a configuration for every case."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from core.arm import Arm
from core.modes import FIELD_POINTS, ModeFields, mac, mode_fields, pair_modes
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
    configuration: list[float] | None = Field(
        None,
        description="Joint variables of the configuration, one per joint; unset: Arm.home() (zero, "
        "translating links fully extended) [rad or m].",
    )
    joints: Literal["locked", "free"] = Field(
        "locked",
        description="locked: the motors hold the joints; free: no joint constraint (without gravity "
        "the rigid-body modes are reported as 0).",
    )
    n_frequencies: PositiveInt = Field(5, description="Frequencies reported per case, lowest first.")


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
#: Modes drawn in the mode-shape figure (mode_shapes.csv has every mode of the study).
PLOTTED_MODES = 4


@dataclass(frozen=True)
class CaseModes:
    """One case's lowest modes as fields on the common grid (:mod:`core.modes`).

    Attributes
    ----------
    fields : ModeFields
        Displacement fields in base axes, unit mass-weighted norm, largest component positive.
    w, v : ndarray, shape (P, k)
        Their components along each link's in-plane and out-of-plane bending axes (local y
        and z of the undeformed link at the configuration), same scaling.
    s_arm : ndarray, shape (P,)
        Arc length [m] of each grid point from the first link's root, the links laid end
        to end (a translating link by its free length).
    """

    fields: ModeFields
    w: np.ndarray
    v: np.ndarray
    s_arm: np.ndarray


def bending_components(model, q: np.ndarray, fields: ModeFields) -> tuple[np.ndarray, np.ndarray]:
    """(w, v), each (P, k): ``fields`` resolved along the in-plane and out-of-plane bending
    axes of each link's undeformed body frame at ``q``."""
    frames = model.kinematics.frames(np.asarray(q, dtype=float)[None], jacobians=False)
    local = np.empty_like(fields.fields)
    for number in np.unique(fields.links):
        at = fields.links == number
        rotation = frames[int(number) - 1].R_body[0]
        local[at] = np.einsum("ij,pik->pjk", rotation, fields.fields[at])
    return local[:, 1], local[:, 2]


def arc_length_along_arm(arm: Arm, joints: np.ndarray, links: np.ndarray, s: np.ndarray) -> np.ndarray:
    """s [m] of points (link number, s along the link) from the first link's root, with the
    links laid end to end: rigid and flexible links by their length, a translating link by
    its free length."""
    lengths = [
        float(joints[number - 1]) if number in arm.translating_links else link.length
        for number, link in enumerate(arm.links, start=1)
    ]
    roots = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    return roots[np.asarray(links, dtype=int) - 1] + s


def case_modes(results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> dict[int, CaseModes]:
    """Each case's modes (as many as its rows have) as :class:`CaseModes`, by case number.

    The fields are computed again here from each case's discretization (one eigen-solve
    per case, the same as the run's).
    """
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    count = int(results["mode"].max())
    modes = {}
    for _, row in case_keys(results).iterrows():
        model = Discretization.from_columns(row).build(arm, reference=joints)
        q = model.home()
        q[: arm.n_joints] = joints
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run has reported them already
            fields = mode_fields(model, q, analysis.joints, count)
        w, v = bending_components(model, q, fields)
        modes[int(row["case"])] = CaseModes(
            fields, w, v, arc_length_along_arm(arm, joints, fields.links, fields.s)
        )
    return modes


def agreement(
    results: pd.DataFrame,
    arm: Arm,
    analysis: FrequencyAnalysis,
    fields: dict[int, ModeFields] | None = None,
) -> pd.DataFrame:
    """Each case's modes paired with the finest case's by MAC of their displacement fields.

    One row per case × reference mode: the paired mode (maximum total MAC,
    :func:`core.modes.pair_modes`), its MAC, both frequencies, and ``flag``
    where MAC < :data:`MAC_FLAG` or the pairing differs from the frequency
    order. ``fields`` (by case number) default to :func:`case_modes`'.
    """
    if fields is None:
        fields = {case: modes.fields for case, modes in case_modes(results, arm, analysis).items()}
    reference = fields[finest_case(results)]
    rows = []
    for _, row in case_keys(results).iterrows():
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


def mode_shape_table(results: pd.DataFrame, modes: dict[int, CaseModes]) -> pd.DataFrame:
    """Tidy mode shapes: one row per case × mode × grid point with the sweep columns,
    ``mode``, ``omega`` [rad/s], ``hz``, ``link``, ``s`` [m] along the link, ``s_arm`` [m]
    along the arm and the deflections ``w`` (in-plane) and ``v`` (out-of-plane)."""
    pieces = []
    for _, row in case_keys(results).iterrows():
        mine = modes[int(row["case"])]
        points, count = mine.w.shape
        frame = pd.DataFrame(
            {
                "mode": np.repeat(np.arange(1, count + 1), points),
                "omega": np.repeat(mine.fields.omega, points),
                "link": np.tile(mine.fields.links, count),
                "s": np.tile(mine.fields.s, count),
                "s_arm": np.tile(mine.s_arm, count),
                "w": mine.w.T.ravel(),
                "v": mine.v.T.ravel(),
            }
        )
        frame.insert(2, "hz", frame["omega"] / (2 * np.pi))
        for position, column in enumerate(("case", *SWEEP_COLUMNS)):
            frame.insert(position, column, row[column])
        pieces.append(frame)
    return normalize_columns(pd.concat(pieces, ignore_index=True))


def paired_shapes(
    shapes: pd.DataFrame, modes: dict[int, CaseModes], reference: int, count: int
) -> pd.DataFrame:
    """The rows of :func:`mode_shape_table` that the figure draws: for each of the ``count``
    lowest modes of the ``reference`` case, every case's mode paired with it by MAC (as in
    :func:`agreement`), its sign turned to agree with the reference's (positive
    mass-weighted inner product); columns ``panel_mode`` and ``panel_omega`` [rad/s] added."""
    target = modes[reference].fields
    pieces = []
    for case, mine in modes.items():
        paired, _ = pair_modes(mac(target.fields, mine.fields.fields, target.weights))
        for k, j in enumerate(paired[:count], start=1):
            if j < 0:
                continue
            inner = np.einsum(
                "p,pi,pi->", target.weights, target.fields[..., k - 1], mine.fields.fields[..., j]
            )
            rows = shapes[(shapes["case"] == case) & (shapes["mode"] == j + 1)].copy()
            rows[["w", "v"]] *= -1.0 if inner < 0 else 1.0
            rows["panel_mode"] = k
            rows["panel_omega"] = target.omega[k - 1]
            pieces.append(rows)
    return pd.concat(pieces, ignore_index=True)


class Frequencies(StudyKind):
    name = "frequencies"
    analysis_schema = FrequencyAnalysis

    def validate(self, arm, analysis):
        joint_configuration(arm, analysis.configuration, "analysis.configuration")

    def run_case(self, arm, case, analysis):
        return frequency_rows(arm, case, analysis)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        return add_references(results, arm, analysis)

    def _modes(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> dict[int, CaseModes]:
        """:func:`case_modes`, computed once per study (one eigen-solve per case) and shared
        by :meth:`report` and :meth:`tables`."""
        key = (arm, analysis, tuple(results["case"]), tuple(results["omega"]))
        if getattr(self, "_last_modes", (None,))[0] != key:
            self._last_modes = (key, case_modes(results, arm, analysis))
        return self._last_modes[1]

    def _agreement(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame | None:
        """The agreement table (None for a single case)."""
        if results["case"].nunique() < 2:
            return None
        fields = {case: modes.fields for case, modes in self._modes(results, arm, analysis).items()}
        return agreement(results, arm, analysis, fields)

    def tables(self, results, arm, analysis):
        tables = {
            "frequencies [rad/s]": per_case(results, "mode", "omega", "omega_"),
            "frequencies in hertz [Hz]": per_case(results, "mode", "hz", "hz_"),
        }
        table = self._agreement(results, arm, analysis)
        if table is not None:
            tables["agreement"] = table
        return tables

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.plots import (
            frequency_error_plot,
            mode_shape_plot,
        )

        source = results["reference_source"].iloc[0]
        text = [f"Natural frequencies [rad/s, and Hz], joints {analysis.joints}; reference: {source}."]
        table = self._agreement(results, arm, analysis)
        reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
        if table is not None:
            flagged = table[table["flag"] != ""]
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
        modes = self._modes(results, arm, analysis)
        shapes = mode_shape_table(results, modes)
        shapes.to_csv(folder / "mode_shapes.csv", index=False)
        text.append(
            "Mode shapes in `mode_shapes.csv`: per case, mode and point (s [m] along the link, "
            f"{FIELD_POINTS} points per flexible link; s_arm [m] along the arm, links end to end) the "
            "deflection w (in-plane) and v (out-of-plane) across the undeformed link at the "
            "configuration, from the displacement fields of `core.modes` (so they include the motion of "
            "the link's root and jump where links meet at an angle). Normalization: each mode's "
            "field has unit mass-weighted norm Σ ρA Δs |u|² = 1 over the flexible links (so w, v are "
            "in 1/√kg) and its largest component positive."
        )
        if plots:
            count = min(PLOTTED_MODES, int(results["mode"].max()))
            names = mode_shape_plot(paired_shapes(shapes, modes, finest_case(results), count), folder)
            text.append(
                f"The {count} lowest modes of {reference}, with each case's mode paired to it by MAC "
                f"and its sign aligned: ![mode shapes]({names[0]}) ([PDF]({names[1]}))"
            )
            if (results["rel_error"].abs() > 0).any():
                names = frequency_error_plot(results, folder)
                text.append(
                    f"Frequency errors against the reference: ![frequency errors]({names[0]}) ([PDF]({names[1]}))"
                )
        return text
