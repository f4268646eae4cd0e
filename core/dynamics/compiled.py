"""Compiled recursive dynamics of a serial chain of rigid and flexible bodies (numba).

The same mechanics as :mod:`core.dynamics.engine` (frames of :mod:`core.dynamics.kinematics`,
inertia of :mod:`core.dynamics.flexible_body`), written as O(n) recursions over flat
arrays and compiled with numba (``njit(cache=True)``: compiled once per
machine and cached beside this file, ~10 s; later processes load it in
~0.3 s). Pure-numpy recursions cannot be fast on small arms: every 3×3 or 6×6
numpy call costs ~1 µs of dispatch, and a 15-DOF arm needs hundreds of them.

**Bodies and maps.** Body i (link i with its hub, motor and payloads) moves
with ν_i = (v_i, ω_i, δ̇_i): the velocity of its link-frame origin and its
angular velocity, both in *link-frame axes*, and its flexible rates (a
rigid link has none). The joint map is

    ν_i = A_i ν_{i−1} + S_i u_i,     u_i = (q̇_i, δ̇_i),

A_i = X_i P_{i−1}: P_{i−1} maps the parent's ν to the twist of its tip frame
(tip axes) — for a flexible link v + ω × r(δ) + U δ̇ and ω + J_L(θ) Θ δ̇
rotated by (exp θ̃ Rx(α))ᵀ, with r = L e_x + Uδ and θ = Θδ the tip map of
:class:`~core.dynamics.kinematics.TipMap` — and X_i the constant-structure twist
transform through Rz(θ_i)·Tz(d_i). S_i selects ω_z (revolute) or v_z
(prismatic) and the δ̇ rows. Payloads are bodies on a fixed joint at the
tip's end frame. Every inertia is constant or M_b(δ) in its body's axes:
rigid links are spatial inertias about the link origin, hubs add mass at the
origin and I_h (e_z·ω + bᵀδ̇)² (pinned frames: the hub turns with the root
slope b), motors an armature I_r (q̇_i + bᵀδ̇)² on u_i.

**Velocity products without derivatives of M.** The bias acceleration
J̇_i q̇ of every body is the imaginary part of ν_i evaluated at the complex
configuration q + ih q̇ (the complex step, exact to round-off; as in
:mod:`core.dynamics.newton_euler`), so c_i = J̇_i q̇ − A_i J̇_{i−1} q̇ needs no
derivative code. The body forces are the Boltzmann–Hamel terms
b_i = Ṁ_b ν + g(ν, M_b ν) − (0, 0, ∂T/∂δ), g(ν, p) = (ω × p_v, ω × p_ω + v × p_v, 0).
Gravity is a base acceleration −g (exact for a uniform field).

**Algorithms.** :func:`forward` is the articulated-body algorithm
(Featherstone, Rigid Body Dynamics Algorithms, 2008, §7.3) with
(1 + m_i)-dimensional joint spaces and the Cholesky factor of each D_i,
O(n (6 + m)³); :func:`inverse` the recursive Newton–Euler algorithm (M q̈ + h
+ G); :func:`mass` the composite-rigid-body algorithm for M alone. Seed 001
(Boyer et al.) derives the same recursions for flexible chains.

A translating link (a flexible link sliding through its prismatic hub) is a
body with ν = (v, ω, δ̇, l̇) in its beam axes and the inertia
M_b(δ, l) of :class:`~core.dynamics.flexible_body.TranslatingBody`; its joint space is
u = (δ̇, l̇) (the joint moves no frame), its tip carries the l̇ column
(e_x, −θ/l), and Ṁ_b, ∂T/∂σ come by the complex step through M_b (not
polynomial in l). Its kinetic energy leaves out the convective term while its
gravity potential is exact, so the base-acceleration gravity is corrected on
its free length (:func:`_gravity_correction`).

**Length-following shapes.** A translating link's shapes ψ(η; l) may follow its free
length (``TranslatingBody.following``); then its unit integrals (A₀, B₀, A_l0, B_l0, N₀, P,
M_δδ0, R₀) and tip map rows (U, Θ) are functions of l, needed at the complex l of the complex
step. The flat buffer holds [F, F1, F2] (three parts of one size S, the same offsets): the
values and their first and second l-derivatives at fixed η, written by
:meth:`CompiledChain._configuration` from ``TranslatingBody.kernel_taylor`` whenever the free
length changes (the scalar S_L0 records the l₀ they were written at). Every read of those
arrays is the Taylor polynomial F + dl (F1 + ½ dl F2), dl = l − l₀ (:func:`_at`): exact in
value and first derivative at the real l₀ = Re l, and the tip map's l̇ column, which holds
U′(l) and Θ′(l), gets its own l-derivative from F2. Frozen shapes have F1 = F2 = 0 and
dl = 0, so their rows are the constants, bit for bit.

**Geometric stiffening.** A fixed-length link built with ``stiffening``
(:class:`~core.dynamics.flexible_body.FlexibleBody`, module docstring there) packs its foreshortening
blocks P₁, P₂ and H = H(L) (``FlexibleBody.foreshortening``, m × m, every plane). The body's
inertia (:func:`_body`) takes S₁,x − ½ δᵀP₁δ, Q_xx − δᵀP₂δ and the axial row −(P₁δ)ᵀ of
A(δ), with their rates in Ṁν and their δ-gradients in ∂T/∂δ; the tip map
(:func:`_kinematics`) moves the tip back by ½ δᵀHδ along the beam axis (r_x = L − ½ δᵀHδ),
with −(Hδ)ᵀ in the x row of U, at the complex q of the complex step (so J̇ q̇ carries it).
Gravity, the base acceleration −g, acts through S₁,x and the tips with no further term:
the v rows of M_b are ∂S₁/∂δ exactly (d/dt S₁ = A(δ) δ̇), as the tip's velocity row is
the derivative of its position.

**Pinned frames bending in two planes.** A pinned (chord) frame on a revolute link that
also bends out of the joint's plane has its beam frame turned from the link frame by
E = exp(ρ̃), ρ = root δ (``TipMap.root``), and turning relative to it at Γ δ̇, Γ = J_L(ρ) root
(link axes; :mod:`core.dynamics.kinematics`). Its body (``TILTED``) keeps ν = (v, ω, δ̇) in *link*
axes, so S_i stays a selection and the hub and motor rows stay constant (the hub turns
about the joint axis with the in-plane root slope only); the beam's twist is ν_b = Φ ν,
Φ = [[Eᵀ, 0, 0], [0, Eᵀ, EᵀΓ], [0, 0, 1]], and :func:`_tilted_body` turns the beam's
inertia and forces into link axes by virtual power: M_i = Φᵀ M_b Φ and
b_i = Φᵀ (Ṁ_b ν_b + g(ν_b, M_b ν_b) − (0, 0, ∂T/∂δ) + M_b Φ̇ ν), Φ̇ by the complex step of E
and Γ. The tip map (:func:`_kinematics`) reads the tip in link axes, R_e ← E R_e,
r ← E r, U ← E U + Γ × (E r), J_L Θ ← E J_L Θ + Γ, at the complex q (so J̇ q̇ carries the
root rotation). Gravity, the base acceleration −g, needs nothing more.
"""

from __future__ import annotations

import cmath

import numpy as np
from numba import njit

from core.dynamics.kinematics import check_free_length
from core.numerics.derivatives import COMPLEX_STEP
from core.numerics.rotations import spatial_inertia

#: Columns of the integer table, one row per link.
(
    KIND,  # 0 revolute, 1 prismatic
    FLEXIBLE,
    M_COORDS,
    COLUMN,  # first flexible coordinate of the link in q
    PLANES,
    HAS_HUB_INERTIA,
    HAS_ARMATURE,
    HAS_PAYLOAD,
    O_SCALARS,
    O_RIGID,
    O_PAYLOAD,
    O_HUB,
    O_ARMATURE,
    O_A,
    O_B,
    O_SKEW_B,
    O_N,
    O_ROT_OO,
    O_ROT_OD,
    O_MDD,
    O_U,
    O_THETA,
    TRANSLATING,  # a flexible link sliding through the hub of its prismatic joint
    SIZE,  # 6 + m (+ 1 for a translating link's l̇): the length of ν_i
    O_AL,
    O_BL,
    O_P,
    O_R0,
    FOLLOWING,  # a translating link whose shapes follow its free length (F1, F2 nonzero)
    STIFFENING,  # a fixed-length link with geometric stiffening (the axial foreshortening)
    O_P1,  # its foreshortening blocks P₁, P₂ (inertia) and H = H(L) (tip), each m × m
    O_P2,
    O_H,
    TILTED,  # a pinned (chord) frame bending in two planes: the beam frame turns by exp(ρ̃), ρ = root δ
    O_ROOT,  # its ``TipMap.root`` (3 × m)
) = range(35)
COLUMNS = 35
#: Scalars of each link at ``O_SCALARS``.
(
    S_THETA_OFFSET,
    S_D,
    S_A,
    S_ALPHA,
    S_LENGTH,
    S_MASS,
    S_FIRST_X,
    S_SECOND_X,
    S_HUB_MASS,
    S_HUB_INERTIA,
    S_ARMATURE,
    S_RHO,  # mass per length of a translating link
    S_L0,  # the real free length at which a following link's F, F1, F2 were written
) = range(13)
SCALARS = 13

SERIES_THRESHOLD = 1e-4  # as core.numerics.rotations


# -- small kernels (explicit loops: BLAS calls cost ~1 µs each on 6×6 blocks) -----------------------


@njit(cache=True, inline="always")
def _ratios(x):
    """sin r/r, (1 − cos r)/r², (r − sin r)/r³ of r² = x (complex), Taylor series near 0."""
    if abs(x) < SERIES_THRESHOLD:
        a = 1 - x / 6 + x**2 / 120 - x**3 / 5040
        b = 0.5 - x / 24 + x**2 / 720 - x**3 / 40320
        c = 1 / 6 - x / 120 + x**2 / 5040 - x**3 / 362880
        return a, b, c
    r = cmath.sqrt(x)
    return cmath.sin(r) / r, (1 - cmath.cos(r)) / x, (r - cmath.sin(r)) / (x * r)


@njit(cache=True, inline="always")
def _at(F, S, x, dl):
    """Entry x of a translating row at free length l = l₀ + dl: F + dl (F1 + ½ dl F2), the
    Taylor polynomial from the l-derivatives F1 = F[S + x], F2 = F[2S + x] (S = F.size // 3);
    exactly F[x] for frozen shapes (F1 = F2 = 0, dl = 0)."""
    if dl == 0:  # frozen shapes, and the complex steps along δ: skip the two far loads
        return F[x] + 0 * dl
    return F[x] + dl * (F[S + x] + 0.5 * dl * F[2 * S + x])


@njit(cache=True, inline="always")
def _rate_at(F, S, x, dl):
    """d/dl of :func:`_at`: F1 + dl F2."""
    return F[S + x] + dl * F[2 * S + x]


@njit(cache=True, inline="always")
def _free_length_step(F, row, l):
    """dl = l − l₀ of a translating row (0 for frozen shapes), l₀ = the stored S_L0."""
    if row[FOLLOWING]:
        return l - F[row[O_SCALARS] + S_L0]
    return 0j


@njit(cache=True, inline="always")
def _left_jacobian(th, rb, rc, v0, v1, v2):
    """J_L(θ) v = v + b θ̃v + c θ̃²v (b, c of :func:`_ratios`)."""
    w0 = th[1] * v2 - th[2] * v1
    w1 = th[2] * v0 - th[0] * v2
    w2 = th[0] * v1 - th[1] * v0
    z0 = th[1] * w2 - th[2] * w1
    z1 = th[2] * w0 - th[0] * w2
    z2 = th[0] * w1 - th[1] * w0
    return v0 + rb * w0 + rc * z0, v1 + rb * w1 + rc * z1, v2 + rb * w2 + rc * z2


@njit(cache=True, inline="always")
def _rotation(th, R):
    """R = exp(θ̃) = 1 + a θ̃ + b θ̃² (θ̃² = θθᵀ − x 1, x = |θ|²) of a complex 3-vector θ
    (a, b, c of :func:`_ratios`); returns (b, c), the coefficients of J_L (:func:`_left_jacobian`)."""
    x2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    ra, rb, rc = _ratios(x2)
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


@njit(cache=True)
def _root_rotation(F, row, delta, E, G):
    """E = exp(ρ̃) and Γ = J_L(ρ) root (3 × m) of a tilted link at ρ = root δ
    (:class:`~core.dynamics.kinematics.TipMap` ``root``): its beam frame is the link frame turned by E
    and turns relative to it at Γ δ̇ (in link axes; ``LinkFrames.Jw_body``). ``delta`` (m,)
    complex, so that the complex step carries both."""
    m, o = row[M_COORDS], row[O_ROOT]
    rho = np.zeros(3, dtype=np.complex128)
    for a in range(3):
        for k in range(m):
            rho[a] += F[o + a * m + k] * delta[k]
    rb, rc = _rotation(rho, E)
    for k in range(m):
        G[0, k], G[1, k], G[2, k] = _left_jacobian(rho, rb, rc, F[o + k], F[o + m + k], F[o + 2 * m + k])


@njit(cache=True, inline="always")
def _cross_add(a, b, out, sign):
    """out[:3] += sign · a × b (3-vectors)."""
    out[0] += sign * (a[1] * b[2] - a[2] * b[1])
    out[1] += sign * (a[2] * b[0] - a[0] * b[2])
    out[2] += sign * (a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline="always")
def _gyroscopic(nu, p, out):
    """out[:6] += g(ν, p) = (ω × p_v, ω × p_ω + v × p_v)."""
    _cross_add(nu[3:6], p[:3], out[:3], 1.0)
    _cross_add(nu[3:6], p[3:6], out[3:6], 1.0)
    _cross_add(nu[:3], p[:3], out[3:6], 1.0)


@njit(cache=True)
def _matvec(A, x, rows, cols, out):
    """out[:rows] = A[:rows, :cols] x[:cols]."""
    for i in range(rows):
        acc = 0.0
        for j in range(cols):
            acc += A[i, j] * x[j]
        out[i] = acc


@njit(cache=True)
def _congruence_add(A, I6, cols, out):
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


@njit(cache=True)
def _factor(D, k):
    """(L, ok): the lower Cholesky factor of D[:k, :k]; ok False if D is not positive definite."""
    L = np.zeros((k, k))
    for j in range(k):
        acc = D[j, j]
        for p in range(j):
            acc -= L[j, p] * L[j, p]
        if not acc > 0.0:
            return L, False
        L[j, j] = np.sqrt(acc)
        for i in range(j + 1, k):
            acc = D[i, j]
            for p in range(j):
                acc -= L[i, p] * L[j, p]
            L[i, j] = acc / L[j, j]
    return L, True


@njit(cache=True)
def _cholesky(D, k):
    """Lower Cholesky factor of a body's joint-space inertia D[:k, :k]."""
    L, ok = _factor(D, k)
    if not ok:
        raise np.linalg.LinAlgError("joint-space inertia of a body is not positive definite")
    return L


@njit(cache=True)
def _forward_substitute(L, B, k, cols, out):
    """out[:k, :cols] = L⁻¹ B[:k, :cols] (L lower triangular)."""
    for j in range(cols):
        for i in range(k):
            acc = B[i, j]
            for p in range(i):
                acc -= L[i, p] * out[p, j]
            out[i, j] = acc / L[i, i]


@njit(cache=True)
def _back_substitute(L, b, k, out):
    """out[:k] = L⁻ᵀ b[:k] (L lower triangular)."""
    for i in range(k - 1, -1, -1):
        acc = b[i]
        for p in range(i + 1, k):
            acc -= L[p, i] * out[p]
        out[i] = acc / L[i, i]


@njit(cache=True)
def _tip_map(Rt, r, U, JT, m, out):
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


# -- kinematics: maps, velocities and velocity-product accelerations ----------------------------


@njit(cache=True)
def _kinematics(table, F, q, qd, smax, A_out, P_end, nu_out, c_out, V_end, c_end):
    """One complex pass at q + ih q̇/s (s = max|q̇|), filling (per link i)
    A_out[i] (6, 6 + m_{i−1}) the joint map, P_end[i] (6, 6 + m_i) the payload map,
    ν_i, c_i = J̇_i q̇ − A_i J̇_{i−1} q̇, and the payload twist V_end[i] and c_end[i]."""
    n = table.shape[0]
    S = F.size // 3  # F holds [F, F1, F2]
    speed = 0.0
    for k in range(qd.size):
        speed = max(speed, abs(qd[k]))
    h = COMPLEX_STEP
    back = speed / h  # Im(·) · speed / h = the derivative along q̇
    qc = np.empty(q.size, dtype=np.complex128)
    for k in range(q.size):
        qc[k] = complex(q[k], h * qd[k] / speed) if speed > 0 else complex(q[k], 0.0)
    P = np.zeros((6, smax), dtype=np.complex128)  # the parent's tip map (the base: identity)
    for k in range(6):
        P[k, k] = 1.0
    nu_p = np.zeros(smax, dtype=np.complex128)
    bias_p = np.zeros(smax)
    bias = np.zeros(smax)  # J̇_i q̇
    A = np.empty((6, smax), dtype=np.complex128)
    nu = np.empty(smax, dtype=np.complex128)
    R = np.empty((3, 3), dtype=np.complex128)
    Rt = np.empty((3, 3), dtype=np.complex128)
    r = np.empty(3, dtype=np.complex128)
    th = np.empty(3, dtype=np.complex128)
    mmax = smax - 6
    U = np.empty((3, mmax), dtype=np.complex128)  # U in beam axes, then Rtᵀ U
    Th = np.empty((3, mmax), dtype=np.complex128)  # Θ (at the complex l of a translating link)
    du = np.empty(3, dtype=np.complex128)  # U'(l) δ
    dt = np.empty(3, dtype=np.complex128)  # Θ'(l) δ
    JT = np.empty((3, mmax), dtype=np.complex128)  # J_L Θ
    Pe = np.empty((6, smax), dtype=np.complex128)
    E = np.empty((3, 3), dtype=np.complex128)  # a tilted link's root rotation exp(ρ̃)
    Gam = np.empty((3, mmax), dtype=np.complex128)  # and its Γ = J_L(ρ) root
    er = np.empty(3, dtype=np.complex128)
    sp = 6  # the parent's ν size
    for i in range(n):
        row = table[i]
        o = row[O_SCALARS]
        m = row[M_COORDS]
        s = row[SIZE]
        col = row[COLUMN]
        translating = row[TRANSLATING] == 1
        if translating:  # the hub stays: q_i is the free length
            theta = complex(F[o + S_THETA_OFFSET], 0.0)
            d = complex(F[o + S_D], 0.0)
        elif row[KIND] == 0:
            theta = qc[i] + F[o + S_THETA_OFFSET]
            d = complex(F[o + S_D], 0.0)
        else:
            theta = complex(F[o + S_THETA_OFFSET], 0.0)
            d = qc[i] + F[o + S_D]
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
            if translating:  # into the beam axes: x_b = z, y_b = x, z_b = y of the link frame
                A[0, j], A[1, j], A[2, j] = A[2, j], A[0, j], A[1, j]
                A[3, j], A[4, j], A[5, j] = A[5, j], A[3, j], A[4, j]
        for k in range(6):
            acc = 0j
            for j in range(sp):
                acc += A[k, j] * nu_p[j]
            nu[k] = acc
        if translating:
            nu[6 + m] = qd[i]  # l̇
        else:
            nu[5 if row[KIND] == 0 else 2] += qd[i]
        for k in range(m):
            nu[6 + k] = qd[col + k]
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
        # The end frame R_e = exp(θ̃) (flexible) or 1, at r, and the tip frame R_e Rx(α).
        for a in range(3):
            for b in range(3):
                R[a, b] = 1.0 if a == b else 0.0
        r[0], r[1], r[2] = F[o + S_A], 0.0, 0.0
        if row[FLEXIBLE]:
            oU, oT = row[O_U], row[O_THETA]
            length = qc[i] if translating else complex(F[o + S_LENGTH], 0.0)
            dl = _free_length_step(F, row, qc[i]) if translating else 0j  # U(l), Θ(l) if following
            r[0] = length
            scale = 1.0 / length if translating else 1.0 + 0j  # θ = Θδ/l on a translating link
            for a in range(3):
                acc_r = 0j
                acc_t = 0j
                for k in range(m):
                    U[a, k] = _at(F, S, oU + a * m + k, dl)
                    Th[a, k] = _at(F, S, oT + a * m + k, dl)
                    acc_r += U[a, k] * qc[col + k]
                    acc_t += Th[a, k] * qc[col + k]
                r[a] += acc_r
                th[a] = acc_t * scale
            if row[STIFFENING]:  # the tip moves back by ½ δᵀHδ: r_x −= ½ δᵀHδ, U's x row −(Hδ)ᵀ
                oH = row[O_H]
                shortening = 0j
                for p in range(m):
                    acc = 0j
                    for k in range(m):
                        acc += F[oH + p * m + k] * qc[col + k]
                    U[0, p] -= acc
                    shortening += qc[col + p] * acc
                r[0] -= 0.5 * shortening
            rb, rc = _rotation(th, R)  # R = exp(θ̃), J_L = 1 + b θ̃ + c θ̃²
            for k in range(m):  # J_L Θ, column by column
                j0, j1, j2 = _left_jacobian(th, rb, rc, Th[0, k], Th[1, k], Th[2, k])
                JT[0, k], JT[1, k], JT[2, k] = j0 * scale, j1 * scale, j2 * scale
            if translating:
                # l̇ slides the tip out along x_b and deflects it by U'(l) δ (following shapes),
                # and turns it by J_L ∂θ/∂l = J_L(Θ'(l) δ/l) − θ/l (J_L θ = θ); the end frame
                # is exp(θ̃) turned back to the link's axes: R_e Rbᵀ.
                for a in range(3):
                    du[a] = dt[a] = 0j
                if row[FOLLOWING]:
                    for a in range(3):
                        for k in range(m):
                            du[a] += _rate_at(F, S, oU + a * m + k, dl) * qc[col + k]
                            dt[a] += _rate_at(F, S, oT + a * m + k, dl) * qc[col + k]
                U[0, m], U[1, m], U[2, m] = 1.0 + du[0], du[1], du[2]
                j0, j1, j2 = _left_jacobian(th, rb, rc, dt[0], dt[1], dt[2])
                JT[0, m], JT[1, m], JT[2, m] = (
                    (j0 - th[0]) * scale,
                    (j1 - th[1]) * scale,
                    (j2 - th[2]) * scale,
                )
                for a in range(3):
                    R[a, 0], R[a, 1], R[a, 2] = R[a, 1], R[a, 2], R[a, 0]
            if row[TILTED]:
                # The beam axes are the link axes turned by E = exp(ρ̃), which turn at Γ δ̇
                # (core.dynamics.kinematics): the end frame, the tip and its δ̇ columns into link axes,
                # R ← E R, r ← E r, U ← E U + Γ × (E r), J_L Θ ← E J_L Θ + Γ (at the complex
                # q, so that J̇ q̇ carries the root rotation too).
                _root_rotation(F, row, qc[col : col + m], E, Gam)
                for a in range(3):
                    er[a] = E[a, 0] * r[0] + E[a, 1] * r[1] + E[a, 2] * r[2]
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
                    r[a] = er[a]
                    e0, e1, e2 = R[0, a], R[1, a], R[2, a]
                    for b in range(3):
                        R[b, a] = E[b, 0] * e0 + E[b, 1] * e1 + E[b, 2] * e2
        if row[HAS_PAYLOAD]:
            _tip_map(R, r, U, JT, s - 6, Pe)
            for k in range(6):
                acc = 0j
                known = 0.0
                for j in range(s):
                    P_end[i, k, j] = Pe[k, j].real
                    acc += Pe[k, j] * nu[j]
                    known += Pe[k, j].real * bias[j]
                V_end[i, k] = acc.real
                c_end[i, k] = acc.imag * back - known
        ca, sa = np.cos(F[o + S_ALPHA]), np.sin(F[o + S_ALPHA])
        for a in range(3):  # Rt = R Rx(α)
            Rt[a, 0] = R[a, 0]
            Rt[a, 1] = ca * R[a, 1] + sa * R[a, 2]
            Rt[a, 2] = -sa * R[a, 1] + ca * R[a, 2]
        _tip_map(Rt, r, U, JT, s - 6, P)
        for k in range(s):
            nu_p[k] = nu[k]
            bias_p[k] = bias[k]
        sp = s


# -- body inertia ---------------------------------------------------------------------------------


@njit(cache=True)
def _beam_body(F, row, q, qd, nu, want_force, M, b, work):
    """M_b of a fixed-length flexible link into M[:s, :s] (beam axes, ν = (v, ω, δ̇)) and, if
    ``want_force``, Ṁ_b ν − (0, 0, ∂T/∂δ) into b[:s] (the gyroscopic term and the hub are
    :func:`_body`'s)."""
    o = row[O_SCALARS]
    m = row[M_COORDS]
    col, planes, No, mm = row[COLUMN], row[PLANES], row[O_N], m * m
    oA, oB = row[O_A], row[O_B]
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
    S1[0] += F[o + S_FIRST_X]
    Q = np.zeros((3, 3))
    dQ = np.zeros((3, 3))
    Q[0, 0] = F[o + S_SECOND_X]
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
    stiffening = row[STIFFENING] == 1
    P1d = work[3]  # P₁δ: the axial row of A(δ) is −(P₁δ)ᵀ
    P1r = work[4]  # P₁δ̇
    P2d = work[5]  # P₂δ
    if stiffening:  # S₁,x − ½ δᵀP₁δ and Q_xx − δᵀP₂δ, with their rates
        oP1, oP2 = row[O_P1], row[O_P2]
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
    mass_ = F[o + S_MASS]
    oR, oK, oD, oM = row[O_ROT_OO], row[O_SKEW_B], row[O_ROT_OD], row[O_MDD]
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
        _cross_add(dS1, w, b[:3], -1.0)
        _cross_add(dS1, v, b[3:6], 1.0)
        dtr = dQ[0, 0] + dQ[1, 1] + dQ[2, 2]
        for a in range(3):
            b[3 + a] += dtr * w[a] - (dQ[a, 0] * w[0] + dQ[a, 1] * w[1] + dQ[a, 2] * w[2])
        vw = np.zeros(3)
        _cross_add(v, w, vw, 1.0)
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


@njit(cache=True)
def _body(table, F, i, q, qd, nu, want_force, M, b, work):
    """Fill M[:s, :s] with M_i of body i (its axes; a tilted link's: its link axes) and, if
    ``want_force``, b[:s] with Ṁ ν + g(ν, M ν) − (0, 0, ∂T/∂δ) (FlexibleBody.mass_matrix
    and kinetic_gradient).
    ``work`` is scratch of shape (6, s_max)."""
    row = table[i]
    o = row[O_SCALARS]
    s = row[SIZE]
    for a in range(s):
        b[a] = 0.0
        for c in range(s):
            M[a, c] = 0.0
    if row[TRANSLATING]:
        _translating_body(F, row, i, q, qd, nu, want_force, M, b)
    elif row[TILTED]:
        _tilted_body(F, row, q, qd, nu, want_force, M, b, work)
    elif row[FLEXIBLE]:
        _beam_body(F, row, q, qd, nu, want_force, M, b, work)
    else:
        oR = row[O_RIGID]
        for a in range(6):
            for c in range(6):
                M[a, c] = F[oR + 6 * a + c]
    hub = F[o + S_HUB_MASS]
    for a in range(3):
        M[a, a] += hub
    if row[HAS_HUB_INERTIA]:
        oH, inertia = row[O_HUB], F[o + S_HUB_INERTIA]
        for a in range(s):
            for c in range(s):
                M[a, c] += inertia * F[oH + a] * F[oH + c]
    if want_force:
        p = np.zeros(6)
        if row[TILTED]:  # the beam's gyroscopic forces are in b already: the hub's alone
            for a in range(3):
                p[a] = hub * nu[a]
            if row[HAS_HUB_INERTIA]:
                oH, spin = row[O_HUB], 0.0
                for c in range(s):
                    spin += F[oH + c] * nu[c]
                for a in range(6):
                    p[a] += F[o + S_HUB_INERTIA] * F[oH + a] * spin
        else:
            _matvec(M, nu, 6, s, p)
        _gyroscopic(nu, p, b)


@njit(cache=True)
def _root_frames(F, row, q, qd, rates):
    """(E, Γ, Ė, Γ̇) of a tilted link at real q (:func:`_root_rotation`), the rates along q̇
    by the complex step if ``rates`` (else zero)."""
    m, col = row[M_COORDS], row[COLUMN]
    speed = 0.0
    if rates:
        for k in range(m):
            speed = max(speed, abs(qd[col + k]))
    h = COMPLEX_STEP
    delta = np.empty(m, dtype=np.complex128)
    for k in range(m):
        delta[k] = complex(q[col + k], h * qd[col + k] / speed) if speed > 0 else complex(q[col + k], 0.0)
    E = np.empty((3, 3), dtype=np.complex128)
    G = np.empty((3, m), dtype=np.complex128)
    _root_rotation(F, row, delta, E, G)
    back = speed / h
    return np.ascontiguousarray(E.real), np.ascontiguousarray(G.real), E.imag * back, G.imag * back


@njit(cache=True)
def _tilted_body(F, row, q, qd, nu, want_force, M, b, work):
    """M_i and (if ``want_force``) its forces Ṁν + g(ν, Mν) − (0, 0, ∂T/∂δ) of a tilted link
    (a pinned frame bending in two planes) in link axes, ν = (v, ω, δ̇).

    Its beam frame is the link frame turned by E = exp(ρ̃) and turning at Γ δ̇
    (:func:`_root_rotation`), so the beam-axes twist is ν_b = Φ ν with

        Φ = [[Eᵀ, 0, 0], [0, Eᵀ, EᵀΓ], [0, 0, 1]].

    The beam's inertia M_b and forces f_b = M_b ν̇_b + Ṁ_b ν_b + g(ν_b, M_b ν_b) − (0, 0, ∂T/∂δ)
    are those of :func:`_beam_body` at ν_b, with ν̇_b = Φ ν̇ + Φ̇ ν; by virtual power
    (δν_b = Φ δν) the link-axes forces are Φᵀ f_b, i.e. M_i = Φᵀ M_b Φ and
    b_i = Φᵀ (Ṁ_b ν_b + g(ν_b, M_b ν_b) − (0, 0, ∂T/∂δ) + M_b Φ̇ ν). The hub stays on the link
    axes (:func:`_body`): it turns about the joint axis, with the in-plane root slope only."""
    m, s = row[M_COORDS], row[SIZE]
    E, G, dE, dG = _root_frames(F, row, q, qd, want_force)
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
    _beam_body(F, row, q, qd, nu_b, want_force, M, b, work)
    if want_force:
        p = np.zeros(6)
        _matvec(M, nu_b, 6, s, p)
        _gyroscopic(nu_b, p, b)
        for a in range(s):
            acc = 0.0
            for c in range(6):
                acc += M[a, c] * rate[c]
            b[a] += acc
        _to_link_axes(b, s, E, G)
    # M ← Φᵀ M Φ (M symmetric): Φᵀ M, transposed (= M Φ), then Φᵀ M Φ.
    _turn_columns(M, s, E, G)
    for a in range(s):
        for c in range(a):
            M[a, c], M[c, a] = M[c, a], M[a, c]
    _turn_columns(M, s, E, G)


@njit(cache=True)
def _to_link_axes(x, s, E, G):
    """x[:s] ← Φᵀ x of :func:`_tilted_body` (a force in beam axes to link axes): the v and ω
    rows turned by E, the δ rows gaining Γᵀ of the turned ω rows."""
    for r in (0, 3):
        x0, x1, x2 = x[r], x[r + 1], x[r + 2]
        for a in range(3):
            x[r + a] = E[a, 0] * x0 + E[a, 1] * x1 + E[a, 2] * x2
    for k in range(s - 6):
        x[6 + k] += G[0, k] * x[3] + G[1, k] * x[4] + G[2, k] * x[5]


@njit(cache=True)
def _turn_columns(M, s, E, G):
    """M[:s, :s] ← Φᵀ M (:func:`_to_link_axes` on every column)."""
    for c in range(s):
        for r in (0, 3):
            x0, x1, x2 = M[r, c], M[r + 1, c], M[r + 2, c]
            for a in range(3):
                M[r + a, c] = E[a, 0] * x0 + E[a, 1] * x1 + E[a, 2] * x2
        for k in range(s - 6):
            M[6 + k, c] += G[0, k] * M[3, c] + G[1, k] * M[4, c] + G[2, k] * M[5, c]


@njit(cache=True)
def _translating_mass(F, row, sigma, M):
    """M_b(δ, l) of a translating link (:meth:`~core.dynamics.flexible_body.TranslatingBody.mass_matrix`)
    into M[:7 + m, :7 + m], for complex σ = (δ, l) (the body's derivatives come by the complex
    step: M_b is not polynomial in l). The unit integrals are read at l (:func:`_at`): constants
    for frozen shapes, Taylor polynomials about the stored l₀ for length-following ones."""
    o, m, planes = row[O_SCALARS], row[M_COORDS], row[PLANES]
    mass, rho, L = F[o + S_MASS], F[o + S_RHO], F[o + S_LENGTH]
    oA, oB, oAl, oBl, No, Po, mm = row[O_A], row[O_B], row[O_AL], row[O_BL], row[O_N], row[O_P], m * m
    S = F.size // 3
    delta = sigma[:m]
    l = sigma[m]
    dl = _free_length_step(F, row, l)
    A0d = np.zeros(3, dtype=np.complex128)
    B0d = np.zeros(3, dtype=np.complex128)
    Ald = np.zeros(3, dtype=np.complex128)
    Bld = np.zeros(3, dtype=np.complex128)
    for a in range(3):
        for k in range(m):
            A0d[a] += _at(F, S, oA + a * m + k, dl) * delta[k]
            B0d[a] += _at(F, S, oB + a * m + k, dl) * delta[k]
            Ald[a] += _at(F, S, oAl + a * m + k, dl) * delta[k]
            Bld[a] += _at(F, S, oBl + a * m + k, dl) * delta[k]
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
                    n_pk = _at(F, S, base + p * m + k, dl)
                    p_pk = _at(F, S, pbase + p * m + k, dl)
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
            M[a, 6 + k] = M[6 + k, a] = l * _at(F, S, oA + a * m + k, dl)
    M[0, 4], M[0, 5], M[1, 3], M[1, 5], M[2, 3], M[2, 4] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    M[4, 0], M[5, 0], M[3, 1], M[5, 1], M[3, 2], M[4, 2] = S1[2], -S1[1], -S1[2], S1[0], S1[1], -S1[0]
    oM, oR = row[O_MDD], row[O_R0]
    quadratic = 0j  # δᵀ R₀ δ
    for k in range(m):
        # l² x̃ B₀ (rows y, z) and the δ-dependent axial row
        M[3, 6 + k] = M[6 + k, 3] = l * skew_row[k]
        M[4, 6 + k] = M[6 + k, 4] = -l * l * _at(F, S, oB + 2 * m + k, dl)
        M[5, 6 + k] = M[6 + k, 5] = l * l * _at(F, S, oB + m + k, dl)
        for p in range(m):
            M[6 + k, 6 + p] = l * _at(F, S, oM + k * m + p, dl)
            quadratic += delta[k] * _at(F, S, oR + k * m + p, dl) * delta[p]
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


@njit(cache=True)
def _translating_body(F, row, i, q, qd, nu, want_force, M, b):
    """M_i and (if ``want_force``) Ṁ ν − (0, 0, ∂T/∂σ) of a translating link, σ = (δ, l), by
    the complex step through :func:`_translating_mass` (exact to round-off)."""
    m, col = row[M_COORDS], row[COLUMN]
    s = 7 + m
    h = COMPLEX_STEP
    sigma = np.empty(m + 1, dtype=np.complex128)
    rate = np.empty(m + 1)
    for k in range(m):
        sigma[k], rate[k] = q[col + k], qd[col + k]
    sigma[m], rate[m] = q[i], qd[i]
    Mc = np.zeros((s, s), dtype=np.complex128)
    _translating_mass(F, row, sigma, Mc)
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
        _translating_mass(F, row, step, Mc)
        for a in range(s):
            acc = 0.0
            for c in range(s):
                acc += Mc[a, c].imag * nu[c]
            b[a] += acc * speed / h  # Ṁ ν
    for k in range(m + 1):  # ∂T/∂σ_k = ½ νᵀ ∂M_b/∂σ_k ν
        step = sigma.copy()
        step[k] += 1j * h
        Mc[:, :] = 0
        _translating_mass(F, row, step, Mc)
        acc = 0.0
        for a in range(s):
            for c in range(s):
                acc += nu[a] * Mc[a, c].imag * nu[c]
        b[6 + k] -= 0.5 * acc / h


@njit(cache=True)
def _joint_rows(table, i, rows, cols):
    """Fill rows[:1 + m] with the rows of ν_i that u_i = (q̇_i, δ̇_i) drives (S_i is a selection)
    and cols[:1 + m] with the indices of u_i in q."""
    m = table[i, M_COORDS]
    if table[i, TRANSLATING]:  # u_i = (δ̇_i, l̇_i): internal rates only
        for k in range(m + 1):
            rows[k] = 6 + k
            cols[k] = table[i, COLUMN] + k if k < m else i
        return
    rows[0] = 5 if table[i, KIND] == 0 else 2
    cols[0] = i
    for k in range(m):
        rows[1 + k] = 6 + k
        cols[1 + k] = table[i, COLUMN] + k


@njit(cache=True)
def _armature(table, F, i, a, c):
    """Entry (a, c) of the reflected motor inertia I_r (1, b)(1, b)ᵀ on u_i."""
    if not table[i, HAS_ARMATURE]:
        return 0.0
    o = table[i, O_ARMATURE]
    return F[table[i, O_SCALARS] + S_ARMATURE] * F[o + a] * F[o + c]


@njit(cache=True)
def _payload_terms(table, F, i, s, P_end, V_end, c_end, M, f, acceleration):
    """Add a payload (fixed child at the end frame) to body i: M[:s, :s] += Peᵀ I_p Pe and
    f[:s] += Peᵀ (I_p a_e + g(V_e, I_p V_e)) with a_e = Pe ``acceleration`` + c_e."""
    o = table[i, O_PAYLOAD]
    Ip = F[o : o + 36].reshape(6, 6)
    Pe = P_end[i]
    if M.shape[0]:
        _congruence_add(Pe, Ip, s, M)
    ae = c_end[i].copy()
    for k in range(6):
        for j in range(s):
            ae[k] += Pe[k, j] * acceleration[j]
    fe = np.zeros(6)
    pe = np.zeros(6)
    _matvec(Ip, ae, 6, 6, fe)
    _matvec(Ip, V_end[i], 6, 6, pe)
    _gyroscopic(V_end[i], pe, fe)
    for j in range(s):
        acc = 0.0
        for k in range(6):
            acc += Pe[k, j] * fe[k]
        f[j] += acc


@njit(cache=True)
def _gravity_correction(table, F, q, A, gravity, out):
    """out += G − G_base for the free lengths of translating links, where G_base is what the
    base acceleration −g gives.

    The sliding beam's kinetic energy leaves out the convective term l̇ ∂w/∂s (SPEC §4). The
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
        if not row[TRANSLATING]:
            continue
        m, col, oA, oAl = row[M_COORDS], row[COLUMN], row[O_A], row[O_AL]
        l = q[i]
        dl = _free_length_step(F, row, l).real  # 0 once the chain has written l
        acc = 0.0
        for a in range(3):
            for k in range(m):
                x = oA + a * m + k
                rate = _at(F, S, x, dl) + l * _rate_at(F, S, x, dl) - _at(F, S, oAl + a * m + k, dl)
                acc += g[a] * rate * q[col + k]
        out[i] -= acc


@njit(cache=True)
def _pass(table, F, q, qd, smax):
    n = table.shape[0]
    A = np.zeros((n, 6, smax))
    P_end = np.zeros((n, 6, smax))
    nu = np.zeros((n, smax))
    c = np.zeros((n, smax))
    V_end = np.zeros((n, 6))
    c_end = np.zeros((n, 6))
    _kinematics(table, F, q, qd, smax, A, P_end, nu, c, V_end, c_end)
    return A, P_end, nu, c, V_end, c_end


# -- the three algorithms -------------------------------------------------------------------------


@njit(cache=True)
def _base_acceleration(gravity, smax):
    """The base's acceleration (−g, 0): gravity as a uniform acceleration of the whole arm."""
    out = np.zeros(smax)
    for r in range(3):
        out[r] = -gravity[r]
    return out


@njit(cache=True)
def _propagate(A_i, parent, c_i, s, sp, out):
    """out[:s] = c_i + A_i parent (the body's acceleration before its own joint rates)."""
    for j in range(s):
        out[j] = c_i[j]
    for r in range(6):
        acc = 0.0
        for j in range(sp):
            acc += A_i[r, j] * parent[j]
        out[r] += acc


@njit(cache=True)
def forward(table, F, smax, q, qd, applied, gravity):
    """q̈ from the articulated-body algorithm: M q̈ + h + G = ``applied``.

    ``applied`` holds every other generalized force (B(τ + τ_c) − D q̇ − ∂V_e/∂q);
    ``gravity`` is the gravitational acceleration in base axes [m/s²].
    """
    n = table.shape[0]
    kmax = smax - 5
    A, P_end, nu, c, V_end, c_end = _pass(table, F, q, qd, smax)
    correction = np.zeros(q.size)
    _gravity_correction(table, F, q, A, gravity, correction)
    applied = applied - correction
    IA = np.zeros((n, smax, smax))
    pA = np.zeros((n, smax))
    work = np.zeros((6, smax))
    zero = np.zeros(smax)
    for i in range(n):
        s = table[i, SIZE]
        _body(table, F, i, q, qd, nu[i], True, IA[i], pA[i], work)
        if table[i, HAS_PAYLOAD]:
            _payload_terms(table, F, i, s, P_end, V_end, c_end, IA[i], pA[i], zero)
    Ls = np.zeros((n, kmax, kmax))
    W = np.zeros((n, kmax, smax))
    t = np.zeros((n, kmax))
    rows = np.empty(kmax, dtype=np.int64)
    cols = np.empty(kmax, dtype=np.int64)
    D = np.empty((kmax, kmax))
    UT = np.empty((kmax, smax))
    tau = np.empty(kmax)
    Iart = np.empty((6, 6))
    pa = np.empty(6)
    Wc = np.empty(kmax)
    for i in range(n - 1, -1, -1):
        m = table[i, M_COORDS]
        s, k = table[i, SIZE], 1 + m
        _joint_rows(table, i, rows, cols)
        Ia = IA[i]
        for a in range(k):
            for b in range(k):
                D[a, b] = Ia[rows[a], rows[b]] + _armature(table, F, i, a, b)
            for j in range(s):
                UT[a, j] = Ia[rows[a], j]
            tau[a] = applied[cols[a]] - pA[i, rows[a]]
        L = _cholesky(D, k)
        Ls[i, :k, :k] = L
        _forward_substitute(L, UT, k, s, W[i])
        for a in range(k):  # t = L⁻¹ τ
            acc = tau[a]
            for p in range(a):
                acc -= L[a, p] * t[i, p]
            t[i, a] = acc / L[a, a]
        if i == 0:
            break
        Wi = W[i]
        for a in range(k):
            acc = 0.0
            for j in range(s):
                acc += Wi[a, j] * c[i, j]
            Wc[a] = acc
        for r in range(6):
            acc = pA[i, r]
            for j in range(s):
                acc += Ia[r, j] * c[i, j]
            for a in range(k):
                acc += Wi[a, r] * (t[i, a] - Wc[a])
            pa[r] = acc
            for r2 in range(6):
                acc2 = Ia[r, r2]
                for a in range(k):
                    acc2 -= Wi[a, r] * Wi[a, r2]
                Iart[r, r2] = acc2
        sp = table[i - 1, SIZE]
        _congruence_add(A[i], Iart, sp, IA[i - 1])
        for j in range(sp):
            acc = 0.0
            for r in range(6):
                acc += A[i, r, j] * pa[r]
            pA[i - 1, j] += acc
    qdd = np.zeros(q.size)
    parent = _base_acceleration(gravity, smax)
    a_ = np.empty(smax)
    rhs = np.empty(kmax)
    ud = np.empty(kmax)
    sp = 6
    for i in range(n):
        m = table[i, M_COORDS]
        s, k = table[i, SIZE], 1 + m
        _joint_rows(table, i, rows, cols)
        _propagate(A[i], parent, c[i], s, sp, a_)
        for a in range(k):
            acc = t[i, a]
            for j in range(s):
                acc -= W[i, a, j] * a_[j]
            rhs[a] = acc
        _back_substitute(Ls[i], rhs, k, ud)
        for a in range(k):
            qdd[cols[a]] = ud[a]
            a_[rows[a]] += ud[a]
        for j in range(s):
            parent[j] = a_[j]
        sp = s
    return qdd


@njit(cache=True)
def inverse(table, F, smax, q, qd, qdd, gravity):
    """M q̈ + h(q, q̇) + G(q) by the recursive Newton–Euler algorithm, shape (n_dof,)."""
    n = table.shape[0]
    A, P_end, nu, c, V_end, c_end = _pass(table, F, q, qd, smax)
    f = np.zeros((n, smax))
    M = np.zeros((smax, smax))
    b = np.zeros(smax)
    work = np.zeros((6, smax))
    none = np.zeros((0, 0))
    rows = np.empty(smax, dtype=np.int64)
    cols = np.empty(smax, dtype=np.int64)
    parent = _base_acceleration(gravity, smax)
    a_ = np.empty(smax)
    sp = 6
    for i in range(n):
        m = table[i, M_COORDS]
        s = table[i, SIZE]
        _joint_rows(table, i, rows, cols)
        _propagate(A[i], parent, c[i], s, sp, a_)
        for j in range(1 + m):
            a_[rows[j]] += qdd[cols[j]]
        _body(table, F, i, q, qd, nu[i], True, M, b, work)
        for r in range(s):
            acc = b[r]
            for j in range(s):
                acc += M[r, j] * a_[j]
            f[i, r] = acc
        if table[i, HAS_PAYLOAD]:
            _payload_terms(table, F, i, s, P_end, V_end, c_end, none, f[i], a_)
        for j in range(s):
            parent[j] = a_[j]
        sp = s
    out = np.zeros(q.size)
    for i in range(n - 1, -1, -1):
        m = table[i, M_COORDS]
        _joint_rows(table, i, rows, cols)
        for a in range(1 + m):
            acc = f[i, rows[a]]
            for c_ in range(1 + m):
                acc += _armature(table, F, i, a, c_) * qdd[cols[c_]]
            out[cols[a]] = acc
        if i > 0:
            sp = table[i - 1, SIZE]
            for j in range(sp):
                acc = 0.0
                for r in range(6):
                    acc += A[i, r, j] * f[i, r]
                f[i - 1, j] += acc
    _gravity_correction(table, F, q, A, gravity, out)
    return out


@njit(cache=True)
def mass(table, F, smax, q):
    """M(q) by the composite-rigid-body algorithm, shape (n_dof, n_dof)."""
    n = table.shape[0]
    zero = np.zeros(q.size)
    A, P_end, nu, _, V_end, c_end = _pass(table, F, q, zero, smax)
    IC = np.zeros((n, smax, smax))
    b = np.zeros(smax)
    work = np.zeros((6, smax))
    f = np.zeros(smax)
    for i in range(n):
        s = table[i, SIZE]
        _body(table, F, i, q, zero, nu[i], False, IC[i], b, work)
        if table[i, HAS_PAYLOAD]:
            _payload_terms(table, F, i, s, P_end, V_end, c_end, IC[i], f, zero)
    for i in range(n - 1, 0, -1):
        sp = table[i - 1, SIZE]
        _congruence_add(A[i], IC[i, :6, :6].copy(), sp, IC[i - 1])
    out = np.zeros((q.size, q.size))
    rows = np.empty(smax, dtype=np.int64)
    cols = np.empty(smax, dtype=np.int64)
    rj = np.empty(smax, dtype=np.int64)
    cj = np.empty(smax, dtype=np.int64)
    force = np.empty((smax, smax - 5))
    up = np.empty((smax, smax - 5))
    for i in range(n):
        m = table[i, M_COORDS]
        s, k = table[i, SIZE], 1 + m
        _joint_rows(table, i, rows, cols)
        for a in range(s):  # IC S: the force per unit ü_i, body i's axes
            for b_ in range(k):
                force[a, b_] = IC[i, a, rows[b_]]
        for a in range(k):
            for b_ in range(a, k):
                value = 0.5 * (force[rows[a], b_] + force[rows[b_], a])
                value += _armature(table, F, i, a, b_)
                out[cols[a], cols[b_]] = out[cols[b_], cols[a]] = value
        for j in range(i - 1, -1, -1):
            mj = table[j, M_COORDS]
            sj = table[j, SIZE]
            for a in range(sj):  # to body j's ν
                for b_ in range(k):
                    acc = 0.0
                    for r in range(6):
                        acc += A[j + 1, r, a] * force[r, b_]
                    up[a, b_] = acc
            _joint_rows(table, j, rj, cj)
            for a in range(1 + mj):
                for b_ in range(k):
                    out[cj[a], cols[b_]] = out[cols[b_], cj[a]] = up[rj[a], b_]
            for a in range(6):
                for b_ in range(k):
                    force[a, b_] = up[a, b_]
    return out


@njit(cache=True)
def _cholesky_solve(M, b):
    """M⁻¹ b by the Cholesky factor of the symmetric positive definite M."""
    n = b.size
    L, ok = _factor(M, n)
    if not ok:
        raise np.linalg.LinAlgError("mass matrix is not positive definite")
    y = np.empty(n)
    for i in range(n):
        acc = b[i]
        for p in range(i):
            acc -= L[i, p] * y[p]
        y[i] = acc / L[i, i]
    out = np.empty(n)
    _back_substitute(L, y, n, out)
    return out


@njit(cache=True)
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
    u = B.T @ qd
    friction = np.empty(u.size)
    for j in range(u.size):
        if coulomb[j] == 0.0:
            friction[j] = 0.0
        elif epsilon > 0.0:
            friction[j] = -coulomb[j] * np.tanh(u[j] / epsilon)
        else:
            friction[j] = -coulomb[j] * np.sign(u[j])
    Dqd = D @ qd
    applied = B @ (tau + friction) - Dqd - K @ q
    if composite:
        qdd = _cholesky_solve(
            mass(table, F, smax, q), applied - inverse(table, F, smax, q, qd, 0.0 * q, gravity)
        )
    else:
        qdd = forward(table, F, smax, q, qd, applied, gravity)
    out = np.empty(2 * n + 2)
    out[:n] = qd
    out[n : 2 * n] = qdd
    out[2 * n] = u @ tau
    out[2 * n + 1] = qd @ Dqd - u @ friction
    return out


@njit(cache=True)
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


# -- packing a model ------------------------------------------------------------------------------


def _writable(x: np.ndarray) -> np.ndarray:
    """``x`` itself, or a contiguous copy if it is read-only or strided (numba compiles
    either as a separate type: one more compilation of every kernel, ~20 s, for nothing)."""
    return x if x.flags.writeable and x.flags.c_contiguous else np.array(x, dtype=float)


class CompiledChain:
    """The flat arrays of a :class:`~core.dynamics.engine.ChainModel` and the compiled algorithms on them.

    Built by :func:`compile_chain`. Every method takes real, finite, contiguous float
    arrays of the model's sizes (the model checks them).
    """

    def __init__(self, table: np.ndarray, buffer: np.ndarray, gravity: np.ndarray, arm, following=()) -> None:
        self.table = table
        #: [F, F1, F2]: the values and the first and second l-derivatives (F1, F2 nonzero only
        #: on the rows of length-following translating links, rewritten by _configuration).
        self.buffer = buffer
        self.gravity = gravity
        self.smax = int(table[:, SIZE].max())
        self._zero_gravity = np.zeros(3)
        self._arm = arm
        self._translating = [i + 1 for i in np.flatnonzero(table[:, TRANSLATING])]
        #: (joint index, body, start, stop, S_L0 offset, plane pairs, chord tip) per following link.
        self._following = tuple(following)

    @property
    def _parts(self) -> np.ndarray:
        """The buffer as (F, F1, F2), shape (3, S): a view, taken afresh (a stored view would
        stop aliasing the buffer in a pickled or copied chain)."""
        return self.buffer.reshape(3, -1)

    def _configuration(self, q: np.ndarray) -> np.ndarray:
        """``q`` ready for the kernels, each free length checked (ValueError naming the joint),
        and the rows of every length-following link written at its free length q_i (once per
        new q_i: :meth:`TranslatingBody.kernel_taylor` and one slice assignment)."""
        for number in self._translating:
            check_free_length(self._arm, number, q[number - 1])
        parts = self._parts
        for i, body, start, stop, at, pairs, chord in self._following:
            l = float(q[i])
            if parts[0, at] != l:
                parts[:, start:stop] = _translating_rows(body.kernel_taylor(l), pairs, 3, chord)
                parts[0, at] = l
        return _writable(q)

    def invalidate(self) -> None:
        """Forget the free lengths the rows of length-following links were written at, so that
        the next call rewrites them (their shapes changed at the same l, e.g. other roots)."""
        parts = self._parts
        for *_, at, _pairs, _chord in self._following:
            parts[0, at] = np.nan

    def forward(self, q, qd, applied) -> np.ndarray:
        """q̈ with M q̈ + h + G = applied."""
        return forward(
            self.table,
            self.buffer,
            self.smax,
            self._configuration(q),
            _writable(qd),
            _writable(applied),
            self.gravity,
        )

    def solve(self, q, rhs) -> np.ndarray:
        """M(q)⁻¹ rhs (the recursion at rest, no gravity)."""
        return forward(
            self.table,
            self.buffer,
            self.smax,
            self._configuration(q),
            0 * q,
            _writable(rhs),
            self._zero_gravity,
        )

    def inverse(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """M q̈ + h + G (G left out if not ``gravity``)."""
        g = self.gravity if gravity else self._zero_gravity
        return inverse(
            self.table, self.buffer, self.smax, self._configuration(q), _writable(qd), _writable(qdd), g
        )

    def bias(self, q, qd) -> np.ndarray:
        """h(q, q̇) = C(q, q̇) q̇."""
        return inverse(
            self.table,
            self.buffer,
            self.smax,
            self._configuration(q),
            _writable(qd),
            0 * q,
            self._zero_gravity,
        )

    def gravity_forces(self, q) -> np.ndarray:
        """G(q)."""
        zero = 0 * q
        return inverse(self.table, self.buffer, self.smax, self._configuration(q), zero, zero, self.gravity)

    def mass(self, q) -> np.ndarray:
        """M(q)."""
        return mass(self.table, self.buffer, self.smax, self._configuration(q))

    def rates_function(self, B, D, K, coulomb, epsilon: float, composite: bool, check):
        """``rates(x, τ) -> ẋ`` by one :func:`rates` call (constant B, D, K; no translating
        link). ``check(q, q̇)`` names a non-finite coordinate when a kernel fails."""
        if self._translating:
            raise ValueError("rates_function needs constant B, D, K (no translating link)")
        table, buffer, smax, gravity = self.table, self.buffer, self.smax, self.gravity
        B, D, K, coulomb = (np.ascontiguousarray(a, dtype=float) for a in (B, D, K, coulomb))
        n = B.shape[0]

        constants = (B, D, K, coulomb, epsilon, gravity, composite)

        def call(kernel, x, tau):
            try:
                return kernel(table, buffer, smax, _writable(x), _writable(tau), *constants)
            except np.linalg.LinAlgError:
                check(x[:n], x[n : 2 * n])  # a non-finite state: named by the model
                raise

        def state_rates(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
            return call(rates, x, tau)

        def jacobian(x: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return call(rates_jacobian, x, tau)

        state_rates.jacobian = jacobian
        return state_rates


#: The arrays of a translating row, in buffer order (O_A, O_B, O_AL, O_BL, O_N, O_P, O_MDD,
#: O_R0, O_U, O_THETA: contiguous); N0 and P are [a][c] blocks, written for the plane pairs.
_TRANSLATING_ARRAYS = ("A0", "B0", "Al0", "Bl0", "N0", "P", "M_δδ0", "R0", "translation", "rotation")


def _translating_rows(arrays, pairs, orders: int, chord: bool = False) -> np.ndarray:
    """The rows of a translating link in buffer order, shape (orders, size): ``arrays`` maps
    the names of ``_TRANSLATING_ARRAYS`` to arrays with a leading axis of ``orders`` derivative
    orders (:meth:`TranslatingBody.kernel_taylor`; 1 for the constants of frozen shapes).
    ``chord``: the rotation rows are (0, −u_z, u_y) of the translation rows (chord tips,
    as :class:`~core.dynamics.engine.ChainModel` builds them), not the given slope rows."""
    parts = []
    for name in _TRANSLATING_ARRAYS:
        x = arrays[name]
        if name == "rotation" and chord:
            u = np.reshape(arrays["translation"], (orders, 3, -1))
            x = np.stack([u[:, 0], -u[:, 2], u[:, 1]], axis=1)
        if name in ("N0", "P"):
            parts.extend(np.reshape(x[a][c], (orders, -1)) for a, c in pairs)
        else:
            parts.append(np.reshape(x, (orders, -1)))
    return np.concatenate(parts, axis=1)


def compile_chain(model) -> CompiledChain:
    """The :class:`CompiledChain` of a ChainModel.

    A translating link with length-following shapes (``body.following`` not None) gets its
    rows written at l₀ = its full length, with their l-derivatives (F1, F2); the chain
    rewrites them at every new free length (:meth:`CompiledChain._configuration`)."""
    arm = model.arm
    table = np.zeros((arm.n_links, COLUMNS), dtype=np.int64)
    chunks: list[np.ndarray] = []
    size = 0
    following = []  # (joint index, body, start, stop, plane pairs, chord, rows (3, stop − start))

    def put(values) -> int:
        nonlocal size
        values = np.ascontiguousarray(values, dtype=float).ravel()
        chunks.append(values)
        size += values.size
        return size - values.size

    for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
        number = i + 1
        row = table[i]
        row[KIND] = 0 if joint.kind == "revolute" else 1
        body = model.bodies.get(number)
        m = body.n_coordinates if body is not None else 0
        translating = number in model.translating
        row[FLEXIBLE], row[M_COORDS], row[TRANSLATING] = body is not None, m, translating
        row[SIZE] = 6 + m + translating
        scalars = np.zeros(SCALARS)
        scalars[[S_THETA_OFFSET, S_D, S_A, S_ALPHA, S_LENGTH]] = (
            joint.theta_offset,
            joint.d,
            joint.a,
            joint.alpha,
            link.length,
        )
        scalars[S_HUB_MASS] = joint.hub_mass
        B = model._B
        own = np.arange(model.n_dof)[model.flex_columns[number]] if body is not None else np.zeros(0, int)
        if joint.hub_inertia and joint.kind == "revolute":
            row[HAS_HUB_INERTIA] = 1
            scalars[S_HUB_INERTIA] = joint.hub_inertia
            row[O_HUB] = put(np.concatenate([[0, 0, 0, 0, 0, 1.0], B[own, i]]))
        if joint.motor_inertia:
            row[HAS_ARMATURE] = 1
            scalars[S_ARMATURE] = joint.reflected_inertia
            u = [*own, i] if translating else [i, *own]  # the order of u_i (see _joint_rows)
            row[O_ARMATURE] = put(B[u, i])
        payloads = model._payloads(number)
        if payloads:
            row[HAS_PAYLOAD] = 1
            row[O_PAYLOAD] = put(
                spatial_inertia(
                    sum(p.mass for p in payloads), np.zeros(3), sum(p.inertia_tensor() for p in payloads)
                )
            )
        if body is None:
            row[O_RIGID] = put(
                spatial_inertia(link.mass, np.asarray(link.com, dtype=float), link.inertia_tensor())
            )
        elif translating:
            tip = model.kinematics.tip_maps[i]
            row[COLUMN], row[PLANES] = model.flex_columns[number].start, body.planes
            scalars[[S_MASS, S_RHO]] = body.mass, body.rho
            pairs = [(a, c) for a in range(2) for c in range(2)] if body.planes == 2 else [(0, 0)]
            chord = arm.tip_rotation != "slope"
            row[FOLLOWING] = getattr(body, "following", None) is not None
            if row[FOLLOWING]:
                scalars[S_L0] = link.length
                rows = _translating_rows(body.kernel_taylor(link.length), pairs, 3, chord)
            else:
                constants = {name: getattr(body, name) for name in _TRANSLATING_ARRAYS[:-2]}
                constants["translation"], constants["rotation"] = tip.translation, tip.rotation
                rows = _translating_rows(constants, pairs, 1)
            # The offsets of the contiguous arrays (the order of _TRANSLATING_ARRAYS).
            mm, blocks = m * m, len(pairs)
            expected = 12 * m + 2 * blocks * mm + 2 * mm + 6 * m
            if rows.shape[1] != expected:
                raise ValueError(
                    f"link {number}: the translating arrays hold {rows.shape[1]} numbers, expected {expected}"
                )
            start = row[O_A] = put(rows[0])
            row[O_B], row[O_AL], row[O_BL], row[O_N] = (
                start + 3 * m,
                start + 6 * m,
                start + 9 * m,
                start + 12 * m,
            )
            row[O_P] = row[O_N] + blocks * mm
            row[O_MDD] = row[O_P] + blocks * mm
            row[O_R0] = row[O_MDD] + mm
            row[O_U] = row[O_R0] + mm
            row[O_THETA] = row[O_U] + 3 * m
            if row[FOLLOWING]:
                following.append((i, body, start, start + expected, pairs, chord, rows))
        else:
            tip = model.kinematics.tip_maps[i]
            row[COLUMN], row[PLANES] = model.flex_columns[number].start, body.planes
            scalars[[S_MASS, S_FIRST_X, S_SECOND_X]] = body.mass, body.first_x, body.second_x
            row[O_A], row[O_B], row[O_SKEW_B] = put(body.A), put(body.B), put(body._skew_x_B)
            blocks = (
                [body.N[a][c] for a in range(2) for c in range(2)] if body.planes == 2 else [body.N[0][0]]
            )
            row[O_N] = put(np.concatenate([b.ravel() for b in blocks]))
            row[O_ROT_OO], row[O_ROT_OD], row[O_MDD] = (
                put(body.rotary_ΩΩ),
                put(body.rotary_Ωδ),
                put(body.M_δδ),
            )
            row[O_U], row[O_THETA] = put(tip.translation), put(tip.rotation)
            if tip.root is not None:  # a pinned frame bending in two planes (core.dynamics.kinematics)
                row[TILTED] = 1
                row[O_ROOT] = put(tip.root)
            if body.stiffening:  # the body's own foreshortening blocks (the tip map's H is its H)
                blocks = body.foreshortening
                row[STIFFENING] = 1
                row[O_P1], row[O_P2], row[O_H] = put(blocks["P1"]), put(blocks["P2"]), put(tip.foreshortening)
        row[O_SCALARS] = put(scalars)
    values = np.concatenate(chunks) if chunks else np.zeros(0)
    buffer = np.zeros(3 * values.size)  # [F, F1, F2]
    parts = buffer.reshape(3, -1)
    parts[0] = values
    chain_following = []
    for i, body, start, stop, pairs, chord, rows in following:
        parts[1:, start:stop] = rows[1:]
        chain_following.append((i, body, start, stop, table[i, O_SCALARS] + S_L0, pairs, chord))
    return CompiledChain(table, buffer, np.asarray(arm.gravity, dtype=float), arm, chain_following)
