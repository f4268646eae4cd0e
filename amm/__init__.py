"""Assumed-modes backend: each flexible link's basis is a few global beam
eigenfunctions from :mod:`shapes`, fed to the shared engine in :mod:`core`.
"""

from amm.model import AssumedModesModel, modal_basis

__all__ = ["AssumedModesModel", "modal_basis"]
