"""Time histories of several runs overlaid: the figure the simulation and stability kinds
share (conventions: :mod:`studies.plots`).

How runs and quantities are told apart:

* up to :data:`studies.plots.LINE_STYLES` runs: colour tells the quantity of a panel (a joint,
  a link), line style the run (a case and a solver), drawn from thick to thin;
* more runs: one quantity a row of panels; colour tells the run, line style the value of the
  ``style_by`` column (geometric stiffening, say), so no two runs share a colour and a line
  style (a legend of colours and a legend of line styles);
* with a ``reference`` run, a column of difference panels (run − reference at the times both
  have) shows what coinciding curves hide.

What does not fit a panel is clipped, never silently: a run whose largest value in a panel
exceeds :data:`DIVERGENT_RATIO` times the next smaller run's (a diverging run) is off scale;
a history whose largest value exceeds :data:`SPIKE_RATIO` times its 95th percentile at a few
samples (a start-up transient, at most :data:`SPIKE_SHARE` of them) is clipped to the values
under that bound; a row whose histories alternate from sample to sample (:data:`JITTER_LIMIT`:
the output times do not resolve them) is not drawn. The panel says so in a note, and the
caller gets the same sentences (``notes``) for its summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from studies import plots
from studies.discretizations import label_of

#: A run whose largest |value| in a panel exceeds this multiple of the next smaller run's is off
#: scale (a diverging run); the panel is scaled to the others (the runs off scale are at most half).
DIVERGENT_RATIO = 10.0
#: A panel whose largest |value| exceeds this multiple of its 95th percentile, at no more than
#: :data:`SPIKE_SHARE` of its samples, is clipped to the values under this multiple (a start-up
#: transient of a few samples would flatten the rest of the history; a transient that lasts is
#: the history and stays).
SPIKE_RATIO = 10.0
SPIKE_SHARE = 0.01
#: Line width of the differences to the reference [pt] (they oscillate: thin lines stay apart).
DIFFERENCE_WIDTH = 0.8
#: A difference to the reference below this fraction of its panel's largest difference is
#: round-off: not drawn, but named in the panel's note.
DIFFERENCE_FLOOR = 1e-9
#: A row of panels whose histories alternate from sample to sample by more than this share of
#: their span (:func:`_jitter`; measured: the space-arm maneuver's joint accelerations at 201
#: output times 0.10–0.15, every other history of the shipped simulations at most 0.018) is
#: under-resolved by the output times and not drawn: lines between its samples draw noise.
JITTER_LIMIT = 0.05
#: The text of a row of panels that is not drawn for :data:`JITTER_LIMIT`.
UNRESOLVED = "not drawn: oscillates faster\nthan the output times resolve"
#: Margin around the values a clipped panel holds [fraction of their span].
MARGIN = 0.05


@dataclass(frozen=True)
class Run:
    """One run of the figure: its rows, its legend label, its colour and line style (a colour
    of None: the quantity's colour)."""

    mask: np.ndarray
    label: str
    colour: object
    style: object
    width: float


@plots.styled
def time_plot(
    results: pd.DataFrame,
    columns: list[list[str]],
    ylabels: list[str],
    folder: Path,
    stem: str,
    by: list[str] | None = None,
    split: str | None = None,
    panel_height: float = 1.75,
    style_by: str | None = None,
    reference: np.ndarray | None = None,
    notes: dict | None = None,
) -> list[str]:
    """Time histories of several runs overlaid: one row of panels per group of ``columns``
    (labelled by ``ylabels``, units included), one column of panels per value of ``split``
    (a direction, say), and with ``reference`` (the row mask of one run) a last column of
    differences to it. Runs are the groups of the ``by`` columns (default: case); how they and
    the quantities are encoded and what is clipped: the module docstring. A column that is zero
    throughout is not drawn. ``panel_height`` [in] per row of panels.

    ``notes``, a dict, receives ``"encoding"`` (e.g. "colour: joint or link; line style: case")
    and ``"panels"``: a sentence for every clipped panel (the summary states them)."""
    by = [c for c in (by or ["case"]) if c in results and c != split]
    many = len(results[by].drop_duplicates()) > len(plots.LINE_STYLES)
    if many:
        columns, ylabels = _one_quantity_a_row(results, columns, ylabels)
    runs, legend, encoding = _runs(results, by, style_by if many else None, many)
    splits = list(dict.fromkeys(results[split])) if split else [None]
    compared = _reference_index(runs, reference) if split is None and not many else None
    figure, axes = plots.panel_grid(
        len(columns),
        len(splits) + (compared is not None),
        (plots.PAGE_WIDTH, panel_height * len(columns) + 0.5),
        sharex=True,
    )
    said = []
    for row, (group_columns, ylabel) in enumerate(zip(columns, ylabels, strict=True)):
        said += _draw_row(axes[row], results, group_columns, ylabel, runs, split, splits, compared, row == 0)
        axes[row, 0].set_ylabel(ylabel)
    for axis in axes[-1]:
        axis.set_xlabel("time [s]")
    handles, labels = legend
    plots.figure_legend(figure, handles, labels, columns=2 if len(labels) == 4 else min(len(labels), 3))
    if notes is not None:
        notes["encoding"] = encoding
        notes["compared"] = compared is not None
        notes["panels"] = said
    return plots.save(figure, folder, stem)


def _draw_row(axes, results, group_columns, ylabel, runs, split, splits, compared, top: bool) -> list[str]:
    """One row of panels: the history panels of each value of ``split``, the difference panel
    (``compared``: the reference run's index, or None) and the quantity legend; returns the
    summary's sentences on what the row's panels clipped."""
    present = [c for c in group_columns if c in results and results[c].notna().any()]
    largest = {c: float(np.nanmax(np.abs(results[c].to_numpy(float)))) for c in present}
    panel_largest = max(largest.values(), default=0.0)
    drawn = [c for c in present if largest[c] > plots.ZERO_FRACTION * panel_largest and largest[c] > 0]
    palette = dict(zip(drawn, plots.colours(len(drawn)), strict=True))
    unit = _unit(ylabel)
    jitter = _jitter(results, runs, drawn)
    if jitter > JITTER_LIMIT:  # lines between alternating samples draw noise: none drawn
        for axis in axes:
            axis.set_yticks([])
            axis.text(0.5, 0.5, UNRESOLVED, ha="center", va="center", transform=axis.transAxes, fontsize=8)
        if compared is not None:
            axes[-1].set_ylabel(f"difference [{unit}]" if unit else "difference")
        name = _name(ylabel)
        return [
            f"{name}: not drawn: the histories oscillate faster than the output times resolve "
            f"(successive samples alternate by {jitter:.0%} of their range, typically); "
            "they are in results.csv, and more output_points resolve them."
        ]
    said = []
    for column_index, value in enumerate(splits):
        inside = np.ones(len(results), bool) if split is None else (results[split] == value).to_numpy()
        clipped = _history_panel(axes[column_index], results, inside, runs, palette)
        _mark(axes[column_index], clipped, unit)
        said += _say(clipped, ylabel, value)
        if top and value is not None:
            axes[column_index].set_title(str(value))
    if compared is not None:
        clipped = _difference_panel(axes[-1], results, runs, compared, palette)
        _mark(axes[-1], clipped, unit)
        axes[-1].set_ylabel(f"difference [{unit}]" if unit else "difference")
        said += _say(clipped, f"difference of {ylabel}", None)
        if top:
            axes[-1].set_title(f"run − {runs[compared].label}", fontsize=8)
    if runs[0].colour is None:  # colour tells the quantity
        _quantity_legend(axes[-1], palette, [c for c in present if c not in drawn])
    return said


def _jitter(results: pd.DataFrame, runs: list[Run], columns: list[str]) -> float:
    """The median over runs and ``columns`` of half the median |second difference| of a history
    over its 1–99th percentile span: about 0 for a history the output times resolve, the share
    of the span by which successive samples alternate for one they do not."""
    ratios = []
    for run in runs:
        frame = results[run.mask]
        for column in columns:
            values = frame[column].to_numpy(float)
            values = values[np.isfinite(values)]
            if values.size < 3:
                continue
            low, high = np.percentile(values, [1, 99])
            if high > low:
                ratios.append(0.5 * float(np.median(np.abs(np.diff(values, 2)))) / (high - low))
    return float(np.median(ratios)) if ratios else 0.0


def _one_quantity_a_row(results: pd.DataFrame, columns, ylabels) -> tuple[list, list]:
    """Every group of columns split into one row per column present and not zero throughout
    (its quantity named in the row's label when the group has several)."""
    rows, labels = [], []
    for group, ylabel in zip(columns, ylabels, strict=True):
        present = [c for c in group if c in results and results[c].fillna(0.0).abs().max() > 0] or group[:1]
        for column in present:
            rows.append([column])
            labels.append(ylabel if len(present) == 1 else f"{plots.quantity_label(column)}\n{ylabel}")
    return rows, labels


def _runs(results: pd.DataFrame, by: list[str], style_by: str | None, many: bool):
    """(runs, (legend handles, labels), encoding sentence) of the groups of the ``by`` columns in
    order of appearance; a label is the discretization's and the values of the ``by`` columns
    that vary (not case)."""
    shown = [c for c in by if c != "case" and results[c].nunique() > 1]
    keys = list(results[by].drop_duplicates().itertuples(index=False, name=None))
    masks = [np.logical_and.reduce([results[c] == v for c, v in zip(by, key, strict=True)]) for key in keys]
    firsts = [results[mask].iloc[0] for mask in masks]
    labels = [" ".join([label_of(first), *(str(first[c]) for c in shown)]) for first in firsts]
    if not many:
        line_widths = plots.widths(len(keys), thickest=2.2)
        runs = [
            Run(mask, label, None, plots.LINE_STYLES[i % len(plots.LINE_STYLES)], line_widths[i])
            for i, (mask, label) in enumerate(zip(masks, labels, strict=True))
        ]
        handles = [Line2D([], [], color="0.25", linestyle=run.style) for run in runs]
        kind = "case" + (" and " + " and ".join(shown) if shown else "")
        return runs, (handles, labels), f"colour: joint or link; line style: {kind}"
    styled = style_by is not None and style_by in results and results[style_by].nunique() > 1
    values = list(dict.fromkeys(results[style_by])) if styled else [None]
    styles = {v: plots.LINE_STYLES[i % len(plots.LINE_STYLES)] for i, v in enumerate(values)}

    def colour_label(first) -> str:
        plain = first.drop(labels=[style_by]) if styled else first
        return " ".join([label_of(plain), *(str(first[c]) for c in shown)])

    colour_labels = list(dict.fromkeys(colour_label(first) for first in firsts))
    palette = dict(zip(colour_labels, plots.colours(len(colour_labels)), strict=True))
    line_widths = plots.widths(len(keys), thickest=2.6)  # coinciding runs: thick to thin
    runs = [
        Run(mask, label, palette[colour_label(first)], styles[first[style_by] if styled else None], width)
        for mask, label, first, width in zip(masks, labels, firsts, line_widths, strict=True)
    ]
    handles = [Line2D([], [], color=colour) for colour in palette.values()]
    names = list(colour_labels)
    if styled:
        handles += [Line2D([], [], color="0.25", linestyle=styles[v]) for v in values]
        names += [_style_name(style_by, v) for v in values]
    encoding = "colour: case" + (f"; line style: {style_by.replace('_', ' ')}" if styled else "")
    return runs, (handles, names), encoding


def _style_name(column: str, value) -> str:
    """The legend text of a value of the line-style column: "geometric stiffening on"."""
    text = (
        {True: "on", False: "off"}.get(value, str(value))
        if isinstance(value, bool | np.bool_)
        else str(value)
    )
    return f"{column.replace('_', ' ')} {text}"


def _reference_index(runs: list[Run], reference: np.ndarray | None) -> int | None:
    """The index of the run whose rows are ``reference`` (None without one, or with one run)."""
    if reference is None or len(runs) < 2:
        return None
    for index, run in enumerate(runs):
        if np.array_equal(run.mask, np.asarray(reference, bool)):
            return index
    raise ValueError("reference: the rows of one run (a case and a solver) expected")


def _history_panel(axis, results: pd.DataFrame, inside: np.ndarray, runs: list[Run], palette: dict) -> dict:
    """One panel: every column of ``palette`` of each run's rows ``inside`` against time (the
    quantity's colour, or the run's); clipped as the module docstring says. Returns what was clipped."""
    maxima, series = {}, []
    for index, run in enumerate(runs):
        frame = results[run.mask & inside]
        for column, colour in palette.items():
            values = frame[column].to_numpy(float)
            series.append((index, frame["time"].to_numpy(float), values))
            axis.plot(
                frame["time"],
                values,
                color=colour if run.colour is None else run.colour,
                linestyle=run.style,
                lw=run.width,
            )
            finite = np.abs(values[np.isfinite(values)])
            if finite.size:
                maxima[index] = max(maxima.get(index, 0.0), float(finite.max()))
    return _clip(axis, series, _off_scale(maxima), runs)


def _difference_panel(axis, results: pd.DataFrame, runs: list[Run], reference: int, palette: dict) -> dict:
    """Each run's columns of ``palette`` minus the reference run's, at the times both have. A
    difference within :data:`DIFFERENCE_FLOOR` of the panel's largest of zero (the run equals the
    reference) or of a difference drawn before (the run equals that run: a second solver) is not
    drawn, but named in the notes."""
    base = results.loc[runs[reference].mask, ["time", *palette]]
    pieces = []
    for index, run in enumerate(runs):
        if index == reference:
            continue
        merged = results.loc[run.mask, ["time", *palette]].merge(base, on="time", suffixes=("", "_ref"))
        for column in palette:
            difference = (merged[column] - merged[f"{column}_ref"]).to_numpy(float)
            pieces.append((index, column, merged["time"].to_numpy(float), difference))
    largest = max((float(np.nanmax(np.abs(d))) for *_, d in pieces if np.isfinite(d).any()), default=0.0)
    tolerance = DIFFERENCE_FLOOR * largest
    series, twins = [], {}
    for index, column, time, difference in pieces:
        twin = _twin(runs, reference, series, column, time, difference, tolerance)
        if twin is not None:
            twins.setdefault(runs[index].label, twin)
            continue
        run = runs[index]
        axis.plot(time, difference, color=palette[column], linestyle=run.style, lw=DIFFERENCE_WIDTH)
        series.append((index, time, difference, column))
    plots.guide(axis, 0.0)
    clipped = _clip(axis, [piece[:3] for piece in series], set(), runs)
    if twins:
        clipped["same"] = (twins, tolerance)
    return clipped


def _twin(runs, reference, series, column, time, difference, tolerance) -> str | None:
    """The label of the run whose difference curve ``difference`` repeats to ``tolerance``: the
    reference's (zero) or one drawn before (``series``); None if none."""
    finite = difference[np.isfinite(difference)]
    if finite.size == 0 or np.max(np.abs(finite)) <= tolerance:
        return runs[reference].label
    for index, other_time, other, other_column in series:
        if other_column == column and np.array_equal(other_time, time):
            if np.nanmax(np.abs(difference - other)) <= tolerance:
                return runs[index].label
    return None


def _off_scale(maxima: dict[int, float]) -> set[int]:
    """The runs above the widest gap of the sorted largest values when it exceeds
    :data:`DIVERGENT_RATIO` and they are at most half of the runs."""
    ordered = sorted((value, index) for index, value in maxima.items() if value > 0)
    best, where = DIVERGENT_RATIO, None
    for position in range(1, len(ordered)):
        ratio = ordered[position][0] / ordered[position - 1][0]
        if ratio > best and len(ordered) - position <= position:
            best, where = ratio, position
    return set() if where is None else {index for _, index in ordered[where:]}


def _clip(axis, series: list, off: set[int], runs: list[Run]) -> dict:
    """Scale ``axis`` to the ``series`` (run index, time, values) of the runs not ``off`` scale,
    and clip a start-up transient (:data:`SPIKE_RATIO`); notes in the panel; returns
    ``{"off": (labels, largest), "spike": (peak, time)}`` for what was clipped."""
    kept = [(t, v) for index, t, v in series if index not in off]
    if not kept:
        return {}
    times = np.concatenate([t for t, _ in kept])
    values = np.concatenate([v for _, v in kept])
    good = np.isfinite(values)
    times, values = times[good], values[good]
    if values.size == 0:
        return {}
    clipped = {}
    if off:
        largest = max(float(np.nanmax(np.abs(v))) for index, _, v in series if index in off)
        labels = [runs[index].label for index in sorted(off)]
        clipped["off"] = (labels, largest)
    typical = float(np.percentile(np.abs(values), 95))
    peak = int(np.argmax(np.abs(values)))
    shown = np.ones(values.size, bool)
    outside = np.abs(values) > SPIKE_RATIO * typical
    if typical > 0 and outside.any() and outside.mean() <= SPIKE_SHARE:
        shown = ~outside
        clipped["spike"] = (float(values[peak]), float(times[peak]))
    if clipped:
        low, high = float(values[shown].min()), float(values[shown].max())
        pad = MARGIN * (high - low) if high > low else MARGIN * max(abs(high), 1e-300)
        axis.set_ylim(low - pad, high + pad)
    return clipped


def _mark(axis, clipped: dict, unit: str) -> None:
    """The notes of a panel on what :func:`_clip` and :func:`_difference_panel` clipped or left out."""
    unit = f" {unit}" if unit else ""
    if "off" in clipped:
        labels, largest = clipped["off"]
        runs = f"{len(labels)} run{'s' if len(labels) > 1 else ''}"
        _note(axis, f"off scale (clipped): {runs}, |value| up to {largest:.3g}{unit}")
    if "spike" in clipped:
        peak, time = clipped["spike"]
        _note(axis, f"clipped: peak {peak:.3g}{unit} at t = {time:.3g} s")
    if "same" in clipped:
        twins, tolerance = clipped["same"]
        count = f"{len(twins)} run{'s' if len(twins) > 1 else ''}"
        _note(axis, f"{count} ≡ another, not drawn" if tolerance else "no difference")


def _note(axis, text: str) -> None:
    """A note inside the top right corner of ``axis`` (what the panel clipped or left out)."""
    previous = sum(1 for t in axis.texts if t.get_gid() == "note")
    note = axis.text(
        0.99,
        0.97 - 0.16 * previous,
        text,
        transform=axis.transAxes,
        va="top",
        ha="right",
        fontsize=8,
        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.0},
    )
    note.set_gid("note")


def _unit(label: str) -> str:
    """The unit in the last brackets of an axis label ("" without)."""
    found = re.findall(r"\[([^\]]+)\]", label)
    return found[-1] if found else ""


def _name(ylabel: str) -> str:
    """An axis label without its unit, on one line, its formulas in plain text (the summary's
    name of a row): "$P - P_\\mathrm{rigid}$ [W]" → "P - P_rigid"."""
    name = re.sub(r"\s*\[[^\]]*\]", "", ylabel).replace("\n", " ").strip()
    for pattern, plain in (
        (r"\\frac\{1\}\{2\}", "½"),
        (r"\\dot\{(\w)\}", "\\1\u0307"),
        (r"\\(mathrm|mathit)\{([^}]*)\}", r"\2"),
        (r"\\[,;!]", " "),
        (r"\\(\w+)", r"\1"),
        (r"[${}]", ""),
    ):
        name = re.sub(pattern, plain, name)
    return re.sub(r"\s+", " ", name).strip() or ylabel.replace("\n", " ")


def _say(clipped: dict, ylabel: str, value) -> list[str]:
    """The summary's sentences on what a panel clipped."""
    where = _name(ylabel) + (f" ({value})" if value is not None else "")
    unit = _unit(ylabel)
    sentences = []
    if "off" in clipped:
        labels, largest = clipped["off"]
        sentences.append(
            f"{where}: scaled to the bounded runs; off scale (clipped): {', '.join(labels)} "
            f"(|value| up to {largest:.3g} {unit})."
        )
    if "spike" in clipped:
        peak, time = clipped["spike"]
        sentences.append(
            f"{where}: clipped at a transient (peak {peak:.3g} {unit} at t = {time:.3g} s), "
            f"the axis holds the values within {SPIKE_RATIO:g} × their 95th percentile."
        )
    if "same" in clipped:
        twins, tolerance = clipped["same"]
        pairs = ", ".join(f"{label} ≡ {twin}" for label, twin in twins.items())
        within = f"within {tolerance:.1g} {unit}" if tolerance else "exactly"
        sentences.append(f"{where}: not drawn, equal {within}: {pairs}.")
    return sentences


def _quantity_legend(axis, palette: dict, zero: list[str]) -> None:
    """The legend of a row of panels, right of ``axis``: the colour of each drawn column, and
    an entry without a line for each column that is zero throughout (none for one column)."""
    if len(palette) < 2 and not zero:
        return
    handles = [Line2D([], [], color=colour) for colour in palette.values()]
    handles += [Line2D([], [], linestyle="none")] * len(zero)
    labels = [plots.quantity_label(c) for c in palette] + [f"{plots.quantity_label(c)} ≡ 0" for c in zero]
    axis.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
