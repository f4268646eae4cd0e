"""The flexible coordinates under prescribed joint motion as a linear system tabulated in time.

With the joints prescribed (q_r, q̇_r, q̈_r the trajectory's at t, :func:`~core.analysis.simulation.
prescribed_motion`), the flexible rows of a model whose mass matrix block M_ff does not depend on
the flexible coordinates z = (q_f, q̇_f) and whose other primitives are at most quadratic in them
(the assumed-modes and finite-element arms without geometric stiffening) are affine in z and in
q̈_r, bilinear in (q_f, q̈_r) (M_fr depends linearly on q_f):

    q̈_f = A0(t) z + b0(t) + N(t) q̈_r(t) + Σ_j q̈_r,j(t) C_j(t) q_f,

A0, b0, N and C_j functions of (q_r(t), q̇_r(t)) alone. :func:`linear_flexible` evaluates them
from ``2 n_f + 1 + n_joints (n_f + 1)`` prescribed-motion solves at a time (unit responses:
exact for a bilinear map up to round-off), tabulates them over the span once
(:func:`core.analysis.time_table.tabulate` at :data:`TABLE_TOLERANCE`, each block — A0's q_f
columns, A0's q̇_f columns, b0, N, C — scaled by its own largest value, so the gyroscopic
entries ~ 10 1/s keep the table's relative tolerance beside the stiffness ones ~ 1e10 1/s²;
per entry the scaling would amplify the round-off of the unit responses), and checks the
assumption: the table's q̈_f against direct prescribed-motion solves at :data:`CHECK_TIMES` of
the span with deflections of the given scale (relative deviation at most
:data:`CHECK_TOLERANCE`); where that fails it returns None and the caller integrates the model
itself. Auxiliary states whose rates see only the joints (the assumed-mode roots β_k(l) of a
translating link) are integrated first, on their own, and the coefficients tabulated with them
(:func:`auxiliary_history`). q̈_r is read from the trajectory at every t (a parabolic blend's
jumps stay exact; q_r and q̇_r, which the table sees, are continuous).

A right-hand side is then the trajectory's q̈_r and one compiled call that reads the series and
assembles ż (:mod:`core.dynamics.compiled.series`; measured 11–13 µs on the RRP arm with FEM ×2,
against 37 µs for the numpy read it replaced and ~250 µs for a prescribed-motion solve, ~550 µs
with length-following shapes), and the exact
Jacobian [[0, I], [A(t)]] replaces the integrator's differences. The table costs ~400 sample
times on a 1 s maneuver (the fit and the table's own check), so it pays on runs of thousands
of right-hand sides, not on short ones.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.analysis.time_table import TimeTable, tabulate

#: Fractions of the span at which the table is checked against direct solves.
CHECK_TIMES = (0.07, 0.31, 0.52, 0.77, 0.96)
#: Largest relative deviation |q̈_f,table − q̈_f| / max|q̈_f| the check accepts (round-off of the
#: stiffness term ω² q_f, ~1e10 · 1e-3, against accelerations ~1e7: ~1e-12 expected).
CHECK_TOLERANCE = 1e-9
#: Relative tolerance of the coefficient table, per block (module docstring). The table's error
#: acts as a perturbation of the coefficients; on the smallest stiffness entries of a block
#: (ω₁² ~ 1e-5 of the largest ω² of FEM 2 elements at 0.3 m) it is at most 1e-6 relative, a phase
#: error below the integration error at the tolerances of these runs (rtol 1e-5: ~1e-4 relative
#: in the final flexible energy). Where the check of the table fails, :func:`simulate_linear`
#: returns None.
TABLE_TOLERANCE = 1e-11
#: The same with auxiliary states: the body arrays of length-following shapes come from
#: piecewise Chebyshev series in l (docs/TRANSLATING.md), smooth in t only to ~1e-11 relative
#: (measured: the check of a 1e-11 table found 1.12e-11 at t = 0.75 s on the RRP retraction);
#: their two assumed modes span ω₂²/ω₁² ~ 40, so the coefficients of the lower mode keep ~4e-9.
AUXILIARY_TABLE_TOLERANCE_COEFFICIENTS = 1e-10
#: Relative tolerance of the auxiliary states integrated on their own (:func:`auxiliary_history`).
AUXILIARY_RTOL = 1e-13
#: Relative tolerance of the Chebyshev table of those states (:func:`auxiliary_history`): above
#: the kinks of the dense output between steps (~1e-11 relative), far below any run's tolerance.
AUXILIARY_TABLE_TOLERANCE = 1e-10
#: Joint acceleration of the unit responses of N and C [rad/s² or m/s²] (module docstring).
ACCELERATION_STEP = 1e6
#: Scale of a block that vanishes at every scaling sample (tabulated to an absolute tolerance).
_ZERO_SCALE = 1.0


@dataclass(frozen=True)
class LinearFlexible:
    """q̈_f = A(t) z + b(t) over a span, A = A0 + [Σ_j q̈_r,j C_j, 0], b = b0 + N q̈_r
    (module docstring), read from the table by one compiled call
    (:mod:`core.dynamics.compiled.series`) at any t of the span.

    Attributes
    ----------
    table : TimeTable
        (A0, b0, N, C) flattened and divided by ``scales``, tabulated on every panel of the span.
    scales : ndarray
        The scale of every component.
    n_f, n_joints : int
    trajectory : object
        ``evaluate(t) -> (q_r, q̇_r, q̈_r)``.
    deviation : float
        The largest relative deviation of the check (module docstring).
    """

    table: TimeTable
    scales: np.ndarray
    n_f: int
    n_joints: int
    trajectory: object
    deviation: float

    def __post_init__(self) -> None:
        # numba loads with the first table, not with this module (studies import it; most
        # never tabulate)
        from core.dynamics.compiled.series import linear_jacobian, linear_rates

        series = self.table.series
        if self.table.reason is not None or series is None:
            raise ValueError(f"the table must be tabulated on its whole span: {self.table.reason}")
        packed = (*series.packed(), np.asarray(self.scales, dtype=float))
        object.__setattr__(self, "_packed", packed)
        object.__setattr__(self, "_kernels", (linear_rates, linear_jacobian))

    def _qdd_r(self, t: float) -> np.ndarray:
        """The trajectory's q̈_r at t, which must lie in the table's span."""
        t0, t1 = self.table.span
        if not t0 <= t <= t1:
            raise ValueError(f"t = {t!r} s is outside the tabulated span [{t0}, {t1}] s")
        return np.asarray(self.trajectory.evaluate(t)[2], dtype=float)

    def parts(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(A (n_f, 2 n_f), b (n_f,)) at t from the table, with the trajectory's q̈_r at t."""
        J, b = self._kernels[1](*self._packed, float(t), self._qdd_r(t), int(self.n_f))
        return J[self.n_f :], b

    def accelerations(self, t: float, z: np.ndarray) -> np.ndarray:
        """q̈_f at t and z = (q_f, q̇_f)."""
        return self.rates(t, z)[self.n_f :]

    def rates(self, t: float, z: np.ndarray) -> np.ndarray:
        """ż = (q̇_f, q̈_f), for ``solve_ivp``."""
        return self._kernels[0](*self._packed, float(t), self._qdd_r(t), np.asarray(z, dtype=float))

    def jacobian(self, t: float, z: np.ndarray) -> np.ndarray:
        """∂ż/∂z = [[0, I], [A(t)]] (exact: ż is affine in z)."""
        return self._kernels[1](*self._packed, float(t), self._qdd_r(t), int(self.n_f))[0]


def _blocks(n_f: int, n_joints: int) -> list[np.ndarray]:
    """Indices of the flattened (A0, b0, N, C) by block: A0's q_f columns, A0's q̇_f columns,
    b0, N, C."""
    columns = np.arange(2 * n_f * n_f).reshape(n_f, 2 * n_f)
    b_start = 2 * n_f * n_f
    c_start = b_start + n_f + n_f * n_joints
    return [
        columns[:, :n_f].ravel(),
        columns[:, n_f:].ravel(),
        np.arange(b_start, b_start + n_f),
        np.arange(b_start + n_f, c_start),
        np.arange(c_start, c_start + n_joints * n_f * n_f),
    ]


def direct_parts(
    solve: Callable[[float, np.ndarray, np.ndarray], np.ndarray], t: float, n_f: int, n_joints: int
) -> np.ndarray:
    """(A0, b0, N, C) at t flattened, from ``solve(t, z, q̈_r) -> q̈_f`` (module docstring):
    b0 = solve(0, 0), the columns of A0 the unit responses minus b0, those of N and of every
    C_j (the q_f columns of ∂A/∂q̈_r,j) from accelerations :data:`ACCELERATION_STEP` (exact
    for a bilinear map; the large step keeps the differences above the round-off of the
    stiffness term)."""
    zero_z, zero_r = np.zeros(2 * n_f), np.zeros(n_joints)
    b = solve(t, zero_z, zero_r)
    A = np.empty((n_f, 2 * n_f))
    N = np.empty((n_f, n_joints))
    C = np.empty((n_joints, n_f, n_f))
    units = np.eye(2 * n_f)
    for k, unit in enumerate(units):
        A[:, k] = solve(t, unit, zero_r) - b
    for j, unit in enumerate(ACCELERATION_STEP * np.eye(n_joints)):
        driven = solve(t, zero_z, unit)
        N[:, j] = (driven - b) / ACCELERATION_STEP
        for k in range(n_f):
            C[j, :, k] = (solve(t, units[k], unit) - driven - A[:, k]) / ACCELERATION_STEP
    return np.concatenate([A.ravel(), b, N.ravel(), C.ravel()])


def linear_flexible(
    solve: Callable[[float, np.ndarray, np.ndarray], np.ndarray],
    trajectory,
    span: tuple[float, float],
    n_f: int,
    n_joints: int,
    z_scale: np.ndarray,
    relative_tolerance: float = TABLE_TOLERANCE,
) -> LinearFlexible | None:
    """The tabulated linear flexible system, or None when the check rejects it or the table
    would evaluate ``solve`` directly somewhere in the span (a series that does not converge).

    Parameters
    ----------
    solve : callable
        ``solve(t, z, q̈_r) -> q̈_f``: the prescribed-motion accelerations of the flexible
        coordinates with the joints at the trajectory's (q_r, q̇_r) at t and accelerations q̈_r.
    trajectory : object
        ``evaluate(t) -> (q_r, q̇_r, q̈_r)``.
    span : (float, float)
    n_f, n_joints : int
    z_scale : ndarray, shape (2 n_f,)
        Typical magnitudes of (q_f, q̇_f) for the check (e.g. the initial state's).
    relative_tolerance : float
        Of the table, per block (:data:`TABLE_TOLERANCE`).
    """
    t0, t1 = (float(t) for t in span)
    cache: dict[float, np.ndarray] = {}

    def parts(t: float) -> np.ndarray:
        if t not in cache:
            cache[t] = direct_parts(solve, t, n_f, n_joints)
        return cache[t]

    samples = np.abs([parts(t) for t in np.linspace(t0, t1, 9)])
    scales = np.empty(samples.shape[1])
    for block in _blocks(n_f, n_joints):
        scales[block] = float(np.max(samples[:, block], initial=0.0)) or _ZERO_SCALE
    table = tabulate(lambda t: parts(t) / scales, (t0, t1), relative_tolerance=relative_tolerance)
    if table.reason is not None:  # parts of the span read directly: a right-hand side would solve
        return None
    system = LinearFlexible(table, scales, n_f, n_joints, trajectory, np.nan)
    deviation = 0.0
    for k, fraction in enumerate(CHECK_TIMES):
        t = t0 + fraction * (t1 - t0)
        z = z_scale * np.cos(np.arange(2 * n_f) + k)  # deflections and rates of the given scale
        qdd_r = trajectory.evaluate(t)[2]
        direct = solve(t, z, qdd_r)
        scale = max(float(np.max(np.abs(direct))), 1e-300)
        deviation = max(deviation, float(np.max(np.abs(system.accelerations(t, z) - direct))) / scale)
    if not deviation <= CHECK_TOLERANCE:
        return None
    return LinearFlexible(table, scales, n_f, n_joints, trajectory, deviation)


def model_solver(
    model, trajectory, auxiliary: Callable[[float], np.ndarray] | None = None
) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    """``solve(t, z, q̈_r) -> q̈_f`` of :func:`linear_flexible` for ``model``: the joints at the
    trajectory's (q_r, q̇_r) at t, the flexible coordinates q[n_joints:] = z[:n_f], their rates
    z[n_f:], one :func:`~core.analysis.simulation.prescribed_motion` without its input checks
    (the states are built here from the trajectory's and finite z: ~a fifth of a solve on the RRP
    arm); with ``auxiliary(t)`` (the auxiliary states at t) inside
    ``with model.auxiliary(auxiliary(t)):``."""
    n_joints = model.n_joints
    n_f = model.n_dof - n_joints

    def solve(t: float, z: np.ndarray, qdd_r: np.ndarray) -> np.ndarray:
        q_r, qd_r, _ = trajectory.evaluate(t)
        q = np.concatenate([q_r, z[:n_f]])
        qd = np.concatenate([qd_r, z[n_f:]])
        with model.auxiliary(auxiliary(t)) if auxiliary is not None else contextlib.nullcontext():
            return model.prescribed_function()(q, qd, np.asarray(qdd_r, dtype=float))[0][n_joints:]

    return solve


def auxiliary_history(model, trajectory, span: tuple[float, float], q0: np.ndarray, z_scale: np.ndarray):
    """The auxiliary states a(t) of a prescribed run, integrated on their own (dense output), or
    None when their rates depend on the flexible coordinates.

    With the joints prescribed, ȧ = ``model.auxiliary_rates(q, q̇, a)`` of the assumed-mode roots
    (dβ/dt = (dβ/dl)(β, l) l̇) sees only the joints: a(t) is then the same with or without the
    flexible coordinates, and is integrated first (DOP853 at :data:`AUXILIARY_RTOL`, far below any
    run's tolerance) and tabulated (:data:`AUXILIARY_TABLE_TOLERANCE`): the coefficients read a(t)
    from that table, piecewise polynomial on dyadic panels of the span, where the dense output's
    kinks between steps (~1e-11 relative) would keep their own table from converging. The
    independence is checked at :data:`CHECK_TIMES` with flexible coordinates of ``z_scale``."""
    from scipy.integrate import solve_ivp

    n_joints = model.n_joints
    n_f = model.n_dof - n_joints
    t0, t1 = span

    def rates(t: float, a: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        q_r, qd_r, _ = trajectory.evaluate(t)
        flexible = np.zeros(2 * n_f) if z is None else z
        q, qd = np.concatenate([q_r, flexible[:n_f]]), np.concatenate([qd_r, flexible[n_f:]])
        with model.auxiliary(a):
            return np.asarray(model.auxiliary_rates(q, qd, a), dtype=float)

    a0 = np.asarray(model.auxiliary_initial(q0), dtype=float)
    solution = solve_ivp(
        rates,
        span,
        a0,
        method="DOP853",
        rtol=AUXILIARY_RTOL,
        atol=AUXILIARY_RTOL * np.abs(a0).max(),
        dense_output=True,
    )
    if not solution.success:
        return None
    history = tabulate(solution.sol, span, relative_tolerance=AUXILIARY_TABLE_TOLERANCE)
    if history.reason is not None:
        return None
    for k, fraction in enumerate(CHECK_TIMES):
        t = t0 + fraction * (t1 - t0)
        a = history(t)
        z = z_scale * np.cos(np.arange(2 * n_f) + k)
        alone, with_flexible = rates(t, a), rates(t, a, z)
        if np.max(np.abs(with_flexible - alone)) > CHECK_TOLERANCE * max(
            float(np.max(np.abs(alone))), 1e-300
        ):
            return None
    return history


def simulate_linear(
    model, t_span, q0, trajectory, *, method: str, rtol: float, atol: float, t_eval=None, progress=None
):
    """The prescribed run of :func:`~core.analysis.simulation.simulate` (``prescribed=True``,
    the joints on the trajectory, the flexible coordinates from q0 at rest)
    through the tabulated linear system, or None where it does not apply (the check of
    :func:`linear_flexible` or of :func:`auxiliary_history` fails, or the table would evaluate
    the model directly somewhere: a right-hand side would then cost 2 n_f + 1 + n_joints (n_f + 1)
    solves). Auxiliary states are integrated first (:func:`auxiliary_history`) and the
    coefficients tabulated with their a(t).

    Returns a DataFrame with ``time``, every coordinate and its rate (``<name>_dot``), the
    auxiliary states (one column per name) and ``extension_speed_ratio<i>`` per translating link, as :func:`simulate`'s frame; it has no
    torques, energies or work integrals (those need the model at every row). ``frame.attrs``:
    ``nfev``, ``njev``, ``nlu``, ``method``, ``table_samples`` (prescribed-motion solves of
    the table: 2 n_f + 1 + n_joints (n_f + 1) solves each), ``table_deviation`` (the check's),
    ``success``, ``message``. ``progress(t)``: called once per right-hand side.

    Raises
    ------
    SimulationError
        When the integrator fails (``error.frame``: the rows computed before).
    """
    import pandas as pd
    from scipy.integrate import solve_ivp

    from core.analysis.assumptions import warn_extension_speeds, wave_speeds
    from core.analysis.simulation import IMPLICIT, SimulationError

    n, n_joints = model.n_dof, model.n_joints
    n_f = n - n_joints
    t0, t1 = (float(t) for t in t_span)
    q0 = np.asarray(q0, dtype=float)
    z0 = np.concatenate([q0[n_joints:], np.zeros(n_f)])
    scale = np.full(2 * n_f, max(float(np.max(np.abs(z0))), 1e-6))
    auxiliary = None
    if tuple(model.auxiliary_names):
        auxiliary = auxiliary_history(model, trajectory, (t0, t1), q0, scale)
        if auxiliary is None:
            return None
    solve = model_solver(model, trajectory, auxiliary)
    tolerance = TABLE_TOLERANCE if auxiliary is None else AUXILIARY_TABLE_TOLERANCE_COEFFICIENTS
    system = linear_flexible(solve, trajectory, (t0, t1), n_f, n_joints, scale, tolerance)
    if system is None:
        return None
    jac = {"jac": system.jacobian} if method in IMPLICIT else {}
    rates = system.rates
    if progress is not None:

        def rates(t: float, z: np.ndarray) -> np.ndarray:
            progress(t)
            return system.rates(t, z)

    solution = solve_ivp(rates, (t0, t1), z0, method=method, rtol=rtol, atol=atol, t_eval=t_eval, **jac)
    times = solution.t
    references = [trajectory.evaluate(t) for t in times]
    Q = np.zeros((times.size, n))
    QD = np.zeros((times.size, n))
    if times.size:
        Q[:, :n_joints] = [r[0] for r in references]
        QD[:, :n_joints] = [r[1] for r in references]
    Q[:, n_joints:], QD[:, n_joints:] = solution.y[:n_f].T, solution.y[n_f:].T
    names = list(model.coordinates)
    columns = {"time": times, **dict(zip(names, Q.T, strict=True))}
    columns.update({f"{name}_dot": v for name, v in zip(names, QD.T, strict=True)})
    if auxiliary is not None:
        columns.update(
            zip(
                model.auxiliary_names,
                np.array([auxiliary(t) for t in times] or np.zeros((0, len(model.auxiliary_names)))).T,
                strict=True,
            )
        )
    worst = []  # per translating link: (joint index, largest U/U_g at the output times, when)
    for index, wave_speed in wave_speeds(model):
        ratio = columns[f"extension_speed_ratio{index + 1}"] = np.abs(QD[:, index]) * Q[:, index] / wave_speed
        if times.size:
            worst.append((index, float(ratio.max()), float(times[ratio.argmax()])))
    warn_extension_speeds(worst)
    frame = pd.DataFrame(columns)
    frame.attrs.update(
        nfev=int(solution.nfev),
        njev=int(solution.njev),
        nlu=int(solution.nlu),
        method=method,
        prescribed=True,
        table_samples=system.table.samples,
        table_deviation=system.deviation,
        table_reason=system.table.reason,
        success=bool(solution.success),
        message=solution.message,
    )
    if not solution.success:
        reached = times[-1] if times.size else t0
        raise SimulationError(f"integration failed at t = {reached:.6g} s: {solution.message}", frame)
    return frame
