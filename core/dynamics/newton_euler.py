"""Velocity-product (bias) forces of a chain without ∂M/∂q, body by body.

For a body whose velocity is ν = J(q) q̇ and whose kinetic energy is
T = ½ νᵀ M_b(σ) ν (σ the body's own internal coordinates, a part of q),
Lagrange's equations give the body's share of h(q, q̇) = C(q, q̇) q̇ as

    h_b = Jᵀ [ M_b (J̇ q̇) + Ṁ_b ν + g(ν, M_b ν) − (0, 0, ∂T/∂σ) ],

derived from d/dt(∂T/∂q̇) − ∂T/∂q − M q̈: the terms
Σ_j (∂J_k/∂q_j − ∂J_j/∂q_k) q̇_j · M_b ν are, for the body twist (v, Ω) of a
frame with pose g(q) (columns V_k = (g⁻¹ ∂g/∂q_k)^∨, so that
∂V_k/∂q_j − ∂V_j/∂q_k = [V_k, V_j]), equal to V_kᵀ of the gyroscopic force

    g(ν, p) = (Ω × p_v,  Ω × p_Ω + v × p_v,  0)     (−ad*_ν p).

The rows of J for the internal coordinates are constant (δ̇, l̇ are entries of
q̇), so they add nothing there. Hence no derivative of M with respect to all
of q is needed:

* J̇ q̇ for every frame comes from one kinematics pass at the complex
  configuration q + i h q̇ (h = :data:`~core.numerics.derivatives.COMPLEX_STEP`): the
  imaginary part of J(q + i h q̇) q̇ / h is Σ_j ∂(J q̇)/∂q_j q̇_j, exact to
  round-off, and the real parts are the frames at q (error O(h²));
* Ṁ_b and ∂M_b/∂σ (for ∂T/∂σ) are the body's own: M_b is exactly quadratic in
  δ, so its coefficients are read off once (:class:`BodyPolynomial`) and the
  derivatives are small contractions; a translating link's M_b(δ, l) is not
  polynomial in l and is evaluated at σ + i h σ̇ and σ + i h e_k instead.

Checked against the Christoffel oracle C q̇ on random arms of both backends
(tests/test_recursive.py): agreement to ~1e-15 of ‖M‖ |q̇|².

Rigid links, hubs and payloads use the same result with the world-frame Euler
form, m Jv_cᵀ a_c + Jwᵀ (I_w α + ω × I_w ω) (a_c, α the velocity-product parts
of the centre-of-mass and angular accelerations); the reflected motor inertia
(constant in q) adds nothing. The real parts of the same complex pass are the
frames at q, from which M(q), G(q) and the recursive solver's bodies follow, so
forward dynamics needs one kinematics pass per state.
"""

from __future__ import annotations

import weakref

import numpy as np

from core.dynamics.flexible_body import FlexibleBody
from core.numerics.derivatives import complex_step_derivatives, complex_step_points
from core.numerics.rotations import cross, skew

_POLYNOMIALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class BodyPolynomial:
    """M_b(δ) = M₀ + Σ_k δ_k L_k + Σ_kl δ_k δ_l Q_kl of a :class:`~core.dynamics.flexible_body.FlexibleBody`.

    M_b is exactly quadratic in δ, so its coefficients are read off once, by the
    complex step (M₀ = M_b(0), L_k = ∂M_b/∂δ_k at 0, Q_kl = ½ ∂²M_b/∂δ_k∂δ_l from
    ∂M_b/∂δ_k at δ = e_l), and M_b, Ṁ_b and ∂M_b/∂δ at any δ cost a few small
    contractions instead of a rebuild. Shapes: M₀ (s, s), L (m, s, s), Q (m, m, s, s)
    with s = 6 + m.
    """

    def __init__(self, body: FlexibleBody) -> None:
        m = body.n_coordinates
        at_zero = body.mass_matrix(
            complex_step_points(np.zeros(m), np.eye(m)) if m else np.zeros((1, 0), complex)
        )
        self.M0 = body.mass_matrix(np.zeros((1, m)))[0]
        self.L = complex_step_derivatives(at_zero) if m else np.zeros((0, 6, 6))
        # ∂M_b/∂δ_k at δ = e_l: rows (l, k) of one batch.
        shifted = np.concatenate([complex_step_points(e, np.eye(m)) for e in np.eye(m)]) if m else None
        derivative = (
            complex_step_derivatives(body.mass_matrix(shifted)).reshape(m, m, 6 + m, 6 + m) if m else None
        )
        self.Q = 0.5 * (np.swapaxes(derivative, 0, 1) - self.L[:, None]) if m else np.zeros((0, 0, 6, 6))

        s = 6 + m
        self._flat = self.M0.ravel(), self.L.reshape(m, s * s), self.Q.reshape(m, m, s * s)

    def mass_matrix(self, delta: np.ndarray) -> np.ndarray:
        """M_b(δ), shape (s, s), for δ of shape (m,)."""
        M0, L, Q = self._flat
        return (M0 + delta @ (L + delta @ Q)).reshape(self.M0.shape)

    def terms(self, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M_b(δ), shape (s, s), and ∂M_b/∂δ_k = L_k + 2 Σ_l δ_l Q_kl (Q symmetric in k, l)
        flattened, shape (m, s²)."""
        M0, L, Q = self._flat
        half = delta @ Q  # (m, s²)
        return (M0 + delta @ (L + half)).reshape(self.M0.shape), L + 2 * half


#: Bodies with more flexible coordinates than this are not expanded into a
#: :class:`BodyPolynomial`: its coefficients take O(m²(6 + m)²) memory (2.3 GB at
#: m = 128, a 64-element FEM link), where evaluating M_b and the analytic
#: :meth:`~core.dynamics.flexible_body.FlexibleBody.kinetic_gradient` cost O(m²) per call.
POLYNOMIAL_MAX_COORDINATES = 12


def body_polynomial(body: FlexibleBody) -> BodyPolynomial | None:
    """The cached :class:`BodyPolynomial` of ``body``, or None for a large body
    (more than :data:`POLYNOMIAL_MAX_COORDINATES` coordinates)."""
    if body.n_coordinates > POLYNOMIAL_MAX_COORDINATES:
        return None
    polynomial = _POLYNOMIALS.get(body)
    if polynomial is None:
        polynomial = _POLYNOMIALS[body] = BodyPolynomial(body)
    return polynomial


def body_mass(body: FlexibleBody, delta: np.ndarray) -> np.ndarray:
    """M_b(δ) of a fixed-length flexible body at one real δ (m,), shape (6 + m, 6 + m)."""
    polynomial = body_polynomial(body)
    if polynomial is None:
        return body.mass_matrix(delta[None])[0]
    return polynomial.mass_matrix(delta)


def _rotation_forces(Jw: np.ndarray, qd: np.ndarray, speed: float, inertia: np.ndarray) -> np.ndarray:
    """Jwᵀ (I α + ω × I ω) for a rigid rotation, Jw complex (3, n) at q + i h q̇."""
    Jr = Jw.real
    omega = Jr @ qd
    alpha = speed * complex_step_derivatives(Jw @ qd)
    spin = inertia @ omega
    return Jr.T @ (inertia @ alpha + cross(omega, spin))


def _point_forces(Jv: np.ndarray, qd: np.ndarray, speed: float, mass: float) -> np.ndarray:
    """m Jvᵀ a for a point mass, Jv complex (3, n) at q + i h q̇."""
    return mass * (Jv.real.T @ (speed * complex_step_derivatives(Jv @ qd)))


def _flexible_forces(model, number: int, f, q: np.ndarray, qd: np.ndarray, speed: float) -> np.ndarray:
    """h_b of flexible link ``number`` (floating frame, see the module docstring)."""
    body = model.bodies[number]
    J = model._body_jacobian(f, number, complex)[0]  # (6 + m [+1], n) at q + i h q̇
    Jr = J.real
    nu = Jr @ qd
    a = speed * complex_step_derivatives(J @ qd)  # J̇ q̇
    cols = model.flex_columns[number]
    translating = number in model.translating
    # Internal coordinates σ = (δ[, l]) and their rates, then m (+1) unit directions.
    sigma = np.concatenate([q[cols], [q[number - 1]]]) if translating else q[cols]
    sigma_dot = np.concatenate([qd[cols], [qd[number - 1]]]) if translating else qd[cols]
    if translating:  # M_b(δ, l) is not polynomial in l: evaluate it at σ + i h (σ̇, e_k)
        k = sigma.size
        batch = complex_step_points(sigma, np.vstack([sigma_dot, np.eye(k)]))
        masses = body.mass_matrix(batch[:, :-1], batch[:, -1])  # (1 + k, size, size)
        Mb = masses[0].real
        rate = complex_step_derivatives(masses[0])  # Ṁ_b
        gradient = complex_step_derivatives(masses[1:])  # ∂M_b/∂σ_k
    elif body_polynomial(body) is not None:
        Mb, flat = body_polynomial(body).terms(sigma)
        gradient = flat.reshape(sigma.size, *Mb.shape)
        rate = (sigma_dot @ flat).reshape(Mb.shape)
    else:  # a large body: M_b and Ṁ_b from one complex evaluation, ∂T/∂δ analytic (O(m²))
        masses = body.mass_matrix(complex_step_points(sigma, sigma_dot))[0]
        Mb, rate, gradient = masses.real, complex_step_derivatives(masses), None
    p = Mb @ nu
    force = Mb @ a + rate @ nu
    v, Omega = nu[:3], nu[3:6]
    force[:3] += cross(Omega, p[:3])
    force[3:6] += cross(Omega, p[3:6]) + cross(v, p[:3])
    if gradient is None:
        force[6:] -= body.kinetic_gradient(sigma, nu)
    else:
        force[6:] -= 0.5 * (gradient @ nu) @ nu
    return Jr.T @ force


def _real_frames(frames) -> list:
    """The real parts of a list of complex LinkFrames (the frames at q, error O(h²))."""
    out = []
    for f in frames:
        real = object.__new__(type(f))  # a shallow copy without copy.copy's dispatch (~5 µs)
        real.__dict__.update({name: None if v is None else v.real for name, v in vars(f).items()})
        out.append(real)
    return out


def bias_terms(model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, list]:
    """h(q, q̇) = C(q, q̇) q̇ of a :class:`~core.dynamics.engine.ChainModel`, and the frames at q.

    Parameters
    ----------
    model : ChainModel
    q, qd : ndarray, shape (n_dof,)
        Real configuration and rates.

    Returns
    -------
    h : ndarray, shape (n_dof,)
        The velocity-product forces C(q, q̇) q̇ [N or N m] (no gravity, elastic or damping terms).
    frames : list of LinkFrames
        The real frames at q (batch of one), for M(q), G(q) and the recursive solver.
    """
    # The complex step runs along q̇ scaled to unit size (a rate of 1e-150 would
    # underflow in J(q + ih q̇) q̇); the derivatives scale back by `speed`.
    speed = float(np.max(np.abs(qd))) if qd.size else 0.0
    frames = model.kinematics.frames(complex_step_points(q, qd / speed if speed > 0 else qd))
    h = np.zeros(model.n_dof)
    B = model._B
    for i, (joint, link, f) in enumerate(zip(model.arm.joints, model.arm.links, frames, strict=True)):
        number = i + 1
        if link.is_flexible:
            h += _flexible_forces(model, number, f, q, qd, speed)
        else:
            R = f.R_link[0].real
            Jw = f.Jw_link[0]
            Jv = f.Jv_link[0] - skew(f.R_link[0] @ np.asarray(link.com)) @ Jw
            h += _point_forces(Jv, qd, speed, link.mass)
            h += _rotation_forces(Jw, qd, speed, R @ link.inertia_tensor() @ R.T)
        if joint.hub_mass:
            h += _point_forces(f.Jv_link[0], qd, speed, joint.hub_mass)
        if joint.hub_inertia and joint.kind == "revolute":
            # The hub turns about the joint axis z with the actuated rate (Bᵀq̇)_i.
            z_axis = f.z_joint[0]
            Jw_hub = f.Jw_before[0] + np.outer(z_axis, B[:, i])
            zr = z_axis.real
            h += _rotation_forces(Jw_hub, qd, speed, joint.hub_inertia * np.outer(zr, zr))
        for payload in model._payloads(number):
            R = f.R_end[0].real
            h += _point_forces(f.Jv_tip[0], qd, speed, payload.mass)
            h += _rotation_forces(f.Jw_tip[0], qd, speed, R @ payload.inertia_tensor() @ R.T)
    return h, _real_frames(frames)
