"""The kinetic energy of a stiffened beam as a Gram form: the terms of the foreshortening
beyond second order.

With geometric stiffening a beam point at material coordinate s sits at
ρ(s) = (s + u(s)) e_x + w(s), w = Φ(s)δ (lateral), u = u₂ + u₄ the axial foreshortening of an
inextensible beam to fourth order,

    u₂(s) = −½ ∫₀ˢ |w'|² dσ = −½ Σ_a δ_aᵀ H(s) δ_a,   u₄(s) = −⅛ ∫₀ˢ |w'|⁴ dσ,   H(s) = ∫₀ˢ φ'φ'ᵀ dσ

(|w'|² = Σ_a w_a'² over the bending planes; 1 − √(1 − x) = x/2 + x²/8 + …). Its velocity in
beam axes is

    V = v + Ω × ρ + Φ δ̇ + u̇ e_x,   u̇ = −h(s)ᵀ δ̇,   h = ∂(−u)/∂δ = (H δ_a + ½∫₀ˢ|w'|² w_a' φ' dσ)_a,

and the body's kinetic energy T = ½ ∫ |V|² dm = ½ νᵀ M_b(δ) ν is a Gram form: M_b = ∫ J_pᵀ J_p dm
with J_p = [1, −ρ̃, Φ − e_x hᵀ], symmetric positive semi-definite for *every* δ (definite when
the columns of J_p are independent over the mass, which the lateral Φ columns ensure). The
classic second-order truncation (:mod:`core.dynamics.flexible_body`: S₁,x − ½δᵀP₁δ, Q_xx − δᵀP₂δ
and the axial row −(P₁δ)ᵀ of A) keeps the products of u₂ with the rigid motion; this module adds
the products of u₄ with it,

    ΔS₁,x = ∫u₄ dm,   ΔQ_xx ∋ 2∫s u₄ dm,   Δ(axial row of A) = −∫h₄ᵀ dm   (h₄ = ∂(−u₄)/∂δ),

and the terms of higher order in u,

    ΔT = ∫ [ ½ (Ω_y² + Ω_z²) u² − Ω_x (Ω_y w_y + Ω_z w_z) u
             + Ω_y (w_z u̇ − u ẇ_z) + Ω_z (u ẇ_y − w_y u̇) + ½ u̇² ] dm,

negligible for a smooth deflection but what keeps M_b positive definite: without ½∫u̇² dm the
coupling v_x ∫u̇ dm of the axial row of A is not bounded by anything, and it grows with the
curvature a mesh resolves (a fine element mesh turns M indefinite at a tenth of the gravity sag;
docs/MODEL.md, Dynamics). ½Ω²∫u² dm comes with the quartic foreshortening Ω²∫s u₄ dm of the same
order and opposite sign, which is larger (Cauchy–Schwarz: (∫₀ˢw'²)² ≤ s∫₀ˢw'⁴): keeping the first
without the second would soften a spinning beam at fourth order. In blocks, ΔT = ½ νᵀ ΔM_b ν with

    ΔQ_xx = ∫(u² + 2 s u₄) dm,   ΔQ_xa = ∫u w_a dm   (I_Ω = tr(Q) 1 − Q),
    ΔM_Ωδ rows y, z:  ∫(−u Φ_z − w_z hᵀ) dm,  ∫(u Φ_y + w_y hᵀ) dm,
    ΔM_δδ = ∫ h hᵀ dm.

(The tip map of the chain keeps u₂: the next joint sits at the second-order tip.)

**The mass measure.** The integrals run over a fixed point set (:class:`ForeshorteningPoints`):
Gauss points of the beam (mass ρ w_g) and the lumped masses. Between the breaks of an element
basis the shapes are cubic, u₄ is of degree 9 and every integrand of ΔT of degree ≤ 18, so ten
Gauss points per element integrate them exactly and M_b is the Gram form of the beam itself;
assumed-mode shapes are integrated on panels as fine as :func:`~core.dynamics.basis.slope_products`
uses (~1e-15 relative). u and h at a point are integrals over the segments before it plus the
part of its own segment, each on slope samples (five per element: exact for the degree-8
integrands |w'|⁴ and |w'|²w'φ'), so h is kept as *prefix + local part* on each segment's support
(four functions per plane on an element) and nothing dense of size (points × n²) is stored.

This module is the numpy oracle of those terms (complex-step safe: the engine's derivatives of
M_b come by the complex step); the compiled kernels evaluate the same sums, with their rates
and δ-gradients, in :mod:`core.dynamics.compiled.stiffening`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.numerics.quadrature import composite_gauss, gauss_legendre

#: Mass points per segment between the breaks of a piecewise-cubic (element) basis: exact for
#: the integrands of ΔT, of degree ≤ 18 (u₄ is of degree 9 on an element, u² of degree 18).
ELEMENT_POINTS = 10
#: Slope samples per segment (and per point's part of its segment) of an element basis: exact
#: for the degree-8 integrands |w'|⁴ and |w'|² w'φ' of u₄ and h₄.
ELEMENT_SAMPLES = 5
#: Gauss points per panel for a basis without breaks (assumed modes), on 4n + 8 panels, for the
#: mass and for the slope samples.
PANEL_POINTS = 10


@dataclass(frozen=True, eq=False)
class ForeshorteningPoints:
    """The mass measure of a stiffened beam, on the segments of its basis, with the slope samples
    its foreshortening integrals run on.

    Attributes
    ----------
    support : ndarray of int, shape (S, k)
        The basis functions nonzero on each segment (padded by repeating a valid index with
        zero data).
    segment : ndarray of int, shape (Q,)
        The segment of each point (nondecreasing).
    mass : ndarray, shape (Q,)
        Its mass [kg].
    position : ndarray, shape (Q,)
        Its material coordinate s [m].
    values : ndarray, shape (Q, k)
        φ at the point, on its segment's support.
    segment_slopes, segment_weights : ndarray, shapes (S, g, k) and (S, g)
        φ' at the g Gauss points of each whole segment (on its support) and their weights: the
        integrals over segments passed, Σ_{e<E}.
    point_slopes, point_weights : ndarray, shapes (Q, g, k) and (Q, g)
        The same on [start of its segment, the point]: the integral over the part of its own
        segment.
    """

    support: np.ndarray
    segment: np.ndarray
    mass: np.ndarray
    position: np.ndarray
    values: np.ndarray
    segment_slopes: np.ndarray
    segment_weights: np.ndarray
    point_slopes: np.ndarray
    point_weights: np.ndarray

    @property
    def width(self) -> int:
        """k: the support width."""
        return int(self.support.shape[1])

    @property
    def samples(self) -> int:
        """g: Gauss points per segment (and per point's part of its segment)."""
        return int(self.segment_weights.shape[1])


def foreshortening_points(
    basis, rho: float, positions: np.ndarray, masses: np.ndarray
) -> ForeshorteningPoints:
    """The :class:`ForeshorteningPoints` of a beam with basis ``basis`` (its ``breaks`` if any),
    mass per length ``rho`` and lumped masses ``masses`` at ``positions``."""
    L, n = basis.length, basis.n
    breaks = getattr(basis, "breaks", None)
    if breaks is not None:
        edges, mass_points, per = np.asarray(breaks, dtype=float), ELEMENT_POINTS, ELEMENT_SAMPLES
    else:
        edges, mass_points, per = np.linspace(0.0, L, 4 * n + 9), PANEL_POINTS, PANEL_POINTS
    S = edges.size - 1
    nodes, weights = composite_gauss(edges, mass_points)
    point_s = np.concatenate([nodes, np.asarray(positions, dtype=float)])
    point_m = np.concatenate([rho * weights, np.asarray(masses, dtype=float)])
    segment = np.clip(np.searchsorted(edges, point_s, side="right") - 1, 0, S - 1)
    order = np.argsort(segment, kind="stable")
    point_s, point_m, segment = point_s[order], point_m[order], segment[order]
    # The slope samples: a Gauss rule on [a_E, s_j] for every point, and on every segment.
    x, w = gauss_legendre(per)
    start = edges[segment]
    half = 0.5 * (point_s - start)
    sub_s = (start + half)[:, None] + half[:, None] * x
    sub_w = half[:, None] * w
    full_s, full_w = composite_gauss(edges, per)
    values, _ = basis.evaluate(point_s)  # (n, Q)
    _, sub_slopes = basis.evaluate(sub_s.ravel())
    _, full_slopes = basis.evaluate(full_s)
    sub_slopes = sub_slopes.reshape(n, *sub_s.shape)  # (n, Q, per)
    full_slopes = full_slopes.reshape(n, S, per)
    support, pad = _supports(full_slopes, values, sub_slopes, segment, S)
    take, padq = support[segment], pad[segment]  # (Q, k)
    picked = np.take_along_axis(np.moveaxis(full_slopes, 0, 1), support[:, :, None], axis=1)  # (S, k, per)
    sub = np.take_along_axis(np.moveaxis(sub_slopes, 0, 1), take[:, :, None], axis=1)  # (Q, k, per)
    picked[pad] = 0.0
    sub[padq] = 0.0
    point_values = np.take_along_axis(values.T, take, axis=1)
    point_values[padq] = 0.0
    return ForeshorteningPoints(
        support,
        segment,
        point_m,
        point_s,
        point_values,
        np.ascontiguousarray(np.swapaxes(picked, 1, 2)),
        full_w.reshape(S, per),
        np.ascontiguousarray(np.swapaxes(sub, 1, 2)),
        sub_w,
    )


def _supports(full_slopes, values, sub_slopes, segment, S) -> tuple[np.ndarray, np.ndarray]:
    """Per segment, the functions with any nonzero slope on it or value at its points, padded
    to a common width by repeating the last one; returns (support (S, k), padding mask)."""
    used = np.any(full_slopes != 0, axis=2).T  # (S, n)
    for e in range(S):
        mine = segment == e
        used[e] |= np.any(values[:, mine] != 0, axis=1) | np.any(sub_slopes[:, mine] != 0, axis=(1, 2))
    width = max(int(used.sum(axis=1).max()), 1)
    support = np.zeros((S, width), dtype=np.int64)
    pad = np.zeros((S, width), dtype=bool)
    for e in range(S):
        index = np.flatnonzero(used[e])
        if index.size == 0:
            index = np.array([0])
            pad[e, 0] = True
        support[e, : index.size] = index
        support[e, index.size :] = index[-1]
        pad[e, index.size :] = True
    return support, pad


class GramTerms(NamedTuple):
    """The foreshortening terms of M_b beyond the classic second-order ones, batch first
    (module docstring): ``Qxx`` adds to Q_xx (so to I_Ω's y and z diagonal), ``Qxa`` (B, 2) to
    Q_xy, Q_xz, ``Omega_delta`` (B, 3, m) to M_Ωδ and ``delta_delta`` (B, m, m) to M_δδ. (The
    quartic parts of S₁,x and of the axial row of A are :func:`quartic_moments`.)"""

    Qxx: np.ndarray
    Qxa: np.ndarray
    Omega_delta: np.ndarray
    delta_delta: np.ndarray


def _slopes(points: ForeshorteningPoints, deltas: list[np.ndarray]):
    """The plane slopes w_a' at the segment and point samples ([(B, S, g)], [(B, Q, g)]) and
    |w'|² there; products of small matrices by ``@`` (numpy's einsum of these shapes loops in C
    per element: 3-4x slower on a batch)."""
    local_segment = [delta[:, points.support, None] for delta in deltas]  # (B, S, k, 1)
    slope_segment = [(points.segment_slopes @ d)[..., 0] for d in local_segment]
    slope_point = [(points.point_slopes @ d[:, points.segment])[..., 0] for d in local_segment]
    square_segment = sum(p * p for p in slope_segment)  # |w'|² at the samples
    square_point = sum(p * p for p in slope_point)
    return slope_segment, slope_point, square_segment, square_point


def _weighted_slopes(weights: np.ndarray, slopes: np.ndarray, field: np.ndarray) -> np.ndarray:
    """Σ_g weights[i, g] field[b, i, g] slopes[i, g, k] → (B, I, k): an integral of ``field``
    against the shape slopes over each sample set i (einsum "ig,igk,big->bik" by ``@``)."""
    return ((weights * field)[..., None, :] @ slopes)[..., 0, :]


def point_fields(points: ForeshorteningPoints, deltas: list[np.ndarray], columns: list[np.ndarray], m: int):
    """Per point j: u₂, u₄ (B, Q), h₂, h₄ (B, Q, m) in the body coordinates, w (B, Q, 2) and the
    lateral shape rows φ (Q, 2, m), for the plane coefficients ``deltas`` [δ_y, δ_z] (each (B, n))
    placed in the body coordinates ``columns``; complex-step safe. The oracle: every h_j in full."""
    batch, n = deltas[0].shape
    dtype = np.result_type(*deltas, float)
    Q, S = points.segment.size, points.support.shape[0]
    slope_segment, slope_point, square_segment, square_point = _slopes(points, deltas)
    fields = {"u2": np.zeros((batch, Q), dtype=dtype), "u4": np.zeros((batch, Q), dtype=dtype)}
    for name, power, factor in (("u2", 1, -0.5), ("u4", 2, -0.125)):
        per_segment = np.einsum("sg,bsg->bs", points.segment_weights, square_segment**power)
        prefix = np.cumsum(per_segment, axis=1) - per_segment
        own = np.einsum("qg,bqg->bq", points.point_weights, square_point**power)
        fields[name] = factor * (prefix[:, points.segment] + own)
    rows = np.arange(Q)[:, None]
    w = np.zeros((batch, Q, 2), dtype=dtype)
    phi = np.zeros((Q, 2, m))
    for name, (weight_segment, weight_point) in (
        ("h2", (1.0, 1.0)),
        ("h4", (0.5 * square_segment, 0.5 * square_point)),
    ):
        h = np.zeros((batch, Q, m), dtype=dtype)
        for a, cols in enumerate(columns):
            if cols.size == 0:
                continue
            # ∫ weight · w_a' φ' over each segment and over each point's part of its own
            t = _weighted_slopes(
                points.segment_weights, points.segment_slopes, weight_segment * slope_segment[a]
            )
            scattered = np.zeros((batch, S, n), dtype=dtype)
            np.add.at(scattered, (slice(None), np.arange(S)[:, None], points.support), t)
            hq = (np.cumsum(scattered, axis=1) - scattered)[:, points.segment, :]  # (B, Q, n)
            own = _weighted_slopes(points.point_weights, points.point_slopes, weight_point * slope_point[a])
            np.add.at(hq, (slice(None), rows, points.support[points.segment]), own)
            h[:, :, cols] = hq
        fields[name] = h
    for a, (delta, cols) in enumerate(zip(deltas, columns, strict=True)):
        if cols.size == 0:
            continue
        w[:, :, a] = np.einsum("qk,bqk->bq", points.values, delta[:, points.support[points.segment]])
        np.add.at(phi[:, a, :], (rows, cols[points.support[points.segment]]), points.values)
    fields["w"], fields["phi"] = w, phi
    return fields


def gram_terms(
    points: ForeshorteningPoints, deltas: list[np.ndarray], columns: list[np.ndarray], m: int
) -> GramTerms:
    """The :class:`GramTerms` of the plane coefficients ``deltas`` [δ_y, δ_z] (each (B, n), zeros
    for an absent plane) placed in the body coordinates ``columns`` [plane 0, plane 1];
    complex-step safe. The oracle: O(Q m²) for ΔM_δδ."""
    f = point_fields(points, deltas, columns, m)
    u, h, w, phi = f["u2"] + f["u4"], f["h2"] + f["h4"], f["w"], f["phi"]
    mu = points.mass
    dQxx = np.einsum("q,bq->b", mu, u * u) + 2.0 * np.einsum("q,q,bq->b", mu, points.position, f["u4"])
    dQxa = np.einsum("q,bq,bqa->ba", mu, u, w)
    dM = np.zeros((u.shape[0], 3, m), dtype=u.dtype)
    dM[:, 1] = -np.einsum("q,bq,qm->bm", mu, u, phi[:, 1]) - np.einsum("q,bq,bqm->bm", mu, w[:, :, 1], h)
    dM[:, 2] = np.einsum("q,bq,qm->bm", mu, u, phi[:, 0]) + np.einsum("q,bq,bqm->bm", mu, w[:, :, 0], h)
    W = np.einsum("q,bqi,bqj->bij", mu, h, h)
    return GramTerms(dQxx, dQxa, dM, W)


def quartic_moments(
    points: ForeshorteningPoints, deltas: list[np.ndarray], columns: list[np.ndarray], m: int
):
    """(Σ_j μ_j u₄_j (B,), −Σ_j μ_j h₄_j (B, m)): what the quartic foreshortening adds to S₁,x
    and to the axial row of A = ∂S₁/∂δ, in O(S + Q) through the mass beyond each segment
    (the same sums :func:`gram_terms` forms point by point); complex-step safe."""
    batch, n = deltas[0].shape
    dtype = np.result_type(*deltas, float)
    mu = points.mass
    S = points.support.shape[0]
    beyond = np.bincount(points.segment, weights=mu, minlength=S)
    beyond = np.cumsum(beyond[::-1])[::-1] - beyond  # M_{>e}
    slope_segment, slope_point, square_segment, square_point = _slopes(points, deltas)
    # Σ over the samples of weight · |w'|⁴, as products with the flattened weights (BLAS;
    # numpy's three-operand einsum loops in C, ~1 s of a fine mesh's ∂G/∂q)
    first = -0.125 * (
        (square_segment**2).reshape(batch, -1) @ (beyond[:, None] * points.segment_weights).ravel()
        + (square_point**2).reshape(batch, -1) @ (mu[:, None] * points.point_weights).ravel()
    )
    row = np.zeros((batch, m), dtype=dtype)
    for a, cols in enumerate(columns):
        if cols.size == 0:
            continue
        t = _weighted_slopes(
            beyond[:, None] * points.segment_weights, points.segment_slopes, square_segment * slope_segment[a]
        )
        own = _weighted_slopes(
            mu[:, None] * points.point_weights, points.point_slopes, square_point * slope_point[a]
        )
        plane = np.zeros((batch, n), dtype=dtype)
        np.add.at(plane, (slice(None), points.support), t)
        np.add.at(plane, (slice(None), points.support[points.segment]), own)
        row[:, cols] -= 0.5 * plane
    return first, row
