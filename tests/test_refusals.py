"""Absurd inputs are refused before any work: exit 2 and one line
``flexlink: error: <key path>: <what>, got <value>`` from ``flexlink show``, which never runs a case.

The table of the issue row by row; the bounds of the arm (:mod:`core.arm`), of the counts
and durations of the schemas and of the machine (:func:`studies.config.check_limits`, lifted
by ``--force``); repeated cases.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.arm import Arm, Damping, Joint, Link, LumpedMass, Payload
from studies import cli
from studies.config import check_limits, parse_config
from studies.errors import ConfigError
from studies.limits import MAX_VALUES, cores

HEAD = """
[study]
name = "absurd"
kind = "{kind}"

[arm]
preset = "lumped-two-link"

[sweep]
backends = ["amm"]
modes = [1]
"""

INLINE_ARM = """
[study]
name = "inline"
kind = "frequencies"

[arm]

[[arm.links]]
kind = "flexible"
length = {length}
mass_per_length = 1.0
EI = 1.0

[sweep]
backends = ["amm"]
modes = [1]
"""


def config(kind: str, analysis: str = "") -> str:
    text = HEAD.format(kind=kind)
    if kind == "simulation":
        analysis = "t_end = 0.1\n" + analysis
    return text + ("\n[analysis]\n" + analysis if analysis else "")


def refused(tmp_path: Path, capsys, text: str, *args: str) -> str:
    """The one line of `flexlink show` refusing ``text`` (exit 2 asserted)."""
    path = tmp_path / "absurd.toml"
    path.write_text(text)
    assert cli.main(["show", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("flexlink: error: "), err
    return err.strip()


MODES_200000 = "modes = [" + ", ".join(["1"] * 200_000) + "]"

#: Absurd inputs: (config text, the exact line of the refusal).
TABLE = {
    "configuration-nan": (
        config("frequencies", "configuration = [nan, 0.0]"),
        "flexlink: error: analysis.configuration[1]: must be finite, got nan",
    ),
    "t_end-inf": (
        config("simulation").replace("t_end = 0.1", "t_end = inf"),
        "flexlink: error: analysis.t_end: must be finite, got inf",
    ),
    "length-1e-300": (
        INLINE_ARM.format(length="1e-300"),
        "flexlink: error: arm.links[1]: length must be in [1e-06, 1e+06] m (m·L² and m share one mass "
        "matrix: within 1e12 of each other), got 1e-300",
    ),
    "sweep_points-1e9": (
        config(
            "frequencies", 'sweep_parameter = "theta1"\nsweep_range = [0.0, 1.0]\nsweep_points = 1000000000'
        ),
        "flexlink: error: analysis.sweep_points: must be <= 10000 (as many as sweep_values may hold), "
        "got 1000000000",
    ),
    "modes-200000-entries": (
        config("frequencies").replace("modes = [1]", MODES_200000),
        f"flexlink: error: sweep.modes: must hold at most {MAX_VALUES} values (no key of a study needs "
        "more), got a list of 200000 values",
    ),
    "output_points-1e9": (
        config("simulation", "output_points = 1000000000"),
        "flexlink: error: analysis.output_points: must be <= 1000000 (a row of every case each, gigabytes "
        "of results), got 1000000000",
    ),
    "chain_links-100000": (
        config("timing", "chain_links = [100000]"),
        "flexlink: error: analysis.chain_links[1]: must be <= 10000 (a chain of n links has at least 2n "
        "coordinates: dense matrices of gigabytes, O(n^3) work per call), got 100000",
    ),
    "samples-1e9": (
        config("verify", "samples = 1000000000"),
        "flexlink: error: analysis.samples: must be <= 1000000 (four mass matrices and a forward dynamics "
        "each: days of work per case), got 1000000000",
    ),
    "blas_threads-100000": (
        config("frequencies") + "\n[execution]\nblas_threads = 100000\n",
        "flexlink: error: execution.blas_threads: must be <= 1024 (no machine has that many cores), "
        "got 100000",
    ),
    "modes-repeated": (
        config("frequencies").replace("modes = [1]", "modes = [2, 2]"),
        "flexlink: error: sweep.modes[2]: repeats sweep.modes[1] (each value runs once), got 2",
    ),
}


@pytest.mark.parametrize("row", sorted(TABLE))
def test_the_table_of_issue_27_is_refused_in_one_line(row, tmp_path, capsys):
    text, line = TABLE[row]
    assert refused(tmp_path, capsys, text) == line
    path = tmp_path / "absurd.toml"
    assert cli.main(["run", str(path), "--output", str(tmp_path / "out")]) == 2  # run refuses as show does
    assert capsys.readouterr().err.strip() == line
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds allocations on Linux")
def test_the_table_is_refused_without_allocating(tmp_path):
    """Every row in one fresh process whose address space is capped at 4 GiB: the sweep of 10⁹
    points allocated 7.45 GiB in the frequencies kind's validation before it was bounded."""
    paths = []
    for row, (text, _) in sorted(TABLE.items()):
        path = tmp_path / f"{row}.toml"
        path.write_text(text)
        paths.append(str(path))
    script = textwrap.dedent(
        f"""
        import contextlib, io, json, resource
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        from studies import cli
        lines = []
        for path in {paths!r}:
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(["show", path])
            lines.append([code, err.getvalue().strip()])
        print(json.dumps(lines))
        """
    )
    environment = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **environment},
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[2, line] for _, line in (TABLE[row] for row in sorted(TABLE))]


# -- the arm: bounds that keep the model meaningful in double precision ------------------

BAD_ARM_VALUES = [
    (lambda: Link.rigid(1e-7, 1.0), "link: length must be in [1e-06, 1e+06] m"),
    (lambda: Link.rigid(2e6, 1.0), "link: length must be in [1e-06, 1e+06] m"),
    (lambda: Link.rigid(1.0, 1e-300), "link: mass must be in [1e-15, 1e+15] kg"),
    (lambda: Link.rigid(1.0, 1e16), "link: mass must be in [1e-15, 1e+15] kg"),
    (lambda: Link.rigid(1.0, 1.0, com=2e6), "link: com must be in [-1e+06, 1e+06] m"),
    (lambda: Link.rigid(1.0, 1.0, com=(0.0, -2e6, 0.0)), "link: com.y must be in [-1e+06, 1e+06] m"),
    (lambda: Link.rigid(1.0, 1.0, inertia=1e28), "link: inertia must be <= 1e+27 kg m^2"),
    (lambda: Link.rigid(1.0, 1.0, inertia=[[1e28, 0, 0], [0, 1, 0], [0, 0, 1]]), "link: inertia must be <="),
    (lambda: Link.flexible(1.0, 1e-16, 1.0), "link: mass_per_length must be in [1e-15, 1e+15] kg/m"),
    (lambda: Link.flexible(1.0, 1.0, 1e16), "link: EI must be in [1e-15, 1e+15] N m^2"),
    (lambda: Link.flexible(1.0, 1.0, 1.0, EI_out=-1.0), "link: EI_out must be > 0, got -1.0"),
    (
        lambda: Link.flexible(1e-6, 1.0, 1.0),
        "link: sqrt(EI/(mass_per_length·length^4)) must be in [1e-10, 1e+10] rad/s ",
    ),
    (
        lambda: Link.flexible(1e3, 1e3, 1e-12),
        "link: sqrt(EI/(mass_per_length·length^4)) must be in [1e-10, 1e+10] rad/s",
    ),
    (
        lambda: Link.flexible(100.0, 1.0, 1e6, EI_out=1e-15),
        "link: sqrt(EI_out/(mass_per_length·length^4)) must be in",
    ),
    (
        lambda: Link.flexible(1e6, 1e10, 1e15),
        "link: the total mass (beam, lumped masses, tip payload) must be <= 1e+15 kg",
    ),
    (
        lambda: Link.flexible(
            1.0, 1.0, 1.0, tip_payload=Payload(1.0, 1e27), lumped_masses=[LumpedMass(0.5, 1.0, 1e27)]
        ),
        "link: the inertia of the link as one rigid body (its inertias and total mass · length^2) must be <= 1e+27 kg m^2",
    ),
    (lambda: LumpedMass(0.1, 1e16), "lumped mass: mass must be <= 1e+15 kg"),
    (lambda: LumpedMass(0.1, 1.0, 1e28), "lumped mass: inertia must be <= 1e+27 kg m^2"),
    (lambda: Payload(1e16), "payload: mass must be <= 1e+15 kg"),
    (lambda: Payload(1.0, 1e28), "payload: inertia must be <= 1e+27 kg m^2"),
    (lambda: Damping.modal(1e4), "damping: ratios[1] must be <= 1000 (a thousand times critical"),
    (lambda: Damping.rayleigh(1e11, 0.0), "damping: alpha must be <= 1e+10 1/s"),
    (lambda: Damping.rayleigh(0.0, 1e11), "damping: beta must be <= 1e+10 s"),
    (lambda: Joint(a=2e6), "joint: a must be in [-1e+06, 1e+06] m"),
    (lambda: Joint(d=-2e6), "joint: d must be in [-1e+06, 1e+06] m"),
    (lambda: Joint(alpha=1e7), "joint: alpha must be in [-1e+06, 1e+06] rad"),
    (lambda: Joint(theta_offset=1e300), "joint: theta_offset must be in [-1e+06, 1e+06] rad"),
    (lambda: Joint(hub_mass=1e16), "joint: hub_mass must be <= 1e+15 kg"),
    (lambda: Joint(hub_inertia=1e28), "joint: hub_inertia must be <= 1e+27 kg m^2"),
    (lambda: Joint(motor_inertia=1e28), "joint: motor_inertia must be <= 1e+27 kg m^2"),
    (lambda: Joint(gear_ratio=1e7), "joint: gear_ratio must be in [1e-06, 1e+06] (reflected"),
    (lambda: Joint(viscous_friction=1e16), "joint: viscous_friction must be <= 1e+15 ("),
    (lambda: Joint(coulomb_friction=1e16), "joint: coulomb_friction must be <= 1e+15 ("),
    (
        lambda: Arm.planar([Link.rigid(1.0, 1.0)], gravity=(0.0, -1e7)),
        "arm: gravity must have components in [-1e+06, 1e+06] m/s^2",
    ),
]


@pytest.mark.parametrize("build, message", BAD_ARM_VALUES)
def test_the_arm_refuses_values_without_meaning_in_double_precision(build, message):
    with pytest.raises(ValueError) as refused:
        build()
    assert message in str(refused.value)


def test_the_arm_bounds_admit_the_presets_and_wide_ranges():
    from core.arm.presets import PRESETS

    for factory in PRESETS.values():
        factory()
    Link.flexible(1e-3, 1e-3, 1e3)  # the corners the random arms of tests/test_arm.py reach
    Link.flexible(1e3, 1e3, 1e-3)
    Link.rigid(1e-6, 1e-15)
    Link.rigid(1e6, 1e9)
    Joint(gear_ratio=160.0, alpha=-math.pi / 2, d=1e6)


def test_arm_refusals_name_the_table_in_a_config(tmp_path, capsys):
    line = refused(tmp_path, capsys, INLINE_ARM.format(length="1.0").replace("EI = 1.0", "EI = 1e20"))
    assert line.startswith("flexlink: error: arm.links[1]: EI must be in [1e-15, 1e+15] N m^2 (")
    assert line.endswith("got 1e+20")
    text = config("frequencies").replace(
        'preset = "lumped-two-link"', 'preset = "lumped-two-link"\ngravity = [0.0, -1e7, 0.0]'
    )
    assert "arm: gravity must have components in [-1e+06, 1e+06] m/s^2" in refused(tmp_path, capsys, text)


# -- the schemas: durations, tolerances, joint values --------------------------------------

SCHEMA_BOUNDS = [
    (
        config("simulation").replace("t_end = 0.1", "t_end = 1e7"),
        "analysis.t_end: must be <= 1e+06 (11.6 days",
    ),
    (
        config("simulation", "rtol = 2.0"),
        "analysis.rtol: must be <= 1 (a tolerance above 1 accepts any answer)",
    ),
    (config("simulation", "deflection_limit = 1e7"), "analysis.deflection_limit: must be <= 1e+06"),
    (config("simulation", "report_times = [0.1, 1e9]"), "analysis.report_times[2]: must be <= 1e+06"),
    (config("simulation", "q0 = [0.0, 1e7]"), "analysis.q0[2]: must be in [-1e+06, 1e+06] (as the arm's"),
    (config("frequencies", "configuration = [-1e29, 0.0]"), "analysis.configuration[1]: must be in [-1e+06,"),
    (
        config("frequencies", "configuration = [1e31, 0.0]"),
        "analysis.configuration[1]: must be at most 1e+30 in",
    ),
    (
        config("frequencies", 'sweep_parameter = "payload_mass"\nsweep_values = [1.0, 1e16]'),
        "analysis.sweep_values: a payload mass must be <= 1e+15 kg (as core.arm.Payload's), got [1.0, 1e+16]",
    ),
    (
        config("frequencies", 'sweep_parameter = "theta2"\nsweep_values = [1.0, 1e7]'),
        "analysis.sweep_values: joint values must be in [-1e+06, 1e+06] rad or m",
    ),
    (config("verify", "simulate = 1e7"), "analysis.simulate: must be <= 1e+06"),
    (config("verify", "tolerance = 10.0"), "analysis.tolerance: must be <= 1"),
    (
        config("verify", "flex_scale = 1e7"),
        "analysis.flex_scale: must be <= 1e+06 (the arm's largest length)",
    ),
    (config("verify", "n_frequencies = 1000000"), "analysis.n_frequencies: must be <= 100000"),
    (config("timing", "budget = 1e9"), "analysis.budget: must be <= 1e+06"),
    (config("symbolic", "preview_characters = 10000000"), "analysis.preview_characters: must be <= 1000000"),
    (
        config("frequencies").replace("modes = [1]", "modes = [1000000]"),
        "sweep.modes[1]: must be <= 100000 (",
    ),
    (
        config("frequencies").replace("modes = [1]", "modes = [" + ", ".join(map(str, range(1, 1002))) + "]"),
        "sweep.modes: must hold at most 1000 values (each value is a case of every backend and family)",
    ),
    (
        config("frequencies") + "\n[execution]\nexecutor = 'processes'\nworkers = 5000\n",
        "execution.workers: must be <= 1024",
    ),
    (config("verify", "seed = 99999999999999999999"), "analysis.seed: must be a 64-bit integer (as TOML has"),
]


@pytest.mark.parametrize("text, message", SCHEMA_BOUNDS)
def test_durations_tolerances_and_joint_values_are_bounded(text, message, tmp_path, capsys):
    assert message in refused(tmp_path, capsys, text)


def test_union_members_and_tags_are_not_part_of_the_key_path(tmp_path, capsys):
    base = config("simulation", "controller = { kind = 'pd', kp = 'x' }")
    assert refused(tmp_path, capsys, base).startswith("flexlink: error: analysis.controller.kp: ")
    solver = config("simulation", "solver = 3")
    assert refused(tmp_path, capsys, solver).startswith("flexlink: error: analysis.solver: must be one of")
    circle = config(
        "simulation",
        "trajectory = { kind = 'circle', center = [0.67, 0.34], radius = 0.1, omega = 1.0, elbow = 3 }",
    )
    assert refused(tmp_path, capsys, circle) == (
        "flexlink: error: analysis.trajectory.elbow: must be one of 1 or -1, got 3"
    )


# -- repeated cases ------------------------------------------------------------------------

REPEATS = [
    (
        config("frequencies").replace('backends = ["amm"]', 'backends = ["amm", "fem", "amm"]'),
        "sweep.backends[3]: repeats sweep.backends[1] (each value runs once), got 'amm'",
    ),
    (
        config("frequencies").replace('backends = ["amm"]', 'backends = ["fem"]\nelements = [4, 2, 4]'),
        "sweep.elements[3]: repeats sweep.elements[1]",
    ),
    (
        config("frequencies") + 'shapes = ["clamped-free", "clamped-free"]\n',
        "sweep.shapes[2]: repeats sweep.shapes[1]",
    ),
    (
        config("timing", 'solvers = ["recursive", "recursive"]'),
        "analysis.solvers[2]: repeats analysis.solvers[1]",
    ),
    (
        config("timing", "chain_links = [2, 4, 2]"),
        "analysis.chain_links[3]: repeats analysis.chain_links[1] (each value runs once), got 2",
    ),
    (
        config("simulation", 'solver = ["composite", "composite"]'),
        "analysis.solver[2]: repeats analysis.solver[1]",
    ),
    (
        config("frequencies") + '\n[report]\nformats = ["csv", "csv"]\n',
        "report.formats[2]: repeats report.formats[1]",
    ),
]


@pytest.mark.parametrize("text, message", REPEATS)
def test_a_repeated_case_is_refused(text, message, tmp_path, capsys):
    assert message in refused(tmp_path, capsys, text)


def test_joint_values_and_gains_may_repeat():
    data = {
        "study": {"name": "same", "kind": "simulation"},
        "arm": {"preset": "lumped-two-link"},
        "sweep": {"backends": ["amm"], "modes": [1]},
        "analysis": {
            "t_end": 0.1,
            "q0": [0.5, 0.5],
            "controller": {"kind": "pd", "kp": [5.0, 5.0], "kd": 1.0},
            "trajectory": {"kind": "parabolic-blend", "q_end": [0.5, 0.5], "T": 0.1, "blend": 0.05},
        },
    }
    parse_config(data)


# -- what this machine can run: refused unless --force ---------------------------------------


def _parsed(text: str):
    import tomllib

    return parse_config(tomllib.loads(text))


SOFT = [
    (config("verify", "samples = 20000"), "analysis.samples: must be <= 10000 without --force"),
    (
        config("simulation", "output_points = 200000"),
        "analysis.output_points: must be <= 100000 without --force",
    ),
    (config("timing", "chain_links = [2, 300]"), "analysis.chain_links[2]: must be <= 256 without --force"),
    (
        config("frequencies", 'sweep_parameter = "theta1"\nsweep_range = [0.0, 1.0]\nsweep_points = 5000'),
        "analysis.sweep_points: must be <= 1000 without --force (each point is an eigen-solve of every case; "
        "use --force to run it anyway), got 5000",
    ),
    (config("symbolic", "check_states = 5000"), "analysis.check_states: must be <= 1000 without --force"),
    (
        config("frequencies") + f"\n[execution]\nblas_threads = {cores() + 1}\n",
        f"execution.blas_threads: must be <= {cores()} without --force (the cores of this machine",
    ),
    (
        config("frequencies") + f"\n[execution]\nexecutor = 'processes'\nworkers = {2 * cores() + 1}\n",
        f"execution.workers: must be <= {2 * cores()} without --force (twice the {cores()} cores",
    ),
]


@pytest.mark.parametrize("text, message", SOFT)
def test_long_runs_need_force(text, message):
    parsed = _parsed(text)  # valid in any context (a forced run's config.toml reloads)
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        check_limits(parsed)
    check_limits(parsed, force=True)


def test_force_is_about_this_machine_only():
    text = (
        config("frequencies")
        + "\n[execution]\nexecutor = 'dask'\nscheduler = 'tcp://10.0.0.1:8786'\nworkers = 1000\nblas_threads = 1000\n"
    )
    check_limits(_parsed(text))  # a remote cluster's cores are not this machine's
    serial = config("frequencies") + f"\n[execution]\nblas_threads = {cores()}\n"
    check_limits(_parsed(serial))
    processes = _parsed(config("frequencies") + "\n[execution]\nexecutor = 'processes'\n")
    with pytest.raises(ConfigError, match=rf"^--workers: must be <= {2 * cores()} without --force"):
        check_limits(processes, workers=1000)
    check_limits(processes, force=True, workers=1000)
    with pytest.raises(ConfigError, match=r"^--workers: must be <= 1024 \(no machine has that many cores\)"):
        check_limits(processes, force=True, workers=10**6)


def test_every_shipped_example_is_within_the_limits_of_this_machine():
    import tomllib

    for path in cli.examples().values():
        check_limits(parse_config(tomllib.loads(path.read_text())))
