"""Plots for reports (matplotlib, written as PNG, and as PDF with the config's ``report.pdf``).

Every figure follows the same conventions, so a reader learns them once:

* every axis names its quantity with the unit in brackets ([rad], [N·m], [m],
  [rad/s], [1/s], [–] for a ratio); a count on an x axis reads "number of …";
  every y axis has brackets (a normalized mode shape is in [1/√kg]);
* the backend of a discretization is told by line style (and marker), the
  quantity (a joint, a mode, a case of one backend) by colour; within a figure a
  colour or a line style means the same in every panel and no two things share a
  colour; no two legend entries share a (colour, line style) pair;
* curves that may coincide (AMM and FEM, two solvers) are drawn from thick to
  thin, so a curve on top of another leaves both visible;
* text is at least 8 pt and figures are 3.5 in (one column) or 7 in (two
  columns) wide, so nothing shrinks below 8 pt in a paper;
* a quantity that is identically zero is not drawn (the panel says so);
* log axes are labelled at decades or at the data's own sizes, never at
  crowded minor ticks (major and minor labels never overlap); values spanning zero
  and many decades get a symmetric log axis whose limits hold every point, and a
  summary that says "symmetric log" says it of a panel that has one;
* a run that diverges, or a start-up transient, does not flatten the rest: the
  panel is clipped and says so in a note, and so does the summary;
* times measured once per case are points (markers without connecting lines):
  a line between noisy measurements draws a trend that is not there;
* output file names are ASCII letters, digits and ``._-`` only;
* guide lines (zero lines, link boundaries) carry the gid :data:`GUIDE`.

This module holds the conventions and what every figure shares (style, colours, line
styles, axes, :func:`save`); :mod:`studies.time_figures` the time histories two kinds draw. A
kind's own figures live beside it (``studies/kinds/<kind>_figures.py``, or ``figures.py`` of
a kind's package); each ``*_plot`` function builds one figure from a tidy frame and returns
the names of the files :func:`save` wrote. Figures call ``plots.save`` through this module,
so that one wrapper (``tests/test_figures.py``) sees every figure. Figures are made by
:func:`fixed_grid` and :func:`panel_grid` as plain ``matplotlib.figure.Figure`` objects drawn on
the Agg canvas, without pyplot (its import, its backend switch and its registry of open figures
serve windows, which reports never open).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
import sys
import weakref
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window
import matplotlib.colors
import matplotlib.image
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    Locator,
    LogLocator,
    NullFormatter,
    NullLocator,
)

from studies.discretizations import BACKENDS

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


def styled(function):
    """Run ``function`` under :data:`STYLE`."""

    @functools.wraps(function)
    def styled(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return function(*args, **kwargs)

    return styled


#: Resolution of the PNG files [dots per inch].
DPI = 200


#: Whether :func:`save` writes PDFs too (the config's ``report.pdf``; :func:`pdf_output`).
_PDF: contextvars.ContextVar[bool] = contextvars.ContextVar("pdf", default=False)


@contextlib.contextmanager
def pdf_output(enabled: bool):
    """Within it, :func:`save` writes each figure's PDF beside its PNG (``enabled``) or not."""
    token = _PDF.set(bool(enabled))
    try:
        yield
    finally:
        _PDF.reset(token)


def save(figure, folder: Path, stem: str) -> list[str]:
    """Write ``stem``.png (and, within :func:`pdf_output` on, ``stem``.pdf) into ``folder``,
    cropped to the figure's tight bounding box (padded by ``savefig.pad_inches``); returns the
    file names [PNG, PDF], the PDF's whether written or not (a report links it:
    :func:`studies.reports.write_reports` drops the links to PDFs not written).

    The figure is laid out (its layout engine run) and drawn once, at the PNG's resolution, and
    its tight box measured on that drawing; the PNG is the drawing cropped to the box, the PDF
    the figure drawn as laid out, in one pass. (``savefig`` with ``bbox_inches="tight"`` lays
    the figure out, measures it and draws it again for every file: the text layout, most of
    the cost of a figure, four times over instead of twice.)"""
    figure.set_dpi(DPI)
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()  # lays out (the layout engine), then renders at DPI
    box = figure.get_tightbbox(canvas.get_renderer())
    if figure in _FIXED and not _inside(box, figure.bbox_inches):
        figure.set_layout_engine("constrained")  # fixed margins too small: lay out after all
        canvas.draw()
        box = figure.get_tightbbox(canvas.get_renderer())
    box = box.padded(matplotlib.rcParams["savefig.pad_inches"])
    figure.set_layout_engine(None)  # laid out: keep the positions in every file
    png, pdf = f"{stem}.png", f"{stem}.pdf"
    _write_cropped(figure, box, folder / png)
    if _PDF.get():
        figure.savefig(folder / pdf, dpi=DPI, bbox_inches=box, metadata={"CreationDate": None})
    pyplot = sys.modules.get("matplotlib.pyplot")  # loaded only by a caller that made figures in it
    if pyplot is not None:
        pyplot.close(figure)  # out of pyplot's registry, if there (the figures here never are)
    return [png, pdf]


def _inside(box, frame, tolerance: float = 1e-3) -> bool:
    """Whether ``box`` lies within ``frame`` (both [in], to ``tolerance``)."""
    return (
        box.x0 >= frame.x0 - tolerance
        and box.y0 >= frame.y0 - tolerance
        and box.x1 <= frame.x1 + tolerance
        and box.y1 <= frame.y1 + tolerance
    )


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
    # as a memoryview, imsave takes the bytes as RGBA (savefig's path); an array it first maps
    # through a colour map's to_rgba: the same file, 31 ms more a figure of the quickstart's size
    matplotlib.image.imsave(path, memoryview(pixels), format="png", origin="upper", dpi=DPI)


#: Figures placed by fixed margins (:func:`fixed_grid`): :func:`save` lays one out by the
#: constrained layout after all where some of it lies outside the figure.
_FIXED: weakref.WeakSet = weakref.WeakSet()
#: Height of one legend row at :data:`STYLE`'s 8 pt legend text, and of a legend's own border [in].
LEGEND_ROW = 0.19
LEGEND_BORDER = 0.12


def fixed_grid(
    rows: int,
    columns: int,
    size: tuple[float, float],
    margins: tuple[float, float, float, float],
    gap: float,
    **share,
):
    """As :func:`panel_grid`, the panels placed by fixed ``margins`` (left, right, bottom, top)
    and ``gap`` between panels [in] instead of the constrained layout, whose measuring of every
    label and legend is a good part of a figure's drawing time. :func:`save` crops the figure to
    what is drawn, so generous margins cost nothing, and falls back to the constrained layout
    where something lies outside the figure (margins too small for the text)."""
    figure = Figure(figsize=size)
    axes = figure.subplots(rows, columns, squeeze=False, **share)
    width, height = size
    left, right, bottom, top = margins
    panel_width = (width - left - right - (columns - 1) * gap) / columns
    panel_height = (height - bottom - top - (rows - 1) * gap) / rows
    figure.subplots_adjust(
        left=left / width,
        right=1.0 - right / width,
        bottom=bottom / height,
        top=1.0 - top / height,
        wspace=gap / panel_width,
        hspace=gap / panel_height,
    )
    _FIXED.add(figure)
    return figure, axes


def panel_grid(rows: int, columns: int, size: tuple[float, float], **share):
    """A figure of ``rows`` × ``columns`` panels, ``size`` (width, height) [in], constrained
    layout; ``axes`` is always 2-D (``axes[row, column]``). ``share``: ``sharex``, ``sharey``
    as for ``Figure.subplots``. Returns (figure, axes)."""
    figure = Figure(figsize=size, layout="constrained")
    return figure, figure.subplots(rows, columns, squeeze=False, **share)


# -- shared encodings --------------------------------------------------------------


def colours(count: int) -> list:
    """``count`` distinct colours: tab10 up to ten, else evenly spaced on a colour map."""
    if count <= 10:
        return list(matplotlib.colormaps["tab10"].colors[:count])
    turbo = matplotlib.colormaps["turbo"]
    return [turbo(x) for x in np.linspace(0.05, 0.95, count)]


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
    in_view(target)


#: Decades a log axis may span and keep minor ticks (at 2 and 5 × 10ⁿ) in :func:`decade_ticks`.
MINOR_DECADES = 6


def decade_ticks(axis, which: str = "y") -> None:
    """Label a log axis at decades (10ⁿ) only; an axis holding fewer than two decades at
    1, 2 and 5 × 10ⁿ in plain numbers (at 1…9 × 10ⁿ, or at three sizes of two digits, where
    that leaves fewer than two labels); minor ticks unlabelled, at 2 and 5 × 10ⁿ on an axis of up
    to :data:`MINOR_DECADES` decades and none on a longer one. Call after the data are drawn."""
    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()
    target = _target(axis, which)
    if np.floor(np.log10(high)) - np.ceil(np.log10(low)) < 1.0:  # fewer than two decades inside
        target.set_major_locator(FixedLocator(_plain_ticks(low, high)))
        target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        target.set_major_locator(LogLocator(base=10, numticks=8))
        target.set_major_formatter(FuncFormatter(power_of_ten))
        decades = np.log10(high) - np.log10(low)
        # Minor ticks at 2 and 5 × 10ⁿ up to MINOR_DECADES decades, none beyond (eight a decade
        # crowd such an axis, and each tick is an artist laid out at every drawing pass).
        target.set_minor_locator(
            LogLocator(base=10, subs=(2.0, 5.0)) if decades <= MINOR_DECADES else NullLocator()
        )
    target.set_minor_formatter(NullFormatter())
    in_view(target)


class InView(Locator):
    """The ticks of the locator ``base`` that lie in its axis' view (to 1e-4 of the view's span;
    matplotlib culls to 1e-10 of it before drawing, so the same ticks are drawn).

    Matplotlib makes a tick (five artists) for every location its locator gives, laid out at
    every drawing pass, and draws those in view; a log locator gives the ticks of whole decades,
    its major ticks one decade beyond each end (its minor ticks at 2…9 × 10ⁿ on an axis of 1.3
    decades: 21 locations, 6 drawn). On the quickstart's two figures 162 ticks were made, 105
    drawn.
    ``base`` is its attribute name in matplotlib's wrapping locators (``set_ticklabels`` finds a
    :class:`~matplotlib.ticker.FixedLocator` there)."""

    def __init__(self, base: Locator):
        self.base = base

    def set_axis(self, axis) -> None:
        super().set_axis(axis)
        self.base.set_axis(axis)

    def __call__(self):
        locations = np.asarray(self.base())
        if locations.size == 0:
            return locations
        transform = self.axis.get_transform()
        low, high = sorted(transform.transform(np.asarray(self.axis.get_view_interval())))
        margin = 1e-4 * (high - low)  # wider than matplotlib's 1e-10, and than the 1e-5 to
        # which get_minorticklocs drops a minor tick on a major one: the same minor ticks stay
        drawn = transform.transform(locations)
        return locations[(drawn >= low - margin) & (drawn <= high + margin)]

    def tick_values(self, vmin, vmax):
        return self.base.tick_values(vmin, vmax)

    def nonsingular(self, v0, v1):
        return self.base.nonsingular(v0, v1)

    def view_limits(self, vmin, vmax):
        return self.base.view_limits(vmin, vmax)


def in_view(target) -> None:
    """Wrap the major and minor locators of the axis ``target`` (an ``XAxis`` or ``YAxis``) in
    :class:`InView`: the same ticks drawn, no tick artists made for locations out of view."""
    for locator, setter in (
        (target.get_major_locator(), target.set_major_locator),
        (target.get_minor_locator(), target.set_minor_locator),
    ):
        if not isinstance(locator, InView | NullLocator):
            setter(InView(locator))


#: Digits and minus sign as superscripts (Unicode; the figures' DejaVu Sans draws them).
SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: Digits as subscripts.
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def power_of_ten(value: float, _position=None) -> str:
    """The tick label of a decade: ``10⁻³`` in Unicode superscripts (what matplotlib's
    ``LogFormatterSciNotation`` writes as mathtext, without a mathtext parse per label, a
    good part of a report's drawing time); blank between decades."""
    if not (value > 0 and math.isfinite(value)):
        return ""
    exponent = round(math.log10(value))
    if abs(value / 10.0**exponent - 1.0) > 1e-9:
        return ""
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def subscript(number: int) -> str:
    """``number`` in Unicode subscripts (``ω₁₂``: a label without mathtext)."""
    return str(number).translate(SUBSCRIPTS)


def _plain_ticks(low: float, high: float) -> np.ndarray:
    """Two or three tick values inside [low, high] (> 0): 1, 2, 5 × 10ⁿ, else every other of
    1…9 × 10ⁿ (at most three), else two sizes evenly spaced in log, rounded to two digits (or
    more, until they differ)."""
    decades = 10.0 ** np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
    for subs in ((1.0, 2.0, 5.0), tuple(range(1, 10))):
        ticks = np.outer(decades, subs).ravel()
        ticks = ticks[(ticks >= low) & (ticks <= high)]
        if ticks.size >= 2:
            return ticks[:: int(np.ceil(ticks.size / 3))] if len(subs) > 3 else ticks
    inner = np.geomspace(low, high, 4)[1:-1]
    for digits in (2, 3, 4):
        ticks = np.unique([float(f"{value:.{digits}g}") for value in inner])
        if ticks.size == 2:
            break
    return ticks


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
