"""Figures of the frequencies kind: mode shapes along the arm, frequency errors, the Campbell
diagram of a sweep (conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from studies import plots
from studies.discretizations import label_of


@plots.styled
def mode_shape_plot(shapes: pd.DataFrame, folder: Path, stem: str = "mode_shapes") -> list[str]:
    """Mode shapes along the arm, one panel per mode (columns) and bending plane (rows; a
    plane with no deflection in any mode is left out): colour by case, line style by backend.

    ``shapes`` has the sweep columns, ``case``, ``panel_mode`` (the mode of the panel),
    ``panel_omega`` [rad/s] (its frequency in the titles), ``link``, ``s_arm`` [m] (arc length
    along the arm), and ``w``, ``v`` (in-plane, out-of-plane deflection, normalized). A curve
    below :data:`plots.SHAPE_ROUND_OFF` of its mode's largest deflection is round-off and not drawn.
    """
    modes = sorted(shapes["panel_mode"].unique())
    # a deflection below plots.SHAPE_ROUND_OFF of its case and mode's largest is round-off
    largest = (
        shapes.groupby(["case", "panel_mode"])[["w", "v"]].transform(lambda c: c.abs().max()).max(axis=1)
    )
    significant = shapes[["w", "v"]].abs().gt(plots.SHAPE_ROUND_OFF * largest, axis=0)
    planes = [
        (column, name)
        for column, name in (("w", "in-plane"), ("v", "out-of-plane"))
        if significant[column].any()
    ]
    cases = list(dict.fromkeys(shapes["case"]))
    palette, line_widths = plots.case_styles(cases)
    figure, axes = plots.panel_grid(
        len(planes), len(modes), (plots.PAGE_WIDTH, 2.1 * len(planes) + 0.7), sharex=True
    )
    roots = shapes.groupby("link")["s_arm"].min().sort_index()
    handles, labels = [], []
    for column_index, mode in enumerate(modes):
        panel = shapes[shapes["panel_mode"] == mode]
        omega = float(panel["panel_omega"].iloc[0])
        axes[0, column_index].set_title(
            f"mode {mode}\n{omega / (2 * np.pi):.4g} Hz ({omega:.4g} rad/s)", fontsize=8
        )
        for row, (plane, name) in enumerate(planes):
            axis = axes[row, column_index]
            for case in cases:
                group = panel[panel["case"] == case]
                if not significant.loc[group.index, plane].any():
                    continue
                style = plots.backend_style(group.iloc[0]["backend"])
                for _, link in group.groupby("link"):
                    axis.plot(link["s_arm"], link[plane], style, color=palette[case], lw=line_widths[case])
            if not axis.lines:
                axis.text(
                    0.5, 0.5, f"no {name}\ndeflection", ha="center", va="center", transform=axis.transAxes
                )
                axis.set_yticks([])
            plots.guide(axis, 0.0)
            for root in roots.iloc[1:]:
                plots.guide(axis, root, "x")
            if column_index == 0:
                axis.set_ylabel(
                    f"{name}\ndeflection (normalized)" if len(planes) > 1 else "deflection (normalized)"
                )
            if row == len(planes) - 1:
                axis.set_xlabel("s along the arm [m]")
    for case in cases:
        first = shapes[shapes["case"] == case].iloc[0]
        handles.append(Line2D([], [], color=palette[case], linestyle=plots.backend_style(first["backend"])))
        labels.append(label_of(first))
    plots.figure_legend(figure, handles, labels, columns=min(len(labels), 4))
    return plots.save(figure, folder, stem)


@plots.styled
def frequency_error_plot(results: pd.DataFrame, folder: Path, stem: str = "frequency_errors") -> list[str]:
    """|relative error| of each mode's frequency against the reference, one line per case
    (colour by case, line style and marker by backend); a case equal to the reference
    (zero error everywhere: the reference itself) is left out; the title names the reference."""
    cases = list(dict.fromkeys(results["case"]))
    palette = dict(zip(cases, plots.colours(len(cases)), strict=True))
    figure, axis = plt.subplots(figsize=(plots.COLUMN_WIDTH, 3.0), layout="constrained")
    handles, labels = [], []
    for case in cases:
        group = results[results["case"] == case].sort_values("mode")
        first = group.iloc[0]
        error = group["rel_error"].abs()
        keep = error > 0
        if not keep.any():
            continue
        style, marker = plots.backend_style(first["backend"]), plots.backend_marker(first["backend"])
        axis.semilogy(group["mode"][keep], error[keep], linestyle=style, marker=marker, color=palette[case])
        handles.append(Line2D([], [], color=palette[case], linestyle=style, marker=marker))
        labels.append(label_of(first))
    axis.set_xlabel("mode number")
    axis.set_ylabel("|relative error| of ω [–]")
    axis.set_title(f"reference: {results['reference_source'].iloc[0]}", fontsize=8)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    plots.decade_ticks(axis)
    plots.figure_legend(figure, handles, labels, "lower", 2)
    return plots.save(figure, folder, stem)


@plots.styled
def campbell_plot(
    tracked: pd.DataFrame,
    parameter: str,
    xlabel: str,
    folder: Path,
    stem: str = "campbell",
    rigid_left_out: bool = False,
) -> list[str]:
    """Natural frequency [rad/s] of each tracked mode against a swept parameter (a Campbell
    diagram): one line per case and tracked mode, colour by case, line style and marker by
    backend, thick to thin so that coinciding cases stay visible; each tracked mode's number
    at the right end of its line (of the last case). A mode is drawn where it is among the
    reported ones (a gap where it is not). The frequency axis is logarithmic when every
    frequency is positive and they span a decade or more.

    ``tracked`` has the sweep columns, ``case``, ``tracked_mode``, ``point``, ``parameter`` and
    ``omega`` (:func:`studies.kinds.frequencies.tracked_table`); ``xlabel`` names the parameter
    with its unit; ``rigid_left_out``: the study has rigid-body modes (ω = 0), which are not
    tracked and not drawn (the title says so).
    """
    cases = list(dict.fromkeys(tracked["case"]))
    palette, line_widths = plots.case_styles(cases, 2.6)
    values = tracked.drop_duplicates("point").set_index("point")[parameter].sort_index()
    figure, axis = plt.subplots(figsize=(plots.COLUMN_WIDTH + 0.5, 3.6), layout="constrained")
    handles, labels = [], []
    for case in cases:
        mine = tracked[tracked["case"] == case]
        first = mine.iloc[0]
        style, marker = plots.backend_style(first["backend"]), plots.backend_marker(first["backend"])
        for _, line in mine.groupby("tracked_mode", sort=True):
            omega = line.set_index("point")["omega"].reindex(values.index)
            axis.plot(
                values.to_numpy(),
                omega.to_numpy(),
                linestyle=style,
                marker=marker,
                ms=3.0,
                color=palette[case],
                lw=line_widths[case],
            )
        handles.append(Line2D([], [], color=palette[case], linestyle=style, marker=marker))
        labels.append(label_of(first))
    last = tracked[tracked["case"] == cases[-1]]
    for mode, line in last.groupby("tracked_mode", sort=True):
        end = line.loc[line["point"].idxmax()]
        axis.annotate(
            str(mode),
            (end[parameter], end["omega"]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    omega = tracked["omega"].to_numpy(float)
    if (omega > 0).all() and omega.max() >= 10 * omega.min():
        axis.set_yscale("log")
        plots.decade_ticks(axis)
    axis.set_xlabel(xlabel)
    axis.set_ylabel("natural frequency ω [rad/s]")
    title = "tracked modes (number: at the first point)"
    axis.set_title(title + ("\nrigid-body modes (ω = 0) not drawn" if rigid_left_out else ""), fontsize=8)
    plots.figure_legend(figure, handles, labels, "lower", 2)
    return plots.save(figure, folder, stem)
