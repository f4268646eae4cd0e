"""``simulation``: time responses of several discretizations of the same arm and maneuver.

Rows: one per case × output time, with every column of
:func:`core.simulate` plus the sweep columns. The report overlays joint
angles, tip deflections, torques and the energy balance, lists the
differences to the finest case and the solver cost, and (``spectrum = true``)
the peak frequencies of the tip acceleration.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt, ValidationError, create_model
from pydantic import field_validator as validator

from core.controllers import CONTROLLERS
from core.simulation import ATOL, METHODS, RTOL, simulate
from core.trajectories import TRAJECTORIES
from studies.config import one_of
from studies.kinds.base import StudyKind, full_coordinates, joint_names, joint_values
from studies.models import SWEEP_COLUMNS, finest_case
from studies.plots import time_plot

#: ``controller.kind`` that means no controller (zero joint inputs).
NO_CONTROLLER = "none"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def trajectory_schema(kind: str) -> type[BaseModel]:
    """The pydantic model of ``[analysis.trajectory]`` for ``kind``: ``kind`` and the keyword
    parameters of ``TRAJECTORIES[kind].from_config`` (names, types and defaults)."""
    build = TRAJECTORIES[kind].from_config
    hints = typing.get_type_hints(build)
    fields: dict[str, Any] = {"kind": (str, ...)}
    for name, parameter in inspect.signature(build).parameters.items():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[name] = (hints[name], default)
    return create_model(f"{TRAJECTORIES[kind].__name__}Config", __base__=_Strict, **fields)


class ControllerSpec(_Strict):
    kind: Annotated[str, one_of(lambda: [NO_CONTROLLER, *CONTROLLERS])] = NO_CONTROLLER
    kp: float | list[float] = 0.0
    kd: float | list[float] = 0.0


class SimulationAnalysis(_Strict):
    t_end: PositiveFloat
    q0: list[float] | None = None  # initial joint variables; default: the trajectory's start, else Arm.home()
    # {kind, parameters}: validated against the schema of the registered trajectory kind
    trajectory: dict[str, Any] | None = None
    controller: ControllerSpec = ControllerSpec()
    method: Literal[METHODS] = "Radau"  # type: ignore[valid-type]
    rtol: PositiveFloat = RTOL
    atol: PositiveFloat = ATOL
    output_points: PositiveInt = 201
    spectrum: bool = False

    @validator("trajectory")
    @classmethod
    def _trajectory(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        kind = value.get("kind")
        if kind not in TRAJECTORIES:
            raise ValueError(f"kind: must be one of {sorted(TRAJECTORIES)}, got {kind!r}")
        try:
            return trajectory_schema(kind).model_validate(value).model_dump()
        except ValidationError as error:
            from studies.config import _message, _path

            first = error.errors()[0]
            raise ValueError(f"{_path(first['loc'])}: {_message(first)}") from None


def build_trajectory(spec: dict[str, Any] | None, arm, q0: np.ndarray):
    """The trajectory a validated ``analysis.trajectory`` describes, starting at ``q0`` [rad, m]."""
    if spec is None:
        return None
    params = {k: v for k, v in spec.items() if k != "kind"}
    return TRAJECTORIES[spec["kind"]].from_config(arm, q0, **params)


def build_controller(spec: ControllerSpec, arm):
    """The controller ``analysis.controller`` describes, or None for ``kind = "none"``."""
    if spec.kind == NO_CONTROLLER:
        return None
    return CONTROLLERS[spec.kind].from_gains(arm, spec.kp, spec.kd)


class Simulation(StudyKind):
    name = "simulation"
    analysis_schema = SimulationAnalysis

    def run_case(self, arm, case, analysis):
        q0_joints = joint_values(arm, analysis.q0, "q0")
        trajectory = build_trajectory(analysis.trajectory, arm, q0_joints)
        if trajectory is not None and analysis.q0 is None:
            q0_joints = trajectory.evaluate(0.0)[0]
        model = case.discretization.build(arm, reference=q0_joints)
        q0 = full_coordinates(model, q0_joints)
        times = np.linspace(0.0, analysis.t_end, analysis.output_points)
        frame = simulate(
            model,
            (0.0, analysis.t_end),
            q0,
            controller=build_controller(analysis.controller, arm),
            trajectory=trajectory,
            method=analysis.method,
            rtol=analysis.rtol,
            atol=analysis.atol,
            t_eval=times,
        )
        for key, value in reversed(case.columns().items()):
            frame.insert(0, key, value)
        frame["n_dof"] = model.n_dof
        for key in ("nfev", "njev", "nlu"):  # deterministic; the wall time goes to the manifest
            frame[key] = frame.attrs[key]
        return frame.to_dict("records")

    def tables(self, results, analysis, arm):
        rows = []
        reference = results[results["case"] == finest_case(results)]
        joints = list(joint_names(arm))
        tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
        for _, group in results.groupby("case"):
            row = {k: group.iloc[0][k] for k in SWEEP_COLUMNS}
            for column in tips:
                row[f"max_abs_{column}"] = group[column].abs().max()
            row["max_joint_diff_to_finest"] = (
                float(np.max(np.abs(group[joints].to_numpy() - reference[joints].to_numpy())))
                if joints
                else np.nan
            )
            row["energy_balance_error"] = group["energy_balance_error"].abs().max()
            row["rhs_evaluations"] = int(group["nfev"].iloc[0])
            row["jacobian_evaluations"] = int(group["njev"].iloc[0])
            row["lu_decompositions"] = int(group["nlu"].iloc[0])
            rows.append(row)
        tables = {"maxima and differences": pd.DataFrame(rows)}
        if analysis.spectrum:
            tables["tip acceleration spectrum"] = _spectrum_peaks(results)
        return tables

    def cost(self, costs, analysis):
        costs = costs.copy()
        costs["wall_s_per_simulated_s"] = costs["wall_time_s"] / analysis.t_end
        return costs

    def report(self, results, analysis, folder: Path, plots: bool, arm) -> list[str]:
        text = [
            f"{analysis.t_end} s, controller {analysis.controller.kind}, trajectory "
            f"{analysis.trajectory['kind'] if analysis.trajectory else 'none'}, {analysis.method} "
            f"(rtol {analysis.rtol:g}). Joint differences are to the finest case "
            "(most coordinates; same output times)."
        ]
        if plots:
            joints = list(joint_names(arm))
            tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
            taus = [c for c in results.columns if c.startswith("tau")]
            names = time_plot(
                results,
                [joints, tips, taus, ["energy_balance_error"]],
                ["joints", "tip deflection [m]", "torque", "energy balance [J]"],
                folder,
                "time_response",
            )
            text.append(f"![time response]({names[0]}) ([PDF]({names[1]}))")
        return text


def _spectrum_peaks(results: pd.DataFrame, peaks: int = 3) -> pd.DataFrame:
    """Largest peaks of |FFT| of the tip acceleration (second differences of tip_x, tip_y)."""
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
