"""The report figures, read back through matplotlib's objects.

Each study kind runs a tiny config with plots on (frequencies also along a sweep); every
figure its report saves is kept (``studies.plots.save`` wrapped) and checked: labelled axes
with units (a bracketed unit on every y axis), legends with distinct entries and no two drawn
in the same (colour, line style), text at ≥ 8 pt, no curve that is zero throughout, tick
labels (major and minor, measured on the drawn text) that do not overlap, at most two columns
wide; a summary that says "symmetric log" has a figure with such an axis, and the other way
round; every file the report writes has an ASCII name.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.ticker import LogFormatterSciNotation

import studies.plots
from core.analysis.modes import FIELD_POINTS
from core.arm.presets import one_flexible_link
from studies.config import load_config
from studies.runner import run_study

#: A label names its unit in brackets; an x label may instead be a count, an ordinal or a
#: category. A y label always has brackets ("[–]" or "[-]" for a dimensionless quantity).
UNIT = re.compile(r"\[[^\]]+\]")
UNITLESS = re.compile(r"^(number of |mode number$|discretization$)")
#: The characters of an output file name (every file system, shell and LaTeX take them).
FILE_NAME = re.compile(r"[A-Za-z0-9._-]+")
#: Quantities whose labels must carry this unit.
EXPECTED_UNITS = {
    "time": "[s]",
    "joint angle": "[rad]",
    "joint torque": "[N·m]",
    "tip deflection": "[m]",
    "energy": "[J]",
    "Im": "[rad/s]",
    "Re": "[1/s]",
    "free length": "[m]",
    "s along the arm": "[m]",
    "forward dynamics": "[µs]",
    "relative error": "[–]",
}
#: Smallest text in a figure [pt], widest figure [in].
SMALLEST_POINTS = 8.0
WIDEST_INCHES = studies.plots.PAGE_WIDTH

ARM_ONE_LINK = '[arm]\npreset = "one-flexible-link"'
CONFIGS = {
    "convergence": f"""
        [study]
        name = "c"
        kind = "convergence"
        {ARM_ONE_LINK}
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-free", "pinned-pinned"]
        modes = [1, 2, 4]
        elements = [1, 2, 4]
        [analysis]
        n_frequencies = 2
        """,
    "frequencies": """
        [study]
        name = "f"
        kind = "frequencies"
        [arm]
        preset = "lumped-two-link"
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-mass"]
        modes = [2]
        elements = [2, 4]
        [analysis]
        configuration = [0.5, -0.5]
        n_frequencies = 3
        """,
    "frequencies-sweep": """
        [study]
        name = "fs"
        kind = "frequencies"
        [arm]
        preset = "lumped-two-link"
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-mass"]
        modes = [2]
        elements = [2]
        [analysis]
        configuration = [0.5, 0.0]
        n_frequencies = 3
        sweep_parameter = "theta2"
        sweep_range = [-1.0, 1.0]
        sweep_points = 4
        """,
    "zero-dynamics": f"""
        [study]
        name = "z"
        kind = "zero-dynamics"
        {ARM_ONE_LINK}
        [sweep]
        backends = ["amm"]
        shapes = ["pinned-pinned", "clamped-free"]
        modes = [2, 4]
        """,
    "simulation": """
        [study]
        name = "s"
        kind = "simulation"
        [arm]
        preset = "space-arm-3link"
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-free"]
        modes = [1]
        elements = [1]
        [analysis]
        t_end = 0.05
        controller = { kind = "feed-forward" }
        trajectory = { kind = "cycloidal", k = [0.075, 0.05, 0.1], T = [10.0, 5.0, 5.0] }
        method = "DOP853"
        output_points = 11
        """,
    "stability": """
        [study]
        name = "st"
        kind = "stability"
        [arm]
        preset = "rrp-translating"
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-mass"]
        modes = [1]
        elements = [1]
        [analysis]
        lengths = [0.9, 1.0]
        start = [0.0, 0.0]
        end = [0.1, -0.1]
        T = 0.02
        blend = 0.01
        eigen_points = 3
        output_points = 5
        method = "LSODA"
        """,
    "timing": """
        [study]
        name = "t"
        kind = "timing"
        [arm]
        preset = "lumped-two-link"
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-free"]
        modes = [1]
        elements = [1]
        [analysis]
        chain_links = [2, 4]
        budget = 0.001
        """,
    "verify": f"""
        [study]
        name = "v"
        kind = "verify"
        {ARM_ONE_LINK}
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-free"]
        modes = [1, 2]
        elements = [1]
        [analysis]
        samples = 2
        """,
}
#: The figures each kind's report draws (stems).
FIGURES = {
    "convergence": {"convergence", "cost_to_accuracy"},
    "frequencies": {"mode_shapes", "frequency_errors"},
    "frequencies-sweep": {"campbell"},
    "zero-dynamics": {"zero_dynamics"},
    "simulation": {"time_response", "tracking"},
    "stability": {"eigenvalues", "flexible_response"},
    "timing": {"timing_links", "timing_dof"},
    "verify": {"checks"},
}


def run_config(config: str, tmp_path: Path, monkeypatch) -> tuple[dict, Path]:
    """Run a study (TOML text) with plots (and PDFs) on; (the figures its report saved by stem,
    output folder)."""
    figures = {}
    save = studies.plots.save

    def keep(figure, folder, stem):
        figures[stem] = figure
        return save(figure, folder, stem)

    monkeypatch.setattr(studies.plots, "save", keep)
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(config) + "\n[report]\nplots = true\npdf = true\n")
    folder = run_study(load_config(path), output=tmp_path / "out").folder
    return figures, folder


def shown_label(axis, which: str) -> str:
    """The label that reads for ``axis``: its own, else that of the panel of its grid row
    (y) or column (x) that carries it (shared axes label the outer panels only)."""
    own = axis.get_xlabel() if which == "x" else axis.get_ylabel()
    if own or axis.get_subplotspec() is None:
        return own
    spec = axis.get_subplotspec()
    for other in axis.figure.axes:
        place = other.get_subplotspec()
        if place is None:
            continue
        if which == "x" and place.colspan == spec.colspan and other.get_xlabel():
            return other.get_xlabel()
        if which == "y" and place.rowspan == spec.rowspan and other.get_ylabel():
            return other.get_ylabel()
    return ""


def data_lines(axis) -> list:
    """Plotted data: every line but guides (zero lines, link boundaries) and empty ones."""
    return [
        line for line in axis.get_lines() if line.get_gid() != studies.plots.GUIDE and len(line.get_ydata())
    ]


def style_of(handle) -> tuple:
    return (to_rgba(handle.get_color()), str(handle.get_linestyle()), str(handle.get_marker()))


def overlapping(boxes: list) -> list[tuple[int, int]]:
    return [
        (i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])
    ]


def check_figure(stem: str, figure) -> None:
    """Every rule of the module docstring, with the figure's stem in each message."""
    assert figure.get_figwidth() <= WIDEST_INCHES + 1e-9, stem
    canvas = FigureCanvasAgg(figure)  # save() closed the figure; draw it again to measure text
    canvas.draw()
    renderer = canvas.get_renderer()
    lines = 0
    for axis in figure.axes:
        for which in ("x", "y"):
            label = shown_label(axis, which)
            assert label.strip(), f"{stem}: an axis without {which} label"
            assert UNIT.search(label) or (which == "x" and UNITLESS.search(label)), (
                f"{stem}: no unit in {which} label {label!r}"
            )
            for quantity, unit in EXPECTED_UNITS.items():
                if re.match(rf"^\|?{re.escape(quantity)}", label):
                    assert unit in label, f"{stem}: {label!r} should be in {unit}"
            low, high = sorted(getattr(axis, f"get_{which}lim")())
            ticks = [
                t
                for minor in (False, True)
                for t in getattr(axis, f"get_{which}ticklabels")(minor=minor)
                if t.get_visible() and t.get_text() and low <= t.get_position()["xy".index(which)] <= high
            ]
            assert all(t.get_fontsize() >= SMALLEST_POINTS for t in ticks), stem
            boxes = [t.get_window_extent(renderer) for t in ticks]
            assert not overlapping(boxes), (
                f"{stem}: {which} tick labels {[t.get_text() for t in ticks]} overlap"
            )
        largest = max((np.nanmax(np.abs(line.get_ydata())) for line in data_lines(axis)), default=0.0)
        for line in data_lines(axis):
            y = np.nanmax(np.abs(np.asarray(line.get_ydata(), dtype=float)))
            if line.get_linestyle() == "None":  # points: one on the x axis is a value like any other
                y = max(y, np.nanmax(np.abs(np.asarray(line.get_xdata(), dtype=float))))
            assert y > 0 and (y > 1e-9 * largest or line.get_linestyle() == "None"), f"{stem}: a zero curve"
        lines += len(data_lines(axis))
    titles = [a.title for a in figure.axes if a.title.get_visible() and a.title.get_text()]
    beside = [  # what a title placed above its panel could run into
        t
        for a in figure.axes
        for t in (
            *a.get_xticklabels(),
            *a.get_yticklabels(),
            a.xaxis.offsetText,
            a.yaxis.offsetText,
            a.xaxis.label,
        )
        if t.get_visible() and t.get_text()
    ]
    for title in titles:
        box = title.get_window_extent(renderer)
        hits = [
            t.get_text()
            for t in [*beside, *titles]
            if t is not title and box.overlaps(t.get_window_extent(renderer))
        ]
        assert not hits, f"{stem}: title {title.get_text()!r} overlaps {hits}"
    legends = [*figure.legends, *(a.get_legend() for a in figure.axes if a.get_legend() is not None)]
    if lines > 1:
        assert legends, f"{stem}: {lines} curves and no legend"
    for legend in legends:
        texts = [t.get_text() for t in legend.get_texts()]
        assert all(texts) and len(set(texts)) == len(texts), f"{stem}: legend entries {texts}"
        assert all(t.get_fontsize() >= SMALLEST_POINTS for t in legend.get_texts()), stem
        drawn = [style_of(h) for h in legend.legend_handles if style_of(h)[1:] != ("None", "None")]
        assert len(set(drawn)) == len(drawn), f"{stem}: two legend entries drawn alike {texts}"


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_every_kind_draws_labelled_figures_with_distinct_legends(kind, tmp_path, monkeypatch):
    figures, folder = run_config(CONFIGS[kind], tmp_path, monkeypatch)
    assert set(figures) == FIGURES[kind]
    summary = (folder / "summary.md").read_text()
    for stem, figure in figures.items():
        check_figure(stem, figure)
        assert f"]({stem}.png)" in summary and (folder / f"{stem}.pdf").exists()
    symlog = [stem for stem, figure in figures.items() if any(map(has_symlog, figure.axes))]
    assert ("symmetric log" in summary) == bool(symlog), (kind, symlog)
    names = [path.name for path in folder.rglob("*")]
    assert all(FILE_NAME.fullmatch(name) for name in names), sorted(names)


def has_symlog(axis) -> bool:
    return "symlog" in (axis.get_xscale(), axis.get_yscale())


def test_the_checks_catch_a_bad_figure():
    """The rules can fail: an unlabelled axis, a unitless label, a small legend, twin
    entries, a zero curve."""
    import matplotlib.pyplot as plt

    def figure_with(change):
        figure, axis = plt.subplots(figsize=(3.5, 2.5))
        axis.plot([0, 1], [1, 2], label="a")
        axis.plot([0, 1], [2, 3], "--", label="b")
        axis.set_xlabel("time [s]")
        axis.set_ylabel("joint angle [rad]")
        axis.legend(fontsize=8)
        change(axis)
        return figure

    check_figure("good", figure_with(lambda axis: None))
    bad = {
        "no label": lambda axis: axis.set_ylabel(""),
        "no unit": lambda axis: axis.set_ylabel("torque"),
        "wrong unit": lambda axis: axis.set_ylabel("joint torque [N]"),
        "small legend": lambda axis: axis.legend(fontsize=6),
        "twin entries": lambda axis: axis.legend(["a", "a"]),
        "alike entries": lambda axis: axis.legend([axis.lines[0]] * 2, ["a", "b"], fontsize=8),
        "zero curve": lambda axis: axis.lines[0].set_ydata([0.0, 0.0]),
        "crowded ticks": lambda axis: axis.set_xticks(np.linspace(0, 1, 40)),
        "unitless y": lambda axis: axis.set_ylabel("deflection (normalized)"),
        "crowded minor ticks": crowd_minor_ticks,
        "alike in colour and style": lambda axis: axis.legend(
            [Line2D([], [], color="C0", linestyle="--"), Line2D([], [], color="C0", linestyle="--")],
            ["a", "b"],
            fontsize=8,
        ),
    }
    for name, change in bad.items():
        with pytest.raises(AssertionError):
            check_figure(name, figure_with(change))
    plt.close("all")


def crowd_minor_ticks(axis) -> None:
    """A log x axis spanning less than a decade, minor ticks labelled as matplotlib does by
    default there ("2×10⁰3×10⁰4×10⁰" run together on a narrow axis)."""
    axis.lines[0].set_xdata([2.0, 9.0])
    axis.lines[1].set_xdata([2.0, 9.0])
    axis.set_xscale("log")
    axis.set_xlim(2.0, 9.0)
    axis.xaxis.set_minor_formatter(LogFormatterSciNotation(minor_thresholds=(10, 10)))
    axis.figure.set_size_inches(1.6, 2.5)


def test_mode_shapes_csv_is_tidy_and_normalized(tmp_path, monkeypatch):
    """mode_shapes.csv: one row per case, mode and grid point; on the one-link arm (locked,
    nothing but bending) Σ ρA Δs w² over the trapezoid grid is 1 for every mode (the
    normalization the summary states); the figure draws the lowest modes, one panel each."""
    config = CONFIGS["convergence"].replace('"convergence"', '"frequencies"')
    figures, folder = run_config(
        config.replace("n_frequencies = 2", "n_frequencies = 5"), tmp_path, monkeypatch
    )
    shapes = pd.read_csv(folder / "mode_shapes.csv")
    assert list(shapes.columns) == [
        "case", "backend", "shape", "modes", "elements", "segments", "mode", "omega", "hz", "link", "s", "s_arm",
        "w", "v",
    ]  # fmt: skip
    results = pd.read_csv(folder / "results.csv")
    counts = results.groupby("case")["mode"].max()
    assert shapes.groupby("case")["mode"].max().equals(counts)
    assert (shapes.groupby(["case", "mode"]).size() == FIELD_POINTS).all()
    np.testing.assert_allclose(shapes["hz"], shapes["omega"] / (2 * np.pi), rtol=1e-15)
    density = one_flexible_link().links[0].mass_per_length
    for (_, _), mode in shapes.groupby(["case", "mode"]):
        norm = density * np.trapezoid(mode["w"] ** 2, mode["s"])
        assert norm == pytest.approx(1.0, rel=1e-9)
        assert (mode["v"] == 0).all()
    axes = [a for a in figures["mode_shapes"].axes if a.get_title()]
    assert len(axes) == min(4, counts.max())
    assert "unit mass-weighted norm" in (folder / "summary.md").read_text()
