"""core.numerics.roots.safeguarded_newton: bracketed Newton with a bisection safeguard.

References: closed-form roots (π/2, 2^(1/3), 0), and SciPy's brentq on the clamped-beam
frequency equations (shapes.clamped_roots), which the mpmath tests of test_shapes_roots.py
check to 1e-13 independently.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from core.numerics.roots import safeguarded_newton
from shapes.clamped_roots import (
    ROOT_RTOL,
    ROOT_XTOL,
    clamped_mass_function,
    clamped_mass_partials,
    clamped_mass_roots,
)


@pytest.mark.parametrize(
    ("function", "lo", "hi", "root"),
    [
        (lambda x: (math.cos(x), -math.sin(x)), 1.0, 2.0, math.pi / 2),
        (lambda x: (x**3 - 2.0, 3 * x**2), 0.0, 5.0, 2.0 ** (1 / 3)),
        (lambda x: (x**3, 3 * x**2), -1.0, 3.0, 0.0),  # f′ = 0 at the root: bisection steps in
        (lambda x: (math.atan(x), 1 / (1 + x * x)), -1.0, 30.0, 0.0),  # plain Newton from 14.5 diverges
    ],
)
def test_closed_form_roots(function, lo, hi, root):
    """To 1e-15 absolute (the tolerance asked, 1e-15 + 4ε|x|)."""
    assert safeguarded_newton(function, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps) == pytest.approx(
        root, abs=2e-15
    )


def test_steps_never_leave_the_bracket():
    """A slope that points away (f′ of the wrong sign) is never followed out of [lo, hi]."""
    seen = []

    def lying(x):
        seen.append(x)
        return x - 0.3, -1.0  # the true slope is +1

    assert safeguarded_newton(lying, 0.0, 1.0, xtol=1e-14, rtol=0.0) == pytest.approx(0.3, abs=1e-14)
    assert all(0.0 <= x <= 1.0 for x in seen)


@pytest.mark.parametrize(
    ("lo", "hi", "match"),
    [(2.0, 3.0, "same sign"), (1.0, 1.0, "finite and increasing"), (0.0, math.inf, "finite and increasing")],
)
def test_bad_brackets_are_refused(lo, hi, match):
    with pytest.raises(ValueError, match=match):
        safeguarded_newton(lambda x: (x - 1.0, 1.0), lo, hi, xtol=1e-12, rtol=0.0)


@settings(max_examples=40, deadline=None)
@given(
    mu=st.floats(min_value=1e-3, max_value=1e3),
    j=st.one_of(st.just(0.0), st.floats(min_value=1e-4, max_value=1e2)),
)
def test_clamped_mass_roots_agree_with_brentq(mu, j):
    """Each of the first 8 roots equals brentq's on a 1e-9 bracket around it to 1e-13 relative
    (measured at most 1.9e-15 over 300 random arms)."""
    for beta in clamped_mass_roots(8, mu, j):
        lo, hi = beta * (1 - 1e-9), beta * (1 + 1e-9)
        reference = brentq(clamped_mass_function, lo, hi, args=(mu, j), xtol=ROOT_XTOL, rtol=ROOT_RTOL)
        assert beta == pytest.approx(reference, rel=1e-13)


def test_mode_shapes_do_not_load_scipy_optimize():
    """The clamped roots are found without importing scipy.optimize (~0.5 s of process time a
    study would pay for one root finder)."""
    code = (
        "import sys; from shapes.clamped_roots import clamped_mass_roots, clamped_free_roots; "
        "clamped_mass_roots(5, 2.0, 0.1); clamped_free_roots(5); "
        "print('scipy.optimize' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_converged_step_landing_on_the_bracket_end_is_accepted():
    """The last Newton step of a root can round onto the end the previous iterate became (the
    clamped–mass root 1 of μ = 3, j = 0.05 did): that is convergence, not a cue to bisect on
    from the far end (which took 37 evaluations instead of 8)."""
    calls = []

    def f(beta):
        calls.append(beta)
        value, slope = clamped_mass_partials(beta, 3.0, 0.05)[:2]
        return float(value), float(slope)

    root = safeguarded_newton(f, 1e-300, math.pi / 2, xtol=ROOT_XTOL, rtol=ROOT_RTOL)
    assert abs(clamped_mass_function(root, 3.0, 0.05)) < 1e-15
    assert len(calls) <= 10
