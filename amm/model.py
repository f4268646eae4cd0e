"""The assumed-modes backend: global beam eigenfunctions as the basis of each link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import shapes
from core.arm import Arm
from core.arm.loads import distal_load, distal_static_moment
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
        Default shape family for every flexible link, a name of :data:`shapes.FAMILIES`
        (``"clamped-free"``, ``"pinned-pinned"``, ``"clamped-mass"``, ``"fe-modes"``; on a
        translating link also ``"beta-ode"``, and not ``"fe-modes"``).
    modes : int
        Default number of modes per bending plane.
    shapes : mapping, optional
        Per-link overrides, link number (from 1) → ``(family, modes)`` or
        ``(family, modes, params)``, e.g. ``{1: ("clamped-mass", 3)}`` or
        ``{1: ("clamped-mass", 3, {"mass_ratio": 1.0, "inertia_ratio": 0.1})}``.
    reference : array_like, optional
        Joint configuration at which the tip load of a family that needs one
        (``ShapeFamily.needs_tip_load``: ``"clamped-mass"`` without explicit ratios,
        ``"beta-ode"``) is evaluated, and, for a translating link, the free length whose
        shapes are used (default: all joint variables zero, translating links fully extended).
    tracker : {"frozen", "root", "table", "ode"}
        Translating links whose family can follow the free length
        (``ShapeFamily.follower``: ``"clamped-mass"``): ``"frozen"`` (default) keeps
        the shapes of the reference free length; the others make them follow the free
        length l, μ(l) = M/(ρA l), j(l) = J/(ρA l³), with the roots β_k(l) solved at
        every evaluation (``"root"``), interpolated from a table over
        ``tracker_lengths`` (``"table"``), or integrated with the state of a simulation
        (``"ode"``, Theodore & Ghosal (1997) eqs. (11)–(13): the model's auxiliary states).
        The family ``"beta-ode"`` always follows the length (with the ``"ode"`` tracker
        unless another is given).
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
    j = J/(ρA L³). ``"fe-modes"`` takes that load with its static moment and the link's own
    lumped masses (:class:`shapes.FeModes`, docs/FE_MODES.md). Both bending planes of a link
    use the same shapes. ``choices``
    records each link's ``(family, modes, params)`` as ``shapes`` takes them.

    A translating link (flexible, on a prismatic joint) uses a clamped family
    (:func:`shapes.translating_families`) on η = s/l, with the roots of the free length
    l_ref of the reference configuration (μ = M/(ρA l_ref), j = J/(ρA l_ref³)):
    exact modes at l_ref, a fixed Ritz basis elsewhere (docs/MODEL.md, Dynamics), unless
    its shapes follow the length (``tracker``, :mod:`shapes.following`).
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
        choices = arm.per_flexible_link("shapes", dict(shapes or {}), (shape, modes))
        self.choices: dict[int, tuple[str, int, dict]] = {}
        #: Translating links whose shapes follow the free length → their tracker.
        self.trackers: dict[int, str] = {}
        self.reference = reference = _reference(arm, reference)
        bases = {}
        for number in arm.flexible_links:
            translating = number in arm.translating_links
            choice = _parse_choice(number, choices[number], translating)
            family, follow = _link_family(arm, number, reference, choice, tracker, tracker_lengths)
            self.choices[number] = choice
            count = choice[1]
            if follow is not None:
                self.trackers[number] = follow.tracker
            if translating:
                bases[number] = translating_basis(family, count, reference[number - 1], follow)
            else:
                bases[number] = modal_basis(family, count, arm.links[number - 1].length)
        summary = ", ".join(f"link {k}: {n} x{c}" for k, (n, c, _) in self.choices.items())
        super().__init__(arm, bases, description=f"AMM ({summary or 'rigid'})", **engine_options)


def _link_family(
    arm: Arm, number: int, reference: np.ndarray, choice: tuple[str, int, dict], tracker: str, lengths
) -> tuple[shapes.ShapeFamily, Any]:
    """The shape family of flexible link ``number`` and, on a translating link, the shapes that
    follow its free length (None: fixed on η = s/l). The family declares what it needs from the
    arm (:class:`shapes.ShapeFamily`): the link's tip load when it ``needs_tip_load`` (everything
    distal at the reference configuration, :func:`core.arm.loads.distal_load`; on a translating
    link at the reference free length), its parameters on this link (``link_parameters``) and its
    ``follower`` (``lengths``: the free lengths a ``"table"`` tracker spans, default a tenth of
    the beam length to the whole of it)."""
    name, modes, params = choice
    cls = shapes.FAMILIES[name]
    link = arm.links[number - 1]
    translating = number in arm.translating_links
    load = None
    if cls.needs_tip_load:
        mass, inertia = distal_load(arm, number, reference)
        length = reference[number - 1] if translating else link.length
        lumped = tuple((p.position, p.mass, p.inertia) for p in link.lumped_masses)
        moment = distal_static_moment(arm, number, reference)
        load = shapes.TipLoad(mass, inertia, link.mass_per_length, length, lumped, moment)
    try:
        parameters = cls.link_parameters(params, load)
    except ValueError as error:
        raise ValueError(f"shapes[{number}]: {error}") from None
    try:
        family = shapes.family(name, **parameters)
        if not translating:
            return family, None
        span = (0.1 * link.length, link.length) if lengths is None else tuple(lengths)
        return family, family.follower(load, modes, tracker, span)
    except ValueError as error:
        raise ValueError(f"link {number}: {error}") from None


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
        (translating_families(), "translating") if translating else (fixed_length_families(), "fixed-length")
    )
    if name not in allowed:
        raise ValueError(f"{where}: family must be one of {allowed} for a {kind} link, got {name!r}")
    return name, check.integer(count, where, "number of modes", minimum=1), params
