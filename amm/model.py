"""The assumed-modes backend: global beam eigenfunctions as the basis of each link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import shapes
from core.arm import Arm
from core.basis import BeamBasis
from core.engine import ChainModel
from core.loads import distal_load

#: Families usable for a link of fixed length (``beta-ode`` is for translating links).
FIXED_LENGTH_FAMILIES = ("pinned-pinned", "clamped-free", "clamped-mass")


def modal_basis(family: shapes.ShapeFamily, modes: int, length: float) -> BeamBasis:
    """The first ``modes`` shapes of ``family`` on a beam of ``length`` [m], as engine basis data."""
    integrals = family.integrals(modes)
    L = float(length)

    def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eta = np.asarray(s, dtype=float) / L
        return family.evaluate(eta, modes, 0), family.evaluate(eta, modes, 1) / L

    return BeamBasis(
        length=L,
        frame="pinned" if family.name == "pinned-pinned" else "clamped",
        mass=L * integrals.mass,
        first=L * integrals.mean,
        moment=L**2 * integrals.first_moment,
        stiffness=integrals.stiffness / L**3,
        tip_value=integrals.tip_value.copy(),
        tip_slope=integrals.tip_slope / L,
        root_slope=integrals.root_slope / L,
        evaluate=evaluate,
        description=f"{family!r}, {modes} modes",
    )


class AssumedModesModel(ChainModel):
    """Flexible arm discretized with assumed modes.

    Parameters
    ----------
    arm : Arm
    shape : str
        Default shape family for every flexible link: ``"clamped-free"``,
        ``"pinned-pinned"`` or ``"clamped-mass"``.
    modes : int
        Default number of modes per bending plane.
    shapes : mapping, optional
        Per-link overrides, link number (from 1) → ``(family, modes)`` or
        ``(family, modes, params)``, e.g. ``{1: ("clamped-mass", 3)}`` or
        ``{1: ("clamped-mass", 3, {"mass_ratio": 1.0, "inertia_ratio": 0.1})}``.
    reference : array_like, optional
        Joint configuration at which the distal load of ``"clamped-mass"``
        shapes without explicit ratios is evaluated (default: all zero).
    **engine_options
        Passed to :class:`~core.engine.ChainModel` (``coulomb``, ``coulomb_velocity``).

    Notes
    -----
    ``"clamped-mass"`` without ratios takes the distal load of the link
    (:func:`core.loads.distal_load`): the mass beyond its tip and the rotary
    inertia about the tip's in-plane bending axis, so μ = M/(ρA L) and
    j = J/(ρA L³). Both bending planes of a link use the same shapes.
    """

    def __init__(
        self,
        arm: Arm,
        shape: str = "clamped-free",
        modes: int = 2,
        shapes: Mapping[int, tuple] | None = None,
        reference=None,
        **engine_options: Any,
    ) -> None:
        overrides = dict(shapes or {})
        unknown = sorted(set(overrides) - set(arm.flexible_links))
        if unknown:
            raise ValueError(
                f"shapes: links {unknown} are not flexible links (flexible: {list(arm.flexible_links)})"
            )
        self.choices: dict[int, tuple[str, int, dict]] = {}
        bases = {}
        for number in arm.flexible_links:
            spec = overrides.get(number, (shape, modes))
            name, count, params = _parse_choice(number, spec)
            link = arm.links[number - 1]
            if name == "clamped-mass" and not params:
                mass, inertia = distal_load(arm, number, reference)
                params = {
                    "mass_ratio": mass / (link.mass_per_length * link.length),
                    "inertia_ratio": inertia / (link.mass_per_length * link.length**3),
                }
            try:
                family = _family(name, params)
            except ValueError as error:
                raise ValueError(f"link {number}: {error}") from None
            self.choices[number] = (name, count, params)
            bases[number] = modal_basis(family, count, link.length)
        summary = ", ".join(f"link {k}: {n} x{c}" for k, (n, c, _) in self.choices.items())
        super().__init__(arm, bases, description=f"AMM ({summary or 'rigid'})", **engine_options)


def _family(name: str, params: dict) -> shapes.ShapeFamily:
    return shapes.family(name, **params)


def _parse_choice(number: int, spec: Any) -> tuple[str, int, dict]:
    where = f"shapes[{number}]"
    if isinstance(spec, str) or not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3):
        raise ValueError(f"{where}: expected (family, modes) or (family, modes, params), got {spec!r}")
    name, count = spec[0], spec[1]
    params = dict(spec[2]) if len(spec) == 3 else {}
    if name not in FIXED_LENGTH_FAMILIES:
        raise ValueError(
            f"{where}: family must be one of {list(FIXED_LENGTH_FAMILIES)} for a link of fixed length, got {name!r}"
        )
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"{where}: number of modes must be an integer >= 1, got {count!r}")
    return name, int(count), params
