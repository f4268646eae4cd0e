"""Mode-shape families of uniform Euler–Bernoulli beams and their modal integrals.

>>> import shapes
>>> fam = shapes.family("clamped-mass", mass_ratio=1.0, inertia_ratio=0.1)
>>> fam.betas(3).round(6)
array([1.19567 , 2.50506 , 4.975098])

Families (registry :data:`FAMILIES`, constructor :func:`family`):

============== ========================================= =========================
name           boundary conditions                       frequency equation
============== ========================================= =========================
pinned-pinned  w = w'' = 0 at both ends (chord frame)    sin β = 0
clamped-free   w = w' = 0 at the joint, free tip         1 + cos β cosh β = 0
clamped-mass   clamped, tip mass M and rotary inertia J  see :mod:`shapes.clamped_roots`
beta-ode       clamped-mass of changing free length l    same, with μ(l), j(l)
fe-modes       clamped, tip load and lumped masses       eigenvalues of the link's
                                                         Hermite element model
============== ========================================= =========================

Inner product and normalization are described in :mod:`shapes.base`.
"""

from __future__ import annotations

import inspect
from typing import Any

from shapes.base import ModalIntegrals, ShapeFamily, TipLoad
from shapes.beta_ode import TRACKERS, BetaHistory, BetaODE
from shapes.clamped import ClampedFree, ClampedMass
from shapes.fe_modes import FeModes
from shapes.pinned_pinned import PinnedPinned

#: Shape families by registry name: the built-in ones; a new family is a module in this
#: package and one more entry (``FAMILIES[name] = cls``, as the other registries).
FAMILIES: dict[str, type[ShapeFamily]] = {
    "clamped-free": ClampedFree,
    "clamped-mass": ClampedMass,
    "beta-ode": BetaODE,
    "fe-modes": FeModes,
    "pinned-pinned": PinnedPinned,
}


def fixed_length_families() -> list[str]:
    """Registered families a link of fixed length can use (every family with fixed ratios)."""
    return [name for name, cls in FAMILIES.items() if not cls.tracks_length]


def translating_families() -> list[str]:
    """Families a translating link can use: clamped at the hub exit (fixed on η = s/l, or
    following the free length)."""
    return [name for name, cls in FAMILIES.items() if cls.frame == "clamped" and cls.translating]


def family(name: str, **params: Any) -> ShapeFamily:
    """Construct the shape family registered as ``name`` with its parameters.

    Raises
    ------
    ValueError
        For an unknown name, a missing or unknown parameter, or a parameter
        value the family rejects.
    """
    if name not in FAMILIES:
        raise ValueError(f"unknown shape family {name!r}; choose one of {sorted(FAMILIES)}")
    cls = FAMILIES[name]
    signature = inspect.signature(cls.__init__)
    accepted = [p for p in signature.parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"shape family {name!r}: unknown parameter(s) {unknown}; accepted: {accepted}")
    missing = [
        p for p in accepted if signature.parameters[p].default is inspect.Parameter.empty and p not in params
    ]
    if missing:
        raise ValueError(f"shape family {name!r}: missing parameter(s) {missing}")
    return cls(**params)


__all__ = [
    "FAMILIES",
    "TRACKERS",
    "BetaHistory",
    "BetaODE",
    "ClampedFree",
    "ClampedMass",
    "FeModes",
    "ModalIntegrals",
    "PinnedPinned",
    "ShapeFamily",
    "TipLoad",
    "family",
    "fixed_length_families",
    "translating_families",
]
