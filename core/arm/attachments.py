"""What a link carries besides its beam: lumped masses, a tip payload, and its damping.

Part of the arm description (:mod:`core.arm.description`); the same conventions and error
messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from core.arm import bounds, serialization
from core.numerics import validation as check
from core.numerics.validation import InputError, Tensor3

_DAMPING_KINDS = ("modal", "rayleigh")


@dataclass(frozen=True)
class LumpedMass(serialization.Description):
    """A point mass with rotary inertia fixed to a flexible link.

    Parameters
    ----------
    position : float  [m]
        Material coordinate s of the mass along the beam, 0 <= s <= length of
        the link (checked by :class:`Link`); see the module docstring for where
        s = 0 is.
    mass : float  [kg]
        Mass, >= 0 and at most 1e15.
    inertia : float  [kg m^2]
        Rotary inertia about the mass's own centre for the bending rotation
        (the same value in both bending planes), >= 0 and at most 1e27.
    """

    position: float
    mass: float
    inertia: float = 0.0

    def __post_init__(self) -> None:
        where = "lumped mass"
        serialization.normalize(
            self,
            position=check.nonnegative(self.position, where, "position"),
            mass=bounds.mass(self.mass, where, "mass"),
            inertia=bounds.inertia_value(self.inertia, where, "inertia"),
        )


@dataclass(frozen=True)
class Payload(serialization.Description):
    """A rigid body at the tip of a link, its centre of mass at the tip.

    Parameters
    ----------
    mass : float  [kg]
        Mass, >= 0 and at most 1e15.
    inertia : float or 3x3 array_like  [kg m^2]
        Inertia about the payload's centre of mass, every entry at most 1e27. A scalar is the rotary
        inertia about every axis through the tip (isotropic: a planar arm uses
        it about the joint axis z, a spatial arm in both bending planes). A 3x3
        symmetric positive semi-definite tensor is expressed in the axes of
        the frame of the link carrying the payload (see the module docstring),
        and stored as a tuple of rows.
    """

    mass: float
    inertia: float | Tensor3 = 0.0

    def __post_init__(self) -> None:
        serialization.normalize(
            self,
            mass=bounds.mass(self.mass, "payload", "mass"),
            inertia=bounds.inertia(self.inertia, "payload", "inertia"),
        )

    def inertia_tensor(self) -> np.ndarray:
        """Inertia tensor about the centre of mass, shape (3, 3)  [kg m^2]; a scalar s gives s·I."""
        if isinstance(self.inertia, float):
            return self.inertia * np.eye(3)
        return np.array(self.inertia)

    @property
    def planar_inertia(self) -> float:
        """Inertia about the z axis through the centre of mass [kg m^2], as a planar arm uses it."""
        if isinstance(self.inertia, float):
            return self.inertia
        return self.inertia[2][2]


@dataclass(frozen=True)
class Damping(serialization.Description):
    """Structural damping of the flexible coordinates of one link.

    Build with :meth:`modal` or :meth:`rayleigh`.

    Parameters
    ----------
    kind : {"modal", "rayleigh"}
        ``"modal"``: mode k of the link gets the damping force
        2 ζ_k ω_k m_k δ̇_k (ζ_k the ratio, ω_k the natural frequency and m_k the
        modal mass of mode k of the link on its own). ``"rayleigh"``: the damping
        matrix of the link's flexible coordinates is D = alpha·M + beta·K, with M
        and K its flexible mass and stiffness matrices.
    ratios : tuple of float  [-]
        Modal damping ratios ζ, each >= 0 and at most 1e3 (modal only). One ratio applies to
        every mode; several give mode k the ratio ``ratios[k-1]``.
    alpha : float  [1/s]
        Mass-proportional Rayleigh coefficient, >= 0 and at most 1e10 (Rayleigh
        only, else 0).
    beta : float  [s]
        Stiffness-proportional Rayleigh coefficient, >= 0 and at most 1e10
        (Rayleigh only, else 0).
    """

    kind: Literal["modal", "rayleigh"]
    ratios: tuple[float, ...] = ()
    alpha: float = 0.0
    beta: float = 0.0

    def __post_init__(self) -> None:
        where = "damping"
        kind = check.one_of(self.kind, _DAMPING_KINDS, where, "kind")
        raw = (self.ratios,) if check.is_real(self.ratios) else check.sequence_items(self.ratios)
        if raw is None:
            raise InputError(where, f"ratios must be a number or a sequence of numbers, got {self.ratios!r}")
        ratios = tuple(
            check.at_most(
                check.nonnegative(r, where, f"ratios[{k}]"),
                where,
                f"ratios[{k}]",
                bounds.DAMPING_RATIO_MAX,
                "",
                "a thousand times critical damping",
            )
            for k, r in enumerate(raw, start=1)
        )
        # alpha·M and beta·K stay within the frequencies a link may have (bounds.FREQUENCY_RANGE)
        alpha = check.at_most(
            check.nonnegative(self.alpha, where, "alpha"),
            where,
            "alpha",
            bounds.FREQUENCY_RANGE[1],
            "1/s",
            "the largest characteristic frequency of a link",
        )
        beta = check.at_most(
            check.nonnegative(self.beta, where, "beta"),
            where,
            "beta",
            1.0 / bounds.FREQUENCY_RANGE[0],
            "s",
            "1 over the smallest characteristic frequency of a link",
        )
        if kind == "modal":
            if not ratios:
                raise InputError(where, "ratios must hold at least one ratio for modal damping, got ()")
            for name, value in (("alpha", alpha), ("beta", beta)):
                if value != 0.0:
                    raise InputError(where, f"{name} applies to Rayleigh damping only, got {value!r}")
        elif ratios:
            raise InputError(where, f"ratios apply to modal damping only, got {ratios!r}")
        serialization.normalize(self, ratios=ratios, alpha=alpha, beta=beta)

    @classmethod
    def modal(cls, ratio: float | Sequence[float]) -> Damping:
        """Modal damping: one ratio ζ >= 0 for every mode, or a sequence of per-mode ratios."""
        return cls("modal", ratios=ratio)  # type: ignore[arg-type]  # normalized to a tuple

    @classmethod
    def rayleigh(cls, alpha: float, beta: float) -> Damping:
        """Rayleigh damping D = alpha·M + beta·K, alpha [1/s] and beta [s] both >= 0."""
        return cls("rayleigh", alpha=alpha, beta=beta)

    def ratio(self, mode: int) -> float:
        """Damping ratio of mode ``mode`` (counted from 1) of modal damping.

        Raises
        ------
        ValueError
            For Rayleigh damping, or for a mode beyond the per-mode ratios given.
        """
        if self.kind != "modal":
            raise ValueError("damping: ratio() applies to modal damping only")
        if len(self.ratios) == 1:
            return self.ratios[0]
        if not 1 <= mode <= len(self.ratios):
            raise ValueError(
                f"damping: no ratio for mode {mode}; {len(self.ratios)} per-mode ratios were given"
            )
        return self.ratios[mode - 1]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict holding only the fields of this kind of damping."""
        if self.kind == "modal":
            return {"kind": "modal", "ratios": list(self.ratios)}
        return {"kind": "rayleigh", "alpha": self.alpha, "beta": self.beta}
