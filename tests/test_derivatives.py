"""The one complex-step helper, the one central-difference Jacobian and the one
composite Gauss rule, against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.numerics.derivatives import central_difference_jacobian, complex_step_jacobian
from core.numerics.quadrature import composite_gauss


def f(x):
    return np.array([np.sin(x[0]) * x[1], np.exp(x[1]) * x[2] ** 2, x[0] * x[1] * x[2]])


def jacobian(x):
    return np.array(
        [
            [np.cos(x[0]) * x[1], np.sin(x[0]), 0.0],
            [0.0, np.exp(x[1]) * x[2] ** 2, 2 * np.exp(x[1]) * x[2]],
            [x[1] * x[2], x[0] * x[2], x[0] * x[1]],
        ]
    )


X = np.array([0.3, -1.2, 2.5])


def test_complex_step_jacobian_is_exact_to_round_off():
    # Measured: max relative difference 0 to 1 ulp; 1e-15 allows for libm.
    np.testing.assert_allclose(complex_step_jacobian(f, X), jacobian(X), rtol=1e-15, atol=1e-15)


def test_complex_step_jacobian_batched_and_selected_columns():
    # The same round-off bound as above: libm's complex sin/exp differ by 1 ulp between
    # processors (measured on an AMD EPYC: entry [1, 0] 1 ulp off; 0 on the earlier machine).
    batched = lambda points: np.array([f(p) for p in points])  # noqa: E731
    np.testing.assert_allclose(
        complex_step_jacobian(batched, X, [2, 0], batched=True),
        jacobian(X)[:, [2, 0]],
        rtol=1e-15,
        atol=1e-15,
    )
    assert complex_step_jacobian(f, X, []).shape == (3, 0)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_complex_step_jacobian_in_batches_of_a_given_size(size):
    # Batches of at most ``size`` points, every column once and in order: the same bits as
    # one batch of all (each point's value does not depend on its batch).
    calls = []

    def batched(points):
        calls.append(len(points))
        return np.array([f(p) for p in points])

    whole = complex_step_jacobian(batched, X, batched=True)
    calls.clear()
    np.testing.assert_array_equal(complex_step_jacobian(batched, X, batched=True, batch_size=size), whole)
    assert sum(calls) == X.size and max(calls) == min(size, X.size)
    with pytest.raises(ValueError, match="batch_size"):
        complex_step_jacobian(batched, X, batched=True, batch_size=0)


def test_central_difference_jacobian_is_second_order():
    # Truncation h²·f'''/6 with h = 1e-6·max(1, |x|) is ~1e-12; round-off ε/h ~ 1e-10.
    np.testing.assert_allclose(central_difference_jacobian(f, X), jacobian(X), rtol=0, atol=3e-9)
    coarse = central_difference_jacobian(f, X, step=1e-3)
    finer = central_difference_jacobian(f, X, step=5e-4)
    error_ratio = np.max(np.abs(coarse - jacobian(X))) / np.max(np.abs(finer - jacobian(X)))
    assert error_ratio == pytest.approx(4.0, rel=0.01)  # halving h quarters the error


@pytest.mark.parametrize("points", [1, 2, 4, 8])
def test_composite_gauss_is_exact_to_degree_2n_minus_1(points):
    edges = np.array([-0.5, 0.1, 0.15, 1.7])
    nodes, weights = composite_gauss(edges, points)
    assert nodes.shape == weights.shape == (3 * points,)
    rng = np.random.default_rng(points)
    coefficients = rng.normal(size=2 * points)  # degree 2n − 1
    exact = np.polynomial.Polynomial(coefficients).integ()
    value = weights @ np.polynomial.Polynomial(coefficients)(nodes)
    assert value == pytest.approx(exact(edges[-1]) - exact(edges[0]), rel=1e-13)
    # One degree more is not exact: the Gauss–Legendre remainder of x^{2n} on [0, 1]
    # is (n!)⁴ / ((2n + 1) ((2n)!)²) (Abramowitz & Stegun 25.4.29 with f^{(2n)} = (2n)!).
    nodes, weights = composite_gauss([0.0, 1.0], points)
    n = points
    remainder = math.factorial(n) ** 4 / ((2 * n + 1) * math.factorial(2 * n) ** 2)
    assert 1 / (2 * n + 1) - weights @ nodes ** (2 * n) == pytest.approx(remainder, rel=1e-4)
