"""``simulate(method="auto")``: explicit or implicit integration from the model and the run
(docs/MODEL.md, Analyses).

The cost of an explicit method is bounded below by stability: DOP853 needs h ≤
:data:`DOP853_STABILITY`/ρ(A) for the spectral radius ρ of the linearized right-hand side
ẋ ≈ A x, whatever the tolerances, so over a span it takes at least span·ρ/3.3 steps of 12
right-hand sides. An implicit method (Radau) has no such bound but pays Jacobians and LU
factorizations, and its lower order at tight tolerances (the undamped one-link arm at rtol
1e-11: Radau 744 356 right-hand sides, DOP853 49 010). Which is cheaper depends on span·ρ:
:func:`stiffness_estimate` computes ρ (highest natural frequency, damping of the highest
modes, controller gains, smoothed Coulomb friction), :func:`choose_method` compares span·ρ
with :data:`EXPLICIT_LIMIT`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.dynamics.model import Model

#: ``method="auto"``: the implicit method it takes for stiff runs.
AUTO_IMPLICIT = "Radau"
#: ``method="auto"``: the explicit method it takes for non-stiff runs.
AUTO_EXPLICIT = "DOP853"
#: DOP853's stability bound on the step, h ≤ DOP853_STABILITY / ρ(A) for the spectral radius ρ of
#: the linearized right-hand side (its stability region reaches ~3.3 along the imaginary axis and
#: ~6 along the negative real one: the smaller, for oscillating and decaying modes alike).
DOP853_STABILITY = 3.3
#: ``method="auto"`` takes the explicit method while the span times the spectral radius,
#: (t1 − t0)·ρ(A), is at most this (stability alone forces ≥ span·ρ/3.3 steps of 12 right-hand
#: sides on DOP853; below it the accuracy sets the steps of both, and the higher order of DOP853
#: and its cheaper steps win). Measured (2026-11-26, one BLAS thread, loaded 2-core machine;
#: right-hand sides and CPU s, DOP853 against Radau, rtol 1e-8 unless said; Radau with the
#: compiled Jacobian where SciPy's overflowed, marked J):
#: one-link arm, AMM 3 clamped-free modes, undamped, deflected, 1 s, span·ρ = 261: 20 678 / 0.85 s
#: against 116 920 / 13.2 s J; space-arm maneuver, AMM 2 modes, 2 s, rtol 1e-7, 2 070: 23 678 /
#: 2.9 s against 53 925 / 11.0 s; two links × 4 FEM elements, Rayleigh β = 1e-3 s, 2 s, 17 200:
#: 47 726 / 3.2 s against 42 214 / 6.9 s J; × 8 elements, 0.1 s, 14 700: 29 738 / 2.5 s against
#: 14 889 / 3.1 s (even); × 8 elements, 0.5 s, 73 000: 144 158 / 12.3 s against 31 155 / 8.3 s J;
#: lumped two-link arm under PD (kp 125, kd 25) with smoothed Coulomb friction, 0.5 s, rtol 1e-6,
#: 35 600: 25 694 / 3.0 s against 2 195 / 0.47 s. The crossover lies between 17 200 and 35 600.
#: A run on a compiled right-hand side with no input, a feed-forward or PD takes the compiled
#: DOP853 (:mod:`core.analysis.explicit`), a third to a half of SciPy's cost; its crossover depends on the
#: model's size, not on span·ρ alone (2026-11-27, 2-core AMD EPYC, one BLAS thread, the two
#: links with Rayleigh β = 1e-3 s, compiled DOP853 against Radau, CPU s): × 4 elements, 17 200:
#: 0.63 against 2.74, 68 900: 2.27 against 5.05; × 8, 73 300: 4.98 against 5.03, 146 500: 6.82
#: against 8.46, 293 000: 15.4 against 12.3; × 16, 47 000: 6.59 against 3.82. No one limit fits
#: all three meshes, so this one stays: below it DOP853 wins in every case measured.
EXPLICIT_LIMIT = 2.0e4
#: The same for a prescribed run (``simulate(prescribed=True)``): the joints follow a smooth
#: trajectory and a slow one leaves the fast modes unexcited, which an implicit method steps
#: over. Measured: two stiffened links, AMM 2 modes, fast cycloid (T 0.5 s) over 0.5 s, span·ρ =
#: 325: DOP853 6 900 against Radau 36 000 right-hand sides (tests/test_spin_up.py); the spin-up
#: (T 15 s), AMM 4 modes over 5 s, 653: 1 910 / 0.83 s against 1 171 / 0.63 s (even); FEM 4
#: elements over 2 s, rtol 1e-6, 2 060: 6 014 / 1.6 s against 438 / 0.17 s.
PRESCRIBED_EXPLICIT_LIMIT = 500.0
#: ``method="auto"``: the spectral radius of the linearization from a dense eigen-solve up to this
#: many coordinates (2 n × 2 n, the controller's gains included); above it a few power iterations
#: on M⁻¹K with the damping ratio of the vector found (:func:`stiffness_estimate`).
DENSE_ESTIMATE = 200
#: Power iterations of the large-model estimate of ω_max (a lower bound that converges from below;
#: the top of a beam spectrum is clustered, so the Rayleigh quotient is within a few per cent of
#: it after this many).
POWER_ITERATIONS = 30


def stiffness_estimate(
    model: Model, q, qd=None, gains=None, prescribed: bool = False, solver: str = "auto"
) -> dict[str, Any]:
    """How fast the right-hand side of a simulation is at (q, q̇): the spectral radius ρ of its
    linearization A = [[0, I], [−M⁻¹K_e, −M⁻¹D_e]] and the mode it belongs to.

    K_e = ∂²V_e/∂q² − B ∂τ/∂q and D_e = D + B diag(F_c/ε) Bᵀ − B ∂τ/∂q̇: the elastic stiffness,
    the damping with the steepest slope of smoothed Coulomb friction (at u = 0; ``coulomb="sign"``
    taken as smoothed with the model's ε), and the controller's gains ``gains`` = ∂τ/∂(q, q̇)
    (shape (n_joints, 2 n_dof), None: no controller). ``prescribed``: the joints follow a
    trajectory, only the flexible block counts. Gravity's stiffness is left out (it is tiny
    beside the elastic one at the top of the spectrum).

    Up to :data:`DENSE_ESTIMATE` coordinates the eigenvalues of A (dense); above, ω_max from
    :data:`POWER_ITERATIONS` power iterations on M⁻¹K_e (M⁻¹ by the forward-dynamics ``solver``,
    O(n_dof) per product with ``"structured"``; ``gains`` are not used), the damping ratio ζ of
    the vector found by its Rayleigh quotient, and ρ = ω_max (ζ + √(ζ² − 1)) for ζ > 1.

    Returns a dict: ``rho`` (spectral radius [1/s]), ``omega_max`` (highest undamped frequency of
    the pencil (K_e, M) [rad/s]), ``zeta`` (damping ratio of the eigenvalue of largest modulus,
    −Re λ/|λ|), ``by`` (``"eigenvalues"`` or ``"power iteration"``).
    """
    import scipy.linalg

    q = np.asarray(q, dtype=float)
    n, n_joints = model.n_dof, model.n_joints
    qd = np.zeros(n) if qd is None else np.asarray(qd, dtype=float)
    keep = slice(n_joints, n) if prescribed else slice(0, n)
    size = n - n_joints if prescribed else n
    if size == 0:
        return {"rho": 0.0, "omega_max": 0.0, "zeta": 0.0, "by": "eigenvalues"}
    coulomb = np.array([joint.coulomb_friction for joint in model.arm.joints], dtype=float)
    epsilon = getattr(model, "coulomb_velocity", None)
    slopes = coulomb / epsilon if epsilon and coulomb.any() and not prescribed else None
    if size <= DENSE_ESTIMATE:
        M = model.mass_matrix(q)
        K = model.elastic_stiffness(q).copy()
        D = model.damping_matrix(q).copy()
        B = model.input_matrix(q)
        if slopes is not None:
            D += (B * slopes) @ B.T
        if gains is not None and not prescribed:
            gains = np.asarray(gains, dtype=float)
            K -= B @ gains[:, :n]
            D -= B @ gains[:, n:]
        M, K, D = M[keep, keep], K[keep, keep], D[keep, keep]
        A = np.zeros((2 * size, 2 * size))
        A[:size, size:] = np.eye(size)
        factor = scipy.linalg.lu_factor(M)
        A[size:, :size] = -scipy.linalg.lu_solve(factor, K)
        A[size:, size:] = -scipy.linalg.lu_solve(factor, D)
        eigenvalues = np.linalg.eigvals(A)
        top = eigenvalues[np.argmax(np.abs(eigenvalues))]
        undamped = np.linalg.eigvals(-A[size:, :size]).real
        rho = float(abs(top))
        return {
            "rho": rho,
            "omega_max": float(np.sqrt(max(undamped.max(initial=0.0), 0.0))),
            "zeta": max(float(-top.real / rho), 0.0) + 0.0 if rho > 0 else 0.0,
            "by": "eigenvalues",
        }
    return _power_estimate(model, q, keep, solver)


def _power_estimate(model: Model, q: np.ndarray, keep: slice, solver: str) -> dict[str, Any]:
    """The large-model branch of :func:`stiffness_estimate`: power iterations on M⁻¹K_e."""
    from core.dynamics.model import SOLVERS

    n = model.n_dof
    zero = np.zeros(n)
    solver = model.auto_solver() if solver == "auto" else solver
    if solver == "structured":
        from core.dynamics.structured_forward import structured_dynamics

        dynamics = structured_dynamics(model)
        no_input = np.zeros(model.n_joints)

        def stiffness(v):
            return -dynamics.applied(v, zero, no_input, friction=False)[0]

        def damping(v):
            return dynamics.applied(zero, v, no_input, friction=False)[1]

        def accelerations(f):
            return dynamics.accelerations(q, zero, f)

    else:
        K, D = model.elastic_stiffness(q), model.damping_matrix(q)
        solve = SOLVERS[solver]

        def stiffness(v):
            return K @ v

        def damping(v):
            return D @ v

        def accelerations(f):
            return solve(model, q, zero, f)

    rest = accelerations(zero)  # M q̈ = −h − G at rest: M⁻¹f = accelerations(f) − rest

    def inverse_mass_stiffness(v):
        f = np.zeros(n)
        f[keep] = stiffness(_padded(v, keep, n))[keep]
        return (accelerations(f) - rest)[keep]

    x = np.random.default_rng(0).standard_normal(n)[keep]
    lam, mass, y = 0.0, 1.0, x
    for _ in range(POWER_ITERATIONS):
        y = inverse_mass_stiffness(x)
        Ky = stiffness(_padded(y, keep, n))[keep]
        Kx_y = float(stiffness(_padded(x, keep, n))[keep] @ y)  # = yᵀMy
        if not Kx_y > 0:
            break
        lam = float(y @ Ky) / Kx_y  # the Rayleigh quotient yᵀKy / yᵀMy
        mass = Kx_y
        x = y / np.linalg.norm(y)
    omega = float(np.sqrt(max(lam, 0.0)))
    zeta = 0.0
    if omega > 0:
        y_full = _padded(y, keep, n)
        zeta = float(y_full @ damping(y_full)) / (2.0 * omega * mass)
    rho = omega * (zeta + np.sqrt(zeta * zeta - 1.0)) if zeta > 1 else omega
    return {"rho": float(rho), "omega_max": omega, "zeta": float(min(zeta, 1.0)), "by": "power iteration"}


def _padded(v: np.ndarray, keep: slice, n: int) -> np.ndarray:
    """v placed at ``keep`` of a zero vector of size n."""
    full = np.zeros(n)
    full[keep] = v
    return full


def choose_method(
    model: Model, t_span, q, qd=None, gains=None, prescribed: bool = False, solver: str = "auto"
) -> tuple[str, str, dict[str, Any]]:
    """``method="auto"`` of :func:`~core.analysis.simulation.simulate`: (method, reason, estimate).

    The explicit :data:`AUTO_EXPLICIT` (DOP853) when the span times the spectral radius ρ of the
    linearized right-hand side at the start (:func:`stiffness_estimate`) is at most
    :data:`EXPLICIT_LIMIT` (:data:`PRESCRIBED_EXPLICIT_LIMIT` for a prescribed run), else the
    implicit :data:`AUTO_IMPLICIT` (Radau). Stability alone
    forces DOP853 to ≥ span·ρ/:data:`DOP853_STABILITY` steps of 12 right-hand sides; an implicit
    method's steps are set by the accuracy of the motion it must resolve (an undamped arm keeps
    its highest modes excited, and then they cost Radau as much) plus its Jacobians and LU
    factorizations. Measured (right-hand sides DOP853 / Radau at rtol 1e-8 unless said; see
    the module constant :data:`EXPLICIT_LIMIT`): the threshold sits between the largest
    span·ρ where DOP853 still wins and the smallest where Radau wins.
    """
    t0, t1 = (float(x) for x in t_span)
    estimate = stiffness_estimate(model, q, qd, gains, prescribed, solver)
    span_rho = (t1 - t0) * estimate["rho"]
    estimate["span_rho"] = span_rho
    numbers = (
        f"span × spectral radius {span_rho:.3g} (ρ {estimate['rho']:.4g} 1/s, ω_max "
        f"{estimate['omega_max']:.4g} rad/s, ζ of the fastest mode {estimate['zeta']:.3g}, by "
        f"{estimate['by']})"
    )
    limit = PRESCRIBED_EXPLICIT_LIMIT if prescribed else EXPLICIT_LIMIT
    if span_rho <= limit:
        return AUTO_EXPLICIT, f"not stiff: {numbers} ≤ {limit:.3g}", estimate
    return AUTO_IMPLICIT, f"stiff: {numbers} > {limit:.3g}", estimate
