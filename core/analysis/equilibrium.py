"""Static equilibrium under gravity, elastic forces and joint torques (``Model.equilibrium``).

At rest (q̇ = q̈ = 0) the equations of motion reduce to the residual

    r(q) = G(q) + ∂V_e/∂q(q) − B(q) τ = 0,

whose Jacobian is the tangent stiffness T(q) = ∂²V_e/∂q² + ∂G/∂q (the elastic stiffness of
:meth:`~core.dynamics.model.Model.elastic_stiffness` and the gravity stiffness of
:meth:`~core.dynamics.model.Model.gravity_stiffness`; B τ is taken at the start, B constant for
fixed-length links).

``joints="locked"``: the motors hold their angles, Bᵀq = Bᵀq₀ whatever the frame (for a
clamped frame the joint coordinates themselves; for a pinned frame the hub angle θ + φ'(0)ᵀδ).
The admissible motions are q = q₀ + N y with N = [−B_fᵀ; I] spanning the null space of Bᵀ, and
the motors supply any torque along B, so the equilibrium solves Nᵀ r(q₀ + N y) = 0 (NᵀB = 0:
the given torques do not matter) and the holding torques are the joint rows of r there.
``joints="free"``: r(q) = 0 over every coordinate with the given torques.

Newton's method on the analytic tangent, with the step halved while it does not reduce the
residual; converged when max|Nᵀr| ≤ ``tol`` · max(max|NᵀG(q₀)|, max|NᵀK q₀|, max|Nᵀ B τ|) (the
loads the equilibrium balances; an unloaded arm is in equilibrium where it is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

#: Newton iterations before :class:`EquilibriumError`.
MAX_ITERATIONS = 50
#: Halvings of a Newton step that does not reduce the residual.
MAX_HALVINGS = 30


class EquilibriumError(RuntimeError):
    """Newton's method found no static equilibrium; ``q`` is where it stopped and ``residual``
    the largest residual force there (relative to the loads)."""

    def __init__(self, message: str, q: np.ndarray, residual: float) -> None:
        super().__init__(message)
        self.q = q
        self.residual = residual


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium: the configuration, the torques that hold it (the motors' for
    locked joints, the given ones for free joints), the relative residual and the iterations."""

    q: np.ndarray
    torques: np.ndarray
    residual: float
    iterations: int


def static_equilibrium(
    model,
    q: np.ndarray,
    joints: Literal["locked", "free"] = "locked",
    tau=None,
    tol: float = 1e-10,
) -> Equilibrium:
    """The static equilibrium of ``model`` from ``q`` (shape (n_dof,), finite: use
    :meth:`Model.equilibrium <core.dynamics.model.Model.equilibrium>`, which checks it); see the
    module docstring for the equations, the constraint and the convergence test.

    Raises
    ------
    ValueError
        ``joints`` not "locked" or "free", ``tau`` of the wrong shape, ``tol`` not in (0, 1).
    EquilibriumError
        No convergence in :data:`MAX_ITERATIONS` iterations, or a singular tangent (no unique
        equilibrium nearby, e.g. free joints with nothing holding the arm against gravity).
    """
    if joints not in ("locked", "free"):
        raise ValueError(f"joints must be 'locked' or 'free', got {joints!r}")
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ValueError(f"tol must be a relative residual in (0, 1), got {tol!r}")
    q0 = np.array(q, dtype=float)  # checked by Model.equilibrium
    tau = np.zeros(model.n_joints) if tau is None else np.asarray(tau, dtype=float)
    if tau.shape != (model.n_joints,):
        raise ValueError(f"tau must have shape ({model.n_joints},), got {tau.shape}")
    B = model.input_matrix(q0)
    if joints == "locked":
        N = np.vstack([-B[model.flex].T, np.eye(model.n_dof - model.n_joints)])
        drive = np.zeros(model.n_dof)  # NᵀB = 0: the motors take any torque
    else:
        N = np.eye(model.n_dof)
        drive = B @ tau

    def residual(q: np.ndarray) -> np.ndarray:
        return N.T @ (model.gravity_forces(q) + model.elastic_forces(q) - drive)

    loads = [N.T @ model.gravity_forces(q0), N.T @ model.elastic_forces(q0), N.T @ drive]
    # The gravity load per radian (m g L of a hanging link, whose own load is round-off there)
    # keeps the scale meaningful where the loads themselves vanish.
    loads.append(N.T @ np.abs(model.gravity_stiffness(q0)) @ np.ones(model.n_dof))
    scale = max(float(np.max(np.abs(load), initial=0.0)) for load in loads)
    q, r = q0.copy(), residual(q0)
    size = float(np.max(np.abs(r), initial=0.0))
    for iteration in range(MAX_ITERATIONS + 1):
        if size <= tol * scale:
            forces = model.gravity_forces(q) + model.elastic_forces(q)
            torques = forces[model.joints] if joints == "locked" else tau
            return Equilibrium(q, torques, size / scale if scale else 0.0, iteration)
        if iteration == MAX_ITERATIONS:
            break
        tangent = N.T @ (model.elastic_stiffness(q) + model.gravity_stiffness(q)) @ N
        try:
            step = N @ np.linalg.solve(tangent, -r)
        except np.linalg.LinAlgError:
            raise EquilibriumError(
                f"equilibrium ({joints} joints): the tangent stiffness is singular at iteration "
                f"{iteration} (no unique equilibrium nearby; free joints need torques or gravity "
                f"that hold them), relative residual {size / scale:.3g}",
                q,
                size / scale,
            ) from None
        for _ in range(MAX_HALVINGS):
            trial = residual(q + step)
            if np.max(np.abs(trial)) < size:
                break
            step = step / 2
        else:
            floor = _round_off_floor(model, N, q) / scale
            hint = (
                f"; that is the round-off floor of the residual here (~{floor:.1g}: elastic forces "
                f"K q of a stiff mesh), ask for tol above it"
                if size / scale <= 10 * floor
                else "; no stable equilibrium nearby?"
            )
            raise EquilibriumError(
                f"equilibrium ({joints} joints): no step along Newton's direction reduces the "
                f"residual at iteration {iteration} (relative residual {size / scale:.3g}{hint})",
                q,
                size / scale,
            )
        q, r = q + step, trial
        size = float(np.max(np.abs(r)))
    raise EquilibriumError(
        f"equilibrium ({joints} joints): not converged in {MAX_ITERATIONS} Newton iterations, "
        f"relative residual {size / scale:.3g} > tol = {tol:g}",
        q,
        size / scale,
    )


def _round_off_floor(model, N: np.ndarray, q: np.ndarray) -> float:
    """The size of the residual's round-off: ε times the magnitudes summed into it,
    max |Nᵀ| (|K| |q| + |G|) (the elastic forces K q of a fine mesh cancel from entries ~EI/h³)."""
    magnitudes = np.abs(model.elastic_stiffness(q)) @ np.abs(q) + np.abs(model.gravity_forces(q))
    return float(np.finfo(float).eps * np.max(np.abs(N.T) @ magnitudes))
