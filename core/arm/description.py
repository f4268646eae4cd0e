"""The arm description: joints, links, payloads and the serial chain they form.

An :class:`Arm` is a serial chain from a fixed base: joint 1, link 1, joint 2,
link 2, ..., joint n, link n. Every object here is a frozen dataclass that
validates its values once, in ``__post_init__``, and stores them in one
canonical form (plain floats, tuples), so that two descriptions of the same arm
compare equal, hash equal, and survive ``to_dict`` / ``from_dict`` exactly.

Units are SI: m, kg, s, N, rad.

Numbering
---------
Joints and links are numbered from 1 wherever a user sees them, as in the
papers: in error messages (``link 2: ...``) and in the key paths of dictionary
(config) errors, where ``links[2]`` is the second ``[[links]]`` table. Every
bracketed index in a message counts from 1 (``lumped_masses[1]`` is the first
lumped mass, ``ratios[2]`` the damping ratio of mode 2).

Frames (standard Denavit–Hartenberg)
------------------------------------
Frame 0 is the base frame (gravity is given in it). Frame i - 1 carries the
axis z_{i-1} of joint i, and the homogeneous transform from frame i to frame
i - 1 is ::

    A_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i)

    revolute joint:   θ_i = q_i + theta_offset,  d_i = d
    prismatic joint:  θ_i = theta_offset,        d_i = q_i + d

::

              z_{i-1} (axis of joint i)            z_i (axis of joint i+1,
                ^                                   ^   tilted by α_i about x_i)
                |                                   |
                |      link i (beam, length a_i)    |
           L_i  +===================================o-----> x_i
                |  s = 0                        s = a_i    origin of frame i
            d_i |
                |   θ_i: angle from x_{i-1} to x_i about z_{i-1}
                o-----> x_{i-1}
           origin of frame i-1

The *link frame* of link i is ``L_i = F_{i-1} Rz(θ_i) Tz(d_i)``, the frame
reached before the ``Tx(a_i) Rx(α_i)`` part of A_i. All link data are given in
it: a rigid link's centre of mass and inertia tensor, and the axes of the
inertia tensors of the payloads attached to the link.

* A flexible link on a **revolute** joint starts at the origin of L_i and lies
  along its x-axis; its material coordinate s runs from 0 at the joint to
  ``length`` at the tip, so ``length`` must equal ``a_i``. In-plane bending
  (stiffness ``EI``) deflects the beam along y of L_i, rotating about z (the
  joint axis); out-of-plane bending (``EI_out``) deflects it along z.
* A flexible link on a **prismatic** joint *translates* (docs/MODEL.md, Dynamics): a beam of
  total length ``length`` slides along the joint axis z_{i-1} through a hub
  fixed at the origin of L_i (``d`` along z_{i-1}, so ``a_i`` must be 0). The
  joint variable q_i is the free length l ∈ (0, length] outside the hub;
  only that part bends (clamped at the hub exit), the rest translates
  rigidly inside. s runs from 0 at the hub exit to l at the tip, which
  carries the next joint. In-plane bending (``EI``) deflects it along x of
  L_i, out-of-plane bending (``EI_out``) along y. Lumped masses would slide
  through the hub and are not allowed on such a link (a tip payload is).
* The frame of joint i + 1 is carried by the deformed tip of link i
  (translated by the tip deflection, rotated by the tip slope or by the chord
  angle, see ``Arm.tip_rotation``); that is the dynamics engine's business.


Physical bounds
---------------
Every value is checked against the bounds of :mod:`core.arm.bounds`.

Error messages
--------------
Every invalid value raises :class:`ValueError` naming where it sits, the field
and the value: ``link 2: length must be > 0, got -0.3``. A :class:`Link` or
:class:`Joint` built on its own does not know its index and says ``link: ...``;
an :class:`Arm` knows the indices of everything it checks itself (counts, DH
geometry, planarity), and :meth:`Arm.from_dict`, which builds the links and
joints, reports their field errors with the index (``link 2: ...``). Structural
mistakes in a dictionary (unknown or missing keys, wrong container types) are
reported with the key path: ``links[2].mas: unknown field``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from core.arm import bounds, serialization
from core.arm.attachments import Damping, LumpedMass, Payload
from core.numerics import validation as check
from core.numerics.validation import InputError, Tensor3

_JOINT_KINDS = ("revolute", "prismatic")
_LINK_KINDS = ("rigid", "flexible")
_TIP_ROTATIONS = ("slope", "chord")

# --------------------------------------------------------------------------
# Links and joints


@dataclass(frozen=True)
class Link(serialization.Description):
    """A rigid or flexible link; build with :meth:`rigid` or :meth:`flexible`.

    One dataclass holds the fields of both kinds; the fields of the other kind
    must be None (or empty), and direct construction validates like the two
    constructors. Geometry and frames: see the module docstring.

    Parameters
    ----------
    kind : {"rigid", "flexible"}
    length : float  [m]
        Length of the link, in [1e-6, 1e6]. For a flexible link on a revolute joint it must
        equal the joint's DH parameter a; on a prismatic joint it is the whole
        beam (the joint variable is the length outside the joint).
    mass : float  [kg]
        Rigid only: mass, in [1e-15, 1e15] (a massless link can leave the mass
        matrix singular).
    com : float or 3-vector  [m]
        Rigid only: centre of mass in the link frame, each component at most
        1e6 in magnitude; a number c means (c, 0, 0). Default: mid-length, (length/2, 0, 0). Stored as a 3-tuple.
    inertia : float or 3x3 array_like  [kg m^2]
        Rigid only: inertia about the centre of mass. A scalar s is the inertia
        about the z axis (the joint axis of a planar arm) of a slender body
        along x: :meth:`inertia_tensor` returns diag(0, s, s). A tensor must be
        symmetric positive semi-definite, in the axes of the link frame, and is
        stored as a tuple of rows; every entry at most 1e27. Default: a uniform
        slender rod, m·length²/12.
    mass_per_length : float  [kg/m]
        Flexible only: ρA, in [1e-15, 1e15]; the link's total mass (with its
        lumped masses and tip payload) at most 1e15 kg.
    EI : float  [N m^2]
        Flexible only: in-plane bending stiffness, in [1e-15, 1e15], with
        sqrt(EI / (ρA length⁴)) in [1e-10, 1e10] rad/s.
    EI_out : float or None  [N m^2]
        Flexible only: out-of-plane bending stiffness, bounded like EI; None
        switches out-of-plane bending off (required for planar arms).
    damping : Damping or None
        Flexible only: structural damping; None is undamped.
    lumped_masses : tuple of LumpedMass
        Flexible only: point masses at positions 0 <= s <= length.
    tip_payload : Payload or None
        Flexible only: a payload at the tip of this link.
    """

    kind: Literal["rigid", "flexible"]
    length: float
    mass: float | None = None
    com: tuple[float, float, float] | None = None
    inertia: float | Tensor3 | None = None
    mass_per_length: float | None = None
    EI: float | None = None
    EI_out: float | None = None
    damping: Damping | None = None
    lumped_masses: tuple[LumpedMass, ...] = ()
    tip_payload: Payload | None = None

    def __post_init__(self) -> None:
        kind = check.one_of(self.kind, _LINK_KINDS, "link", "kind")
        length = bounds.length(self.length, "link", "length")
        serialization.normalize(self, length=length)
        if kind == "rigid":
            self._check_rigid(length)
        else:
            self._check_flexible(length)

    def _check_fields_absent(self, names: tuple[str, ...]) -> None:
        for name in names:
            value = getattr(self, name)
            if not serialization.is_unset(value):
                raise InputError("link", f"{name} does not apply to a {self.kind} link, got {value!r}")

    def _check_rigid(self, length: float) -> None:
        self._check_fields_absent(
            ("mass_per_length", "EI", "EI_out", "damping", "lumped_masses", "tip_payload")
        )
        if self.mass is None:
            raise InputError("link", "mass is required for a rigid link")
        mass = check.in_range(self.mass, "link", "mass", *bounds.MASS_RANGE, "kg", bounds.SCALE_WHY)
        if self.com is None:
            com = (length / 2.0, 0.0, 0.0)
        elif check.is_real(self.com):
            com = (bounds.offset(self.com, "link", "com"), 0.0, 0.0)
        else:
            com = check.vector3(self.com, "link", "com")
            for axis, value in zip("xyz", com, strict=True):
                bounds.offset(value, "link", f"com.{axis}")
        if self.inertia is None:
            inertia: float | Tensor3 = mass * length**2 / 12.0
        else:
            inertia = bounds.inertia(self.inertia, "link", "inertia")
        serialization.normalize(self, mass=mass, com=com, inertia=inertia)

    def _check_flexible(self, length: float) -> None:
        self._check_fields_absent(("mass", "com", "inertia"))
        for name in ("mass_per_length", "EI"):
            if getattr(self, name) is None:
                raise InputError("link", f"{name} is required for a flexible link")
        lumped = check.sequence_items(self.lumped_masses)
        if lumped is None:
            raise InputError(
                "link", f"lumped_masses must be a sequence of LumpedMass, got {self.lumped_masses!r}"
            )
        for k, lumped_mass in enumerate(lumped, start=1):
            name = f"lumped_masses[{k}]"
            if not isinstance(lumped_mass, LumpedMass):
                raise InputError("link", f"{name} must be a LumpedMass, got {lumped_mass!r}")
            if lumped_mass.position > length:
                raise InputError(
                    "link", f"{name}.position must be in [0, {length!r}], got {lumped_mass.position!r}"
                )
        mass_per_length = bounds.scale(self.mass_per_length, "link", "mass_per_length", "kg/m")
        stiffness = {"EI": bounds.scale(self.EI, "link", "EI", "N m^2")}
        if self.EI_out is not None:
            stiffness["EI_out"] = bounds.scale(self.EI_out, "link", "EI_out", "N m^2")
        for name, EI in stiffness.items():
            frequency = math.sqrt(EI / mass_per_length) / length**2
            if not bounds.FREQUENCY_RANGE[0] <= frequency <= bounds.FREQUENCY_RANGE[1]:
                low, high = bounds.FREQUENCY_RANGE
                raise InputError(
                    "link",
                    f"sqrt({name}/(mass_per_length·length^4)) must be in [{low:g}, {high:g}] rad/s "
                    f"({bounds.FREQUENCY_WHY}), got {frequency:.3g} ({name} = {EI!r}, mass_per_length = "
                    f"{mass_per_length!r}, length = {length!r})",
                )
        serialization.normalize(
            self,
            mass_per_length=mass_per_length,
            EI=stiffness["EI"],
            EI_out=stiffness.get("EI_out"),
            damping=check.instance_or_none(self.damping, Damping, "link", "damping"),
            lumped_masses=lumped,
            tip_payload=check.instance_or_none(self.tip_payload, Payload, "link", "tip_payload"),
        )
        self._check_rigid_counterpart()

    def _check_rigid_counterpart(self) -> None:
        """The beam with its lumped masses and tip payload as one rigid body (core.arm.rigid) stays
        within the bounds of a rigid link: total mass and inertia."""
        if self.total_mass > bounds.MASS_RANGE[1]:
            raise InputError(
                "link",
                f"the total mass (beam, lumped masses, tip payload) must be <= {bounds.MASS_RANGE[1]:g} kg "
                f"({bounds.SCALE_WHY}), got {self.total_mass!r}",
            )
        inertias = [lumped.inertia for lumped in self.lumped_masses]
        if self.tip_payload is not None:
            inertias.append(bounds.largest(self.tip_payload.inertia))
        inertia = sum(inertias) + self.total_mass * self.length**2
        if inertia > bounds.INERTIA_MAX:
            raise InputError(
                "link",
                f"the inertia of the link as one rigid body (its inertias and total mass · length^2) "
                f"must be <= {bounds.INERTIA_MAX:g} kg m^2 ({bounds.SCALE_WHY}), got {inertia!r}",
            )

    @classmethod
    def rigid(
        cls,
        length: float,
        mass: float,
        com: float | Sequence[float] | None = None,
        inertia: float | Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> Link:
        """A rigid link; see the class docstring for ``com`` and ``inertia`` and their defaults."""
        return cls("rigid", length, mass=mass, com=com, inertia=inertia)  # type: ignore[arg-type]

    @classmethod
    def flexible(
        cls,
        length: float,
        mass_per_length: float,
        EI: float,
        EI_out: float | None = None,
        damping: Damping | None = None,
        lumped_masses: Sequence[LumpedMass] = (),
        tip_payload: Payload | None = None,
    ) -> Link:
        """A uniform Euler–Bernoulli beam; see the class docstring for the parameters."""
        return cls(
            "flexible",
            length,
            mass_per_length=mass_per_length,
            EI=EI,
            EI_out=EI_out,
            damping=damping,
            lumped_masses=lumped_masses,  # type: ignore[arg-type]  # normalized to a tuple
            tip_payload=tip_payload,
        )

    @property
    def is_flexible(self) -> bool:
        """True for a flexible link."""
        return self.kind == "flexible"

    @property
    def beam_mass(self) -> float:
        """Mass of the link body alone [kg]: ``mass`` (rigid) or ρA·length (flexible)."""
        if self.kind == "rigid":
            return self.mass  # type: ignore[return-value]
        return self.mass_per_length * self.length  # type: ignore[operator]

    @property
    def total_mass(self) -> float:
        """Body plus lumped masses plus tip payload [kg]."""
        attached = sum(lumped.mass for lumped in self.lumped_masses)
        if self.tip_payload is not None:
            attached += self.tip_payload.mass
        return self.beam_mass + attached

    def inertia_tensor(self) -> np.ndarray:
        """Inertia tensor of a rigid link about its centre of mass, link-frame axes, shape (3, 3)  [kg m^2].

        A scalar inertia s gives diag(0, s, s), a slender body along x.

        Raises
        ------
        ValueError
            For a flexible link, whose inertia depends on its deformation.
        """
        if self.kind != "rigid":
            raise ValueError("link: inertia_tensor() applies to rigid links only")
        if isinstance(self.inertia, float):
            return np.diag([0.0, self.inertia, self.inertia])
        return np.array(self.inertia)

    @property
    def planar_inertia(self) -> float:
        """Inertia of a rigid link about the z axis through its centre of mass [kg m^2] (what a planar arm uses)."""
        return float(self.inertia_tensor()[2, 2])

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any], path: str) -> Link:
        values = dict(serialization.check_keys(data, path, cls))
        for key, table in (("damping", Damping), ("tip_payload", Payload)):
            if key in values:
                with check.located("link", key):
                    values[key] = table._from_dict(values[key], serialization.key_path(path, key))
        if "lumped_masses" in values:
            list_path = serialization.key_path(path, "lumped_masses")
            lumped = []
            for k, item in enumerate(
                serialization.list_of_tables(values["lumped_masses"], list_path), start=1
            ):
                with check.located("link", f"lumped_masses[{k}]"):
                    lumped.append(LumpedMass._from_dict(item, f"{list_path}[{k}]"))
            values["lumped_masses"] = tuple(lumped)
        return cls(**values)


@dataclass(frozen=True)
class Joint(serialization.Description):
    """A revolute or prismatic joint, placed by standard Denavit–Hartenberg parameters.

    The transform of joint i is A_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i), with
    θ_i = q_i + theta_offset for a revolute joint and d_i = q_i + d for a
    prismatic one (sketch in the module docstring).

    Parameters
    ----------
    kind : {"revolute", "prismatic"}
    a : float  [m]
        Link length along x_i, at most 1e6 in magnitude.
    alpha : float  [rad]
        Twist about x_i, at most 1e6 in magnitude.
    d : float  [m]
        Offset along z_{i-1} (added to q_i for a prismatic joint), at most 1e6
        in magnitude.
    theta_offset : float  [rad]
        Angle about z_{i-1} (added to q_i for a revolute joint), at most 1e6 in
        magnitude.
    hub_mass : float  [kg]
        Mass of the hub, on the joint axis at the origin of the link frame;
        >= 0 and at most 1e15.
    hub_inertia : float  [kg m^2]
        Inertia of the hub about the joint axis, >= 0 and at most 1e27.
    motor_inertia : float  [kg m^2]
        Rotor inertia on the motor side of the gear, >= 0 and at most 1e27.
    gear_ratio : float  [-]
        Motor speed / joint speed, in [1e-6, 1e6].
    viscous_friction : float  [N m s/rad or N s/m]
        Viscous friction coefficient at the joint, >= 0 and at most 1e15.
    coulomb_friction : float  [N m or N]
        Coulomb friction torque (force) at the joint, >= 0 and at most 1e15.
    """

    kind: Literal["revolute", "prismatic"] = "revolute"
    a: float = 0.0
    alpha: float = 0.0
    d: float = 0.0
    theta_offset: float = 0.0
    hub_mass: float = 0.0
    hub_inertia: float = 0.0
    motor_inertia: float = 0.0
    gear_ratio: float = 1.0
    viscous_friction: float = 0.0
    coulomb_friction: float = 0.0

    def __post_init__(self) -> None:
        where = "joint"
        check.one_of(self.kind, _JOINT_KINDS, where, "kind")
        values = {name: bounds.offset(getattr(self, name), where, name) for name in ("a", "d")}
        for name in ("alpha", "theta_offset"):
            values[name] = check.bounded(
                getattr(self, name),
                where,
                name,
                bounds.ANGLE_MAX,
                "rad",
                "the last bit of a larger angle exceeds 1e-10 rad",
            )
        values["hub_mass"] = bounds.mass(self.hub_mass, where, "hub_mass")
        for name in ("hub_inertia", "motor_inertia"):
            values[name] = bounds.inertia_value(getattr(self, name), where, name)
        for name in ("viscous_friction", "coulomb_friction"):
            number = check.nonnegative(getattr(self, name), where, name)
            values[name] = check.at_most(number, where, name, bounds.MASS_RANGE[1], "", bounds.SCALE_WHY)
        values["gear_ratio"] = check.in_range(
            self.gear_ratio,
            where,
            "gear_ratio",
            *bounds.GEAR_RATIO_RANGE,
            "",
            "reflected inertias grow with its square",
        )
        serialization.normalize(self, **values)

    @property
    def reflected_inertia(self) -> float:
        """Motor inertia seen at the joint, motor_inertia · gear_ratio² [kg m^2]."""
        return self.motor_inertia * self.gear_ratio**2


# --------------------------------------------------------------------------
# The arm


@dataclass(frozen=True)
class Arm(serialization.Description):
    """A serial chain of joints and links from a fixed base.

    Build with :meth:`planar` (planar arms) or :meth:`from_dh` (spatial arms),
    or directly. Frames and the DH convention: see the module docstring.

    Parameters
    ----------
    joints : sequence of Joint
        Joints 1..n; stored as a tuple.
    links : sequence of Link
        Links 1..n, link i following joint i; stored as a tuple.
    payload : Payload or None
        Payload at the tip of the last link (tensor axes: the last link's
        frame). Give it here or as the last link's ``tip_payload``, not both.
    gravity : 3-vector  [m/s^2]
        Gravitational acceleration in the base frame; zero for space arms. Each
        component at most 1e6 in magnitude.
    is_planar : bool
        A planar arm: all joints revolute with α = 0 (parallel axes z), in-plane
        bending only (``EI_out`` None), gravity in the x–y plane. Set by
        :meth:`planar`.
    tip_rotation : {"slope", "chord"}
        How a flexible link's tip rotates the next joint frame: by the tip slope
        w'(L) (the usual choice), or by the chord angle w(L)/L (the "equivalent
        joint angle").

    Raises
    ------
    ValueError
        For an empty arm, a count mismatch, a flexible link whose length does
        not fit its joint's a, a non-planar feature of a planar arm, a bad
        gravity vector or tip_rotation, or a payload given twice.
    """

    joints: tuple[Joint, ...]
    links: tuple[Link, ...]
    payload: Payload | None = None
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    is_planar: bool = False
    tip_rotation: Literal["slope", "chord"] = "slope"

    def __post_init__(self) -> None:
        joints = _typed_items(self.joints, Joint, "joint")
        links = _typed_items(self.links, Link, "link")
        _check_counts(joints, links)
        payload = check.instance_or_none(self.payload, Payload, "arm", "payload")
        gravity = check.vector3(self.gravity, "arm", "gravity")
        if max(abs(g) for g in gravity) > bounds.GRAVITY_MAX:
            raise InputError(
                "arm",
                f"gravity must have components in [{-bounds.GRAVITY_MAX:g}, {bounds.GRAVITY_MAX:g}] m/s^2 "
                f"(a hundred thousand g), got {gravity!r}",
            )
        if not isinstance(self.is_planar, (bool, np.bool_)):
            raise InputError("arm", f"is_planar must be True or False, got {self.is_planar!r}")
        tip_rotation = check.one_of(self.tip_rotation, _TIP_ROTATIONS, "arm", "tip_rotation")
        serialization.normalize(
            self,
            joints=joints,
            links=links,
            gravity=gravity,
            is_planar=bool(self.is_planar),
            tip_rotation=tip_rotation,
        )
        self._check_geometry()
        if self.is_planar:
            self._check_planar()
        if payload is not None and links[-1].tip_payload is not None:
            raise InputError(
                "arm",
                f"payload and the tip_payload of link {len(links)} both load the tip of the last link; give one",
            )

    def _check_geometry(self) -> None:
        for i, (joint, link) in enumerate(zip(self.joints, self.links, strict=True), start=1):
            if not link.is_flexible:
                continue
            if joint.kind == "revolute" and not math.isclose(
                joint.a, link.length, rel_tol=bounds.LENGTH_RTOL
            ):
                raise InputError(
                    f"joint {i}",
                    f"a must equal the length of flexible link {i} ({link.length!r} m), got {joint.a!r}",
                )
            if joint.kind == "prismatic" and joint.a != 0.0:
                raise InputError(
                    f"joint {i}",
                    f"a must be 0 for a prismatic joint carrying flexible link {i} "
                    f"(the beam runs along the joint axis), got {joint.a!r}",
                )
            if joint.kind == "prismatic" and link.lumped_masses:
                raise InputError(
                    f"link {i}",
                    "lumped masses are not allowed on a translating link (they would slide through "
                    f"the hub of joint {i}); got {len(link.lumped_masses)}",
                )

    def _check_planar(self) -> None:
        for i, joint in enumerate(self.joints, start=1):
            if joint.kind != "revolute":
                raise InputError(f"joint {i}", f"kind must be 'revolute' in a planar arm, got {joint.kind!r}")
            if joint.alpha != 0.0:
                raise InputError(
                    f"joint {i}",
                    f"alpha must be 0 in a planar arm (parallel joint axes), got {joint.alpha!r}",
                )
        for i, link in enumerate(self.links, start=1):
            if link.EI_out is not None:
                raise InputError(
                    f"link {i}",
                    f"EI_out must be None in a planar arm (out-of-plane bending is off), got {link.EI_out!r}",
                )
        if self.gravity[2] != 0.0:
            raise InputError(
                "arm",
                f"gravity must lie in the x-y plane of a planar arm (z component 0), got {self.gravity!r}",
            )

    @classmethod
    def planar(
        cls,
        links: Sequence[Link],
        payload: Payload | None = None,
        gravity: Sequence[float] = (0.0, 0.0, 0.0),
        joints: Sequence[Joint] | None = None,
        tip_rotation: Literal["slope", "chord"] = "slope",
    ) -> Arm:
        """A planar arm: revolute joints about parallel z axes, in-plane bending only.

        Parameters
        ----------
        links : sequence of Link
            Links 1..n; flexible ones without ``EI_out``.
        payload : Payload or None
            Payload at the tip of the last link.
        gravity : 2- or 3-vector  [m/s^2]
            Gravity in the plane of motion, (gx, gy) or (gx, gy, 0).
        joints : sequence of Joint or None
            None gives plain revolute joints. Given joints set hub, motor and
            friction data (and may set d and theta_offset); their ``a`` must be left
            0 or equal the link length, and is set to the link length.
        tip_rotation : {"slope", "chord"}

        Returns
        -------
        Arm
            With a_i = length of link i, α_i = 0 and ``is_planar=True``.
        """
        link_items = _typed_items(links, Link, "link")
        if joints is None:
            joint_items: tuple[Joint, ...] = tuple(Joint() for _ in link_items)
        else:
            joint_items = _typed_items(joints, Joint, "joint")
        _check_counts(joint_items, link_items)
        placed = []
        for i, (joint, link) in enumerate(zip(joint_items, link_items, strict=True), start=1):
            if joint.a != 0.0 and not math.isclose(joint.a, link.length, rel_tol=bounds.LENGTH_RTOL):
                raise InputError(
                    f"joint {i}",
                    f"a must be 0 (it is set from the link) or equal the length of link {i} "
                    f"({link.length!r} m), got {joint.a!r}",
                )
            placed.append(dataclasses.replace(joint, a=link.length))
        gravity_items = check.sequence_items(gravity)
        if gravity_items is not None and len(gravity_items) == 2:
            gravity = (*gravity_items, 0.0)
        return cls(tuple(placed), link_items, payload, gravity, True, tip_rotation)  # type: ignore[arg-type]

    @classmethod
    def from_dh(
        cls,
        joints: Sequence[Joint],
        links: Sequence[Link],
        payload: Payload | None = None,
        gravity: Sequence[float] = (0.0, 0.0, 0.0),
        tip_rotation: Literal["slope", "chord"] = "slope",
    ) -> Arm:
        """A spatial arm from joints with their DH parameters and the links that follow them."""
        return cls(tuple(joints), tuple(links), payload, gravity, False, tip_rotation)  # type: ignore[arg-type]

    @property
    def n_joints(self) -> int:
        """Number of joints n."""
        return len(self.joints)

    @property
    def n_links(self) -> int:
        """Number of links n (equal to the number of joints)."""
        return len(self.links)

    @property
    def flexible_links(self) -> tuple[int, ...]:
        """Indices (from 1) of the flexible links."""
        return tuple(i for i, link in enumerate(self.links, start=1) if link.is_flexible)

    def per_flexible_link(self, name: str, value: Any, default: Any) -> dict[int, Any]:
        """A backend option for every flexible link: ``value`` itself for all, or, given a
        mapping link number (from 1) → value, its entries and ``default`` for the links it does
        not name (a mapping that names a link that is not flexible is refused, as ``name``)."""
        if not isinstance(value, Mapping):
            return {k: value for k in self.flexible_links}
        unknown = sorted(set(value) - set(self.flexible_links))
        if unknown:
            raise ValueError(
                f"{name}: links {unknown} are not flexible links (flexible: {list(self.flexible_links)})"
            )
        return {k: value.get(k, default) for k in self.flexible_links}

    @property
    def translating_links(self) -> tuple[int, ...]:
        """Indices (from 1) of the flexible links on prismatic joints (free length = joint variable)."""
        return tuple(
            i
            for i, (joint, link) in enumerate(zip(self.joints, self.links, strict=True), start=1)
            if link.is_flexible and joint.kind == "prismatic"
        )

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the joint variables, as every model names its first coordinates:
        ``theta<i>`` (revolute) or ``d<i>`` (prismatic), i from 1."""
        return tuple(
            f"theta{i}" if j.kind == "revolute" else f"d{i}" for i, j in enumerate(self.joints, start=1)
        )

    def home(self) -> np.ndarray:
        """The default joint configuration: all joint variables zero, except the
        free length of each translating link, which is fully extended (l = L)."""
        q = np.zeros(self.n_joints)
        for number in self.translating_links:
            q[number - 1] = self.links[number - 1].length
        return q

    @property
    def total_mass(self) -> float:
        """Links (with their lumped masses and tip payloads), hubs and payload [kg]."""
        mass = sum(link.total_mass for link in self.links) + sum(joint.hub_mass for joint in self.joints)
        if self.payload is not None:
            mass += self.payload.mass
        return mass

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any], path: str) -> Arm:
        values = dict(serialization.check_keys(data, path, cls))
        for key, item_cls, subject in (("joints", Joint, "joint"), ("links", Link, "link")):
            list_path = serialization.key_path(path, key)
            built = []
            for i, item in enumerate(serialization.list_of_tables(values[key], list_path), start=1):
                with check.located(f"{subject} {i}"):
                    built.append(item_cls._from_dict(item, f"{list_path}[{i}]"))
            values[key] = tuple(built)
        if "payload" in values:
            values["payload"] = Payload._from_dict(values["payload"], serialization.key_path(path, "payload"))
        return cls(**values)


def _typed_items(value: object, cls: type, subject: str) -> tuple[Any, ...]:
    items = check.sequence_items(value)
    if items is None:
        raise InputError("arm", f"{subject}s must be a sequence of {cls.__name__}, got {value!r}")
    for i, item in enumerate(items, start=1):
        if not isinstance(item, cls):
            raise InputError(f"{subject} {i}", f"expected a {cls.__name__}, got {item!r}")
    return items


def _check_counts(joints: tuple[Joint, ...], links: tuple[Link, ...]) -> None:
    if not joints and not links:
        raise InputError("arm", "an arm needs at least one joint and one link, got none")
    if len(joints) != len(links):
        raise InputError(
            "arm", f"got {len(joints)} joints and {len(links)} links; each joint must be followed by one link"
        )
