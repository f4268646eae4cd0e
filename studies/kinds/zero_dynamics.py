"""``zero-dynamics``: zeros with the joint coordinates as outputs, per shape family and mode count.

Rows: one per case × eigenvalue, ``set`` = ``"zero"`` (zero-dynamics
eigenvalues, :func:`core.zero_dynamics`) or ``"stiffness"`` (eigenvalues of
M_ff⁻¹ K_ff at the configuration), with ``real``, ``imag`` [rad/s].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from core.analysis import zero_dynamics
from studies.discretizations import case_keys, joint_configuration, label_of
from studies.kinds.base import StudyKind
from studies.plots import complex_plane_plot


class ZeroDynamicsAnalysis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    configuration: list[float] | None = None  # joint variables [rad, m]; default Arm.home()


class ZeroDynamics(StudyKind):
    name = "zero-dynamics"
    analysis_schema = ZeroDynamicsAnalysis

    def validate(self, arm, analysis):
        joint_configuration(arm, analysis.configuration, "analysis.configuration")

    def run_case(self, arm, case, analysis):
        joints = joint_configuration(arm, analysis.configuration, "analysis.configuration")
        model = case.discretization.build(arm, reference=joints)
        q = model.home()
        q[: arm.n_joints] = joints
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
        zeros = results[results["set"] == "zero"]
        scale = zeros.groupby("case")[["real", "imag"]].transform(lambda c: c.abs().max()).max(axis=1)
        right = zeros[zeros["real"] > 1e-9 * scale].groupby("case").size()
        summary = zeros.groupby("case").agg(
            zeros=("index", "size"),
            largest_real_part=("real", "max"),
            smallest_abs_imag=("imag", lambda v: v.abs().min()),
        )
        summary["right_half_plane"] = right.reindex(summary.index, fill_value=0)
        keys = case_keys(zeros).set_index("case")
        return {"zero dynamics": keys.join(summary).reset_index(drop=True)}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        text = [
            "Zeros of the linearized dynamics with the joint coordinates as outputs. Zeros in the "
            "right half-plane (right_half_plane > 0) make the joint-output system non-minimum phase."
        ]
        zeros = results[results["set"] == "zero"]
        for _, group in zeros.groupby("case"):
            label = label_of(group.iloc[0])
            values = ", ".join(f"{r:.4g}{i:+.4g}j" for r, i in zip(group["real"], group["imag"], strict=True))
            text.append(f"- {label}: {values}")
        if plots:
            names = complex_plane_plot(zeros, folder, "zero_dynamics")
            text.append(f"![zeros]({names[0]}) ([PDF]({names[1]}))")
        return text
