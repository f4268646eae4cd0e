"""The claims of docs/ARCHITECTURE.md that a program can check.

Import direction, module cycles, private imports and the installed packages are in
tests/test_repository.py; the cache policy in tests/test_cache.py; one toy variant of every
registry in tests/test_registries.py; kernels against the oracle in tests/test_compiled.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("core", "amm", "fem", "shapes", "studies")


def _modules() -> list[Path]:
    return sorted(path for package in LIBRARY for path in (ROOT / package).rglob("*.py"))


def test_no_library_module_is_over_800_lines():
    """Rooms a reader can hold in their head (the layout picture): every module under 800 lines."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in _modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert not long, long


def test_no_function_is_ranked_e_or_f():
    """Cyclomatic complexity (radon): no function or method above rank D (complexity > 30)."""
    radon = pytest.importorskip("radon.complexity")
    ranked = [
        f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname} {radon.cc_rank(block.complexity)}"
        f"{block.complexity}"
        for path in _modules()
        for block in radon.cc_visit(path.read_text(encoding="utf-8"))
        if radon.cc_rank(block.complexity) in "EF"
    ]
    assert not ranked, ranked


def test_registries_are_plain_dicts_in_one_style():
    """One registration style: each registry is a dict listing its built-in variants; no class
    registers its subclasses (an ``__init_subclass__`` storing into a mapping)."""
    from core.analysis.controllers import CONTROLLERS
    from core.analysis.trajectories import TRAJECTORIES
    from core.dynamics.model import SOLVERS
    from shapes import FAMILIES
    from studies.discretizations import BACKENDS
    from studies.kinds import KINDS

    registries = {
        "FAMILIES": (FAMILIES, {"clamped-free", "clamped-mass", "beta-ode", "pinned-pinned"}),
        "BACKENDS": (BACKENDS, {"amm", "fem"}),
        "CONTROLLERS": (CONTROLLERS, {"pd", "computed-torque", "decoupling"}),
        "TRAJECTORIES": (TRAJECTORIES, {"cycloidal"}),
        "KINDS": (KINDS, {"frequencies", "convergence", "simulation", "stability", "verify"}),
        "SOLVERS": (SOLVERS, {"composite", "recursive", "structured"}),
    }
    for name, (registry, some_builtins) in registries.items():
        assert type(registry) is dict, name
        assert some_builtins <= set(registry), (name, sorted(registry))
    hooks = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        and node.name == "__init_subclass__"
        # registering = storing into a mapping (Model's hook records constructor arguments)
        and any(
            isinstance(target, ast.Subscript)
            for inner in ast.walk(node)
            if isinstance(inner, ast.Assign)
            for target in inner.targets
        )
    ]
    assert not hooks, hooks
    # frames are a closed set, not a registry: each needs the engine's hub coupling
    from core.dynamics.basis import FRAMES

    assert FRAMES == ("clamped", "pinned")


def _calls(attribute: str) -> set[str]:
    """Library modules that call ``<anything>.attribute(...)`` or ``attribute(...)``."""
    found = set()
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name == attribute:
                    found.add(str(path.relative_to(ROOT)))
    return found


def test_one_gauss_rule():
    """Every Gauss rule comes from core.numerics.quadrature (fem.assembly had its own)."""
    assert _calls("leggauss") == {"core/numerics/quadrature.py"}


def test_the_rodrigues_series_threshold_is_defined_once():
    """The compiled kernels and the numpy kinematics share core.numerics.rotations's threshold
    (compiled.py had a copy)."""
    assigned = [
        str(path.relative_to(ROOT))
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id == "SERIES_THRESHOLD"
    ]
    assert assigned == ["core/numerics/rotations.py"], assigned


def test_no_one_reaches_into_private_model_construction():
    """`Model.replace` is the public rebuild: no test, benchmark or library module calls the
    private `_build_options` that three backends once copied."""
    users = [
        str(path.relative_to(ROOT))
        for folder in (*LIBRARY, "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "test_architecture.py" and "_build_options" in path.read_text(encoding="utf-8")
    ]
    assert not users, users


def test_docs_and_code_cite_papers_and_this_repository_only():
    """Docstrings and comments cite papers (docs/REFERENCES.md) and this repository's docs, not
    a specification outside it or the tracker's issue numbers."""
    pattern = re.compile(r"SPEC §|seed (paper )?00\d|\b[Ii]ssue \d+")
    files = [
        path
        for folder in (*LIBRARY, "tests", "benchmarks", "docs")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".py", ".md", ".toml"} and path.name != "test_architecture.py"
    ]
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in [*files, ROOT / "README.md"]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert not found, found


def test_the_oracle_and_the_kernels_are_the_only_dynamics():
    """One product (core.dynamics.compiled) and one oracle (core.dynamics.oracle with the
    Christoffel C): the numpy Newton–Euler and articulated-body solvers are gone."""
    dynamics = ROOT / "core" / "dynamics"
    assert not (dynamics / "newton_euler.py").exists()
    recursive = ast.parse((dynamics / "recursive.py").read_text(encoding="utf-8"))
    functions = {node.name for node in ast.walk(recursive) if isinstance(node, ast.FunctionDef)}
    assert functions == {"recursive_solver"}, functions
