"""The arm description, the multibody engine shared by both backends, and what runs on it
(analyses, controllers, trajectories, simulation).

Nothing in ``core`` imports a backend (:mod:`amm`, :mod:`fem`).
"""

import importlib

#: Where each public name lives. Imported on first use (PEP 562): ``import core`` and
#: ``from core import Arm`` stay cheap (the CLI validates configs without SciPy's
#: linear algebra or pandas), ``from core import simulate`` loads what it needs.
_EXPORTS = {
    "closed_loop_eigenvalues": "core.analysis",
    "zero_dynamics": "core.analysis",
    "Arm": "core.arm",
    "Damping": "core.arm",
    "Joint": "core.arm",
    "Link": "core.arm",
    "LumpedMass": "core.arm",
    "Payload": "core.arm",
    "BeamBasis": "core.basis",
    "CONTROLLERS": "core.controllers",
    "PD": "core.controllers",
    "ComputedTorque": "core.controllers",
    "Decoupling": "core.controllers",
    "FeedForward": "core.controllers",
    "ChainModel": "core.engine",
    "distal_load": "core.loads",
    "SOLVERS": "core.model",
    "Model": "core.model",
    "rigid_equivalent": "core.rigid",
    "AssumptionWarning": "core.simulation",
    "SimulationError": "core.simulation",
    "energy_drift": "core.simulation",
    "simulate": "core.simulation",
    "TRAJECTORIES": "core.trajectories",
    "CartesianCircle": "core.trajectories",
    "Cycloidal": "core.trajectories",
    "ParabolicBlend": "core.trajectories",
    "InputError": "core.validation",
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
