"""The bodies of a spatial (DH) arm of revolute joints, link by link, as sympy.

The floating-frame bodies of :mod:`core.dynamics.flexible_body` in three dimensions: the 6 + m
body velocity (v, Ω, δ̇) in beam axes (links bending in one or two planes), every velocity kept
in the axes of the frame that carries it (so M holds relative rotations only), the exact tip
rotation exp(θ̃) through the entire functions :class:`~amm.symbolic.tip_rotation.stumpff` of θᵀθ,
and ∂J/∂q carried forward through the chain (:class:`_Fwd`) instead of differentiating the
nested Jacobians.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from amm.symbolic.lagrange import Terms
from amm.symbolic.parameters import Parameters, damping_block, link_integrals, payloads, root_slopes
from amm.symbolic.tip_rotation import stumpff
from amm.symbolic.translating import translating_constants, translating_mass_matrix
from core.arm import Arm


class _Fwd:
    """A matrix and its non-zero partial derivatives {k: ∂/∂q_k}, carried forward through the
    chain (product rule) so that no large expression is ever differentiated: only the small
    leaves (a joint rotation, a tip rotation, an offset) are."""

    __slots__ = ("d", "value")

    def __init__(self, value: sp.Matrix, d: dict | None = None) -> None:
        self.value = value
        self.d = d if d is not None else {}

    @classmethod
    def leaf(cls, value: sp.Matrix, q: tuple) -> _Fwd:
        free = set().union(*(entry.free_symbols for entry in value))
        return cls(value, {k: value.diff(qk) for k, qk in enumerate(q) if qk in free})

    def __mul__(self, other) -> _Fwd:
        if not isinstance(other, _Fwd):
            return _Fwd(self.value * other, {k: v * other for k, v in self.d.items()})
        d = {k: v * other.value for k, v in self.d.items()}
        for k, v in other.d.items():
            d[k] = d[k] + self.value * v if k in d else self.value * v
        return _Fwd(self.value * other.value, d)

    def left(self, other) -> _Fwd:
        """``other`` (a constant matrix or scalar) times this."""
        return _Fwd(other * self.value, {k: other * v for k, v in self.d.items()})

    def __add__(self, other: _Fwd) -> _Fwd:
        d = dict(self.d)
        for k, v in other.d.items():
            d[k] = d[k] + v if k in d else v
        return _Fwd(self.value + other.value, d)

    def __sub__(self, other: _Fwd) -> _Fwd:
        return self + other.left(sp.S.NegativeOne)

    def rows(self, rows) -> _Fwd:
        return _Fwd(self.value[rows, :], {k: v[rows, :] for k, v in self.d.items()})

    def copy(self) -> _Fwd:
        return _Fwd(self.value.copy(), {k: v.copy() for k, v in self.d.items()})


def _stack(parts: list) -> tuple:
    """Vertically stacked values of ``parts`` (_Fwd or constant matrices) and the derivatives."""
    values = [part.value if isinstance(part, _Fwd) else part for part in parts]
    keys = sorted({k for part in parts if isinstance(part, _Fwd) for k in part.d})
    d = {}
    for k in keys:
        blocks = []
        for part, value in zip(parts, values, strict=True):
            found = part.d.get(k) if isinstance(part, _Fwd) else None
            blocks.append(found if found is not None else sp.zeros(*value.shape))
        d[k] = sp.Matrix.vstack(*blocks)
    return sp.Matrix.vstack(*values), d


def _rot_x(angle: float) -> sp.Matrix:
    c, s = _trig(angle)
    return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _trig(angle: float) -> tuple:
    """cos, sin of a constant angle, exact at multiples of π/2 (the engine's 6e-17 is round-off)."""
    quarter = angle / (np.pi / 2)
    if abs(quarter - round(quarter)) < 1e-12:
        k = round(quarter) % 4
        return (sp.S.One, sp.S.Zero, sp.S.NegativeOne, sp.S.Zero)[k], (0, 1, 0, -1)[k] * sp.S.One
    return sp.Float(np.cos(angle), 17), sp.Float(np.sin(angle), 17)


def _skew(v) -> sp.Matrix:
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _tensor(P: Parameters, name: str, tensor, what: str) -> sp.Matrix:
    """A symmetric 3 × 3 inertia tensor with named entries (``{name}xx``…; zeros dropped)."""
    out = sp.zeros(3, 3)
    axes = "xyz"
    for r in range(3):
        for c in range(r, 3):
            entry = P(
                f"{name}{axes[r]}{axes[c]}", tensor[r][c], f"{what}, entry {axes[r]}{axes[c]} [kg m$^2$]"
            )
            out[r, c] = out[c, r] = entry
    return out


def spatial_terms(arm: Arm, engine, P: Parameters, q: tuple) -> tuple[Terms, sp.Matrix, list]:
    """The :class:`~amm.symbolic.lagrange.Terms` of a spatial arm of revolute joints, the base-frame
    (x, y, z) of its tip and, per link frame, its origin (3) and rotation matrix (9, row by row)."""
    n = len(q)
    terms = Terms(n, arm.n_joints, P.gravity(arm, "xyz"))
    R_abs = sp.eye(3)  # orientation of the previous tip frame (base axes)
    p = sp.zeros(3, 1)
    Jv = _Fwd(sp.zeros(3, n))  # previous tip frame: origin velocity, angular velocity, in its axes
    Jw = _Fwd(sp.zeros(3, n))
    frames = []
    for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
        number = i + 1
        translating = _translating(engine, number, joint, link)
        # A prismatic joint's coordinate is named d<i> (the free length): its hub offset is dh<i>.
        name = f"dh{number}" if translating else f"d{number}"
        d = P(name, joint.d, f"DH offset $d$ of joint {number} [m]")
        Rz = _rot_z(joint.theta_offset if translating else q[i] + joint.theta_offset)
        turn = _Fwd.leaf(Rz.T, q)
        Jv_link = turn * (Jv - Jw.left(d * _skew(sp.Matrix([0, 0, 1]))))
        Jw_link = turn * Jw
        if not translating:
            Jw_link.value[2, i] += 1
        R_link = R_abs * Rz
        p_link = p + d * R_abs[:, 2]
        frames.append(tuple(p_link) + tuple(R_link))
        hub_rate = Jw.rows(2).copy()  # rate of the hub about the joint axis (+ B column below)
        L = P(f"L{number}", link.length, f"length of link {number} [m]")
        link_frame = (p_link, R_link, Jv_link, Jw_link)
        if translating:
            Jv_end, Jw_end, R_end, p_tip = _translating_link(terms, arm, engine, P, q, number, link_frame, L)
            hub_rate = _Fwd(sp.zeros(1, n))  # the engine's hub inertia turns with revolute joints only
        elif link.is_flexible:
            Jv_end, Jw_end, R_end, p_tip = _flexible_link(terms, arm, engine, P, q, number, link_frame, L)
        else:
            Jv_end, Jw_end, R_end, p_tip = _rigid_link(terms, P, number, joint, link, link_frame)
        if not translating:
            hub_rate.value += terms.B[:, i].T
        terms.joint(P, number, joint, p_link, Jv_link.value, hub_rate.value, Jv_link.d, hub_rate.d)
        for suffix, payload in payloads(arm, number):
            if isinstance(payload.inertia, float):
                Jp = P(f"Jp{suffix}", payload.inertia, "payload inertia about its centre of mass [kg m$^2$]")
                tensor = Jp * sp.eye(3)
            else:
                tensor = _tensor(
                    P, f"Jp{suffix}", payload.inertia, "payload inertia about its centre of mass"
                )
            mass = P(f"mp{suffix}", payload.mass, "payload mass [kg]")
            terms.rigid_body(p_tip, Jv_end.value, Jw_end.value, mass, tensor, Jv_end.d, Jw_end.d)
        X = _rot_x(joint.alpha)
        Jv, Jw = Jv_end.left(X.T), Jw_end.left(X.T)
        R_abs = R_end * X
        p = p_tip
    return terms, p, frames


def _rigid_link(terms: Terms, P: Parameters, number: int, joint, link, link_frame: tuple) -> tuple:
    """Rigid link ``number`` (``link_frame``: origin, rotation, Jv, Jw in its axes) into ``terms``;
    returns the velocities (Jv, Jw), rotation and origin of its end frame (DH length a along x)."""
    p_link, R_link, Jv_link, Jw_link = link_frame
    mass = P(f"m{number}", link.mass, f"mass of link {number} [kg]")
    com = sp.Matrix(
        [
            P(f"{name}{number}", link.com[k], f"centre of mass of link {number} along ${axis}_{number}$ [m]")
            for k, (name, axis) in enumerate((("lc", "x"), ("lcy", "y"), ("lcz", "z")))
        ]
    )
    inertia = _tensor(
        P, f"I{number}", link.inertia_tensor(), f"inertia of link {number} about its centre of mass"
    )
    Jv_com = Jv_link - Jw_link.left(_skew(com))
    terms.rigid_body(p_link + R_link * com, Jv_com.value, Jw_link.value, mass, inertia, Jv_com.d, Jw_link.d)
    offset = sp.Matrix([P(f"a{number}", joint.a, f"DH length $a$ of joint {number} [m]"), 0, 0])
    return Jv_link - Jw_link.left(_skew(offset)), Jw_link, R_link, p_link + R_link * offset


def _body_mass_matrix(k, dy: sp.Matrix, dz: sp.Matrix, planes: int) -> tuple[sp.Matrix, sp.Matrix]:
    """The body mass matrix of :class:`core.dynamics.flexible_body.FlexibleBody` in beam-frame axes
    (velocity (v, Ω, δ̇)) of a link with :class:`~amm.symbolic.parameters.LinkIntegrals` ``k``
    and deflections ``dy``, ``dz``; and its first moment ∫ρ dm."""
    m = dy.rows
    Ay, Az = (k.A.T * dy)[0], (k.A.T * dz)[0]
    S1 = sp.Matrix([k.first_x, Ay, Az])
    by, bz = (k.c.T * dy)[0], (k.c.T * dz)[0]
    Qyy, Qyz, Qzz = (dy.T * k.N * dy)[0], (dy.T * k.N * dz)[0], (dz.T * k.N * dz)[0]
    Q = sp.Matrix([[k.second_x, by, bz], [by, Qyy, Qyz], [bz, Qyz, Qzz]])
    inertia = (k.second_x + Qyy + Qzz) * sp.eye(3) - Q + sp.diag(0, k.J_sum, k.J_sum)
    size = 6 + planes * m
    Mb = sp.zeros(size, size)
    Mb[:3, :3] = k.mass * sp.eye(3)
    Mb[:3, 3:6] = -_skew(S1)
    Mb[3:6, :3] = _skew(S1)
    Mb[3:6, 3:6] = inertia
    # A = ∫Φ dm (rows y, z) and the coupling ∫ρ̃Φ dm + rotary inertia, per plane.
    Mb[1, 6 : 6 + m] = k.A.T
    Mb[2, 6 : 6 + m] = sp.zeros(1, m)
    Mb[5, 6 : 6 + m] = (k.c + k.slope).T  # Ω_z: in-plane
    Mb[3, 6 : 6 + m] = -(k.N * dz).T
    Mb[6 : 6 + m, 6 : 6 + m] = k.N + k.rotary
    if planes == 2:
        Mb[2, 6 + m :] = k.A.T
        Mb[4, 6 + m :] = -(k.c + k.slope).T  # Ω_y: out-of-plane
        Mb[3, 6 + m :] = (k.N * dy).T
        Mb[6 + m :, 6 + m :] = k.N + k.rotary
    Mb[6:, :6] = Mb[:6, 6:].T
    return Mb, S1


def _flexible_link(
    terms: Terms, arm: Arm, engine, P: Parameters, q, number: int, link_frame: tuple, L
) -> tuple:
    """Flexible link ``number`` (``link_frame``: origin, rotation, Jv, Jw in its axes) into
    ``terms``; returns the velocities (Jv, Jw), rotation and origin of its deformed tip frame."""
    p_link, R_link, Jv_link, Jw_link = link_frame
    link = arm.links[number - 1]
    basis = engine.bases[number]
    cols = engine.flex_columns[number]
    planes = engine.bodies[number].planes
    if basis.frame == "pinned" and planes == 2:
        raise ValueError(
            f"link {number}: pinned (chord) frames bending in two planes are not derived symbolically "
            "(their beam frame turns with the out-of-plane root slope); use clamped shapes or the "
            "numeric AssumedModesModel"
        )
    m = basis.n
    delta = sp.Matrix(q[cols])
    dy = delta[:m, :]
    dz = delta[m:, :] if planes == 2 else sp.zeros(m, 1)
    k = link_integrals(P, number, link, basis, L, f"in-plane bending stiffness of link {number} [N m$^2$]")
    Mb, S1 = _body_mass_matrix(k, dy, dz, planes)
    rates = sp.zeros(planes * m, len(q))
    rates[:, cols] = sp.eye(planes * m)
    Jb, dJb = _stack([Jv_link, Jw_link, rates])
    terms.body(Jb, Mb, dJb)
    terms.V -= k.mass * (terms.g.T * p_link)[0] + (terms.g.T * R_link * S1)[0]
    stiffness = [k.EI * k.K]
    if planes == 2:
        EIo = P(f"EIout{number}", link.EI_out, f"out-of-plane bending stiffness of link {number} [N m$^2$]")
        stiffness.append(EIo * k.K)
    terms.K[cols, cols] = sp.diag(*stiffness)
    if basis.frame == "pinned":
        terms.B[cols.start : cols.start + m, number - 1] = root_slopes(P, number, basis)
    damping = damping_block(engine, number, link, sp.diag(*([k.N + k.rotary] * planes)), terms.K[cols, cols])
    if damping is not None:
        terms.D[cols, cols] = damping
    rotation = k.tip_slope if arm.tip_rotation == "slope" else k.tip / L
    offset = sp.Matrix([L, (k.tip.T * dy)[0], (k.tip.T * dz)[0]])
    Jv_tip = Jv_link - _Fwd.leaf(_skew(offset), q) * Jw_link
    Jv_tip.value[1, cols.start : cols.start + m] += k.tip.T
    Jw_tip = Jw_link.copy()
    if planes == 1:
        E = _rot_z((rotation.T * dy)[0])
        Jw_tip.value[2, cols] += rotation.T
    else:
        Jv_tip.value[2, cols.start + m : cols.stop] += k.tip.T
        E, Jw_tip = _tip_rotation(q, cols, m, rotation, dy, dz, Jw_tip)
    # tip velocities in the axes of the deformed tip (the payloads' axes)
    tip_turn = _Fwd.leaf(E.T, q)
    return tip_turn * Jv_tip, tip_turn * Jw_tip, R_link * E, p_link + R_link * offset


def _tip_rotation(q, cols: slice, m: int, rotation, dy, dz, Jw_tip: _Fwd) -> tuple:
    """The exact rotation E = exp(θ̃) of a tip bending in two planes (θ = (0, −rᵀδ_z, rᵀδ_y), r the
    tip rotation per mode) and the tip's angular velocity with its left Jacobian applied to θ̇."""
    theta = sp.Matrix([0, -(rotation.T * dz)[0], (rotation.T * dy)[0]])
    Theta = sp.zeros(3, len(q))  # θ = Θ δ
    Theta[1, cols.start + m : cols.stop] = -rotation.T
    Theta[2, cols.start : cols.start + m] = rotation.T
    return _exact_rotation(q, theta, Theta, Jw_tip)


def _exact_rotation(q, theta: sp.Matrix, Theta, Jw_tip: _Fwd) -> tuple:
    """E = exp(θ̃) of the rotation vector θ = (0, θ_y, θ_z), θ̇ = Θ q̇ (Θ a constant matrix or a
    :class:`_Fwd`), and the angular velocity Jw_tip plus the left Jacobian of θ applied to Θ."""
    x = theta[1] ** 2 + theta[2] ** 2
    c0, c1, c2, c3 = (stumpff(k, x) for k in range(4))
    outer = theta * theta.T
    E = c0 * sp.eye(3) + c1 * _skew(theta) + c2 * outer
    left = c1 * sp.eye(3) + c2 * _skew(theta) + c3 * outer
    return E, Jw_tip + _Fwd.leaf(left, q) * Theta


#: The beam axes of a translating link in its link frame (x along the joint axis z), as the
#: engine's ``core.numerics.rotations.PRISMATIC_BEAM``.
PRISMATIC_BEAM = sp.Matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])


def _translating(engine, number: int, joint, link) -> bool:
    """Whether link ``number`` is a translating flexible link (frozen or length-following shapes:
    the one kind of prismatic joint derived); a clear ValueError for the others."""
    if joint.kind == "revolute":
        return False
    if not link.is_flexible:
        raise ValueError(
            f"joint {number}: a prismatic joint carrying a rigid link is not derived symbolically "
            "(translating flexible links are); use the numeric AssumedModesModel"
        )
    if link.damping is not None:
        raise ValueError(
            f"link {number}: structural damping on a translating link is not derived symbolically "
            "(its stiffness depends on the free length); use the numeric AssumedModesModel"
        )
    if link.lumped_masses:
        raise ValueError(f"link {number}: lumped masses on a translating link are not modelled")
    return True


def _translating_link(
    terms: Terms, arm: Arm, engine, P: Parameters, q, number: int, link_frame: tuple, L
) -> tuple:
    """Translating flexible link ``number`` (:mod:`amm.symbolic.translating`) into ``terms``;
    returns the velocities (Jv, Jw), rotation and origin of its deformed tip frame. With
    length-following shapes the tip's deflection U(l)δ and rotation Θ(l)δ/l move with l̇ too
    (U'δ, Θ'δ/l: the Jacobians are those of the offset and of θ, as the engine's kinematics)."""
    p_link, R_link, Jv_link, Jw_link = link_frame
    link = arm.links[number - 1]
    basis = engine.bases[number]
    cols = engine.flex_columns[number]
    planes = engine.bodies[number].planes
    m, i = basis.n, number - 1
    l = q[i]
    delta = sp.Matrix(q[cols])
    dy = delta[:m, :]
    dz = delta[m:, :] if planes == 2 else sp.zeros(m, 1)
    rho = P(f"rhoA{number}", link.mass_per_length, f"mass per length of link {number} [kg/m]")
    k = translating_constants(P, number, basis, l)
    Mb, S1 = translating_mass_matrix(k, rho, L, l, dy, dz, planes)
    B = PRISMATIC_BEAM
    Jv_beam, Jw_beam = Jv_link.left(B.T), Jw_link.left(B.T)
    rates = sp.zeros(planes * m + 1, len(q))
    rates[: planes * m, cols] = sp.eye(planes * m)
    rates[planes * m, i] = 1
    Jb, dJb = _stack([Jv_beam, Jw_beam, rates])
    terms.body(Jb, Mb, dJb)
    R_body = R_link * B
    terms.V -= rho * L * (terms.g.T * p_link)[0] + (terms.g.T * R_body * S1)[0]
    EI = P(f"EI{number}", link.EI, f"in-plane bending stiffness of link {number} [N m$^2$]")
    stiffness = [EI * k.stiffness / l**3]
    if planes == 2:
        EIo = P(f"EIout{number}", link.EI_out, f"out-of-plane bending stiffness of link {number} [N m$^2$]")
        stiffness.append(EIo * k.stiffness / l**3)
    terms.K[cols, cols] = sp.diag(*stiffness)
    rotation = k.tip_slope if arm.tip_rotation == "slope" else k.tip
    offset = sp.Matrix([l, (k.tip.T * dy)[0], (k.tip.T * dz)[0]])
    coordinates = sp.Matrix(q)
    # The tip slides out along the beam axis; U δ and (following shapes) U'δ l̇ across it.
    Jv_tip = Jv_beam - _Fwd.leaf(_skew(offset), q) * Jw_beam + _Fwd.leaf(offset.jacobian(coordinates), q)
    # θ = (0, −rᵀδ_z, rᵀδ_y)/l: the slopes of the unit-length shapes over the free length.
    theta = sp.Matrix([0, -(rotation.T * dz)[0], (rotation.T * dy)[0]]) / l
    Theta = theta.jacobian(coordinates)  # ∂θ/∂l = (Θ'δ − θ)/l
    E, Jw_tip = _exact_rotation(q, theta, _Fwd.leaf(Theta, q), Jw_beam.copy())  # Θ depends on l, δ
    tip_turn = _Fwd.leaf(B * E.T, q)  # into the end frame R_body E Bᵀ
    return tip_turn * Jv_tip, tip_turn * Jw_tip, R_body * E * B.T, p_link + R_body * offset
