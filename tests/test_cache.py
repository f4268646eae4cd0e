"""The one cache policy (core.cache): where compiled and generated code is kept, how it is keyed,
and that a read-only install with an unwritable home still runs, with one warning."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba
import pytest

from core import cache
from core.dynamics.compiled import jit

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "core" / "dynamics" / "compiled"


def unwritable(tmp_path: Path) -> Path:
    """A folder path nobody can create anything in: a folder without write permission, or, for
    a user whom permissions do not stop (root), a path under a regular file."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    blocked.chmod(0o500)
    try:
        (blocked / "probe").mkdir()
    except OSError:
        return blocked
    (blocked / "probe").rmdir()
    regular = tmp_path / "file"
    regular.write_text("a regular file: no folder can be made under it")
    return regular / "sub"


def test_root_is_the_override_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(cache.ENVIRONMENT, raising=False)
    assert cache.root() == tmp_path / "home" / ".cache" / "flexlink"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.root() == tmp_path / "xdg" / "flexlink"
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path / "mine"))
    assert cache.root() == tmp_path / "mine"
    assert cache.folder("symbolic", "abc") == tmp_path / "mine" / "symbolic" / "abc"
    assert (tmp_path / "mine" / "symbolic" / "abc").is_dir()


def test_keyed_folders_unused_for_a_month_are_deleted(monkeypatch, tmp_path):
    """Every use marks its keyed folder; another key unused for ``STALE_DAYS`` goes, a recent
    one and the folder in use stay."""
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    old, recent = tmp_path / "kernels" / "old", tmp_path / "kernels" / "recent"
    for folder in (old, recent):
        (folder / "sub").mkdir(parents=True)
    month = time.time() - (cache.STALE_DAYS + 1) * 86400
    os.utime(old, (month, month))
    used = cache.folder("kernels", "new")
    assert used == tmp_path / "kernels" / "new" and used.is_dir()
    assert not old.exists() and recent.is_dir()
    os.utime(used, (month, month))
    assert cache.folder("kernels", "new") == used and used.stat().st_mtime > month + 86400


def test_an_unwritable_cache_folder_gives_none_and_one_warning(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENVIRONMENT, str(unwritable(tmp_path)))
    monkeypatch.setattr(cache, "_warned", False)
    with pytest.warns(cache.CacheWarning, match=cache.ENVIRONMENT):
        assert cache.folder("kernels") is None
    assert cache.folder("symbolic") is None  # no second warning (it would be an error here)


def test_the_kernel_key_changes_with_any_source_the_kernels_compile(tmp_path):
    """The key hashes the contents of every source, not their place: a copied tree keys alike,
    and an edit to a helper module (not the kernels' own files) gives another key."""
    copies = []
    for path in jit.SOURCES:
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        copies.append(copy)
    original = cache.key(jit.SOURCES, numba.__version__)
    assert cache.key(copies, numba.__version__) == original
    helper = next(copy for copy in copies if copy.name == "rotations.py")
    helper.write_text(helper.read_text().replace("SERIES_THRESHOLD = 1.0", "SERIES_THRESHOLD = 0.5"))
    assert cache.key(copies, numba.__version__) != original
    assert cache.key(jit.SOURCES, "0.0.0") != original  # and with the compiler's version
    assert jit.FOLDER is None or jit.FOLDER.name == original


def _first_party_imports(path: Path) -> set[Path]:
    """The files of the first-party modules a module imports (``from package import module``
    imports that module, as in tests/test_repository.py)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "core"):
            continue
        for alias in node.names:
            module = ROOT.joinpath(*node.module.split("."), alias.name).with_suffix(".py")
            found.add(
                module if module.is_file() else ROOT.joinpath(*node.module.split(".")).with_suffix(".py")
            )
    return found


def _defines_kernels(path: Path) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "core.dynamics.compiled.jit"
        and any(alias.name == "kernel" for alias in node.names)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def test_the_key_covers_every_module_the_kernels_import():
    """Every first-party module imported by a module that defines kernels (``@kernel``) is in
    ``jit.SOURCES``, and only jit.py imports numba (no kernel is compiled outside the cache policy)."""
    sources = {path.resolve() for path in jit.SOURCES}
    kernel_modules = [path for path in sorted(PACKAGE.glob("*.py")) if _defines_kernels(path)]
    assert {path.name for path in kernel_modules} >= {"algorithms.py", "bodies.py", "kinematics.py"}
    for path in sorted(PACKAGE.glob("*.py")):
        imports = {
            name
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for name in ([node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
        }
        if path.name != "jit.py":
            assert not any(str(name).startswith("numba") for name in imports), f"{path.name} imports numba"
    for path in kernel_modules:
        for module in _first_party_imports(path):
            assert module.resolve() in sources, (
                f"{path.name} imports {module.relative_to(ROOT)}, not in SOURCES"
            )


SCRIPT = textwrap.dedent(
    """
    import warnings

    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import numpy as np

        from core.dynamics.compiled import linalg

        # one small kernel (two, with the helper it calls): the cache policy is the decorator's,
        # the same for every kernel, and a model's whole forward dynamics took 111 CPU s to compile
        D = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]])
        L = linalg.cholesky(D, 3, "D")
        assert np.allclose(L @ L.T, D, rtol=0, atol=1e-14) and np.allclose(L, np.linalg.cholesky(D))
    print("CORE", __import__("core").__file__)
    for w in caught:
        print("WARNING", w.category.__module__ + "." + w.category.__name__, w.message)
    """
)


def test_a_read_only_install_with_an_unwritable_home_runs_with_one_warning(tmp_path):
    """A copy of the packages, read-only, run with an unwritable home and no cache settings:
    the kernels compile without a cache (numba's own locators would fail with "cannot cache
    function: no locator available"), one CacheWarning says so, and nothing is written into the
    installed packages."""
    site = tmp_path / "site"
    for package in ("core",):
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    before = sorted(p.relative_to(site) for p in site.rglob("*"))
    for path in site.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    home = unwritable(tmp_path)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("XDG_CACHE_HOME", cache.ENVIRONMENT, "NUMBA_CACHE_DIR")
    }
    env |= {
        "HOME": str(home),
        "PYTHONPATH": str(site),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800
    )
    for path in site.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # so that tmp_path can be cleaned
    assert result.returncode == 0, result.stderr
    assert f"CORE {site / 'core' / '__init__.py'}" in result.stdout  # the read-only copy ran
    warnings = [line for line in result.stdout.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("WARNING core.cache.CacheWarning"), warnings
    assert sorted(p.relative_to(site) for p in site.rglob("*")) == before
