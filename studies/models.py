"""Build the model of one sweep case."""

from __future__ import annotations

from typing import Any

from amm import AssumedModesModel
from core.arm import Arm
from core.model import Model
from fem import FiniteElementModel


def build_model(arm: Arm, case: dict[str, Any], reference=None) -> Model:
    """AMM model (``shape``, ``modes``) or FEM model (frame ``shape``, ``elements``) of a case."""
    if case["backend"] == "amm":
        return AssumedModesModel(arm, shape=case["shape"], modes=case["modes"], reference=reference)
    return FiniteElementModel(arm, elements=case["elements"], frame=case["shape"])


def finest_case(results) -> int:
    """Number of the case with the most coordinates (ties: FEM over AMM, then the later case).

    ``results`` is a DataFrame with ``case``, ``n_dof`` and ``backend`` columns;
    this is the reference wherever no exact one exists.
    """
    order = results.drop_duplicates("case").sort_values(["n_dof", "backend", "case"])
    return int(order.iloc[-1]["case"])


def discretization_label(case: dict[str, Any]) -> str:
    if case["backend"] == "amm":
        return f"AMM {case['shape']} x{case['modes']}"
    return f"FEM {case['shape']} x{case['elements']}"
