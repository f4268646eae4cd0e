"""Meshes of one beam: node positions along s ∈ [0, L]."""

from __future__ import annotations

import numpy as np

from core.numerics import validation as check


def uniform_mesh(length: float, elements: int) -> np.ndarray:
    """Nodes of ``elements`` equal elements on [0, length], shape (elements + 1,)."""
    _check(length, elements)
    return np.linspace(0.0, length, elements + 1)


def graded_mesh(length: float, elements: int, ratio: float) -> np.ndarray:
    """Geometrically graded nodes: each element ``ratio`` times the previous one.

    ``ratio`` < 1 refines towards the tip, > 1 towards the joint (the root,
    where the bending moment is largest); 1 is uniform.
    """
    _check(length, elements)
    check.positive(ratio, "", "grading ratio")
    sizes = ratio ** np.arange(elements)
    nodes = np.concatenate([[0.0], np.cumsum(sizes)])
    return length * nodes / nodes[-1]


def _check(length: float, elements: int) -> None:
    check.positive(length, "", "length")
    check.integer(elements, "", "number of elements", minimum=1)
