"""From bodies to equations: the sums over the bodies and Lagrange's equations of them.

Both derivations (:mod:`amm.symbolic.planar`, :mod:`amm.symbolic.spatial`) walk the chain and
hand every body here as its velocity Jacobian J_b and body mass matrix M_b; :class:`Terms` sums
M = Σ_b J_bᵀ M_b J_b, the gravity potential and the joint terms, and keeps the bodies whose
J_b or M_b depend on q. :func:`derivatives` then forms ∂M/∂q and the velocity-product forces
h = C q̇ from those bodies (not from the assembled M), and :func:`christoffel` the matrix C of
the Christoffel symbols (docs/MODEL.md, Dynamics).
"""

from __future__ import annotations

import sympy as sp


class Terms:
    """M, K, D, B, the gravity potential V and the bodies of an arm, summed body by body.

    Parameters
    ----------
    n, n_joints : int
        Coordinates and joints; B starts as the identity on the joint columns.
    gravity : sympy.Matrix
        The gravity vector in base axes (2 or 3 rows).

    Attributes
    ----------
    bodies : list of (J, M_b, dJ)
        Every body whose J_b or M_b may depend on q; dJ is {k: ∂J_b/∂q_k} where the derivation
        carried it forward, None where :func:`derivatives` differentiates J_b itself.
    """

    def __init__(self, n: int, n_joints: int, gravity: sp.Matrix) -> None:
        self.M, self.K, self.D = sp.zeros(n, n), sp.zeros(n, n), sp.zeros(n, n)
        self.B = sp.zeros(n, n_joints)
        self.B[:n_joints, :n_joints] = sp.eye(n_joints)
        self.V = sp.S.Zero
        self.g = gravity
        self.bodies: list = []

    def body(self, J: sp.Matrix, Mb: sp.Matrix, dJ: dict | None = None) -> None:
        """A body of velocity ν = J q̇ (in its own axes) and mass matrix M_b: M += Jᵀ M_b J."""
        self.M += J.T * Mb * J
        self.bodies.append((J, Mb, dJ))

    def rigid_body(self, position, Jv, Jw, mass, inertia, dJv=None, dJw=None) -> None:
        """A rigid body: ``mass`` at ``position`` (base frame) whose velocity is Jv q̇ (in any
        axes: |v|² does not depend on them) and ``inertia`` (a scalar about the planar axis, or a
        3 × 3 tensor in the axes of Jw) turning at Jw q̇."""
        if mass != 0:
            self.M += mass * (Jv.T * Jv)
            self.V -= mass * (self.g.T * position)[0]
            self.bodies.append((Jv, mass * sp.eye(Jv.rows), dJv))
        if isinstance(inertia, sp.MatrixBase):
            if inertia != sp.zeros(*inertia.shape):
                self.M += Jw.T * inertia * Jw
                self.bodies.append((Jw, inertia, dJw))
        elif inertia != 0:
            self.M += inertia * (Jw.T * Jw)
            self.bodies.append((Jw, sp.Matrix([[inertia]]), dJw))

    def joint(self, P, number: int, joint, position, Jv, hub_rate, dJv=None, dhub=None) -> None:
        """The terms of joint ``number``: its hub (mass at ``position`` moving at Jv q̇, inertia
        turning at ``hub_rate`` q̇ with the joint and a pinned beam root), the motor's reflected
        inertia and the viscous friction, both on the actuated rate (B's column)."""
        self.rigid_body(
            position, Jv, None, P(f"mh{number}", joint.hub_mass, f"hub mass of joint {number} [kg]"), 0, dJv
        )
        Jh = P(f"Jh{number}", joint.hub_inertia, f"hub inertia of joint {number} [kg m$^2$]")
        if Jh != 0:
            self.M += Jh * (hub_rate.T * hub_rate)
            self.bodies.append((hub_rate, sp.Matrix([[Jh]]), dhub))
        column = self.B[:, number - 1]
        Jr = P(
            f"Jr{number}",
            joint.reflected_inertia,
            f"reflected motor inertia $I_m N^2$ of joint {number} [kg m$^2$]",
        )
        if Jr != 0:
            self.M += Jr * (column * column.T)
        bv = P(f"bv{number}", joint.viscous_friction, f"viscous friction of joint {number} [N m s/rad]")
        if bv != 0:
            self.D += bv * (column * column.T)


def _diff(matrix: sp.Matrix, x: sp.Symbol) -> sp.Matrix | None:
    """∂matrix/∂x entry by entry (None when no entry depends on x)."""
    out = sp.zeros(*matrix.shape)
    found = False
    for index, entry in enumerate(matrix):
        if x in entry.free_symbols:
            out[index] = entry.diff(x)
            found = True
    return out if found else None


def _partials(bodies: list, q: tuple) -> list:
    """Per body, per coordinate k: (∂J_b/∂q_k, ∂M_b/∂q_k), None where zero."""
    partials = []
    for J, Mb, dJ in bodies:
        if dJ is not None:  # carried forward through the chain (spatial arms)
            partials.append([(dJ.get(k), _diff(Mb, qk)) for k, qk in enumerate(q)])
        else:
            partials.append([(_diff(J, qk), _diff(Mb, qk)) for qk in q])
    return partials


def _mass_matrix_derivatives(bodies: list, partials: list, n: int) -> tuple:
    """∂M/∂q_k = Σ_b (Xᵀ + X + J_bᵀ ∂M_b/∂q_k J_b), X = J_bᵀ M_b ∂J_b/∂q_k, for every k."""
    out = []
    for k in range(n):
        D = sp.zeros(n, n)
        for (J, Mb, _), body in zip(bodies, partials, strict=True):
            dJ, dMb = body[k]
            if dJ is not None:
                X = J.T * (Mb * dJ)
                D += X + X.T
            if dMb is not None:
                D += J.T * dMb * J
        out.append(sp.ImmutableMatrix(D))
    return tuple(out)


def _velocity_products(bodies: list, partials: list, qd: tuple, n: int) -> sp.ImmutableMatrix:
    """h = C q̇ from Lagrange's equations of the bodies (see :func:`derivatives`)."""
    rates = sp.Matrix(qd)
    h = sp.zeros(n, 1)
    for (J, Mb, _), body in zip(bodies, partials, strict=True):
        moving = [k for k in range(n) if body[k][0] is not None]
        deforming = [k for k in range(n) if body[k][1] is not None]
        if not moving and not deforming:
            continue
        nu = J * rates
        p = Mb * nu
        inner = sp.zeros(Mb.rows, 1)
        if moving:
            J_dot = _rate([body[k][0] for k in moving], [qd[k] for k in moving], J.shape)
            inner += Mb * (J_dot * rates)
            h += J_dot.T * p
        if deforming:
            inner += _rate([body[k][1] for k in deforming], [qd[k] for k in deforming], Mb.shape) * nu
        h += J.T * inner
        for k in moving:
            h[k] -= ((body[k][0] * rates).T * p)[0]
        for k in deforming:
            h[k] -= (nu.T * body[k][1] * nu)[0] / 2
    return sp.ImmutableMatrix(h)


def _rate(partials: list, rates: list, shape: tuple) -> sp.Matrix:
    """Σ_k ∂X/∂q_k q̇_k: the time derivative of X from its partials and the rates."""
    out = sp.zeros(*shape)
    for partial, rate in zip(partials, rates, strict=True):
        out += partial * rate
    return out


def derivatives(bodies: list, q: tuple, qd: tuple) -> tuple:
    """(∂M/∂q_k for every k, h = C q̇), differentiated through the body Jacobians and mass
    matrices, not through the assembled (larger) M.

    ∂M/∂q_k = Σ_b (Xᵀ + X + J_bᵀ ∂M_b/∂q_k J_b), X = J_bᵀ M_b ∂J_b/∂q_k. The velocity-product
    forces come from Lagrange's equations of T = Σ_b ½ ν_bᵀ M_b ν_b, ν_b = J_b q̇, body by body
    (p_b = M_b ν_b, J̇_b = Σ_k ∂J_b/∂q_k q̇_k, Ṁ_b likewise)::

        h = Σ_b J̇_bᵀ p_b + J_bᵀ (Ṁ_b ν_b + M_b J̇_b q̇) − [(∂J_b/∂q_i q̇)ᵀ p_b + ½ ν_bᵀ ∂M_b/∂q_i ν_b]_i

    which is Ṁ q̇ − ½ ∂(q̇ᵀMq̇)/∂q = C q̇ without forming ∂M/∂q or C: O(body size × n) terms
    per body instead of the n³ entries of ∂M/∂q.
    """
    n = len(q)
    partials = _partials(bodies, q)
    return _mass_matrix_derivatives(bodies, partials, n), _velocity_products(bodies, partials, qd, n)


def christoffel(dM: tuple, qd: tuple) -> sp.ImmutableMatrix:
    """C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k, so that Ṁ − 2C is skew."""
    n = len(qd)
    C = sp.zeros(n, n)
    for i in range(n):
        for j in range(n):
            # One Add of the non-zero Christoffel terms (an incremental sum re-flattens n times).
            terms = []
            for k in range(n):
                symbol = dM[k][i, j] + dM[j][i, k] - dM[i][j, k]
                if symbol != 0:
                    terms.append(symbol * qd[k])
            C[i, j] = sp.Add(*terms) / 2
    return sp.ImmutableMatrix(C)
