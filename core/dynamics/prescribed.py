"""Motion with prescribed joint accelerations, on any :class:`~core.dynamics.model.Model`: the
generic evaluation of :meth:`Model.prescribed_function <core.dynamics.model.Model.prescribed_function>`
from the model's primitives (a backend may fuse it into one compiled call:
:func:`core.dynamics.compiled.algorithms.prescribed`)."""

from __future__ import annotations

import numpy as np

#: The error of a prescribed motion no joint inputs realise.
SINGULAR = "prescribed motion: [M_qf  -B] is singular, no joint inputs realise the prescribed accelerations"


def prescribed_terms(model, q: np.ndarray, qd: np.ndarray, qdd_joints: np.ndarray):
    """(q̈, τ, [q̇ᵀBτ, q̇ᵀDq̇ − uᵀτ_c], ½ q̇ᵀMq̇) when the joint accelerations q̈_r are prescribed
    (the joints first in q; u = Bᵀq̇, as :meth:`Model.rates_function
    <core.dynamics.model.Model.rates_function>`), every model primitive evaluated once.

    Every row of M q̈ + R = B τ, with R = C q̇ + G + D q̇ + ∂V_e/∂q − B τ_c, is one equation for
    the unknowns (q̈_f, τ): [M_:f  −B] [q̈_f; τ] = −M_:r q̈_r − R, solved by LU (only M_ff need be
    regular; :func:`core.analysis.simulation.prescribed_motion` says why). No input checks.

    Raises
    ------
    numpy.linalg.LinAlgError
        When the system is singular (no joint inputs realise the motion).
    """
    n, n_joints = model.n_dof, model.n_joints
    M = model.mass_matrix(q)
    B = model.input_matrix(q)
    # B τ_c − D q̇ − ∂V_e/∂q and ∂V_e/∂q, the elastic forces evaluated once
    applied, elastic = model._applied_with_elastic(q, qd, np.zeros(n_joints))
    R = model.nonlinear_forces(q, qd) - applied
    system = np.concatenate([M[:, n_joints:], -B], axis=1)
    try:
        solved = np.linalg.solve(system, -(M[:, :n_joints] @ qdd_joints) - R)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(SINGULAR) from None
    tau = solved[n - n_joints :]
    qdd = np.concatenate([qdd_joints, solved[: n - n_joints]])
    return qdd, tau, powers(qd, B, tau, applied, elastic), float(0.5 * qd @ M @ qd)


def powers(
    qd: np.ndarray, B: np.ndarray, tau: np.ndarray, applied: np.ndarray, elastic: np.ndarray
) -> np.ndarray:
    """[q̇ᵀBτ, q̇ᵀDq̇ − uᵀτ_c] from the applied forces B τ_c − D q̇ − ∂V_e/∂q and ∂V_e/∂q:
    q̇ᵀ(D q̇ − B τ_c) = −q̇ᵀ(applied + ∂V_e/∂q), no second call of D and τ_c (for an arm without
    damping and friction both terms are the same product, and the power exactly 0)."""
    return np.array([qd @ (B @ tau), -(qd @ (applied + elastic))])
