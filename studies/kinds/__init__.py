"""Study kinds: one registry, so later kinds plug in without touching the runner.

A kind is a :class:`StudyKind`: an ``analysis_schema`` (pydantic model of the
``[analysis]`` table), ``run_case`` (one sweep case → tidy rows) and
``report`` (all rows → Markdown sections, tables and plots). :data:`KINDS`
lists the built-in kinds; another is one entry, ``KINDS["name"] = Kind()``.

Every kind is imported to validate a config, so a kind imports its figures
(matplotlib) inside ``report``, not at module level: ``flexlink show`` never
pays for them.
"""

from __future__ import annotations

from studies.kinds.base import StudyKind
from studies.kinds.convergence import Convergence
from studies.kinds.frequencies import Frequencies
from studies.kinds.simulation import Simulation
from studies.kinds.stability import Stability
from studies.kinds.symbolic import Symbolic
from studies.kinds.timing import Timing
from studies.kinds.verify import Verify
from studies.kinds.zero_dynamics import ZeroDynamics

#: Study kinds by ``study.kind`` name, one instance each.
KINDS: dict[str, StudyKind] = {
    "convergence": Convergence(),
    "frequencies": Frequencies(),
    "simulation": Simulation(),
    "stability": Stability(),
    "symbolic": Symbolic(),
    "timing": Timing(),
    "verify": Verify(),
    "zero-dynamics": ZeroDynamics(),
}

__all__ = ["KINDS", "StudyKind"]
