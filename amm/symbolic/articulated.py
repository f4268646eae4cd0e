"""The generated forward dynamics of a planar arm as the articulated-body algorithm (Featherstone,
Rigid Body Dynamics Algorithms, 2008, §7.3), written symbolically in named intermediates: no M
assembled, no dense solve (docs/SYMBOLIC.md, recursive form).

Body i's acceleration coordinates are z_i = (a_x, a_y, α, δ̈_i): its frame's acceleration in
its own axes (time derivatives of the components) and its modal accelerations; its joint space
u_i = (q_i, δ_i) enters through the selection S_i (the α row and the δ rows), its parent through
z_i = P_i z_parent + S_i ü_i + c_i, P_i the parent's tip map (T: a_t = a + α (−o_y, L) +
(0, φ(L)ᵀδ̈), α_t = α + rᵀδ̈) turned into the child's axes, c_i the velocity products. Every
inertia on link i (body, hub mass and inertia, tip payloads) is a (3 + m)-square matrix on z_i,
its velocity terms a bias b_i (:meth:`amm.symbolic.recursive._Link.body_force` at z = 0); the
motor's reflected inertia acts in the joint space (D_i += J_r b bᵀ, b = (1, φ'(0))).
"""

from __future__ import annotations

import sympy as sp

from amm.symbolic.recursive import Intermediates, outward


def _tip_map(link) -> sp.Matrix:
    """T: (a_t, α_t) of the tip in link axes = T z_i (+ velocity terms)."""
    m = link.m_modes
    T = sp.zeros(3, 3 + m)
    T[0, 0] = T[1, 1] = T[2, 2] = 1
    T[0, 2] = -link.oy
    T[1, 2] = link.L
    if m:
        T[1, 3:] = link.tip.T
        T[2, 3:] = link.r.T
    return T


def _inertia(link) -> sp.Matrix:
    """Every inertia carried by link i, on z_i."""
    m = link.m_modes
    I = sp.zeros(3 + m, 3 + m)
    I[0, 0] = I[1, 1] = link.m + link.mh
    I[0, 2] = I[2, 0] = -link.Sy
    I[1, 2] = I[2, 1] = link.Sx
    I[2, 2] = link.I
    if m:
        I[1, 3:] = link.A.T
        I[3:, 1] = link.A
        I[2, 3:] = link.coupling.T
        I[3:, 2] = link.coupling
        I[3:, 3:] = link.Mdd
    if link.Jh != 0:
        h = sp.Matrix([0, 0, 1, *list(link.dphi0)]) if link.dphi0.rows else sp.zeros(3 + m, 1)
        if not link.dphi0.rows:
            h[2] = 1
        I += link.Jh * h * h.T
    if link.payloads:
        T = _tip_map(link)
        for mass, inertia in link.payloads:
            I += T.T * sp.diag(mass, mass, inertia) * T
    return I


def _named(X: Intermediates, name: str, M: sp.Matrix, latex: str) -> sp.Matrix:
    out = sp.zeros(*M.shape)
    for r in range(M.rows):
        for c in range(M.cols):
            out[r, c] = X(f"{name}_{r}_{c}", M[r, c], f"{latex}_{{{r}{c}}}")
    return out


def _solve(X: Intermediates, name: str, D: sp.Matrix, B: sp.Matrix, latex: str) -> sp.Matrix:
    """D⁻¹ B of a small symmetric positive definite D by LDLᵀ, each factor named."""
    n = D.rows
    L, d = sp.eye(n), [None] * n
    for j in range(n):
        d[j] = X(
            f"{name}d_{j}", D[j, j] - sum(L[j, k] ** 2 * d[k] for k in range(j)), f"{latex}^{{d}}_{{{j}}}"
        )
        for i in range(j + 1, n):
            value = (D[i, j] - sum(L[i, k] * L[j, k] * d[k] for k in range(j))) / d[j]
            L[i, j] = X(f"{name}L_{i}_{j}", value, f"{latex}^{{L}}_{{{i}{j}}}")
    y = sp.zeros(*B.shape)
    for i in range(n):
        y[i, :] = B[i, :] - sum((L[i, k] * y[k, :] for k in range(i)), sp.zeros(1, B.cols))
    for i in range(n):
        y[i, :] = y[i, :] / d[i]
    x = sp.zeros(*B.shape)
    for i in reversed(range(n)):
        x[i, :] = y[i, :] - sum((L[k, i] * x[k, :] for k in range(i + 1, n)), sp.zeros(1, B.cols))
    return _named(X, name, x, latex)


def articulated_forward(links: list, X: Intermediates, q: tuple, qd: tuple, applied: tuple, g) -> sp.Matrix:
    """q̈ (n × 1) with M q̈ + h + G = ``applied`` (symbols: B τ − D q̇ − K q + friction), by the
    articulated-body algorithm over ``links`` (:class:`amm.symbolic.recursive._Link`)."""
    n = len(q)
    zero = [sp.S.Zero] * n
    state = outward(links, X, "ab", qd, zero, (0, 0), 0)
    count = len(links)
    P, c, bias, S, rows = [None] * count, [None] * count, [None] * count, [None] * count, [None] * count
    for link in links:
        i, m = link.i, link.m_modes
        v, w, _, _, dd, _, vt, _, _, _ = state[i]
        size = 3 + m
        frame, deflection = link.body_force(X, "ab", v, w, (0, 0), 0, dd, None)
        b = sp.Matrix([*frame, *deflection]) if m else sp.Matrix(frame)
        b[0] += link.mh * (-w * v[1])
        b[1] += link.mh * (w * v[0])
        oy_dot = (link.tip.T * dd)[0] if m else sp.S.Zero
        if link.payloads:
            T = _tip_map(link)
            for mass, _ in link.payloads:
                b += T.T * sp.Matrix([mass * (-w * oy_dot - w * vt[1]), mass * (w * vt[0]), 0])
        bias[i] = sp.Matrix(X.vector(f"bab_{link.number}", b, ("b", f"{link.number}")))
        S[i] = sp.zeros(size, 1 + m)
        S[i][2, 0] = 1
        for k in range(m):
            S[i][3 + k, 1 + k] = 1
        rows[i] = [i, *range(link.cols.start, link.cols.stop)]
        Pi = sp.zeros(size, 3 + links[i - 1].m_modes) if i else None
        ci = sp.zeros(size, 1)
        cs, sn = link.c, link.s
        if i == 0:  # the base accelerates at −g
            ci[0], ci[1] = cs * -g[0] + sn * -g[1], -sn * -g[0] + cs * -g[1]
        else:
            parent = links[i - 1]
            _, pw, _, _, pdd, _, pvt, _, _, _ = state[i - 1]
            T = _tip_map(parent)
            rot = sp.Matrix([[cs, sn, 0], [-sn, cs, 0], [0, 0, 1]])
            Pi[:3, :] = rot * T
            p_oy_dot = (parent.tip.T * pdd)[0] if parent.m_modes else sp.S.Zero
            rate = ((parent.r.T * pdd)[0] if parent.m_modes else 0) + qd[i]
            ct = (-pw * p_oy_dot, 0)
            ci[0] = cs * ct[0] + sn * ct[1] + rate * (-sn * pvt[0] + cs * pvt[1])
            ci[1] = -sn * ct[0] + cs * ct[1] - rate * (cs * pvt[0] + sn * pvt[1])
        P[i] = Pi
        c[i] = sp.Matrix(X.vector(f"cab_{link.number}", ci, ("c", f"{link.number}")))
    IA = [_inertia(link) for link in links]
    pA = list(bias)
    U, Dinv_U, Dinv_u, u = [None] * count, [None] * count, [None] * count, [None] * count
    for link in reversed(links):
        i, m, num = link.i, link.m_modes, link.number
        IA[i] = _named(X, f"IA{num}", IA[i], f"I^{{A}}_{{{num}}}")
        pA[i] = sp.Matrix(X.vector(f"pA_{num}", pA[i], ("p^{A}", f"{num}")))
        U[i] = _named(X, f"U{num}", IA[i] * S[i], f"U_{{{num}}}")
        D = S[i].T * U[i]
        if link.Jr != 0:
            bu = sp.Matrix([1, *list(link.dphi0)]) if link.dphi0.rows else sp.Matrix([1] + [0] * m)
            D += link.Jr * bu * bu.T
        u[i] = sp.Matrix([applied[r] for r in rows[i]]) - S[i].T * pA[i]
        u[i] = sp.Matrix(X.vector(f"uab_{num}", u[i], ("u", f"{num}")))
        solved = _solve(X, f"Dinv{num}", D, U[i].T.row_join(u[i]), f"D^{{-1}}_{{{num}}}")
        Dinv_U[i], Dinv_u[i] = solved[:, :-1], solved[:, -1]
        if i:
            Ia = IA[i] - U[i] * Dinv_U[i]
            pa = pA[i] + Ia * c[i] + U[i] * Dinv_u[i]
            IA[i - 1] += P[i].T * Ia * P[i]
            pA[i - 1] += P[i].T * pa
    qdd = [sp.S.Zero] * n
    z_parent = None
    for link in links:
        i, num = link.i, link.number
        z = c[i] if z_parent is None else P[i] * z_parent + c[i]
        z = sp.Matrix(X.vector(f"zp_{num}", z, ("z'", f"{num}")))
        udd = Dinv_u[i] - Dinv_U[i] * z
        udd = X.vector(f"udd_{num}", udd, ("\\ddot{u}", f"{num}"))
        for r, value in zip(rows[i], udd, strict=True):
            qdd[r] = value
        z_parent = sp.Matrix(X.vector(f"z_{num}", z + S[i] * sp.Matrix(udd), ("z", f"{num}")))
    return sp.Matrix(qdd)
