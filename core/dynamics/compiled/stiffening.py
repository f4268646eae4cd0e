"""The foreshortening terms beyond second order of a stiffened beam, compiled: what makes its
M_b the Gram form ∫ J_pᵀ J_p dm (:mod:`core.dynamics.foreshortening`, whose numpy
``gram_terms`` is the oracle these kernels are tested against).

On the point set of :class:`~core.dynamics.foreshortening.ForeshorteningPoints` (packed by
:func:`~core.dynamics.compiled.packing.compile_chain`: ``fs_*`` fields of the link's row), with
per point j the scalars

    u = −½ Σ_a δ_aᵀ H_j δ_a,  u̇ = −Σ_a δ̇_aᵀ H_j δ_a,  r = −Σ_a δ̇_aᵀ H_j δ̇_a,  w_a = φ_jᵀδ_a,  ẇ_a = φ_jᵀδ̇_a

(r = d u̇/dt at fixed ν), :func:`gram_inertia` adds to M_b

    ΔQ_xx = Σ μ u²,  ΔQ_xa = Σ μ u w_a,  ΔM_Ωδ (rows y, z) = Σ μ (−u Φ_z − w_z h), Σ μ (u Φ_y + w_y h),
    ΔM_δδ = Σ μ h hᵀ,

and to the body forces ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) (Boltzmann–Hamel; the gyroscopic part is
:func:`~core.dynamics.compiled.bodies.body`'s, from the full M_b):

    Ω_x row: −Σ μ [u̇ (Ω_y w_y + Ω_z w_z) + u (Ω_y ẇ_y + Ω_z ẇ_z)]
    Ω_y row:  Σ μ [2 Ω_y u u̇ − Ω_x (ẇ_y u + w_y u̇) + w_z r]
    Ω_z row:  Σ μ [2 Ω_z u u̇ − Ω_x (ẇ_z u + w_z u̇) − w_y r]
    δ rows:   Σ μ [c_h h + c_y Φ_yᵀ + c_z Φ_zᵀ],
              c_h = (Ω_y² + Ω_z²) u − Ω_x (Ω_y w_y + Ω_z w_z) − 2 Ω_y ẇ_z + 2 Ω_z ẇ_y − r,
              c_y = Ω_x Ω_y u + 2 Ω_z u̇,   c_z = Ω_x Ω_z u − 2 Ω_y u̇

(the terms in ḣ = Hδ̇ of Ṁν and ∂T/∂δ cancel). Every sum over points of a coefficient times h_j
runs through the segments, h_j = Σ_{e<E} G_e δ + partial_j δ: O(Q k² + S n k) per plane for a
support of width k, and ΔM_δδ = Σ μ h hᵀ in O(S n k) by the running prefix
P_E = Σ_{e<E} G_e δ — no (points × n) array.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel


@kernel
def point_scalars(F, row, q, qd, out):
    """out[j] = (u, u̇, r, w_y, w_z, ẇ_y, ẇ_z) of every point j, shape (Q, 7)."""
    Q, k = row.fs_points, row.fs_width
    n = row.m // row.planes
    oS, oE, oV, oP = row.o_fs_support, row.o_fs_segment, row.o_fs_values, row.o_fs_partial
    cum = np.zeros(3)  # Σ_{e<E} of δᵀGδ, δ̇ᵀGδ, δ̇ᵀGδ̇ over the planes
    seg = np.zeros(3)  # the same for the current segment E
    current = 0
    for j in range(Q):
        E = int(F[oE + j])
        while current < E:  # segments passed: add their full Grams
            for x in range(3):
                cum[x] += _segment_products(F, row, current, q, qd, x)
            current += 1
        for x in range(3):
            seg[x] = 0.0
        for a in range(row.planes):
            base = row.column + a * n
            for s in range(k):
                i = base + int(F[oS + E * k + s])
                d, v = q[i], qd[i]
                out[j, 3 + a] += F[oV + j * k + s] * d
                out[j, 5 + a] += F[oV + j * k + s] * v
                for t in range(k):
                    g = F[oP + (j * k + s) * k + t]
                    c = base + int(F[oS + E * k + t])
                    seg[0] += d * g * q[c]
                    seg[1] += v * g * q[c]
                    seg[2] += v * g * qd[c]
        out[j, 0] = -0.5 * (cum[0] + seg[0])
        out[j, 1] = -(cum[1] + seg[1])
        out[j, 2] = -(cum[2] + seg[2])


@kernel
def _segment_products(F, row, e, q, qd, which):
    """Σ_a x_aᵀ G_e y_a on segment e: (δ, δ), (δ̇, δ) or (δ̇, δ̇) for ``which`` 0, 1, 2."""
    k, n = row.fs_width, row.m // row.planes
    oS, oG = row.o_fs_support, row.o_fs_gram
    total = 0.0
    for a in range(row.planes):
        base = row.column + a * n
        for s in range(k):
            i = base + int(F[oS + e * k + s])
            x = q[i] if which == 0 else qd[i]
            for t in range(k):
                c = base + int(F[oS + e * k + t])
                y = qd[c] if which == 2 else q[c]
                total += x * F[oG + (e * k + s) * k + t] * y
    return total


@kernel
def add_local_product(F, row, start, E, q, weight, out, offset):
    """out[offset + plane a coordinates of segment E's support] += weight · X δ_a on that support,
    for X the k × k block at F[start:] (a segment's G_e or a point's partial Gram), every plane."""
    k, n = row.fs_width, row.m // row.planes
    oS = row.o_fs_support + E * k
    for a in range(row.planes):
        base = a * n
        for s in range(k):
            value = 0.0
            for t in range(k):
                value += F[start + s * k + t] * q[row.column + base + int(F[oS + t])]
            out[offset + base + int(F[oS + s])] += weight * value


@kernel
def add_h_sum(F, row, q, coeff, out, offset):
    """out[offset + plane a coordinates] += Σ_j coeff[j] h_j (h_j,a = H_j δ_a), through the
    segments: Σ_e (G_e δ) C_{>e} + Σ_j coeff_j partial_j δ, C_{>e} = Σ_{segment_j > e} coeff_j."""
    S, Q, k = row.fs_segments, row.fs_points, row.fs_width
    oG, oE, oP = row.o_fs_gram, row.o_fs_segment, row.o_fs_partial
    per_segment = np.zeros(S)
    for j in range(Q):
        per_segment[int(F[oE + j])] += coeff[j]
    later = 0.0  # C_{>e}, built from the last segment down
    for e in range(S - 1, -1, -1):
        if later != 0.0:
            add_local_product(F, row, oG + e * k * k, e, q, later, out, offset)
        later += per_segment[e]
    for j in range(Q):
        if coeff[j] != 0.0:
            add_local_product(F, row, oP + j * k * k, int(F[oE + j]), q, coeff[j], out, offset)


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
def add_h_gram(F, row, q, M, offset):
    """M[offset + δ, offset + δ] += Σ_j μ_j h_j h_jᵀ (every plane pair), by the running prefix
    P_E = Σ_{e<E} G_e δ: Σ_E [m_E P P ᵀ + P c_Eᵀ + c_E Pᵀ] + Σ_j μ_j l_j l_jᵀ with l_j = partial_j δ,
    c_E = Σ_{j∈E} μ_j l_j, m_E = Σ_{j∈E} μ_j, and m_E P Pᵀ summed as Σ_e M_{>e}(t t ᵀ + t Pᵀ + P tᵀ)."""
    S, Q, k, planes = row.fs_segments, row.fs_points, row.fs_width, row.planes
    n, m = row.m // planes, row.m
    oS, oG, oE, oP, oM = row.o_fs_support, row.o_fs_gram, row.o_fs_segment, row.o_fs_partial, row.o_fs_mass
    P = np.zeros(m)  # running prefix Σ_{e<E} G_e δ (all planes)
    c = np.zeros((S, m))  # c_E on its support (scattered)
    mass_in = np.zeros(S)
    local = np.zeros(m)
    for j in range(Q):
        E = int(F[oE + j])
        mu = F[oM + j]
        mass_in[E] += mu
        for x in range(m):
            local[x] = 0.0
        add_local_product(F, row, oP + j * k * k, E, q, 1.0, local, 0)
        for a in range(planes):
            for s in range(k):
                if _padded(F, oS + E * k, s):
                    continue
                x = a * n + int(F[oS + E * k + s])
                c[E, x] += mu * local[x]
        _add_local_outer(F, row, E, local, mu, M, offset)
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
        # t = G_E δ on its support; M_{>E} (t tᵀ + t Pᵀ + P tᵀ)
        for x in range(m):
            t[x] = 0.0
        add_local_product(F, row, oG + E * k * k, E, q, 1.0, t, 0)
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
def _add_local_outer(F, row, E, local, mu, M, offset):
    """M[offset + x, offset + y] += μ l_x l_y over the support of segment E (every plane)."""
    k, n = row.fs_width, row.m // row.planes
    oS = row.o_fs_support
    for a in range(row.planes):
        for s in range(k):
            if _padded(F, oS + E * k, s):
                continue
            x = a * n + int(F[oS + E * k + s])
            for b in range(row.planes):
                for t in range(k):
                    if _padded(F, oS + E * k, t):
                        continue
                    y = b * n + int(F[oS + E * k + t])
                    M[offset + x, offset + y] += mu * local[x] * local[y]


@kernel(inline="always")
def _padded(F, start, s):
    """Whether entry s of a support (at F[start:]) is padding: it repeats the one before."""
    return s > 0 and F[start + s] == F[start + s - 1]


@kernel
def gram_inertia(F, row, q, qd, nu, want_force, M, b):
    """Add the Gram terms of a stiffened beam to its M_b (M[:6 + m, :6 + m], beam axes) and, if
    ``want_force``, ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) to b (module docstring)."""
    Q = row.fs_points
    m = row.m
    oM = row.o_fs_mass
    pts = np.zeros((Q, 7))
    point_scalars(F, row, q, qd, pts)
    dQxx, dQxy, dQxz = 0.0, 0.0, 0.0
    for j in range(Q):
        mu, u = F[oM + j], pts[j, 0]
        dQxx += mu * u * u
        dQxy += mu * u * pts[j, 3]
        dQxz += mu * u * pts[j, 4]
    M[4, 4] += dQxx
    M[5, 5] += dQxx
    M[3, 4] -= dQxy
    M[4, 3] -= dQxy
    M[3, 5] -= dQxz
    M[5, 3] -= dQxz
    rows = np.zeros((2, m))  # ΔM_Ωδ rows y, z
    coeff = np.empty(Q)
    for j in range(Q):
        coeff[j] = -F[oM + j] * pts[j, 4]
    add_h_sum(F, row, q, coeff, rows[0], 0)
    for j in range(Q):
        coeff[j] = F[oM + j] * pts[j, 3]
    add_h_sum(F, row, q, coeff, rows[1], 0)
    for j in range(Q):
        coeff[j] = F[oM + j] * pts[j, 0]
    add_phi_sum(F, row, coeff, 0, rows[1], 0)
    if row.planes == 2:
        for j in range(Q):
            coeff[j] = -coeff[j]
        add_phi_sum(F, row, coeff, 1, rows[0], 0)
    for x in range(m):
        M[4, 6 + x] += rows[0, x]
        M[6 + x, 4] += rows[0, x]
        M[5, 6 + x] += rows[1, x]
        M[6 + x, 5] += rows[1, x]
    add_h_gram(F, row, q, M, 6)
    if want_force:
        _gram_forces(F, row, q, pts, nu, b)


@kernel
def _gram_forces(F, row, q, pts, nu, b):
    """ΔṀ_b ν − (0, 0, ∂ΔT/∂δ) into b (module docstring)."""
    Q, oM = row.fs_points, row.o_fs_mass
    wx, wy, wz = nu[3], nu[4], nu[5]
    ch = np.empty(Q)
    cy = np.empty(Q)
    cz = np.empty(Q)
    for j in range(Q):
        mu = F[oM + j]
        u, ud, r, y, z, yd, zd = pts[j, 0], pts[j, 1], pts[j, 2], pts[j, 3], pts[j, 4], pts[j, 5], pts[j, 6]
        b[3] -= mu * (ud * (wy * y + wz * z) + u * (wy * yd + wz * zd))
        b[4] += mu * (2.0 * wy * u * ud - wx * (yd * u + y * ud) + z * r)
        b[5] += mu * (2.0 * wz * u * ud - wx * (zd * u + z * ud) - y * r)
        ch[j] = mu * ((wy * wy + wz * wz) * u - wx * (wy * y + wz * z) - 2.0 * wy * zd + 2.0 * wz * yd - r)
        cy[j] = mu * (wx * wy * u + 2.0 * wz * ud)
        cz[j] = mu * (wx * wz * u - 2.0 * wy * ud)
    add_h_sum(F, row, q, ch, b, 6)
    add_phi_sum(F, row, cy, 0, b, 6)
    if row.planes == 2:
        add_phi_sum(F, row, cz, 1, b, 6)
