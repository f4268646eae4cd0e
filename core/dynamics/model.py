"""The ``Model`` interface every backend implements (docs/MODEL.md, Dynamics).

Equations of motion, in generalized coordinates q = (q_r, q_f) — joint
variables first, then the flexible coordinates link by link::

    M(q) q̈ + C(q, q̇) q̇ + D q̇ + K q + G(q) = B(q) (τ + τ_c(Bᵀq̇))

with τ the joint torques/forces and τ_c the Coulomb joint friction acting on
the actuated rates Bᵀq̇ (viscous joint friction is part of D). Where the
stiffness depends on the configuration (a translating link, K(l) ∝ 1/l³),
K q is the elastic force ∂V_e/∂q of :meth:`Model.elastic_forces`, which adds
½ q_fᵀ (∂K/∂q_i) q_f to the row of q_i.

Contract for subclasses — implement the primitives:

``arm``
    the description discretized (the constructor's arguments are recorded by the base:
    ``replace(**changes)`` and ``rebuild(arm)`` build the same model with changes; a
    model whose constructor does not take ``arm`` overrides ``rebuild``);
``coordinates``
    layout (names, numbered from 1 as users see them);
``mass_matrix``, ``mass_matrix_derivatives``, ``stiffness_matrix``,
``damping_matrix``, ``gravity_forces``, ``input_matrix``,
``friction_forces``, ``potential_energy``, ``point_position``, ``tip_position``.

Everything else — C from the Christoffel symbols, forward and inverse dynamics,
energies, linearization and natural frequencies — is implemented here once, on
top of the primitives, so both backends share it.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

import numpy as np

from core.arm import Arm
from core.dynamics.composite import composite_solver
from core.dynamics.prescribed import prescribed_terms
from core.dynamics.recursive import recursive_solver
from core.dynamics.structured_forward import structured_solver
from core.numerics import validation as check
from core.numerics.derivatives import CENTRAL_STEP, central_difference_jacobian, complex_step_jacobian


def coulomb_friction(coulomb: np.ndarray, B: np.ndarray, qd, epsilon: float | None) -> np.ndarray:
    """Coulomb joint friction τ_c on the actuated rates u = Bᵀq̇ of joints with friction torques
    (forces) ``coulomb``: −F_c tanh(u/ε), or −F_c sign(u) for ``epsilon`` None."""
    u = B.T @ np.asarray(qd, dtype=float)
    if epsilon is None:
        return -coulomb * np.sign(u)
    return -coulomb * np.tanh(u / epsilon)


#: Forward-dynamics solvers by name. A solver is ``f(model, q, qd, applied) -> qdd`` with
#: ``applied`` every generalized force except the inertial and gravity ones
#: (B(τ + τ_c) − D q̇ − ∂V_e/∂q): it solves M q̈ + h(q, q̇) + G(q) = applied.
#: ``"composite"``: M formed and factored, O(n_dof³); ``"recursive"``: the compiled
#: articulated bodies; ``"structured"``: block elimination on M = BD + W C Wᵀ with h + G from
#: a reduced chain, O(n_dof), for chains with fine meshes (:mod:`core.dynamics.structured_forward`; a
#: :class:`~core.dynamics.engine.ChainModel` without translating links or geometric stiffening).
SOLVERS: dict = {
    "composite": composite_solver,
    "recursive": recursive_solver,  # the compiled articulated bodies (core.dynamics.recursive)
    "structured": structured_solver,  # M = BD + W C Wᵀ, O(n_dof) (core.dynamics.structured_forward)
}
#: The names ``solver=`` takes: :data:`SOLVERS` and ``"auto"`` (:meth:`Model.auto_solver`).
SOLVER_CHOICES = ("auto", *SOLVERS)
#: ``solver="auto"`` takes ``"recursive"`` on the compiled engine while no body has more than this
#: many flexible coordinates, or every wider body is solved without its m × m factor (element
#: meshes: :mod:`core.dynamics.compiled.fine`, O(m²) per body). Measured (2026-11-26, one BLAS
#: thread, loaded 2-core machine; µs per forward-dynamics call, composite / recursive /
#: structured): space arm AMM 2 modes per plane (4 per body) 114 / 36 / 622; two planar links
#: × E FEM elements (2E per body), dense recursion: E = 16: 175 / 104 / 2108; E = 32: 390 / 466
#: / 2293 — the dense recursion is O(m³) per body; the fine-body recursion takes over from
#: :data:`core.dynamics.compiled.packing.FINE_COORDINATES` = 40 coordinates.
RECURSIVE_MAX_BODY = 48
#: ``solver="auto"`` takes ``"structured"`` (where it applies: a chain without translating links
#: or geometric stiffening) from this many coordinates on: its O(n_dof) call costs ~7–12 ms
#: at every size measured (n_dof 66 … 4098), the fine-body recursion O(m²) per body: two links
#: × E elements, recursive / structured [ms], E = 64 (258 DOF): 0.9 / 11.7; E = 256 (1026):
#: 37 / 12; docs/ARCHITECTURE.md, Solvers.
STRUCTURED_MIN_DOF = 640


def _lowest_first(K: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues of K x = λ M x, ascending, accurate at the low end, and the eigenvectors.

    The low eigenvalues of a stiff pencil are the large ones of the inverse
    pencil M x = μ (K + σM) x, λ = 1/μ − σ, which ``eigh`` resolves to
    relative round-off; solved directly, the lowest λ of a fine FEM mesh carry
    an error ~ε λ_max (measured: 2e-7 at 128 elements). σ = 0 when K is positive
    definite; otherwise (free joints, an unstable configuration) a shift above
    the most negative eigenvalue, from a first direct solve.
    """
    import scipy.linalg

    try:
        scipy.linalg.cho_factor(K)
        sigma = 0.0
    except np.linalg.LinAlgError:
        estimate = scipy.linalg.eigh(K, M, eigvals_only=True)
        size = np.abs(estimate)
        resolved = size[size > RIGID_MODE_TOLERANCE * max(size.max(), 1e-300)]
        scale = resolved.min() if resolved.size else 1.0
        sigma = max(-estimate[0], 0.0) + 0.5 * scale
    mu, vectors = scipy.linalg.eigh(M, K + sigma * M)  # ascending μ: the highest λ first
    if mu[0] > UNRESOLVED * mu[-1]:
        # 1/μ is accurate to ε·λ/λ_min, the Rayleigh quotient xᵀ(K + σM)x / xᵀMx of the
        # computed vector to ε·λ_max/λ (its vector error enters squared): each takes the
        # half of the spectrum it resolves, split at λ = √(λ_min λ_max) (measured on drawn
        # arms: the 4th of 4 requested modes of a 6-coordinate pencil 7e-12 → 4e-15 off a
        # 40-digit solve).
        values, vectors = 1.0 / mu[::-1], vectors[:, ::-1]
        upper = values * values > values[0] * values[-1]
        if np.any(upper):
            X = vectors[:, upper]
            values[upper] = np.sum(X * ((K + sigma * M) @ X), axis=0) / np.sum(X * (M @ X), axis=0)
        return values - sigma, vectors
    # The top of the spectrum is below the inverse pencil's round-off ε·μ_max (a very stiff
    # pencil: fine meshes with a heavy tip mass reach λ_max/λ_min > 1e15, and μ can even come
    # out ≤ 0). The direct pencil resolves the top to relative ε·λ_max/λ, the inverse one the
    # bottom to ε·λ/λ_min: each takes its own half, split at λ = √(λ_min λ_max).
    direct, direct_vectors = scipy.linalg.eigh(K + sigma * M, M)
    split = np.sqrt(direct[-1] / mu[-1])
    low = 1.0 / mu[::-1][: np.count_nonzero(1.0 / mu[mu > 0] < split)]
    count = low.size
    values = np.concatenate([low, direct[count:]]) - sigma
    return values, np.hstack([vectors[:, ::-1][:, :count], direct_vectors[:, count:]])


#: The inverse pencil of :func:`_lowest_first` resolves μ to ~ε·μ_max: below this fraction of
#: μ_max the top of the spectrum comes from the direct pencil instead.
UNRESOLVED = 1e-9
#: Free joints without gravity: rigid-body eigenvalues above this fraction of
#: the largest eigenvalue are reported (they should be round-off).
RIGID_MODE_TOLERANCE = 1e-9
#: Relative step of the central differences used by ``linearize`` at q̇ ≠ 0.
LINEARIZE_STEP = CENTRAL_STEP


def _recording(init):
    """``init`` that first records the arguments of the outermost constructor call in
    ``_arguments`` (a subclass's ``super().__init__`` finds them recorded and adds nothing)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def recording_init(self, *args: Any, **kwargs: Any) -> None:
        if "_arguments" not in self.__dict__:
            bound = signature.bind(self, *args, **kwargs)
            arguments: dict[str, Any] = {}
            for name, value in list(bound.arguments.items())[1:]:
                kind = signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    raise TypeError(f"{type(self).__name__}: *{name} cannot be recorded for replace()")
                arguments.update(value if kind is inspect.Parameter.VAR_KEYWORD else {name: value})
            self.__dict__["_arguments"] = arguments
        init(self, *args, **kwargs)

    return recording_init


def _accepted(cls: type) -> set[str]:
    """The keyword arguments ``cls(...)`` takes: its constructor's, and where that passes
    ``**options`` on, the next constructor's up the class hierarchy."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" not in klass.__dict__ or klass is object:
            continue
        parameters = list(inspect.signature(klass.__init__).parameters.values())[1:]
        names |= {p.name for p in parameters if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names


class Model(ABC):
    """A discretized flexible arm (abstract); see the module docstring for the contract.

    Attributes
    ----------
    arm : Arm
        The description the model discretizes (read by analyses, simulations
        and reports: link data, gravity, translating links).
    """

    arm: Arm
    #: Whether the model runs on the shared multibody engine (:class:`core.dynamics.engine.ChainModel`):
    #: the recursive and structured solvers need its bodies and kernels (others fall back or refuse).
    on_engine: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _recording(cls.__init__)

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments this model was constructed with, by name, as given (defaults left
        out; a backend's ``**engine_options`` flattened): what :meth:`replace` and
        :meth:`rebuild` start from."""
        return dict(self.__dict__.get("_arguments", {}))

    def replace(self, **changes: Any) -> Model:
        """A new model of the same type built with this model's :attr:`arguments` and
        ``changes`` (e.g. ``model.replace(compiled=False)``, ``model.replace(modes=4)``,
        ``model.replace(arm=heavier)``); an argument the constructor does not take is refused."""
        unknown = sorted(set(changes) - _accepted(type(self)))
        if unknown:
            raise TypeError(f"{type(self).__name__} takes no argument {unknown[0]!r}")
        return type(self)(**{**self.arguments, **changes})

    def rebuild(self, arm: Arm) -> Model:
        """The same backend, discretization and options applied to another ``arm``
        (e.g. a changed payload or link), as a new model: ``replace(arm=arm)``."""
        return self.replace(arm=arm)

    # -- layout --------------------------------------------------------------
    @property
    @abstractmethod
    def coordinates(self) -> tuple[str, ...]:
        """Names of the generalized coordinates, joints first (``theta1``, ``d3``, ``w2_1``…)."""

    @property
    def n_joints(self) -> int:
        """Number of joints (= number of inputs, the columns of B): the arm's."""
        return self.arm.n_joints

    @property
    def n_dof(self) -> int:
        """Number of generalized coordinates."""
        return len(self.coordinates)

    @property
    def joints(self) -> slice:
        """Slice of q holding the joint variables."""
        return slice(0, self.n_joints)

    @property
    def flex(self) -> slice:
        """Slice of q holding the flexible coordinates."""
        return slice(self.n_joints, self.n_dof)

    # -- primitives ----------------------------------------------------------
    @abstractmethod
    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q), shape (n_dof, n_dof), symmetric positive definite."""

    @abstractmethod
    def mass_matrix_derivatives(self, q: np.ndarray) -> np.ndarray:
        """∂M/∂q_k stacked, shape (n_dof, n_dof, n_dof); ``out[k] = ∂M/∂q_k``."""

    @abstractmethod
    def stiffness_matrix(self, q: np.ndarray) -> np.ndarray:
        """K(q) of the elastic potential ½ q_fᵀ K q_f, shape (n_dof, n_dof)."""

    @abstractmethod
    def damping_matrix(self, q: np.ndarray) -> np.ndarray:
        """D(q): structural damping and viscous joint friction, shape (n_dof, n_dof)."""

    @abstractmethod
    def gravity_forces(self, q: np.ndarray) -> np.ndarray:
        """G(q) = ∂V_gravity/∂q, shape (n_dof,)."""

    @abstractmethod
    def input_matrix(self, q: np.ndarray) -> np.ndarray:
        """B(q), shape (n_dof, n_joints): joint rows identity, flexible rows φ'(0) (pinned frames)."""

    @abstractmethod
    def friction_forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Coulomb joint friction τ_c on the actuated rates Bᵀq̇, shape (n_joints,)."""

    @abstractmethod
    def potential_energy(self, q: np.ndarray) -> float:
        """V(q) = elastic + gravitational potential energy [J]."""

    @abstractmethod
    def point_position(self, link: int, s: float, q: np.ndarray) -> np.ndarray:
        """Base-frame position [m] of the point at s [m] along link ``link`` (numbered from 1)."""

    def point_positions(self, links, s, Q) -> np.ndarray:
        """:meth:`point_position` of the points (``links[p]``, ``s[p]``) at every configuration
        of ``Q`` (B, n_dof), shape (B, P, 3); a backend may evaluate them in one batch."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        return np.array(
            [[self.point_position(int(k), float(x), q) for k, x in zip(links, s, strict=True)] for q in Q]
        ).reshape(Q.shape[0], len(s), 3)

    @abstractmethod
    def tip_position(self, q: np.ndarray) -> np.ndarray:
        """Base-frame position [m] of the tip of the last link."""

    def tip_positions(self, Q) -> np.ndarray:
        """:meth:`tip_position` at every configuration of ``Q`` (B, n_dof), shape (B, 3); a
        backend may evaluate them in one batch."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        return np.array([self.tip_position(q) for q in Q]).reshape(Q.shape[0], 3)

    def elastic_forces(self, q: np.ndarray) -> np.ndarray:
        """∂V_e/∂q of the elastic energy V_e = ½ qᵀK(q)q; K q when K is constant."""
        return self.stiffness_matrix(q) @ q

    def elastic_coordinates(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Optional (Z, K_z): coordinates q = Z z in which the elastic stiffness
        Zᵀ (∂²V_e/∂q²) Z = K_z is known exactly (no cancellation); None if the
        backend has none (then :meth:`elastic_stiffness` is used as is)."""
        return None

    def elastic_stiffness(self, q: np.ndarray) -> np.ndarray:
        """∂²V_e/∂q², the Jacobian of :meth:`elastic_forces`; K when K is constant."""
        return self.stiffness_matrix(q)

    def home(self) -> np.ndarray:
        """The default configuration (n_dof,): undeformed, joints at ``Arm.home()``
        (zero, translating links fully extended)."""
        q = np.zeros(self.n_dof)
        q[: self.n_joints] = self.arm.home()
        return q

    def tip_deflections(self, q: np.ndarray) -> dict[str, float]:
        """Tip deflection of each flexible link in its own frame [m], by name
        (``tip_w<i>`` in-plane, ``tip_v<i>`` out-of-plane); none by default."""
        return {}

    def tip_deflection_rows(self, Q) -> dict[str, np.ndarray]:
        """:meth:`tip_deflections` at every configuration of ``Q`` (B, n_dof), each name's (B,)
        values; a backend may evaluate them in one batch."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        rows = [self.tip_deflections(q) for q in Q]
        return {
            name: np.array([row[name] for row in rows], dtype=float) for name in (rows[0] if rows else {})
        }

    def potential_energies(self, Q) -> np.ndarray:
        """:meth:`potential_energy` at every configuration of ``Q`` (B, n_dof), shape (B,); a
        backend may evaluate them in one batch."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        return np.array([self.potential_energy(q) for q in Q], dtype=float).reshape(Q.shape[0])

    # -- auxiliary states ---------------------------------------------------
    @property
    def auxiliary_names(self) -> tuple[str, ...]:
        """Names of the auxiliary states a integrated with the motion; none by default.

        Auxiliary states are not generalized coordinates: they obey their own
        ODE ȧ = :meth:`auxiliary_rates` (q, q̇, a), and the primitives (M, h, G,
        K …) depend on their current values, set by :meth:`auxiliary`. Example:
        the roots β_k(l) of a translating link's assumed modes integrated as
        dβ/dt = (dβ/dl)(β, l) l̇ (Theodore & Ghosal (1997), eqs. (11)–(13)) instead of solved at
        every evaluation. :func:`core.analysis.simulation.simulate` integrates them with
        the motion and reports one column per name.
        """
        return ()

    def auxiliary_initial(self, q) -> np.ndarray:
        """The auxiliary values belonging to configuration q, shape (len(auxiliary_names),)."""
        return np.zeros(0)

    def auxiliary_rates(self, q, qd, a) -> np.ndarray:
        """da/dt at (q, q̇, a), shape (len(auxiliary_names),)."""
        return np.zeros(0)

    def auxiliary(self, a):
        """Context manager: every evaluation of the model inside ``with model.auxiliary(a):``
        uses the auxiliary values a (the previous ones are back on exit); a no-op by default."""
        import contextlib

        return contextlib.nullcontext()

    # -- shared dynamics ----------------------------------------------------
    def _state(self, q, qd=None) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n_dof,):
            raise ValueError(f"q must have shape ({self.n_dof},), got {q.shape}")
        qd = np.zeros(self.n_dof) if qd is None else np.asarray(qd, dtype=float)
        if qd.shape != (self.n_dof,):
            raise ValueError(f"qd must have shape ({self.n_dof},), got {qd.shape}")
        # one reduction for the common case (a non-finite entry makes the sum non-finite;
        # an overflowing sum of finite entries only costs the detailed check below)
        if not math.isfinite(q.sum() + qd.sum()):
            for name, value in (("q", q), ("qd", qd)):
                bad = np.flatnonzero(~np.isfinite(value))
                if bad.size:
                    raise ValueError(
                        f"{name} must be finite, got {float(value[bad[0]])!r} at {self.coordinates[bad[0]]} (index {bad[0]})"
                    )
        return q, qd

    def coriolis_matrix(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """C(q, q̇) from the Christoffel symbols of M, shape (n_dof, n_dof).

        C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k, so that
        Ṁ − 2C = P − Pᵀ with P_ij = Σ_k ∂M_jk/∂q_i q̇_k is skew-symmetric.
        """
        q, qd = self._state(q, qd)
        dM = self.mass_matrix_derivatives(q)
        M_dot = np.tensordot(qd, dM, axes=1)  # Σ_k q̇_k ∂M/∂q_k
        P = dM @ qd  # P[i, j] = Σ_k ∂M_jk/∂q_i q̇_k
        return 0.5 * (M_dot + P.T - P)

    def _torques(self, q, qd, tau, friction: bool) -> np.ndarray:
        """τ + τ_c: ``tau`` checked to be of shape (n_joints,), with the Coulomb joint friction
        added if ``friction``."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n_joints,):
            raise ValueError(f"tau must have shape ({self.n_joints},), got {tau.shape}")
        if friction:
            tau = tau + self.friction_forces(q, qd)
        return tau

    def _applied(self, q, qd, tau, friction: bool = True) -> np.ndarray:
        """B(τ + τ_c) − D q̇ − ∂V_e/∂q: the forces a solver balances against M q̈ + h + G
        (τ_c left out if not ``friction``)."""
        return self._applied_with_elastic(q, qd, tau, friction)[0]

    def _applied_with_elastic(self, q, qd, tau, friction: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`_applied`, ∂V_e/∂q) with ∂V_e/∂q evaluated once (a power balance needs both;
        for translating links it costs a K(q))."""
        elastic = self.elastic_forces(q)
        tau = self._torques(q, qd, tau, friction)
        return self.input_matrix(q) @ tau - self.damping_matrix(q) @ qd - elastic, elastic

    def auto_solver(self) -> str:
        """The forward-dynamics solver ``solver="auto"`` (the default) takes for this model, by
        its structure only (cached): ``"structured"`` from :data:`STRUCTURED_MIN_DOF`
        coordinates on where it applies (no translating links, no geometric stiffening); else
        ``"recursive"`` (the compiled articulated bodies) on the compiled engine while no body has
        more than :data:`RECURSIVE_MAX_BODY` flexible coordinates or every wider one is a fine
        body of the kernels (banded mass block: element meshes); else ``"composite"`` — also for
        every model off the engine and for the numpy oracle (``compiled=False``, kept
        independent of the compiled kernels). All solvers agree to round-off."""
        chosen = self.__dict__.get("_auto_solver")
        if chosen is None:
            chosen = self.__dict__["_auto_solver"] = self._choose_solver()
        return chosen

    def _choose_solver(self) -> str:
        """:meth:`auto_solver` uncached (the measurements are at :data:`RECURSIVE_MAX_BODY`)."""
        if not self.on_engine or not getattr(self, "_compile", True):
            return "composite"
        structured = not getattr(self, "translating", ()) and not getattr(self, "geometric_stiffening", False)
        if structured and self.n_dof >= STRUCTURED_MIN_DOF:
            return "structured"
        columns = np.arange(self.n_dof)
        widths = [columns[c].size for c in getattr(self, "flex_columns", {}).values()]
        if max(widths, default=0) <= RECURSIVE_MAX_BODY:
            return "recursive"
        table = self.kernels.table  # the kernels' verdict per body (core.dynamics.compiled.packing)
        if all(row["fine"] or row["m"] <= RECURSIVE_MAX_BODY for row in table):
            return "recursive"
        return "composite"

    def _solver(self, solver: str) -> str:
        """``solver`` checked against :data:`SOLVER_CHOICES`, ``"auto"`` resolved."""
        if solver == "auto":
            return self.auto_solver()
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {sorted(SOLVER_CHOICES)}, got {solver!r}")
        return solver

    def forward_dynamics(self, q, qd, tau, solver: str = "auto", *, friction: bool = True) -> np.ndarray:
        """Accelerations q̈ for joint inputs τ (shape (n_joints,)); ``solver`` from :data:`SOLVERS`,
        or ``"auto"`` (default: :meth:`auto_solver`).

        ``friction=False`` leaves out the Coulomb joint friction (not
        differentiable at rest): the smooth dynamics that linear analyses
        differentiate.
        """
        if solver == "auto":  # dispatched again: a backend's override sees the solver's name
            return self.forward_dynamics(q, qd, tau, self.auto_solver(), friction=friction)
        solver = self._solver(solver)
        q, qd = self._state(q, qd)
        return SOLVERS[solver](self, q, qd, self._applied(q, qd, tau, friction))

    def rates_function(self, solver: str = "auto"):
        """The right-hand side a simulation integrates: ``rates(x, τ) -> ẋ``; ``solver`` as
        in :meth:`forward_dynamics` (``"auto"``: :meth:`auto_solver`).

        ``x = (q, q̇, W_in, W_diss)`` (the two work integrals of
        :func:`core.analysis.simulation.simulate`), ẋ = (q̇, q̈, q̇ᵀBτ, q̇ᵀDq̇ − uᵀτ_c) with
        u = Bᵀq̇ and Coulomb friction τ_c. Built once per simulation; it skips the
        input checks of :meth:`forward_dynamics` (the integrator hands it arrays of
        the right size) and a backend may fuse it into one compiled call.
        """
        if solver == "auto":  # dispatched again: a backend's override sees the solver's name
            return self.rates_function(self.auto_solver())
        solve, n = SOLVERS[self._solver(solver)], self.n_dof

        def rates(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
            q, qd = self._state(x[:n], x[n : 2 * n])
            qdd = solve(self, q, qd, self._applied(q, qd, tau))
            u = self.input_matrix(q).T @ qd
            dissipated = qd @ self.damping_matrix(q) @ qd - u @ self.friction_forces(q, qd)
            return np.concatenate([qd, qdd, [u @ tau, dissipated]])

        return rates

    def prescribed_function(self):
        """Motion with prescribed joint accelerations, as a prescribed simulation evaluates it per
        right-hand side and output row: ``prescribed(q, q̇, q̈_r) -> (q̈, τ, [q̇ᵀBτ, q̇ᵀDq̇ − uᵀτ_c],
        ½ q̇ᵀMq̇)`` (:func:`core.dynamics.prescribed.prescribed_terms`; no input checks). A backend
        may fuse it into one compiled call."""
        return functools.partial(prescribed_terms, self)

    def generalized_forces(self, q, qd, qdd) -> np.ndarray:
        """Q = M q̈ + C q̇ + D q̇ + ∂V_e/∂q + G − B τ_c, the force needed for q̈, shape (n_dof,)."""
        q, qd = self._state(q, qd)
        qdd = np.asarray(qdd, dtype=float)
        return (
            self.inertial_forces(q, qd, qdd)
            + self.damping_matrix(q) @ qd
            + self.elastic_forces(q)
            - self.input_matrix(q) @ self.friction_forces(q, qd)
        )

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """Joint inputs τ that produce q̈, shape (n_joints,).

        Solves B τ = Q (:meth:`generalized_forces`) in the least-squares sense.
        The flexible coordinates are not actuated, so an arbitrary q̈ is not
        reachable; if the residual exceeds 1e-8 of the size of the terms of Q
        (‖M q̈‖ + ‖Q‖ + ‖M‖), this raises ValueError (use
        :meth:`generalized_forces` for the full force vector).
        """
        Q = self.generalized_forces(q, qd, qdd)
        q = np.asarray(q, dtype=float)
        B = self.input_matrix(q)
        tau, *_ = np.linalg.lstsq(B, Q, rcond=None)
        residual = np.linalg.norm(B @ tau - Q)
        M = self.mass_matrix(q)
        scale = np.linalg.norm(M @ np.asarray(qdd, dtype=float)) + np.linalg.norm(Q) + np.linalg.norm(M)
        if residual > 1e-8 * scale:
            raise ValueError(
                f"qdd is not reachable with joint inputs (unactuated residual {residual:.3g}); "
                "use generalized_forces() for the full force vector"
            )
        return tau

    def kinetic_energy(self, q, qd) -> float:
        """T = ½ q̇ᵀ M q̇ [J]."""
        q, qd = self._state(q, qd)
        return float(0.5 * qd @ self.mass_matrix(q) @ qd)

    def modal_mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q) as :meth:`natural_frequencies` takes it (one evaluation per analysis): by
        default :meth:`mass_matrix`; a model whose fast M costs a start-up (compiled code) may
        give the same M by a path that costs none."""
        return self.mass_matrix(q)

    def gravity_stiffness(self, q: np.ndarray) -> np.ndarray:
        """∂G/∂q, the Hessian of the gravitational potential, shape (n_dof, n_dof)."""
        return complex_step_jacobian(self.gravity_forces, np.asarray(q, dtype=float))

    def equilibrium(
        self,
        q=None,
        joints: Literal["locked", "free"] = "locked",
        tau=None,
        tol: float = 1e-10,
        method: Literal["auto", "dense", "krylov"] = "auto",
    ):
        """The static equilibrium under gravity, elastic forces and joint torques ``tau``, from
        ``q`` (default :meth:`home`): Newton's method on the analytic tangent stiffness.
        ``"locked"`` holds the motor angles Bᵀq at their values in ``q`` whatever the frame (the
        deflections and, for pinned frames, the link angles settle); ``"free"`` lets every
        coordinate settle under ``tau``. ``method``: the Newton step from the tangent formed
        (``"dense"``) or matrix-free (``"krylov"``: GMRES on tangent products, preconditioned
        by the elastic stiffness; ``"auto"`` takes it for locked joints above
        :data:`~core.analysis.equilibrium.KRYLOV_MINIMUM` coordinates). Returns a
        :class:`~core.analysis.equilibrium.Equilibrium` (``q``, the holding ``torques``, the
        relative ``residual``, ``iterations``); raises
        :class:`~core.analysis.equilibrium.EquilibriumError` (with ``q`` where it stopped) if it
        does not converge to ``tol``. Module :mod:`core.analysis.equilibrium` states the
        equations."""
        from core.analysis.equilibrium import static_equilibrium

        q, _ = self._state(self.home() if q is None else q)
        return static_equilibrium(self, q, joints, tau, tol, method)

    #: Whether :meth:`gravity_stiffness_product` is cheaper than forming ∂G/∂q (then
    #: ``equilibrium(method="auto")`` takes matrix-free Newton steps on large models).
    cheap_gravity_products = False

    def gravity_stiffness_product(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """(∂G/∂q) v (here by forming ∂G/∂q; models with a cheaper directional derivative
        override this and set :attr:`cheap_gravity_products`)."""
        return self.gravity_stiffness(q) @ np.asarray(v, dtype=float)

    # -- linear analyses ----------------------------------------------------
    def linearize(self, q0, qd0=None, tau0=None) -> tuple[np.ndarray, np.ndarray]:
        """State-space matrices of ẋ = f(x, τ) about (q0, q̇0, τ0), x = (q, q̇).

        ``q0``: a configuration or an :class:`~core.analysis.equilibrium.Equilibrium` (its q,
        and its holding torques as τ0 unless ``tau0`` is given); τ0 defaults to zero.

        Returns
        -------
        A : ndarray, shape (2 n_dof, 2 n_dof)
        B : ndarray, shape (2 n_dof, n_joints)

        At rest (q̇0 = 0) the result is exact: A = [[0, 1], [−M⁻¹K_t, −M⁻¹D]] with the tangent
        stiffness K_t of :meth:`tangent_stiffness` at q̈0 (zero at an equilibrium); C q̇ is
        quadratic in q̇ and D q̇ vanishes with q̇. At q̇0 ≠ 0 it uses central differences of the
        exact dynamics (relative step :data:`LINEARIZE_STEP`). Coulomb friction is not
        differentiable at rest and is left out of both. :meth:`state_space` adds names and
        outputs.
        """
        from core.analysis.equilibrium import Equilibrium

        if isinstance(q0, Equilibrium):
            q0, tau0 = q0.q, q0.torques if tau0 is None else tau0
        q0, qd0 = self._state(q0, qd0)
        tau0 = np.zeros(self.n_joints) if tau0 is None else np.asarray(tau0, dtype=float)
        n = self.n_dof
        M = self.mass_matrix(q0)
        B = self.input_matrix(q0)
        A = np.zeros((2 * n, 2 * n))
        A[:n, n:] = np.eye(n)
        if not np.any(qd0):
            qdd0 = self.forward_dynamics(q0, qd0, tau0, friction=False)
            A[n:, :n] = -np.linalg.solve(M, self.tangent_stiffness(q0, qdd0, tau0))
            A[n:, n:] = -np.linalg.solve(M, self.damping_matrix(q0))
        else:
            A[n:] = central_difference_jacobian(
                lambda x: self.forward_dynamics(x[:n], x[n:], tau0, friction=False),
                np.concatenate([q0, qd0]),
                LINEARIZE_STEP,
            )
        B_ss = np.zeros((2 * n, self.n_joints))
        B_ss[n:] = np.linalg.solve(M, B)
        return A, B_ss

    def tangent_stiffness(self, q, qdd=None, tau=None) -> np.ndarray:
        """K_t = ∂²V_e/∂q² + ∂G/∂q + Σ_k ∂M/∂q_k q̈ e_kᵀ − ∂(B τ)/∂q, shape (n_dof, n_dof): the
        Jacobian in q of the rest forces M(q) q̈ + G(q) + ∂V_e/∂q − B(q) τ at fixed q̈ and τ
        (default zero), the stiffness of the equations of motion linearized at rest. q̈ = 0 at
        a static equilibrium; the last term, central differences of B(q)τ, is exactly zero
        for a constant B (both backends: joint rows identity, flexible rows φ'(0))."""
        q, _ = self._state(q)
        stiffness = self.elastic_stiffness(q) + self.gravity_stiffness(q)
        if qdd is not None and np.any(qdd):
            stiffness = stiffness + (self.mass_matrix_derivatives(q) @ np.asarray(qdd, dtype=float)).T
        if tau is not None and np.any(tau):
            tau = np.asarray(tau, dtype=float)
            stiffness = stiffness - central_difference_jacobian(lambda x: self.input_matrix(x) @ tau, q)
        return stiffness

    def state_space(self, q=None, outputs=("joints",), tau=None):
        """The linear model about (q, q̇ = 0, τ) as a :class:`scipy.signal.StateSpace` with
        names (:class:`core.analysis.state_space.NamedStateSpace`): x = (q, q̇) (states
        ``model.coordinates`` and ``<name>_dot``), inputs the joint torques ``tau_1``…, outputs
        from the specifications ``outputs``: ``"joints"`` (motor angles Bᵀq), ``"joint_coordinates"``
        (q_r), ``"tip"``, ``"tip_deflection"``, ``("deflection", link, s)``; D = 0.

        ``q``: a configuration (default :meth:`home`) or an
        :class:`~core.analysis.equilibrium.Equilibrium` (its holding torques as τ unless ``tau``
        is given; τ defaults to zero). A RuntimeWarning if the point is not at rest (q̈0 ≠ 0).
        Unknown outputs raise ValueError. Module :mod:`core.analysis.state_space` states the
        equations.
        """
        from core.analysis.state_space import state_space

        return state_space(self, q, outputs, tau)

    def natural_frequencies(
        self,
        q=None,
        joints: Literal["locked", "free"] = "locked",
        vectors: bool = False,
        count: int | None = None,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Undamped natural frequencies [rad/s] about configuration q, ascending.

        ``q``: a configuration (default :meth:`home`) or an
        :class:`~core.analysis.equilibrium.Equilibrium` (its q).

        ``"locked"``: the actuated coordinates Bᵀq are held (the motors hold
        the hubs; for clamped frames this is q_r fixed). ``"free"``: no joint
        constraint; without gravity its n_joints rigid-body modes are reported
        as 0. The stiffness is
        ∂²V_e/∂q² + ∂G/∂q (K + ∂G/∂q for fixed-length links); an unstable direction (negative eigenvalue) is returned as
        −√|λ| with a warning.

        ``vectors=True`` returns ``(omega, modes)``: the mode shapes as columns of
        generalized coordinates, shape (n_dof, len(omega)), normalized to unit
        modal mass (modesᵀ M modes = 1) with the largest-magnitude entry positive.

        ``count``: only the lowest ``count`` (default: all); models with many
        coordinates may then take a cheaper path (the shared engine:
        :mod:`core.dynamics.structured`).
        """
        if joints not in ("locked", "free"):
            raise ValueError(f"joints must be 'locked' or 'free', got {joints!r}")
        if count is not None:
            count = check.integer(count, "", "count", minimum=1)
            found = self.natural_frequencies(q, joints, vectors)
            return (found[0][:count], found[1][:, :count]) if vectors else found[:count]
        from core.analysis.equilibrium import Equilibrium

        q = q.q if isinstance(q, Equilibrium) else self.home() if q is None else q
        q, _ = self._state(q)
        M = M_q = self.modal_mass_matrix(q)
        gravity = self.gravity_stiffness(q)
        transform = self.elastic_coordinates(q)
        if transform is None:
            Z, K = np.eye(self.n_dof), self.elastic_stiffness(q)
        else:
            Z, K = transform  # q = Z z, K exact in z
        if joints == "locked":
            B = self.input_matrix(q)
            # Null space of Bᵀ = [I, B_fᵀ]: q_r = −B_fᵀ q_f, and q_f = Z_ff z_f.
            N = np.vstack([-B[self.flex].T, np.eye(self.n_dof - self.n_joints)])
            W = N @ Z[self.flex, self.flex]
            # The elastic stiffness has no joint rows: in z it is K_z's flexible block.
            K = N.T @ K @ N if transform is None else K[self.flex, self.flex]
        else:
            W = Z
        M = W.T @ M @ W
        K = K + W.T @ gravity @ W
        M, K = 0.5 * (M + M.T), 0.5 * (K + K.T)
        if M.shape[0] == 0:
            return (np.zeros(0), np.zeros((self.n_dof, 0))) if vectors else np.zeros(0)
        eigenvalues, shapes = _lowest_first(K, M)
        shapes = W @ shapes  # back to q: q = W y
        shapes /= np.sqrt(np.sum(shapes * (M_q @ shapes), axis=0))  # modal masses, by BLAS
        biggest = np.argmax(np.abs(shapes), axis=0)
        shapes *= np.sign(shapes[biggest, np.arange(shapes.shape[1])])
        if joints == "free" and not np.any(gravity):
            # Without gravity the joints carry no stiffness: exactly n_joints
            # rigid-body modes, whose computed eigenvalues are round-off of size
            # ε·λ_max (so no magnitude threshold could tell them apart from a
            # soft elastic mode on a fine mesh).
            rigid = eigenvalues[: self.n_joints]
            if np.max(np.abs(rigid)) > RIGID_MODE_TOLERANCE * max(np.max(np.abs(eigenvalues)), 1e-300):
                warnings.warn(
                    f"rigid-body eigenvalues {rigid} are larger than round-off", RuntimeWarning, stacklevel=2
                )
            eigenvalues[: self.n_joints] = 0.0
        if np.any(eigenvalues < 0):
            warnings.warn(
                f"configuration is not stable: {int(np.sum(eigenvalues < 0))} negative stiffness "
                "eigenvalue(s), reported as negative frequencies",
                RuntimeWarning,
                stacklevel=2,
            )
        omega = np.sign(eigenvalues) * np.sqrt(np.abs(eigenvalues))
        return (omega, shapes) if vectors else omega

    def bias_forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The velocity-product forces h(q, q̇) = C(q, q̇) q̇ [N or N m], shape (n_dof,).

        Only the Coriolis and centrifugal terms: gravity, elastic, damping and
        friction forces are separate primitives. This default is the Christoffel
        path (:meth:`coriolis_matrix`), the oracle; a backend may override it with a
        pass that needs no ∂M/∂q (the compiled recursive Newton–Euler of
        :mod:`core.dynamics.compiled`), and forward and inverse dynamics call this method.
        """
        q, qd = self._state(q, qd)
        return self.coriolis_matrix(q, qd) @ qd

    def nonlinear_forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """h(q, q̇) + G(q): the velocity-product and gravity forces, shape (n_dof,).

        What a forward-dynamics solver subtracts from the applied forces; the
        compiled chain computes both in one recursive pass.
        """
        return self.bias_forces(q, qd) + self.gravity_forces(q)

    def inertial_forces(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """M(q) q̈ + h(q, q̇) + G(q), shape (n_dof,) (recursive Newton–Euler on the compiled chain)."""
        return self.mass_matrix(q) @ np.asarray(qdd, dtype=float) + self.nonlinear_forces(q, qd)
