"""Discretizations and the backend registry: one sweep case → one model.

A :class:`Discretization` says how an arm is discretized (backend, shape
family or frame, modes or elements per flexible link, builder options); a
:class:`Case` numbers it within a study. :data:`BACKENDS` maps a backend name
to a :class:`Backend`, which builds the model and names the sweep field of its
size. Everything else (config validation, case expansion, CSV columns, labels,
convergence fits) derives from this registry, so a new backend is one
:func:`register_backend` call::

    register_backend(Backend("amm", "AMM", "modes", build_amm, shape_of=lambda family: family))

The CSV columns users see stay ``backend, shape, modes, elements``
(:data:`SWEEP_COLUMNS`); the size field a backend does not use holds 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from core.arm import Arm
from core.model import Model

#: The size fields of ``[sweep]``: what a backend counts per flexible link.
SIZE_FIELDS = ("modes", "elements")
#: The columns that identify a discretization in every results table (after ``case``).
SWEEP_COLUMNS = ("backend", "shape", *SIZE_FIELDS)


@dataclass(frozen=True)
class Discretization:
    """How one model of an arm is discretized.

    Attributes
    ----------
    backend : str
        A key of :data:`BACKENDS`.
    shape : str
        The AMM shape family, or the FEM frame (``"clamped"`` / ``"pinned"``).
    size : int
        Modes (AMM) or elements (FEM) per flexible link, >= 1.
    options : tuple of (str, object)
        Extra keyword arguments for the backend's builder, as sorted pairs (hashable).
    """

    backend: str
    shape: str
    size: int
    options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend: must be one of {sorted(BACKENDS)}, got {self.backend!r}")
        if isinstance(self.size, bool) or not isinstance(self.size, (int, np.integer)) or self.size < 1:
            raise ValueError(f"size: must be an integer >= 1, got {self.size!r}")

    @property
    def entry(self) -> Backend:
        return BACKENDS[self.backend]

    @property
    def label(self) -> str:
        """E.g. ``"AMM clamped-free x3"``, ``"FEM pinned x8"``."""
        return f"{self.entry.title} {self.shape} x{self.size}"

    def columns(self) -> dict[str, Any]:
        """The :data:`SWEEP_COLUMNS` of this discretization (the unused size field is 0)."""
        sizes = {name: self.size if name == self.entry.size_field else 0 for name in SIZE_FIELDS}
        return {"backend": self.backend, "shape": self.shape, **sizes}

    @classmethod
    def from_columns(cls, row: Mapping[str, Any]) -> Discretization:
        """The discretization a results row (with :data:`SWEEP_COLUMNS`) describes."""
        backend = str(row["backend"])
        if backend not in BACKENDS:
            raise ValueError(f"backend: must be one of {sorted(BACKENDS)}, got {backend!r}")
        return cls(backend, str(row["shape"]), int(row[BACKENDS[backend].size_field]))

    def build(self, arm: Arm, reference: np.ndarray | None = None) -> Model:
        """The model of ``arm``; ``reference`` [rad, m] are joint variables a backend may expand about."""
        return self.entry.build(arm, self, reference)


@dataclass(frozen=True)
class Case:
    """One independent case of a sweep: its number (from 1) and its discretization."""

    number: int
    discretization: Discretization

    def columns(self) -> dict[str, Any]:
        """``case`` and the :data:`SWEEP_COLUMNS`: the first columns of every row a case produces."""
        return {"case": self.number, **self.discretization.columns()}


@dataclass(frozen=True)
class Backend:
    """A registered way of discretizing the flexible links.

    Attributes
    ----------
    name : str
        Registry key, as written in ``sweep.backends``.
    title : str
        Label prefix in reports, e.g. ``"AMM"``.
    size_field : {"modes", "elements"}
        The ``[sweep]`` list the backend's sizes come from.
    build : callable
        ``build(arm, discretization, reference) -> Model``.
    shape_of : callable
        Requested shape family (``sweep.shapes``) → the ``shape`` of the case: the family
        itself (AMM) or the frame it implies (FEM). Equal results collapse into one case.
    """

    name: str
    title: str
    size_field: Literal["modes", "elements"]
    build: Callable[[Arm, Discretization, np.ndarray | None], Model]
    shape_of: Callable[[str], str] = field(default=lambda family: family)

    def __post_init__(self) -> None:
        if self.size_field not in SIZE_FIELDS:
            raise ValueError(f"size_field: must be one of {SIZE_FIELDS}, got {self.size_field!r}")


#: Backends by name.
BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Add ``backend`` to :data:`BACKENDS` (its name must be new); returns it."""
    if backend.name in BACKENDS:
        raise ValueError(f"backend {backend.name!r} is already registered")
    BACKENDS[backend.name] = backend
    return backend


def _build_amm(arm: Arm, discretization: Discretization, reference: np.ndarray | None) -> Model:
    from amm import AssumedModesModel

    return AssumedModesModel(
        arm,
        shape=discretization.shape,
        modes=discretization.size,
        reference=reference,
        **dict(discretization.options),
    )


def _build_fem(arm: Arm, discretization: Discretization, reference: np.ndarray | None) -> Model:
    from fem import FiniteElementModel

    return FiniteElementModel(
        arm, elements=discretization.size, frame=discretization.shape, **dict(discretization.options)
    )


def _fem_frame(family: str) -> str:
    import shapes

    return shapes.FAMILIES[family].frame


register_backend(Backend("amm", "AMM", "modes", _build_amm))
register_backend(Backend("fem", "FEM", "elements", _build_fem, shape_of=_fem_frame))


def finest_case(results) -> int:
    """Number of the case with the most coordinates (ties: FEM over AMM, then the later case).

    ``results`` is a DataFrame with ``case``, ``n_dof`` and ``backend`` columns;
    this is the reference wherever no exact one exists.
    """
    order = results.drop_duplicates("case").sort_values(["n_dof", "backend", "case"])
    return int(order.iloc[-1]["case"])


def discretization_label(row: Mapping[str, Any]) -> str:
    """The label of the discretization a results row (or case columns) describes."""
    return Discretization.from_columns(row).label
