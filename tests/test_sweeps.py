"""Frequencies along a sweep of a physical parameter: tracked modes, crossings, the agreement
of AMM and FEM at every point, and the shipped sweeps (studies/configs/agreement*.toml)."""

from __future__ import annotations

import math
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shapes
from studies import cli
from studies.config import parse_config
from studies.errors import ConfigError


def run(tmp_path: Path, text: str, name: str = "out", *extra: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    assert cli.main(["run", str(path), "--output", str(tmp_path / name), *extra]) == 0
    return tmp_path / name


def exact(length: float, EI: float, mass: float, inertia: float, rho: float, n: int) -> np.ndarray:
    """Clamped-mass frequencies [rad/s] of a uniform cantilever (shapes.ClampedMass roots,
    ω = β² √(EI/(ρA l⁴))): the exact reference of one bending plane."""
    family = shapes.ClampedMass(mass / (rho * length), inertia / (rho * length**3))
    return family.frequencies(n, EI=EI, mass_per_length=rho, length=length)


# -- two bending planes of a sliding beam cross as its free length changes ---------------

#: A beam sliding out of its hub (prismatic joint 1): in-plane EI = 15 N·m² with the
#: payload's rotary inertia 0.01 kg·m² about the in-plane bending axis (link y), out of
#: plane EI_out = 11 N·m² and no rotary inertia. The planes are uncoupled with the joint
#: locked (two clamped-mass beams); their lowest frequencies cross near l = 0.42 m: the
#: rotary inertia lowers the in-plane mode the more, the shorter the beam.
SLIDING = """
    [study]
    name = "sliding-crossing"
    kind = "frequencies"

    [arm]
    payload = { mass = 0.3, inertia = [[0.0, 0, 0], [0, 0.01, 0], [0, 0, 0.0]] }

    [[arm.joints]]
    kind = "prismatic"

    [[arm.links]]
    kind = "flexible"
    length = 1.0
    mass_per_length = 0.8
    EI = 15.0
    EI_out = 11.0

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-mass"]
    modes = [4]
    elements = [16]

    [analysis]
    n_frequencies = 2
    sweep_parameter = "d1"
    sweep_range = [0.3, 1.0]
    sweep_points = 8

    [report]
    plots = false
    """


def test_two_uncoupled_bending_planes_are_tracked_through_their_crossing(tmp_path):
    """Sorting by frequency swaps the in-plane and out-of-plane modes where they cross;
    tracking by MAC follows each plane: every tracked mode's frequency is its own plane's
    exact clamped-mass branch at every point, to the discretization's error (measured: AMM
    in-plane 3e-15, its clamped-mass shapes being the exact modes there; AMM out-of-plane
    1.6e-7, both planes using the shapes of the in-plane tip load (amm.model); FEM 16
    elements 2e-8), and the crossings table brackets the exact crossing (l* by bisection of
    the two exact branches: l* = 0.4167 m; the table's linear interpolation between the points
    says 0.4275 m, the frequencies varying like 1/l²)."""
    folder = run(tmp_path, SLIDING)
    results = pd.read_csv(folder / "results.csv")
    lengths = np.linspace(0.3, 1.0, 8)
    in_plane = np.array([exact(l, 15.0, 0.3, 0.01, 0.8, 1)[0] for l in lengths])
    out_of_plane = np.array([exact(l, 11.0, 0.3, 0.0, 0.8, 1)[0] for l in lengths])
    assert in_plane[0] < out_of_plane[0] and in_plane[-1] > out_of_plane[-1]  # they cross
    tolerances = {("amm", 1): 1e-12, ("amm", 2): 1e-6, ("fem", 1): 1e-7, ("fem", 2): 1e-7}
    for backend in ("amm", "fem"):
        mine = results[results["backend"] == backend]
        for tracked, branch in ((1, in_plane), (2, out_of_plane)):
            along = mine[mine["tracked_mode"] == tracked].sort_values("point")
            np.testing.assert_allclose(along["d1"], lengths, rtol=1e-15)
            np.testing.assert_allclose(along["omega"], branch, rtol=tolerances[backend, tracked])
            assert along["tracking_mac"].iloc[1:].min() > 0.99  # one plane's shape throughout
        # frequency order: the in-plane mode is mode 1 before the crossing, mode 2 after it
        in_plane_rows = mine[mine["tracked_mode"] == 1].sort_values("point")
        assert in_plane_rows["mode"].tolist() == [1, 1, 2, 2, 2, 2, 2, 2]

    def gap(l: float) -> float:
        return exact(l, 15.0, 0.3, 0.01, 0.8, 1)[0] - exact(l, 11.0, 0.3, 0.0, 0.8, 1)[0]

    low, high = 0.3, 1.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if gap(middle) < 0 else (low, middle)
    crossing = 0.5 * (low + high)
    events = pd.read_csv(folder / "crossings.csv")
    assert len(events) == 2 and set(events["event"]) == {"crossing"}  # one per case
    assert (events["tracked_mode"] == 1).all() and (events["other_mode"] == 2).all()
    assert ((events["d1_from"] < crossing) & (crossing < events["d1_to"])).all()
    assert events["d1_at"].sub(crossing).abs().max() < 0.02  # measured 0.0108 (a step is 0.1 m)
    summary = (folder / "summary.md").read_text()
    assert "2 crossing(s), where two tracked modes swap" in summary and "; 0 shape change(s)" in summary


def test_a_payload_mass_sweep_has_exact_references_at_every_point(tmp_path):
    """One flexible link, joint locked, payload mass swept 0 … 2 kg: at every point the
    reference is the exact clamped-mass beam with that tip mass; AMM clamped-mass is exact
    (measured |rel_error| 3e-15), and adding mass lowers every tracked frequency (Rayleigh).
    A single beam's frequencies never cross (its spectrum is simple), but the first step
    (0 → 0.5 kg, the beam itself weighs 0.29 kg) changes the shapes of modes 2 and 3
    (measured MAC 0.519 and 0.616): the table lists those shape changes and nothing else."""
    folder = run(
        tmp_path,
        """
        [study]
        name = "payload"
        kind = "frequencies"

        [arm]
        preset = "one-flexible-link"

        [sweep]
        backends = ["amm"]
        shapes = ["clamped-mass"]
        modes = [5]

        [analysis]
        n_frequencies = 3
        sweep_parameter = "payload_mass"
        sweep_values = [0.0, 0.5, 1.0, 2.0]

        [report]
        plots = false
        """,
    )
    results = pd.read_csv(folder / "results.csv")
    assert results["reference_source"].str.startswith("exact: clamped-mass roots").all()
    assert results["reference_source"].nunique() == 4  # μ of each point
    assert results["rel_error"].abs().max() < 1e-12
    for _, along in results.groupby("tracked_mode"):
        assert (np.diff(along.sort_values("point")["omega"]) < 0).all()
    tracked = pd.read_csv(folder / "tracked_frequencies.csv")
    assert list(tracked.columns) == [
        "case", "backend", "shape", "modes", "elements", "segments", "tracked_mode", "point", "payload_mass",
        "mode", "omega", "hz", "tracking_mac",
    ]  # fmt: skip
    events = pd.read_csv(folder / "crossings.csv")
    assert events["event"].tolist() == ["shape change"] * 2 and events["tracked_mode"].tolist() == [2, 3]
    assert (events["payload_mass_from"] == 0.0).all() and events["mac"].between(0.5, 0.9).all()
    assert "0 crossing(s)" in (folder / "summary.md").read_text()


# -- the shipped sweeps --------------------------------------------------------------------


def shipped(name: str) -> Path:
    return cli.examples()[name]


def test_the_lumped_sweep_at_45_minus_45_is_the_single_pose_study(tmp_path):
    """agreement.toml at θ₂ = −45° (point 4) and frequencies.toml's pose θ = (45°, −45°),
    run with the same discretizations, give the same frequencies (the same models: measured
    equal bit for bit) and the same MACs (link against base axes: measured 1e-15 apart). Both
    about the configuration (δ = 0): about the equilibrium the frequencies still agree, but the
    sweep's fields in link axes and the single study's base-axes fields resolved in the sagged
    link frames differ by the sag's frame rotation (MACs measured 2e-4 apart)."""
    pinned = '[analysis]\nabout = "configuration"\n'
    sweep = run(tmp_path, shipped("agreement").read_text().replace("[analysis]\n", pinned), "sweep")
    text = shipped("frequencies").read_text().replace("[analysis]\n", pinned)
    text = text.replace('shapes = ["clamped-mass"]', 'shapes = ["clamped-mass", "clamped-free"]')
    text = text.replace("elements = [4, 8]", "elements = [16]")
    single = run(tmp_path, text, "single")
    along = pd.read_csv(sweep / "agreement.csv")
    assert along["point"].nunique() == 13
    here = along[along["point"] == 4].reset_index(drop=True)
    assert here["theta2"].eq(-math.pi / 4).all()
    pose = pd.read_csv(single / "agreement.csv")
    assert len(here) == len(pose) == 20  # 5 cases x 4 modes
    for column in ("case", "mode", "paired_mode"):
        assert here[column].tolist() == pose[column].tolist()
    assert here["flag"].isna().all() and pose["flag"].isna().all()  # nothing flagged at this pose
    np.testing.assert_allclose(here["omega"], pose["omega"], rtol=1e-14)
    np.testing.assert_allclose(here["mac"], pose["mac"], rtol=1e-12)


def test_the_azimuth_elevation_sweep_crosses_and_flags_the_one_mode_basis(tmp_path):
    """agreement-azimuth-elevation.toml, run twice: identical agreement.csv and crossings.csv.

    Physics checked independently of the pairing:
    * the in-plane mode (elevation joint free, no gravity) does not depend on θ₂ (measured
      spread 4e-15 relative);
    * at θ₂ = ±90° (beam on the azimuth axis) out-of-plane bending decouples from the azimuth
      joint: a clamped-mass cantilever with EI_out = 300 N·m², μ = 0.1/(0.5·1), j = 0 (FEM 16
      elements: measured 4e-8 relative, h⁴ discretization error);
    * each case's two elastic modes cross twice, symmetrically in θ₂;
    * "order differs" is flagged exactly where a case's tracked order differs from the FEM
      case's (read from the tracked identities of results.csv, not from the pairing): the
      one-mode bases only, between their crossings (±12° clamped-free, ±26° clamped-mass) and
      the FEM's (±55°)."""
    first = run(tmp_path, shipped("agreement-azimuth-elevation").read_text(), "a")
    second = run(tmp_path, shipped("agreement-azimuth-elevation").read_text(), "b")
    for name in ("agreement.csv", "crossings.csv", "tracked_frequencies.csv"):
        assert (first / name).read_text() == (second / name).read_text(), name
    results = pd.read_csv(first / "results.csv")
    elastic = results[results["tracked_mode"].notna()]
    assert (results.loc[results["tracked_mode"].isna(), "omega"] == 0).all()  # rigid-body modes
    fem = elastic[elastic["backend"] == "fem"]
    in_plane = fem[fem["tracked_mode"] == 4]["omega"]  # 96.7 rad/s, above 64 at θ₂ = −90°
    assert in_plane.max() - in_plane.min() <= 1e-10 * in_plane.max()
    cantilever = exact(1.0, 300.0, 0.1, 0.0, 0.5, 1)[0]
    ends = fem[(fem["tracked_mode"] == 3) & fem["point"].isin([1, 13])]["omega"]
    np.testing.assert_allclose(ends, cantilever, rtol=1e-7)

    events = pd.read_csv(first / "crossings.csv")
    assert set(events["event"]) == {"crossing"}
    for _, group in events.groupby("case"):
        assert len(group) == 2
        np.testing.assert_allclose(group["theta2_at"].sum(), 0.0, atol=1e-9)

    # tracked identity of each case's lowest elastic mode (mode 3) at each point
    lowest = elastic[elastic["mode"] == 3].pivot(index="point", columns="case", values="tracked_mode")
    reference_case = int(fem["case"].iloc[0])
    agreement = pd.read_csv(first / "agreement.csv", keep_default_na=False)
    flagged = agreement[agreement["flag"] != ""]
    assert set(flagged["flag"]) == {"order differs"}
    expected = {
        (case, point)
        for case in lowest.columns
        for point in lowest.index
        if lowest.loc[point, case] != lowest.loc[point, reference_case]
    }
    assert set(zip(flagged["case"], flagged["point"], strict=True)) == expected
    assert {int(c) for c, _ in expected} == set(
        results[(results["backend"] == "amm") & (results["modes"] == 1)]["case"]
    )


# -- config mistakes -----------------------------------------------------------------------

LUMPED = """
[study]
name = "s"
kind = "frequencies"

[arm]
preset = "lumped-two-link"

[analysis]
"""


@pytest.mark.parametrize(
    "analysis, message",
    [
        ('sweep_parameter = "theta3"\nsweep_values = [0.0, 1.0]', "analysis.sweep_parameter: must be one of "
         "['theta1', 'theta2', 'payload_mass'], got 'theta3'"),
        ('sweep_parameter = "theta2"', "analysis.sweep_parameter: give either sweep_values or sweep_range "
         "(with sweep_points), got neither"),
        ('sweep_parameter = "theta2"\nsweep_values = [0.0, 1.0]\nsweep_range = [0.0, 1.0]',
         "analysis.sweep_parameter: give either sweep_values or sweep_range (with sweep_points), not both"),
        ("sweep_values = [0.0, 1.0]", "analysis.sweep_values: needs analysis.sweep_parameter"),
        ('sweep_parameter = "theta2"\nsweep_values = [0.0, 1.0, 0.5]',
         "analysis.sweep_values: must be strictly increasing or decreasing (the order modes are tracked in), "
         "got [0.0, 1.0, 0.5]"),
        ('sweep_parameter = "theta2"\nsweep_range = [1.0, 1.0]', "analysis.sweep_range: must be strictly"),
        ('sweep_parameter = "theta2"\nsweep_values = [0.0, nan]',
         "analysis.sweep_values[2]: must be finite, got nan"),
        ('sweep_parameter = "theta2"\nsweep_values = [0.0]', "analysis.sweep_values: must hold at least 2 values"),
        ('sweep_parameter = "theta2"\nsweep_range = [0.0, 1.0, 2.0]',
         "analysis.sweep_range: must hold exactly 2 values, [start, stop], got [0.0, 1.0, 2.0]"),
        ('sweep_parameter = "theta2"\nsweep_range = [0.0, 1.0]\nsweep_points = 1',
         "analysis.sweep_points: must be >= 2, got 1"),
        ('sweep_parameter = "theta2"\nsweep_values = [0.0, 1.0]\nsweep_points = 5',
         "analysis.sweep_points: applies to sweep_range only"),
        ('sweep_parameter = "payload_mass"\nsweep_values = [-1.0, 1.0]',
         "analysis.sweep_values: a payload mass must be >= 0 kg, got [-1.0, 1.0]"),
    ],
)  # fmt: skip
def test_sweep_mistakes_name_the_key_and_the_value(analysis, message):
    with pytest.raises(ConfigError) as error:
        parse_config(tomllib.loads(LUMPED + analysis + "\n"))
    assert message in str(error.value)


def test_a_free_length_outside_the_beam_is_refused():
    text = textwrap.dedent(SLIDING).replace("sweep_range = [0.3, 1.0]", "sweep_range = [0.3, 1.2]")
    with pytest.raises(ConfigError, match=r"analysis\.sweep_range: d1: the free length of translating link 1 "
                       r"must lie in \(0, 1\.0\] m, got 1\.0\d*"):  # fmt: skip
        parse_config(tomllib.loads(text))


def test_convergence_studies_have_no_sweep_keys():
    text = LUMPED.replace('"frequencies"', '"convergence"') + 'sweep_parameter = "theta2"\n'
    with pytest.raises(ConfigError, match=r"analysis\.sweep_parameter: unknown key"):
        parse_config(tomllib.loads(text))
