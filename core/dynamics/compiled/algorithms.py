"""The recursions over the chain: composite bodies for M (:func:`mass`), recursive Newton–Euler
for M q̈ + h + G (:func:`inverse`), the articulated-body algorithm for q̈ (:func:`forward`), and
a simulation's right-hand side and its Jacobian in one call (:func:`rates`,
:func:`rates_jacobian`).

:func:`forward` is the articulated-body algorithm (Featherstone, Rigid Body Dynamics
Algorithms, 2008, §7.3) with (1 + m_i)-dimensional joint spaces u_i = (q̇_i, δ̇_i) and the
Cholesky factor of each D_i, O(n (6 + m)³). Gravity is a base acceleration −g (exact for a
uniform field), corrected on the free length of translating links (:func:`gravity_correction`).
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.bodies import armature, body, payload_terms
from core.dynamics.compiled.fine import joint_solve
from core.dynamics.compiled.jit import kernel
from core.dynamics.compiled.kinematics import kinematics_pass
from core.dynamics.compiled.layout import at, free_length_step, rate_at
from core.dynamics.compiled.linalg import (
    add_transposed,
    back_substitute,
    cholesky,
    cholesky_into,
    cholesky_solve,
    congruence_add,
    forward_substitute,
    matvec,
    solve_lower,
)


@kernel
def joint_rows(row, i, rows, cols):
    """Fill rows[:1 + m] with the rows of ν_i that u_i = (q̇_i, δ̇_i) drives (S_i is a selection)
    and cols[:1 + m] with the indices of u_i in q."""
    m = row.m
    if row.translating:  # u_i = (δ̇_i, l̇_i): internal rates only
        for k in range(m + 1):
            rows[k] = 6 + k
            cols[k] = row.column + k if k < m else i
        return
    rows[0] = 5 if row.kind == 0 else 2
    cols[0] = i
    for k in range(m):
        rows[1 + k] = 6 + k
        cols[1 + k] = row.column + k


@kernel
def gravity_correction(table, F, q, A, gravity, out):
    """out += G − G_base for the free lengths of translating links, where G_base is what the
    base acceleration −g gives.

    The sliding beam's kinetic energy leaves out the convective term l̇ ∂w/∂s (docs/MODEL.md, Dynamics). The
    base acceleration −g puts on the l̇ row the force −g_b·M_vl with the kinetic l̇ row
    M_vl = m e_x + A_l0(l) δ (the velocity of the mass points per unit l̇, integrated), while
    the exact potential V = −m g·p − g_b·S₁ the engine uses, with the whole beam's first moment

        S₁(δ, l) = m (l − L/2) e_x + l A₀(l) δ,   A₀(l) = ρ ∫₀¹ Ψ(η; l) dη (rows),

    gives ∂V/∂l = −g_b·∂S₁/∂l = −g_b·(m e_x + (A₀ + l A₀′) δ), A₀′ = dA₀/dl at fixed η (zero
    for frozen shapes, F1 of the A₀ rows for length-following ones). So

        G_l − G_base,l = −g_b·(A₀ + l A₀′ − A_l0) δ

    (frozen shapes: −g_b·(A₀ − A_l0) δ). As ∂S₁/∂l = m e_x + ρ Φ(l) δ + ∫Φ_l dm (Leibniz's
    rule), this is −ρ g_b·u_tip(δ, l) whenever A_l0 δ = ∫Φ_l dm (Φ_l = ∂Φ/∂l at fixed s,
    including the shapes' own l-dependence): the potential of the length extruded at the
    deflected exit, which the kinetic l̇ row misses. g_b is gravity in the beam axes, carried
    down the chain by the ω-blocks of A, which hold every relative rotation, deflected tips
    included."""
    S = F.size // 3
    g = gravity.copy()
    gb = np.empty(3)
    for i in range(table.shape[0]):
        for a in range(3):
            gb[a] = A[i, 3 + a, 3] * g[0] + A[i, 3 + a, 4] * g[1] + A[i, 3 + a, 5] * g[2]
        g[:] = gb
        row = table[i]
        if not row.translating:
            continue
        m, col, oA, oAl = row.m, row.column, row.o_A, row.o_Al
        l = q[i]
        dl = free_length_step(row, l).real  # 0 once the chain has written l
        acc = 0.0
        for a in range(3):
            for k in range(m):
                x = oA + a * m + k
                rate = at(F, S, x, dl) + l * rate_at(F, S, x, dl) - at(F, S, oAl + a * m + k, dl)
                acc += g[a] * rate * q[col + k]
        out[i] -= acc


@kernel
def base_acceleration(gravity, smax):
    """The base's acceleration (−g, 0): gravity as a uniform acceleration of the whole arm."""
    out = np.zeros(smax)
    for r in range(3):
        out[r] = -gravity[r]
    return out


@kernel
def propagate(A_i, parent, c_i, s, sp, out):
    """out[:s] = c_i + A_i parent (the body's acceleration before its own joint rates)."""
    for j in range(s):
        out[j] = c_i[j]
    for r in range(6):
        acc = 0.0
        for j in range(sp):
            acc += A_i[r, j] * parent[j]
        out[r] += acc


@kernel(inline="always")
def enter(row, i, A_i, parent, c_i, sp, rows, cols, out):
    """The outward step to body i: its joint rows and columns into rows, cols (:func:`joint_rows`)
    and out[:s] = c_i + A_i parent, its acceleration before its own joint rates (:func:`propagate`)."""
    joint_rows(row, i, rows, cols)
    propagate(A_i, parent, c_i, row.size, sp, out)


@kernel
def inertias(table, F, q, qd, smax, nu, P_end, V_end, c_end, want_force):
    """(I, p): each body's inertia I[i] (its payload included) and, if ``want_force``, its
    velocity-product forces p[i] (:func:`~.bodies.body`, :func:`~.bodies.payload_terms`)."""
    n = table.shape[0]
    I = np.zeros((n, smax, smax))
    p = np.zeros((n, smax))
    work = np.zeros((6, smax))
    zero = np.zeros(smax)
    for i in range(n):
        row = table[i]
        body(row, F, i, q, qd, nu[i], want_force, I[i], p[i], work)
        if row.has_payload:
            payload_terms(row, F, i, row.size, P_end, V_end, c_end, I[i], p[i], zero)
    return I, p


@kernel
def dense_step(Ia, D, tau, rows, k, s, c_i, p_i, L_i, W_i, t_i, Iart_i, pa, UT, Wc):
    """The articulated-body step of a body by the Cholesky factor L of its joint-space inertia
    D[:k, :k] (into L_i): W_i = L⁻¹ (I^A S)ᵀ, t_i = L⁻¹ τ, the articulated inertia I^A − U D⁻¹ Uᵀ
    on the rows ν_{0:6} the parent sees (Iart_i) and its force (pa). ``UT`` (k × s) and ``Wc``
    (k) are the caller's scratch."""
    cholesky_into(D, k, L_i, "joint-space inertia of a body")
    for a in range(k):
        for j in range(s):
            UT[a, j] = Ia[rows[a], j]
    forward_substitute(L_i, UT, k, s, W_i)
    solve_lower(L_i, tau, k, t_i)  # t = L⁻¹ τ
    matvec(W_i, c_i, k, s, Wc)
    for r in range(6):
        acc = p_i[r]
        for j in range(s):
            acc += Ia[r, j] * c_i[j]
        for a in range(k):
            acc += W_i[a, r] * (t_i[a] - Wc[a])
        pa[r] = acc
        for r2 in range(6):
            acc2 = Ia[r, r2]
            for a in range(k):
                acc2 -= W_i[a, r] * W_i[a, r2]
            Iart_i[r, r2] = acc2


@kernel
def fine_step(table, F, i, D, A, Iart, P_end, Ia, tau, rows, c_i, p_i, Z, pa):
    """The articulated-body step of a fine body (:mod:`~.fine`): Z[:k, :7] = D⁻¹ [U₀:₆, τ − Sᵀ I^A c]
    (U = I^A S, rows ν_{0:6}), the articulated inertia (Iart[i]) and force (pa) from them.
    Returns whether it fell back to the dense factor of D (the iteration missed its bound)."""
    k, s = 1 + table[i].m, table[i].size
    rhs = np.empty((k, 7))
    for a in range(k):
        acc = tau[a]
        for j in range(s):
            acc -= Ia[rows[a], j] * c_i[j]
        rhs[a, 6] = acc
        for r in range(6):
            rhs[a, r] = Ia[rows[a], r]
    dense = not joint_solve(table, F, i, D, A, Iart, P_end, rhs, 7, Z)
    if dense:
        L = cholesky(D, k, "joint-space inertia of a body")
        column, y = np.empty(k), np.empty(k)
        for j in range(7):
            for a in range(k):
                column[a] = rhs[a, j]
            solve_lower(L, column, k, y)
            back_substitute(L, y, k, column)
            for a in range(k):
                Z[a, j] = column[a]
    for r in range(6):
        acc = p_i[r]
        for j in range(s):
            acc += Ia[r, j] * c_i[j]
        for a in range(k):
            acc += rhs[a, r] * Z[a, 6]
        pa[r] = acc
    for r in range(6):
        for r2 in range(6):
            acc = 0.0
            for a in range(k):
                acc += rhs[a, r] * Z[a, r2] + rhs[a, r2] * Z[a, r]
            Iart[i, r, r2] = Ia[r, r2] - 0.5 * acc
    return dense


@kernel
def forward(table, F, smax, q, qd, applied, gravity):
    """q̈ from the articulated-body algorithm: M q̈ + h + G = ``applied``.

    ``applied`` holds every other generalized force (B(τ + τ_c) − D q̇ − ∂V_e/∂q);
    ``gravity`` is the gravitational acceleration in base axes [m/s²].
    """
    return forward_solve(table, F, smax, q, qd, applied, gravity)[0]


@kernel
def forward_solve(table, F, smax, q, qd, applied, gravity):
    """(q̈, d): :func:`forward`'s q̈ and the order d of the largest dense joint-space factor it
    formed (0: none; fine bodies form none, :mod:`~.fine`)."""
    n = table.shape[0]
    kmax = smax - 5
    kd = 1  # the largest dense joint space
    sliding = False
    for i in range(n):
        if not table[i].fine:
            kd = max(kd, 1 + table[i].m)
        sliding = sliding or table[i].translating
    A, P_end, nu, c, V_end, c_end = kinematics_pass(table, F, q, qd, smax)
    if sliding:  # only translating links have a correction (:func:`gravity_correction`)
        correction = np.zeros(q.size)
        gravity_correction(table, F, q, A, gravity, correction)
        applied = applied - correction
    IA, pA = inertias(table, F, q, qd, smax, nu, P_end, V_end, c_end, bool(True))
    Ls = np.zeros((n, kd, kd))
    W = np.zeros((n, kd, smax))
    t = np.zeros((n, kd))
    Z = np.zeros((n, kmax, 7))
    Iart = np.zeros((n, 6, 6))
    rows = np.empty(kmax, dtype=np.int64)
    cols = np.empty(kmax, dtype=np.int64)
    D = np.empty((kmax, kmax))
    tau = np.empty(kmax)
    pa = np.empty(6)
    UT = np.empty((kd, smax))
    Wc = np.empty(kd)
    largest = 0
    for i in range(n - 1, -1, -1):
        row = table[i]
        s, k = row.size, 1 + row.m
        joint_rows(row, i, rows, cols)
        Ia = IA[i]
        for a in range(k):
            for b in range(k):
                D[a, b] = Ia[rows[a], rows[b]] + armature(row, F, a, b)
            tau[a] = applied[cols[a]] - pA[i, rows[a]]
        if row.fine:
            if fine_step(table, F, i, D, A, Iart, P_end, Ia, tau, rows, c[i], pA[i], Z[i], pa):
                largest = max(largest, k)
        else:
            largest = max(largest, k)
            dense_step(Ia, D, tau, rows, k, s, c[i], pA[i], Ls[i], W[i], t[i], Iart[i], pa, UT, Wc)
        if i == 0:
            break
        sp = table[i - 1].size
        congruence_add(A[i], Iart[i], sp, IA[i - 1])
        add_transposed(A[i], pa, sp, pA[i - 1])
    qdd = np.zeros(q.size)
    parent = base_acceleration(gravity, smax)
    a_ = np.empty(smax)
    sp = int(6)
    rhs = np.empty(kmax)
    ud = np.empty(kmax)
    for i in range(n):
        row = table[i]
        s, k = row.size, 1 + row.m
        enter(row, i, A[i], parent, c[i], sp, rows, cols, a_)
        if row.fine:  # u = Z₇ − Z₀:₆ (A_i a_parent)₀:₆
            for a in range(k):
                acc = Z[i, a, 6]
                for r in range(6):
                    acc -= Z[i, a, r] * (a_[r] - c[i, r])
                ud[a] = acc
        else:
            for a in range(k):
                acc = t[i, a]
                for j in range(s):
                    acc -= W[i, a, j] * a_[j]
                rhs[a] = acc
            back_substitute(Ls[i], rhs, k, ud)
        for a in range(k):
            qdd[cols[a]] = ud[a]
            a_[rows[a]] += ud[a]
        for j in range(s):
            parent[j] = a_[j]
        sp = s
    return qdd, largest


@kernel
def newton_euler(table, F, smax, q, qdd, A, c, I, p, gravity):
    """M q̈ + h + G by the recursive Newton–Euler algorithm on the bodies' inertias I and
    velocity-product forces p (:func:`inertias`): accelerations outward, forces f_i = I_i a_i + p_i
    inward, shape (n_dof,)."""
    n = table.shape[0]
    f = np.zeros((n, smax))
    rows = np.empty(smax, dtype=np.int64)
    cols = np.empty(smax, dtype=np.int64)
    parent = base_acceleration(gravity, smax)
    a_ = np.empty(smax)
    sp = int(6)
    for i in range(n):
        row = table[i]
        s = row.size
        enter(row, i, A[i], parent, c[i], sp, rows, cols, a_)
        for j in range(1 + row.m):
            a_[rows[j]] += qdd[cols[j]]
        for r in range(s):
            acc = p[i, r]
            for j in range(s):
                acc += I[i, r, j] * a_[j]
            f[i, r] = acc
        for j in range(s):
            parent[j] = a_[j]
        sp = s
    out = np.zeros(q.size)
    for i in range(n - 1, -1, -1):
        row = table[i]
        joint_rows(row, i, rows, cols)
        for a in range(1 + row.m):
            acc = f[i, rows[a]]
            for c_ in range(1 + row.m):
                acc += armature(row, F, a, c_) * qdd[cols[c_]]
            out[cols[a]] = acc
        if i > 0:
            add_transposed(A[i], f[i], table[i - 1].size, f[i - 1])
    gravity_correction(table, F, q, A, gravity, out)
    return out


@kernel
def composite_inertia(table, F, smax, q, A, IC):
    """M(q) by the composite-rigid-body algorithm from the bodies' inertias (:func:`inertias`),
    which it overwrites with the composite ones, shape (n_dof, n_dof)."""
    n = table.shape[0]
    for i in range(n - 1, 0, -1):
        congruence_add(A[i], IC[i, :6, :6].copy(), table[i - 1].size, IC[i - 1])
    out = np.zeros((q.size, q.size))
    rows = np.empty(smax, dtype=np.int64)
    cols = np.empty(smax, dtype=np.int64)
    rj = np.empty(smax, dtype=np.int64)
    cj = np.empty(smax, dtype=np.int64)
    force = np.empty((smax, smax - 5))
    up = np.empty((smax, smax - 5))
    for i in range(n):
        row = table[i]
        s, k = row.size, 1 + row.m
        joint_rows(row, i, rows, cols)
        for a in range(s):  # IC S: the force per unit ü_i, body i's axes
            for b_ in range(k):
                force[a, b_] = IC[i, a, rows[b_]]
        for a in range(k):
            for b_ in range(a, k):
                value = 0.5 * (force[rows[a], b_] + force[rows[b_], a])
                value += armature(row, F, a, b_)
                out[cols[a], cols[b_]] = out[cols[b_], cols[a]] = value
        for j in range(i - 1, -1, -1):
            for a in range(table[j].size):  # to body j's ν
                for b_ in range(k):
                    acc = 0.0
                    for r in range(6):
                        acc += A[j + 1, r, a] * force[r, b_]
                    up[a, b_] = acc
            joint_rows(table[j], j, rj, cj)
            for a in range(1 + table[j].m):
                for b_ in range(k):
                    out[cj[a], cols[b_]] = out[cols[b_], cj[a]] = up[rj[a], b_]
            for a in range(6):
                for b_ in range(k):
                    force[a, b_] = up[a, b_]
    return out


@kernel
def inverse(table, F, smax, q, qd, qdd, gravity):
    """M q̈ + h(q, q̇) + G(q) by the recursive Newton–Euler algorithm, shape (n_dof,)."""
    A, P_end, nu, c, V_end, c_end = kinematics_pass(table, F, q, qd, smax)
    I, p = inertias(table, F, q, qd, smax, nu, P_end, V_end, c_end, bool(True))
    return newton_euler(table, F, smax, q, qdd, A, c, I, p, gravity)


@kernel
def mass(table, F, smax, q):
    """M(q) by the composite-rigid-body algorithm, shape (n_dof, n_dof)."""
    zero = np.zeros(q.size)
    A, P_end, nu, _, V_end, c_end = kinematics_pass(table, F, q, zero, smax)
    IC, _ = inertias(table, F, q, zero, smax, nu, P_end, V_end, c_end, bool(False))
    return composite_inertia(table, F, smax, q, A, IC)


@kernel
def mass_inverse(table, F, smax, q, qd, qdd, gravity):
    """(M(q), M q̈ + h + G) on one kinematics pass and one evaluation of the bodies' inertias and
    forces (a stiffened beam's Gram terms are most of a call): :func:`mass` and :func:`inverse`
    at half the cost."""
    A, P_end, nu, c, V_end, c_end = kinematics_pass(table, F, q, qd, smax)
    I, p = inertias(table, F, q, qd, smax, nu, P_end, V_end, c_end, bool(True))
    out = newton_euler(table, F, smax, q, qdd, A, c, I, p, gravity)
    return composite_inertia(table, F, smax, q, A, I), out


@kernel
def applied_forces(q, qd, tau, B, D, K, coulomb, epsilon):
    """(B(τ + τ_c) − D q̇ − K q, u = Bᵀq̇, τ_c, D q̇) with Coulomb friction τ_c = −F_c tanh(u/ε)
    on the actuated rates (ε ≤ 0: −F_c sign u).

    Written as loops into the four results: numpy's products allocate a temporary each
    (14 arrays a call, 0.68 µs on the 15-coordinate space arm against 0.29 µs here)."""
    n, n_inputs = B.shape
    u = np.empty(n_inputs)
    friction = np.empty(n_inputs)
    for j in range(n_inputs):
        acc = 0.0
        for r in range(n):
            acc += B[r, j] * qd[r]
        u[j] = acc
        if coulomb[j] == 0.0:
            friction[j] = 0.0
        elif epsilon > 0.0:
            friction[j] = -coulomb[j] * np.tanh(acc / epsilon)
        else:
            friction[j] = -coulomb[j] * np.sign(acc)
    Dqd = np.empty(n)
    applied = np.empty(n)
    for r in range(n):
        driven = 0.0
        for j in range(n_inputs):
            driven += B[r, j] * (tau[j] + friction[j])
        damping = 0.0
        elastic = 0.0
        for c in range(n):
            damping += D[r, c] * qd[c]
            elastic += K[r, c] * q[c]
        Dqd[r] = damping
        applied[r] = driven - damping - elastic
    return applied, u, friction, Dqd


@kernel
def rates(table, F, smax, x, tau, B, D, K, coulomb, epsilon, gravity, composite):
    """The state derivative of a simulation, (q̇, q̈, q̇ᵀBτ, q̇ᵀDq̇ − uᵀτ_c), in one call.

    ``x = (q, q̇, …)``; the applied forces B(τ + τ_c) − D q̇ − K q with Coulomb
    friction τ_c = −F_c tanh(u/ε) on the actuated rates u = Bᵀq̇ (ε ≤ 0: −F_c sign u).
    ``composite``: q̈ from M (composite-rigid-body) and its Cholesky factor, else the
    articulated-body :func:`forward`. Constant B, D, K only (no translating link).
    """
    n = B.shape[0]
    q = x[:n].copy()
    qd = x[n : 2 * n].copy()
    applied, u, friction, Dqd = applied_forces(q, qd, tau, B, D, K, coulomb, epsilon)
    if composite:
        M, forces = mass_inverse(table, F, smax, q, qd, 0.0 * q, gravity)
        qdd = cholesky_solve(M, applied - forces)
    else:
        qdd = forward(table, F, smax, q, qd, applied, gravity)
    out = np.empty(2 * n + 2)
    out[:n] = qd
    out[n : 2 * n] = qdd
    input_power, dissipated = 0.0, 0.0
    for j in range(u.size):
        input_power += u[j] * tau[j]
        dissipated -= u[j] * friction[j]
    for r in range(n):
        dissipated += qd[r] * Dqd[r]
    out[2 * n] = input_power
    out[2 * n + 1] = dissipated
    return out


@kernel
def rates_jacobian(table, F, smax, x, tau, B, D, K, coulomb, epsilon, gravity, composite):
    """(∂ẋ/∂x, ∂ẋ/∂τ) of :func:`rates` by central differences inside one call.

    Steps h = ε^(1/3) max(|x_j|, 1) (x_j in metres, radians or their rates):
    truncation error ~h² f‴, round-off ~ε f/h, both ~5e-11 of the scale of ẋ for
    smooth dynamics, more near a Coulomb reversal (curvature ~1/ε_c²) where an
    implicit integrator's Newton iteration needs only a few digits. The work
    columns (the last two states) are zero: ẋ does not depend on them.
    """
    size, n = x.size, B.shape[0]
    z = np.concatenate((x, tau))  # the state and the inputs, differenced alike
    Jz = np.zeros((size, z.size))
    step = np.cbrt(np.finfo(np.float64).eps)
    for j in range(z.size):
        if 2 * n <= j < size:
            continue  # the work columns: ẋ does not depend on them
        h = step * max(abs(z[j]), 1.0)
        value = z[j]
        z[j] = value + h
        up = rates(table, F, smax, z[:size], z[size:], B, D, K, coulomb, epsilon, gravity, composite)
        z[j] = value - h
        down = rates(table, F, smax, z[:size], z[size:], B, D, K, coulomb, epsilon, gravity, composite)
        z[j] = value
        for i in range(size):
            Jz[i, j] = (up[i] - down[i]) / (2.0 * h)
    return Jz[:, :size].copy(), Jz[:, size:].copy()


@kernel
def prescribed(table, F, smax, q, qd, qdd_joints, B, applied, gravity):
    """Motion with prescribed joint accelerations q̈_r (the joints first in q) in one call:
    (q̈, τ, ½ q̇ᵀMq̇) concatenated, shape (n_dof + n_joints + 1,), for the input matrix B(q)
    and the applied forces B τ_c − D q̇ − ∂V_e/∂q at (q, q̇) (``applied``).

    Every row of M q̈ + h + G = B τ + applied is one equation for the unknowns (q̈_f, τ):
    [M_:f  −B] [q̈_f; τ] = applied − (M_:r q̈_r + h + G), solved by LU (only M_ff need be
    regular). M and M_:r q̈_r + h + G come from one :func:`mass_inverse`.
    """
    n, n_joints = B.shape
    qdd = np.zeros(n)
    qdd[:n_joints] = qdd_joints
    M, forces = mass_inverse(table, F, smax, q, qd, qdd, gravity)
    system = np.empty((n, n))
    system[:, : n - n_joints] = M[:, n_joints:]
    system[:, n - n_joints :] = -B
    solved = np.linalg.solve(system, applied - forces)
    out = np.empty(n + n_joints + 1)
    out[:n_joints] = qdd_joints
    out[n_joints:n] = solved[: n - n_joints]
    out[n : n + n_joints] = solved[n - n_joints :]
    out[n + n_joints] = 0.5 * (qd @ (M @ qd))
    return out
