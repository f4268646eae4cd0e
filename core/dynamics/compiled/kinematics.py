"""The kinematics pass: joint maps, twists, tip maps and velocity-product accelerations of
every body, from one complex pass at q + ih q̇ (the frames of :mod:`core.dynamics.kinematics`).

Body i moves with ν_i = (v_i, ω_i, δ̇_i): the velocity of its link-frame origin and its angular
velocity, both in *link-frame axes*, and its flexible rates; the joint map is

    ν_i = A_i ν_{i−1} + S_i u_i,     u_i = (q̇_i, δ̇_i),

A_i = X_i P_{i−1}: P_{i−1} maps the parent's ν to the twist of its tip frame (tip axes) — for a
flexible link v + ω × r(δ) + U δ̇ and ω + J_L(θ) Θ δ̇ rotated by (exp θ̃ Rx(α))ᵀ, with
r = L e_x + Uδ and θ = Θδ the tip map of :class:`~core.dynamics.kinematics.TipMap` — and X_i the
constant-structure twist transform through Rz(θ_i)·Tz(d_i). S_i selects ω_z (revolute) or v_z
(prismatic) and the δ̇ rows. Payloads are bodies on a fixed joint at the tip's end frame.

The bias acceleration J̇_i q̇ of every body is the imaginary part of ν_i at the complex
configuration q + ih q̇ (the complex step, exact to round-off), so c_i = J̇_i q̇ − A_i J̇_{i−1} q̇
needs no derivative code.

**Tips.** A translating link's twist is (v, ω, δ̇, l̇) in its beam axes (x_b along the joint
axis), its tip carries the l̇ column (e_x + U′δ, J_L Θ′δ/l − θ/l). With geometric stiffening
the tip moves back by ½ δᵀHδ along the beam axis (r_x = L − ½ δᵀHδ, −(Hδ)ᵀ in the x row of U).
A pinned (chord) frame bending in two planes reads the tip in link axes: R_e ← E R_e, r ← E r,
U ← E U + Γ × (E r), J_L Θ ← E J_L Θ + Γ, with E = exp(ρ̃), ρ = root δ and Γ = J_L(ρ) root
(:func:`root_rotation`). All at the complex q, so J̇ q̇ carries every one of them.
"""

from __future__ import annotations

import cmath
from collections import namedtuple

import numpy as np

from core.dynamics.compiled.jit import kernel
from core.dynamics.compiled.layout import at, free_length_step, rate_at
from core.numerics import rotations
from core.numerics.derivatives import COMPLEX_STEP
from core.numerics.rotations import SERIES_THRESHOLD

# The Rodrigues ratios of core.numerics.rotations, compiled (one definition of the series).
_series = kernel(inline="always")(rotations.ratio_series)
_closed_form = kernel(inline="always")(rotations.ratio_closed_form)

#: The end frame of a body while the pass builds it (complex, at q + ih q̇): its rotation ``R``
#: and position ``r`` in the body's axes, the δ̇ (and l̇) columns of its velocity ``U`` and
#: angular velocity ``JT`` (= J_L Θ), the rotation vector ``th`` = θ and ``Th`` = Θ at l, and
#: a tilted link's root rotation ``E`` = exp(ρ̃) and ``Gam`` = Γ; ``vectors`` is scratch
#: (U′δ, Θ′δ, E r).
Tip = namedtuple("Tip", ["R", "r", "U", "JT", "th", "Th", "E", "Gam", "vectors"])


@kernel(inline="always")
def ratios(x):
    """sin r/r, (1 − cos r)/r², (r − sin r)/r³ of r² = x (complex), the series near 0."""
    if abs(x) < SERIES_THRESHOLD:
        return _series(x)
    return _closed_form(x)


@kernel(inline="always")
def left_jacobian(th, rb, rc, v0, v1, v2):
    """J_L(θ) v = v + b θ̃v + c θ̃²v (b, c of :func:`ratios`)."""
    w0 = th[1] * v2 - th[2] * v1
    w1 = th[2] * v0 - th[0] * v2
    w2 = th[0] * v1 - th[1] * v0
    z0 = th[1] * w2 - th[2] * w1
    z1 = th[2] * w0 - th[0] * w2
    z2 = th[0] * w1 - th[1] * w0
    return v0 + rb * w0 + rc * z0, v1 + rb * w1 + rc * z1, v2 + rb * w2 + rc * z2


@kernel(inline="always")
def rotation(th, R):
    """R = exp(θ̃) = 1 + a θ̃ + b θ̃² (θ̃² = θθᵀ − x 1, x = |θ|²) of a complex 3-vector θ
    (a, b, c of :func:`ratios`); returns (b, c), the coefficients of J_L (:func:`left_jacobian`)."""
    x2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    ra, rb, rc = ratios(x2)
    for a in range(3):
        for b in range(3):
            R[a, b] = (1.0 if a == b else 0.0) + rb * (th[a] * th[b] - (x2 if a == b else 0.0))
    R[0, 1] -= ra * th[2]
    R[0, 2] += ra * th[1]
    R[1, 0] += ra * th[2]
    R[1, 2] -= ra * th[0]
    R[2, 0] -= ra * th[1]
    R[2, 1] += ra * th[0]
    return rb, rc


@kernel
def root_rotation(F, row, delta, E, G):
    """E = exp(ρ̃) and Γ = J_L(ρ) root (3 × m) of a tilted link at ρ = root δ
    (:class:`~core.dynamics.kinematics.TipMap` ``root``): its beam frame is the link frame turned by E
    and turns relative to it at Γ δ̇ (in link axes; ``LinkFrames.Jw_body``). ``delta`` (m,)
    complex, so that the complex step carries both."""
    m, o = row.m, row.o_root
    rho = np.zeros(3, dtype=np.complex128)
    for a in range(3):
        for k in range(m):
            rho[a] += F[o + a * m + k] * delta[k]
    rb, rc = rotation(rho, E)
    for k in range(m):
        G[0, k], G[1, k], G[2, k] = left_jacobian(rho, rb, rc, F[o + k], F[o + m + k], F[o + 2 * m + k])


@kernel
def complex_configuration(q, qd):
    """(q + ih q̇/s, s/h), s = max|q̇|, h = ``COMPLEX_STEP``: Im f(q + ih q̇/s) · s/h is the
    derivative of f along q̇ (the real q alone, and 0, at rest)."""
    speed = 0.0
    for k in range(qd.size):
        speed = max(speed, abs(qd[k]))
    h = COMPLEX_STEP
    qc = np.empty(q.size, dtype=np.complex128)
    for k in range(q.size):
        qc[k] = complex(q[k], h * qd[k] / speed) if speed > 0 else complex(q[k], 0.0)
    return qc, speed / h


@kernel
def tip_map(Rt, r, U, JT, m, out):
    """P (6 × (6 + m)) of a frame at r with axes Rt (beam axes): rows (v, ω) in its own axes of
    ν = (v, ω, δ̇), i.e. Rtᵀ [[1, −r̃, U], [0, 1, J_L Θ]]."""
    for a in range(3):
        for b in range(3):
            out[a, b] = Rt[b, a]
            out[3 + a, 3 + b] = Rt[b, a]
            out[3 + a, b] = 0.0
        # −Rtᵀ r̃ e_b = −Rtᵀ (r × e_b)
        out[a, 3] = -(Rt[1, a] * r[2] - Rt[2, a] * r[1])
        out[a, 4] = -(-Rt[0, a] * r[2] + Rt[2, a] * r[0])
        out[a, 5] = -(Rt[0, a] * r[1] - Rt[1, a] * r[0])
        for k in range(m):
            out[a, 6 + k] = Rt[0, a] * U[0, k] + Rt[1, a] * U[1, k] + Rt[2, a] * U[2, k]
            out[3 + a, 6 + k] = Rt[0, a] * JT[0, k] + Rt[1, a] * JT[1, k] + Rt[2, a] * JT[2, k]


@kernel(inline="always")
def joint_map(row, qi, P, sp, A):
    """A = X_i P (6 × sp, complex): the parent's tip map P carried through Rz(θ_i)·Tz(d_i) at the
    joint's complex coordinate ``qi`` (a translating link's joint moves no frame: q_i is its free
    length, and its rows go to the beam axes x_b = z, y_b = x, z_b = y)."""
    theta = complex(row.theta_offset, 0.0)
    d = complex(row.d, 0.0)
    if not row.translating:
        if row.kind == 0:
            theta += qi
        else:
            d += qi
    c, sn = cmath.cos(theta), cmath.sin(theta)
    # A = X P: v = Rzᵀ(v_t − r̃ ω_t), ω = Rzᵀ ω_t, r = d e_z, r̃ ω = (−d ω_y, d ω_x, 0).
    for j in range(sp):
        x = P[0, j] + d * P[4, j]
        y = P[1, j] - d * P[3, j]
        A[0, j] = c * x + sn * y
        A[1, j] = -sn * x + c * y
        A[2, j] = P[2, j]
        A[3, j] = c * P[3, j] + sn * P[4, j]
        A[4, j] = -sn * P[3, j] + c * P[4, j]
        A[5, j] = P[5, j]
        if row.translating:
            A[0, j], A[1, j], A[2, j] = A[2, j], A[0, j], A[1, j]
            A[3, j], A[4, j], A[5, j] = A[5, j], A[3, j], A[4, j]


@kernel(inline="always")
def twist(row, i, qd, A, nu_p, sp, nu):
    """ν_i = A_i ν_{i−1} + S_i u_i (complex)."""
    m = row.m
    for k in range(6):
        acc = 0j
        for j in range(sp):
            acc += A[k, j] * nu_p[j]
        nu[k] = acc
    if row.translating:
        nu[6 + m] = qd[i]  # l̇
    else:
        nu[5 if row.kind == 0 else 2] += qd[i]
    for k in range(m):
        nu[6 + k] = qd[row.column + k]


@kernel(inline="always")
def record_twist(i, s, sp, A, nu, back, bias_p, bias, A_out, nu_out, c_out):
    """Store A_i and ν_i (real parts), J̇_i q̇ = Im ν_i · ``back`` into ``bias`` and
    c_i = J̇_i q̇ − A_i J̇_{i−1} q̇."""
    for k in range(6):
        for j in range(sp):
            A_out[i, k, j] = A[k, j].real
    for k in range(s):
        nu_out[i, k] = nu[k].real
        bias[k] = nu[k].imag * back
        c_out[i, k] = bias[k]
    for k in range(6):
        acc = 0.0
        for j in range(sp):
            acc += A_out[i, k, j] * bias_p[j]
        c_out[i, k] -= acc


@kernel(inline="always")
def foreshorten(row, qc, F, tip):
    """The tip of a stiffening link moves back by ½ δᵀHδ: r_x −= ½ δᵀHδ, U's x row −(Hδ)ᵀ."""
    m, col, oH = row.m, row.column, row.o_H
    shortening = 0j
    for p in range(m):
        acc = 0j
        for k in range(m):
            acc += F[oH + p * m + k] * qc[col + k]
        tip.U[0, p] -= acc
        shortening += qc[col + p] * acc
    tip.r[0] -= 0.5 * shortening


@kernel(inline="always")
def deflect(row, F, S, qc, i, tip):
    """The deflected tip of a flexible link: r = l e_x + U δ and θ = Θ δ (/ l on a translating
    link, U and Θ read at its free length l), R = exp(θ̃) and J_L Θ; returns (b, c) of J_L,
    1/l (1 on a fixed-length link) and dl of the Taylor rows (:func:`~.layout.at`)."""
    m, col = row.m, row.column
    oU, oT = row.o_U, row.o_theta
    if row.translating:
        length, dl = qc[i], free_length_step(row, qc[i])
    else:
        length, dl = complex(row.length, 0.0), 0j
    tip.r[0] = length
    scale = 1.0 / length if row.translating else 1.0 + 0j
    for a in range(3):
        acc_r = 0j
        acc_t = 0j
        for k in range(m):
            tip.U[a, k] = at(F, S, oU + a * m + k, dl)
            tip.Th[a, k] = at(F, S, oT + a * m + k, dl)
            acc_r += tip.U[a, k] * qc[col + k]
            acc_t += tip.Th[a, k] * qc[col + k]
        tip.r[a] += acc_r
        tip.th[a] = acc_t * scale
    if row.stiffening:
        foreshorten(row, qc, F, tip)
    rb, rc = rotation(tip.th, tip.R)  # R = exp(θ̃), J_L = 1 + b θ̃ + c θ̃²
    for k in range(m):  # J_L Θ, column by column
        j0, j1, j2 = left_jacobian(tip.th, rb, rc, tip.Th[0, k], tip.Th[1, k], tip.Th[2, k])
        tip.JT[0, k], tip.JT[1, k], tip.JT[2, k] = j0 * scale, j1 * scale, j2 * scale
    return rb, rc, scale, dl


@kernel(inline="always")
def slide(row, F, S, qc, tip, rb, rc, scale, dl):
    """A translating tip's l̇ column and end frame: l̇ slides the tip out along x_b and deflects
    it by U′(l) δ (following shapes), and turns it by J_L ∂θ/∂l = J_L(Θ′(l) δ / l) − θ/l
    (J_L θ = θ); the end frame is exp(θ̃) turned back to the link's axes, R_e Rbᵀ."""
    m, col, oU, oT = row.m, row.column, row.o_U, row.o_theta
    du, dt = tip.vectors[0], tip.vectors[1]
    for a in range(3):
        du[a] = dt[a] = 0j
    if row.following:
        for a in range(3):
            for k in range(m):
                du[a] += rate_at(F, S, oU + a * m + k, dl) * qc[col + k]
                dt[a] += rate_at(F, S, oT + a * m + k, dl) * qc[col + k]
    tip.U[0, m], tip.U[1, m], tip.U[2, m] = 1.0 + du[0], du[1], du[2]
    j0, j1, j2 = left_jacobian(tip.th, rb, rc, dt[0], dt[1], dt[2])
    th = tip.th
    tip.JT[0, m], tip.JT[1, m], tip.JT[2, m] = (
        (j0 - th[0]) * scale,
        (j1 - th[1]) * scale,
        (j2 - th[2]) * scale,
    )
    R = tip.R
    for a in range(3):
        R[a, 0], R[a, 1], R[a, 2] = R[a, 1], R[a, 2], R[a, 0]


@kernel(inline="always")
def tilt(row, F, qc, tip):
    """A tilted link's tip in link axes: its beam axes are the link axes turned by E = exp(ρ̃),
    which turn at Γ δ̇ (core.dynamics.kinematics), so R ← E R, r ← E r, U ← E U + Γ × (E r),
    J_L Θ ← E J_L Θ + Γ (at the complex q, so that J̇ q̇ carries the root rotation too)."""
    m, col = row.m, row.column
    E, Gam, R, U, JT = tip.E, tip.Gam, tip.R, tip.U, tip.JT
    er = tip.vectors[2]
    root_rotation(F, row, qc[col : col + m], E, Gam)
    for a in range(3):
        er[a] = E[a, 0] * tip.r[0] + E[a, 1] * tip.r[1] + E[a, 2] * tip.r[2]
    for k in range(m):
        u0, u1, u2 = U[0, k], U[1, k], U[2, k]
        t0, t1, t2 = JT[0, k], JT[1, k], JT[2, k]
        g0, g1, g2 = Gam[0, k], Gam[1, k], Gam[2, k]
        for a in range(3):
            U[a, k] = E[a, 0] * u0 + E[a, 1] * u1 + E[a, 2] * u2
            JT[a, k] = E[a, 0] * t0 + E[a, 1] * t1 + E[a, 2] * t2 + Gam[a, k]
        U[0, k] += g1 * er[2] - g2 * er[1]
        U[1, k] += g2 * er[0] - g0 * er[2]
        U[2, k] += g0 * er[1] - g1 * er[0]
    for a in range(3):
        tip.r[a] = er[a]
        e0, e1, e2 = R[0, a], R[1, a], R[2, a]
        for b in range(3):
            R[b, a] = E[b, 0] * e0 + E[b, 1] * e1 + E[b, 2] * e2


@kernel(inline="always")
def end_frame(row, F, S, qc, i, tip):
    """The end frame of body i into ``tip``: R_e = exp(θ̃) (flexible) or 1, at r."""
    for a in range(3):
        for b in range(3):
            tip.R[a, b] = 1.0 if a == b else 0.0
    tip.r[0], tip.r[1], tip.r[2] = row.a, 0.0, 0.0
    if not row.flexible:
        return
    rb, rc, scale, dl = deflect(row, F, S, qc, i, tip)
    if row.translating:
        slide(row, F, S, qc, tip, rb, rc, scale, dl)
    if row.tilted:
        tilt(row, F, qc, tip)


@kernel(inline="always")
def payload_map(i, tip, s, nu, bias, back, Pe, P_end, V_end, c_end):
    """The payload's map P_end[i] (the end frame's tip map), its twist V_end[i] and
    c_end[i] = J̇_e q̇ − P_end J̇_i q̇."""
    tip_map(tip.R, tip.r, tip.U, tip.JT, s - 6, Pe)
    for k in range(6):
        acc = 0j
        known = 0.0
        for j in range(s):
            P_end[i, k, j] = Pe[k, j].real
            acc += Pe[k, j] * nu[j]
            known += Pe[k, j].real * bias[j]
        V_end[i, k] = acc.real
        c_end[i, k] = acc.imag * back - known


@kernel
def new_tip(smax):
    """Scratch :class:`Tip` for bodies of at most ``smax`` twist rows."""
    mmax = smax - 6
    complex_ = np.complex128
    return Tip(
        np.empty((3, 3), dtype=complex_),
        np.empty(3, dtype=complex_),
        np.empty((3, mmax), dtype=complex_),
        np.empty((3, mmax), dtype=complex_),
        np.empty(3, dtype=complex_),
        np.empty((3, mmax), dtype=complex_),
        np.empty((3, 3), dtype=complex_),
        np.empty((3, mmax), dtype=complex_),
        np.empty((3, 3), dtype=complex_),
    )


@kernel
def kinematics(table, F, q, qd, smax, A_out, P_end, nu_out, c_out, V_end, c_end):
    """One complex pass at q + ih q̇/s (s = max|q̇|), filling (per link i)
    A_out[i] (6, 6 + m_{i−1}) the joint map, P_end[i] (6, 6 + m_i) the payload map,
    ν_i, c_i = J̇_i q̇ − A_i J̇_{i−1} q̇, and the payload twist V_end[i] and c_end[i]."""
    S = F.size // 3  # F holds [F, F1, F2]
    qc, back = complex_configuration(q, qd)
    P = np.zeros((6, smax), dtype=np.complex128)  # the parent's tip map (the base: identity)
    for k in range(6):
        P[k, k] = 1.0
    nu_p = np.zeros(smax, dtype=np.complex128)
    bias_p = np.zeros(smax)
    bias = np.zeros(smax)  # J̇_i q̇
    A = np.empty((6, smax), dtype=np.complex128)
    nu = np.empty(smax, dtype=np.complex128)
    Rt = np.empty((3, 3), dtype=np.complex128)
    Pe = np.empty((6, smax), dtype=np.complex128)
    tip = new_tip(smax)
    sp = 6  # the parent's ν size
    for i in range(table.shape[0]):
        row = table[i]
        s = row.size
        joint_map(row, qc[i], P, sp, A)
        twist(row, i, qd, A, nu_p, sp, nu)
        record_twist(i, s, sp, A, nu, back, bias_p, bias, A_out, nu_out, c_out)
        end_frame(row, F, S, qc, i, tip)
        if row.has_payload:
            payload_map(i, tip, s, nu, bias, back, Pe, P_end, V_end, c_end)
        ca, sa = np.cos(row.alpha), np.sin(row.alpha)
        R = tip.R
        for a in range(3):  # Rt = R Rx(α)
            Rt[a, 0] = R[a, 0]
            Rt[a, 1] = ca * R[a, 1] + sa * R[a, 2]
            Rt[a, 2] = -sa * R[a, 1] + ca * R[a, 2]
        tip_map(Rt, tip.r, tip.U, tip.JT, s - 6, P)
        for k in range(s):
            nu_p[k] = nu[k]
            bias_p[k] = bias[k]
        sp = s


@kernel
def kinematics_pass(table, F, q, qd, smax):
    """The arrays of :func:`kinematics`, allocated: (A, P_end, ν, c, V_end, c_end)."""
    n = table.shape[0]
    A = np.zeros((n, 6, smax))
    P_end = np.zeros((n, 6, smax))
    nu = np.zeros((n, smax))
    c = np.zeros((n, smax))
    V_end = np.zeros((n, 6))
    c_end = np.zeros((n, 6))
    kinematics(table, F, q, qd, smax, A, P_end, nu, c, V_end, c_end)
    return A, P_end, nu, c, V_end, c_end
