"""``solver="recursive"``: the compiled articulated-body algorithm.

The articulated-body recursion exists once, in the compiled kernels of :mod:`core.dynamics.compiled`
(Featherstone, Rigid Body Dynamics Algorithms, 2008, §7.3; velocity products and gravity
inside the recursion). A :class:`~core.dynamics.engine.ChainModel` runs it whatever its
``compiled`` option: ``compiled=False`` chooses the readable numpy oracle for M, h and G (and
so for ``solver="composite"``), which has no articulated-body solver of its own, and the
tests compare this recursion with the oracle's composite solve. Any other
:class:`~core.dynamics.model.Model` falls back to ``"composite"`` with a
:class:`RecursiveNotSupported` warning.

**Bodies with many flexible coordinates** (fine element meshes). The joint-space inertia D of
a body of m coordinates is never factored densely once m ≥
:data:`~core.dynamics.compiled.packing.FINE_COORDINATES` and its mass block M_δδ is banded
(:mod:`core.dynamics.compiled.fine`): D_δδ = M_δδ + Vᵀ X V (the rank ≤ 14 coupling through the
child's articulated inertia, the payload, hub and motor) plus, with geometric stiffening, the
Gram terms Σ μ h hᵀ; conjugate gradients on D_δδ preconditioned by the exact solve of the
banded-plus-low-rank part (banded Cholesky, Woodbury) to a backward error of m ε, the joint row
by its Schur complement: O(m²) per body and call instead of O(m³) (two links × 1024 elements:
46.7 s → 0.75 s; with stiffening 4.7 s, the composite solve 15 s). The recursion is kept
rather than handed to ``"structured"``, which refuses geometric stiffening; where that applies
(no stiffening, no translating links) it is O(N) and faster from a few hundred coordinates on,
and ``solver="auto"`` takes it (:meth:`~core.dynamics.model.Model.auto_solver`). A column the
iteration cannot bring within its bound (rough states of stiffened meshes) falls back to the
dense factor of that body, so the answer is always backward stable.
"""

from __future__ import annotations

import warnings

import numpy as np

from core.dynamics.composite import composite_solver


class RecursiveNotSupported(UserWarning):
    """The recursive solver cannot handle a feature of this model and fell back to ``"composite"``."""


def recursive_solver(model, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
    """``SOLVERS["recursive"]``: q̈ with M q̈ + h + G = ``applied`` by the compiled
    articulated-body algorithm (``model.kernels``) on the shared engine; other models fall
    back to ``"composite"`` with a :class:`RecursiveNotSupported` warning."""
    if not model.on_engine:
        warnings.warn(
            f"solver 'recursive' needs a ChainModel, got {type(model).__name__}; using 'composite'",
            RecursiveNotSupported,
            stacklevel=3,
        )
        return composite_solver(model, q, qd, applied)
    return model.kernels.forward(q, qd, applied)
