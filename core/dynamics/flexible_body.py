"""Inertia of one flexible link in the floating frame formulation.

A point of the beam (and each lumped mass) at material coordinate s sits at
ρ(s) = s e_x + Φ(s) δ in the beam frame, where the rows of Φ(s) (3 × m) are
0, φ(s)ᵀE_y and φ(s)ᵀE_z (E_y, E_z place the mode amplitudes of the two bending
planes into the link's coordinates δ). With the beam frame's velocity v and
angular velocity Ω (both in beam-frame axes), the kinetic energy is exactly

    T = ½ νᵀ M_b(δ) ν,   ν = (v, Ω, δ̇),

    M_b = [[ m I        −S̃₁(δ)     A      ],
           [ S̃₁(δ)      I_Ω(δ)     M_Ωδ(δ)],
           [ Aᵀ         M_Ωδᵀ      M_δδ   ]]

with the first moment S₁ = ∫ρ dm, the inertia I_Ω = ∫(ρᵀρ 1 − ρρᵀ) dm (quadratic
in δ: the second-order terms that stiffen M_rr), M_Ωδ = ∫ρ̃ Φ dm and
M_δδ = ∫ΦᵀΦ dm. Every integral follows from the basis data (∫φ, ∫sφ, ∫φφᵀ) and
the shape values at the lumped masses, so it is exact for both backends.

Lumped masses also carry rotary inertia J about the bending axes (tensor
diag(0, J, J) in the beam frame), turning with the cross-section by the small
rotation Ψ(s)δ = (0, −w_z'(s), w_y'(s)); that first-order rotation is what the
model keeps (the rotation of the inertia tensor itself is of higher order).

Geometric stiffening (``stiffening=True``, docs/MODEL.md, Dynamics): the beam keeps its length, so a
point moves back along x by the axial foreshortening u(s) = −½ Σ_a δ_aᵀ H(s) δ_a,
H(s) = ∫₀ˢ φ'φ'ᵀ dσ (a over the bending planes), ρ(s) = (s + u(s)) e_x + Φ(s)δ. Kept to
second order in (δ, δ̇) jointly (u·Φδ, u², u̇Φδ̇ are of third and fourth order), T stays
a quadratic form in ν and only three blocks change:

    S₁,x  = ∫x dm − ½ Σ_a δ_aᵀ P₁ δ_a,     P₁ = ∫₀ᴸ m_out(σ) φ'φ'ᵀ dσ = ∫ H(s) dm,
    Q_xx  = ∫x² dm − Σ_a δ_aᵀ P₂ δ_a,      P₂ = ∫₀ᴸ (∫_σᴸ s dm) φ'φ'ᵀ dσ = ∫ s H(s) dm,
    A(δ)  = ∫Φ dm with the axial row −(P₁ δ_a)ᵀ in the columns of plane a (∫u̇ dm),

with m_out(σ) the mass (beam and lumped masses) outboard of σ; M_Ωδ and M_δδ are
unchanged (ρ × u̇ e_x and u e_x × Φδ̇ are of third order). Gravity acts through S₁,x.

Validity: the truncation is a small-deflection model. The truncated M stops being
positive definite at large deflections (a unit cantilever's chain M at a tip deflection
of about 0.5 L; a free body's M_b shows a −4e-6 eigenvalue already at 0.1 L), where
keeping ½∫u̇² dm (quartic in δ) would be needed.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from core.arm import Link
from core.dynamics.basis import BeamBasis, dense
from core.numerics.rotations import skew


def place_block(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, m: int) -> np.ndarray:
    """X (…, n, n) in rows ``rows`` and columns ``cols`` of an (…, m, m) zero matrix."""
    out = np.zeros((*X.shape[:-2], m, m), dtype=X.dtype)
    if rows.size and cols.size:
        out[..., rows[:, None], cols] = X
    return out


class _Planes:
    """The bending planes of a body's m = n · planes coordinates, by index (no dense selectors)."""

    basis: object
    n_coordinates: int
    plane_columns: list[np.ndarray]

    def _set_planes(self, n: int, planes: int) -> None:
        #: The link coordinates of each bending plane (in-plane, out-of-plane; the second
        #: empty for one plane): δ_a = δ[plane_columns[a]] = E_a δ.
        self.plane_columns = [np.arange(n), np.arange(n, 2 * n) if planes == 2 else np.zeros(0, dtype=int)]

    def plane_block(self, X, plane: int) -> np.ndarray:
        """E_aᵀ X E_a: an n × n block X (…, n, n) placed in the rows and columns of ``plane``
        (zeros for an absent plane), shape (…, m, m); by placement, no dense selectors."""
        columns = self.plane_columns[plane]
        return place_block(X, columns, columns, self.n_coordinates)

    def to_plane(self, vector: np.ndarray, plane: int) -> np.ndarray:
        """vᵀ E_a: a basis-coefficient vector (n,) placed in the coordinates of ``plane``
        (0 in-plane, 1 out-of-plane; zeros for an absent plane), shape (m,)."""
        out = np.zeros(self.n_coordinates, dtype=np.result_type(vector, float))
        out[self.plane_columns[plane]] = vector if self.plane_columns[plane].size else 0.0
        return out

    def plane(self, delta: np.ndarray, plane: int) -> np.ndarray:
        """E_a δ: the basis coefficients of ``plane`` in δ (…, m) → (…, n) (zeros for an absent plane)."""
        columns = self.plane_columns[plane]
        if columns.size:
            return delta[..., columns]
        return np.zeros((*np.shape(delta)[:-1], self.basis.n), dtype=np.result_type(delta, float))


class FlexibleBody(_Planes):
    """Precomputed, δ-independent inertia data of one flexible link.

    Parameters
    ----------
    link : Link
        A flexible link.
    basis : BeamBasis
        Its basis (the same functions in both bending planes), of any representation of
        the :class:`~core.dynamics.basis.BeamBasis` contract.
    planes : int
        1 (in-plane bending only) or 2 (also out-of-plane).
    stiffening : bool
        Keep the axial foreshortening (geometric stiffening; see the module docstring).

    The thin data (``A``, ``B``, the rotary coupling, ``plane_columns``) is built at once,
    O(m) for a structured basis; the m × m blocks (``N``, ``M_δδ``, ``rotary_δδ``, the
    plane selectors ``E``) are dense and computed on first use (cached): the dense dynamics
    (M(q), the compiled chain, forward dynamics) need them, O(m²) memory and more for a
    fine element mesh; the structured eigen-solve (:mod:`core.dynamics.structured`) does not.
    """

    def __init__(self, link: Link, basis: BeamBasis, planes: int, stiffening: bool = False) -> None:
        n = basis.n
        m = n * planes
        self.n_coordinates = m
        self.stiffening = bool(stiffening)
        self.planes = planes
        self.basis = basis
        self._set_planes(n, planes)
        rho = link.mass_per_length
        L = link.length
        lumped = link.lumped_masses
        self._rho = rho
        self._positions = positions = np.array([lm.position for lm in lumped], dtype=float)
        self._masses = masses = np.array([lm.mass for lm in lumped], dtype=float)
        self._inertias = inertias = np.array([lm.inertia for lm in lumped], dtype=float)
        if lumped:
            values, slopes = basis.evaluate(positions)  # (n, k)
        else:
            values = slopes = np.zeros((n, 0))
        self._values = values

        self.mass = rho * L + masses.sum()
        self.first_x = rho * L**2 / 2 + masses @ positions
        self.second_x = rho * L**3 / 3 + masses @ positions**2
        mode_first = rho * basis.first + values @ masses  # ∫φ dm, (n,)
        mode_moment = rho * basis.moment + values @ (masses * positions)  # ∫sφ dm
        # A = ∫Φ dm and B = ∫sΦ dm, shape (3, m); row 0 (axial) is zero.
        self.A = np.vstack([np.zeros(m), self.to_plane(mode_first, 0), self.to_plane(mode_first, 1)])
        self.B = np.vstack([np.zeros(m), self.to_plane(mode_moment, 0), self.to_plane(mode_moment, 1)])
        # Rotary inertia of the lumped masses.
        self.rotary_ΩΩ = np.diag([0.0, inertias.sum(), inertias.sum()])
        self._psi_rows = [  # Ψ_k = (0, −w_z', w_y') rows for every lumped mass
            np.vstack([np.zeros(m), -self.to_plane(slopes[:, k], 1), self.to_plane(slopes[:, k], 0)])
            for k in range(len(lumped))
        ]
        self.rotary_Ωδ = sum(
            (np.diag([0.0, J, J]) @ psi for J, psi in zip(inertias, self._psi_rows, strict=True)),
            np.zeros((3, m)),
        )
        self._skew_x_B = skew(np.array([1.0, 0.0, 0.0])) @ self.B
        self._length = L

    # -- geometric stiffening ---------------------------------------------------------
    @cached_property
    def foreshortening(self) -> dict[str, np.ndarray]:
        """The dense m × m blocks of the axial foreshortening (every plane): ``P1``, ``P2``
        (inertia, see the module docstring) and ``H`` = H(L) (the tip moves by
        −½ δᵀ H δ along x). Zero blocks without stiffening."""
        from core.dynamics.basis import slope_products

        n = self.basis.n
        if not self.stiffening:
            zero = np.zeros((self.n_coordinates, self.n_coordinates))
            return {"P1": zero, "P2": zero, "H": zero}
        L, rho = self._length, self._rho
        P1 = rho * slope_products(self.basis, (L, -1.0))
        P2 = rho * slope_products(self.basis, (0.5 * L**2, 0.0, -0.5))
        for s_k, m_k in zip(self._positions, self._masses, strict=True):
            H_k = slope_products(self.basis, (1.0,), s_k) if s_k > 0 else np.zeros((n, n))
            P1 = P1 + m_k * H_k
            P2 = P2 + m_k * s_k * H_k
        H = slope_products(self.basis)
        return {
            name: sum(self.plane_block(0.5 * (X + X.T), a) for a in range(self.planes))
            for name, X in (("P1", P1), ("P2", P2), ("H", H))
        }

    @cached_property
    def foreshortening_points(self):
        """The mass measure of the Gram terms (:class:`~core.dynamics.foreshortening.ForeshorteningPoints`)."""
        from core.dynamics.foreshortening import foreshortening_points

        return foreshortening_points(self.basis, self._rho, self._positions, self._masses)

    def axial_first(self, delta: np.ndarray) -> np.ndarray:
        """−P₁δ (…, m): the axial row of A(δ) = ∂S₁/∂δ (zero without stiffening)."""
        if not self.stiffening:
            return np.zeros(np.shape(delta), dtype=np.result_type(delta, float))
        return -(delta @ self.foreshortening["P1"].T)  # BLAS: numpy's einsum loops in C, ~10x slower

    @cached_property
    def _mode_mass(self) -> np.ndarray:
        """∫φφᵀ dm (n, n), dense."""
        values = self._values
        return self._rho * dense(self.basis.mass) + (values * self._masses) @ values.T

    @cached_property
    def N(self) -> list[list[np.ndarray]]:
        """N[a][b] = ∫ Φ_aᵀ Φ_b dm for the bending rows a, b ∈ {y, z}, dense (m, m) each."""
        cols, m = self.plane_columns, self.n_coordinates
        return [[place_block(self._mode_mass, a, b, m) for b in cols] for a in cols]

    @cached_property
    def rotary_δδ(self) -> np.ndarray:
        """Σ_k Ψ_kᵀ diag(0, J_k, J_k) Ψ_k (m, m), dense."""
        return sum(
            (
                psi.T @ np.diag([0.0, J, J]) @ psi
                for J, psi in zip(self._inertias, self._psi_rows, strict=True)
            ),
            np.zeros((self.n_coordinates, self.n_coordinates)),
        )

    @cached_property
    def M_δδ(self) -> np.ndarray:
        """∫ΦᵀΦ dm plus the lumped rotary inertia (m, m), dense."""
        return sum(self.N[a][a] for a in range(self.planes)) + self.rotary_δδ

    def quartic_moments(self, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the quartic foreshortening adds to S₁,x (...,) and to the axial row of A (..., m)
        (:func:`~core.dynamics.foreshortening.quartic_moments`); zeros without stiffening."""
        delta = np.asarray(delta)
        if not self.stiffening:
            dtype = np.result_type(delta, float)
            return np.zeros(delta.shape[:-1], dtype=dtype), np.zeros(delta.shape, dtype=dtype)
        from core.dynamics.foreshortening import quartic_moments

        flat = delta.reshape(-1, delta.shape[-1])
        planes = [self.plane(flat, a) for a in range(2)]
        first, row = quartic_moments(
            self.foreshortening_points, planes, self.plane_columns, self.n_coordinates
        )
        return first.reshape(delta.shape[:-1]), row.reshape(delta.shape)

    def first_moment(self, delta: np.ndarray, quartic=None) -> np.ndarray:
        """S₁(δ) = ∫ρ dm in the beam frame [kg m], shape (..., 3) for δ of shape (..., m)
        (``quartic``: :meth:`quartic_moments` of δ, if already at hand)."""
        S1 = np.array([self.first_x, 0.0, 0.0]) + delta @ self.A.T
        if self.stiffening:
            first, _ = self.quartic_moments(delta) if quartic is None else quartic
            axial = 0.5 * np.einsum("...i,...i->...", delta, self.axial_first(delta)) + first
            S1 = S1 + np.multiply.outer(axial, np.array([1.0, 0.0, 0.0]))
        return S1

    def first_moment_jacobian(self, delta: np.ndarray, quartic=None) -> np.ndarray:
        """A(δ) = ∂S₁/∂δ (B, 3, m) for δ (B, m): ∫Φ dm, with stiffening the axial row
        −(P₁δ)ᵀ − Σ_j μ_j h₄_jᵀ (``quartic`` as for :meth:`first_moment`)."""
        A = np.broadcast_to(self.A, (delta.shape[0], *self.A.shape)).astype(np.result_type(delta, float))
        if self.stiffening:
            _, row = self.quartic_moments(delta) if quartic is None else quartic
            A[:, 0, :] = self.axial_first(delta) + row
        return A

    def mass_matrix(self, delta: np.ndarray) -> np.ndarray:
        """M_b(δ) in beam-frame axes, shape (B, 6 + m, 6 + m) for δ of shape (B, m)."""
        dtype = np.result_type(delta, float)
        batch, m = delta.shape[0], self.n_coordinates
        quartic = self.quartic_moments(delta)
        S1 = self.first_moment(delta, quartic)
        axial = np.full(batch, self.second_x, dtype=dtype)
        if self.stiffening:
            axial = axial - _quadratic(delta, self.foreshortening["P2"])
        lateral = [[_quadratic(delta, self.N[a][c]) for c in range(2)] for a in range(2)]
        inertia = _rotational_inertia(axial, delta @ self.B.T, lateral) + self.rotary_ΩΩ
        # ∫ (Φδ) × Φ dm: only the axial component survives (Φ has no axial row).
        coupling = np.broadcast_to(self._skew_x_B + self.rotary_Ωδ, (batch, 3, m)).astype(dtype)
        coupling[:, 0, :] += delta @ self.N[0][1] - delta @ self.N[1][0]
        M = np.zeros((batch, 6 + m, 6 + m), dtype=dtype)
        A = self.first_moment_jacobian(delta, quartic)
        _floating_blocks(M, self.mass, S1, A, inertia, coupling, self.M_δδ)
        if self.stiffening:
            _add_gram_terms(M, self, delta)
        return M

    def gravity_wrench(self, delta: np.ndarray, g_body: np.ndarray) -> np.ndarray:
        """Generalized gravity force conjugate to ν, shape (B, 6 + m), for δ (B, m), g_b (B, 3).

        V = −(m g·p + g_b·S₁(δ)); returns (m g_b, S₁ × g_b, A(δ)ᵀ g_b).
        """
        quartic = self.quartic_moments(delta)
        S1 = self.first_moment(delta, quartic)
        if self.stiffening:
            A_T_g = np.einsum("ba,bai->bi", g_body, self.first_moment_jacobian(delta, quartic))
        else:
            A_T_g = g_body @ self.A
        return np.concatenate([self.mass * g_body, np.cross(S1, g_body), A_T_g], axis=1)


def _quadratic(delta: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """δᵀ A δ per row of δ (B, m), by BLAS (numpy's einsum "bi,ij,bj->b" loops in C, ~10x slower
    on a fine mesh's dense m × m blocks)."""
    return np.sum((delta @ matrix) * delta, axis=-1)


def _add_gram_terms(M: np.ndarray, body: FlexibleBody, delta: np.ndarray) -> None:
    """Add to M_b (B, 6 + m, 6 + m) the foreshortening terms beyond second order that make it
    the Gram form ∫ J_pᵀ J_p dm (:mod:`core.dynamics.foreshortening`)."""
    from core.dynamics.foreshortening import gram_terms

    planes = [body.plane(delta, a) for a in range(2)]
    dQxx, dQxa, dM, W = gram_terms(body.foreshortening_points, planes, body.plane_columns, body.n_coordinates)
    M[:, 4, 4] += dQxx
    M[:, 5, 5] += dQxx
    for a in range(2):
        M[:, 3, 4 + a] -= dQxa[:, a]
        M[:, 4 + a, 3] -= dQxa[:, a]
    M[:, 3:6, 6:] += dM
    M[:, 6:, 3:6] += np.swapaxes(dM, 1, 2)
    M[:, 6:, 6:] += W


def _rotational_inertia(axial: np.ndarray, b: np.ndarray, lateral: list) -> np.ndarray:
    """I_Ω = tr(Q) 1 − Q (B, 3, 3) of the second moments Q = ∫ρρᵀ dm of a beam, from its axial
    entry ∫x² dm (B,), the axial–lateral entries b = ∫ s Φδ dm (B, 3; row 0 unused) and the
    lateral ones ``lateral[a][c]`` = ∫(Φδ)_a(Φδ)_c dm (B,) of the bending rows a, c."""
    Q = np.zeros((axial.shape[0], 3, 3), dtype=np.result_type(axial, b, *lateral[0], *lateral[1]))
    Q[:, 0, 0] = axial
    Q[:, 0, 1:] = b[:, 1:]
    Q[:, 1:, 0] = b[:, 1:]
    for a in range(2):
        for c in range(2):
            Q[:, 1 + a, 1 + c] = lateral[a][c]
    trace = Q[:, 0, 0] + Q[:, 1, 1] + Q[:, 2, 2]
    return trace[:, None, None] * np.eye(3) - Q


def _floating_blocks(M: np.ndarray, mass: float, S1, A, inertia, coupling, M_δδ) -> None:
    """Fill the (v, Ω, δ̇) blocks of a body mass matrix M (B, 6 + m, 6 + m) (a view for a
    translating body, whose l̇ row and column follow): m 1, ∓S̃₁, A = ∂S₁/∂δ, I_Ω, M_Ωδ, M_δδ."""
    M[:, :3, :3] = mass * np.eye(3)
    M[:, :3, 3:6] = -skew(S1)
    M[:, 3:6, :3] = skew(S1)
    M[:, :3, 6:] = A
    M[:, 6:, :3] = np.swapaxes(A, 1, 2)
    M[:, 3:6, 3:6] = inertia
    M[:, 3:6, 6:] = coupling
    M[:, 6:, 3:6] = np.swapaxes(coupling, 1, 2)
    M[:, 6:, 6:] = M_δδ


def _translating_arrays(unit: dict, columns: list, m: int, rho: float, planes: int) -> dict:
    """Body arrays of a translating link from unit η-integrals (names of
    ``LengthFollowing.taylor``); every input may carry leading axes (orders, batch)."""

    def placed(v: np.ndarray, plane: int) -> np.ndarray:  # (..., n) → (..., m): v in ``plane``
        out = np.zeros((*v.shape[:-1], m), dtype=v.dtype)
        out[..., columns[plane]] = v if columns[plane].size else 0.0
        return out

    def rows(v: np.ndarray) -> np.ndarray:  # (..., n) → (..., 3, m); the axial row is zero
        return np.stack([np.zeros((*v.shape[:-1], m)), placed(v, 0), placed(v, 1)], axis=-2)

    N0 = [[rho * place_block(unit["mass"], a, c, m) for c in columns] for a in columns]
    P = [[rho * place_block(unit["rate_cross"], a, c, m) for c in columns] for a in columns]
    return {
        "A0": rho * rows(unit["first"]),
        "B0": rho * rows(unit["moment"]),
        "Al0": rho * rows(unit["rate_first"]),
        "Bl0": rho * rows(unit["rate_second"]),
        "N0": N0,
        "P": P,
        "M_δδ0": sum(N0[a][a] for a in range(planes)),
        "R0": sum(rho * place_block(unit["rate_mass"], a, a, m) for a in columns[:planes]),
        "translation": rows(unit["tip_value"]),
        "rotation": np.stack(
            [
                np.zeros((*unit["tip_slope"].shape[:-1], m)),
                -placed(unit["tip_slope"], 1),
                placed(unit["tip_slope"], 0),
            ],
            axis=-2,
        ),
    }


class _LinearArrays:
    """:func:`_translating_arrays` as one matrix product: the body arrays are a linear map
    (placement and the factor ρ) of the unit η-integrals, so the map is built once, by
    applying the function to every unit component, and evaluated as (…, U) @ (U, O) with the
    arrays returned as read-only views of the product (each output entry is ρ times one input
    entry, so the values are those of the function exactly)."""

    #: The unit integrals the body arrays read.
    KEYS = (
        "mass",
        "first",
        "moment",
        "rate_first",
        "rate_second",
        "rate_cross",
        "rate_mass",
        "tip_value",
        "tip_slope",
    )

    def __init__(self, shapes: dict, columns: list, m: int, rho: float, planes: int) -> None:
        self.shapes = {name: tuple(shapes[name]) for name in self.KEYS}
        sizes = [math.prod(shape) for shape in self.shapes.values()]
        identity = np.eye(sum(sizes))
        unit, start = {}, 0
        for (name, shape), size in zip(self.shapes.items(), sizes, strict=True):
            unit[name] = identity[:, start : start + size].reshape(-1, *shape)
            start += size
        arrays = _translating_arrays(unit, columns, m, rho, planes)
        #: (name, a, c, shape, start, stop) of every output array in the product's columns.
        self.layout, blocks, start = [], [], 0
        for name, value in arrays.items():
            parts = (
                [(a, c, value[a][c]) for a in range(2) for c in range(2)]
                if name in ("N0", "P")
                else [(None, None, value)]
            )
            for a, c, x in parts:
                blocks.append(x.reshape(x.shape[0], -1))
                self.layout.append((name, a, c, x.shape[1:], start, start + blocks[-1].shape[1]))
                start += blocks[-1].shape[1]
        self.matrix = np.concatenate(blocks, axis=1)

    def __call__(self, unit: dict) -> dict:
        lead = np.shape(unit["first"])[:-1]
        flat = np.concatenate([np.reshape(unit[name], (*lead, -1)) for name in self.shapes], axis=-1)
        product = flat @ self.matrix
        product.setflags(write=False)
        out: dict = {"N0": [[None, None], [None, None]], "P": [[None, None], [None, None]]}
        for name, a, c, shape, start, stop in self.layout:
            value = product[..., start:stop].reshape(*lead, *shape)
            if a is None:
                out[name] = value
            else:
                out[name][a][c] = value
        return out


def taylor_sum(terms: np.ndarray, step, derivative: int = 0) -> np.ndarray:
    """Σ_k Δᵏ/k! terms[k + derivative]: a quantity (or its l-derivative) of a length-following
    basis at l₀ + Δ from its l-derivatives ``terms`` at real l₀ (leading axis the order; Δ
    broadcast against terms[0]). Exact for the tiny imaginary Δ of the engine's complex step.
    A real Δ = 0 (every real configuration) returns terms[derivative] itself, broadcast (the
    sum's value, without its products)."""
    if isinstance(step, float | np.floating):
        zero = step == 0.0
    else:
        zero = isinstance(step, np.ndarray) and step.dtype.kind == "f" and not step.any()
    if zero and derivative < len(terms):
        return 0.0 * step + terms[derivative]
    total = 0.0 * step * terms[0]
    for k in range(terms.shape[0] - derivative):
        total = total + step**k / math.factorial(k) * terms[k + derivative]
    return total


#: Orders of the l-derivatives a length-following body evaluates (three: the complex step of
#: the elastic forces, whose l-row holds ∂K/∂l, needs ∂³/∂l³ of the integrals).
TAYLOR_ORDER = 3


class TranslatingBody(_Planes):
    """Inertia of a flexible link that slides through the hub of a prismatic joint.

    The beam frame sits at the hub exit (fixed in the previous link), x along
    the joint axis. The beam of total length L slides along x: its free part
    s ∈ [0, l] (l = the joint variable) bends, w(s) = ψ(s/l) δ; the part inside,
    s ∈ [−(L − l), 0], moves rigidly. Following docs/MODEL.md (Dynamics), a point of the free
    part moves with

        v + Ω × ρ + Φ δ̇ + (e_x + Φ_l δ) l̇,   Φ_l = ∂Φ/∂l|_s = G(η)/l,

    and a point inside with v + Ω × ρ + e_x l̇; the convective term l̇ ∂w/∂s of
    the moving-beam equation is neglected (valid while the extension speed is
    small against the group velocity √(EI/ρA)/l). G holds the velocity shapes
    g = −ηψ'(η) + l ∂ψ/∂l|_η of l̇: for frozen shapes (ψ independent of l) only
    −ηψ'; for length-following shapes (``basis.follow``: clamped–mass roots that
    follow μ(l), j(l)) also the change of the shape itself. So the body velocity is
    ν = (v, Ω, δ̇, l̇) and T = ½ νᵀ M_b(δ, l) ν; the blocks of
    :class:`FlexibleBody` gain the l̇ row

        M_vl = m e_x + A_l δ,          A_l = ∫Φ_l dm = ρ ∫g dη,
        M_Ωl = ∫ ρ × (e_x + Φ_l δ) dm,
        M_δl = ∫Φᵀ Φ_l dm δ = ρ ∫ψ gᵀ dη δ,
        M_ll = m + δᵀ ∫Φ_lᵀ Φ_l dm δ = m + (ρ/l) δᵀ ∫g gᵀ dη δ,

    and every integral is a power of l times an η-integral of the basis (which
    depends on l itself for length-following shapes). Lumped masses on a
    translating link are not modelled (they would slide through the hub); the arm
    validation rejects them.

    Length-following shapes are evaluated at complex l too (the engine's complex
    step): each η-integral I is taken from its Taylor series about the real part,
    I(l₀ + Δ) = Σ_k Δᵏ/k! dᵏI/dlᵏ(l₀), k ≤ :data:`TAYLOR_ORDER` (``follow.taylor``),
    exact for the imaginary steps the engine takes.
    """

    def __init__(self, link: Link, basis, planes: int) -> None:
        n = basis.n
        m = n * planes
        self.n_coordinates = m
        self.planes = planes
        self.basis = basis
        self._set_planes(n, planes)
        self.following = getattr(basis, "follow", None)
        self.rho = link.mass_per_length
        self.L = link.length
        self.mass = self.rho * self.L
        self._frozen = frozen = self._arrays(basis.unit_integrals())
        # The frozen arrays (for length-following shapes: those of the reference length), read
        # by name by the compiled chain's packing.
        self.A0, self.B0, self.Al0, self.Bl0 = frozen["A0"], frozen["B0"], frozen["Al0"], frozen["Bl0"]
        self.N0, self.P, self.R0, self.M_δδ0 = frozen["N0"], frozen["P"], frozen["R0"], frozen["M_δδ0"]
        self._taylor_cache: dict = {}
        self._linear: _LinearArrays | None = None  # the body arrays of the following shapes' integrals

    # -- arrays at the free length ------------------------------------------------------
    def _arrays(self, unit: dict) -> dict:
        """The body arrays of unit η-integrals ``unit`` (any leading axes)."""
        return _translating_arrays(unit, self.plane_columns, self.n_coordinates, self.rho, self.planes)

    def _taylor(self, l0: float) -> dict:
        """Body arrays and their l-derivatives at real l₀, leading axis the order k (the last
        few kept: one right-hand side asks for the same length many times)."""
        state = self.following.beta_state
        key = (float(l0), None if state is None else np.asarray(state).tobytes())
        cached = self._taylor_cache.get(key)
        if cached is None:
            unit = self.following.taylor(float(l0), order=TAYLOR_ORDER)
            if self._linear is None:
                shapes = {name: np.shape(value)[1:] for name, value in unit.items()}
                self._linear = _LinearArrays(
                    shapes, self.plane_columns, self.n_coordinates, self.rho, self.planes
                )
            cached = self._taylor_cache[key] = self._linear(unit)
            if len(self._taylor_cache) > 8:
                self._taylor_cache.pop(next(iter(self._taylor_cache)))
        return cached

    def kernel_taylor(self, l: float) -> dict | None:
        """Orders 0–2 of the body arrays (A0, B0, Al0, Bl0, N0, P, M_δδ0, R0) and of the tip
        map rows (translation, rotation) at real free length l, for :mod:`core.dynamics.compiled`;
        None for frozen shapes."""
        if self.following is None:
            return None
        taylor = self._taylor(l)
        out = {}
        for name, value in taylor.items():
            if name in ("N0", "P"):
                out[name] = [[block[:3] for block in row] for row in value]
            else:
                out[name] = value[:3]
        return out

    def arrays(self, l, derivative: int = 0) -> dict:
        """Body arrays at free lengths l (shape (B,), real or complex), each with a leading
        batch axis (length 1 for frozen shapes, which do not depend on l); ``derivative``
        = 1 gives their first l-derivative."""
        l = np.atleast_1d(np.asarray(l))
        if self.following is None:
            if derivative:
                zero = {k: 0.0 * v[None] for k, v in self._frozen.items() if k not in ("N0", "P")}
                zero["N0"] = [[0.0 * b[None] for b in row] for row in self._frozen["N0"]]
                zero["P"] = [[0.0 * b[None] for b in row] for row in self._frozen["P"]]
                return zero
            out = {k: v[None] for k, v in self._frozen.items() if k not in ("N0", "P")}
            out["N0"] = [[b[None] for b in row] for row in self._frozen["N0"]]
            out["P"] = [[b[None] for b in row] for row in self._frozen["P"]]
            return out
        real = np.real(l)
        steps = l - real  # zero for real l; the complex step otherwise
        keys = np.unique(real)
        series = {float(l0): self._taylor(l0) for l0 in keys}
        index = np.searchsorted(keys, real)

        def combine(pick) -> np.ndarray:
            # Σ_k Δᵏ/k! T_{k + derivative}, row by row of the batch.
            stacked = np.stack([pick(series[float(keys[j])]) for j in index], axis=1)  # (orders, B, ...)
            return taylor_sum(stacked, steps.reshape((-1,) + (1,) * (stacked.ndim - 2)), derivative)

        names = ("A0", "B0", "Al0", "Bl0", "M_δδ0", "R0", "translation", "rotation")
        out = {name: combine(lambda t, name=name: t[name]) for name in names}
        for name in ("N0", "P"):
            out[name] = [
                [combine(lambda t, name=name, a=a, c=c: t[name][a][c]) for c in range(2)] for a in range(2)
            ]
        return out

    def M_δδ(self, l) -> np.ndarray:
        """∫ΦᵀΦ dm at free length l [m]."""
        if self.following is None:
            return l * self.M_δδ0
        return l * self.arrays(np.array([l]))["M_δδ0"][0]

    def first_moment(self, delta: np.ndarray, l, arrays: dict | None = None) -> np.ndarray:
        """S₁(δ, l) = ∫ρ dm over the whole beam (inside part included), shape (..., 3)."""
        l = np.asarray(l)
        A0 = (arrays or self.arrays(l))["A0"]
        axial = self.mass * (l - self.L / 2)  # ρ(l² − (L − l)²)/2 without cancellation
        shape = (*np.broadcast_shapes(np.shape(delta)[:-1], l.shape), 3)
        lateral = (l[..., None] * np.einsum("...ai,...i->...a", A0, delta)).reshape(shape)
        return lateral + axial[..., None] * np.array([1.0, 0.0, 0.0])

    def first_moment_rate(self, delta: np.ndarray, l, arrays: dict | None = None) -> np.ndarray:
        """∂S₁/∂l = (A₀ + l A₀')δ + m e_x, shape (..., 3)."""
        l = np.asarray(l)
        A0 = (arrays or self.arrays(l))["A0"]
        rate = np.einsum("...ai,...i->...a", A0, delta)
        if self.following is not None:
            dA0 = self.arrays(l, derivative=1)["A0"]
            rate = rate + l[..., None] * np.einsum("...ai,...i->...a", dA0, delta)
        shape = (*np.broadcast_shapes(np.shape(delta)[:-1], l.shape), 3)
        return rate.reshape(shape) + self.mass * np.array([1.0, 0.0, 0.0])

    def mass_matrix(self, delta: np.ndarray, l: np.ndarray) -> np.ndarray:
        """M_b(δ, l) in beam-frame axes, shape (B, 7 + m, 7 + m) for δ (B, m) and l (B,)."""
        dtype = np.result_type(delta, l, float)
        batch, m = delta.shape[0], self.n_coordinates
        l = np.asarray(l)
        lc = l[:, None, None]
        X = self.arrays(l)
        A0, B0, N0, P = X["A0"], X["B0"], X["N0"], X["P"]
        S1 = self.first_moment(delta, l, X)
        contract = lambda T: np.einsum("...ai,...i->...a", T, delta)  # noqa: E731
        quadratic = lambda T: np.einsum("...i,...ij,...j->...", delta, T, delta)  # noqa: E731
        axial = np.broadcast_to(self.rho * (l**3 + (self.L - l) ** 3) / 3, (batch,)).astype(dtype)
        lateral = [[l * quadratic(N0[a][c]) for c in range(2)] for a in range(2)]
        inertia = _rotational_inertia(axial, l[:, None] ** 2 * contract(B0), lateral)  # b = ∫ s Φδ dm
        A = np.broadcast_to(lc * A0, (batch, 3, m))
        coupling = np.broadcast_to(lc**2 * (skew(np.array([1.0, 0.0, 0.0])) @ B0), (batch, 3, m)).astype(
            dtype
        )
        coupling[:, 0, :] += l[:, None] * (
            np.einsum("...i,...ij->...j", delta, N0[0][1]) - np.einsum("...i,...ij->...j", delta, N0[1][0])
        )
        # The l̇ column.
        Al_delta = contract(X["Al0"])  # (B, 3)
        Bl_delta = l[:, None] * contract(X["Bl0"])
        A_delta = l[:, None] * contract(A0)
        v_l = np.broadcast_to(Al_delta, (batch, 3)).astype(dtype)
        v_l[:, 0] += self.mass
        w_l = np.zeros((batch, 3), dtype=dtype)
        w_l[:, 0] = quadratic(P[0][1] - P[1][0])
        w_l[:, 1] = -Bl_delta[:, 2] + A_delta[:, 2]
        w_l[:, 2] = Bl_delta[:, 1] - A_delta[:, 1]
        d_l = np.einsum("...ij,...j->...i", sum(P[a][a] for a in range(self.planes)), delta)
        l_l = self.mass + quadratic(X["R0"]) / l
        size = 7 + m
        M = np.zeros((batch, size, size), dtype=dtype)
        _floating_blocks(M[:, :-1, :-1], self.mass, S1, A, inertia, coupling, lc * X["M_δδ0"])
        for rows, column in ((slice(0, 3), v_l), (slice(3, 6), w_l), (slice(6, size - 1), d_l)):
            M[:, rows, -1] = column
            M[:, -1, rows] = column
        M[:, -1, -1] = l_l
        return M

    def gravity_wrench(self, delta: np.ndarray, l: np.ndarray, g_body: np.ndarray) -> np.ndarray:
        """Generalized gravity force conjugate to ν = (v, Ω, δ̇, l̇), shape (B, 7 + m).

        V = −(m g·p + g_b·S₁(δ, l)): (m g_b, S₁ × g_b, Aᵀ g_b, g_b·∂S₁/∂l).
        """
        l = np.asarray(l)
        X = self.arrays(l)
        S1 = self.first_moment(delta, l, X)
        A_T_g = l[:, None] * np.einsum("...a,...ai->...i", g_body, X["A0"])
        rate = np.einsum("bi,bi->b", g_body, self.first_moment_rate(delta, l, X))
        return np.concatenate([self.mass * g_body, np.cross(S1, g_body), A_T_g, rate[:, None]], axis=1)
