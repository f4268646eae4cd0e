"""The inertia of each body and its velocity-product forces, in the body's own axes.

Every inertia is constant or M_b(δ) in its body's axes (:mod:`core.dynamics.flexible_body`):
rigid links are spatial inertias about the link origin, hubs add mass at the origin and
I_h (e_z·ω + bᵀδ̇)² (pinned frames: the hub turns with the root slope b), motors an armature
I_r (q̇_i + bᵀδ̇)² on u_i, payloads a spatial inertia at the end frame. The body forces are the
Boltzmann–Hamel terms b_i = Ṁ_b ν + g(ν, M_b ν) − (0, 0, ∂T/∂δ),
g(ν, p) = (ω × p_v, ω × p_ω + v × p_v, 0).

**Geometric stiffening.** A fixed-length link built with ``stiffening`` packs its
foreshortening blocks P₁, P₂ (``FlexibleBody.foreshortening``, m × m, every plane); its inertia
(:func:`beam_body`) takes S₁,x − ½ δᵀP₁δ, Q_xx − δᵀP₂δ and the axial row −(P₁δ)ᵀ of A(δ), with
their rates in Ṁν and their δ-gradients in ∂T/∂δ. Gravity, the base acceleration −g, acts
through S₁,x with no further term: the v rows of M_b are ∂S₁/∂δ exactly (d/dt S₁ = A(δ) δ̇).

**Pinned frames bending in two planes** (``tilted``). The body keeps ν = (v, ω, δ̇) in *link*
axes, so S_i stays a selection and the hub and motor rows stay constant (the hub turns about
the joint axis with the in-plane root slope only); the beam's twist is ν_b = Φ ν and
:func:`tilted_body` turns the beam's inertia and forces into link axes by virtual power.

**Translating links.** A flexible link sliding through its prismatic hub is a body with
ν = (v, ω, δ̇, l̇) in its beam axes and the inertia M_b(δ, l) of
:class:`~core.dynamics.flexible_body.TranslatingBody`; Ṁ_b and ∂T/∂σ, σ = (δ, l), come by the
complex step through M_b (:func:`translating_body`: not polynomial in l).
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel
from core.dynamics.compiled.kinematics import complex_configuration, root_rotation
from core.dynamics.compiled.layout import at, free_length_step
from core.dynamics.compiled.linalg import add_transposed, congruence_add, cross_add, gyroscopic, matvec
from core.dynamics.compiled.stiffening import gram_inertia
from core.numerics.derivatives import COMPLEX_STEP


@kernel
def beam_body(F, row, q, qd, nu, want_force, M, b, work):
    """M_b of a fixed-length flexible link into M[:s, :s] (beam axes, ν = (v, ω, δ̇)) and, if
    ``want_force``, Ṁ_b ν − (0, 0, ∂T/∂δ) into b[:s] (the gyroscopic term and the hub are
    :func:`body`'s)."""
    m = row.m
    col, planes, No, mm = row.column, row.planes, row.o_N, m * m
    oA, oB = row.o_A, row.o_B
    S1 = np.zeros(3)
    bv = np.zeros(3)
    dS1 = np.zeros(3)
    db = np.zeros(3)
    for a in range(3):
        for k in range(m):
            S1[a] += F[oA + a * m + k] * q[col + k]
            bv[a] += F[oB + a * m + k] * q[col + k]
            dS1[a] += F[oA + a * m + k] * qd[col + k]
            db[a] += F[oB + a * m + k] * qd[col + k]
    S1[0] += row.first_x
    Q = np.zeros((3, 3))
    dQ = np.zeros((3, 3))
    Q[0, 0] = row.second_x
    Q[0, 1], Q[0, 2], Q[1, 0], Q[2, 0] = bv[1], bv[2], bv[1], bv[2]
    dQ[0, 1], dQ[0, 2], dQ[1, 0], dQ[2, 0] = db[1], db[2], db[1], db[2]
    # N_ac δ and N_acᵀ δ for the plane pairs; N₀₁ δ̇ − N₁₀ δ̇ and its transpose.
    Nd = np.zeros((2, 2, m))
    NTd = np.zeros((2, 2, m))
    for a in range(planes):
        for c in range(planes):
            base = No + (2 * a + c) * mm
            for p in range(m):
                for k in range(m):
                    value = F[base + p * m + k]
                    Nd[a, c, p] += value * q[col + k]
                    NTd[a, c, k] += value * q[col + p]
            x = 0.0
            dx = 0.0
            for p in range(m):
                x += q[col + p] * Nd[a, c, p]
                dx += qd[col + p] * (Nd[a, c, p] + NTd[a, c, p])
            Q[1 + a, 1 + c] = x
            dQ[1 + a, 1 + c] = dx
    stiffening = row.stiffening
    P1d = work[3]  # P₁δ: the axial row of A(δ) is −(P₁δ)ᵀ
    P1r = work[4]  # P₁δ̇
    P2d = work[5]  # P₂δ
    if stiffening:  # S₁,x − ½ δᵀP₁δ and Q_xx − δᵀP₂δ, with their rates
        oP1, oP2 = row.o_P1, row.o_P2
        for p in range(m):
            x1 = 0.0
            r1 = 0.0
            x2 = 0.0
            for k in range(m):
                x1 += F[oP1 + p * m + k] * q[col + k]
                r1 += F[oP1 + p * m + k] * qd[col + k]
                x2 += F[oP2 + p * m + k] * q[col + k]
            P1d[p], P1r[p], P2d[p] = x1, r1, x2
            S1[0] -= 0.5 * q[col + p] * x1
            dS1[0] -= qd[col + p] * x1  # d/dt ½ δᵀP₁δ = δ̇ᵀP₁δ (P₁ symmetric)
            Q[0, 0] -= q[col + p] * x2
            dQ[0, 0] -= 2.0 * qd[col + p] * x2
    skew_rows = work[0]  # δᵀN₀₁ − δᵀN₁₀ (the δ-dependent axial coupling row)
    rate_rows = work[1]  # δ̇ᵀN₀₁ − δ̇ᵀN₁₀
    rate_cols = work[2]  # N₀₁ δ̇ − N₁₀ δ̇
    for k in range(m):
        skew_rows[k] = rate_rows[k] = rate_cols[k] = 0.0
    if planes == 2:
        for p in range(m):
            for k in range(m):
                value = F[No + mm + p * m + k] - F[No + 2 * mm + p * m + k]
                skew_rows[k] += q[col + p] * value
                rate_rows[k] += qd[col + p] * value
                rate_cols[p] += value * qd[col + k]
    tr = Q[0, 0] + Q[1, 1] + Q[2, 2]
    mass_ = row.mass
    oR, oK, oD, oM = row.o_rot_oo, row.o_skew_B, row.o_rot_od, row.o_mdd
    for a in range(3):
        M[a, a] = mass_
        for c in range(3):
            M[3 + a, 3 + c] = (tr if a == c else 0.0) - Q[a, c] + F[oR + 3 * a + c]
        for k in range(m):
            M[a, 6 + k] = M[6 + k, a] = F[oA + a * m + k] - (P1d[k] if stiffening and a == 0 else 0.0)
            value = F[oK + a * m + k] + F[oD + a * m + k] + (skew_rows[k] if a == 0 else 0.0)
            M[3 + a, 6 + k] = M[6 + k, 3 + a] = value
    # −S̃₁ in the (v, ω) block, S̃₁ in (ω, v).
    M[0, 4], M[0, 5], M[1, 3], M[1, 5], M[2, 3], M[2, 4] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    M[4, 0], M[5, 0], M[3, 1], M[5, 1], M[3, 2], M[4, 2] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    for p in range(m):
        for k in range(m):
            M[6 + p, 6 + k] = F[oM + p * m + k]
    if want_force:
        v, w = nu[:3], nu[3:6]
        # Ṁ ν from the δ-dependent blocks (S̃₁, I_Ω, the axial coupling row).
        cross_add(dS1, w, b[:3], -1.0)
        cross_add(dS1, v, b[3:6], 1.0)
        dtr = dQ[0, 0] + dQ[1, 1] + dQ[2, 2]
        for a in range(3):
            b[3 + a] += dtr * w[a] - (dQ[a, 0] * w[0] + dQ[a, 1] * w[1] + dQ[a, 2] * w[2])
        vw = np.zeros(3)
        cross_add(v, w, vw, 1.0)
        ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
        for k in range(m):
            b[3] += rate_rows[k] * qd[col + k]
            b[6 + k] += w[0] * rate_rows[k]
            if stiffening:
                # Ṁν of the axial row −(P₁δ)ᵀ: −δ̇ᵀP₁δ̇ on v_x, −v_x P₁δ̇ on the δ rows; ∂T/∂δ
                # gains −(v × ω)_x P₁δ − v_x P₁δ̇ − (ω_y² + ω_z²) P₂δ (the v_x P₁δ̇ cancel).
                b[0] -= P1r[k] * qd[col + k]
                b[6 + k] += vw[0] * P1d[k] + (w[1] * w[1] + w[2] * w[2]) * P2d[k]
            # − ∂T/∂δ_k
            g = vw[0] * F[oA + k] + vw[1] * F[oA + m + k] + vw[2] * F[oA + 2 * m + k]
            g -= w[0] * (w[1] * F[oB + m + k] + w[2] * F[oB + 2 * m + k])
            for a in range(planes):
                for c in range(planes):
                    g -= 0.5 * w[1 + a] * w[1 + c] * (Nd[a, c, k] + NTd[a, c, k])
                g += ww * Nd[a, a, k]
            g += w[0] * rate_cols[k]
            b[6 + k] -= g


@kernel
def beam_inertia(F, row, q, qd, nu, want_force, M, b, work):
    """:func:`beam_body`, and for a stiffened link the terms beyond second order that make its
    M_b the Gram form (:func:`~core.dynamics.compiled.stiffening.gram_inertia`)."""
    beam_body(F, row, q, qd, nu, want_force, M, b, work)
    if row.stiffening:
        gram_inertia(F, row, q, qd, nu, want_force, M, b)


@kernel
def body(row, F, i, q, qd, nu, want_force, M, b, work):
    """Fill M[:s, :s] with M_i of body i (its axes; a tilted link's: its link axes) and, if
    ``want_force``, b[:s] with Ṁ ν + g(ν, M ν) − (0, 0, ∂T/∂δ) (FlexibleBody.mass_matrix;
    ∂T/∂δ is its complex-step derivative in the tests).
    ``work`` is scratch of shape (6, s_max)."""
    s = row.size
    for a in range(s):
        b[a] = 0.0
        for c in range(s):
            M[a, c] = 0.0
    if row.translating:
        translating_body(F, row, i, q, qd, nu, want_force, M, b)
    elif row.tilted:
        tilted_body(F, row, q, qd, nu, want_force, M, b, work)
    elif row.flexible:
        beam_inertia(F, row, q, qd, nu, want_force, M, b, work)
    else:
        oR = row.o_rigid
        for a in range(6):
            for c in range(6):
                M[a, c] = F[oR + 6 * a + c]
    hub = row.hub_mass
    for a in range(3):
        M[a, a] += hub
    if row.has_hub_inertia:
        oH, inertia = row.o_hub, row.hub_inertia
        for a in range(s):
            for c in range(s):
                M[a, c] += inertia * F[oH + a] * F[oH + c]
    if want_force:
        p = np.zeros(6)
        if row.tilted:  # the beam's gyroscopic forces are in b already: the hub's alone
            for a in range(3):
                p[a] = hub * nu[a]
            if row.has_hub_inertia:
                oH, spin = row.o_hub, 0.0
                for c in range(s):
                    spin += F[oH + c] * nu[c]
                for a in range(6):
                    p[a] += row.hub_inertia * F[oH + a] * spin
        else:
            matvec(M, nu, int(6), s, p)
        gyroscopic(nu, p, b)


@kernel
def root_frames(F, row, q, qd):
    """(E, Γ, Ė, Γ̇) of a tilted link at real q (:func:`~.kinematics.root_rotation`), the rates
    along q̇ by the complex step (zero at rest)."""
    col = row.column
    delta, back = complex_configuration(q[col : col + row.m], qd[col : col + row.m])
    E = np.empty((3, 3), dtype=np.complex128)
    G = np.empty((3, row.m), dtype=np.complex128)
    root_rotation(F, row, delta, E, G)
    return np.ascontiguousarray(E.real), np.ascontiguousarray(G.real), E.imag * back, G.imag * back


@kernel
def tilted_body(F, row, q, qd, nu, want_force, M, b, work):
    """M_i and (if ``want_force``) its forces Ṁν + g(ν, Mν) − (0, 0, ∂T/∂δ) of a tilted link
    (a pinned frame bending in two planes) in link axes, ν = (v, ω, δ̇).

    Its beam frame is the link frame turned by E = exp(ρ̃) and turning at Γ δ̇
    (:func:`~.kinematics.root_rotation`), so the beam-axes twist is ν_b = Φ ν with

        Φ = [[Eᵀ, 0, 0], [0, Eᵀ, EᵀΓ], [0, 0, 1]].

    The beam's inertia M_b and forces f_b = M_b ν̇_b + Ṁ_b ν_b + g(ν_b, M_b ν_b) − (0, 0, ∂T/∂δ)
    are those of :func:`beam_body` at ν_b, with ν̇_b = Φ ν̇ + Φ̇ ν; by virtual power
    (δν_b = Φ δν) the link-axes forces are Φᵀ f_b, i.e. M_i = Φᵀ M_b Φ and
    b_i = Φᵀ (Ṁ_b ν_b + g(ν_b, M_b ν_b) − (0, 0, ∂T/∂δ) + M_b Φ̇ ν). The hub stays on the link
    axes (:func:`body`): it turns about the joint axis, with the in-plane root slope only."""
    m, s = row.m, row.size
    E, G, dE, dG = root_frames(F, row, q, qd)
    nu_b = np.empty(s)
    rate = np.zeros(6)  # Φ̇ ν: (Ėᵀ v, Ėᵀ (ω + Γδ̇) + Eᵀ Γ̇ δ̇)
    w = np.empty(3)  # ω + Γ δ̇
    turn = np.zeros(3)  # Γ̇ δ̇
    for a in range(3):
        w[a] = nu[3 + a]
        for k in range(m):
            w[a] += G[a, k] * nu[6 + k]
            turn[a] += dG[a, k] * nu[6 + k]
    for a in range(3):
        nu_b[a] = E[0, a] * nu[0] + E[1, a] * nu[1] + E[2, a] * nu[2]
        nu_b[3 + a] = E[0, a] * w[0] + E[1, a] * w[1] + E[2, a] * w[2]
        rate[a] = dE[0, a] * nu[0] + dE[1, a] * nu[1] + dE[2, a] * nu[2]
        rate[3 + a] = dE[0, a] * w[0] + dE[1, a] * w[1] + dE[2, a] * w[2]
        rate[3 + a] += E[0, a] * turn[0] + E[1, a] * turn[1] + E[2, a] * turn[2]
    for k in range(m):
        nu_b[6 + k] = nu[6 + k]
    beam_inertia(F, row, q, qd, nu_b, want_force, M, b, work)
    if want_force:
        p = np.zeros(6)
        matvec(M, nu_b, int(6), s, p)
        gyroscopic(nu_b, p, b)
        inertial = np.empty(s)  # M_b Φ̇ ν
        matvec(M, rate, s, int(6), inertial)
        for a in range(s):
            b[a] += inertial[a]
        to_link_axes(b, s, E, G)
    # M ← Φᵀ M Φ (M symmetric): Φᵀ M, transposed (= M Φ), then Φᵀ M Φ.
    turn_columns(M, s, E, G)
    for a in range(s):
        for c in range(a):
            M[a, c], M[c, a] = M[c, a], M[a, c]
    turn_columns(M, s, E, G)


@kernel
def to_link_axes(x, s, E, G):
    """x[:s] ← Φᵀ x of :func:`tilted_body` (a force in beam axes to link axes): the v and ω
    rows turned by E, the δ rows gaining Γᵀ of the turned ω rows."""
    for r in (0, 3):
        x0, x1, x2 = x[r], x[r + 1], x[r + 2]
        for a in range(3):
            x[r + a] = E[a, 0] * x0 + E[a, 1] * x1 + E[a, 2] * x2
    for k in range(s - 6):
        x[6 + k] += G[0, k] * x[3] + G[1, k] * x[4] + G[2, k] * x[5]


@kernel
def turn_columns(M, s, E, G):
    """M[:s, :s] ← Φᵀ M (:func:`to_link_axes` on every column)."""
    for c in range(s):
        for r in (0, 3):
            x0, x1, x2 = M[r, c], M[r + 1, c], M[r + 2, c]
            for a in range(3):
                M[r + a, c] = E[a, 0] * x0 + E[a, 1] * x1 + E[a, 2] * x2
        for k in range(s - 6):
            M[6 + k, c] += G[0, k] * M[3, c] + G[1, k] * M[4, c] + G[2, k] * M[5, c]


@kernel
def translating_mass(F, row, sigma, M):
    """M_b(δ, l) of a translating link (:meth:`~core.dynamics.flexible_body.TranslatingBody.mass_matrix`)
    into M[:7 + m, :7 + m], for complex σ = (δ, l) (the body's derivatives come by the complex
    step: M_b is not polynomial in l). The unit integrals are read at l (:func:`~.layout.at`): constants
    for frozen shapes, Taylor polynomials about the stored l₀ for length-following ones."""
    m, planes = row.m, row.planes
    mass, rho, L = row.mass, row.rho, row.length
    oA, oB, oAl, oBl, No, Po, mm = row.o_A, row.o_B, row.o_Al, row.o_Bl, row.o_N, row.o_P, m * m
    S = F.size // 3
    delta = sigma[:m]
    l = sigma[m]
    dl = free_length_step(row, l)
    A0d = np.zeros(3, dtype=np.complex128)
    B0d = np.zeros(3, dtype=np.complex128)
    Ald = np.zeros(3, dtype=np.complex128)
    Bld = np.zeros(3, dtype=np.complex128)
    for a in range(3):
        for k in range(m):
            A0d[a] += at(F, S, oA + a * m + k, dl) * delta[k]
            B0d[a] += at(F, S, oB + a * m + k, dl) * delta[k]
            Ald[a] += at(F, S, oAl + a * m + k, dl) * delta[k]
            Bld[a] += at(F, S, oBl + a * m + k, dl) * delta[k]
    S1 = l * A0d
    S1[0] += mass * (l - L / 2)  # ρ(l² − (L − l)²)/2 without cancellation
    Q = np.zeros((3, 3), dtype=np.complex128)
    Q[0, 0] = rho * (l**3 + (L - l) ** 3) / 3
    Q[0, 1] = Q[1, 0] = l * l * B0d[1]
    Q[0, 2] = Q[2, 0] = l * l * B0d[2]
    skew_row = np.zeros(m, dtype=np.complex128)  # δᵀN₀₀₁ − δᵀN₀₁₀
    twist = 0j  # δᵀ(P₀₁ − P₁₀)δ
    d_l = np.zeros(m, dtype=np.complex128)  # Σ_a P_aa δ
    for a in range(planes):
        for c in range(planes):
            base, pbase = No + (2 * a + c) * mm, Po + (2 * a + c) * mm
            x = 0j
            for p in range(m):
                for k in range(m):
                    n_pk = at(F, S, base + p * m + k, dl)
                    p_pk = at(F, S, pbase + p * m + k, dl)
                    x += delta[p] * n_pk * delta[k]
                    if a == c:
                        d_l[p] += p_pk * delta[k]
                    elif a == 0:
                        skew_row[k] += delta[p] * n_pk
                        twist += delta[p] * p_pk * delta[k]
                    else:
                        skew_row[k] -= delta[p] * n_pk
                        twist -= delta[p] * p_pk * delta[k]
            Q[1 + a, 1 + c] = l * x
    tr = Q[0, 0] + Q[1, 1] + Q[2, 2]
    for a in range(3):
        M[a, a] = mass
        for c in range(3):
            M[3 + a, 3 + c] = (tr if a == c else 0.0) - Q[a, c]
        for k in range(m):
            M[a, 6 + k] = M[6 + k, a] = l * at(F, S, oA + a * m + k, dl)
    M[0, 4], M[0, 5], M[1, 3], M[1, 5], M[2, 3], M[2, 4] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    M[4, 0], M[5, 0], M[3, 1], M[5, 1], M[3, 2], M[4, 2] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    oM, oR = row.o_mdd, row.o_R0
    quadratic = 0j  # δᵀ R₀ δ
    for k in range(m):
        # l² x̃ B₀ (rows y, z) and the δ-dependent axial row
        M[3, 6 + k] = M[6 + k, 3] = l * skew_row[k]
        M[4, 6 + k] = M[6 + k, 4] = -l * l * at(F, S, oB + 2 * m + k, dl)
        M[5, 6 + k] = M[6 + k, 5] = l * l * at(F, S, oB + m + k, dl)
        for p in range(m):
            M[6 + k, 6 + p] = l * at(F, S, oM + k * m + p, dl)
            quadratic += delta[k] * at(F, S, oR + k * m + p, dl) * delta[p]
    last = 6 + m
    column = np.zeros(last, dtype=np.complex128)  # the l̇ column: v, ω, δ rows
    column[0] = Ald[0] + mass
    column[1], column[2] = Ald[1], Ald[2]
    column[3] = twist
    column[4] = -l * Bld[2] + l * A0d[2]
    column[5] = l * Bld[1] - l * A0d[1]
    for k in range(m):
        column[6 + k] = d_l[k]
    for a in range(last):
        M[a, last] = M[last, a] = column[a]
    M[last, last] = mass + quadratic / l


@kernel
def translating_body(F, row, i, q, qd, nu, want_force, M, b):
    """M_i and (if ``want_force``) Ṁ ν − (0, 0, ∂T/∂σ) of a translating link, σ = (δ, l), by
    the complex step through :func:`translating_mass` (exact to round-off)."""
    m, col = row.m, row.column
    s = 7 + m
    h = COMPLEX_STEP
    sigma = np.empty(m + 1, dtype=np.complex128)
    rate = np.empty(m + 1)
    for k in range(m):
        sigma[k], rate[k] = q[col + k], qd[col + k]
    sigma[m], rate[m] = q[i], qd[i]
    Mc = np.zeros((s, s), dtype=np.complex128)
    translating_mass(F, row, sigma, Mc)
    for a in range(s):
        for c in range(s):
            M[a, c] = Mc[a, c].real
    if not want_force:
        return
    speed = 0.0
    for k in range(m + 1):
        speed = max(speed, abs(rate[k]))
    if speed > 0:
        step = sigma.copy()
        for k in range(m + 1):
            step[k] += 1j * h * rate[k] / speed
        Mc[:, :] = 0
        translating_mass(F, row, step, Mc)
        for a in range(s):
            acc = 0.0
            for c in range(s):
                acc += Mc[a, c].imag * nu[c]
            b[a] += acc * speed / h  # Ṁ ν
    for k in range(m + 1):  # ∂T/∂σ_k = ½ νᵀ ∂M_b/∂σ_k ν
        step = sigma.copy()
        step[k] += 1j * h
        Mc[:, :] = 0
        translating_mass(F, row, step, Mc)
        acc = 0.0
        for a in range(s):
            for c in range(s):
                acc += nu[a] * Mc[a, c].imag * nu[c]
        b[6 + k] -= 0.5 * acc / h


@kernel
def armature(row, F, a, c):
    """Entry (a, c) of the reflected motor inertia I_r (1, b)(1, b)ᵀ on u_i."""
    if not row.has_armature:
        return 0.0
    o = row.o_armature
    return row.armature * F[o + a] * F[o + c]


@kernel
def payload_terms(row, F, i, s, P_end, V_end, c_end, M, f, acceleration):
    """Add a payload (fixed child at the end frame) to body i: M[:s, :s] += Peᵀ I_p Pe and
    f[:s] += Peᵀ (I_p a_e + g(V_e, I_p V_e)) with a_e = Pe ``acceleration`` + c_e."""
    o = row.o_payload
    Ip = F[o : o + 36].reshape(6, 6)
    Pe = P_end[i]
    if M.shape[0]:
        congruence_add(Pe, Ip, s, M)
    ae = c_end[i].copy()
    for k in range(6):
        for j in range(s):
            ae[k] += Pe[k, j] * acceleration[j]
    fe = np.zeros(6)
    pe = np.zeros(6)
    matvec(Ip, ae, int(6), int(6), fe)
    matvec(Ip, V_end[i], int(6), int(6), pe)
    gyroscopic(V_end[i], pe, fe)
    add_transposed(Pe, fe, s, f)
