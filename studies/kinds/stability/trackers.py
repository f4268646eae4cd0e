"""The root trackers of the stability kind (``trackers.csv``): the roots β_k of the
clamped-mass frequency equation followed along the nominal maneuvers by each tracker of
:class:`shapes.beta_ode.BetaODE`, their errors and costs, and the model's right-hand-side
cost with each."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from core.analysis.trajectories import ParabolicBlend
from shapes.beta_ode import TABLE_POINTS, TRACKERS
from studies.discretizations import Discretization
from studies.kinds.stability.analysis import checked_link, maneuver

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

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


#: The last :func:`tracker_comparison`: (weak reference to its results frame, arm, analysis, tables).
_LAST_COMPARISON: list = []


def tracker_tables(results: pd.DataFrame, arm, analysis) -> tuple[pd.DataFrame, pd.DataFrame]:
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

    number = checked_link(arm, analysis)
    index = number - 1
    reference = maneuver(arm, analysis, number, "extension")[1]
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
            q_start, q_end = maneuver(arm, analysis, number, direction)
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
            size = discretization.spec.size_column  # "modes": a following case is assumed modes
            keys = {**{k: first[k] for k in ("case", "backend", "shape", size)}, "direction": direction}
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
