"""The arm description and (later) the multibody engine shared by both backends.

Nothing in ``core`` imports a backend (:mod:`amm`, :mod:`fem`).
"""

from core.arm import Arm, Damping, Joint, Link, LumpedMass, Payload

__all__ = ["Arm", "Damping", "Joint", "Link", "LumpedMass", "Payload"]
