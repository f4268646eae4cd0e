"""amm.symbolic's derivation cache (amm.symbolic.store): keyed by the arm, reused by another
process, never stale, cleared by ``flexlink cache clear``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from amm.symbolic import derive, store
from core import Arm, Link, Payload
from studies.cli import main

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = """
import json
import numpy as np
from amm.symbolic import derive, store
from core import Arm, Link
arm = Arm.planar([Link.rigid(0.5, 1.0) if k % 2 == 0 else Link.flexible(0.5, 0.5, 10.0) for k in range(6)],
                 gravity=(0.0, -9.81))
eom = derive(arm, modes=2)
model = eom.to_numeric()
q = np.linspace(-1.0, 1.0, model.n_dof)
print(json.dumps({"origin": eom.origin, "counters": store.COUNTERS, "seconds": eom.seconds,
                  "M": model.mass_matrix(q).tolist(), "h": model.bias_forces(q, q[::-1]).tolist()}))
"""


def _run(tmp_path: Path) -> dict:
    env = dict(os.environ, FLEXLINK_SYMBOLIC_CACHE=str(tmp_path), OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_derivation_and_its_generated_code(tmp_path):
    first, second = _run(tmp_path), _run(tmp_path)
    assert first["origin"] == "derived" and first["counters"]["derived"] == 1
    assert first["counters"]["stored"] == 1 and first["counters"]["numeric_loaded"] == 0
    assert second["origin"] == "cache" and second["counters"]["derived"] == 0
    assert second["counters"]["loaded"] == 1 and second["counters"]["numeric_loaded"] == 2
    assert second["M"] == first["M"] and second["h"] == first["h"]  # the same code, bit for bit
    assert len(list(tmp_path.glob("eom-*/eom.pkl"))) == 1


def _chain(payload: float = 0.0) -> Arm:
    return Arm.planar(
        [Link.rigid(0.5, 1.0), Link.flexible(0.5, 0.5, 10.0)],
        payload=Payload(payload) if payload else None,
        gravity=(0.0, -9.81),
    )


def test_the_key_follows_the_arm_the_options_and_the_version(monkeypatch):
    options = {"shape": "clamped-free", "modes": 2, "shapes": None, "constants": "symbols", "symbols": True}
    options["form"] = "auto"
    base = store.key(_chain(), options)
    assert store.key(_chain(), dict(options)) == base
    assert store.key(_chain(0.1), options) != base
    assert store.key(_chain(), options | {"modes": 1}) != base
    assert store.key(_chain(), options | {"form": "recursive"}) != base
    monkeypatch.setattr(store, "_version", lambda: "99.0")
    assert store.key(_chain(), options) != base


def test_an_unreadable_entry_is_derived_again_and_expand_leaves_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENVIRONMENT, str(tmp_path))
    arm = _chain()
    eom = derive(arm, form="recursive")
    assert eom.origin == "derived" and eom.cache_key is not None
    again = derive(arm, form="recursive")
    assert again.origin == "cache"
    q = np.array([0.3, -0.2, 0.01, -0.02])
    assert np.array_equal(again.to_numeric().mass_matrix(q), eom.to_numeric().mass_matrix(q))
    (tmp_path / eom.cache_key / "eom.pkl").write_bytes(b"not a pickle")
    assert derive(arm, form="recursive").origin == "derived"
    assert eom.expand().cache_key is None
    assert derive(arm, form="recursive", cache=False).cache_key is None


def test_flexlink_cache_clear_empties_the_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(store.ENVIRONMENT, str(tmp_path))
    derive(_chain(), form="recursive")
    assert list(tmp_path.glob("eom-*"))
    assert main(["cache", "where"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path)
    assert main(["cache", "clear"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_an_unwritable_symbolic_cache_warns_and_derives(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file, not a folder")
    monkeypatch.setenv(store.ENVIRONMENT, str(blocked / "cache"))
    with pytest.warns(UserWarning, match=store.ENVIRONMENT):
        eom = derive(_chain(), form="recursive")
    assert eom.origin == "derived" and eom.cache_key is None
