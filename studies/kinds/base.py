"""The contract of a study kind, and the ``[analysis]`` keys several kinds share."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from core.arm import Arm
from studies.discretizations import Case, joint_configuration
from studies.limits import JointValue

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


def caution(message: str) -> None:
    """Warn (RuntimeWarning) of something a case or the study's results should be read with:
    the runner lists it in summary.md's warnings, with the cases that raised it."""
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def with_rows(tables: dict[str, pd.DataFrame], optional: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """A kind's :meth:`StudyKind.tables`: ``tables``, then those of ``optional`` that are not
    empty (a table with nothing in it is left out of the report)."""
    return {**tables, **{title: table for title, table in optional.items() if not table.empty}}


def lightest_by_backend(arm: Arm, cases: list[Case]) -> dict[str, Case]:
    """The case of fewest coordinates of each backend among ``cases`` (counted without building
    a model), by backend in the order of ``cases``: what a kind's :meth:`StudyKind.warm_up` runs."""
    lightest: dict[str, tuple[int, Case]] = {}
    for case in cases:
        size, backend = case.discretization.coordinates(arm), case.discretization.backend
        if backend not in lightest or size < lightest[backend][0]:
            lightest[backend] = (size, case)
    return {backend: case for backend, (_, case) in lightest.items()}


#: The span of a warm-up's short run (:meth:`StudyKind.warm_up` of the simulation, stability and
#: verify kinds), a fraction of the study's: a step or a few of the integrator, enough for every
#: kernel the cases call to be called once.
WARM_UP_SPAN = 1e-6


def warm_up_method(method: str) -> str:
    """The integrator of a warm-up's short run for a study's ``method``: LSODA calls the
    Jacobian only once it has switched to its stiff method, never in a few steps, and Radau
    calls the same Jacobian at its first step; any other method as is."""
    return "Radau" if method == "LSODA" else method


class AnalysisSchema(BaseModel):
    """The base of every kind's ``[analysis]`` schema: unknown keys are errors, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AtConfiguration(AnalysisSchema):
    """``[analysis]`` of a kind that analyses the arm at one joint configuration."""

    configuration: list[JointValue] | None = Field(
        None,
        description="Joint variables of the configuration, one per joint; unset: Arm.home() (zero, "
        "translating links fully extended) [rad or m].",
    )

    def joint_values(self, arm: Arm) -> np.ndarray:
        """The joint variables of ``configuration`` for ``arm`` (checked; default ``arm.home()``)."""
        return joint_configuration(arm, self.configuration, "analysis.configuration")


class StudyKind(ABC):
    """One kind of study.

    Subclasses set ``analysis_schema`` and implement ``run_case`` and ``report``;
    an instance is registered by name in :data:`studies.kinds.KINDS` (the
    config's ``study.kind`` values come from that registry). ``run_case`` must
    be a pure function of its arguments (it runs in worker processes and on
    Dask workers) and return rows that start with ``case.columns()`` and have
    the same columns for every case of a study.
    """

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

    def warm_up(self, arm: Arm, cases: list[Case], analysis: BaseModel) -> None:
        """Load what every case of this study loads on first use (imports, compiled kernels), once
        per worker process and before any case's clock starts, so the first case's
        ``wall_time_s`` does not carry the loading the others do not (the cost table then compares
        cases, not which case came first in its worker).

        ``cases``: the lightest and the heaviest case of each backend of the study
        (:func:`studies.runner.warm_cases`). Load only what those need: build no model larger
        than the study's lightest of a backend and call the primitives its cases call, on that
        model (a large model's dense eigen-solve costs more seconds and memory than many a study
        itself). Rows are discarded and warnings ignored; a failure is ignored too (the case
        meets it and reports it). Default: nothing."""
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
