"""The repository keeps its promises: CI runs the README's test command."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command():
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    command = ci_lines[-1]
    assert "pytest" in command
    assert command in (ROOT / "README.md").read_text()


def test_packages_are_the_layout_the_user_asked_for():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'packages = ["core", "amm", "fem", "shapes", "studies",' in text
    for package in ("core", "amm", "fem", "shapes", "studies"):
        assert (ROOT / package / "__init__.py").is_file()


def test_every_package_is_installed():
    """setuptools installs only the packages it lists: a subpackage missing from the list works
    in an editable checkout and is absent from a wheel (core.dynamics.compiled, amm.symbolic,
    studies.kinds.frequencies were new in one change)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    present = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for owner in ("core", "amm", "fem", "shapes", "studies")
        for init in (ROOT / owner).rglob("__init__.py")
    }
    assert listed == present, (sorted(present - listed), sorted(listed - present))


#: Which packages each package may import (docs/ARCHITECTURE.md: core ← shapes ← fem, amm ←
#: studies; fem and amm are siblings, neither imports the other; nothing imports studies).
ALLOWED = {
    "core": set(),
    "shapes": {"core"},
    "fem": {"core", "shapes"},
    "amm": {"core", "shapes"},
    "studies": {"core", "shapes", "fem", "amm"},
}


def _imported_packages(path: Path) -> set[tuple[str, int]]:
    """The first-party packages a module imports (at any depth: inside functions too), with lines."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {(name.split(".")[0], node.lineno) for name in names if name.split(".")[0] in ALLOWED}
    return found


def test_packages_import_one_way():
    """No package cycle, including imports hidden inside functions (core.dynamics.basis imported
    shapes.quadrature while shapes imported core.numerics.validation)."""
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {package}"
        for owner, allowed in ALLOWED.items()
        for path in sorted((ROOT / owner).rglob("*.py"))
        for package, line in sorted(_imported_packages(path))
        if package != owner and package not in allowed
    ]
    assert not wrong, wrong


def test_no_private_name_is_imported_across_modules():
    """A name another module needs is public where it is defined (fem.assembly imported
    fem.eigen's private _RelativeCoordinates, now fem.deformation.RelativeCoordinates)."""
    import ast

    wrong = [
        f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}.{alias.name}"
        for owner in ALLOWED
        for path in sorted((ROOT / owner).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ALLOWED
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not wrong, wrong


def _module_imports() -> dict[str, set[str]]:
    """First-party module → the first-party modules it imports (inside functions too)."""
    import ast

    modules = {}
    for owner in ALLOWED:
        for path in sorted((ROOT / owner).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from package import module`` imports that module (the package's own
                # __init__ runs first, as for any of its modules); a name imports its module
                targets = [
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                    for alias in node.names
                ]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def test_no_module_cycle():
    """No two modules import each other, directly or around a loop, counting imports inside
    functions (core.dynamics.model ↔ engine ↔ recursive ↔ structured were such a loop); a package and
    its own modules (``studies.kinds`` importing ``studies.kinds.base``) are not a cycle."""
    graph = _module_imports()

    def reachable(start: str) -> set[str]:
        seen, stack = set(), [start]
        while stack:
            for nxt in graph[stack.pop()] - seen:
                seen.add(nxt)
                stack.append(nxt)
        return seen

    def related(a: str, b: str) -> bool:  # a package and one of its own modules
        return a.startswith(b + ".") or b.startswith(a + ".")

    cycles = sorted(f"{a} -> {b}" for a in graph for b in graph[a] if not related(a, b) and a in reachable(b))
    assert not cycles, cycles
