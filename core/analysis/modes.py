"""Mode shapes as physical fields, compared across discretizations (backend-agnostic).

A mode of any :class:`~core.dynamics.model.Model` is a vector of its own generalized
coordinates (:meth:`~core.dynamics.model.Model.natural_frequencies` with
``vectors=True``), which cannot be compared between an assumed-modes and a
finite-element model. Its *field* can: the displacement of material points of
every link in base coordinates [m per unit modal amplitude],

    u_k(s) = d/dε p_link(s, q + ε v_k) at ε = 0,

evaluated on a common grid of s [m] along each link (joint motion included),
so every backend is compared on the same ground. The positions are those of
``point_position``; for models of the shared engine
(:class:`~core.dynamics.engine.ChainModel`, both backends) every grid point is evaluated
at every perturbed configuration in one batch (:func:`grid_positions`, equal to
``point_position`` to round-off: tests/test_modes.py), any other model point by
point.

Weighting and normalization: fields are compared in the mass-consistent inner
product ⟨u, w⟩_W = Σ_points W_p u_pᵀ w_p with W_p = ρA times the trapezoid
weight of the point along its link [kg] (the beam's kinetic-energy metric,
lumped masses and payloads left out so that the metric is the same for every
discretization of the same arm). Every field is scaled to unit W-norm with its
largest component positive.

The modal assurance criterion MAC(a, b) = |aᵀWb|² / ((aᵀWa)(bᵀWb)) is 1 for
the same shape (whatever its sign and scale) and 0 for W-orthogonal shapes.
Two mode sets are paired by maximum total MAC (Hungarian assignment,
``scipy.optimize.linear_sum_assignment``), and modes are tracked along an
ordered sweep by pairing each step with the previous one, so crossing and
veering branches keep their identity where sorting by frequency swaps them;
:func:`tracking_mac` gives the MAC of each tracked mode with itself at the
previous step (low where a shape changes fast: veering, or too coarse a sweep).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.dynamics.model import Model
from core.numerics.derivatives import central_difference_directions

#: Relative step of the central difference that turns a mode vector into a field.
FIELD_STEP = 1e-6
#: Grid points per link for fields.
FIELD_POINTS = 41


@dataclass(frozen=True)
class ModeFields:
    """Mode shapes as displacement fields on a common grid.

    Attributes
    ----------
    omega : ndarray, shape (k,)
        Natural frequencies [rad/s].
    fields : ndarray, shape (P, 3, k)
        Displacement of each grid point in base axes per mode, unit W-norm.
    weights : ndarray, shape (P,)
        W_p = ρA × trapezoid weight [kg] of each point.
    links, s : ndarray, shape (P,)
        Link number (from 1) and material coordinate s [m] of each point.
    """

    omega: np.ndarray
    fields: np.ndarray
    weights: np.ndarray
    links: np.ndarray
    s: np.ndarray


def grid(
    model: Model, q: np.ndarray, points: int = FIELD_POINTS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(links, s, weights) of the common grid: ``points`` per flexible link over its
    bending length (a translating link's free length), trapezoid weights times ρA."""
    links, positions, weights = [], [], []
    for number, link in enumerate(model.arm.links, start=1):
        if not link.is_flexible:
            continue
        length = float(q[number - 1]) if number in model.arm.translating_links else link.length
        s = np.linspace(0.0, length, points)
        w = np.full(points, length / (points - 1))
        w[[0, -1]] *= 0.5
        links.append(np.full(points, number))
        positions.append(s)
        weights.append(link.mass_per_length * w)
    if not links:
        return np.zeros(0, int), np.zeros(0), np.zeros(0)
    return np.concatenate(links), np.concatenate(positions), np.concatenate(weights)


def grid_positions(model: Model, links: np.ndarray, s: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Base-frame positions [m] of the grid points (``links``, ``s``) at each configuration
    of ``Q``, shape (B, P, 3) for ``Q`` of shape (B, n_dof): ``model.point_positions``
    (one batch on the shared engine)."""
    return model.point_positions(np.asarray(links, dtype=int), np.asarray(s, dtype=float), Q)


def mode_fields(
    model: Model,
    q=None,
    joints: str = "locked",
    count: int | None = None,
    points: int = FIELD_POINTS,
    axes: Literal["base", "link"] = "base",
) -> ModeFields:
    """The lowest ``count`` modes of ``model`` at ``q`` as :class:`ModeFields`.

    Each field is the central difference
    (:func:`core.numerics.derivatives.central_difference_directions`, step :data:`FIELD_STEP`
    relative to the largest |q| and at least 1, along the mode scaled to a largest entry of
    1) of the grid positions (:func:`grid_positions`): not the complex step, since the
    positions of every backend need not be complex-analytic (the symbolic model's are real).

    ``axes``: the displacements in base axes (``"base"``), or each point's in the axes of
    its link's undeformed body frame at ``q`` (``"link"``: axial, in-plane, out-of-plane;
    a model of the shared engine only). Both give the same MAC between two models at the
    same ``q``; along a sweep of the pose only link axes compare the shapes themselves (in
    base axes a link that turns by Δθ between two steps costs its modes a factor of about
    cos²Δθ of MAC).
    """
    if axes not in ("base", "link"):
        raise ValueError(f"axes must be 'base' or 'link', got {axes!r}")
    q = model.home() if q is None else np.asarray(q, dtype=float)
    omega, vectors = model.natural_frequencies(q, joints, vectors=True, count=count)
    count = omega.size if count is None else min(count, omega.size)
    omega, vectors = omega[:count], vectors[:, :count]
    links, s, weights = grid(model, q, points)
    if count == 0 or s.size == 0:  # no modes, or no flexible link to draw them on
        return ModeFields(omega, np.zeros((s.size, 3, count)), weights, links, s)
    # Scale the step to the mode's size so the difference resolves it.
    directions = (vectors / np.max(np.abs(vectors), axis=0)).T
    differences = central_difference_directions(
        lambda Q: grid_positions(model, links, s, Q), q, directions, step=FIELD_STEP
    )
    fields = np.moveaxis(differences, 0, -1)
    if axes == "link":
        fields = _in_link_axes(model, q, links, fields)
    return ModeFields(omega, _normalized(fields, weights), weights, links, s)


def _in_link_axes(model: Model, q: np.ndarray, links: np.ndarray, fields: np.ndarray) -> np.ndarray:
    """``fields`` (P, 3, k) in base axes → in the axes of each point's undeformed link body frame."""
    kinematics = getattr(model, "kinematics", None)
    if kinematics is None:
        raise TypeError(
            f"link axes need a model of the shared engine (core.dynamics.engine.ChainModel), got {model!r}"
        )
    frames = kinematics.frames(np.asarray(q, dtype=float)[None], jacobians=False)
    local = np.empty_like(fields)
    for number in np.unique(links):
        at = links == number
        local[at] = np.einsum("ij,pik->pjk", frames[int(number) - 1].R_body[0], fields[at])
    return local


def _normalized(fields: np.ndarray, weights: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("p,pik,pik->k", weights, fields, fields))
    fields = fields / np.where(norms > 0, norms, 1.0)
    flat = fields.reshape(-1, fields.shape[-1])
    biggest = np.argmax(np.abs(flat), axis=0)
    return fields * np.sign(flat[biggest, np.arange(flat.shape[1])])


def mac(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """MAC matrix of the columns of two field sets, shape (k_a, k_b).

    ``a``, ``b``: (P, 3, k) (or (P, k) for scalar fields) on the same grid;
    ``weights``: (P,) the W of the inner product.
    """
    a = a.reshape(a.shape[0], -1, a.shape[-1])
    b = b.reshape(b.shape[0], -1, b.shape[-1])
    cross = np.einsum("p,pik,pil->kl", weights, a, b)
    norm_a = np.einsum("p,pik,pik->k", weights, a, a)
    norm_b = np.einsum("p,pil,pil->l", weights, b, b)
    return cross**2 / np.outer(norm_a, norm_b)


def pair_modes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair reference modes (rows of a MAC matrix) with candidate modes (columns) by
    maximum total MAC. Returns (paired column per row, its MAC); −1 and 0 where a
    row has no partner (fewer candidates than references)."""
    from scipy.optimize import linear_sum_assignment  # on use (studies import this module)

    rows, cols = linear_sum_assignment(values, maximize=True)
    paired = np.full(values.shape[0], -1)
    paired[rows] = cols
    best = np.zeros(values.shape[0])
    best[rows] = values[rows, cols]
    return paired, best


def track_modes(steps: list[ModeFields]) -> np.ndarray:
    """Mode identities along an ordered sweep, shape (len(steps), k).

    Row j gives, for each mode of the first step, its index among the modes of
    step j (sorted by frequency there): each step is paired with the previous
    one by maximum MAC, so a mode keeps its identity through crossings.
    """
    k = min(step.fields.shape[-1] for step in steps)
    order = np.zeros((len(steps), k), dtype=int)
    order[0] = np.arange(k)
    for j in range(1, len(steps)):
        previous = steps[j - 1].fields[..., order[j - 1]]
        values = mac(previous, steps[j].fields, steps[j].weights)
        order[j] = pair_modes(values)[0]
    return order


def tracking_mac(steps: list[ModeFields], order: np.ndarray) -> np.ndarray:
    """MAC of each tracked mode with itself at the previous step, shape (len(steps), k).

    ``order`` is :func:`track_modes`' result; row 0 is NaN (no previous step). A value
    well below 1 means the shape changed much over the step: a veering, or too coarse a
    sweep to follow the mode.
    """
    values = np.full(order.shape, np.nan)
    for j in range(1, len(steps)):
        previous = steps[j - 1].fields[..., order[j - 1]]
        current = steps[j].fields[..., order[j]]
        values[j] = np.diag(mac(previous, current, steps[j].weights))
    return values


__all__ = [
    "FIELD_POINTS",
    "FIELD_STEP",
    "ModeFields",
    "grid",
    "grid_positions",
    "mac",
    "mode_fields",
    "pair_modes",
    "track_modes",
    "tracking_mac",
]
