"""``stability``: extension and retraction of a translating flexible link (seed 002).

For every case of the sweep and every direction of ``analysis.directions``
(``extension``: the free length goes from the short to the long value of
``lengths``, ``retraction``: back, ``custom``: ``custom = [from, to]``), the
arm follows parabolic blends (duration ``T``, blends ``blend``) from
``start`` to ``end`` for the other joints under the model-based decoupling
controller of SPEC §7 (gains ``kp``, ``kd``): the joint errors obey
ë + k_d ė + k_p e = 0 exactly, and the flexible subsystem obeys
M_ff q̈_f + h_f + K q_f = −M_rfᵀ q̈_r. The flexible link starts bent
(``initial_deflection``: the static shape of a tip load, in-plane, with that
tip deflection [m]; both backends get the same physical shape).

Rows (``set``):

* ``simulation`` — one per output time: the free length ``l`` and its rate,
  every flexible coordinate of the link, the flexible energy
  E_f = ½(q̇_fᵀ M_ff q̇_f + q_fᵀ K q_f), the stiffness power
  ``lyapunov_rate`` = ½ q_fᵀ K̇ q_f (seed 002 eq. (42); the paper prints
  q̇_fᵀ where its derivation gives q_fᵀ) with K̇ = dK/dt along the motion,
  and the extension speed ratio U/U_g;
* ``eigen`` — at ``eigen_points`` times of the maneuver: the eigenvalues of
  the frozen-time Jacobian of the closed-loop flexible subsystem,
  ∂(q̇_f, q̈_f)/∂(q_f, q̇_f) by central differences, about the nominal motion
  (joints on the desired trajectory, q_f = q̇_f = 0). Under the decoupling
  law the joint rows do not depend on the flexible states, so these are the
  flexible eigenvalues of the full closed loop; seed 002 evaluates them along
  its simulated motion, which differs from the nominal one by the (small)
  deflections. They need no integration, so they are there for any mesh.

``simulate = false`` skips the simulation rows (the eigenvalues remain). The
simulation of a fine FEM mesh is costly: its highest bending frequencies at
the short free length reach ~10⁵ rad/s and the maneuver excites them, so any
integrator resolves them (measured, retraction, 1 s, rtol 1e-5: FEM 2
elements 875,000 right-hand sides under Radau, 221,000 under LSODA; AMM 2
modes 98,000 under Radau).

The verdicts (``verdicts.csv``): per case and direction, ``max_real`` (the
largest Re λ over the maneuver), ``fraction_positive`` (share of the eigen
times whose largest Re λ exceeds 1e-6 of that time's largest |λ|, the
central differences' noise) and ``energy_growth`` (final over initial
flexible energy), with the backend, the basis (shape family or frame) and the
``tracker``: assumed modes here keep their shapes frozen at the long free
length (``frozen``); finite elements span the free length and need none
(``none``). Length-following shapes are not built yet (issue 18).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, PositiveInt

from core.controllers import Decoupling
from core.derivatives import central_difference_jacobian, complex_step_derivatives, complex_step_points
from core.simulation import ATOL, METHODS, RTOL, SimulationError, simulate
from core.trajectories import ParabolicBlend
from studies.discretizations import Discretization, label_of
from studies.kinds.base import StudyKind
from studies.progress import report, throttled

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Largest Re λ counts as positive above this fraction of the largest |λ| at that time.
POSITIVE_TOLERANCE = 1e-6
DIRECTIONS = ("extension", "retraction", "custom")


class StabilityAnalysis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    link: PositiveInt | None = Field(
        None, description="Number of the translating link (from 1); unset: the arm's first."
    )
    directions: list[Literal[DIRECTIONS]] = Field(
        default_factory=lambda: ["extension", "retraction"],
        min_length=1,
        description="Maneuvers: extension (free length short to long), retraction (long to short), "
        "custom (the free lengths of custom).",
    )
    lengths: tuple[PositiveFloat, PositiveFloat] = Field(
        (0.3, 1.0), description="Short and long free length, short < long <= the beam length [m]."
    )
    custom: tuple[PositiveFloat, PositiveFloat] | None = Field(
        None, description="From and to free length of the custom direction [m]."
    )
    start: list[float] | None = Field(
        None, description="The other joints at t = 0, one per joint but the link's; unset: 0 [rad or m]."
    )
    end: list[float] | None = Field(None, description="The other joints at t = T; unset: start [rad or m].")
    T: PositiveFloat = Field(1.0, description="Duration of the maneuver [s].")
    blend: PositiveFloat = Field(0.25, description="Duration of each parabolic blend, <= T/2 [s].")
    t_end: PositiveFloat | None = Field(
        None, description="End of the simulation and of the eigenvalue times; unset: T [s]."
    )
    kp: PositiveFloat | list[PositiveFloat] = Field(
        100.0, description="Gain k_p of the decoupling controller, one or one per joint [1/s^2]."
    )
    kd: PositiveFloat | list[PositiveFloat] = Field(
        20.0, description="Gain k_d of the decoupling controller, one or one per joint [1/s]."
    )
    initial_deflection: NonNegativeFloat = Field(
        1e-3,
        description="Tip deflection of the starting shape of the link (static shape of an in-plane "
        "tip load) [m].",
    )
    eigen_points: PositiveInt = Field(
        41, description="Times from 0 to t_end at which the closed-loop eigenvalues are computed."
    )
    simulate: bool = Field(True, description="Simulate the maneuver; false: eigenvalues only.")
    output_points: PositiveInt = Field(201, description="Output times of the simulation.")
    method: Literal[METHODS] = Field("Radau", description="scipy solve_ivp method of the simulation.")
    rtol: PositiveFloat = Field(RTOL, description="Relative tolerance of the simulation.")
    atol: PositiveFloat = Field(ATOL, description="Absolute tolerance of the simulation.")


def _link(arm, analysis) -> int:
    translating = list(arm.translating_links)
    if not translating:
        raise ValueError(
            "analysis: the stability study needs a translating link (a flexible link on a prismatic joint)"
        )
    if analysis.link is None:
        return translating[0]
    if analysis.link not in translating:
        raise ValueError(
            f"analysis.link: link {analysis.link} is not a translating link (translating: {translating})"
        )
    return analysis.link


def _maneuver(arm, analysis, number: int, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """(q_start, q_end) of the joints for ``direction``."""
    short, long = analysis.lengths
    if direction == "extension":
        l0, l1 = short, long
    elif direction == "retraction":
        l0, l1 = long, short
    else:
        l0, l1 = analysis.custom
    others = arm.n_joints - 1
    start = np.zeros(others) if analysis.start is None else np.asarray(analysis.start, dtype=float)
    end = start if analysis.end is None else np.asarray(analysis.end, dtype=float)
    joints = [i for i in range(arm.n_joints) if i != number - 1]
    q0, q1 = np.zeros(arm.n_joints), np.zeros(arm.n_joints)
    q0[joints], q1[joints] = start, end
    q0[number - 1], q1[number - 1] = l0, l1
    return q0, q1


def _check(arm, analysis) -> int:
    number = _link(arm, analysis)
    length = arm.links[number - 1].length
    short, long = analysis.lengths
    if not short < long <= length:
        raise ValueError(
            f"analysis.lengths: need short < long <= {length} m (the beam length of link {number}), "
            f"got {list(analysis.lengths)}"
        )
    if "custom" in analysis.directions:
        if analysis.custom is None:
            raise ValueError("analysis.custom: direction 'custom' needs custom = [from, to] free lengths [m]")
        if max(analysis.custom) > length:
            raise ValueError(
                f"analysis.custom: free lengths must be <= {length} m, got {list(analysis.custom)}"
            )
    others = arm.n_joints - 1
    for name in ("start", "end"):
        values = getattr(analysis, name)
        if values is not None and len(values) != others:
            raise ValueError(
                f"analysis.{name}: needs {others} values (the joints other than the translating joint {number}), "
                f"got {len(values)}"
            )
    if analysis.blend > analysis.T / 2:
        raise ValueError(f"analysis.blend: must be <= T/2 = {analysis.T / 2}, got {analysis.blend}")
    for name in ("kp", "kd"):
        values = getattr(analysis, name)
        if isinstance(values, list) and len(values) != arm.n_joints:
            raise ValueError(
                f"analysis.{name}: needs one gain or {arm.n_joints} (one per joint), got {len(values)}"
            )
    return number


def initial_shape(model, number: int, q: np.ndarray, deflection: float) -> np.ndarray:
    """Flexible coordinates of link ``number`` in the static shape of an in-plane tip load
    with tip deflection ``deflection`` [m] at configuration q (K_ff δ = f, scaled)."""
    columns = model.flex_columns[number]
    tip = model.kinematics.tip_maps[number - 1].translation[1]  # in-plane tip deflection per δ
    K = model.stiffness_matrix(q)[columns, columns]
    shape = np.linalg.solve(K, tip)
    return deflection * shape / (tip @ shape)


class Stability(StudyKind):
    name = "stability"
    analysis_schema = StabilityAnalysis

    def validate(self, arm, analysis):
        _check(arm, analysis)

    def run_case(self, arm, case, analysis):
        number = _check(arm, analysis)
        index = number - 1
        reference = _maneuver(arm, analysis, number, "extension")[1]  # the long free length
        model = case.discretization.build(arm, reference=reference)
        columns = model.flex_columns[number]
        names = list(model.coordinates[columns])
        controller = Decoupling(kp=analysis.kp, kd=analysis.kd)
        t_end = analysis.t_end or analysis.T
        times = np.linspace(0.0, t_end, analysis.output_points)
        basis = case.discretization.shape
        tracker = "frozen" if case.discretization.backend == "amm" else "none"
        rows = []
        for direction in analysis.directions:
            q_start, q_end = _maneuver(arm, analysis, number, direction)
            trajectory = ParabolicBlend(tuple(q_start), tuple(q_end), analysis.T, analysis.blend)
            base = {**case.columns(), "n_dof": model.n_dof, "direction": direction, "basis": basis}
            base["tracker"] = tracker
            for t in np.linspace(0.0, t_end, analysis.eigen_points):
                q_d, qd_d, _ = trajectory.evaluate(t)
                q, qd = model.home(), np.zeros(model.n_dof)
                q[: arm.n_joints], qd[: arm.n_joints] = q_d, qd_d
                for j, value in enumerate(_flexible_eigenvalues(model, controller, trajectory, t, q, qd), 1):
                    rows.append(
                        {
                            **base,
                            "set": "eigen",
                            "time": float(t),
                            "l": q[index],
                            "index": j,
                            "real": float(value.real),
                            "imag": float(value.imag),
                        }
                    )
            if not analysis.simulate:
                continue
            q0 = model.home()
            q0[: arm.n_joints] = q_start
            q0[columns] = initial_shape(model, number, q0, analysis.initial_deflection)
            try:
                frame = simulate(
                    model,
                    (0.0, t_end),
                    q0,
                    controller=controller,
                    trajectory=trajectory,
                    method=analysis.method,
                    solver="recursive",
                    rtol=analysis.rtol,
                    atol=analysis.atol,
                    t_eval=times,
                    progress=throttled(
                        lambda t, direction=direction: report(f"{direction}: t = {t:.3g} of {t_end:g} s")
                    ),
                )
                completed = True
            except SimulationError as error:  # keep what was computed (an unstable run may diverge)
                frame, completed = error.frame, False
            base["completed"] = completed
            n = model.n_dof
            states = frame[[*model.coordinates, *(f"{c}_dot" for c in model.coordinates)]].to_numpy()
            for k, (t, x) in enumerate(zip(frame["time"], states, strict=True)):
                q, qd = x[:n], x[n:]
                row = {**base, "set": "simulation", "time": float(t), "l": q[index], "l_dot": qd[index]}
                row.update(zip(names, q[columns], strict=True))
                row.update(_energy_terms(model, columns, q, qd))
                row["speed_ratio"] = frame[f"extension_speed_ratio{number}"].iloc[k]
                rows.append(row)
        return [_complete(row, names) for row in rows]

    def tables(self, results, arm, analysis):
        verdicts = verdict_table(results)
        return {"verdicts": verdicts}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.plots import (
            eigenvalue_time_plot,
            time_plot,
        )

        verdicts = verdict_table(results)
        verdicts.to_csv(folder / "verdicts.csv", index=False)
        text = [
            f"Maneuver of {analysis.T} s (parabolic blends) under the decoupling controller "
            f"(kp {analysis.kp}, kd {analysis.kd}); free lengths {list(analysis.lengths)} m. "
            "Eigenvalues of the frozen-time closed-loop flexible subsystem along the nominal motion; "
            "verdicts in `verdicts.csv` (max_real [1/s], fraction_positive, energy_growth = final / "
            "initial flexible energy)."
        ]
        for row in verdicts.itertuples():
            sign = "Re λ > 0" if row.max_real > 0 else "Re λ ≤ 0"
            text.append(
                f"- {row.label}, {row.direction}: max Re λ = {row.max_real:.4g} 1/s ({sign}; positive "
                f"{row.fraction_positive:.0%} of the maneuver), flexible energy × {row.energy_growth:.3g}"
            )
        if plots:
            eigen = results[results["set"] == "eigen"]
            names = eigenvalue_time_plot(eigen, folder, "eigenvalues")
            text.append(
                "Closed-loop flexible eigenvalues, the four lowest frequencies, one column per direction "
                f"(colour: case, line style: backend): ![eigenvalues]({names[0]}) ([PDF]({names[1]}))"
            )
            if not (results["set"] == "simulation").any():
                return text
            simulation = tip_deflections(results, arm, analysis)
            tips = [c for c in simulation.columns if c.startswith(("tip_w", "tip_v"))]
            names = time_plot(
                simulation,
                [tips, ["flexible_energy"], ["lyapunov_rate"], ["l"], ["speed_ratio"]],
                [
                    "tip deflection [m]",
                    "flexible energy [J]",
                    r"$\frac{1}{2}\,q_f^T \dot{K} q_f$ [W]",
                    "free length [m]",
                    "$U/U_g$ [–]",
                ],
                folder,
                "flexible_response",
                by=["case"],
                split="direction",
                panel_height=1.45,
            )
            text.append(
                "Simulated response, one column per direction (line style: case): tip deflection of the "
                "translating link, flexible energy, stiffness power ½ q_fᵀ K̇ q_f, free length and "
                f"extension speed ratio: ![flexible response]({names[0]}) ([PDF]({names[1]}))"
            )
        return text


def tip_deflections(results: pd.DataFrame, arm, analysis) -> pd.DataFrame:
    """The ``simulation`` rows with the tip deflections of the translating link added,
    ``tip_w<i>`` (in-plane) and ``tip_v<i>`` (out-of-plane, where it bends so) [m]: linear in
    its flexible coordinates through each case's model, rebuilt as in the run."""
    number = _check(arm, analysis)
    reference = _maneuver(arm, analysis, number, "extension")[1]
    simulation = results[results["set"] == "simulation"].copy()
    for _, group in simulation.groupby("case", sort=False):
        model = Discretization.from_columns(group.iloc[0]).build(arm, reference=reference)
        names = list(model.coordinates[model.flex_columns[number]])
        columns = np.arange(model.n_dof)[model.flex_columns[number]]
        home = model.home()
        keys = [k for k in model.tip_deflections(home) if k[len("tip_w") :] == str(number)]
        unit = np.eye(model.n_dof)
        per_coordinate = np.array([[model.tip_deflections(home + unit[j])[k] for j in columns] for k in keys])
        simulation.loc[group.index, keys] = group[names].to_numpy(float) @ per_coordinate.T
    return simulation


def _energy_terms(model, columns, q, qd) -> dict[str, float]:
    """E_f and ½ q_fᵀ K̇ q_f at one state (K̇ = dK_ff/dt along q̇ by the complex step)."""
    qf, qdf = q[columns], qd[columns]
    M = model.mass_matrix(q)[columns, columns]
    K = model.stiffness_matrix(q)[columns, columns]
    speed = float(np.max(np.abs(qd))) or 1.0
    K_dot = speed * complex_step_derivatives(model.stiffness_matrix(complex_step_points(q, qd / speed)[0]))
    return {
        "flexible_energy": 0.5 * (qdf @ M @ qdf + qf @ K @ qf),
        "lyapunov_rate": 0.5 * qf @ K_dot[columns, columns] @ qf,
    }


def _flexible_eigenvalues(model, controller, trajectory, t, q, qd) -> np.ndarray:
    """Eigenvalues of ∂(q̇_f, q̈_f)/∂(q_f, q̇_f) of the closed loop at (t, q, q̇), sorted by
    imaginary then real part."""
    flex = np.arange(model.n_dof)[model.flex]
    reference = trajectory.evaluate(t)

    def rates(z: np.ndarray) -> np.ndarray:
        x, xd = q.copy(), qd.copy()
        x[flex], xd[flex] = z[: flex.size], z[flex.size :]
        tau = controller(t, x, xd, model, reference)
        return np.concatenate([xd[flex], model.forward_dynamics(x, xd, tau, solver="recursive")[flex]])

    J = central_difference_jacobian(rates, np.concatenate([q[flex], qd[flex]]))
    values = np.linalg.eigvals(J)
    return values[np.lexsort((values.real, values.imag))]


def _complete(row: dict, names: list[str]) -> dict:
    """Every row with every column (NaN where a set has none)."""
    for key in ("l_dot", *names, "flexible_energy", "lyapunov_rate", "speed_ratio", "index", "real", "imag"):
        row.setdefault(key, np.nan)
    row.setdefault("completed", np.nan)
    return row


def verdict_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per case and direction: max_real, fraction_positive, energy_growth (see module)."""
    import pandas as pd

    rows = []
    for (_, direction), group in results.groupby(["case", "direction"], sort=False):
        eigen = group[group["set"] == "eigen"]
        simulation = group[group["set"] == "simulation"].sort_values("time")
        first = group.iloc[0]
        per_time = eigen.groupby("time")
        largest_real = per_time["real"].max()
        magnitude = per_time.apply(lambda g: float(np.max(np.hypot(g["real"], g["imag"]))))
        positive = largest_real > POSITIVE_TOLERANCE * magnitude
        energy = simulation["flexible_energy"].to_numpy()
        simulated = len(energy) > 0
        rows.append(
            {
                "direction": direction,
                "backend": first["backend"],
                "basis": first["basis"],
                "tracker": first["tracker"],
                **{k: first[k] for k in ("modes", "elements")},
                "label": label_of(first),
                "max_real": float(largest_real.max()),
                "fraction_positive": float(positive.mean()),
                "energy_growth": float(energy[-1] / energy[0]) if simulated and energy[0] > 0 else np.nan,
                "simulated": "completed"
                if simulated and simulation["completed"].all()
                else ("diverged" if simulated else "no"),
            }
        )
    return pd.DataFrame(rows)
