"""Time simulation of a model under a controller (docs/MODEL.md, Analyses).

:func:`simulate` integrates M q̈ = B(τ + τ_c) − C q̇ − D q̇ − K q − G with
``scipy.integrate.solve_ivp`` (or, for a DOP853 run on a compiled right-hand side with no
input, a feed-forward or joint PD, the same steps in compiled code: :mod:`core.analysis.explicit`)
and returns a tidy :class:`pandas.DataFrame`.
Each right-hand side is the trajectory, the controller and one
:meth:`~core.dynamics.model.Model.rates_function` call (on the compiled chain a single
compiled kernel: ~45 µs per right-hand side of the 15-DOF space arm, of which
the kernel is ~13 µs, the rest the controller, the trajectory and SciPy).
The state is augmented with the input work ∫ q̇ᵀBτ dt and the dissipated
work ∫ (q̇ᵀDq̇ − q̇ᵀBτ_c) dt, integrated with the same accuracy as the motion,
so every simulation reports its own energy balance:

    E(t) − E(0) − W_input(t) + W_dissipated(t)   (column ``energy_balance_error``).

Output rows. Each row evaluates the model once more at its state: one right-hand side (the
same compiled call the integrator used, for τ and q̈; a prescribed row: one prescribed-motion
solve), one mass matrix (the kinetic energy; a prescribed row takes the solve's), the potential
energy, B and the tip deflections; the trajectory is evaluated once per row and the tip
positions of all rows in one kinematics pass (:meth:`Model.tip_positions
<core.dynamics.model.Model.tip_positions>`). Measured (one BLAS thread, process time): the
whole call over the integration 1.65 → 1.34 (spin-up, AMM 4 modes stiffened, Radau rtol 1e-6,
2001 rows; a prescribed row costs what a right-hand side does, and there are 0.4 per
right-hand side), 1.75 → 1.32 (FEM 8 elements), 1.72 → 1.22 (one-link arm, 1 s at the default
tolerances, a row per step); tests/test_simulation_output.py counts the calls.

Auxiliary states. A model whose :attr:`~core.dynamics.model.Model.auxiliary_names` is not
empty carries states a integrated with the motion, ȧ =
:meth:`~core.dynamics.model.Model.auxiliary_rates` (q, q̇, a) — e.g. the assumed-mode roots
β_k(l) of a translating link, dβ/dt = (dβ/dl)(β, l) l̇ (Theodore & Ghosal (1997)) — and its
primitives depend on the current a. The state is then x = (q, q̇, a, W_in, W_diss)
(without auxiliary states it stays x = (q, q̇, W_in, W_diss)); every right-hand
side (controller included) is evaluated inside ``with model.auxiliary(a):``, with
the generic :meth:`Model.rates_function <core.dynamics.model.Model.rates_function>` (a
backend's fused or compiled one may have matrices of other auxiliary values built
in) and SciPy's own Jacobian for the implicit methods; every output row is
evaluated inside ``with model.auxiliary(a_row):``, so the energies are those of the
integrated a, and the frame has one column per auxiliary name.

Prescribed joint motion (``prescribed=True``, :func:`prescribed_motion`). The joints
follow the trajectory exactly (kinematic driving, as in the spin-up benchmark of Kane,
Ryan & Banerjee 1987): only x = (q_f, q̇_f, a, W_in, W_diss) is integrated, q_r, q̇_r,
q̈_r are the trajectory's at every t, and the joint inputs τ are the reactions that
realise that motion. Why not a controller that returns those τ to the usual
integration of every coordinate: (1) the joint angles would be integrated too and drift
from the trajectory by the integrator's error (here they are exact by construction);
(2) a controller must map τ → q̈_r through M⁻¹, i.e. through the actuator's effective
inertia, the Schur complement M_rr − M_rf M_ff⁻¹ M_fr, which for a beam without hub
inertia is only the inertia the flexible basis cannot represent (O(h³) for Hermite
elements of size h): nearly singular, so the driving torques would be large and
ill-conditioned; the rows integrated here, through [M_qf  −B], need only M_ff (the
beam's own mass matrix, positive definite for every deflection, with or without
geometric stiffening: docs/MODEL.md, *The stiffened kinetic energy*). The
price: the joints cannot deviate from the trajectory (no joint compliance), which is the
benchmark's premise.

Divergence guard (``deflection_limit``): the integration stops, through a terminal
``solve_ivp`` event, the first time a flexible link's tip deflection (any ``tip_w<i>``
or ``tip_v<i>``) reaches the limit; the frame ends with that instant and
``frame.attrs["stopped_at"]`` gives it (None when the run reached the end).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.analysis import explicit
from core.analysis.assumptions import (  # noqa: F401  (AssumptionWarning, EXTENSION_SPEED_LIMIT: re-exported)
    EXTENSION_SPEED_LIMIT,
    AssumptionWarning,
    warn_extension_speeds,
    wave_speeds,
)
from core.analysis.method_choice import DENSE_ESTIMATE, choose_method
from core.dynamics.model import SOLVERS, Model
from core.numerics.derivatives import central_difference_jacobian

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Default tolerances.
RTOL = 1e-8
ATOL = 1e-10
#: The adaptive ``solve_ivp`` methods (the studies' choices), and with them the fixed-step "Gauss".
ADAPTIVE_METHODS = ("Radau", "BDF", "LSODA", "RK45", "DOP853", "RK23")
METHODS = (*ADAPTIVE_METHODS, "Gauss")
#: The methods that use a Jacobian of the right-hand side.
IMPLICIT = ("Radau", "BDF", "LSODA", "Gauss")
#: Relative step of the central differences of a controller without ``state_jacobian``: ε^(1/3).
CONTROLLER_STEP = float(np.cbrt(np.finfo(float).eps))


class SimulationError(RuntimeError):
    """The integrator failed; ``frame`` holds the results up to the failure."""

    def __init__(self, message: str, frame: pd.DataFrame) -> None:
        super().__init__(message)
        self.frame = frame


@dataclass(frozen=True)
class SimulationOptions:
    """How :func:`simulate` integrates, drives and watches a run: its keyword options.

    Integration
    -----------
    method : str
        A ``solve_ivp`` method (:data:`METHODS`), or ``"auto"`` (default):
        :func:`~core.analysis.method_choice.choose_method` takes the explicit ``"DOP853"`` or
        the implicit ``"Radau"`` from the spectral radius ρ of the linearized right-hand side
        at the start (the highest natural frequency, the damping of the highest modes, the
        controller's gains, smoothed Coulomb friction) and the span, and records its choice
        and reason in ``frame.attrs`` (``method``, ``method_reason``, ``stiffness``); an
        implicit method takes the Jacobian of ``jacobian`` (below). Stiffness here means fast dynamics the tolerances do not need resolved:
        damped high modes, high feedback gains, smoothed Coulomb friction (ε_c small), fine
        meshes. An undamped arm driven open loop keeps all its modes
        excited, so every method resolves the highest one and the explicit ``"DOP853"`` is
        cheaper (the space-arm maneuver: 2.3× fewer right-hand sides than Radau).
        ``"Gauss"``: fixed-step symplectic collocation of order 6 (:mod:`core.numerics.gauss_collocation`).
    rtol, atol : float
        The integrator's tolerances (default :data:`RTOL`, :data:`ATOL`); ``"Gauss"``'s Newton scale.
    step : float, optional
        The fixed step [s] of ``"Gauss"`` (required there, refused for the other methods).
    t_eval : array_like, optional
        Output times; default: the integrator's own steps.
    solver : str
        The forward-dynamics solver (:data:`core.dynamics.model.SOLVERS`): ``"composite"``
        (M and its Cholesky factor), ``"recursive"`` (articulated bodies), ``"structured"``
        (fine meshes, O(n_dof)), or ``"auto"`` (default: :meth:`Model.auto_solver
        <core.dynamics.model.Model.auto_solver>`; the name taken is ``frame.attrs["solver"]``).
    jacobian : bool, optional
        The Jacobian of the implicit methods (:data:`IMPLICIT`). True: the model's compiled one
        where it has one (:meth:`Model.rates_function <core.dynamics.model.Model.rates_function>`,
        completed with the controller's ``state_jacobian`` or its central differences). False:
        SciPy's finite differences (2 n_dof + 2 calls each), which can overflow: they grow the
        step of every column the right-hand side does not depend on (the work integrals) tenfold
        per Jacobian (Radau, one-flexible-link preset, 1 s at rtol 1e-8: "array must not contain
        infs or NaNs"). None (default): the compiled one where the model has one (it halves
        LSODA's right-hand sides: space arm 15 263 → 6 459, lumped FEM 13 847 → 6 557 per
        simulated second), otherwise — auxiliary states, or no compiled Jacobian — central
        differences of the whole right-hand side (2 (2 n_dof + m + 2) calls per Jacobian).

    Drive and state
    ---------------
    prescribed : bool
        The joints follow the trajectory exactly (see the module docstring; the
        controller must be None): the joint entries of ``q0`` and ``qd0`` are replaced by
        the trajectory's at t0, only the flexible coordinates (and auxiliary states) are
        integrated, and the torques ``tau<i>`` are the joint inputs that realise the motion
        (:func:`prescribed_motion`). ``solver`` is not used (no forward dynamics) and the
        implicit methods get central differences of the right-hand side
        (:func:`core.numerics.derivatives.central_difference_jacobian`; ``jacobian=False``:
        SciPy's).
    auxiliary0 : array_like, optional
        Initial values of the model's auxiliary states, shape
        (len(model.auxiliary_names),); default ``model.auxiliary_initial(q0)``. With
        auxiliary states (see the module docstring) the integrated state is
        x = (q, q̇, a, W_in, W_diss), every right-hand side evaluates the model inside
        ``with model.auxiliary(a):`` and appends ȧ = ``model.auxiliary_rates(q, q̇, a)``,
        and every output row is computed inside ``with model.auxiliary(a_row):``.

    Watch
    -----
    progress : callable, optional
        ``progress(t)`` with the time an evaluation has reached [s], once per right-hand
        side (throttle it yourself; :func:`studies.progress.throttled`); on the compiled
        DOP853 path (:mod:`core.analysis.explicit`) once per chunk of steps.
    deflection_limit : float, optional
        Stop when the tip deflection of a flexible link reaches this magnitude [m] (a
        diverging run, e.g. a spinning beam without geometric stiffening, stops there
        instead of growing to overflow); ``frame.attrs["stopped_at"]`` is that time.
    """

    method: str = "auto"
    rtol: float = RTOL
    atol: float = ATOL
    t_eval: Any = None
    step: float | None = None
    solver: str = "auto"
    jacobian: bool | None = None
    prescribed: bool = False
    auxiliary0: Any = None
    progress: Callable[[float], Any] | None = None
    deflection_limit: float | None = None

    def __post_init__(self) -> None:
        if self.method != "auto" and self.method not in METHODS:
            raise ValueError(f"method must be one of {('auto', *METHODS)}, got {self.method!r}")
        if (self.step is not None) != (self.method == "Gauss"):
            raise ValueError(
                f"step: the fixed step of method 'Gauss' only (method {self.method!r}, step {self.step!r})"
            )
        if self.solver != "auto" and self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {sorted(['auto', *SOLVERS])}, got {self.solver!r}")
        limit = self.deflection_limit
        if limit is not None and not (np.isfinite(limit) and limit > 0):
            raise ValueError(f"deflection_limit must be finite and > 0 [m], got {limit!r}")


def simulate(
    model: Model, t_span: tuple[float, float], q0, qd0=None, controller=None, trajectory=None, **options: Any
) -> pd.DataFrame:
    """Simulate ``model`` from (q0, q̇0) over ``t_span`` [s].

    Parameters
    ----------
    model : Model
    t_span : (float, float)
        Start and end time [s], increasing.
    q0, qd0 : array_like, shape (n_dof,)
        Initial coordinates and rates (``qd0`` default zero).
    controller : callable, optional
        ``controller(t, q, qd, model, reference) -> τ`` (:mod:`core.analysis.controllers`);
        one with ``for_run`` is replaced by its ``for_run(trajectory, t_span)`` once per run;
        None means zero input (friction and damping still act).
    trajectory : optional
        Object with ``evaluate(t) -> (q_d, qd_d, qdd_d)``; handed to the
        controller and recorded (columns ``<joint>_ref``).
    **options
        The fields of :class:`SimulationOptions`, each described there once: integration
        (``method``, ``rtol``, ``atol``, ``t_eval``, ``solver``, ``jacobian``), drive and
        state (``prescribed``, ``auxiliary0``), watch (``progress``, ``deflection_limit``).

    Returns
    -------
    DataFrame
        One row per output time: ``time``; every coordinate and its rate
        (``<name>_dot``); the joint accelerations (``<joint>_ddot``); with a
        trajectory the reference joint values and rates (``<joint>_ref``,
        ``<joint>_ref_dot``); torques ``tau1…``; tip position ``tip_x, tip_y,
        tip_z``; tip deflection per flexible link (``tip_w<i>`` in-plane,
        ``tip_v<i>`` out-of-plane) [m]; one column per auxiliary state
        (``model.auxiliary_names``: its values, none for most models);
        ``kinetic``, ``potential``,
        ``energy`` [J]; ``input_power`` [W]; ``work_input``,
        ``work_dissipated``, ``energy_balance_error`` [J]. ``frame.attrs``
        holds the cost: ``nfev``, ``njev``, ``nlu``, ``wall_time``, ``integrator`` (``"scipy
        solve_ivp"`` or ``"compiled DOP853"``), and
        ``method`` (the one used), ``method_reason`` (``"given"``, or why ``"auto"`` took it),
        ``stiffness`` (``"auto"``: the estimate of
        :func:`~core.analysis.method_choice.stiffness_estimate` it decided on,
        else None), ``solver`` (the forward-dynamics solver used; None for a prescribed run),
        ``rtol``, ``atol``, ``prescribed`` and ``stopped_at`` (the time
        the ``deflection_limit`` was reached, else None).

    Raises
    ------
    SimulationError
        When the integrator fails: the message gives the time and the
        solver's reason; ``error.frame`` keeps the steps computed before.
    """
    settings = SimulationOptions(**options)
    t0, t1 = (float(x) for x in t_span)
    if not t1 > t0:
        raise ValueError(f"t_span must be increasing, got {t_span!r}")
    if settings.solver == "auto":
        settings = dataclasses.replace(settings, solver=model.auto_solver())
    run = _Run(model, controller, trajectory, settings)
    run.prepare_controller(t0, t1)
    x0 = run.start(t0, q0, qd0)
    if settings.method == "auto":
        method, reason, stiffness = run.choose_method(t0, t1, x0)
        settings = run.options = dataclasses.replace(settings, method=method)
    else:
        reason, stiffness = "given", None
    start = time.perf_counter()
    solution = run.integrate(t0, t1, x0)
    wall = time.perf_counter() - start
    times, states, stopped_at = run.outputs(solution)
    frame = _frame(model, times, states, run, trajectory)
    frame.attrs.update(
        nfev=int(solution.nfev),
        njev=int(solution.njev),
        nlu=int(solution.nlu),
        wall_time=wall,
        integrator=run.integrator,
        method=settings.method,
        method_reason=reason,
        stiffness=stiffness,
        solver=None if settings.prescribed else settings.solver,
        rtol=settings.rtol,
        atol=settings.atol,
        success=bool(solution.success),
        message=solution.message,
        prescribed=bool(settings.prescribed),
        stopped_at=stopped_at,
    )
    run.warn_extension_speeds()
    if not solution.success:
        reached = solution.t[-1] if len(solution.t) else t0
        raise SimulationError(f"integration failed at t = {reached:.6g} s: {solution.message}", frame)
    return frame


class _Run:
    """One simulation of :func:`simulate`: the state layout, the right-hand side and its
    Jacobian, the divergence guard and the rows' inputs and accelerations.

    The integrated state is x = (q, q̇, a, W_in, W_diss), or x = (q_f, q̇_f, a, W_in, W_diss)
    for a prescribed run (the joints are the trajectory's), with the m auxiliary states a.
    """

    def __init__(self, model: Model, controller, trajectory, options: SimulationOptions) -> None:
        if options.prescribed:
            if trajectory is None:
                raise ValueError("prescribed=True needs a trajectory: the joints follow it exactly")
            if controller is not None:
                raise ValueError(
                    "prescribed=True: the joint inputs are the reactions of the prescribed motion; "
                    f"pass controller=None, got {type(controller).__name__}"
                )
        self.model, self.controller, self.trajectory, self.options = model, controller, trajectory, options
        self.prescribed = options.prescribed
        self.n, self.n_joints = model.n_dof, model.n_joints
        self.n_f = self.n - self.n_joints  # the integrated coordinates of a prescribed run
        self.m = 0
        self.rates: Any = None
        self.prescribe: Any = None  # Model.prescribed_function's, for a prescribed run
        self.speeds = wave_speeds(model)
        self.worst: list[tuple[float, float]] = []
        #: The trajectory's (q_d, q̇_d, q̈_d) at every output time (:meth:`outputs`), or None.
        self.references: list | None = None
        self.reads_reference = True  # the controller reads its reference: evaluate the trajectory
        #: Which integrator ran (``frame.attrs["integrator"]``): SciPy's, or the compiled DOP853.
        self.integrator = "scipy solve_ivp"

    def prepare_controller(self, t0: float, t1: float) -> None:
        """The controller's ``for_run(trajectory, (t0, t1))`` where it has one (:mod:`core.analysis.controllers`)."""
        if hasattr(self.controller, "for_run"):
            self.controller = self.controller.for_run(self.trajectory, (t0, t1))
        self.reads_reference = getattr(self.controller, "reads_reference", True)

    def start(self, t0: float, q0, qd0) -> np.ndarray:
        """The initial state x0 (checked), and the auxiliary count m."""
        n, n_joints = self.n, self.n_joints
        q0 = np.asarray(q0, dtype=float)
        qd0 = np.zeros(n) if qd0 is None else np.asarray(qd0, dtype=float)
        if q0.shape != (n,) or qd0.shape != (n,):
            raise ValueError(f"q0 and qd0 must have shape ({n},), got {q0.shape} and {qd0.shape}")
        if self.prescribed:
            q0, qd0 = q0.copy(), qd0.copy()
            q0[:n_joints], qd0[:n_joints] = (
                np.asarray(v, dtype=float) for v in self.trajectory.evaluate(t0)[:2]
            )
        a0 = _auxiliary_start(self.model, q0, qd0, self.options.auxiliary0)
        self.m = a0.size
        if self.prescribed:  # with auxiliary states the generic evaluation (see right_hand_side)
            model = self.model
            self.prescribe = Model.prescribed_function(model) if self.m else model.prescribed_function()
        self.worst = [(0.0, t0)] * len(self.speeds)
        first = n_joints if self.prescribed else 0
        return np.concatenate([q0[first:], qd0[first:], a0, [0.0, 0.0]])

    def context(self, a: np.ndarray):
        """``with model.auxiliary(a):`` when the model has auxiliary states."""
        return self.model.auxiliary(a) if self.m else contextlib.nullcontext()

    def inputs(self, t: float, q: np.ndarray, qd: np.ndarray, reference=None) -> np.ndarray:
        """The controller's τ (zero without one), checked."""
        if self.controller is None:
            return np.zeros(self.n_joints)
        if reference is None and self.trajectory is not None and self.reads_reference:
            reference = self.trajectory.evaluate(t)
        tau = np.asarray(self.controller(t, q, qd, self.model, reference), dtype=float)
        if tau.shape != (self.n_joints,):
            raise ValueError(f"controller returned shape {tau.shape}, expected ({self.n_joints},)")
        return tau

    def joint_state(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈_r) of a prescribed run: the trajectory's joints, the state's flexible part."""
        n_f = self.n_f
        q_r, qd_r, qdd_r = self.trajectory.evaluate(t)
        return np.concatenate([q_r, x[:n_f]]), np.concatenate([qd_r, x[n_f : 2 * n_f]]), qdd_r

    def watch(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Report progress and keep the largest extension speed ratio U/U_g of each translating link."""
        if self.options.progress is not None:
            self.options.progress(t)
        for k, (index, wave_speed) in enumerate(self.speeds):
            ratio = abs(qd[index]) * q[index] / wave_speed
            if ratio > self.worst[k][0]:
                self.worst[k] = (ratio, t)

    def prescribed_rates(self, t: float, x: np.ndarray, joints=None) -> np.ndarray:
        """ẋ of a prescribed run; ``joints``: :meth:`joint_state` (t, x) if already evaluated."""
        n_f, m = self.n_f, self.m
        q, qd, qdd_r = self.joint_state(t, x) if joints is None else joints
        a = x[2 * n_f : 2 * n_f + m]
        with self.context(a):
            qdd, _, powers, _ = self.prescribe(q, qd, qdd_r)
            a_dot = self.model.auxiliary_rates(q, qd, a) if m else a
        return np.concatenate([x[n_f : 2 * n_f], qdd[self.n_joints :], a_dot, powers])

    def right_hand_side(self) -> Callable[[float, np.ndarray], np.ndarray]:
        """ẋ(t, x) for ``solve_ivp``."""
        model, n, m = self.model, self.n, self.m
        if self.prescribed:

            def rhs(t: float, x: np.ndarray) -> np.ndarray:
                joints = self.joint_state(t, x)  # the trajectory once per right-hand side
                self.watch(t, *joints[:2])
                return self.prescribed_rates(t, x, joints)

        elif m:
            # The generic right-hand side: it evaluates the primitives, which see the auxiliary
            # values (a backend's fused one may have built in matrices of other values). It
            # reads q, q̇ from x[:2n] and returns (q̇, q̈, input power, dissipated power).
            rates = self.rates = Model.rates_function(model, self.options.solver)

            def rhs(t: float, x: np.ndarray) -> np.ndarray:
                q, qd, a = x[:n], x[n : 2 * n], x[2 * n : 2 * n + m]
                self.watch(t, q, qd)
                with model.auxiliary(a):
                    motion = rates(x, self.inputs(t, q, qd))
                    a_dot = model.auxiliary_rates(q, qd, a)
                return np.concatenate([motion[: 2 * n], a_dot, motion[2 * n :]])

        elif self.controller is None and self.options.progress is None and not self.speeds:
            # Nothing to watch and no input: the model's right-hand side alone (a run that
            # needs tens of thousands of them spends ~20 % less outside the kernel).
            rates = self.rates = model.rates_function(self.options.solver)
            no_input = np.zeros(self.n_joints)

            def rhs(t: float, x: np.ndarray) -> np.ndarray:
                return rates(x, no_input)

        else:
            rates = self.rates = model.rates_function(self.options.solver)

            def rhs(t: float, x: np.ndarray) -> np.ndarray:
                q, qd = x[:n], x[n : 2 * n]
                self.watch(t, q, qd)
                return rates(x, self.inputs(t, q, qd))

        return rhs

    def jacobian(
        self, rhs: Callable[[float, np.ndarray], np.ndarray]
    ) -> Callable[[float, np.ndarray], np.ndarray] | None:
        """∂ẋ/∂x for the implicit methods, or None (SciPy's finite differences); ``rhs`` is
        :meth:`right_hand_side`'s (differenced where there is no compiled Jacobian)."""
        method, wanted = self.options.method, self.options.jacobian
        if method not in IMPLICIT:
            return None
        if self.prescribed:
            # Central differences of the right-hand side: SciPy's adaptive forward differences
            # misjudge the steps of stiff beam coordinates here and Newton stalls (measured,
            # spin-up FEM 16 elements with geometric stiffening, Radau rtol 1e-6: 1305
            # Jacobians and 30 734 right-hand sides with SciPy's, 15 and 4 212 with these).
            if wanted is False:
                return None
            return lambda t, x: central_difference_jacobian(lambda y: self.prescribed_rates(t, y), x)
        if wanted is False:
            return None
        # The compiled ∂ẋ/∂x has no auxiliary block: models with auxiliary states (and models
        # without a compiled Jacobian) get central differences of the right-hand side, never
        # SciPy's growing steps (see ``jacobian`` in :func:`simulate`).
        if hasattr(self.rates, "jacobian") and not self.m:
            return self.compiled_jacobian
        return lambda t, x: central_difference_jacobian(lambda y: rhs(t, y), x)

    def compiled_jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        """The model's compiled ∂ẋ/∂x, completed with the controller's ∂τ/∂(q, q̇)."""
        n = self.n
        q, qd = x[:n], x[n : 2 * n]
        reference = None if self.trajectory is None else self.trajectory.evaluate(t)
        J, J_tau = self.rates.jacobian(x, self.inputs(t, q, qd, reference))
        if self.controller is not None:
            J[:, : 2 * n] += J_tau @ self.controller_jacobian(t, x[: 2 * n], reference)
        return J

    def controller_jacobian(self, t: float, state: np.ndarray, reference) -> np.ndarray:
        """∂τ/∂(q, q̇), shape (n_joints, 2 n_dof): the controller's ``state_jacobian``, else
        central differences with steps ε^(1/3) max(|x_j|, 1)."""
        n = self.n
        if hasattr(self.controller, "state_jacobian"):
            return self.controller.state_jacobian(t, state[:n], state[n:], self.model, reference)
        return central_difference_jacobian(
            lambda y: self.inputs(t, y[:n], y[n:], reference), state, step=CONTROLLER_STEP
        )

    def choose_method(self, t0: float, t1: float, x0: np.ndarray) -> tuple[str, str, dict]:
        """(method, reason, estimate) of ``method="auto"`` for the run from x0 over (t0, t1):
        :func:`choose_method` on the model linearized at the start, with the controller's
        ∂τ/∂(q, q̇) there (its ``state_jacobian`` or central differences; on models above
        :data:`DENSE_ESTIMATE` coordinates the controller is left out)."""
        n = self.n
        if self.prescribed:
            q, qd, _ = self.joint_state(t0, x0)
        else:
            q, qd = x0[:n], x0[n : 2 * n]
        gains = None
        if self.controller is not None and n <= DENSE_ESTIMATE:
            reference = None if self.trajectory is None else self.trajectory.evaluate(t0)
            with self.context(x0[2 * n : 2 * n + self.m]):
                gains = self.controller_jacobian(t0, np.concatenate([q, qd]), reference)
        with self.context(x0[(2 * self.n_f if self.prescribed else 2 * n) :][: self.m]):
            return choose_method(
                self.model,
                (t0, t1),
                q,
                qd,
                gains=gains,
                prescribed=self.prescribed,
                solver=self.options.solver,
            )

    def deflection_event(self, t0: float, x0: np.ndarray) -> Callable[[float, np.ndarray], float]:
        """The terminal ``solve_ivp`` event of ``deflection_limit``, checked at the start."""
        limit, m = self.options.deflection_limit, self.m
        start_a = 2 * self.n_f if self.prescribed else 2 * self.n

        def deflection_margin(t: float, x: np.ndarray) -> float:
            """limit − the largest |tip deflection|: reaches 0 from above at the limit."""
            q = self.joint_state(t, x)[0] if self.prescribed else x[: self.n]
            with self.context(x[start_a : start_a + m]):
                tips = self.model.tip_deflections(q)
            return limit - max((abs(v) for v in tips.values()), default=0.0)

        deflection_margin.terminal = True
        deflection_margin.direction = -1
        if deflection_margin(t0, x0) <= 0:
            raise ValueError(f"deflection_limit: the initial tip deflection already reaches {limit!r} m")
        return deflection_margin

    def integrate(self, t0: float, t1: float, x0: np.ndarray):
        """From x0 over (t0, t1) with the options' method, tolerances and outputs: the compiled
        DOP853 where :meth:`compiled_explicit` allows, else ``solve_ivp``; a solution with
        ``solve_ivp``'s fields either way."""
        options = self.options
        rhs = self.right_hand_side()
        compiled = self.compiled_explicit(t0, t1)
        if compiled is not None:
            self.integrator = "compiled DOP853"
            n = self.n

            def failed(t: float, x: np.ndarray) -> None:  # raises, naming a non-finite coordinate
                self.rates(x, self.inputs(t, x[:n], x[n : 2 * n]))

            return explicit.dop853(
                *compiled, (t0, t1), x0, rtol=options.rtol, atol=options.atol, t_eval=options.t_eval,
                progress=options.progress, failed=failed,
            )  # fmt: skip
        from scipy.integrate import solve_ivp  # on use: a process that never needs it skips ~0.7 s

        settings: dict[str, Any] = {"method": options.method, "rtol": options.rtol, "atol": options.atol}
        if options.method == "Gauss":
            from core.numerics.gauss_collocation import GaussLegendre

            settings.update(method=GaussLegendre, step=options.step)
        jac = self.jacobian(rhs)
        if jac is not None:
            settings["jac"] = jac
        if options.deflection_limit is not None:
            settings["events"] = [self.deflection_event(t0, x0)]
        return solve_ivp(rhs, (t0, t1), x0, t_eval=options.t_eval, **settings)

    def compiled_explicit(self, t0: float, t1: float) -> tuple | None:
        """(kernel arguments, input series) of :func:`core.analysis.explicit.dop853` when this
        run can take it (a DOP853 run on one compiled right-hand side with an input read in
        compiled code and no terminal event: :mod:`core.analysis.explicit`), else None."""
        arguments = getattr(self.rates, "kernel_arguments", None)
        if self.options.method != "DOP853" or self.options.deflection_limit is not None or arguments is None:
            return None
        series = explicit.input_series(self.controller, self.trajectory, (t0, t1), self.n_joints)
        return None if series is None else (arguments, series)

    def outputs(self, solution) -> tuple[np.ndarray, np.ndarray, float | None]:
        """(times, full states (q, q̇, a, W) per column, the time the deflection limit stopped the run)."""
        times = np.asarray(solution.t, dtype=float)  # solve_ivp leaves lists when no t_eval was reached
        size = 2 * (self.n_f if self.prescribed else self.n) + self.m + 2
        states = np.reshape(solution.y, (-1, times.size)) if times.size else np.zeros((size, 0))
        stopped_at = None
        if self.options.deflection_limit is not None and solution.status == 1 and solution.t_events[0].size:
            stopped_at = float(solution.t_events[0][0])
            if not times.size or stopped_at > times[-1]:  # the frame ends with the crossing
                times = np.append(times, stopped_at)
                states = np.column_stack([states, solution.y_events[0][0]])
        self.references = (
            [self.trajectory.evaluate(t) for t in times] if self.trajectory is not None else None
        )
        if self.prescribed:
            # Full states (q, q̇, a, W) for the frame: the trajectory's joints beside each state.
            n, n_f, n_joints = self.n, self.n_f, self.n_joints
            full = np.zeros((2 * n, times.size))
            if times.size:
                full[:n_joints] = np.array([r[0] for r in self.references]).T
                full[n : n + n_joints] = np.array([r[1] for r in self.references]).T
            full[n_joints:n], full[n + n_joints :] = states[:n_f], states[n_f : 2 * n_f]
            states = np.vstack([full, states[2 * n_f :]])
        return times, states, stopped_at

    def row(
        self, t: float, q: np.ndarray, qd: np.ndarray, reference
    ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(τ, q̈, kinetic energy, input power q̇ᵀBτ) of an output row; ``reference`` is the
        trajectory's at t (or None). The right-hand side the integrator used (one compiled call
        where the model has one; the same q̈ as :meth:`Model.forward_dynamics
        <core.dynamics.model.Model.forward_dynamics>` with the run's solver, to round-off; the
        input power is its rate of ``work_input``) and one mass matrix; a prescribed row: one
        call of the model's :meth:`~core.dynamics.model.Model.prescribed_function`, kinetic
        energy and powers included."""
        if self.prescribed:
            qdd, tau, powers, kinetic = self.prescribe(q, qd, reference[2])
            return tau, qdd, kinetic, float(powers[0])
        n = self.n
        tau = self.inputs(t, q, qd, reference)
        motion = self.rates(np.concatenate([q, qd, (0.0, 0.0)]), tau)
        return tau, motion[n : 2 * n], float(0.5 * qd @ self.model.mass_matrix(q) @ qd), float(motion[2 * n])

    def warn_extension_speeds(self) -> None:
        """:func:`warn_extension_speeds` with the largest ratios the right-hand sides saw."""
        warn_extension_speeds(
            [(index, *worst) for (index, _), worst in zip(self.speeds, self.worst, strict=True)]
        )


def prescribed_motion(model: Model, q, qd, qdd_joints) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and joint inputs when the joint accelerations are prescribed.

    Every row of M q̈ + R = B τ, with R = C q̇ + G + D q̇ + ∂V_e/∂q − B τ_c (friction
    τ_c included) and q̈ = (q̈_r, q̈_f), q̈_r given, is one equation for the unknowns
    (q̈_f, τ)::

        [M_:f  −B] [q̈_f; τ] = −M_:r q̈_r − R

    a square system (n_dof = n_flex + n_joints), solved by LU. For clamped frames
    (B = [I; 0]) it is M_ff q̈_f = −M_fr q̈_r − R_f, then τ = M_rr q̈_r + M_rf q̈_f + R_r;
    pinned frames, whose joint inputs also drive the modes (B_f = φ'(0)), are solved the
    same way. Only M_ff needs to be regular, never the joint inertia M_rr or the actuator's
    effective inertia (see the module docstring: with geometric stiffening those may be
    indefinite). Works for any number of joints, revolute or prismatic (a translating link's
    free length is then prescribed too).

    Parameters
    ----------
    q, qd : ndarray, shape (n_dof,)
        Configuration and rates [rad or m, per s].
    qdd_joints : ndarray, shape (n_joints,)
        The prescribed joint accelerations [rad/s² or m/s²].

    Returns
    -------
    qdd : ndarray, shape (n_dof,)
        (q̈_r, q̈_f).
    tau : ndarray, shape (n_joints,)
        The joint inputs that realise the motion [N·m or N].

    Raises
    ------
    numpy.linalg.LinAlgError
        When the system is singular (no joint inputs realise the motion).
    """
    q, qd = model._state(q, qd)  # shapes, and a non-finite entry named
    qdd_joints = np.asarray(qdd_joints, dtype=float)
    if qdd_joints.shape != (model.n_joints,):
        raise ValueError(f"qdd_joints must have shape ({model.n_joints},), got {qdd_joints.shape}")
    if not np.all(np.isfinite(qdd_joints)):
        raise ValueError(f"qdd_joints must be finite, got {qdd_joints.tolist()}")
    qdd, tau, _, _ = model.prescribed_function()(q, qd, qdd_joints)
    return qdd, tau


#: Frame columns of every simulation (an auxiliary state may not take one of these names).
_FIXED_COLUMNS = frozenset(
    {
        "time",
        "tip_x",
        "tip_y",
        "tip_z",
        "kinetic",
        "potential",
        "energy",
        "input_power",
        "work_input",
        "work_dissipated",
        "energy_balance_error",
    }
)


def _auxiliary_start(model: Model, q0: np.ndarray, qd0: np.ndarray, auxiliary0) -> np.ndarray:
    """The initial auxiliary values a0 (``auxiliary0``, else ``model.auxiliary_initial(q0)``),
    checked: shape (len(model.auxiliary_names),), finite, and rates of that shape; the
    names distinct and not those of other frame columns. np.zeros(0) without auxiliary states."""
    names = tuple(model.auxiliary_names)
    m = len(names)
    if auxiliary0 is None:
        if not m:
            return np.zeros(0)
        a0 = np.asarray(model.auxiliary_initial(q0), dtype=float)
        source = f"{type(model).__name__}.auxiliary_initial(q0)"
    else:
        a0 = np.asarray(auxiliary0, dtype=float)
        source = "auxiliary0"
    if a0.shape != (m,):
        states = f"auxiliary states {names}" if m else "no auxiliary states"
        raise ValueError(f"{source} must have shape ({m},) (the model has {states}), got {a0.shape}")
    if not m:
        return a0
    if not np.all(np.isfinite(a0)):
        raise ValueError(f"{source} must be finite, got {a0.tolist()}")
    coordinates = tuple(model.coordinates)
    taken = _FIXED_COLUMNS.union(coordinates, (f"{c}_{end}" for c in coordinates for end in ("dot", "ddot")))
    clashes = sorted({name for name in names if names.count(name) > 1 or name in taken})
    if clashes:
        raise ValueError(
            f"auxiliary_names must be distinct and differ from the other frame columns, got {clashes}"
        )
    with model.auxiliary(a0):
        a_dot = np.asarray(model.auxiliary_rates(q0, qd0, a0))
    if a_dot.shape != (m,):
        raise ValueError(
            f"{type(model).__name__}.auxiliary_rates must return shape ({m},), got {a_dot.shape}"
        )
    return a0


def _frame(model: Model, times: np.ndarray, states: np.ndarray, run: _Run, trajectory) -> pd.DataFrame:
    """One row per state column x = (q, q̇, a, W_in, W_diss) of ``states`` (a: the ``run.m``
    auxiliary states), every quantity of a row evaluated inside ``with model.auxiliary(a):``.

    Per row only what needs the model at that state: :meth:`_Run.row` (τ, q̈, the kinetic
    energy and the input power: one forward dynamics and one mass matrix); the tip positions,
    potential energies and tip deflections of all rows are one batch each
    (:meth:`Model.tip_positions <core.dynamics.model.Model.tip_positions>`,
    ``potential_energies``, ``tip_deflection_rows``; per row with auxiliary states, which they
    see), the references are those :meth:`_Run.outputs` evaluated, and the columns are built
    as arrays."""
    import pandas as pd

    n, m, n_joints, count = model.n_dof, run.m, model.n_joints, times.size
    names = list(model.coordinates)
    Q, QD = states[:n].T, states[n : 2 * n].T
    tau = np.zeros((count, n_joints))
    qdd = np.zeros((count, n_joints))
    kinetic, potential, power = np.zeros(count), np.zeros(count), np.zeros(count)
    deflections: dict[str, np.ndarray] = {}
    tips = np.zeros((count, 3)) if m else None
    references = run.references if trajectory is not None else [None] * count
    no_context = contextlib.nullcontext()
    for k, (t, q, qd, reference) in enumerate(zip(times, Q, QD, references, strict=True)):
        with model.auxiliary(states[2 * n : 2 * n + m, k]) if m else no_context:
            tau[k], qdd_k, kinetic[k], power[k] = run.row(t, q, qd, reference)
            qdd[k] = qdd_k[:n_joints]
            if m:
                potential[k] = model.potential_energy(q)
                for name, value in model.tip_deflections(q).items():
                    deflections.setdefault(name, np.zeros(count))[k] = value
                tips[k] = model.tip_position(q)
    if not m:
        tips = model.tip_positions(Q) if count else np.zeros((0, 3))
        if count:
            potential, deflections = model.potential_energies(Q), model.tip_deflection_rows(Q)
    columns: dict[str, Any] = {"time": np.asarray(times, dtype=float)}
    columns.update(zip(names, Q.T, strict=True))
    columns.update({f"{name}_dot": v for name, v in zip(names, QD.T, strict=True)})
    if m:
        columns.update(zip(model.auxiliary_names, states[2 * n : 2 * n + m], strict=True))
    columns.update({f"tau{i}": v for i, v in enumerate(tau.T, start=1)})
    columns.update(tip_x=tips[:, 0], tip_y=tips[:, 1], tip_z=tips[:, 2])
    columns.update(deflections)
    joints = names[:n_joints]
    if trajectory is not None and count:
        q_d = np.array([r[0] for r in references]).reshape(count, n_joints)
        qd_d = np.array([r[1] for r in references]).reshape(count, n_joints)
        columns.update({f"{name}_ref": v for name, v in zip(joints, q_d.T, strict=True)})
        columns.update({f"{name}_ref_dot": v for name, v in zip(joints, qd_d.T, strict=True)})
    columns.update({f"{name}_ddot": v for name, v in zip(joints, qdd.T, strict=True)})
    columns.update(kinetic=kinetic, potential=potential, energy=kinetic + potential, input_power=power)
    columns["work_input"], columns["work_dissipated"] = states[2 * n + m], states[2 * n + m + 1]
    for index, wave_speed in run.speeds:
        columns[f"extension_speed_ratio{index + 1}"] = np.abs(QD[:, index]) * Q[:, index] / wave_speed
    if not count:
        return pd.DataFrame()
    frame = pd.DataFrame(columns)
    frame["energy_balance_error"] = (
        frame["energy"] - frame["energy"].iloc[0] - frame["work_input"] + frame["work_dissipated"]
    )
    return frame


def energy_drift(frame: pd.DataFrame) -> float:
    """max_t |E(t) − E(0) − W_input + W_dissipated| / max(|E(0)|, max_t |E(t)|) of a simulation."""
    scale = max(abs(frame["energy"].iloc[0]), frame["energy"].abs().max(), 1e-300)
    return float(frame["energy_balance_error"].abs().max() / scale)
