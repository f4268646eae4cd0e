"""The contract of a study kind."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from core.arm import Arm
from studies.discretizations import Case

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Study kinds by name, one instance each (``studies.kinds.KINDS``): every concrete
#: :class:`StudyKind` subclass that sets ``name`` is entered here when defined.
KINDS: dict[str, StudyKind] = {}


class StudyKind(ABC):
    """One kind of study.

    Subclasses set ``name`` and ``analysis_schema`` and implement ``run_case``
    and ``report``; defining such a subclass registers an instance in
    :data:`studies.kinds.KINDS` (the config's ``study.kind`` values come from
    that registry), so a new kind is one new module in ``studies/kinds/``. ``run_case`` must
    be a pure function of its arguments (it runs in worker processes and on
    Dask workers) and return rows that start with ``case.columns()`` and have
    the same columns for every case of a study.
    """

    name: ClassVar[str]
    analysis_schema: ClassVar[type[BaseModel]]
    #: The ``sweep.backends`` this kind can run (None: every registered backend); checked
    #: when a config is validated, so ``flexlink show`` refuses the others.
    backends: ClassVar[tuple[str, ...] | None] = None
    #: Whether its cases may be built with geometric stiffening (``sweep.geometric_stiffening``
    #: true); checked when a config is validated.
    geometric_stiffening: ClassVar[bool] = True
    #: Cases with more coordinates are refused without ``--force``: the dense n × n matrices
    #: and O(n³) work of simulations and linearizations are not meant for them.
    coordinate_limit: ClassVar[int] = 4000
    #: Columns of its rows that measure this run's cost (wall times): the kind's tables and
    #: reports see them, results.csv does not (it depends on the config alone and is the
    #: same, byte for byte, on every machine load, executor and resume).
    timing_columns: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and not inspect.isabstract(cls):
            KINDS[cls.name] = cls()

    def validate(self, arm: Arm, analysis: BaseModel) -> None:
        """Refuse (ValueError naming the ``analysis.…`` key and the value) what can be
        checked before any case runs; default: nothing beyond the schema."""
        return None

    @abstractmethod
    def run_case(self, arm: Arm, case: Case, analysis: BaseModel) -> list[dict[str, Any]]:
        """Rows for one case; each row starts with ``case.columns()``."""

    @abstractmethod
    def report(
        self, results: pd.DataFrame, arm: Arm, analysis: BaseModel, folder: Path, plots: bool
    ) -> list[str]:
        """Markdown sections for summary.md (tables, links to the plots written to ``folder``).

        ``results`` holds the rows of every successful case. Extra CSV tables
        go to ``folder`` too (e.g. fitted rates); their names are returned in
        the text.
        """

    def finalize(self, results: pd.DataFrame, arm: Arm, analysis: BaseModel) -> pd.DataFrame:
        """Columns that need every case (references, errors); default: none added."""
        return results

    def stored(self, results: pd.DataFrame) -> pd.DataFrame:
        """What results.csv holds of ``results``: everything but the :attr:`timing_columns`
        (a kind whose rows carry measured times elsewhere drops those too), so that it is a
        function of the config and the numerics alone."""
        return results.drop(columns=[c for c in self.timing_columns if c in results])

    def tables(self, results: pd.DataFrame, arm: Arm, analysis: BaseModel) -> dict[str, pd.DataFrame]:
        """Key tables for summary.md and LaTeX, by name (default: none beyond the results)."""
        return {}

    def cost(self, costs: pd.DataFrame, analysis: BaseModel) -> pd.DataFrame:
        """The wall-time table of summary.md (case, sweep columns, ``wall_time_s``);
        a kind may add columns (e.g. per simulated second)."""
        return costs

    def warm_up(self) -> None:
        """Load what every case of this kind loads on first use (imports, compiled kernels), once
        per worker process and before any case's clock starts (``wall_time_s`` then compares
        cases, not which case came first in its worker). Default: nothing."""
        return None

    def cost_report(
        self,
        results: pd.DataFrame,
        costs: pd.DataFrame,
        analysis: BaseModel,
        folder: Path | None = None,
        plots: bool = False,
    ) -> tuple[list[str], dict[str, pd.DataFrame]]:
        """Paragraphs and tables (by name) that weigh the results against what each case cost
        (``costs``: case, sweep columns, ``wall_time_s`` of this run); written to summary.md
        and CSV, never into results.csv, which depends on the config alone (figures, if
        ``plots``, into ``folder``). Default: none."""
        return [], {}
