"""Beam finite-element backend: Euler–Bernoulli Hermite elements, meshes,
assembly and boundary conditions, supplying element basis data to the shared
engine in :mod:`core`; and a standalone sparse beam eigen-solver. Beside it the
finite-segment backend (:mod:`fem.segments`): rigid pieces joined by torsional
springs, a rigid chain of the same engine.
"""

from fem.assembly import element_basis
from fem.eigen import beam_frequencies
from fem.element import element_matrices, hermite
from fem.mesh import graded_mesh, uniform_mesh
from fem.model import FiniteElementModel
from fem.segments import FiniteSegmentModel

__all__ = [
    "FiniteElementModel",
    "FiniteSegmentModel",
    "beam_frequencies",
    "element_basis",
    "element_matrices",
    "graded_mesh",
    "hermite",
    "uniform_mesh",
]
