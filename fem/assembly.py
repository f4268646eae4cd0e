"""Assembly of one beam's Hermite elements and its boundary conditions.

Global degrees of freedom: (w_k, θ_k) at node k, indices 2k and 2k + 1.
Boundary conditions of the two frame choices (docs/MODEL.md, Finite elements):

``"clamped"``  w = θ = 0 at the joint (the link frame is tangent to the beam);
``"pinned"``   w = 0 at both ends (the link frame runs along the chord).

The remaining degrees of freedom are the basis "functions" of the link: each
is the global Hermite function of one nodal value.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse

from core.dynamics.basis import FRAMES, BeamBasis
from core.numerics.quadrature import composite_gauss
from fem.deformation import RelativeCoordinates
from fem.element import element_matrices, hermite


def constrained_dofs(elements: int, bc: str) -> list[int]:
    """Indices of the global degrees of freedom removed by the boundary conditions
    of frame ``bc`` (one of :data:`core.dynamics.basis.FRAMES`)."""
    if bc == "clamped":
        return [0, 1]
    if bc == "pinned":
        return [0, 2 * elements]
    raise ValueError(f"boundary condition must be one of {FRAMES}, got {bc!r}")


def assemble(nodes: np.ndarray) -> dict[str, object]:
    """Sparse global mass and stiffness (unit ρA, EI) and the load vectors of a mesh.

    Returns
    -------
    dict with ``mass``, ``stiffness`` (scipy.sparse CSR, shape (2N, 2N)) and
    ``first``, ``moment`` (ndarray, shape (2N,)), N the number of nodes.

    All elements are integrated at once (:func:`fem.element.element_matrices`
    on arrays) and scattered with one COO build: O(N), no Python loop.
    """
    nodes = np.asarray(nodes, dtype=float)
    n_dof = 2 * nodes.size
    local = element_matrices(np.diff(nodes), nodes[:-1])
    index = 2 * np.arange(nodes.size - 1)[:, None] + np.arange(4)  # (E, 4) global DOFs of each element
    rows = np.repeat(index, 4, axis=1).ravel()
    cols = np.tile(index, (1, 4)).ravel()
    shape = (n_dof, n_dof)
    mass = scipy.sparse.coo_matrix((local["mass"].ravel(), (rows, cols)), shape).tocsr()
    stiffness = scipy.sparse.coo_matrix((local["stiffness"].ravel(), (rows, cols)), shape).tocsr()
    first = np.bincount(index.ravel(), weights=local["first"].ravel(), minlength=n_dof)
    moment = np.bincount(index.ravel(), weights=local["moment"].ravel(), minlength=n_dof)
    return {"mass": mass, "stiffness": stiffness, "first": first, "moment": moment}


def interpolation(nodes: np.ndarray, s: np.ndarray, derivative: int = 0, *, sparse: bool = False):
    """Values of every global Hermite function at positions s, shape (2N, len(s)).

    Each column has four non-zeros (the DOFs of the element holding s);
    ``sparse=True`` returns it as a CSC matrix, which fine meshes need
    (2N × len(s) dense is 320 MB for 10 000 elements at 2 000 points).
    """
    nodes = np.asarray(nodes, dtype=float)
    s = np.atleast_1d(np.asarray(s, dtype=float))
    length = nodes[-1]
    if s.size and (s.min() < -1e-12 * length or s.max() > length * (1 + 1e-12)):
        raise ValueError(f"positions must lie in [0, {length}], got [{s.min()}, {s.max()}]")
    element = np.clip(np.searchsorted(nodes, s, side="right") - 1, 0, nodes.size - 2)
    h = nodes[element + 1] - nodes[element]
    xi = np.clip((s - nodes[element]) / h, 0.0, 1.0)
    values = hermite(xi, h, derivative)  # (4, len(s))
    rows = 2 * element + np.arange(4)[:, None]
    cols = np.broadcast_to(np.arange(s.size), rows.shape)
    out = scipy.sparse.csc_matrix((values.ravel(), (rows.ravel(), cols.ravel())), (2 * nodes.size, s.size))
    return out if sparse else out.toarray()


def element_basis(nodes: np.ndarray, bc: Literal["clamped", "pinned"]) -> BeamBasis:
    """Engine basis data of a meshed beam with the boundary conditions of a frame choice.

    Structured (see the representation contract of :class:`~core.dynamics.basis.BeamBasis`):
    ``mass``, ``stiffness`` and ``deformation_stiffness`` are sparse (CSR, banded:
    bandwidth 3 and 1), ``deformations`` an O(E) ``LinearOperator``; building it is O(E)
    time and memory, with no dense (2E)² array and no per-element Python loop.
    """
    nodes = np.asarray(nodes, dtype=float)
    elements = nodes.size - 1
    n_nodal = 2 * nodes.size
    free = np.setdiff1d(np.arange(n_nodal), constrained_dofs(elements, bc))
    assembled = assemble(nodes)
    mass = assembled["mass"][free][:, free]
    stiffness = assembled["stiffness"][free][:, free]

    def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return interpolation(nodes, s, 0)[free], interpolation(nodes, s, 1)[free]

    def unit(dof: int) -> np.ndarray:  # the free-DOF coefficients of nodal DOF ``dof``
        vector = np.zeros(n_nodal)
        vector[dof] = 1.0
        return vector[free]

    # Element deformations z = (a_e, b_e) (fem.deformation): δ = T z is a running
    # sum and the strain energy is block diagonal in z, exactly.
    relative = RelativeCoordinates(nodes, pinned=bc == "pinned")
    h = relative.h
    blocks = np.stack([np.stack([12 / h**3, -6 / h**2], -1), np.stack([-6 / h**2, 4 / h], -1)], 1)
    deformation_stiffness = scipy.sparse.bsr_matrix(
        (blocks, np.arange(elements), np.arange(elements + 1)), shape=(2 * elements, 2 * elements)
    ).tocsr()
    last = 2 * elements
    return BeamBasis(
        length=float(nodes[-1]),
        frame=bc,
        mass=_symmetric(mass),
        first=assembled["first"][free],
        moment=assembled["moment"][free],
        stiffness=_symmetric(stiffness),
        tip_value=unit(last),
        tip_slope=unit(last + 1),
        root_slope=unit(1),
        evaluate=evaluate,
        description=f"{elements} Hermite elements, {bc}",
        deformations=relative.operator(free),
        deformation_stiffness=deformation_stiffness,
        slope_gram=_slope_gram(nodes, free),
        breaks=nodes,
    )


def _slope_gram(nodes: np.ndarray, free: np.ndarray):
    """``BeamBasis.slope_gram`` of a mesh: ∫₀^upper w(s) φ'φ'ᵀ ds exactly (the slopes are
    quadratic on each element and w of degree ≤ 2: four Gauss points per element, or per
    part of the element cut at ``upper``: :func:`core.numerics.quadrature.composite_gauss`), sparse
    CSR with the band of the mass matrix."""

    def gram(weight: tuple, upper: float) -> scipy.sparse.csr_matrix:
        if len(weight) > 3:
            raise ValueError(f"slope_gram: weights of degree <= 2 only, got {len(weight) - 1}")
        edges = np.concatenate([nodes[nodes < upper], [min(upper, nodes[-1])]])
        points, weights = composite_gauss(edges, 4)
        weights = weights * np.polynomial.polynomial.polyval(points, weight)
        slopes = interpolation(nodes, points, 1, sparse=True)[free]
        out = (slopes @ scipy.sparse.diags(weights) @ slopes.T).tocsr()
        return _symmetric(out)

    return gram


def _symmetric(matrix) -> scipy.sparse.csr_matrix:
    """½(A + Aᵀ) of a sparse block, sorted CSR (entry by entry the same arithmetic as the
    dense ½(A + Aᵀ))."""
    out = (0.5 * (matrix + matrix.T)).tocsr()
    out.sort_indices()
    return out
