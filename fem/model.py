"""The finite-element backend: Hermite elements as the basis of each flexible link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.arm import Arm
from core.dynamics.basis import FRAMES, TranslatingBasis
from core.dynamics.engine import ChainModel
from fem.assembly import element_basis
from fem.mesh import graded_mesh, uniform_mesh


class FiniteElementModel(ChainModel):
    """Flexible arm discretized with Euler–Bernoulli Hermite elements.

    Parameters
    ----------
    arm : Arm
    elements : int or mapping
        Elements per flexible link; a mapping link number (from 1) → count
        overrides per link, e.g. ``{2: 16}`` (others get ``default_elements``).
    frame : {"clamped", "pinned"} or mapping
        Boundary conditions / frame choice, per link if a mapping.
    grading : float or mapping
        Element size ratio of a geometrically graded mesh (1: uniform).
    default_elements : int
        Elements for links not named in an ``elements`` mapping.
    **engine_options
        Passed to :class:`~core.dynamics.engine.ChainModel`.

    Lumped masses and payloads need no node where they sit: the engine
    evaluates the element interpolation there, which is exact for a point load.

    On a translating link the elements span the free length l (docs/MODEL.md, Finite elements): the
    mesh lives on η = s/l, so the element matrices scale with l, and the slope
    coordinates are dw/dη (= l · dw/ds).
    """

    def __init__(
        self,
        arm: Arm,
        elements: int | Mapping[int, int] = 8,
        frame: str | Mapping[int, str] = "clamped",
        grading: float | Mapping[int, float] = 1.0,
        default_elements: int = 8,
        **engine_options: Any,
    ) -> None:
        counts = arm.per_flexible_link("elements", elements, default_elements)
        frames = arm.per_flexible_link("frame", frame, "clamped")
        gradings = arm.per_flexible_link("grading", grading, 1.0)
        bases = {}
        for number in arm.flexible_links:
            if frames[number] not in FRAMES:
                raise ValueError(f"frame[{number}]: must be one of {FRAMES}, got {frames[number]!r}")
            translating = number in arm.translating_links
            if translating and frames[number] != "clamped":
                raise ValueError(
                    f"frame[{number}]: a translating link is clamped at the hub exit, got {frames[number]!r}"
                )
            # A translating link: the elements span the free length, η = s/l ∈ [0, 1].
            length = 1.0 if translating else arm.links[number - 1].length
            try:
                nodes = (
                    uniform_mesh(length, counts[number])
                    if gradings[number] == 1.0
                    else graded_mesh(length, counts[number], gradings[number])
                )
            except ValueError as error:
                raise ValueError(f"link {number}: {error}") from None
            basis = element_basis(nodes, frames[number])
            bases[number] = TranslatingBasis.from_unit(basis, nodes, points=5) if translating else basis
        self.elements = counts
        self.frames = frames
        summary = ", ".join(f"link {k}: {counts[k]} el. {frames[k]}" for k in arm.flexible_links)
        super().__init__(arm, bases, description=f"FEM ({summary or 'rigid'})", **engine_options)


__all__ = ["FiniteElementModel"]
