"""Accuracy report for the shape families (not a test; prints a Markdown table).

    python benchmarks/shape_accuracy.py

For every family at 10/50/100 modes: the worst deviation of the inner-product
matrix from the identity, the worst normwise boundary-condition residual, and
the worst relative root error against an independent 50-digit mpmath solve of
the frequency equation (scaled by cosh β so mpmath's residual test is
meaningful). Also the time to find 100 roots.
"""

from __future__ import annotations

import time

import mpmath
import numpy as np

import shapes

CASES = [
    ("pinned-pinned", {}),
    ("clamped-free", {}),
    ("clamped-mass", {"mass_ratio": 1.0, "inertia_ratio": 0.1}),
    ("clamped-mass", {"mass_ratio": 1000.0, "inertia_ratio": 0.0}),
    ("clamped-mass", {"mass_ratio": 0.0, "inertia_ratio": 100.0}),
    ("clamped-mass", {"mass_ratio": 1000.0, "inertia_ratio": 100.0}),
    ("beta-ode", {"tip_mass": 0.0828, "tip_inertia": 1e-4, "mass_per_length": 0.4303 / 1.3, "length": 0.3}),
]


def reference_root(name: str, family: shapes.ShapeFamily, guess: float) -> float:
    if name == "pinned-pinned":
        return float(mpmath.pi * round(guess / np.pi))
    mu, j = family.mass_ratio, family.inertia_ratio
    with mpmath.workdps(50):

        def f(x):
            ch, sh, c, s = mpmath.cosh(x), mpmath.sinh(x), mpmath.cos(x), mpmath.sin(x)
            return (
                (1 + c * ch)
                - mu * x * (ch * s - sh * c)
                - j * x**3 * (ch * s + sh * c)
                + mu * j * x**4 * (1 - c * ch)
            ) / ch

        return float(mpmath.findroot(f, mpmath.mpf(guess)))


def main() -> None:
    print(
        "| family | parameters | orthonormality 10 | 50 | 100 | BC residual (100) | root error (100) | 100 roots [ms] |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, params in CASES:
        start = time.perf_counter()
        family = shapes.family(name, **params)
        betas = family.betas(100)
        elapsed = 1e3 * (time.perf_counter() - start)
        ortho = [np.max(np.abs(family.inner_product_matrix(n) - np.eye(n))) for n in (10, 50, 100)]
        bc = np.max(family.boundary_residuals(100))
        reference = np.array([reference_root(name, family, b) for b in betas])
        root_error = np.max(np.abs(betas - reference) / reference)
        text = ", ".join(f"{k}={v:g}" for k, v in params.items()) or "-"
        print(
            f"| {name} | {text} | {ortho[0]:.1e} | {ortho[1]:.1e} | {ortho[2]:.1e} | {bc:.1e} | {root_error:.1e} | {elapsed:.0f} |"
        )


if __name__ == "__main__":
    main()
