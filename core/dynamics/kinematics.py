"""Forward kinematics of the chain of (possibly deformed) links, with Jacobians.

Frames, following :mod:`core.arm` (standard Denavit–Hartenberg)::

    link frame i   L_i = T_{i-1} · Rz(θ_i) · Tz(d_i)
    beam frame i   B_i = L_i · exp(ρ(δ_i)) · R_beam   (R_beam = I for a revolute joint,
                                                  PRISMATIC_BEAM for a prismatic one)
    tip frame i    T_i = B_i · Tr(L e_x + u(δ_i)) · exp(θ(δ_i)) · R_beamᵀ · Rx(α_i)   (flexible)
                   T_i = L_i · Tx(a_i) · Rx(α_i)                                     (rigid)

with T_0 the base (with geometric stiffening the tip also moves back along x by the
axial foreshortening ½ δᵀ H(L) δ, see :class:`TipMap`). A flexible beam lies along the x-axis of its beam frame,
s ∈ [0, L]; its tip is translated by the tip deflection u = (0, w_y(L), w_z(L))
and rotated by the small rotation vector θ = (0, −w_z'(L), w_y'(L)) (slope) or
(0, −w_z(L)/L, w_y(L)/L) (chord), applied exactly through Rodrigues' formula.

The root rotation ρ(δ) is zero except for a pinned (chord) frame on a link that also
bends out of the joint's plane: the chord frame runs from root to tip, so it leaves the
plane normal to the joint axis by the out-of-plane root slope, ρ = (0, w_z'(0), 0). The
beam's root tangent, (1, w_y'(0), w_z'(0)) in the beam frame, is then
(1, w_y'(0), 0) + O(δ²) in the link frame: it turns with the hub about the joint axis only
(by w_y'(0) relative to the link frame, the in-plane pinned condition). See
:class:`TipMap` (``root``).

A flexible link on a prismatic joint *translates* (docs/MODEL.md, Dynamics): its hub stays at
d_i = d along z_{i-1}, and the joint variable q_i is the free length l, which
replaces L above (the tip is at l e_x + u(δ) in the beam frame, and the tip
slopes of the unit-length basis are divided by l).

Jacobians are kept in base coordinates: the velocity of a frame's origin is
``Jv @ qd`` and its angular velocity ``Jw @ qd``. Everything is batched over
a leading axis of configurations, and complex-analytic (see
:mod:`core.numerics.rotations`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from core.arm import Arm
from core.numerics.rotations import PRISMATIC_BEAM, exp_so3, left_jacobian, rot_x, rot_z, skew


@dataclass(frozen=True)
class TipMap:
    """How the flexible coordinates of one link move its tip, in the beam frame.

    Attributes
    ----------
    columns : slice
        The link's flexible coordinates within q.
    translation : ndarray, shape (3, m)
        u_tip = translation @ δ  [m].
    rotation : ndarray, shape (3, m)
        θ_tip = rotation @ δ  [rad]; for a translating link θ_tip = rotation @ δ / l
        (the slopes are dw/dη, η = s/l).
    translating : bool
        The link slides through the hub of its prismatic joint.
    foreshortening : ndarray, shape (m, m), or None
        Geometric stiffening: H = Σ_a E_aᵀ H(L) E_a, the tip moves back along the beam
        axis by ½ δᵀ H δ (the axial foreshortening u(L)); None: no axial motion.
    root : ndarray, shape (3, m), or None
        Pinned frames on a link bending in two planes: the beam frame is turned from the
        link frame by the small rotation ρ = root @ δ (rows (0, E_z φ'(0), 0): the
        out-of-plane root slope), applied exactly; None: the beam frame is the link frame.
    follow : callable or None
        A translating link with length-following shapes: ``follow(l, derivative)`` for
        free lengths l (B,) gives the body arrays (``translation``, ``rotation``, each
        (B, 3, m)) at l (``derivative`` = 0) or their l-derivative (1); the constant
        ``translation`` and ``rotation`` are then those of the reference length.
    """

    columns: slice
    translation: np.ndarray
    rotation: np.ndarray
    translating: bool = False
    follow: Callable | None = None
    foreshortening: np.ndarray | None = None
    root: np.ndarray | None = None

    def rows(self, length: np.ndarray) -> tuple:
        """(U, Θ, U', Θ') at free lengths ``length`` (B,): batch axis first, U' = dU/dl
        (zero for shapes that do not follow the length)."""
        if self.follow is None:
            zero = np.zeros_like(self.translation)[None]
            return self.translation[None], self.rotation[None], zero, zero
        value, rate = self.follow(length, 0), self.follow(length, 1)
        return value["translation"], value["rotation"], rate["translation"], rate["rotation"]


#: A free length may exceed the beam length by this fraction (round-off of
#: a length computed elsewhere, e.g. a unit conversion).
FREE_LENGTH_RTOL = 1e-12


def check_free_length(arm: Arm, number: int, l, where: str = "") -> None:
    """Raise ValueError unless the free length l of translating link ``number``
    lies in (0, length·(1 + FREE_LENGTH_RTOL)].

    ``l`` may be a number or an array (batched or complex configurations: the
    real parts are checked); ``where`` prefixes the message (e.g. ``"reference: "``).
    """
    length = arm.links[number - 1].length
    if isinstance(l, float | np.floating) and 0.0 < l <= length * (1 + FREE_LENGTH_RTOL):
        return  # the common case of one real value, without array conversions (~20 µs)
    values = np.real(np.asarray(l))
    if np.any(values <= 0) or np.any(values > length * (1 + FREE_LENGTH_RTOL)):
        got = f"{float(values)!r}" if values.ndim == 0 else f"{values.min()!r}…{values.max()!r}"
        raise ValueError(
            f"{where}d{number}: the free length of translating link {number} must lie in (0, {length}] m, got {got}"
        )


@dataclass
class LinkFrames:
    """Pose and Jacobians of the frames of one link (base coordinates)."""

    R_link: np.ndarray
    p_link: np.ndarray
    R_body: np.ndarray
    R_end: np.ndarray  # tip orientation before Rx(α): the payload's axes
    R_tip: np.ndarray
    p_tip: np.ndarray
    z_joint: np.ndarray  # axis of this link's joint (z of the previous tip frame)
    Jv_link: np.ndarray | None = None
    Jw_link: np.ndarray | None = None
    Jw_body: np.ndarray | None = (
        None  # angular velocity of the beam frame (Jw_link unless it has a root rotation)
    )
    Jw_before: np.ndarray | None = None  # angular velocity Jacobian of the previous tip frame
    Jv_tip: np.ndarray | None = None
    Jw_tip: np.ndarray | None = None

    def select(self, index: int | slice) -> LinkFrames:
        """A new :class:`LinkFrames` of the configurations ``index`` of the batch
        (an int drops the batch axis, a slice keeps it); nothing is mutated."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return LinkFrames(**{name: None if v is None else v[index] for name, v in values.items()})


class ChainKinematics:
    """Frames of every link of ``arm`` for generalized coordinates q.

    Parameters
    ----------
    arm : Arm
    tip_maps : dict
        0-based link index → :class:`TipMap` for each flexible link; links
        missing here are treated as undeformed (``δ = 0``).
    n_dof : int
        Length of q (joint coordinates first).
    """

    def __init__(self, arm: Arm, tip_maps: dict[int, TipMap], n_dof: int) -> None:
        self.arm = arm
        self.tip_maps = tip_maps
        self.n_dof = n_dof

    def frames(self, q: np.ndarray, jacobians: bool = True) -> list[LinkFrames]:
        """Frames of links 1..n (list index i ↔ link i+1) for a batch of configurations.

        ``q`` has shape (B, n_dof) (real or complex); every array in the result
        has the leading batch axis B: rotations (B, 3, 3), positions (B, 3),
        Jacobians (B, 3, n_dof).
        """
        q = np.asarray(q)
        if q.ndim != 2 or q.shape[1] != self.n_dof:
            raise ValueError(f"q must have shape (batch, {self.n_dof}), got {q.shape}")
        dtype = np.result_type(q, float)
        batch, n = q.shape[0], self.n_dof
        R = np.broadcast_to(np.eye(3, dtype=dtype), (batch, 3, 3))
        p = np.zeros((batch, 3), dtype=dtype)
        Jv = np.zeros((batch, 3, n), dtype=dtype) if jacobians else None
        Jw = np.zeros((batch, 3, n), dtype=dtype) if jacobians else None
        out = []
        for i, (joint, link) in enumerate(zip(self.arm.joints, self.arm.links, strict=True)):
            z = R[:, :, 2]
            translating = link.is_flexible and joint.kind == "prismatic"
            if joint.kind == "revolute":
                theta, d = q[:, i] + joint.theta_offset, joint.d + 0 * q[:, i]
            elif translating:
                # The hub stays put; the joint variable is the free length.
                theta, d = joint.theta_offset + 0 * q[:, i], joint.d + 0 * q[:, i]
                check_free_length(self.arm, i + 1, q[:, i])
            else:
                theta, d = joint.theta_offset + 0 * q[:, i], q[:, i] + joint.d
            R_link = R @ rot_z(theta)
            p_link = p + z * d[:, None]
            if jacobians:
                Jw_link = Jw.copy()
                Jv_link = Jv - skew(p_link - p) @ Jw
                if joint.kind == "revolute":
                    Jw_link[:, :, i] += z
                elif not translating:
                    Jv_link[:, :, i] += z
            beam = np.eye(3) if joint.kind == "revolute" else PRISMATIC_BEAM
            tip = self.tip_maps.get(i) if link.is_flexible else None
            Jw_body = Jw_link if jacobians else None
            if tip is not None and tip.root is not None:
                rho = np.einsum("ai,bi->ba", tip.root, q[:, tip.columns])
                R_body = R_link @ exp_so3(rho) @ beam
                if jacobians:
                    Jw_body = Jw_link.copy()
                    Jw_body[:, :, tip.columns] += R_link @ (left_jacobian(rho) @ tip.root)
            else:
                R_body = R_link @ beam
            length = q[:, i] if translating else link.length + 0 * q[:, i]
            if tip is None:
                # Rigid link (or undeformed flexible one): a fixed offset.
                if link.is_flexible:
                    offset = (R_body @ (length[:, None] * np.array([1.0, 0.0, 0.0]))[:, :, None])[:, :, 0]
                else:
                    offset = R_link @ np.array([joint.a, 0.0, 0.0])
                R_end = R_link
                if jacobians:
                    Jw_tip = Jw_link.copy()
                    Jv_tip = Jv_link - skew(offset) @ Jw_link
                    if translating:
                        Jv_tip[:, :, i] += R_body[:, :, 0]
            else:
                delta = q[:, tip.columns]
                U, Theta, dU, dTheta = tip.rows(length)
                theta_tip = np.einsum("...ai,...i->...a", Theta, delta)
                if translating:
                    theta_tip = theta_tip / length[:, None]
                u_local = np.einsum("...ai,...i->...a", U, delta).astype(dtype)
                u_local[:, 0] += length
                if tip.foreshortening is not None:
                    shortening = delta @ tip.foreshortening.T  # H δ (BLAS; einsum loops, ~10x slower)
                    u_local[:, 0] -= 0.5 * np.einsum("bi,bi->b", delta, shortening)
                offset = (R_body @ u_local[:, :, None])[:, :, 0]
                R_end = R_body @ exp_so3(theta_tip) @ beam.T
                if jacobians:
                    Jw_tip = Jw_body.copy()
                    turn = left_jacobian(theta_tip)
                    rotation = Theta / length[:, None, None] if translating else Theta
                    Jw_tip[:, :, tip.columns] += R_body @ (turn @ rotation)
                    Jv_tip = Jv_link - skew(offset) @ Jw_body
                    Jv_tip[:, :, tip.columns] += R_body @ U
                    if tip.foreshortening is not None:  # ∂u_x/∂δ = −(H δ)ᵀ along the beam axis
                        Jv_tip[:, :, tip.columns] -= R_body[:, :, 0:1] * shortening[:, None, :]
                    if translating:
                        # ∂θ/∂l = (Θ'δ − θ)/l (Θ' = 0 for frozen shapes); the tip slides out
                        # along the beam axis and, with following shapes, moves by U'δ.
                        turn_rate = (np.einsum("...ai,...i->...a", dTheta, delta) - theta_tip) / length[
                            :, None
                        ]
                        Jw_tip[:, :, i] += (R_body @ (turn @ turn_rate[:, :, None]))[:, :, 0]
                        slide = np.einsum("...ai,...i->...a", dU, delta)
                        Jv_tip[:, :, i] += R_body[:, :, 0] + (R_body @ slide[:, :, None])[:, :, 0]
            R_tip = R_end @ rot_x(joint.alpha + 0 * q[:, i])
            p_tip = p_link + offset
            frames = LinkFrames(R_link, p_link, R_body, R_end, R_tip, p_tip, z)
            if jacobians:
                frames.Jv_link, frames.Jw_link, frames.Jw_before = Jv_link, Jw_link, Jw
                frames.Jw_body = Jw_body
                frames.Jv_tip, frames.Jw_tip = Jv_tip, Jw_tip
                Jv, Jw = Jv_tip, Jw_tip
            out.append(frames)
            R, p = R_tip, p_tip
        return out
