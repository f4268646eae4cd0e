"""The rules of the report figures (``studies.plots``) on figures drawn from made-up tables
whose shape is that of the shipped examples that broke them: a spin-up with twelve cases, half
of them diverging; a start-up transient; a two-case simulation whose curves coincide; case times
dominated by noise; a log axis spanning less than a decade. Every figure also passes
``tests.test_figures.check_figure`` (units, legends, tick labels, zero curves)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import studies.plots
from studies.discretizations import STIFFENING_COLUMN, normalize_columns
from studies.kinds.convergence_figures import tradeoff_plot
from studies.time_figures import DIVERGENT_RATIO, SPIKE_RATIO, time_plot
from tests.test_figures import check_figure, data_lines, style_of

#: Output times of the made-up runs [s].
TIMES = np.linspace(0.0, 12.0, 241)


@pytest.fixture
def kept(monkeypatch) -> dict:
    """The figures ``studies.plots.save`` writes, by stem (still written to the folder)."""
    figures = {}
    save = studies.plots.save

    def keep(figure, folder, stem):
        figures[stem] = figure
        return save(figure, folder, stem)

    monkeypatch.setattr(studies.plots, "save", keep)
    return figures


def run_rows(case: int, backend: str, size: int, stiffened: bool, tip: np.ndarray, solver="composite"):
    """Rows of one made-up prescribed spin-up run (the columns the time plot reads)."""
    times = TIMES[: tip.size]
    return pd.DataFrame(
        {
            "case": case,
            "backend": backend,
            "shape": "clamped-free" if backend == "amm" else "clamped",
            "modes": size if backend == "amm" else None,
            "elements": size if backend == "fem" else None,
            STIFFENING_COLUMN: stiffened,
            "solver": solver,
            "time": times,
            "theta1": 0.4 * times**2 / (1 + times),
            "tip_w1": tip,
            "tip_v1": 0.0,
            "tau1": 50.0 * np.cos(times) + tip,
            "energy_balance_error": 1e-9 * np.sin(7.0 * times + case),
            "n_dof": 1 + size,
        }
    )


def spin_up_like() -> pd.DataFrame:
    """Twelve cases (AMM 2, 4, 8 modes, FEM 4, 8, 16 elements, each without and with geometric
    stiffening): the stiffened tips dip to about −0.57 m, the unstiffened ones grow to −10 m and
    stop there (as the deflection limit stops the Kane–Ryan–Banerjee spin-up without stiffening)."""
    frames, case = [], 0
    for stiffened in (False, True):
        for backend, size in (("amm", 2), ("amm", 4), ("amm", 8), ("fem", 4), ("fem", 8), ("fem", 16)):
            case += 1
            if stiffened:
                tip = -0.57 * np.sin(np.pi * TIMES / 13.5) * (1 + 0.01 * case)
            else:
                tip = -0.05 * np.expm1(TIMES * (0.58 + 0.01 * case))
                tip = tip[: int(np.argmax(tip <= -10.0)) + 1] if (tip <= -10.0).any() else tip
            frames.append(run_rows(case, backend, size, stiffened, tip))
    return normalize_columns(pd.concat(frames, ignore_index=True))


def drawn(figure, ylabel_start: str) -> list:
    """The panels of ``figure`` whose y label starts with ``ylabel_start``."""
    return [axis for axis in figure.axes if axis.get_ylabel().startswith(ylabel_start)]


def test_twelve_runs_get_a_colour_and_line_style_pair_each(tmp_path, kept):
    """More runs than line styles: colour tells the discretization, line style the geometric
    stiffening; no (colour, line style) pair is drawn twice in a panel or the legend."""
    results = spin_up_like()
    notes = {}
    time_plot(
        results,
        [["theta1"], ["tip_w1"], ["tau1"], ["energy_balance_error"]],
        ["joint angle [rad]", "tip deflection [m]", "joint torque [N·m]", "energy balance error [J]"],
        tmp_path,
        "time_response",
        by=["case", "solver"],
        style_by=STIFFENING_COLUMN,
        notes=notes,
    )
    figure = kept["time_response"]
    check_figure("time_response", figure)
    assert notes["encoding"] == "colour: case; line style: geometric stiffening"
    for axis in figure.axes:
        pairs = [style_of(line)[:2] for line in data_lines(axis)]
        assert len(pairs) == 12 and len(set(pairs)) == 12, axis.get_ylabel()
    (legend,) = figure.legends
    labels = [text.get_text() for text in legend.get_texts()]
    assert "geometric stiffening on" in labels and "geometric stiffening off" in labels
    assert len(labels) == 6 + 2


def test_with_many_runs_every_quantity_gets_its_own_row(tmp_path, kept):
    """Colour tells the run, so two quantities of a group get a row each (named in the label);
    a quantity that is zero throughout gets none."""
    time_plot(
        spin_up_like(),
        [["theta1", "tau1"], ["tip_w1", "tip_v1"]],
        ["joint [rad, N·m]", "tip deflection [m]"],
        tmp_path,
        "rows",
        style_by=STIFFENING_COLUMN,
    )
    figure = kept["rows"]
    assert [axis.get_ylabel() for axis in figure.axes] == [
        "$\\theta_{1}$\njoint [rad, N·m]",
        "$\\tau_{1}$\njoint [rad, N·m]",
        "tip deflection [m]",
    ]
    check_figure("rows", figure)


def test_a_diverging_run_goes_off_scale_with_a_note_in_the_figure_and_the_summary(tmp_path, kept):
    """The tips that grow to −10 m do not flatten the −0.57 m responses: the panel's limits
    hold the bounded runs (within the margin), every run is still drawn, and both the panel's
    note and the sentences for the summary name the runs off scale."""
    results = spin_up_like()
    notes = {}
    time_plot(
        results,
        [["tip_w1"]],
        ["tip deflection [m]"],
        tmp_path,
        "tip",
        by=["case"],
        style_by=STIFFENING_COLUMN,
        notes=notes,
    )
    (axis,) = kept["tip"].axes
    bounded = results[results[STIFFENING_COLUMN]]["tip_w1"]
    low, high = axis.get_ylim()
    span = bounded.max() - bounded.min()
    assert (
        bounded.min() - 0.1 * span <= low <= bounded.min()
        and bounded.max() <= high <= bounded.max() + 0.1 * span
    )
    assert len(data_lines(axis)) == 12
    assert any("off scale" in text.get_text() for text in axis.texts)
    (sentence,) = notes["panels"]
    assert "off scale" in sentence and re.search(r"up to 1\d(\.\d)? m\)", sentence), sentence
    diverging = [f"{b} x{s}" for b, s in (("AMM clamped-free", 2), ("FEM clamped", 16))]
    assert all(name in sentence for name in diverging), sentence
    assert "stiffened" not in sentence  # the bounded runs are not named
    check_figure("tip", kept["tip"])


def test_a_run_is_off_scale_only_beyond_the_ratio_and_for_at_most_half_the_runs(tmp_path, kept):
    """Two bounded runs an order apart (9×, under DIVERGENT_RATIO) stay in scale; a single run
    ten times above three others would not, but three runs above one are the history."""
    assert DIVERGENT_RATIO == 10.0
    results = normalize_columns(
        pd.concat(
            [
                run_rows(1, "amm", 2, False, -0.1 * np.sin(TIMES)),
                run_rows(2, "fem", 4, False, -0.9 * np.sin(TIMES)),
            ],
            ignore_index=True,
        )
    )
    notes = {}
    time_plot(results, [["tip_w1"]], ["tip deflection [m]"], tmp_path, "apart", notes=notes)
    assert notes["panels"] == [] and not kept["apart"].axes[0].texts
    tips = [30.0, 1.0, 40.0, 35.0]  # one small run among three large ones
    frames = [run_rows(i, "amm", i + 1, False, -peak * np.sin(TIMES)) for i, peak in enumerate(tips, 1)]
    time_plot(
        normalize_columns(pd.concat(frames, ignore_index=True)),
        [["tip_w1"]],
        ["tip deflection [m]"],
        tmp_path,
        "many",
        notes=notes,
    )
    assert notes["panels"] == []


def test_a_start_up_transient_is_clipped_with_a_note_but_a_lasting_one_is_drawn(tmp_path, kept):
    """A peak at one sample (a joint acceleration at t = 0 under PD control), 1000× the rest,
    is clipped and reported; a transient over a tenth of the run is the history and drawn whole."""
    wave = np.sin(3.0 * TIMES)
    spiked = wave.copy()
    spiked[0] = -1000.0
    lasting = wave + np.where(TIMES < 1.2, -30.0 * np.sin(np.pi * TIMES / 1.2), 0.0)
    for stem, values, clipped in (("spiked", spiked, True), ("lasting", lasting, False)):
        notes = {}
        time_plot(
            run_rows(1, "amm", 2, False, values),
            [["tip_w1"]],
            ["tip deflection [m]"],
            tmp_path,
            stem,
            notes=notes,
        )
        (axis,) = kept[stem].axes
        low, high = axis.get_ylim()
        if clipped:
            assert -SPIKE_RATIO <= low < -0.99 and 0.99 < high <= SPIKE_RATIO
            (sentence,) = notes["panels"]
            assert "clipped at a transient (peak -1e+03 m at t = 0 s)" in sentence
        else:
            assert low <= values.min() and high >= values.max() and notes["panels"] == []


def test_a_history_the_output_times_do_not_resolve_is_not_drawn(tmp_path, kept):
    """A vibration at 0.45 of the output rate (successive samples alternate, the lines between
    them draw noise) is not drawn and the summary says why; the same vibration at a tenth of
    the output rate is drawn. (The space-arm maneuver's joint accelerations at 201 output
    times alternate by 10–15 % of their span; JITTER_LIMIT is 5 %.)"""
    rate = 1.0 / (TIMES[1] - TIMES[0])
    for stem, frequency, resolved in (("fast", 0.45 * rate, False), ("slow", 0.1 * rate, True)):
        notes = {}
        values = np.sin(0.3 * TIMES) + 0.5 * np.sin(2 * np.pi * frequency * TIMES + 0.3)
        time_plot(
            run_rows(1, "amm", 2, False, values),
            [["tip_w1"]],
            ["tip deflection [m]"],
            tmp_path,
            stem,
            notes=notes,
        )
        (axis,) = kept[stem].axes
        assert bool(data_lines(axis)) == resolved
        if resolved:
            assert notes["panels"] == []
        else:
            (sentence,) = notes["panels"]
            assert "not drawn: the histories oscillate faster than the output times resolve" in sentence
            assert any("not drawn" in text.get_text() for text in axis.texts)
        check_figure(stem, kept[stem])


def test_coinciding_runs_get_a_difference_column(tmp_path, kept):
    """Two runs a millimetre apart, and a second solver of the reference case identical to
    round-off: the last column shows each run minus the reference; the round-off one is named,
    not drawn."""
    base = -0.05 * np.sin(TIMES)
    results = normalize_columns(
        pd.concat(
            [
                run_rows(1, "amm", 2, False, base + 1e-3 * np.sin(9 * TIMES)),
                run_rows(1, "amm", 2, False, base + 1e-3 * np.sin(9 * TIMES) + 1e-15, "recursive"),
                run_rows(2, "fem", 4, False, base),
            ],
            ignore_index=True,
        )
    )
    reference = ((results["case"] == 1) & (results["solver"] == "composite")).to_numpy()
    notes = {}
    time_plot(
        results,
        [["tip_w1"]],
        ["tip deflection [m]"],
        tmp_path,
        "pair",
        by=["case", "solver"],
        reference=reference,
        notes=notes,
    )
    figure = kept["pair"]
    check_figure("pair", figure)
    values, difference = figure.axes
    assert len(data_lines(values)) == 3 and difference.get_ylabel() == "difference [m]"
    (line,) = data_lines(difference)
    assert np.max(np.abs(line.get_ydata())) == pytest.approx(1e-3, rel=1e-3)
    (sentence,) = notes["panels"]
    assert "AMM clamped-free x2 recursive ≡ AMM clamped-free x2 composite" in sentence, sentence


def test_case_times_are_points_and_a_short_log_axis_has_plain_labels(tmp_path, kept):
    """cost_to_accuracy: the wall times (noise, a factor of 3 between neighbours) are markers
    without lines; the time axis spans less than a decade and is labelled without minor labels
    that run together (check_figure measures the drawn tick labels)."""
    rng = np.random.default_rng(7)
    cases = pd.DataFrame(
        {
            "backend": ["amm"] * 5 + ["fem"] * 5,
            "shape": ["clamped-free"] * 5 + ["clamped"] * 5,
            "n_dof": [3, 4, 5, 7, 9, 3, 5, 9, 17, 33],
            "worst": 10.0 ** -np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], float),
            "wall_time_s": rng.uniform(0.005, 0.015, 10),
        }
    )
    tradeoff_plot(cases, tmp_path)
    figure = kept["cost_to_accuracy"]
    check_figure("cost_to_accuracy", figure)
    sizes, times = figure.axes
    assert all(line.get_linestyle() == "None" for line in data_lines(times))
    assert all(line.get_linestyle() != "None" for line in data_lines(sizes))
    FigureCanvasAgg(figure).draw()
    assert [t.get_text() for t in times.get_xticklabels(minor=True) if t.get_text()] == []
    assert len([t for t in times.get_xticklabels() if t.get_text()]) >= 2


@pytest.mark.parametrize(("low", "high"), [(0.0052, 0.0098), (2.0, 9.0), (0.013, 0.017), (3e-4, 0.7)])
def test_decade_ticks_give_at_least_two_labels_that_do_not_overlap(low, high):
    """However short the log axis, at least two labels, none overlapping (drawn text)."""
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(2.0, 2.0))
    axis.loglog([low, high], [1.0, 10.0])
    axis.set_xlim(low, high)
    axis.set_xlabel("wall time [s]")
    axis.set_ylabel("error [–]")
    studies.plots.decade_ticks(axis, "x")
    check_figure("short axis", figure)
    FigureCanvasAgg(figure).draw()
    inside = [t for t in axis.get_xticklabels() if t.get_text() and low <= t.get_position()[0] <= high]
    assert len(inside) >= 2
    plt.close(figure)
