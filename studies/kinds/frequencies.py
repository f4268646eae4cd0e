"""``frequencies``: natural frequencies at a configuration for every case, or along a sweep of
a physical parameter (a joint variable or the payload mass) with the modes tracked by MAC."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PositiveInt, StrictInt

from core.analysis.modes import (
    FIELD_POINTS,
    ModeFields,
    mac,
    mode_fields,
    pair_modes,
    track_modes,
    tracking_mac,
)
from core.arm import Arm, Payload
from core.arm.bounds import MASS_RANGE
from core.dynamics.kinematics import check_free_length
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
from studies.limits import MAX_JOINT_VALUE, MAX_VALUES, AtMost, JointValue
from studies.references import exact_locked_frequencies
from studies.text import shown

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


#: More frequencies than any model a study runs has (a model has one per coordinate).
MAX_FREQUENCIES = 100_000
#: A count of frequencies: > 0 and at most :data:`MAX_FREQUENCIES`.
FrequencyCount = Annotated[
    PositiveInt, AtMost(MAX_FREQUENCIES, "more than the coordinates of any model a study runs")
]
#: Points of a parameter sweep above this are refused without --force.
SOFT_SWEEP_POINTS = 1000


class ModalAnalysis(BaseModel):
    """``[analysis]`` keys that the frequencies and convergence kinds share."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    configuration: list[JointValue] | None = Field(
        None,
        description="Joint variables of the configuration, one per joint; unset: Arm.home() (zero, "
        "translating links fully extended) [rad or m].",
    )
    joints: Literal["locked", "free"] = Field(
        "locked",
        description="locked: the motors hold the joints; free: no joint constraint (without gravity "
        "the rigid-body modes are reported as 0).",
    )
    n_frequencies: FrequencyCount = Field(5, description="Frequencies reported per case, lowest first.")


#: The payload-mass sweep parameter (every other parameter is a joint variable name).
PAYLOAD_MASS = "payload_mass"
#: Points of a ``sweep_range`` unless ``sweep_points`` says otherwise.
SWEEP_POINTS = 13


def _start_stop(value: list[float]) -> list[float]:
    if len(value) != 2:
        raise ValueError("must hold exactly 2 values, [start, stop]")
    return value


class FrequencyAnalysis(ModalAnalysis):
    """``[analysis]`` of the frequencies kind: :class:`ModalAnalysis` and an optional sweep of
    one physical parameter."""

    sweep_parameter: str | None = Field(
        None,
        description="Sweep one parameter, every case over every value: a joint variable of the arm "
        "(theta<i> [rad] or d<i> [m], i from 1; the other joints stay at analysis.configuration; d<i> of "
        "a translating link is its free length) or payload_mass [kg] (the arm's payload, a point mass if "
        "it has none). Modes are tracked along the sweep by MAC; unset: one configuration.",
    )
    sweep_values: list[float] | None = Field(
        None,
        min_length=2,
        description="The swept values in sweep order, strictly increasing or decreasing; give this or "
        "sweep_range [rad, m or kg].",
    )
    sweep_range: Annotated[list[float], AfterValidator(_start_stop)] | None = Field(
        None,
        description="[start, stop] of an evenly spaced sweep, both ends included; give this or "
        "sweep_values [rad, m or kg].",
    )
    sweep_points: (
        Annotated[
            StrictInt,
            Field(ge=2),
            AtMost(
                MAX_VALUES,
                "as many as sweep_values may hold",
                soft=SOFT_SWEEP_POINTS,
                soft_why="each point is an eigen-solve of every case",
            ),
        ]
        | None
    ) = Field(None, description=f"Points of sweep_range, both ends included; unset: {SWEEP_POINTS}.")


@dataclass(frozen=True)
class ParameterSweep:
    """A validated ``sweep_parameter`` with its values.

    Attributes
    ----------
    parameter : str
        ``theta<i>``, ``d<i>`` or ``payload_mass``; the results column of its value.
    values : ndarray
        The swept values in sweep order [rad, m or kg].
    joint : int or None
        The swept joint's index (from 0), None for the payload mass.
    unit : str
        ``rad``, ``m`` or ``kg``.
    """

    parameter: str
    values: np.ndarray
    joint: int | None
    unit: str

    def point(self, arm: Arm, joints: np.ndarray, value: float) -> tuple[Arm, np.ndarray]:
        """(arm, joint variables) at one value of the sweep, from the study's ``arm`` and
        configuration ``joints``."""
        joints = np.array(joints, dtype=float)
        if self.joint is not None:
            joints[self.joint] = value
            return arm, joints
        inertia = 0.0 if arm.payload is None else arm.payload.inertia
        return dataclasses.replace(arm, payload=Payload(float(value), inertia)), joints


def parameter_sweep(arm: Arm, analysis: FrequencyAnalysis) -> ParameterSweep | None:
    """The sweep of ``analysis`` (None without ``sweep_parameter``); raises ValueError naming
    the ``analysis.sweep_…`` key and its value where the sweep does not fit the arm."""
    given = [k for k in ("sweep_values", "sweep_range", "sweep_points") if getattr(analysis, k) is not None]
    name = analysis.sweep_parameter
    if name is None:
        if given:
            raise ValueError(f"analysis.{given[0]}: needs analysis.sweep_parameter (what to sweep)")
        return None
    names = [*arm.joint_names, PAYLOAD_MASS]
    if name not in names:
        raise ValueError(f"analysis.sweep_parameter: must be one of {names}, got {name!r}")
    if (analysis.sweep_values is None) == (analysis.sweep_range is None):
        raise ValueError(
            "analysis.sweep_parameter: give either sweep_values or sweep_range (with sweep_points), "
            + ("not both" if analysis.sweep_values is not None else "got neither")
        )
    if analysis.sweep_values is not None:
        key, values = "sweep_values", np.asarray(analysis.sweep_values, dtype=float)
        if analysis.sweep_points is not None:
            raise ValueError("analysis.sweep_points: applies to sweep_range only, not to sweep_values")
    else:
        key = "sweep_range"
        points = SWEEP_POINTS if analysis.sweep_points is None else analysis.sweep_points
        values = np.linspace(*analysis.sweep_range, points)
    given_values = shown(analysis.sweep_values if analysis.sweep_values is not None else analysis.sweep_range)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"analysis.{key}: must be finite numbers, got {given_values}")
    steps = np.diff(values)
    if not (np.all(steps > 0) or np.all(steps < 0)):
        raise ValueError(
            f"analysis.{key}: must be strictly increasing or decreasing (the order modes are tracked "
            f"in), got {given_values}"
        )
    if name == PAYLOAD_MASS:
        if values.min() < 0:
            raise ValueError(f"analysis.{key}: a payload mass must be >= 0 kg, got {given_values}")
        if values.max() > MASS_RANGE[1]:
            raise ValueError(
                f"analysis.{key}: a payload mass must be <= {MASS_RANGE[1]:g} kg (as core.arm.Payload's), "
                f"got {given_values}"
            )
        return ParameterSweep(name, values, None, "kg")
    if np.abs(values).max() > MAX_JOINT_VALUE:
        raise ValueError(
            f"analysis.{key}: joint values must be in [{-MAX_JOINT_VALUE:g}, {MAX_JOINT_VALUE:g}] rad or m "
            f"(as the arm's angles and offsets), got {given_values}"
        )
    joint = arm.joint_names.index(name)
    if joint + 1 in arm.translating_links:
        for value in values:  # the message names the first value outside the beam
            check_free_length(arm, joint + 1, float(value), where=f"analysis.{key}: ")
    return ParameterSweep(name, values, joint, "rad" if name.startswith("theta") else "m")


def frequency_rows(
    arm: Arm, case: Case, analysis: ModalAnalysis, warn_short: bool = True
) -> list[dict[str, Any]]:
    """Rows (one per mode) of one case; ``warn_short``: warn when the model has fewer
    frequencies than asked for (a convergence sweep expects that of its small cases)."""
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    model = case.discretization.build(arm, reference=joints)
    q = model.home()
    q[: arm.n_joints] = joints
    omega = model.natural_frequencies(q, analysis.joints, count=analysis.n_frequencies)
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


def add_references(results: pd.DataFrame, arm: Arm, analysis: ModalAnalysis) -> pd.DataFrame:
    """Columns ``reference``, ``reference_source`` and ``rel_error`` = (ω − ref)/ref.

    The exact reference where one exists (:mod:`studies.references`, locked
    joints only); otherwise the case with the most coordinates (ties: FEM over
    AMM, then the later case), labelled as such. Along a sweep, at each point of
    it (the arm and configuration of that point).
    """
    import pandas as pd

    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
    if sweep is None:
        return _with_references(results, arm, joints, analysis.joints)
    pieces = [
        _with_references(group, *sweep.point(arm, joints, sweep.values[int(point) - 1]), analysis.joints)
        for point, group in results.groupby("point", sort=True)
    ]
    return pd.concat(pieces).loc[results.index]


def _with_references(results: pd.DataFrame, arm: Arm, joints: np.ndarray, held: str) -> pd.DataFrame:
    """:func:`add_references` at one configuration ``joints`` (``held``: locked or free joints)."""
    results = results.copy()
    exact = exact_locked_frequencies(arm, int(results["mode"].max()), joints) if held == "locked" else None
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
    with np.errstate(invalid="ignore", divide="ignore"):  # rigid-body modes: 0/0
        results["rel_error"] = (results["omega"] - results["reference"]) / results["reference"]
    return results


#: A pairing below this MAC is flagged in the agreement table.
MAC_FLAG = 0.9
#: Modes drawn in the mode-shape figure (mode_shapes.csv has every mode of the study).
PLOTTED_MODES = 4


@dataclass(frozen=True)
class CaseModes:
    """One case's lowest modes as fields on the common grid (:mod:`core.analysis.modes`).

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
    analysis: ModalAnalysis,
    fields: dict[int, ModeFields] | None = None,
) -> pd.DataFrame:
    """Each case's modes paired with the finest case's by MAC of their displacement fields.

    One row per case × reference mode: the paired mode (maximum total MAC,
    :func:`core.analysis.modes.pair_modes`), its MAC, both frequencies, and ``flag``
    where MAC < :data:`MAC_FLAG` or the pairing differs from the frequency
    order. Rigid-body modes (ω = 0: free joints without gravity) are left out:
    any basis of their common space is as good as another, so their MAC says
    nothing. ``fields`` (by case number) default to :func:`case_modes`'.
    """
    import pandas as pd

    if fields is None:
        fields = {case: modes.fields for case, modes in case_modes(results, arm, analysis).items()}
    return normalize_columns(pd.DataFrame(agreement_rows(case_keys(results), fields, finest_case(results))))


def agreement_rows(
    keys: pd.DataFrame, fields: dict[int, ModeFields], reference_case: int, count: int | None = None
) -> list[dict[str, Any]]:
    """The rows of :func:`agreement` at one configuration: ``keys`` (:func:`case_keys`), the
    fields of every case there, the reference case's number; ``count``: the reference modes
    paired (default: all of its modes), against every mode of each case."""
    import pandas as pd

    reference = fields[reference_case]
    count = reference.omega.size if count is None else min(count, reference.omega.size)
    mine_elastic = {case: np.flatnonzero(f.omega != 0.0) for case, f in fields.items()}
    wanted = mine_elastic[reference_case]
    wanted = wanted[wanted < count]
    rows = []
    for _, row in keys.iterrows():
        mine = fields[int(row["case"])]
        candidates = mine_elastic[int(row["case"])]
        values = mac(reference.fields[..., wanted], mine.fields[..., candidates], reference.weights)
        paired, best = pair_modes(values)
        for k, j, value in zip(wanted, paired, best, strict=True):
            j = candidates[j] if j >= 0 else -1
            flags = []
            if j >= 0 and value < MAC_FLAG:
                flags.append(f"MAC < {MAC_FLAG}")
            if j >= 0 and j != k:
                flags.append("order differs")
            rows.append(
                {
                    **{c: row[c] for c in ("case", *SWEEP_COLUMNS)},
                    "mode": int(k) + 1,
                    "paired_mode": int(j) + 1 if j >= 0 else pd.NA,
                    "mac": value if j >= 0 else np.nan,
                    "omega": mine.omega[j] if j >= 0 else np.nan,
                    "reference_omega": reference.omega[k],
                    "flag": "; ".join(flags),
                }
            )
    return rows


def mode_shape_table(results: pd.DataFrame, modes: dict[int, CaseModes]) -> pd.DataFrame:
    """Tidy mode shapes: one row per case × mode × grid point with the sweep columns,
    ``mode``, ``omega`` [rad/s], ``hz``, ``link``, ``s`` [m] along the link, ``s_arm`` [m]
    along the arm and the deflections ``w`` (in-plane) and ``v`` (out-of-plane)."""
    import pandas as pd

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
    import pandas as pd

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


# -- sweeps of a parameter ----------------------------------------------------------

#: Modes tracked beyond ``n_frequencies``, so that a mode entering the reported window
#: from above is paired with its own shape and keeps its identity.
TRACKING_GUARD = 2


def sweep_fields(
    arm: Arm, discretization: Discretization, analysis: FrequencyAnalysis, sweep: ParameterSweep
) -> tuple[list[ModeFields], int]:
    """(the modes at every point of ``sweep``, the model's n_dof) for one discretization.

    At each point the model is built for that point's arm and configuration (as a
    study at that one configuration would: clamped-mass shapes take the distal load
    there) and the lowest ``n_frequencies`` + :data:`TRACKING_GUARD` modes become fields
    in link axes (:func:`core.analysis.modes.mode_fields`), so that a joint turning along the sweep
    does not by itself lower the MAC between neighbouring points.
    """
    joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
    steps, n_dof = [], 0
    for value in sweep.values:
        arm_here, joints_here = sweep.point(arm, joints, float(value))
        model = discretization.build(arm_here, reference=joints_here)
        q = model.home()
        q[: arm.n_joints] = joints_here
        steps.append(
            mode_fields(model, q, analysis.joints, analysis.n_frequencies + TRACKING_GUARD, axes="link")
        )
        n_dof = model.n_dof
    return steps, n_dof


def tracked_identities(steps: list[ModeFields]) -> tuple[np.ndarray, np.ndarray]:
    """(identities, MACs), each (points, k): for the m-th mode (frequency order) at point j,
    its tracked identity — its mode number at the first point, from 1 — and its MAC with
    the same tracked mode at the previous point (NaN at the first point).

    Modes are tracked by :func:`core.analysis.modes.track_modes`. Rigid-body modes (ω = 0 exactly:
    free joints without gravity) are not tracked (identity 0, MAC NaN): their common space
    has no preferred basis.
    """
    k = min(step.omega.size for step in steps)
    elastic = [np.flatnonzero(step.omega[:k] != 0.0) for step in steps]
    n = min(e.size for e in elastic)
    ids, macs = np.zeros((len(steps), k), dtype=int), np.full((len(steps), k), np.nan)
    if n == 0:
        return ids, macs
    reduced = [
        ModeFields(step.omega[e[:n]], step.fields[..., e[:n]], step.weights, step.links, step.s)
        for step, e in zip(steps, elastic, strict=True)
    ]
    order = track_modes(reduced)
    values = tracking_mac(reduced, order)
    for j, e in enumerate(elastic):
        ids[j, e[order[j]]] = elastic[0][:n] + 1
        macs[j, e[order[j]]] = values[j]
    return ids, macs


def sweep_rows(
    arm: Arm, case: Case, analysis: FrequencyAnalysis, sweep: ParameterSweep
) -> list[dict[str, Any]]:
    """Rows of one case along a sweep: one per point × mode (the ``n_frequencies`` lowest,
    frequency order), with ``point`` (from 1), the parameter's value (column named after it),
    ``tracked_mode`` (:func:`tracked_identities`; blank for a rigid-body mode) and
    ``tracking_mac`` (MAC with the same tracked mode at the previous point)."""
    steps, n_dof = sweep_fields(arm, case.discretization, analysis, sweep)
    available = min(step.omega.size for step in steps)
    if available < analysis.n_frequencies:
        warnings.warn(
            f"analysis.n_frequencies: {case.discretization.label} has {available} frequencies "
            f"({analysis.joints} joints), fewer than the {analysis.n_frequencies} asked for",
            RuntimeWarning,
            stacklevel=2,
        )
    ids, macs = tracked_identities(steps)
    rows = []
    for j, (value, step) in enumerate(zip(sweep.values, steps, strict=True)):
        for m in range(min(analysis.n_frequencies, available)):
            rows.append(
                {
                    **case.columns(),
                    "point": j + 1,
                    sweep.parameter: float(value),
                    "n_dof": n_dof,
                    "mode": m + 1,
                    "omega": float(step.omega[m]),
                    "hz": float(step.omega[m] / (2 * np.pi)),
                    "tracked_mode": int(ids[j, m]) if ids[j, m] else None,
                    "tracking_mac": float(macs[j, m]),
                }
            )
    return rows


def tracked_table(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """The sweep's rows along each tracked mode: one row per case × tracked mode × point
    (rigid-body modes left out), sorted so; written as ``tracked_frequencies.csv``."""
    columns = [
        "case", *SWEEP_COLUMNS, "tracked_mode", "point", parameter, "mode", "omega", "hz", "tracking_mac"
    ]  # fmt: skip
    tracked = results[results["tracked_mode"].notna()][columns]
    return tracked.sort_values(["case", "tracked_mode", "point"], kind="stable").reset_index(drop=True)


def tracking_summary(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Per case × tracked mode: its frequency at the first and last point, its range, and
    its lowest MAC with itself at the previous point with the value where that occurs."""
    import pandas as pd

    rows = []
    tracked = tracked_table(results, parameter)
    for (_, mode), group in tracked.groupby(["case", "tracked_mode"], sort=True):
        steps = group.dropna(subset=["tracking_mac"])
        worst = steps.loc[steps["tracking_mac"].idxmin()] if not steps.empty else None
        rows.append(
            {
                **{c: group.iloc[0][c] for c in ("case", *SWEEP_COLUMNS)},
                "tracked_mode": int(mode),
                "points": len(group),
                "omega_first": group["omega"].iloc[0],
                "omega_last": group["omega"].iloc[-1],
                "omega_min": group["omega"].min(),
                "omega_max": group["omega"].max(),
                "lowest_mac": np.nan if worst is None else worst["tracking_mac"],
                f"lowest_mac_{parameter}": np.nan if worst is None else worst[parameter],
            }
        )
    return normalize_columns(pd.DataFrame(rows))


def mode_events(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Where tracked modes cross or veer, per case, between neighbouring points.

    ``crossing``: two tracked modes swap their frequency order (a crossing, or a veering
    passed within one step; ``<parameter>_at`` and ``omega_at`` interpolate where their
    frequencies meet, linearly; ``mac`` is the lower of their MACs over the step).
    ``shape change``: a tracked mode's MAC with itself at the previous point is below
    :data:`MAC_FLAG` without a swap (a veering nearby, or a sweep too coarse to follow it).
    """
    import pandas as pd

    rows = []
    tracked = tracked_table(results, parameter)
    for _, group in tracked.groupby("case", sort=True):
        keys = {c: group.iloc[0][c] for c in ("case", *SWEEP_COLUMNS)}
        omega = group.pivot(index="point", columns="tracked_mode", values="omega").sort_index()
        macs = group.pivot(index="point", columns="tracked_mode", values="tracking_mac").sort_index()
        values = group.drop_duplicates("point").set_index("point")[parameter].sort_index()
        points, modes = omega.index.to_numpy(), omega.columns.to_numpy()
        for j in range(1, len(points)):
            before, after = omega.iloc[j - 1].to_numpy(), omega.iloc[j].to_numpy()
            start, stop = values.iloc[j - 1], values.iloc[j]
            crossed = set()
            for a in range(len(modes)):
                for b in range(a + 1, len(modes)):
                    gap0, gap1 = before[a] - before[b], after[a] - after[b]
                    if not (np.isfinite(gap0) and np.isfinite(gap1) and gap0 * gap1 < 0):
                        continue
                    share = gap0 / (gap0 - gap1)
                    crossed.update((a, b))
                    rows.append(
                        {
                            **keys,
                            "event": "crossing",
                            "tracked_mode": int(modes[a]),
                            "other_mode": int(modes[b]),
                            f"{parameter}_from": start,
                            f"{parameter}_to": stop,
                            f"{parameter}_at": start + share * (stop - start),
                            "omega_at": before[a] + share * (after[a] - before[a]),
                            "mac": min(macs.iloc[j, a], macs.iloc[j, b]),
                        }
                    )
            for a in range(len(modes)):
                value = macs.iloc[j, a]
                if a not in crossed and np.isfinite(value) and value < MAC_FLAG:
                    rows.append(
                        {
                            **keys,
                            "event": "shape change",
                            "tracked_mode": int(modes[a]),
                            "other_mode": None,
                            f"{parameter}_from": start,
                            f"{parameter}_to": stop,
                            f"{parameter}_at": np.nan,
                            "omega_at": np.nan,
                            "mac": value,
                        }
                    )
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["other_mode"] = frame["other_mode"].astype("Int64")
    return normalize_columns(frame)


def sweep_agreement(
    results: pd.DataFrame, steps: dict[int, list[ModeFields]], sweep: ParameterSweep, count: int
) -> pd.DataFrame:
    """:func:`agreement` at every point of the sweep: the ``count`` lowest modes of the
    finest case paired with every case's modes there; columns ``point`` and the parameter
    after the sweep columns."""
    import pandas as pd

    keys, reference = case_keys(results), finest_case(results)
    rows = []
    for j, value in enumerate(sweep.values):
        fields = {case: mine[j] for case, mine in steps.items()}
        for row in agreement_rows(keys, fields, reference, count):
            rows.append({**row, "point": j + 1, sweep.parameter: float(value)})
    frame = pd.DataFrame(rows)
    first = ["case", *SWEEP_COLUMNS, "point", sweep.parameter]
    return normalize_columns(frame[first + [c for c in frame.columns if c not in first]])


def agreement_summary(table: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Per case × reference mode along the sweep: the points where it has a partner, the lowest
    MAC of its pairing and the largest |ω − ω_ref|/ω_ref, each with the parameter value where it
    occurs, and the number of flagged points."""
    import pandas as pd

    rows = []
    for (_, mode), group in table.groupby(["case", "mode"], sort=True):
        paired = group.dropna(subset=["mac"])  # a case with fewer modes leaves some unpaired
        difference = ((paired["omega"] - paired["reference_omega"]) / paired["reference_omega"]).abs()
        worst_mac = paired.loc[paired["mac"].idxmin()] if not paired.empty else None
        worst_omega = paired.loc[difference.idxmax()] if not paired.empty else None
        rows.append(
            {
                **{c: group.iloc[0][c] for c in ("case", *SWEEP_COLUMNS)},
                "mode": int(mode),
                "paired_points": len(paired),
                "lowest_mac": np.nan if worst_mac is None else worst_mac["mac"],
                f"lowest_mac_{parameter}": np.nan if worst_mac is None else worst_mac[parameter],
                "largest_rel_difference": difference.max() if not paired.empty else np.nan,
                f"largest_rel_difference_{parameter}": np.nan
                if worst_omega is None
                else worst_omega[parameter],
                "flagged_points": int((group["flag"] != "").sum()),
            }
        )
    return normalize_columns(pd.DataFrame(rows))


def sweep_axis_label(sweep: ParameterSweep, arm: Arm) -> str:
    """The axis label of the swept parameter, unit in brackets."""
    if sweep.joint is None:
        return "payload mass [kg]"
    number = sweep.joint + 1
    symbol = rf"$\theta_{{{number}}}$" if sweep.unit == "rad" else f"$d_{{{number}}}$"
    if number in arm.translating_links:
        return f"free length {symbol} [m]"
    return f"joint {number} {symbol} [{sweep.unit}]"


class Frequencies(StudyKind):
    name = "frequencies"
    analysis_schema = FrequencyAnalysis
    #: The lowest frequencies of a fine mesh come from the structured eigen-solve
    #: (:mod:`core.dynamics.structured`, O(n) per Lanczos step); the bases still store each link's
    #: blocks densely, (2E)² per link.
    coordinate_limit = 20_000

    def warm_up(self) -> None:
        """Both backends' first model and eigen-solves (dense and structured), with SciPy's
        eigen-solvers and the compiled kernels loaded (~1–3 s in a fresh process)."""
        import amm
        import fem
        from core.arm.presets import lumped_two_link

        arm = lumped_two_link()
        for model in (amm.AssumedModesModel(arm, modes=2), fem.FiniteElementModel(arm, elements=80)):
            model.natural_frequencies(model.home(), count=2)
            model.natural_frequencies(model.home(), count=2, method="dense")
            model.forward_dynamics(model.home(), 0 * model.home(), [0.0, 0.0])

    def validate(self, arm, analysis):
        joint_configuration(arm, analysis.configuration, "analysis.configuration")
        if isinstance(analysis, FrequencyAnalysis):
            parameter_sweep(arm, analysis)

    def run_case(self, arm, case, analysis):
        sweep = parameter_sweep(arm, analysis)
        if sweep is None:
            return frequency_rows(arm, case, analysis)
        return sweep_rows(arm, case, analysis, sweep)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        if "tracked_mode" in results:  # blank for rigid-body modes: integers, not floats, in the CSVs
            results = results.assign(tracked_mode=results["tracked_mode"].astype("Int64"))
        return add_references(results, arm, analysis)

    def _modes(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> dict[int, CaseModes]:
        """:func:`case_modes`, computed once per study (one eigen-solve per case) and shared
        by :meth:`report` and :meth:`tables`."""
        key = (arm, analysis, tuple(results["case"]), tuple(results["omega"]))
        if getattr(self, "_last_modes", (None,))[0] != key:
            self._last_modes = (key, case_modes(results, arm, analysis))
        return self._last_modes[1]

    def _agreement(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame | None:
        """The agreement table (None for a single case); along a sweep, at every point."""
        if results["case"].nunique() < 2:
            return None
        sweep = parameter_sweep(arm, analysis)
        if sweep is not None:
            key = ("sweep", arm, analysis, tuple(results["case"]), tuple(results["omega"]))
            if getattr(self, "_last_sweep", (None,))[0] != key:
                steps = {
                    int(row["case"]): sweep_fields(arm, Discretization.from_columns(row), analysis, sweep)[0]
                    for _, row in case_keys(results).iterrows()
                }
                table = sweep_agreement(results, steps, sweep, analysis.n_frequencies)
                self._last_sweep = (key, table)
            return self._last_sweep[1]
        fields = {case: modes.fields for case, modes in self._modes(results, arm, analysis).items()}
        return agreement(results, arm, analysis, fields)

    def tables(self, results, arm, analysis):
        sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
        if sweep is not None:
            tables = {"tracking": tracking_summary(results, sweep.parameter)}
            events = mode_events(results, sweep.parameter)
            if not events.empty:
                tables["crossings"] = events
            table = self._agreement(results, arm, analysis)
            if table is not None:
                tables["agreement along the sweep"] = agreement_summary(table, sweep.parameter)
            return tables
        tables = {
            "frequencies [rad/s]": per_case(results, "mode", "omega", "omega_"),
            "frequencies in hertz [Hz]": per_case(results, "mode", "hz", "hz_"),
        }
        table = self._agreement(results, arm, analysis)
        if table is not None:
            tables["agreement"] = table
        return tables

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
        if sweep is not None:
            return self._sweep_report(results, arm, analysis, sweep, folder, plots)
        from studies.plots import (
            frequency_error_plot,
            mode_shape_plot,
        )

        source = results["reference_source"].iloc[0]
        text = [f"Natural frequencies [rad/s, and Hz], joints {analysis.joints}; reference: {source}."]
        table = self._agreement(results, arm, analysis)
        reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
        if table is not None:
            text.append(self._agreement_text(table, reference, "table `agreement`"))
        modes = self._modes(results, arm, analysis)
        shapes = mode_shape_table(results, modes)
        shapes.to_csv(folder / "mode_shapes.csv", index=False)
        text.append(
            "Mode shapes in `mode_shapes.csv`: per case, mode and point (s [m] along the link, "
            f"{FIELD_POINTS} points per flexible link; s_arm [m] along the arm, links end to end) the "
            "deflection w (in-plane) and v (out-of-plane) across the undeformed link at the "
            "configuration, from the displacement fields of `core.analysis.modes` (so they include the motion of "
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

    @staticmethod
    def _agreement_text(table: pd.DataFrame, reference: str, where: str, parameter: str | None = None) -> str:
        """The summary's sentence on an agreement table (``parameter``: the swept one, whose
        value each flagged pairing names)."""
        flagged = table[table["flag"] != ""]

        def at(row) -> str:
            return "" if parameter is None else f" at {parameter} = {row[parameter]:.6g}"

        return (
            f"Mode shapes against {reference} (MAC of the displacement fields, mass-weighted; "
            f"{where}): lowest MAC {table['mac'].min():.6f}; "
            + (
                f"every mode pairs with the same-numbered reference mode at MAC ≥ {MAC_FLAG}."
                if flagged.empty
                else f"{len(flagged)} pairing(s) flagged: "
                + ", ".join(
                    f"{label_of(r)} mode {r['mode']}{at(r)} ({r['flag']})"
                    for _, r in flagged.head(5).iterrows()
                )
                + ("…" if len(flagged) > 5 else "")
                + "."
            )
        )

    def _sweep_report(
        self,
        results: pd.DataFrame,
        arm: Arm,
        analysis: FrequencyAnalysis,
        sweep: ParameterSweep,
        folder: Path,
        plots: bool,
    ) -> list[str]:
        """summary.md of a sweep; writes tracked_frequencies.csv, agreement.csv (two cases or
        more) and the Campbell diagram."""
        from studies.plots import campbell_plot

        name, unit = sweep.parameter, sweep.unit
        joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
        held = ", ".join(
            f"{joint} = {value:.6g} {'rad' if joint.startswith('theta') else 'm'}"
            for index, (joint, value) in enumerate(zip(arm.joint_names, joints, strict=True))
            if index != sweep.joint
        )
        sources = list(dict.fromkeys(results["reference_source"]))
        source = (
            "exact clamped-mass roots at each point"
            if all(s.startswith("exact") for s in sources)
            else "; ".join(sources)
        )
        text = [
            f"Natural frequencies [rad/s, and Hz], joints {analysis.joints}, along {name} from "
            f"{sweep.values[0]:.6g} to {sweep.values[-1]:.6g} {unit} ({sweep.values.size} points"
            + (f"; {held}" if held else "")
            + f"); reference: {source}."
        ]
        tracked = tracked_table(results, name)
        tracked.to_csv(folder / "tracked_frequencies.csv", index=False)
        rigid = results["tracked_mode"].isna().any()
        lowest = (
            tracked.loc[tracked["tracking_mac"].idxmin()] if tracked["tracking_mac"].notna().any() else None
        )
        text.append(
            "Modes are tracked along the sweep by MAC of their displacement fields in link axes "
            "between neighbouring points (`core.analysis.modes.track_modes`): `tracked_mode` is a mode's number "
            "at the first point, `tracking_mac` its MAC with itself at the previous point; "
            "`tracked_frequencies.csv` lists every tracked mode point by point"
            + (" (rigid-body modes, ω = 0, are not tracked)" if rigid else "")
            + "."
            + (
                ""
                if lowest is None
                else f" Lowest MAC between neighbouring points: {lowest['tracking_mac']:.6f} "
                f"({label_of(lowest)} tracked mode {lowest['tracked_mode']}, step to {name} = "
                f"{lowest[name]:.6g} {unit})."
            )
        )
        events = mode_events(results, name)
        if events.empty:
            text.append(
                "No crossing or veering: in every case the tracked order is the frequency order at "
                f"every point, and every MAC between neighbouring points is ≥ {MAC_FLAG}."
            )
        else:
            crossings = events[events["event"] == "crossing"]
            changes = events[events["event"] == "shape change"]
            crossed = [
                f"{label_of(r)} modes {r['tracked_mode']} and {r['other_mode']} cross at {name} ≈ "
                f"{r[f'{name}_at']:.4g} {unit} (ω ≈ {r['omega_at']:.4g} rad/s)"
                for _, r in crossings.head(4).iterrows()
            ]
            changed = [
                f"{label_of(r)} mode {r['tracked_mode']} between {name} = {r[f'{name}_from']:.4g} and "
                f"{r[f'{name}_to']:.4g} {unit} (MAC {r['mac']:.3f})"
                for _, r in changes.head(2).iterrows()
            ]
            text.append(
                "Crossings and veerings (table `crossings`): "
                f"{len(crossings)} crossing(s), where two tracked modes swap their frequency order"
                + (
                    f", e.g. {'; '.join(crossed)}" + ("…" if len(crossings) > len(crossed) else "")
                    if crossed
                    else ""
                )
                + f"; {len(changes)} shape change(s), where a mode's MAC with itself at the previous point "
                f"is below {MAC_FLAG} without a swap (a veering, or too coarse a sweep)"
                + (
                    f", e.g. {'; '.join(changed)}" + ("…" if len(changes) > len(changed) else "")
                    if changed
                    else ""
                )
                + "."
            )
        table = self._agreement(results, arm, analysis)
        if table is not None:
            table.to_csv(folder / "agreement.csv", index=False)
            reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
            text.append(
                self._agreement_text(
                    table,
                    reference,
                    "at every point in `agreement.csv`, worst along the sweep in table "
                    "`agreement along the sweep`",
                    name,
                )
            )
        if plots:
            label = sweep_axis_label(sweep, arm)
            names = campbell_plot(tracked, name, label, folder, rigid_left_out=rigid)
            text.append(
                f"Campbell diagram (each tracked mode against {name}, colour by case, line style by "
                f"backend): ![campbell]({names[0]}) ([PDF]({names[1]}))"
            )
        return text
