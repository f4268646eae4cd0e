"""Every variant kind is added in one place: a toy variant registered in its one
registry (and removed again) goes through config validation and a study run
end to end, with no other module touched.

| variant kind   | the one module                      |
|----------------|-------------------------------------|
| shape family   | ``shapes`` (``FAMILIES``; the family's hooks say what it needs from the arm) |
| frame          | ``core.dynamics.basis`` (``FRAMES``)         |
| backend        | ``studies.discretizations`` (``BACKENDS``) |
| controller     | ``core.analysis.controllers`` (``CONTROLLERS``) |
| trajectory     | ``core.analysis.trajectories`` (``TRAJECTORIES``) |
| study kind     | ``studies.kinds`` (``KINDS``: an instance of a ``StudyKind`` subclass by name) |
| solver         | ``core.dynamics.model`` (``SOLVERS``)        |
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel, ConfigDict

import fem
import shapes
from amm import AssumedModesModel
from core import CONTROLLERS, SOLVERS, TRAJECTORIES
from core.arm.loads import distal_load
from core.arm.presets import lumped_two_link, rigid_flexible_rigid
from core.dynamics.basis import FRAMES
from studies.config import parse_config
from studies.discretizations import BACKENDS, Backend, SizeColumn
from studies.errors import ConfigError
from studies.kinds import KINDS, StudyKind
from studies.runner import run_study


def config(kind: str, sweep: dict, analysis: dict, preset: str = "one-flexible-link") -> dict:
    return {
        "study": {"name": f"toy-{kind}", "kind": kind},
        "arm": {"preset": preset},
        "sweep": sweep,
        "analysis": analysis,
        "report": {"formats": ["csv", "markdown"], "plots": False},
    }


def run(tmp_path, data: dict) -> pd.DataFrame:
    result = run_study(parse_config(data), output=tmp_path / "out")
    assert result.ok, result.failed
    return pd.read_csv(result.folder / "results.csv")


def test_every_registered_family_names_a_registered_frame():
    for name, cls in shapes.FAMILIES.items():
        assert cls.name == name
        assert cls.frame in FRAMES


# -- shape family ---------------------------------------------------------------


@pytest.fixture
def toy_family(monkeypatch):
    class ToyClampedFree(shapes.ClampedFree):
        """Cantilever shapes under another name."""

        name = "toy-cantilever"

    monkeypatch.setitem(shapes.FAMILIES, "toy-cantilever", ToyClampedFree)
    return ToyClampedFree


def test_a_new_shape_family_is_a_sweep_shape_for_both_backends(toy_family, tmp_path):
    data = config(
        "frequencies",
        {
            "backends": ["amm", "fem"],
            "shapes": ["toy-cantilever", "clamped-free"],
            "modes": [3],
            "elements": [4],
        },
        {"n_frequencies": 2},
    )
    results = run(tmp_path, data)
    amm = results[results["backend"] == "amm"].set_index(["shape", "mode"])["omega"]
    # Same shapes under two names: the same frequencies to the last bit.
    assert amm["toy-cantilever"].to_numpy().tolist() == amm["clamped-free"].to_numpy().tolist()
    # FEM takes the frame the family implies: one clamped FEM case for both names.
    assert results[results["backend"] == "fem"]["shape"].unique().tolist() == ["clamped"]
    data["sweep"]["shapes"] = ["not-registered"]
    with pytest.raises(ConfigError, match=r"sweep\.shapes\[1\]: must be one of .*toy-cantilever"):
        parse_config(data)


class TipMassOnly(shapes.ClampedMass):
    """Clamped shapes with the link's distal mass at the tip but not its rotary inertia: a
    family that takes its parameters from the arm through its own hooks (before, the
    assumed-modes model keyed the tip load on the name "clamped-mass")."""

    name = "toy-tip-mass"

    @classmethod
    def link_parameters(cls, parameters, load):
        return parameters or {"mass_ratio": load.mass_ratio}


@pytest.fixture
def toy_loaded_family(monkeypatch):
    monkeypatch.setitem(shapes.FAMILIES, TipMassOnly.name, TipMassOnly)


def test_a_new_family_that_takes_a_tip_load_gets_it_from_the_arm(toy_loaded_family, tmp_path):
    arm = rigid_flexible_rigid()  # the flexible link 2 carries the rigid link 3 and the payload
    mass, _ = distal_load(arm, 2)
    ratio = mass / (arm.links[1].mass_per_length * arm.links[1].length)
    toy = AssumedModesModel(arm, shape="toy-tip-mass", modes=3)
    explicit = AssumedModesModel(arm, shapes={2: ("clamped-mass", 3, {"mass_ratio": ratio})})
    q = toy.home()
    np.testing.assert_array_equal(toy.mass_matrix(q), explicit.mass_matrix(q))
    assert toy.bases[2].description.startswith(f"TipMassOnly(mass_ratio={ratio!r}, inertia_ratio=0.0)")
    expected = toy.natural_frequencies(q, count=2)
    # End to end: a study sweeps it beside the built-in families.
    results = run(
        tmp_path,
        config(
            "frequencies",
            {"backends": ["amm"], "shapes": ["toy-tip-mass", "clamped-free"], "modes": [3]},
            {"n_frequencies": 2},
            preset="rigid-flexible-rigid",
        ),
    )
    omega = results.set_index(["shape", "mode"])["omega"]
    np.testing.assert_allclose(omega["toy-tip-mass"].to_numpy(), expected, rtol=1e-12)
    assert np.all(omega["toy-tip-mass"].to_numpy() < omega["clamped-free"].to_numpy())
    # The finite-element beam solver takes its tip mass too (the family says it needs one).
    assert fem.beam_frequencies(1.0, 1.0, 1.0, 8, bc="toy-tip-mass", tip_mass=1.0, n=1)[0] < 3.52


# -- backend --------------------------------------------------------------------


@pytest.fixture
def toy_backend(monkeypatch):
    """AMM with one more mode than its size, registered only in BACKENDS, with its own size
    column ``cells``: the sweep schema, the case columns and the result tables take it from
    the registry."""
    backend = Backend(
        "TOY",
        SizeColumn("cells", "cells per flexible link (one more assumed mode per bending plane).", (1,)),
        lambda names: list(dict.fromkeys(names)),
        lambda arm, d, reference: AssumedModesModel(
            arm, shape=d.shape, modes=d.size + 1, reference=reference
        ),
        lambda cells: cells + 1,
    )
    monkeypatch.setitem(BACKENDS, "toy", backend)


def test_a_new_backend_with_its_own_size_column_runs_and_is_labelled(toy_backend, monkeypatch, tmp_path):
    data = config(
        "frequencies",
        {"backends": ["toy", "amm"], "shapes": ["clamped-free"], "modes": [3], "cells": [2]},
        {"n_frequencies": 1},
    )
    results = run(tmp_path, data)
    assert list(results.columns[:7]) == ["case", "backend", "shape", "modes", "elements", "segments", "cells"]
    toy, amm = results[results["backend"] == "toy"], results[results["backend"] == "amm"]
    assert toy["cells"].tolist() == [2] and toy["modes"].isna().all()  # blank, not 0
    assert amm["modes"].tolist() == [3] and amm["cells"].isna().all()
    assert toy["omega"].tolist() == amm["omega"].tolist()  # toy x2 is AMM x3
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| toy | clamped-free |  |  |  | 2 |" in summary
    assert "TOY clamped-free x2" in summary
    data["sweep"]["cells"] = [0]
    with pytest.raises(ConfigError, match=r"sweep\.cells\[1\]: must be > 0, got 0"):
        parse_config(data)
    monkeypatch.delitem(BACKENDS, "toy")  # unregistered, its column is no key of the sweep
    data["sweep"] = {"backends": ["amm"], "cells": [2]}
    with pytest.raises(ConfigError, match=r"sweep\.cells: unknown key"):
        parse_config(data)


# -- controller -------------------------------------------------------------------


@dataclass(frozen=True)
class ConstantTorque:
    """τ = kp on every joint (a toy controller registered only in CONTROLLERS)."""

    torque: float

    @classmethod
    def from_config(cls, arm, *, kp: float | list[float] = 0.0, kd: float | list[float] = 0.0):
        return cls(float(kp))

    def __call__(self, t, q, qd, model, reference):
        return np.full(model.n_joints, self.torque)


@pytest.fixture
def toy_controller(monkeypatch):
    monkeypatch.setitem(CONTROLLERS, "constant", ConstantTorque)


def test_a_new_controller_drives_a_simulation(toy_controller, tmp_path):
    data = config(
        "simulation",
        {"backends": ["amm"], "modes": [1]},
        {"t_end": 0.05, "output_points": 3, "controller": {"kind": "constant", "kp": 0.2}},
    )
    results = run(tmp_path, data)
    np.testing.assert_array_equal(results["tau1"], 0.2)
    data["analysis"]["controller"]["kind"] = "unknown"
    with pytest.raises(ConfigError, match=r"analysis\.controller\.kind: must be one of .*'constant'"):
        parse_config(data)


# -- trajectory -------------------------------------------------------------------


@dataclass(frozen=True)
class Ramp:
    """q_d = q0 + rate·t (a toy trajectory registered only in TRAJECTORIES)."""

    q0: tuple[float, ...]
    rate: float

    @classmethod
    def from_config(cls, arm, q0, *, rate: float):
        if not np.isfinite(rate):
            raise ValueError(f"rate must be finite, got {rate!r}")
        return cls(tuple(q0), rate)

    def evaluate(self, t):
        q0 = np.array(self.q0)
        return q0 + self.rate * t, np.full_like(q0, self.rate), np.zeros_like(q0)


@pytest.fixture
def toy_trajectory(monkeypatch):
    monkeypatch.setitem(TRAJECTORIES, "ramp", Ramp)


def test_a_new_trajectory_is_part_of_the_schema_and_is_recorded(toy_trajectory, tmp_path):
    data = config(
        "simulation",
        {"backends": ["amm"], "modes": [1]},
        {"t_end": 0.1, "output_points": 3, "trajectory": {"kind": "ramp", "rate": 2.0}},
    )
    results = run(tmp_path, data)
    np.testing.assert_allclose(results["theta1_ref"], 2.0 * results["time"], rtol=0, atol=1e-15)
    data["analysis"]["trajectory"] = {"kind": "ramp", "rate": 2.0, "speed": 2.0}
    with pytest.raises(ConfigError, match=r"analysis\.trajectory\.speed: unknown key"):  # the key as written
        parse_config(data)


# -- study kind -------------------------------------------------------------------


class CountAnalysis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    factor: int = 1


@pytest.fixture
def toy_kind(monkeypatch):
    class CountCoordinates(StudyKind):
        """Rows: the number of coordinates of each case, times ``factor``."""

        analysis_schema = CountAnalysis

        def run_case(self, arm, case, analysis):
            model = case.discretization.build(arm)
            return [{**case.columns(), "n_dof": model.n_dof, "count": analysis.factor * model.n_dof}]

        def report(self, results, arm, analysis, folder, plots):
            return [f"{len(results)} cases counted."]

    monkeypatch.setitem(KINDS, "count-coordinates", CountCoordinates())
    return KINDS["count-coordinates"]


def test_a_new_study_kind_runs_with_its_own_analysis_table(toy_kind, tmp_path):
    data = config(
        "count-coordinates",
        {"backends": ["amm", "fem"], "modes": [1, 2], "elements": [3]},
        {"factor": 10},
        preset="lumped-two-link",
    )
    results = run(tmp_path, data)
    # Lumped two-link arm: 2 joints + 2 links x modes (AMM) or 2 x (2·3) DOF (FEM, clamped).
    assert results["count"].tolist() == [40, 60, 140]
    assert "3 cases counted." in (tmp_path / "out" / "summary.md").read_text()
    data["analysis"] = {"factor": "many"}
    with pytest.raises(ConfigError, match=r"analysis\.factor: "):
        parse_config(data)


# -- solver -----------------------------------------------------------------------


def test_a_new_solver_is_available_to_forward_dynamics(monkeypatch):
    def lstsq(model, q, qd, applied):
        rhs = applied - model.nonlinear_forces(q, qd)
        return np.linalg.lstsq(model.mass_matrix(q), rhs, rcond=None)[0]

    monkeypatch.setitem(SOLVERS, "lstsq", lstsq)
    model = AssumedModesModel(lumped_two_link(), modes=2)
    q = model.home()
    q[:2] = 0.3, -0.4
    tau = np.array([0.1, -0.2])
    np.testing.assert_allclose(
        model.forward_dynamics(q, np.zeros(model.n_dof), tau, solver="lstsq"),
        model.forward_dynamics(q, np.zeros(model.n_dof), tau),
        rtol=1e-10,
    )


def test_shape_families_and_study_kinds_register_themselves_from_every_module():
    """Every family / kind class defined in the package's modules is in its registry (the
    registry lists the built-in ones)."""
    import importlib
    import inspect
    import pkgutil

    import studies.kinds

    for package, base, registry in ((shapes, shapes.ShapeFamily, shapes.FAMILIES),):
        defined = {}
        for module in pkgutil.iter_modules(package.__path__):
            members = inspect.getmembers(importlib.import_module(f"{package.__name__}.{module.name}"))
            for _, value in members:
                if inspect.isclass(value) and issubclass(value, base) and "name" in value.__dict__:
                    defined[value.name] = value
        assert sorted(defined) == sorted(registry)
        for name, cls in defined.items():
            entry = registry[name]
            assert entry is cls or type(entry) is cls
    # Study kinds are instances keyed by name: every concrete kind class of the package (its
    # modules and subpackages) has exactly one instance in KINDS.
    kinds = set()
    for module in pkgutil.walk_packages(studies.kinds.__path__, "studies.kinds."):
        for _, value in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if issubclass(value, StudyKind) and not inspect.isabstract(value):
                kinds.add(value)
    assert sorted(type(kind).__name__ for kind in KINDS.values()) == sorted(cls.__name__ for cls in kinds)
