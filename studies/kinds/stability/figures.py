"""Figures of the stability kind: closed-loop eigenvalues along the maneuvers and the roots of
the clamped-mass frequency equation (conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from studies import plots
from studies.discretizations import label_of

#: Widest line of the eigenvalue plot [pt].
EIGEN_THICKEST = 1.8
#: Line style of each direction in the root plot (Theodore & Ghosal (1997) Fig. 8).
DIRECTION_STYLES = {"extension": "-", "retraction": "--", "custom": ":"}


def style_legend(directions) -> str:
    """E.g. "solid: extension, dashed: retraction" (:data:`DIRECTION_STYLES`)."""
    words = {"-": "solid", "--": "dashed", ":": "dotted"}
    return ", ".join(f"{words[DIRECTION_STYLES[d]]}: {d}" for d in directions)


@plots.styled
def eigenvalue_time_plot(eigen: pd.DataFrame, folder: Path, stem: str, modes: int = 4) -> list[str]:
    """Re λ(t) and Im λ(t) of the ``modes`` lowest-frequency eigenvalues (Im λ > 0) per case
    (Theodore & Ghosal (1997) Figs. 6–7), one column of panels per direction: colour by case, line style by
    backend. ``eigen`` has columns case, sweep columns, direction, time, real, imag."""
    directions = list(dict.fromkeys(eigen["direction"]))
    cases = list(dict.fromkeys(eigen["case"]))
    # thick-to-thin, but at most EIGEN_THICKEST: a thick line turning sharply where two
    # eigenvalues swap rank draws a blob of ink (round joins keep the turns thin)
    palette, line_widths = plots.case_styles(cases, thickest=EIGEN_THICKEST)
    figure, axes = plots.panel_grid(
        2,
        len(directions),
        (plots.PAGE_WIDTH if len(directions) > 1 else plots.COLUMN_WIDTH + 0.5, 4.8),
        sharex=True,
        sharey="row",
    )
    handles, labels = [], []
    for (case, direction), group in eigen.groupby(["case", "direction"], sort=False):
        upper = group[group["imag"] > 0].sort_values(["time", "imag"])
        lowest = upper.groupby("time").head(modes).copy()
        lowest["rank"] = lowest.groupby("time").cumcount()
        column = directions.index(direction)
        style = plots.backend_style(group.iloc[0]["backend"])
        for _, line in lowest.groupby("rank"):
            for axis, part in zip(axes[:, column], ("real", "imag"), strict=True):
                axis.plot(
                    line["time"],
                    line[part],
                    style,
                    color=palette[case],
                    lw=line_widths[case],
                    solid_joinstyle="round",
                    dash_joinstyle="round",
                )
        if column == 0:
            handles.append(Line2D([], [], color=palette[case], linestyle=style))
            labels.append(label_of(group.iloc[0]))
    for column, direction in enumerate(directions):
        axes[0, column].set_title(direction)
        plots.guide(axes[0, column], 0.0)
        axes[1, column].set_yscale("log")
        axes[1, column].set_xlabel("time [s]")
    plots.decade_ticks(axes[1, 0])
    axes[0, 0].set_ylabel("Re λ [1/s]")
    axes[1, 0].set_ylabel("Im λ [rad/s]")
    plots.figure_legend(figure, handles, labels, columns=min(len(labels), 3))
    return plots.save(figure, folder, stem)


@plots.styled
def root_history_plot(
    histories: pd.DataFrame,
    folder: Path,
    stem: str = "roots",
    styles: dict | None = None,
    modes: int = 4,
) -> list[str]:
    """Roots β_k(t) of a clamped–mass frequency equation along maneuvers (Theodore & Ghosal (1997) Fig. 8):
    one panel per mode (the ``modes`` lowest; the roots of different modes differ by more
    than each moves), colour by mode, line style by direction (``styles``: direction → line
    style; default: :data:`plots.LINE_STYLES` in order of appearance). ``histories`` has columns
    direction, time [s], mode, beta (dimensionless β_k = β·l), for one case."""
    directions = list(dict.fromkeys(histories["direction"]))
    styles = styles or {}
    style_of = {
        direction: styles.get(direction, plots.LINE_STYLES[i % len(plots.LINE_STYLES)])
        for i, direction in enumerate(directions)
    }
    shown = sorted(histories["mode"].unique())[:modes]
    palette = dict(zip(shown, plots.colours(len(shown)), strict=True))
    figure, axes = plots.panel_grid(len(shown), 1, (plots.COLUMN_WIDTH, 1.35 * len(shown) + 0.7), sharex=True)
    for axis, mode in zip(axes[:, 0], shown, strict=True):
        for direction in directions:
            line = histories[(histories["mode"] == mode) & (histories["direction"] == direction)]
            line = line.sort_values("time")
            axis.plot(line["time"], line["beta"], linestyle=style_of[direction], color=palette[mode])
        axis.set_ylabel(rf"$\beta_{{{mode}}}$ [–]")
        axis.yaxis.set_major_locator(MaxNLocator(4))
    axes[-1, 0].set_xlabel("time [s]")
    plots.figure_legend(
        figure, [Line2D([], [], color="0.25", linestyle=style_of[d]) for d in directions], directions
    )
    return plots.save(figure, folder, stem)
