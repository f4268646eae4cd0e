"""Plots for reports (matplotlib, written as PNG and PDF).

Every figure follows the same conventions, so a reader learns them once:

* every axis names its quantity with the unit in brackets ([rad], [N·m], [m],
  [rad/s], [1/s], [–] for a ratio); a count reads "number of …";
* the backend of a discretization is told by line style (and marker), the
  quantity (a joint, a mode, a case of one backend) by colour; within a figure a
  colour or a line style means the same in every panel and no two things share a
  colour;
* curves that may coincide (AMM and FEM, two solvers) are drawn from thick to
  thin, so a curve on top of another leaves both visible;
* text is at least 8 pt and figures are 3.5 in (one column) or 7 in (two
  columns) wide, so nothing shrinks below 8 pt in a paper;
* a quantity that is identically zero is not drawn (the panel says so);
* log axes are labelled at decades or at the data's own sizes, never at
  crowded minor ticks; values spanning zero and many decades get a symmetric
  log axis whose limits hold every point;
* guide lines (zero lines, link boundaries) carry the gid :data:`GUIDE`.

Each ``*_plot`` function builds one figure from a tidy frame and returns the
names of the files :func:`save` wrote.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogFormatterSciNotation,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    NullLocator,
)

from studies.discretizations import BACKENDS, label_of

#: Width of a figure spanning one column and two columns of a paper [in].
COLUMN_WIDTH = 3.5
PAGE_WIDTH = 7.0
#: rcParams of every figure (sizes in points).
STYLE = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "pdf.fonttype": 42,
}
#: Line styles in order of use (backends, then further groups).
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2, 2, 2)))
#: Markers in order of use (backends first).
MARKERS = ("o", "s", "^", "D", "v", "P")
#: The gid of guide lines: zero lines and link boundaries, not data.
GUIDE = "guide"
#: A column whose largest |value| is at most this fraction of its panel's largest is not drawn.
ZERO_FRACTION = 1e-12
#: A mode's deflection in a plane below this fraction of its largest is round-off of its field.
SHAPE_ROUND_OFF = 1e-9
#: A time history whose largest |value| exceeds this multiple of its 95th percentile gets a symlog axis.
SPIKE_RATIO = 100.0


def _styled(function):
    """Run ``function`` under :data:`STYLE`."""

    @functools.wraps(function)
    def styled(*args, **kwargs):
        with plt.rc_context(STYLE):
            return function(*args, **kwargs)

    return styled


def save(figure, folder: Path, stem: str) -> list[str]:
    """Write ``stem``.png and ``stem``.pdf into ``folder``; returns the file names."""
    names = []
    for suffix in ("png", "pdf"):
        name = f"{stem}.{suffix}"
        figure.savefig(
            folder / name,
            dpi=200,
            bbox_inches="tight",
            metadata={"CreationDate": None} if suffix == "pdf" else None,
        )
        names.append(name)
    plt.close(figure)
    return names


# -- shared encodings --------------------------------------------------------------


def colours(count: int) -> list:
    """``count`` distinct colours: tab10 up to ten, else evenly spaced on a colour map."""
    if count <= 10:
        return list(plt.get_cmap("tab10").colors[:count])
    return [plt.get_cmap("turbo")(x) for x in np.linspace(0.05, 0.95, count)]


def widths(count: int, thickest: float = 3.0) -> list[float]:
    """Line widths from ``thickest`` to thin, so later curves on top of earlier ones leave
    both visible."""
    return [1.3] if count == 1 else list(np.linspace(thickest, 0.9, count))


def backend_style(backend: str):
    """The line style of a backend (by its place in the registry)."""
    return LINE_STYLES[list(BACKENDS).index(backend) % len(LINE_STYLES)]


def backend_marker(backend: str) -> str:
    """The marker of a backend (by its place in the registry)."""
    return MARKERS[list(BACKENDS).index(backend) % len(MARKERS)]


_QUANTITY = re.compile(r"(theta|tau|d|tip_w|tip_v)(\d+)(?:_(?:error|ddot|dot|ref))?")


def quantity_label(column: str) -> str:
    """Legend text of a result column: ``theta2_error`` → θ₂ (the panel's label says what of
    it), ``tip_w1`` → "link 1 in-plane", ``tau3`` → τ₃; anything else with spaces for "_"."""
    match = _QUANTITY.fullmatch(column)
    if match is None:
        return {"l": "free length", "speed_ratio": "U/U_g"}.get(column, column.replace("_", " "))
    name, number = match.groups()
    if name == "tip_w":
        return f"link {number} in-plane"
    if name == "tip_v":
        return f"link {number} out-of-plane"
    symbol = {"theta": r"\theta", "tau": r"\tau", "d": "d"}[name]
    return f"${symbol}_{{{number}}}$"


# -- axes ------------------------------------------------------------------------


def _target(axis, which: str):
    return axis.xaxis if which == "x" else axis.yaxis


def size_ticks(axis, values, which: str = "x", min_gap: float = 0.09) -> None:
    """Label a log axis at the data's own sizes (plain integers), leaving out a size closer
    than ``min_gap`` of the axis' log span (at least one decade) to the previous label; the
    largest size is always labelled."""
    sizes = np.unique(np.asarray(values, dtype=float))
    sizes = sizes[sizes > 0]
    logs = np.log10(sizes)
    span = max(logs[-1] - logs[0], 1.0)
    kept = [0]
    for index in range(1, sizes.size):
        if logs[index] - logs[kept[-1]] >= min_gap * span:
            kept.append(index)
    kept[-1] = sizes.size - 1
    target = _target(axis, which)
    target.set_major_locator(FixedLocator(sizes[sorted(set(kept))]))
    target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(NullFormatter())


def decade_ticks(axis, which: str = "y") -> None:
    """Label a log axis at decades (10ⁿ) only; an axis holding fewer than two decades at
    1, 2 and 5 × 10ⁿ in plain numbers. Call after the data are drawn."""
    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()
    target = _target(axis, which)
    if np.floor(np.log10(high)) - np.ceil(np.log10(low)) < 1.0:  # fewer than two decades inside
        target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        target.set_major_locator(LogLocator(base=10, numticks=8))
        target.set_major_formatter(LogFormatterSciNotation())
    target.set_minor_formatter(NullFormatter())


def symlog_axis(axis, values, which: str = "y", per_side: int = 4, depth: int = 6) -> None:
    """A symmetric log axis holding every value of ``values``: linear below the decade of the
    smallest non-zero |value| (at most ``depth`` decades under the largest), limits 1.5 × the
    extremes, labels at 0 and at most ``per_side`` decades on each side."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    magnitudes = np.abs(values[values != 0])
    if magnitudes.size == 0:
        return
    top = magnitudes.max()
    linthresh = 10.0 ** np.floor(np.log10(max(magnitudes.min(), top * 10.0**-depth)))
    (axis.set_xscale if which == "x" else axis.set_yscale)("symlog", linthresh=linthresh, linscale=1.0)
    low = 1.5 * values.min() if values.min() < 0 else -linthresh
    high = 1.5 * values.max() if values.max() > 0 else linthresh
    (axis.set_xlim if which == "x" else axis.set_ylim)(low, high)
    exponents = np.arange(round(np.log10(linthresh)), np.floor(np.log10(1.5 * top)) + 1).astype(int)
    exponents = exponents[::-1][:: int(np.ceil(exponents.size / per_side))][::-1]
    ticks, labels = [0.0], ["0"]
    for sign, text in ((1.0, ""), (-1.0, "-")):
        for exponent in exponents:
            if low <= sign * 10.0**exponent <= high:
                ticks.append(sign * 10.0**exponent)
                labels.append(f"${text}10^{{{exponent}}}$")
    (axis.set_xticks if which == "x" else axis.set_yticks)(ticks, labels)
    _target(axis, which).set_minor_locator(NullLocator())


def _guide(axis, value: float, which: str = "y") -> None:
    line = (axis.axhline if which == "y" else axis.axvline)(value, color="k", lw=0.6)
    line.set_gid(GUIDE)


# -- figures ---------------------------------------------------------------------


@_styled
def convergence_plot(results: pd.DataFrame, rates: pd.DataFrame, folder: Path, modes: int = 3) -> list[str]:
    """Log-log |relative error| against modes / elements, one panel per backend, with the
    fitted slopes: colour by mode, line style and marker by shape family."""
    backends = list(dict.fromkeys(results["backend"]))
    figure, axes = plt.subplots(
        1, len(backends), figsize=(PAGE_WIDTH, 4.6), squeeze=False, layout="constrained"
    )
    numbers = sorted(m for m in results["mode"].unique() if m <= modes)
    palette = dict(zip(numbers, colours(len(numbers)), strict=True))
    for axis, backend in zip(axes[0], backends, strict=True):
        size = BACKENDS[backend].size_column
        subset = results[(results["backend"] == backend) & (results["mode"] <= modes)]
        shapes = list(dict.fromkeys(subset["shape"]))
        for index, shape in enumerate(shapes):
            for mode in numbers:
                group = subset[(subset["shape"] == shape) & (subset["mode"] == mode)].sort_values(size)
                error = group["rel_error"].abs().to_numpy()
                keep = error > 0
                if not keep.any():
                    continue
                rate = rates[
                    (rates["backend"] == backend) & (rates["shape"] == shape) & (rates["mode"] == mode)
                ]
                slope = (
                    ""
                    if rate.empty or np.isnan(rate["rate"].iloc[0])
                    else f", slope {-rate['rate'].iloc[0]:.2f}".replace("-", "−")
                )
                axis.loglog(
                    group[size].to_numpy()[keep],
                    error[keep],
                    linestyle=LINE_STYLES[index % len(LINE_STYLES)],
                    marker=MARKERS[index % len(MARKERS)],
                    color=palette[mode],
                    lw=widths(len(shapes), thickest=2.2)[index],
                    ms=7.0 if index == 0 and len(shapes) > 1 else 3.5,
                    mfc="none" if index == 0 and len(shapes) > 1 else None,
                    label=f"{shape} $\\omega_{{{mode}}}${slope}",
                )
        axis.set_xlabel(f"number of {size}")
        axis.set_ylabel("|relative error| of ω [–]")
        axis.set_title(BACKENDS[backend].label)
        size_ticks(axis, subset[size].dropna())
        decade_ticks(axis)
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    return save(figure, folder, "convergence")


@_styled
def complex_plane_plot(points: pd.DataFrame, folder: Path, stem: str) -> list[str]:
    """Points of the complex plane (columns ``real`` [1/s], ``imag`` [rad/s]), one panel per
    backend and shape, colour by case, hollow markers from large to small so coinciding
    points of several cases nest; both axes symmetric-log and holding every point."""
    panels = list(dict.fromkeys(zip(points["backend"], points["shape"], strict=True)))
    figure, axes = plt.subplots(
        1,
        len(panels),
        figsize=(min(PAGE_WIDTH, 3.6 * len(panels)), 3.8),
        squeeze=False,
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    for axis, (backend, shape) in zip(axes[0], panels, strict=True):
        subset = points[(points["backend"] == backend) & (points["shape"] == shape)]
        cases = list(dict.fromkeys(subset["case"]))
        sizes = np.linspace(9, 3, len(cases)) if len(cases) > 1 else [5]
        for colour, size, case in zip(colours(len(cases)), sizes, cases, strict=True):
            group = subset[subset["case"] == case]
            count = group.iloc[0][BACKENDS[backend].size_column]
            axis.plot(
                group["real"],
                group["imag"],
                linestyle="none",
                marker=backend_marker(backend),
                ms=size,
                mfc="none",
                mec=colour,
                mew=1.0,
                label=f"{count} {BACKENDS[backend].size_column}",
            )
        _guide(axis, 0.0, "x")
        _guide(axis, 0.0, "y")
        axis.set_title(f"{BACKENDS[backend].label} {shape}")
        axis.set_xlabel("Re z [1/s]")
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, frameon=False)
    axes[0, 0].set_ylabel("Im z [rad/s]")
    symlog_axis(axes[0, 0], points["real"], "x", per_side=3)
    symlog_axis(axes[0, 0], points["imag"], "y")
    return save(figure, folder, stem)


@_styled
def time_plot(
    results: pd.DataFrame,
    columns: list[list[str]],
    ylabels: list[str],
    folder: Path,
    stem: str,
    by: list[str] | None = None,
    split: str | None = None,
    panel_height: float = 1.75,
) -> list[str]:
    """Time histories of several cases overlaid: one row of panels per group of columns
    (labelled by ``ylabels``, units included), one column of panels per value of ``split``
    (a direction, say). Colour tells the column (quantity) in a panel, line style the case
    (or the group of the ``by`` columns: a case and a solver; a column with a single value
    is left out of the labels); a column that is zero throughout is not drawn, a history
    spanning many decades gets a symmetric log axis. ``panel_height`` [in] per row of panels."""
    by = [c for c in (by or ["case"]) if c in results and c != split]
    shown = [c for c in by if c != "case" and results[c].nunique() > 1]
    keys = results[by].drop_duplicates().itertuples(index=False, name=None)
    groups = []
    for key in keys:
        mask = np.logical_and.reduce([results[c] == v for c, v in zip(by, key, strict=True)])
        first = results[mask].iloc[0]
        groups.append((mask, " ".join([label_of(first), *(str(first[c]) for c in shown)])))
    splits = list(dict.fromkeys(results[split])) if split else [None]
    figure, axes = plt.subplots(
        len(columns),
        len(splits),
        figsize=(PAGE_WIDTH, panel_height * len(columns) + 0.5),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    line_widths = widths(len(groups))
    for row, (group_columns, ylabel) in enumerate(zip(columns, ylabels, strict=True)):
        present = [c for c in group_columns if c in results and results[c].notna().any()]
        largest = {c: float(np.nanmax(np.abs(results[c].to_numpy(float)))) for c in present}
        panel_largest = max(largest.values(), default=0.0)
        drawn = [c for c in present if largest[c] > ZERO_FRACTION * panel_largest and largest[c] > 0]
        palette = dict(zip(drawn, colours(len(drawn)), strict=True))
        for column_index, value in enumerate(splits):
            axis = axes[row, column_index]
            inside = np.ones(len(results), bool) if split is None else (results[split] == value).to_numpy()
            for index, (mask, _) in enumerate(groups):
                frame = results[mask & inside]
                for column in drawn:
                    axis.plot(
                        frame["time"],
                        frame[column],
                        color=palette[column],
                        linestyle=LINE_STYLES[index % len(LINE_STYLES)],
                        lw=line_widths[index],
                    )
            if drawn:
                values = results.loc[inside, drawn].to_numpy(float)
                magnitudes = np.abs(values[np.isfinite(values)])
                typical = np.percentile(magnitudes, 95) if magnitudes.size else 0.0
                if typical > 0 and magnitudes.max() > SPIKE_RATIO * typical:
                    symlog_axis(
                        axis, values.ravel(), "y", depth=int(np.ceil(np.log10(magnitudes.max() / typical)))
                    )
            if row == 0 and value is not None:
                axis.set_title(str(value))
            if column_index == 0:
                axis.set_ylabel(ylabel)
        zero = [c for c in present if c not in drawn]
        if len(drawn) > 1 or zero:
            # a column that is zero throughout gets an entry without a line
            handles = [Line2D([], [], color=palette[c]) for c in drawn] + [
                Line2D([], [], linestyle="none")
            ] * len(zero)
            labels = [quantity_label(c) for c in drawn] + [f"{quantity_label(c)} ≡ 0" for c in zero]
            axes[row, -1].legend(
                handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False
            )
    for axis in axes[-1]:
        axis.set_xlabel("time [s]")
    figure.legend(
        [
            Line2D([], [], color="0.25", linestyle=LINE_STYLES[i % len(LINE_STYLES)])
            for i in range(len(groups))
        ],
        [label for _, label in groups],
        loc="outside upper center",
        ncols=2 if len(groups) == 4 else min(len(groups), 3),
        frameon=False,
    )
    return save(figure, folder, stem)


@_styled
def loglog_plot(
    results: pd.DataFrame,
    x: str,
    y: str,
    colour_by: list[str],
    style_by: str,
    xlabel: str,
    ylabel: str,
    folder: Path,
    stem: str,
) -> list[str]:
    """``y`` against ``x`` on log-log axes: colour by the groups of the ``colour_by`` columns
    (a case is labelled by its discretization, a backend by its label), line style by
    ``style_by`` (a backend keeps its own style), marker by backend."""

    def name(column: str, row) -> str:
        if column == "case":
            return label_of(row)
        if column == "backend":
            return BACKENDS[row["backend"]].label
        return str(row[column])

    colour_keys = list(dict.fromkeys(results[colour_by].itertuples(index=False, name=None)))
    style_keys = list(dict.fromkeys(results[style_by]))
    palette = dict(zip(colour_keys, colours(len(colour_keys)), strict=True))
    styles = {
        key: backend_style(key) if style_by == "backend" else LINE_STYLES[i % len(LINE_STYLES)]
        for i, key in enumerate(style_keys)
    }

    def marker(rows: pd.DataFrame) -> str | None:
        """The backend's marker where ``rows`` have a single backend."""
        backends = rows["backend"].unique() if "backend" in rows else []
        return backend_marker(backends[0]) if len(backends) == 1 else None

    figure, axis = plt.subplots(figsize=(COLUMN_WIDTH, 2.8), layout="constrained")
    handles, labels = [], []
    for colour_key in colour_keys:
        mask = np.logical_and.reduce([results[c] == v for c, v in zip(colour_by, colour_key, strict=True)])
        handles.append(Line2D([], [], color=palette[colour_key], marker=marker(results[mask])))
        labels.append(" ".join(name(c, results[mask].iloc[0]) for c in colour_by))
        for index, style_key in enumerate(style_keys):
            group = results[mask & (results[style_by] == style_key)].sort_values(x)
            if group.empty:
                continue
            axis.loglog(
                group[x],
                group[y],
                color=palette[colour_key],
                linestyle=styles[style_key],
                marker=marker(group) or "o",
                lw=widths(len(style_keys))[index],
                ms=3.5,
            )
    for style_key in style_keys:
        rows = results[results[style_by] == style_key]
        handles.append(Line2D([], [], color="0.25", linestyle=styles[style_key], marker=marker(rows)))
        labels.append(name(style_by, rows.iloc[0]))
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    size_ticks(axis, results[x])
    decade_ticks(axis)
    figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return save(figure, folder, stem)


@_styled
def eigenvalue_time_plot(eigen: pd.DataFrame, folder: Path, stem: str, modes: int = 4) -> list[str]:
    """Re λ(t) and Im λ(t) of the ``modes`` lowest-frequency eigenvalues (Im λ > 0) per case
    (seed 002 Figs. 6–7), one column of panels per direction: colour by case, line style by
    backend. ``eigen`` has columns case, sweep columns, direction, time, real, imag."""
    directions = list(dict.fromkeys(eigen["direction"]))
    cases = list(dict.fromkeys(eigen["case"]))
    palette = dict(zip(cases, colours(len(cases)), strict=True))
    line_widths = dict(zip(cases, widths(len(cases)), strict=True))
    figure, axes = plt.subplots(
        2,
        len(directions),
        figsize=(PAGE_WIDTH if len(directions) > 1 else COLUMN_WIDTH + 0.5, 4.8),
        sharex=True,
        sharey="row",
        squeeze=False,
        layout="constrained",
    )
    handles, labels = [], []
    for (case, direction), group in eigen.groupby(["case", "direction"], sort=False):
        upper = group[group["imag"] > 0].sort_values(["time", "imag"])
        lowest = upper.groupby("time").head(modes).copy()
        lowest["rank"] = lowest.groupby("time").cumcount()
        column = directions.index(direction)
        style = backend_style(group.iloc[0]["backend"])
        for _, line in lowest.groupby("rank"):
            for axis, part in zip(axes[:, column], ("real", "imag"), strict=True):
                axis.plot(line["time"], line[part], style, color=palette[case], lw=line_widths[case])
        if column == 0:
            handles.append(Line2D([], [], color=palette[case], linestyle=style))
            labels.append(label_of(group.iloc[0]))
    for column, direction in enumerate(directions):
        axes[0, column].set_title(direction)
        _guide(axes[0, column], 0.0)
        axes[1, column].set_yscale("log")
        axes[1, column].set_xlabel("time [s]")
    decade_ticks(axes[1, 0])
    axes[0, 0].set_ylabel("Re λ [1/s]")
    axes[1, 0].set_ylabel("Im λ [rad/s]")
    figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3), frameon=False)
    return save(figure, folder, stem)


@_styled
def mode_shape_plot(shapes: pd.DataFrame, folder: Path, stem: str = "mode_shapes") -> list[str]:
    """Mode shapes along the arm, one panel per mode (columns) and bending plane (rows; a
    plane with no deflection in any mode is left out): colour by case, line style by backend.

    ``shapes`` has the sweep columns, ``case``, ``panel_mode`` (the mode of the panel),
    ``panel_omega`` [rad/s] (its frequency in the titles), ``link``, ``s_arm`` [m] (arc length
    along the arm), and ``w``, ``v`` (in-plane, out-of-plane deflection, normalized). A curve
    below :data:`SHAPE_ROUND_OFF` of its mode's largest deflection is round-off and not drawn.
    """
    modes = sorted(shapes["panel_mode"].unique())
    # a deflection below SHAPE_ROUND_OFF of its case and mode's largest is round-off
    largest = (
        shapes.groupby(["case", "panel_mode"])[["w", "v"]].transform(lambda c: c.abs().max()).max(axis=1)
    )
    significant = shapes[["w", "v"]].abs().gt(SHAPE_ROUND_OFF * largest, axis=0)
    planes = [
        (column, name)
        for column, name in (("w", "in-plane"), ("v", "out-of-plane"))
        if significant[column].any()
    ]
    cases = list(dict.fromkeys(shapes["case"]))
    palette = dict(zip(cases, colours(len(cases)), strict=True))
    line_widths = dict(zip(cases, widths(len(cases)), strict=True))
    figure, axes = plt.subplots(
        len(planes),
        len(modes),
        figsize=(PAGE_WIDTH, 2.1 * len(planes) + 0.7),
        sharex=True,
        squeeze=False,
        layout="constrained",
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
                style = backend_style(group.iloc[0]["backend"])
                for _, link in group.groupby("link"):
                    axis.plot(link["s_arm"], link[plane], style, color=palette[case], lw=line_widths[case])
            if not axis.lines:
                axis.text(
                    0.5, 0.5, f"no {name}\ndeflection", ha="center", va="center", transform=axis.transAxes
                )
                axis.set_yticks([])
            _guide(axis, 0.0)
            for root in roots.iloc[1:]:
                _guide(axis, root, "x")
            if column_index == 0:
                axis.set_ylabel(
                    f"{name}\ndeflection (normalized)" if len(planes) > 1 else "deflection (normalized)"
                )
            if row == len(planes) - 1:
                axis.set_xlabel("s along the arm [m]")
    for case in cases:
        first = shapes[shapes["case"] == case].iloc[0]
        handles.append(Line2D([], [], color=palette[case], linestyle=backend_style(first["backend"])))
        labels.append(label_of(first))
    figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 4), frameon=False)
    return save(figure, folder, stem)


@_styled
def frequency_error_plot(results: pd.DataFrame, folder: Path, stem: str = "frequency_errors") -> list[str]:
    """|relative error| of each mode's frequency against the reference, one line per case
    (colour by case, line style and marker by backend); a case equal to the reference
    (zero error everywhere: the reference itself) is left out; the title names the reference."""
    cases = list(dict.fromkeys(results["case"]))
    palette = dict(zip(cases, colours(len(cases)), strict=True))
    figure, axis = plt.subplots(figsize=(COLUMN_WIDTH, 3.0), layout="constrained")
    handles, labels = [], []
    for case in cases:
        group = results[results["case"] == case].sort_values("mode")
        first = group.iloc[0]
        error = group["rel_error"].abs()
        keep = error > 0
        if not keep.any():
            continue
        style, marker = backend_style(first["backend"]), backend_marker(first["backend"])
        axis.semilogy(group["mode"][keep], error[keep], linestyle=style, marker=marker, color=palette[case])
        handles.append(Line2D([], [], color=palette[case], linestyle=style, marker=marker))
        labels.append(label_of(first))
    axis.set_xlabel("mode number")
    axis.set_ylabel("|relative error| of ω [–]")
    axis.set_title(f"reference: {results['reference_source'].iloc[0]}", fontsize=8)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    decade_ticks(axis)
    figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return save(figure, folder, stem)


@_styled
def check_plot(
    checks: pd.DataFrame, ylabels: dict[str, str], folder: Path, stem: str = "checks"
) -> list[str]:
    """The worst value of each property check per case (one panel per check of ``ylabels``
    with a positive value; marker and colour by backend), its tolerance dashed. Values that are
    exactly zero cannot sit on a log axis: the panel counts them instead."""
    drawn = [c for c in ylabels if (checks.loc[checks["check"] == c, "worst"] > 0).any()]
    cases = list(dict.fromkeys(checks["case"]))
    names = [label_of(checks[checks["case"] == case].iloc[0]) for case in cases]
    backends = list(dict.fromkeys(checks["backend"]))
    palette = dict(zip(backends, colours(len(backends)), strict=True))
    figure, axes = plt.subplots(
        1, len(drawn), figsize=(PAGE_WIDTH, 3.4), sharex=True, squeeze=False, layout="constrained"
    )
    for axis, check in zip(axes[0], drawn, strict=True):
        rows = checks[checks["check"] == check].set_index("case").reindex(cases)
        for backend in backends:
            mine = (rows["backend"] == backend) & (rows["worst"] > 0)
            axis.semilogy(
                np.flatnonzero(mine.to_numpy()),
                rows["worst"][mine],
                linestyle="none",
                marker=backend_marker(backend),
                color=palette[backend],
            )
        tolerance = rows["tolerance"].iloc[0]
        if tolerance > 0:
            line = axis.axhline(tolerance, color="k", linestyle="--", lw=0.8)
            line.set_gid(GUIDE)
        exact = int((rows["worst"] == 0).sum())
        if exact:
            axis.text(0.02, 0.02, f"exactly 0: {exact} case(s)", transform=axis.transAxes, fontsize=8)
        axis.set_title(check + (f" (tolerance {tolerance:g})" if tolerance > 0 else ""), fontsize=8)
        axis.set_ylabel(ylabels[check])
        decade_ticks(axis)
        axis.set_xticks(range(len(cases)), names, rotation=60, ha="right")
        axis.grid(False, axis="x")
    for axis in axes[0]:
        axis.set_xlabel("discretization")
    handles = [Line2D([], [], linestyle="none", marker=backend_marker(b), color=palette[b]) for b in backends]
    figure.legend(
        handles,
        [BACKENDS[b].label for b in backends],
        loc="outside upper center",
        ncols=len(backends),
        frameon=False,
    )
    return save(figure, folder, stem)


@_styled
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
    palette = dict(zip(cases, colours(len(cases)), strict=True))
    line_widths = dict(zip(cases, widths(len(cases), thickest=2.6), strict=True))
    values = tracked.drop_duplicates("point").set_index("point")[parameter].sort_index()
    figure, axis = plt.subplots(figsize=(COLUMN_WIDTH + 0.5, 3.6), layout="constrained")
    handles, labels = [], []
    for case in cases:
        mine = tracked[tracked["case"] == case]
        first = mine.iloc[0]
        style, marker = backend_style(first["backend"]), backend_marker(first["backend"])
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
        decade_ticks(axis)
    axis.set_xlabel(xlabel)
    axis.set_ylabel("natural frequency ω [rad/s]")
    title = "tracked modes (number: at the first point)"
    axis.set_title(title + ("\nrigid-body modes (ω = 0) not drawn" if rigid_left_out else ""), fontsize=8)
    figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return save(figure, folder, stem)


@_styled
def root_history_plot(
    histories: pd.DataFrame,
    folder: Path,
    stem: str = "roots",
    styles: dict | None = None,
    modes: int = 4,
) -> list[str]:
    """Roots β_k(t) of a clamped–mass frequency equation along maneuvers (seed 002 Fig. 8):
    one panel per mode (the ``modes`` lowest; the roots of different modes differ by more
    than each moves), colour by mode, line style by direction (``styles``: direction → line
    style; default: :data:`LINE_STYLES` in order of appearance). ``histories`` has columns
    direction, time [s], mode, beta (dimensionless β_k = β·l), for one case."""
    directions = list(dict.fromkeys(histories["direction"]))
    styles = styles or {}
    style_of = {
        direction: styles.get(direction, LINE_STYLES[i % len(LINE_STYLES)])
        for i, direction in enumerate(directions)
    }
    shown = sorted(histories["mode"].unique())[:modes]
    palette = dict(zip(shown, colours(len(shown)), strict=True))
    figure, axes = plt.subplots(
        len(shown),
        1,
        figsize=(COLUMN_WIDTH, 1.35 * len(shown) + 0.7),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    for axis, mode in zip(axes[:, 0], shown, strict=True):
        for direction in directions:
            line = histories[(histories["mode"] == mode) & (histories["direction"] == direction)]
            line = line.sort_values("time")
            axis.plot(line["time"], line["beta"], linestyle=style_of[direction], color=palette[mode])
        axis.set_ylabel(rf"$\beta_{{{mode}}}$ [–]")
        axis.yaxis.set_major_locator(MaxNLocator(4))
    axes[-1, 0].set_xlabel("time [s]")
    figure.legend(
        [Line2D([], [], color="0.25", linestyle=style_of[d]) for d in directions],
        directions,
        loc="outside upper center",
        ncols=len(directions),
        frameon=False,
    )
    return save(figure, folder, stem)


@_styled
def tradeoff_plot(cases: pd.DataFrame, folder: Path) -> list[str]:
    """Worst |relative error| of each case against its coordinates (left) and its wall time
    (right), log-log, one line per basis (backend and shape), in size order."""
    figure, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 4.2), sharey=True, layout="constrained")
    bases = list(dict.fromkeys(zip(cases["backend"], cases["shape"], strict=True)))
    palette = colours(len(bases))
    for index, (backend, shape) in enumerate(bases):
        group = cases[(cases["backend"] == backend) & (cases["shape"] == shape)].sort_values("n_dof")
        style = dict(
            color=palette[index],
            linestyle=LINE_STYLES[index % len(LINE_STYLES)],
            marker=MARKERS[index % len(MARKERS)],
            ms=4.0,
            label=f"{BACKENDS[backend].label} {shape}",
        )
        axes[0].loglog(group["n_dof"], group["worst"], **style)
        axes[1].loglog(group["wall_time_s"], group["worst"], **style)
    axes[0].set_xlabel("number of coordinates (n_dof)")
    axes[1].set_xlabel("wall time of the case [s]")
    axes[0].set_ylabel("worst |relative error| of ω [–]")
    for axis in axes:
        decade_ticks(axis)
    figure.legend(
        *axes[0].get_legend_handles_labels(),
        loc="outside lower center",
        ncol=min(len(bases), 3),
        frameon=False,
    )
    return save(figure, folder, "cost_to_accuracy")
