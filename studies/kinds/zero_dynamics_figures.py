"""The figure of the zero-dynamics kind: zeros in the complex plane (conventions:
:mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from studies import plots
from studies.discretizations import BACKENDS


@plots.styled
def complex_plane_plot(points: pd.DataFrame, folder: Path, stem: str) -> list[str]:
    """Points of the complex plane (columns ``real`` [1/s], ``imag`` [rad/s]), one panel per
    backend and shape, colour by case, hollow markers from large to small so coinciding
    points of several cases nest; both axes symmetric-log and holding every point."""
    panels = list(dict.fromkeys(zip(points["backend"], points["shape"], strict=True)))
    figure, axes = plots.panel_grid(
        1, len(panels), (min(plots.PAGE_WIDTH, 3.6 * len(panels)), 3.8), sharex=True, sharey=True
    )
    for axis, (backend, shape) in zip(axes[0], panels, strict=True):
        subset = points[(points["backend"] == backend) & (points["shape"] == shape)]
        cases = list(dict.fromkeys(subset["case"]))
        sizes = np.linspace(9, 3, len(cases)) if len(cases) > 1 else [5]
        for colour, size, case in zip(plots.colours(len(cases)), sizes, cases, strict=True):
            group = subset[subset["case"] == case]
            count = group.iloc[0][BACKENDS[backend].size_column]
            axis.plot(
                group["real"],
                group["imag"],
                linestyle="none",
                marker=plots.backend_marker(backend),
                ms=size,
                mfc="none",
                mec=colour,
                mew=1.0,
                label=f"{count} {BACKENDS[backend].size_column}",
            )
        plots.guide(axis, 0.0, "x")
        plots.guide(axis, 0.0, "y")
        axis.set_title(f"{BACKENDS[backend].label} {shape}")
        axis.set_xlabel("Re z [1/s]")
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, frameon=False)
    axes[0, 0].set_ylabel("Im z [rad/s]")
    plots.symlog_axis(axes[0, 0], points["real"], "x", per_side=3)
    plots.symlog_axis(axes[0, 0], points["imag"], "y")
    return plots.save(figure, folder, stem)
