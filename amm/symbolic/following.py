"""The modal integrals of a translating link whose shapes follow its free length, as named
functions of the free-length symbol, and their numeric binding to the engine's series.

A length-following basis (:mod:`shapes.following`: clamped–mass shapes whose roots β_k(l),
tip ratios μ(l), j(l) change with l) has η-integrals that depend on the free length l. The
derivation writes each as a :class:`LengthIntegral` of the joint coordinate, printed
``ta3_1(d3)`` (:meth:`amm.symbolic.parameters.Parameters.length_function`); differentiating the
kinetic and potential energy in l (∂M/∂l, h, G, the elastic forces) gives its derivatives as
the same function of a higher order, ``ta3_1__l1(d3)`` = d/dl ``ta3_1(d3)``. :func:`namespace`
binds each name to the engine's own evaluation, :meth:`shapes.following.LengthFollowing.taylor`
of the engine model's body (the fitted Chebyshev series of :mod:`shapes.following_series` inside
the link's range of free lengths, with the ``"ode"`` tracker's roots when a simulation sets
them), so the generated functions evaluate exactly the engine's numbers. A complex l (a complex
step) is evaluated from the Taylor series about its real part, as the engine does
(:func:`core.dynamics.flexible_body.taylor_sum`).
"""

from __future__ import annotations

import re

import numpy as np
import sympy as sp
from sympy.core.symbol import Str

from core.dynamics.flexible_body import TAYLOR_ORDER, taylor_sum

#: Separator of a derivative's name: ``ta3_1__l2`` is d²/dl² of ``ta3_1``.
DERIVATIVE = "__l"


class LengthIntegral(sp.Function):
    """d^k/dl^k of the named modal integral of a length-following basis, a function of the free
    length l: ``LengthIntegral(l, Str(name), k)``; its derivative in l is that of order k + 1."""

    nargs = 3
    is_real = True

    @classmethod
    def of(cls, name: str, l) -> LengthIntegral:
        """The integral ``name`` (order 0) at the free length ``l``."""
        return cls(l, Str(name), sp.Integer(0))

    @property
    def label(self) -> str:
        """The generated code's name: ``ta3_1``, ``ta3_1__l1``…"""
        _, name, order = self.args
        return name.name if order == 0 else f"{name.name}{DERIVATIVE}{int(order)}"

    def _eval_derivative(self, s):
        l, name, order = self.args
        return LengthIntegral(l, name, order + 1) * l.diff(s)

    def _sympystr(self, printer) -> str:
        return f"{self.label}({printer._print(self.args[0])})"

    def _latex(self, printer, exp=None) -> str:
        l, name, order = self.args
        found = re.fullmatch(r"([A-Za-z]+)(\d+)_(\d+)", name.name)
        head = rf"\operatorname{{{found[1]}}}_{{{found[2]},{found[3]}}}" if found else name.name
        primes = "'" * int(order) if order <= 3 else f"^{{({int(order)})}}"
        out = f"{head}{primes}({printer._print(l)})"
        return out if exp is None else rf"\left({out}\right)^{{{exp}}}"


class _Source:
    """The engine's ``taylor`` of one length-following body, the last free length's kept (with
    the tracker's roots: the ``"ode"`` roots change the values at the same length)."""

    def __init__(self, following) -> None:
        self.following = following
        self._key: tuple | None = None
        self._terms: dict | None = None

    def __call__(self, l0: float) -> dict:
        state = self.following.beta_state
        key = (l0, None if state is None else state.tobytes())
        if key != self._key:
            self._terms = self.following.taylor(l0, order=TAYLOR_ORDER)
            self._key = key
        return self._terms


def _bound(source: _Source, key: str, index: tuple, order: int):
    """l ↦ d^order/dl^order of integral ``key``[index] (real or complex l)."""
    if order > TAYLOR_ORDER:
        raise ValueError(f"no l-derivative of order {order} (the engine's series go to {TAYLOR_ORDER})")
    where = (slice(None), *index)

    def value(l):
        if isinstance(l, complex | np.complexfloating):
            l0 = float(l.real)
            return complex(taylor_sum(source(l0)[key][where], l - l0, order))
        return float(source(float(l))[key][(order, *index)])

    return value


def namespace(functions: dict, model) -> dict:
    """Name → callable for every function of ``functions`` (name → (link, integral key, index),
    :attr:`amm.symbolic.SymbolicEOM.functions`) and its l-derivatives up to
    :data:`~core.dynamics.flexible_body.TAYLOR_ORDER`, evaluated by the engine ``model``'s bodies."""
    sources: dict[int, _Source] = {}
    out = {}
    for name, (number, key, index) in functions.items():
        if number not in sources:
            sources[number] = _Source(model.bodies[number].following)
        for order in range(TAYLOR_ORDER + 1):
            label = name if order == 0 else f"{name}{DERIVATIVE}{order}"
            out[label] = _bound(sources[number], key, tuple(index), order)
    return out
