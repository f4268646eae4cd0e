"""Linear state-space models of an arm about a rest point (``Model.state_space``).

Linearizing the equations of motion (docs/MODEL.md, Dynamics) about q̇ = 0 and torques τ₀
gives, with x = (q, q̇) and the joint torques as inputs (:meth:`Model.linearize
<core.dynamics.model.Model.linearize>`),

    ẋ = A x + B u,   A = [[0, I], [−M⁻¹ K_t, −M⁻¹ D]],   B = [[0], [M⁻¹ B_u]],
    y = C x + D u,   C = [∂y/∂q, 0],   D = 0,

with the tangent stiffness (:meth:`Model.tangent_stiffness
<core.dynamics.model.Model.tangent_stiffness>`)

    K_t = ∂²V_e/∂q² + ∂G/∂q + Σ_k ∂M/∂q_k q̈₀ e_kᵀ − ∂(B_u τ₀)/∂q,

q̈₀ the acceleration at (q, 0, τ₀) and B_u the input matrix of the equations of motion. The
Coriolis forces are quadratic in q̇ and the damping forces D q̇ vanish with q̇, so nothing else
enters at rest; Coulomb friction is not differentiable at rest and is left out. At a static
equilibrium (:meth:`Model.equilibrium <core.dynamics.model.Model.equilibrium>`, its holding
torques as τ₀) q̈₀ = 0 and the third term drops; elsewhere the model linearizes about a moving
state and :func:`state_space` warns. Both backends have a constant B_u (joint rows identity,
flexible rows φ'(0)), for which the last term is exactly zero; it is kept for a model whose
B_u depends on q (central differences of B_u(q) τ₀).

Outputs are positions only (no feedthrough: D = 0):

* ``"joints"``: the motor angles Bᵀq (one per joint; ``joint_1``…), what an encoder on the motor
  reads. For clamped frames they are the joint coordinates; for pinned frames the hub angle
  θ + φ'(0)ᵀδ.
* ``"joint_coordinates"``: the joint coordinates q_r themselves (their names in
  ``model.coordinates``); for pinned frames the chord angles (the angle to the link's tip).
* ``"tip"``: the tip of the last link in base coordinates (x, y for planar arms, x, y, z
  otherwise; ``tip_x``…), from the engine's analytic tip Jacobian (``kinematics``), or by
  extrapolated central differences of ``tip_position`` (:data:`OUTPUT_STEP`) for other models
  (whose ``tip_position`` may be real-only, so no complex step).
* ``"tip_deflection"``: each flexible link's tip deflection in its own frame
  (:meth:`Model.tip_deflections <core.dynamics.model.Model.tip_deflections>`: ``tip_w<i>``
  in-plane, ``tip_v<i>`` out-of-plane). Measured from the beam frame, so zero for pinned frames
  (the chord frame passes through the tip).
* ``("deflection", link, s)``: the transverse deflection w(s) = φ(s)ᵀδ of ``link`` at s [m] in
  its own frame (``w<i>(s)``, and ``v<i>(s)`` out-of-plane); s as in
  :meth:`Model.point_position <core.dynamics.model.Model.point_position>`.

The deflection outputs are linear in the flexible coordinates (rows φ(s) placed in the
link's columns, exact); a translating link's shapes also depend on its free length, whose
column is a central difference.

The transmission zeros of a square system are the finite eigenvalues of the Rosenbrock pencil
[[A, B], [C, D]] − λ diag(I, 0) (:func:`invariant_zeros`). With D = 0 and position outputs its
infinite eigenvalues are defective (Jordan blocks of size 3: relative degree 2), and QZ perturbs
them by ~ε^(1/3) into spurious large finite values; the structural reduction of Emami-Naeini &
Van Dooren (1982) removes them exactly first, so the remaining pencil has D invertible and
exactly m simple infinite eigenvalues, dropped by count.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import scipy.signal

from core.analysis.equilibrium import Equilibrium
from core.numerics.derivatives import CENTRAL_STEP, central_difference_jacobian

#: The class ``scipy.signal.StateSpace`` builds for a continuous system (its ``__new__`` picks
#: it; scipy does not export it by name).
StateSpaceContinuous = type(scipy.signal.StateSpace([[0.0]], [[0.0]], [[0.0]], [[0.0]]))

#: A point is at rest when the unbalanced force |Bτ − G − ∂V_e/∂q| (= M q̈₀) is at most this
#: fraction of the largest load (|G|, |∂V_e/∂q|, |Bτ|); beyond it :func:`state_space` and
#: :func:`core.analysis.linear.zero_dynamics` warn.
REST_TOLERANCE = 1e-8
#: Relative step of the derivatives of ``tip_position`` for models without the engine's
#: kinematics: Richardson-extrapolated central differences (4 D(h/2) − D(h))/3, error
#: O(h⁴ f⁽⁵⁾) + O(ε/h). Plain central differences are not enough: a high assumed mode's tip
#: slope turns the next link, so the third derivative is large (3e-8 relative at h = 1e-5 on the
#: third clamped mode of the lumped arm); extrapolated at h = 1e-4, 2e-11.
OUTPUT_STEP = 1e-4
#: The output specifications by name; ``("deflection", link, s)`` tuples besides.
OUTPUTS = ("joints", "joint_coordinates", "tip", "tip_deflection")


# ---------------------------------------------------------------------------- the rest point
def rest_point(model, q=None, tau=None) -> tuple[np.ndarray, np.ndarray | None]:
    """(q, τ) of a linearization point given as a configuration (default ``model.home()``) or
    an :class:`~core.analysis.equilibrium.Equilibrium` (its q, and its holding torques unless
    ``tau`` is given); τ is None if neither gives it."""
    if isinstance(q, Equilibrium):
        return np.array(q.q, dtype=float), np.array(q.torques if tau is None else tau, dtype=float)
    q = model.home() if q is None else np.array(q, dtype=float)
    return q, None if tau is None else np.asarray(tau, dtype=float)


def unbalanced(model, q: np.ndarray, tau: np.ndarray) -> float:
    """max |B τ − G − ∂V_e/∂q| at rest (= max |M q̈₀|) relative to the largest load; 0 unloaded."""
    gravity, elastic, drive = model.gravity_forces(q), model.elastic_forces(q), model.input_matrix(q) @ tau
    scale = max(float(np.max(np.abs(f), initial=0.0)) for f in (gravity, elastic, drive))
    return float(np.max(np.abs(drive - gravity - elastic), initial=0.0)) / scale if scale else 0.0


def warn_if_moving(model, q: np.ndarray, tau: np.ndarray, where: str) -> None:
    """RuntimeWarning if (q, q̇ = 0, τ) is not a rest point (:data:`REST_TOLERANCE`)."""
    off = unbalanced(model, q, tau)
    if off > REST_TOLERANCE:
        warnings.warn(
            f"{where}: the point is not an equilibrium (unbalanced force {off:.3g} of the loads, "
            "q̈₀ ≠ 0): the linear model is about a moving state; linearize about "
            "model.equilibrium(q) (its holding torques) for a rest point",
            RuntimeWarning,
            stacklevel=4,  # the caller of Model.state_space
        )


# ---------------------------------------------------------------------------- outputs
def output_matrix(model, q: np.ndarray, outputs) -> tuple[np.ndarray, tuple[str, ...]]:
    """∂y/∂q for the output specifications ``outputs`` (see the module docstring), shape
    (p, n_dof), and the output names."""
    rows, names = [], []
    for spec in _specs(outputs):
        block, labels = _output_rows(model, q, spec)
        rows.append(block)
        names += labels
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"outputs: {repeated} requested more than once")
    return np.vstack(rows) if rows else np.zeros((0, model.n_dof)), tuple(names)


def _specs(outputs) -> list:
    if isinstance(outputs, str) or (isinstance(outputs, tuple) and outputs[:1] == ("deflection",)):
        return [outputs]
    return [tuple(spec) if isinstance(spec, list) else spec for spec in outputs]


def _output_rows(model, q: np.ndarray, spec) -> tuple[np.ndarray, list[str]]:
    if isinstance(spec, tuple) and len(spec) == 3 and spec[0] == "deflection":
        return deflection_rows(model, q, spec[1], spec[2])
    if spec == "joints":
        return model.input_matrix(q).T, [f"joint_{i}" for i in range(1, model.n_joints + 1)]
    if spec == "joint_coordinates":
        return np.eye(model.n_dof)[model.joints], list(model.coordinates[model.joints])
    if spec == "tip":
        return tip_jacobian(model, q), ["tip_x", "tip_y", "tip_z"][: 2 if model.arm.is_planar else 3]
    if spec == "tip_deflection":
        return tip_deflection_rows(model, q)
    raise ValueError(
        f"outputs: unknown output {spec!r}; allowed: {', '.join(map(repr, OUTPUTS))} or "
        "('deflection', link, s)"
    )


def tip_jacobian(model, q: np.ndarray) -> np.ndarray:
    """∂(tip position)/∂q, (3, n_dof) (2 rows for planar arms): the engine's analytic tip
    Jacobian, or extrapolated central differences of ``tip_position`` (:data:`OUTPUT_STEP`)."""
    kinematics = getattr(model, "kinematics", None)
    if kinematics is not None:
        J = kinematics.frames(np.asarray(q, dtype=float)[None], jacobians=True)[-1].Jv_tip[0]
    else:
        J = extrapolated_jacobian(model.tip_position, q)
    return J[:2] if model.arm.is_planar else J


def extrapolated_jacobian(function, x: np.ndarray, step: float = OUTPUT_STEP) -> np.ndarray:
    """∂f/∂x by Richardson extrapolation of central differences (relative step ``step``, see
    :data:`OUTPUT_STEP`)."""
    half = central_difference_jacobian(function, x, step / 2)
    return (4 * half - central_difference_jacobian(function, x, step)) / 3


def _engine(model) -> bool:
    return all(hasattr(model, name) for name in ("bases", "bodies", "flex_columns", "translating"))


def deflection_rows(model, q: np.ndarray, link, s, *, tip: bool = False) -> tuple[np.ndarray, list[str]]:
    """∂w(s)/∂q of the transverse deflection of ``link`` at s in its own frame, one row per
    bending plane (w in-plane, v out-of-plane), and the names ``w<link>(<s>)``, ``v<link>(<s>)``.
    ``tip``: at the tip (s = l moves with a translating link's free length l)."""
    if not _engine(model):
        raise TypeError(f"deflection outputs need a model of the shared engine (ChainModel), got {model!r}")
    model.point_position(link, s, q)  # checks link and s, with the messages of point_position
    if link not in model.bases:
        raise ValueError(f"outputs: ('deflection', {link!r}, {s!r}): link {link} is rigid")
    body, columns = model.bodies[link], model.flex_columns[link]
    rows = np.zeros((body.planes, model.n_dof))
    values = _shape_values(model, link, s, q)
    for plane in range(body.planes):
        rows[plane, columns] = body.to_plane(values, plane)
    if link in model.translating:  # ψ(s/l) changes with the free length l = q[link − 1]
        rows[:, link - 1] = _free_length_derivative(model, link, None if tip else s, q)
    names = [f"{'wv'[plane]}{link}({float(s):g})" for plane in range(body.planes)]
    return rows, names


def _shape_values(model, link: int, s: float, q: np.ndarray) -> np.ndarray:
    """φ(s) of ``link`` (n,), as ``point_positions`` evaluates it (0 inside a translating hub)."""
    basis = model.bases[link]
    if link not in model.translating:
        return basis.evaluate(np.array([min(max(float(s), 0.0), basis.length)]))[0][:, 0]
    l = float(q[link - 1])
    eta = np.array([min(max(float(s), 0.0), l) / l])
    values = basis.evaluate(eta) if basis.follow is None else basis.follow.evaluate(eta, l)
    return values[0][:, 0] if s > 0 else np.zeros(basis.n)


def _free_length_derivative(model, link: int, s: float | None, q: np.ndarray) -> np.ndarray:
    """∂w(s)/∂l of a translating link at fixed s, or at its tip s = l for s None."""
    body, delta = model.bodies[link], q[model.flex_columns[link]]

    def deflection(l: np.ndarray) -> np.ndarray:
        at = q.copy()
        at[link - 1] = l[0]
        values = _shape_values(model, link, l[0] if s is None else s, at)
        return np.array([values @ body.plane(delta, plane) for plane in range(body.planes)])

    return central_difference_jacobian(deflection, q[link - 1 : link], CENTRAL_STEP)[:, 0]


def tip_deflection_rows(model, q: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """∂/∂q of :meth:`Model.tip_deflections`, one row per entry, and their names: the deflection
    rows at each flexible link's tip (engine), or extrapolated central differences."""
    names = list(model.tip_deflections(q))
    if not names:
        raise ValueError(
            "outputs: 'tip_deflection': the model reports no tip deflection (no flexible link, or no tip_deflections)"
        )
    if not _engine(model):
        values = lambda x: np.array(list(model.tip_deflections(x).values()))  # noqa: E731
        return extrapolated_jacobian(values, q), names
    rows = []
    for link in model.flex_columns:
        tip = float(q[link - 1]) if link in model.translating else model.bases[link].length
        rows.append(deflection_rows(model, q, link, tip, tip=True)[0])
    return np.vstack(rows), names


# ---------------------------------------------------------------------------- the model
def state_space(model, q=None, outputs: Sequence = ("joints",), tau=None) -> NamedStateSpace:
    """:meth:`Model.state_space <core.dynamics.model.Model.state_space>`: the linear model about
    (q, q̇ = 0, τ) (see the module docstring); q an array or an Equilibrium (its holding
    torques as τ unless ``tau`` is given; default τ = 0)."""
    q, tau = rest_point(model, q, tau)
    tau = np.zeros(model.n_joints) if tau is None else tau
    A, B = model.linearize(q, None, tau)  # checks q and τ
    C_q, output_names = output_matrix(model, q, outputs)
    warn_if_moving(model, q, tau, "state_space")
    C = np.hstack([C_q, np.zeros_like(C_q)])
    names = model.coordinates
    return NamedStateSpace(
        A,
        B,
        C,
        np.zeros((C.shape[0], model.n_joints)),
        state_names=(*names, *(f"{name}_dot" for name in names)),
        input_names=tuple(f"tau_{i}" for i in range(1, model.n_joints + 1)),
        output_names=output_names,
        q0=q,
        tau0=tau,
    )


class NamedStateSpace(StateSpaceContinuous):
    """A continuous :class:`scipy.signal.StateSpace` (ẋ = Ax + Bu, y = Cx + Du) with names.

    Attributes (besides A, B, C, D): ``state_names``, ``input_names``, ``output_names``
    (tuples of str), and ``q0``, ``tau0``: the point it linearizes about (None if not built
    by :func:`state_space`). Arithmetic with other systems returns scipy's plain StateSpace.
    """

    def __init__(
        self, A, B, C, D, *, state_names=None, input_names=None, output_names=None, q0=None, tau0=None
    ):
        super().__init__(A, B, C, D)
        self.state_names = _names(state_names, "x", self.A.shape[0], "state_names")
        self.input_names = _names(input_names, "u", self.B.shape[1], "input_names")
        self.output_names = _names(output_names, "y", self.C.shape[0], "output_names")
        self.q0, self.tau0 = q0, tau0

    def to_control(self):
        """The same system as a python-control ``StateSpace`` with the names (needs the
        optional dependency: ``pip install 'flexlink[control]'``)."""
        try:
            import control
        except ImportError as error:
            raise ImportError(
                "NamedStateSpace.to_control needs python-control (>= 0.10), which is not installed: "
                "pip install 'flexlink[control]' (or pip install 'control>=0.10')"
            ) from error
        return control.ss(
            self.A,
            self.B,
            self.C,
            self.D,
            states=list(self.state_names),
            inputs=list(self.input_names),
            outputs=list(self.output_names),
        )

    def frequency_response(self, w, output=None, input=None) -> np.ndarray:
        """G(jω) = C (jωI − A)⁻¹ B + D at the frequencies ``w`` [rad/s], by one LU solve per
        frequency (no inverse) on the balanced system (a diagonal state scaling, which leaves G
        unchanged; a FEM arm's A mixes 1 with ω_max²: measured 1.7e-9 relative error unbalanced,
        1.6e-11 balanced).
        ``output``, ``input``: a name or index (that axis is dropped), a list of them, or None
        (all). Shape ``w.shape + (outputs, inputs)`` less the dropped axes; complex."""
        w = np.asarray(w, dtype=float)
        rows, drop_row = _select(output, self.output_names, "output")
        cols, drop_col = _select(input, self.input_names, "input")
        A, B, C = _balanced_states(self.A, self.B[:, cols], self.C[rows])
        D, identity = self.D[np.ix_(rows, cols)], np.eye(A.shape[0])
        out = np.array([C @ np.linalg.solve(1j * omega * identity - A, B) + D for omega in w.ravel()])
        out = out.reshape(*w.shape, len(rows), len(cols))
        return out[..., 0 if drop_row else slice(None), 0 if drop_col else slice(None)]

    def transmission_zeros(self) -> np.ndarray:
        """The finite invariant zeros of this square system (:func:`invariant_zeros`), sorted by
        real then imaginary part."""
        return invariant_zeros(self.A, self.B, self.C, self.D)


def _balanced_states(A: np.ndarray, B: np.ndarray, C: np.ndarray):
    """(T⁻¹AT, T⁻¹B, CT) with the diagonal T of ``scipy.linalg.matrix_balance`` (no permutation)."""
    import scipy.linalg

    _, (scale, _) = scipy.linalg.matrix_balance(A, permute=False, separate=True)
    return A * scale / scale[:, None], B / scale[:, None], C * scale


def _names(names, prefix: str, count: int, what: str) -> tuple[str, ...]:
    names = tuple(f"{prefix}{i}" for i in range(1, count + 1)) if names is None else tuple(map(str, names))
    if len(names) != count:
        raise ValueError(f"{what}: {count} names needed, got {len(names)}")
    return names


def _select(which, names: tuple[str, ...], kind: str) -> tuple[list[int], bool]:
    """Indices of ``which`` (None: all; a name or index: one, its axis dropped; a list of them)."""
    if which is None:
        return list(range(len(names))), False
    if isinstance(which, (str, int, np.integer)):
        return [_index(which, names, kind)], True
    return [_index(item, names, kind) for item in which], False


def _index(which, names: tuple[str, ...], kind: str) -> int:
    if isinstance(which, str):
        if which not in names:
            raise ValueError(f"{kind} {which!r} is not one of {list(names)}")
        return names.index(which)
    if not (isinstance(which, (int, np.integer)) and -len(names) <= which < len(names)):
        raise ValueError(
            f"{kind} must be a name of {list(names)} or an index below {len(names)}, got {which!r}"
        )
    return int(which) % len(names)


# ---------------------------------------------------------------------------- zeros
def invariant_zeros(A, B, C, D) -> np.ndarray:
    """Finite invariant (transmission) zeros of the square system (A, B, C, D): the λ where the
    Rosenbrock matrix [[A − λI, B], [C, D]] loses rank, sorted by real then imaginary part.

    First the structural reduction of Emami-Naeini & Van Dooren (1982) (:func:`_reduce`) removes
    the infinite zeros exactly, leaving a system with D square and invertible; its pencil
    [[A, B], [C, D]] − λ diag(I, 0) (``scipy.linalg.eig`` with a B matrix) then has exactly m
    simple infinite eigenvalues (β ≈ 0), dropped by count. Rank decisions: singular values
    above n ε ‖[A; C]‖₁ (state rows) or n ε ‖[B; D]‖₁ (input columns), the round-off of the
    orthogonal steps. Raises ValueError for a non-square or degenerate system (normal rank
    below m: every λ would be a zero).
    """
    import scipy.linalg

    A, B, C, D = (np.atleast_2d(np.asarray(X, dtype=float)) for X in (A, B, C, D))
    m, p = B.shape[1], C.shape[0]
    if m != p:
        raise ValueError(f"transmission zeros need a square system, got {p} outputs and {m} inputs")
    A, B, C, D = _balanced(A, B, C, D)
    size = (A.shape[0] + m) * np.finfo(float).eps
    tol = (size * np.linalg.norm(np.vstack([A, C]), 1), size * np.linalg.norm(np.vstack([B, D]), 1))
    A, B, C, D = _reduce(A, B, C, D, tol)
    k = A.shape[0]
    if k == 0:
        return np.zeros(0, dtype=complex)
    E = np.zeros((k + m, k + m))
    E[:k, :k] = np.eye(k)
    alpha, beta = scipy.linalg.eig(np.block([[A, B], [C, D]]), E, right=False, homogeneous_eigvals=True)
    finite = np.argsort(np.abs(beta) / np.hypot(np.abs(alpha), np.abs(beta)))[m:]
    zeros = alpha[finite] / beta[finite]
    return zeros[np.lexsort((zeros.imag, zeros.real))]


def _balanced(A, B, C, D):
    """The system with its Rosenbrock matrix [[A, B], [C, D]] balanced by a diagonal similarity
    (``scipy.linalg.matrix_balance``: states scaled, inputs and outputs by the same factors),
    which keeps its zeros: a mechanical system's A mixes 1 with ω_max², and unbalanced QZ errs
    by ~ε ω_max² on every zero (measured: 4e-8 relative on the lowest zero of a FEM arm)."""
    import scipy.linalg

    n = A.shape[0]
    _, (scale, _) = scipy.linalg.matrix_balance(np.block([[A, B], [C, D]]), permute=False, separate=True)
    x, u = scale[:n], scale[n:]
    return A * x / x[:, None], B * u / x[:, None], C * x / u[:, None], D * u / u[:, None]


DEGENERATE = "transmission zeros: the system is degenerate (normal rank below its inputs: every λ is a zero)"


def _reduce(A, B, C, D, tol: tuple[float, float]):
    """Emami-Naeini & Van Dooren (1982): while D lacks full row rank, compress the rows of D
    (SVD), compress the columns of the outputs it does not reach, and eliminate the states
    those outputs see (each step keeps the rank drop of the Rosenbrock matrix at every λ);
    returns the reduced (A, B, C, D) with D square and invertible."""
    while True:
        U, s, _ = np.linalg.svd(D)
        sigma = int(np.sum(s > tol[1]))
        if sigma == D.shape[0]:
            return A, B, C, D
        A, B, C, D = _eliminate(A, B, U.T @ C, (U.T @ D)[:sigma], sigma, tol[0])


def _eliminate(A, B, C, D_top, sigma: int, tol: float):
    """One reduction step: the outputs below ``sigma`` have no feedthrough; the ρ states they
    see are eliminated (the outputs' rows, invertible on them, clear their columns) and the
    state equations of those states become outputs. The output count stays m."""
    if A.shape[0] == 0:
        raise ValueError(DEGENERATE)
    _, s, Vt = np.linalg.svd(C[sigma:])
    rho = int(np.sum(s > tol))
    if rho < C.shape[0] - sigma:  # outputs that see nothing: zero rows of the Rosenbrock matrix
        raise ValueError(DEGENERATE)
    V = np.vstack([Vt[rho:], Vt[:rho]]).T  # the kept states first, the eliminated ρ last
    A, B, C = V.T @ A @ V, V.T @ B, C[:sigma] @ V
    k = A.shape[0] - rho
    return A[:k, :k], B[:k], np.vstack([A[k:, :k], C[:, :k]]), np.vstack([B[k:], D_top])


__all__ = [
    "OUTPUTS",
    "OUTPUT_STEP",
    "REST_TOLERANCE",
    "NamedStateSpace",
    "deflection_rows",
    "extrapolated_jacobian",
    "invariant_zeros",
    "output_matrix",
    "rest_point",
    "state_space",
    "tip_deflection_rows",
    "tip_jacobian",
    "unbalanced",
    "warn_if_moving",
]
