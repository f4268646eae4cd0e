"""Basis data: what the engine needs to know about a flexible link's discretization.

Both backends are Ritz discretizations of the same beam: the transverse
deflection in each bending plane of a flexible link is w(s, t) = Σ_k φ_k(s) δ_k(t).
For the assumed modes method the φ_k are global eigenfunctions (:mod:`shapes`);
for finite elements they are the assembled Hermite functions with the boundary
conditions applied (:mod:`fem`). The engine (:mod:`core.engine`) never sees
which: it consumes a :class:`BeamBasis`, which holds integrals of the φ_k in
physical units (s in metres, derivatives d/ds), end values, and a function that
evaluates φ and φ' anywhere (for lumped masses).

Every quantity here is for a unit mass per length and unit bending stiffness;
the engine multiplies by ρA and EI of the link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

#: Frame choices: ``"clamped"`` — the link frame is tangent to the beam at the
#: joint (w(0) = w'(0) = 0); ``"pinned"`` — the frame runs along the chord joint
#: → tip (w(0) = w(L) = 0), so the hub rotates by w'(0) relative to it.
FRAMES = ("clamped", "pinned")


@dataclass(frozen=True, eq=False)
class BeamBasis:
    """Basis functions φ_1..φ_n of one flexible link, as the engine needs them.

    Attributes
    ----------
    length : float  [m]
    frame : {"clamped", "pinned"}
    mass : ndarray, shape (n, n)  [m]
        ∫₀ᴸ φ_i φ_j ds.
    first : ndarray, shape (n,)  [m]
        ∫₀ᴸ φ_i ds.
    moment : ndarray, shape (n,)  [m²]
        ∫₀ᴸ s φ_i ds.
    stiffness : ndarray, shape (n, n)  [1/m³]
        ∫₀ᴸ φ_i'' φ_j'' ds (d/ds).
    tip_value, tip_slope, root_slope : ndarray, shape (n,)
        φ(L) [-], φ'(L) [1/m], φ'(0) [1/m].
    evaluate : callable
        ``evaluate(s)`` for s an array of positions [m] → (values (n, m), slopes (n, m)).
    description : str
        For reports, e.g. ``"clamped-free, 4 modes"``.
    """

    length: float
    frame: Literal["clamped", "pinned"]
    mass: np.ndarray
    first: np.ndarray
    moment: np.ndarray
    stiffness: np.ndarray
    tip_value: np.ndarray
    tip_slope: np.ndarray
    root_slope: np.ndarray
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] = field(repr=False)
    description: str = ""

    def __post_init__(self) -> None:
        if self.frame not in FRAMES:
            raise ValueError(f"basis frame must be one of {FRAMES}, got {self.frame!r}")
        n = self.tip_value.shape[0]
        shapes = {
            "mass": (n, n), "first": (n,), "moment": (n,), "stiffness": (n, n),
            "tip_slope": (n,), "root_slope": (n,),
        }
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"basis {name} must have shape {shape}, got {getattr(self, name).shape}")

    @property
    def n(self) -> int:
        """Number of basis functions."""
        return int(self.tip_value.shape[0])
