"""Articulated-body recursion over the generalized bodies of a chain (``solver="recursive"``).

Body i (link i with its hub, motor and payloads) moves with ν_i = (V_i, σ̇_i):
V_i ∈ R⁶ the *spatial* twist of its link frame (velocity of the point at the
base origin and angular velocity, base axes) and σ̇_i its internal rates (δ̇_i,
and l̇_i for a translating link). In spatial coordinates the joint map is
simply

    V_i = V_{i−1} + P_{i−1} σ̇_{i−1} + s_i q̇_i,   i.e.  ν_i = A_i ν_{i−1} + S_i u_i,
    A_i = [[1₆, P_{i−1}], [0, 0]],   S_i = [[s_i, 0], [0, 1]],

with s_i the spatial axis of joint i, P_{i−1} the spatial twist of the parent's
tip frame per unit of its internal rates, and u_i = (q̇_i, δ̇_i) (a translating
link has no s_i: u_i = σ̇_i = (δ̇_i, l̇_i)). Every inertia of body i is a
quadratic form in ν_i: the floating-frame M_b(σ) of a flexible link through
ν_b = X_i ν_i, rigid links and hubs as spatial inertias, the hub's rotary
inertia on ω_i + z_i (b_iᵀ δ̇_i) (pinned frames), payloads on the tip twist
V_i + P_i σ̇_i; the reflected motor inertia is an armature I_r b b ᵀ on u_i.
So M = Σ_i J_iᵀ M̄_i J_i + armatures, and M q̈ = Q is solved by Featherstone's
articulated-body recursion (Rigid Body Dynamics Algorithms, 2008, ch. 7) with
(1 + m_i)-dimensional joint projections D_i = S_iᵀ I^A_i S_i + armature:
a backward pass of articulated inertias I^A_i and forces p^A_i, then a forward
pass of accelerations. The velocity-product forces are already in Q (from
:meth:`~core.dynamics.engine.ChainModel.bias_forces`), so the recursion runs with zero
velocity terms. Cost: O(n) recursion steps of O((6 + m_i)³) each; the frames
themselves still come from :class:`~core.dynamics.kinematics.ChainKinematics`
(Jacobians over all of q, O(n²)).
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from core.dynamics.composite import composite_solver
from core.dynamics.newton_euler import body_mass
from core.numerics.rotations import spatial_inertia


class RecursiveNotSupported(UserWarning):
    """The recursive solver cannot handle a feature of this model and fell back to ``"composite"``."""


def _skew(v: np.ndarray) -> np.ndarray:
    """ṽ of one 3-vector (core.numerics.rotations.skew handles batches, at ~5× the cost)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _shift(r: np.ndarray, twist: np.ndarray) -> np.ndarray:
    """Twists (rows v at point a, ω; shape (6, k)) moved to point a + r: v − r̃ ω."""
    out = twist.copy()
    out[:3] -= _skew(r) @ twist[3:]
    return out


class _Body:
    """The data of one generalized body for the recursion."""

    __slots__ = ("A", "S", "armature", "inertia", "u")


class _Layout:
    """The configuration-independent structure of a chain for the recursion."""

    def __init__(self, model) -> None:
        B = model._B
        self.sigma, self.u, self.armature, self.hub, self.payloads, self.inertia = [], [], [], [], [], []
        for i, (joint, link) in enumerate(zip(model.arm.joints, model.arm.links, strict=True)):
            number = i + 1
            translating = number in model.translating
            sigma = list(range(model.n_dof)[model.flex_columns[number]]) if link.is_flexible else []
            if translating:
                sigma.append(i)
            u = np.array(sigma if translating else [i, *sigma], dtype=int)
            self.sigma.append(np.array(sigma, dtype=int))
            self.u.append(u)
            self.armature.append(
                joint.reflected_inertia * np.outer(B[u, i], B[u, i]) if joint.motor_inertia else None
            )
            # The hub turns with the beam root (pinned frames): ω_hub = ω_i + z (bᵀ σ̇).
            self.hub.append(B[sigma, i] if joint.hub_inertia and joint.kind == "revolute" else None)
            self.payloads.append([(p.mass, p.inertia_tensor()) for p in model._payloads(number)])
            self.inertia.append(
                None if link.is_flexible else (link.mass, np.asarray(link.com), link.inertia_tensor())
            )


_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def chain_bodies(model, q: np.ndarray) -> list[_Body]:
    """The generalized bodies of ``model`` (a ChainModel) at real configuration q.

    Twists of body i are taken about its link-frame origin p_i (base axes), which
    keeps the spatial inertias free of the large offsets (and cancellations) of
    base-origin coordinates; ``A`` of body i maps ν_{i−1} to its frame twist.
    """
    layout = _LAYOUTS.get(model)
    if layout is None:
        layout = _LAYOUTS[model] = _Layout(model)
    frames = model._real_terms(q)["frames"]
    bodies = []
    previous = None  # (p_tip, tip twist columns about p_tip, p_link) of the parent
    for i, (joint, f) in enumerate(zip(model.arm.joints, frames, strict=True)):
        number = i + 1
        translating = number in model.translating
        sigma = layout.sigma[i]
        k = sigma.size
        p = f.p_link[0]
        b = _Body()
        b.u = layout.u[i]
        b.armature = layout.armature[i]
        b.S = np.zeros((6 + k, b.u.size))
        if not translating:
            # The joint axis passes through p_i: s_i = (velocity of p_i, ω) per unit q̇_i.
            b.S[:3, 0] = f.Jv_link[0][:, i]
            b.S[3:6, 0] = f.Jw_link[0][:, i]
        b.S[6:, b.u.size - k :] = np.eye(k)
        if previous is None:
            b.A = None
        else:
            p_tip_parent, P_parent, p_parent = previous
            b.A = np.empty((6, 6 + P_parent.shape[1]))
            b.A[:, :6] = _shift(p - p_parent, np.eye(6))
            b.A[:, 6:] = _shift(p - p_tip_parent, P_parent)
        p_tip = f.p_tip[0]
        P = np.vstack([f.Jv_tip[0][:, sigma], f.Jw_tip[0][:, sigma]])  # tip twist about p_tip per σ̇
        previous = (p_tip, P, p)
        rigid = layout.inertia[i]
        if rigid is None:
            body = model.bodies[number]
            R = f.R_body[0]
            if translating:
                Mb = body.mass_matrix(q[sigma[:-1]][None], q[sigma[-1:]])[0]
            else:
                Mb = body_mass(body, q[sigma])
            # ν_b = X ν_i with X = diag(Rᵀ, Rᵀ, 1): rotate the (v, Ω) rows and columns.
            M = Mb.copy()
            for r in (slice(0, 3), slice(3, 6)):
                M[r] = R @ M[r]
                M[:, r] = M[:, r] @ R.T
            turn = f.Jw_body[0][:, sigma] - f.Jw_link[0][:, sigma]
            if np.any(turn):
                # A pinned frame bending in two planes: the beam frame also turns with the
                # link's own rates, ω_b = ω_i + Γ δ̇ (core.dynamics.kinematics), i.e. ν ↦ T ν with
                # T = 1 + (Ω rows ← Γ on the δ̇ columns).
                T = np.eye(6 + k)
                T[3:6, 6:] = turn
                M = T.T @ M @ T
        else:
            M = np.zeros((6 + k, 6 + k))
            mass, com, tensor = rigid
            R = f.R_link[0]
            M[:6, :6] = spatial_inertia(mass, R @ com, R @ tensor @ R.T)
        if joint.hub_mass:
            M[:3, :3] += joint.hub_mass * np.eye(3)
        if layout.hub[i] is not None:
            z = f.z_joint[0]
            L = np.zeros((3, 6 + k))
            L[:, 3:6] = np.eye(3)
            L[:, 6:] = np.outer(z, layout.hub[i])
            w = z @ L  # the hub's rate about z per ν_i
            M += joint.hub_inertia * np.outer(w, w)
        if layout.payloads[i]:
            tip = np.empty((6, 6 + k))
            tip[:, :6] = _shift(p_tip - p, np.eye(6))
            tip[:, 6:] = P
            R = f.R_end[0]
            for mass, tensor in layout.payloads[i]:
                M += tip.T @ spatial_inertia(mass, np.zeros(3), R @ tensor @ R.T) @ tip
        b.inertia = M
        bodies.append(b)
    return bodies


def articulated_solve(model, q: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve M(q) q̈ = rhs by the articulated-body recursion (see the module docstring).

    Parameters
    ----------
    model : ChainModel
    q : ndarray, shape (n_dof,)
    rhs : ndarray, shape (n_dof,)
        Generalized forces including the velocity-product terms [N or N m].

    Returns
    -------
    ndarray, shape (n_dof,)
        q̈.
    """
    bodies = chain_bodies(model, q)
    n = len(bodies)
    IA = [b.inertia.copy() for b in bodies]
    pA = [np.zeros(b.inertia.shape[0]) for b in bodies]
    U, W, L, tau = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n - 1, -1, -1):
        b = bodies[i]
        U[i] = IA[i] @ b.S
        D = b.S.T @ U[i]
        if b.armature is not None:
            D = D + b.armature
        # D = L Lᵀ; the Schur complement I^A − U D⁻¹ Uᵀ = I^A − WᵀW with W = L⁻¹Uᵀ
        # (an explicit D⁻¹ loses cond(D)·ε, large for the slope rows of beam elements;
        # L⁻¹ only √cond(D)·ε).
        L[i] = np.linalg.inv(np.linalg.cholesky(D))  # L⁻¹ (small, triangular)
        W[i] = L[i] @ U[i].T
        tau[i] = rhs[b.u] - b.S.T @ pA[i]
        if i == 0:
            break
        t = L[i] @ tau[i]
        Ia = IA[i][:6, :6] - W[i][:, :6].T @ W[i][:, :6]
        pa = pA[i][:6] + W[i][:, :6].T @ t
        A = b.A  # rows 6: of the full map are zero
        IA[i - 1] += A.T @ Ia @ A
        pA[i - 1] += A.T @ pa
    qdd = np.zeros(model.n_dof)
    previous = None  # the parent's ν̇ (the base is fixed)
    for i, b in enumerate(bodies):
        a = np.zeros(b.inertia.shape[0])
        if previous is not None:
            a[:6] = b.A @ previous
        ud = L[i].T @ (L[i] @ (tau[i] - U[i].T @ a))
        qdd[b.u] = ud
        previous = a + b.S @ ud
    return qdd


def recursive_solver(model, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> np.ndarray:
    """``SOLVERS["recursive"]``: the compiled articulated-body algorithm of
    :mod:`core.dynamics.compiled` (velocity products and gravity inside the recursion);
    for a chain with translating links the numpy recursion :func:`articulated_solve`
    of M q̈ = applied − h − G; other models fall back to ``"composite"`` with a
    :class:`RecursiveNotSupported` warning."""
    if not model.on_engine:
        warnings.warn(
            f"solver 'recursive' needs a ChainModel, got {type(model).__name__}; using 'composite'",
            RecursiveNotSupported,
            stacklevel=3,
        )
        return composite_solver(model, q, qd, applied)
    if model.compiled is not None:
        return model.compiled.forward(q, qd, applied)
    return articulated_solve(model, q, applied - model.nonlinear_forces(q, qd))
