"""Basis data: what the engine needs to know about a flexible link's discretization.

Both backends are Ritz discretizations of the same beam: the transverse
deflection in each bending plane of a flexible link is w(s, t) = Σ_k φ_k(s) δ_k(t).
For the assumed modes method the φ_k are global eigenfunctions (:mod:`shapes`);
for finite elements they are the assembled Hermite functions with the boundary
conditions applied (:mod:`fem`). The engine (:mod:`core.dynamics.engine`) never sees
which: it consumes a :class:`BeamBasis`, which holds integrals of the φ_k in
physical units (s in metres, derivatives d/ds), end values, and a function that
evaluates φ and φ' anywhere (for lumped masses).

Every quantity here is for a unit mass per length and unit bending stiffness;
the engine multiplies by ρA and EI of the link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from core.numerics.quadrature import composite_gauss

#: Frame choices: ``"clamped"`` — the link frame is tangent to the beam at the
#: joint (w(0) = w'(0) = 0); ``"pinned"`` — the frame runs along the chord joint
#: → tip (w(0) = w(L) = 0), so the hub rotates by w'(0) relative to it.
FRAMES = ("clamped", "pinned")


class _Functions:
    """What every basis shares: its size n, read off the tip values φ(L) (one per function)."""

    tip_value: np.ndarray

    @property
    def n(self) -> int:
        """Number of basis functions."""
        return int(self.tip_value.shape[0])


@dataclass(frozen=True, eq=False)
class BeamBasis(_Functions):
    """Basis functions φ_1..φ_n of one flexible link, as the engine needs them.

    Attributes
    ----------
    length : float  [m]
    frame : {"clamped", "pinned"}
    mass : matrix, shape (n, n)  [m]
        ∫₀ᴸ φ_i φ_j ds.
    first : ndarray, shape (n,)  [m]
        ∫₀ᴸ φ_i ds.
    moment : ndarray, shape (n,)  [m²]
        ∫₀ᴸ s φ_i ds.
    stiffness : matrix, shape (n, n)  [1/m³]
        ∫₀ᴸ φ_i'' φ_j'' ds (d/ds).
    tip_value, tip_slope, root_slope : ndarray, shape (n,)
        φ(L) [-], φ'(L) [1/m], φ'(0) [1/m].
    evaluate : callable
        ``evaluate(s)`` for s an array of positions [m] → (values (n, m), slopes (n, m)),
        dense ndarrays.
    description : str
        For reports, e.g. ``"clamped-free, 4 modes"``.
    deformations : operator, shape (n, n), optional
        Coordinates z with δ = T z (``deformations`` = T) in which the stiffness
        K_z = Tᵀ (∫φ''φ''ᵀ) T is known exactly and without cancellation
        (``deformation_stiffness``, a matrix). Fine element meshes need them: the
        assembled ∫φ''φ''ᵀ has entries ~1/h³ whose sums cancel to O(1) on a smooth
        mode, so its lowest eigenvalues lose ~ε N⁴ relative (:mod:`fem.eigen`).
        None: the basis stiffness itself is exact (assumed modes: diagonal β⁴).
    slope_gram : callable, optional
        ``slope_gram(weight, upper)`` → ∫₀^upper w(s) φ'(s) φ'(s)ᵀ ds (a matrix, dense or
        sparse) for the polynomial weight w(s) = Σ_k weight[k] sᵏ (degree ≤ 2), exact for
        the basis (element bases: per element). None: :func:`slope_products` integrates
        ``evaluate`` by composite Gauss quadrature. Geometric stiffening needs it (the
        axial foreshortening u(s) = −½ δᵀ H(s) δ, H(s) = ∫₀ˢ φ'φ'ᵀ).
    breaks : ndarray, optional
        Increasing positions 0 = s₀ < … < s_E = L between which every φ is a cubic polynomial
        (element bases: the nodes). The stiffened kinetic energy is then integrated exactly
        element by element (:mod:`core.dynamics.foreshortening`); None: on fine panels.

    Representation contract (what a consumer may assume)
    ----------------------------------------------------
    The vectors (``first``, ``moment``, the end values) are always 1-D ndarrays. The
    square blocks may be *structured*, so that a fine mesh costs O(n), not O(n²):

    * a **matrix** (``mass``, ``stiffness``, ``deformation_stiffness``) is a dense
      ndarray or a scipy.sparse matrix/array (banded for Hermite elements). A consumer
      may use ``.shape``, ``A @ x`` for x of shape (n,) or (n, k) (giving an ndarray),
      ``A.diagonal(k)`` (sparse) / ``np.diagonal`` (dense), scalar multiplication, and
      nothing else without :func:`dense`;
    * an **operator** (``deformations``) is any of the above or a
      ``scipy.sparse.linalg.LinearOperator``: ``.shape``, ``T @ x`` and ``T.T @ x`` for
      x of shape (n,) or (n, k), O(n) per column.

    Assumed-modes bases (a few modes) hold dense ndarrays; element bases hold sparse
    matrices and an O(n) operator. Whoever needs a dense block (the dense dynamics,
    the compiled chain, the dense eigen-solve) calls :func:`dense` (or
    :meth:`BeamBasis.dense`) once and caches the result: identical values to the
    blocks an older dense basis stored.
    """

    length: float
    frame: Literal["clamped", "pinned"]
    mass: Any
    first: np.ndarray
    moment: np.ndarray
    stiffness: Any
    tip_value: np.ndarray
    tip_slope: np.ndarray
    root_slope: np.ndarray
    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] = field(repr=False)
    description: str = ""
    deformations: Any = field(default=None, repr=False)
    deformation_stiffness: Any = field(default=None, repr=False)
    slope_gram: Callable[[tuple, float], Any] | None = field(default=None, repr=False)
    breaks: np.ndarray | None = field(default=None, repr=False)

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
        for name in ("deformations", "deformation_stiffness"):
            if getattr(self, name) is not None:
                shapes[name] = (n, n)
        for name, shape in shapes.items():
            value = getattr(self, name)
            if tuple(getattr(value, "shape", ())) != shape:
                raise ValueError(f"basis {name} must have shape {shape}, got {getattr(value, 'shape', None)}")
        for name in ("mass", "stiffness", "deformation_stiffness"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, np.ndarray) or is_sparse(value)):
                raise TypeError(
                    f"basis {name} must be an ndarray or a scipy.sparse matrix, got {type(value).__name__}"
                )
        if self.deformations is not None and not (
            isinstance(self.deformations, np.ndarray)
            or is_sparse(self.deformations)
            or _is_operator(self.deformations)
        ):
            raise TypeError(
                "basis deformations must be an ndarray, a scipy.sparse matrix or a LinearOperator, "
                f"got {type(self.deformations).__name__}"
            )

    @property
    def structured(self) -> bool:
        """Whether any block is held in structured (sparse or operator) form."""
        return any(
            value is not None and not isinstance(value, np.ndarray)
            for value in (self.mass, self.stiffness, self.deformations, self.deformation_stiffness)
        )

    def dense(self, name: str) -> np.ndarray | None:
        """Block ``name`` (``"mass"``, ``"stiffness"``, ``"deformations"``,
        ``"deformation_stiffness"``) as a dense ndarray (None if absent): O(n²) memory."""
        if name not in ("mass", "stiffness", "deformations", "deformation_stiffness"):
            raise ValueError(f"basis has no block {name!r}")
        return dense(getattr(self, name))


def is_sparse(value) -> bool:
    """A scipy.sparse matrix or array (duck-typed: SciPy is not imported for the check)."""
    return hasattr(value, "toarray") and hasattr(value, "tocsr")


def _is_operator(value) -> bool:
    return hasattr(value, "matvec") and hasattr(value, "rmatvec") and hasattr(value, "shape")


def dense(value) -> np.ndarray | None:
    """A basis block of any representation of the :class:`BeamBasis` contract as a dense
    ndarray: ndarrays unchanged (not copied), sparse matrices by ``toarray()``, operators
    applied to the identity (``T @ 1``; O(n²) memory)."""
    if value is None or isinstance(value, np.ndarray):
        return value
    if is_sparse(value):
        return value.toarray()
    if _is_operator(value):
        return np.asarray(value @ np.eye(value.shape[1]))
    return np.asarray(value)


def slope_products(basis: BeamBasis, weight: tuple = (1.0,), upper: float | None = None) -> np.ndarray:
    """∫₀^upper w(s) φ'(s) φ'(s)ᵀ ds [1/m · units of w], dense (n, n), for the polynomial weight
    w(s) = Σ_k weight[k] sᵏ (degree ≤ 2) and 0 ≤ upper ≤ L (default L).

    From ``basis.slope_gram`` when the basis provides it (exact, possibly sparse), otherwise
    by composite Gauss quadrature of ``basis.evaluate`` (panels finer than the shortest
    half-wavelength a basis of n functions resolves; ~1e-15 relative for assumed modes)."""
    upper = basis.length if upper is None else float(upper)
    weight = tuple(float(c) for c in weight)
    if upper <= 0.0:
        return np.zeros((basis.n, basis.n))
    if basis.slope_gram is not None:
        return np.asarray(dense(basis.slope_gram(weight, upper)), dtype=float)
    nodes, weights = _panel_rule(basis, upper)
    _, slopes = basis.evaluate(nodes)
    w = weights * np.polynomial.polynomial.polyval(nodes, weight)
    out = (slopes * w) @ slopes.T
    return 0.5 * (out + out.T)


def _panel_rule(basis: BeamBasis, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, weights) on [0, upper] for slope products of a basis without an exact slope
    Gram: 10 Gauss points on each of 4n + 8 panels, finer than the shortest half-wavelength n
    functions resolve (~1e-15 relative for assumed modes)."""
    return composite_gauss(np.linspace(0.0, upper, 4 * basis.n + 9), 10)


def foreshortening_at(basis: BeamBasis, uppers, planes: list[np.ndarray]) -> np.ndarray:
    """u(s) = −½ ∫₀ˢ |w'|² dσ at each s of ``uppers`` (0 ≤ s ≤ L) for the coefficients of each
    bending plane in ``planes`` (each (B, n)), shape (B, len(uppers)): −½ Σ_a δ_aᵀ H(s) δ_a with
    H = :func:`slope_products`, by quadrature of the slopes themselves. Assumed modes take the
    rule :func:`slope_products` takes; a basis with breaks 5 Gauss points per element piece
    (exact: |w'|² of cubic elements is of degree 4). H is never formed (its sparse assembly per
    point, 1.3 ms on 8 elements, was most of a stiffened mode-shape grid), and the basis is
    evaluated once for all points."""
    uppers = np.atleast_1d(np.asarray(uppers, dtype=float))
    out = np.zeros((planes[0].shape[0], uppers.size), dtype=np.result_type(*planes, float))
    rules = []
    for upper in uppers:
        if upper <= 0.0:
            rules.append((np.zeros(0), np.zeros(0)))
        elif basis.breaks is not None:
            inner = np.asarray(basis.breaks, dtype=float)
            rules.append(composite_gauss(np.append(inner[inner < upper], upper), 5))
        else:
            rules.append(_panel_rule(basis, upper))
    sizes = np.array([nodes.size for nodes, _ in rules])
    if not sizes.sum():
        return out
    _, slopes = basis.evaluate(np.concatenate([nodes for nodes, _ in rules]))
    weights = np.concatenate([w for _, w in rules])
    squares = sum((delta @ slopes) ** 2 for delta in planes) * weights  # (B, nodes)
    ends = np.cumsum(sizes)
    for point, (start, end) in enumerate(zip(ends - sizes, ends, strict=True)):
        out[:, point] = -0.5 * squares[:, start:end].sum(axis=1)
    return out


def sandwich_product(U: np.ndarray, A, V: np.ndarray | None = None) -> np.ndarray:
    """Uᵀ A V (V = U by default) for a basis block A of any representation: dense blocks as
    ``U.T @ A @ V`` (as always), structured ones as ``U.T @ (A @ V)`` (no dense A)."""
    V = U if V is None else V
    if isinstance(A, np.ndarray):
        return U.T @ A @ V
    return U.T @ np.asarray(A @ V)


@dataclass(frozen=True, eq=False)
class TranslatingBasis(_Functions):
    """Basis of the free part of a translating beam: functions of η = s/l.

    A flexible link on a prismatic joint slides through its hub; only the free
    length l (the joint variable) vibrates. Its deflection is
    w(s, t) = Σ_k ψ_k(s/l(t)) δ_k(t) for s ∈ [0, l], with fixed functions
    ψ_k(η) on [0, 1] (docs/MODEL.md, Dynamics): assumed modes whose roots were chosen at a
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
        return cls(  # a translating body is dense (its blocks scale with the free length)
            mass=dense(basis.mass),
            first=basis.first,
            moment=basis.moment,
            stiffness=dense(basis.stiffness),
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
