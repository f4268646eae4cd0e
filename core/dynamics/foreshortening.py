"""The kinetic energy of a stiffened beam as a Gram form: the terms of the foreshortening
beyond second order.

With geometric stiffening a beam point at material coordinate s sits at
ρ(s) = (s + u(s)) e_x + w(s), w = Φ(s)δ (lateral), u(s) = −½ Σ_a δ_aᵀ H(s) δ_a the axial
foreshortening of an inextensible beam, H(s) = ∫₀ˢ φ'φ'ᵀ dσ. Its velocity in beam axes is

    V = v + Ω × ρ + Φ δ̇ + u̇ e_x,     u̇ = −h(s)ᵀ δ̇,   h(s) = ∂(−u)/∂δ = (H(s) δ_a)_a,

and the body's kinetic energy T = ½ ∫ |V|² dm = ½ νᵀ M_b(δ) ν is a Gram form: M_b = ∫ J_pᵀ J_p dm
with J_p = [1, −ρ̃, Φ − e_x hᵀ], symmetric positive semi-definite for *every* δ (definite when
the columns of J_p are independent over the mass, which the lateral Φ columns ensure). The
classic second-order truncation (:mod:`core.dynamics.flexible_body`: S₁,x, Q_xx − δᵀP₂δ and the
axial row of A) keeps the products of u with the rigid motion and drops

    ΔT = ∫ [ ½ (Ω_y² + Ω_z²) u² − Ω_x (Ω_y w_y + Ω_z w_z) u
             + Ω_y (w_z u̇ − u ẇ_z) + Ω_z (u ẇ_y − w_y u̇) + ½ u̇² ] dm,

terms of third and fourth order in (δ, δ̇) that are negligible for a smooth deflection but are
what keeps M_b positive definite: without ½∫u̇² dm the coupling v_x ∫u̇ dm of the axial row of A
is not bounded by anything, and it grows with the curvature a mesh resolves (a fine element
mesh turns M indefinite at a tenth of the gravity sag; docs/MODEL.md, Dynamics). In blocks,
ΔT = ½ νᵀ ΔM_b ν with

    ΔQ_xx = ∫u² dm,   ΔQ_xa = ∫u w_a dm   (I_Ω = tr(Q) 1 − Q),
    ΔM_Ωδ rows y, z:  ∫(−u Φ_z − w_z hᵀ) dm,  ∫(u Φ_y + w_y hᵀ) dm,
    ΔM_δδ = ∫ h hᵀ dm.

**The mass measure.** The integrals run over a fixed point set (:class:`ForeshorteningPoints`):
Gauss points of the beam (mass ρ w_g) and the lumped masses. Between the breaks of an element
basis the shapes are cubic, u is of degree 5 and every integrand of ΔT of degree ≤ 10, so six
Gauss points per element integrate them exactly and M_b is the Gram form of the beam itself;
assumed-mode shapes are integrated on panels as fine as :func:`~core.dynamics.basis.slope_products`
uses (~1e-15 relative). h(s) = H(s)δ is kept as *prefix + local part*: the full slope Gram G_e of
every segment before s, and the partial one of its own segment, each on the segment's support
(four functions per plane on an element), so nothing dense of size (points × n²) is stored.

This module is the numpy oracle of those terms (complex-step safe: the engine's derivatives of
M_b come by the complex step); the compiled kernels evaluate the same sums, with their rates
and δ-gradients, in :mod:`core.dynamics.compiled.stiffening`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.numerics.quadrature import composite_gauss, gauss_legendre

#: Gauss points per segment between the breaks of a piecewise-cubic (element) basis: exact for
#: the degree-10 integrands of ΔT.
ELEMENT_POINTS = 6
#: Gauss points per panel for a basis without breaks (assumed modes), on 4n + 8 panels.
PANEL_POINTS = 10


@dataclass(frozen=True, eq=False)
class ForeshorteningPoints:
    """The mass measure of a stiffened beam, on the segments of its basis.

    Attributes
    ----------
    support : ndarray of int, shape (S, k)
        The basis functions nonzero on each segment (padded by repeating a valid index with
        zero data).
    gram : ndarray, shape (S, k, k)
        G_e = ∫_e φ'φ'ᵀ dσ on the support of segment e.
    segment : ndarray of int, shape (Q,)
        The segment of each point (nondecreasing).
    mass : ndarray, shape (Q,)
        Its mass [kg].
    values : ndarray, shape (Q, k)
        φ at the point, on its segment's support.
    partial : ndarray, shape (Q, k, k)
        ∫ from the start of its segment to the point of φ'φ'ᵀ, on the support: H(s_j) is
        Σ_{e < segment} G_e + partial_j.
    """

    support: np.ndarray
    gram: np.ndarray
    segment: np.ndarray
    mass: np.ndarray
    values: np.ndarray
    partial: np.ndarray

    @property
    def width(self) -> int:
        """k: the support width."""
        return int(self.support.shape[1])


def foreshortening_points(
    basis, rho: float, positions: np.ndarray, masses: np.ndarray
) -> ForeshorteningPoints:
    """The :class:`ForeshorteningPoints` of a beam with basis ``basis`` (its ``breaks`` if any),
    mass per length ``rho`` and lumped masses ``masses`` at ``positions``."""
    L, n = basis.length, basis.n
    breaks = getattr(basis, "breaks", None)
    if breaks is not None:
        edges, per = np.asarray(breaks, dtype=float), ELEMENT_POINTS
    else:
        edges, per = np.linspace(0.0, L, 4 * n + 9), PANEL_POINTS
    S = edges.size - 1
    nodes, weights = composite_gauss(edges, per)
    point_s = np.concatenate([nodes, np.asarray(positions, dtype=float)])
    point_m = np.concatenate([rho * weights, np.asarray(masses, dtype=float)])
    segment = np.clip(np.searchsorted(edges, point_s, side="right") - 1, 0, S - 1)
    order = np.argsort(segment, kind="stable")
    point_s, point_m, segment = point_s[order], point_m[order], segment[order]
    # The partial slope Grams: a Gauss rule on [a_E, s_j] for every point, and the full ones.
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
    gram = np.einsum("esg,etg,eg->est", picked, picked, full_w.reshape(S, per))
    sub = np.take_along_axis(np.moveaxis(sub_slopes, 0, 1), take[:, :, None], axis=1)  # (Q, k, per)
    partial = np.einsum("qsg,qtg,qg->qst", sub, sub, sub_w)
    gram[pad[:, :, None] | pad[:, None, :]] = 0.0
    partial[padq[:, :, None] | padq[:, None, :]] = 0.0
    point_values = np.take_along_axis(values.T, take, axis=1)
    point_values[padq] = 0.0
    return ForeshorteningPoints(support, gram, segment, point_m, point_values, partial)


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


def gram_terms(points: ForeshorteningPoints, deltas: list[np.ndarray], columns: list[np.ndarray], m: int):
    """ΔQ_xx (B,), ΔQ_xa (B, 2), ΔM_Ωδ (B, 3, m) and ΔM_δδ (B, m, m) of the module docstring for
    the plane coefficients ``deltas`` [δ_y, δ_z] (each (B, n), zeros for an absent plane) placed
    in the body coordinates ``columns`` [plane 0, plane 1]; complex-step safe.

    The oracle: every h(s_j) is formed in full, O(Q m²) for ΔM_δδ."""
    batch = deltas[0].shape[0]
    dtype = np.result_type(*deltas, float)
    n = deltas[0].shape[1]
    Q, S = points.segment.size, points.gram.shape[0]
    h = np.zeros((batch, Q, m), dtype=dtype)
    u = np.zeros((batch, Q), dtype=dtype)
    w = np.zeros((batch, Q, 2), dtype=dtype)
    phi = np.zeros((Q, 2, m))
    rows = np.arange(Q)[:, None]
    for a, (delta, cols) in enumerate(zip(deltas, columns, strict=True)):
        if cols.size == 0:
            continue
        local = delta[:, points.support]  # (B, S, k)
        t = np.einsum("est,bet->bes", points.gram, local)  # G_e δ on each segment
        scattered = np.zeros((batch, S, n), dtype=dtype)
        np.add.at(scattered, (slice(None), np.arange(S)[:, None], points.support), t)
        prefix = np.cumsum(scattered, axis=1) - scattered  # Σ_{e < E} G_e δ, (B, S, n)
        hq = prefix[:, points.segment, :]  # (B, Q, n)
        own = np.einsum("qst,bqt->bqs", points.partial, local[:, points.segment])
        np.add.at(hq, (slice(None), rows, points.support[points.segment]), own)
        h[:, :, cols] = hq
        u -= 0.5 * np.einsum("bqn,bn->bq", hq, delta)
        w[:, :, a] = np.einsum("qk,bqk->bq", points.values, delta[:, points.support[points.segment]])
        np.add.at(phi[:, a, :], (rows, cols[points.support[points.segment]]), points.values)
    mu = points.mass
    dQxx = np.einsum("q,bq->b", mu, u * u)
    dQxa = np.einsum("q,bq,bqa->ba", mu, u, w)
    dM = np.zeros((batch, 3, m), dtype=dtype)
    dM[:, 1] = -np.einsum("q,bq,qm->bm", mu, u, phi[:, 1]) - np.einsum("q,bq,bqm->bm", mu, w[:, :, 1], h)
    dM[:, 2] = np.einsum("q,bq,qm->bm", mu, u, phi[:, 0]) + np.einsum("q,bq,bqm->bm", mu, w[:, :, 0], h)
    W = np.einsum("q,bqi,bqj->bij", mu, h, h)
    return dQxx, dQxa, dM, W
