"""Plots for reports (matplotlib, written as PNG and PDF).

Figures are built from tidy frames so that later study kinds (time
responses, eigenvalue maps) use the same helpers: :func:`save` writes both
formats, :func:`line_plot` draws grouped series.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # reports are files; never open a window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def save(figure, folder: Path, stem: str) -> list[str]:
    """Write ``stem``.png and ``stem``.pdf into ``folder``; returns the file names."""
    names = []
    for suffix in ("png", "pdf"):
        name = f"{stem}.{suffix}"
        figure.savefig(folder / name, dpi=150, bbox_inches="tight", metadata={"CreationDate": None} if suffix == "pdf" else None)
        names.append(name)
    plt.close(figure)
    return names


def convergence_plot(results: pd.DataFrame, rates: pd.DataFrame, folder: Path, modes: int = 3) -> list[str]:
    """Log-log |relative error| vs modes / elements, one panel per backend, with fitted slopes."""
    backends = list(dict.fromkeys(results["backend"]))
    figure, axes = plt.subplots(1, len(backends), figsize=(5.5 * len(backends), 4.2), squeeze=False)
    for axis, backend in zip(axes[0], backends):
        size = "modes" if backend == "amm" else "elements"
        subset = results[(results["backend"] == backend) & (results["mode"] <= modes)]
        for (shape, mode), group in subset.groupby(["shape", "mode"]):
            group = group.sort_values(size)
            error = group["rel_error"].abs().to_numpy()
            keep = error > 0
            if not keep.any():
                continue
            rate = rates[(rates["backend"] == backend) & (rates["shape"] == shape) & (rates["mode"] == mode)]
            slope = "" if rate.empty or np.isnan(rate["rate"].iloc[0]) else f", slope {-rate['rate'].iloc[0]:.2f}"
            axis.loglog(group[size].to_numpy()[keep], error[keep], "o-", label=f"{shape} ω{mode}{slope}")
        axis.set_xlabel(f"number of {size}")
        axis.set_ylabel("|relative error|")
        axis.set_title(backend.upper())
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    return save(figure, folder, "convergence")
