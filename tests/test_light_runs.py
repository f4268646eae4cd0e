"""What keeps an everyday run light: a locked-joint frequency analysis of the shared engine
takes M from the numpy oracle (no numba, no compiled kernels to load or compile), report figures
are PNG unless ``[report] pdf`` asks for PDFs too (summary.md then links no PDF that was not
written), and decade tick labels are plain Unicode text (no mathtext parse per label). Cost
itself is measured by ``benchmarks/everyday.py``, not asserted here."""

from __future__ import annotations

import numpy as np
import pytest

from core.arm.presets import one_flexible_link
from core.dynamics.engine import ChainModel
from studies import plots
from studies.discretizations import Discretization
from studies.references import exact_locked_frequencies
from studies.reports import without_missing_pdfs


@pytest.mark.parametrize(("backend", "shape", "size"), [("amm", "clamped-free", 6), ("fem", "clamped", 8)])
def test_locked_frequencies_load_no_compiled_kernels(backend, shape, size, monkeypatch):
    def refuse(self):
        raise AssertionError("a locked-joint frequency analysis loaded the compiled kernels")

    monkeypatch.setattr(ChainModel, "kernels", property(refuse))
    arm = one_flexible_link()
    model, q = Discretization(backend, shape, size).build_at(arm, np.zeros(arm.n_joints))
    omega = model.natural_frequencies(q, "locked", count=2)
    exact, _ = exact_locked_frequencies(arm, 2)
    # Ritz from above, within the discretization error of these small bases (the quickstart's
    # convergence table: below 1e-2 from 2 modes / 2 elements on)
    assert np.all(omega >= exact * (1 - 1e-9)) and np.all(omega <= exact * (1 + 1e-2))


def test_pdf_links_are_kept_only_for_pdfs_written(tmp_path):
    (tmp_path / "a.pdf").write_bytes(b"%PDF")
    text = "![a](a.png) ([PDF](a.pdf)) and ![b](b.png) ([PDF](b.pdf))."
    assert without_missing_pdfs(text, tmp_path) == "![a](a.png) ([PDF](a.pdf)) and ![b](b.png)."


def test_decade_labels_are_unicode_powers_of_ten():
    assert [plots.power_of_ten(v) for v in (1e-12, 1e-3, 1.0, 10.0, 1e5)] == [
        "10⁻¹²",
        "10⁻³",
        "10⁰",
        "10¹",
        "10⁵",
    ]
    # between decades, not positive, not finite
    assert [plots.power_of_ten(v) for v in (2e-3, 0.0, -1.0, np.inf, np.nan)] == [""] * 5
    assert plots.subscript(12) == "₁₂"


def _labelled_grid(margins: tuple[float, float, float, float]):
    figure, axes = plots.fixed_grid(1, 2, (plots.PAGE_WIDTH, 3.0), margins, 0.9)
    for axis in axes[0]:
        axis.plot([1.0, 2.0], [1.0, 3.0])
        axis.set_xlabel("time [s]")
        axis.set_ylabel("angle [rad]")
    return figure, axes[0, 0]


def test_fixed_margins_place_the_panels_when_the_text_fits(tmp_path):
    figure, axis = _labelled_grid((0.8, 0.2, 0.6, 0.2))
    plots.save(figure, tmp_path, "fits")
    assert axis.get_position().x0 == pytest.approx(0.8 / plots.PAGE_WIDTH)  # as placed
    assert (tmp_path / "fits.png").exists()


def test_fixed_margins_too_small_fall_back_to_the_constrained_layout(tmp_path):
    figure, axis = _labelled_grid((0.0, 0.0, 0.0, 0.0))  # tick labels and labels off the figure
    plots.save(figure, tmp_path, "falls_back")
    position = axis.get_position()
    assert position.x0 > 0.02 and position.y0 > 0.02  # room made for the labels
