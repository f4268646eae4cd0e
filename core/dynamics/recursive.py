"""``solver="recursive"``: the compiled articulated-body algorithm.

The articulated-body recursion exists once, in the compiled kernels of :mod:`core.dynamics.compiled`
(Featherstone, Rigid Body Dynamics Algorithms, 2008, §7.3; velocity products and gravity
inside the recursion). A :class:`~core.dynamics.engine.ChainModel` runs it whatever its
``compiled`` option: ``compiled=False`` chooses the readable numpy oracle for M, h and G (and
so for ``solver="composite"``), which has no articulated-body solver of its own, and the
tests compare this recursion with the oracle's composite solve. Any other
:class:`~core.dynamics.model.Model` falls back to ``"composite"`` with a
:class:`RecursiveNotSupported` warning.
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
