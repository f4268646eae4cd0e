"""The contract of a study kind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import BaseModel

from core.arm import Arm
from core.model import Model
from studies.models import Case

#: Study kinds by name (one instance each), filled as the :class:`StudyKind` subclasses are defined.
KINDS: dict[str, StudyKind] = {}


class StudyKind(ABC):
    """One kind of study.

    Subclasses set ``name`` and ``analysis_schema`` and implement the two hooks; defining
    a subclass with a ``name`` registers an instance in :data:`KINDS`.
    ``run_case`` must be a pure function of its arguments (it runs in worker
    processes and on Dask workers) and return rows whose columns are the same
    for every case of a study.
    """

    name: ClassVar[str]
    analysis_schema: ClassVar[type[BaseModel]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A concrete kind with a name registers itself: defining it is all a new kind takes.
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            KINDS[cls.name] = cls()

    @abstractmethod
    def run_case(self, arm: Arm, case: Case, analysis: BaseModel) -> list[dict[str, Any]]:
        """Rows for one case; each row starts with ``case.columns()`` (case and sweep columns)."""

    @abstractmethod
    def report(
        self, results: pd.DataFrame, analysis: BaseModel, folder: Path, plots: bool, arm: Arm
    ) -> list[str]:
        """Markdown sections for summary.md (tables, links to the plots written to ``folder``).

        ``results`` holds the rows of every successful case. Extra CSV tables
        go to ``folder`` too (e.g. fitted rates); their names are returned in
        the text.
        """

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: BaseModel) -> pd.DataFrame:
        """Columns that need every case (references, errors); default: none added."""
        return results

    def tables(self, results: pd.DataFrame, analysis: BaseModel, arm: Arm) -> dict[str, pd.DataFrame]:
        """Key tables for summary.md and LaTeX, by name (default: none beyond the results)."""
        return {}

    def cost(self, costs: pd.DataFrame, analysis: BaseModel) -> pd.DataFrame:
        """The wall-time table of summary.md (case, sweep columns, ``wall_time_s``);
        a kind may add columns (e.g. per simulated second)."""
        return costs


def joint_values(arm: Arm, values, field: str) -> np.ndarray:
    """The joint variables [rad, m] given in ``analysis.<field>``, or ``arm.home()`` if None.

    Raises
    ------
    ValueError
        If there are not ``arm.n_joints`` of them (the message names the field).
    """
    joints = arm.home() if values is None else np.array(values, dtype=float)
    if joints.shape != (arm.n_joints,):
        raise ValueError(f"analysis.{field}: needs {arm.n_joints} joint values, got {joints.size}")
    return joints


def full_coordinates(model: Model, joints: np.ndarray) -> np.ndarray:
    """q with the joint variables ``joints`` and zero flexible coordinates, shape (n_dof,)."""
    q = np.zeros(model.n_dof)
    q[: model.n_joints] = joints
    return q


def joint_names(arm: Arm) -> tuple[str, ...]:
    """The names of ``arm``'s joint variables (``theta1``, ``d3``…): the first ``model.coordinates``
    of every model of the arm, taken from its rigid equivalent."""
    from core.engine import ChainModel
    from core.rigid import rigid_equivalent

    model = ChainModel(rigid_equivalent(arm), {})
    return model.coordinates[: model.n_joints]
