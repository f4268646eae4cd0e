"""Study kinds: one registry, so later kinds plug in without touching the runner.

A kind is a :class:`StudyKind`: an ``analysis_schema`` (pydantic model of the
``[analysis]`` table), ``run_case`` (one sweep case → tidy rows) and
``report`` (all rows → Markdown sections, tables and plots).

Every kind is imported to validate a config, so a kind imports
:mod:`studies.plots` (matplotlib) inside ``report``, not at module level:
``flexlink show`` never pays for it.
"""

from __future__ import annotations

import importlib
import pkgutil

from studies.kinds.base import KINDS, StudyKind

# Every module of this package is imported, and each kind registers itself when its
# class is defined (StudyKind.__init_subclass__): a new kind is one new module.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["KINDS", "StudyKind"]
