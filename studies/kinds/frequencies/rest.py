"""Where the frequencies kind takes its frequencies and mode shapes (``analysis.about``).

``configuration``: the configuration as given, undeformed (δ = 0). Under gravity that is not a
rest position: the arm sags, and the frequencies there differ from those about the rest
position by the sag's effect on the mass and stiffness (1–3 % on the lumped two-link arm).

``equilibrium``: the static equilibrium under gravity near the configuration
(:meth:`Model.equilibrium <core.dynamics.model.Model.equilibrium>`, with the analysis' joints:
``locked`` holds the motor angles Bᵀq, ``free`` lets every coordinate settle), each case's
model its own. Unset, ``about`` is ``equilibrium`` for an arm with gravity and a flexible link
and ``configuration`` otherwise (:func:`about_of`).

At an equilibrium the rows carry the sag (:class:`Rest`): ``sag_tip_w<i>`` (``sag_tip_v<i>``)
from :meth:`Model.tip_deflections <core.dynamics.model.Model.tip_deflections>` — each link's
tip deflection in its own frame (a clamped frame's root tangent; a pinned frame's chord, where
it is 0) —, ``sag_tip_displacement``, the distance [m] the arm's tip moved from its position at
the configuration (frame-independent), and ``equilibrium_residual``, the equilibrium's relative
residual force.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.analysis.equilibrium import Equilibrium, EquilibriumError
from core.arm import Arm
from studies.discretizations import label_of

#: The values of ``analysis.about``.
EQUILIBRIUM, CONFIGURATION = "equilibrium", "configuration"
#: The results column that records ``analysis.about`` (as resolved).
ABOUT_COLUMN = "about"
#: The sag columns that every equilibrium has (besides ``sag_tip_w<i>``, ``sag_tip_v<i>``).
SAG_DISPLACEMENT = "sag_tip_displacement"
RESIDUAL_COLUMN = "equilibrium_residual"
#: The prefix of the tip-deflection sag columns (``sag_`` + a name of ``Model.tip_deflections``).
SAG_PREFIX = "sag_"
#: With free joints, an equilibrium whose motor angles (Bᵀq) moved more than this [rad or m]
#: from the configuration is not the configuration's rest position: the arm falls.
FREE_DRIFT = 1e-6


class NoFrequencies(RuntimeError):
    """The eigen-solve failed where the frequencies are taken (e.g. a mass matrix that is not
    positive definite there)."""


def gravity_acts(arm: Arm) -> bool:
    """Whether gravity deforms the arm: nonzero gravity and at least one flexible link."""
    return any(g != 0.0 for g in arm.gravity) and bool(arm.flexible_links)


def about_of(arm: Arm, analysis: Any) -> str:
    """``analysis.about`` as resolved for ``arm``: as given, else :data:`EQUILIBRIUM` when
    :func:`gravity_acts`, else :data:`CONFIGURATION`. An analysis without the key (the
    convergence kind's) is about the configuration."""
    if not hasattr(analysis, "about"):
        return CONFIGURATION
    if analysis.about is not None:
        return analysis.about
    return EQUILIBRIUM if gravity_acts(arm) else CONFIGURATION


@dataclass(frozen=True)
class Rest:
    """Where one model's frequencies are taken.

    Attributes
    ----------
    q : ndarray
        The coordinates: the configuration, or the equilibrium's.
    about : str
        :data:`EQUILIBRIUM` or :data:`CONFIGURATION`.
    about_column : dict
        ``{"about": about}`` for a frequencies analysis (the rows' column), empty otherwise.
    sag : dict
        At an equilibrium, its sag columns (module docstring) by name; empty otherwise.
    stiffened : bool
        The model has geometric stiffening (said when its eigen-solve fails).
    equilibrium : Equilibrium or None
        The equilibrium (its holding torques too), None about the configuration.
    """

    q: np.ndarray
    about: str
    about_column: dict[str, str] = field(default_factory=dict)
    sag: dict[str, float] = field(default_factory=dict)
    stiffened: bool = False
    equilibrium: Equilibrium | None = None

    @property
    def point(self) -> np.ndarray | Equilibrium:
        """What :meth:`Model.state_space <core.dynamics.model.Model.state_space>` linearizes
        about: the equilibrium (with its holding torques), or the configuration."""
        return self.q if self.equilibrium is None else self.equilibrium


def _joints_text(model, q: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in np.asarray(q)[: model.n_joints]) + "]"


def at_rest(model, q: np.ndarray, arm: Arm, analysis: Any, label: str, where: str = "") -> Rest:
    """The :class:`Rest` of ``model`` (of ``arm``, at ``q``: the configuration, undeformed) as
    ``analysis.about`` says; ``label`` (the case's) and ``where`` (e.g. ``" at gravity_scale =
    2"``) go into the messages.

    Raises
    ------
    EquilibriumError
        No equilibrium near ``q`` (the message names ``analysis.about``, the case and the
        configuration), or free joints that do not rest there (the arm falls).
    """
    about = about_of(arm, analysis)
    stiffened = bool(model.arguments.get("geometric_stiffening", False))
    column = {ABOUT_COLUMN: about} if hasattr(analysis, "about") else {}
    q = np.asarray(q, dtype=float)
    if about == CONFIGURATION:
        return Rest(q, about, column, {}, stiffened)
    joints = analysis.joints
    hint = (
        'lock the joints (analysis.joints = "locked"), or analyse about the configuration '
        '(analysis.about = "configuration")'
        if joints == "free"
        else 'analyse about the configuration instead (analysis.about = "configuration")'
    )
    try:
        found = model.equilibrium(q, joints=joints)
    except EquilibriumError as error:
        raise EquilibriumError(
            f'analysis.about = "equilibrium": {label}{where} has no static equilibrium ({joints} '
            f"joints) near the configuration {_joints_text(model, q)}: {error}; {hint}",
            error.q,
            error.residual,
        ) from error
    if joints == "free":
        B = model.input_matrix(q)
        moved = B.T @ (found.q - q)
        if not np.max(np.abs(moved), initial=0.0) <= FREE_DRIFT:
            raise EquilibriumError(
                f'analysis.about = "equilibrium" with analysis.joints = "free": {label}{where} does '
                f"not rest at the configuration {_joints_text(model, q)} under gravity (the arm falls: "
                f"the nearest equilibrium has the joints at {_joints_text(model, B.T @ found.q)}); "
                f"{hint}, or give a configuration where the free joints rest",
                found.q,
                found.residual,
            )
    sag = {f"{SAG_PREFIX}{name}": value for name, value in model.tip_deflections(found.q).items()}
    sag[SAG_DISPLACEMENT] = float(np.linalg.norm(model.tip_position(found.q) - model.tip_position(q)))
    sag[RESIDUAL_COLUMN] = float(found.residual)
    return Rest(found.q, about, column, sag, stiffened, found)


@contextmanager
def solvable(rest: Rest, label: str, where: str = "") -> Iterator[None]:
    """Turn an eigen-solve's LinAlgError at ``rest`` into :class:`NoFrequencies` naming the
    case (``label``), the point (``where``) and, for a mass matrix that is not positive
    definite, why that can happen."""
    try:
        yield
    except np.linalg.LinAlgError as error:
        reason = ""
        if "positive definite" in str(error):
            reason = " (the mass matrix of its modes is not positive definite there" + (
                ": a geometrically stiffened model at a large deflection)" if rest.stiffened else ")"
            )
        raise NoFrequencies(
            f"{label}{where}: no natural frequencies at the {rest.about}{reason}: {error}"
        ) from error


#: What makes a point of a case fail (its model has no rest or no frequencies there).
POINT_FAILURES = (EquilibriumError, NoFrequencies)


def sag_columns(columns) -> list[str]:
    """The sag columns among ``columns`` (a results table's), in their order."""
    return [c for c in columns if c.startswith(SAG_PREFIX) or c == RESIDUAL_COLUMN]


def about_text(results, arm: Arm, analysis: Any, parameter: str | None = None) -> str:
    """The summary's sentence on where the frequencies were taken (``results``: the study's
    rows, with their ``about`` column and, at an equilibrium, the sag columns; ``parameter``:
    the swept one, whose value the largest sag names)."""
    about = str(results[ABOUT_COLUMN].iloc[0])
    chosen = (
        "as asked"
        if analysis.about is not None
        else "the default for a flexible arm under gravity"
        if gravity_acts(arm)
        else "the default without gravity on a flexible link"
    )
    if about == CONFIGURATION:
        return f"About: the configuration as given, undeformed (`about = {about}`, {chosen})" + (
            "; under gravity that is not a rest position, the arm sags from it." if gravity_acts(arm) else "."
        )
    held = "the motor angles held (joints locked)" if analysis.joints == "locked" else "the joints free"
    largest = results.loc[results[SAG_DISPLACEMENT].idxmax()]
    point = "" if parameter is None else f" at {parameter} = {largest[parameter]:.6g}"
    return (
        f"About: the static equilibrium under gravity near the configuration (`about = {about}`, "
        f"{chosen}), each case's own, with {held}. The sag is in the results: `sag_tip_w<i>` is "
        "link i's tip deflection in its own frame (zero in a pinned frame, whose chord it is), "
        "`sag_tip_displacement` [m] how far the arm's tip moved from its position at the "
        "configuration, `equilibrium_residual` the equilibrium's relative residual force. Largest "
        f"tip displacement {largest[SAG_DISPLACEMENT]:.6g} m ({label_of(largest)}{point}); largest "
        f"residual {results[RESIDUAL_COLUMN].max():.3g}."
    )
