"""Frequencies along a ``gravity_scale`` sweep: how far the small-deformation model agrees with
itself as the sag grows.

At gravity scale 0 the arm is undeformed and a finite-element mesh gives the same frequencies
in a clamped and a pinned frame (the two frames span the same displacements). Under gravity
each frame's model linearizes the deformation about its own frame, so the two differ by the
sag's second-order effects: the frame difference |ω_pinned − ω_clamped| / ω_clamped measures
where the model stops agreeing with itself (geometric stiffening shrinks it while the sag is moderate).
:func:`gravity_table` has every case's frequencies relative to gravity 0,
:func:`frame_table` the clamped and pinned FEM frequencies side by side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from studies.discretizations import STIFFENING_COLUMN, label_of, normalize_columns, sweep_columns
from studies.kinds.frequencies.rest import SAG_DISPLACEMENT

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: The FEM frames compared by :func:`frame_table` (``shape`` values).
FRAMES = ("clamped", "pinned")


def base_point(results: pd.DataFrame, parameter: str) -> int:
    """The point the ratios are taken against: where the parameter is 0, else the first."""
    values = results.drop_duplicates("point").set_index("point")[parameter].sort_index()
    zero = values.index[values.to_numpy() == 0.0]
    return int(zero[0]) if zero.size else int(values.index[0])


def gravity_table(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """One row per case × point: the sweep columns, ``point``, the parameter, ``omega_<k>``
    [rad/s] of every reported mode (frequency order), ``ratio_<k>`` = ω_k / ω_k at
    :func:`base_point` (NaN where the case has no frequency there) and, about an equilibrium,
    ``sag_tip_displacement`` [m]."""
    keys = ["case", *sweep_columns(results)]
    wide = results.pivot_table(index=["case", "point"], columns="mode", values="omega", aggfunc="first")
    modes = list(wide.columns)
    wide.columns = [f"omega_{m}" for m in modes]
    base = base_point(results, parameter)
    for m in modes:
        at_base = wide[f"omega_{m}"].xs(base, level="point") if base in wide.index.levels[1] else None
        reference = (
            wide.index.get_level_values("case").map(at_base)
            if at_base is not None
            else np.full(len(wide), np.nan)
        )
        wide[f"ratio_{m}"] = wide[f"omega_{m}"].to_numpy() / np.asarray(reference, dtype=float)
    extra = [parameter, *([SAG_DISPLACEMENT] if SAG_DISPLACEMENT in results else [])]
    first = results.drop_duplicates(["case", "point"]).set_index(["case", "point"])[keys[1:] + extra]
    table = first.join(wide).reset_index()
    return normalize_columns(table[[*keys, "point", *extra, *wide.columns]])


def frame_table(results: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """The FEM cases in a clamped and a pinned frame side by side: one row per (elements,
    geometric stiffening) pair of such cases × point where both have frequencies, with the
    parameter, ``omega_<k>_clamped``, ``omega_<k>_pinned`` [rad/s] and ``frame_difference_<k>``
    = |ω_pinned − ω_clamped| / ω_clamped [–] for every reported mode (frequency order). Empty
    without such a pair."""
    import pandas as pd

    fem = results[(results["backend"] == "fem") & results["shape"].isin(FRAMES)]
    group = ["elements", *([STIFFENING_COLUMN] if STIFFENING_COLUMN in results else [])]
    rows = []
    for key, cases in fem.groupby(group, sort=True, dropna=False):
        frames = {shape: rows_of.set_index(["point", "mode"]) for shape, rows_of in cases.groupby("shape")}
        if set(frames) != set(FRAMES) or cases.groupby("shape")["case"].nunique().max() != 1:
            continue
        clamped, pinned = frames["clamped"], frames["pinned"]
        common = clamped.index.intersection(pinned.index)
        for point in sorted(set(common.get_level_values("point"))):
            row = dict(zip(group, key if isinstance(key, tuple) else (key,), strict=True))
            row.update({"point": point, parameter: float(clamped.loc[(point, 1), parameter])})
            for mode in sorted(m for p, m in common if p == point):
                a, b = float(clamped.loc[(point, mode), "omega"]), float(pinned.loc[(point, mode), "omega"])
                row[f"omega_{mode}_clamped"] = a
                row[f"omega_{mode}_pinned"] = b
                row[f"frame_difference_{mode}"] = abs(b - a) / abs(a) if a else np.nan
            rows.append(row)
    return normalize_columns(pd.DataFrame(rows))


def validity_text(frames: pd.DataFrame, parameter: str) -> str:
    """The summary's paragraph on :func:`frame_table` (empty without a frame pair)."""
    if frames.empty:
        return ""
    modes = sorted(int(c.rsplit("_", 1)[1]) for c in frames.columns if c.startswith("frame_difference_"))
    parts = []
    for key, group in frames.groupby(["elements", *_stiffening(frames)], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        stiffened = len(key) > 1 and bool(key[1])
        last = group.loc[group[parameter].idxmax()]
        worst = ", ".join(f"ω{m} {last[f'frame_difference_{m}']:.3g}" for m in modes)
        parts.append(
            f"FEM x{key[0]}{' stiffened' if stiffened else ''}: {worst} at {parameter} = {last[parameter]:.6g}"
        )
    zero = frames[frames[parameter] == 0.0]
    at_zero = (
        f" At {parameter} = 0 the frames agree to {zero[[f'frame_difference_{m}' for m in modes]].max().max():.2g}."
        if not zero.empty
        else ""
    )
    return (
        "Frames compared (table `frames along the sweep`: the FEM cases in a clamped and a pinned "
        "frame side by side, frame_difference = |ω_pinned − ω_clamped| / ω_clamped, where the "
        "small-deformation model stops agreeing with itself): " + "; ".join(parts) + "." + at_zero
    )


def _stiffening(table: pd.DataFrame) -> list[str]:
    return [STIFFENING_COLUMN] if STIFFENING_COLUMN in table else []


def gravity_text(table: pd.DataFrame, parameter: str, base: float) -> str:
    """The summary's sentence on :func:`gravity_table` (written as ``gravity_sweep.csv``;
    ``base``: the parameter's value at :func:`base_point`)."""
    ratios = [c for c in table.columns if c.startswith("ratio_")]
    extremes = []
    for _, group in table.groupby("case", sort=True):
        last = group.loc[group[parameter].idxmax()]
        shown = ", ".join(f"ω{c.split('_')[1]} × {last[c]:.4g}" for c in ratios)
        extremes.append(f"{label_of(last)} {shown} at {parameter} = {last[parameter]:.6g}")
    return (
        f"Every case's frequencies along {parameter}, and relative to their values at {parameter} = "
        f"{base:.6g}, in `gravity_sweep.csv` (omega_k, ratio_k): " + "; ".join(extremes) + "."
    )
