"""The arm description: a validated, frozen serial chain of joints, links and what they carry.

:mod:`~core.arm.description` (``Arm``, ``Joint``, ``Link``), :mod:`~core.arm.attachments`
(``LumpedMass``, ``Payload``, ``Damping``), their physical :mod:`~core.arm.bounds` and
dictionary :mod:`~core.arm.serialization`; :mod:`~core.arm.presets` (the reference arms),
:mod:`~core.arm.loads` (what a link carries at its tip) and :mod:`~core.arm.rigid` (the
rigid-body equivalent) are derived from a description.
"""

from core.arm.attachments import Damping, LumpedMass, Payload
from core.arm.description import Arm, Joint, Link

__all__ = ["Arm", "Damping", "Joint", "Link", "LumpedMass", "Payload"]
