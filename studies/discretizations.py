"""The sweep's discretizations: one registry of backends, one value per case.

A study sweeps an arm over discretizations: assumed modes (a shape family and
a number of modes per bending plane) and finite elements (a frame and a number
of elements per link). Everything a study needs to know about a backend lives
in its :class:`Backend` entry of :data:`BACKENDS` — how its cases follow from
the ``[sweep]`` table, how to build the model, its label and its size — so a
new backend is registered here and nowhere else (the config schema takes its
``backends`` values from the registry keys).

A case is a :class:`Case`: its number and a frozen :class:`Discretization`.
Result tables keep the columns users know, :data:`SWEEP_COLUMNS`
(``backend, shape, modes, elements``), with a blank where a discretization
has no such size (an AMM case has no element count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import shapes
from core.arm import Arm
from studies.text import counted

if TYPE_CHECKING:  # validating a config needs neither pandas nor the engine
    import pandas as pd

    from core.model import Model

#: The columns that identify a case's discretization in every result table.
SWEEP_COLUMNS = ("backend", "shape", "modes", "elements")
#: Columns every row of a study starts with.
KEY_COLUMNS = ("case", *SWEEP_COLUMNS)


@dataclass(frozen=True)
class Discretization:
    """One discretization of an arm.

    Attributes
    ----------
    backend : str
        A key of :data:`BACKENDS`.
    shape : str
        What the backend's basis is chosen by: the shape family (AMM) or the
        frame (FEM).
    size : int
        The backend's refinement: modes per bending plane (AMM) or elements
        per flexible link (FEM); its column name is the backend's ``size_column``.
    """

    backend: str
    shape: str
    size: int

    @property
    def spec(self) -> Backend:
        return BACKENDS[self.backend]

    def build(self, arm: Arm, reference=None) -> Model:
        """The model of ``arm``; ``reference`` is the joint configuration where
        configuration-dependent bases (distal loads, free lengths) are chosen."""
        return self.spec.build(arm, self, reference)

    @property
    def label(self) -> str:
        """E.g. ``"AMM clamped-free x4"``."""
        return f"{self.spec.label} {self.shape} x{self.size}"

    def coordinates(self, arm: Arm) -> int:
        """The number of generalized coordinates of the model of ``arm``, without building it."""
        per_plane = self.spec.coordinates_per_plane(self.size)
        planes = sum(
            2 if (arm.links[k - 1].EI_out is not None and not arm.is_planar) else 1
            for k in arm.flexible_links
        )
        return arm.n_joints + planes * per_plane

    def columns(self) -> dict[str, Any]:
        """The :data:`SWEEP_COLUMNS` of this discretization (None where it has no such size)."""
        sizes = {column: None for column in ("modes", "elements")}
        sizes[self.spec.size_column] = self.size
        return {"backend": self.backend, "shape": self.shape, **sizes}

    @classmethod
    def from_columns(cls, row: Any) -> Discretization:
        """Inverse of :meth:`columns` (a dict or a table row)."""
        backend = str(row["backend"])
        return cls(backend, str(row["shape"]), int(row[BACKENDS[backend].size_column]))


@dataclass(frozen=True)
class Case:
    """One case of a sweep: its number (from 1) and its discretization."""

    number: int
    discretization: Discretization

    def columns(self) -> dict[str, Any]:
        """``case`` and the :data:`SWEEP_COLUMNS`: the first columns of every row of the case."""
        return {"case": self.number, **self.discretization.columns()}


@dataclass(frozen=True)
class Backend:
    """A registered backend.

    Attributes
    ----------
    label : str
        Shown in labels and reports (``"AMM"``).
    size_column : {"modes", "elements"}
        The ``[sweep]`` list that sizes its cases.
    shapes : callable
        The sweep's ``shapes`` (shape-family names) → this backend's ``shape``
        values, in order without repeats (FEM: the frame each family implies).
    build : callable
        ``build(arm, discretization, reference) -> Model``.
    coordinates_per_plane : callable
        size → flexible coordinates per bending plane of a link (for estimates
        before anything is built).
    """

    label: str
    size_column: str
    shapes: Callable[[Sequence[str]], list[str]]
    build: Callable[[Arm, Discretization, Any], Model]
    coordinates_per_plane: Callable[[int], int]


def _amm_model(arm: Arm, d: Discretization, reference) -> Model:
    from amm import AssumedModesModel

    return AssumedModesModel(arm, shape=d.shape, modes=d.size, reference=reference)


def _fem_model(arm: Arm, d: Discretization, reference) -> Model:
    from fem import FiniteElementModel

    return FiniteElementModel(arm, elements=d.size, frame=d.shape)


#: Backends by config name.
BACKENDS: dict[str, Backend] = {
    "amm": Backend("AMM", "modes", lambda names: list(dict.fromkeys(names)), _amm_model, lambda modes: modes),
    "fem": Backend(
        "FEM",
        "elements",
        lambda names: list(dict.fromkeys(shapes.FAMILIES[name].frame for name in names)),
        _fem_model,
        lambda elements: 2 * elements,  # w and θ per node, two nodal values fixed by either frame
    ),
}


def discretizations(backends: Sequence[str], shape_names: Sequence[str], sizes: dict[str, Sequence[int]]):
    """Every discretization of a sweep, backend by backend, then shape, then size.

    ``sizes`` maps a size column (``"modes"``, ``"elements"``) to its list.
    """
    return [
        Discretization(backend, shape, size)
        for backend in backends
        for shape in BACKENDS[backend].shapes(shape_names)
        for size in sizes[BACKENDS[backend].size_column]
    ]


# -- result tables ------------------------------------------------------------


def normalize_columns(results: pd.DataFrame) -> pd.DataFrame:
    """Sizes as nullable integers (blank in CSV where a backend has none), whatever
    pandas inferred when the per-case CSVs were read back."""
    import pandas as pd

    results = results.copy()
    for column in ("modes", "elements"):
        if column in results:
            results[column] = pd.array(
                [None if pd.isna(v) else int(v) for v in results[column]], dtype="Int64"
            )
    return results


def case_keys(results: pd.DataFrame) -> pd.DataFrame:
    """One row per case: ``case`` and the :data:`SWEEP_COLUMNS`, in case order."""
    return results.drop_duplicates("case").sort_values("case")[list(KEY_COLUMNS)].reset_index(drop=True)


def per_case(results: pd.DataFrame, columns: str, values: str, prefix: str) -> pd.DataFrame:
    """A wide table: the sweep columns of each case, then ``values`` spread over ``columns``
    (named ``<prefix><column value>``). Cases are the index, so blank sizes never drop rows."""
    wide = results.pivot_table(index="case", columns=columns, values=values, aggfunc="first")
    wide.columns = [f"{prefix}{c}" for c in wide.columns]
    keys = case_keys(results).set_index("case")[list(SWEEP_COLUMNS)]
    return keys.join(wide).reset_index(drop=True)


def label_of(row: Any) -> str:
    """The discretization label of a result row (or of a case's first row)."""
    return Discretization.from_columns(row).label


def finest_case(results: pd.DataFrame) -> int:
    """Number of the case with the most coordinates (ties: FEM over AMM, then the later case).

    ``results`` has ``case``, ``n_dof`` and ``backend`` columns; this is the
    reference wherever no exact one exists.
    """
    order = results.drop_duplicates("case").sort_values(["n_dof", "backend", "case"])
    return int(order.iloc[-1]["case"])


def joint_configuration(arm: Arm, values: Sequence[float] | None, field: str) -> np.ndarray:
    """The joint variables of a config field (default ``arm.home()``); the length is checked."""
    q = arm.home() if values is None else np.asarray(values, dtype=float)
    if q.shape != (arm.n_joints,):
        raise ValueError(f"{field}: needs {counted(arm.n_joints, 'joint value')}, got {q.size}")
    return q


__all__ = [
    "BACKENDS",
    "KEY_COLUMNS",
    "SWEEP_COLUMNS",
    "Backend",
    "Case",
    "Discretization",
    "case_keys",
    "discretizations",
    "finest_case",
    "joint_configuration",
    "label_of",
    "normalize_columns",
    "per_case",
]
