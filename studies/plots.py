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

This module holds the conventions and what every figure shares (style, colours, line
styles, axes, :func:`save`) and :func:`time_plot`, the time histories two kinds draw. A
kind's own figures live beside it (``studies/kinds/<kind>_figures.py``, or ``figures.py`` of
a kind's package); each ``*_plot`` function builds one figure from a tidy frame and returns
the names of the files :func:`save` wrote. Figures call ``plots.save`` through this module,
so that one wrapper (``tests/test_figures.py``) sees every figure.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window
import matplotlib.colors
import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.lines import Line2D
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogFormatterSciNotation,
    LogLocator,
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


def styled(function):
    """Run ``function`` under :data:`STYLE`."""

    @functools.wraps(function)
    def styled(*args, **kwargs):
        with plt.rc_context(STYLE):
            return function(*args, **kwargs)

    return styled


#: Resolution of the PNG files [dots per inch].
DPI = 200


def save(figure, folder: Path, stem: str) -> list[str]:
    """Write ``stem``.png and ``stem``.pdf into ``folder``, cropped to the figure's tight
    bounding box (padded by ``savefig.pad_inches``); returns the file names.

    The figure is laid out (its layout engine run) and drawn once, at the PNG's resolution, and
    its tight box measured on that drawing; the PNG is the drawing cropped to the box, the PDF
    the figure drawn as laid out, in one pass. (``savefig`` with ``bbox_inches="tight"`` lays
    the figure out, measures it and draws it again for every file: the text layout, most of
    the cost of a figure, four times over instead of twice.)"""
    figure.set_dpi(DPI)
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()  # lays out (the layout engine), then renders at DPI
    box = figure.get_tightbbox(canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    figure.set_layout_engine(None)  # laid out: keep the positions in every file
    png, pdf = f"{stem}.png", f"{stem}.pdf"
    _write_cropped(figure, box, folder / png)
    figure.savefig(folder / pdf, dpi=DPI, bbox_inches=box, metadata={"CreationDate": None})
    plt.close(figure)
    return [png, pdf]


def _write_cropped(figure, box, path: Path) -> None:
    """Write the figure's drawn canvas cropped to ``box`` [in] as a PNG at :data:`DPI`; what of
    ``box`` lies outside the figure (the padding around a figure laid out to its edges) takes
    the figure's face colour, as ``savefig`` gives it."""
    width, height = figure.canvas.get_width_height()
    x0, y0 = round(box.x0 * DPI), round(box.y0 * DPI)  # the size as savefig's: truncated
    x1, y1 = x0 + int(box.width * DPI), y0 + int(box.height * DPI)
    face = np.round(np.array(matplotlib.colors.to_rgba(figure.get_facecolor())) * 255).astype(np.uint8)
    pixels = np.empty((y1 - y0, x1 - x0, 4), np.uint8)
    pixels[...] = face
    drawn = np.asarray(figure.canvas.buffer_rgba())
    top, bottom, left, right = max(y1 - height, 0), max(-y0, 0), max(-x0, 0), max(x1 - width, 0)
    pixels[top : y1 - y0 - bottom, left : x1 - x0 - right] = drawn[
        height - min(y1, height) : height - max(y0, 0), max(x0, 0) : min(x1, width)
    ]
    matplotlib.image.imsave(path, pixels, format="png", origin="upper", dpi=DPI)


def panel_grid(rows: int, columns: int, size: tuple[float, float], **share):
    """A figure of ``rows`` × ``columns`` panels, ``size`` (width, height) [in], constrained
    layout; ``axes`` is always 2-D (``axes[row, column]``). ``share``: ``sharex``, ``sharey``
    as for ``plt.subplots``. Returns (figure, axes)."""
    return plt.subplots(rows, columns, figsize=size, squeeze=False, layout="constrained", **share)


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


def case_styles(cases: list, thickest: float = 3.0) -> tuple[dict, dict]:
    """(colour, line width) of each of ``cases``, by case: :func:`colours` and :func:`widths`."""
    return (
        dict(zip(cases, colours(len(cases)), strict=True)),
        dict(zip(cases, widths(len(cases), thickest), strict=True)),
    )


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


def guide(axis, value: float, which: str = "y") -> None:
    """A guide line (a zero line, a link boundary) at ``value``: thin, black, gid :data:`GUIDE`."""
    line = (axis.axhline if which == "y" else axis.axvline)(value, color="k", lw=0.6)
    line.set_gid(GUIDE)


def figure_legend(figure, handles, labels, where: str = "upper", columns: int | None = None) -> None:
    """The figure's legend outside its panels, centred above (``where="upper"``) or below
    (``"lower"``), ``columns`` entries a row (default: all in one row), without a frame."""
    figure.legend(
        handles,
        labels,
        loc=f"outside {where} center",
        ncols=len(labels) if columns is None else columns,
        frameon=False,
    )


# -- figures shared by kinds -------------------------------------------------------


@styled
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
    groups = _line_groups(results, [c for c in (by or ["case"]) if c in results and c != split])
    splits = list(dict.fromkeys(results[split])) if split else [None]
    figure, axes = panel_grid(
        len(columns), len(splits), (PAGE_WIDTH, panel_height * len(columns) + 0.5), sharex=True
    )
    for row, (group_columns, ylabel) in enumerate(zip(columns, ylabels, strict=True)):
        present = [c for c in group_columns if c in results and results[c].notna().any()]
        largest = {c: float(np.nanmax(np.abs(results[c].to_numpy(float)))) for c in present}
        panel_largest = max(largest.values(), default=0.0)
        drawn = [c for c in present if largest[c] > ZERO_FRACTION * panel_largest and largest[c] > 0]
        palette = dict(zip(drawn, colours(len(drawn)), strict=True))
        for column_index, value in enumerate(splits):
            inside = np.ones(len(results), bool) if split is None else (results[split] == value).to_numpy()
            _history_panel(axes[row, column_index], results, inside, groups, palette)
            if row == 0 and value is not None:
                axes[row, column_index].set_title(str(value))
        axes[row, 0].set_ylabel(ylabel)
        _quantity_legend(axes[row, -1], palette, [c for c in present if c not in drawn])
    for axis in axes[-1]:
        axis.set_xlabel("time [s]")
    figure_legend(
        figure,
        [
            Line2D([], [], color="0.25", linestyle=LINE_STYLES[i % len(LINE_STYLES)])
            for i in range(len(groups))
        ],
        [label for _, label in groups],
        columns=2 if len(groups) == 4 else min(len(groups), 3),
    )
    return save(figure, folder, stem)


def _line_groups(results: pd.DataFrame, by: list[str]) -> list[tuple[np.ndarray, str]]:
    """(row mask, legend label) of each group of the ``by`` columns, in order of appearance;
    a label is the discretization's and the values of the ``by`` columns that vary (not case)."""
    shown = [c for c in by if c != "case" and results[c].nunique() > 1]
    groups = []
    for key in results[by].drop_duplicates().itertuples(index=False, name=None):
        mask = np.logical_and.reduce([results[c] == v for c, v in zip(by, key, strict=True)])
        first = results[mask].iloc[0]
        groups.append((mask, " ".join([label_of(first), *(str(first[c]) for c in shown)])))
    return groups


def _history_panel(axis, results: pd.DataFrame, inside: np.ndarray, groups, palette: dict) -> None:
    """One panel of :func:`time_plot`: every column of ``palette`` (its colour) of the rows
    ``inside`` against time, one line style per group (thick to thin); a symmetric log axis
    when the largest value exceeds :data:`SPIKE_RATIO` times the 95th percentile."""
    line_widths = widths(len(groups))
    for index, (mask, _) in enumerate(groups):
        frame = results[mask & inside]
        for column, colour in palette.items():
            axis.plot(
                frame["time"],
                frame[column],
                color=colour,
                linestyle=LINE_STYLES[index % len(LINE_STYLES)],
                lw=line_widths[index],
            )
    if not palette:
        return
    values = results.loc[inside, list(palette)].to_numpy(float)
    magnitudes = np.abs(values[np.isfinite(values)])
    typical = np.percentile(magnitudes, 95) if magnitudes.size else 0.0
    if typical > 0 and magnitudes.max() > SPIKE_RATIO * typical:
        symlog_axis(axis, values.ravel(), "y", depth=int(np.ceil(np.log10(magnitudes.max() / typical))))


def _quantity_legend(axis, palette: dict, zero: list[str]) -> None:
    """The legend of a row of panels, right of ``axis``: the colour of each drawn column, and
    an entry without a line for each column that is zero throughout (none for one column)."""
    if len(palette) < 2 and not zero:
        return
    handles = [Line2D([], [], color=colour) for colour in palette.values()]
    handles += [Line2D([], [], linestyle="none")] * len(zero)
    labels = [quantity_label(c) for c in palette] + [f"{quantity_label(c)} ≡ 0" for c in zero]
    axis.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
