"""What :class:`~core.dynamics.engine.ChainModel` builds for each flexible link before the chain
exists: its body (:class:`~core.dynamics.flexible_body.FlexibleBody` or
:class:`~core.dynamics.flexible_body.TranslatingBody`, after checking that the basis fits the
link) and its tip map (:class:`~core.dynamics.kinematics.TipMap`: how the link's coordinates
move its tip and turn its end frame), and the check of the model's options."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core.arm import Arm
from core.dynamics.basis import TranslatingBasis
from core.dynamics.flexible_body import FlexibleBody, TranslatingBody
from core.dynamics.kinematics import TipMap


def _tip_rows(body: TranslatingBody, slope: bool):
    """``TipMap.follow`` of a length-following translating body: its tip rows at free lengths
    l (the rotation from the tip slope, or for chord tips the tip deflection)."""

    def follow(l: np.ndarray, derivative: int) -> dict:
        arrays = body.arrays(np.asarray(l), derivative)
        rotation = arrays["rotation"] if slope else _chord_rows(arrays["translation"])
        return {"translation": arrays["translation"], "rotation": rotation}

    return follow


def _chord_rows(translation: np.ndarray) -> np.ndarray:
    """Rotation rows (0, −u_z, u_y) from deflection rows (0, u_y, u_z): the tip's small rotation
    by its slopes (slope tips, from the slope rows) or its chord (from the translation rows)."""
    return np.stack([translation[..., 0, :], -translation[..., 2, :], translation[..., 1, :]], axis=-2)


def check_options(arm, bases: Mapping, coulomb, compiled, geometric_stiffening) -> None:
    """Refuse the :class:`ChainModel` arguments that do not describe a chain it can build."""
    if not isinstance(geometric_stiffening, (bool, np.bool_)):
        raise TypeError(f"geometric_stiffening must be True or False, got {geometric_stiffening!r}")
    if not isinstance(arm, Arm):
        raise TypeError(f"arm must be an Arm, got {type(arm).__name__}")
    if geometric_stiffening and arm.translating_links:
        raise ValueError(
            f"geometric_stiffening: translating links {list(arm.translating_links)} are not supported "
            "(the foreshortening of a beam sliding through its hub is not modelled)"
        )
    if coulomb not in ("smooth", "sign"):
        raise ValueError(f"coulomb must be 'smooth' or 'sign', got {coulomb!r}")
    if not isinstance(compiled, bool):
        raise TypeError(f"compiled must be True or False, got {compiled!r}")
    unknown = sorted(set(bases) - set(arm.flexible_links))
    if unknown:
        raise ValueError(f"bases given for links {unknown}, which are not flexible")
    missing = [number for number in arm.flexible_links if number not in bases]
    if missing:
        raise ValueError(f"link {missing[0]}: flexible link has no basis")


def link_body(arm: Arm, number: int, basis, stiffening: bool) -> FlexibleBody | TranslatingBody:
    """The body of flexible link ``number`` on ``basis``, after checking that the basis fits it."""
    link = arm.links[number - 1]
    translating = number in arm.translating_links
    if translating != isinstance(basis, TranslatingBasis):
        raise ValueError(
            f"link {number}: a {'translating' if translating else 'fixed-length'} link needs a "
            f"{'TranslatingBasis' if translating else 'BeamBasis'}, got {type(basis).__name__}"
        )
    if not translating and not np.isclose(basis.length, link.length, rtol=1e-12):
        raise ValueError(
            f"link {number}: basis length {basis.length!r} differs from the link length {link.length!r}"
        )
    planes = 2 if (link.EI_out is not None and not arm.is_planar) else 1
    if basis.frame == "pinned" and planes == 2 and translating:
        raise ValueError(
            f"link {number}: pinned (chord) frames on a translating link bend in the joint's plane "
            "only; out-of-plane bending (EI_out) of a translating link needs a clamped basis"
        )
    if translating:
        return TranslatingBody(link, basis, planes)
    return FlexibleBody(link, basis, planes, stiffening=stiffening)


def tip_map(arm: Arm, number: int, body, columns: slice, stiffening: bool) -> TipMap:
    """How the coordinates ``columns`` of flexible link ``number`` move its tip (and, for a pinned
    frame bending in two planes, turn its beam frame): :class:`~core.dynamics.kinematics.TipMap`."""
    basis, link = body.basis, arm.links[number - 1]
    translating = number in arm.translating_links
    translation = _deflection_rows(body, basis.tip_value)
    if arm.tip_rotation == "slope":
        rotation = _chord_rows(_deflection_rows(body, basis.tip_slope))
    else:  # chord: the equivalent joint angle w(L)/L (the kinematics divide by l if translating)
        rotation = _chord_rows(translation) / (1.0 if translating else link.length)
    follow = None
    if translating and body.following is not None:
        follow = _tip_rows(body, arm.tip_rotation == "slope")
    foreshortening = body.foreshortening["H"] if stiffening else None
    root = None
    if basis.frame == "pinned" and body.planes == 2:
        # The chord frame leaves the joint's plane by the out-of-plane root slope
        # (core.dynamics.kinematics): ρ = (0, w_z'(0), 0).
        root = np.zeros((3, body.n_coordinates))
        root[1] = body.to_plane(basis.root_slope, 1)
    return TipMap(columns, translation, rotation, translating, follow, foreshortening, root=root)


def _deflection_rows(body, vector: np.ndarray) -> np.ndarray:
    """The (3, m) map δ ↦ (0, vᵀδ_y, vᵀδ_z) of a basis functional v (e.g. the tip value: the tip
    deflection in the beam frame)."""
    return np.vstack([np.zeros(body.n_coordinates), body.to_plane(vector, 0), body.to_plane(vector, 1)])
