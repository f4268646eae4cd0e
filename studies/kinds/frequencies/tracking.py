"""Modes tracked along the sweep of a parameter: the modes of every point, their identities
by MAC between neighbouring points (:func:`core.analysis.modes.track_modes`), and where
tracked modes cross or veer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from core.analysis.modes import ModeFields, mode_fields, track_modes, tracking_mac
from core.arm import Arm
from studies.discretizations import Case, Discretization, discretization_columns, label_of, normalize_columns
from studies.kinds.base import caution
from studies.kinds.frequencies.agreement import MAC_FLAG
from studies.kinds.frequencies.analysis import FrequencyAnalysis, ParameterSweep, check_count
from studies.kinds.frequencies.rest import POINT_FAILURES, Rest, at_rest, solvable

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


#: Modes tracked beyond ``n_frequencies``, so that a mode entering the reported window
#: from above is paired with its own shape and keeps its identity.
TRACKING_GUARD = 2


def sweep_fields(
    arm: Arm,
    discretization: Discretization,
    analysis: FrequencyAnalysis,
    sweep: ParameterSweep,
    warn: bool = True,
) -> tuple[list[ModeFields], int, list[Rest]]:
    """(the modes at every point of ``sweep``, the model's n_dof, the :class:`Rest` of every
    point: where its modes are taken) for one discretization.

    At each point the model is built for that point's arm and configuration (as a
    study at that one configuration would: clamped-mass shapes take the distal load
    there), its modes are taken where ``analysis.about`` says (resolved for the study's
    arm, so one value holds along the whole sweep) and the lowest ``n_frequencies`` +
    :data:`TRACKING_GUARD` modes become fields in link axes
    (:func:`core.analysis.modes.mode_fields`), so that a joint turning along the sweep
    does not by itself lower the MAC between neighbouring points.

    A point where the model has no equilibrium or no frequencies ends the sweep of this
    discretization: the lists hold the points before it, and a warning (``warn``) names the
    point and the reason; at the first point it raises.
    """
    joints = analysis.joint_values(arm)
    steps, rests, n_dof = [], [], 0
    label, name = discretization.label, sweep.parameter
    for j, value in enumerate(sweep.values):
        model, q = discretization.build_at(*sweep.point(arm, joints, float(value)))
        where = f" at {name} = {value:.6g}"
        try:
            rest = at_rest(model, q, arm, analysis, label, where)
            with solvable(rest, label, where):
                fields = mode_fields(
                    model, rest.q, analysis.joints, analysis.n_frequencies + TRACKING_GUARD, axes="link"
                )
        except POINT_FAILURES as error:
            if not steps:
                raise
            if warn:
                caution(
                    f"analysis.sweep_parameter: the sweep of {label} stops at point {j} of "
                    f"{sweep.values.size} ({name} = {sweep.values[j - 1]:.6g}): {error}"
                )
            break
        steps.append(fields)
        rests.append(rest)
        n_dof = model.n_dof
    return steps, n_dof, rests


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
    frequency order), with ``about``, ``point`` (from 1), the parameter's value (column named
    after it), ``tracked_mode`` (:func:`tracked_identities`; blank for a rigid-body mode),
    ``tracking_mac`` (MAC with the same tracked mode at the previous point) and, about an
    equilibrium, its sag columns (:class:`~studies.kinds.frequencies.rest.Rest`); the points
    :func:`sweep_fields` reached."""
    steps, n_dof, rests = sweep_fields(arm, case.discretization, analysis, sweep)
    available = min(step.omega.size for step in steps)
    check_count(case, available, analysis)
    ids, macs = tracked_identities(steps)
    rows = []
    for j, (value, step, rest) in enumerate(zip(sweep.values, steps, rests, strict=False)):
        for m in range(min(analysis.n_frequencies, available)):
            rows.append(
                {
                    **case.columns(),
                    **rest.about_column,
                    "point": j + 1,
                    sweep.parameter: float(value),
                    "n_dof": n_dof,
                    "mode": m + 1,
                    "omega": float(step.omega[m]),
                    "hz": float(step.omega[m] / (2 * np.pi)),
                    "tracked_mode": int(ids[j, m]) if ids[j, m] else None,
                    "tracking_mac": float(macs[j, m]),
                    **rest.sag,
                }
            )
    return rows


def tracked_table(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """The sweep's rows along each tracked mode: one row per case × tracked mode × point
    (rigid-body modes left out), sorted so; written as ``tracked_frequencies.csv``."""
    columns = [
        "case", *discretization_columns(), "tracked_mode", "point", parameter, "mode", "omega", "hz",
        "tracking_mac",
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
                **{c: group.iloc[0][c] for c in ("case", *discretization_columns())},
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
        keys = {c: group.iloc[0][c] for c in ("case", *discretization_columns())}
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


def tracking_text(tracked: pd.DataFrame, name: str, unit: str, rigid: bool) -> str:
    """The summary's paragraph on how modes are tracked, with the lowest MAC between
    neighbouring points (``tracked``: :func:`tracked_table`; ``rigid``: the study has
    rigid-body modes, which are not tracked)."""
    lowest = tracked.loc[tracked["tracking_mac"].idxmin()] if tracked["tracking_mac"].notna().any() else None
    return (
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


def events_text(events: pd.DataFrame, name: str, unit: str) -> str:
    """The summary's paragraph on the crossings and veerings of :func:`mode_events` (a few of
    each named) along the sweep of ``name`` [``unit``]."""
    if events.empty:
        return (
            "No crossing or veering: in every case the tracked order is the frequency order at "
            f"every point, and every MAC between neighbouring points is ≥ {MAC_FLAG}."
        )
    crossings = events[events["event"] == "crossing"]
    changes = events[events["event"] == "shape change"]
    crossed = _for_example(
        crossings,
        4,
        lambda r: (
            f"{label_of(r)} modes {r['tracked_mode']} and {r['other_mode']} cross at {name} ≈ "
            f"{r[f'{name}_at']:.4g} {unit} (ω ≈ {r['omega_at']:.4g} rad/s)"
        ),
    )
    changed = _for_example(
        changes,
        2,
        lambda r: (
            f"{label_of(r)} mode {r['tracked_mode']} between {name} = {r[f'{name}_from']:.4g} and "
            f"{r[f'{name}_to']:.4g} {unit} (MAC {r['mac']:.3f})"
        ),
    )
    return (
        "Crossings and veerings (table `crossings`): "
        f"{len(crossings)} crossing(s), where two tracked modes swap their frequency order{crossed}; "
        f"{len(changes)} shape change(s), where a mode's MAC with itself at the previous point "
        f"is below {MAC_FLAG} without a swap (a veering, or too coarse a sweep){changed}."
    )


def _for_example(events: pd.DataFrame, count: int, describe) -> str:
    """ ", e.g. a; b" of the first ``count`` events, each as ``describe(row)`` says (with "…"
    when there are more), or nothing without events."""
    if events.empty:
        return ""
    named = [describe(row) for _, row in events.head(count).iterrows()]
    return f", e.g. {'; '.join(named)}" + ("…" if len(events) > len(named) else "")
