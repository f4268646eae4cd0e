"""Joint-space reference trajectories: position, velocity and acceleration.

Every trajectory is a frozen dataclass with ``evaluate(t) -> (q, qd, qdd)``,
each an ndarray of shape (n_joints,) [rad or m, per s, per s²].

One registry, :data:`TRAJECTORIES` (config name → class). Each registered
class builds itself for an arm and a start configuration with
``from_config(arm, q0, **parameters)``; its keyword-only parameters (names,
annotations, defaults) are the config schema, so a new trajectory is added
here and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.arm import Arm


def _vector(name: str, value) -> np.ndarray:
    array = np.atleast_1d(np.asarray(value, dtype=float))
    if array.ndim != 1 or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a finite vector, got {value!r}")
    return array


def _rates_and_periods(obj, rate: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check and freeze the per-joint fields ``rate`` (k or Ω), ``T`` and ``q0`` of a
    frozen trajectory dataclass: finite vectors of one length, T > 0, q0 zero by default."""
    values, T = _vector(rate, getattr(obj, rate)), _vector("T", obj.T)
    if values.shape != T.shape:
        raise ValueError(f"{rate} and T must have the same length, got {values.size} and {T.size}")
    if np.any(T <= 0):
        raise ValueError(f"T must be > 0, got {tuple(T)}")
    q0 = np.zeros_like(values) if obj.q0 is None else _vector("q0", obj.q0)
    if q0.shape != values.shape:
        raise ValueError(f"q0 must have {values.size} entries, got {q0.size}")
    object.__setattr__(obj, rate, tuple(values))
    object.__setattr__(obj, "T", tuple(T))
    object.__setattr__(obj, "q0", tuple(q0))
    return values, T, q0


@dataclass(frozen=True)
class Cycloidal:
    """θ_i(t) = q0_i + k_i [t − (T_i/π) sin(πt/T_i)] (Mohan & Saha, DeNOC).

    The rate k_i(1 − cos(πt/T_i)) starts and (at t = 2T_i) ends at zero.
    """

    k: tuple[float, ...]
    T: tuple[float, ...]
    q0: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        k, T, q0 = _rates_and_periods(self, "k")
        # evaluated in every right-hand side of a simulation: the arrays once
        object.__setattr__(self, "_arrays", (k, np.pi / T, q0))

    @classmethod
    def from_config(cls, arm: Arm, q0: np.ndarray, *, k: list[float], T: list[float]) -> Cycloidal:
        """Rates k [rad/s or m/s] and half-periods T [s] per joint, from ``q0``."""
        return cls(k=tuple(k), T=tuple(T), q0=tuple(q0))

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k, w, q0 = self._arrays
        sine = np.sin(w * t)
        return q0 + k * (t - sine / w), k * (1 - np.cos(w * t)), k * w * sine


@dataclass(frozen=True)
class ParabolicBlend:
    """Linear segment with parabolic blends from q_start to q_end in time T (Theodore & Ghosal (1997)).

    Constant acceleration a = Δq / (t_b (T − t_b)) for the first t_b seconds,
    constant velocity, constant deceleration for the last t_b; at rest before
    0 and after T. ``blend`` is t_b, 0 < t_b ≤ T/2 (t_b = T/2: no linear part).
    """

    q_start: tuple[float, ...]
    q_end: tuple[float, ...]
    T: float
    blend: float

    def __post_init__(self) -> None:
        start, end = _vector("q_start", self.q_start), _vector("q_end", self.q_end)
        if start.shape != end.shape:
            raise ValueError(f"q_start and q_end must have the same length, got {start.size} and {end.size}")
        if not (math.isfinite(self.T) and self.T > 0):
            raise ValueError(f"T must be finite and > 0, got {self.T!r}")
        if not (0 < self.blend <= self.T / 2):
            raise ValueError(f"blend must be in (0, T/2] = (0, {self.T / 2}], got {self.blend!r}")
        object.__setattr__(self, "q_start", tuple(start))
        object.__setattr__(self, "q_end", tuple(end))
        # evaluated in every right-hand side of a simulation (13 -> 3 µs a call): the arrays once
        acceleration = (end - start) / (self.blend * (self.T - self.blend))
        object.__setattr__(self, "_arrays", (start, end, acceleration, np.zeros_like(start)))

    @classmethod
    def from_config(
        cls, arm: Arm, q0: np.ndarray, *, q_end: list[float], T: float, blend: float
    ) -> ParabolicBlend:
        """From ``q0`` to ``q_end`` [rad or m] in T [s] with blends of ``blend`` [s]."""
        return cls(q_start=tuple(q0), q_end=tuple(q_end), T=T, blend=blend)

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        start, end, a, zero = self._arrays  # copies handed out: callers may write into them
        T, tb = self.T, self.blend
        if t <= 0:
            return start.copy(), zero.copy(), zero.copy()
        if t >= T:
            return end.copy(), zero.copy(), zero.copy()
        if t < tb:
            return start + 0.5 * a * t**2, a * t, a.copy()
        if t <= T - tb:
            return start + a * tb * (t - tb / 2), a * tb, zero.copy()
        r = T - t
        return end - 0.5 * a * r**2, a * r, -a


@dataclass(frozen=True)
class CartesianCircle:
    """Tip on a circle x = x0 + r cos(ωt), y = y0 + r sin(ωt), through the rigid
    inverse kinematics of a planar two-link arm with link lengths l1, l2 (the lumped-mass N-DOF paper, docs/REFERENCES.md).

    ``elbow`` = +1 or −1 picks the branch sign of θ2. Velocities and
    accelerations follow from q̇ = J⁻¹ẋ and q̈ = J⁻¹(ẍ − J̇q̇).
    """

    center: tuple[float, float]
    radius: float
    omega: float
    lengths: tuple[float, float]
    elbow: int = -1

    def __post_init__(self) -> None:
        l1, l2 = self.lengths
        x0, y0 = self.center
        far = math.hypot(x0, y0) + self.radius
        near = math.hypot(x0, y0) - self.radius
        if far > l1 + l2 or near < abs(l1 - l2):
            raise ValueError(
                f"circle (center {self.center}, radius {self.radius}) leaves the workspace "
                f"[{abs(l1 - l2)}, {l1 + l2}] m of links {self.lengths}"
            )
        if self.elbow not in (1, -1):
            raise ValueError(f"elbow must be +1 or -1, got {self.elbow!r}")

    @classmethod
    def from_config(
        cls,
        arm: Arm,
        q0: np.ndarray,
        *,
        center: tuple[float, float],
        radius: float,
        omega: float,
        elbow: Literal[1, -1] = -1,
    ) -> CartesianCircle:
        """Circle of ``radius`` [m] about ``center`` [m] at ``omega`` [rad/s] for a
        planar two-link arm (link lengths from ``arm``; ``q0`` unused)."""
        if arm.n_joints != 2 or not arm.is_planar:
            raise ValueError(
                f"trajectory: the circle needs a two-joint planar arm, got {arm.n_joints} joints"
            )
        lengths = tuple(link.length for link in arm.links)
        return cls(center=tuple(center), radius=radius, omega=omega, lengths=lengths, elbow=elbow)

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        (x0, y0), r, w = self.center, self.radius, self.omega
        l1, l2 = self.lengths
        x, y = x0 + r * math.cos(w * t), y0 + r * math.sin(w * t)
        xd = np.array([-r * w * math.sin(w * t), r * w * math.cos(w * t)])
        xdd = -(w**2) * np.array([x - x0, y - y0])
        c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
        q2 = self.elbow * math.acos(max(-1.0, min(1.0, c2)))
        q1 = math.atan2(y, x) - math.atan2(l2 * math.sin(q2), l1 + l2 * math.cos(q2))
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        J = ((-l1 * s1 - l2 * s12, -l2 * s12), (l1 * c1 + l2 * c12, l2 * c12))
        qd = _solve_2x2(J, xd)
        u1, u12 = qd[0], qd[0] + qd[1]
        J_dot_qd = np.array([-l1 * c1 * u1**2 - l2 * c12 * u12**2, -l1 * s1 * u1**2 - l2 * s12 * u12**2])
        qdd = _solve_2x2(J, xdd - J_dot_qd)
        return np.array([q1, q2]), qd, qdd


@dataclass(frozen=True)
class SpinUp:
    """Spin-up to a constant rate (Kane, Ryan & Banerjee 1987, J. Guidance 10(2), 139–151).

    Per joint, with final rate Ω_i reached at time T_i: θ_i(t) = q0_i + (Ω_i/T_i)[t²/2 +
    (T_i/2π)²(cos(2πt/T_i) − 1)] for 0 ≤ t < T_i, θ_i(t) = q0_i + Ω_i(t − T_i/2) from T_i on,
    and at rest at q0_i before t = 0. The acceleration (Ω_i/T_i)(1 − cos(2πt/T_i))
    rises from 0 to its peak 2Ω_i/T_i at T_i/2 and returns to 0 at T_i, so θ, θ̇,
    θ̈ (and the jerk) are continuous at t = 0 and at t = T_i. The benchmark is a
    cantilever beam (L = 10 m, EI = 1.4e4 N·m², ρA = 1.2 kg/m) driven this way with
    Ω = 6 rad/s, T = 15 s: above the first clamped-free frequency (3.80 rad/s) the
    classic floating-frame model without geometric stiffening diverges.
    """

    omega: tuple[float, ...]
    T: tuple[float, ...]
    q0: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        omega, T, q0 = _rates_and_periods(self, "omega")
        # evaluated in every right-hand side of a simulation: (Ω_i, T_i, q0_i) as floats once
        object.__setattr__(self, "_joints", tuple(zip(omega.tolist(), T.tolist(), q0.tolist(), strict=True)))

    @classmethod
    def from_config(cls, arm: Arm, q0: np.ndarray, *, omega: list[float], T: list[float]) -> SpinUp:
        """Final rates omega [rad/s or m/s] reached at times T [s], per joint, from ``q0``."""
        return cls(omega=tuple(omega), T=tuple(T), q0=tuple(q0))

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Per joint in floats (numpy's dispatch on arrays of a joint or two cost 32 µs a call,
        # a third of a stiffened beam's prescribed right-hand side). The ramp at s = t clipped to
        # [0, T]; past T it has reached θ = ΩT/2, θ̇ = Ω, θ̈ = 0 and the angle grows by Ω(t − T).
        t = float(t)
        rows = []
        for omega, T, q0 in self._joints:
            s = min(max(t, 0.0), T)
            w = 2 * math.pi / T
            rate = omega / T
            c, sn = math.cos(w * s), math.sin(w * s)
            rows.append(
                (
                    q0 + rate * (s * s / 2 + (c - 1) / w**2) + omega * max(t - T, 0.0),
                    rate * (s - sn / w),
                    rate * (1 - c) if 0 < t < T else 0.0,
                )
            )
        q, qd, qdd = np.array(rows).T
        return q, qd, qdd


def _solve_2x2(J, b) -> np.ndarray:
    """J⁻¹ b by Cramer's rule (det J = l1 l2 sin q2 ≠ 0 inside the workspace the
    constructor checks); ``np.linalg.solve`` costs ~10 µs of dispatch per 2×2 call."""
    (a, c), (d, e) = J
    det = a * e - c * d
    return np.array([(e * b[0] - c * b[1]) / det, (a * b[1] - d * b[0]) / det])


#: Trajectories by config name; each has ``from_config(arm, q0, **parameters)``.
TRAJECTORIES: dict[str, type] = {
    "cycloidal": Cycloidal,
    "parabolic-blend": ParabolicBlend,
    "circle": CartesianCircle,
    "spin-up": SpinUp,
}
