"""A whole explicit simulation in compiled code: DOP853 around :func:`~.algorithms.rates`.

Dormand and Prince's 8(5,3) pair (Hairer, Nørsett & Wanner, *Solving Ordinary Differential
Equations I*, 2nd ed., §II.5 and §II.10), stepped the way ``scipy.integrate.solve_ivp(method=
"DOP853")`` steps it — the same first step (§II.4), error norm (the 5th- and 3rd-order estimates
combined), step-size factors (safety 0.9, within [0.2, 10], no growth right after a rejection)
and 7th-degree dense output at the requested times — so the two take the same steps to
round-off and the compiled loop is checked against SciPy's (tests/test_explicit_integration.py).
What it removes is the Python around every stage: SciPy's stage sums, the right-hand side's
wrappers and the input's read cost ~12 µs per right-hand side of the 15-coordinate space arm,
whose kernel takes ~10 µs.

The input is zero, open loop — a piecewise Chebyshev table τ(t) read by
:func:`~.series.series_value` (a feed-forward's, :meth:`core.analysis.time_table.TimeTable.compiled`)
— or joint PD on a table of the reference (q_d, q̇_d)(t).
The tableau (``scipy.integrate._ivp.dop853_coefficients``) is passed in, as arrays. The
integrator's own arithmetic follows numpy's error model, as SciPy's does: a division by zero
(an overflowing start: ‖f0‖ = ∞ gives a first trial step of 0) is inf or NaN, not an exception.

``status`` carries the run between calls (:data:`T`, :data:`H`, ...), so a caller can take the
steps in chunks and report progress between them.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.algorithms import rates
from core.dynamics.compiled.jit import kernel
from core.dynamics.compiled.series import series_value

#: ``status`` entries: the time reached, the next step's size, the right-hand sides so far, the
#: outcome (:data:`RUNNING`, :data:`FINISHED`, :data:`TOO_SMALL`), the next output time's index,
#: the outputs written in this call, and the time of the last right-hand side's argument
#: (``point``: where a right-hand side that raised was evaluated; the exception propagates).
T, H, NFEV, CODE, NEXT, WRITTEN, POINT_T = range(7)
RUNNING, FINISHED, TOO_SMALL = 0.0, 1.0, -1.0
#: The step-size controller (SciPy's, for a method whose error estimate has order 7).
SAFETY, MIN_FACTOR, MAX_FACTOR, EXPONENT = 0.9, 0.2, 10.0, -1.0 / 8.0
#: Stages of a step (the last is the new point's derivative) and of the dense output.
STAGES, EXTENDED = 12, 16


@kernel(inline="always")
def right_hand_side(table, F, smax, system, feed, t, x, out):
    """out = ẋ(t, x) of :func:`~.algorithms.rates` with the input of ``feed`` = (edges,
    coefficients, lengths, scales, k_p, k_d): a series v(t) of as many values as joints is the
    torque itself (open loop); one of twice as many is a reference (q_d, q̇_d) and τ = k_p (q_d −
    q_r) + k_d (q̇_d − q̇_r) on the joint coordinates (PD); no series, τ = 0."""
    B, D, K, coulomb, epsilon, gravity, composite = system
    edges, coefficients, lengths, scales, kp, kd = feed
    n, joints = B.shape
    tau = np.zeros(joints)
    if edges.size:
        v = series_value(edges, coefficients, lengths, scales, t)
        if v.size == joints:
            tau[:] = v
        else:
            for j in range(joints):
                tau[j] = kp[j] * (v[j] - x[j]) + kd[j] * (v[joints + j] - x[n + j])
    out[:] = rates(table, F, smax, x, tau, B, D, K, coulomb, epsilon, gravity, composite)


@kernel(error_model="numpy")
def stage_point(y, K, a, s, h, out):
    """out = y + (Σ_{j<s} a_j K_j) h."""
    for i in range(y.size):
        acc = 0.0
        for j in range(s):
            acc += K[j, i] * a[j]
        out[i] = y[i] + acc * h


@kernel(error_model="numpy")
def rms(x, scale):
    """‖x / scale‖ / √size."""
    acc = 0.0
    for i in range(x.size):
        acc += (x[i] / scale[i]) ** 2
    return np.sqrt(acc / x.size)


@kernel(inline="always", error_model="numpy")
def dense_coefficients(table, F, smax, system, feed, tableau, t_old, h, y_old, y, K, point, status, out):
    """The 7 rows of the step's interpolant (the extended stages into K[13:16], each argument in
    ``point`` and its time in status[POINT_T])."""
    A, C, _, _, _, Dd = tableau
    n = y.size
    for s in range(STAGES + 1, EXTENDED):
        stage_point(y_old, K, A[s], s, h, point)
        status[POINT_T] = t_old + C[s] * h
        right_hand_side(table, F, smax, system, feed, t_old + C[s] * h, point, K[s])
    for i in range(n):
        delta = y[i] - y_old[i]
        out[0, i] = delta
        out[1, i] = h * K[0, i] - delta
        out[2, i] = 2.0 * delta - h * (K[STAGES, i] + K[0, i])
    for r in range(4):
        for i in range(n):
            acc = 0.0
            for j in range(EXTENDED):
                acc += Dd[r, j] * K[j, i]
            out[3 + r, i] = h * acc


@kernel(error_model="numpy")
def interpolate(coefficients, y_old, x, out):
    """The interpolant at θ = x of the step from y_old (Horner in θ and 1 − θ alternately)."""
    rows = coefficients.shape[0]
    for i in range(y_old.size):
        v = 0.0
        for k in range(rows):
            v += coefficients[rows - 1 - k, i]
            v *= x if k % 2 == 0 else 1.0 - x
        out[i] = v + y_old[i]


@kernel(error_model="numpy")
def dop853(
    table,
    F,
    smax,
    system,
    feed,
    tableau,
    t_bound,
    rtol,
    atol,
    t_eval,
    status,
    y,
    K,
    point,
    out_t,
    out_y,
    steps,
):
    """Up to ``steps`` accepted steps from (status[T], y), K[0] = ẋ there (status[NFEV] = 0:
    the start, which evaluates it and the first step's size).

    Writes the interpolated states at the times ``t_eval`` reached (from status[NEXT]) into
    ``out_y`` rows, or, with an empty ``t_eval``, each accepted step's (t, y) into ``out_t``,
    ``out_y`` (status[WRITTEN] of them). status[CODE]: :data:`FINISHED` at t_bound,
    :data:`TOO_SMALL` when the step fell below 10 ulp of t, else :data:`RUNNING`. y, status[T],
    status[H] and status[NFEV] follow every accepted step; every right-hand side reads its
    argument from ``point`` at status[POINT_T], so a caller can evaluate again where one raised.

    The right-hand side and the dense output are inlined here (numba IR): as separate functions
    each would link and re-optimize the whole :func:`~.algorithms.rates` kernel again on a first
    run (measured: 43 s of compilation with them separate and a try/except, 15 s inlined).
    """
    A, C, Bw, E3, E5, _ = tableau
    n = y.size
    t, h_abs = status[T], status[H]
    nfev = int(status[NFEV])
    written = 0
    code = RUNNING
    dense = np.empty((7, n))
    y_new, y_old = np.empty(n), np.empty(n)
    if nfev == 0:
        status[POINT_T] = t
        point[:] = y
        right_hand_side(table, F, smax, system, feed, t, point, K[0])
        scale = atol + np.abs(y) * rtol
        d0, d1 = rms(y, scale), rms(K[0], scale)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        h0 = min(h0, t_bound - t)
        point[:] = y + h0 * K[0]
        status[POINT_T] = t + h0
        right_hand_side(table, F, smax, system, feed, t + h0, point, y_new)
        d2 = rms(y_new - K[0], scale) / h0
        h1 = max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15 else (0.01 / max(d1, d2)) ** (1.0 / 8.0)
        h_abs = min(100 * h0, h1, t_bound - t)
        nfev = 2
    taken = 0
    while taken < steps:
        if t >= t_bound:
            code = FINISHED
            break
        min_step = 10.0 * abs(np.nextafter(t, np.inf) - t)
        h_abs = max(h_abs, min_step)
        rejected = False
        accepted = False
        h, t_new = 0.0, t
        while not accepted:
            if h_abs < min_step:
                code = TOO_SMALL
                break
            t_new = min(t + h_abs, t_bound)
            h = t_new - t
            h_abs = abs(h)
            for s in range(1, STAGES):
                stage_point(y, K, A[s], s, h, point)
                status[POINT_T] = t + C[s] * h
                right_hand_side(table, F, smax, system, feed, t + C[s] * h, point, K[s])
            for i in range(n):
                acc = 0.0
                for j in range(STAGES):
                    acc += K[j, i] * Bw[j]
                y_new[i] = y[i] + h * acc
            point[:] = y_new
            status[POINT_T] = t + h
            right_hand_side(table, F, smax, system, feed, t + h, point, K[STAGES])
            nfev += STAGES
            error = error_norm(y, y_new, K, E5, E3, h_abs, rtol, atol)
            if error < 1.0:
                factor = MAX_FACTOR if error == 0.0 else min(MAX_FACTOR, SAFETY * error**EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                h_abs *= factor
                accepted = True
            else:
                factor = SAFETY * error**EXPONENT
                h_abs *= factor if factor > MIN_FACTOR else MIN_FACTOR  # NaN: the smallest
                rejected = True
        if not accepted:
            break
        t_old = t
        y_old[:] = y
        y[:] = y_new
        t = t_new
        if t_eval.size:
            k = int(status[NEXT])
            if k < t_eval.size and t_eval[k] <= t:
                dense_coefficients(
                    table, F, smax, system, feed, tableau, t_old, h, y_old, y, K, point, status, dense
                )
                nfev += 3
                while k < t_eval.size and t_eval[k] <= t:
                    interpolate(dense, y_old, (t_eval[k] - t_old) / h, out_y[k])
                    k += 1
                status[NEXT] = k
        else:
            out_t[written] = t
            out_y[written] = y
            written += 1
        K[0] = K[STAGES]
        status[T], status[H], status[NFEV] = t, h_abs, nfev
        taken += 1
        if t >= t_bound:
            code = FINISHED
            break
    status[T], status[H], status[NFEV], status[CODE], status[WRITTEN] = t, h_abs, nfev, code, written


@kernel(error_model="numpy")
def error_norm(y, y_new, K, E5, E3, h_abs, rtol, atol):
    """The step's error in units of the tolerance (< 1: accept), from the 5th- and 3rd-order
    estimates e5 = Σ E5_j K_j, e3 = Σ E3_j K_j (Hairer et al. §II.10): |h| ‖e5‖² / √((‖e5‖² +
    0.01 ‖e3‖²) n), each entry scaled by atol + rtol max(|y|, |y_new|)."""
    n = y.size
    norm5, norm3 = 0.0, 0.0
    for i in range(n):
        scale = atol + max(abs(y[i]), abs(y_new[i])) * rtol
        a5, a3 = 0.0, 0.0
        for j in range(STAGES + 1):
            a5 += K[j, i] * E5[j]
            a3 += K[j, i] * E3[j]
        norm5 += (a5 / scale) ** 2
        norm3 += (a3 / scale) ** 2
    if norm5 == 0.0 and norm3 == 0.0:
        return 0.0
    return h_abs * norm5 / np.sqrt((norm5 + 0.01 * norm3) * n)
