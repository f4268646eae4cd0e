"""The readable numpy engine: the oracle the compiled kernels are tested against.

The compiled kernels of :mod:`core.dynamics.compiled` run the dynamics (composite bodies for M,
recursive Newton–Euler for h + G, articulated bodies for ``solver="recursive"``). This module
is their independent definition, written to be read rather than to be fast: over one
kinematics pass (frames and Jacobians of every body, :class:`~core.dynamics.kinematics.ChainKinematics`)

    M(q) = Σ_bodies Jᵀ M_body J,   G(q) = −Σ_bodies Jᵀ f_gravity,   V_gravity(q)

over rigid links, flexible bodies (the floating-frame M_b(δ) of
:mod:`core.dynamics.flexible_body`), hubs, motors and payloads, and ∂M/∂q_k by the complex step
of the same pass (every operation is complex-analytic, so it is exact to round-off). The
velocity products h = C(q, q̇) q̇ follow from the Christoffel symbols of ∂M/∂q
(:meth:`~core.dynamics.model.Model.coriolis_matrix`), forward dynamics from the composite solve:
``ChainModel(..., compiled=False)`` evaluates everything this way.

Every function takes a :class:`~core.dynamics.engine.ChainModel` and a batch of configurations
q (B, n_dof), real or complex.
"""

from __future__ import annotations

import numpy as np

from core.numerics.derivatives import complex_step_derivatives, complex_step_points
from core.numerics.rotations import skew, transpose


def body_jacobian(model, f, number: int, dtype) -> np.ndarray:
    """(B, 6 + m [+ 1], n_dof): beam-frame (v, Ω), δ̇ (and l̇ of a translating link) of flexible
    link ``number`` from q̇, for its frames ``f``."""
    body = model.bodies[number]
    R_T = transpose(f.R_body)
    translating = number in model.translating
    rows = 6 + body.n_coordinates + translating
    J = np.zeros((f.R_body.shape[0], rows, model.n_dof), dtype=dtype)
    J[:, :3] = R_T @ f.Jv_link
    J[:, 3:6] = R_T @ f.Jw_body
    J[:, 6 : 6 + body.n_coordinates, model.flex_columns[number]] = np.eye(body.n_coordinates)
    if translating:
        J[:, -1, number - 1] = 1.0  # l̇
    return J


def body_jacobian_transpose(model, f, number: int, wrench: np.ndarray) -> np.ndarray:
    """Jᵀ w (B, n_dof) for :func:`body_jacobian`'s J and a body wrench w (B, 6 + m [+ 1]),
    without forming J: its (v, Ω) rows are R_bodyᵀ J_v, R_bodyᵀ J_Ω and its other rows pick
    coordinates, so Jᵀ w = J_vᵀ (R_body w_v) + J_Ωᵀ (R_body w_Ω) + w_δ in the body's columns
    (+ w_l in the translating joint's). O(B n) where J is O(B m n): the gravity stiffness of a
    fine mesh, a batch of n complex steps, would otherwise form n × m × n numbers (8.8 GB for
    two links of 256 elements)."""
    body = model.bodies[number]
    out = np.einsum("bin,bi->bn", f.Jv_link, (f.R_body @ wrench[:, :3, None])[..., 0])
    out += np.einsum("bin,bi->bn", f.Jw_body, (f.R_body @ wrench[:, 3:6, None])[..., 0])
    out[:, model.flex_columns[number]] += wrench[:, 6 : 6 + body.n_coordinates]
    if number in model.translating:
        out[:, number - 1] += wrench[:, -1]
    return out


def body_state(model, number: int, q: np.ndarray) -> tuple:
    """(δ,) of flexible link ``number``, or (δ, l) for a translating link (q batched or not)."""
    delta = q[..., model.flex_columns[number]]
    return (delta, q[..., number - 1]) if number in model.translating else (delta,)


def _centre_jacobian(f, link) -> np.ndarray:
    """Jv of a rigid link's centre of mass (B, 3, n_dof)."""
    return f.Jv_link - skew(f.R_link @ np.asarray(link.com)) @ f.Jw_link


def _bodies(model, frames):
    """(joint index, joint, link, its frames) along the chain."""
    return enumerate(zip(model.arm.joints, model.arm.links, frames, strict=True))


def mass_batch(model, q: np.ndarray, frames=None) -> np.ndarray:
    """M = Σ Jᵀ M_body J for a batch of configurations q (B, n_dof) → (B, n_dof, n_dof);
    ``frames`` of q if already computed."""
    dtype = np.result_type(q, float)
    M = np.zeros((q.shape[0], model.n_dof, model.n_dof), dtype=dtype)
    frames = model.kinematics.frames(q) if frames is None else frames
    B = model.input_matrix(q[0])  # constant on the engine
    for i, (joint, link, f) in _bodies(model, frames):
        number = i + 1
        if link.is_flexible:
            J = body_jacobian(model, f, number, dtype)
            body = model.bodies[number]
            M += transpose(J) @ body.mass_matrix(*body_state(model, number, q)) @ J
        else:
            Jv = _centre_jacobian(f, link)
            inertia = f.R_link @ link.inertia_tensor() @ transpose(f.R_link)
            M += link.mass * (transpose(Jv) @ Jv) + transpose(f.Jw_link) @ inertia @ f.Jw_link
        if joint.hub_mass:
            M += joint.hub_mass * (transpose(f.Jv_link) @ f.Jv_link)
        if joint.hub_inertia and joint.kind == "revolute":
            # Rotation rate of the hub about the joint axis.
            w_axis = np.einsum("bi,bin->bn", f.z_joint, f.Jw_before) + B[:, i]
            M += joint.hub_inertia * (w_axis[:, :, None] * w_axis[:, None, :])
        if joint.motor_inertia:
            M += joint.reflected_inertia * np.outer(B[:, i], B[:, i])
        for payload in model._payloads(number):
            inertia = f.R_end @ payload.inertia_tensor() @ transpose(f.R_end)
            M += payload.mass * (transpose(f.Jv_tip) @ f.Jv_tip) + transpose(f.Jw_tip) @ inertia @ f.Jw_tip
    return M


def gravity_batch(model, q: np.ndarray, frames=None) -> np.ndarray:
    """G = ∂V_gravity/∂q for a batch of configurations q (B, n_dof) → (B, n_dof)."""
    g = np.asarray(model.arm.gravity, dtype=float)
    G = np.zeros((q.shape[0], model.n_dof), dtype=np.result_type(q, float))
    if not np.any(g):
        return G
    frames = model.kinematics.frames(q) if frames is None else frames
    for i, (joint, link, f) in _bodies(model, frames):
        number = i + 1
        if link.is_flexible:
            wrench = model.bodies[number].gravity_wrench(*body_state(model, number, q), g @ f.R_body)
            G -= body_jacobian_transpose(model, f, number, wrench)
        else:
            G -= link.mass * (g @ _centre_jacobian(f, link))
        if joint.hub_mass:
            G -= joint.hub_mass * (g @ f.Jv_link)
        mass = sum(p.mass for p in model._payloads(number))
        if mass:
            G -= mass * (g @ f.Jv_tip)
    return G


def gravity_potential(model, q: np.ndarray) -> float:
    """V_gravity at one real configuration q (n_dof,) [J]."""
    g = np.asarray(model.arm.gravity, dtype=float)
    if not np.any(g):
        return 0.0
    V = 0.0
    frames = model.kinematics.frames(q[None], jacobians=False)
    for i, (joint, link, f) in _bodies(model, frames):
        number = i + 1
        p_link, R_link, R_body, p_tip = f.p_link[0], f.R_link[0], f.R_body[0], f.p_tip[0]
        if link.is_flexible:
            body = model.bodies[number]
            S1 = body.first_moment(*body_state(model, number, q))
            V -= body.mass * (g @ p_link) + g @ (R_body @ S1)
        else:
            V -= link.mass * (g @ (p_link + R_link @ np.asarray(link.com)))
        V -= joint.hub_mass * (g @ p_link)
        V -= sum(p.mass for p in model._payloads(number)) * (g @ p_tip)
    return float(V)


def mass_derivatives(model, q: np.ndarray) -> np.ndarray:
    """∂M/∂q at one real q (n_dof,) from one batched complex-step pass, (n_dof, n_dof, n_dof).

    Rows of the batch are q + ih e_k for every k that M depends on (not the first joint
    variable: moving the whole chain about or along the fixed base axis changes no relative
    velocity — unless that joint translates a flexible link, whose free length it is).
    """
    n = model.n_dof
    first = 0 if 1 in model.translating else 1
    derivatives = np.zeros((n, n, n))
    if first < n:
        batch = complex_step_points(q, np.eye(n)[first:])
        derivatives[first:] = complex_step_derivatives(mass_batch(model, batch))
    return derivatives
