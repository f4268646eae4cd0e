"""Plots for reports (matplotlib, written as PNG and PDF).

Figures are built from tidy frames so that later study kinds (time
responses, eigenvalue maps) use the same helpers: :func:`save` writes both
formats, :func:`line_plot` draws grouped series.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from studies.discretizations import BACKENDS, label_of


def save(figure, folder: Path, stem: str) -> list[str]:
    """Write ``stem``.png and ``stem``.pdf into ``folder``; returns the file names."""
    names = []
    for suffix in ("png", "pdf"):
        name = f"{stem}.{suffix}"
        figure.savefig(
            folder / name,
            dpi=150,
            bbox_inches="tight",
            metadata={"CreationDate": None} if suffix == "pdf" else None,
        )
        names.append(name)
    plt.close(figure)
    return names


def convergence_plot(results: pd.DataFrame, rates: pd.DataFrame, folder: Path, modes: int = 3) -> list[str]:
    """Log-log |relative error| vs modes / elements, one panel per backend, with fitted slopes."""
    backends = list(dict.fromkeys(results["backend"]))
    figure, axes = plt.subplots(1, len(backends), figsize=(5.5 * len(backends), 4.2), squeeze=False)
    for axis, backend in zip(axes[0], backends, strict=True):
        size = BACKENDS[backend].size_column
        subset = results[(results["backend"] == backend) & (results["mode"] <= modes)]
        for (shape, mode), group in subset.groupby(["shape", "mode"]):
            group = group.sort_values(size)
            error = group["rel_error"].abs().to_numpy()
            keep = error > 0
            if not keep.any():
                continue
            rate = rates[(rates["backend"] == backend) & (rates["shape"] == shape) & (rates["mode"] == mode)]
            slope = (
                "" if rate.empty or np.isnan(rate["rate"].iloc[0]) else f", slope {-rate['rate'].iloc[0]:.2f}"
            )
            axis.loglog(group[size].to_numpy()[keep], error[keep], "o-", label=f"{shape} ω{mode}{slope}")
        axis.set_xlabel(f"number of {size}")
        axis.set_ylabel("|relative error|")
        axis.set_title(BACKENDS[backend].label)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    return save(figure, folder, "convergence")


def complex_plane_plot(points: pd.DataFrame, folder: Path, stem: str) -> list[str]:
    """Eigenvalues in the complex plane, one marker series per case (columns ``real``, ``imag``)."""
    figure, axis = plt.subplots(figsize=(6, 4.5))
    for _, group in points.groupby("case"):
        axis.plot(
            group["real"],
            group["imag"],
            "o",
            ms=4,
            alpha=0.8,
            label=label_of(group.iloc[0]),
        )
    axis.axvline(0.0, color="k", lw=0.6)
    axis.axhline(0.0, color="k", lw=0.6)
    axis.set_xlabel("Re [rad/s]")
    axis.set_ylabel("Im [rad/s]")
    axis.set_xscale("symlog", linthresh=1.0)
    axis.set_yscale("symlog", linthresh=1.0)
    axis.legend(fontsize=6, ncol=2)
    axis.grid(True, alpha=0.3)
    return save(figure, folder, stem)


def time_plot(
    results: pd.DataFrame,
    columns: list[list[str]],
    titles: list[str],
    folder: Path,
    stem: str,
    by: list[str] | None = None,
) -> list[str]:
    """Time histories of several cases overlaid: one panel per group of columns, one line
    per case (or per group of the ``by`` columns: a case and a solver, say; a column with a
    single value in ``results`` is left out of the labels)."""
    by = [c for c in (by or ["case"]) if c in results]
    shown = [c for c in by if c != "case" and results[c].nunique() > 1]
    # The last varying grouping column (a solver, a direction) by line style, so curves that
    # coincide stay visible.
    styles = (
        dict(zip(dict.fromkeys(results[shown[-1]]), ["-", "--", ":", "-."], strict=False)) if shown else {}
    )
    figure, axes = plt.subplots(len(columns), 1, figsize=(7, 2.3 * len(columns)), sharex=True, squeeze=False)
    for axis, group_columns, title in zip(axes[:, 0], columns, titles, strict=True):
        for _, case in results.groupby(by, sort=False):
            label = " ".join([label_of(case.iloc[0]), *(str(case.iloc[0][c]) for c in shown)])
            style = styles.get(case.iloc[0][shown[-1]], "-") if shown else "-"
            for column in group_columns:
                if column in case:
                    axis.plot(case["time"], case[column], style, lw=1, label=f"{label} {column}")
        axis.set_ylabel(title)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=5, ncol=2)
    axes[-1, 0].set_xlabel("time [s]")
    return save(figure, folder, stem)


def loglog_plot(
    results: pd.DataFrame, x: str, y: str, by: list[str], xlabel: str, ylabel: str, folder: Path, stem: str
) -> list[str]:
    """``y`` against ``x`` on log-log axes, one line per group of the ``by`` columns
    (a case is labelled by its discretization)."""
    figure, axis = plt.subplots(figsize=(6, 4))
    for keys, group in results.groupby(by, sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        parts = [
            label_of(group.iloc[0]) if key == "case" else str(value)
            for key, value in zip(by, keys, strict=True)
        ]
        group = group.sort_values(x)
        axis.loglog(group[x], group[y], "o-", lw=1, ms=3, label=" ".join(parts))
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=6)
    return save(figure, folder, stem)


def eigenvalue_time_plot(eigen: pd.DataFrame, folder: Path, stem: str, modes: int = 4) -> list[str]:
    """Re λ(t) and Im λ(t) of the ``modes`` lowest-frequency eigenvalues (Im λ > 0) per case and
    direction (seed 002 Figs. 6–7): colour by case, solid for the first direction, dashed for the
    next. ``eigen`` has columns case, sweep columns, direction, time, real, imag."""
    figure, axes = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    cases = list(dict.fromkeys(eigen["case"]))
    styles = dict(zip(dict.fromkeys(eigen["direction"]), ["-", "--", ":", "-."], strict=False))
    for (case, direction), group in eigen.groupby(["case", "direction"], sort=False):
        upper = group[group["imag"] > 0].sort_values(["time", "imag"])
        lowest = upper.groupby("time").head(modes).copy()
        lowest["rank"] = lowest.groupby("time").cumcount()
        colour = colours[cases.index(case) % len(colours)]
        for rank, line in lowest.groupby("rank"):
            label = f"{label_of(group.iloc[0])} {direction}" if rank == 0 else None
            for axis, part in zip(axes, ("real", "imag"), strict=True):
                axis.plot(line["time"], line[part], styles[direction], color=colour, lw=1, label=label)
    axes[0].set_ylabel("Re λ [1/s]")
    axes[1].set_ylabel("Im λ [rad/s]")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("time [s]")
    for axis in axes:
        axis.grid(True, alpha=0.3)
    axes[0].axhline(0.0, color="k", lw=0.5)
    axes[0].legend(fontsize=6)
    return save(figure, folder, stem)
