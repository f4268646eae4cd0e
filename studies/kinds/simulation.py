"""``simulation``: time responses of several discretizations of the same arm and maneuver.

Rows: one per case × output time, with every column of
:func:`core.simulate` plus the sweep columns. The report overlays joint
angles, tip deflections, torques and the energy balance, lists the
differences to the finest case and the solver cost, and (``spectrum = true``)
the peak frequencies of the tip acceleration.

``prescribed = true`` drives the joints exactly along the trajectory (only the
flexible coordinates are integrated; the torques are the joint inputs that
realise the motion: :func:`core.analysis.simulation.prescribed_motion`), as in the
spin-up benchmark (``spin-up.toml``). ``deflection_limit`` stops a run whose tip
deflection reaches it (a diverging model) and the tables give when;
``report_times`` tabulates the tip deflections at given times with their extremes.
A run whose integrator fails keeps the rows computed before the failure, and the
failure is reported as a warning of that case.
"""

from __future__ import annotations

import functools
import inspect
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, create_model

from core.analysis.controllers import CONTROLLERS
from core.analysis.method_choice import choose_method
from core.analysis.simulation import ATOL, METHODS, RTOL, SimulationError, simulate
from core.analysis.trajectories import TRAJECTORIES
from core.dynamics.model import SOLVERS
from studies.discretizations import (
    STIFFENING_COLUMN,
    finest_case,
    joint_configuration,
    label_of,
    sweep_columns,
)
from studies.kinds.base import WARM_UP_SPAN, StudyKind, caution, lightest_by_backend, warm_up_method
from studies.limits import AtMost, Deflection, Duration, JointValue, Span, Tolerance
from studies.progress import simulation_progress
from studies.text import counted

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


#: Output times of a simulation: every one is a row of every case and solver (a row is a few
#: hundred bytes in memory and in results.csv).
OutputPoints = Annotated[
    PositiveInt,
    AtMost(
        1_000_000,
        "a row of every case each, gigabytes of results",
        soft=100_000,
        soft_why="a row of every case each, hundreds of megabytes of results",
    ),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _parameters(function) -> dict[str, tuple]:
    """pydantic fields from the keyword-only parameters of ``function`` (its
    annotations and defaults): a registered class's ``from_config`` is its schema."""
    hints = typing.get_type_hints(function)
    fields = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (hints[parameter.name], default)
    return fields


def _trajectory_spec(name: str, cls: type) -> type[BaseModel]:
    return create_model(
        f"{cls.__name__}Spec", __base__=_Strict, kind=(Literal[name], ...), **_parameters(cls.from_config)
    )


@functools.lru_cache(maxsize=8)
def _analysis_schema(trajectories: tuple, controllers: tuple, solvers: tuple) -> type[BaseModel]:
    """``[analysis]`` of a simulation for the registries' contents (``(name, class)`` pairs).

    ``trajectory``: one table form per registered trajectory, told apart by
    ``kind``; ``controller.kind``: ``"none"`` or a registered controller, with
    the gains every registered ``from_config`` takes. Built from the registries
    when asked, so a variant registered after import is part of the schema.
    """
    specs = tuple(_trajectory_spec(name, cls) for name, cls in trajectories)
    trajectory = Annotated[typing.Union[specs], Field(discriminator="kind")] if len(specs) > 1 else specs[0]  # noqa: UP007
    controller = create_model(
        "ControllerSpec",
        __base__=_Strict,
        kind=(
            Literal[("none", *(name for name, _ in controllers))],
            Field(
                "none",
                description="A controller of core.analysis.controllers.CONTROLLERS, or none (zero torques).",
            ),
        ),
        **_parameters(controllers[0][1].from_config),
    )
    return create_model(
        "SimulationAnalysis",
        __base__=_Strict,
        t_end=(Duration, Field(description="End of the simulation, which starts at t = 0 [s].")),
        q0=(
            list[JointValue] | None,
            Field(
                None,
                description="Initial joint variables, one per joint; unset: the trajectory's start, "
                "else Arm.home() [rad or m].",
            ),
        ),
        trajectory=(
            trajectory | None,
            Field(None, description="The reference trajectory, a table whose kind names the trajectory."),
        ),
        controller=(controller, Field(controller(), description="The joint controller and its gains.")),
        method=(
            Literal[("auto", *METHODS)],
            Field(
                "auto",
                description="'auto': simulate's choice per case, the explicit DOP853 or the implicit Radau "
                "from the model's stiffness (spectral radius × span; the method taken and why are in "
                "the method column and the summary); a scipy solve_ivp method; or 'Gauss': fixed-step "
                "symplectic Gauss-Legendre collocation of order 6 for long undamped runs (give step).",
            ),
        ),
        step=(
            Duration | None,
            Field(
                None, description="The fixed step of method 'Gauss' (required there, refused otherwise) [s]."
            ),
        ),
        solver=(
            Literal[("auto", *solvers)] | Annotated[list[Literal[("auto", *solvers)]], Field(min_length=1)],
            Field(
                "auto",
                description="Forward-dynamics solver, or several: each case then runs once per solver, "
                "its rows tagged by solver ('auto': the fastest accurate one for the model, "
                "Model.auto_solver; its rows tagged by the solver taken).",
            ),
        ),
        rtol=(Tolerance, Field(RTOL, description="Relative tolerance of the integrator.")),
        atol=(Tolerance, Field(ATOL, description="Absolute tolerance of the integrator.")),
        output_points=(OutputPoints, Field(201, description="Output times, evenly spaced from 0 to t_end.")),
        spectrum=(bool, Field(False, description="Report the peak frequencies of the tip acceleration.")),
        prescribed=(
            bool,
            Field(
                False,
                description="Drive the joints exactly along the trajectory (kinematic driving): only the "
                "flexible coordinates are integrated and the torques are the joint inputs that realise the "
                "motion; needs a trajectory and controller none, and one solver (no forward dynamics).",
            ),
        ),
        deflection_limit=(
            Deflection | None,
            Field(
                None,
                description="Stop a run when a flexible link's tip deflection (any tip_w or tip_v) reaches "
                "this magnitude, and report when (a diverging model stops there instead of overflowing) [m].",
            ),
        ),
        report_times=(
            list[Span],
            Field(
                [],
                description="Times at which the tip deflections are tabulated, with each one's minimum and "
                "maximum and when; they join the output times (times after t_end are left out) [s].",
            ),
        ),
    )


def simulation_schema() -> type[BaseModel]:
    """The ``[analysis]`` schema of the current registries."""
    return _analysis_schema(tuple(TRAJECTORIES.items()), tuple(CONTROLLERS.items()), tuple(sorted(SOLVERS)))


def _trajectory(spec, arm, q0):
    """The registered trajectory of ``spec`` starting at ``q0`` (None without one)."""
    if spec is None:
        return None
    parameters = spec.model_dump(exclude={"kind"})
    try:
        return TRAJECTORIES[spec.kind].from_config(arm, q0, **parameters)
    except ValueError as error:
        raise ValueError(f"analysis.trajectory: {error}") from None


def _controller(spec, arm):
    """The registered controller of ``spec`` for ``arm`` (None for "none")."""
    if spec.kind == "none":
        return None
    try:
        return CONTROLLERS[spec.kind].from_config(arm, **spec.model_dump(exclude={"kind"}))
    except ValueError as error:
        raise ValueError(f"analysis.controller: {error}") from None


def _initial_joints(arm, analysis) -> tuple[np.ndarray, object]:
    """(q0 of the joints, trajectory): ``analysis.q0``, else the trajectory's start, else ``arm.home()``."""
    q0 = joint_configuration(arm, analysis.q0, "analysis.q0")
    trajectory = _trajectory(analysis.trajectory, arm, q0)
    if trajectory is not None and analysis.q0 is None:
        q0 = trajectory.evaluate(0.0)[0]
        if q0.shape != (arm.n_joints,):
            raise ValueError(
                f"analysis.trajectory: needs {counted(arm.n_joints, 'joint value')}, got {q0.size}"
            )
    return q0, trajectory


def _run(arm, analysis, model, q0, trajectory, solver, t_end, method, times):
    """:func:`simulate` of ``model`` from q0 over (0, ``t_end``) with the study's settings, one
    ``solver`` and ``method``, rows at ``times``."""
    return simulate(
        model,
        (0.0, t_end),
        q0,
        controller=_controller(analysis.controller, arm),
        trajectory=trajectory,
        method=method,
        step=analysis.step,
        solver=solver,
        rtol=analysis.rtol,
        atol=analysis.atol,
        t_eval=times,
        progress=simulation_progress(solver, t_end),
        prescribed=analysis.prescribed,
        deflection_limit=analysis.deflection_limit,
    )


def solvers_of(analysis) -> list[str]:
    """The solvers of ``analysis.solver`` (a name or a list), each once, in order."""
    names = [analysis.solver] if isinstance(analysis.solver, str) else analysis.solver
    return list(dict.fromkeys(names))


class Simulation(StudyKind):
    timing_columns = ("wall_time_s",)

    @property
    def analysis_schema(self) -> type[BaseModel]:
        return simulation_schema()

    def validate(self, arm, analysis):
        _initial_joints(arm, analysis)
        _controller(analysis.controller, arm)
        kind = analysis.controller.kind
        if (
            kind != "none"
            and analysis.trajectory is None
            and getattr(CONTROLLERS[kind], "tracks_trajectory", False)
        ):
            # without one every case failed at run time
            raise ValueError(
                f"analysis.trajectory: controller {analysis.controller.kind!r} tracks a reference "
                "trajectory; give analysis.trajectory (or controller kind 'none' for a free response)"
            )
        if (analysis.step is not None) != (analysis.method == "Gauss"):
            raise ValueError(
                f"analysis.step: the fixed step of method 'Gauss' only (method {analysis.method!r}, "
                f"step {analysis.step!r})"
            )
        if "auto" in solvers_of(analysis) and len(solvers_of(analysis)) > 1:
            # "auto" takes one of the listed solvers: its rows would merge with that solver's
            raise ValueError(
                "analysis.solver: 'auto' picks one solver per case; to compare solvers, list them by "
                f"name, got {analysis.solver!r}"
            )
        if analysis.prescribed:
            if analysis.trajectory is None:
                raise ValueError(
                    "analysis.prescribed: the joints follow a trajectory; give analysis.trajectory"
                )
            if analysis.controller.kind != "none":
                raise ValueError(
                    "analysis.controller: with prescribed = true the joint inputs are the reactions of the "
                    f"prescribed motion; use kind 'none', got {analysis.controller.kind!r}"
                )
            if len(solvers_of(analysis)) > 1:
                raise ValueError(
                    "analysis.solver: prescribed motion uses no forward-dynamics solver; give one, "
                    f"got {analysis.solver!r}"
                )

    def warm_up(self, arm, cases, analysis):
        """A short run of the lightest case of each backend with the study's own settings
        (controller, trajectory, method, every solver, prescribed motion, deflection limit)
        over :data:`~studies.kinds.base.WARM_UP_SPAN` of ``t_end`` (one step of a fixed-step
        method): it loads the compiled kernels the cases call (the right-hand side or the
        compiled DOP853 loop, the Jacobian of an implicit method, the mass matrix and inverse
        dynamics of the rows), so a pool's forked workers inherit them and no case's or
        solver's ``wall_time_s`` carries their loading (the space arm's first case carried
        ~0.5 s of its ~3 s). With ``method = "auto"`` the light model's choice over the full
        span is the method run (Radau for LSODA: :func:`~studies.kinds.base.warm_up_method`)."""
        q0_joints, trajectory = _initial_joints(arm, analysis)
        span = analysis.step if analysis.step is not None else WARM_UP_SPAN * analysis.t_end
        span = min(span, analysis.t_end)
        for light in lightest_by_backend(arm, cases).values():
            model, q0 = light.discretization.build_at(arm, q0_joints)
            for solver in solvers_of(analysis):
                method = analysis.method
                if method == "auto":
                    taken = model.auto_solver() if solver == "auto" else solver
                    whole = (0.0, analysis.t_end)
                    method = choose_method(model, whole, q0, prescribed=analysis.prescribed, solver=taken)[0]
                method = warm_up_method(method)
                _run(arm, analysis, model, q0, trajectory, solver, span, method, np.array([0.0, span]))

    def run_case(self, arm, case, analysis):
        q0_joints, trajectory = _initial_joints(arm, analysis)
        model, q0 = case.discretization.build_at(arm, q0_joints)
        times = np.linspace(0.0, analysis.t_end, analysis.output_points)
        reported = [t for t in analysis.report_times if t <= analysis.t_end]
        if reported:
            times = np.union1d(times, reported)
        rows = []
        for solver in solvers_of(analysis):
            try:
                frame = _run(
                    arm, analysis, model, q0, trajectory, solver, analysis.t_end, analysis.method, times
                )
            except SimulationError as error:  # keep what was computed (a diverging model may fail)
                frame = error.frame
                caution(f"{solver}: {error}; the rows up to there are kept")
                if frame.empty:
                    raise
            taken = frame.attrs.get("solver") if solver == "auto" else None
            frame.insert(0, "solver", taken or solver)  # "auto": the one taken (a prescribed run takes none)
            frame["method"] = frame.attrs["method"]
            if analysis.method == "auto":
                frame["method_reason"] = frame.attrs["method_reason"]
            for key, value in reversed(case.columns().items()):
                frame.insert(0, key, value)
            frame["n_dof"] = model.n_dof
            for key in ("nfev", "njev", "nlu"):
                frame[key] = frame.attrs[key]
            # The one column that differs between reruns: what each solver cost.
            frame["wall_time_s"] = frame.attrs["wall_time"]
            rows += frame.to_dict("records")
        return rows

    def tables(self, results, arm, analysis):
        import pandas as pd

        rows = []
        finest = results[results["case"] == finest_case(results)]
        reference = finest[finest["solver"] == finest["solver"].iloc[0]]
        finest_of = _finest_by_model(results)
        joints = list(arm.joint_names)
        tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
        keys = sweep_columns(results)
        ended = results.groupby(["case", "solver"], sort=False)["time"].max()
        early = bool((ended < analysis.t_end * (1 - 1e-12)).any())
        for (case, _), group in results.groupby(["case", "solver"], sort=False):
            row = {k: group.iloc[0][k] for k in (*keys, "solver")}
            for column in tips:
                row[f"max_abs_{column}"] = group[column].abs().max()
            if analysis.deflection_limit is not None:
                row["limit_reached_s"] = _limit_reached(group, tips, analysis.deflection_limit)
            if early:
                row["end_time_s"] = float(group["time"].iloc[-1])
            row["max_joint_diff_to_finest"] = _max_difference(group, reference, joints) if joints else np.nan
            if tips:
                row["max_tip_diff_to_finest"] = _max_difference(group, finest_of[case], tips)
            references = [f"{name}_ref" for name in joints]
            if all(column in group for column in references):
                row["max_joint_error_to_reference"] = float(
                    np.max(np.abs(group[joints].to_numpy() - group[references].to_numpy()))
                )
            row["energy_balance_error"] = group["energy_balance_error"].abs().max()
            row["method"] = group["method"].iloc[0]
            row["rhs_evaluations"] = int(group["nfev"].iloc[0])
            row["jacobian_evaluations"] = int(group["njev"].iloc[0])
            row["lu_decompositions"] = int(group["nlu"].iloc[0])
            row["wall_time_s"] = float(group["wall_time_s"].iloc[0])
            row["wall_s_per_simulated_s"] = row["wall_time_s"] / analysis.t_end
            rows.append(row)
        tables = {"maxima and differences": pd.DataFrame(rows)}
        if analysis.report_times:
            tables["tip deflection at report times [m]"] = _report_times(results, tips, analysis)
        if analysis.spectrum:
            tables["tip acceleration spectrum"] = _spectrum_peaks(results)
        return tables

    def cost(self, costs, analysis):
        costs = costs.copy()
        costs["wall_s_per_simulated_s"] = costs["wall_time_s"] / analysis.t_end
        return costs

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.time_figures import time_plot

        driving = (
            "joints prescribed along the trajectory (the torques are the joint inputs that realise it)"
            if analysis.prescribed
            else f"controller {analysis.controller.kind}"
        )
        text = [
            f"{analysis.t_end} s, {driving}, trajectory "
            f"{analysis.trajectory.kind if analysis.trajectory else 'none'}, method {analysis.method} "
            f"(rtol {analysis.rtol:g}). Joint differences are to the finest case "
            "(most coordinates, rigid segments only without other cases; same output times)"
            + (
                "; tip differences to the finest case built the same way (with or without geometric "
                "stiffening), over the times both reached."
                if STIFFENING_COLUMN in results
                else "; tip differences too."
            )
        ]
        if analysis.method == "auto" and "method_reason" in results:
            text.append(_method_text(results))
        if analysis.deflection_limit is not None:
            text.append(_limit_text(results, analysis))
        if plots:
            joints = list(arm.joint_names)
            tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
            taus = [c for c in results.columns if c.startswith("tau")]
            by = ["case", "solver"]
            labels = _joint_labels(arm)
            finest = results[results["case"] == finest_case(results)]
            reference = (
                (results["case"] == finest["case"].iloc[0]) & (results["solver"] == finest["solver"].iloc[0])
            ).to_numpy()
            notes = {}
            # the largest |error| so far: the drift the check is about, without the oscillation
            # at the run's frequencies that fills a panel of many runs with ink
            drawn = results.assign(
                energy_balance_error=results["energy_balance_error"]
                .abs()
                .groupby([results["case"], results["solver"]], sort=False)
                .cummax()
            )
            names = time_plot(
                drawn,
                [joints, tips, taus, ["energy_balance_error"]],
                [
                    labels["variable"],
                    "tip deflection [m]",
                    labels["effort"],
                    "energy balance error,\nlargest |·| so far [J]",
                ],
                folder,
                "time_response",
                by=by,
                style_by=STIFFENING_COLUMN,
                reference=reference,
                notes=notes,
            )
            text.append(
                _figure_text(
                    "Time response (joint variables, tip deflections, joint efforts, and the energy "
                    "balance error as its largest magnitude up to each time)",
                    notes,
                    names,
                )
            )
            if all(f"{name}_ref" in results for name in joints):
                tracking = results.copy()
                errors = [f"{name}_error" for name in joints]
                for name, error in zip(joints, errors, strict=True):
                    tracking[error] = tracking[name] - tracking[f"{name}_ref"]
                rigid_power = sum(
                    tracking[f"tau{i}"] * tracking[f"{name}_ref_dot"] for i, name in enumerate(joints, 1)
                )
                tracking["power_difference"] = tracking["input_power"] - rigid_power
                notes = {}
                names = time_plot(
                    tracking,
                    [errors, tips, ["power_difference"], [f"{name}_ddot" for name in joints]],
                    [
                        labels["error"],
                        "tip deflection [m]",
                        r"$P - P_\mathrm{rigid}$ [W]",
                        labels["acceleration"],
                    ],
                    folder,
                    "tracking",
                    by=by,
                    style_by=STIFFENING_COLUMN,
                    reference=reference,
                    notes=notes,
                )
                text.append(
                    _figure_text(
                        "Tracking (the comparison of Mohan & Saha (DeNOC)): joint errors to the desired "
                        "trajectory, tip deflections, input power P = Σ τ q̇ minus the rigid model's "
                        "P_rigid = Σ τ q̇_d, joint accelerations",
                        notes,
                        names,
                    )
                )
        return text


def _figure_text(what: str, notes: dict, names: list[str]) -> str:
    """The summary's paragraph of a time figure: what it shows, how runs and quantities are
    told apart, the difference column, and every panel it clipped (``notes`` of ``time_plot``)."""
    compared = (
        " A last column of panels shows each run minus the finest case." if notes.get("compared") else ""
    )
    said = " ".join(notes.get("panels", []))
    return (
        f"{what} ({notes['encoding']}): ![{names[0].rsplit('.', 1)[0].replace('_', ' ')}]({names[0]}) "
        f"([PDF]({names[1]})).{compared}" + (f" Panel notes: {said}" if said else "")
    )


def _joint_labels(arm) -> dict[str, str]:
    """Axis labels of the joint variables, their errors and accelerations, and the joint
    efforts, with units: rad, rad/s², N·m for revolute joints, m, m/s², N for prismatic ones
    (both for an arm with both)."""
    present = [kind for kind in ("revolute", "prismatic") if any(j.kind == kind for j in arm.joints)]
    names = {"revolute": ("joint angle", "joint torque"), "prismatic": ("joint position", "joint force")}
    units = {"revolute": ("rad", "rad/s²", "N·m"), "prismatic": ("m", "m/s²", "N")}
    position, acceleration, effort = (", ".join(u) for u in zip(*(units[k] for k in present), strict=True))
    variable = names[present[0]][0] if len(present) == 1 else "joint variable"
    return {
        "variable": f"{variable} [{position}]",
        "error": f"joint error [{position}]",
        "acceleration": f"joint accel. [{acceleration}]",
        "effort": f"{', '.join(names[k][1] for k in present)} [{effort}]",
    }


def _finest_by_model(results: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """case → the rows of the finest case (:func:`finest_case`) built the same way (the same
    geometric stiffening, when the study sweeps it), its first solver."""
    groups = (
        [results]
        if STIFFENING_COLUMN not in results
        else [group for _, group in results.groupby(STIFFENING_COLUMN, sort=False, dropna=False)]
    )
    references = {}
    for group in groups:
        finest = group[group["case"] == finest_case(group)]
        rows = finest[finest["solver"] == finest["solver"].iloc[0]]
        references.update({int(case): rows for case in group["case"].unique()})
    return references


def _max_difference(group: pd.DataFrame, reference: pd.DataFrame, columns: list[str]) -> float:
    """max |group − reference| of ``columns`` over the output times both have (a run stopped by
    the deflection limit or a failure has fewer)."""
    merged = group[["time", *columns]].merge(reference[["time", *columns]], on="time", suffixes=("", "_ref"))
    if merged.empty:
        return np.nan
    ours = merged[columns].to_numpy()
    theirs = merged[[f"{c}_ref" for c in columns]].to_numpy()
    return float(np.max(np.abs(ours - theirs)))


#: Relative slack on the deflection limit (the event puts the last row on it to round-off).
LIMIT_SLACK = 1e-9


def _limit_reached(group: pd.DataFrame, tips: list[str], limit: float) -> float:
    """The first output time at which a tip deflection of ``group`` reaches ``limit`` (NaN: never)."""
    if not tips:
        return np.nan
    reached = group[tips].abs().max(axis=1).to_numpy() >= limit * (1 - LIMIT_SLACK)
    return float(group["time"].to_numpy()[reached][0]) if reached.any() else np.nan


def _method_text(results: pd.DataFrame) -> str:
    """The integrators ``method = "auto"`` took, and why, case by case (the same reason once)."""
    taken: dict[tuple[str, str], list[str]] = {}
    for case, group in results.groupby("case", sort=False):
        first = group.iloc[0]
        taken.setdefault((first["method"], first["method_reason"]), []).append(str(case))
    parts = [
        f"{'case' if len(cases) == 1 else 'cases'} {', '.join(cases)}: {method} ({reason})"
        for (method, reason), cases in taken.items()
    ]
    return "Method auto (simulate's choice per case): " + "; ".join(parts) + "."


def _limit_text(results: pd.DataFrame, analysis) -> str:
    """The summary's paragraph on the deflection limit: which runs reached it and when."""
    tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
    reached = []
    for _, group in results.groupby(["case", "solver"], sort=False):
        when = _limit_reached(group, tips, analysis.deflection_limit)
        if not np.isnan(when):
            solver = f" ({group['solver'].iloc[0]})" if results["solver"].nunique() > 1 else ""
            reached.append(f"{label_of(group.iloc[0])}{solver} at t = {when:.4g} s")
    cases = "; ".join(reached) if reached else "no run reached it"
    return (
        f"Deflection limit {analysis.deflection_limit:g} m (a run stops when a tip deflection reaches it, "
        f"`limit_reached_s`): {cases}."
    )


def _report_times(results: pd.DataFrame, tips: list[str], analysis) -> pd.DataFrame:
    """Per case and solver: each tip deflection at ``analysis.report_times`` (blank after the run
    ended or beyond t_end) and its minimum and maximum over the run, with their times."""
    import pandas as pd

    rows = []
    for _, group in results.groupby(["case", "solver"], sort=False):
        row = {k: group.iloc[0][k] for k in (*sweep_columns(results), "solver")}
        times = group["time"].to_numpy()
        for column in tips:
            values = group[column].to_numpy()
            for t in analysis.report_times:
                at = np.flatnonzero(times == t)
                row[f"{column}_at_{t:g}s"] = float(values[at[0]]) if at.size else np.nan
            for extreme, pick in (("min", np.argmin), ("max", np.argmax)):
                k = int(pick(values))
                row[f"{extreme}_{column}"] = float(values[k])
                row[f"{extreme}_{column}_time_s"] = float(times[k])
        rows.append(row)
    return pd.DataFrame(rows)


def _spectrum_peaks(results: pd.DataFrame, peaks: int = 3) -> pd.DataFrame:
    """Largest peaks of |FFT| of the tip acceleration (second differences of tip_x, tip_y)."""
    import pandas as pd

    rows = []
    for _, group in results.groupby("case"):
        t = group["time"].to_numpy()
        dt = t[1] - t[0]
        row = {k: group.iloc[0][k] for k in sweep_columns(results)}
        for axis in ("tip_x", "tip_y"):
            acceleration = np.gradient(np.gradient(group[axis].to_numpy(), dt), dt)
            acceleration = acceleration - acceleration.mean()
            spectrum = np.abs(np.fft.rfft(acceleration * np.hanning(t.size)))
            frequency = np.fft.rfftfreq(t.size, dt)
            local = np.flatnonzero((spectrum[1:-1] > spectrum[:-2]) & (spectrum[1:-1] >= spectrum[2:])) + 1
            best = local[np.argsort(spectrum[local])[::-1][:peaks]]
            row[f"{axis} peaks [Hz]"] = ", ".join(f"{f:.2f}" for f in np.sort(frequency[best]))
        rows.append(row)
    return pd.DataFrame(rows)
