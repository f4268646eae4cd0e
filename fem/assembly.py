"""Assembly of one beam's Hermite elements and its boundary conditions.

Global degrees of freedom: (w_k, θ_k) at node k, indices 2k and 2k + 1.
Boundary conditions of the two frame choices (SPEC §5):

``"clamped"``  w = θ = 0 at the joint (the link frame is tangent to the beam);
``"pinned"``   w = 0 at both ends (the link frame runs along the chord).

The remaining degrees of freedom are the basis "functions" of the link: each
is the global Hermite function of one nodal value.
"""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import scipy.sparse

from core.basis import FRAMES, BeamBasis
from fem.element import element_matrices, hermite

#: The frames (boundary conditions) a mesh can be constrained by: the engine's frames.
BOUNDARY_CONDITIONS = FRAMES


def constrained_dofs(elements: int, bc: str) -> list[int]:
    """Indices of the global degrees of freedom removed by the boundary conditions."""
    if bc == "clamped":
        return [0, 1]
    if bc == "pinned":
        return [0, 2 * elements]
    raise ValueError(f"boundary condition must be one of {BOUNDARY_CONDITIONS}, got {bc!r}")


def assemble(nodes: np.ndarray) -> dict[str, object]:
    """Sparse global mass and stiffness (unit ρA, EI) and the load vectors of a mesh.

    Returns
    -------
    dict with ``mass``, ``stiffness`` (scipy.sparse CSR, shape (2N, 2N)) and
    ``first``, ``moment`` (ndarray, shape (2N,)), N the number of nodes.
    """
    nodes = np.asarray(nodes, dtype=float)
    n_dof = 2 * nodes.size
    rows, cols, mass_values, stiffness_values = [], [], [], []
    first = np.zeros(n_dof)
    moment = np.zeros(n_dof)
    for e, (s0, s1) in enumerate(itertools.pairwise(nodes)):
        local = element_matrices(s1 - s0, s0)
        index = np.arange(2 * e, 2 * e + 4)
        rows.append(np.repeat(index, 4))
        cols.append(np.tile(index, 4))
        mass_values.append(local["mass"].ravel())
        stiffness_values.append(local["stiffness"].ravel())
        first[index] += local["first"]
        moment[index] += local["moment"]
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    shape = (n_dof, n_dof)
    mass = scipy.sparse.coo_matrix((np.concatenate(mass_values), (rows, cols)), shape).tocsr()
    stiffness = scipy.sparse.coo_matrix((np.concatenate(stiffness_values), (rows, cols)), shape).tocsr()
    return {"mass": mass, "stiffness": stiffness, "first": first, "moment": moment}


def interpolation(nodes: np.ndarray, s: np.ndarray, derivative: int = 0) -> np.ndarray:
    """Values of every global Hermite function at positions s, shape (2N, len(s))."""
    nodes = np.asarray(nodes, dtype=float)
    s = np.atleast_1d(np.asarray(s, dtype=float))
    length = nodes[-1]
    if s.size and (s.min() < -1e-12 * length or s.max() > length * (1 + 1e-12)):
        raise ValueError(f"positions must lie in [0, {length}], got [{s.min()}, {s.max()}]")
    element = np.clip(np.searchsorted(nodes, s, side="right") - 1, 0, nodes.size - 2)
    h = nodes[element + 1] - nodes[element]
    xi = np.clip((s - nodes[element]) / h, 0.0, 1.0)
    out = np.zeros((2 * nodes.size, s.size))
    for j, (e, x, hj) in enumerate(zip(element, xi, h, strict=True)):
        out[2 * e : 2 * e + 4, j] = hermite(np.array([x]), hj, derivative)[:, 0]
    return out


def element_basis(nodes: np.ndarray, bc: Literal["clamped", "pinned"]) -> BeamBasis:
    """Engine basis data of a meshed beam with the boundary conditions of a frame choice."""
    nodes = np.asarray(nodes, dtype=float)
    elements = nodes.size - 1
    free = np.setdiff1d(np.arange(2 * nodes.size), constrained_dofs(elements, bc))
    assembled = assemble(nodes)
    mass = assembled["mass"].toarray()[np.ix_(free, free)]
    stiffness = assembled["stiffness"].toarray()[np.ix_(free, free)]
    unit = np.eye(2 * nodes.size)[free]  # rows: free DOFs; columns: global DOFs

    def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return interpolation(nodes, s, 0)[free], interpolation(nodes, s, 1)[free]

    last = 2 * elements
    return BeamBasis(
        length=float(nodes[-1]),
        frame=bc,
        mass=0.5 * (mass + mass.T),
        first=assembled["first"][free],
        moment=assembled["moment"][free],
        stiffness=0.5 * (stiffness + stiffness.T),
        tip_value=unit[:, last].copy(),
        tip_slope=unit[:, last + 1].copy(),
        root_slope=unit[:, 1].copy(),
        evaluate=evaluate,
        description=f"{elements} Hermite elements, {bc}",
    )
