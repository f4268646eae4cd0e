"""``zero-dynamics``: zeros with the joint coordinates as outputs, per shape family and mode count.

Rows: one per case × eigenvalue, ``set`` = ``"zero"`` (zero-dynamics
eigenvalues, :func:`core.zero_dynamics`) or ``"stiffness"`` (eigenvalues of
M_ff⁻¹ K_ff at the configuration), with ``real``, ``imag`` [rad/s].
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.analysis.linear import zero_dynamics
from studies.discretizations import case_keys, label_of
from studies.kinds.base import AtConfiguration, StudyKind, lightest_by_backend

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


class ZeroDynamics(StudyKind):
    analysis_schema = AtConfiguration

    def validate(self, arm, analysis):
        analysis.joint_values(arm)

    def warm_up(self, arm, cases, analysis):
        """:meth:`run_case` of the lightest case of each backend (a linearization and two small
        eigen-solves): the compiled mass matrix and inverse dynamics are loaded before the
        first case's clock starts (it carried 1.1 s of the example's 1.2 s of cases)."""
        for light in lightest_by_backend(arm, cases).values():
            self.run_case(arm, light, analysis)

    def run_case(self, arm, case, analysis):
        model, q = case.discretization.build_at(arm, analysis.joint_values(arm))
        zeros = zero_dynamics(model, q)
        f = model.flex
        ratio = np.linalg.eigvals(
            np.linalg.solve(model.mass_matrix(q)[f, f], model.stiffness_matrix(q)[f, f])
        )
        ratio = ratio[np.lexsort((ratio.imag, ratio.real))]
        base = {**case.columns(), "n_dof": model.n_dof}
        rows = [
            {**base, "set": "zero", "index": k, "real": float(z.real), "imag": float(z.imag)}
            for k, z in enumerate(zeros, 1)
        ]
        rows += [
            {**base, "set": "stiffness", "index": k, "real": float(z.real), "imag": float(z.imag)}
            for k, z in enumerate(ratio, 1)
        ]
        return rows

    def tables(self, results, arm, analysis):
        zeros = snapped_zeros(results)
        summary = zeros.groupby("case").agg(
            zeros=("index", "size"),
            largest_real_part=("real", "max"),
            smallest_abs_imag=("imag", lambda v: v.abs().min()),
        )
        summary["smallest_abs_imag_hz"] = summary["smallest_abs_imag"] / (2 * np.pi)
        summary["right_half_plane"] = (zeros["real"] > 0).groupby(zeros["case"]).sum()
        keys = case_keys(zeros).set_index("case")
        return {"zero dynamics": keys.join(summary).reset_index(drop=True)}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.kinds.zero_dynamics_figures import complex_plane_plot

        text = [
            "Zeros of the linearized dynamics with the joint coordinates as outputs [rad/s], each "
            "conjugate pair once (a ± bj), by imaginary part; parts below "
            f"{ROUND_OFF:g} of a case's largest |zero| are round-off and shown as 0. Zeros in the "
            "right half-plane (right_half_plane > 0) make the joint-output system non-minimum phase."
        ]
        zeros = snapped_zeros(results)
        for _, group in zeros.groupby("case", sort=False):
            upper = group[group["imag"] >= 0]
            values = ", ".join(_pair_text(r, i) for r, i in zip(upper["real"], upper["imag"], strict=True))
            hertz = list(dict.fromkeys(f"{f:.4g}" for f in upper["imag"][upper["imag"] > 0] / (2 * np.pi)))
            hertz = f"; Im/2π = {', '.join(hertz)} Hz" if hertz else ""
            text.append(f"- {label_of(group.iloc[0])}: {values}{hertz}")
        if plots:
            names = complex_plane_plot(zeros, folder, "zero_dynamics")
            text.append(
                "Zeros in the complex plane (symmetric log axes, linear near 0), one panel per shape "
                f"family: ![zeros]({names[0]}) ([PDF]({names[1]}))"
            )
        return text


#: A real or imaginary part of a zero below this fraction of its case's largest |zero| is round-off.
ROUND_OFF = 1e-9


def snapped_zeros(results: pd.DataFrame) -> pd.DataFrame:
    """The ``zero`` rows with round-off parts (:data:`ROUND_OFF`) set to 0, sorted per case by
    imaginary then real part (round-off no longer decides the order)."""
    zeros = results[results["set"] == "zero"].copy()
    scale = np.hypot(zeros["real"], zeros["imag"]).groupby(zeros["case"]).transform("max")
    for part in ("real", "imag"):
        zeros.loc[zeros[part].abs() <= ROUND_OFF * scale, part] = 0.0
    # imaginary parts equal to round-off (a quadruple ±a ± bj) sort by their real parts
    order = zeros.assign(level=(zeros["imag"] / (ROUND_OFF * scale)).round())
    return zeros.loc[order.sort_values(["case", "level", "real"], kind="stable").index]


def _pair_text(real: float, imag: float) -> str:
    """``a ± bj`` of a zero with Im ≥ 0 (``±bj`` on the imaginary axis, ``a`` on the real axis)."""
    if imag == 0:
        return f"{real:.4g}"
    return f"±{imag:.4g}j" if real == 0 else f"{real:.4g} ± {imag:.4g}j"
