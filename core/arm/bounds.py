"""Physical bounds of an arm description: the ranges its values must lie in, and their checks.

Values that leave no meaningful digits in double precision are refused, each
message saying the bound and why (SI units): link lengths in
[:data:`LENGTH_RANGE`] (the joint rows m·L² and the deflection rows m of one
mass matrix stay within 1e12 of each other) and DH offsets and centres of mass
of at most that magnitude; masses (a rigid link's in :data:`MASS_RANGE`, the
others >= 0), mass per length and bending stiffness at most
:data:`MASS_RANGE`'s top and inertias at most :data:`INERTIA_MAX`, so the
products the dynamics forms stay far inside the float range; a flexible link's
characteristic frequency sqrt(EI/(ρA L⁴)) in :data:`FREQUENCY_RANGE` (its first
bending frequency is 3.52 times it; beyond, the link is rigid or slack to
double precision), Rayleigh damping within those frequencies and modal damping
ratios at most :data:`DAMPING_RATIO_MAX`; gear ratios in
:data:`GEAR_RATIO_RANGE`, DH angles of at most :data:`ANGLE_MAX` rad and
gravity components of at most :data:`GRAVITY_MAX` m/s^2.

Each check returns the value as a float (or an inertia tensor) or raises
:class:`~core.numerics.validation.InputError` naming the subject, the field, the bound and why.
"""

from __future__ import annotations

from core.numerics import validation as check
from core.numerics.validation import InputError, Tensor3

# a_i and the flexible link length are usually computed the same way (e.g. a
# unit conversion); allow rounding-level differences between them.
LENGTH_RTOL = 1e-12

#: Link lengths [m]: a micrometre to a thousand kilometres; DH offsets a, d and centres of
#: mass are at most the top in magnitude.
LENGTH_RANGE = (1e-6, 1e6)
LENGTH_WHY = "m·L² and m share one mass matrix: within 1e12 of each other"
#: A rigid link's mass [kg]; every other mass is >= 0 and at most the top, mass per length
#: [kg/m] and EI [N m^2] are in the same range.
MASS_RANGE = (1e-15, 1e15)
#: Inertias [kg m^2]: the top mass at the top length.
INERTIA_MAX = MASS_RANGE[1] * LENGTH_RANGE[1] ** 2
SCALE_WHY = "the products the dynamics forms stay far inside double precision's range"
#: sqrt(EI / (ρA L⁴)) of a flexible link [rad/s] (EI_out too).
FREQUENCY_RANGE = (1e-10, 1e10)
FREQUENCY_WHY = "beyond, the link is rigid or slack to double precision"
#: Gear ratios [-].
GEAR_RATIO_RANGE = (1e-6, 1e6)
#: DH angles alpha and theta_offset [rad]: the last bit of a larger angle exceeds 1e-10 rad.
ANGLE_MAX = 1e6
#: Each component of gravity [m/s^2]: a hundred thousand g.
GRAVITY_MAX = 1e6
#: Modal damping ratios [-]: a thousand times critical damping.
DAMPING_RATIO_MAX = 1e3


def length(value: object, subject: str, name: str) -> float:
    return check.in_range(value, subject, name, *LENGTH_RANGE, "m", LENGTH_WHY)


def offset(value: object, subject: str, name: str) -> float:
    return check.bounded(value, subject, name, LENGTH_RANGE[1], "m", LENGTH_WHY)


def mass(value: object, subject: str, name: str) -> float:
    """A mass >= 0 [kg], at most the top of :data:`MASS_RANGE`."""
    number = check.nonnegative(value, subject, name)
    return check.at_most(number, subject, name, MASS_RANGE[1], "kg", SCALE_WHY)


def scale(value: object, subject: str, name: str, unit: str) -> float:
    """A mass per length or a bending stiffness: > 0, in :data:`MASS_RANGE`."""
    return check.in_range(value, subject, name, *MASS_RANGE, unit, SCALE_WHY)


def largest(inertia: float | Tensor3) -> float:
    return inertia if isinstance(inertia, float) else max(abs(x) for row in inertia for x in row)


def inertia(value: object, subject: str, name: str) -> float | Tensor3:
    """An inertia (scalar >= 0 or tensor, :func:`core.numerics.validation.inertia`), every entry at
    most :data:`INERTIA_MAX` [kg m^2]."""
    inertia = check.inertia(value, subject, name)
    if largest(inertia) > INERTIA_MAX:
        raise InputError(
            subject,
            f"{name} must be <= {INERTIA_MAX:g} kg m^2 ({SCALE_WHY}), got {_plain_inertia(inertia)!r}",
        )
    return inertia


def inertia_value(value: object, subject: str, name: str) -> float:
    """A scalar inertia >= 0, at most :data:`INERTIA_MAX` [kg m^2]."""
    number = check.nonnegative(value, subject, name)
    return check.at_most(number, subject, name, INERTIA_MAX, "kg m^2", SCALE_WHY)


def _plain_inertia(inertia: float | Tensor3) -> object:
    return inertia if isinstance(inertia, float) else [list(row) for row in inertia]
