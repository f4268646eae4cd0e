"""Small dense kernels of the recursions: cross products, the gyroscopic term, products and
Cholesky factors of the 6 × 6 to (7 + m) × (7 + m) blocks, written as explicit loops (a BLAS or
numpy call costs ~1 µs on blocks this small, more than the arithmetic)."""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel


@kernel(inline="always")
def cross_add(a, b, out, sign):
    """out[:3] += sign · a × b (3-vectors)."""
    out[0] += sign * (a[1] * b[2] - a[2] * b[1])
    out[1] += sign * (a[2] * b[0] - a[0] * b[2])
    out[2] += sign * (a[0] * b[1] - a[1] * b[0])


@kernel(inline="always")
def gyroscopic(nu, p, out):
    """out[:6] += g(ν, p) = (ω × p_v, ω × p_ω + v × p_v), ν = (v, ω, …)."""
    cross_add(nu[3:6], p[:3], out[:3], 1.0)
    cross_add(nu[3:6], p[3:6], out[3:6], 1.0)
    cross_add(nu[:3], p[:3], out[3:6], 1.0)


@kernel
def matvec(A, x, rows, cols, out):
    """out[:rows] = A[:rows, :cols] x[:cols]."""
    for i in range(rows):
        acc = 0.0
        for j in range(cols):
            acc += A[i, j] * x[j]
        out[i] = acc


@kernel(inline="always")
def add_transposed(A, x, cols, out):
    """out[:cols] += A[:6, :cols]ᵀ x[:6] (a force carried back through a twist map)."""
    for j in range(cols):
        acc = 0.0
        for r in range(6):
            acc += A[r, j] * x[r]
        out[j] += acc


@kernel
def congruence_add(A, I6, cols, out):
    """out[:cols, :cols] += Aᵀ I6 A for A of shape (6, cols), I6 (6, 6)."""
    T = np.empty((6, cols))
    for i in range(6):
        for j in range(cols):
            acc = 0.0
            for k in range(6):
                acc += I6[i, k] * A[k, j]
            T[i, j] = acc
    for i in range(cols):
        for j in range(cols):
            acc = 0.0
            for k in range(6):
                acc += A[k, i] * T[k, j]
            out[i, j] += acc


@kernel
def cholesky_into(D, k, L, what):
    """L[:k, :k] = the lower Cholesky factor of the symmetric D[:k, :k], its upper part zeroed
    (LinAlgError naming ``what`` if D is not positive definite)."""
    for j in range(k):
        for i in range(j):
            L[i, j] = 0.0
        acc = D[j, j]
        for p in range(j):
            acc -= L[j, p] * L[j, p]
        if not acc > 0.0:
            raise np.linalg.LinAlgError(what + " is not positive definite")
        L[j, j] = np.sqrt(acc)
        for i in range(j + 1, k):
            acc = D[i, j]
            for p in range(j):
                acc -= L[i, p] * L[j, p]
            L[i, j] = acc / L[j, j]


@kernel
def cholesky(D, k, what):
    """Lower Cholesky factor of the symmetric D[:k, :k] (LinAlgError naming ``what`` if it is not
    positive definite)."""
    L = np.zeros((k, k))
    cholesky_into(D, k, L, what)
    return L


@kernel
def forward_substitute(L, B, k, cols, out):
    """out[:k, :cols] = L⁻¹ B[:k, :cols] (L lower triangular)."""
    for j in range(cols):
        for i in range(k):
            acc = B[i, j]
            for p in range(i):
                acc -= L[i, p] * out[p, j]
            out[i, j] = acc / L[i, i]


@kernel
def back_substitute(L, b, k, out):
    """out[:k] = L⁻ᵀ b[:k] (L lower triangular)."""
    for i in range(k - 1, -1, -1):
        acc = b[i]
        for p in range(i + 1, k):
            acc -= L[p, i] * out[p]
        out[i] = acc / L[i, i]


@kernel(inline="always")
def solve_lower(L, b, k, out):
    """out[:k] = L⁻¹ b[:k] (L lower triangular)."""
    for i in range(k):
        acc = b[i]
        for p in range(i):
            acc -= L[i, p] * out[p]
        out[i] = acc / L[i, i]


@kernel
def cholesky_solve(M, b):
    """M⁻¹ b by the Cholesky factor of the symmetric positive definite M."""
    n = b.size
    L = cholesky(M, n, "mass matrix")
    y = np.empty(n)
    solve_lower(L, b, n, y)
    out = np.empty(n)
    back_substitute(L, y, n, out)
    return out
