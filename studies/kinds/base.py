"""The contract of a study kind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from pydantic import BaseModel

from core.arm import Arm


class StudyKind(ABC):
    """One kind of study.

    Subclasses set ``name`` and ``analysis_schema`` and implement the two hooks.
    ``run_case`` must be a pure function of its arguments (it runs in worker
    processes and on Dask workers) and return rows whose columns are the same
    for every case of a study.
    """

    name: ClassVar[str]
    analysis_schema: ClassVar[type[BaseModel]]

    @abstractmethod
    def run_case(self, arm: Arm, case: dict[str, Any], analysis: BaseModel) -> list[dict[str, Any]]:
        """Rows for one case; each row starts with the case's sweep columns."""

    @abstractmethod
    def report(self, results: pd.DataFrame, analysis: BaseModel, folder: Path, plots: bool) -> list[str]:
        """Markdown sections for summary.md (tables, links to the plots written to ``folder``).

        ``results`` holds the rows of every successful case. Extra CSV tables
        go to ``folder`` too (e.g. fitted rates); their names are returned in
        the text.
        """

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: BaseModel) -> pd.DataFrame:
        """Columns that need every case (references, errors); default: none added."""
        return results

    def tables(self, results: pd.DataFrame, analysis: BaseModel) -> dict[str, pd.DataFrame]:
        """Key tables for summary.md and LaTeX, by name (default: none beyond the results)."""
        return {}

    def cost(self, costs: pd.DataFrame, analysis: BaseModel) -> pd.DataFrame:
        """The wall-time table of summary.md (case, sweep columns, ``wall_time_s``);
        a kind may add columns (e.g. per simulated second)."""
        return costs
