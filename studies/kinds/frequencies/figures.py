"""Figures of the frequencies kind: mode shapes along the arm, frequency errors, the Campbell
diagram of a sweep (conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

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
    along the arm), and ``w``, ``v`` (in-plane, out-of-plane deflection [1/√kg]: unit
    mass-weighted norm). A curve below :data:`plots.SHAPE_ROUND_OFF` of its mode's largest
    deflection is round-off and not drawn.
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
                axis.set_ylabel(f"{name}\ndeflection [1/√kg]" if len(planes) > 1 else "deflection [1/√kg]")
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
    figure, axes = plots.panel_grid(1, 1, (plots.COLUMN_WIDTH, 3.0))
    axis = axes[0, 0]
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
    figure, axes = plots.panel_grid(1, 1, (plots.COLUMN_WIDTH + 0.5, 3.6))
    axis = axes[0, 0]
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


#: Modes drawn in the gravity-sweep figure (ω₁, ω₂).
GRAVITY_PLOTTED_MODES = 2


@plots.styled
def gravity_plot(
    table: pd.DataFrame,
    frames: pd.DataFrame,
    parameter: str,
    xlabel: str,
    base: float,
    folder: Path,
    stem: str = "gravity_sweep",
) -> list[str]:
    """Frequencies along a gravity-scale sweep: one panel per mode (the
    :data:`GRAVITY_PLOTTED_MODES` lowest, frequency order) with ω_k / ω_k at ``base`` of every
    case (colour by case, line style and marker by backend, thick to thin), and, when ``frames``
    has rows, a panel with the frame difference |ω_pinned − ω_clamped| / ω_clamped [%] of each
    FEM pair (colour by pair: elements and stiffening; line style by mode, after the backends').

    ``table``: :func:`~studies.kinds.frequencies.validity.gravity_table`; ``frames``:
    :func:`~studies.kinds.frequencies.validity.frame_table`; ``xlabel`` names the parameter.
    """
    modes = [m for m in range(1, GRAVITY_PLOTTED_MODES + 1) if f"ratio_{m}" in table]
    cases = list(dict.fromkeys(table["case"]))
    pairs = [] if frames.empty else list(frames.groupby(_pair_keys(frames), sort=True, dropna=False))
    palette = plots.colours(len(cases) + len(pairs))
    colour = dict(zip(cases, palette, strict=False))
    line_widths = dict(zip(cases, plots.widths(len(cases), 2.6), strict=True))
    panels = len(modes) + (1 if pairs else 0)
    figure, axes = plots.panel_grid(1, panels, (plots.PAGE_WIDTH, 3.0), sharex=True)
    handles, labels = [], []
    for case in cases:
        mine = table[table["case"] == case].sort_values("point")
        first = mine.iloc[0]
        style, marker = plots.backend_style(first["backend"]), plots.backend_marker(first["backend"])
        for index, mode in enumerate(modes):
            axes[0, index].plot(
                mine[parameter], mine[f"ratio_{mode}"], linestyle=style, marker=marker, ms=3.0,
                color=colour[case], lw=line_widths[case],
            )  # fmt: skip
        handles.append(Line2D([], [], color=colour[case], linestyle=style, marker=marker))
        labels.append(label_of(first))
    for index, mode in enumerate(modes):
        axis = axes[0, index]
        axis.set_title(f"mode {mode}", fontsize=8)
        axis.set_ylabel(rf"$\omega_{{{mode}}}\,/\,\omega_{{{mode}}}$({parameter} = {base:g}) [–]")
        axis.set_xlabel(xlabel)
    if pairs:
        _frame_panel(axes[0, -1], pairs, modes, parameter, palette[len(cases) :], xlabel)
    plots.figure_legend(figure, handles, labels, "lower", min(len(labels), 4))
    return plots.save(figure, folder, stem)


def _pair_keys(frames: pd.DataFrame) -> list[str]:
    return ["elements", *(["geometric_stiffening"] if "geometric_stiffening" in frames else [])]


def _frame_panel(axis, pairs, modes: list[int], parameter: str, palette, xlabel: str) -> None:
    """The frame-difference panel of :func:`gravity_plot`: one line per FEM pair and mode, with
    its own legend (pairs by colour, modes by line style)."""
    styles = {
        mode: plots.LINE_STYLES[(len(plots.BACKENDS) + k) % len(plots.LINE_STYLES)]
        for k, mode in enumerate(modes)
    }
    handles, labels = [], []
    for (key, group), colour in zip(pairs, palette, strict=True):
        key = key if isinstance(key, tuple) else (key,)
        group = group.sort_values(parameter)
        for mode in modes:
            axis.plot(
                group[parameter],
                100 * group[f"frame_difference_{mode}"],
                linestyle=styles[mode],
                color=colour,
            )
        stiffened = len(key) > 1 and bool(key[1])
        handles.append(Line2D([], [], color=colour))
        labels.append(f"FEM x{key[0]}{' stiffened' if stiffened else ''}")
    for mode in modes:
        handles.append(Line2D([], [], color="k", linestyle=styles[mode]))
        labels.append(f"mode {mode}")
    axis.set_title("clamped against pinned frame", fontsize=8)
    axis.set_ylabel(r"$|\omega_{pinned} - \omega_{clamped}|\,/\,\omega_{clamped}$ [%]")
    axis.set_xlabel(xlabel)
    axis.legend(handles, labels, fontsize=8, frameon=False)


@plots.styled
def bode_plot(table: pd.DataFrame, folder: Path, stem: str = "bode") -> list[str]:
    """Bode diagram: gain [dB] (top) and phase [deg] (bottom) of each joint torque's response
    (one column per input) against ω [rad/s] on a log axis, one line per case (colour by case,
    line style by backend, thick to thin). ``table``:
    :func:`~studies.kinds.frequencies.bode.bode_table`."""
    inputs = list(dict.fromkeys(table["input"]))
    cases = list(dict.fromkeys(table["case"]))
    palette, line_widths = plots.case_styles(cases, 2.6)
    figure, axes = plots.panel_grid(2, len(inputs), (plots.PAGE_WIDTH, 4.6), sharex=True)
    handles, labels = [], []
    for case in cases:
        mine = table[table["case"] == case]
        first = mine.iloc[0]
        style = plots.backend_style(first["backend"])
        for column, name in enumerate(inputs):
            line = mine[mine["input"] == name]
            for row, quantity in enumerate(("magnitude_db", "phase_deg")):
                axes[row, column].semilogx(
                    line["omega"], line[quantity], linestyle=style, color=palette[case], lw=line_widths[case]
                )
        handles.append(Line2D([], [], color=palette[case], linestyle=style))
        labels.append(label_of(first))
    output = table["output"].iloc[0]
    for column, name in enumerate(inputs):
        number = name.rsplit("_", 1)[-1]
        axes[0, column].set_title(f"{output} / {name}", fontsize=8)
        axes[0, column].set_ylabel(rf"gain |$w_{{tip}}$/$\tau_{{{number}}}$| [dB re 1 m/(N·m)]")
        axes[1, column].set_ylabel("phase [deg]")
        axes[1, column].set_xlabel("frequency ω [rad/s]")
        plots.decade_ticks(axes[1, column], "x")
    plots.figure_legend(figure, handles, labels, "lower", min(len(labels), 4))
    return plots.save(figure, folder, stem)
