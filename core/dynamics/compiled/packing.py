"""Packing a :class:`~core.dynamics.engine.ChainModel` into the kernels' data
(:mod:`~core.dynamics.compiled.layout`), and the object that runs the kernels on it."""

from __future__ import annotations

import numpy as np

from core.dynamics.compiled.algorithms import forward, inverse, mass, prescribed, rates, rates_jacobian
from core.dynamics.compiled.layout import LINK
from core.dynamics.kinematics import check_free_length
from core.dynamics.prescribed import SINGULAR, powers
from core.numerics.rotations import spatial_inertia

#: A fixed-length flexible link with at least this many coordinates and a banded mass block
#: (bandwidth ≤ m / :data:`FINE_BAND_RATIO`: element meshes) solves its joint-space inertia
#: without an m × m factor (:mod:`~core.dynamics.compiled.fine`); fewer coordinates (assumed
#: modes, coarse meshes) keep the dense Cholesky factor, cheaper there. Measured crossover
#: (benchmarks/dynamics_speed.py, two links of E elements): see docs/ARCHITECTURE.md.
FINE_COORDINATES = 40
#: See :data:`FINE_COORDINATES`.
FINE_BAND_RATIO = 4


def bandwidth(block: np.ndarray) -> int:
    """The largest |i − j| of a nonzero entry of the square ``block`` (0 for a zero block)."""
    rows, cols = np.nonzero(np.asarray(block))
    return int(np.max(np.abs(rows - cols))) if rows.size else 0


def _writable(x: np.ndarray) -> np.ndarray:
    """``x`` itself, or a contiguous copy if it is read-only or strided (numba compiles
    either as a separate type: one more compilation of every kernel, ~20 s, for nothing)."""
    return x if x.flags.writeable and x.flags.c_contiguous else np.array(x, dtype=float)


class CompiledChain:
    """The table and buffer of a :class:`~core.dynamics.engine.ChainModel` and the compiled
    algorithms on them.

    Built by :func:`compile_chain`. Every method takes real, finite, contiguous float
    arrays of the model's sizes (the model checks them).
    """

    def __init__(self, table: np.ndarray, buffer: np.ndarray, gravity: np.ndarray, arm, following=()) -> None:
        #: One :data:`~core.dynamics.compiled.layout.LINK` record per link.
        self.table = table
        #: [F, F1, F2]: the values and the first and second l-derivatives (F1, F2 nonzero only
        #: on the rows of length-following translating links, rewritten by _configuration).
        self.buffer = buffer
        self.gravity = gravity
        self.smax = int(table["size"].max())
        self._zero_gravity = np.zeros(3)
        self._arm = arm
        self._translating = [i + 1 for i in np.flatnonzero(table["translating"])]
        #: (joint index, body, start, stop, plane pairs, chord tip) per following link.
        self._following = tuple(following)

    def _configuration(self, q: np.ndarray) -> np.ndarray:
        """``q`` ready for the kernels, each free length checked (ValueError naming the joint),
        and the rows of every length-following link written at its free length q_i (once per
        new q_i: :meth:`TranslatingBody.kernel_taylor` and one slice assignment)."""
        for number in self._translating:
            check_free_length(self._arm, number, q[number - 1])
        parts = self.buffer.reshape(3, -1)  # (F, F1, F2), a view taken afresh (copies alias their own)
        for i, body, start, stop, pairs, chord in self._following:
            l = float(q[i])
            if self.table["l0"][i] != l:
                parts[:, start:stop] = _translating_rows(body.kernel_taylor(l), pairs, 3, chord)
                self.table["l0"][i] = l
        return _writable(q)

    def invalidate(self) -> None:
        """Forget the free lengths the rows of length-following links were written at, so that
        the next call rewrites them (their shapes changed at the same l, e.g. other roots)."""
        for i, *_ in self._following:
            self.table["l0"][i] = np.nan

    def _arguments(self, q) -> tuple:
        """The kernels' leading arguments (table, buffer, smax, q) at the configuration q."""
        return self.table, self.buffer, self.smax, self._configuration(q)

    def forward(self, q, qd, applied) -> np.ndarray:
        """q̈ with M q̈ + h + G = applied."""
        return forward(*self._arguments(q), _writable(qd), _writable(applied), self.gravity)

    def solve(self, q, rhs) -> np.ndarray:
        """M(q)⁻¹ rhs (the recursion at rest, no gravity)."""
        return forward(*self._arguments(q), 0 * q, _writable(rhs), self._zero_gravity)

    def inverse(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """M q̈ + h + G (G left out if not ``gravity``)."""
        g = self.gravity if gravity else self._zero_gravity
        return inverse(*self._arguments(q), _writable(qd), _writable(qdd), g)

    def bias(self, q, qd) -> np.ndarray:
        """h(q, q̇) = C(q, q̇) q̇."""
        return inverse(*self._arguments(q), _writable(qd), 0 * q, self._zero_gravity)

    def gravity_forces(self, q) -> np.ndarray:
        """G(q)."""
        zero = 0 * q
        return inverse(*self._arguments(q), zero, zero, self.gravity)

    def mass(self, q) -> np.ndarray:
        """M(q)."""
        return mass(*self._arguments(q))

    def rates_function(self, B, D, K, coulomb, epsilon: float, composite: bool, check):
        """``rates(x, τ) -> ẋ`` by one :func:`~.algorithms.rates` call (constant B, D, K; no
        translating link). ``check(q, q̇)`` names a non-finite coordinate when a kernel fails."""
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
        #: What :func:`~.explicit.dop853` calls the kernel with (a run without Python per stage).
        state_rates.kernel_arguments = (table, buffer, smax, constants)
        return state_rates

    def prescribed_function(self, applied_with_elastic, input_matrix, check):
        """``prescribed(q, q̇, q̈_r) -> (q̈, τ, powers, ½ q̇ᵀMq̇)`` (as
        :func:`core.dynamics.prescribed.prescribed_terms`) by one :func:`~.algorithms.prescribed`
        call, with the model's ``applied_with_elastic(q, q̇, τ)`` and ``input_matrix(q)`` (B, D, K
        of translating links depend on q). ``check(q, q̇)`` names a non-finite coordinate when
        the kernel fails."""
        gravity = self.gravity

        def prescribed_terms(q, qd, qdd_joints):
            qdd_joints = np.asarray(qdd_joints, dtype=float)
            applied, elastic = applied_with_elastic(q, qd, np.zeros(qdd_joints.size))
            B = np.ascontiguousarray(input_matrix(q), dtype=float)
            arguments = self._arguments(q)  # the free lengths checked, following rows written
            try:
                out = prescribed(
                    *arguments, _writable(qd), _writable(qdd_joints), B, _writable(applied), gravity
                )
            except np.linalg.LinAlgError:
                check(q, qd)  # a non-finite state: named by the model
                raise np.linalg.LinAlgError(SINGULAR) from None
            n, n_joints = B.shape
            tau = out[n : n + n_joints]
            return out[:n], tau, powers(qd, B, tau, applied, elastic), float(out[-1])

        return prescribed_terms


#: The arrays of a translating row, in buffer order (o_A, o_B, o_Al, o_Bl, o_N, o_P, o_mdd,
#: o_R0, o_U, o_theta: contiguous); N0 and P are [a][c] blocks, written for the plane pairs.
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


class _Buffer:
    """The values of the buffer as they are packed: :meth:`put` appends an array and returns
    its offset."""

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.size = 0

    def put(self, values) -> int:
        values = np.ascontiguousarray(values, dtype=float).ravel()
        self.chunks.append(values)
        self.size += values.size
        return self.size - values.size


def _pack_attachments(model, i: int, row, own: np.ndarray, buffer: _Buffer) -> None:
    """Hub, motor and payloads of link i + 1 into its row. ``own``: its flexible columns of q."""
    joint, number, B = model.arm.joints[i], i + 1, model._B
    row["hub_mass"] = joint.hub_mass
    if joint.hub_inertia and joint.kind == "revolute":
        row["has_hub_inertia"], row["hub_inertia"] = True, joint.hub_inertia
        row["o_hub"] = buffer.put(np.concatenate([[0, 0, 0, 0, 0, 1.0], B[own, i]]))
    if joint.motor_inertia:
        row["has_armature"], row["armature"] = True, joint.reflected_inertia
        u = [*own, i] if row["translating"] else [i, *own]  # the order of u_i (algorithms.joint_rows)
        row["o_armature"] = buffer.put(B[u, i])
    payloads = model._payloads(number)
    if payloads:
        row["has_payload"] = True
        inertia = sum(p.inertia_tensor() for p in payloads)
        row["o_payload"] = buffer.put(spatial_inertia(sum(p.mass for p in payloads), np.zeros(3), inertia))


def _pack_translating(model, i: int, row, body, buffer: _Buffer):
    """A translating link's arrays (contiguous, in ``_TRANSLATING_ARRAYS`` order) into its row;
    returns (start, stop, plane pairs, chord, rows) for a length-following link, else None."""
    arm, m = model.arm, row["m"]
    row["mass"], row["rho"] = body.mass, body.rho
    pairs = [(a, c) for a in range(2) for c in range(2)] if body.planes == 2 else [(0, 0)]
    chord = arm.tip_rotation != "slope"
    row["following"] = getattr(body, "following", None) is not None
    if row["following"]:
        row["l0"] = arm.links[i].length
        rows = _translating_rows(body.kernel_taylor(arm.links[i].length), pairs, 3, chord)
    else:
        tip = model.kinematics.tip_maps[i]
        constants = {name: getattr(body, name) for name in _TRANSLATING_ARRAYS[:-2]}
        constants["translation"], constants["rotation"] = tip.translation, tip.rotation
        rows = _translating_rows(constants, pairs, 1)
    mm, blocks = m * m, len(pairs)
    expected = 12 * m + 2 * blocks * mm + 2 * mm + 6 * m
    if rows.shape[1] != expected:
        raise ValueError(
            f"link {i + 1}: the translating arrays hold {rows.shape[1]} numbers, expected {expected}"
        )
    start = buffer.put(rows[0])
    offsets = {"o_A": 3 * m, "o_B": 3 * m, "o_Al": 3 * m, "o_Bl": 3 * m, "o_N": blocks * mm}
    offsets |= {"o_P": blocks * mm, "o_mdd": mm, "o_R0": mm, "o_U": 3 * m, "o_theta": 3 * m}
    at = start
    for name, size in offsets.items():  # the order of _TRANSLATING_ARRAYS
        row[name] = at
        at += size
    return (start, start + expected, pairs, chord, rows) if row["following"] else None


def _pack_beam(model, i: int, row, body, buffer: _Buffer, fine_from: int) -> None:
    """A fixed-length flexible link's arrays into its row (``fine_from``: :func:`compile_chain`)."""
    put, tip = buffer.put, model.kinematics.tip_maps[i]
    m = row["m"]
    row["mdd_band"] = bandwidth(body.M_δδ)
    row["fine"] = tip.root is None and m >= fine_from and FINE_BAND_RATIO * row["mdd_band"] <= m
    row["mass"], row["first_x"], row["second_x"] = body.mass, body.first_x, body.second_x
    row["o_A"], row["o_B"], row["o_skew_B"] = put(body.A), put(body.B), put(body._skew_x_B)
    pairs = [(a, c) for a in range(2) for c in range(2)] if body.planes == 2 else [(0, 0)]
    row["o_N"] = put(np.concatenate([body.N[a][c].ravel() for a, c in pairs]))
    row["o_rot_oo"], row["o_rot_od"], row["o_mdd"] = put(body.rotary_ΩΩ), put(body.rotary_Ωδ), put(body.M_δδ)
    row["o_U"], row["o_theta"] = put(tip.translation), put(tip.rotation)
    if tip.root is not None:  # a pinned frame bending in two planes (core.dynamics.kinematics)
        row["tilted"], row["o_root"] = True, put(tip.root)
    if body.stiffening:  # the body's own foreshortening blocks (the tip map's H is its H)
        blocks = body.foreshortening
        row["stiffening"] = True
        row["o_P1"], row["o_P2"], row["o_H"] = put(blocks["P1"]), put(blocks["P2"]), put(tip.foreshortening)
        points = body.foreshortening_points  # the Gram terms' mass measure (core.dynamics.foreshortening)
        row["fs_segments"], row["fs_points"] = points.support.shape[0], points.mass.size
        row["fs_width"], row["fs_samples"] = points.width, points.samples
        row["o_fs_support"], row["o_fs_segment"] = put(points.support), put(points.segment)
        row["o_fs_mass"], row["o_fs_position"] = put(points.mass), put(points.position)
        row["o_fs_values"] = put(points.values)
        row["o_fs_seg_slopes"], row["o_fs_seg_weights"] = (
            put(points.segment_slopes),
            put(points.segment_weights),
        )
        row["o_fs_pt_slopes"], row["o_fs_pt_weights"] = put(points.point_slopes), put(points.point_weights)


def compile_chain(model, fine_from: int = FINE_COORDINATES) -> CompiledChain:
    """The :class:`CompiledChain` of a ChainModel.

    ``fine_from``: the fewest coordinates of a body solved without its m × m factor
    (:data:`FINE_COORDINATES`; the tests lower it to compare both paths on one model).

    A translating link with length-following shapes (``body.following`` not None) gets its
    rows written at l₀ = its full length, with their l-derivatives (F1, F2); the chain
    rewrites them at every new free length (:meth:`CompiledChain._configuration`)."""
    arm = model.arm
    table = np.zeros(arm.n_links, dtype=LINK)
    buffer = _Buffer()
    following = []  # (joint index, body, start, stop, plane pairs, chord) of length-following links
    derivatives = []  # and their rows' l-derivatives F1, F2, shape (2, stop − start)
    for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
        number, row = i + 1, table[i]
        body = model.bodies.get(number)
        m = body.n_coordinates if body is not None else 0
        row["kind"] = 0 if joint.kind == "revolute" else 1
        row["flexible"], row["m"], row["translating"] = body is not None, m, number in model.translating
        row["size"] = 6 + m + row["translating"]
        for name in ("theta_offset", "d", "a", "alpha"):  # the DH parameters
            row[name] = getattr(joint, name)
        row["length"] = link.length
        own = np.arange(model.n_dof)[model.flex_columns[number]] if body is not None else np.zeros(0, int)
        _pack_attachments(model, i, row, own, buffer)
        if body is None:
            inertia = spatial_inertia(link.mass, np.asarray(link.com, dtype=float), link.inertia_tensor())
            row["o_rigid"] = buffer.put(inertia)
            continue
        row["column"], row["planes"] = model.flex_columns[number].start, body.planes
        if row["translating"]:
            packed = _pack_translating(model, i, row, body, buffer)
            if packed is not None:
                *where, rows = packed
                following.append((i, body, *where))
                derivatives.append(rows[1:])
        else:
            _pack_beam(model, i, row, body, buffer, fine_from)
    values = np.concatenate(buffer.chunks) if buffer.chunks else np.zeros(0)
    data = np.zeros(3 * values.size)  # [F, F1, F2]
    parts = data.reshape(3, -1)
    parts[0] = values
    for (_, _, start, stop, *_), rows in zip(following, derivatives, strict=True):
        parts[1:, start:stop] = rows
    return CompiledChain(table, data, np.asarray(arm.gravity, dtype=float), arm, following)
