"""Mode shapes compared between cases: each case's modes as displacement fields, paired
with the finest case's by MAC (:mod:`core.analysis.modes`), the agreement tables and the tidy
mode-shape table."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.analysis.modes import ModeFields, mac, mode_fields, pair_modes
from core.arm import Arm
from studies.discretizations import (
    Discretization,
    case_keys,
    discretization_columns,
    finest_case,
    label_of,
    normalize_columns,
)
from studies.kinds.frequencies.analysis import FrequencyAnalysis, ModalAnalysis, ParameterSweep
from studies.kinds.frequencies.rest import at_rest, solvable

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


#: A pairing below this MAC is flagged in the agreement table.
MAC_FLAG = 0.9
#: Modes drawn in the mode-shape figure (mode_shapes.csv has every mode of the study).
PLOTTED_MODES = 4


@dataclass(frozen=True)
class CaseModes:
    """One case's lowest modes as fields on the common grid (:mod:`core.analysis.modes`).

    Attributes
    ----------
    fields : ModeFields
        Displacement fields in base axes, unit mass-weighted norm, largest component positive.
    w, v : ndarray, shape (P, k)
        Their components along each link's in-plane and out-of-plane bending axes (local y
        and z of the undeformed link at the configuration), same scaling.
    s_arm : ndarray, shape (P,)
        Arc length [m] of each grid point from the first link's root, the links laid end
        to end (a translating link by its free length).
    """

    fields: ModeFields
    w: np.ndarray
    v: np.ndarray
    s_arm: np.ndarray


def bending_components(model, q: np.ndarray, fields: ModeFields) -> tuple[np.ndarray, np.ndarray]:
    """(w, v), each (P, k): ``fields`` resolved along the in-plane and out-of-plane bending
    axes of each link's undeformed body frame at ``q``."""
    frames = model.kinematics.frames(np.asarray(q, dtype=float)[None], jacobians=False)
    local = np.empty_like(fields.fields)
    for number in np.unique(fields.links):
        at = fields.links == number
        rotation = frames[int(number) - 1].R_body[0]
        local[at] = np.einsum("ij,pik->pjk", rotation, fields.fields[at])
    return local[:, 1], local[:, 2]


def arc_length_along_arm(arm: Arm, joints: np.ndarray, links: np.ndarray, s: np.ndarray) -> np.ndarray:
    """s [m] of points (link number, s along the link) from the first link's root, with the
    links laid end to end: rigid and flexible links by their length, a translating link by
    its free length."""
    lengths = [
        float(joints[number - 1]) if number in arm.translating_links else link.length
        for number, link in enumerate(arm.links, start=1)
    ]
    roots = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    return roots[np.asarray(links, dtype=int) - 1] + s


def case_modes(results: pd.DataFrame, arm: Arm, analysis: FrequencyAnalysis) -> dict[int, CaseModes]:
    """Each case's modes (as many as its rows have) as :class:`CaseModes`, by case number.

    The fields are computed again here from each case's discretization (one eigen-solve
    per case, the same as the run's), where the run took them (``analysis.about``: the
    configuration, or the case's equilibrium near it, whose link frames resolve w and v).
    """
    joints = analysis.joint_values(arm)
    count = int(results["mode"].max())
    modes = {}
    for _, row in case_keys(results).iterrows():
        discretization = Discretization.from_columns(row)
        model, q = discretization.build_at(arm, joints)
        rest = at_rest(model, q, arm, analysis, discretization.label)
        with warnings.catch_warnings(), solvable(rest, discretization.label):
            warnings.simplefilter("ignore")  # the run has reported them already
            fields = mode_fields(model, rest.q, analysis.joints, count)
        w, v = bending_components(model, rest.q, fields)
        modes[int(row["case"])] = CaseModes(
            fields, w, v, arc_length_along_arm(arm, joints, fields.links, fields.s)
        )
    return modes


def agreement(
    results: pd.DataFrame,
    arm: Arm,
    analysis: ModalAnalysis,
    fields: dict[int, ModeFields] | None = None,
) -> pd.DataFrame:
    """Each case's modes paired with the finest case's by MAC of their displacement fields.

    One row per case × reference mode: the paired mode (maximum total MAC,
    :func:`core.analysis.modes.pair_modes`), its MAC, both frequencies, and ``flag``
    where MAC < :data:`MAC_FLAG` or the pairing differs from the frequency
    order. Rigid-body modes (ω = 0: free joints without gravity) are left out:
    any basis of their common space is as good as another, so their MAC says
    nothing. ``fields`` (by case number) default to :func:`case_modes`'.
    """
    import pandas as pd

    if fields is None:
        fields = {case: modes.fields for case, modes in case_modes(results, arm, analysis).items()}
    return normalize_columns(pd.DataFrame(agreement_rows(case_keys(results), fields, finest_case(results))))


def agreement_rows(
    keys: pd.DataFrame, fields: dict[int, ModeFields], reference_case: int, count: int | None = None
) -> list[dict[str, Any]]:
    """The rows of :func:`agreement` at one configuration: ``keys`` (:func:`case_keys`), the
    fields of every case there, the reference case's number; ``count``: the reference modes
    paired (default: all of its modes), against every mode of each case."""
    import pandas as pd

    reference = fields[reference_case]
    count = reference.omega.size if count is None else min(count, reference.omega.size)
    mine_elastic = {case: np.flatnonzero(f.omega != 0.0) for case, f in fields.items()}
    wanted = mine_elastic[reference_case]
    wanted = wanted[wanted < count]
    rows = []
    for _, row in keys.iterrows():
        mine = fields[int(row["case"])]
        candidates = mine_elastic[int(row["case"])]
        values = mac(reference.fields[..., wanted], mine.fields[..., candidates], reference.weights)
        paired, best = pair_modes(values)
        for k, j, value in zip(wanted, paired, best, strict=True):
            j = candidates[j] if j >= 0 else -1
            flags = []
            if j >= 0 and value < MAC_FLAG:
                flags.append(f"MAC < {MAC_FLAG}")
            if j >= 0 and j != k:
                flags.append("order differs")
            rows.append(
                {
                    **{c: row[c] for c in ("case", *discretization_columns())},
                    "mode": int(k) + 1,
                    "paired_mode": int(j) + 1 if j >= 0 else pd.NA,
                    "mac": value if j >= 0 else np.nan,
                    "omega": mine.omega[j] if j >= 0 else np.nan,
                    "reference_omega": reference.omega[k],
                    "flag": "; ".join(flags),
                }
            )
    return rows


def mode_shape_table(results: pd.DataFrame, modes: dict[int, CaseModes]) -> pd.DataFrame:
    """Tidy mode shapes: one row per case × mode × grid point with the sweep columns,
    ``mode``, ``omega`` [rad/s], ``hz``, ``link``, ``s`` [m] along the link, ``s_arm`` [m]
    along the arm and the deflections ``w`` (in-plane) and ``v`` (out-of-plane)."""
    import pandas as pd

    pieces = []
    for _, row in case_keys(results).iterrows():
        mine = modes[int(row["case"])]
        points, count = mine.w.shape
        frame = pd.DataFrame(
            {
                "mode": np.repeat(np.arange(1, count + 1), points),
                "omega": np.repeat(mine.fields.omega, points),
                "link": np.tile(mine.fields.links, count),
                "s": np.tile(mine.fields.s, count),
                "s_arm": np.tile(mine.s_arm, count),
                "w": mine.w.T.ravel(),
                "v": mine.v.T.ravel(),
            }
        )
        frame.insert(2, "hz", frame["omega"] / (2 * np.pi))
        for position, column in enumerate(("case", *discretization_columns())):
            frame.insert(position, column, row[column])
        pieces.append(frame)
    return normalize_columns(pd.concat(pieces, ignore_index=True))


def paired_shapes(
    shapes: pd.DataFrame, modes: dict[int, CaseModes], reference: int, count: int
) -> pd.DataFrame:
    """The rows of :func:`mode_shape_table` that the figure draws: for each of the ``count``
    lowest modes of the ``reference`` case, every case's mode paired with it by MAC (as in
    :func:`agreement`), its sign turned to agree with the reference's (positive
    mass-weighted inner product); columns ``panel_mode`` and ``panel_omega`` [rad/s] added."""
    import pandas as pd

    target = modes[reference].fields
    pieces = []
    for case, mine in modes.items():
        paired, _ = pair_modes(mac(target.fields, mine.fields.fields, target.weights))
        for k, j in enumerate(paired[:count], start=1):
            if j < 0:
                continue
            inner = np.einsum(
                "p,pi,pi->", target.weights, target.fields[..., k - 1], mine.fields.fields[..., j]
            )
            rows = shapes[(shapes["case"] == case) & (shapes["mode"] == j + 1)].copy()
            rows[["w", "v"]] *= -1.0 if inner < 0 else 1.0
            rows["panel_mode"] = k
            rows["panel_omega"] = target.omega[k - 1]
            pieces.append(rows)
    return pd.concat(pieces, ignore_index=True)


def sweep_agreement(
    results: pd.DataFrame, steps: dict[int, list[ModeFields]], sweep: ParameterSweep, count: int
) -> pd.DataFrame:
    """:func:`agreement` at every point of the sweep: the ``count`` lowest modes of the
    finest case paired with every case's modes there; columns ``point`` and the parameter
    after the sweep columns. A case whose sweep stopped early (``steps`` shorter than the
    sweep) takes part up to where it stopped; the finest case is that of each point."""
    import pandas as pd

    keys = case_keys(results)
    rows = []
    for j, value in enumerate(sweep.values):
        fields = {case: mine[j] for case, mine in steps.items() if j < len(mine)}
        here = results[results["case"].isin(list(fields))]
        if here.empty:
            continue
        present = keys[keys["case"].isin(list(fields))]
        for row in agreement_rows(present, fields, finest_case(here), count):
            rows.append({**row, "point": j + 1, sweep.parameter: float(value)})
    frame = pd.DataFrame(rows)
    first = ["case", *discretization_columns(), "point", sweep.parameter]
    return normalize_columns(frame[first + [c for c in frame.columns if c not in first]])


def agreement_summary(table: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """Per case × reference mode along the sweep: the points where it has a partner, the lowest
    MAC of its pairing and the largest |ω − ω_ref|/ω_ref, each with the parameter value where it
    occurs, and the number of flagged points."""
    import pandas as pd

    rows = []
    for (_, mode), group in table.groupby(["case", "mode"], sort=True):
        paired = group.dropna(subset=["mac"])  # a case with fewer modes leaves some unpaired
        difference = ((paired["omega"] - paired["reference_omega"]) / paired["reference_omega"]).abs()
        worst_mac = paired.loc[paired["mac"].idxmin()] if not paired.empty else None
        worst_omega = paired.loc[difference.idxmax()] if not paired.empty else None
        rows.append(
            {
                **{c: group.iloc[0][c] for c in ("case", *discretization_columns())},
                "mode": int(mode),
                "paired_points": len(paired),
                "lowest_mac": np.nan if worst_mac is None else worst_mac["mac"],
                f"lowest_mac_{parameter}": np.nan if worst_mac is None else worst_mac[parameter],
                "largest_rel_difference": difference.max() if not paired.empty else np.nan,
                f"largest_rel_difference_{parameter}": np.nan
                if worst_omega is None
                else worst_omega[parameter],
                "flagged_points": int((group["flag"] != "").sum()),
            }
        )
    return normalize_columns(pd.DataFrame(rows))


def agreement_text(table: pd.DataFrame, reference: str, where: str, parameter: str | None = None) -> str:
    """The summary's sentence on an agreement table (``parameter``: the swept one, whose
    value each flagged pairing names)."""
    flagged = table[table["flag"] != ""]

    def at(row) -> str:
        return "" if parameter is None else f" at {parameter} = {row[parameter]:.6g}"

    return (
        f"Mode shapes against {reference} (MAC of the displacement fields, mass-weighted; "
        f"{where}): lowest MAC {table['mac'].min():.6f}; "
        + (
            f"every mode pairs with the same-numbered reference mode at MAC ≥ {MAC_FLAG}."
            if flagged.empty
            else f"{len(flagged)} pairing(s) flagged: "
            + ", ".join(
                f"{label_of(r)} mode {r['mode']}{at(r)} ({r['flag']})" for _, r in flagged.head(5).iterrows()
            )
            + ("…" if len(flagged) > 5 else "")
            + "."
        )
    )
