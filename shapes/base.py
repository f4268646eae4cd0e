"""The contract every mode-shape family fulfils, and the modal integrals.

A family describes the transverse free vibration of a uniform Euler–Bernoulli
beam of length L with particular boundary conditions, on the normalized
coordinate η = s/L ∈ [0, 1]::

    φ''''(η) = β⁴ φ(η),   ω = β² √(EI / (ρA L⁴))

where β (written ``beta``) is the dimensionless root β·L of the family's
frequency equation. Shapes are mass-orthonormal in the family's inner product

    ⟨φ_i, φ_j⟩ = ∫₀¹ φ_i φ_j dη + μ φ_i(1) φ_j(1) + j φ_i'(1) φ_j'(1) = δ_ij

with μ = M/(ρA L), j = J/(ρA L³) the tip mass and tip rotary inertia ratios
(both zero except for the clamped-mass family). With the same boundary
conditions the stiffness integrals are then diagonal,
∫₀¹ φ_i'' φ_j'' dη = β_i⁴ δ_ij.

Subclasses set ``name`` and ``frame`` and implement five hooks:

``_roots(n)``
    the first ``n`` roots β_k, strictly increasing;
``_coefficients_for(betas)``
    whatever per-mode data ``_evaluate`` needs, computed once and cached;
``_slice_coefficients(coefficients, n)``
    those data for the first ``n`` modes;
``_evaluate(eta, betas, coefficients, derivative)``
    d^m φ_k/dη^m at the points ``eta`` for each mode, shape (n, len(eta));
``_boundary_residuals(betas, coefficients)``
    relative residuals of the four boundary conditions, shape (n, 4).

What a family needs from the arm it declares itself, so a model keys nothing on its
name: ``needs_tip_load`` (the model then hands it the link's :class:`TipLoad`),
:meth:`ShapeFamily.link_parameters` (its constructor parameters on one link),
:meth:`ShapeFamily.follower` (shapes that follow a translating link's free length) and
``tracks_length`` (only translating links may use it). ``parameters`` gives the
constructor parameters back, from which ``repr``, equality and hashing follow.

The public methods validate arguments, cache, and slice: the first ``n`` modes
of a family never depend on how many modes were asked for before, so the
n-mode basis is always the leading part of the (n+k)-mode basis.
"""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from core.numerics import validation as check
from core.numerics.quadrature import gauss_rule


@dataclass(frozen=True)
class ModalIntegrals:
    """Integrals of the first ``n`` shape functions of a family on η ∈ [0, 1].

    All are dimensionless (per unit length of the normalized beam); the engine
    scales them with ρA, EI and powers of L.

    Attributes
    ----------
    betas : ndarray, shape (n,)
        Roots β_k·L.
    mass : ndarray, shape (n, n)
        ∫ φ_i φ_j dη — the beam alone, without the tip terms of the inner
        product (for clamped-mass shapes this is *not* the identity: the tip
        load is added by the engine from the bodies that actually sit there).
    stiffness : ndarray, shape (n, n)
        ∫ φ_i'' φ_j'' dη.
    slope_products : ndarray, shape (n, n)
        ∫ φ_i' φ_j' dη (geometric stiffening, axial foreshortening).
    mean : ndarray, shape (n,)
        ∫ φ_i dη.
    first_moment : ndarray, shape (n,)
        ∫ η φ_i dη.
    tip_value, tip_slope, root_slope : ndarray, shape (n,)
        φ_i(1), φ_i'(1) and φ_i'(0).
    """

    betas: np.ndarray
    mass: np.ndarray
    stiffness: np.ndarray
    slope_products: np.ndarray
    mean: np.ndarray
    first_moment: np.ndarray
    tip_value: np.ndarray
    tip_slope: np.ndarray
    root_slope: np.ndarray

    @property
    def n(self) -> int:
        """Number of modes."""
        return int(self.betas.size)


def check_modes(n: Any) -> int:
    """A number of modes: an integer >= 1 (ValueError naming it otherwise)."""
    return check.integer(n, "", "number of modes", minimum=1)


def check_eta(eta: Any) -> np.ndarray:
    """Points η = s/L of a shape evaluation as a 1-D float array (checked)."""
    points = np.atleast_1d(np.asarray(eta, dtype=float))
    if points.ndim != 1:
        raise ValueError(f"eta must be a scalar or a 1-D array, got shape {points.shape}")
    if not np.all(np.isfinite(points)):
        raise ValueError("eta must be finite")
    # Allow round-off just outside the beam (e.g. s/L computed as 1 + 1e-16).
    if points.size and (points.min() < -1e-12 or points.max() > 1.0 + 1e-12):
        raise ValueError(f"eta must lie in [0, 1], got values in [{points.min():g}, {points.max():g}]")
    return np.clip(points, 0.0, 1.0)


def _gram_matrix(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_q w_q f_i(x_q) f_j(x_q), symmetric to the last bit."""
    gram = (values * weights) @ values.T
    return 0.5 * (gram + gram.T)


@dataclass(frozen=True)
class TipLoad:
    """What a link carries beyond its tip, as a model hands it to a family that
    ``needs_tip_load`` (the assumed-modes backend: :func:`core.arm.loads.distal_load`).

    Attributes
    ----------
    mass : float
        M [kg] beyond the tip.
    inertia : float
        J [kg m²] about the tip's in-plane bending axis.
    mass_per_length : float
        ρA [kg/m] of the link.
    length : float
        The length L [m] the shapes are built for (a translating link's reference free length).
    lumped : tuple of (float, float, float)
        The link's own lumped masses along its span, (position s [m], mass [kg], rotary
        inertia [kg m²]) each (:class:`core.arm.LumpedMass`); empty by default.
    moment : float
        S [kg m], the first moment of the mass beyond the tip along the link's axis
        (:func:`core.arm.loads.distal_static_moment`): it couples the tip deflection and
        slope of a rigid distal body; 0 by default (clamped-mass leaves it out).
    """

    mass: float
    inertia: float
    mass_per_length: float
    length: float
    lumped: tuple[tuple[float, float, float], ...] = ()
    moment: float = 0.0

    @property
    def mass_ratio(self) -> float:
        """μ = M/(ρA L)."""
        return self.mass / (self.mass_per_length * self.length)

    @property
    def inertia_ratio(self) -> float:
        """j = J/(ρA L³)."""
        return self.inertia / (self.mass_per_length * self.length**3)

    @property
    def moment_ratio(self) -> float:
        """s = S/(ρA L²)."""
        return self.moment / (self.mass_per_length * self.length**2)

    @property
    def lumped_ratios(self) -> tuple[tuple[float, float, float], ...]:
        """The lumped masses as (η = s/L, m/(ρA L), J/(ρA L³)) each."""
        rho, L = self.mass_per_length, self.length
        return tuple((s / L, m / (rho * L), J / (rho * L**3)) for s, m, J in self.lumped)


class ShapeFamily(ABC):
    """A family of beam mode shapes; see the module docstring for the contract.

    A new family is one module in ``shapes/`` and one entry of ``shapes.FAMILIES``.
    """

    #: Registry name, e.g. ``"clamped-free"``.
    name: ClassVar[str]
    #: The link frame the boundary conditions imply (docs/MODEL.md, Finite elements), one of
    #: ``core.dynamics.basis.FRAMES``: ``"clamped"`` (w = w' = 0 at the joint, frame
    #: tangent to the beam) or ``"pinned"`` (w = 0 at both ends, chord frame).
    #: The FEM frame that reproduces a family is this value.
    frame: ClassVar[str]
    #: True for a family whose shapes follow a changing free length (built from
    #: physical tip data and a length, not from fixed ratios): only translating links
    #: use it; models choose the shapes of fixed-length links from the others.
    tracks_length: ClassVar[bool] = False
    #: True for a family whose shapes depend on the load beyond the link's tip: a model
    #: hands :meth:`link_parameters` and :meth:`follower` the link's :class:`TipLoad`.
    needs_tip_load: ClassVar[bool] = False
    #: False for a clamped family a translating link may not use (its shapes are built for
    #: one fixed link, e.g. from the link's own element model).
    translating: ClassVar[bool] = True

    def __init__(self) -> None:
        self._betas = np.empty(0)
        self._coefficients: Any = None
        self._integrals: dict[int, ModalIntegrals] = {}

    @classmethod
    def link_parameters(cls, parameters: dict[str, Any], load: TipLoad | None) -> dict[str, Any]:
        """The constructor parameters of this family on one link: by default the ones the
        model was given for it. ``load`` is the link's tip load when ``needs_tip_load``
        (else None); a family that takes its shapes from the arm derives them from it."""
        return parameters

    def follower(self, load: TipLoad | None, modes: int, tracker: str, lengths: tuple[float, float]) -> Any:
        """Shapes that follow a translating link's free length, or None: the shapes of this
        family stay fixed on η = s/l (the default).

        Parameters
        ----------
        load : TipLoad or None
            The link's tip load (``needs_tip_load``), at its reference free length.
        modes : int
            Number of modes per bending plane.
        tracker : str
            The model's tracker (``amm.model.TRACKER_CHOICES``): ``"frozen"`` or how the
            roots follow the length (:data:`shapes.following.TRACKERS`).
        lengths : (float, float)
            Free lengths [m] a ``"table"`` tracker spans.

        Returns
        -------
        :class:`shapes.following.LengthFollowing` or None
        """
        return None

    @property
    def parameters(self) -> dict[str, Any]:
        """The constructor parameters of this family (none by default)."""
        return {}

    def __repr__(self) -> str:
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.parameters.items())
        return f"{type(self).__name__}({arguments})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.parameters == self.parameters

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.parameters.items())))

    # -- tip terms of the inner product (zero unless the family has a tip load)
    @property
    def mass_ratio(self) -> float:
        """μ = M/(ρA L) in the inner product."""
        return 0.0

    @property
    def inertia_ratio(self) -> float:
        """j = J/(ρA L³) in the inner product."""
        return 0.0

    # -- hooks ------------------------------------------------------------
    @abstractmethod
    def _roots(self, n: int) -> np.ndarray:
        """The first ``n`` roots β_k, strictly increasing."""

    @abstractmethod
    def _coefficients_for(self, betas: np.ndarray) -> Any:
        """Per-mode data for ``_evaluate`` (normalized, sign fixed)."""

    @abstractmethod
    def _evaluate(self, eta: np.ndarray, betas: np.ndarray, coefficients: Any, derivative: int) -> np.ndarray:
        """d^m φ/dη^m, shape (len(betas), len(eta))."""

    @abstractmethod
    def _boundary_residuals(self, betas: np.ndarray, coefficients: Any) -> np.ndarray:
        """Relative residuals of the four boundary conditions, shape (n, 4)."""

    @abstractmethod
    def _slice_coefficients(self, coefficients: Any, n: int) -> Any:
        """The coefficients of the first ``n`` modes."""

    # -- public interface -------------------------------------------------
    def _ensure(self, n: int) -> tuple[np.ndarray, Any]:
        n = check_modes(n)
        if self._betas.size < n:
            betas = np.asarray(self._roots(n), dtype=float)
            if betas.shape != (n,) or not np.all(np.diff(betas) > 0) or betas[0] <= 0:
                raise RuntimeError(f"{self!r}: root finder returned invalid roots {betas[:5]}...")
            betas.setflags(write=False)
            self._betas = betas
            self._coefficients = self._coefficients_for(betas)
        return self._betas[:n], self._slice_coefficients(self._coefficients, n)

    def betas(self, n: int) -> np.ndarray:
        """The first ``n`` roots β_k·L of the frequency equation, ascending.

        Returns
        -------
        ndarray, shape (n,)
        """
        return self._ensure(n)[0].copy()

    def evaluate(self, eta: Any, n: int, derivative: int = 0) -> np.ndarray:
        """Shape functions or their derivatives with respect to η.

        Parameters
        ----------
        eta : float or array_like, shape (m,)
            Points η = s/L in [0, 1].
        n : int
            Number of modes.
        derivative : int
            Order of the η-derivative (0 … 4; 4 gives β⁴ φ).

        Returns
        -------
        ndarray, shape (n, m)
            ``out[k, i]`` = d^derivative φ_{k+1} / dη^derivative at ``eta[i]``.
            Derivatives with respect to s are ``out / L**derivative``.
        """
        order = operator.index(derivative)
        if not 0 <= order <= 4:
            raise ValueError(f"derivative must be 0, 1, 2, 3 or 4, got {order}")
        betas, coefficients = self._ensure(n)
        return self._evaluate(check_eta(eta), betas, coefficients, order)

    def frequencies(self, n: int, *, EI: float, mass_per_length: float, length: float) -> np.ndarray:
        """Natural frequencies ω_k = β_k² √(EI / (ρA L⁴)) [rad/s], shape (n,)."""
        for field, value in (("EI", EI), ("mass_per_length", mass_per_length), ("length", length)):
            check.positive(value, "", field)
        return self.betas(n) ** 2 * np.sqrt(EI / (mass_per_length * length**4))

    def boundary_residuals(self, n: int) -> np.ndarray:
        """Relative residuals of the boundary conditions, shape (n, 4).

        Each entry is |lhs − rhs| divided by the natural scale of that
        condition (β^m for an m-th derivative of a unit-normalized shape, plus
        the magnitude of any tip-load term), so that 1e-10 means "satisfied to
        ten digits" for every mode number.
        """
        betas, coefficients = self._ensure(n)
        return self._boundary_residuals(betas, coefficients)

    def integrals(self, n: int) -> ModalIntegrals:
        """Modal integrals of the first ``n`` modes (cached); see :class:`ModalIntegrals`."""
        n = check_modes(n)
        if n not in self._integrals:
            betas, _ = self._ensure(n)
            nodes, weights = gauss_rule(betas[-1])
            phi = self.evaluate(nodes, n, 0)
            slope = self.evaluate(nodes, n, 1)
            curvature = self.evaluate(nodes, n, 2)
            ends = np.array([0.0, 1.0])
            end_values = self.evaluate(ends, n, 0)
            end_slopes = self.evaluate(ends, n, 1)
            result = ModalIntegrals(
                betas=betas.copy(),
                mass=_gram_matrix(phi, weights),
                stiffness=_gram_matrix(curvature, weights),
                slope_products=_gram_matrix(slope, weights),
                mean=phi @ weights,
                first_moment=phi @ (weights * nodes),
                tip_value=end_values[:, 1].copy(),
                tip_slope=end_slopes[:, 1].copy(),
                root_slope=end_slopes[:, 0].copy(),
            )
            for value in vars(result).values():
                value.setflags(write=False)
            self._integrals[n] = result
        return self._integrals[n]

    def weighted_slope_products(self, n: int, weight: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """∫₀¹ w(η) φ_i'(η) φ_j'(η) dη for a smooth weight ``w``, shape (n, n).

        Used for geometric (centrifugal) stiffening, e.g. ``w = lambda e: (1 - e**2) / 2``
        for a beam spinning about its root, or ``w = lambda e: 1 - e`` for the
        kinetic energy of the axial foreshortening.
        """
        betas, _ = self._ensure(n)
        nodes, weights = gauss_rule(betas[-1])
        slope = self.evaluate(nodes, n, 1)
        w = np.broadcast_to(np.asarray(weight(nodes), dtype=float), nodes.shape)
        return _gram_matrix(slope, weights * w)

    def inner_product_matrix(self, n: int) -> np.ndarray:
        """⟨φ_i, φ_j⟩ including the tip terms, shape (n, n); the identity by construction."""
        m = self.integrals(n)
        return (
            m.mass
            + self.mass_ratio * np.outer(m.tip_value, m.tip_value)
            + self.inertia_ratio * np.outer(m.tip_slope, m.tip_slope)
        )
