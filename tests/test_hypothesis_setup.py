"""The hypothesis set-up of ``tests/conftest.py``: under the ``ci`` profile no local constants
enter the draws, so a module loaded or a literal edited elsewhere changes no drawn example."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import constants_from_module, is_local_module_file

from tests.conftest import PROFILE


@pytest.mark.skipif(PROFILE != "ci", reason="the dev profile keeps hypothesis's local constants")
def test_no_local_constant_enters_the_draws(tmp_path):
    path = tmp_path / "flexlink_late_module.py"
    path.write_text("LATE = 0.123456789012345\nNAME = 'a-late-literal'\n")
    spec = importlib.util.spec_from_file_location("flexlink_late_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        pool = providers._get_local_constants()
    finally:
        del sys.modules[spec.name]
    # A module hypothesis would harvest (local, its literals found) adds nothing to the draws.
    assert is_local_module_file(str(path))
    assert 0.123456789012345 in constants_from_module(module).floats
    assert len(pool) == 0
