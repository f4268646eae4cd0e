"""The stability kind's analysis: its ``[analysis]`` schema, the maneuvers of the translating
link, the closed-loop flexible eigenvalues and energies of one state, and the verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from core.analysis.simulation import ADAPTIVE_METHODS, ATOL, RTOL, prescribed_motion
from core.numerics import derivatives
from studies.discretizations import Discretization, label_of, size_columns
from studies.kinds.base import AnalysisSchema
from studies.kinds.simulation import OutputPoints
from studies.limits import MAX_JOINT_VALUE, AtMost, Duration, JointValue, Tolerance, work_count

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Largest Re λ counts as positive above this fraction of the largest |λ| at that time.
POSITIVE_TOLERANCE = 1e-6
DIRECTIONS = ("extension", "retraction", "custom")


class StabilityAnalysis(AnalysisSchema):
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
    start: list[JointValue] | None = Field(
        None, description="The other joints at t = 0, one per joint but the link's; unset: 0 [rad or m]."
    )
    end: list[JointValue] | None = Field(
        None, description="The other joints at t = T; unset: start [rad or m]."
    )
    T: Duration = Field(1.0, description="Duration of the maneuver [s].")
    blend: Duration = Field(0.25, description="Duration of each parabolic blend, <= T/2 [s].")
    t_end: Duration | None = Field(
        None, description="End of the simulation and of the eigenvalue times; unset: T [s]."
    )
    kp: PositiveFloat | list[PositiveFloat] = Field(
        100.0, description="Gain k_p of the decoupling controller, one or one per joint [1/s^2]."
    )
    kd: PositiveFloat | list[PositiveFloat] = Field(
        20.0, description="Gain k_d of the decoupling controller, one or one per joint [1/s]."
    )
    initial_deflection: Annotated[NonNegativeFloat, AtMost(MAX_JOINT_VALUE, "the arm's largest length")] = (
        Field(
            1e-3,
            description="Tip deflection of the starting shape of the link (static shape of an in-plane "
            "tip load) [m].",
        )
    )
    eigen_points: work_count(
        100_000,
        "a linearization and an eigen-solve each, days of work per case",
        soft=2_000,
        soft_why="a linearization and an eigen-solve per time and case",
    ) = Field(41, description="Times from 0 to t_end at which the closed-loop eigenvalues are computed.")
    simulate: bool = Field(True, description="Simulate the maneuver; false: eigenvalues only.")
    output_points: OutputPoints = Field(201, description="Output times of the simulation.")
    method: Literal[ADAPTIVE_METHODS] = Field(
        "Radau", description="scipy solve_ivp method of the simulation."
    )
    rtol: Tolerance = Field(RTOL, description="Relative tolerance of the simulation.")
    atol: Tolerance = Field(ATOL, description="Absolute tolerance of the simulation.")


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


def maneuver(arm, analysis, number: int, direction: str) -> tuple[np.ndarray, np.ndarray]:
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


def checked_link(arm, analysis) -> int:
    """The number of the translating link of ``analysis`` on ``arm``, every key checked against
    the arm (ValueError naming the ``analysis.…`` key)."""
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
    with tip deflection ``deflection`` [m] at configuration q (K_ff δ = f, scaled). The tip
    deflection per coordinate is the model's own at q (shapes that follow the free length have
    the tip values of q's free length, not those of the reference)."""
    columns = model.flex_columns[number]
    indices = np.arange(model.n_dof)[columns]
    base = np.array(q, dtype=float)
    base[columns] = 0.0
    key = f"tip_w{number}"
    unit = np.eye(model.n_dof)
    tip = np.array([model.tip_deflections(base + unit[j])[key] for j in indices])
    K = model.stiffness_matrix(base)[columns, columns]
    shape = np.linalg.solve(K, tip)
    return deflection * shape / (tip @ shape)


def tracker_of(model, number: int) -> str:
    """How ``model`` gets the roots β_k of translating link ``number``: ``"frozen"`` (assumed
    modes of one reference length), ``"root"``, ``"table"``, ``"ode"`` (assumed modes that
    follow the free length, :class:`amm.AssumedModesModel`'s ``tracker``) or ``"none"``
    (finite elements span the free length)."""
    trackers = getattr(model, "trackers", None)
    if trackers is None:
        return "none"
    return trackers.get(number, "frozen")


def tip_deflections(results: pd.DataFrame, arm, analysis) -> pd.DataFrame:
    """The ``simulation`` rows with the tip deflections of the translating link added,
    ``tip_w<i>`` (in-plane) and ``tip_v<i>`` (out-of-plane, where it bends so) [m]: linear in
    its flexible coordinates through each case's model, rebuilt as in the run (shapes that
    follow the free length: at each row's l, with the row's integrated roots for ``ode``)."""
    number = checked_link(arm, analysis)
    reference = maneuver(arm, analysis, number, "extension")[1]
    simulation = results[results["set"] == "simulation"].copy()
    for _, group in simulation.groupby("case", sort=False):
        model = Discretization.from_columns(group.iloc[0]).build(arm, reference=reference)
        names = list(model.coordinates[model.flex_columns[number]])
        columns = np.arange(model.n_dof)[model.flex_columns[number]]
        home = model.home()
        keys = [k for k in model.tip_deflections(home) if k[len("tip_w") :] == str(number)]
        if getattr(model.bodies[number], "following", None) is not None:
            roots = list(model.auxiliary_names)
            values = []
            for _, row in group.iterrows():
                q = home.copy()
                q[number - 1] = row["l"]
                q[columns] = row[names].to_numpy(float)
                with model.auxiliary(row[roots].to_numpy(float) if roots else np.zeros(0)):
                    tips = model.tip_deflections(q)
                values.append([tips[k] for k in keys])
            simulation.loc[group.index, keys] = np.array(values)
            continue
        unit = np.eye(model.n_dof)
        per_coordinate = np.array([[model.tip_deflections(home + unit[j])[k] for j in columns] for k in keys])
        simulation.loc[group.index, keys] = group[names].to_numpy(float) @ per_coordinate.T
    return simulation


def energy_terms(model, columns, q, qd) -> dict[str, float]:
    """E_f and ½ q_fᵀ K̇ q_f at one state (K̇ = dK_ff/dt along q̇ by the complex step)."""
    qf, qdf = q[columns], qd[columns]
    M = model.mass_matrix(q)[columns, columns]
    K = model.stiffness_matrix(q)[columns, columns]
    speed = float(np.max(np.abs(qd))) or 1.0
    K_dot = speed * derivatives.complex_step_derivatives(
        model.stiffness_matrix(derivatives.complex_step_points(q, qd / speed)[0])
    )
    return {
        "flexible_energy": 0.5 * (qdf @ M @ qdf + qf @ K @ qf),
        "lyapunov_rate": 0.5 * qf @ K_dot[columns, columns] @ qf,
    }


def flexible_eigenvalues(model, controller, trajectory, t, q, qd) -> np.ndarray:
    """Eigenvalues of ∂(q̇_f, q̈_f)/∂(q_f, q̇_f) of the closed loop at (t, q, q̇) under the
    decoupling ``controller``, sorted by imaginary then real part. The law gives the joints the
    accelerations u(q_r, q̇_r) whatever the flexible coordinates
    (:meth:`~core.analysis.controllers.Decoupling.joint_accelerations`), so the flexible rows
    of the closed loop are those of the motion whose joint accelerations are prescribed to u
    (:func:`~core.analysis.simulation.prescribed_motion`): the controller's torques and the
    forward dynamics give the same q̈_f (to round-off) at twice the cost."""
    flex = np.arange(model.n_dof)[model.flex]
    joints = controller.joint_accelerations(q, qd, model, trajectory.evaluate(t))

    def rates(z: np.ndarray) -> np.ndarray:
        x, xd = q.copy(), qd.copy()
        x[flex], xd[flex] = z[: flex.size], z[flex.size :]
        return np.concatenate([xd[flex], prescribed_motion(model, x, xd, joints)[0][flex]])

    J = derivatives.central_difference_jacobian(rates, np.concatenate([q[flex], qd[flex]]))
    values = np.linalg.eigvals(J)
    return values[np.lexsort((values.real, values.imag))]


def complete_row(row: dict, names: list[str]) -> dict:
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
                **{k: first[k] for k in size_columns()},
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
