"""The data the kernels run on: one record per link (:data:`LINK`) and one flat float buffer.

:func:`~core.dynamics.compiled.packing.compile_chain` fills a structured array of :data:`LINK`
records (the *table*, one row per link: what the link is, its sizes and scalars, and where its
arrays start in the buffer) and the buffer ``F`` of every body's arrays, each C-ordered at its
offset. The buffer holds three parts of one size S, ``[F, F1, F2]``: the values, and for the
rows of a translating link whose shapes follow its free length their first and second
l-derivatives at fixed η (zero elsewhere). The kernels read a link's fields by name
(``row.mass``, ``F[row.o_A + a * m + k]``); this module is the one place that defines them.

**Length-following shapes.** Such a link's unit integrals (A₀, B₀, A_l0, B_l0, N₀, P, M_δδ0,
R₀) and tip map rows (U, Θ) are functions of l, needed at the complex l of the complex step.
:meth:`~core.dynamics.compiled.packing.CompiledChain._configuration` writes their F, F1, F2 from
``TranslatingBody.kernel_taylor`` whenever the free length changes (``l0`` records the l₀ they
were written at). Every read of those arrays is the Taylor polynomial F + dl (F1 + ½ dl F2),
dl = l − l₀ (:func:`at`): exact in value and first derivative at the real l₀ = Re l; the tip
map's l̇ column, which holds U′(l) and Θ′(l), gets its own l-derivative from F2
(:func:`rate_at`). Frozen shapes have F1 = F2 = 0 and dl = 0, so their rows are the constants,
bit for bit.
"""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.jit import kernel

_INT, _FLAG, _REAL = np.int64, np.bool_, np.float64

#: One link of the chain (a record of the table). ``o_X`` is the offset of array X in the buffer
#: (C order); the shapes are those of :class:`~core.dynamics.flexible_body.FlexibleBody`,
#: :class:`~core.dynamics.flexible_body.TranslatingBody` and
#: :class:`~core.dynamics.kinematics.TipMap`, m = the link's flexible coordinates.
LINK = np.dtype(
    [
        # -- what the link is
        ("kind", _INT),  # its joint: 0 revolute, 1 prismatic
        ("flexible", _FLAG),
        ("translating", _FLAG),  # a flexible link sliding through the hub of its prismatic joint
        ("following", _FLAG),  # a translating link whose shapes follow its free length (F1, F2)
        ("stiffening", _FLAG),  # a fixed-length link with geometric stiffening (foreshortening)
        ("tilted", _FLAG),  # a pinned (chord) frame bending in two planes: beam frame exp(ρ̃), ρ = root δ
        ("has_hub_inertia", _FLAG),
        ("has_armature", _FLAG),
        ("has_payload", _FLAG),
        ("fine", _FLAG),  # joint-space solves without an m × m factor (core.dynamics.compiled.fine)
        # -- sizes
        ("m", _INT),  # flexible coordinates
        ("column", _INT),  # the first of them in q
        ("planes", _INT),  # bending planes (1 or 2)
        ("mdd_band", _INT),  # the bandwidth of M_δδ (its band Cholesky factor on a fine body)
        ("size", _INT),  # 6 + m (+ 1 for a translating link's l̇): the length of ν_i
        # -- scalars
        ("theta_offset", _REAL),  # DH θ offset [rad]
        ("d", _REAL),  # DH d [m]
        ("a", _REAL),  # DH a [m]
        ("alpha", _REAL),  # DH α [rad]
        ("length", _REAL),  # the link's length [m]
        ("mass", _REAL),  # a flexible link's mass [kg]
        ("first_x", _REAL),  # its ∫x dm [kg m]
        ("second_x", _REAL),  # its ∫x² dm [kg m²]
        ("hub_mass", _REAL),  # [kg]
        ("hub_inertia", _REAL),  # [kg m²]
        ("armature", _REAL),  # the motor's reflected inertia [kg m²]
        ("rho", _REAL),  # mass per length of a translating link [kg/m]
        ("l0", _REAL),
        ("fs_segments", _INT),  # stiffening: segments S of the Gram point set (foreshortening)
        ("fs_points", _INT),  # stiffening: its points Q
        ("fs_width", _INT),  # stiffening: its support width k
        ("fs_samples", _INT),  # stiffening: slope samples g per segment and per point
        # -- offsets of the arrays in the buffer
        ("o_rigid", _INT),  # a rigid link's spatial inertia about its origin (6 × 6)
        ("o_payload", _INT),  # the payloads' spatial inertia at the end frame (6 × 6)
        ("o_hub", _INT),  # the hub's row (e_z, bᵀ) on ν: its spin is this row · ν (size)
        ("o_armature", _INT),  # the motor's row (1, b) on u_i (1 + m)
        ("o_A", _INT),  # A (3 × m): ∫Φ dm
        ("o_B", _INT),  # B (3 × m): ∫x Φ dm
        ("o_skew_B", _INT),  # the rotary ω–δ̇ block of x̃B (3 × m)
        ("o_N", _INT),  # N_ac (m × m) for the plane pairs (a, c), in row-major (a, c) order
        ("o_rot_oo", _INT),  # rotary inertia on ω (3 × 3)
        ("o_rot_od", _INT),  # rotary ω–δ̇ coupling (3 × m)
        ("o_mdd", _INT),  # M_δδ (m × m)
        ("o_U", _INT),  # tip translation rows U (3 × m)
        ("o_theta", _INT),  # tip rotation rows Θ (3 × m)
        ("o_Al", _INT),  # translating: A_l0 (3 × m)
        ("o_Bl", _INT),  # translating: B_l0 (3 × m)
        ("o_P", _INT),  # translating: P_ac (m × m) for the plane pairs
        ("o_R0", _INT),  # translating: R₀ (m × m)
        ("o_P1", _INT),  # stiffening: P₁ (m × m), inertia
        ("o_P2", _INT),  # stiffening: P₂ (m × m), inertia
        ("o_H", _INT),  # stiffening: H = H(L) (m × m), the tip's foreshortening
        ("o_root", _INT),  # tilted: ``TipMap.root`` (3 × m)
        ("o_fs_support", _INT),  # stiffening: support of each segment (S × k, integers as floats)
        ("o_fs_segment", _INT),  # stiffening: segment of each point (Q)
        ("o_fs_mass", _INT),  # stiffening: mass of each point (Q)
        ("o_fs_position", _INT),  # stiffening: material coordinate of each point (Q)
        ("o_fs_values", _INT),  # stiffening: φ at each point on its support (Q × k)
        ("o_fs_seg_slopes", _INT),  # stiffening: φ' at each segment's samples (S × g × k)
        ("o_fs_seg_weights", _INT),  # stiffening: their weights (S × g)
        (
            "o_fs_pt_slopes",
            _INT,
        ),  # stiffening: φ' at the samples of each point's part of its segment (Q × g × k)
        ("o_fs_pt_weights", _INT),  # stiffening: their weights (Q × g)
    ],
    align=True,
)


@kernel(inline="always")
def at(F, S, x, dl):
    """Entry x of a translating row at free length l = l₀ + dl: F + dl (F1 + ½ dl F2), the
    Taylor polynomial from the l-derivatives F1 = F[S + x], F2 = F[2S + x] (S = F.size // 3);
    exactly F[x] for frozen shapes (F1 = F2 = 0, dl = 0)."""
    if dl == 0:  # frozen shapes, and the complex steps along δ: skip the two far loads
        return F[x] + 0 * dl
    return F[x] + dl * (F[S + x] + 0.5 * dl * F[2 * S + x])


@kernel(inline="always")
def rate_at(F, S, x, dl):
    """d/dl of :func:`at`: F1 + dl F2."""
    return F[S + x] + dl * F[2 * S + x]


@kernel(inline="always")
def free_length_step(row, l):
    """dl = l − l₀ of a translating row (0 for frozen shapes)."""
    if row.following:
        return l - row.l0
    return 0j
