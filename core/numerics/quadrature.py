"""Composite Gauss–Legendre quadrature on the normalized beam coordinate η ∈ [0, 1].

Mode shapes of order k oscillate like cos(β_k η) and carry boundary layers like
exp(-β_k η); a single high-order Gauss rule cannot resolve 100 modes. We split
[0, 1] into equal panels, each at most about one oscillation (and one boundary
layer decay length π/β) wide, and use a 16-point rule per panel. On such a panel
the interpolation error of a 16-point rule is below 1e-18 relative, so products
of two shapes of the first ``n`` modes integrate to round-off.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

#: Gauss points per panel.
POINTS_PER_PANEL = 16
#: Extra panels beyond one per half wave of the highest frequency in the integrand.
EXTRA_PANELS = 8


def composite_gauss(edges: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre rule: ``points`` points on each interval between ``edges``.

    Parameters
    ----------
    edges : array_like, shape (k + 1,)
        Increasing interval ends.
    points : int
        Gauss points per interval: exact for polynomials of degree 2·points − 1
        on each interval.

    Returns
    -------
    nodes, weights : ndarray, shape (k · points,)
        ``weights @ g(nodes)`` approximates ∫ g over [edges[0], edges[-1]].
    """
    edges = np.asarray(edges, dtype=float)
    x, w = np.polynomial.legendre.leggauss(points)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


@lru_cache(maxsize=64)
def gauss_legendre(points: int) -> tuple[np.ndarray, np.ndarray]:
    """Read-only Gauss–Legendre nodes and weights on [−1, 1] (``points`` points: exact to degree
    2·points − 1), for rules on intervals that move (e.g. [segment start, point])."""
    x, w = np.polynomial.legendre.leggauss(points)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


@lru_cache(maxsize=64)
def panel_rule(panels: int, points: int = POINTS_PER_PANEL) -> tuple[np.ndarray, np.ndarray]:
    """Read-only composite Gauss rule of ``points`` points on each of ``panels`` equal panels of [0, 1]."""
    nodes, weights = composite_gauss(np.linspace(0.0, 1.0, panels + 1), points)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def gauss_rule(max_wavenumber: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1] that integrate products of two shape functions.

    Parameters
    ----------
    max_wavenumber : float
        The largest β·L among the shape functions whose products are integrated.

    Returns
    -------
    nodes, weights : ndarray, shape (m,)
        Read-only arrays; ``weights @ g(nodes)`` approximates ∫₀¹ g(η) dη.
    """
    # A product of two shapes oscillates with wavenumber up to 2β, i.e. β/π
    # full periods on [0, 1]: one panel per period keeps each panel smooth.
    panels = int(np.ceil(max(float(max_wavenumber), 0.0) / np.pi)) + EXTRA_PANELS
    return panel_rule(panels)
