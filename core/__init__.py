"""The arm description, the multibody engine shared by both backends, and what runs on it
(analyses, controllers, trajectories, simulation).

Nothing in ``core`` imports a backend (:mod:`amm`, :mod:`fem`).
"""

import importlib

#: Where each public name lives. Imported on first use (PEP 562): ``import core`` and
#: ``from core import Arm`` stay cheap (the CLI validates configs without SciPy's
#: linear algebra or pandas), ``from core import simulate`` loads what it needs.
_EXPORTS = {
    "closed_loop_eigenvalues": "core.analysis.linear",
    "zero_dynamics": "core.analysis.linear",
    "Arm": "core.arm",
    "Damping": "core.arm",
    "Joint": "core.arm",
    "Link": "core.arm",
    "LumpedMass": "core.arm",
    "Payload": "core.arm",
    "BeamBasis": "core.dynamics.basis",
    "CONTROLLERS": "core.analysis.controllers",
    "PD": "core.analysis.controllers",
    "ComputedTorque": "core.analysis.controllers",
    "Decoupling": "core.analysis.controllers",
    "FeedForward": "core.analysis.controllers",
    "ChainModel": "core.dynamics.engine",
    "distal_load": "core.arm.loads",
    "SOLVERS": "core.dynamics.model",
    "Model": "core.dynamics.model",
    "rigid_equivalent": "core.arm.rigid",
    "AssumptionWarning": "core.analysis.assumptions",
    "SimulationError": "core.analysis.simulation",
    "energy_drift": "core.analysis.simulation",
    "simulate": "core.analysis.simulation",
    "TRAJECTORIES": "core.analysis.trajectories",
    "CartesianCircle": "core.analysis.trajectories",
    "Cycloidal": "core.analysis.trajectories",
    "ParabolicBlend": "core.analysis.trajectories",
    "InputError": "core.numerics.validation",
    "Equilibrium": "core.analysis.equilibrium",
    "EquilibriumError": "core.analysis.equilibrium",
    "NamedStateSpace": "core.analysis.state_space",
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
    "Equilibrium",
    "EquilibriumError",
    "FeedForward",
    "InputError",
    "Joint",
    "Link",
    "LumpedMass",
    "Model",
    "NamedStateSpace",
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
