"""The composite-body forward dynamics: M(q) built whole and factorized.

``SOLVERS["composite"]`` of :mod:`core.dynamics.model` and the fallback of the solvers that need the
shared engine (:mod:`core.dynamics.recursive`) for any other :class:`~core.dynamics.model.Model`: it uses the
model's primitives only, so it imports nothing of the engine.
"""

from __future__ import annotations

import numpy as np


def composite_solver(model, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
    """Build M(q) and solve M q̈ = applied − h − G with its Cholesky factor, O(N³)."""
    import scipy.linalg

    rhs = applied - model.nonlinear_forces(q, qd)
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(model.mass_matrix(q)), rhs)
