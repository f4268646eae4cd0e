"""The frequencies kind's analysis: its ``[analysis]`` schema, the sweep of a physical
parameter, one case's frequencies and their references (where they are taken, the
configuration or the static equilibrium near it: :mod:`~studies.kinds.frequencies.rest`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import Field, PositiveInt, StrictInt

from core.arm import Arm, Payload
from core.arm.bounds import GRAVITY_MAX, MASS_RANGE
from core.dynamics.kinematics import check_free_length
from studies.discretizations import Case, finest_case, label_of
from studies.kinds.base import AtConfiguration, caution
from studies.kinds.frequencies.rest import at_rest, solvable
from studies.limits import MAX_JOINT_VALUE, MAX_VALUES, AtMost, exactly
from studies.references import exact_locked_frequencies
from studies.text import shown

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


#: More frequencies than any model a study runs has (a model has one per coordinate).
MAX_FREQUENCIES = 100_000
#: A count of frequencies: > 0 and at most :data:`MAX_FREQUENCIES`.
FrequencyCount = Annotated[
    PositiveInt, AtMost(MAX_FREQUENCIES, "more than the coordinates of any model a study runs")
]
#: Points of a parameter sweep above this are refused without --force.
SOFT_SWEEP_POINTS = 1000


class ModalAnalysis(AtConfiguration):
    """``[analysis]`` keys that the frequencies and convergence kinds share."""

    joints: Literal["locked", "free"] = Field(
        "locked",
        description="locked: the motors hold the joints; free: no joint constraint (without gravity "
        "the rigid-body modes are reported as 0).",
    )
    n_frequencies: FrequencyCount = Field(5, description="Frequencies reported per case, lowest first.")


#: The payload-mass sweep parameter (every other parameter but :data:`GRAVITY_SCALE` is a joint
#: variable name).
PAYLOAD_MASS = "payload_mass"
#: The sweep parameter that scales the arm's gravity (0: none, 1: the arm's).
GRAVITY_SCALE = "gravity_scale"
#: Points of a ``sweep_range`` unless ``sweep_points`` says otherwise.
SWEEP_POINTS = 13


class FrequencyAnalysis(ModalAnalysis):
    """``[analysis]`` of the frequencies kind: :class:`ModalAnalysis` and an optional sweep of
    one physical parameter."""

    sweep_parameter: str | None = Field(
        None,
        description="Sweep one parameter, every case over every value: a joint variable of the arm "
        "(theta<i> [rad] or d<i> [m], i from 1; the other joints stay at analysis.configuration; d<i> of "
        "a translating link is its free length), payload_mass [kg] (the arm's payload, a point mass if "
        "it has none) or gravity_scale (the arm's gravity times the value, >= 0; an arm with gravity "
        "only; 0 is the undeformed, frame-independent limit). Modes are tracked along the sweep by MAC; "
        "a case whose model has no equilibrium or no frequencies at a point stops there (a warning "
        "names the point; its rows cover the points before). Unset: one configuration.",
    )
    sweep_values: list[float] | None = Field(
        None,
        min_length=2,
        description="The swept values in sweep order, strictly increasing or decreasing; give this or "
        "sweep_range [rad, m, kg or times arm.gravity].",
    )
    sweep_range: Annotated[list[float], exactly(2, ", [start, stop]")] | None = Field(
        None,
        description="[start, stop] of an evenly spaced sweep, both ends included; give this or "
        "sweep_values [rad, m, kg or times arm.gravity].",
    )
    sweep_points: (
        Annotated[
            StrictInt,
            Field(ge=2),
            AtMost(
                MAX_VALUES,
                "as many as sweep_values may hold",
                soft=SOFT_SWEEP_POINTS,
                soft_why="each point is an eigen-solve of every case",
            ),
        ]
        | None
    ) = Field(None, description=f"Points of sweep_range, both ends included; unset: {SWEEP_POINTS}.")
    about: Literal["equilibrium", "configuration"] | None = Field(
        None,
        description="Where the frequencies and mode shapes are taken: equilibrium: the static "
        "equilibrium under gravity near analysis.configuration (Model.equilibrium with the joints "
        "setting: locked holds the motor angles; free needs a configuration where the free joints "
        "rest, else the case fails), each case its own, with the sag in the results; configuration: "
        "the configuration as given, undeformed. Unset: equilibrium for an arm with gravity and a "
        "flexible link, else configuration (the choice is the results' column about).",
    )
    bode: bool = Field(
        False,
        description="Also write bode.csv and a Bode diagram: the response from each joint torque to "
        "the last flexible link's tip deflection (gain in dB, phase) of each case's linear model "
        "(Model.state_space) where analysis.about says; one configuration only (no sweep_parameter).",
    )


@dataclass(frozen=True)
class ParameterSweep:
    """A validated ``sweep_parameter`` with its values.

    Attributes
    ----------
    parameter : str
        ``theta<i>``, ``d<i>``, ``payload_mass`` or ``gravity_scale``; the results column of its value.
    values : ndarray
        The swept values in sweep order [rad, m, kg or times the arm's gravity].
    joint : int or None
        The swept joint's index (from 0), None for the payload mass and the gravity scale.
    unit : str
        ``rad``, ``m``, ``kg`` or ``× arm.gravity``.
    """

    parameter: str
    values: np.ndarray
    joint: int | None
    unit: str

    def point(self, arm: Arm, joints: np.ndarray, value: float) -> tuple[Arm, np.ndarray]:
        """(arm, joint variables) at one value of the sweep, from the study's ``arm`` and
        configuration ``joints``."""
        joints = np.array(joints, dtype=float)
        if self.joint is not None:
            joints[self.joint] = value
            return arm, joints
        if self.parameter == GRAVITY_SCALE:
            return dataclasses.replace(arm, gravity=tuple(float(value) * g for g in arm.gravity)), joints
        inertia = 0.0 if arm.payload is None else arm.payload.inertia
        return dataclasses.replace(arm, payload=Payload(float(value), inertia)), joints


def parameter_sweep(arm: Arm, analysis: FrequencyAnalysis) -> ParameterSweep | None:
    """The sweep of ``analysis`` (None without ``sweep_parameter``); raises ValueError naming
    the ``analysis.sweep_…`` key and its value where the sweep does not fit the arm."""
    given = [k for k in ("sweep_values", "sweep_range", "sweep_points") if getattr(analysis, k) is not None]
    name = analysis.sweep_parameter
    if name is None:
        if given:
            raise ValueError(f"analysis.{given[0]}: needs analysis.sweep_parameter (what to sweep)")
        return None
    names = [*arm.joint_names, PAYLOAD_MASS]
    if name not in [*names, GRAVITY_SCALE]:
        raise ValueError(
            f"analysis.sweep_parameter: must be one of {names}, got {name!r} (or {GRAVITY_SCALE!r}: the "
            "arm's gravity times the value)"
        )
    if name == GRAVITY_SCALE and not any(arm.gravity):
        raise ValueError(
            f"analysis.sweep_parameter: {GRAVITY_SCALE} scales the arm's gravity, and arm.gravity is "
            f"{list(arm.gravity)} (give the arm gravity)"
        )
    if (analysis.sweep_values is None) == (analysis.sweep_range is None):
        raise ValueError(
            "analysis.sweep_parameter: give either sweep_values or sweep_range (with sweep_points), "
            + ("not both" if analysis.sweep_values is not None else "got neither")
        )
    if analysis.sweep_values is not None:
        key, values = "sweep_values", np.asarray(analysis.sweep_values, dtype=float)
        if analysis.sweep_points is not None:
            raise ValueError("analysis.sweep_points: applies to sweep_range only, not to sweep_values")
    else:
        key = "sweep_range"
        points = SWEEP_POINTS if analysis.sweep_points is None else analysis.sweep_points
        values = np.linspace(*analysis.sweep_range, points)
    given_values = shown(analysis.sweep_values if analysis.sweep_values is not None else analysis.sweep_range)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"analysis.{key}: must be finite numbers, got {given_values}")
    steps = np.diff(values)
    if not (np.all(steps > 0) or np.all(steps < 0)):
        raise ValueError(
            f"analysis.{key}: must be strictly increasing or decreasing (the order modes are tracked "
            f"in), got {given_values}"
        )
    if name == GRAVITY_SCALE:
        return _gravity_sweep(arm, key, values, given_values)
    if name == PAYLOAD_MASS:
        if values.min() < 0:
            raise ValueError(f"analysis.{key}: a payload mass must be >= 0 kg, got {given_values}")
        if values.max() > MASS_RANGE[1]:
            raise ValueError(
                f"analysis.{key}: a payload mass must be <= {MASS_RANGE[1]:g} kg (as core.arm.Payload's), "
                f"got {given_values}"
            )
        return ParameterSweep(name, values, None, "kg")
    if np.abs(values).max() > MAX_JOINT_VALUE:
        raise ValueError(
            f"analysis.{key}: joint values must be in [{-MAX_JOINT_VALUE:g}, {MAX_JOINT_VALUE:g}] rad or m "
            f"(as the arm's angles and offsets), got {given_values}"
        )
    joint = arm.joint_names.index(name)
    if joint + 1 in arm.translating_links:
        for value in values:  # the message names the first value outside the beam
            check_free_length(arm, joint + 1, float(value), where=f"analysis.{key}: ")
    return ParameterSweep(name, values, joint, "rad" if name.startswith("theta") else "m")


def _gravity_sweep(arm: Arm, key: str, values: np.ndarray, given_values: str) -> ParameterSweep:
    """The :data:`GRAVITY_SCALE` sweep of ``values`` (from ``analysis.<key>``), checked: >= 0 and
    within the arm's gravity bound."""
    if values.min() < 0:
        raise ValueError(f"analysis.{key}: a gravity scale must be >= 0, got {given_values}")
    largest = GRAVITY_MAX / max(abs(g) for g in arm.gravity)
    if values.max() > largest:
        raise ValueError(
            f"analysis.{key}: a gravity scale must be <= {largest:.6g} (gravity components up to "
            f"{GRAVITY_MAX:g} m/s^2, as core.arm.Arm's), got {given_values}"
        )
    return ParameterSweep(GRAVITY_SCALE, values, None, "× arm.gravity")


def frequency_rows(
    arm: Arm, case: Case, analysis: ModalAnalysis, warn_short: bool = True
) -> list[dict[str, Any]]:
    """Rows (one per mode) of one case; ``warn_short``: warn when the model has fewer
    frequencies than asked for (a convergence sweep expects that of its small cases).

    The frequencies are taken where :func:`~studies.kinds.frequencies.rest.at_rest` says
    (``analysis.about``: the configuration, or the static equilibrium near it); a frequencies
    analysis adds the column ``about`` after the case's, and at an equilibrium its sag columns
    last (:class:`~studies.kinds.frequencies.rest.Rest`)."""
    model, q = case.discretization.build_at(arm, analysis.joint_values(arm))
    rest = at_rest(model, q, arm, analysis, case.discretization.label)
    with solvable(rest, case.discretization.label):
        omega = model.natural_frequencies(rest.q, analysis.joints, count=analysis.n_frequencies)
    if warn_short:
        check_count(case, omega.size, analysis)
    return [
        {
            **case.columns(),
            **rest.about_column,
            "n_dof": model.n_dof,
            "mode": k,
            "omega": float(w),
            "hz": float(w / (2 * np.pi)),
            **rest.sag,
        }
        for k, w in enumerate(omega[: analysis.n_frequencies], start=1)
    ]


def check_count(case: Case, available: int, analysis: ModalAnalysis) -> None:
    """Warn when the case's model has fewer frequencies (``available``) than asked for."""
    if available < analysis.n_frequencies:
        caution(
            f"analysis.n_frequencies: {case.discretization.label} has {available} frequencies "
            f"({analysis.joints} joints), fewer than the {analysis.n_frequencies} asked for"
        )


def add_references(results: pd.DataFrame, arm: Arm, analysis: ModalAnalysis) -> pd.DataFrame:
    """Columns ``reference``, ``reference_source`` and ``rel_error`` = (ω − ref)/ref.

    The exact reference where one exists (:mod:`studies.references`, locked
    joints only); otherwise the case with the most coordinates (ties: FEM over
    AMM, then the later case; rigid segments only in a sweep without other cases:
    :func:`studies.discretizations.finest_case`), labelled as such. Along a sweep, at each point of
    it (the arm and configuration of that point; the finest case there, where a
    case's sweep stopped early). About the equilibrium (``analysis.about``) the
    exact clamped-mass roots are as exact as about the configuration: for a
    model whose deflection enters linearly (a clamped frame, no geometric
    stiffening) the mass matrix of the locked modes does not depend on the
    deflection and gravity is linear in it, so the sag leaves the frequencies
    as they are; pinned frames and stiffened models differ from them under
    gravity by the sag's second-order effects, about either point.
    """
    import pandas as pd

    joints = analysis.joint_values(arm)
    sweep = parameter_sweep(arm, analysis) if isinstance(analysis, FrequencyAnalysis) else None
    if sweep is None:
        return _with_references(results, arm, joints, analysis.joints)
    pieces = [
        _with_references(group, *sweep.point(arm, joints, sweep.values[int(point) - 1]), analysis.joints)
        for point, group in results.groupby("point", sort=True)
    ]
    return pd.concat(pieces).loc[results.index]


def _with_references(results: pd.DataFrame, arm: Arm, joints: np.ndarray, held: str) -> pd.DataFrame:
    """:func:`add_references` at one configuration ``joints`` (``held``: locked or free joints)."""
    results = results.copy()
    exact = exact_locked_frequencies(arm, int(results["mode"].max()), joints) if held == "locked" else None
    if exact is not None:
        values, source = exact
        results["reference"] = values[results["mode"].to_numpy() - 1]
        results["reference_source"] = source
    else:
        finest = finest_case(results)
        reference = results[results["case"] == finest].set_index("mode")["omega"]
        label = label_of(results[results["case"] == finest].iloc[0])
        results["reference"] = results["mode"].map(reference)
        results["reference_source"] = f"finest: {label}"
    with np.errstate(invalid="ignore", divide="ignore"):  # rigid-body modes: 0/0
        results["rel_error"] = (results["omega"] - results["reference"]) / results["reference"]
    return results


def sweep_axis_label(sweep: ParameterSweep, arm: Arm) -> str:
    """The axis label of the swept parameter, unit in brackets."""
    if sweep.parameter == GRAVITY_SCALE:
        return "gravity scale g/g$_0$ [–]"
    if sweep.joint is None:
        return "payload mass [kg]"
    number = sweep.joint + 1
    symbol = rf"$\theta_{{{number}}}$" if sweep.unit == "rad" else f"$d_{{{number}}}$"
    if number in arm.translating_links:
        return f"free length {symbol} [m]"
    return f"joint {number} {symbol} [{sweep.unit}]"
