"""One registry per kind of variant: a toy variant registered in one place runs end to end.

Each test registers a toy shape family, backend, controller, trajectory or study kind
(only where a new variant of that kind would be added), validates a config naming it
and runs the study through :func:`studies.runner.run_study` (serial executor: the
registrations live in this process), then unregisters it. After unregistering, the
config is rejected again, naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel, ConfigDict

import shapes
from amm import AssumedModesModel
from core.controllers import CONTROLLERS
from core.trajectories import TRAJECTORIES
from studies.config import expand_cases, parse_config
from studies.errors import ConfigError
from studies.kinds import KINDS
from studies.kinds.base import StudyKind
from studies.models import BACKENDS, Backend, Discretization, register_backend
from studies.runner import run_study


def config(kind: str, sweep: dict[str, Any], analysis: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "study": {"name": "toy", "kind": kind},
        "arm": {"preset": "one-flexible-link"},
        "sweep": sweep,
        "analysis": analysis or {},
        "report": {"formats": ["csv", "markdown"], "plots": False},
    }


def run(data: dict[str, Any], folder) -> pd.DataFrame:
    result = run_study(parse_config(data), output=folder)
    assert result.ok, result.failed
    return pd.read_csv(folder / "results.csv")


# -- shape family: one class (it registers itself and carries its frame) --------------------


@pytest.fixture
def toy_family():
    class ToyPinned(shapes.PinnedPinned):
        name = "toy-pinned"  # defining the class registers it; frame "pinned" is inherited data

    yield ToyPinned
    del shapes.FAMILIES["toy-pinned"]


def test_a_toy_shape_family_runs_on_both_backends(toy_family, tmp_path):
    sweep = {"backends": ["amm", "fem"], "shapes": ["toy-pinned"], "modes": [2], "elements": [3]}
    toy = run(config("frequencies", sweep, {"n_frequencies": 2}), tmp_path / "toy")
    # FEM reproduces the family with the frame the family declares.
    assert list(toy.drop_duplicates("case")["shape"]) == ["toy-pinned", "pinned"]
    sweep["shapes"] = ["pinned-pinned"]
    real = run(config("frequencies", sweep, {"n_frequencies": 2}), tmp_path / "real")
    # Same shapes, same model: the frequencies agree to the last bit.
    np.testing.assert_array_equal(toy["omega"].to_numpy(), real["omega"].to_numpy())


def test_an_unregistered_shape_family_is_rejected(tmp_path):
    with pytest.raises(ConfigError, match=r"sweep\.shapes\[1\]: must be one of .*got 'toy-pinned'"):
        parse_config(config("frequencies", {"shapes": ["toy-pinned"]}))


# -- backend: one register_backend call ---------------------------------------------------


@pytest.fixture
def toy_backend():
    def build(arm, discretization, reference):
        return AssumedModesModel(
            arm, shape=discretization.shape, modes=discretization.size, reference=reference
        )

    yield register_backend(Backend("toy-amm", "TOY", "modes", build))
    del BACKENDS["toy-amm"]


def test_a_toy_backend_runs_and_labels_its_cases(toy_backend, tmp_path):
    data = config(
        "frequencies",
        {"backends": ["amm", "toy-amm"], "modes": [1, 3], "elements": [5]},
        {"n_frequencies": 2},
    )
    cases = expand_cases(parse_config(data))
    assert [c.discretization for c in cases] == [
        Discretization("amm", "clamped-free", 1),
        Discretization("amm", "clamped-free", 3),
        Discretization("toy-amm", "clamped-free", 1),
        Discretization("toy-amm", "clamped-free", 3),
    ]
    assert cases[3].discretization.label == "TOY clamped-free x3"
    assert cases[3].columns() == {
        "case": 4,
        "backend": "toy-amm",
        "shape": "clamped-free",
        "modes": 3,
        "elements": 0,
    }
    results = run(data, tmp_path / "run")
    amm, toy = (results[results["backend"] == b].sort_values(["modes", "mode"]) for b in ("amm", "toy-amm"))
    np.testing.assert_array_equal(amm["omega"].to_numpy(), toy["omega"].to_numpy())
    assert list(toy["n_dof"].drop_duplicates()) == [2, 4]  # one joint + modes


def test_an_unregistered_backend_is_rejected():
    with pytest.raises(ConfigError, match=r"sweep\.backends\[1\]: must be one of \['amm', 'fem'\]"):
        parse_config(config("frequencies", {"backends": ["toy-amm"]}))
    with pytest.raises(ValueError, match="backend: must be one of"):
        Discretization("toy-amm", "clamped-free", 2)


# -- controller and trajectory: one class and one registry entry each -----------------------


@dataclass(frozen=True)
class ConstantTorque:
    """τ = kp on every joint [N m]."""

    torque: float

    def __call__(self, t, q, qd, model, reference) -> np.ndarray:
        return np.full(model.n_joints, self.torque)

    @classmethod
    def from_gains(cls, arm, kp=0.0, kd=0.0) -> ConstantTorque:
        return cls(float(kp))


@dataclass(frozen=True)
class Hold:
    """q_d(t) = q0 + offset, at rest."""

    q: tuple[float, ...]

    def evaluate(self, t: float):
        q = np.array(self.q)
        return q, 0 * q, 0 * q

    @classmethod
    def from_config(cls, arm, q0, *, offset: float) -> Hold:
        return cls(tuple(np.asarray(q0) + offset))


@pytest.fixture
def toy_controller():
    CONTROLLERS["constant"] = ConstantTorque
    yield
    del CONTROLLERS["constant"]


@pytest.fixture
def toy_trajectory():
    TRAJECTORIES["hold"] = Hold
    yield
    del TRAJECTORIES["hold"]


SIMULATION_SWEEP = {"backends": ["amm", "fem"], "modes": [2], "elements": [2]}


def test_a_toy_controller_drives_the_simulation(toy_controller, tmp_path):
    analysis = {"t_end": 0.05, "output_points": 6, "controller": {"kind": "constant", "kp": 0.1}}
    results = run(config("simulation", SIMULATION_SWEEP, analysis), tmp_path / "run")
    assert len(results) == 2 * 6
    np.testing.assert_array_equal(results["tau1"].to_numpy(), 0.1)
    # The torque acts on the hub (clamped frames: B = [1, 0, …]ᵀ), so its power is τ θ̇.
    np.testing.assert_allclose(results["input_power"], 0.1 * results["theta1_dot"], rtol=1e-12, atol=0)
    assert results["theta1_dot"].abs().max() > 0


def test_a_toy_trajectory_is_validated_and_followed(toy_trajectory, tmp_path):
    analysis = {
        "t_end": 0.05,
        "output_points": 6,
        "q0": [0.0],  # start away from the reference (without q0 the trajectory's start is used)
        "controller": {"kind": "pd", "kp": 1.0, "kd": 0.1},
        "trajectory": {"kind": "hold", "offset": 0.2},
    }
    with pytest.raises(ConfigError, match=r"analysis\.trajectory: offset: .*got 'far'"):
        parse_config(
            config(
                "simulation", SIMULATION_SWEEP, analysis | {"trajectory": {"kind": "hold", "offset": "far"}}
            )
        )
    results = run(config("simulation", SIMULATION_SWEEP, analysis), tmp_path / "run")
    np.testing.assert_array_equal(results["theta1_ref"].to_numpy(), 0.2)  # q0 + offset
    # PD toward the held reference: τ = kp (0.2 − θ) + kd (0 − θ̇) at the start (θ = θ̇ = 0).
    assert results.groupby("case")["tau1"].first().tolist() == [0.2, 0.2]


def test_unregistered_controllers_and_trajectories_are_rejected():
    analysis = {"t_end": 0.05, "controller": {"kind": "constant"}}
    with pytest.raises(ConfigError, match=r"analysis\.controller\.kind: must be one of"):
        parse_config(config("simulation", SIMULATION_SWEEP, analysis))
    analysis = {"t_end": 0.05, "trajectory": {"kind": "hold", "offset": 0.2}}
    with pytest.raises(ConfigError, match=r"analysis\.trajectory: kind: must be one of"):
        parse_config(config("simulation", SIMULATION_SWEEP, analysis))


# -- study kind: one subclass (it registers itself) -----------------------------------------


@pytest.fixture
def toy_kind():
    class DofAnalysis(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        scale: int = 1

    class Dofs(StudyKind):
        name: ClassVar[str] = "toy-dofs"
        analysis_schema = DofAnalysis

        def run_case(self, arm, case, analysis):
            model = case.discretization.build(arm)
            return [{**case.columns(), "n_dof": model.n_dof, "scaled": analysis.scale * model.n_dof}]

        def report(self, results, analysis, folder, plots, arm):
            return [f"{len(results)} cases"]

    yield KINDS["toy-dofs"]
    del KINDS["toy-dofs"]


def test_a_toy_study_kind_runs_through_the_runner(toy_kind, tmp_path):
    data = config("toy-dofs", {"backends": ["amm", "fem"], "modes": [1, 3], "elements": [2]}, {"scale": 10})
    results = run(data, tmp_path / "run")
    # One flexible link: 1 joint + modes (AMM); 1 joint + 2 per clamped element (FEM).
    assert results["n_dof"].tolist() == [2, 4, 5]
    assert results["scaled"].tolist() == [20, 40, 50]
    assert "3 cases" in (tmp_path / "run" / "summary.md").read_text()
    with pytest.raises(ConfigError, match=r"analysis\.scale: "):
        parse_config(data | {"analysis": {"scale": "many"}})


def test_an_unregistered_study_kind_is_rejected():
    with pytest.raises(ConfigError, match=r"study\.kind: must be one of .*got 'toy-dofs'"):
        parse_config(config("toy-dofs", {}))
