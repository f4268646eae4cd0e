"""Forward dynamics of a chain with many flexible coordinates in O(n_dof) (``solver="structured"``).

The structure is that of :mod:`core.dynamics.structured` (M = BD + W C Wᵀ with C from the
engine on a *reduced chain* of a few coordinates per link).

:class:`StructuredDynamics`. Apart from
½δ̇ᵀ(ρ∫φφᵀ)δ̇ (the BD part of M), the Lagrangian holds a link's δ and δ̇ only through the
fixed functionals Fᵀδ, Fᵀδ̇ (F: ∫φ, ∫sφ, tip value and slope, root slope, lumped values and
slopes; gravity acts through ∫φ and the tip values) and the quadratic forms δ_aᵀNδ_b,
δ_aᵀNδ̇_b, δ̇_aᵀNδ̇_b of the bending planes a, b with N = ρ∫φφᵀ + Σ m_k φ_kφ_kᵀ. So ∂L/∂δ,
∂L/∂δ̇ (less the BD part) and d/dt ∂L/∂δ̇ less its q̈ terms lie in span{F, ∫φφᵀδ_a,
∫φφᵀδ̇_a}: with U per link spanning F, δ_a, ∫φφᵀδ_a, δ̇_a and ∫φφᵀδ̇_a of every plane,
h(q, q̇) and G(q) lie in span W. The reduced chain's Lagrangian is the full one restricted
to q = W q̃ (its integrals are projections of the full ones, exactly), so at q̃ = Wᵀq,
q̃̇ = Wᵀq̇ (q = W q̃ and q̇ = W q̃̇ because δ, δ̇ ∈ span U) the reduced engine gives
h̃ + G̃ = Wᵀ(h + G), hence h + G = W(h̃ + G̃) exactly (measured against the dense engine:
tests/test_structured.py). The condition that makes it exact: q, q̇ ∈ span W and no other
δ-dependence of the energies — geometric stiffening (δᵀP₁δ, δᵀP₂δ, δᵀHδ: other
matrices) and translating links (blocks depending on the free length) are refused. The
elastic and damping forces K δ + D δ̇ are applied link by link: EI∫φ''φ''ᵀ banded,
Rayleigh damping α M_δδ + β K as the banded blocks plus the lumped masses' rank-k part;
modal damping is dense by nature (every mode of the link) and is applied with the link's
m × m block of the dense path (O(m²) memory and one eigen-solve per link, once: use
Rayleigh damping on fine meshes). Then (BD + W C Wᵀ) q̈ = b = Q − W(h̃ + G̃) by block
elimination: with y = Wᵀq̈ the flexible rows give q̈_f = BD_f⁻¹(b_f − U_f (C y)_f), and y
solves the small symmetric positive definite system

    (C + diag(0, G⁻¹)) y = (b_J, G⁻¹ U_fᵀ BD_f⁻¹ b_f),   G = U_fᵀ BD_f⁻¹ U_f

(xᵀ(C + diag(0, G⁻¹))x is the least q̈ᵀMq̈ over Wᵀq̈ = x), after which
(C y)_f = G⁻¹(U_fᵀBD_f⁻¹b_f − y_f). One step of iterative refinement with the exact
product M x = BD x + W C Wᵀ x brings the residual in the dense equations to round-off (a
second step, kept only while the residual falls, where (ρ∫φφᵀ)⁻¹ is ill-conditioned:
measured 3.1e-13 → 8.6e-17 on a clamped–mass AMM link; :data:`REFINEMENT_STEPS`). A link
whose U is its whole coefficient space (assumed modes, coarse meshes: U square) needs no
elimination: there G⁻¹ = UᵀBDU exactly, its block of the small system is M̃'s own and
q̈_f = U y_f. Per call: banded solves with the cached Cholesky factors of
ρ∫φφᵀ, a QR of the r link vectors and the engine on a chain of r coordinates per link and
plane, O(n_dof · r); nothing of size n_dof².
"""

from __future__ import annotations

import copy
import weakref

import numpy as np

from core.dynamics.elastic import bending_block, link_damping
from core.dynamics.structured import RANK_TOLERANCE, banded_cholesky, fixed_vectors

#: At most this many refinement steps of the structured forward dynamics: each recomputes the
#: residual b − M q̈ with the exact O(n_dof) product BD q̈ + W C Wᵀ q̈ and solves for a
#: correction, kept while it lowers the residual.
REFINEMENT_STEPS = 3

_DYNAMICS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def structured_dynamics(model) -> StructuredDynamics:
    """The :class:`StructuredDynamics` of ``model``, built on first use and cached (weakly,
    per model object). Raises ValueError for a model the structured path does not handle."""
    dynamics = _DYNAMICS.get(model) if model.on_engine else None
    if dynamics is None:
        dynamics = _DYNAMICS[model] = StructuredDynamics(model)
    return dynamics


def structured_solver(model, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
    """``SOLVERS["structured"]``: M q̈ = applied − h − G by block elimination on
    M = BD + W C Wᵀ, with h + G from the reduced chain (see the module docstring); O(n_dof)."""
    return structured_dynamics(model).accelerations(q, qd, applied)


class _Link:
    """Configuration-independent data of one flexible link for the structured dynamics.

    Both bending planes share the basis, so one subspace U, one factor of ρ∫φφᵀ and one
    G = Uᵀ(ρ∫φφᵀ)⁻¹U serve both."""

    def __init__(self, model, number: int) -> None:
        import scipy.linalg

        basis, body, link = model.bases[number], model.bodies[number], model.arm.links[number - 1]
        self.number, self.basis, self.planes = number, basis, body.planes
        columns = np.arange(model.n_dof)[model.flex_columns[number]]
        self.columns = columns
        #: The coordinates of each bending plane in q.
        self.rows = [columns[body.plane_columns[plane]] for plane in range(body.planes)]
        self.EI = [link.EI, link.EI_out][: body.planes]
        self.rho = float(link.mass_per_length)
        self._factor = banded_cholesky(self.rho * basis.mass, scipy.linalg)
        # The fixed functionals: an orthonormal basis U0 of them (scale-free rank decision).
        vectors = [_unit(v) for v in fixed_vectors(model, number) if np.any(v)]
        U0 = np.zeros((basis.n, 0))
        if vectors:
            U, singular, _ = np.linalg.svd(np.column_stack(vectors), full_matrices=False)
            U0 = U[:, singular > RANK_TOLERANCE * singular[0]]
        self.U0 = U0
        self.Y0 = self.solve_mass(U0)  # (ρ∫φφᵀ)⁻¹ U0
        self._MU0, self._KU0 = np.asarray(basis.mass @ U0), np.asarray(basis.stiffness @ U0)
        self._M00, self._K00, self._G00 = U0.T @ self._MU0, U0.T @ self._KU0, U0.T @ self.Y0
        self._vectors0 = {name: U0.T @ getattr(basis, name) for name in _VECTORS}
        #: U0 plus the state vectors (4 per plane) can fill the whole coefficient space (assumed
        #: modes, coarse meshes): then U is all of it, once, the same at every state.
        self.fixed = None
        if U0.shape[1] + 4 * body.planes >= basis.n:
            complement = np.linalg.qr(np.hstack([U0, np.eye(basis.n)]))[0][:, U0.shape[1] : basis.n]
            self.fixed = self._state(complement)
        # Lumped masses: values and slopes of the basis there (for M_δδ in Rayleigh damping).
        lumped = link.lumped_masses
        positions = np.array([lm.position for lm in lumped], dtype=float)
        self._lumped_masses = np.array([lm.mass for lm in lumped], dtype=float)
        self._lumped_inertias = np.array([lm.inertia for lm in lumped], dtype=float)
        if positions.size:
            self._values, self._slopes = basis.evaluate(positions)
        else:
            self._values = self._slopes = np.zeros((basis.n, 0))
        self.damping = link.damping
        self._modal = None
        if link.damping is not None and link.damping.kind == "modal":
            # Modal damping is dense by nature (every mode of the link): its m × m block,
            # exactly the dense path's (O(m²) memory, one O(m³) eigen-solve per link).
            block = bending_block(link, body, self.basis.stiffness)
            self._modal = link_damping(link.damping, block, body.M_δδ)

    def solve_mass(self, x: np.ndarray) -> np.ndarray:
        """(ρ∫φφᵀ)⁻¹ x by the banded Cholesky factor, x of shape (n,) or (n, k)."""
        import scipy.linalg

        factor, _ = self._factor
        if x.size == 0:
            return np.zeros_like(x, dtype=float)
        return scipy.linalg.cho_solve_banded((factor, False), x, check_finite=False)

    def mass_product(self, x: np.ndarray) -> np.ndarray:
        """ρ∫φφᵀ x (the link's block of BD in one plane)."""
        return self.rho * np.asarray(self.basis.mass @ x)

    def elastic_forces(self, q: np.ndarray) -> np.ndarray:
        """K δ of the link's coordinates (per plane EI ∫φ''φ''ᵀ δ_a, banded), shape (m,)."""
        return np.concatenate(
            [
                EI * np.asarray(self.basis.stiffness @ q[rows])
                for EI, rows in zip(self.EI, self.rows, strict=True)
            ]
        )

    def damping_forces(self, qd: np.ndarray) -> np.ndarray | None:
        """D δ̇ of the link's coordinates (None without damping), shape (m,): Rayleigh
        α M_δδ δ̇ + β K δ̇ with M_δδ = ρ∫φφᵀ plus the lumped masses' m_k φ_k φ_kᵀ and
        J_k φ'_k φ'_kᵀ per plane (banded plus rank k); modal by the link's dense block."""
        if self.damping is None:
            return None
        if self._modal is not None:
            return self._modal @ qd[self.columns]
        alpha, beta = self.damping.alpha, self.damping.beta
        out = []
        for EI, rows in zip(self.EI, self.rows, strict=True):
            rate = qd[rows]
            inertia = self.mass_product(rate)
            inertia += self._values @ (self._lumped_masses * (self._values.T @ rate))
            inertia += self._slopes @ (self._lumped_inertias * (self._slopes.T @ rate))
            out.append(alpha * inertia + beta * EI * np.asarray(self.basis.stiffness @ rate))
        return np.concatenate(out)

    def state(self, q: np.ndarray, qd: np.ndarray) -> _LinkState:
        """The subspace U = [U0, U1] at (q, q̇) (U1: δ, ∫φφᵀδ, δ̇, ∫φφᵀδ̇ of every plane,
        orthogonalized against U0) and the reduced quantities on it."""
        if self.fixed is not None:
            return self.fixed
        basis, U0 = self.basis, self.U0
        vectors = []
        for x in (q, qd):
            for rows in self.rows:
                d = x[rows]
                if np.any(d):
                    vectors += [d, np.asarray(basis.mass @ d)]
        vectors = [_unit(v) for v in vectors if np.any(v)]
        r0 = U0.shape[1]
        if vectors and r0 < basis.n:
            # Householder QR of [U0, V]: the columns after the first r0 are orthonormal and
            # orthogonal to span U0 (a dependent column gives some such direction: harmless,
            # span W only has to contain the coupling vectors).
            U1 = np.linalg.qr(np.column_stack([U0, *vectors]))[0][:, r0:]
        else:
            U1 = np.zeros((basis.n, 0))
        return self._state(U1)

    def _state(self, U1: np.ndarray) -> _LinkState:
        """The reduced quantities on U = [U0, U1] (U1 orthonormal, orthogonal to U0)."""
        from core.dynamics.basis import BeamBasis

        basis, U0 = self.basis, self.U0
        Y1 = self.solve_mass(U1)
        U = np.hstack([U0, U1])
        Y = np.hstack([self.Y0, Y1])
        mass = _grown(self._M00, U0, U1, np.asarray(basis.mass @ U1))
        stiffness = _grown(self._K00, U0, U1, np.asarray(basis.stiffness @ U1))
        G = _grown(self._G00, U0, U1, Y1)
        reduced = {
            name: np.concatenate([value, U1.T @ getattr(basis, name)])
            for name, value in self._vectors0.items()
        }

        def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            values, slopes = basis.evaluate(s)
            return U.T @ values, U.T @ slopes

        small = BeamBasis(
            length=basis.length,
            frame=basis.frame,
            mass=mass,
            stiffness=stiffness,
            evaluate=evaluate,
            description=f"{basis.description}, reduced to its coupling functionals",
            **reduced,
        )
        return _LinkState(U, Y, G, mass, small)


def _unit(v: np.ndarray) -> np.ndarray:
    """v / ‖v‖ for a nonzero v, scaled by max|v| first (no underflow of ‖v‖² for tiny entries)."""
    v = v / np.max(np.abs(v))
    return v / np.linalg.norm(v)


#: The basis vectors a reduced basis carries (projected on U).
_VECTORS = ("first", "moment", "tip_value", "tip_slope", "root_slope")


def _grown(A00: np.ndarray, U0: np.ndarray, U1: np.ndarray, AU1: np.ndarray) -> np.ndarray:
    """Uᵀ A U for U = [U0, U1] from the cached U0ᵀ A U0 and A U1 (A symmetric), symmetrized."""
    top = U0.T @ AU1
    out = np.block([[A00, top], [top.T, U1.T @ AU1]])
    return 0.5 * (out + out.T)


class _LinkState:
    """One flexible link at (q, q̇): U (n, r), Y = (ρ∫φφᵀ)⁻¹U, G = UᵀY, Uᵀ∫φφᵀU and the
    reduced basis (the functions Uᵀφ)."""

    def __init__(self, U, Y, G, mass, basis) -> None:
        import scipy.linalg

        self.U, self.Y, self.mass, self.basis = U, Y, mass, basis
        #: U spans the whole coefficient space: q̈_f = U y_f, no elimination (and no G⁻¹).
        self.square = U.shape[1] == U.shape[0]
        self.G_inverse = (
            None if self.square else scipy.linalg.cho_solve(scipy.linalg.cho_factor(G), np.eye(G.shape[0]))
        )


class StructuredDynamics:
    """Forward dynamics of a chain in O(n_dof) (see the module docstring, *Forward dynamics*).

    Built once per model (:func:`structured_dynamics`): per flexible link the banded
    Cholesky factor of ρ∫φφᵀ, the orthonormal basis U0 of its fixed coupling functionals and
    (ρ∫φφᵀ)⁻¹U0, the projected basis blocks, and the damping data. Nothing of size n_dof² (nor
    m² per link, except a modal damping block) is built; the model's dense K, D, bodies'
    blocks and compiled chain stay unbuilt.

    Raises
    ------
    ValueError
        For a model that is not a :class:`~core.dynamics.engine.ChainModel`, has translating links
        (their K, D and mass blocks depend on the free length) or geometric stiffening (its
        kinetic energy holds δᵀP₁δ, δᵀP₂δ and the foreshortening δᵀHδ, whose gradients leave
        the span of the coupling functionals).
    """

    def __init__(self, model) -> None:
        if not model.on_engine:
            raise ValueError(
                f"solver 'structured' needs a ChainModel (the shared engine), got {type(model).__name__}"
            )
        if model.translating:
            raise ValueError(
                "solver 'structured' does not handle translating links (links "
                f"{list(model.translating)}: their stiffness, damping and mass blocks depend on the "
                "free length); use 'composite' or 'recursive'"
            )
        if model.geometric_stiffening:
            raise ValueError(
                "solver 'structured' does not handle geometric stiffening (the foreshortening terms "
                "δᵀP₁δ, δᵀP₂δ, δᵀHδ leave the span of the coupling functionals); use 'composite' "
                "or 'recursive'"
            )
        self._model = weakref.ref(model)  # the cache holds this object by the model, weakly
        self.links = [_Link(model, number) for number in model.bases]
        B = model._B  # (n_dof, n_joints): thin
        self._B = B
        self._viscous = np.array([joint.viscous_friction for joint in model.arm.joints], dtype=float)
        fixed = all(link.fixed is not None for link in self.links)
        self._fixed = ReducedChain(self, [link.fixed for link in self.links]) if fixed else None

    @property
    def model(self):
        """The :class:`~core.dynamics.engine.ChainModel` this data belongs to."""
        return self._model()

    # -- applied forces: B(τ + τ_c) − D q̇ − K q without the dense K, D --------------------
    def applied(self, q: np.ndarray, qd: np.ndarray, tau, friction: bool = True):
        """(B(τ + τ_c) − D q̇ − K q, D q̇, τ_c): the forces the solver balances, with K and D
        applied link by link (banded) and the viscous joint friction through B; O(n_dof)."""
        model = self.model
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (model.n_joints,):
            raise ValueError(f"tau must have shape ({model.n_joints},), got {tau.shape}")
        coulomb = model.friction_forces(q, qd) if friction else np.zeros(model.n_joints)
        B = self._B
        damping = B @ (self._viscous * (B.T @ qd))
        forces = B @ (tau + coulomb) - damping
        for link in self.links:
            forces[link.columns] -= link.elastic_forces(q)
            rate = link.damping_forces(qd)
            if rate is not None:
                forces[link.columns] -= rate
                damping[link.columns] += rate
        return forces, damping, coulomb

    def forward(self, q: np.ndarray, qd: np.ndarray, tau, friction: bool = True) -> np.ndarray:
        """q̈ for joint inputs τ (as :meth:`~core.dynamics.model.Model.forward_dynamics`)."""
        forces, _, _ = self.applied(q, qd, tau, friction)
        return self.accelerations(q, qd, forces)

    def rates_function(self):
        """``rates(x, τ) -> ẋ`` of :meth:`~core.dynamics.model.Model.rates_function` on this path."""
        model = self.model
        n = model.n_dof

        def rates(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
            q, qd = model._state(x[:n], x[n : 2 * n])
            tau = np.asarray(tau, dtype=float)
            forces, damping, coulomb = self.applied(q, qd, tau)
            qdd = self.accelerations(q, qd, forces)
            u = self._B.T @ qd
            return np.concatenate([qd, qdd, [u @ tau, qd @ damping - u @ coulomb]])

        return rates

    # -- accelerations ------------------------------------------------------------------
    def reduce(self, q: np.ndarray, qd: np.ndarray) -> ReducedChain:
        """The chain at (q, q̇) on the subspaces of its links (see :class:`ReducedChain`);
        built once when every link's subspace is fixed (:attr:`_Link.fixed`)."""
        if self._fixed is not None:
            reduced = copy.copy(self._fixed)
        else:
            reduced = ReducedChain(self, [link.state(q, qd) for link in self.links])
        reduced.q, reduced.qd = reduced.project(q), reduced.project(qd)
        return reduced

    def accelerations(self, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
        """Solve M q̈ + h + G = ``applied`` (see the module docstring); O(n_dof)."""
        import scipy.linalg

        reduced = self.reduce(q, qd)
        chain, blocks, n_joints = reduced.chain, reduced.blocks, self.model.n_joints
        forces = chain.bias_forces(reduced.q, reduced.qd) + chain.gravity_forces(reduced.q)  # h̃ + G̃
        M_small = chain.mass_matrix(reduced.q)
        C = M_small.copy()  # M̃ − Wᵀ BD W
        M_hat = M_small.copy()  # C + diag(0, G⁻¹), symmetric positive definite
        for link, state, _, small_rows in blocks:
            index = np.ix_(small_rows, small_rows)
            C[index] -= link.rho * state.mass
            if not state.square:  # square: G⁻¹ = Uᵀ BD U, the block stays M̃'s
                M_hat[index] += state.G_inverse - link.rho * state.mass
        factor = scipy.linalg.cho_factor(0.5 * (M_hat + M_hat.T))
        b = np.array(applied, dtype=float) - reduced.lift(forces)

        def solve(b: np.ndarray) -> np.ndarray:
            rhs = np.empty(chain.n_dof)
            rhs[:n_joints] = b[:n_joints]
            parts = []
            for link, state, rows, small_rows in blocks:
                if state.square:  # G⁻¹ U_fᵀ BD_f⁻¹ b_f = U_fᵀ b_f
                    rhs[small_rows] = state.U.T @ b[rows]
                    parts.append(None)
                    continue
                z = link.solve_mass(b[rows])  # BD_f⁻¹ b_f
                c = state.U.T @ z  # U_fᵀ BD_f⁻¹ b_f
                rhs[small_rows] = state.G_inverse @ c
                parts.append((z, c))
            y = scipy.linalg.cho_solve(factor, rhs)  # y = Wᵀ q̈
            out = np.empty_like(b)
            out[:n_joints] = y[:n_joints]
            for (_, state, rows, small_rows), part in zip(blocks, parts, strict=True):
                if part is None:
                    out[rows] = state.U @ y[small_rows]
                    continue
                # (C y)_f = G⁻¹(U_fᵀ BD_f⁻¹ b_f − y_f), then q̈_f = BD_f⁻¹(b_f − U_f (C y)_f)
                z, c = part
                out[rows] = z - state.Y @ (state.G_inverse @ (c - y[small_rows]))
            return out

        def product(x: np.ndarray) -> np.ndarray:  # M x = BD x + W C Wᵀ x, exact, O(n_dof · r)
            out = reduced.lift(C @ reduced.project(x))
            for link, _, rows, _ in blocks:
                out[rows] += link.mass_product(x[rows])
            return out

        qdd = solve(b)
        residual = b - product(qdd)
        size = np.linalg.norm(residual)
        for _ in range(REFINEMENT_STEPS):
            candidate = qdd + solve(residual)
            after = b - product(candidate)
            if not np.linalg.norm(after) < size:  # round-off reached
                break
            qdd, residual, size = candidate, after, np.linalg.norm(after)
        return qdd


class ReducedChain:
    """A chain at (q, q̇) on the subspaces U of its links: the engine's :class:`~core.dynamics.engine.ChainModel`
    on the basis functions Uᵀφ (``chain``, on the compiled kernels) and the reduced state q̃ = Wᵀq,
    q̃̇ = Wᵀq̇ (``q``, ``qd``) with W = blockdiag(1_joints, U per link and plane), orthonormal.

    Exactly (module docstring): q = W q̃, q̇ = W q̃̇, M(q) = BD + W C Wᵀ with
    C = M̃(q̃) − Wᵀ BD W, and h(q, q̇) + G(q) = W (h̃(q̃, q̃̇) + G̃(q̃)).

    Attributes
    ----------
    chain : ChainModel
    q, qd : ndarray (r,)
    blocks : list of (link, state, rows, small_rows)
        Per flexible link and bending plane: its :class:`_Link`, :class:`_LinkState`, its
        coordinates in q and in q̃.
    """

    def __init__(self, dynamics: StructuredDynamics, states: list) -> None:
        model = dynamics.model
        self.n_dof, self.n_joints = model.n_dof, model.n_joints
        bases = {link.number: state.basis for link, state in zip(dynamics.links, states, strict=True)}
        self.chain = chain = model.on_bases(bases)
        r = chain.n_dof
        self.blocks = []
        for link, state in zip(dynamics.links, states, strict=True):
            small = chain.bodies[link.number]
            columns = np.arange(r)[chain.flex_columns[link.number]]
            for plane, rows in enumerate(link.rows):
                self.blocks.append((link, state, rows, columns[small.plane_columns[plane]]))
        self.q = self.qd = None  # the state, set by StructuredDynamics.reduce

    def project(self, x: np.ndarray) -> np.ndarray:
        """Wᵀ x, shape (r,)."""
        out = np.empty(self.chain.n_dof)
        out[: self.n_joints] = x[: self.n_joints]
        for _, state, rows, small_rows in self.blocks:
            out[small_rows] = state.U.T @ x[rows]
        return out

    def lift(self, small: np.ndarray) -> np.ndarray:
        """W x̃, shape (n_dof,)."""
        out = np.zeros(self.n_dof)
        out[: self.n_joints] = small[: self.n_joints]
        for _, state, rows, small_rows in self.blocks:
            out[rows] = state.U @ small[small_rows]
        return out


__all__ = [
    "REFINEMENT_STEPS",
    "ReducedChain",
    "StructuredDynamics",
    "structured_dynamics",
    "structured_solver",
]
