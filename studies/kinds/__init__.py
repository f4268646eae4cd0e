"""Study kinds: one registry, so later kinds plug in without touching the runner.

A kind is a :class:`StudyKind`: an ``analysis_schema`` (pydantic model of the
``[analysis]`` table), ``run_case`` (one sweep case → tidy rows) and
``report`` (all rows → Markdown sections, tables and plots). A subclass that
sets ``name`` registers itself in :data:`KINDS` when defined, and every module
of this package is imported here, so a new kind is one new module.
"""

from __future__ import annotations

import importlib
import pkgutil

from studies.kinds.base import KINDS, StudyKind

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["KINDS", "StudyKind"]
