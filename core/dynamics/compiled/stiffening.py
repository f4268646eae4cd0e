"""The foreshortening terms beyond second order of a stiffened beam, compiled: what makes its
M_b the Gram form ∫ J_pᵀ J_p dm (:mod:`core.dynamics.foreshortening`, whose numpy
``gram_terms`` and ``quartic_moments`` are the oracle these kernels are tested against).

The foreshortening u = u₂ + u₄ of a point j, u₂ = −½∫₀ˢ|w'|², u₄ = −⅛∫₀ˢ|w'|⁴, its gradient
h = ∇_δ(−u) and Hessian K = ∇_δ h are integrals over the segments before the point's and the part
of its own: every slope integral runs on the slope samples of
:class:`~core.dynamics.foreshortening.ForeshorteningPoints` (packed by
:func:`~core.dynamics.compiled.packing.compile_chain`: ``fs_*`` fields of the link's row).
:func:`intervals` gives, per segment and per point's part, the vector part t = ∫(1 + ½|w'|²) w_a'φ'
of h (and its quartic part ½∫|w'|² w_a'φ' alone) and six scalar integrals; :func:`point_scalars`
sums them into, per point,

    u,  u̇ = −hᵀδ̇,  r = −δ̇ᵀKδ̇ (= d u̇/dt at fixed ν),  w_a = φ_jᵀδ_a,  ẇ_a,  and u₄, u̇₄, r₄ alone,

and :func:`gram_inertia` adds to M_b

    ΔQ_xx = Σ μ (u² + 2 s u₄),  ΔQ_xa = Σ μ u w_a,
    ΔM_Ωδ (rows y, z) = Σ μ (−u Φ_z − w_z h), Σ μ (u Φ_y + w_y h),   ΔM_δδ = Σ μ h hᵀ,
    ΔS₁,x = U = Σ μ u₄,   Δ(axial row of A) = −Σ μ h₄ᵀ,

and to the body forces ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) (Boltzmann–Hamel; the gyroscopic part is
:func:`~core.dynamics.compiled.bodies.body`'s, from the full M_b):

    v_x row: Σ μ r₄;   v_y, v_z rows: U̇ Ω_z, −U̇ Ω_y;   Ω_x row: −Σ μ [u̇ (Ω_y w_y + Ω_z w_z) + u (Ω_y ẇ_y + Ω_z ẇ_z)]
    Ω_y row:  Σ μ [2 Ω_y (u u̇ + s u̇₄) − Ω_x (ẇ_y u + w_y u̇) + w_z r] − U̇ v_z
    Ω_z row:  Σ μ [2 Ω_z (u u̇ + s u̇₄) − Ω_x (ẇ_z u + w_z u̇) − w_y r] + U̇ v_y
    δ rows:   Σ μ [c_h h + c_y Φ_yᵀ + c_z Φ_zᵀ + c₄ h₄],
              c_h = (Ω_y² + Ω_z²) u − Ω_x (Ω_y w_y + Ω_z w_z) − 2 Ω_y ẇ_z + 2 Ω_z ẇ_y − r,
              c_y = Ω_x Ω_y u + 2 Ω_z u̇,   c_z = Ω_x Ω_z u − 2 Ω_y u̇,
              c₄ = v_y Ω_z − v_z Ω_y + (Ω_y² + Ω_z²) s

(U̇ = Σ μ u̇₄; the terms in ḣ = Kδ̇ of Ṁν and ∂T/∂δ cancel). Every sum over points of a
coefficient times h_j runs through the segments, h_j = Σ_{e<E} t_e + t_j: O((Q + S) g k) per plane
for g samples and a support of width k, and ΔM_δδ = Σ μ h hᵀ in O(S n k) by the running prefix
P_E = Σ_{e<E} t_e — no (points × n) array.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel

#: The scalar integrals of an interval (:func:`interval`): ∫|w'|², ∫w'·ẇ', ∫|ẇ'|², ∫|w'|⁴,
#: ∫|w'|² w'·ẇ', ∫(|w'|²|ẇ'|² + 2 (w'·ẇ')²).
SCALARS = 6


@kernel
def interval(F, row, slopes_at, weights_at, E, q, qd, vector, quartic, scalars, local):
    """Over one interval (g samples of φ' on segment E's support at F[slopes_at:], g × k, weights
    at F[weights_at:]): vector[a k + s] = ∫ (1 + ½|w'|²) w_a' φ_s', quartic[a k + s] = ½∫|w'|² w_a' φ_s'
    (every plane a) and the :data:`SCALARS` integrals into scalars.

    ``local`` (length 4k, the caller's work) takes the support's coordinates of q (planes at 0,
    k) and of q̇ (at 2k, 3k), gathered once per interval rather than per sample. A padded support
    entry has zero slopes (:func:`~core.dynamics.foreshortening.foreshortening_points`), so it
    adds nothing and needs no test here."""
    k, g, n, planes = row.fs_width, row.fs_samples, row.m // row.planes, row.planes
    oS = row.o_fs_support + E * k
    for a in range(planes):
        base = row.column + a * n
        for s in range(k):
            c = base + int(F[oS + s])
            local[a * k + s] = q[c]
            local[(2 + a) * k + s] = qd[c]
    for x in range(planes * k):
        vector[x] = 0.0
        quartic[x] = 0.0
    for x in range(SCALARS):
        scalars[x] = 0.0
    for i in range(g):
        weight = F[weights_at + i]
        at = slopes_at + i * k
        p0, pd0, p1, pd1 = 0.0, 0.0, 0.0, 0.0
        for s in range(k):
            slope = F[at + s]
            p0 += slope * local[s]
            pd0 += slope * local[2 * k + s]
        if planes == 2:
            for s in range(k):
                slope = F[at + s]
                p1 += slope * local[k + s]
                pd1 += slope * local[3 * k + s]
        P = p0 * p0 + p1 * p1
        C = p0 * pd0 + p1 * pd1
        D = pd0 * pd0 + pd1 * pd1
        scalars[0] += weight * P
        scalars[1] += weight * C
        scalars[2] += weight * D
        scalars[3] += weight * P * P
        scalars[4] += weight * P * C
        scalars[5] += weight * (P * D + 2.0 * C * C)
        full = weight * (1.0 + 0.5 * P)
        half = weight * 0.5 * P
        for s in range(k):
            slope = F[at + s]
            vector[s] += full * p0 * slope
            quartic[s] += half * p0 * slope
        if planes == 2:
            for s in range(k):
                slope = F[at + s]
                vector[k + s] += full * p1 * slope
                quartic[k + s] += half * p1 * slope


@kernel
def intervals(F, row, q, qd, seg_t, seg_t4, seg_x, pt_t, pt_t4, pt_x):
    """:func:`interval` of every segment (seg_*, S rows) and of every point's part of its own
    segment (pt_*, Q rows)."""
    S, Q, k, g = row.fs_segments, row.fs_points, row.fs_width, row.fs_samples
    oE = row.o_fs_segment
    local = np.zeros(4 * k)
    for e in range(S):
        interval(
            F,
            row,
            row.o_fs_seg_slopes + e * g * k,
            row.o_fs_seg_weights + e * g,
            e,
            q,
            qd,
            seg_t[e],
            seg_t4[e],
            seg_x[e],
            local,
        )
    for j in range(Q):
        interval(
            F,
            row,
            row.o_fs_pt_slopes + j * g * k,
            row.o_fs_pt_weights + j * g,
            int(F[oE + j]),
            q,
            qd,
            pt_t[j],
            pt_t4[j],
            pt_x[j],
            local,
        )


@kernel
def point_scalars(F, row, q, qd, seg_x, pt_x, out):
    """out[j] = (u, u̇, r, w_y, w_z, ẇ_y, ẇ_z, u₄, u̇₄, r₄) of every point j, shape (Q, 10)."""
    Q, k = row.fs_points, row.fs_width
    n = row.m // row.planes
    oS, oE, oV = row.o_fs_support, row.o_fs_segment, row.o_fs_values
    cum = np.zeros(SCALARS)  # Σ_{e<E} of the segments' scalars
    current = 0
    for j in range(Q):
        E = int(F[oE + j])
        while current < E:  # segments passed
            for x in range(SCALARS):
                cum[x] += seg_x[current, x]
            current += 1
        for a in range(row.planes):
            base = row.column + a * n
            for s in range(k):
                i = base + int(F[oS + E * k + s])
                out[j, 3 + a] += F[oV + j * k + s] * q[i]
                out[j, 5 + a] += F[oV + j * k + s] * qd[i]
        x0, x1, x2 = cum[0] + pt_x[j, 0], cum[1] + pt_x[j, 1], cum[2] + pt_x[j, 2]
        x3, x4, x5 = cum[3] + pt_x[j, 3], cum[4] + pt_x[j, 4], cum[5] + pt_x[j, 5]
        out[j, 7] = -0.125 * x3
        out[j, 8] = -0.5 * x4
        out[j, 9] = -0.5 * x5
        out[j, 0] = -0.5 * x0 + out[j, 7]
        out[j, 1] = -x1 + out[j, 8]
        out[j, 2] = -x2 + out[j, 9]


@kernel
def add_h_sum(F, row, seg_t, pt_t, coeff, out, offset):
    """out[offset + plane a coordinates] += Σ_j coeff[j] h_j through the segments,
    h_j = Σ_{e<E} t_e + t_j: Σ_e t_e C_{>e} + Σ_j coeff_j t_j, C_{>e} = Σ_{segment_j > e} coeff_j
    (t: :func:`intervals`' vectors, the whole h or its quartic part). The points' Σ coeff_j t_j
    is summed per segment (the points are in segment order) and scattered once per segment."""
    S, Q = row.fs_segments, row.fs_points
    oE = row.o_fs_segment
    width = pt_t.shape[1]
    per_segment = np.zeros(S)
    local = np.zeros((S, width))
    for j in range(Q):
        E = int(F[oE + j])
        per_segment[E] += coeff[j]
        if coeff[j] != 0.0:
            for x in range(width):
                local[E, x] += coeff[j] * pt_t[j, x]
    later = 0.0  # C_{>e}, built from the last segment down
    for e in range(S - 1, -1, -1):
        if later != 0.0:
            _scatter(F, row, e, seg_t[e], later, out, offset)
        _scatter(F, row, e, local[e], 1.0, out, offset)
        later += per_segment[e]


@kernel
def _scatter(F, row, E, local, weight, out, offset):
    """out[offset + plane a coordinates of segment E's support] += weight · local[a k + s]."""
    k, n = row.fs_width, row.m // row.planes
    oS = row.o_fs_support + E * k
    for a in range(row.planes):
        for s in range(k):
            out[offset + a * n + int(F[oS + s])] += weight * local[a * k + s]


@kernel
def add_phi_sum(F, row, coeff, plane, out, offset):
    """out[offset + plane coordinates] += Σ_j coeff[j] φ_j."""
    Q, k = row.fs_points, row.fs_width
    base = offset + plane * (row.m // row.planes)
    oS, oE, oV = row.o_fs_support, row.o_fs_segment, row.o_fs_values
    for j in range(Q):
        E = int(F[oE + j])
        for s in range(k):
            out[base + int(F[oS + E * k + s])] += coeff[j] * F[oV + j * k + s]


@kernel
def add_h_gram(F, row, seg_t, pt_t, M, offset):
    """M[offset + δ, offset + δ] += Σ_j μ_j h_j h_jᵀ (every plane pair), by the running prefix
    P_E = Σ_{e<E} t_e: Σ_E [m_E P Pᵀ + P c_Eᵀ + c_E Pᵀ] + Σ_j μ_j t_j t_jᵀ with c_E = Σ_{j∈E} μ_j t_j,
    m_E = Σ_{j∈E} μ_j, and m_E P Pᵀ summed as Σ_e M_{>e}(t_e t_eᵀ + t_e Pᵀ + P t_eᵀ); c_E and
    Σ_{j∈E} μ_j t_j t_jᵀ summed on the segment's support first, then scattered once."""
    S, Q, m = row.fs_segments, row.fs_points, row.m
    oE, oM = row.o_fs_segment, row.o_fs_mass
    width = pt_t.shape[1]
    P = np.zeros(m)  # running prefix Σ_{e<E} t_e (all planes)
    c = np.zeros((S, m))  # c_E (scattered)
    mass_in = np.zeros(S)
    local = np.zeros((S, width))  # c_E on the support
    outer = np.zeros((width, width))  # Σ_{j∈E} μ_j t_j t_jᵀ on the support
    j = 0
    for E in range(S):
        for x in range(width):
            for y in range(width):
                outer[x, y] = 0.0
        while j < Q and int(F[oE + j]) == E:
            mu = F[oM + j]
            mass_in[E] += mu
            for x in range(width):
                weighted = mu * pt_t[j, x]
                local[E, x] += weighted
                for y in range(width):
                    outer[x, y] += weighted * pt_t[j, y]
            j += 1
        _scatter(F, row, E, local[E], 1.0, c[E], int(0))
        _add_local_block(F, row, E, outer, M, offset)
    beyond = np.zeros(S)  # M_{>e}
    for e in range(S - 2, -1, -1):
        beyond[e] = beyond[e + 1] + mass_in[e + 1]
    t = np.zeros(m)
    for E in range(S):
        # Σ_E P_E c_Eᵀ + c_E P_Eᵀ (P_E: the segments before E)
        for x in range(m):
            if c[E, x] == 0.0:
                continue
            for y in range(m):
                if P[y] != 0.0:
                    M[offset + y, offset + x] += P[y] * c[E, x]
                    M[offset + x, offset + y] += c[E, x] * P[y]
        for x in range(m):
            t[x] = 0.0
        _scatter(F, row, E, seg_t[E], 1.0, t, int(0))
        weight = beyond[E]
        if weight != 0.0:
            for x in range(m):
                if t[x] == 0.0:
                    continue
                for y in range(m):
                    M[offset + x, offset + y] += weight * t[x] * (t[y] + P[y])
                    M[offset + y, offset + x] += weight * t[x] * P[y]
        for x in range(m):
            P[x] += t[x]


@kernel
def _add_local_block(F, row, E, block, M, offset):
    """M[offset + x, offset + y] += block[a k + s, b k + t] over the support of segment E (every
    plane pair; a padded entry's rows and columns are zero: its slopes are)."""
    k, n = row.fs_width, row.m // row.planes
    oS = row.o_fs_support + E * k
    for a in range(row.planes):
        for s in range(k):
            x = a * n + int(F[oS + s])
            for b in range(row.planes):
                for t in range(k):
                    M[offset + x, offset + b * n + int(F[oS + t])] += block[a * k + s, b * k + t]


@kernel
def gram_inertia(F, row, q, qd, nu, want_force, M, b):
    """Add the Gram terms of a stiffened beam to its M_b (M[:6 + m, :6 + m], beam axes) and, if
    ``want_force``, ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) to b (module docstring)."""
    S, Q = row.fs_segments, row.fs_points
    m, width = row.m, row.planes * row.fs_width
    oM, oX = row.o_fs_mass, row.o_fs_position
    seg_t, seg_t4, seg_x = np.zeros((S, width)), np.zeros((S, width)), np.zeros((S, SCALARS))
    pt_t, pt_t4, pt_x = np.zeros((Q, width)), np.zeros((Q, width)), np.zeros((Q, SCALARS))
    intervals(F, row, q, qd, seg_t, seg_t4, seg_x, pt_t, pt_t4, pt_x)
    pts = np.zeros((Q, 10))
    point_scalars(F, row, q, qd, seg_x, pt_x, pts)
    dQxx, dQxy, dQxz, U = 0.0, 0.0, 0.0, 0.0
    for j in range(Q):
        mu, u = F[oM + j], pts[j, 0]
        dQxx += mu * (u * u + 2.0 * F[oX + j] * pts[j, 7])
        dQxy += mu * u * pts[j, 3]
        dQxz += mu * u * pts[j, 4]
        U += mu * pts[j, 7]
    M[4, 4] += dQxx
    M[5, 5] += dQxx
    M[3, 4] -= dQxy
    M[4, 3] -= dQxy
    M[3, 5] -= dQxz
    M[5, 3] -= dQxz
    M[1, 5] += U  # S₁,x in −S̃₁ (v, ω) and S̃₁ (ω, v)
    M[5, 1] += U
    M[2, 4] -= U
    M[4, 2] -= U
    rows = np.zeros((3, m))  # ΔM_Ωδ rows y, z and the axial row of A
    coeff = np.empty(Q)
    for j in range(Q):
        coeff[j] = -F[oM + j] * pts[j, 4]
    add_h_sum(F, row, seg_t, pt_t, coeff, rows[0], int(0))
    for j in range(Q):
        coeff[j] = F[oM + j] * pts[j, 3]
    add_h_sum(F, row, seg_t, pt_t, coeff, rows[1], int(0))
    for j in range(Q):
        coeff[j] = -F[oM + j]
    add_h_sum(F, row, seg_t4, pt_t4, coeff, rows[2], int(0))
    for j in range(Q):
        coeff[j] = F[oM + j] * pts[j, 0]
    add_phi_sum(F, row, coeff, int(0), rows[1], int(0))
    if row.planes == 2:
        for j in range(Q):
            coeff[j] = -coeff[j]
        add_phi_sum(F, row, coeff, int(1), rows[0], int(0))
    for x in range(m):
        M[4, 6 + x] += rows[0, x]
        M[6 + x, 4] += rows[0, x]
        M[5, 6 + x] += rows[1, x]
        M[6 + x, 5] += rows[1, x]
        M[0, 6 + x] += rows[2, x]
        M[6 + x, 0] += rows[2, x]
    add_h_gram(F, row, seg_t, pt_t, M, 6)
    if want_force:
        _gram_forces(F, row, q, pts, seg_t, seg_t4, pt_t, pt_t4, nu, b)


@kernel
def _gram_forces(F, row, q, pts, seg_t, seg_t4, pt_t, pt_t4, nu, b):
    """ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) into b (module docstring)."""
    Q, oM, oX = row.fs_points, row.o_fs_mass, row.o_fs_position
    vy, vz, wx, wy, wz = nu[1], nu[2], nu[3], nu[4], nu[5]
    ch = np.empty(Q)
    cy = np.empty(Q)
    cz = np.empty(Q)
    c4 = np.empty(Q)
    Ud = 0.0
    for j in range(Q):
        mu, x = F[oM + j], F[oX + j]
        u, ud, r, y, z, yd, zd = pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3], pts[j, 4], pts[j, 5], pts[j, 6]
        ud4, r4 = pts[j, 8], pts[j, 9]
        Ud += mu * ud4
        b[0] += mu * r4
        b[3] -= mu * (ud * (wy * y + wz * z) + u * (wy * yd + wz * zd))
        b[4] += mu * (2.0 * wy * (u * ud + x * ud4) - wx * (yd * u + y * ud) + z * r)
        b[5] += mu * (2.0 * wz * (u * ud + x * ud4) - wx * (zd * u + z * ud) - y * r)
        ch[j] = mu * ((wy * wy + wz * wz) * u - wx * (wy * y + wz * z) - 2.0 * wy * zd + 2.0 * wz * yd - r)
        cy[j] = mu * (wx * wy * u + 2.0 * wz * ud)
        cz[j] = mu * (wx * wz * u - 2.0 * wy * ud)
        c4[j] = mu * (vy * wz - vz * wy + (wy * wy + wz * wz) * x)
    b[1] += Ud * wz
    b[2] -= Ud * wy
    b[4] -= Ud * vz
    b[5] += Ud * vy
    add_h_sum(F, row, seg_t, pt_t, ch, b, int(6))
    add_h_sum(F, row, seg_t4, pt_t4, c4, b, int(6))
    add_phi_sum(F, row, cy, int(0), b, int(6))
    if row.planes == 2:
        add_phi_sum(F, row, cz, int(1), b, int(6))
