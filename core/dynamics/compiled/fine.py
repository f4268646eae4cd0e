"""The joint-space solves of the articulated-body algorithm for bodies with many flexible
coordinates (fine element meshes), without an m × m factor.

The articulated-body step of body i solves with its joint-space inertia D = Sᵀ I^A S
((1 + m) × (1 + m), u = (q̇_i, δ̇)); a dense Cholesky factor of D is O(m³) per body and call
(46.7 s per call on two links × 1024 elements). A fixed-length link's D has the structure

    D_δδ = C₀ + Vᵀ X V (+ Σ_j μ_j h_j h_jᵀ with geometric stiffening),

C₀ = M_δδ the body's constant mass block (banded for Hermite elements, lumped masses
included: their values and slopes are local), V (r × m, r ≤ 14) the rows through which the
rest of the chain reaches δ: the δ-columns of the child's joint map A_{i+1} (with the child's
articulated inertia, 6 × 6), of the end-frame map (the payload's spatial inertia), the hub's
root-slope row and the motor's (1, b) row. The Gram terms of a stiffened link
(:mod:`~core.dynamics.compiled.stiffening`) are of full rank, O(|w'|²) next to C₀ on smooth
deflections. :func:`joint_solve` takes the joint row by its Schur complement and
D_δδ⁻¹ by conjugate gradients on the dense D_δδ (the block the step forms anyway, O(m²) per
product, all right-hand sides in one sweep), preconditioned with the exact solve of
P = C₀ + Vᵀ X V (banded Cholesky of C₀, O(m b²); Woodbury's capacitance 1 + X V C₀⁻¹ Vᵀ,
r × r), the true residual every step. Without stiffening P = D_δδ: one step refines the
Woodbury solve to round-off. With it the spectrum of P⁻¹D_δδ is 1 plus a few outliers on
smooth states; a column that misses ‖b − D_δδ x‖∞ ≤ m ε (‖D_δδ‖∞‖x‖∞ + ‖b‖∞) (the bound of
a backward-stable dense solve) within :data:`MAX_STEPS` makes the step fall back to the dense
factor of D (rough states of stiffened fine meshes; :func:`~.algorithms.forward_solve` reports
it). Work per body and call: O(m²), no m × m factor; memory O(m²) (D, the body's inertia).
Tilted and translating links keep the dense factor.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel

#: The most coupling rows V of one body: child (6), payload (6), hub (1), motor (1).
COUPLING_ROWS = 14
#: Stop the conjugate gradients at ‖b − D x‖∞ ≤ TOLERANCE · ε (‖D‖∞ ‖x‖∞ + ‖b‖∞).
TOLERANCE = 4.0
#: At most this many conjugate-gradient steps per right-hand side (each one product with D).
MAX_STEPS = 60
#: Stop after this many steps without a new smallest residual (round-off reached).
STALL = 8
#: A column is solved once its residual is within ACCEPT · m · ε (‖D_δδ‖‖x‖ + ‖b‖) (the bound
#: of a backward-stable dense solve); else the step falls back to the dense factor.
ACCEPT = 1.0


@kernel
def band_factor(F, o, m, b):
    """Lower Cholesky factor of the symmetric positive definite C = F[o:o + m²] (m × m, C
    order) of bandwidth b, in band storage L[i, d] = L_{i, i − d}, shape (m, b + 1); O(m b²)."""
    L = np.zeros((m, b + 1))
    for j in range(m):
        acc = F[o + j * m + j]
        for p in range(max(0, j - b), j):
            acc -= L[j, j - p] * L[j, j - p]
        if not acc > 0.0:
            raise np.linalg.LinAlgError("mass block of a flexible body is not positive definite")
        L[j, 0] = np.sqrt(acc)
        for i in range(j + 1, min(m, j + b + 1)):
            acc = F[o + i * m + j]
            for p in range(max(0, i - b), j):
                acc -= L[i, i - p] * L[j, j - p]
            L[i, i - j] = acc / L[j, 0]
    return L


@kernel
def band_solve(L, m, b, x):
    """x[:m] ← C⁻¹ x for C = L Lᵀ (:func:`band_factor`); O(m b)."""
    for i in range(m):
        acc = x[i]
        for p in range(max(0, i - b), i):
            acc -= L[i, i - p] * x[p]
        x[i] = acc / L[i, 0]
    for i in range(m - 1, -1, -1):
        acc = x[i]
        for p in range(i + 1, min(m, i + b + 1)):
            acc -= L[p, p - i] * x[p]
        x[i] = acc / L[i, 0]


@kernel
def coupling(table, F, i, A, Iart, P_end, V, X):
    """The coupling rows V[:r, :m] and their inertia X[:r, :r] of body i (module docstring):
    the child's A_{i+1} with its articulated inertia ``Iart[i + 1]``, the end-frame map with
    the payload, the hub's and the motor's rows. Returns r."""
    row = table[i]
    m = row.m
    for a in range(COUPLING_ROWS):
        for c in range(COUPLING_ROWS):
            X[a, c] = 0.0
    r = 0
    if i + 1 < table.shape[0]:
        for a in range(6):
            for k in range(m):
                V[a, k] = A[i + 1, a, 6 + k]
            for c in range(6):
                X[a, c] = Iart[i + 1, a, c]
        r = 6
    if row.has_payload:
        o = row.o_payload
        for a in range(6):
            for k in range(m):
                V[r + a, k] = P_end[i, a, 6 + k]
            for c in range(6):
                X[r + a, r + c] = F[o + 6 * a + c]
        r += 6
    if row.has_hub_inertia:
        for k in range(m):
            V[r, k] = F[row.o_hub + 6 + k]
        X[r, r] = row.hub_inertia
        r += 1
    if row.has_armature:
        for k in range(m):
            V[r, k] = F[row.o_armature + 1 + k]
        X[r, r] = row.armature
        r += 1
    return r


@kernel
def structured_part(F, row, V, X, r):
    """The preconditioner P = C₀ + Vᵀ X V of :func:`flexible_solve`: (L, Z, capacitance⁻¹) with
    L the band factor of C₀, Z = C₀⁻¹ Vᵀ and the capacitance 1 + X V Z (r × r)."""
    m, b = row.m, row.mdd_band
    L = band_factor(F, row.o_mdd, m, b)
    Z = np.empty((m, r))
    column = np.empty(m)
    for t in range(r):
        for k in range(m):
            column[k] = V[t, k]
        band_solve(L, m, b, column)
        for k in range(m):
            Z[k, t] = column[k]
    capacitance = np.eye(r)
    K = np.zeros((r, r))
    for t in range(r):
        for u in range(r):
            acc = 0.0
            for k in range(m):
                acc += V[t, k] * Z[k, u]
            K[t, u] = acc
    for t in range(r):
        for u in range(r):
            acc = 0.0
            for v in range(r):
                acc += X[t, v] * K[v, u]
            capacitance[t, u] += acc
    inverse = np.linalg.inv(capacitance) if r else np.zeros((0, 0))
    return L, Z, inverse


@kernel
def solve_flexible(L, m, b, Z, V, X, inverse, r, x):
    """x ← (C₀ + Vᵀ X V)⁻¹ x by Woodbury's identity: y = C₀⁻¹ x, y − Z (1 + X V Z)⁻¹ X V y."""
    band_solve(L, m, b, x)
    if r == 0:
        return
    t = np.zeros(r)
    for a in range(r):
        acc = 0.0
        for k in range(m):
            acc += V[a, k] * x[k]
        t[a] = acc
    u = np.zeros(r)
    for a in range(r):
        for c in range(r):
            u[a] += X[a, c] * t[c]
    s = np.zeros(r)
    for a in range(r):
        for c in range(r):
            s[a] += inverse[a, c] * u[c]
    for k in range(m):
        acc = 0.0
        for a in range(r):
            acc += Z[k, a] * s[a]
        x[k] -= acc


@kernel
def product(D, m, X, columns, rhs, out):
    """out[:m, :columns] = rhs − D_δδ X (D_δδ = D[1:1 + m, 1:1 + m]), all columns in one sweep."""
    for a in range(m):
        for j in range(columns):
            out[a, j] = rhs[a, j]
        for c in range(m):
            d = D[1 + a, 1 + c]
            if d != 0.0:
                for j in range(columns):
                    out[a, j] -= d * X[c, j]


@kernel
def flexible_solve(D, m, L, b, Z, V, X, inverse, r, rhs, columns, out):
    """out[:m, :columns] = D_δδ⁻¹ rhs by conjugate gradients preconditioned with
    P = C₀ + Vᵀ X V (:func:`solve_flexible`), one per column in lockstep (each product one
    sweep of D_δδ for all columns), the true residual every step. Returns whether every
    column reached ‖rhs − D_δδ x‖∞ ≤ :data:`ACCEPT` m ε (‖D_δδ‖∞ ‖x‖∞ + ‖rhs‖∞)."""
    norm = 0.0
    for a in range(m):
        acc = 0.0
        for c in range(m):
            acc += abs(D[1 + a, 1 + c])
        norm = max(norm, acc)
    eps = np.finfo(np.float64).eps
    x, res, p = np.zeros((m, columns)), np.zeros((m, columns)), np.zeros((m, columns))
    q, zero = np.zeros((m, columns)), np.zeros((m, columns))
    z = np.empty(m)
    smallest, rz, scale = np.empty(columns), np.zeros(columns), np.zeros(columns)
    stalled = np.zeros(columns, dtype=np.int64)
    active = np.ones(columns, dtype=np.bool_)
    accepted = True
    for j in range(columns):
        for a in range(m):
            z[a] = rhs[a, j]
            scale[j] = max(scale[j], abs(z[a]))
        solve_flexible(L, m, b, Z, V, X, inverse, r, z)
        for a in range(m):
            x[a, j] = out[a, j] = z[a]
    product(D, m, x, columns, rhs, res)
    for step in range(MAX_STEPS + 1):
        any_active = False
        for j in range(columns):
            size, big = 0.0, 0.0
            for a in range(m):
                size = max(size, abs(res[a, j]))
                big = max(big, abs(x[a, j]))
            bound = eps * (norm * big + scale[j])
            if step == 0 or size < smallest[j]:
                smallest[j], stalled[j] = size, 0
                for a in range(m):
                    out[a, j] = x[a, j]
            else:
                stalled[j] += 1
            if size <= TOLERANCE * bound or stalled[j] >= STALL or step == MAX_STEPS:
                if active[j] and not smallest[j] <= ACCEPT * m * bound:
                    accepted = False
                active[j] = False
            if not active[j]:
                continue
            any_active = True
            for a in range(m):
                z[a] = res[a, j]
            solve_flexible(L, m, b, Z, V, X, inverse, r, z)
            rz_new = 0.0
            for a in range(m):
                rz_new += res[a, j] * z[a]
            beta = 0.0 if step == 0 else rz_new / rz[j]
            rz[j] = rz_new
            for a in range(m):
                p[a, j] = z[a] + beta * p[a, j]
        if not any_active:
            break
        product(D, m, p, columns, zero, q)  # q = −D_δδ p
        for j in range(columns):
            if not active[j]:
                continue
            curvature = 0.0
            for a in range(m):
                curvature -= p[a, j] * q[a, j]
            if not curvature > 0.0:  # round-off: keep the best iterate
                active[j] = False
                continue
            alpha = rz[j] / curvature
            for a in range(m):
                x[a, j] += alpha * p[a, j]
        product(D, m, x, columns, rhs, res)
    return accepted


@kernel
def joint_solve(table, F, i, D, A, Iart, P_end, rhs, columns, out):
    """out[:k, :columns] = D⁻¹ rhs[:k, :columns] for body i, k = 1 + m (module docstring):
    D_δδ⁻¹ on the δ rows and on the joint column D_δ0 by :func:`flexible_solve`, the joint row
    by its Schur complement. Returns False where the conjugate gradients missed their bound
    (the caller then factors D)."""
    row = table[i]
    m = row.m
    V = np.zeros((COUPLING_ROWS, m))
    X = np.zeros((COUPLING_ROWS, COUPLING_ROWS))
    r = coupling(table, F, i, A, Iart, P_end, V, X)
    L, Z, inverse = structured_part(F, row, V, X, r)
    B = np.empty((m, columns + 1))
    for a in range(m):
        for j in range(columns):
            B[a, j] = rhs[1 + a, j]
        B[a, columns] = D[1 + a, 0]
    Y = np.empty((m, columns + 1))
    accepted = flexible_solve(D, m, L, row.mdd_band, Z, V, X, inverse, r, B, columns + 1, Y)
    schur = D[0, 0]
    for a in range(m):
        schur -= D[1 + a, 0] * Y[a, columns]
    if not schur > 0.0:
        return False
    for j in range(columns):
        x0 = rhs[0, j]
        for a in range(m):
            x0 -= D[1 + a, 0] * Y[a, j]
        x0 /= schur
        out[0, j] = x0
        for a in range(m):
            out[1 + a, j] = Y[a, j] - Y[a, columns] * x0
    return accepted
