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
