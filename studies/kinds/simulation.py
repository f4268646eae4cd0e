"""``simulation``: time responses of several discretizations of the same arm and maneuver.

Rows: one per case × output time, with every column of
:func:`core.simulate` plus the sweep columns. The report overlays joint
angles, tip deflections, torques and the energy balance, lists the
differences to the finest case and the solver cost, and (``spectrum = true``)
the peak frequencies of the tip acceleration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt

from core.controllers import PD, ComputedTorque, Decoupling, FeedForward
from core.engine import ChainModel
from core.rigid import rigid_equivalent
from core.simulation import METHODS, simulate
from core.trajectories import CartesianCircle, Cycloidal, ParabolicBlend
from studies.kinds.base import StudyKind
from studies.kinds.frequencies import sweep_columns
from studies.models import build_model, finest_case
from studies.plots import time_plot


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CycloidalTrajectory(_Strict):
    kind: Literal["cycloidal"]
    k: list[float]
    T: list[PositiveFloat]


class BlendTrajectory(_Strict):
    kind: Literal["parabolic-blend"]
    q_end: list[float]
    T: PositiveFloat
    blend: PositiveFloat


class CircleTrajectory(_Strict):
    kind: Literal["circle"]
    center: tuple[float, float]
    radius: PositiveFloat
    omega: float
    elbow: Literal[1, -1] = -1


class ControllerSpec(_Strict):
    kind: Literal["none", "feed-forward", "pd", "computed-torque", "decoupling"] = "none"
    kp: float | list[float] = 0.0
    kd: float | list[float] = 0.0


class SimulationAnalysis(_Strict):
    t_end: PositiveFloat
    q0: list[float] | None = None  # initial joint variables; default: the trajectory's start, else Arm.home()
    trajectory: Annotated[
        CycloidalTrajectory | BlendTrajectory | CircleTrajectory | None, Field(discriminator="kind")
    ] = None
    controller: ControllerSpec = ControllerSpec()
    method: Literal[METHODS] = "Radau"  # type: ignore[valid-type]
    rtol: PositiveFloat = 1e-7
    atol: PositiveFloat = 1e-9
    output_points: PositiveInt = 201
    spectrum: bool = False


def _trajectory(spec, arm, q0):
    if spec is None:
        return None
    if spec.kind == "cycloidal":
        return Cycloidal(k=tuple(spec.k), T=tuple(spec.T), q0=tuple(q0))
    if spec.kind == "parabolic-blend":
        return ParabolicBlend(q_start=tuple(q0), q_end=tuple(spec.q_end), T=spec.T, blend=spec.blend)
    if arm.n_joints != 2:
        raise ValueError("analysis.trajectory: the circle needs a two-joint planar arm")
    lengths = tuple(link.length for link in arm.links)
    return CartesianCircle(
        center=spec.center, radius=spec.radius, omega=spec.omega, lengths=lengths, elbow=spec.elbow
    )


def _controller(spec: ControllerSpec, arm):
    if spec.kind == "none":
        return None
    if spec.kind == "feed-forward":
        return FeedForward.rigid_inverse_dynamics(ChainModel(rigid_equivalent(arm), {}))
    if spec.kind == "pd":
        return PD(kp=spec.kp, kd=spec.kd)
    if spec.kind == "computed-torque":
        return ComputedTorque(kp=spec.kp, kd=spec.kd)
    return Decoupling(Gp=spec.kp, Gv=spec.kd)


class Simulation(StudyKind):
    name = "simulation"
    analysis_schema = SimulationAnalysis

    def run_case(self, arm, case, analysis):
        q0_joints = arm.home() if analysis.q0 is None else np.array(analysis.q0, dtype=float)
        if q0_joints.shape != (arm.n_joints,):
            raise ValueError(f"analysis.q0: needs {arm.n_joints} joint values, got {q0_joints.size}")
        trajectory = _trajectory(analysis.trajectory, arm, q0_joints)
        if trajectory is not None and analysis.q0 is None:
            q0_joints = trajectory.evaluate(0.0)[0]
        model = build_model(arm, case, reference=q0_joints)
        q0 = np.zeros(model.n_dof)
        q0[: arm.n_joints] = q0_joints
        times = np.linspace(0.0, analysis.t_end, analysis.output_points)
        frame = simulate(
            model,
            (0.0, analysis.t_end),
            q0,
            controller=_controller(analysis.controller, arm),
            trajectory=trajectory,
            method=analysis.method,
            rtol=analysis.rtol,
            atol=analysis.atol,
            t_eval=times,
        )
        for key, value in sweep_columns(case).items():
            frame.insert(0, key, value)
        frame["n_dof"] = model.n_dof
        for key in ("nfev", "njev", "nlu"):  # deterministic; the wall time goes to the manifest
            frame[key] = frame.attrs[key]
        return frame.to_dict("records")

    def tables(self, results, analysis):
        rows = []
        reference = results[results["case"] == finest_case(results)]
        joints = [
            c for c in results.columns if c.startswith(("theta", "d")) and c[-1].isdigit() and "_" not in c
        ]
        tips = [c for c in results.columns if c.startswith(("tip_w", "tip_v"))]
        for _, group in results.groupby("case"):
            row = {k: group.iloc[0][k] for k in ("backend", "shape", "modes", "elements")}
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

    def report(self, results, analysis, folder: Path, plots: bool) -> list[str]:
        text = [
            f"{analysis.t_end} s, controller {analysis.controller.kind}, trajectory "
            f"{analysis.trajectory.kind if analysis.trajectory else 'none'}, {analysis.method} "
            f"(rtol {analysis.rtol:g}). Joint differences are to the finest case "
            "(most coordinates; same output times)."
        ]
        if plots:
            joints = [
                c
                for c in results.columns
                if c[-1].isdigit() and c.startswith(("theta", "d")) and "_" not in c
            ]
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
        row = {k: group.iloc[0][k] for k in ("backend", "shape", "modes", "elements")}
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
