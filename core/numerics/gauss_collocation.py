"""Gauss–Legendre collocation: a fixed-step, symplectic, A-stable implicit Runge–Kutta method
as a SciPy ``OdeSolver`` (pass the class as ``solve_ivp(..., method=GaussLegendre, step=h)``).

Why: an undamped flexible arm on a fine mesh has locked frequencies far above what a study
resolves (two links × 32 stiffened elements: 3.3e5 rad/s), so an explicit method is held to
steps of a few microseconds by stability, and Radau damps the unresolved modes, which is an
energy error. The s-stage Gauss method (order 2s) is A-stable and neither damps nor excites:
it conserves every quadratic invariant of the flow exactly (the energy of a linear
undamped system, to round-off at any step), and its energy error on a Hamiltonian flow stays
bounded by O(h^(2s)) without drift (Hairer, Lubich & Wanner, *Geometric Numerical
Integration*, 2nd ed., §IV.2 and §X.3). The step is fixed on purpose: varying it destroys
that long-time behaviour.

One step solves the collocation system Z_i = h Σ_j a_ij f(t_n + c_j h, y_n + Z_j) by
simplified Newton iterations. The matrix I − h A ⊗ J is block-diagonalized by the
eigenvectors of A (one real and one complex-pair N × N factorization per distinct eigenvalue
instead of one sN × sN factorization), J = ∂f/∂y from ``jac`` (or central differences),
refreshed when the iterations fail. The iterations start from Z = 0 (extrapolating the last
step's polynomial is worse on the modes a step does not resolve: measured 1e10 times the
tolerance scale on a stiffened fine mesh). The dense output is the collocation polynomial:
at the step ends it returns the step values exactly.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.integrate import DenseOutput, OdeSolver

from core.numerics.derivatives import central_difference_jacobian
from core.numerics.quadrature import gauss_legendre

#: Newton iterations allowed per step before the Jacobian is refreshed (then the step fails).
MAX_ITERATIONS = 12
#: A step that needed more iterations than this refreshes the Jacobian for the next step.
SLOW_ITERATIONS = 6


def butcher_tableau(stages: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, b, c) of the ``stages``-stage Gauss–Legendre method (order 2·stages).

    c are the Gauss–Legendre nodes on [0, 1]; a_ij = ∫₀^{c_i} ℓ_j and b_j = ∫₀¹ ℓ_j with ℓ_j
    the Lagrange polynomials on c, from the moment conditions Σ_j a_ij c_j^(k−1) = c_i^k / k
    (k = 1 … s).
    """
    if not isinstance(stages, int) or isinstance(stages, bool) or not 1 <= stages <= 6:
        raise ValueError(f"stages must be an integer from 1 to 6, got {stages!r}")
    x, _ = gauss_legendre(stages)
    c = 0.5 * (np.asarray(x) + 1.0)
    powers = np.arange(1, stages + 1)
    V = c[:, None] ** (powers - 1)[None, :]  # V[j, k−1] = c_j^(k−1)
    W = c[:, None] ** powers[None, :] / powers[None, :]
    A = np.linalg.solve(V.T, W.T).T  # A V = W
    b = np.linalg.solve(V.T, 1.0 / powers)
    return A, b, c


class GaussLegendre(OdeSolver):
    """Fixed-step Gauss–Legendre collocation (see the module docstring).

    Parameters (besides ``OdeSolver``'s)
    ----------
    step : float
        The step h [s], > 0. The span is cut into ceil(span / h) equal steps, so the last
        step ends at ``t_bound`` exactly; the step actually taken is ``self.h``.
    stages : int, optional
        s, 1 … 6 (order 2s); default 3 (order 6).
    rtol, atol : float, optional
        Scale of the Newton convergence test: the iterations stop when the scaled RMS norm of
        the last correction, times ρ/(1 − ρ) for its contraction rate ρ, is below
        ``newton_tol`` (1e-3 of the scale atol + rtol |y|); corrections that stop shrinking
        (ρ ≥ 1, or the iterations run out) inside the scale are the round-off floor of f and
        are accepted, outside it the step fails. Default 1e-10 and 1e-12. On stiff fine
        meshes the floor, ~ε h |M⁻¹K q|, lies near 1e-11 of the velocities: ask for rtol ≥ 1e-8.
    jac : callable, optional
        ``jac(t, y)`` → ∂f/∂y, shape (N, N); without it, central differences of ``fun``.
    """

    def __init__(
        self,
        fun,
        t0,
        y0,
        t_bound,
        step=None,
        stages: int = 3,
        rtol: float = 1e-10,
        atol: float = 1e-12,
        jac=None,
        newton_tol: float = 1e-3,
        vectorized: bool = False,
        **extraneous,
    ) -> None:
        if extraneous:
            raise TypeError(f"GaussLegendre does not take {sorted(extraneous)}")
        super().__init__(fun, t0, y0, t_bound, vectorized)
        span = abs(t_bound - t0)
        if step is None or not (isinstance(step, (int, float)) and math.isfinite(step) and step > 0):
            raise ValueError(f"step must be a positive number of seconds (the fixed step h), got {step!r}")
        for name, value in (("rtol", rtol), ("atol", atol), ("newton_tol", newton_tol)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be positive, got {value!r}")
        self.steps = max(1, math.ceil(span / step - 1e-9)) if span > 0 else 1
        self.h = span / self.steps * self.direction if span > 0 else 0.0
        self.A, self.b, self.c = butcher_tableau(stages)
        self.s = stages
        self.rtol, self.atol, self.newton_tol = rtol, atol, newton_tol
        self._jac_callable = jac
        self.njev, self.nlu = 0, 0
        self.taken = 0
        self.iterations, self.last_norm, self.stalled = 0, math.nan, False
        # A = T diag(λ) T⁻¹: I − h A⊗J block-diagonalizes into (I − h λ_k J) per eigenvalue.
        lam, T = np.linalg.eig(self.A)
        order = np.argsort(lam.imag)
        self.lam, self.T = lam[order], T[:, order]
        self.T_inv = np.linalg.inv(self.T)
        self.b_hat = self.b @ np.linalg.inv(self.A)  # y_{n+1} = y_n + (b A⁻¹) Z
        self.J = None
        self.factors: list | None = None
        self.Z_previous: np.ndarray | None = None

    def _jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        self.njev += 1
        if self._jac_callable is not None:
            return np.asarray(self._jac_callable(t, y), dtype=float)
        return central_difference_jacobian(lambda x: self.fun(t, x), y)

    def _factor(self) -> None:
        """LU factors of (I − h λ_k J) for the eigenvalues with Im λ ≥ 0 (the others are conjugates)."""
        n = self.n
        self.factors = []
        for lam in self.lam:
            if lam.imag < -1e-14 * abs(lam):
                self.factors.append(None)  # the conjugate of a later one
                continue
            matrix = np.eye(n) - self.h * (lam.real if abs(lam.imag) <= 1e-14 * abs(lam) else lam) * self.J
            self.factors.append(scipy.linalg.lu_factor(matrix, check_finite=False))
            self.nlu += 1

    def _solve(self, G: np.ndarray) -> np.ndarray:
        """(I − h A⊗J)⁻¹ G for G of shape (s, N), real."""
        G_tilde = self.T_inv @ G  # complex, conjugate rows pair up
        out = np.empty_like(G_tilde)
        for k, factor in enumerate(self.factors):
            if factor is None:
                continue
            out[k] = scipy.linalg.lu_solve(factor, G_tilde[k], check_finite=False)
        for k, factor in enumerate(self.factors):
            if factor is None:
                partner = int(np.argmin(np.abs(self.lam - np.conj(self.lam[k]))))
                out[k] = np.conj(out[partner])
        return (self.T @ out).real

    def _newton(self, t: float, y: np.ndarray, Z: np.ndarray) -> tuple[bool, np.ndarray]:
        """Simplified Newton iterations from Z; (converged, Z). The contraction rate ρ of the
        scaled corrections is judged from the second correction on (the first, from Z = 0, is
        the whole increment, and the next can be as large on a strongly coupled arm: measured
        1.06 of it, then ρ ≈ 0.02 per iteration)."""
        scale = self.atol + self.rtol * np.abs(y)
        times = t + self.c * self.h
        norms: list[float] = []
        self.stalled = False
        F = np.empty((self.s, self.n))
        for k in range(MAX_ITERATIONS):
            for i in range(self.s):
                F[i] = self.fun(times[i], y + Z[i])  # copied: a right-hand side may reuse its output
            if not np.all(np.isfinite(F)):
                return False, Z
            dZ = self._solve(self.h * (self.A @ F) - Z)
            Z = Z + dZ
            norm = float(np.sqrt(np.mean((dZ / scale) ** 2)))
            norms.append(norm)
            self.iterations, self.last_norm = k + 1, norm
            if norm == 0.0:
                return True, Z
            if len(norms) < 3:
                continue
            rate = norm / norms[-2]
            if rate >= 1.0:  # stalled: at the round-off floor of F inside the scale, else diverging
                self.stalled = True
                return norm < 1.0, Z
            if rate / (1.0 - rate) * norm < self.newton_tol:
                return True, Z
            if norm > 1.0 and rate ** (MAX_ITERATIONS - 1 - k) / (1.0 - rate) * norm > 1.0:
                return False, Z  # cannot reach the scale in the iterations left
        # Out of iterations: accepted inside the scale (the round-off floor of a stiff F), else failed.
        self.stalled = True
        return norms[-1] < 1.0, Z

    def _step_impl(self):
        t, y = self.t, self.y
        h = self.h
        if self.taken + 1 >= self.steps:
            h = self.t_bound - t  # the last step ends at t_bound exactly
            if h != self.h:
                self.h, self.factors = h, None
        current = False  # whether self.J is the Jacobian at (t, y)
        for attempt in range(2):
            if self.J is None or attempt:
                if current:
                    break  # it failed with the Jacobian of this very point
                self.J, current = self._jacobian(t, y), True
                self.factors = None
            if self.factors is None:
                self._factor()
            converged, Z = self._newton(t, y, np.zeros((self.s, self.n)))
            if converged:
                break
        if not converged:
            return False, (
                f"Newton iterations of the Gauss–Legendre step did not converge at t = {float(t)!r} with "
                f"step {float(self.h)!r} (fresh Jacobian; the last correction {self.last_norm:.3g} times "
                "the scale atol + rtol |y|): take a smaller step, or larger rtol and atol if that is the "
                "round-off floor of the right-hand side"
            )
        if self.iterations > SLOW_ITERATIONS and not self.stalled:
            self.J = None  # slow contraction, not the round-off floor: a fresh Jacobian next step
        self.Z_previous = Z
        self.y_old = y
        self.y = y + self.b_hat @ Z
        self.t = t + self.h
        self.taken += 1
        return True, None

    def _dense_output_impl(self):
        return _CollocationOutput(self.t_old, self.t, self.y_old, self.y, self.c, self.Z_previous)


def _lagrange(nodes: np.ndarray, values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The polynomial through (nodes, values) (values shape (k, N)) at the points x, shape (len(x), N)."""
    out = np.zeros((len(x), values.shape[1]))
    for j, node in enumerate(nodes):
        others = np.delete(nodes, j)
        weight = np.prod((x[:, None] - others[None, :]) / (node - others[None, :]), axis=1)
        out += weight[:, None] * values[j][None, :]
    return out


class _CollocationOutput(DenseOutput):
    """The collocation polynomial of one step: y_n at θ = 0, y_n + Z_i at θ = c_i."""

    def __init__(self, t_old, t, y_old, y, c, Z) -> None:
        super().__init__(t_old, t)
        self.y_old, self.y = y_old, y
        self.nodes = np.concatenate([[0.0], c])
        self.values = np.vstack([np.zeros_like(y_old), Z])
        self.h = t - t_old

    def _call_impl(self, t):
        theta = (np.atleast_1d(np.asarray(t, dtype=float)) - self.t_old) / self.h
        out = self.y_old[None, :] + _lagrange(self.nodes, self.values, theta)
        out[theta == 1.0] = self.y  # the step's end value itself, not its round-off twin
        return out[0] if np.ndim(t) == 0 else out.T
