"""Assumed-modes backend: each flexible link's basis is a few global beam
eigenfunctions from :mod:`shapes`, fed to the shared engine in :mod:`core`.

:mod:`amm.symbolic` (``amm.symbolic.derive``) derives the same equations of
motion symbolically for revolute-joint arms, planar and spatial; it is imported
on first use (sympy).
"""

from amm.model import AssumedModesModel, modal_basis

__all__ = ["AssumedModesModel", "modal_basis", "symbolic"]


def __getattr__(name: str):
    # Lazy: importing sympy costs ~0.5 s, which the numeric backends do not need.
    if name == "symbolic":
        import importlib

        return importlib.import_module("amm.symbolic")
    raise AttributeError(f"module 'amm' has no attribute {name!r}")
