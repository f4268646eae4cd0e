"""Figures of the convergence kind: errors against the size of each basis, and the cost to
accuracy (conventions: :mod:`studies.plots`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from studies import plots
from studies.discretizations import BACKENDS


@plots.styled
def convergence_plot(results: pd.DataFrame, rates: pd.DataFrame, folder: Path, modes: int = 3) -> list[str]:
    """Log-log |relative error| against modes / elements, one panel per backend, with the
    fitted slopes: colour by mode, line style and marker by shape family."""
    backends = list(dict.fromkeys(results["backend"]))
    numbers = sorted(m for m in results["mode"].unique() if m <= modes)
    entries = max(results.loc[results["backend"] == b, "shape"].nunique() for b in backends) * len(numbers)
    # each panel's legend hangs 0.2 panel heights below it (under its tick labels and x label)
    height, top = 4.6, 0.35
    legend = entries * plots.LEGEND_ROW + plots.LEGEND_BORDER
    bottom = (0.2 * (height - top) + legend + 0.1) / 1.2
    figure, axes = plots.fixed_grid(
        1, len(backends), (plots.PAGE_WIDTH, height), (0.8, 0.2, bottom, top), 0.9
    )
    palette = dict(zip(numbers, plots.colours(len(numbers)), strict=True))
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
                    linestyle=plots.LINE_STYLES[index % len(plots.LINE_STYLES)],
                    marker=plots.MARKERS[index % len(plots.MARKERS)],
                    color=palette[mode],
                    lw=plots.widths(len(shapes), thickest=2.2)[index],
                    ms=7.0 if index == 0 and len(shapes) > 1 else 3.5,
                    mfc="none" if index == 0 and len(shapes) > 1 else None,
                    label=f"{shape} ω{plots.subscript(mode)}{slope}",
                )
        axis.set_xlabel(f"number of {size}")
        axis.set_ylabel("|relative error| of ω [–]")
        axis.set_title(BACKENDS[backend].label)
        plots.size_ticks(axis, subset[size].dropna())
        plots.decade_ticks(axis)
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    return plots.save(figure, folder, "convergence")


@plots.styled
def tradeoff_plot(cases: pd.DataFrame, folder: Path) -> list[str]:
    """Worst |relative error| of each case against its coordinates (left: one line per basis,
    backend and shape, in size order) and its wall time (right: points, no lines; each time is
    one measurement of a busy machine, and a line between them would draw a trend that the noise
    made), log-log. Ticks at the data's sizes (left) and at decades, or 1, 2, 5 × 10ⁿ on an axis
    of less than two decades (right); no minor tick labels."""
    bases = list(dict.fromkeys(zip(cases["backend"], cases["shape"], strict=True)))
    rows = -(-len(bases) // min(len(bases), 3))  # the figure legend's rows, three entries a row
    bottom = 0.55 + rows * plots.LEGEND_ROW + plots.LEGEND_BORDER  # tick labels, x label, legend
    figure, axes = plots.fixed_grid(
        1, 2, (plots.PAGE_WIDTH, 4.2), (0.8, 0.2, bottom, 0.15), 0.25, sharey=True
    )
    axes = axes[0]
    palette = plots.colours(len(bases))
    for index, (backend, shape) in enumerate(bases):
        group = cases[(cases["backend"] == backend) & (cases["shape"] == shape)].sort_values("n_dof")
        style = dict(
            color=palette[index],
            linestyle=plots.LINE_STYLES[index % len(plots.LINE_STYLES)],
            marker=plots.MARKERS[index % len(plots.MARKERS)],
            ms=4.0,
            label=f"{BACKENDS[backend].label} {shape}",
        )
        axes[0].loglog(group["n_dof"], group["worst"], **style)
        axes[1].loglog(group["wall_time_s"], group["worst"], **{**style, "linestyle": "none"})
    axes[0].set_xlabel("number of coordinates (n_dof)")
    axes[1].set_xlabel("wall time of the case [s]")
    axes[0].set_ylabel("worst |relative error| of ω [–]")
    plots.size_ticks(axes[0], cases["n_dof"], "x")
    plots.decade_ticks(axes[1], "x")
    for axis in axes:
        plots.decade_ticks(axis)
    plots.figure_legend(figure, *axes[0].get_legend_handles_labels(), "lower", min(len(bases), 3))
    return plots.save(figure, folder, "cost_to_accuracy")
