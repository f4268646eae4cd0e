"""The bodies of a planar arm, link by link, as sympy (the floating-frame formulation of
:mod:`core.dynamics.flexible_body`, planar case).

Velocities are kept in the axes of the link carrying them, so M holds only relative angles (q_i
and the tip rotations), as the textbook forms do. A flexible link's body velocity is
ν = (v_x, v_y, ω, δ̇) in beam-frame axes and its planar body mass matrix is

    M_b = [[ m     0      −S_y(δ)   0    ],
           [ 0     m       S_x      Aᵀ   ],
           [ −S_y  S_x     I(δ)     cᵀ   ],
           [ 0     A       c        M_δδ ]]

with S_x = ρA L²/2 + Σ m_j s_j, S_y = A·δ, A = ρA a + Σ m_j φ(s_j),
I(δ) = ρA L³/3 + Σ m_j s_j² + δᵀ(ρA N + Σ m_j φ(s_j)φ(s_j)ᵀ)δ + Σ J_j (the
second-order term in δ the engine keeps), c = ρA b + Σ m_j s_j φ(s_j) + Σ J_j φ'(s_j),
M_δδ = ρA N + Σ (m_j φφᵀ + J_j φ'φ'ᵀ)(s_j).
"""

from __future__ import annotations

import sympy as sp

from amm.symbolic.lagrange import Terms
from amm.symbolic.parameters import Parameters, damping_block, link_integrals, payloads, root_slopes
from core.arm import Arm


def _rotation(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s], [s, c]])


def planar_terms(arm: Arm, engine, P: Parameters, q: tuple) -> tuple[Terms, sp.Matrix, list]:
    """The :class:`~amm.symbolic.lagrange.Terms` of a planar arm of revolute joints, the base-frame
    (x, y) of its tip and the (x, y, angle) of every link frame."""
    n = len(q)
    terms = Terms(n, arm.n_joints, P.gravity(arm, "xy"))
    angle = sp.S.Zero  # absolute angle of the previous tip frame (gravity, positions)
    p = sp.zeros(2, 1)
    Jv = sp.zeros(2, n)  # velocity of the previous tip point, in the previous link's axes
    Jw = sp.zeros(1, n)  # angular velocity of the previous tip frame
    turn = sp.S.Zero  # angle from the previous link's axes to its tip frame
    frames = []
    for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
        number = i + 1
        link_angle = angle + q[i] + joint.theta_offset
        R = _rotation(link_angle)
        frames.append((p[0], p[1], link_angle))
        Jv_link = _rotation(turn + q[i] + joint.theta_offset).T * Jv  # link-frame origin, link axes
        Jw_link = Jw.copy()
        Jw_link[i] += 1
        L = P(f"L{number}", link.length, f"length of link {number} [m]")
        if link.is_flexible:
            tip_turn, offset, Jv, Jw, hub_rate = _flexible_link(
                terms, engine, P, q, number, link, p, R, Jv_link, Jw_link, L
            )
        else:
            tip_turn, offset, Jv, Jw = _rigid_link(terms, P, number, link, p, R, Jv_link, Jw_link, L)
            hub_rate = Jw_link
        # Hub on the joint axis at the link-frame origin, turning with joint and beam root.
        terms.joint(P, number, joint, p, Jv_link, hub_rate)
        p = p + R * offset
        angle = link_angle + tip_turn
        turn = tip_turn
        for suffix, payload in payloads(arm, number):
            mass = P(f"mp{suffix}", payload.mass, "payload mass [kg]")
            inertia = P(
                f"Jp{suffix}", payload.planar_inertia, "payload inertia about its centre of mass [kg m$^2$]"
            )
            terms.rigid_body(p, Jv, Jw, mass, inertia)
    return terms, p, frames


def _rigid_link(terms: Terms, P: Parameters, number: int, link, p, R, Jv_link, Jw_link, L) -> tuple:
    """Rigid link ``number`` (frame at p, rotation R, velocities Jv_link, Jw_link in its axes) into
    ``terms``; returns (tip turn, tip offset in link axes, tip Jv, tip Jw)."""
    mass = P(f"m{number}", link.mass, f"mass of link {number} [kg]")
    cx = P(f"lc{number}", link.com[0], f"centre of mass of link {number} along $x_{number}$ [m]")
    cy = P(f"lcy{number}", link.com[1], f"centre of mass of link {number} along $y_{number}$ [m]")
    I = P(f"I{number}", link.planar_inertia, f"inertia of link {number} about its centre of mass [kg m$^2$]")
    Jv_com = Jv_link + sp.Matrix([-cy, cx]) * Jw_link
    terms.rigid_body(p + R * sp.Matrix([cx, cy]), Jv_com, Jw_link, mass, I)
    return sp.S.Zero, sp.Matrix([L, 0]), Jv_link + sp.Matrix([0, L]) * Jw_link, Jw_link


def _flexible_link(
    terms: Terms, engine, P: Parameters, q, number: int, link, p, R, Jv_link, Jw_link, L
) -> tuple:
    """Flexible link ``number`` (M_b of the module docstring) into ``terms``; returns (tip turn,
    tip offset in link axes, tip Jv, tip Jw, hub rate)."""
    basis = engine.bases[number]
    cols = engine.flex_columns[number]
    m = basis.n
    delta = sp.Matrix(q[cols])
    k = link_integrals(P, number, link, basis, L, f"bending stiffness of link {number} [N m$^2$]")
    Mdd = k.N + k.rotary
    Sy = (k.A.T * delta)[0]
    # The δ-quadratic inertia takes ∫φφᵀ dm only: rotary inertia enters through Ψ (first order).
    inertia = k.second_x + (delta.T * k.N * delta)[0] + k.J_sum
    Mb = sp.zeros(3 + m, 3 + m)
    Mb[0, 0] = Mb[1, 1] = k.mass
    Mb[0, 2] = Mb[2, 0] = -Sy
    Mb[1, 2] = Mb[2, 1] = k.first_x
    Mb[2, 2] = inertia
    Mb[1, 3:] = k.A.T
    Mb[3:, 1] = k.A
    Mb[2, 3:] = (k.c + k.slope).T
    Mb[3:, 2] = k.c + k.slope
    Mb[3:, 3:] = Mdd
    Jb = sp.zeros(3 + m, len(q))
    Jb[0:2, :] = Jv_link
    Jb[2, :] = Jw_link
    Jb[3:, cols] = sp.eye(m)
    terms.body(Jb, Mb)
    terms.V -= k.mass * (terms.g.T * p)[0] + (terms.g.T * R * sp.Matrix([k.first_x, Sy]))[0]
    terms.K[cols, cols] = k.EI * k.K
    hub_rate = Jw_link.copy()  # previous tip rate plus the actuated rate (pinned: + φ'(0)δ̇)
    if basis.frame == "pinned":
        dphi0 = root_slopes(P, number, basis)
        terms.B[cols, number - 1] = dphi0
        hub_rate[0, cols] = dphi0.T
    damping = damping_block(engine, number, link, Mdd, k.EI * k.K)
    if damping is not None:
        terms.D[cols, cols] = damping
    rotation = k.tip_slope if engine.arm.tip_rotation == "slope" else k.tip / L
    offset = sp.Matrix([L, (k.tip.T * delta)[0]])
    Jv_tip = Jv_link + sp.Matrix([-offset[1], offset[0]]) * Jw_link
    Jv_tip[1, cols] += k.tip.T
    Jw_tip = Jw_link.copy()
    Jw_tip[0, cols] += rotation.T
    return (rotation.T * delta)[0], offset, Jv_tip, Jw_tip, hub_rate
