"""What keeps an everyday run light: a locked-joint frequency analysis of the shared engine
takes M from the numpy oracle (no numba, no compiled kernels to load or compile), report figures
are PNG unless ``[report] pdf`` asks for PDFs too (summary.md then links no PDF that was not
written), decade tick labels are plain Unicode text (no mathtext parse per label), figures are
made without pyplot and with tick artists only for the ticks in view (the same pixels), the
processor's name is read from the cache instead of loading LLVM, and the command line keeps
the garbage collector off its imports only when it is the whole process. Cost itself is
measured by ``benchmarks/everyday.py``, not asserted here."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from core import cache
from core.arm.presets import one_flexible_link
from core.dynamics.engine import ChainModel
from studies import cli, plots, record
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


def _log_panel(low: float, high: float, sizes: bool):
    """A 3.5 × 2.5 in figure with one log-log panel over [low, high] on both axes, ticked as the
    reports tick them: the data's sizes (``sizes``) or decades on x, decades on y."""
    figure = Figure(figsize=(3.5, 2.5))
    axis = figure.subplots()
    values = np.geomspace(low, high, 6)
    axis.loglog(np.round(values) if sizes else values, values, marker="o")
    if sizes:
        plots.size_ticks(axis, np.round(values))
    else:
        plots.decade_ticks(axis, "x")
    plots.decade_ticks(axis, "y")
    return figure, axis


@pytest.mark.parametrize(
    ("low", "high", "sizes", "fewer"),
    [
        (1.0, 18.0, True, True),
        (2.0, 77.0, True, False),  # every location of these locators is in view
        (0.0057, 0.0131, False, True),
        (2.9e-6, 0.49, False, True),
        (3e-14, 1.4, False, True),
    ],
)
def test_ticks_out_of_view_are_not_made_and_the_pixels_stay(low, high, sizes, fewer):
    """InView leaves out the locations out of view (a log locator gives a decade or two beyond
    each end) and the figure draws to the same pixels as with matplotlib's locators unwrapped."""
    drawn, located = [], []
    for wrapped in (True, False):
        figure, axis = _log_panel(low, high, sizes)
        for target in (axis.xaxis, axis.yaxis):
            assert isinstance(target.get_major_locator(), plots.InView)
            if not wrapped:
                target.set_major_locator(target.get_major_locator().base)
                if isinstance(target.get_minor_locator(), plots.InView):
                    target.set_minor_locator(target.get_minor_locator().base)
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        drawn.append(np.asarray(canvas.buffer_rgba()).copy())
        located.append(
            [len(t.get_majorticklocs()) + len(t.get_minorticklocs()) for t in (axis.xaxis, axis.yaxis)]
        )
        if wrapped:
            for target, (first, last) in ((axis.xaxis, axis.get_xlim()), (axis.yaxis, axis.get_ylim())):
                locations = np.concatenate([target.get_majorticklocs(), target.get_minorticklocs()])
                assert np.all((locations >= first * (1 - 1e-9)) & (locations <= last * (1 + 1e-9)))
    np.testing.assert_array_equal(drawn[0], drawn[1])
    assert all(w <= u for w, u in zip(*located, strict=True))
    assert (sum(located[0]) < sum(located[1])) == fewer


def test_figures_are_made_without_pyplot(tmp_path):
    """pyplot (its import, its registry of figures) is not loaded by the report figures."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from studies import plots
        for figure, axes in (plots.fixed_grid(1, 2, (7.0, 3.0), (0.8, 0.2, 0.6, 0.2), 0.9),
                             plots.panel_grid(1, 1, (3.5, 2.5))):
            axes[0, 0].plot([1.0, 2.0], [1.0, 3.0], color=plots.colours(12)[0])
            plots.save(figure, Path({str(tmp_path)!r}), "figure")
        assert "matplotlib.pyplot" not in sys.modules
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "figure.png").exists()


def test_the_command_line_and_every_study_kind_import_without_numba():
    """numba (~0.25 s and ~40 MB to import) loads with the first compiled kernel a run needs,
    not with the command line, the runner or the registered study kinds: a frequency study
    never pays for it."""
    script = textwrap.dedent(
        """
        import sys
        from studies import cli, config, plots, runner
        from studies.kinds import KINDS
        assert KINDS
        loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("numba", "llvmlite"))
        assert not loaded, loaded[:5]
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def test_the_processor_name_is_kept_under_its_key(tmp_path, monkeypatch):
    """host_cpu asks LLVM once per key and reads the kept name while the key holds; another
    key, a damaged file or no key at all (no /proc/cpuinfo) asks again."""
    from llvmlite import binding

    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    real = binding.get_host_cpu_name()
    asked = []
    monkeypatch.setattr(binding, "get_host_cpu_name", lambda: asked.append(1) or real)
    monkeypatch.setattr(record, "_processor_key", lambda: "one")
    assert record.host_cpu() == real and len(asked) == 1
    assert json.loads((tmp_path / record.HOST_CPU_FILE).read_text()) == {"key": "one", "cpu": real}
    assert record.host_cpu() == real and len(asked) == 1  # kept
    (tmp_path / record.HOST_CPU_FILE).write_text(json.dumps({"key": "one", "cpu": "kept"}))
    assert record.host_cpu() == "kept" and len(asked) == 1  # read, not asked
    monkeypatch.setattr(record, "_processor_key", lambda: "two")
    assert record.host_cpu() == real and len(asked) == 2  # another processor or llvmlite
    (tmp_path / record.HOST_CPU_FILE).write_text("{damaged")
    assert record.host_cpu() == real and len(asked) == 3
    monkeypatch.setattr(record, "_processor_key", lambda: None)
    assert record.host_cpu() == real and record.host_cpu() == real and len(asked) == 5


def test_the_processor_key_is_stable_and_leaves_out_the_clock():
    key = record._processor_key()
    if key is None:
        pytest.skip("no /proc/cpuinfo")
    assert record._processor_key() == key


def test_only_the_whole_process_freezes_its_objects(tmp_path, monkeypatch):
    """main(argv) from a caller (a test) leaves the garbage collector as it was; main() as the
    process's command line freezes the run's imports before the run and all at its end."""
    frozen = []
    monkeypatch.setattr(cli, "_outlive_collections", lambda: frozen.append(1))
    config = tmp_path / "light.toml"
    config.write_text(
        textwrap.dedent(
            """
            [study]
            name = "light"
            kind = "convergence"
            [arm]
            preset = "one-flexible-link"
            [sweep]
            backends = ["amm"]
            shapes = ["clamped-free"]
            modes = [1, 2]
            [analysis]
            n_frequencies = 1
            [report]
            plots = false
            """
        )
    )
    count = gc.get_freeze_count()
    assert cli.main(["run", str(config), "--output", str(tmp_path / "a")]) == 0
    assert frozen == [] and gc.get_freeze_count() == count
    monkeypatch.setattr(sys, "argv", ["flexlink", "run", str(config), "--output", str(tmp_path / "b")])
    assert cli.main() == 0
    assert frozen == [1, 1]
