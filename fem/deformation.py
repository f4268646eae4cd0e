"""Element-deformation coordinates of a Hermite beam mesh.

The nodal deflections and slopes (w, θ) of a mesh follow from the deformations of its
elements z = (a_e, b_e) — a_e the deflection of element e's far node relative to the
tangent at its near node, b_e its change of slope — by running sums: x = T z, with θ₀ fixed
by the frame (clamped: 0; pinned: the chord through both ends stays on the axis). In z the
strain energy is block diagonal, exactly, which is what makes fine meshes well conditioned
(:func:`fem.assembly.element_basis`) and their eigen-solves O(E) (:mod:`fem.eigen`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg


class RelativeCoordinates:
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
