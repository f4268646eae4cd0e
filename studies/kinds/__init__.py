"""Study kinds: one registry, so later kinds plug in without touching the runner.

A kind is a :class:`StudyKind`: an ``analysis_schema`` (pydantic model of the
``[analysis]`` table), ``run_case`` (one sweep case → tidy rows) and
``report`` (all rows → Markdown sections, tables and plots).
"""

from __future__ import annotations

from studies.kinds.base import StudyKind
from studies.kinds.convergence import Convergence
from studies.kinds.frequencies import Frequencies
from studies.kinds.simulation import Simulation
from studies.kinds.verify import Verify
from studies.kinds.zero_dynamics import ZeroDynamics

#: Study kinds by name.
KINDS: dict[str, StudyKind] = {
    kind.name: kind for kind in (Frequencies(), Convergence(), Verify(), Simulation(), ZeroDynamics())
}

__all__ = ["KINDS", "StudyKind"]
