"""``verify``: randomized property checks of the user's own models.

For every case, over ``samples`` random states (joint variables uniform in
±π or ±0.5 m, deflections of size ``flex_scale``, rates and inputs standard
normal; seeded, so reruns are identical):

================ ============================================== =====================
check            worst value reported                           passes when
================ ============================================== =====================
symmetry         max|M − Mᵀ| / max|M|                            ≤ tolerance
definiteness     λ_min(M) / λ_max(M)                             > 0
skew             max|(Ṁ − 2C) + (Ṁ − 2C)ᵀ| / (max|M| max|q̇|)     ≤ fd_tolerance
power            |d(T+V)/dt − q̇ᵀB(τ+τ_c) + q̇ᵀDq̇| / scale          ≤ fd_tolerance
energy           ``core.energy_drift`` over ``simulate`` s        ≤ energy_tolerance
================ ============================================== =====================

Ṁ is taken by central differences (step 1e-6), independent of the model's
C, hence ``fd_tolerance``. The energy check runs only when ``simulate`` > 0
and the arm has no damping or friction (else it is reported as skipped).
The first locked frequencies of each case are kept too, so the report can
show the AMM/FEM agreement trend against the finest case.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field, NonNegativeInt

from core.analysis.simulation import energy_drift, simulate
from studies.discretizations import finest_case, label_of, per_case
from studies.kinds.base import WARM_UP_SPAN, AnalysisSchema, StudyKind, lightest_by_backend
from studies.kinds.frequencies import FrequencyCount
from studies.limits import Deflection, Span, Tolerance, work_count

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd


class VerifyAnalysis(AnalysisSchema):
    samples: work_count(
        1_000_000,
        "four mass matrices and a forward dynamics each: days of work per case",
        soft=10_000,
        soft_why="four mass matrices and a forward dynamics per state and case",
    ) = Field(20, description="Random states per case.")
    seed: NonNegativeInt = Field(0, description="Seed of the random states.")
    flex_scale: Deflection = Field(0.05, description="Standard deviation of the random flexible coordinates.")
    tolerance: Tolerance = Field(1e-12, description="Largest relative asymmetry of M.")
    fd_tolerance: Tolerance = Field(
        1e-6, description="Largest skew and power errors (Ṁ by central differences)."
    )
    simulate: Span = Field(
        0.0, description="Length of the energy-conservation simulation; 0: no energy check [s]."
    )
    energy_tolerance: Tolerance = Field(1e-6, description="Largest relative energy drift of that simulation.")
    n_frequencies: FrequencyCount = Field(
        3, description="Locked frequencies kept per case for the AMM/FEM agreement table."
    )


def _random_state(model, rng, scale):
    q = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, model.n_joints),
            scale * rng.standard_normal(model.n_dof - model.n_joints),
        ]
    )
    for i, (joint, link) in enumerate(zip(model.arm.joints, model.arm.links, strict=True)):
        if joint.kind == "prismatic":
            # A translating link's joint variable is its free length.
            q[i] = rng.uniform(0.3 * link.length, link.length) if link.is_flexible else rng.uniform(-0.5, 0.5)
    return q, rng.standard_normal(model.n_dof)


def _checks(model, analysis: VerifyAnalysis, rng) -> dict[str, float]:
    worst = {"symmetry": 0.0, "definiteness": np.inf, "skew": 0.0, "power": 0.0}
    h = 1e-6
    for _ in range(analysis.samples):
        q, qd = _random_state(model, rng, analysis.flex_scale)
        M = model.mass_matrix(q)
        scale_M = np.max(np.abs(M))
        worst["symmetry"] = max(worst["symmetry"], np.max(np.abs(M - M.T)) / scale_M)
        eigenvalues = np.linalg.eigvalsh(0.5 * (M + M.T))
        worst["definiteness"] = min(worst["definiteness"], eigenvalues[0] / eigenvalues[-1])
        M_dot = (model.mass_matrix(q + h * qd) - model.mass_matrix(q - h * qd)) / (2 * h)
        S = M_dot - 2 * model.coriolis_matrix(q, qd)
        worst["skew"] = max(worst["skew"], np.max(np.abs(S + S.T)) / (scale_M * np.max(np.abs(qd))))
        tau = rng.standard_normal(model.n_joints)
        qdd = model.forward_dynamics(q, qd, tau)
        rate = qd @ (M @ qdd + 0.5 * M_dot @ qd + model.elastic_forces(q) + model.gravity_forces(q))
        power = (
            qd @ model.input_matrix(q) @ (tau + model.friction_forces(q, qd))
            - qd @ model.damping_matrix(q) @ qd
        )
        scale = max(abs(rate), abs(power), scale_M * (qd @ qd), 1.0)
        worst["power"] = max(worst["power"], abs(rate - power) / scale)
    return worst


def _energy_drift(model, analysis: VerifyAnalysis, rng) -> float | None:
    """:func:`core.analysis.simulation.energy_drift` of an unforced, undamped simulation
    (DOP853 at the default tolerances) from a random state; None when skipped."""
    if analysis.simulate == 0 or np.any(model.damping_matrix(model.home())):
        return None
    if any(j.coulomb_friction for j in model.arm.joints):
        return None
    q, qd = _random_state(model, rng, analysis.flex_scale)
    frame = simulate(model, (0.0, analysis.simulate), q, qd, method="DOP853")
    return energy_drift(frame)


class Verify(StudyKind):
    analysis_schema = VerifyAnalysis

    def warm_up(self, arm, cases, analysis):
        """:meth:`run_case` of the lightest case of each backend with one random state and the
        energy simulation over :data:`~studies.kinds.base.WARM_UP_SPAN` of its span: the
        compiled kernels the checks call (mass matrix, forward and inverse dynamics, the
        compiled DOP853) are loaded before the first case's clock starts (it carried 0.7 s of
        the example's 0.8 s of cases)."""
        short = analysis.model_copy(update={"samples": 1, "simulate": WARM_UP_SPAN * analysis.simulate})
        for light in lightest_by_backend(arm, cases).values():
            self.run_case(arm, light, short)

    def run_case(self, arm, case, analysis):
        model = case.discretization.build(arm)
        rng = np.random.default_rng([analysis.seed, *case.discretization.seed])
        worst = _checks(model, analysis, rng)
        drift = _energy_drift(model, analysis, rng)
        base = {**case.columns(), "n_dof": model.n_dof}
        limits = {
            "symmetry": (analysis.tolerance, worst["symmetry"] <= analysis.tolerance),
            "definiteness": (0.0, worst["definiteness"] > 0),
            "skew": (analysis.fd_tolerance, worst["skew"] <= analysis.fd_tolerance),
            "power": (analysis.fd_tolerance, worst["power"] <= analysis.fd_tolerance),
        }
        rows = [
            {
                **base,
                "check": name,
                "worst": float(worst[name]),
                "tolerance": limit,
                "passed": bool(ok),
                "samples": analysis.samples,
            }
            for name, (limit, ok) in limits.items()
        ]
        rows.append(
            {
                **base,
                "check": "energy",
                "worst": np.nan if drift is None else drift,
                "tolerance": analysis.energy_tolerance,
                "passed": True if drift is None else bool(drift <= analysis.energy_tolerance),
                "samples": 0 if drift is None else 1,
            }
        )
        omega = model.natural_frequencies(model.home(), "locked")[: analysis.n_frequencies]
        rows += [
            {
                **base,
                "check": f"omega_{k}",
                "worst": float(w),
                "tolerance": np.nan,
                "passed": True,
                "samples": 0,
            }
            for k, w in enumerate(omega, start=1)
        ]
        return rows

    def tables(self, results, arm, analysis):
        checks = results[~results["check"].str.startswith("omega_")]
        return {"worst violations": per_case(checks, "check", "worst", ""), "agreement": _agreement(results)}

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from studies.kinds.verify_figures import check_plot

        checks = results[~results["check"].str.startswith("omega_")]
        failed = checks[~checks["passed"]]
        verdict = (
            "all checks passed"
            if failed.empty
            else f"{len(failed)} check(s) FAILED: "
            + ", ".join(
                f"{label_of(r)} {r['check']} ({r['worst']:.3g} > {r['tolerance']:.3g})"
                for _, r in failed.iterrows()
            )
        )
        text = [
            f"{analysis.samples} random states per case (seed {analysis.seed}); {verdict}.",
            f"Tolerances: symmetry {analysis.tolerance:g}, skew and power {analysis.fd_tolerance:g} (central differences), energy {analysis.energy_tolerance:g}.",
        ]
        if plots and (checks["worst"] > 0).any():
            names = check_plot(checks, CHECK_LABELS, folder)
            exact = [c for c in CHECK_LABELS if (checks.loc[checks["check"] == c, "worst"] == 0).all()]
            text.append(
                "Worst value of each check per case, its tolerance dashed"
                + (f" ({', '.join(exact)}: exactly 0 in every case, not drawn)" if exact else "")
                + f": ![checks]({names[0]}) ([PDF]({names[1]}))"
            )
        return text


#: Axis labels of the checks' worst values in the figure (every one a ratio).
CHECK_LABELS = {
    "symmetry": "max|M − Mᵀ| / max|M| [–]",
    "definiteness": r"$\lambda_\min(M) / \lambda_\max(M)$ [–]",
    "skew": "skew residual of Ṁ − 2C [–]",
    "power": "power residual [–]",
    "energy": "energy drift [–]",
}


def _agreement(results: pd.DataFrame) -> pd.DataFrame:
    """First locked frequencies of each case and their relative difference to the finest case."""
    omega = results[results["check"].str.startswith("omega_")].copy()
    omega["mode"] = omega["check"].str.removeprefix("omega_").astype(int)
    finest = finest_case(omega)
    reference = omega[omega["case"] == finest].set_index("mode")["worst"]
    omega["rel_diff_to_finest"] = (omega["worst"] - omega["mode"].map(reference)) / omega["mode"].map(
        reference
    )
    return per_case(omega, "mode", "rel_diff_to_finest", "rel_diff_omega_")
