"""``stability``: extension and retraction of a translating flexible link (Theodore & Ghosal (1997)).

For every case of the sweep and every direction of ``analysis.directions``
(``extension``: the free length goes from the short to the long value of
``lengths``, ``retraction``: back, ``custom``: ``custom = [from, to]``), the
arm follows parabolic blends (duration ``T``, blends ``blend``) from
``start`` to ``end`` for the other joints under the model-based decoupling
controller of docs/MODEL.md, Analyses (gains ``kp``, ``kd``): the joint errors obey
ë + k_d ė + k_p e = 0 exactly, and the flexible subsystem obeys
M_ff q̈_f + h_f + K q_f = −M_rfᵀ q̈_r. The joints start at rest on the trajectory, so
e ≡ 0 and they follow it exactly: the simulation integrates the flexible coordinates along
the prescribed joint motion, the same closed loop without the joint states
(:func:`closed_loop`). The flexible link starts bent
(``initial_deflection``: the static shape of a tip load, in-plane, with that
tip deflection [m]; both backends get the same physical shape).

Assumed modes of the translating link get the roots β_k of their clamped-mass
frequency equation from a ``tracker`` (column of every row): sweep family
``clamped-mass`` keeps the shapes of the long free length (``frozen``: μ, j
and β of that length throughout); ``beta-ode`` makes them follow the free
length, μ(l) = M/(ρA l), j(l) = J/(ρA l³), with β_k(l) integrated with the
motion as auxiliary states, dβ/dt = (dβ/dl)(β, l) l̇ (``ode``, Theodore & Ghosal
(1997) eqs. (11)–(13); :class:`amm.AssumedModesModel`'s ``tracker``). Finite elements span
the free length and need none (``none``; both families give FEM the clamped
frame).

Rows (``set``):

* ``simulation`` — one per output time: the free length ``l`` and its rate,
  every flexible coordinate of the link, for the ``ode`` tracker the
  integrated roots ``beta<i>_<k>`` (NaN for the other cases), the flexible
  energy E_f = ½(q̇_fᵀ M_ff q̇_f + q_fᵀ K q_f), the stiffness power
  ``lyapunov_rate`` = ½ q_fᵀ K̇ q_f (Theodore & Ghosal (1997) eq. (42); the paper prints
  q̇_fᵀ where its derivation gives q_fᵀ) with K̇ = dK/dt along the motion
  (following shapes: through l and β(l)), and the extension speed ratio
  U/U_g; energies of the ``ode`` case with its integrated roots;
* ``eigen`` — at ``eigen_points`` times of the maneuver: the eigenvalues of
  the frozen-time Jacobian of the closed-loop flexible subsystem,
  ∂(q̇_f, q̈_f)/∂(q_f, q̇_f) by central differences, about the nominal motion
  (joints on the desired trajectory, q_f = q̇_f = 0). Under the decoupling
  law the joint rows do not depend on the flexible states, so these are the
  flexible eigenvalues of the full closed loop; Theodore & Ghosal (1997) evaluate them along
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

``simulate = false`` skips the simulation rows (the eigenvalues remain). The simulation
resolves the highest bending frequency of the short free length, which the maneuver excites
(at 0.3 m: AMM 2 modes and FEM 1 element ~1.1e4 rad/s, FEM 2 elements ~1e5 rad/s), so any
integrator takes tens of thousands of steps (measured, retraction, 1 s, rtol 1e-5, closed
loop: FEM 2 elements 875,000 right-hand sides under Radau, 221,000 under LSODA; AMM 2 modes
98,000 under Radau). With the joints prescribed the flexible rows are linear in (q_f, q̇_f) at
each t (:func:`closed_loop`): :mod:`core.analysis.prescribed` tabulates their coefficients once
per maneuver (~400 times, 2 n_f + 1 + n_joints (n_f + 1) prescribed-motion solves each: 21 for
AMM 2 modes and FEM 1 element, 44 for FEM 2 elements; ~0.25 ms a solve, ~0.55 ms with shapes
that follow the free length, whose body arrays every new l or β rebuilds from Chebyshev series,
:meth:`shapes.following.LengthFollowing.taylor`), and a right-hand side is two table reads and
a product (~35 µs), LSODA getting the exact Jacobian. Measured under LSODA at rtol 1e-5 (one
BLAS thread, a loaded 2-core machine), right-hand sides per direction and CPU s per direction,
the model in every right-hand side with LSODA's forward-difference Jacobians → the table:
AMM frozen 44,000 → 28,000–37,000, 12–14 → 6–8 s; following (``ode``) 45,000–48,000 →
28,000–43,000, 40–43 → 8 s; FEM 1 element 53,000 → 34,000–35,000, 16–18 → 6 s; FEM 2 elements
(retraction) 187,000 → 93,000, 79 → 16 s (``trackers.csv`` reports the model's right-hand-side
cost with each tracker).

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
simulated l. Plots: Re λ(t), Im λ(t) (``eigenvalues``, Theodore & Ghosal (1997)
Figs. 6–7),
the simulated response (``flexible_response``, Fig. 5) and β_k(t) of the
root tracker for extension (solid) and retraction (dashed) (``roots``,
Fig. 8; only with a following case).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.analysis.controllers import Decoupling
from core.analysis.prescribed import simulate_linear
from core.analysis.simulation import SimulationError, simulate
from core.analysis.trajectories import ParabolicBlend
from shapes.beta_ode import TABLE_POINTS
from studies.discretizations import label_of
from studies.kinds.base import WARM_UP_SPAN, StudyKind, lightest_by_backend, warm_up_method, with_rows
from studies.kinds.stability.analysis import (
    StabilityAnalysis,
    checked_link,
    complete_row,
    energy_terms,
    flexible_eigenvalues,
    initial_shape,
    maneuver,
    tip_deflections,
    tracker_of,
    verdict_table,
)
from studies.kinds.stability.trackers import ODE_ATOL, ODE_RTOL, RHS_STATES, RHS_TRACKERS, tracker_tables
from studies.progress import simulation_progress


class Stability(StudyKind):
    analysis_schema = StabilityAnalysis

    def validate(self, arm, analysis):
        checked_link(arm, analysis)

    def warm_up(self, arm, cases, analysis):
        """:meth:`run_case` of the lightest case of each backend over
        :data:`~studies.kinds.base.WARM_UP_SPAN` of the maneuver, with one eigenvalue time and
        two output times (and Radau for LSODA, :func:`~studies.kinds.base.warm_up_method`): the
        eigen-solves, the tabulated or direct simulation and the energy rows load the compiled
        kernels the cases call, so a pool's forked workers inherit them and no case's wall time
        carries their loading."""
        t_end = WARM_UP_SPAN * (analysis.t_end or analysis.T)
        update = {"t_end": t_end, "eigen_points": 1, "output_points": 2}
        short = analysis.model_copy(update={**update, "method": warm_up_method(analysis.method)})
        for light in lightest_by_backend(arm, cases).values():
            self.run_case(arm, light, short)

    def run_case(self, arm, case, analysis):
        number = checked_link(arm, analysis)
        index = number - 1
        reference = maneuver(arm, analysis, number, "extension")[1]  # the long free length
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
            q_start, q_end = maneuver(arm, analysis, number, direction)
            trajectory = ParabolicBlend(tuple(q_start), tuple(q_end), analysis.T, analysis.blend)
            base = {**case.columns(), "n_dof": model.n_dof, "direction": direction, "basis": basis}
            base["tracker"] = tracker_of(model, number)
            # Outside a simulation the "ode" tracker's roots are the exact ones at each l (its
            # initial condition), so the eigenvalues about the nominal motion use exact roots.
            for t in np.linspace(0.0, t_end, analysis.eigen_points):
                q_d, qd_d, _ = trajectory.evaluate(t)
                q, qd = model.home(), np.zeros(model.n_dof)
                q[: arm.n_joints], qd[: arm.n_joints] = q_d, qd_d
                for j, value in enumerate(flexible_eigenvalues(model, controller, trajectory, t, q, qd), 1):
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
                frame = closed_loop(model, trajectory, q0, t_end, times, analysis, direction)
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
                    row.update(energy_terms(model, columns, q, qd))
                row["speed_ratio"] = frame[f"extension_speed_ratio{number}"].iloc[k]
                rows.append(row)
        return [complete_row(row, [*names, *roots]) for row in rows]

    def tables(self, results, arm, analysis):
        return with_rows(
            {"verdicts": verdict_table(results)}, {"trackers": tracker_tables(results, arm, analysis)[0]}
        )

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.kinds.stability.figures import (
            DIRECTION_STYLES,
            eigenvalue_time_plot,
            root_history_plot,
            style_legend,
        )
        from studies.time_figures import time_plot

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
        trackers, histories = tracker_tables(results, arm, analysis)
        if not trackers.empty:
            trackers.to_csv(folder / "trackers.csv", index=False)
            text.append(
                "Root trackers (`trackers.csv`), along the nominal free length l(t) of each maneuver at "
                "the simulation's output times, with the tip load of the case's model: β_k(t) by "
                f"`ode` (Theodore & Ghosal (1997) eq. (11) integrated, DOP853 at rtol {ODE_RTOL:g}, atol {ODE_ATOL:g}), "
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
                    f"Roots β_k(t) of the clamped-mass frequency equation of link {checked_link(arm, analysis)} "
                    f"along the nominal maneuvers ({label}'s tip load, root tracker; "
                    f"Theodore & Ghosal (1997) Fig. 8; {style_legend(analysis.directions)}): "
                    f"![roots]({names[0]}) ([PDF]({names[1]}))"
                )
            if not (results["set"] == "simulation").any():
                return text
            simulation = tip_deflections(results, arm, analysis)
            tips = [c for c in simulation.columns if c.startswith(("tip_w", "tip_v"))]
            notes = {}
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
                notes=notes,
            )
            encoding = (
                "line style: case" if notes["encoding"].startswith("colour: joint") else notes["encoding"]
            )
            text.append(
                f"Simulated response, one column per direction ({encoding}): tip deflection of the "
                "translating link, flexible energy, stiffness power ½ q_fᵀ K̇ q_f, free length and "
                f"extension speed ratio: ![flexible response]({names[0]}) ([PDF]({names[1]}))"
                + "".join(f" {sentence}" for sentence in notes["panels"])
            )
        return text


def closed_loop(model, trajectory, q0, t_end: float, times, analysis, direction: str):
    """The simulated closed loop from ``q0`` (joints at the trajectory's start, at rest), as
    the motion it is: the decoupling law gives the joint errors ë + k_d ė + k_p e = 0 whatever
    the flexible coordinates do, and they start at e = ė = 0 (a parabolic blend starts at rest
    at q_start), so e ≡ 0 and the joints follow the trajectory exactly. The simulation
    therefore prescribes the joints (``simulate(prescribed=True)``) and integrates the
    flexible coordinates (and the ``ode`` tracker's roots) alone, M_ff q̈_f + h_f + K q_f =
    −M_fr q̈_d: the same equations without the joint states the controller would only keep at
    zero error and without evaluating it and the forward dynamics in every right-hand side
    (measured on the example: the same right-hand-side counts, each about half the cost; the
    flexible energies agree with the closed loop's to the integration tolerance).

    The flexible rows are linear in (q_f, q̇_f) at each t (bilinear with q̈_r):
    :func:`core.analysis.prescribed.simulate_linear` tabulates their coefficients over the
    maneuver once (with the ``ode`` tracker's roots integrated first: their rates see only l and
    l̇), checks them against direct solves, and integrates with their exact Jacobian; the rows
    then have no work integrals, which this kind does not read. Where its checks fail,
    :func:`simulate` integrates the model itself, LSODA forming its Jacobian by its own forward
    differences (one right-hand side per state, counted in ``nfev``) rather than the central
    differences of ``simulate`` (two per state). Costs: the module docstring. On a short
    maneuver the table can cost more than it saves (0.05 s, following shapes: ~1,100
    right-hand sides, 185 table times; measured 3–5 CPU s, against ~0.6 s estimated for the model in each of
    those right-hand sides at ~0.55 ms)."""
    q_d, qd_d, _ = trajectory.evaluate(0.0)
    joints = model.n_joints
    if not (np.allclose(q0[:joints], q_d, rtol=0.0, atol=1e-12) and np.allclose(qd_d, 0.0, atol=1e-12)):
        raise ValueError("the stability maneuver must start on its trajectory, at rest")
    progress = simulation_progress(direction, t_end)
    linear = simulate_linear(
        model,
        (0.0, t_end),
        q0,
        trajectory,
        method=analysis.method,
        rtol=analysis.rtol,
        atol=analysis.atol,
        t_eval=times,
        progress=progress,
    )
    if linear is not None:
        return linear
    return simulate(
        model,
        (0.0, t_end),
        q0,
        trajectory=trajectory,
        prescribed=True,
        method=analysis.method,
        jacobian=False if analysis.method == "LSODA" else None,
        rtol=analysis.rtol,
        atol=analysis.atol,
        t_eval=times,
        progress=progress,
    )


__all__ = ["Stability", "StabilityAnalysis", "tip_deflections", "verdict_table"]
