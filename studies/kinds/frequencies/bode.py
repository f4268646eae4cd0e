"""The Bode diagram of a frequencies study (``analysis.bode``): the frequency response from each
joint torque to the tip deflection of the last flexible link, of each case's linear model about
where its frequencies are taken (:meth:`Model.state_space
<core.dynamics.model.Model.state_space>` with ``outputs=["tip_deflection"]``, about the
equilibrium with its holding torques, or the configuration).

The linear model has every coordinate free (the torques drive the joints), whatever
``analysis.joints`` says of the frequencies. The tip deflection is measured in the link's own
frame, so a pinned (chord) frame's is zero: such a case has no response to draw and is left
out (the summary says so).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from core.arm import Arm
from studies.discretizations import Discretization, case_keys, normalize_columns, sweep_columns
from studies.kinds.frequencies.rest import EQUILIBRIUM, at_rest

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Points of the frequency grid (log-spaced).
BODE_POINTS = 600
#: The grid spans from the lowest reported nonzero frequency / BELOW to the highest × ABOVE.
BELOW, ABOVE = 10.0, 3.0
#: A case's response below this fraction of the largest case's is round-off of zero.
ZERO_RESPONSE = 1e-9


def check_bode(arm: Arm, sweep_parameter: str | None) -> None:
    """Refuse ``analysis.bode = true`` (ValueError naming the key) where it cannot be drawn."""
    if sweep_parameter is not None:
        raise ValueError(
            f"analysis.bode: drawn at one configuration, not along a sweep (analysis.sweep_parameter = "
            f"{sweep_parameter!r}); got true"
        )
    if not arm.flexible_links:
        raise ValueError(
            "analysis.bode: the tip deflection needs a flexible link, and the arm has none; got true"
        )


def bode_grid(results: pd.DataFrame) -> np.ndarray:
    """The frequencies [rad/s] of the diagram: :data:`BODE_POINTS` log-spaced around the
    reported nonzero ones (:data:`BELOW`, :data:`ABOVE`)."""
    omega = results["omega"].to_numpy(float)
    omega = omega[omega > 0]
    return np.logspace(np.log10(omega.min() / BELOW), np.log10(omega.max() * ABOVE), BODE_POINTS)


def bode_table(results: pd.DataFrame, arm: Arm, analysis: Any) -> tuple[pd.DataFrame, list[str]]:
    """(the response, the labels of the cases left out): one row per case × input × frequency
    with the sweep columns, ``output`` (``tip_w<k>`` of the last flexible link), ``input``
    (``tau_<j>``), ``omega`` [rad/s], ``magnitude_db`` (20 log₁₀ |G| of G in m/(N·m)) and
    ``phase_deg`` (unwrapped). A case whose response is zero throughout (below
    :data:`ZERO_RESPONSE` of the largest: a pinned frame, whose tip deflection is measured
    from the chord, to round-off) is left out and named."""
    import pandas as pd

    omega, joints = bode_grid(results), analysis.joint_values(arm)
    responses = {}
    for _, row in case_keys(results).iterrows():
        discretization = Discretization.from_columns(row)
        model, q = discretization.build_at(arm, joints)
        rest = at_rest(model, q, arm, analysis, discretization.label)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # about a configuration under gravity: not at rest (said)
            system = model.state_space(rest.point, outputs=["tip_deflection"])
        output = [name for name in system.output_names if name.startswith("tip_w")][-1]
        # (frequencies, inputs)
        responses[discretization.label] = (
            row,
            output,
            system,
            system.frequency_response(omega, output=output),
        )
    largest = max(float(np.max(np.abs(r[3]))) for r in responses.values())
    pieces, left_out = [], []
    for label, (row, output, system, response) in responses.items():
        if not np.max(np.abs(response)) > ZERO_RESPONSE * largest:
            left_out.append(label)
            continue
        for j, name in enumerate(system.input_names):
            frame = pd.DataFrame(
                {
                    "output": output,
                    "input": name,
                    "omega": omega,
                    "magnitude_db": 20 * np.log10(np.abs(response[:, j])),
                    "phase_deg": np.degrees(np.unwrap(np.angle(response[:, j]))),
                }
            )
            for position, column in enumerate(("case", *sweep_columns(results))):
                frame.insert(position, column, row[column])
            pieces.append(frame)
    table = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame()
    return normalize_columns(table), left_out


def bode_text(table: pd.DataFrame, left_out: list[str], about: str, names: list[str] | None) -> str:
    """The summary's paragraph on the Bode diagram (``about``: where the models are linearized;
    ``names``: the figure's files, if drawn)."""
    where = (
        "about each case's equilibrium, with its holding torques"
        if about == EQUILIBRIUM
        else "about the configuration"
    )
    text = (
        "Bode diagram in `bode.csv`: the response from each joint torque to the last flexible link's "
        "tip deflection (in its own frame), magnitude_db = 20 log10 |G| with G in m/(N·m), phase_deg "
        f"unwrapped, of each case's linear model (Model.state_space, every coordinate free) {where}"
    )
    if left_out:
        text += (
            "; left out (zero response: a pinned frame's tip deflection is measured from its chord): "
            + ", ".join(left_out)
        )
    text += "."
    if names:
        text += f" ![bode]({names[0]}) ([PDF]({names[1]}))"
    return text
