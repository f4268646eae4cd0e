"""The Euler–Bernoulli beam element with cubic Hermite interpolation.

The element itself (shape functions, element integrals) lives in :mod:`core.numerics.hermite`,
where the "fe-modes" shape family (:mod:`shapes.fe_modes`, which may not import ``fem``)
uses it too; this module is the finite-element backend's name for it.
"""

from __future__ import annotations

from core.numerics.hermite import GAUSS_POINTS, element_matrices, hermite

__all__ = ["GAUSS_POINTS", "element_matrices", "hermite"]
