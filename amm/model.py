"""The assumed-modes backend: global beam eigenfunctions as the basis of each link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import shapes
from core.arm import Arm
from core.arm.loads import distal_load
from core.dynamics.basis import BeamBasis, TranslatingBasis
from core.dynamics.engine import ChainModel
from core.dynamics.kinematics import check_free_length
from core.numerics import validation as check
from core.numerics.quadrature import EXTRA_PANELS, POINTS_PER_PANEL, composite_gauss
from shapes import fixed_length_families, translating_families


def translating_basis(
    family: shapes.ShapeFamily, modes: int, reference_length: float, follow=None
) -> TranslatingBasis:
    """The first ``modes`` shapes of ``family`` as functions of η = s/l on a translating link
    (``follow``: a :class:`shapes.following.LengthFollowing` whose shapes follow the free
    length; ``family`` is then its shapes at ``reference_length``)."""
    unit = modal_basis(family, modes, 1.0)
    panels = int(np.ceil(float(family.betas(modes)[-1]) / np.pi)) + EXTRA_PANELS
    return TranslatingBasis.from_unit(
        unit,
        np.linspace(0.0, 1.0, panels + 1),
        reference_length=reference_length,
        points=POINTS_PER_PANEL,
        follow=follow,
    )


#: How a translating link's clamped–mass roots β_k(l) are obtained (``tracker``): ``"frozen"``
#: keeps the shapes of the reference free length; the others make the shapes follow the
#: free length (:mod:`shapes.following`).
TRACKER_CHOICES = ("frozen", "root", "table", "ode")


def modal_basis(family: shapes.ShapeFamily, modes: int, length: float) -> BeamBasis:
    """The first ``modes`` shapes of ``family`` on a beam of ``length`` [m], as engine basis data."""
    integrals = family.integrals(modes)
    L = float(length)

    def evaluate(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eta = np.asarray(s, dtype=float) / L
        return family.evaluate(eta, modes, 0), family.evaluate(eta, modes, 1) / L

    return BeamBasis(
        length=L,
        frame=family.frame,
        mass=L * integrals.mass,
        first=L * integrals.mean,
        moment=L**2 * integrals.first_moment,
        stiffness=integrals.stiffness / L**3,
        tip_value=integrals.tip_value.copy(),
        tip_slope=integrals.tip_slope / L,
        root_slope=integrals.root_slope / L,
        evaluate=evaluate,
        description=f"{family!r}, {modes} modes",
        slope_gram=_slope_gram(family, modes, L),
    )


def _slope_gram(family: shapes.ShapeFamily, modes: int, L: float):
    """``BeamBasis.slope_gram`` of modal shapes: ∫₀^upper w(s) φ'φ'ᵀ ds by the shapes' own
    quadrature (:meth:`shapes.ShapeFamily.weighted_slope_products`) over the whole beam, by
    composite Gauss quadrature of the slopes over a part of it (lumped masses inside)."""

    def gram(weight: tuple, upper: float) -> np.ndarray:
        def w(eta):
            return np.polynomial.polynomial.polyval(L * np.asarray(eta), weight)

        if upper >= L:
            return family.weighted_slope_products(modes, w) / L
        panels = int(np.ceil(float(family.betas(modes)[-1]) / np.pi)) + EXTRA_PANELS
        nodes, weights = composite_gauss(np.linspace(0.0, upper / L, panels + 1), POINTS_PER_PANEL)
        slopes = family.evaluate(nodes, modes, 1)
        out = (slopes * (weights * w(nodes))) @ slopes.T / L
        return 0.5 * (out + out.T)

    return gram


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
        shapes without explicit ratios is evaluated, and, for a translating
        link, the free length whose shapes are used (default: all joint
        variables zero, translating links fully extended).
    tracker : {"frozen", "root", "table", "ode"}
        Translating links with ``"clamped-mass"`` shapes: ``"frozen"`` (default) keeps
        the shapes of the reference free length; the others make them follow the free
        length l, μ(l) = M/(ρA l), j(l) = J/(ρA l³), with the roots β_k(l) solved at
        every evaluation (``"root"``), interpolated from a table over
        ``tracker_lengths`` (``"table"``), or integrated with the state of a simulation
        (``"ode"``, seed 002 eqs. (11)–(13): the model's auxiliary states). The family
        name ``"beta-ode"`` on a translating link means ``"clamped-mass"`` following the
        length (with the ``"ode"`` tracker unless another is given).
    tracker_lengths : (float, float), optional
        Free lengths [m] spanned by the ``"table"`` tracker (default: a tenth of the
        beam length to the whole of it).
    **engine_options
        Passed to :class:`~core.dynamics.engine.ChainModel` (``coulomb``, ``coulomb_velocity``).

    Notes
    -----
    ``"clamped-mass"`` without ratios takes the distal load of the link
    (:func:`core.arm.loads.distal_load`): the mass beyond its tip and the rotary
    inertia about the tip's in-plane bending axis, so μ = M/(ρA L) and
    j = J/(ρA L³). Both bending planes of a link use the same shapes.

    A translating link (flexible, on a prismatic joint) uses ``"clamped-free"``
    or ``"clamped-mass"`` shapes on η = s/l, with the roots of the free length
    l_ref of the reference configuration (μ = M/(ρA l_ref), j = J/(ρA l_ref³)):
    exact modes at l_ref, a fixed Ritz basis elsewhere (SPEC §4; the shapes do
    not follow l — β tracking in time is :mod:`shapes.beta_ode`).
    """

    def __init__(
        self,
        arm: Arm,
        shape: str = "clamped-free",
        modes: int = 2,
        shapes: Mapping[int, tuple] | None = None,
        reference=None,
        tracker: str = "frozen",
        tracker_lengths: tuple[float, float] | None = None,
        **engine_options: Any,
    ) -> None:
        if tracker not in TRACKER_CHOICES:
            raise ValueError(f"tracker must be one of {TRACKER_CHOICES}, got {tracker!r}")
        overrides = dict(shapes or {})
        unknown = sorted(set(overrides) - set(arm.flexible_links))
        if unknown:
            raise ValueError(
                f"shapes: links {unknown} are not flexible links (flexible: {list(arm.flexible_links)})"
            )
        self.choices: dict[int, tuple[str, int, dict]] = {}
        #: Translating links whose shapes follow the free length → their tracker.
        self.trackers: dict[int, str] = {}
        reference = _reference(arm, reference)
        self.reference = reference
        bases = {}
        for number in arm.flexible_links:
            spec = overrides.get(number, (shape, modes))
            translating = number in arm.translating_links
            name, count, params = _parse_choice(number, spec, translating)
            link = arm.links[number - 1]
            length = reference[number - 1] if translating else link.length
            following = translating and (
                name == "beta-ode" or (name == "clamped-mass" and tracker != "frozen")
            )
            if name == "beta-ode":
                if params:
                    raise ValueError(
                        f"shapes[{number}]: 'beta-ode' takes its tip load from the arm, got parameters {params}"
                    )
                name = "clamped-mass"
            if name == "clamped-mass" and not params:
                mass, inertia = distal_load(arm, number, reference)
                params = {
                    "mass_ratio": mass / (link.mass_per_length * length),
                    "inertia_ratio": inertia / (link.mass_per_length * length**3),
                }
            try:
                family = _family(name, params)
            except ValueError as error:
                raise ValueError(f"link {number}: {error}") from None
            follow = None
            if following:
                follow = _following(
                    arm, number, reference, count, tracker if tracker != "frozen" else "ode", tracker_lengths
                )
                self.trackers[number] = follow.tracker
            self.choices[number] = (name, count, params)
            if translating:
                bases[number] = translating_basis(family, count, length, follow)
            else:
                bases[number] = modal_basis(family, count, link.length)
        summary = ", ".join(f"link {k}: {n} x{c}" for k, (n, c, _) in self.choices.items())
        super().__init__(arm, bases, description=f"AMM ({summary or 'rigid'})", **engine_options)


def _following(arm: Arm, number: int, reference, modes: int, tracker: str, lengths):
    """The :class:`~shapes.following.LengthFollowing` of translating link ``number``: its tip load
    is the distal load at ``reference`` (payloads and later links; constant as the beam slides)."""
    from shapes.following import LengthFollowing

    link = arm.links[number - 1]
    mass, inertia = distal_load(arm, number, reference)
    if lengths is None:
        lengths = (0.1 * link.length, link.length)
    try:
        return LengthFollowing(
            mass, inertia, link.mass_per_length, modes, tracker=tracker, lengths=tuple(lengths)
        )
    except ValueError as error:
        raise ValueError(f"link {number}: {error}") from None


def _family(name: str, params: dict) -> shapes.ShapeFamily:
    return shapes.family(name, **params)


def _reference(arm: Arm, reference) -> np.ndarray:
    """The reference joint configuration: given, or zeros with translating links fully extended."""
    if reference is None:
        return arm.home()
    q = np.asarray(reference, dtype=float)[: arm.n_joints]
    if q.shape != (arm.n_joints,):
        raise ValueError(
            f"reference must hold at least the {arm.n_joints} joint variables, got {np.shape(reference)}"
        )
    for number in arm.translating_links:
        check_free_length(arm, number, q[number - 1], where="reference: ")
    return q


def _parse_choice(number: int, spec: Any, translating: bool = False) -> tuple[str, int, dict]:
    where = f"shapes[{number}]"
    if isinstance(spec, str) or not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3):
        raise ValueError(f"{where}: expected (family, modes) or (family, modes, params), got {spec!r}")
    name, count = spec[0], spec[1]
    params = dict(spec[2]) if len(spec) == 3 else {}
    allowed, kind = (
        ([*translating_families(), "beta-ode"], "translating")
        if translating
        else (fixed_length_families(), "fixed-length")
    )
    if name not in allowed:
        raise ValueError(f"{where}: family must be one of {allowed} for a {kind} link, got {name!r}")
    return name, check.integer(count, where, "number of modes", minimum=1), params
