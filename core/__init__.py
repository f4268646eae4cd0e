"""The arm description, the multibody engine shared by both backends, and what runs on it
(analyses, controllers, trajectories, simulation).

Nothing in ``core`` imports a backend (:mod:`amm`, :mod:`fem`).
"""

from core.analysis import closed_loop_eigenvalues, zero_dynamics
from core.arm import Arm, Damping, Joint, Link, LumpedMass, Payload
from core.basis import BeamBasis
from core.controllers import CONTROLLERS, PD, ComputedTorque, Decoupling, FeedForward
from core.engine import ChainModel
from core.loads import distal_load
from core.model import SOLVERS, Model
from core.rigid import rigid_equivalent
from core.simulation import AssumptionWarning, SimulationError, energy_drift, simulate
from core.trajectories import TRAJECTORIES, CartesianCircle, Cycloidal, ParabolicBlend
from core.validation import InputError

__all__ = [
    "CONTROLLERS",
    "PD",
    "SOLVERS",
    "TRAJECTORIES",
    "Arm",
    "AssumptionWarning",
    "BeamBasis",
    "CartesianCircle",
    "ChainModel",
    "ComputedTorque",
    "Cycloidal",
    "Damping",
    "Decoupling",
    "FeedForward",
    "InputError",
    "Joint",
    "Link",
    "LumpedMass",
    "Model",
    "ParabolicBlend",
    "Payload",
    "SimulationError",
    "closed_loop_eigenvalues",
    "distal_load",
    "energy_drift",
    "rigid_equivalent",
    "simulate",
    "zero_dynamics",
]
