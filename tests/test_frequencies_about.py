"""``analysis.about`` of the frequencies kind: frequencies about the static equilibrium under
gravity or at the configuration as given, and the ``gravity_scale`` sweep.

Every expected value is computed here independently of the study code: the models are built
directly (``fem.FiniteElementModel``, ``amm.AssumedModesModel``) and their equilibrium and
frequencies taken with ``Model.equilibrium`` and ``Model.natural_frequencies``.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap

import numpy as np
import pandas as pd
import pytest

from amm import AssumedModesModel
from core.analysis.equilibrium import EquilibriumError
from core.arm.presets import lumped_two_link, rigid_two_link
from fem import FiniteElementModel
from studies.config import parse_config
from studies.discretizations import Case, Discretization
from studies.errors import ConfigError
from studies.kinds import KINDS
from studies.kinds.frequencies.rest import about_of
from studies.runner import run_study

POSE = [math.pi / 4, -math.pi / 4]
KIND = KINDS["frequencies"]


def analysis(**keys):
    return KIND.analysis_schema.model_validate({"configuration": POSE, "n_frequencies": 3, **keys})


def config(extra_analysis: str = "", arm: str = "", sweep: str = "") -> dict:
    """A small frequencies study of the lumped two-link arm (TOML text → dict)."""
    import tomllib

    text = textwrap.dedent(
        f"""
        [study]
        name = "about"
        kind = "frequencies"
        [arm]
        preset = "lumped-two-link"
        {arm}
        [sweep]
        backends = ["amm", "fem"]
        shapes = ["clamped-mass"]
        modes = [2]
        elements = [2]
        {sweep}
        [analysis]
        configuration = [{POSE[0]!r}, {POSE[1]!r}]
        n_frequencies = 3
        {extra_analysis}
        [report]
        plots = false
        """
    )
    return tomllib.loads(text)


def run(tmp_path, data: dict, name: str = "out"):
    result = run_study(parse_config(data), output=tmp_path / name)
    return result, result.folder


def fem_at(arm, joints, elements=2, frame="clamped", **options):
    model = FiniteElementModel(arm, elements=elements, frame=frame, **options)
    q = model.home()
    q[: arm.n_joints] = joints
    return model, q


# -- the default and the recorded choice -----------------------------------------------------


def test_the_default_is_the_equilibrium_for_a_flexible_arm_under_gravity_only():
    arm = lumped_two_link()
    assert about_of(arm, analysis()) == "equilibrium"
    assert about_of(lumped_two_link(gravity=False), analysis()) == "configuration"
    assert about_of(rigid_two_link(), analysis()) == "configuration"  # gravity, nothing flexible
    assert about_of(arm, analysis(about="configuration")) == "configuration"
    assert about_of(lumped_two_link(gravity=False), analysis(about="equilibrium")) == "equilibrium"
    # the convergence kind's analysis has no such key: always at the configuration
    assert about_of(arm, KINDS["convergence"].analysis_schema.model_validate({})) == "configuration"


@pytest.mark.parametrize(
    "arm, about, expected",
    [
        ("", "", "equilibrium"),
        ("gravity = [0.0, 0.0, 0.0]", "", "configuration"),
        ("", 'about = "configuration"', "configuration"),
        ("gravity = [0.0, 0.0, 0.0]", 'about = "equilibrium"', "equilibrium"),
    ],
)
def test_the_choice_is_in_every_row_and_in_the_summary(tmp_path, arm, about, expected):
    result, folder = run(tmp_path, config(about, arm))
    assert result.ok
    results = pd.read_csv(folder / "results.csv")
    assert (results["about"] == expected).all()
    summary = (folder / "summary.md").read_text()
    assert f"`about = {expected}`" in summary
    assert ("as asked" in summary) == bool(about)
    sag = [c for c in results.columns if c.startswith("sag_") or c == "equilibrium_residual"]
    if expected == "configuration":
        assert not sag
    else:
        assert sag == ["sag_tip_w1", "sag_tip_w2", "sag_tip_displacement", "equilibrium_residual"]
        assert "## sag at the equilibrium" in summary
        if arm:  # without gravity the equilibrium is the configuration: no sag
            assert (results[sag[:-1]] == 0).all().all()


def test_an_invalid_about_names_the_key_and_the_value():
    with pytest.raises(ConfigError) as error:
        parse_config(config('about = "rest"'))
    message = str(error.value)
    assert "analysis.about" in message and "'rest'" in message
    assert "equilibrium" in message and "configuration" in message


# -- the numbers ------------------------------------------------------------------------------


def test_frequencies_and_sag_are_those_of_the_equilibrium():
    """A FEM and an AMM case of the lumped arm under gravity: the rows' ω equal
    natural_frequencies at model.equilibrium(q).q (1e-12; the same arithmetic), the sag
    columns its tip deflections, the tip's displacement from the configuration and its
    residual; and they differ from the frequencies at the configuration (by ~1 %)."""
    arm = lumped_two_link()
    settings = analysis()
    joints = np.array(POSE)
    fem_model, _ = fem_at(arm, joints, elements=3)
    amm_model = AssumedModesModel(arm, shape="clamped-mass", modes=2, reference=joints)
    for case, model in (
        (Case(1, Discretization("fem", "clamped", 3)), fem_model),
        (Case(2, Discretization("amm", "clamped-mass", 2)), amm_model),
    ):
        rows = pd.DataFrame(KIND.run_case(arm, case, settings))
        start = model.home()
        start[:2] = joints
        found = model.equilibrium(start)
        omega = model.natural_frequencies(found.q, count=3)
        np.testing.assert_allclose(rows["omega"], omega, rtol=1e-12, atol=0)
        assert (rows["about"] == "equilibrium").all()
        for name, value in model.tip_deflections(found.q).items():
            np.testing.assert_allclose(rows[f"sag_{name}"], value, rtol=1e-12, atol=1e-15)
        moved = np.linalg.norm(model.tip_position(found.q) - model.tip_position(start))
        np.testing.assert_allclose(rows["sag_tip_displacement"], moved, rtol=1e-12)
        np.testing.assert_allclose(rows["equilibrium_residual"], found.residual, rtol=1e-12)
        assert rows["sag_tip_w1"].iloc[0] < -0.01  # the arm sags (3.5 cm at link 1's tip)
        undeformed = model.natural_frequencies(start, count=3)
        assert abs(omega[0] / undeformed[0] - 1) > 5e-3
        configured = pd.DataFrame(KIND.run_case(arm, case, analysis(about="configuration")))
        np.testing.assert_allclose(configured["omega"], undeformed, rtol=1e-12, atol=0)


def test_the_mode_shapes_are_those_of_the_equilibrium(tmp_path):
    """mode_shapes.csv about the equilibrium: each mode's frequency is the row's (the same
    eigen-solve at the same equilibrium), not the configuration's."""
    _, folder = run(tmp_path, config())
    results = pd.read_csv(folder / "results.csv")
    shapes = pd.read_csv(folder / "mode_shapes.csv").drop_duplicates(["case", "mode"])
    merged = shapes.merge(results, on=["case", "mode"], suffixes=("_shape", ""))
    np.testing.assert_allclose(merged["omega_shape"], merged["omega"], rtol=1e-12)


# -- free joints, failures -------------------------------------------------------------------


def test_free_joints_that_do_not_rest_fail_the_case_with_a_clear_message():
    arm = lumped_two_link()
    case = Case(1, Discretization("fem", "clamped", 2))
    settings = KIND.analysis_schema.model_validate({"configuration": [0.3, 0.2], "joints": "free"})
    with pytest.raises(EquilibriumError) as error:
        KIND.run_case(arm, case, settings)
    message = str(error.value)
    assert message.startswith('analysis.about = "equilibrium"') and "FEM clamped x2" in message
    assert 'analysis.joints = "locked"' in message and 'analysis.about = "configuration"' in message


def test_free_joints_hanging_straight_down_rest_where_they_are():
    """Gravity along +x and both links along it (θ = 0): the arm hangs straight, gravity along
    the beams, no sag; with free joints the equilibrium is the configuration and the
    frequencies are those there, all positive (gravity holds the joints of a hanging
    pendulum)."""
    arm = dataclasses.replace(lumped_two_link(), gravity=(9.81, 0.0, 0.0))
    hanging = [0.0, 0.0]
    case = Case(1, Discretization("fem", "clamped", 2))
    settings = KIND.analysis_schema.model_validate({"configuration": hanging, "joints": "free"})
    rows = pd.DataFrame(KIND.run_case(arm, case, settings))
    model, q = fem_at(arm, hanging)
    np.testing.assert_allclose(rows["omega"], model.natural_frequencies(q, "free", count=5), rtol=1e-12)
    assert (rows["sag_tip_displacement"] == 0).all() and (rows["about"] == "equilibrium").all()
    assert (rows["omega"] > 0).all()


def test_a_case_without_equilibrium_fails_alone(tmp_path, monkeypatch):
    """The FEM case's equilibrium fails (made to): it is recorded as failed with the message,
    the AMM case's rows are kept."""

    def refuse(self, q=None, joints="locked", tau=None, tol=1e-10):
        raise EquilibriumError("made to fail", np.zeros(self.n_dof), 1.0)

    monkeypatch.setattr(FiniteElementModel, "equilibrium", refuse)
    result, folder = run(tmp_path, config())
    assert result.succeeded == 1 and len(result.failed) == 1
    assert result.failed[0]["backend"] == "fem"
    error = result.failed[0]["error"]
    assert error.startswith('EquilibriumError: analysis.about = "equilibrium": FEM clamped x2 has no static')
    assert "made to fail" in error
    failures = pd.read_csv(folder / "failures.csv")
    assert failures["error"].tolist() == [error]
    results = pd.read_csv(folder / "results.csv")
    assert set(results["backend"]) == {"amm"}


# -- the gravity-scale sweep -----------------------------------------------------------------


def test_gravity_scale_zero_is_the_undeformed_limit_and_the_frames_agree_there():
    """FEM clamped and pinned, with and without stiffening, along gravity_scale = 0, 1, 2: at 0
    the frequencies are those of the arm without gravity at the configuration (1e-12) and the
    two frames agree to 1e-10; at 1 those about the preset's own equilibrium; at 2 about the
    equilibrium under twice the gravity."""
    arm = lumped_two_link()
    settings = analysis(sweep_parameter="gravity_scale", sweep_values=[0.0, 1.0, 2.0])
    at_zero = {}
    for number, (frame, stiffening) in enumerate(
        [("clamped", None), ("pinned", None), ("clamped", True), ("pinned", True)], start=1
    ):
        case = Case(number, Discretization("fem", frame, 3, stiffening))
        rows = pd.DataFrame(KIND.run_case(arm, case, settings))
        assert rows["gravity_scale"].drop_duplicates().tolist() == [0.0, 1.0, 2.0]
        options = {"geometric_stiffening": True} if stiffening else {}
        for scale in (0.0, 1.0, 2.0):
            scaled = dataclasses.replace(arm, gravity=tuple(scale * g for g in arm.gravity))
            model, q = fem_at(scaled, POSE, elements=3, frame=frame, **options)
            omega = model.natural_frequencies(model.equilibrium(q).q, count=3)
            here = rows[rows["gravity_scale"] == scale]["omega"]
            np.testing.assert_allclose(here, omega, rtol=1e-12)
        undeformed, q = fem_at(lumped_two_link(gravity=False), POSE, elements=3, frame=frame, **options)
        zero = rows[rows["gravity_scale"] == 0.0]
        np.testing.assert_allclose(zero["omega"], undeformed.natural_frequencies(q, count=3), rtol=1e-12)
        assert (zero["sag_tip_displacement"] == 0).all()
        at_zero[(frame, stiffening)] = zero["omega"].to_numpy()
    for stiffening in (None, True):
        clamped, pinned = at_zero[("clamped", stiffening)], at_zero[("pinned", stiffening)]
        assert np.max(np.abs(pinned - clamped) / clamped) < 1e-10


@pytest.mark.parametrize(
    "keys, message",
    [
        (
            {"sweep_values": [-0.5, 1.0]},
            "analysis.sweep_values: a gravity scale must be >= 0, got [-0.5, 1.0]",
        ),
        (
            {"sweep_range": [0.0, 1e9]},
            "analysis.sweep_range: a gravity scale must be <= ",
        ),
    ],
)
def test_gravity_scale_values_are_checked(keys, message):
    settings = analysis(sweep_parameter="gravity_scale", **keys)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        KIND.validate(lumped_two_link(), settings)


def test_gravity_scale_needs_an_arm_with_gravity():
    settings = analysis(sweep_parameter="gravity_scale", sweep_values=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"analysis.sweep_parameter: gravity_scale scales the arm's gravity"):
        KIND.validate(lumped_two_link(gravity=False), settings)


def test_a_sweep_stops_where_the_model_has_no_equilibrium(tmp_path, monkeypatch):
    """Made to fail above gravity 10 m/s²: the FEM case's rows stop at gravity_scale = 1, a
    warning and the summary name the point, the AMM case runs to the end."""
    original = FiniteElementModel.equilibrium

    def weak(self, q=None, joints="locked", tau=None, tol=1e-10):
        if np.linalg.norm(self.arm.gravity) > 10.0:
            raise EquilibriumError("too heavy", np.zeros(self.n_dof), 1.0)
        return original(self, q, joints, tau, tol)

    monkeypatch.setattr(FiniteElementModel, "equilibrium", weak)
    sweep = 'sweep_parameter = "gravity_scale"\nsweep_values = [0.0, 1.0, 1.5, 2.0]'
    result, folder = run(tmp_path, config(sweep))
    assert result.ok
    results = pd.read_csv(folder / "results.csv")
    reached = results.groupby("backend")["point"].max()
    assert reached.to_dict() == {"amm": 4, "fem": 2}
    (warning,) = [w for w in result.warnings if "stops" in w]
    assert "the sweep of FEM clamped x2 stops at point 2 of 4 (gravity_scale = 1)" in warning
    assert "too heavy" in warning
    summary = (folder / "summary.md").read_text()
    assert "FEM clamped x2 after gravity_scale = 1 (point 2 of 4)" in summary
    agreement = pd.read_csv(folder / "agreement.csv")
    assert set(agreement[agreement["point"] > 2]["backend"]) == {"amm"}  # the finest left there


# -- the Bode diagram ----------------------------------------------------------------------------


def test_bode_is_the_state_space_response_about_the_equilibrium(tmp_path, monkeypatch):
    """analysis.bode: bode.csv holds 20 log10 |G(jω)| of tip_w2 / tau_j of each case's
    Model.state_space about its equilibrium (computed here, 1e-9 dB), pinned frames (zero tip
    deflection in the chord frame) left out and named; the figure follows the conventions."""
    from tests.test_figures import check_figure, run_config

    text = textwrap.dedent(
        f"""
        [study]
        name = "bode"
        kind = "frequencies"
        [arm]
        preset = "lumped-two-link"
        [sweep]
        backends = ["fem"]
        shapes = ["clamped-free", "pinned-pinned"]
        elements = [2]
        [analysis]
        configuration = [{POSE[0]!r}, {POSE[1]!r}]
        n_frequencies = 3
        bode = true
        """
    )
    figures, folder = run_config(text, tmp_path, monkeypatch)
    check_figure("bode", figures["bode"])
    table = pd.read_csv(folder / "bode.csv")
    assert set(table["shape"]) == {"clamped"} and set(table["input"]) == {"tau_1", "tau_2"}
    assert "left out (zero response" in (folder / "summary.md").read_text()
    model, q = fem_at(lumped_two_link(), POSE)
    system = model.state_space(model.equilibrium(q), outputs=["tip_deflection"])
    for name, rows in table.groupby("input"):
        response = system.frequency_response(rows["omega"].to_numpy(), output="tip_w2", input=name)
        np.testing.assert_allclose(rows["magnitude_db"], 20 * np.log10(np.abs(response)), atol=1e-9)


def test_bode_is_refused_along_a_sweep():
    settings = analysis(bode=True, sweep_parameter="theta2", sweep_values=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"analysis.bode: drawn at one configuration, not along a sweep"):
        KIND.validate(lumped_two_link(), settings)
