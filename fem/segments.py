"""The finite-segment backend: each flexible link as a chain of rigid pieces joined by springs.

A flexible link of length L and N segments is cut into N equal elements of length h = L/N.
The bending of each element is lumped into one torsional spring at its midpoint,
s_k = (k − ½) h, k = 1 … N, of stiffness k = EI/h (and, on a spatial arm with ``EI_out``,
a second spring EI_out/h about the out-of-plane axis at the same point: a universal joint).
Between the springs the beam is rigid: N + 1 pieces, the two end pieces half as long::

       joint i                                            tip
         |<- h/2 ->|<---- h ---->|<---- h ---->|<- h/2 ->|
         #=========o=============o=============o=========|   o: spring EI/h
         root piece                             tip piece
         (turns with the joint)

So the spring placement is the midpoint rule on every element (each spring carries the
curvature of the length h around it); the root piece is clamped to the joint and turns with
it, so no massless body sits between the motor and the first spring (a spring at the joint
itself would leave the joint's and the spring's rates with the same inertia when the hub has
none: a singular mass matrix). Measured on a clamped beam with a tip mass
(``tests/test_segments.py``, docs/SEGMENTS.md): the frequency error falls as N⁻² (fitted
rates 2.00, 2.00, 2.01 for the first three modes), 3.5e-5 relative at N = 64 for the first.

Each piece is a rigid body of the shared engine: its mass ρA·ℓ at mid-piece with the rotary
inertia of a slender rod (ρA ℓ³/12 about both bending axes, none about the beam axis: the
Euler–Bernoulli beam has no cross-section inertia), the link's lumped masses that lie on it at
their own positions (piece k holds the points with (k − ½)h <= s < (k + ½)h; a rigid piece
needs no node), and on the tip piece the link's tip payload (and the arm's payload, on the
last link). The springs' angles are the model's flexible coordinates (``w<i>_<k>`` in-plane,
``v<i>_<k>`` out-of-plane), elastic forces −K q on them; the motors act on the arm's joints
only (B selects them, so "locked" analyses hold the joints and let the springs move).

Everything else is the engine's: M, h and G are those of a rigid serial chain
(:class:`~core.dynamics.engine.ChainModel` of the expanded arm, compiled kernels by default),
whose coordinates this model reorders into the layout every model has (joints first, then the
flexible coordinates link by link). Rigid pieces are geometrically exact, so the axial
foreshortening and the stiffening it brings (centrifugal, gravity) are in the model whatever
``geometric_stiffening`` says. Damping: the link's :class:`~core.arm.Damping` applied to the
springs as it is to any link's flexible coordinates (:func:`core.dynamics.elastic.link_damping`):
Rayleigh α M + β K, or modal ratios on the link's own modes, with M the springs' mass block of
the straight link on its own (beam and lumped masses, clamped at its joint).

Refused: flexible links on prismatic joints (their segments would change length) and the
chord tip convention on a flexible link that carries anything at its tip (the next joint
rides on the last piece: the slope convention).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from core.arm import Arm, Joint, Link, Payload
from core.dynamics.elastic import link_damping
from core.dynamics.engine import COULOMB_VELOCITY, ChainModel
from core.dynamics.model import SOLVER_CHOICES, SOLVERS, Model, coulomb_friction
from core.numerics import validation as check

#: Segments per link above this are refused: every piece is a body of one dense chain.
MAX_SEGMENTS = 2000
#: The cardan (middle) body of a universal joint has no mass; the arm description needs a
#: positive one, so it carries this fraction of its piece's mass (a change of 1e-12 in M).
CARDAN_MASS = 1e-12
#: The in-plane spring of a universal joint turns the frame by this twist so that the next
#: joint axis is the out-of-plane bending axis (−y of the link: +v for a positive angle).
CARDAN_TWIST = math.pi / 2


@dataclass(frozen=True)
class Piece:
    """One rigid piece of a flexible link: [start, end] along the link [m] and the index of its
    body in the expanded chain (from 0)."""

    start: float
    end: float
    body: int


@dataclass(frozen=True)
class LinkEnds:
    """The frames of one link of the arm in a segment model (what the studies read of an
    engine's link frames): the undeformed link frame (``R_link``, ``R_body``, ``p_link``, at
    the joint) and the tip (``p_tip``, ``R_tip``, and with Jacobians ``Jv_tip``, ``Jw_tip``
    in the model's coordinates), each with a leading batch axis."""

    R_link: np.ndarray
    R_body: np.ndarray
    p_link: np.ndarray
    p_tip: np.ndarray
    R_tip: np.ndarray
    Jv_tip: np.ndarray | None = None
    Jw_tip: np.ndarray | None = None


class SegmentKinematics:
    """Link frames of a :class:`FiniteSegmentModel` by link of the arm (not by piece):
    ``frames(Q, jacobians)`` as :meth:`core.dynamics.kinematics.ChainKinematics.frames`
    gives them, with the fields of :class:`LinkEnds`."""

    def __init__(self, model: FiniteSegmentModel) -> None:
        self._model = model

    def frames(self, Q: np.ndarray, jacobians: bool = True) -> list[LinkEnds]:
        model = self._model
        Q = np.atleast_2d(np.asarray(Q))
        inner = model.chain.kinematics.frames(Q[:, model.order], jacobians=jacobians)
        out = []
        for first, last in model.link_bodies:
            root, tip = inner[first], inner[last]
            jacobian = {}
            if jacobians:
                jacobian = {
                    "Jv_tip": tip.Jv_tip[:, :, model.inverse],
                    "Jw_tip": tip.Jw_tip[:, :, model.inverse],
                }
            out.append(LinkEnds(root.R_link, root.R_body, root.p_link, tip.p_tip, tip.R_tip, **jacobian))
        return out


class FiniteSegmentModel(Model):
    """Flexible arm discretized as rigid segments joined by torsional springs (module docstring).

    Parameters
    ----------
    arm : Arm
    segments : int or mapping
        Springs per bending plane of each flexible link (N: N − 1 pieces of length L/N and two
        of L/2N at the ends); a mapping link number (from 1) → count overrides per link, e.g.
        ``{2: 16}`` (others get ``default_segments``).
    default_segments : int
        Segments for links not named in a ``segments`` mapping.
    coulomb : {"smooth", "sign"}
        Coulomb joint friction model, as :class:`~core.dynamics.engine.ChainModel`.
    coulomb_velocity : float
        ε of the smooth model [rad/s or m/s].
    compiled : bool or None
        The chain's M, h and G from the compiled kernels (True; None means True) or the numpy
        oracle (False).
    geometric_stiffening : bool
        Accepted for the studies' sake and recorded; rigid pieces are geometrically exact, so
        the foreshortening is in the model either way (True and False give the same model).
    """

    def __init__(
        self,
        arm: Arm,
        segments: int | Mapping[int, int] = 8,
        default_segments: int = 8,
        *,
        coulomb: Literal["smooth", "sign"] = "smooth",
        coulomb_velocity: float = COULOMB_VELOCITY,
        compiled: bool | None = None,
        geometric_stiffening: bool = False,
    ) -> None:
        if not isinstance(arm, Arm):
            raise TypeError(f"arm must be an Arm, got {type(arm).__name__}")
        if not isinstance(geometric_stiffening, (bool, np.bool_)):
            raise TypeError(f"geometric_stiffening must be True or False, got {geometric_stiffening!r}")
        counts = {
            number: _segment_count(count, number)
            for number, count in arm.per_flexible_link("segments", segments, default_segments).items()
        }
        _check_arm(arm)
        self.arm = arm
        self.segments = counts
        self.geometric_stiffening = bool(geometric_stiffening)
        self.coulomb = coulomb
        self.coulomb_velocity = float(check.positive(coulomb_velocity, "", "coulomb_velocity"))
        layout = _expand(arm, counts)
        self.pieces: dict[int, list[Piece]] = layout.pieces
        #: (first, last) body of each link of the arm in the expanded chain, by link (from 0).
        self.link_bodies: list[tuple[int, int]] = layout.link_bodies
        self.flex_columns: dict[int, slice] = layout.flex_columns
        self.planes = layout.planes
        self._coordinates = tuple(layout.names)
        #: order[j]: the model coordinate of the chain's coordinate j; inverse: its inverse.
        self.order = np.array(layout.order)
        self.inverse = np.argsort(self.order)
        self.chain = ChainModel(
            layout.arm, {}, coulomb=coulomb, coulomb_velocity=coulomb_velocity, compiled=compiled
        )
        self.kinematics = SegmentKinematics(self)
        self._K = np.diag(layout.stiffness)
        self._B = np.eye(self.n_dof)[:, : arm.n_joints]
        self._coulomb = np.array([j.coulomb_friction for j in arm.joints], dtype=float)
        self._D = self._build_damping(layout)
        summary = ", ".join(f"link {k}: {counts[k]} seg." for k in arm.flexible_links)
        self.description = f"segments ({summary or 'rigid'})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"

    def _build_damping(self, layout: _Layout) -> np.ndarray:
        """The links' structural damping on their springs, and the joints' viscous friction."""
        D = np.zeros((self.n_dof, self.n_dof))
        for number in self.arm.flexible_links:
            damping = self.arm.links[number - 1].damping
            if damping is None:
                continue
            cols = self.flex_columns[number]
            D[cols, cols] = link_damping(
                damping, self._K[cols, cols], _own_mass_block(self.arm, number, layout)
            )
        for i, joint in enumerate(self.arm.joints):
            D[i, i] += joint.viscous_friction
        return D

    # -- layout ---------------------------------------------------------------
    @property
    def coordinates(self) -> tuple[str, ...]:
        return self._coordinates

    def _to_chain(self, q) -> np.ndarray:
        q = np.asarray(q)
        if q.shape != (self.n_dof,):
            raise ValueError(f"q must have shape ({self.n_dof},), got {q.shape}")
        return q[self.order]

    def _from_chain(self, matrix: np.ndarray, axes: int) -> np.ndarray:
        """A chain vector (axes 1), matrix (2) or ∂M/∂q stack (3) in the model's coordinates."""
        return matrix[np.ix_(*[self.inverse] * axes)]

    # -- primitives -----------------------------------------------------------
    def mass_matrix(self, q) -> np.ndarray:
        return self._from_chain(self.chain.mass_matrix(self._to_chain(q)), 2)

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        return self._from_chain(self.chain.mass_matrix_derivatives(self._to_chain(q)), 3)

    def stiffness_matrix(self, q) -> np.ndarray:
        return self._K.copy()

    def damping_matrix(self, q) -> np.ndarray:
        return self._D.copy()

    def gravity_forces(self, q) -> np.ndarray:
        return self._from_chain(self.chain.gravity_forces(self._to_chain(q)), 1)

    def gravity_stiffness(self, q) -> np.ndarray:
        return self._from_chain(self.chain.gravity_stiffness(self._to_chain(q)), 2)

    cheap_gravity_products = True

    def gravity_stiffness_product(self, q, v) -> np.ndarray:
        """(∂G/∂q) v by the chain's one complex step along v."""
        v = np.asarray(v, dtype=float)[self.order]
        return self._from_chain(self.chain.gravity_stiffness_product(self._to_chain(q), v), 1)

    def input_matrix(self, q) -> np.ndarray:
        return self._B.copy()

    def friction_forces(self, q, qd) -> np.ndarray:
        epsilon = None if self.coulomb == "sign" else self.coulomb_velocity
        return coulomb_friction(self._coulomb, self._B, qd, epsilon)

    def potential_energy(self, q) -> float:
        q = np.asarray(q, dtype=float)
        # the chain has no springs: its potential is the gravitational one
        return float(0.5 * q @ self._K @ q) + self.chain.potential_energy(self._to_chain(q))

    def bias_forces(self, q, qd) -> np.ndarray:
        q, qd = self._state(q, qd)
        return self._from_chain(self.chain.bias_forces(q[self.order], qd[self.order]), 1)

    def nonlinear_forces(self, q, qd) -> np.ndarray:
        q, qd = self._state(q, qd)
        return self._from_chain(self.chain.nonlinear_forces(q[self.order], qd[self.order]), 1)

    def inertial_forces(self, q, qd, qdd) -> np.ndarray:
        q, qd = self._state(q, qd)
        qdd = np.asarray(qdd, dtype=float)[self.order]
        return self._from_chain(self.chain.inertial_forces(q[self.order], qd[self.order], qdd), 1)

    # -- geometry ---------------------------------------------------------------
    def _bodies_at(self, links, s) -> tuple[np.ndarray, np.ndarray]:
        """The chain body (from 1) and the distance along it of each point (link, s)."""
        bodies, local = np.empty(len(s), dtype=int), np.empty(len(s))
        for p, (number, x) in enumerate(zip(links, s, strict=True)):
            number = int(number)
            if number not in self.pieces:
                bodies[p], local[p] = self.link_bodies[number - 1][0] + 1, x
                continue
            pieces, n = self.pieces[number], self.segments[number]
            h = self.arm.links[number - 1].length / n
            piece = pieces[min(max(int(np.floor(x / h + 0.5)), 0), n)]
            bodies[p], local[p] = piece.body + 1, x - piece.start
        return bodies, local

    def point_position(self, link: int, s: float, q) -> np.ndarray:
        link = check.link_number(link, self.arm.n_links)
        length = self.arm.links[link - 1].length
        s = check.on_link(s, link, 0.0, length, length)
        q, _ = self._state(q)
        at = np.array([min(max(float(s), 0.0), length)])
        return self.point_positions(np.array([link]), at, q[None])[0, 0]

    def point_positions(self, links, s, Q) -> np.ndarray:
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        bodies, local = self._bodies_at(np.asarray(links, dtype=int), np.asarray(s, dtype=float))
        return self.chain.point_positions(bodies, local, Q[:, self.order])

    def tip_position(self, q) -> np.ndarray:
        return self.chain.tip_position(self._to_chain(q))

    def tip_deflections(self, q) -> dict[str, float]:
        """Each flexible link's tip in its undeformed link frame (the root piece's): the
        in-plane (y) and out-of-plane (z) components [m]."""
        q, _ = self._state(q)
        frames = self.kinematics.frames(q[None], jacobians=False)
        out = {}
        for number in self.arm.flexible_links:
            f = frames[number - 1]
            local = f.R_link[0].T @ (f.p_tip[0] - f.p_link[0])
            out[f"tip_w{number}"] = float(local[1])
            if self.planes[number] == 2:
                out[f"tip_v{number}"] = float(local[2])
        return out

    # -- forward dynamics: the chain's solvers -----------------------------------------
    def _choose_solver(self) -> str:
        """``"recursive"`` (the compiled articulated bodies of the rigid chain, O(bodies)) on the
        compiled engine, else ``"composite"``."""
        return "recursive" if self.chain.compiled is not None else "composite"

    def _chain_solver(self, solver: str):
        """``(q, q̇, applied) -> q̈`` in the model's coordinates by the chain's ``solver``."""
        name = self.auto_solver() if solver == "auto" else solver
        if name not in SOLVERS:
            raise ValueError(f"solver must be one of {sorted(SOLVER_CHOICES)}, got {solver!r}")
        if name == "structured":
            raise ValueError(
                "solver 'structured': a segment model is a chain of rigid bodies, with no flexible "
                "body to eliminate; use 'recursive' (O(bodies)) or 'composite'"
            )
        solve, chain, order, inverse = SOLVERS[name], self.chain, self.order, self.inverse

        def accelerations(q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
            return solve(chain, q[order], qd[order], applied[order])[inverse]

        return accelerations

    def forward_dynamics(self, q, qd, tau, solver: str = "auto", *, friction: bool = True) -> np.ndarray:
        accelerations = self._chain_solver(solver)
        q, qd = self._state(q, qd)
        return accelerations(q, qd, self._applied(q, qd, tau, friction))

    def rates_function(self, solver: str = "auto"):
        accelerations, n = self._chain_solver(solver), self.n_dof

        def rates(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
            q, qd = self._state(x[:n], x[n : 2 * n])
            qdd = accelerations(q, qd, self._applied(q, qd, tau))
            u = self._B.T @ qd
            dissipated = qd @ self._D @ qd - u @ self.friction_forces(q, qd)
            return np.concatenate([qd, qdd, [u @ tau, dissipated]])

        return rates


# -- the expanded chain -----------------------------------------------------------------------


@dataclass
class _Layout:
    """The rigid chain of an arm's segments, built link by link (:func:`_expand`), and how its
    coordinates map to the model's: the chain's coordinate j is the model's ``order[j]``."""

    joints: list[Joint] = dataclasses.field(default_factory=list)
    links: list[Link] = dataclasses.field(default_factory=list)
    names: list[str] = dataclasses.field(default_factory=list)
    order: list[int] = dataclasses.field(default_factory=list)
    stiffness: list[float] = dataclasses.field(default_factory=list)
    pieces: dict[int, list[Piece]] = dataclasses.field(default_factory=dict)
    link_bodies: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    flex_columns: dict[int, slice] = dataclasses.field(default_factory=dict)
    planes: dict[int, int] = dataclasses.field(default_factory=dict)
    arm: Arm | None = None

    def add(self, joint: Joint, link: Link, coordinate: int) -> None:
        """One body of the chain, after the joint of model coordinate ``coordinate``."""
        self.joints.append(joint)
        self.links.append(link)
        self.order.append(coordinate)


def _segment_count(count: Any, number: int) -> int:
    count = check.integer(count, f"link {number}", "segments", minimum=1)
    if count > MAX_SEGMENTS:
        raise ValueError(
            f"link {number}: segments must be at most {MAX_SEGMENTS} (every piece is a body of one "
            f"dense chain), got {count}"
        )
    return count


def _check_arm(arm: Arm) -> None:
    """Refuse what a chain of rigid pieces cannot represent."""
    if arm.translating_links:
        raise ValueError(
            f"link {arm.translating_links[0]}: a flexible link on a prismatic joint translates through "
            "its hub, so its segments would change length; the finite-segment model does not represent "
            "it (use 'amm' or 'fem')"
        )
    if arm.tip_rotation == "chord":
        for number in arm.flexible_links:
            # a next link, its own tip payload, or (on the last link) the arm's payload
            if (
                number < arm.n_links
                or arm.links[number - 1].tip_payload is not None
                or arm.payload is not None
            ):
                raise ValueError(
                    f"tip_rotation: 'chord' turns what link {number} carries by its chord angle; the "
                    "finite-segment model carries it on the last piece (the slope convention), got 'chord'"
                )


def _planes(arm: Arm, link: Link) -> int:
    return 2 if (link.EI_out is not None and not arm.is_planar) else 1


def _expand(arm: Arm, counts: Mapping[int, int]) -> _Layout:
    """The rigid chain: rigid links stay as they are; each flexible link becomes its pieces
    (:func:`_add_flexible`). The payload of a flexible last link is folded into its tip piece."""
    layout = _Layout(names=list(arm.joint_names), stiffness=[0.0] * arm.n_joints)
    for number, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True), start=1):
        first = len(layout.links)
        if link.is_flexible:
            _add_flexible(layout, arm, number, counts[number])
        else:
            layout.add(joint, link, number - 1)
        layout.link_bodies.append((first, len(layout.links) - 1))
    payload = None if arm.links[-1].is_flexible else arm.payload
    layout.arm = Arm(tuple(layout.joints), tuple(layout.links), payload, arm.gravity, arm.is_planar, "slope")
    return layout


def _add_flexible(layout: _Layout, arm: Arm, number: int, n: int) -> None:
    """Flexible link ``number`` as N + 1 pieces: the root piece on the arm's joint, then per
    spring its joint (in two bending planes the in-plane joint, the cardan body and the
    out-of-plane joint) and the next piece. Its coordinates: the N in-plane spring angles
    ``w<i>_<k>``, then the N out-of-plane ones ``v<i>_<k>``."""
    joint, link = arm.joints[number - 1], arm.links[number - 1]
    planes, offset = _planes(arm, link), len(layout.names)
    layout.names += [f"w{number}_{k}" for k in range(1, n + 1)]
    layout.stiffness += [link.EI * n / link.length] * n
    if planes == 2:
        layout.names += [f"v{number}_{k}" for k in range(1, n + 1)]
        layout.stiffness += [link.EI_out * n / link.length] * n
    layout.flex_columns[number] = slice(offset, offset + planes * n)
    layout.planes[number] = planes
    layout.pieces[number] = []
    payloads = [p for p in (link.tip_payload, arm.payload if number == arm.n_links else None) if p]
    for k, (start, end) in enumerate(_piece_bounds(link.length, n)):
        last = k == n
        twist = joint.alpha if last else 0.0  # the link's DH twist follows its tip piece
        axes = np.eye(3) if planes == 1 or k == 0 else _rotation_x(CARDAN_TWIST)
        piece = _piece(link, start, end, payloads if last else [], axes)
        if k == 0:
            layout.add(dataclasses.replace(joint, a=end - start, alpha=0.0), piece, number - 1)
        elif planes == 1:
            layout.add(Joint(a=end - start, alpha=twist), piece, offset + k - 1)
        else:
            layout.add(Joint(a=0.0, alpha=CARDAN_TWIST), _cardan(link, end - start), offset + k - 1)
            layout.add(Joint(a=end - start, alpha=twist - CARDAN_TWIST), piece, offset + n + k - 1)
        layout.pieces[number].append(Piece(start, end, len(layout.links) - 1))


def _piece_bounds(length: float, n: int) -> list[tuple[float, float]]:
    """[start, end] of the N + 1 pieces: springs at (k − ½) L/N, k = 1 … N."""
    springs = [(k - 0.5) * length / n for k in range(1, n + 1)]
    ends = [0.0, *springs, length]
    return list(itertools.pairwise(ends))


def _rotation_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _cardan(link: Link, length: float) -> Link:
    """The middle body of a universal joint: massless in the model (:data:`CARDAN_MASS`)."""
    mass = max(CARDAN_MASS * link.mass_per_length * length, 1e-15)
    return Link.rigid(length, mass, com=(0.0, 0.0, 0.0), inertia=np.zeros((3, 3)))


def _piece(link: Link, start: float, end: float, payloads: list[Payload], axes: np.ndarray) -> Link:
    """The rigid body of the beam on [start, end] with the lumped masses on it (and
    ``payloads`` at its end), in the piece's body axes (``axes``: their directions in the
    link's axes at rest)."""
    length = end - start
    beam = link.mass_per_length * length
    # (mass, position along the piece, inertia tensor about its own centre in link axes)
    rod = np.diag([0.0, 1.0, 1.0]) * beam * length**2 / 12.0
    bodies = [(beam, 0.5 * length, rod)]
    for lumped in link.lumped_masses:
        if _holds(link, start, end, lumped.position):
            bodies.append((lumped.mass, lumped.position - start, np.diag([0.0, 1.0, 1.0]) * lumped.inertia))
    bodies += [(p.mass, length, p.inertia_tensor()) for p in payloads]
    mass = sum(m for m, _, _ in bodies)
    centre = sum(m * x for m, x, _ in bodies) / mass
    inertia = sum(J + m * (x - centre) ** 2 * np.diag([0.0, 1.0, 1.0]) for m, x, J in bodies)
    inertia = axes.T @ inertia @ axes
    return Link.rigid(length, mass, com=(centre, 0.0, 0.0), inertia=0.5 * (inertia + inertia.T))


def _holds(link: Link, start: float, end: float, s: float) -> bool:
    """Whether the piece [start, end) holds the point s (the tip piece also its end, the tip)."""
    return start <= s < end or (s == end == link.length)


def _own_mass_block(arm: Arm, number: int, layout: _Layout) -> np.ndarray:
    """The springs' mass block of flexible link ``number`` on its own, straight and clamped at
    its joint (beam and lumped masses, as the engine's M_δδ): the M of damping."""
    link = arm.links[number - 1]
    alone = dataclasses.replace(link, tip_payload=None)
    joint = Joint(a=link.length)
    single = Arm.from_dh((joint,), (alone,))
    part = _expand(single, {1: len(layout.pieces[number]) - 1})
    M = ChainModel(part.arm, {}).mass_matrix(np.zeros(len(part.order)))
    inverse = np.argsort(part.order)
    M = M[np.ix_(inverse, inverse)]
    return M[1:, 1:]


__all__ = ["CARDAN_MASS", "MAX_SEGMENTS", "FiniteSegmentModel", "LinkEnds", "Piece", "SegmentKinematics"]
