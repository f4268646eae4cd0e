"""The same case gives byte-identical rows whatever ran before it in its process.

A resumed run, a fresh worker and a long serial run differ only in what their process did
before the case: other cases, the kind's warm-up, or nothing. Two sources made rows depend
on that history, each checked here:

* the Lanczos eigen-solves (``eigsh``, :mod:`core.dynamics.structured` and :mod:`fem.eigen`) started
  from a vector SciPy draws from fresh entropy at every call: every run converged to other
  round-off (frequencies of fine meshes 1e-15 relative apart). They start from
  :func:`core.dynamics.structured.lanczos_start` now;
* SciPy's own OpenBLAS, loaded on first use, i.e. inside the first case's
  ``threadpool_limits``, which only reach the libraries already loaded: that case ran
  SciPy's LAPACK with the default thread count and the later ones with ``blas_threads``
  (LU, Cholesky and eigh of n ≥ 100 round differently with the threads: simulations of
  large models 1e-14 apart in the angles, 1e-8 in the rates, other step counts).

Each history runs in its own subprocess (the histories are process states), with the rows
written as the runner writes them (``pandas.DataFrame(rows).to_csv(index=False)``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: Runs the cases ``order`` of the config in one process, the runner's way, and prints each
#: case's rows as the runner writes them; ``warm`` false skips the kind's warm-up, ``executor``
#: names a studies.executors executor (two workers), ``probe`` registers the BLAS probe kind.
CHILD = textwrap.dedent(
    """
    import json, sys
    import pandas as pd

    spec = json.loads(sys.argv[1])
    from studies import runner
    from studies.config import build_arm, expand_cases, parse_config
    from studies.executors import EXECUTORS
    from studies.kinds import KINDS

    if spec.get("probe"):
        from pydantic import BaseModel
        from studies.kinds.base import StudyKind

        class Nothing(BaseModel):  # the probe kind takes no analysis keys
            model_config = {"extra": "forbid"}

        class BlasProbe(StudyKind):
            analysis_schema = Nothing

            def run_case(self, arm, case, analysis):
                import scipy.linalg  # noqa: F401  first use inside a case, as the library's own imports
                from threadpoolctl import threadpool_info

                return [
                    {**case.columns(), "library": info["filepath"], "threads": info["num_threads"]}
                    for info in threadpool_info()
                    if info["user_api"] == "blas"
                ]

            def report(self, results, arm, analysis, folder, plots):
                return []

        KINDS[spec["probe"]] = BlasProbe()

    import tomllib
    config = parse_config(tomllib.loads(spec["config"]))
    name = spec.get("probe") or config.study.kind
    kind = KINDS[name]
    analysis = {} if spec.get("probe") else kind.analysis_schema.model_validate(config.analysis).model_dump(mode="json")
    arm = build_arm(config.arm).to_dict()
    cases = {case.number: case for case in expand_cases(config)}
    tasks = [(name, arm, cases[n], analysis, config.execution.blas_threads, None) for n in spec["order"]]
    if not spec.get("warm", True):
        runner._WARM.add(name)
    executor = EXECUTORS[spec.get("executor", "serial")]
    out = {}
    for _, outcome in executor(runner.execute_case, tasks, 2, None):
        assert outcome["status"] == "ok", outcome["traceback"]
        rows = pd.DataFrame(outcome["rows"]).drop(columns=["wall_time_s"], errors="ignore")
        out[outcome["case"]] = rows.to_csv(index=False)
    print(json.dumps(out))
    """
)


def _rows(config: str, order: list[int], blas_default: int = 2, **options) -> dict[int, str]:
    """Case number → CSV text of the cases ``order`` run in that order in a fresh process whose
    BLAS libraries default to ``blas_default`` threads (as on a machine with that many cores)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(blas_default)}
    spec = json.dumps({"config": config, "order": order, **options})
    done = subprocess.run(
        [sys.executable, "-c", CHILD, spec],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


# -- the Lanczos starting vector ------------------------------------------------------------


def _fine_mesh():
    import fem
    from core.arm.presets import lumped_two_link

    arm = dataclasses.replace(lumped_two_link(), gravity=(0.0, 0.0, 0.0))
    return fem.FiniteElementModel(arm, elements=40)  # 162 coordinates: the structured eigen-solve


def test_structured_frequencies_are_the_same_at_every_call():
    model = _fine_mesh()
    q = model.home()
    q[:2] = 0.7853981633974483, -0.7853981633974483
    results = {model.natural_frequencies(q, count=3).tobytes() for _ in range(4)}
    assert len(results) == 1  # a random start: 4 different round-offs (measured)


def test_structured_mode_shapes_are_the_same_at_every_call():
    model = _fine_mesh()
    results = {
        b"".join(a.tobytes() for a in model.natural_frequencies(model.home(), count=2, vectors=True))
        for _ in range(3)
    }
    assert len(results) == 1


def test_beam_frequencies_are_the_same_at_every_call():
    from fem.eigen import DENSE_LIMIT, beam_frequencies

    elements = DENSE_LIMIT  # 2 · elements unknowns: above DENSE_LIMIT, the Lanczos path
    results = {beam_frequencies(2.0, 3.0, 1.5, elements, n=4).tobytes() for _ in range(4)}
    assert len(results) == 1


def test_lanczos_start_is_fixed():
    from core.dynamics.structured import lanczos_start

    first, second = lanczos_start(50), lanczos_start(50)
    assert first.tobytes() == second.tobytes()
    assert first.shape == (50,)
    assert 0.1 < first.std() < 1.0  # generic: not a constant or a single coordinate


# -- whole cases in different process histories ------------------------------------------------

FINE_MESH_STUDY = textwrap.dedent(
    """
    [study]
    name = "history"
    kind = "convergence"

    [arm]
    preset = "lumped-two-link"
    gravity = [0.0, 0.0, 0.0]

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-mass"]
    modes = [2]
    elements = [40, 48]

    [analysis]
    configuration = [0.7853981633974483, -0.7853981633974483]
    n_frequencies = 3
    """
)


def test_fine_mesh_case_alone_after_other_cases_and_in_a_pool():
    """Case 2 (structured eigen-solve) first in a fresh process, after the other cases without
    the warm-up, and in a pool of two workers: the same bytes (one BLAS thread by default, so
    that only the eigen-solve's own start is compared)."""
    alone = _rows(FINE_MESH_STUDY, [2], blas_default=1)[2]
    after = _rows(FINE_MESH_STUDY, [3, 1, 2], blas_default=1, warm=False)
    pooled = _rows(FINE_MESH_STUDY, [1, 2, 3], blas_default=1, executor="processes")
    assert alone.count("\n") == 4  # header and three frequencies
    assert after[2] == alone
    assert pooled[2] == alone
    assert pooled[3] == after[3]


PROBE_STUDY = textwrap.dedent(
    """
    [study]
    name = "probe"
    kind = "convergence"

    [arm]
    preset = "one-flexible-link"

    [sweep]
    backends = ["amm"]
    shapes = ["clamped-free"]
    modes = [1, 2]

    [execution]
    blas_threads = 1
    """
)

#: With one core OpenBLAS runs one thread whatever it is told: nothing to tell apart.
SEVERAL_CORES = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")


@SEVERAL_CORES
def test_every_blas_library_is_limited_in_the_first_case_of_a_process():
    rows = _rows(PROBE_STUDY, [1, 2], probe="blas-probe")
    for number in (1, 2):
        lines = rows[number].splitlines()[1:]
        assert len(lines) == 2, rows[number]  # numpy's OpenBLAS and SciPy's
        assert all(line.endswith(",1") for line in lines), rows[number]


SIMULATION_STUDY = textwrap.dedent(
    """
    [study]
    name = "history-simulation"
    kind = "simulation"

    [arm]
    preset = "lumped-two-link"

    [sweep]
    backends = ["amm", "fem"]
    shapes = ["clamped-mass"]
    modes = [1]
    elements = [1]

    [analysis]
    t_end = 0.5
    controller = { kind = "pd", kp = 125.0, kd = 25.0 }
    trajectory = { kind = "parabolic-blend", q_end = [0.7853981633974483, -0.7853981633974483], T = 0.5, blend = 0.2 }
    method = "Radau"
    rtol = 1e-7
    atol = 1e-9
    output_points = 11
    """
)


@SEVERAL_CORES
def test_simulation_case_first_in_its_process_and_after_another():
    """A resumed run's first case against the same case of an uninterrupted run: Radau's complex
    LU solves (SciPy's zgetrs) round differently with two threads even on 6 coordinates
    (measured: 1e-9 in the angles, other step counts)."""
    alone = _rows(SIMULATION_STUDY, [2])[2]
    after = _rows(SIMULATION_STUDY, [1, 2])[2]
    assert alone.count("\n") == 12  # header and 11 output times
    assert after == alone
