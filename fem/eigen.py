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
from core.dynamics.structured import lanczos_start
from core.numerics import validation as check
from fem.assembly import assemble
from fem.deformation import RelativeCoordinates
from fem.mesh import graded_mesh, uniform_mesh

#: Below this many unknowns H is formed densely and solved with ``eigh``.
DENSE_LIMIT = 64


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
    bc : str
        Boundary conditions, named by a shape family of fixed length
        (:func:`shapes.fixed_length_families`: ``"clamped-free"``, ``"pinned-pinned"``,
        ``"clamped-mass"``): the mesh takes the family's ``frame``, and a family that
        ``needs_tip_load`` takes ``tip_mass`` [kg] and ``tip_inertia`` [kg m²] at the free end.
    n : int
        Number of frequencies.
    grading : float
        Element size ratio (see :func:`fem.mesh.graded_mesh`); 1 is uniform.

    Identical (in exact arithmetic) to the eigenvalues of the assembled
    Hermite model; see the module docstring for how they are computed.
    """
    families = shapes.fixed_length_families()
    if bc not in families:
        raise ValueError(f"bc must be one of {sorted(families)}, got {bc!r}")
    for name, value in (("length", length), ("EI", EI), ("mass_per_length", mass_per_length)):
        check.positive(value, "", name)
    for name, value in (("tip_mass", tip_mass), ("tip_inertia", tip_inertia)):
        check.nonnegative(value, "", name)
    if not shapes.FAMILIES[bc].needs_tip_load and (tip_mass or tip_inertia):
        loaded = " or ".join(repr(name) for name in families if shapes.FAMILIES[name].needs_tip_load)
        raise ValueError(f"tip_mass and tip_inertia need bc={loaded}, got bc={bc!r}")
    nodes = uniform_mesh(length, elements) if grading == 1.0 else graded_mesh(length, elements, grading)
    unknowns = 2 * elements
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= unknowns:
        raise ValueError(f"n must be an integer in [1, {unknowns}] for this mesh, got {n!r}")
    coordinates = RelativeCoordinates(nodes, pinned=shapes.FAMILIES[bc].frame == "pinned")
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
