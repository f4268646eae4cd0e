"""``frequencies``: natural frequencies at a configuration, or about the static equilibrium
under gravity near it, for every case, or along a sweep of a physical parameter (a joint
variable, the payload mass or the gravity scale) with the modes tracked by MAC.

The kind's rooms: :mod:`~studies.kinds.frequencies.analysis` (the ``[analysis]`` schema, the
swept parameter, one case's frequencies and their references),
:mod:`~studies.kinds.frequencies.rest` (where they are taken: ``analysis.about``, the
equilibrium and its sag), :mod:`~studies.kinds.frequencies.agreement` (mode shapes as fields,
MAC pairing with the finest case, agreement tables), :mod:`~studies.kinds.frequencies.tracking`
(modes tracked along a sweep, crossings and veerings), :mod:`~studies.kinds.frequencies.validity`
(a gravity-scale sweep: frequencies against gravity 0, clamped against pinned frames) and
:mod:`~studies.kinds.frequencies.figures` (its figures).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.analysis.modes import FIELD_POINTS
from core.arm import Arm
from studies.discretizations import Discretization, case_keys, finest_case, label_of, per_case
from studies.kinds.base import StudyKind, lightest_by_backend, with_rows
from studies.kinds.frequencies.agreement import (
    PLOTTED_MODES,
    CaseModes,
    agreement,
    agreement_summary,
    agreement_text,
    case_modes,
    mode_shape_table,
    paired_shapes,
    sweep_agreement,
)
from studies.kinds.frequencies.analysis import (
    GRAVITY_SCALE,
    FrequencyAnalysis,
    FrequencyCount,
    ModalAnalysis,
    ParameterSweep,
    add_references,
    frequency_rows,
    parameter_sweep,
    sweep_axis_label,
)
from studies.kinds.frequencies.bode import bode_table, bode_text, check_bode
from studies.kinds.frequencies.rest import (
    ABOUT_COLUMN,
    EQUILIBRIUM,
    about_text,
    sag_columns,
)
from studies.kinds.frequencies.tracking import (
    events_text,
    mode_events,
    sweep_fields,
    sweep_rows,
    tracked_table,
    tracking_summary,
    tracking_text,
)
from studies.kinds.frequencies.validity import (
    base_point,
    frame_table,
    gravity_table,
    gravity_text,
    validity_text,
)

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


class Frequencies(StudyKind):
    analysis_schema = FrequencyAnalysis
    #: The lowest frequencies of a fine mesh come from the structured eigen-solve
    #: (:mod:`core.dynamics.structured`, O(n) per Lanczos step); the bases still store each link's
    #: blocks densely, (2E)² per link.
    coordinate_limit = 20_000

    def warm_up(self, arm, cases, analysis):
        """One frequency analysis of the lightest case of each backend (the model build, the
        rest point, the eigen-solve its cases use: SciPy's eigen-solvers and the compiled
        kernels loaded), one point of a sweep only; and, where the heaviest case of the
        backend takes the structured eigen-solve (more than
        :data:`~core.dynamics.engine.STRUCTURED_MINIMUM` coordinates:
        :meth:`~core.dynamics.engine.ChainModel.natural_frequencies` with ``method="auto"``),
        that solve on the light model too. Nothing larger than the study's own lightest models
        is built (an 80-element two-link arm solved densely took most of the quickstart's
        memory and a third of its seconds)."""
        from core.dynamics.engine import STRUCTURED_MINIMUM

        heaviest: dict[str, int] = {}
        for case in cases:
            backend = case.discretization.backend
            heaviest[backend] = max(heaviest.get(backend, 0), case.discretization.coordinates(arm))
        for backend, light in lightest_by_backend(arm, cases).items():
            size = heaviest[backend]
            frequency_rows(arm, light, analysis, warn_short=False)
            if size > STRUCTURED_MINIMUM and not light.discretization.geometric_stiffening:
                model, q = light.discretization.build_at(arm, analysis.joint_values(arm))
                try:
                    model.natural_frequencies(q, analysis.joints, count=1, method="structured")
                except ValueError:  # its refusals (translating links; NotStable here): the
                    continue  # cases then take the dense path, loaded by frequency_rows above

    def validate(self, arm, analysis):
        analysis.joint_values(arm)
        if isinstance(analysis, FrequencyAnalysis):
            parameter_sweep(arm, analysis)
            if analysis.bode:
                check_bode(arm, analysis.sweep_parameter)

    def run_case(self, arm, case, analysis):
        sweep = parameter_sweep(arm, analysis)
        if sweep is None:
            return frequency_rows(arm, case, analysis)
        return sweep_rows(arm, case, analysis, sweep)

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame:
        if "tracked_mode" in results:  # blank for rigid-body modes: integers, not floats, in the CSVs
            results = results.assign(tracked_mode=results["tracked_mode"].astype("Int64"))
        return add_references(results, arm, analysis)

    def _modes(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> dict[int, CaseModes]:
        """:func:`case_modes`, computed once per study (one eigen-solve per case) and shared
        by :meth:`report` and :meth:`tables`."""
        key = (arm, analysis, tuple(results["case"]), tuple(results["omega"]))
        if getattr(self, "_last_modes", (None,))[0] != key:
            self._last_modes = (key, case_modes(results, arm, analysis))
        return self._last_modes[1]

    def _agreement(self, results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> pd.DataFrame | None:
        """The agreement table (None for a single case); along a sweep, at every point."""
        if results["case"].nunique() < 2:
            return None
        sweep = parameter_sweep(arm, analysis)
        if sweep is not None:
            key = ("sweep", arm, analysis, tuple(results["case"]), tuple(results["omega"]))
            if getattr(self, "_last_sweep", (None,))[0] != key:
                steps = {
                    int(row["case"]): sweep_fields(
                        arm, Discretization.from_columns(row), analysis, sweep, warn=False
                    )[0]
                    for _, row in case_keys(results).iterrows()
                }
                table = sweep_agreement(results, steps, sweep, analysis.n_frequencies)
                self._last_sweep = (key, table)
            return self._last_sweep[1]
        fields = {case: modes.fields for case, modes in self._modes(results, arm, analysis).items()}
        return agreement(results, arm, analysis, fields)

    def tables(self, results, arm, analysis):
        sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
        if sweep is not None:
            frames = (
                with_rows({}, {"frames along the sweep": frame_table(results, sweep.parameter)})
                if (sweep.parameter == GRAVITY_SCALE)
                else {}
            )
            tables = with_rows(
                {**frames, "tracking": tracking_summary(results, sweep.parameter)},
                {"crossings": mode_events(results, sweep.parameter)},
            )
            table = self._agreement(results, arm, analysis)
            if table is not None:
                tables["agreement along the sweep"] = agreement_summary(table, sweep.parameter)
            return tables
        tables = {
            "frequencies [rad/s]": per_case(results, "mode", "omega", "omega_"),
            "frequencies in hertz [Hz]": per_case(results, "mode", "hz", "hz_"),
        }
        if sag_columns(results.columns):
            keys = case_keys(results)
            sag = results.drop_duplicates("case").set_index("case")[sag_columns(results.columns)]
            tables["sag at the equilibrium"] = keys.join(sag, on="case")
        table = self._agreement(results, arm, analysis)
        if table is not None:
            tables["agreement"] = table
        return tables

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
        if sweep is not None:
            return self._sweep_report(results, arm, analysis, sweep, folder, plots)
        from studies.kinds.frequencies.figures import frequency_error_plot, mode_shape_plot

        source = results["reference_source"].iloc[0]
        text = [
            f"Natural frequencies [rad/s, and Hz], joints {analysis.joints}; reference: {source}.",
            about_text(results, arm, analysis),
        ]
        table = self._agreement(results, arm, analysis)
        reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
        if table is not None:
            text.append(agreement_text(table, reference, "table `agreement`"))
        modes = self._modes(results, arm, analysis)
        shapes = mode_shape_table(results, modes)
        shapes.to_csv(folder / "mode_shapes.csv", index=False)
        text.append(
            "Mode shapes in `mode_shapes.csv`: per case, mode and point (s [m] along the link, "
            f"{FIELD_POINTS} points per flexible link; s_arm [m] along the arm, links end to end) the "
            "deflection w (in-plane) and v (out-of-plane) across the undeformed link at the "
            + ("case's equilibrium" if results[ABOUT_COLUMN].iloc[0] == EQUILIBRIUM else "configuration")
            + ", from the displacement fields of `core.analysis.modes` (so they include the motion of "
            "the link's root and jump where links meet at an angle). Normalization: each mode's "
            "field has unit mass-weighted norm Σ ρA Δs |u|² = 1 over the flexible links (so w, v are "
            "in 1/√kg) and its largest component positive."
        )
        if plots:
            count = min(PLOTTED_MODES, int(results["mode"].max()))
            names = mode_shape_plot(paired_shapes(shapes, modes, finest_case(results), count), folder)
            text.append(
                f"The {count} lowest modes of {reference}, with each case's mode paired to it by MAC "
                f"and its sign aligned: ![mode shapes]({names[0]}) ([PDF]({names[1]}))"
            )
            if (results["rel_error"].abs() > 0).any():
                names = frequency_error_plot(results, folder)
                text.append(
                    f"Frequency errors against the reference: ![frequency errors]({names[0]}) ([PDF]({names[1]}))"
                )
        if analysis.bode:
            text.append(_bode_report(results, arm, analysis, folder, plots))
        return text

    def _sweep_report(
        self,
        results: pd.DataFrame,
        arm: Arm,
        analysis: FrequencyAnalysis,
        sweep: ParameterSweep,
        folder: Path,
        plots: bool,
    ) -> list[str]:
        """summary.md of a sweep; writes tracked_frequencies.csv, agreement.csv (two cases or
        more) and the Campbell diagram."""
        from studies.kinds.frequencies.figures import campbell_plot

        name, unit = sweep.parameter, sweep.unit
        held = ", ".join(
            f"{joint} = {value:.6g} {'rad' if joint.startswith('theta') else 'm'}"
            for index, (joint, value) in enumerate(
                zip(arm.joint_names, analysis.joint_values(arm), strict=True)
            )
            if index != sweep.joint
        )
        sources = list(dict.fromkeys(results["reference_source"]))
        source = (
            "exact clamped-mass roots at each point"
            if all(s.startswith("exact") for s in sources)
            else "; ".join(sources)
        )
        text = [
            f"Natural frequencies [rad/s, and Hz], joints {analysis.joints}, along {name} from "
            f"{sweep.values[0]:.6g} to {sweep.values[-1]:.6g} {unit} ({sweep.values.size} points"
            + (f"; {held}" if held else "")
            + f"); reference: {source}.",
            about_text(results, arm, analysis, name),
            *_stopped_text(results, sweep),
        ]
        if name == GRAVITY_SCALE:
            text += _gravity_report(results, arm, sweep, folder, plots)
        tracked = tracked_table(results, name)
        tracked.to_csv(folder / "tracked_frequencies.csv", index=False)
        rigid = results["tracked_mode"].isna().any()
        text.append(tracking_text(tracked, name, unit, rigid))
        text.append(events_text(mode_events(results, name), name, unit))
        table = self._agreement(results, arm, analysis)
        if table is not None:
            table.to_csv(folder / "agreement.csv", index=False)
            reference = label_of(results[results["case"] == finest_case(results)].iloc[0])
            where = "at every point in `agreement.csv`, worst along the sweep in table `agreement along the sweep`"
            text.append(agreement_text(table, reference, where, name))
        if plots:
            names = campbell_plot(tracked, name, sweep_axis_label(sweep, arm), folder, rigid_left_out=rigid)
            text.append(
                f"Campbell diagram (each tracked mode against {name}, colour by case, line style by "
                f"backend): ![campbell]({names[0]}) ([PDF]({names[1]}))"
            )
        return text


def _stopped_text(results: pd.DataFrame, sweep: ParameterSweep) -> list[str]:
    """A sentence naming the cases whose sweep stopped before its last point (none: nothing)."""
    reached = results.groupby("case")["point"].max()
    stopped = reached[reached < sweep.values.size]
    if stopped.empty:
        return []
    named = [
        f"{label_of(results[results['case'] == case].iloc[0])} after {sweep.parameter} = "
        f"{sweep.values[point - 1]:.6g} (point {point} of {sweep.values.size})"
        for case, point in stopped.items()
    ]
    return [
        "Sweeps that stopped early (the model has no equilibrium or no frequencies at the next "
        "point; the warnings say why): " + "; ".join(named) + "."
    ]


def _bode_report(
    results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis, folder: Path, plots: bool
) -> str:
    """Writes bode.csv and, with ``plots``, the Bode diagram; returns the summary's paragraph."""
    table, left_out = bode_table(results, arm, analysis)
    table.to_csv(folder / "bode.csv", index=False)
    names = None
    if plots and not table.empty:
        from studies.kinds.frequencies.figures import bode_plot

        names = bode_plot(table, folder)
    return bode_text(table, left_out, str(results[ABOUT_COLUMN].iloc[0]), names)


def _gravity_report(
    results: pd.DataFrame, arm: Arm, sweep: ParameterSweep, folder: Path, plots: bool
) -> list[str]:
    """The gravity-scale sweep's paragraphs: writes gravity_sweep.csv and, with ``plots``, its
    figure (frequencies against gravity 0, clamped against pinned frames)."""
    name = sweep.parameter
    table, frames = gravity_table(results, name), frame_table(results, name)
    table.to_csv(folder / "gravity_sweep.csv", index=False)
    base = float(sweep.values[base_point(results, name) - 1])
    text = [gravity_text(table, name, base), *([validity_text(frames, name)] if not frames.empty else [])]
    if plots:
        from studies.kinds.frequencies.figures import gravity_plot

        names = gravity_plot(table, frames, name, sweep_axis_label(sweep, arm), base, folder)
        text.append(
            f"Frequencies against {name} relative to {name} = {base:g}"
            + (", and the frame difference of the FEM pairs" if not frames.empty else "")
            + f": ![gravity sweep]({names[0]}) ([PDF]({names[1]}))"
        )
    return text


__all__ = [
    "Frequencies",
    "FrequencyAnalysis",
    "FrequencyCount",
    "ModalAnalysis",
    "add_references",
    "frequency_rows",
]
