"""The Stumpff functions c_k(x) of the exact tip rotation: a sympy function and its generated twin.

A spatial link bending in two planes turns its tip by the rotation vector θ; the exact rotation
exp(θ̃) and its left Jacobian are polynomials in θ with coefficients c_k(θᵀθ), entire functions
that carry no 0/0 at θ = 0 (docs/SYMBOLIC.md, scope). :class:`stumpff` is the symbolic function
the derivation writes; :data:`STUMPFF_SOURCE` is the Python source of the same function that
every generated module (numpy, math, numba) carries, with its series branch below
:data:`SERIES_BELOW`.
"""

from __future__ import annotations

import sympy as sp

#: Below this |x| the generated c_k(x) take their series, :data:`SERIES_TERMS` terms: exact to
#: round-off for |x| < 1 (the first term left out is below 1/24! ≈ 2e-24 of the first); above it, the closed forms
#: in cos √x and sin √x.
SERIES_BELOW = 1.0
#: Terms of the series branch of the generated c_k(x).
SERIES_TERMS = 12


class stumpff(sp.Function):
    """c_k(x) = Σ_j (−x)ʲ/(2j + k)!, entire in x = θᵀθ: c₀ = cos r, c₁ = sin r/r,
    c₂ = (1 − cos r)/r², c₃ = (r − sin r)/r³ (r = √x). The exact rotation of a tip rotation
    vector θ is exp(θ̃) = c₀ 1 + c₁ θ̃ + c₂ θθᵀ and its left Jacobian c₁ 1 + c₂ θ̃ + c₃ θθᵀ;
    dc_k/dx = −(c_{k+1} − k c_{k+2})/2 keeps every derivative free of 0/0."""

    nargs = 2

    @classmethod
    def eval(cls, k, x):
        if x.is_zero and k.is_Integer:
            return 1 / sp.factorial(k)
        return None

    def fdiff(self, argindex=2):
        if argindex != 2:
            raise sp.ArgumentIndexError(self, argindex)
        k, x = self.args
        return -(stumpff(k + 1, x) - k * stumpff(k + 2, x)) / 2

    def _latex(self, printer, exp=None):
        k, x = self.args
        out = f"c_{{{k}}}\\left({printer._print(x)}\\right)"
        return f"{out}^{{{exp}}}" if exp is not None else out


#: ``stumpff(k, x)`` in Python on whatever ``sqrt``, ``cos``, ``sin`` the generated module binds
#: (math, numpy; numba compiles it as written).
STUMPFF_SOURCE = f'''
def stumpff(k, x):
    """c_k(x) = sum_j (-x)**j / (2j + k)!, x = |theta|**2 (amm.symbolic.stumpff)."""
    if abs(x) < {SERIES_BELOW!r}:
        term = 1.0
        for i in range(2, k + 1):
            term /= i
        total = 0.0 * x
        for j in range({SERIES_TERMS}):
            total += term
            term *= -x / ((2 * j + k + 1) * (2 * j + k + 2))
        return total
    r = sqrt(x)
    value = cos(r) if k % 2 == 0 else sin(r) / r
    factorial = 1.0
    for i in range(k % 2, k, 2):
        value = (1.0 / factorial - value) / x
        factorial *= (i + 1) * (i + 2)
    return value
'''


def stumpff_namespace(sqrt, cos, sin) -> dict:
    """``{"stumpff": ...}``: :data:`STUMPFF_SOURCE` run on the given sqrt, cos, sin (math or numpy),
    a namespace for ``sympy.lambdify``."""
    namespace = {"sqrt": sqrt, "cos": cos, "sin": sin}
    exec(STUMPFF_SOURCE, namespace)
    return {"stumpff": namespace["stumpff"]}
