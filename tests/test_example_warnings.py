"""The shipped lumped-free-vibration example runs without a RuntimeWarning.

It used to warn "overflow encountered in multiply". The cause: Radau got SciPy's finite-
difference Jacobian (``scipy.integrate._ivp.common.num_jac``), which grows the step of every
column the right-hand side does not depend on (the two work integrals) tenfold per Jacobian
without bound until the products overflow. Measured on this example (4 s, rtol 1e-7):
``simulate(..., jacobian=False)`` raises four such warnings, from common.py lines 326, 356,
357 and 378, all after t = 1.5 s; the default (the model's compiled Jacobian) raises none.
This test runs the example's case with every RuntimeWarning an error.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import studies.configs
from studies.config import build_arm, expand_cases, load_config
from studies.kinds import KINDS


@pytest.mark.slow
def test_lumped_free_vibration_runs_without_overflow():
    config = load_config(Path(studies.configs.__file__).parent / "lumped-free-vibration.toml")
    kind = KINDS[config.study.kind]
    analysis = kind.analysis_schema.model_validate(config.analysis)
    (case,) = expand_cases(config)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rows = kind.run_case(build_arm(config.arm), case, analysis)
    assert rows[-1]["time"] == analysis.t_end
