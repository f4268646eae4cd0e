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

Assumed modes of the translating link get the roots β_k of their clamped-mass
frequency equation from a ``tracker`` (column of every row): sweep family
``clamped-mass`` keeps the shapes of the long free length (``frozen``: μ, j
and β of that length throughout); ``beta-ode`` makes them follow the free
length, μ(l) = M/(ρA l), j(l) = J/(ρA l³), with β_k(l) integrated with the
motion as auxiliary states, dβ/dt = (dβ/dl)(β, l) l̇ (``ode``, seed 002 eqs.
(11)–(13); :class:`amm.AssumedModesModel`'s ``tracker``). Finite elements span
the free length and need none (``none``; both families give FEM the clamped
frame).

Rows (``set``):

* ``simulation`` — one per output time: the free length ``l`` and its rate,
  every flexible coordinate of the link, for the ``ode`` tracker the
  integrated roots ``beta<i>_<k>`` (NaN for the other cases), the flexible
  energy E_f = ½(q̇_fᵀ M_ff q̇_f + q_fᵀ K q_f), the stiffness power
  ``lyapunov_rate`` = ½ q_fᵀ K̇ q_f (seed 002 eq. (42); the paper prints
  q̇_fᵀ where its derivation gives q_fᵀ) with K̇ = dK/dt along the motion
  (following shapes: through l and β(l)), and the extension speed ratio
  U/U_g; energies of the ``ode`` case with its integrated roots;
* ``eigen`` — at ``eigen_points`` times of the maneuver: the eigenvalues of
  the frozen-time Jacobian of the closed-loop flexible subsystem,
  ∂(q̇_f, q̈_f)/∂(q_f, q̇_f) by central differences, about the nominal motion
  (joints on the desired trajectory, q_f = q̇_f = 0). Under the decoupling
  law the joint rows do not depend on the flexible states, so these are the
  flexible eigenvalues of the full closed loop; seed 002 evaluates them along
  its simulated motion, which differs from the nominal one by the (small)
  deflections. They need no integration, so they are there for any mesh;
  the ``ode`` tracker's roots are there the exact ones at the nominal l (as
  its initial condition is). Frozen-time eigenvalues are not invariant under
  coordinates that change with l (q = T(l) p adds −T⁻¹Ṫ to the Jacobian):
  shapes that follow the free length are orthonormal in the tip-mass inner
  product at every l, M_ff = ρA l·1, so the mean Re λ at each time is
  −l̇/(2l) and every mode sits near it (preset, extension at l = 0.46 m:
  −1.007 1/s for both modes), while frozen shapes and FEM, fixed shapes on
  η, give mode-dependent values (−0.31 and −0.88 1/s). The signs agree, and
  so do the simulated flexible energies (final / initial: extension 0.261
  following, 0.264 frozen, 0.265 FEM 2 elements; retraction 18.48, 18.49,
  18.53).

``simulate = false`` skips the simulation rows (the eigenvalues remain). The
simulation of a fine FEM mesh is costly: its highest bending frequencies at
the short free length reach ~10⁵ rad/s and the maneuver excites them, so any
integrator resolves them (measured, retraction, 1 s, rtol 1e-5: FEM 2
elements 875,000 right-hand sides under Radau, 221,000 under LSODA; AMM 2
modes 98,000 under Radau). Shapes that follow the free length cost more per
right-hand side than frozen ones — every new l (or β) recomputes their modal
integrals and l-derivatives (:meth:`shapes.following.LengthFollowing.taylor`)
— measured for the preset, 2 modes, one BLAS thread: ~0.1 ms frozen, ~2 ms
root, table or ode (``trackers.csv`` reports it for each run); the 1 s
maneuver under LSODA at rtol 1e-5 takes ~54,000 right-hand sides per
direction (its own finite-difference Jacobians included), half of them at
new (l, β).

The verdicts (``verdicts.csv``): per case and direction, ``max_real`` (the
largest Re λ over the maneuver), ``fraction_positive`` (share of the eigen
times whose largest Re λ exceeds 1e-6 of that time's largest |λ|, the
central differences' noise) and ``energy_growth`` (final over initial
flexible energy), with the backend, the basis (shape family or frame) and the
tracker.

The trackers (``trackers.csv``, :func:`tracker_comparison`; written when a
case follows the free length): for each such case and direction, β_k(t)
along the nominal free length of the maneuver at the output times, with that
case's tip load, by ``ode`` (the differential form integrated on its own),
``root`` (solved afresh: the reference), ``table`` (cubic Hermite spline,
with its stated interpolation error) and ``frozen`` (the long free length's
roots); their errors against ``root``, evaluations and wall time; the
model's right-hand-side cost with each tracker (:func:`rhs_costs`); and for
a simulated ``ode`` case its integrated roots against the exact ones at the
simulated l. Plots: Re λ(t), Im λ(t) (``eigenvalues``, seed 002 Figs. 6–7),
the simulated response (``flexible_response``, Fig. 5) and β_k(t) of the
root tracker for extension (solid) and retraction (dashed) (``roots``,
Fig. 8; only with a following case).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, PositiveInt

from core.analysis.controllers import Decoupling
from core.analysis.simulation import ATOL, METHODS, RTOL, SimulationError, simulate
from core.analysis.trajectories import ParabolicBlend
from core.numerics.derivatives import (
    central_difference_jacobian,
    complex_step_derivatives,
    complex_step_points,
)
from shapes.beta_ode import TABLE_POINTS, TRACKERS
from studies.discretizations import Discretization, label_of
from studies.kinds.base import StudyKind
from studies.kinds.simulation import OutputPoints
from studies.limits import MAX_JOINT_VALUE, AtMost, Duration, JointValue, Tolerance
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
    eigen_points: Annotated[
        PositiveInt,
        AtMost(
            100_000,
            "a linearization and an eigen-solve each, days of work per case",
            soft=2_000,
            soft_why="a linearization and an eigen-solve per time and case",
        ),
    ] = Field(41, description="Times from 0 to t_end at which the closed-loop eigenvalues are computed.")
    simulate: bool = Field(True, description="Simulate the maneuver; false: eigenvalues only.")
    output_points: OutputPoints = Field(201, description="Output times of the simulation.")
    method: Literal[METHODS] = Field("Radau", description="scipy solve_ivp method of the simulation.")
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
        roots = list(model.auxiliary_names)  # beta<i>_<k>: the roots of the "ode" tracker
        controller = Decoupling(kp=analysis.kp, kd=analysis.kd)
        t_end = analysis.t_end or analysis.T
        times = np.linspace(0.0, t_end, analysis.output_points)
        basis = case.discretization.shape
        rows = []
        for direction in analysis.directions:
            q_start, q_end = _maneuver(arm, analysis, number, direction)
            trajectory = ParabolicBlend(tuple(q_start), tuple(q_end), analysis.T, analysis.blend)
            base = {**case.columns(), "n_dof": model.n_dof, "direction": direction, "basis": basis}
            base["tracker"] = tracker_of(model, number)
            # Outside a simulation the "ode" tracker's roots are the exact ones at each l (its
            # initial condition), so the eigenvalues about the nominal motion use exact roots.
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
            integrated = frame[roots].to_numpy(float) if roots else np.zeros((len(frame), 0))
            for k, (t, x, a) in enumerate(zip(frame["time"], states, integrated, strict=True)):
                q, qd = x[:n], x[n:]
                row = {**base, "set": "simulation", "time": float(t), "l": q[index], "l_dot": qd[index]}
                row.update(zip(names, q[columns], strict=True))
                row.update(zip(roots, a, strict=True))
                with model.auxiliary(a):  # the integrated roots (a no-op without auxiliary states)
                    row.update(_energy_terms(model, columns, q, qd))
                row["speed_ratio"] = frame[f"extension_speed_ratio{number}"].iloc[k]
                rows.append(row)
        return [_complete(row, [*names, *roots]) for row in rows]

    def tables(self, results, arm, analysis):
        tables = {"verdicts": verdict_table(results)}
        trackers = _tracker_tables(results, arm, analysis)[0]
        if not trackers.empty:
            tables["trackers"] = trackers
        return tables

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.plots import (
            eigenvalue_time_plot,
            root_history_plot,
            time_plot,
        )

        verdicts = verdict_table(results)
        verdicts.to_csv(folder / "verdicts.csv", index=False)
        text = [
            f"Maneuver of {analysis.T} s (parabolic blends) under the decoupling controller "
            f"(kp {analysis.kp}, kd {analysis.kd}); free lengths {list(analysis.lengths)} m. "
            "Eigenvalues of the frozen-time closed-loop flexible subsystem along the nominal motion; "
            "verdicts in `verdicts.csv` (max_real [1/s], fraction_positive, energy_growth = final / "
            "initial flexible energy; tracker: how the assumed modes get their roots β_k, frozen at "
            "the long free length, integrated with the motion (ode), or none for finite elements)."
        ]
        for row in verdicts.itertuples():
            energy = (
                f"flexible energy × {row.energy_growth:.3g}"
                if np.isfinite(row.energy_growth)
                else "not simulated"
            )
            text.append(
                f"- {row.label} (tracker {row.tracker}), {row.direction}: max Re λ = "
                f"{row.max_real:.4g} 1/s, Re λ > 0 beyond the differences' noise for {row.fraction_positive:.0%} of the maneuver; "
                f"{energy}"
            )
        trackers, histories = _tracker_tables(results, arm, analysis)
        if not trackers.empty:
            trackers.to_csv(folder / "trackers.csv", index=False)
            text.append(
                "Root trackers (`trackers.csv`), along the nominal free length l(t) of each maneuver at "
                "the simulation's output times, with the tip load of the case's model: β_k(t) by "
                f"`ode` (seed 002 eq. (11) integrated, DOP853 at rtol {ODE_RTOL:g}, atol {ODE_ATOL:g}), "
                "`root` (solved afresh at every time, the reference of the errors), `table` (cubic "
                "Hermite spline on "
                f"{TABLE_POINTS} lengths over the maneuver's, stated_error: its largest error at the "
                "interval midpoints) and `frozen` (the roots of the long free length, which frozen "
                "shapes keep); evaluations and wall_time_s of following the roots; rhs_us: the model's "
                f"right-hand side per evaluation with that tracker (mean over {RHS_STATES} states along "
                "the maneuver, each at a new free length, one BLAS thread; `ode` as a simulation "
                "evaluates it, with the roots as states); simulated_rel_error: the roots integrated by "
                "the simulation against the exact roots at the simulated l. Wall times are measurements "
                "of this machine."
            )
            for (_, direction), group in trackers.groupby(["case", "direction"], sort=False):
                by = group.set_index("tracker")
                simulated = by.loc["ode", "simulated_rel_error"]
                text.append(
                    f"- {label_of(group.iloc[0])}, {direction}: ode vs root max |Δβ| = "
                    f"{by.loc['ode', 'max_abs_error']:.2g}, table {by.loc['table', 'max_abs_error']:.2g} "
                    f"(stated {by.loc['table', 'stated_error']:.2g}), frozen roots off by up to "
                    f"{by.loc['frozen', 'max_rel_error']:.2g} relative; right-hand side "
                    + ", ".join(f"{t} {by.loc[t, 'rhs_us']:.4g} µs" for t in RHS_TRACKERS)
                    + (
                        f"; simulated roots vs exact at the simulated l: {simulated:.2g} relative"
                        if np.isfinite(simulated)
                        else ""
                    )
                )
        if plots:
            eigen = results[results["set"] == "eigen"]
            names = eigenvalue_time_plot(eigen, folder, "eigenvalues")
            text.append(
                "Closed-loop flexible eigenvalues, the four lowest frequencies, one column per direction "
                f"(colour: case, line style: backend): ![eigenvalues]({names[0]}) ([PDF]({names[1]}))"
            )
            if not histories.empty:
                case = histories["case"].iloc[0]
                shown = histories[histories["case"] == case]
                names = root_history_plot(shown, folder, "roots", styles=DIRECTION_STYLES)
                label = label_of(trackers[trackers["case"] == case].iloc[0])
                text.append(
                    f"Roots β_k(t) of the clamped-mass frequency equation of link {_check(arm, analysis)} "
                    f"along the nominal maneuvers ({label}'s tip load, root tracker; "
                    f"seed 002 Fig. 8; {_style_legend(analysis.directions)}): "
                    f"![roots]({names[0]}) ([PDF]({names[1]}))"
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


def _style_legend(directions) -> str:
    """E.g. "solid: extension, dashed: retraction" (:data:`DIRECTION_STYLES`)."""
    words = {"-": "solid", "--": "dashed", ":": "dotted"}
    return ", ".join(f"{words[DIRECTION_STYLES[d]]}: {d}" for d in directions)


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
    number = _check(arm, analysis)
    reference = _maneuver(arm, analysis, number, "extension")[1]
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


#: Root trackers compared in ``trackers.csv``, in table order (``frozen``: the roots of the
#: reference length, kept by frozen shapes).
TRACKED = ("ode", "root", "table", "frozen")
#: Trackers whose right-hand-side cost is measured, and the number of states timed.
RHS_TRACKERS = ("frozen", "root", "table", "ode")
RHS_STATES = 50
#: Tolerances of the ``ode`` root tracker in ``trackers.csv`` (DOP853). At the library's
#: default (rtol 1e-10, atol 1e-12) its global error reached 8e-9 on the preset's extension
#: (l̈ jumps at the ends of the blends); at these, 7e-12 for 1.5 times the evaluations.
ODE_RTOL, ODE_ATOL = 1e-12, 1e-14
#: Line style of each direction in the root plot (seed 002 Fig. 8).
DIRECTION_STYLES = {"extension": "-", "retraction": "--", "custom": ":"}


#: The last :func:`tracker_comparison`: (weak reference to its results frame, arm, analysis, tables).
_LAST_COMPARISON: list = []


def _tracker_tables(results: pd.DataFrame, arm, analysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`tracker_comparison`, once per results frame: report() and tables() get the same
    tables (it measures wall times, which a second run would not reproduce)."""
    if _LAST_COMPARISON:
        frame, last_arm, last_analysis, tables = _LAST_COMPARISON
        if frame() is results and last_arm is arm and last_analysis == analysis:
            return tables
    tables = tracker_comparison(results, arm, analysis)
    _LAST_COMPARISON[:] = [weakref.ref(results), arm, analysis, tables]
    return tables


def tracker_comparison(results: pd.DataFrame, arm, analysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The root trackers of every case whose assumed modes follow the free length.

    Returns ``(trackers, histories)``. ``trackers``: one row per such case, direction and
    tracker of :data:`TRACKED`, with the case's sweep columns and ``max_abs_error``,
    ``max_rel_error`` (of β_k(t) against ``root``, over the modes and the output times of
    the nominal maneuver), ``residual`` (largest |f/f_β| at the returned roots, a first-order
    error estimate free of the reference), ``stated_error`` (``table``: its interpolation
    error, :meth:`shapes.following.LengthFollowing.table_error` of the same grid),
    ``evaluations`` and ``wall_time_s`` (of following the roots: root solves, right-hand
    sides of the β ODE, table lengths), ``rhs_us`` (the model's right-hand side per
    evaluation with that tracker) and ``simulated_rel_error`` (``ode`` of a case that
    simulated: the integrated roots of the simulation rows against the exact roots at their
    l). ``histories``: the ``root`` β_k(t) (case, modes, direction, time, l, mode, beta).
    Empty frames when no case follows the free length.
    """
    import pandas as pd

    from shapes.beta_ode import BetaODE
    from shapes.following import LengthFollowing

    number = _check(arm, analysis)
    index = number - 1
    reference = _maneuver(arm, analysis, number, "extension")[1]
    t_end = analysis.t_end or analysis.T
    times = np.linspace(0.0, t_end, analysis.output_points)
    firsts = results.drop_duplicates("case")
    following = firsts[~firsts["tracker"].isin(["frozen", "none"])]
    rows, histories = [], []
    for _, first in following.iterrows():
        discretization = Discretization.from_columns(first)
        model = discretization.build(arm, reference=reference)
        follow = model.bodies[number].following
        n = follow.modes
        family = BetaODE(follow.tip_mass, follow.tip_inertia, follow.mass_per_length, reference[index])
        frozen = family.betas(n)
        simulated = results[(results["case"] == first["case"]) & (results["set"] == "simulation")]
        roots = [f"beta{number}_{k}" for k in range(1, n + 1)]
        for direction in analysis.directions:
            q_start, q_end = _maneuver(arm, analysis, number, direction)
            trajectory = ParabolicBlend(tuple(q_start), tuple(q_end), analysis.T, analysis.blend)

            def length(t: float, trajectory=trajectory) -> float:
                return float(trajectory.evaluate(t)[0][index])

            def rate(t: float, trajectory=trajectory) -> float:
                return float(trajectory.evaluate(t)[1][index])

            tracked = {
                m: family.track(
                    times, length, n, m, rate, table_points=TABLE_POINTS, rtol=ODE_RTOL, atol=ODE_ATOL
                )
                for m in TRACKERS
            }
            exact = tracked["root"].betas
            lengths = tracked["root"].length
            lo, hi = float(lengths.min()), float(lengths.max())
            stated = 0.0
            if hi > lo:
                table = LengthFollowing(
                    follow.tip_mass,
                    follow.tip_inertia,
                    follow.mass_per_length,
                    n,
                    tracker="table",
                    lengths=(lo, hi),
                    table_points=TABLE_POINTS,
                )
                stated = table.table_error()
            costs = rhs_costs(arm, n, reference, trajectory, number, min(t_end, analysis.T))
            mine = simulated[simulated["direction"] == direction]
            drift = np.nan
            if first["tracker"] == "ode" and not mine.empty and set(roots) <= set(mine.columns):
                integrated = mine[roots].to_numpy(float)
                truth = np.array([follow.exact_roots(float(l)) for l in mine["l"]])
                drift = float(np.max(np.abs(integrated - truth) / truth))
            keys = {**{k: first[k] for k in ("case", "backend", "shape", "modes")}, "direction": direction}
            for tracker in TRACKED:
                if tracker == "frozen":
                    betas, residual = np.repeat(frozen[:, None], times.size, axis=1), np.nan
                    evaluations, wall = 1, 0.0
                else:
                    history = tracked[tracker]
                    betas, residual = history.betas, float(np.max(history.root_error))
                    evaluations, wall = history.evaluations, history.wall_time
                difference = np.abs(betas - exact)
                rows.append(
                    {
                        **keys,
                        "tracker": tracker,
                        "max_abs_error": float(difference.max()),
                        "max_rel_error": float((difference / exact).max()),
                        "residual": residual,
                        "stated_error": stated if tracker == "table" else np.nan,
                        "evaluations": int(evaluations),
                        "wall_time_s": float(wall),
                        "rhs_us": costs[tracker],
                        "simulated_rel_error": drift if tracker == "ode" else np.nan,
                    }
                )
            for k in range(n):
                histories.append(
                    pd.DataFrame(
                        {
                            "case": first["case"],
                            "modes": n,
                            "direction": direction,
                            "time": times,
                            "l": lengths,
                            "mode": k + 1,
                            "beta": exact[k],
                        }
                    )
                )
    trackers = pd.DataFrame(rows)
    return trackers, (pd.concat(histories, ignore_index=True) if histories else pd.DataFrame())


def rhs_costs(arm, modes: int, reference, trajectory, number: int, until: float) -> dict[str, float]:
    """µs per right-hand side of the model (q̇, q̈ and the powers, recursive solver; the
    controller not included) with each tracker of :data:`RHS_TRACKERS`: AMM clamped-mass with
    ``modes`` modes, timed at :data:`RHS_STATES` states on the nominal maneuver strictly
    between 0 and ``until`` (each at its own free length, so no evaluation reuses another's
    shapes; small flexible coordinates and rates), after one warm-up evaluation at t = 0, with
    one BLAS thread. ``ode`` is timed as a simulation evaluates it: inside
    ``model.auxiliary(β)`` with the roots β as states, plus dβ/dt."""
    from threadpoolctl import threadpool_limits

    from amm import AssumedModesModel

    moments = np.linspace(0.0, until, RHS_STATES + 2)[:-1]
    # The "table" tracker's default range (a tenth of the beam to all of it), widened to the maneuver's.
    beam = arm.links[number - 1].length
    shortest = min(float(trajectory.evaluate(t)[0][number - 1]) for t in moments)
    table = (min(0.1 * beam, shortest), beam)
    costs = {}
    for tracker in RHS_TRACKERS:
        model = AssumedModesModel(
            arm,
            shape="clamped-mass",
            modes=modes,
            tracker=tracker,
            reference=reference,
            tracker_lengths=table if tracker == "table" else None,
        )
        states = _sample_states(model, arm, trajectory, moments)
        with threadpool_limits(limits=1, user_api="blas"):
            costs[tracker] = _time_rhs(model, number, states) * 1e6
    return costs


def _sample_states(model, arm, trajectory, moments) -> list[np.ndarray]:
    """x = (q, q̇, W_in, W_diss) on the nominal motion at ``moments``, with small (seeded)
    flexible coordinates and rates."""
    n = model.n_dof
    generator = np.random.default_rng(0)
    flex = np.arange(arm.n_joints, n)
    states = []
    for t in moments:
        q_d, qd_d, _ = trajectory.evaluate(t)
        q, qd = model.home(), np.zeros(n)
        q[: arm.n_joints], qd[: arm.n_joints] = q_d, qd_d
        q[flex] = 1e-4 * generator.standard_normal(flex.size)
        qd[flex] = 1e-2 * generator.standard_normal(flex.size)
        states.append(np.concatenate([q, qd, [0.0, 0.0]]))
    return states


def _time_rhs(model, number: int, states: list[np.ndarray]) -> float:
    """Mean seconds per right-hand side at ``states[1:]`` after one at ``states[0]``."""
    import time

    from core.dynamics.model import Model
    from shapes.clamped_roots import clamped_mass_roots

    n = model.n_dof
    tau = np.zeros(model.n_joints)
    if not model.auxiliary_names:
        rates = model.rates_function("recursive")
        rates(states[0], tau)
        start = time.perf_counter()
        for x in states[1:]:
            rates(x, tau)
        return (time.perf_counter() - start) / (len(states) - 1)
    # The "ode" tracker: the generic right-hand side with the roots as states, as simulate()
    # evaluates it. The roots come from the independent solver, so no cache of the model is warmed.
    follow = model.bodies[number].following
    betas = [clamped_mass_roots(follow.modes, *follow.ratios(float(x[number - 1]))) for x in states]
    rates = Model.rates_function(model, "recursive")
    with model.auxiliary(betas[0]):
        rates(states[0], tau)
    start = time.perf_counter()
    for x, beta in zip(states[1:], betas[1:], strict=True):
        with model.auxiliary(beta):
            rates(x, tau)
            model.auxiliary_rates(x[:n], x[n : 2 * n], beta)
    return (time.perf_counter() - start) / (len(states) - 1)


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
