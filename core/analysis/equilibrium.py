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
residual; converged when max|Nᵀr| ≤ ``tol`` · max(max|NᵀG(q₀)|, max|NᵀK q₀|, max|Nᵀ B τ|, the
gravity loads per joint radian max|Nᵀ ∂G/∂q_j|) (the loads the equilibrium balances; an unloaded
arm is in equilibrium where it is).

**The Newton step on large models** (``method="krylov"``; ``"auto"`` above
:data:`KRYLOV_MINIMUM` coordinates with locked joints, on models whose gravity products are
cheap: the engine's). Forming ∂G/∂q costs n gravity
evaluations, each O(n) on a fine mesh (n = 1026: 14 s per tangent). The step instead solves
NᵀT N y = −Nᵀr by GMRES with the products T v = K v + (∂G/∂q) v — the gravity part one
complex-step directional derivative (:meth:`~core.dynamics.model.Model.gravity_stiffness_product`,
exact) — preconditioned by the Cholesky factor of the elastic part NᵀKN (which dominates on a
fine mesh, so GMRES needs a few products per step). Same residual, same convergence test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

#: Newton iterations before :class:`EquilibriumError`.
MAX_ITERATIONS = 50
#: Halvings of a Newton step that does not reduce the residual.
MAX_HALVINGS = 30
#: ``method="auto"`` takes the matrix-free Newton step above this many coordinates.
KRYLOV_MINIMUM = 128
#: Relative tolerance of the GMRES solve of a matrix-free Newton step: an inexact Newton step
#: (the residual itself is exact), converging linearly at about this factor per iteration near
#: the solution; tighter is not reachable on a fine mesh, whose K v loses ~ε·cond(K) to round-off.
KRYLOV_TOLERANCE = 1e-6
#: GMRES iterations per step: the elastic preconditioner leaves I + (NᵀKN)⁻¹Nᵀ(∂G/∂q)N, within
#: 1e-10 of I on the lumped arm (one iteration reaches 1e-9); near the round-off floor of the
#: residual no tolerance is reachable and the step stops here.
KRYLOV_ITERATIONS = 20
#: A GMRES solve that stops short of KRYLOV_TOLERANCE still gives a usable step down to this.
KRYLOV_ACCEPTABLE = 1e-3


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
    method: Literal["auto", "dense", "krylov"] = "auto",
) -> Equilibrium:
    """The static equilibrium of ``model`` from ``q`` (shape (n_dof,), finite: use
    :meth:`Model.equilibrium <core.dynamics.model.Model.equilibrium>`, which checks it); see the
    module docstring for the equations, the constraint and the convergence test.

    Raises
    ------
    ValueError
        ``joints`` not "locked" or "free", ``tau`` of the wrong shape, ``tol`` not in (0, 1),
        ``method`` not "auto", "dense" or "krylov", or "krylov" where the elastic part NᵀKN
        is not positive definite (free joints).
    EquilibriumError
        No convergence in :data:`MAX_ITERATIONS` iterations, or a singular tangent (no unique
        equilibrium nearby, e.g. free joints with nothing holding the arm against gravity).
    """
    if joints not in ("locked", "free"):
        raise ValueError(f"joints must be 'locked' or 'free', got {joints!r}")
    if method not in ("auto", "dense", "krylov"):
        raise ValueError(f"method must be 'auto', 'dense' or 'krylov', got {method!r}")
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

    newton_step = _step_method(model, N, joints, method)

    loads = [N.T @ model.gravity_forces(q0), N.T @ model.elastic_forces(q0), N.T @ drive]
    # The gravity load per radian of each joint (m g L of a hanging link, whose own load is
    # round-off there) keeps the scale meaningful where the loads themselves vanish.
    loads.extend(N.T @ column for column in _joint_gravity_stiffness(model, q0).T)
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
        try:
            step = N @ newton_step(q, r)
        except np.linalg.LinAlgError as error:
            raise EquilibriumError(
                f"equilibrium ({joints} joints): no Newton step at iteration {iteration} ({error}: "
                "the tangent stiffness is singular or nearly so, no unique equilibrium nearby; free "
                f"joints need torques or gravity that hold them), relative residual {size / scale:.3g}",
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


def _step_method(model, N: np.ndarray, joints: str, method: str):
    """The Newton step y(q, r) solving NᵀT(q)N y = −r: dense, or matrix-free (module docstring)."""
    krylov = method == "krylov" or (
        method == "auto"
        and joints == "locked"
        and model.n_dof > KRYLOV_MINIMUM
        and model.cheap_gravity_products
    )
    if not krylov:

        def dense(q: np.ndarray, r: np.ndarray) -> np.ndarray:
            tangent = N.T @ (model.elastic_stiffness(q) + model.gravity_stiffness(q)) @ N
            return np.linalg.solve(tangent, -r)

        return dense
    return _krylov_step(model, N)


def _krylov_step(model, N: np.ndarray):
    """The matrix-free Newton step: GMRES on NᵀT N preconditioned by the Cholesky factor of
    NᵀKN (K the elastic stiffness, constant for fixed-length links: factorized once)."""
    import scipy.linalg
    import scipy.sparse.linalg

    elastic = N.T @ model.elastic_stiffness(model.home()) @ N
    try:
        factor = scipy.linalg.cho_factor(elastic)
    except np.linalg.LinAlgError:
        raise ValueError(
            "method 'krylov' needs the elastic stiffness along the admissible motions to be positive "
            "definite (locked joints on flexible links); use 'dense'"
        ) from None
    size = N.shape[1]
    preconditioner = scipy.sparse.linalg.LinearOperator(
        (size, size), matvec=lambda x: scipy.linalg.cho_solve(factor, x)
    )

    def step(q: np.ndarray, r: np.ndarray) -> np.ndarray:
        K = model.elastic_stiffness(q)
        tangent = scipy.sparse.linalg.LinearOperator(
            (size, size), matvec=lambda y: N.T @ (K @ (N @ y) + model.gravity_stiffness_product(q, N @ y))
        )
        y, info = scipy.sparse.linalg.gmres(
            tangent,
            -r,
            M=preconditioner,
            rtol=KRYLOV_TOLERANCE,
            atol=0.0,
            restart=KRYLOV_ITERATIONS,
            maxiter=1,
        )
        reached = np.linalg.norm(tangent @ y + r) / np.linalg.norm(r)
        if info != 0 and not reached <= KRYLOV_ACCEPTABLE:
            raise np.linalg.LinAlgError(f"GMRES reduced the step's residual only to {reached:.1g}")
        return y

    return step


def _joint_gravity_stiffness(model, q: np.ndarray) -> np.ndarray:
    """The joint columns ∂G/∂q_j (n_dof, n_joints): by products where those are cheap."""
    if model.cheap_gravity_products:
        unit = np.eye(model.n_dof)[:, model.joints]
        return np.column_stack([model.gravity_stiffness_product(q, e) for e in unit.T])
    return model.gravity_stiffness(q)[:, model.joints]
