"""The sweep's discretizations: one registry of backends, one value per case.

A study sweeps an arm over discretizations: assumed modes (a shape family and
a number of modes per bending plane), finite elements (a frame and a number
of elements per link) and rigid segments (a number of segments per link; their
shape is always ``clamped``: the chain starts at the joint). Everything a study
needs to know about a backend lives in its :class:`Backend` entry of
:data:`BACKENDS` — how its cases follow from
the ``[sweep]`` table, how to build the model, its label and its size column
(:class:`SizeColumn`: the ``[sweep]`` list of its sizes and the result column
of a case's size) — so a new backend is registered here and nowhere else: the
config schema takes its ``backends`` values and its size lists from the
registry when a config is validated, and result tables their columns.

A case is a :class:`Case`: its number and a frozen :class:`Discretization`.
Result tables keep the columns users know, :func:`discretization_columns`
(``backend, shape`` and every registered size column: ``modes, elements, segments``),
with a blank where a discretization has no such size (an AMM case has no
element count). A study whose ``[sweep]`` gives ``geometric_stiffening`` adds
:data:`STIFFENING_COLUMN` to every row (its cases are built with and/or
without the axial foreshortening of the beams); without the key, models are
the classic ones and the tables keep their columns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import shapes
from core.arm import Arm
from studies.limits import MAX_JOINT_VALUE
from studies.text import counted

if TYPE_CHECKING:  # validating a config needs neither pandas nor the engine
    import pandas as pd

    from core.dynamics.model import Model

#: The column of a study whose sweep gives ``geometric_stiffening`` (after the
#: :func:`discretization_columns`).
STIFFENING_COLUMN = "geometric_stiffening"
#: Segments per flexible link above this are refused (mirrors ``fem.segments.MAX_SEGMENTS``,
#: which validating a config does not import).
MAX_SEGMENTS = 2000
#: Modes per bending plane or elements per link above this are refused: a model's squared
#: frequencies span about size⁴, past the 1e16 that double precision resolves beyond it.
MAX_SIZE = 100_000


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
    geometric_stiffening : bool or None
        Build the model with the axial foreshortening of the beams (docs/MODEL.md, Dynamics;
        ``geometric_stiffening=True`` of the backends' models). None: not asked for
        (off, and no :data:`STIFFENING_COLUMN` in the rows); True or False: the
        sweep gave it, and :meth:`columns` reports it.
    """

    backend: str
    shape: str
    size: int
    geometric_stiffening: bool | None = None

    @property
    def spec(self) -> Backend:
        return BACKENDS[self.backend]

    def build(self, arm: Arm, reference=None) -> Model:
        """The model of ``arm``; ``reference`` is the joint configuration where
        configuration-dependent bases (distal loads, free lengths) are chosen."""
        return self.spec.build(arm, self, reference)

    def build_at(self, arm: Arm, joints: np.ndarray) -> tuple[Model, np.ndarray]:
        """(the model of ``arm`` built for the joint configuration ``joints``, its coordinates
        there): ``joints`` is the reference of configuration-dependent bases, and the flexible
        coordinates are the model's home (undeformed)."""
        model = self.build(arm, reference=joints)
        q = model.home()
        q[: arm.n_joints] = joints
        return model, q

    @property
    def label(self) -> str:
        """E.g. ``"AMM clamped-free x4"`` (``"AMM clamped-free x4 stiffened"`` with geometric stiffening)."""
        stiffened = " stiffened" if self.geometric_stiffening else ""
        return f"{self.spec.label} {self.shape} x{self.size}{stiffened}"

    def coordinates(self, arm: Arm) -> int:
        """The number of generalized coordinates of the model of ``arm``, without building it."""
        per_plane = self.spec.coordinates_per_plane(self.size)
        planes = sum(
            2 if (arm.links[k - 1].EI_out is not None and not arm.is_planar) else 1
            for k in arm.flexible_links
        )
        return arm.n_joints + planes * per_plane

    def columns(self) -> dict[str, Any]:
        """The :func:`discretization_columns` of this discretization (None where it has no such
        size), and :data:`STIFFENING_COLUMN` when the sweep gave it."""
        sizes = dict.fromkeys(size_columns())
        sizes[self.spec.size_column] = self.size
        columns = {"backend": self.backend, "shape": self.shape, **sizes}
        if self.geometric_stiffening is not None:
            columns[STIFFENING_COLUMN] = self.geometric_stiffening
        return columns

    @property
    def seed(self) -> tuple[int, ...]:
        """Four 32-bit words from a hash of :meth:`columns`, for random draws that belong to
        this discretization (``np.random.default_rng([analysis.seed, *d.seed])``): a case
        draws the same states whatever its number, so a resumed run that reuses it under
        another number, or a reordered sweep, gives the rows a fresh run gives."""
        import hashlib
        import json

        digest = hashlib.sha256(json.dumps(self.columns(), sort_keys=True).encode()).digest()
        return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))

    @classmethod
    def from_columns(cls, row: Any) -> Discretization:
        """Inverse of :meth:`columns` (a dict or a table row)."""
        backend = str(row["backend"])
        stiffening = row.get(STIFFENING_COLUMN) if hasattr(row, "get") else None
        if stiffening is not None and not _is_blank(stiffening):
            stiffening = _truth(stiffening)
        else:
            stiffening = None
        return cls(backend, str(row["shape"]), int(row[BACKENDS[backend].size_column]), stiffening)


@dataclass(frozen=True)
class Case:
    """One case of a sweep: its number (from 1) and its discretization."""

    number: int
    discretization: Discretization

    def columns(self) -> dict[str, Any]:
        """``case`` and the :func:`discretization_columns`: the first columns of every row of the case."""
        return {"case": self.number, **self.discretization.columns()}


@dataclass(frozen=True)
class SizeColumn:
    """How a backend's cases are sized: a ``[sweep]`` list of sizes, one case each, and the
    result column (same name) that holds a case's size.

    Attributes
    ----------
    name : str
        The ``[sweep]`` key and the result column (``"modes"``); backends may share one (the
        first registered backend's declaration is the key's).
    description : str
        What a size counts, for the schema and docs/CONFIG.md (the labels of the backends
        sized by it are put before it).
    default : tuple of int
        The sizes of a sweep that does not give the key.
    limit : int
        The largest size accepted in any context (default :data:`MAX_SIZE`), and
        ``limit_why``, why (said in the refusal).
    """

    name: str
    description: str
    default: tuple[int, ...]
    limit: int = MAX_SIZE
    limit_why: str = "a model's squared frequencies span about size^4, past what double precision resolves"


@dataclass(frozen=True)
class Backend:
    """A registered backend.

    Attributes
    ----------
    label : str
        Shown in labels and reports (``"AMM"``).
    size : SizeColumn
        The ``[sweep]`` list that sizes its cases and the result column of a case's size.
    shapes : callable
        The sweep's ``shapes`` (shape-family names) → this backend's ``shape``
        values, in order without repeats (FEM: the frame each family implies).
    build : callable
        ``build(arm, discretization, reference) -> Model``.
    coordinates_per_plane : callable
        size → flexible coordinates per bending plane of a link (for estimates
        before anything is built).
    reference_rank : int
        Which backend's finest case a sweep takes as its reference (:func:`finest_case`): the
        highest rank first, then the most coordinates. AMM and FEM 1; the rigid segments 0,
        whose frequencies converge as h² only (against h⁴ for elements, fem.segments), so they
        are the reference of a sweep that has no other case.
    """

    label: str
    size: SizeColumn
    shapes: Callable[[Sequence[str]], list[str]]
    build: Callable[[Arm, Discretization, Any], Model]
    coordinates_per_plane: Callable[[int], int]
    reference_rank: int = 1

    @property
    def size_column(self) -> str:
        """The name of its size column (``"modes"``)."""
        return self.size.name


def _is_blank(value: Any) -> bool:
    """A missing table cell: None, NaN, or pandas' NA (pandas checked only when loaded)."""
    if value is None:
        return True
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        return bool(pandas.isna(value))
    return isinstance(value, float) and np.isnan(value)


def _truth(value: Any) -> bool:
    """A stiffening cell as a bool (a CSV read back gives bools or the strings True/False)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"{STIFFENING_COLUMN}: expected True or False, got {value!r}")
    return text == "true"


def _stiffening(d: Discretization) -> dict[str, bool]:
    """The models' ``geometric_stiffening`` keyword: given only when asked for, so the classic
    models are built exactly as before the option existed."""
    return {"geometric_stiffening": True} if d.geometric_stiffening else {}


def _amm_model(arm: Arm, d: Discretization, reference) -> Model:
    from amm import AssumedModesModel

    return AssumedModesModel(arm, shape=d.shape, modes=d.size, reference=reference, **_stiffening(d))


def _fem_model(arm: Arm, d: Discretization, reference) -> Model:
    from fem import FiniteElementModel

    return FiniteElementModel(arm, elements=d.size, frame=d.shape, **_stiffening(d))


def _segments_model(arm: Arm, d: Discretization, reference) -> Model:
    from fem.segments import FiniteSegmentModel

    # Rigid pieces are geometrically exact: geometric_stiffening changes nothing, and is passed
    # on only to be recorded (fem.segments).
    return FiniteSegmentModel(arm, segments=d.size, **_stiffening(d))


#: Backends by config name.
BACKENDS: dict[str, Backend] = {
    "amm": Backend(
        "AMM",
        SizeColumn("modes", "modes per bending plane of every flexible link.", (2,)),
        lambda names: list(dict.fromkeys(names)),
        _amm_model,
        lambda modes: modes,
    ),
    "fem": Backend(
        "FEM",
        SizeColumn(
            "elements",
            "elements per flexible link, the same count on every flexible link, uniform mesh (per-link "
            "counts and graded meshes are options of fem.FiniteElementModel, not config keys).",
            (4,),
        ),
        lambda names: list(dict.fromkeys(shapes.FAMILIES[name].frame for name in names)),
        _fem_model,
        lambda elements: 2 * elements,  # w and θ per node, two nodal values fixed by either frame
    ),
    "segments": Backend(
        "Segments",
        SizeColumn(
            "segments",
            "rigid segments per flexible link: one torsional spring EI/h per bending plane at the middle "
            "of each of the equal elements h = L/segments (fem.segments), the same count on every "
            "flexible link.",
            (8,),
            limit=MAX_SEGMENTS,
            limit_why="every segment is a rigid body of one dense chain",
        ),
        lambda names: ["clamped"] if names else [],  # the chain starts at the joint, whatever the family
        _segments_model,
        lambda segments: segments,  # one spring angle per segment and bending plane
        reference_rank=0,
    ),
}


def size_columns() -> dict[str, tuple[SizeColumn, list[str]]]:
    """The size columns of the registered backends, in registry order: name → (its declaration,
    the labels of the backends it sizes). Read at each call, so a backend registered after
    import brings its column."""
    columns: dict[str, tuple[SizeColumn, list[str]]] = {}
    for backend in BACKENDS.values():
        columns.setdefault(backend.size_column, (backend.size, []))[1].append(backend.label)
    return columns


def discretization_columns() -> tuple[str, ...]:
    """The columns that identify a case's discretization in every result table: ``backend``,
    ``shape`` and the registered backends' size columns."""
    return ("backend", "shape", *size_columns())


def discretizations(
    backends: Sequence[str],
    shape_names: Sequence[str],
    sizes: dict[str, Sequence[int]],
    stiffening: Sequence[bool | None] = (None,),
):
    """Every discretization of a sweep, backend by backend, then shape, then size, then
    geometric stiffening (so a size's cases with and without it are neighbours).

    ``sizes`` maps a size column (``"modes"``, ``"elements"``) to its list; ``stiffening``
    holds the ``geometric_stiffening`` values (None: not asked for).
    """
    return [
        Discretization(backend, shape, size, stiffened)
        for backend in backends
        for shape in BACKENDS[backend].shapes(shape_names)
        for size in sizes[BACKENDS[backend].size_column]
        for stiffened in stiffening
    ]


# -- result tables ------------------------------------------------------------


def normalize_columns(results: pd.DataFrame) -> pd.DataFrame:
    """Sizes as nullable integers (blank in CSV where a backend has none), whatever
    pandas inferred when the per-case CSVs were read back."""
    import pandas as pd

    results = results.copy()
    for column in size_columns():
        if column in results:
            results[column] = pd.array(
                [None if pd.isna(v) else int(v) for v in results[column]], dtype="Int64"
            )
    if STIFFENING_COLUMN in results:
        results[STIFFENING_COLUMN] = pd.array(
            [None if _is_blank(v) else _truth(v) for v in results[STIFFENING_COLUMN]], dtype="boolean"
        )
    return results


def sweep_columns(results: pd.DataFrame) -> list[str]:
    """The columns that identify a case's discretization in ``results``: the
    :func:`discretization_columns` and :data:`STIFFENING_COLUMN` when the study has it."""
    return [*discretization_columns(), *([STIFFENING_COLUMN] if STIFFENING_COLUMN in results else [])]


def case_keys(results: pd.DataFrame) -> pd.DataFrame:
    """One row per case: ``case`` and the :func:`sweep_columns`, in case order."""
    columns = ["case", *sweep_columns(results)]
    return results.drop_duplicates("case").sort_values("case")[columns].reset_index(drop=True)


def per_case(results: pd.DataFrame, columns: str, values: str, prefix: str) -> pd.DataFrame:
    """A wide table: the sweep columns of each case, then ``values`` spread over ``columns``
    (named ``<prefix><column value>``). Cases are the index, so blank sizes never drop rows."""
    wide = results.pivot_table(index="case", columns=columns, values=values, aggfunc="first")
    wide.columns = [f"{prefix}{c}" for c in wide.columns]
    keys = case_keys(results).set_index("case")[sweep_columns(results)]
    return keys.join(wide).reset_index(drop=True)


def label_of(row: Any) -> str:
    """The discretization label of a result row (or of a case's first row)."""
    return Discretization.from_columns(row).label


def finest_case(results: pd.DataFrame) -> int:
    """Number of the case with the most coordinates among the backends of the highest
    :attr:`Backend.reference_rank` (ties: FEM over AMM, then the later case).

    ``results`` has ``case``, ``n_dof`` and ``backend`` columns; this is the
    reference wherever no exact one exists.
    """
    cases = results.drop_duplicates("case")
    rank = cases["backend"].map(lambda name: getattr(BACKENDS.get(name), "reference_rank", 1))
    order = cases.assign(_rank=rank).sort_values(["_rank", "n_dof", "backend", "case"])
    return int(order.iloc[-1]["case"])


def joint_configuration(arm: Arm, values: Sequence[float] | None, field: str) -> np.ndarray:
    """The joint variables of a config field (default ``arm.home()``); the length is checked,
    and every value is finite and at most :data:`studies.limits.MAX_JOINT_VALUE` in magnitude
    (rad or m), as the arm's own angles and offsets."""
    if values is not None:
        for position, value in enumerate(values, start=1):
            if not abs(value) <= MAX_JOINT_VALUE:  # also NaN
                raise ValueError(
                    f"{field}[{position}]: must be in [{-MAX_JOINT_VALUE:g}, {MAX_JOINT_VALUE:g}] rad or m "
                    f"(as the arm's angles and offsets), got {value!r}"
                )
    q = arm.home() if values is None else np.asarray(values, dtype=float)
    if q.shape != (arm.n_joints,):
        raise ValueError(f"{field}: needs {counted(arm.n_joints, 'joint value')}, got {q.size}")
    return q


__all__ = [
    "BACKENDS",
    "MAX_SIZE",
    "STIFFENING_COLUMN",
    "Backend",
    "Case",
    "Discretization",
    "SizeColumn",
    "case_keys",
    "discretization_columns",
    "discretizations",
    "finest_case",
    "joint_configuration",
    "label_of",
    "normalize_columns",
    "per_case",
    "size_columns",
    "sweep_columns",
]
