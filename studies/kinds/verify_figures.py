"""The figure of the verify kind: the worst value of each property check per case
(conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from studies import plots
from studies.discretizations import BACKENDS, label_of


@plots.styled
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
    palette = dict(zip(backends, plots.colours(len(backends)), strict=True))
    figure, axes = plots.panel_grid(1, len(drawn), (plots.PAGE_WIDTH, 3.4), sharex=True)
    for axis, check in zip(axes[0], drawn, strict=True):
        rows = checks[checks["check"] == check].set_index("case").reindex(cases)
        for backend in backends:
            mine = (rows["backend"] == backend) & (rows["worst"] > 0)
            axis.semilogy(
                np.flatnonzero(mine.to_numpy()),
                rows["worst"][mine],
                linestyle="none",
                marker=plots.backend_marker(backend),
                color=palette[backend],
            )
        tolerance = rows["tolerance"].iloc[0]
        if tolerance > 0:
            line = axis.axhline(tolerance, color="k", linestyle="--", lw=0.8)
            line.set_gid(plots.GUIDE)
        exact = int((rows["worst"] == 0).sum())
        if exact:
            axis.text(0.02, 0.02, f"exactly 0: {exact} case(s)", transform=axis.transAxes, fontsize=8)
        axis.set_title(check + (f" (tolerance {tolerance:g})" if tolerance > 0 else ""), fontsize=8)
        axis.set_ylabel(ylabels[check])
        plots.decade_ticks(axis)
        axis.set_xticks(range(len(cases)), names, rotation=60, ha="right")
        axis.grid(False, axis="x")
    for axis in axes[0]:
        axis.set_xlabel("discretization")
    handles = [
        Line2D([], [], linestyle="none", marker=plots.backend_marker(b), color=palette[b]) for b in backends
    ]
    plots.figure_legend(figure, handles, [BACKENDS[b].label for b in backends])
    return plots.save(figure, folder, stem)
