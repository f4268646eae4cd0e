"""Natural frequencies of a single beam from a (possibly very fine) element mesh.

Why not simply ``eigsh(K, M, sigma=0)``? The assembled stiffness of N Hermite
elements has entries of size EI/h³ whose sums cancel to O(EI) on a smooth
mode: its lowest eigenvalue is only determined to about ε·cond(K) ≈ ε N⁴
relative — 1e-5 at 1 000 elements and nothing at 10 000, whatever solver is
used afterwards (measured; see tests/test_fem.py).

Well-conditioned formulation (relative coordinates)
---------------------------------------------------
Write the nodal deflections and slopes as accumulated element deformations:
for element e (length h_e), a_e = w_{e+1} − w_e − h_e θ_e and
b_e = θ_{e+1} − θ_e are its end deflection and rotation relative to the
tangent at its start. Strain energy depends on these alone, so

    K = blockdiag(K_e),  K_e = EI/h_e³ [[12, −6h_e], [−6h_e, 4h_e²]]

with no cancellation, while x = T z (nodal values from z = (a, b)) is a
running sum (O(N), and T z, Tᵀ f are accumulated without cancellation). With
K = DᵀD (2×2 Cholesky blocks), the wanted lowest eigenvalues λ are the
largest μ = 1/λ of the symmetric positive operator

    H = D⁻ᵀ Tᵀ M T D⁻¹,

found by Lanczos (``eigsh``, ``which="LA"``): O(N) work per iteration, and
the top of H's spectrum is well separated. Pinned–pinned beams add the root
slope θ₀ as a rigid rotation fixed by w_N = 0 (θ₀ = gᵀz, no strain energy).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

import shapes
from core import validation as check
from core.structured import lanczos_start
from fem.assembly import assemble
from fem.mesh import graded_mesh, uniform_mesh

#: Below this many unknowns H is formed densely and solved with ``eigh``.
DENSE_LIMIT = 64
#: The boundary conditions this solver handles, by shape-family name (the frame each implies is
#: the family's ``frame``).
BOUNDARY_CONDITIONS = ("clamped-free", "clamped-mass", "pinned-pinned")


class _RelativeCoordinates:
    """The map x = T z from element deformations to nodal (w, θ), and its adjoint."""

    def __init__(self, nodes: np.ndarray, pinned: bool) -> None:
        self.h = np.diff(nodes)
        self.length = nodes[-1]
        self.pinned = pinned
        self.elements = self.h.size
        # θ₀ = gᵀ z for pinned beams: −(Σ a_e + Σ_j b_j (L − s_{j+1})) / L.
        self.g_a = -np.ones(self.elements) / self.length
        self.g_b = -(self.length - nodes[1:]) / self.length

    def apply(self, z: np.ndarray) -> np.ndarray:
        """Nodal vector (w₀, θ₀, w₁, θ₁, …) of deformations z = (a₀, b₀, a₁, b₁, …); z of
        shape (2E,) or (2E, k) (k vectors at once, the same arithmetic column by column)."""
        a, b = z[0::2], z[1::2]
        tail = (1,) * (z.ndim - 1)
        theta0 = self.g_a @ a + self.g_b @ b if self.pinned else np.zeros(z.shape[1:])
        zero = np.zeros((1, *z.shape[1:]))
        theta = theta0 + np.concatenate([zero, np.cumsum(b, axis=0)])
        w = np.concatenate([zero, np.cumsum(self.h.reshape(-1, *tail) * theta[:-1] + a, axis=0)])
        x = np.empty((2 * (self.elements + 1), *z.shape[1:]))
        x[0::2], x[1::2] = w, theta
        return x

    def adjoint(self, f: np.ndarray) -> np.ndarray:
        """Tᵀ f for a nodal force vector f, shape (2N,) or (2N, k)."""
        f_w, f_theta = f[0::2], f[1::2]
        tail = (1,) * (f.ndim - 1)
        h = self.h.reshape(-1, *tail)
        # R[k] = Σ_{i ≥ k} f_w[i]; a_e moves nodes e+1..N.
        tail_w = np.cumsum(f_w[::-1], axis=0)[::-1]
        grad_a = tail_w[1:]
        # G_e = ∂/∂θ_e (θ_e moves its own slope and, through h_e, the deflections beyond).
        G = f_theta.copy()
        G[:-1] += h * tail_w[1:]
        tail_G = np.cumsum(G[::-1], axis=0)[::-1]
        grad_b = tail_G[1:]  # b_j moves θ_{j+1..N}
        if self.pinned:
            grad_theta0 = tail_G[0]
            grad_a = grad_a + self.g_a.reshape(-1, *tail) * grad_theta0
            grad_b = grad_b + self.g_b.reshape(-1, *tail) * grad_theta0
        z = np.empty((2 * self.elements, *f.shape[1:]))
        z[0::2], z[1::2] = grad_a, grad_b
        return z

    def operator(self, free: np.ndarray):
        """T restricted to the free nodal DOFs ``free`` (rows), as a
        ``scipy.sparse.linalg.LinearOperator`` (2E columns): matvec, rmatvec and matmat
        are running sums, O(E) per vector, no dense T."""
        n_nodal = 2 * (self.elements + 1)

        def matmat(z: np.ndarray) -> np.ndarray:
            return self.apply(z)[free]

        def rmatmat(f: np.ndarray) -> np.ndarray:
            full = np.zeros((n_nodal, *f.shape[1:]), dtype=f.dtype)
            full[free] = f
            return self.adjoint(full)

        return scipy.sparse.linalg.LinearOperator(
            (free.size, 2 * self.elements),
            matvec=lambda z: matmat(np.ravel(z)),
            rmatvec=lambda f: rmatmat(np.ravel(f)),
            matmat=matmat,
            rmatmat=rmatmat,
            dtype=float,
        )


def beam_frequencies(
    length: float,
    EI: float,
    mass_per_length: float,
    elements: int,
    bc: str = "clamped-free",
    tip_mass: float = 0.0,
    tip_inertia: float = 0.0,
    n: int = 6,
    grading: float = 1.0,
) -> np.ndarray:
    """Lowest ``n`` natural frequencies [rad/s] of a uniform beam, ascending.

    Parameters
    ----------
    length, EI, mass_per_length : float
        L [m], EI [N m²], ρA [kg/m].
    elements : int
        Number of Hermite elements.
    bc : {"clamped-free", "pinned-pinned", "clamped-mass"}
        Boundary conditions; ``"clamped-mass"`` uses ``tip_mass`` [kg] and
        ``tip_inertia`` [kg m²] at the free end.
    n : int
        Number of frequencies.
    grading : float
        Element size ratio (see :func:`fem.mesh.graded_mesh`); 1 is uniform.

    Identical (in exact arithmetic) to the eigenvalues of the assembled
    Hermite model; see the module docstring for how they are computed.
    """
    if bc not in BOUNDARY_CONDITIONS:
        raise ValueError(f"bc must be one of {sorted(BOUNDARY_CONDITIONS)}, got {bc!r}")
    for name, value in (("length", length), ("EI", EI), ("mass_per_length", mass_per_length)):
        check.positive(value, "", name)
    for name, value in (("tip_mass", tip_mass), ("tip_inertia", tip_inertia)):
        check.nonnegative(value, "", name)
    if bc != "clamped-mass" and (tip_mass or tip_inertia):
        raise ValueError(f"tip_mass and tip_inertia need bc='clamped-mass', got bc={bc!r}")
    nodes = uniform_mesh(length, elements) if grading == 1.0 else graded_mesh(length, elements, grading)
    unknowns = 2 * elements
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= unknowns:
        raise ValueError(f"n must be an integer in [1, {unknowns}] for this mesh, got {n!r}")
    coordinates = _RelativeCoordinates(nodes, pinned=shapes.FAMILIES[bc].frame == "pinned")
    tip = np.zeros(2 * (elements + 1))
    tip[-2:] = tip_mass, tip_inertia
    mass = (mass_per_length * assemble(nodes)["mass"] + scipy.sparse.diags(tip)).tocsr()
    # Cholesky factors D_e of the element blocks K_e = D_eᵀ D_e (upper triangular).
    h = coordinates.h
    blocks = EI / h[:, None, None] ** 3 * np.array([[12.0, 0.0], [0.0, 0.0]]) + EI * np.stack(
        [np.stack([0 * h, -6 / h**2], -1), np.stack([-6 / h**2, 4 / h], -1)], 1
    )
    factors = np.linalg.cholesky(blocks).transpose(0, 2, 1)  # upper: K_e = Uᵀ U

    def solve_upper(y: np.ndarray) -> np.ndarray:  # D⁻¹ y
        y = y.reshape(-1, 2)
        second = y[:, 1] / factors[:, 1, 1]
        first = (y[:, 0] - factors[:, 0, 1] * second) / factors[:, 0, 0]
        return np.column_stack([first, second]).ravel()

    def solve_upper_transposed(y: np.ndarray) -> np.ndarray:  # D⁻ᵀ y
        y = y.reshape(-1, 2)
        first = y[:, 0] / factors[:, 0, 0]
        second = (y[:, 1] - factors[:, 0, 1] * first) / factors[:, 1, 1]
        return np.column_stack([first, second]).ravel()

    def matvec(y: np.ndarray) -> np.ndarray:
        z = solve_upper(np.ravel(y))
        return solve_upper_transposed(coordinates.adjoint(mass @ coordinates.apply(z)))

    if unknowns <= DENSE_LIMIT:
        H = np.column_stack([matvec(e) for e in np.eye(unknowns)])
        mu = scipy.linalg.eigh(0.5 * (H + H.T), eigvals_only=True)[::-1][:n]
    else:
        operator = scipy.sparse.linalg.LinearOperator((unknowns, unknowns), matvec=matvec, dtype=float)
        mu = scipy.sparse.linalg.eigsh(
            operator, k=n, which="LA", v0=lanczos_start(unknowns), return_eigenvectors=False
        )
        mu = np.sort(mu)[::-1]
    return np.sqrt(1.0 / mu)
