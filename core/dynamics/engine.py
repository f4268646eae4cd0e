"""The multibody engine shared by both backends.

:class:`ChainModel` builds every :class:`~core.dynamics.model.Model` primitive of a
serial chain from the arm description and one :class:`~core.dynamics.basis.BeamBasis`
per flexible link. The assumed-modes and finite-element backends differ only
in the bases they hand over.

Kinetic energy, body by body (frames and Jacobians from
:class:`~core.dynamics.kinematics.ChainKinematics`):

* rigid link: mass at its centre of mass, inertia tensor in the link frame;
* flexible link: ½ νᵀ M_b(δ) ν with ν = (v, Ω, δ̇) of the beam frame
  (:class:`~core.dynamics.flexible_body.FlexibleBody`; beam, lumped masses);
* hub: mass on the joint axis at the link-frame origin, inertia about the
  joint axis, turning with the joint *and* the beam root — with pinned
  (chord) frames the hub angle is q_i + w'(0), the actuated coordinate Bᵀq;
* motor: reflected rotor inertia I_m N² on the actuated rate (Bᵀq̇)_i (the
  rotor's own gyroscopic coupling with the carrying link is neglected, the
  usual geared-motor model);
* payloads (a link's ``tip_payload`` and the arm's ``payload``): rigid bodies
  at the tip frame with the tip's deformed orientation.

M(q) = Σ Jᵀ M_body J is assembled from these. One definition of each term runs the dynamics:
by default M (composite bodies), h = C q̇ and G (recursive Newton–Euler) and
``solver="recursive"`` (articulated bodies) come from the compiled kernels of
:mod:`core.dynamics.compiled`. Their independent oracle is the readable numpy engine
(``compiled=False``): M and G from one kinematics pass (:mod:`core.dynamics.oracle`), ∂M/∂q_k
by the complex step (exact to round-off, :mod:`core.numerics.rotations`), h from the
Christoffel symbols of ∂M/∂q (:meth:`~core.dynamics.model.Model.coriolis_matrix`, so Ṁ − 2C is
skew to round-off) and forward dynamics by the composite solve. The oracle has no
articulated-body solver: ``solver="recursive"`` is the compiled one under either option.

Dense data on first use: the constructor keeps each basis in its own representation
(:class:`~core.dynamics.basis.BeamBasis`: sparse blocks and an O(n) deformation operator for
element meshes) and builds nothing of size n_dof² or m² per link. K, D (with the modal
damping's eigen-solve), the bodies' m × m blocks and the compiled chain are computed when a
primitive first needs them and cached (the same values as building them eagerly). The
structured eigen-solve (``natural_frequencies(count=...)``, :mod:`core.dynamics.structured`) needs
none of them: O(n_dof) time and memory; neither does ``solver="structured"`` of forward
dynamics and simulations (the same module: block elimination on M = BD + W C Wᵀ). M(q) and
the composite and recursive solvers stay dense (O(n_dof²) memory, O(m³) per link and step).

Joint friction: viscous (in D) and Coulomb, either ``"smooth"``
τ_c = −F_c tanh(u/ε) (default, ε = ``coulomb_velocity``) or ``"sign"``
τ_c = −F_c sign(u), with u = (Bᵀq̇)_i the actuated rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from functools import cached_property, lru_cache, partial
from typing import Literal

import numpy as np

from core.arm import Arm
from core.dynamics import oracle
from core.dynamics.basis import BeamBasis, TranslatingBasis, foreshortening_at
from core.dynamics.elastic import bending_block, deformation_coordinates, following_stiffness, link_damping
from core.dynamics.flexible_body import FlexibleBody, TranslatingBody
from core.dynamics.kinematics import ChainKinematics, TipMap, check_free_length
from core.dynamics.link_bodies import check_options, link_body, tip_map
from core.dynamics.model import Model, coulomb_friction
from core.dynamics.structured import NotStable, lowest_frequencies
from core.dynamics.structured_forward import structured_dynamics
from core.numerics import validation as check
from core.numerics.derivatives import COMPLEX_STEP, complex_step_jacobian

#: Default velocity scale ε of the smooth Coulomb friction model [rad/s or m/s].
COULOMB_VELOCITY = 1e-3
#: How many recent configurations keep M, G (and, for analyses, ∂M/∂q) cached.
DERIVATIVE_CACHE = 8
#: ``natural_frequencies(method="auto")`` takes the structured path above this many coordinates.
STRUCTURED_MINIMUM = 128
#: Complex-step directions per oracle pass of :meth:`ChainModel.gravity_stiffness`. All in one
#: pass held every direction's arrays at once: two stiffened links × 256 elements (1026
#: coordinates) 7.5 s and 1.8 GiB, against 3.7 s and tens of MiB at 32 a pass (the same bits;
#: 64 a pass 4.2 s). Measured on one BLAS thread.
GRAVITY_BATCH = 32
#: :meth:`ChainModel.modal_mass_matrix` takes the compiled kernel above this many coordinates:
#: the oracle's pass grows as ~n^2.6 (0.31 s at 514 coordinates, the cost of loading the
#: kernels; 1.97 s at 1026, against 8.6 ms compiled).
ORACLE_MASS_LIMIT = 512


class ChainModel(Model):
    """A serial chain of rigid and flexible links on the shared engine.

    Parameters
    ----------
    arm : Arm
    bases : mapping
        Link number (from 1) → :class:`BeamBasis` for every flexible link.
    coulomb : {"smooth", "sign"}
        Coulomb friction model (see module docstring).
    coulomb_velocity : float
        ε of the smooth model [rad/s or m/s].
    description : str
        Shown in ``repr`` and reports.
    compiled : bool or None
        Evaluate M, h and G with the compiled kernels of :mod:`core.dynamics.compiled` (True;
        None, the default, means True). False evaluates them with the numpy oracle (M, G from
        one kinematics pass, h from the Christoffel symbols): the independent implementation
        the tests compare the kernels with. ``solver="recursive"`` is the compiled
        articulated-body algorithm under either option (the oracle has none).
    geometric_stiffening : bool
        Keep the axial foreshortening u(s) = −½∫₀ˢ w'² of every fixed-length flexible link
        (docs/MODEL.md, Dynamics; :mod:`core.dynamics.flexible_body`): second-order terms in the kinetic and the
        gravitational potential energy and the tip's axial motion, so that a spinning beam
        stiffens and answers under load do not depend on the frame choice. Off by default
        (the classic floating-frame formulation). Both engines carry it (compiled by
        default); not on translating links; the structured eigen-solve is not used.
    """

    on_engine = True

    def __init__(
        self,
        arm: Arm,
        bases: Mapping[int, BeamBasis],
        *,
        coulomb: Literal["smooth", "sign"] = "smooth",
        coulomb_velocity: float = COULOMB_VELOCITY,
        description: str = "",
        compiled: bool | None = None,
        geometric_stiffening: bool = False,
    ) -> None:
        compiled = True if compiled is None else compiled
        check_options(arm, bases, coulomb, compiled, geometric_stiffening)
        self.arm = arm
        if geometric_stiffening:
            description = f"{description}, geometric stiffening" if description else "geometric stiffening"
        #: The axial foreshortening of the beams is kept (docs/MODEL.md, Dynamics; both engines).
        self.geometric_stiffening = bool(geometric_stiffening)
        self.coulomb = coulomb
        self.coulomb_velocity = float(check.positive(coulomb_velocity, "", "coulomb_velocity"))
        self.description = description
        names = list(arm.joint_names)
        self.bases: dict[int, BeamBasis | TranslatingBasis] = {}
        self.bodies: dict[int, FlexibleBody | TranslatingBody] = {}
        self.translating = arm.translating_links
        self.flex_columns: dict[int, slice] = {}
        tip_maps: dict[int, TipMap] = {}
        offset = arm.n_joints
        for number in arm.flexible_links:
            basis = bases[number]
            body = link_body(arm, number, basis, self.geometric_stiffening)
            columns = slice(offset, offset + body.n_coordinates)
            offset += body.n_coordinates
            names += [f"w{number}_{k}" for k in range(1, basis.n + 1)]
            if body.planes == 2:
                names += [f"v{number}_{k}" for k in range(1, basis.n + 1)]
            tip_maps[number - 1] = tip_map(arm, number, body, columns, self.geometric_stiffening)
            self.bases[number] = basis
            self.bodies[number] = body
            self.flex_columns[number] = columns
        self._coordinates = tuple(names)
        self.kinematics = ChainKinematics(arm, tip_maps, len(names))
        self._B = self._build_input_matrix()
        # Translating links: their unit stiffness blocks (dense; K is filled in per configuration).
        self._unit_stiffness = {number: self._stiffness_block(number) for number in self.translating}
        self._coulomb = np.array([j.coulomb_friction for j in arm.joints], dtype=float)
        self._terms = lru_cache(maxsize=DERIVATIVE_CACHE)(self._terms_from_bytes)
        self._real_cache: dict[bytes, dict] = {}  # q → frames, M, G of the oracle; see _real_terms
        self._compile = compiled
        self._compiled_chain = None

    # -- dense data built on first use ---------------------------------------------------
    # A fine element mesh gives n_dof in the thousands: the constructor builds nothing of
    # size n_dof² (nor (2E)² per link). K, D and the compiled chain (which holds every
    # body's dense blocks) are computed on first use and cached; the structured eigen-solve
    # (core.dynamics.structured) never asks for them, nor does solver="structured". The composite and
    # recursive solvers do: they stay dense (O(n_dof²) memory, O(n_dof³) per factorization).
    @property
    def kernels(self):
        """The compiled kernels of this chain (:class:`core.dynamics.compiled.CompiledChain`; built
        on first use, ~0.3 s to load numba) whatever ``compiled`` says: ``solver="recursive"``
        runs their articulated-body algorithm under either option."""
        if self._compiled_chain is None:
            from core.dynamics.compiled import compile_chain  # numba loads on first use (~0.3 s)

            self._compiled_chain = compile_chain(self)
        return self._compiled_chain

    @property
    def compiled(self):
        """The compiled kernels that evaluate M, h and G (:attr:`kernels`), or None for
        ``compiled=False`` (the numpy oracle evaluates them)."""
        return self.kernels if self._compile else None

    @cached_property
    def _K(self) -> np.ndarray:
        """Dense K of the fixed-length links (translating blocks: per configuration)."""
        return self._build_stiffness()

    @cached_property
    def _D(self) -> np.ndarray:
        """Dense D of the fixed-length links and the joints (translating links: per configuration)."""
        return self._build_damping()

    def on_bases(self, bases: Mapping[int, BeamBasis]) -> ChainModel:
        """A plain :class:`ChainModel` of the same arm on other ``bases`` (same link numbers),
        on the compiled kernels: the reduced chains of :mod:`core.dynamics.structured`."""
        return ChainModel(self.arm, bases)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description or f'{self.n_dof} coordinates'})"

    # -- layout ---------------------------------------------------------------
    @property
    def coordinates(self) -> tuple[str, ...]:
        return self._coordinates

    # -- constant matrices ------------------------------------------------------
    def _build_input_matrix(self) -> np.ndarray:
        B = np.zeros((self.n_dof, self.n_joints))
        B[: self.n_joints] = np.eye(self.n_joints)
        for number, basis in self.bases.items():
            joint = self.arm.joints[number - 1]
            if basis.frame == "pinned" and joint.kind == "revolute":
                # The hub turns with the beam root: hub angle = q_i + w'(0).
                B[self.flex_columns[number], number - 1] = self.bodies[number].to_plane(basis.root_slope, 0)
        return B

    def _stiffness_block(self, number: int) -> np.ndarray:
        """EI ∫φ''φ''ᵀ per plane; for a translating link the unit-length block (× 1/l³)."""
        return bending_block(self.arm.links[number - 1], self.bodies[number], self.bases[number].stiffness)

    def _build_stiffness(self) -> np.ndarray:
        """K of the fixed-length links (translating blocks are filled in per configuration)."""
        K = np.zeros((self.n_dof, self.n_dof))
        for number in self.bases:
            if number not in self.translating:
                K[self.flex_columns[number], self.flex_columns[number]] = self._stiffness_block(number)
        return K

    def _build_damping(self) -> np.ndarray:
        """D of the fixed-length links and the joints (translating links: per configuration)."""
        D = np.zeros((self.n_dof, self.n_dof))
        for number, body in self.bodies.items():
            damping = self.arm.links[number - 1].damping
            if damping is None or number in self.translating:
                continue
            cols = self.flex_columns[number]
            D[cols, cols] = link_damping(damping, self._K[cols, cols], body.M_δδ)
        for i, joint in enumerate(self.arm.joints):
            if joint.viscous_friction:
                b = self._B[:, i]
                D += joint.viscous_friction * np.outer(b, b)
        return D

    # -- primitives -----------------------------------------------------------
    def input_matrix(self, q) -> np.ndarray:
        return self._B.copy()

    def stiffness_matrix(self, q) -> np.ndarray:
        K = self._K.astype(np.result_type(q, float))
        for number in self._unit_stiffness:
            cols = self.flex_columns[number]
            l = self._free_length(q, number)
            K[cols, cols] = self._translating_stiffness(number, l) / l**3
        return K

    def _translating_stiffness(self, number: int, l, derivative: int = 0) -> np.ndarray:
        """EI ∫ψ''ψ''ᵀ dη (per plane) of translating link ``number`` at free length l, or its
        l-derivative; constant for frozen shapes (so its derivative is zero)."""
        block = self._unit_stiffness[number]
        if self.bodies[number].following is None:
            return 0.0 * block if derivative else block
        return following_stiffness(self.arm.links[number - 1], self.bodies[number], l, derivative)

    def _free_length(self, q, number: int):
        """Free length l = q_i of translating link ``number`` (checked by the kinematics)."""
        # One configuration: a scalar (q[..., i] of a vector is a 0-d array, which missed the
        # check's scalar path: 20 µs per call, 5 of the 45 s of the RRP tables' solves).
        l = q[number - 1] if np.ndim(q) == 1 else q[..., number - 1]
        check_free_length(self.arm, number, l)
        return l

    def elastic_forces(self, q) -> np.ndarray:
        """∂V_e/∂q: K(q) q, plus ½ δᵀ (∂K/∂l) δ = −(3/2l) δᵀKδ in the row of each translating link."""
        q = np.asarray(q)
        K = self.stiffness_matrix(q)
        forces = K @ q
        for number in self.translating:
            cols = self.flex_columns[number]
            delta, l = q[cols], q[number - 1]
            # K = S(l)/l³: ∂K/∂l = S'(l)/l³ − 3K/l (S' = 0 for frozen shapes)
            forces[number - 1] += -1.5 * (delta @ K[cols, cols] @ delta) / l
            if self.bodies[number].following is not None:
                forces[number - 1] += 0.5 * delta @ self._translating_stiffness(number, l, 1) @ delta / l**3
        return forces

    def elastic_stiffness(self, q) -> np.ndarray:
        """∂(elastic forces)/∂q, symmetric: K for fixed-length links, complex step otherwise."""
        q = np.asarray(q, dtype=float)
        if not self.translating:
            return self._K.copy()
        columns = [
            c
            for number in self.translating
            for c in (number - 1, *range(self.n_dof)[self.flex_columns[number]])
        ]
        H = self.stiffness_matrix(q)
        H[:, columns] = complex_step_jacobian(self.elastic_forces, q, columns)
        return 0.5 * (H + H.T)

    def elastic_coordinates(self, q) -> tuple[np.ndarray, np.ndarray] | None:
        """(Z, K_z): q = Z z with the elastic stiffness Zᵀ K Z = K_z exact (see
        :class:`~core.dynamics.basis.BeamBasis` ``deformations``); None with translating links
        (their stiffness depends on the free length)."""
        return None if self.translating else deformation_coordinates(self)

    def damping_matrix(self, q) -> np.ndarray:
        D = self._D.copy()
        for number in self.translating:
            damping = self.arm.links[number - 1].damping
            if damping is None:
                continue
            cols = self.flex_columns[number]
            l = float(self._free_length(np.asarray(q, dtype=float), number))
            K = self._translating_stiffness(number, l) / l**3
            D[cols, cols] += link_damping(damping, K, self.bodies[number].M_δδ(l))
        return D

    # -- natural frequencies of large models -------------------------------------------------
    def natural_frequencies(self, q=None, joints="locked", vectors=False, count=None, method="auto"):
        """As :meth:`Model.natural_frequencies`; ``method``: ``"dense"`` (M, ∂G/∂q and the
        pencil formed and solved whole), ``"structured"`` (the lowest ``count`` by Lanczos on
        the block-diagonal-plus-low-rank structure, :mod:`core.dynamics.structured`: O(n_dof) per
        iteration, and accurate on very fine meshes) or ``"auto"``: structured when ``count``
        is given, the model has more than :data:`STRUCTURED_MINIMUM` coordinates and no
        translating link. An unstable configuration (negative stiffness eigenvalues) is
        solved densely under ``"auto"``, which reports those as negative frequencies with a
        warning; ``"structured"`` raises :class:`core.dynamics.structured.NotStable` there."""
        if method not in ("auto", "dense", "structured"):
            raise ValueError(f"method must be 'auto', 'dense' or 'structured', got {method!r}")
        if joints not in ("locked", "free"):
            raise ValueError(f"joints must be 'locked' or 'free', got {joints!r}")
        if method == "structured" and self.geometric_stiffening:
            raise ValueError("method 'structured' does not handle geometric stiffening; use 'dense'")
        structured = method == "structured" or (
            method == "auto"
            and not self.geometric_stiffening
            and count is not None
            and self.n_dof > STRUCTURED_MINIMUM
            and not self.translating
        )
        if not structured:
            return super().natural_frequencies(q, joints, vectors, count)

        if count is None:
            raise ValueError("method 'structured' needs count, the number of lowest frequencies")
        q = getattr(q, "q", q)  # an Equilibrium: its configuration (as Model.natural_frequencies)
        if self.translating:
            raise ValueError("method 'structured' does not handle translating links")
        count = check.integer(count, "", "count", minimum=1)
        q = self.home() if q is None else np.asarray(q, dtype=float)
        q, _ = self._state(q)
        try:
            omega, shapes = lowest_frequencies(self, q, joints, count, vectors)
        except NotStable:
            if method == "structured":
                raise
            return super().natural_frequencies(q, joints, vectors, count)
        return (omega, shapes) if vectors else omega

    # -- auxiliary states: roots integrated with the motion ("ode" tracker) ------------------
    def _ode_links(self) -> list[int]:
        return [
            number
            for number in self.translating
            if self.bodies[number].following is not None and self.bodies[number].following.tracker == "ode"
        ]

    @property
    def auxiliary_names(self) -> tuple[str, ...]:
        """``beta<i>_<k>``: the roots β_k of each translating link whose shapes follow its free
        length with the ``"ode"`` tracker (Theodore & Ghosal (1997), eq. (11), integrated by :func:`core.analysis.simulation.simulate`)."""
        return tuple(
            f"beta{number}_{k}"
            for number in self._ode_links()
            for k in range(1, self.bodies[number].following.modes + 1)
        )

    def auxiliary_initial(self, q) -> np.ndarray:
        """The exact roots at the free lengths of ``q``."""
        q = np.asarray(q, dtype=float)
        parts = [self.bodies[k].following.exact_roots(float(q[k - 1])) for k in self._ode_links()]
        return np.concatenate(parts) if parts else np.zeros(0)

    def auxiliary_rates(self, q, qd, a) -> np.ndarray:
        """dβ/dt = (dβ/dl)(β, l) · l̇ (implicit derivative of the frequency equation)."""
        out, start = [], 0
        for number in self._ode_links():
            follow = self.bodies[number].following
            beta = np.asarray(a[start : start + follow.modes], dtype=float)
            start += follow.modes
            l, rate = float(q[number - 1]), float(qd[number - 1])
            out.append(follow.dbeta_dlength(l, beta) * rate)
        return np.concatenate(out) if out else np.zeros(0)

    @contextmanager
    def auxiliary(self, a):
        """Evaluate the model with the roots ``a`` (see :attr:`auxiliary_names`) in place of the
        exact ones; the per-configuration caches are cleared on entry and exit (they hold
        quantities of other roots)."""
        links = self._ode_links()
        if not links:
            yield
            return
        a = np.asarray(a, dtype=float)
        size = sum(self.bodies[k].following.modes for k in links)
        if a.shape != (size,):
            raise ValueError(f"auxiliary values must have shape ({size},), got {a.shape}")
        previous = [self.bodies[k].following.beta_state for k in links]
        start = 0
        self._forget()
        try:
            for number in links:
                follow = self.bodies[number].following
                follow.beta_state = a[start : start + follow.modes].copy()
                start += follow.modes
            yield
        finally:
            for number, state in zip(links, previous, strict=True):
                self.bodies[number].following.beta_state = state
            self._forget()

    def _forget(self) -> None:
        """Drop every cached per-configuration quantity (the shapes of a translating link changed)."""
        self._real_cache.clear()
        self._terms.cache_clear()
        if self._compiled_chain is not None:
            self._compiled_chain.invalidate()

    def friction_forces(self, q, qd) -> np.ndarray:
        epsilon = None if self.coulomb == "sign" else self.coulomb_velocity
        return coulomb_friction(self._coulomb, self._B, qd, epsilon)

    def forward_dynamics(self, q, qd, tau, solver: str = "auto", *, friction: bool = True) -> np.ndarray:
        """As :meth:`Model.forward_dynamics`; ``solver="structured"`` applies K and D link by
        link (banded) instead of the dense n_dof² matrices (:mod:`core.dynamics.structured`: O(n_dof))."""
        if solver != "structured":
            return super().forward_dynamics(q, qd, tau, solver, friction=friction)

        q, qd = self._state(q, qd)
        return structured_dynamics(self).forward(q, qd, tau, friction)

    def rates_function(self, solver: str = "auto"):
        """As :meth:`Model.rates_function`; on the compiled chain without translating
        links (constant B, D, K), one compiled call per right-hand side
        (:func:`core.dynamics.compiled.rates`: friction, applied forces, q̈ and the powers);
        ``"structured"``: :meth:`core.dynamics.structured.StructuredDynamics.rates_function` (O(n_dof))."""
        if solver == "structured":
            return structured_dynamics(self).rates_function()
        if self.compiled is None or self.translating or solver not in ("recursive", "composite"):
            return super().rates_function(solver)
        epsilon = -1.0 if self.coulomb == "sign" else self.coulomb_velocity
        return self.compiled.rates_function(
            self._B,
            self._D,
            self._K,
            self._coulomb,
            epsilon,
            composite=solver == "composite",
            check=self._state,
        )

    def prescribed_function(self):
        """As :meth:`Model.prescribed_function`; on the compiled chain, one compiled call after
        the applied forces (:func:`core.dynamics.compiled.algorithms.prescribed`: M and
        M q̈ + h + G from one pass, half the kernels' work of the generic evaluation)."""
        if self.compiled is None:
            return super().prescribed_function()
        return self.compiled.prescribed_function(self._applied_with_elastic, self.input_matrix, self._state)

    def _applied_with_elastic(self, q, qd, tau, friction: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if self.translating:  # K, D depend on the free lengths
            return super()._applied_with_elastic(q, qd, tau, friction)
        elastic = self._K @ q
        tau = self._torques(q, qd, tau, friction and self._coulomb.any())
        return self._B @ tau - self._D @ qd - elastic, elastic

    def _check(self, q) -> np.ndarray:
        q = np.asarray(q)
        if q.shape != (self.n_dof,):
            raise ValueError(f"q must have shape ({self.n_dof},), got {q.shape}")
        return q

    def mass_matrix(self, q) -> np.ndarray:
        q = self._check(q)
        if self.compiled is not None and not np.iscomplexobj(q):  # the hot path, one call
            return self.compiled.mass(np.asarray(q, dtype=float))
        return self._term(q, "M", oracle.mass_batch)

    def modal_mass_matrix(self, q) -> np.ndarray:
        """M(q) for :meth:`natural_frequencies` by the oracle's numpy pass up to
        :data:`ORACLE_MASS_LIMIT` coordinates: one evaluation per analysis costs milliseconds
        there, against loading numba and the kernels (~0.3 s per process, a minute's
        compilation on a first run); above it, on a compiled model, by the compiled kernel.
        Both agree to round-off (tests/test_compiled.py)."""
        q = np.asarray(self._check(q), dtype=float)
        if self.n_dof > ORACLE_MASS_LIMIT and self.compiled is not None:  # (loads the kernels)
            return self.compiled.mass(q)
        terms = self._real_terms(q)
        if "M" not in terms:
            terms["M"] = oracle.mass_batch(self, q[None], terms["frames"])[0]
        return terms["M"].copy()

    def gravity_forces(self, q) -> np.ndarray:
        return self._term(q, "G", oracle.gravity_batch)

    def _term(self, q, name: str, batch) -> np.ndarray:
        """M or G (``name``) at q: at a complex q by the oracle's complex pass (what ∂M/∂q and
        ∂G/∂q differentiate), at a real q by the compiled kernel or the oracle's real pass
        (cached with its frames per configuration, :meth:`_real_terms`)."""
        q = self._check(q)
        if np.iscomplexobj(q):
            return batch(self, q[None])[0]
        q = np.asarray(q, dtype=float)
        if self.compiled is not None:
            return self.compiled.mass(q) if name == "M" else self.compiled.gravity_forces(q)
        terms = self._real_terms(q)
        if name not in terms:
            terms[name] = batch(self, q[None], terms["frames"])[0]
        return terms[name].copy()

    def _real_terms(self, q: np.ndarray) -> dict:
        """The oracle's per-configuration data at a real q, cached for the last
        :data:`DERIVATIVE_CACHE` configurations: ``frames`` (one kinematics pass), ``M`` and
        ``G`` (filled on first use)."""
        key = np.ascontiguousarray(q, dtype=float).tobytes()
        terms = self._real_cache.get(key)
        if terms is None:
            if len(self._real_cache) >= DERIVATIVE_CACHE:
                self._real_cache.pop(next(iter(self._real_cache)))  # oldest first
            terms = self._real_cache[key] = {"frames": self.kinematics.frames(q[None])}
        return terms

    def _payloads(self, number: int) -> list:
        link = self.arm.links[number - 1]
        payloads = [link.tip_payload] if link.tip_payload is not None else []
        if number == self.arm.n_links and self.arm.payload is not None:
            payloads.append(self.arm.payload)
        return payloads

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        q = np.ascontiguousarray(self._check(q), dtype=float)
        return self._terms(q.tobytes()).copy()

    def _terms_from_bytes(self, key: bytes) -> np.ndarray:
        """∂M/∂q at one real q (:func:`core.dynamics.oracle.mass_derivatives`), cached by q."""
        return oracle.mass_derivatives(self, np.frombuffer(key, dtype=float))

    def gravity_stiffness(self, q) -> np.ndarray:
        """∂G/∂q by the complex step of the oracle's G, :data:`GRAVITY_BATCH` directions a pass."""
        q = np.asarray(self._check(q), dtype=float)
        return complex_step_jacobian(
            partial(oracle.gravity_batch, self), q, batched=True, batch_size=GRAVITY_BATCH
        )

    cheap_gravity_products = True

    def gravity_stiffness_product(self, q, v) -> np.ndarray:
        """(∂G/∂q) v by one complex step of the oracle's G along v: exact, O(n) per body row."""
        q = np.asarray(self._check(q), dtype=float)
        v = np.asarray(v, dtype=float)
        scale = float(np.max(np.abs(v)))
        if scale == 0.0:
            return np.zeros(self.n_dof)
        step = COMPLEX_STEP / scale
        return oracle.gravity_batch(self, (q + 1j * step * v)[None])[0].imag / step

    def potential_energy(self, q) -> float:
        q = np.asarray(q, dtype=float)
        return float(0.5 * q @ self.stiffness_matrix(q) @ q) + oracle.gravity_potential(self, q)

    def potential_energies(self, Q) -> np.ndarray:
        """As :meth:`Model.potential_energies`; with a constant K the elastic part of every row
        is one product, and without gravity it is all."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        if self._unit_stiffness:  # K depends on the free lengths
            return super().potential_energies(Q)
        elastic = 0.5 * np.sum((Q @ self._K) * Q, axis=1)  # one BLAS product for all rows
        if not np.any(self.arm.gravity):
            return elastic
        return elastic + np.array([oracle.gravity_potential(self, q) for q in Q])

    def point_position(self, link: int, s: float, q) -> np.ndarray:
        link = check.link_number(link, self.arm.n_links)
        description = self.arm.links[link - 1]
        q = np.asarray(self._check(q), dtype=float)
        if link in self.translating:
            # s from the hub exit: the free part (0, l] bends, the part inside is straight.
            l = float(self._free_length(q, link))
            lower, upper = l - description.length, l
        else:
            lower, upper = 0.0, description.length
        s = check.on_link(s, link, lower, upper, description.length)
        return self.point_positions(np.array([link]), np.array([float(s)]), q[None])[0, 0]

    def point_positions(self, links, s, Q) -> np.ndarray:
        """One batch: the link frames of every configuration in one kinematics pass, each
        basis evaluated once per link (per configuration for a translating link, whose
        shapes live on s/l). A point at s ≤ 0 (a translating link's part inside its hub,
        or the root) is on the undeflected axis."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        links, s = np.asarray(links, dtype=int), np.asarray(s, dtype=float)
        out = np.empty((Q.shape[0], s.size, 3))
        frames = self.kinematics.frames(Q, jacobians=False)
        for number in np.unique(links):
            at = np.flatnonzero(links == number)
            here, f = s[at], frames[int(number) - 1]
            local = np.zeros((Q.shape[0], at.size, 3))
            local[..., 0] = here
            if not self.arm.links[int(number) - 1].is_flexible:
                out[:, at] = f.p_link[:, None] + np.einsum("bij,bpj->bpi", f.R_link, local)
                continue
            basis, body = self.bases[int(number)], self.bodies[int(number)]
            if int(number) in self.translating:
                follow = basis.follow
                values = np.stack(
                    [
                        (
                            basis.evaluate(np.clip(here, 0.0, l) / l)
                            if follow is None
                            else follow.evaluate(np.clip(here, 0.0, l) / l, l)
                        )[0]
                        for l in Q[:, int(number) - 1]
                    ]
                )
            else:
                values = basis.evaluate(np.clip(here, 0.0, basis.length))[0][None]
            delta = Q[:, self.flex_columns[int(number)]]
            local[..., 1] = np.einsum("bnp,bn->bp", values, body.plane(delta, 0))
            local[..., 2] = np.einsum("bnp,bn->bp", values, body.plane(delta, 1))
            local[:, here <= 0.0, 1:] = 0.0
            if self.geometric_stiffening:  # the axial foreshortening u(s) = −½ ∫₀ˢ |w'|² dσ
                planes = [body.plane(delta, plane) for plane in range(body.planes)]
                local[..., 0] += foreshortening_at(basis, np.clip(here, 0.0, basis.length), planes)
            out[:, at] = f.p_link[:, None] + np.einsum("bij,bpj->bpi", f.R_body, local)
        return out

    def tip_deflections(self, q) -> dict[str, float]:
        rows = self.tip_deflection_rows(np.asarray(q, dtype=float)[None])
        return {name: float(values[0]) for name, values in rows.items()}

    def tip_deflection_rows(self, Q) -> dict[str, np.ndarray]:
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        out = {}
        for number, columns in self.flex_columns.items():
            body, tip = self.bodies[number], self.bases[number].tip_value
            if number in self.translating and body.following is not None:
                free = (float(self._free_length(q, number)) for q in Q)
                tip = np.array([body.following.taylor(l, order=0)["tip_value"][0] for l in free])
            delta = Q[:, columns]
            out[f"tip_w{number}"] = np.sum(tip * body.plane(delta, 0), axis=-1)
            if body.planes == 2:
                out[f"tip_v{number}"] = np.sum(tip * body.plane(delta, 1), axis=-1)
        return out

    def tip_position(self, q) -> np.ndarray:
        q = np.asarray(self._check(q), dtype=float)
        return self.kinematics.frames(q[None], jacobians=False)[-1].p_tip[0]

    def tip_positions(self, Q) -> np.ndarray:
        """One kinematics pass for the whole batch."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        return self.kinematics.frames(Q, jacobians=False)[-1].p_tip

    # -- dynamics: the compiled kernels, or the oracle of the Model base -------------------
    def bias_forces(self, q, qd) -> np.ndarray:
        if self.compiled is None:  # the Christoffel symbols of the oracle's ∂M/∂q
            return super().bias_forces(q, qd)
        q, qd = self._state(q, qd)
        return self.compiled.bias(q, qd)

    def nonlinear_forces(self, q, qd) -> np.ndarray:
        if self.compiled is None:
            return super().nonlinear_forces(q, qd)
        q, qd = self._state(q, qd)
        return self.compiled.inverse(q, qd, np.zeros(self.n_dof))

    def inertial_forces(self, q, qd, qdd) -> np.ndarray:
        if self.compiled is None:
            return super().inertial_forces(q, qd, qdd)
        q, qd = self._state(q, qd)
        return self.compiled.inverse(q, qd, self._accelerations(qdd))

    def generalized_forces(self, q, qd, qdd) -> np.ndarray:
        if self.compiled is None or self.translating:
            return super().generalized_forces(q, qd, qdd)
        q, qd = self._state(q, qd)
        # constant D, K, B: one recursion and a few products
        forces = self.compiled.inverse(q, qd, self._accelerations(qdd)) + self._D @ qd + self._K @ q
        if self._coulomb.any():
            forces -= self._B @ self.friction_forces(q, qd)
        return forces

    def _accelerations(self, qdd) -> np.ndarray:
        qdd = np.asarray(qdd, dtype=float)
        if qdd.shape != (self.n_dof,):
            raise ValueError(f"qdd must have shape ({self.n_dof},), got {qdd.shape}")
        return qdd

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        if self.bodies:  # flexible coordinates are not actuated: the least-squares path checks reachability
            return super().inverse_dynamics(q, qd, qdd)
        return self.generalized_forces(q, qd, qdd)  # a rigid chain: B = 1, τ = Q exactly
