"""The shipped ``validity`` study (studies/configs/validity.toml): where the small-deformation
model stops agreeing with itself, frequencies about the equilibrium along a gravity-scale sweep
in a clamped and a pinned FEM frame, with and without geometric stiffening.

The tables are checked against models built here (``fem.FiniteElementModel`` at each scaled
gravity, ``Model.equilibrium``, ``Model.natural_frequencies``), not against copied numbers.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from core.arm.presets import lumped_two_link
from fem import FiniteElementModel
from studies import cli
from studies.config import build_arm, expand_cases, load_config
from studies.discretizations import Discretization
from studies.kinds import KINDS
from studies.kinds.frequencies.analysis import parameter_sweep
from tests.test_figures import check_figure, run_config

PATH = cli.examples()["validity"]
#: The reduced run: the same study with 2 elements per link and 4 points (0, 1, 2, 3).
REDUCED = {r"(?m)^elements = .*$": "elements = [2]", r"(?m)^sweep_points = .*$": "sweep_points = 4"}


def reduced_text() -> str:
    text = PATH.read_text()
    for pattern, value in REDUCED.items():
        text, count = re.subn(pattern, value, text)
        assert count == 1, pattern
    return re.sub(r"(?ms)^\[report\].*", "", text)  # run_config adds [report] plots = true


def test_the_shipped_config_validates_as_described():
    config = load_config(PATH)
    assert config.study.kind == "frequencies"
    kind, arm = KINDS["frequencies"], build_arm(config.arm)
    analysis = kind.analysis_schema.model_validate(config.analysis)
    kind.validate(arm, analysis)
    assert arm == lumped_two_link()
    np.testing.assert_allclose(analysis.joint_values(arm), [np.pi / 4, -np.pi / 4], rtol=1e-15)
    assert analysis.about == "equilibrium" and analysis.joints == "locked"
    sweep = parameter_sweep(arm, analysis)
    assert sweep.parameter == "gravity_scale" and 7 <= sweep.values.size <= 13
    assert sweep.values[0] == 0.0 and sweep.values[-1] == 3.0
    cases = {case.discretization for case in expand_cases(config)}
    assert cases == {
        Discretization("fem", frame, 8, stiffened)
        for frame in ("clamped", "pinned")
        for stiffened in (False, True)
    }
    assert cli.main(["show", str(PATH)]) == 0


def independent(frame: str, stiffened: bool, scale: float, elements: int = 2) -> np.ndarray:
    """The two lowest locked frequencies about the equilibrium of the lumped arm under
    ``scale`` × its gravity at (45°, −45°), built here."""
    arm = lumped_two_link()
    arm = dataclasses.replace(arm, gravity=tuple(scale * g for g in arm.gravity))
    options = {"geometric_stiffening": True} if stiffened else {}
    model = FiniteElementModel(arm, elements=elements, frame=frame, **options)
    q = model.home()
    q[:2] = [np.pi / 4, -np.pi / 4]
    return model.natural_frequencies(model.equilibrium(q).q, count=2)


def test_a_reduced_run_tabulates_and_draws_the_frames(tmp_path, monkeypatch):
    """2 elements per link, gravity_scale 0, 1, 2, 3: the frames table holds each pair's
    frequencies as computed here (1e-12) and their relative difference; at 0 the frames agree
    to 1e-10 and under gravity they do not (> 1e-3 at the preset's gravity, unstiffened);
    gravity_sweep.csv holds every case's ratios to gravity 0; the figure follows the report
    conventions (tests/test_figures.py)."""
    figures, folder = run_config(reduced_text(), tmp_path, monkeypatch)
    assert set(figures) == {"gravity_sweep", "campbell"}
    check_figure("gravity_sweep", figures["gravity_sweep"])
    results = pd.read_csv(folder / "results.csv")
    assert (results["about"] == "equilibrium").all()
    assert results.groupby("case")["point"].max().eq(4).all()
    frames = pd.read_csv(folder / "frames_along_the_sweep.csv")
    assert len(frames) == 8  # (stiffened or not) x 4 points
    for _, row in frames.iterrows():
        for frame in ("clamped", "pinned"):
            omega = independent(frame, bool(row["geometric_stiffening"]), row["gravity_scale"])
            np.testing.assert_allclose(
                row[[f"omega_1_{frame}", f"omega_2_{frame}"]].to_numpy(float), omega, rtol=1e-12
            )
        for mode in (1, 2):
            clamped, pinned = row[f"omega_{mode}_clamped"], row[f"omega_{mode}_pinned"]
            assert row[f"frame_difference_{mode}"] == pytest.approx(
                abs(pinned - clamped) / clamped, rel=1e-12
            )
    zero = frames[frames["gravity_scale"] == 0]
    assert zero[["frame_difference_1", "frame_difference_2"]].max().max() < 1e-10
    one = frames[(frames["gravity_scale"] == 1) & ~frames["geometric_stiffening"]]
    assert one["frame_difference_1"].iloc[0] > 1e-3
    table = pd.read_csv(folder / "gravity_sweep.csv")
    for _, group in table.groupby("case"):
        base = group[group["gravity_scale"] == 0].iloc[0]
        np.testing.assert_allclose(group["ratio_1"], group["omega_1"] / base["omega_1"], rtol=1e-15)
        np.testing.assert_allclose(group["ratio_2"], group["omega_2"] / base["omega_2"], rtol=1e-15)
    summary = (folder / "summary.md").read_text()
    assert "## frames along the sweep" in summary and "](gravity_sweep.png)" in summary
    assert "`about = equilibrium`, as asked" in summary


@pytest.mark.slow
def test_the_shipped_study_runs_every_point_and_its_frames_agree_at_zero_gravity(tmp_path):
    """The shipped config as is (8 elements per link, 13 points; ~15 s): every case reaches
    the last point, the frames agree at gravity 0 to 1e-10, and the table at gravity 1 is the
    independent computation's (1e-12)."""
    assert cli.main(["run", str(PATH), "--output", str(tmp_path / "out")]) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert results.groupby("case")["point"].max().eq(13).all()
    frames = pd.read_csv(tmp_path / "out" / "frames_along_the_sweep.csv")
    zero = frames[frames["gravity_scale"] == 0]
    assert zero[["frame_difference_1", "frame_difference_2"]].max().max() < 1e-10
    for _, row in frames[frames["gravity_scale"] == 1].iterrows():
        for frame in ("clamped", "pinned"):
            omega = independent(frame, bool(row["geometric_stiffening"]), 1.0, elements=8)
            np.testing.assert_allclose(
                row[[f"omega_1_{frame}", f"omega_2_{frame}"]].to_numpy(float), omega, rtol=1e-12
            )
