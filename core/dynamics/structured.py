"""Natural frequencies and forward dynamics of a chain with many flexible coordinates, without dense work.

A fine element mesh gives each flexible link thousands of coordinates, and the
dense paths of :meth:`~core.dynamics.model.Model.natural_frequencies` (form M, ∂G/∂q and the
pencil, ``eigh``) and of forward dynamics (form M, K, D; Cholesky) cost O(n_dof³) time and
O(n_dof²) memory. Their structure:

**Block diagonal plus low rank.** A link's own coordinates enter the kinetic energy
through its mass block ρ∫φφᵀ (banded for Hermite elements) and otherwise only through a
few linear functionals: the first and second moments ∫φ, ∫sφ (the coupling with the
link's frame), the tip value and slope (the frames of the links beyond, the payload),
the root slope (a pinned frame's hub), the values and slopes at lumped masses, and at a
deflected configuration δ itself and ∫φφᵀδ (the second-order inertia terms). Let U_j
span these vectors for link j (orthonormal, r_j ≲ 12 columns) and W = blockdiag(1_joints,
U_j per bending plane). Then, exactly,

    M(q) = BD + W C Wᵀ,   ∂G/∂q = W G Wᵀ,   K_elastic = blockdiag(EI ∫φ''φ''ᵀ),

with BD the blocks ρ∫φφᵀ, C = M̃(q̃) − Wᵀ BD W and G = ∂G̃/∂q̃ from the *reduced chain*:
the same engine on the basis functions Uᵀφ (integrals Uᵀ(∫φφᵀ)U, Uᵀ∫φ, …, exact by
linearity) at q̃ = the coordinates of q in span(W). Nothing here knows the physics: the
engine computes C and G on a chain of a few coordinates per link.

**Well-conditioned stiffness.** The assembled ∫φ''φ''ᵀ of fine elements has entries
~1/h³ that cancel to O(1) on smooth modes (its lowest eigenvalues lose ε N⁴): each link
is taken in the coordinates z of its basis's ``deformations`` (δ = T z) where the
stiffness K_z = RᵀR is exact and banded (2×2 blocks for elements, :mod:`fem.eigen`).

**Eigen-solve.** With y the analysis coordinates (joints locked: the flexible ones, the
joint angles following −B_fᵀ q_f; free: all), x = R Z⁻¹ y and K_y = RᵀB R,
B = 1 + V S Vᵀ (V = R⁻ᵀZᵀL thin, S the low-rank stiffness), the lowest λ of K_y y = λ M_y y
are the largest μ = 1/λ of the symmetric positive operator

    B^{-1/2} R⁻ᵀ Zᵀ M_y Z R⁻¹ B^{-1/2}

(B^{-1/2} from the small eigenproblem of S in the range of V), found by Lanczos
(``eigsh``, ``which="LA"``): each product is a few banded solves, running sums and thin
products, O(n_dof). Free joints without gravity have n_joints rigid-body modes (K_y
singular): the joint coordinates are eliminated from the mass (M_ff − M_fr M_rr⁻¹ M_rf,
again block diagonal plus low rank) and reported as zeros. A configuration that is not
stable (B not positive definite) raises :class:`NotStable`; the caller decides.

Forward dynamics on the same structure (``solver="structured"``):
:mod:`core.dynamics.structured_forward`.
"""

from __future__ import annotations

import numpy as np

#: Below this many analysis coordinates the operator is formed densely and solved with ``eigh``.
DENSE_OPERATOR = 64
#: Singular values of the interface vectors below this fraction of the largest are dropped.
RANK_TOLERANCE = 1e-13
#: Seed of the Lanczos starting vector (:func:`lanczos_start`).
LANCZOS_SEED = 0


def lanczos_start(size: int) -> np.ndarray:
    """The starting vector of every ``eigsh`` here (and in :mod:`fem.eigen`): uniform in ±1 from
    a fixed seed. Without one, SciPy draws it from fresh entropy at every call, so the same
    eigenproblem converged to different round-off in every process and run (frequencies of
    fine meshes differed at 1e-15 relative between two runs of one case)."""
    return np.random.default_rng(LANCZOS_SEED).uniform(-1.0, 1.0, size)


class NotStable(ValueError):
    """The stiffness of the analysis is not positive definite (an unstable configuration,
    or rigid-body modes the structured path does not separate)."""


def interface_vectors(model, number: int, q: np.ndarray) -> np.ndarray:
    """Orthonormal basis U (n × r) of the basis-coefficient vectors through which link
    ``number``'s coordinates reach anything but its own mass and stiffness blocks."""
    basis, body = model.bases[number], model.bodies[number]
    vectors = fixed_vectors(model, number)
    delta = q[model.flex_columns[number]]
    for plane in range(body.planes):
        d = body.plane(delta, plane)
        if np.any(d):
            vectors += [d, np.asarray(basis.mass @ d)]
    # directions, not sizes: a deflection of 1e-13 beside functionals of order one is still a
    # direction q has, and an unscaled rank cut would drop it (q then outside the span of U)
    columns = [v / norm for v in map(np.asarray, vectors) if (norm := np.linalg.norm(v)) > 0.0]
    U, singular, _ = np.linalg.svd(np.column_stack(columns), full_matrices=False)
    return U[:, singular > RANK_TOLERANCE * singular[0]]


def fixed_vectors(model, number: int) -> list[np.ndarray]:
    """The configuration-independent coupling functionals of link ``number``: ∫φ, ∫sφ, the tip
    value and slope, the root slope, and the values and slopes at its lumped masses."""
    basis, link = model.bases[number], model.arm.links[number - 1]
    vectors = [basis.first, basis.moment, basis.tip_value, basis.tip_slope, basis.root_slope]
    positions = np.array([lumped.position for lumped in link.lumped_masses], dtype=float)
    if positions.size:
        values, slopes = basis.evaluate(positions)
        vectors += [*values.T, *slopes.T]
    return vectors


def _reduced_basis(basis, U: np.ndarray):
    from core.dynamics.basis import BeamBasis, sandwich_product

    def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, slopes = basis.evaluate(s)
        return U.T @ values, U.T @ slopes

    return BeamBasis(
        length=basis.length,
        frame=basis.frame,
        mass=sandwich_product(U, basis.mass),
        first=U.T @ basis.first,
        moment=U.T @ basis.moment,
        stiffness=sandwich_product(U, basis.stiffness),
        tip_value=U.T @ basis.tip_value,
        tip_slope=U.T @ basis.tip_slope,
        root_slope=U.T @ basis.root_slope,
        evaluate=evaluate,
        description=f"{basis.description}, reduced to its coupling functionals",
    )


class ChainStructure:
    """M = BD + W C Wᵀ, ∂G/∂q = W G Wᵀ and the elastic blocks of a chain at configuration q.

    Attributes
    ----------
    W : ndarray (n_dof, r)
    C, G : ndarray (r, r)
    blocks : list of (columns, ρ∫φφᵀ, T or None, R, bandwidth)
        One entry per flexible link and bending plane: its coordinates in q (array of
        indices), its mass block, its deformation map δ = T z, and the upper banded
        Cholesky factor of its stiffness in z (scipy ``cholesky_banded`` layout).

    The blocks are used in the basis's own representation (:class:`~core.dynamics.basis.BeamBasis`:
    sparse mass and stiffness, T an O(n) operator for element meshes): O(n_dof · r) time
    and memory, nothing dense of the size of a link's block.
    """

    def __init__(self, model, q: np.ndarray) -> None:
        import scipy.linalg

        from core.dynamics.basis import sandwich_product

        if model.translating:
            raise ValueError("the structured path does not handle translating links")
        self.model = model
        q = np.asarray(q, dtype=float)
        subspaces = {number: interface_vectors(model, number, q) for number in model.bases}
        reduced = model.on_bases(
            {number: _reduced_basis(model.bases[number], U) for number, U in subspaces.items()}
        )
        n, r = model.n_dof, reduced.n_dof
        W = np.zeros((n, r))
        W[: model.n_joints, : model.n_joints] = np.eye(model.n_joints)
        self.blocks = []
        for number, U in subspaces.items():
            body, small = model.bodies[number], reduced.bodies[number]
            link, basis = model.arm.links[number - 1], model.bases[number]
            columns = np.arange(n)[model.flex_columns[number]]
            small_columns = np.arange(r)[reduced.flex_columns[number]]
            T = basis.deformations
            K_z = basis.stiffness if basis.deformation_stiffness is None else basis.deformation_stiffness
            for plane in range(body.planes):
                rows = columns[body.plane_columns[plane]]
                W[np.ix_(rows, small_columns[small.plane_columns[plane]])] = U
                EI = link.EI if plane == 0 else link.EI_out
                factor, bandwidth = banded_cholesky(EI * K_z, scipy.linalg)
                self.blocks.append((rows, link.mass_per_length * basis.mass, T, factor, bandwidth))
        self.W = W
        q_small = np.linalg.lstsq(W, q, rcond=None)[0]
        if not np.allclose(W @ q_small, q, rtol=1e-12, atol=1e-14 * max(1.0, float(np.max(np.abs(q))))):
            raise AssertionError("the configuration is not in the span of the reduced chain")
        BD_small = np.zeros((r, r))
        for rows, mass, *_ in self.blocks:
            BD_small += sandwich_product(W[rows], mass)
        self.C = reduced.mass_matrix(q_small) - BD_small
        self.G = reduced.gravity_stiffness(q_small)
        self.reduced = reduced

    def mass_matrix(self) -> np.ndarray:
        """Dense M (for tests): BD + W C Wᵀ."""
        from core.dynamics.basis import dense

        M = self.W @ self.C @ self.W.T
        for rows, mass, *_ in self.blocks:
            M[np.ix_(rows, rows)] += dense(mass)
        return M


def banded_cholesky(K, linalg) -> tuple[np.ndarray, int]:
    """Upper banded Cholesky factor of a symmetric positive definite block, dense or sparse
    (its bandwidth detected from the non-zeros; the band read from the diagonals, never a
    dense copy of a sparse block)."""
    from core.dynamics.basis import is_sparse

    if is_sparse(K):
        coo = K.tocoo()
        nonzero = coo.data != 0
        rows, cols = coo.row[nonzero], coo.col[nonzero]
    else:
        rows, cols = np.nonzero(K)
    bandwidth = int(np.max(np.abs(rows - cols))) if rows.size else 0
    n = K.shape[0]
    banded = np.zeros((bandwidth + 1, n))
    for k in range(bandwidth + 1):
        banded[bandwidth - k, k:] = K.diagonal(k) if is_sparse(K) else np.diagonal(K, k)
    return linalg.cholesky_banded(banded, lower=False), bandwidth


def lowest_frequencies(
    model, q: np.ndarray, joints: str, count: int, vectors: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``count`` lowest natural frequencies [rad/s] of ``model`` at q (see the module
    docstring), ascending, and with ``vectors`` the unit-modal-mass modes in q (n_dof, count).

    Raises :class:`NotStable` when the analysis stiffness is not positive definite.
    """
    import scipy.linalg
    import scipy.sparse.linalg

    structure = ChainStructure(model, q)
    W, C, G = structure.W, structure.C, structure.G
    n, n_joints = model.n_dof, model.n_joints
    flex = np.arange(n_joints, n)
    gravity = bool(np.any(G))
    rigid = 0
    if joints == "locked":
        B_f = model.input_matrix(q)[flex]
        L = W[flex] - B_f @ W[:n_joints]  # Nᵀ W, N = [−B_fᵀ; 1]
        C_y, S = C, G
    elif not gravity:
        # No joint stiffness: eliminate the joints from the mass, n_joints zero frequencies.
        M_rr = W[:n_joints] @ C @ W[:n_joints].T
        coupling = W[:n_joints] @ C  # M_rf = W_r C W_fᵀ
        C_y = C - coupling.T @ np.linalg.solve(M_rr, coupling)
        L, S, rigid = W[flex], G, n_joints
    blocks = [(rows - n_joints, mass, T, R, bandwidth) for rows, mass, T, R, bandwidth in structure.blocks]
    size = n - n_joints
    if joints == "free" and gravity:
        # All coordinates; the joints carry only the (low-rank) gravity stiffness: give them
        # c·1 in the block-diagonal part and −c·1 in the low-rank one (exact, any c > 0).
        c = float(np.max(np.abs(np.diag(G)[:n_joints]))) or 1.0
        joint_rows = np.arange(n_joints)
        blocks = [(joint_rows, np.zeros((n_joints, n_joints)), None, np.sqrt(c) * np.ones((1, n_joints)), 0)]
        blocks += [(rows, mass, T, R, bandwidth) for rows, mass, T, R, bandwidth in structure.blocks]
        joint_columns = np.zeros((n, n_joints))
        joint_columns[:n_joints] = np.eye(n_joints)
        L = np.hstack([W, joint_columns])
        C_y = np.zeros((L.shape[1],) * 2)
        C_y[: C.shape[0], : C.shape[0]] = C
        S = np.zeros_like(C_y)
        S[: G.shape[0], : G.shape[0]] = G
        S[G.shape[0] :, G.shape[0] :] = -c * np.eye(n_joints)
        flex, size = np.arange(n), n

    def to_y(z: np.ndarray) -> np.ndarray:  # y = Z z (per block δ = T z)
        y = np.empty_like(z)
        for rows, _, T, *_ in blocks:
            y[rows] = z[rows] if T is None else T @ z[rows]
        return y

    def to_z(f: np.ndarray) -> np.ndarray:  # Zᵀ f
        out = np.empty_like(f)
        for rows, _, T, *_ in blocks:
            out[rows] = f[rows] if T is None else T.T @ f[rows]
        return out

    def solve(x: np.ndarray, transpose: bool) -> np.ndarray:  # R⁻¹ x or R⁻ᵀ x, block by block
        out = np.empty_like(x)
        for rows, _, _, R, bandwidth in blocks:
            out[rows] = scipy.linalg.solve_banded(
                (bandwidth, 0) if transpose else (0, bandwidth),
                _transposed_band(R, bandwidth) if transpose else R,
                x[rows],
            )
        return out

    def mass_y(y: np.ndarray) -> np.ndarray:  # M_y y = BD y + L C_y Lᵀ y
        out = L @ (C_y @ (L.T @ y))
        for rows, mass, *_ in blocks:
            out[rows] += mass @ y[rows]
        return out

    V = np.column_stack([solve(to_z(column), True) for column in L.T]) if L.shape[1] else np.zeros((size, 0))
    Q, R_v = np.linalg.qr(V)
    small = R_v @ S @ R_v.T
    values, E = np.linalg.eigh(0.5 * (small + small.T))
    if np.any(1.0 + values <= 0.0):
        raise NotStable("the stiffness is not positive definite at this configuration")
    basis = Q @ E
    scale = 1.0 / np.sqrt(1.0 + values) - 1.0

    def inverse_root(x: np.ndarray) -> np.ndarray:  # B^{-1/2} x
        return x + basis @ (scale * (basis.T @ x))

    def operator(x: np.ndarray) -> np.ndarray:
        x = inverse_root(np.ravel(x))
        return inverse_root(solve(to_z(mass_y(to_y(solve(x, False)))), True))

    k = min(count, size)
    if size <= DENSE_OPERATOR or k >= size - 1:
        H = np.column_stack([operator(e) for e in np.eye(size)])
        mu, w = scipy.linalg.eigh(0.5 * (H + H.T))
        mu, w = mu[::-1][:k], w[:, ::-1][:, :k]
    else:
        linear = scipy.sparse.linalg.LinearOperator((size, size), matvec=operator, dtype=float)
        mu, w = scipy.sparse.linalg.eigsh(linear, k=k, which="LA", v0=lanczos_start(size))
        order = np.argsort(mu)[::-1]
        mu, w = mu[order], w[:, order]
    if np.any(mu <= 0):
        raise NotStable("an eigenvalue of the inverse pencil is not positive (round-off or instability)")
    # The eigenvalues μ of the inverse pencil carry an absolute error ε·μ_max: relative
    # ε·λ/λ_min on λ = 1/μ, which is 1e-12 and more for the higher of the requested modes
    # of a stiff pencil. Their Rayleigh quotients on the pencil itself, zᵀK_z z / zᵀM_z z
    # with K_z z = Rᵀ B R z formed as |u|² + (Qᵀu)ᵀ S_Q (Qᵀu), u = R z = B^{-1/2} w, are
    # stationary at the eigenvectors: their error is of second order in the vectors'.
    U_w = np.column_stack([inverse_root(column) for column in w.T])
    projected = Q.T @ U_w
    stiffness = np.einsum("ik,ik->k", U_w, U_w) + np.einsum("ik,ij,jk->k", projected, small, projected)
    Y_w = np.column_stack([to_y(solve(column, False)) for column in U_w.T])
    inertia = np.einsum("ik,ik->k", Y_w, np.column_stack([mass_y(y) for y in Y_w.T]))
    mu = inertia / stiffness
    omega = np.sqrt(1.0 / mu)
    if rigid:
        omega = np.concatenate([np.zeros(rigid), omega])[:count]
    if not vectors:
        return omega, None
    Y = np.column_stack([to_y(solve(inverse_root(column), False)) for column in w.T])
    shapes = np.zeros((n, Y.shape[1]))
    shapes[flex] = Y
    # The joint coordinates when y holds the flexible ones only (free joints under gravity: y = q).
    if size < n and joints == "locked":
        shapes[:n_joints] = -model.input_matrix(q)[flex].T @ Y
    elif size < n:  # free, without gravity: q_r = −M_rr⁻¹ M_rf q_f
        M_rr = W[:n_joints] @ C @ W[:n_joints].T
        shapes[:n_joints] = -np.linalg.solve(M_rr, W[:n_joints] @ C @ (W[flex].T @ Y))
    masses = np.einsum("ik,ik->k", Y, np.column_stack([mass_y(y) for y in Y.T]))
    shapes /= np.sqrt(masses)
    biggest = np.argmax(np.abs(shapes), axis=0)
    shapes *= np.sign(shapes[biggest, np.arange(shapes.shape[1])])
    if rigid:
        rigid_shapes = np.zeros((n, rigid))  # the rigid-body modes: joint motion, zero flexible part
        rigid_shapes[:n_joints] = np.eye(n_joints)
        shapes = np.hstack([rigid_shapes, shapes])[:, :count]
    return omega, shapes


def _transposed_band(R: np.ndarray, bandwidth: int) -> np.ndarray:
    """The lower banded form of Rᵀ (``solve_banded`` layout) from R's upper banded form."""
    n = R.shape[1]
    lower = np.zeros((bandwidth + 1, n))
    for k in range(bandwidth + 1):
        lower[k, : n - k] = R[bandwidth - k, k:]
    return lower


__all__ = [
    "DENSE_OPERATOR",
    "ChainStructure",
    "NotStable",
    "banded_cholesky",
    "fixed_vectors",
    "interface_vectors",
    "lanczos_start",
    "lowest_frequencies",
]
