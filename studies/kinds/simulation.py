"""``simulation``: time responses of several discretizations of the same arm and maneuver.

Rows: one per case × output time, with every column of
:func:`core.simulate` plus the sweep columns. The report overlays joint
angles, tip deflections, torques and the energy balance, lists the
differences to the finest case and the solver cost, and (``spectrum = true``)
the peak frequencies of the tip acceleration.
"""

from __future__ import annotations

import functools
import inspect
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, create_model

from core.controllers import CONTROLLERS
from core.model import SOLVERS
from core.simulation import ATOL, METHODS, RTOL, simulate
from core.trajectories import TRAJECTORIES
from studies.discretizations import SWEEP_COLUMNS, finest_case, joint_configuration
from studies.kinds.base import StudyKind
from studies.progress import report, throttled
from studies.text import counted

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


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
                "none", description="A controller of core.controllers.CONTROLLERS, or none (zero torques)."
            ),
        ),
        **_parameters(controllers[0][1].from_config),
    )
    return create_model(
        "SimulationAnalysis",
        __base__=_Strict,
        t_end=(PositiveFloat, Field(description="End of the simulation, which starts at t = 0 [s].")),
        q0=(
            list[float] | None,
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
        method=(Literal[METHODS], Field("Radau", description="scipy solve_ivp method.")),
        solver=(
            Literal[solvers] | Annotated[list[Literal[solvers]], Field(min_length=1)],
            Field(
                "composite",
                description="Forward-dynamics solver, or several: each case then runs once per solver, "
                "its rows tagged by solver.",
            ),
        ),
        rtol=(PositiveFloat, Field(RTOL, description="Relative tolerance of the integrator.")),
        atol=(PositiveFloat, Field(ATOL, description="Absolute tolerance of the integrator.")),
        output_points=(PositiveInt, Field(201, description="Output times, evenly spaced from 0 to t_end.")),
        spectrum=(bool, Field(False, description="Report the peak frequencies of the tip acceleration.")),
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


def solvers_of(analysis) -> list[str]:
    """The solvers of ``analysis.solver`` (a name or a list), each once, in order."""
    names = [analysis.solver] if isinstance(analysis.solver, str) else analysis.solver
    return list(dict.fromkeys(names))


class Simulation(StudyKind):
    name = "simulation"

    @property
    def analysis_schema(self) -> type[BaseModel]:
        return simulation_schema()

    def validate(self, arm, analysis):
        _initial_joints(arm, analysis)
        _controller(analysis.controller, arm)

    def run_case(self, arm, case, analysis):
        q0_joints, trajectory = _initial_joints(arm, analysis)
        model = case.discretization.build(arm, reference=q0_joints)
        q0 = model.home()
        q0[: arm.n_joints] = q0_joints
        times = np.linspace(0.0, analysis.t_end, analysis.output_points)
        rows = []
        for solver in solvers_of(analysis):
            frame = simulate(
                model,
                (0.0, analysis.t_end),
                q0,
                controller=_controller(analysis.controller, arm),
                trajectory=trajectory,
                method=analysis.method,
                solver=solver,
                rtol=analysis.rtol,
                atol=analysis.atol,
                t_eval=times,
                progress=throttled(
                    lambda t, solver=solver: report(f"{solver}: t = {t:.3g} of {analysis.t_end:g} s")
                ),
            )
            frame.insert(0, "solver", solver)
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
        joints = list(arm.joint_names)
        tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
        for _, group in results.groupby(["case", "solver"], sort=False):
            row = {k: group.iloc[0][k] for k in (*SWEEP_COLUMNS, "solver")}
            for column in tips:
                row[f"max_abs_{column}"] = group[column].abs().max()
            row["max_joint_diff_to_finest"] = (
                float(np.max(np.abs(group[joints].to_numpy() - reference[joints].to_numpy())))
                if joints
                else np.nan
            )
            references = [f"{name}_ref" for name in joints]
            if all(column in group for column in references):
                row["max_joint_error_to_reference"] = float(
                    np.max(np.abs(group[joints].to_numpy() - group[references].to_numpy()))
                )
            row["energy_balance_error"] = group["energy_balance_error"].abs().max()
            row["rhs_evaluations"] = int(group["nfev"].iloc[0])
            row["jacobian_evaluations"] = int(group["njev"].iloc[0])
            row["lu_decompositions"] = int(group["nlu"].iloc[0])
            row["wall_time_s"] = float(group["wall_time_s"].iloc[0])
            row["wall_s_per_simulated_s"] = row["wall_time_s"] / analysis.t_end
            rows.append(row)
        tables = {"maxima and differences": pd.DataFrame(rows)}
        if analysis.spectrum:
            tables["tip acceleration spectrum"] = _spectrum_peaks(results)
        return tables

    def cost(self, costs, analysis):
        costs = costs.copy()
        costs["wall_s_per_simulated_s"] = costs["wall_time_s"] / analysis.t_end
        return costs

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.plots import time_plot

        text = [
            f"{analysis.t_end} s, controller {analysis.controller.kind}, trajectory "
            f"{analysis.trajectory.kind if analysis.trajectory else 'none'}, {analysis.method} "
            f"(rtol {analysis.rtol:g}). Joint differences are to the finest case "
            "(most coordinates; same output times)."
        ]
        if plots:
            joints = list(arm.joint_names)
            tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
            taus = [c for c in results.columns if c.startswith("tau")]
            by = ["case", "solver"]
            labels = _joint_labels(arm)
            names = time_plot(
                results,
                [joints, tips, taus, ["energy_balance_error"]],
                [labels["variable"], "tip deflection [m]", labels["effort"], "energy balance error [J]"],
                folder,
                "time_response",
                by=by,
            )
            text.append(
                "Time response (colour: joint or link; line style: case"
                + (" and solver" if len(solvers_of(analysis)) > 1 else "")
                + f"): ![time response]({names[0]}) ([PDF]({names[1]}))"
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
                )
                text.append(
                    "Tracking (seed 001's comparison): joint errors to the desired trajectory, tip "
                    "deflections, input power P = Σ τ q̇ minus the rigid model's P_rigid = Σ τ q̇_d, joint "
                    "accelerations (a symmetric log axis where a start-up transient dwarfs the rest). "
                    f"![tracking]({names[0]}) ([PDF]({names[1]}))"
                )
        return text


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


def _spectrum_peaks(results: pd.DataFrame, peaks: int = 3) -> pd.DataFrame:
    """Largest peaks of |FFT| of the tip acceleration (second differences of tip_x, tip_y)."""
    import pandas as pd

    rows = []
    for _, group in results.groupby("case"):
        t = group["time"].to_numpy()
        dt = t[1] - t[0]
        row = {k: group.iloc[0][k] for k in SWEEP_COLUMNS}
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
