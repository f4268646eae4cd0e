"""Linear analyses beyond natural frequencies: zero dynamics and closed-loop eigenvalues."""

from __future__ import annotations

import numpy as np

from core.dynamics.model import LINEARIZE_STEP, Model
from core.numerics.derivatives import central_difference_jacobian


def zero_dynamics(model: Model, q=None) -> np.ndarray:
    """Eigenvalues of the linearized zero dynamics with the joint coordinates as outputs.

    Holding q_r at its value in ``q`` (default: all zero), the joint rows give
    the input τ = M_rf q̈_f + D_rf q̇_f + K_rf q_f, and the flexible rows become

        (M_ff − B_f M_rf) q̈_f + (D_ff − B_f D_rf) q̇_f + (K_ff − B_f K_rf) q_f = 0

    (K includes ∂G/∂q). Clamped frames (B_f = 0): ±i × the locked
    frequencies. Pinned frames: the joint torque also drives the flexible
    coordinates and zeros appear in both half-planes (non-minimum phase).

    Returns
    -------
    ndarray of complex, shape (2 n_flex,), sorted by real then imaginary part.
    """
    q = model.home() if q is None else np.asarray(q, dtype=float)
    M = model.mass_matrix(q)
    D = model.damping_matrix(q)
    K = model.elastic_stiffness(q) + model.gravity_stiffness(q)
    B = model.input_matrix(q)
    r, f = model.joints, model.flex
    B_f = B[f]
    M_z = M[f, f] - B_f @ M[r, f]
    D_z = D[f, f] - B_f @ D[r, f]
    K_z = K[f, f] - B_f @ K[r, f]
    m = M_z.shape[0]
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-np.linalg.solve(M_z, K_z), -np.linalg.solve(M_z, D_z)]])
    eigenvalues = np.linalg.eigvals(A)
    return eigenvalues[np.lexsort((eigenvalues.imag, eigenvalues.real))]


def closed_loop_eigenvalues(
    model: Model, controller, q, qd=None, trajectory=None, t: float = 0.0
) -> np.ndarray:
    """Eigenvalues of the closed loop ẋ = f(x, controller(x)) linearized at (q, q̇) and time t.

    Central differences of the exact closed-loop dynamics (relative step
    ``core.dynamics.model.LINEARIZE_STEP``); with a trajectory the reference at t is
    held fixed (frozen-time analysis).
    """
    q = np.asarray(q, dtype=float)
    qd = np.zeros(model.n_dof) if qd is None else np.asarray(qd, dtype=float)
    reference = None if trajectory is None else trajectory.evaluate(t)
    n = model.n_dof

    def f(x: np.ndarray) -> np.ndarray:
        tau = controller(t, x[:n], x[n:], model, reference)
        return np.concatenate([x[n:], model.forward_dynamics(x[:n], x[n:], tau, friction=False)])

    A = central_difference_jacobian(f, np.concatenate([q, qd]), LINEARIZE_STEP)
    return np.linalg.eigvals(A)
