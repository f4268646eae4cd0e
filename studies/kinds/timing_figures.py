"""The figures of the timing kind: costs on log-log axes (conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from studies import plots
from studies.discretizations import BACKENDS, label_of


@plots.styled
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
    palette = dict(zip(colour_keys, plots.colours(len(colour_keys)), strict=True))
    styles = {
        key: plots.backend_style(key)
        if style_by == "backend"
        else plots.LINE_STYLES[i % len(plots.LINE_STYLES)]
        for i, key in enumerate(style_keys)
    }

    def marker(rows: pd.DataFrame) -> str | None:
        """The backend's marker where ``rows`` have a single backend."""
        backends = rows["backend"].unique() if "backend" in rows else []
        return plots.backend_marker(backends[0]) if len(backends) == 1 else None

    figure, axes = plots.panel_grid(1, 1, (plots.COLUMN_WIDTH, 2.8))
    axis = axes[0, 0]
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
                lw=plots.widths(len(style_keys))[index],
                ms=3.5,
            )
    for style_key in style_keys:
        rows = results[results[style_by] == style_key]
        handles.append(Line2D([], [], color="0.25", linestyle=styles[style_key], marker=marker(rows)))
        labels.append(name(style_by, rows.iloc[0]))
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    plots.size_ticks(axis, results[x])
    plots.decade_ticks(axis)
    plots.figure_legend(figure, handles, labels, "lower", 2)
    return plots.save(figure, folder, stem)
