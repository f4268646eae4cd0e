"""Modelling assumptions a run can violate, and the warnings that say so.

A translating (prismatic) flexible link is modelled with quasi-static mode shapes: the
convective terms of a beam sliding through its guide are neglected, which holds while the
extension speed U = |l̇| stays small against the bending wave speed of the free length,
U_g = √(EI/ρA)/l (docs/MODEL.md, Dynamics). Runs record U/U_g per output time and warn above
:data:`EXTENSION_SPEED_LIMIT`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from core.dynamics.model import Model

#: Largest extension speed ratio U/U_g of a translating link before a warning (docs/MODEL.md, Dynamics).
EXTENSION_SPEED_LIMIT = 0.1


class AssumptionWarning(UserWarning):
    """A modelling assumption is violated (the results may be inaccurate)."""


def wave_speeds(model: Model) -> list[tuple[int, float]]:
    """(joint index, √(EI/ρA)) of every translating link (link i sits on joint i);
    the smaller bending stiffness when it bends in two planes."""
    result = []
    for number in model.arm.translating_links:
        link = model.arm.links[number - 1]
        EI = min(link.EI, link.EI_out) if link.EI_out is not None else link.EI
        result.append((number - 1, float(np.sqrt(EI / link.mass_per_length))))
    return result


def warn_extension_speeds(worst: list[tuple[int, float, float]]) -> None:
    """An :class:`AssumptionWarning` per translating link (joint index, largest U/U_g, when [s])
    whose extension speed ratio passed :data:`EXTENSION_SPEED_LIMIT`."""
    for index, ratio, when in worst:
        if ratio > EXTENSION_SPEED_LIMIT:
            warnings.warn(
                f"translating link {index + 1}: extension speed ratio U/U_g reached {ratio:.3g} at "
                f"t = {when:.4g} s (> {EXTENSION_SPEED_LIMIT}); the neglected convective terms of "
                "the sliding beam may matter",
                AssumptionWarning,
                stacklevel=4,
            )
