"""Linear analyses beyond natural frequencies: zero dynamics and closed-loop eigenvalues."""

from __future__ import annotations

import warnings

import numpy as np

from core.dynamics.model import LINEARIZE_STEP, Model
from core.numerics.derivatives import central_difference_jacobian


def zero_dynamics(model: Model, q=None, outputs: str = "joint_coordinates") -> np.ndarray:
    """Eigenvalues of the linearized zero dynamics with joint outputs held, about q at rest.

    ``q``: a configuration (default :meth:`Model.home`) or an
    :class:`~core.analysis.equilibrium.Equilibrium` (its q). ``outputs``: the outputs held, as
    in :meth:`Model.state_space`: ``"joint_coordinates"`` (default) holds q_r, the joint
    coordinates; ``"joints"`` holds the motor angles Bᵀq. They differ only for pinned frames,
    where q_r are the chord angles (toward the tip, a non-collocated output) and Bᵀq the hub
    angles (collocated). With y = C_y q held, q moves in the null space N of C_y
    (N = [0; I] or [−B_fᵀ; I]) and the input is solved from the joint rows; projecting the
    equations on L = [−B_f, I] (L B = 0) leaves

        L M N ÿ + L D N ẏ + L K_t N y = 0,

    with K_t the tangent stiffness of :meth:`Model.tangent_stiffness`
    (K + ∂G/∂q, plus Σ_k ∂M/∂q_k q̈₀ e_kᵀ − ∂(Bτ₀)/∂q). For ``"joint_coordinates"``,
    L M N = M_ff − B_f M_rf. Clamped frames (B_f = 0): ±i × the locked frequencies. Pinned
    frames with q_r held: the joint torque also drives the flexible coordinates and zeros appear
    in both half-planes (non-minimum phase); with Bᵀq held: ±i × the locked frequencies.

    The point is the rest state (q, q̇ = 0) with the outputs held, ÿ = 0: the input τ₀ and the
    accelerations q̈₀ = N a solve M q̈₀ + G + ∂V_e/∂q = B τ₀ (L M N a = −L(G + ∂V_e/∂q)). At a
    static equilibrium of the held arm (e.g. ``model.equilibrium(q)``, which holds Bᵀq and so
    also q_r) a = 0 and τ₀ are the holding torques; elsewhere a ≠ 0, the zero dynamics is
    linearized about a moving state (the Σ ∂M/∂q_k q̈₀ term is included, so the result equals
    the transmission zeros of :meth:`Model.state_space` at (q, τ₀)) and a RuntimeWarning says so.

    Returns
    -------
    ndarray of complex, shape (2 n_flex,), sorted by real then imaginary part.
    """
    from core.analysis.state_space import REST_TOLERANCE, rest_point

    q, _ = rest_point(model, q)
    M, B = model.mass_matrix(q), model.input_matrix(q)
    N, L = _held(model, B, outputs)
    qdd, tau, off = _held_rest(model, q, M, N, L)
    if off > REST_TOLERANCE:
        warnings.warn(
            f"zero_dynamics: the held arm is not at rest at q (unbalanced force {off:.3g} of the "
            "loads): linearized about a moving state; pass model.equilibrium(q) for a rest point",
            RuntimeWarning,
            stacklevel=2,
        )
    K = model.tangent_stiffness(q, qdd, tau)
    M_z, D_z, K_z = L @ M @ N, L @ model.damping_matrix(q) @ N, L @ K @ N
    m = M_z.shape[0]
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-np.linalg.solve(M_z, K_z), -np.linalg.solve(M_z, D_z)]])
    eigenvalues = np.linalg.eigvals(A)
    return eigenvalues[np.lexsort((eigenvalues.imag, eigenvalues.real))]


def _held(model: Model, B: np.ndarray, outputs: str) -> tuple[np.ndarray, np.ndarray]:
    """(N, L): the motions that keep the outputs, and the annihilator [−B_f, I] of B."""
    if outputs not in ("joint_coordinates", "joints"):
        raise ValueError(f"outputs must be 'joint_coordinates' or 'joints', got {outputs!r}")
    B_f = B[model.flex]
    L = np.hstack([-B_f, np.eye(B_f.shape[0])])
    if outputs == "joints":
        return L.T, L
    return np.vstack([np.zeros((model.n_joints, B_f.shape[0])), np.eye(B_f.shape[0])]), L


def _held_rest(model: Model, q, M, N, L) -> tuple[np.ndarray, np.ndarray, float]:
    """(q̈₀, τ₀, unbalanced): the rest state with the outputs held (ÿ = 0), the torques that
    hold them and the unbalanced force max|L(G + ∂V_e/∂q)| relative to the largest load."""
    gravity, elastic = model.gravity_forces(q), model.elastic_forces(q)
    forces = gravity + elastic
    qdd = N @ np.linalg.solve(L @ M @ N, -L @ forces)
    tau = (M @ qdd + forces)[model.joints]  # the joint rows of B are the identity
    scale = max(float(np.max(np.abs(f), initial=0.0)) for f in (L @ gravity, L @ elastic))
    off = float(np.max(np.abs(L @ forces), initial=0.0)) / scale if scale else 0.0
    return qdd, tau, off


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
