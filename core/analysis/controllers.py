"""Joint controllers (docs/MODEL.md, Analyses). One registry, :data:`CONTROLLERS`.

A controller is called as ``controller(t, q, qd, model, reference)`` and
returns the joint inputs τ, shape (n_joints,). Every registered controller
builds itself for an arm with ``from_config(arm, *, kp, kd)`` (gains [N·m/rad,
N·m·s/rad], scalars or one per joint); study configs take their
``controller.kind`` values and this signature from the registry, so a new
controller is added here and nowhere else. ``reference`` is
``(q_d, qd_d, qdd_d)`` of the trajectory at t (joint coordinates), or None
when the simulation has no trajectory (then regulation to the initial
configuration is the caller's choice: pass a constant trajectory).

A controller may give ``state_jacobian(t, q, qd, model, reference)``, ∂τ/∂(q, q̇)
of shape (n_joints, 2 n_dof), for the Jacobian of an implicit integrator;
without it :func:`core.analysis.simulation.simulate` takes central differences of the
controller.

A controller may give ``for_run(trajectory, t_span)``, the controller to use for one
simulation of ``trajectory`` (or None) over ``t_span`` = (t0, t1) [s]; :func:`simulate
<core.analysis.simulation.simulate>` calls it once before integrating, and without it uses
the controller as given. It is where work that depends on t alone is done once per run
(:meth:`FeedForward.for_run` tabulates the rigid inverse dynamics of the trajectory). A
controller whose attribute ``reads_reference`` is False ignores its ``reference`` argument,
so a simulation need not evaluate the trajectory for it in every right-hand side (absent: True).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np

from core.analysis.time_table import TimeTable, tabulate
from core.arm import Arm
from core.dynamics.model import Model

Reference = tuple[np.ndarray, np.ndarray, np.ndarray] | None


def _gains(name: str, value, n: int) -> np.ndarray:
    array = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return array


def _need(reference: Reference, name: str):
    if reference is None:
        raise ValueError(f"{name} needs a trajectory (pass trajectory= to simulate)")
    return reference


@dataclass(frozen=True)
class FeedForward:
    """Open-loop torques τ(t).

    Build from a function of time, or with :meth:`rigid_inverse_dynamics`:
    the torques that drive the *rigid* equivalent arm along the reference.
    """

    #: (t, reference) ↦ τ, shape (n_joints,) [N·m or N].
    torque: Callable[[float, Reference], np.ndarray]
    #: The rigid model whose inverse dynamics ``torque`` is (:meth:`rigid_inverse_dynamics`),
    #: which :meth:`for_run` tabulates; None for any other torque (used as given).
    rigid_model: Model | None = None
    #: False when ``torque`` ignores the reference (a table of :meth:`for_run`).
    reads_reference: bool = True
    #: The table of :meth:`for_run` (its tolerance, cost and, where it evaluates directly,
    #: ``table.reason``), else None.
    table: TimeTable | None = None
    #: The table packed for a compiled reader within its span (``TimeTable.compiled``'s
    #: ``compiled_series``; :func:`core.analysis.explicit.input_series`), else None.
    series: tuple | None = None
    #: Built from a config (:meth:`from_config`: the rigid inverse dynamics) it follows a
    #: reference trajectory, so a study without one is refused before any case runs.
    tracks_trajectory: ClassVar[bool] = True

    def __call__(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        return np.asarray(self.torque(t, reference), dtype=float)

    def state_jacobian(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        """∂τ/∂(q, q̇) = 0 (open loop), shape (n_joints, 2 n_dof)."""
        return np.zeros((model.n_joints, 2 * model.n_dof))

    def for_run(self, trajectory, t_span: tuple[float, float]) -> FeedForward:
        """The feed-forward for one simulation of ``trajectory`` over ``t_span`` [s].

        From :meth:`rigid_inverse_dynamics`, τ(t) = ID(q_d(t), q̇_d(t), q̈_d(t)) depends on t
        alone: it is tabulated over the span (:func:`core.analysis.time_table.tabulate`: a
        piecewise Chebyshev series checked between its nodes to 1e-12 max|τ|), and evaluated
        directly outside the span and wherever the table could not meet its tolerance
        (``table.reason``). The torque no longer reads the reference, so a simulation need not
        evaluate the trajectory per right-hand side. Measured on the space-arm maneuver (one
        BLAS thread, process time, loaded machine): 4.9 µs per call instead of 45.5 µs for the
        trajectory and the cached inverse dynamics; a 2-s AMM case 2.8 → 1.57 s (117 → 66 µs per
        right-hand side), the same steps and joint angles to 5e-14; the series is now read by
        one compiled call (:meth:`TimeTable.compiled <core.analysis.time_table.TimeTable.compiled>`,
        ~0.9 µs). Any other feed-forward, or no trajectory: ``self``.
        """
        rigid = self.rigid_model
        if rigid is None or trajectory is None:
            return self

        def inverse_dynamics(t: float) -> np.ndarray:
            return rigid.inverse_dynamics(*trajectory.evaluate(t))

        table = tabulate(inverse_dynamics, t_span)
        read = table.compiled()
        series = getattr(read, "compiled_series", None)  # None: the table itself (not every panel tabulated)
        return FeedForward(
            lambda t, reference: read(t), rigid, reads_reference=False, table=table, series=series
        )

    @classmethod
    def from_config(
        cls, arm: Arm, *, kp: float | list[float] = 0.0, kd: float | list[float] = 0.0
    ) -> FeedForward:
        """Rigid inverse dynamics of ``arm``'s rigid equivalent (gains unused)."""
        from core.arm.rigid import rigid_equivalent
        from core.dynamics.engine import ChainModel

        return cls.rigid_inverse_dynamics(ChainModel(rigid_equivalent(arm), {}))

    @classmethod
    def rigid_inverse_dynamics(cls, rigid_model: Model) -> FeedForward:
        """τ = M(q_d) q̈_d + C q̇_d + D q̇_d + G(q_d) of ``rigid_model`` (no flexible coordinates)."""
        if rigid_model.n_dof != rigid_model.n_joints:
            raise ValueError(
                "rigid_model must have joint coordinates only (see core.arm.rigid.rigid_equivalent)"
            )

        recent: dict[bytes, np.ndarray] = {}

        def torque(t: float, reference: Reference) -> np.ndarray:
            # Implicit integrators evaluate the same stage times in every Newton
            # iteration; the torque depends on the reference only, so remember
            # the last few (measured on the space-arm maneuver under Radau:
            # 1207 inverse dynamics for 2775 right-hand sides, instead of one each).
            q_d, qd_d, qdd_d = _need(reference, "feed-forward from inverse dynamics")
            key = np.concatenate([q_d, qd_d, qdd_d]).astype(float).tobytes()
            if key not in recent:
                if len(recent) >= 16:
                    del recent[next(iter(recent))]
                recent[key] = rigid_model.inverse_dynamics(q_d, qd_d, qdd_d)
            return recent[key].copy()

        return cls(torque, rigid_model)


@dataclass(frozen=True)
class _JointGains:
    """A controller with joint gains k_p, k_d (scalars or one per joint, >= 0)."""

    kp: object
    kd: object
    #: The error is taken against a reference trajectory (see :attr:`FeedForward.tracks_trajectory`).
    tracks_trajectory: ClassVar[bool] = True

    @classmethod
    def from_config(cls, arm: Arm, *, kp: float | list[float] = 0.0, kd: float | list[float] = 0.0) -> Self:
        """The controller with gains ``kp`` [N·m/rad], ``kd`` [N·m·s/rad] (unchanged by the arm)."""
        return cls(kp=kp, kd=kd)

    def gains(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(k_p, k_d) broadcast to ``n`` joints and checked (once per n: controllers run in
        every right-hand side of a simulation)."""
        cache = self.__dict__.setdefault("_gains", {})  # a frozen dataclass: no attribute assignment
        if n not in cache:
            cache[n] = _gains("kp", self.kp, n), _gains("kd", self.kd, n)
        return cache[n]


@dataclass(frozen=True)
class PD(_JointGains):
    """τ = K_p (q_d − q_r) + K_d (q̇_d − q̇_r) on the joint coordinates."""

    def __call__(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        q_d, qd_d, _ = _need(reference, "PD")
        n = model.n_joints
        kp, kd = self.gains(n)
        return kp * (q_d - q[:n]) + kd * (qd_d - qd[:n])

    def state_jacobian(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        """∂τ/∂(q, q̇) = (−K_p, −K_d) on the joint columns, shape (n_joints, 2 n_dof)."""
        n, N = model.n_joints, model.n_dof
        kp, kd = self.gains(n)
        jacobian = np.zeros((n, 2 * N))
        jacobian[:, :n] = -np.diag(kp)
        jacobian[:, N : N + n] = -np.diag(kd)
        return jacobian


def _joint_acceleration_law(model: Model, q, qd, u) -> np.ndarray:
    """τ that gives the joint coordinates exactly the accelerations u.

    From M q̈ = B τ − H with H = C q̇ + D q̇ + K q + G − B τ_c: the joint rows
    of q̈ are S M⁻¹(Bτ − H), so τ = (S M⁻¹ B)⁻¹ (u + S M⁻¹ H). For clamped
    frames (B = [I; 0]) this is the decoupling law of docs/MODEL.md, Analyses,
    τ = (M_rr − M_rf M_ff⁻¹ M_rfᵀ) u + h_r − M_rf M_ff⁻¹ (h_f + K q_f).
    """
    import scipy.linalg

    n = model.n_joints
    H = model.nonlinear_forces(q, qd) - model._applied(q, qd, np.zeros(n))  # h + G + Dq̇ + ∂V_e/∂q − Bτ_c
    solved = scipy.linalg.cho_solve(
        scipy.linalg.cho_factor(model.mass_matrix(q)), np.column_stack([model.input_matrix(q), H])
    )
    return np.linalg.solve(solved[:n, :n], u + solved[:n, n])


@dataclass(frozen=True)
class ComputedTorque(_JointGains):
    """Computed torque on the joint coordinates of a rigid model: τ = M u + h,
    u = q̈_d + K_d (q̇_d − q̇) + K_p (q_d − q). For a flexible model use
    :class:`Decoupling`, which accounts for the flexible coordinates."""

    @classmethod
    def from_config(
        cls, arm: Arm, *, kp: float | list[float] = 0.0, kd: float | list[float] = 0.0
    ) -> ComputedTorque:
        """Computed torque with gains ``kp`` [1/s²], ``kd`` [1/s] of the error law
        ë + k_d ė + k_p e = 0; refused for an arm with flexible links (use decoupling)."""
        if arm.flexible_links:
            raise ValueError(
                f"computed-torque acts on rigid models; this arm has flexible links {list(arm.flexible_links)} "
                "(use decoupling)"
            )
        return super().from_config(arm, kp=kp, kd=kd)

    def __call__(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        if model.n_dof != model.n_joints:
            raise ValueError("ComputedTorque acts on rigid models; use Decoupling for flexible ones")
        q_d, qd_d, qdd_d = _need(reference, "computed torque")
        kp, kd = self.gains(model.n_joints)
        u = qdd_d + kd * (qd_d - qd) + kp * (q_d - q)
        return _joint_acceleration_law(model, q, qd, u)


@dataclass(frozen=True)
class Decoupling(_JointGains):
    """Model-based decoupling (docs/MODEL.md, Analyses): the joint errors e = q_r − q_d obey
    ë + k_d ė + k_p e = 0 exactly (G_v = k_d, G_p = k_p in docs/MODEL.md, Analyses), whatever the flexible coordinates do; they
    obey M_ff q̈_f + h_f + K q_f = −M_rfᵀ q̈_r (clamped frames)."""

    @classmethod
    def from_config(
        cls, arm: Arm, *, kp: float | list[float] = 0.0, kd: float | list[float] = 0.0
    ) -> Decoupling:
        """Decoupling with gains ``kp`` [1/s²], ``kd`` [1/s] of the joint error law
        ë + k_d ė + k_p e = 0 (scalars or one per joint)."""
        return cls(kp=kp, kd=kd)

    def joint_accelerations(self, q, qd, model: Model, reference: Reference) -> np.ndarray:
        """The joint accelerations u = q̈_d − k_d ė − k_p e the law gives the joints at (q, q̇),
        shape (n_joints,): whatever the flexible coordinates, which it does not read."""
        q_d, qd_d, qdd_d = _need(reference, "decoupling")
        n = model.n_joints
        kp, kd = self.gains(n)
        return qdd_d - kd * (qd[:n] - qd_d) - kp * (q[:n] - q_d)

    def __call__(self, t, q, qd, model: Model, reference: Reference) -> np.ndarray:
        return _joint_acceleration_law(model, q, qd, self.joint_accelerations(q, qd, model, reference))


#: Controllers by config name; each has ``from_config(arm, *, kp, kd)``.
CONTROLLERS: dict[str, type] = {
    "feed-forward": FeedForward,
    "pd": PD,
    "computed-torque": ComputedTorque,
    "decoupling": Decoupling,
}
