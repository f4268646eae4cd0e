"""The ``stability`` study kind (seed 002): extension and retraction of a translating link."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from studies import cli
from studies.kinds.stability import verdict_table

CONFIG = """
[study]
name = "stability"
kind = "stability"
[arm]
preset = "rrp-translating"
[sweep]
backends = {backends}
shapes = ["clamped-mass"]
modes = [2]
elements = [2]
[analysis]
lengths = [0.3, 1.0]
start = [0.0, 0.0]
end = [3.141592653589793, -1.5707963267948966]
eigen_points = 11
{extra}
"""


def run(tmp_path, backends='["amm", "fem"]', extra="simulate = false", name="out") -> pd.DataFrame:
    path = tmp_path / f"{name}.toml"
    path.write_text(CONFIG.format(backends=backends, extra=extra))
    assert cli.main(["run", str(path), "--output", str(tmp_path / name)]) == 0
    return pd.read_csv(tmp_path / name / "results.csv")


def test_extension_is_stable_and_retraction_unstable_with_both_backends(tmp_path):
    """Seed 002 §IV–V, Figs. 6–7: along the preset's 1 s maneuver under the decoupling
    controller the closed-loop flexible eigenvalues stay in the left half-plane while the link
    extends and move into the right half-plane while it retracts. Measured (11 times, AMM 2
    clamped-mass modes per plane, FEM 2 elements): extension largest Re λ from −0.31 to −0.086
    1/s inside the maneuver and ≤ 4e-11 at the two ends (at rest: round-off of the central
    differences); retraction positive at 9 of 11 times, up to 0.88 (AMM) and 0.96 (FEM) 1/s.
    Bounds: extension never positive beyond the noise tolerance, retraction positive for more
    than half of the maneuver, and the two independent discretizations' largest Re λ within
    15 % of each other at every interior time (measured ≤ 9 %)."""
    results = run(tmp_path)
    verdicts = verdict_table(results).set_index(["backend", "direction"])
    written = pd.read_csv(tmp_path / "out" / "verdicts.csv")
    assert {
        "direction",
        "backend",
        "basis",
        "tracker",
        "max_real",
        "fraction_positive",
        "energy_growth",
    } <= set(written.columns)
    for backend in ("amm", "fem"):
        extension, retraction = verdicts.loc[(backend, "extension")], verdicts.loc[(backend, "retraction")]
        assert extension["fraction_positive"] == 0.0
        assert retraction["fraction_positive"] > 0.5
        assert retraction["max_real"] > 0.1
        assert extension["tracker"] == ("frozen" if backend == "amm" else "none")
    eigen = results[results["set"] == "eigen"]
    largest = eigen.groupby(["direction", "time", "backend"])["real"].max().unstack("backend")
    interior = largest[largest["fem"].abs() > 1e-3]
    assert len(interior) == 18
    assert (np.abs(interior["amm"] - interior["fem"]) <= 0.15 * np.abs(interior["fem"])).all()
    # Four flexible states per plane pair and mode → 2·m eigenvalues per time (m = 4 coordinates
    # for AMM, 8 for FEM two elements with two planes): complex pairs, conjugate-symmetric.
    for _, group in eigen.groupby(["case", "direction", "time"]):
        values = np.sort_complex(group["real"].to_numpy() + 1j * group["imag"].to_numpy())
        np.testing.assert_allclose(np.sort_complex(values.conj()), values, atol=1e-6 * np.abs(values).max())


@pytest.mark.slow
def test_simulated_energy_and_stiffness_power_follow_the_direction(tmp_path):
    """AMM, the link sliding alone (the other joints held at 0; 0.7 ↔ 1.0 m in 0.5 s) from a
    bent start: the stiffness power ½ q_fᵀ K̇ q_f has the sign of −l̇ at every output time
    (K ∝ 1/l³), exactly, and the flexible energy falls while extending and grows while
    retracting (seed 002 §IV; measured ×0.54 and ×1.85; bounds < 1 and > 1)."""
    extra = (
        'lengths = [0.7, 1.0]\nT = 0.5\nblend = 0.1\nmethod = "LSODA"\nrtol = 1e-6\natol = 1e-9\n'
        "output_points = 51\neigen_points = 3\ninitial_deflection = 0.01"
    )
    text = CONFIG.replace("lengths = [0.3, 1.0]\n", "").replace("eigen_points = 11\n", "")
    text = text.replace("end = [3.141592653589793, -1.5707963267948966]\n", "")
    path = tmp_path / "sim.toml"
    path.write_text(text.format(backends='["amm"]', extra=extra))
    assert cli.main(["run", str(path), "--output", str(tmp_path / "sim")]) == 0
    results = pd.read_csv(tmp_path / "sim" / "results.csv")
    simulation = results[results["set"] == "simulation"]
    moving = simulation[simulation["l_dot"].abs() > 1e-9]
    assert len(moving) > 20
    assert (np.sign(moving["lyapunov_rate"]) == -np.sign(moving["l_dot"])).all()
    verdicts = verdict_table(results).set_index("direction")
    assert verdicts.loc["extension", "energy_growth"] < 1 < verdicts.loc["retraction", "energy_growth"]
    assert (verdicts["simulated"] == "completed").all()
    summary = (tmp_path / "sim" / "summary.md").read_text()
    assert "flexible_response.png" in summary and "eigenvalues.png" in summary


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('preset = "rrp-translating"', 'preset = "rigid-two-link"'), "needs a translating link"),
        (("lengths = [0.3, 1.0]", "lengths = [0.3, 1.5]"), r"analysis\.lengths: need short < long <= 1\.3"),
        (
            ("eigen_points = 11", 'eigen_points = 11\ndirections = ["custom"]'),
            r"analysis\.custom: direction 'custom'",
        ),
        (("start = [0.0, 0.0]", "start = [0.0]"), r"analysis\.start: needs 2 values"),
        (
            ("eigen_points = 11", "eigen_points = 11\nlink = 2"),
            r"analysis\.link: link 2 is not a translating link",
        ),
    ],
)
def test_bad_stability_configs_name_the_key(tmp_path, capsys, change, message):
    text = CONFIG.format(backends='["amm"]', extra="simulate = false").replace(*change)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert cli.main(["run", str(path), "--output", str(tmp_path / "bad")]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_gain_lists_of_the_wrong_length_name_the_key(tmp_path, capsys):
    text = CONFIG.format(backends='["amm"]', extra="simulate = false\nkp = [100.0, 100.0]")
    path = tmp_path / "gains.toml"
    path.write_text(text)
    assert cli.main(["run", str(path), "--output", str(tmp_path / "gains")]) == 2
    assert "analysis.kp: needs one gain or 3 (one per joint), got 2" in capsys.readouterr().err
