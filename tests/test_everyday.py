"""What an everyday run loads before its first case: the kind's warm-up builds no model larger
than the study's own lightest of each backend (the quickstart's warm-up built an 80-element
two-link arm and solved it densely, most of the run's memory), and what it is shown of the
study's cases (:func:`studies.runner.warm_cases`). Cost itself is measured by
``benchmarks/everyday.py``, not asserted here."""

from __future__ import annotations

import textwrap

import pytest

import amm
import fem
from studies import runner
from studies.config import build_arm, expand_cases, parse_config

QUICK = textwrap.dedent(
    """
    [study]
    name = "warm"
    kind = "convergence"

    [arm]
    preset = "one-flexible-link"

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-free", "pinned-pinned"]
    modes = [2, 1, 4]
    elements = [4, 2, 8]

    [analysis]
    joints = "locked"
    n_frequencies = 2
    """
)


def study(text: str = QUICK):
    import tomllib

    config = parse_config(tomllib.loads(text))
    return config, build_arm(config.arm), expand_cases(config)


def built_models(monkeypatch) -> list[tuple[str, int]]:
    """Every model the test builds from now on, as (class name, n_dof)."""
    built: list[tuple[str, int]] = []
    for cls in (amm.AssumedModesModel, fem.FiniteElementModel):
        original = cls.__init__

        def record(self, *args, _original=original, **kwargs):
            _original(self, *args, **kwargs)
            built.append((type(self).__name__, self.n_dof))

        monkeypatch.setattr(cls, "__init__", record)
    return built


def test_warm_cases_are_the_lightest_and_heaviest_of_each_backend():
    _, arm, cases = study()
    chosen = runner.warm_cases(arm, cases)
    by_backend: dict[str, list[int]] = {}
    for case in chosen:
        by_backend.setdefault(case.discretization.backend, []).append(case.discretization.size)
    assert {b: sorted(s) for b, s in by_backend.items()} == {"amm": [1, 4], "fem": [2, 8]}
    assert [c.number for c in chosen] == sorted(c.number for c in chosen)  # in the study's order


@pytest.mark.parametrize("kind", ["convergence", "frequencies"])
def test_the_warm_up_builds_no_model_larger_than_the_lightest_of_its_backend(kind, monkeypatch):
    config, arm, cases = study(QUICK.replace('kind = "convergence"', f'kind = "{kind}"'))
    analysis = runner.KINDS[kind].analysis_schema.model_validate(config.analysis)
    lightest = {
        backend: min(c.discretization.coordinates(arm) for c in cases if c.discretization.backend == backend)
        for backend in ("amm", "fem")
    }
    built = built_models(monkeypatch)
    monkeypatch.setattr(runner, "_WARM", set())
    seconds = runner._warm_up(
        kind, 1, arm.to_dict(), runner.warm_cases(arm, cases), analysis.model_dump(mode="json")
    )
    assert seconds is not None  # it ran and did not fail
    names = {"AssumedModesModel": "amm", "FiniteElementModel": "fem"}
    assert {names[name] for name, _ in built} == {"amm", "fem"}  # each backend's kernels loaded
    for name, n_dof in built:
        assert n_dof <= lightest[names[name]], (name, n_dof, lightest)


def test_the_warm_up_runs_once_per_process_and_kind(monkeypatch):
    config, arm, cases = study()
    analysis = runner.KINDS["convergence"].analysis_schema.model_validate(config.analysis)
    monkeypatch.setattr(runner, "_WARM", set())
    arguments = (
        "convergence",
        1,
        arm.to_dict(),
        runner.warm_cases(arm, cases),
        analysis.model_dump(mode="json"),
    )
    assert runner._warm_up(*arguments) is not None
    built = built_models(monkeypatch)
    assert runner._warm_up(*arguments) is None
    assert built == []


def test_a_forked_pool_is_warmed_up_once_in_the_parent(tmp_path, monkeypatch):
    """With forked workers the runner warms the kind up in its own process before the pool
    starts: the workers inherit it (imports, compiled kernels) and none of them warms up again,
    so no case records warm-up seconds; the parent's warm-up is the one shown the study's cases."""
    import json
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("workers are not forked here: each warms itself up")
    monkeypatch.setattr(runner, "_WARM", set())
    seen = []
    original = runner._warm_up

    def recorded(kind_name, blas_threads, arm_data, cases, analysis_data):
        seen.append(sorted(case.number for case in cases))
        return original(kind_name, blas_threads, arm_data, cases, analysis_data)

    monkeypatch.setattr(runner, "_warm_up", recorded)
    text = QUICK + '\n[execution]\nexecutor = "processes"\nworkers = 2\n'
    config, arm, cases = study(text)
    result = runner.run_study(config, output=tmp_path / "out", progress=False)
    assert result.ok and result.cases == len(cases)
    assert seen == [sorted(case.number for case in runner.warm_cases(arm, cases))]  # the parent, once
    records = [json.loads(path.read_text()) for path in sorted((tmp_path / "out" / "cases").glob("*.json"))]
    assert len(records) == len(cases) and all(record["warm_up"] is None for record in records)


#: Run in a fresh process (a test process has loaded kernels already): a study kind's warm-up,
#: then the study's heaviest case of each backend, counting the kernel overloads each phase adds
#: (loaded from numba's cache or compiled). Prints {"warm_up": [...], "cases": [...]}.
_FRESH_PROCESS = """
import json, sys, tomllib
import numba.core.dispatcher as dispatcher
from studies import runner
from studies.config import build_arm, expand_cases, parse_config

added = []
original = dispatcher.Dispatcher.compile

def compile(self, signature):
    before = len(self.overloads)
    result = original(self, signature)
    if len(self.overloads) > before:
        added.append(self.py_func.__qualname__)
    return result

dispatcher.Dispatcher.compile = compile
config = parse_config(tomllib.loads(sys.argv[1]))
arm, cases = build_arm(config.arm), expand_cases(config)
kind = runner.KINDS[config.study.kind]
analysis = kind.analysis_schema.model_validate(config.analysis)
shown = runner.warm_cases(arm, cases)
assert runner._warm_up(config.study.kind, 1, arm.to_dict(), shown, analysis.model_dump(mode="json")) is not None
warm, added[:] = list(added), []
for backend in dict.fromkeys(c.discretization.backend for c in cases):
    heaviest = max((c for c in cases if c.discretization.backend == backend),
                   key=lambda c: c.discretization.coordinates(arm))
    kind.run_case(arm, heaviest, analysis)
print(json.dumps({"warm_up": warm, "cases": added}))
"""


def _study(kind, preset, analysis="", shapes="clamped-free", modes=(1, 3), elements=(1, 3)) -> str:
    """A study of ``kind`` on ``preset`` sweeping both backends (or the assumed modes alone:
    ``elements=None``), TOML; ``analysis``: its [analysis] lines."""
    backends = '["amm"]' if elements is None else '["amm", "fem"]'
    sizes = f"modes = {list(modes)}" + ("" if elements is None else f"\nelements = {list(elements)}")
    return (
        f'[study]\nname = "warm-{kind}"\nkind = "{kind}"\n[arm]\npreset = "{preset}"\n'
        f'[sweep]\nbackends = {backends}\nshapes = ["{shapes}"]\n{sizes}\n[analysis]\n{analysis}\n'
    )


#: A one-link maneuver of the simulation kind (with ``controller`` unless prescribed).
_MANEUVER = (
    't_end = 0.05\noutput_points = 6\ntrajectory = { kind = "parabolic-blend", q_end = [0.3], T = 0.2, '
    "blend = 0.1 }\n"
)
_TRACKED = _MANEUVER + 'controller = { kind = "pd", kp = 5.0, kd = 0.5 }\n'

_STUDIES = {
    # the space arm's path: feed-forward torques read in the compiled DOP853 loop, two solvers
    "compiled DOP853": _study(
        "simulation",
        "space-arm-3link",
        't_end = 0.05\noutput_points = 6\ncontroller = { kind = "feed-forward" }\n'
        'trajectory = { kind = "cycloidal", k = [0.075, 0.05, 0.1], T = [10.0, 5.0, 5.0] }\n'
        'solver = ["composite", "recursive"]\nmethod = "DOP853"',
        modes=(1, 2),
        elements=(1, 2),
    ),
    # method "auto" on a PD-tracked arm
    "auto": _study("simulation", "one-flexible-link", _TRACKED),
    # LSODA calls its Jacobian only once it turns stiff: the warm-up's few steps take Radau
    "LSODA": _study("simulation", "one-flexible-link", _TRACKED + 'method = "LSODA"'),
    # prescribed motion (the spin-up's path)
    "prescribed": _study("simulation", "one-flexible-link", _MANEUVER + "prescribed = true"),
    # the engine side of the symbolic comparisons (the derivation itself is the case's)
    "symbolic": _study(
        "symbolic",
        "one-flexible-link",
        "check_states = 2\nbudget = 0.0\nlatex = false\noperations = false\npreview_characters = 0",
        modes=(1, 2),
        elements=None,
    ),
    # the linearization of the zero dynamics
    "zero-dynamics": _study("zero-dynamics", "one-flexible-link"),
    # the property checks and the energy-conservation simulation (compiled DOP853)
    "verify": _study(
        "verify", "azimuth-elevation", "samples = 2\nsimulate = 0.01", modes=(1, 2), elements=(1, 2)
    ),
    # the translating link's eigenvalues, tabulated prescribed simulation and energy rows
    "stability": _study(
        "stability",
        "rrp-translating",
        "lengths = [0.9, 1.0]\nstart = [0.0, 0.0]\nend = [0.1, -0.1]\nT = 0.02\nblend = 0.01\n"
        'eigen_points = 3\noutput_points = 5\nmethod = "LSODA"',
        shapes="clamped-mass",
        modes=(1, 2),
        elements=(1, 2),
    ),
}


@pytest.mark.parametrize("name", sorted(_STUDIES))
def test_the_warm_up_loads_every_kernel_the_cases_call(name):
    """After a study's warm-up (a short run of the lightest case of each backend),
    the heaviest cases load no compiled kernel: a forked pool's workers inherit them all, and
    no case's (or first solver's) wall time carries their loading. The warm-up itself must
    have loaded some, or the check would pass for a study that calls none."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, _STUDIES[name]],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["warm_up"], "the warm-up loaded no kernel"
    assert loaded["cases"] == [], loaded


def test_a_resumed_run_warms_up_for_the_cases_it_computes(tmp_path, monkeypatch):
    """The warm-up is shown the cases a run computes, not those a resume reuses: a study whose
    assumed-modes cases are finished warms up for its finite-element cases alone."""
    monkeypatch.setattr(runner, "_WARM", set())
    seen: list[set[str]] = []
    original = runner._warm_up

    def recorded(kind_name, blas_threads, arm_data, cases, analysis_data):
        if kind_name not in runner._WARM:  # it runs (once per process and kind)
            seen.append({case.discretization.backend for case in cases})
        return original(kind_name, blas_threads, arm_data, cases, analysis_data)

    monkeypatch.setattr(runner, "_warm_up", recorded)
    serial = QUICK + '\n[execution]\nexecutor = "serial"\n'
    amm_only, _, _ = study(serial.replace('backends = ["amm", "fem"]', 'backends = ["amm"]'))
    assert runner.run_study(amm_only, output=tmp_path / "out", progress=False).ok
    assert seen == [{"amm"}]
    monkeypatch.setattr(runner, "_WARM", set())
    both, _, _ = study(serial)
    assert runner.run_study(both, output=tmp_path / "out", resume=True, progress=False).ok
    assert seen[1:] == [{"fem"}]


def test_the_progress_bar_says_when_the_parent_warms_up(tmp_path, monkeypatch, capsys):
    """Before a forked pool starts, the parent's warm-up (minutes when a machine's first run
    compiles the kernels) is named on the progress bar, not a silent wait."""
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("workers are not forked here: each warms itself up")
    monkeypatch.setattr(runner, "_WARM", set())
    config, _, _ = study(QUICK + '\n[execution]\nexecutor = "processes"\nworkers = 2\n')
    assert runner.run_study(config, output=tmp_path / "out", progress=True).ok
    assert runner.WARMING_UP in capsys.readouterr().err
