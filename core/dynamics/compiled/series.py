"""Compiled right-hand side of a tabulated linear system (:mod:`core.analysis.prescribed`):
a piecewise Chebyshev series read at t, and ż = (q̇_f, A(t) z + b(t)) or its Jacobian
assembled from it, in one call.

The series is packed as ``edges`` (panel ends, increasing), ``coefficients`` (panels, length,
P; panel i's first ``lengths[i]`` rows used) and ``scales`` (P,: the table holds values divided
by them). Its values at t are, in order, A0 (n_f, 2 n_f) row by row, b0 (n_f), N (n_f, n_joints)
row by row and C (n_joints, n_f, n_f):

    A = A0 + [Σ_j q̈_r,j C_j, 0],   b = b0 + N q̈_r.

The numpy path it replaces (a bisection, cos(k arccos t), a product and the assembly in some ten
numpy calls) cost ~35 µs a right-hand side with Python around it; T_k(t) here comes from the
three-term recurrence, whose rounding (~k ε) is that of cos(k arccos t).
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel


@kernel(inline="always")
def series_value(edges, coefficients, lengths, scales, x):
    """The series at x (edges[0] ≤ x ≤ edges[-1]), times ``scales``: the panel whose
    [edges[i], edges[i + 1]) holds x (the last panel for x = edges[-1])."""
    lo, hi = 0, edges.size - 2
    while lo < hi:  # the largest i ≤ panels − 1 with edges[i] ≤ x
        middle = (lo + hi + 1) // 2
        if edges[middle] <= x:
            lo = middle
        else:
            hi = middle - 1
    a, b = edges[lo], edges[lo + 1]
    t = min(max((2.0 * x - a - b) / (b - a), -1.0), 1.0)
    P = scales.size
    values = np.zeros(P)
    previous, current = 1.0, t  # T_0, T_1
    for k in range(lengths[lo]):
        if k == 0:
            term = 1.0
        elif k == 1:
            term = t
        else:
            previous, current = current, 2.0 * t * current - previous
            term = current
        for p in range(P):
            values[p] += coefficients[lo, k, p] * term
    for p in range(P):
        values[p] *= scales[p]
    return values


@kernel(inline="always")
def assemble(values, qdd_r, n_f):
    """(A (n_f, 2 n_f), b (n_f,)) from the series' values and q̈_r (module docstring)."""
    n_joints = qdd_r.size
    width = 2 * n_f
    end_a = n_f * width
    end_b = end_a + n_f
    end_n = end_b + n_f * n_joints
    A = np.empty((n_f, width))
    b = np.empty(n_f)
    for r in range(n_f):
        for c in range(width):
            A[r, c] = values[r * width + c]
        total = values[end_a + r]
        for j in range(n_joints):
            total += values[end_b + r * n_joints + j] * qdd_r[j]
            block = end_n + j * n_f * n_f + r * n_f
            for c in range(n_f):
                A[r, c] += qdd_r[j] * values[block + c]
        b[r] = total
    return A, b


@kernel
def linear_rates(edges, coefficients, lengths, scales, t, qdd_r, z):
    """ż = (q̇_f, A(t) z + b(t)) at t, z = (q_f, q̇_f) (module docstring)."""
    n_f = z.size // 2
    A, b = assemble(series_value(edges, coefficients, lengths, scales, t), qdd_r, n_f)
    out = np.empty(2 * n_f)
    for r in range(n_f):
        out[r] = z[n_f + r]
        total = b[r]
        for c in range(2 * n_f):
            total += A[r, c] * z[c]
        out[n_f + r] = total
    return out


@kernel
def linear_jacobian(edges, coefficients, lengths, scales, t, qdd_r, n_f):
    """∂ż/∂z = [[0, I], [A(t)]] (2 n_f, 2 n_f) and b(t) (module docstring)."""
    A, b = assemble(series_value(edges, coefficients, lengths, scales, t), qdd_r, n_f)
    J = np.zeros((2 * n_f, 2 * n_f))
    for r in range(n_f):
        J[r, n_f + r] = 1.0
        for c in range(2 * n_f):
            J[n_f + r, c] = A[r, c]
    return J, b
