"""The arm description and (later) the multibody engine shared by both backends.

Nothing in ``core`` imports a backend (:mod:`amm`, :mod:`fem`).
"""

from core.arm import Arm, Damping, Joint, Link, LumpedMass, Payload
from core.basis import BeamBasis
from core.engine import ChainModel
from core.loads import distal_load
from core.model import SOLVERS, Model

__all__ = [
    "SOLVERS",
    "Arm",
    "BeamBasis",
    "ChainModel",
    "Damping",
    "Joint",
    "Link",
    "LumpedMass",
    "Model",
    "Payload",
    "distal_load",
]
