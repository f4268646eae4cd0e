"""Shapes from the link's own finite-element model: the "fe-modes" family.

Component mode synthesis (Hurty 1965; Craig & Bampton 1968) takes each component's own
vibration modes as its Ritz basis. Here the component is one flexible link, clamped at its
joint, with its distributed mass, its lumped masses and rotary inertias along the span and
the load the rest of the chain puts at its tip (mass M and rotary inertia J, as the
clamped-mass family takes it: :class:`shapes.base.TipLoad`). Its cubic-Hermite
Euler–Bernoulli model (:mod:`core.numerics.hermite`) on η = s/L ∈ [0, 1], with unit EI and
ρA, is solved for its lowest eigenvectors,

    K x = λ M x,   λ = β⁴,   ω = β² √(EI / (ρA L⁴)),

and the piecewise-cubic Hermite interpolants of those eigenvectors are the link's shapes.
The stiffness integrals are then diag(β⁴) exactly (for the element model), and the shapes
are orthonormal in the inner product of :mod:`shapes.base` extended by the lumped masses:

    ⟨φ_i, φ_j⟩ = ∫₀¹ φ_i φ_j dη + Σ_p (μ_p φ_i(η_p) φ_j(η_p) + j_p φ_i'(η_p) φ_j'(η_p))
                 + μ φ_i(1) φ_j(1) + j φ_i'(1) φ_j'(1) = δ_ij.

Sign convention (as the clamped families): the tip deflection φ_k(1) is positive; a mode
whose tip barely moves (|φ(1)| below 1e-8 of its largest nodal deflection) takes the sign
that makes its largest nodal deflection positive.

Numerics
--------
The mesh has a node at every lumped mass (so the shear jump there sits on an element end)
and about ``elements`` equal elements on [0, 1]. The assembled Hermite stiffness has
entries ~1/h³ whose sums cancel on a smooth mode, so its lowest eigenvalues would lose
~ε N⁴ relative; the eigenproblem is therefore solved in element-deformation coordinates z
(each element's end deflection and rotation relative to the tangent at its start, x = T z
by running sums), in which K is block diagonal without cancellation, K = DᵀD, and the lowest
λ are the largest μ = 1/λ of H = D⁻ᵀ Tᵀ M T D⁻¹ (Lanczos, O(N) per step) — the formulation of
the finite-element backend's single-beam solver, here for a clamped beam only. docs/FE_MODES.md
gives the derivation and the measured mesh dependence.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from core.dynamics.structured import lanczos_start
from core.numerics import validation as check
from core.numerics.hermite import element_matrices, hermite
from core.numerics.quadrature import composite_gauss
from shapes.base import ModalIntegrals, ShapeFamily, TipLoad, check_modes

#: Default number of elements on the link (docs/FE_MODES.md: measured frequency errors
#: against the analytic clamped-mass roots).
DEFAULT_ELEMENTS = 16384
#: Below this many unknowns H is formed densely and solved with ``eigh``.
DENSE_LIMIT = 200
#: Gauss points per element of the modal integrals: exact to degree 9 (products of two cubics
#: times η, slope products with a weight of degree ≤ 5).
POINTS_PER_ELEMENT = 5
#: Fewest modes solved for at once (more are solved when more are asked for).
MINIMUM_SOLVED = 8


def _lumped_items(lumped: Any) -> tuple[tuple[float, float, float], ...]:
    """Lumped masses as ((η_p, μ_p, j_p), ...), checked: 0 ≤ η_p ≤ 1, μ_p, j_p ≥ 0."""
    items = check.sequence_items(lumped)
    if items is None:
        raise ValueError(
            f"lumped must be a sequence of (position, mass_ratio, inertia_ratio), got {lumped!r}"
        )
    out = []
    for k, item in enumerate(items, start=1):
        where = f"lumped[{k}]"
        entry = check.sequence_items(item)
        if entry is None or len(entry) not in (2, 3):
            raise ValueError(f"{where} must be (position, mass_ratio[, inertia_ratio]), got {item!r}")
        position = check.nonnegative(entry[0], "", f"{where} position")
        if position > 1.0:
            raise ValueError(
                f"{where} position must be in [0, 1] (a fraction of the length), got {position!r}"
            )
        mass = check.nonnegative(entry[1], "", f"{where} mass_ratio")
        inertia = check.nonnegative(entry[2], "", f"{where} inertia_ratio") if len(entry) == 3 else 0.0
        out.append((float(position), float(mass), float(inertia)))
    return tuple(out)


def mesh(elements: int, positions: tuple[float, ...]) -> np.ndarray:
    """Nodes on [0, 1] with a node at every position: each interval between 0, the positions
    and 1 gets ⌈elements · its length⌉ equal elements (at least one)."""
    breaks = np.unique(np.concatenate([[0.0, 1.0], np.asarray(positions, dtype=float)]))
    pieces = [
        np.linspace(a, b, max(1, int(np.ceil(elements * (b - a) - 1e-9))) + 1)[:-1]
        for a, b in itertools.pairwise(breaks)
    ]
    return np.concatenate([*pieces, [1.0]])


class _Clamped:
    """Element-deformation coordinates of a clamped Hermite mesh: x = T z, z = (a_e, b_e),
    nodal x = (w₀, θ₀, w₁, θ₁, …) with w₀ = θ₀ = 0; θ_{k+1} = θ_k + b_k and
    w_{k+1} = w_k + h_k θ_k + a_k (running sums, no cancellation)."""

    def __init__(self, nodes: np.ndarray) -> None:
        self.h = np.diff(nodes)

    def apply(self, z: np.ndarray) -> np.ndarray:
        a, b = z[0::2], z[1::2]
        zero = np.zeros((1, *z.shape[1:]))
        theta = np.concatenate([zero, np.cumsum(b, axis=0)])
        h = self.h.reshape(-1, *(1,) * (z.ndim - 1))
        w = np.concatenate([zero, np.cumsum(h * theta[:-1] + a, axis=0)])
        x = np.empty((2 * theta.shape[0], *z.shape[1:]))
        x[0::2], x[1::2] = w, theta
        return x

    def adjoint(self, f: np.ndarray) -> np.ndarray:
        f_w, f_theta = f[0::2], f[1::2]
        h = self.h.reshape(-1, *(1,) * (f.ndim - 1))
        tail_w = np.cumsum(f_w[::-1], axis=0)[::-1]  # Σ_{i ≥ k} f_w[i]
        G = f_theta.copy()
        G[:-1] += h * tail_w[1:]
        tail_G = np.cumsum(G[::-1], axis=0)[::-1]
        z = np.empty((2 * self.h.size, *f.shape[1:]))
        z[0::2], z[1::2] = tail_w[1:], tail_G[1:]
        return z


def _element_blocks(h: np.ndarray) -> np.ndarray:
    """Strain-energy blocks in z of every element (unit EI): 1/h³ [[12, −6h], [−6h, 4h²]]."""
    return np.stack([np.stack([12 / h**3, -6 / h**2], -1), np.stack([-6 / h**2, 4 / h], -1)], 1)


def _mass_matrix(nodes: np.ndarray, lumped: tuple, tip: tuple[float, float, float]):
    """Assembled unit-ρA Hermite mass plus the point masses and inertias (at nodes), sparse."""
    import scipy.sparse  # here: validating a config imports the families, not SciPy's algebra

    size = 2 * nodes.size
    local = element_matrices(np.diff(nodes))["mass"]
    index = 2 * np.arange(nodes.size - 1)[:, None] + np.arange(4)
    rows, cols = np.repeat(index, 4, axis=1).ravel(), np.tile(index, (1, 4)).ravel()
    diagonal = np.zeros(size)
    for position, mass, inertia in (*lumped, (1.0, *tip[:2])):
        node = int(np.argmin(np.abs(nodes - position)))
        diagonal[2 * node] += mass
        diagonal[2 * node + 1] += inertia
    beam = scipy.sparse.coo_matrix((local.ravel(), (rows, cols)), (size, size)).tocsr()
    # The tip body's static moment couples the tip deflection and slope: ½ S (ẇθ̇ + θ̇ẇ).
    coupling = scipy.sparse.coo_matrix(
        ([tip[2], tip[2]], ([size - 2, size - 1], [size - 1, size - 2])), (size, size)
    )
    return (beam + scipy.sparse.diags(diagonal) + coupling).tocsr()


@lru_cache(maxsize=32)
def solve(elements: int, lumped: tuple, tip: tuple[float, float, float], count: int):
    """The lowest ``count`` eigenpairs of the clamped element model: (β, nodes, nodal x
    (count, 2N) normalized and signed, deformations z (count, 2E)); read-only, cached."""
    import scipy.linalg
    import scipy.sparse.linalg

    nodes = mesh(elements, tuple(p for p, _, _ in lumped))
    coordinates = _Clamped(nodes)
    mass = _mass_matrix(nodes, lumped, tip)
    blocks = _element_blocks(coordinates.h)
    upper = np.linalg.cholesky(blocks).transpose(0, 2, 1)  # K_e = Uᵀ U
    unknowns = 2 * coordinates.h.size
    if count > unknowns:
        raise ValueError(
            f"fe-modes: {count} modes need more than the {unknowns} unknowns of {elements} elements"
        )

    def solve_upper(y):  # D⁻¹ y, y of shape (2E, k)
        y = y.reshape(-1, 2, y.shape[-1])
        second = y[:, 1] / upper[:, 1, 1, None]
        first = (y[:, 0] - upper[:, 0, 1, None] * second) / upper[:, 0, 0, None]
        return np.stack([first, second], 1).reshape(unknowns, -1)

    def solve_upper_transposed(y):  # D⁻ᵀ y
        y = y.reshape(-1, 2, y.shape[-1])
        first = y[:, 0] / upper[:, 0, 0, None]
        second = (y[:, 1] - upper[:, 0, 1, None] * first) / upper[:, 1, 1, None]
        return np.stack([first, second], 1).reshape(unknowns, -1)

    def matvec(y):
        return solve_upper_transposed(coordinates.adjoint(mass @ coordinates.apply(solve_upper(y))))

    if unknowns <= DENSE_LIMIT or count >= unknowns - 1:  # (Lanczos needs count < unknowns)
        H = matvec(np.eye(unknowns))
        _, vectors = scipy.linalg.eigh(0.5 * (H + H.T), subset_by_index=(unknowns - count, unknowns - 1))
    else:
        operator = scipy.sparse.linalg.LinearOperator(
            (unknowns, unknowns),
            matvec=lambda y: matvec(np.reshape(y, (-1, 1)))[:, 0],
            matmat=matvec,
            dtype=float,
        )
        _, vectors = scipy.sparse.linalg.eigsh(operator, k=count, which="LA", v0=lanczos_start(unknowns))
    z = solve_upper(vectors)[:, ::-1]  # (2E, count), lowest λ (largest μ) first
    # M-orthonormalize in that order (Cholesky of the Gram matrix: mode k is corrected by the
    # lower modes only, which Lanczos resolves best; its own vector only to ε·μ₁/μ_k), then
    # λ = zᵀKz from the element blocks (no cancellation), a Rayleigh quotient.
    x = coordinates.apply(z)
    gram = _symmetric(x.T @ (mass @ x))
    correction = scipy.linalg.solve_triangular(np.linalg.cholesky(gram), np.eye(count), lower=True).T
    z, x = z @ correction, x @ correction
    pairs = z.reshape(-1, 2, count)
    lam = np.einsum("eik,eij,ejk->k", pairs, blocks, pairs)
    tip_w, w = x[-2], x[0::2]
    largest = w[np.argmax(np.abs(w), axis=0), np.arange(count)]
    sign = np.where(np.abs(tip_w) > 1e-8 * np.abs(largest), np.sign(tip_w), np.sign(largest))
    z, x = z * sign, x * sign
    result = (lam**0.25, nodes, np.ascontiguousarray(x.T), np.ascontiguousarray(z.T))
    for array in result:
        array.setflags(write=False)
    return result


class FeModes(ShapeFamily):
    """Each link's own modes: the lowest eigenvectors of its clamped Hermite element model,
    with its span masses and the load beyond its tip (see the module docstring).

    Parameters
    ----------
    mass_ratio, inertia_ratio : float
        μ = M/(ρA L) and j = J/(ρA L³) of the tip load (≥ 0), as for clamped-mass.
    lumped : sequence of (position, mass_ratio, inertia_ratio)
        Point masses along the span: η_p = s_p/L ∈ [0, 1], μ_p = m_p/(ρA L) and
        j_p = J_p/(ρA L³) (≥ 0; the inertia may be left out).
    elements : int
        About how many equal elements span the link (≥ 4; a node is added at every lumped
        mass). The default, :data:`DEFAULT_ELEMENTS`, is measured in docs/FE_MODES.md.

    On an arm the model hands it the link's tip load and lumped masses
    (:meth:`link_parameters`); given parameters override those. The shapes do not depend on
    EI (a uniform link), so both bending planes share them, as for the other families.
    Translating links cannot use it (the shapes are not built for a changing free length).
    """

    name = "fe-modes"
    frame = "clamped"
    needs_tip_load = True
    translating: ClassVar[bool] = False

    def __init__(
        self,
        mass_ratio: float = 0.0,
        inertia_ratio: float = 0.0,
        moment_ratio: float = 0.0,
        lumped: Any = (),
        elements: int = DEFAULT_ELEMENTS,
    ) -> None:
        super().__init__()
        self._mu = check.nonnegative(mass_ratio, "", "mass_ratio")
        self._j = check.nonnegative(inertia_ratio, "", "inertia_ratio")
        self._s = check.finite(moment_ratio, "", "moment_ratio")
        if self._s**2 > self._mu * self._j * (1 + 1e-12):
            raise ValueError(
                f"moment_ratio must satisfy moment_ratio² <= mass_ratio·inertia_ratio (a rigid tip body: "
                f"S² <= M·J), got moment_ratio={self._s!r} with mass_ratio={self._mu!r}, "
                f"inertia_ratio={self._j!r}"
            )
        self._lumped = _lumped_items(lumped)
        self._elements = check.integer(elements, "", "elements", minimum=4)

    @classmethod
    def link_parameters(cls, parameters: dict[str, Any], load: TipLoad | None) -> dict[str, Any]:
        """The link's tip load and lumped masses (``load``), overridden by any given parameter."""
        if load is None:
            return parameters
        derived = {
            "mass_ratio": load.mass_ratio,
            "inertia_ratio": load.inertia_ratio,
            "moment_ratio": load.moment_ratio,
            "lumped": load.lumped_ratios,
        }
        return {**derived, **parameters}

    def follower(self, load: TipLoad | None, modes: int, tracker: str, lengths: tuple[float, float]) -> Any:
        raise ValueError(f"shape family {self.name!r} cannot be used on a translating link")

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "mass_ratio": self._mu,
            "inertia_ratio": self._j,
            "moment_ratio": self._s,
            "lumped": self._lumped,
            "elements": self._elements,
        }

    @property
    def mass_ratio(self) -> float:
        return self._mu

    @property
    def inertia_ratio(self) -> float:
        return self._j

    @property
    def nodes(self) -> np.ndarray:
        """The mesh on η ∈ [0, 1]."""
        return mesh(self._elements, tuple(p for p, _, _ in self._lumped))

    # -- hooks ------------------------------------------------------------
    def _solution(self, n: int):
        # Solved in blocks of 8, 16, 32, ... modes, so that models of 1 … 8 modes share one
        # (cached) solve, and the first n modes do not depend on how many were asked for.
        count = max(MINIMUM_SOLVED, 1 << (int(n) - 1).bit_length())
        count = max(min(count, 2 * (self.nodes.size - 1)), n)
        return solve(self._elements, self._lumped, (self._mu, self._j, self._s), count)

    def _roots(self, n: int) -> np.ndarray:
        return self._solution(n)[0][:n]

    def _coefficients_for(self, betas: np.ndarray) -> Any:
        _, nodes, x, z = self._solution(betas.size)
        return nodes, x[: betas.size], z[: betas.size]

    def _slice_coefficients(self, coefficients: Any, n: int) -> Any:
        nodes, x, z = coefficients
        return nodes, x[:n], z[:n]

    def _evaluate(self, eta: np.ndarray, betas: np.ndarray, coefficients: Any, derivative: int) -> np.ndarray:
        if derivative > 3:
            raise ValueError(
                f"fe-modes shapes are piecewise cubic: derivative must be 0, 1, 2 or 3, got {derivative}"
            )
        nodes, x, _ = coefficients
        element = np.clip(np.searchsorted(nodes, eta, side="right") - 1, 0, nodes.size - 2)
        h = nodes[element + 1] - nodes[element]
        xi = np.clip((eta - nodes[element]) / h, 0.0, 1.0)
        values = hermite(xi, h, derivative)  # (4, m)
        if derivative >= 2:
            # From the element's own deformation (a_e, b_e): relative to the tangent at its start
            # the element deflects a N₃ + b N₄, whose curvature carries no cancellation (the
            # nodal form sums terms ~w/h² to w'', losing ~ε N² relative on a fine mesh).
            _, _, z = coefficients
            return z[:, 2 * element] * values[2] + z[:, 2 * element + 1] * values[3]
        dofs = 2 * element + np.arange(4)[:, None]  # (4, m)
        return np.einsum("kjm,jm->km", x[:, dofs], values)

    def _boundary_residuals(self, betas: np.ndarray, coefficients: Any) -> np.ndarray:
        # As the clamped families; the tip conditions hold only as the element model's
        # natural conditions (converging with the mesh), the root ones exactly.
        ends = np.array([0.0, 1.0])
        d = [self._evaluate(ends, betas, coefficients, m) for m in range(4)]
        # Tip: φ''(1) = β⁴ (j φ'(1) + s φ(1)) and φ'''(1) = −β⁴ (μ φ(1) + s φ'(1)).
        b, mu, jr, sr = betas, self._mu, self._j, abs(self._s)
        value, slope = d[0][:, 1], d[1][:, 1]
        moment = d[2][:, 1] - b**4 * (jr * slope + self._s * value)
        shear = d[3][:, 1] + b**4 * (mu * value + self._s * slope)
        return np.column_stack(
            [
                np.abs(d[0][:, 0]),
                np.abs(d[1][:, 0]) / b,
                np.abs(moment) / (b**2 + (jr + sr / b) * b**5),
                np.abs(shear) / (b**3 + (mu + sr * b) * b**4),
            ]
        )

    # -- integrals exact for the element polynomials ------------------------
    def _element_rule(self) -> tuple[np.ndarray, np.ndarray]:
        return composite_gauss(self.nodes, POINTS_PER_ELEMENT)

    def integrals(self, n: int) -> ModalIntegrals:
        """Modal integrals of the first ``n`` modes (cached), by Gauss rules on every element
        (exact for the piecewise cubics); ∫φ''φ''ᵀ from the element deformations (no
        cancellation)."""
        n = check_modes(n)
        if n not in self._integrals:
            betas, (nodes, x, z) = self._ensure(n)
            points, weights = self._element_rule()
            phi = self.evaluate(points, n, 0)
            slope = self.evaluate(points, n, 1)
            pairs = z.reshape(n, -1, 2)
            stiffness = np.einsum("kei,eij,lej->kl", pairs, _element_blocks(np.diff(nodes)), pairs)
            result = ModalIntegrals(
                betas=betas.copy(),
                mass=_symmetric((phi * weights) @ phi.T),
                stiffness=_symmetric(stiffness),
                slope_products=_symmetric((slope * weights) @ slope.T),
                mean=phi @ weights,
                first_moment=phi @ (weights * points),
                tip_value=x[:, -2].copy(),
                tip_slope=x[:, -1].copy(),
                root_slope=x[:, 1].copy(),
            )
            for value in vars(result).values():
                value.setflags(write=False)
            self._integrals[n] = result
        return self._integrals[n]

    def weighted_slope_products(self, n: int, weight) -> np.ndarray:
        """∫₀¹ w(η) φ_i' φ_j' dη by the element Gauss rule (exact for w of degree ≤ 5)."""
        n = check_modes(n)
        points, weights = self._element_rule()
        slope = self.evaluate(points, n, 1)
        w = np.broadcast_to(np.asarray(weight(points), dtype=float), points.shape)
        return _symmetric((slope * (weights * w)) @ slope.T)

    def inner_product_matrix(self, n: int) -> np.ndarray:
        """⟨φ_i, φ_j⟩ with the tip and the lumped-mass terms; the identity by construction."""
        out = np.array(super().inner_product_matrix(n))
        m = self.integrals(n)
        out += self._s * (np.outer(m.tip_value, m.tip_slope) + np.outer(m.tip_slope, m.tip_value))
        for position, mass, inertia in self._lumped:
            values = self.evaluate(position, n, 0)[:, 0]
            slopes = self.evaluate(position, n, 1)[:, 0]
            out += mass * np.outer(values, values) + inertia * np.outer(slopes, slopes)
        return out


def _symmetric(matrix: np.ndarray) -> np.ndarray:
    return 0.5 * (matrix + matrix.T)
