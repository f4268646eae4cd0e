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

from shapes.quadrature import composite_gauss

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
    deformations, deformation_stiffness : ndarray, shape (n, n), optional
        Coordinates z with δ = T z (``deformations`` = T) in which the stiffness
        K_z = Tᵀ (∫φ''φ''ᵀ) T is known exactly and without cancellation
        (``deformation_stiffness``). Fine element meshes need them: the
        assembled ∫φ''φ''ᵀ has entries ~1/h³ whose sums cancel to O(1) on a smooth
        mode, so its lowest eigenvalues lose ~ε N⁴ relative (:mod:`fem.eigen`).
        None: the basis stiffness itself is exact (assumed modes: diagonal β⁴).
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
    deformations: np.ndarray | None = field(default=None, repr=False)
    deformation_stiffness: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.frame not in FRAMES:
            raise ValueError(f"basis frame must be one of {FRAMES}, got {self.frame!r}")
        n = self.tip_value.shape[0]
        shapes = {
            "mass": (n, n),
            "first": (n,),
            "moment": (n,),
            "stiffness": (n, n),
            "tip_slope": (n,),
            "root_slope": (n,),
        }
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"basis {name} must have shape {shape}, got {getattr(self, name).shape}")

    @property
    def n(self) -> int:
        """Number of basis functions."""
        return int(self.tip_value.shape[0])


@dataclass(frozen=True, eq=False)
class TranslatingBasis:
    """Basis of the free part of a translating beam: functions of η = s/l.

    A flexible link on a prismatic joint slides through its hub; only the free
    length l (the joint variable) vibrates. Its deflection is
    w(s, t) = Σ_k ψ_k(s/l(t)) δ_k(t) for s ∈ [0, l], with fixed functions
    ψ_k(η) on [0, 1] (SPEC §4): assumed modes whose roots were chosen at a
    reference length, or Hermite elements spanning the free length (their slope
    coordinates are then dw/dη). At fixed s the shapes change with l,
    ∂φ/∂l = −(η/l) ψ'(η), which is where the integrals of ψ' below come from.

    Every attribute is an integral over η ∈ [0, 1] of the unit-length functions
    (ψ' = dψ/dη); the engine scales them with powers of l, so everything it
    builds is complex-analytic in l.

    Attributes
    ----------
    mass, first, moment, stiffness : ∫ψψᵀ, ∫ψ, ∫ηψ, ∫ψ''ψ''ᵀ
    slope_first : ∫ηψ'   (n,)
    slope_second : ∫η²ψ'   (n,)
    cross : ∫η ψ ψ'ᵀ   (n, n)
    slope_mass : ∫η² ψ'ψ'ᵀ   (n, n)
    tip_value, tip_slope, root_slope : ψ(1), ψ'(1), ψ'(0)
    evaluate : callable
        ``evaluate(eta)`` → (ψ (n, m), ψ' (n, m)).
    reference_length : float or None
        The free length [m] at which the shapes were chosen (assumed modes).
    description : str
    follow : object or None
        Length-following shapes (:class:`shapes.following.LengthFollowing`): the
        shapes are ψ(η; l), and every integral above is taken at the current free
        length from ``follow.taylor(l)`` (with its derivatives in l), the velocity
        shape of l̇ being g = −ηψ' + l ∂ψ/∂l|_η instead of −ηψ'. None: the shapes are
        frozen and the attributes above are all there is.
    """

    mass: np.ndarray
    first: np.ndarray
    moment: np.ndarray
    stiffness: np.ndarray
    slope_first: np.ndarray
    slope_second: np.ndarray
    cross: np.ndarray
    slope_mass: np.ndarray
    tip_value: np.ndarray
    tip_slope: np.ndarray
    root_slope: np.ndarray
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] = field(repr=False)
    reference_length: float | None = None
    description: str = ""
    follow: object | None = field(default=None, repr=False)

    frame = "clamped"

    @property
    def n(self) -> int:
        """Number of basis functions."""
        return int(self.tip_value.shape[0])

    @classmethod
    def from_unit(
        cls,
        basis: BeamBasis,
        breakpoints: np.ndarray,
        *,
        reference_length: float | None = None,
        points: int = 8,
        follow: object | None = None,
    ) -> TranslatingBasis:
        """The translating basis of a clamped unit-length :class:`BeamBasis`.

        The four integrals of ψ' are computed with a composite Gauss–Legendre
        rule of ``points`` points on each interval between ``breakpoints``
        (0 … 1): exact for Hermite elements when the breakpoints are the nodes
        (polynomials of degree ≤ 8), and converged for smooth mode shapes when
        every interval holds at most about one half-wave.
        """
        if basis.frame != "clamped":
            raise ValueError(
                f"a translating link needs a clamped basis (the beam leaves the hub tangent to it), got {basis.frame!r}"
            )
        if not np.isclose(basis.length, 1.0, rtol=1e-14):
            raise ValueError(f"translating basis: expected a unit-length basis, got length {basis.length!r}")
        eta, weights = composite_gauss(breakpoints, points)
        psi, slope = basis.evaluate(eta)
        return cls(
            mass=basis.mass,
            first=basis.first,
            moment=basis.moment,
            stiffness=basis.stiffness,
            slope_first=slope @ (weights * eta),
            slope_second=slope @ (weights * eta**2),
            cross=(psi * weights * eta) @ slope.T,
            slope_mass=(slope * weights * eta**2) @ slope.T,
            tip_value=basis.tip_value,
            tip_slope=basis.tip_slope,
            root_slope=basis.root_slope,
            evaluate=basis.evaluate,
            reference_length=reference_length,
            description=f"{basis.description}, on the free length"
            + (f", following the length ({follow.tracker} roots)" if follow is not None else ""),
            follow=follow,
        )

    def unit_integrals(self) -> dict[str, np.ndarray]:
        """The frozen shapes' integrals under the names of ``LengthFollowing.taylor``
        (g = −ηψ': ``rate_first`` = −∫ηψ', ``rate_second`` = −∫η²ψ', ``rate_cross`` =
        −∫ηψψ'ᵀ, ``rate_mass`` = ∫η²ψ'ψ'ᵀ)."""
        return {
            "mass": self.mass,
            "first": self.first,
            "moment": self.moment,
            "stiffness": self.stiffness,
            "tip_value": self.tip_value,
            "tip_slope": self.tip_slope,
            "rate_first": -self.slope_first,
            "rate_second": -self.slope_second,
            "rate_cross": -self.cross,
            "rate_mass": self.slope_mass,
        }
