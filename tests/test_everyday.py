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
