"""A fast Python printer for the generated code, and functions built from its source.

sympy's code printers order the terms of every sum and work out the precedence of every node;
on the thousands of short lines of a long chain's recursion that took most of the generation
time. :func:`code` prints the few node types the derivations make (sums, products, powers,
cos, sin, sqrt, :class:`~amm.symbolic.tip_rotation.stumpff`, the l-dependent integrals
:class:`~amm.symbolic.following.LengthIntegral`, numbers, symbols), fully
parenthesized, and falls back to sympy's Python printer for anything else.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from amm.symbolic.following import LengthIntegral

_FALLBACK = PythonCodePrinter({"allow_unknown_functions": True, "fully_qualified_modules": False})
_FUNCTIONS = {sp.cos: "cos", sp.sin: "sin"}


def code(expr, memo: dict | None = None) -> str:
    """Python source of ``expr`` (math-module names: cos, sin, sqrt, stumpff)."""
    memo = {} if memo is None else memo
    return _code(sp.sympify(expr), memo)


def _code(expr, memo: dict) -> str:
    found = memo.get(expr)
    if found is not None:
        return found
    if expr.is_Symbol:
        out = expr.name
    elif expr.is_Integer:
        out = f"{int(expr)}.0" if abs(int(expr)) < 2**53 else repr(float(expr))
    elif expr.is_Rational:
        out = f"({expr.p}.0/{expr.q}.0)"
    elif expr.is_Float or expr.is_NumberSymbol:
        out = repr(float(expr))
    elif expr.is_Add:
        out = "(" + " + ".join(_code(a, memo) for a in expr.args) + ")"
    elif expr.is_Mul:
        args = expr.args
        if args[0] == -1:
            out = "(-" + "*".join(_code(a, memo) for a in args[1:]) + ")"
        else:
            out = "(" + "*".join(_code(a, memo) for a in args) + ")"
    elif expr.is_Pow:
        out = _power(expr, memo)
    elif expr.func in _FUNCTIONS:
        out = f"{_FUNCTIONS[expr.func]}({_code(expr.args[0], memo)})"
    elif isinstance(expr, LengthIntegral):
        out = f"{expr.label}({_code(expr.args[0], memo)})"
    elif expr.func.__name__ == "stumpff":
        out = f"stumpff({int(expr.args[0])}, {_code(expr.args[1], memo)})"
    else:
        out = "(" + _FALLBACK.doprint(expr) + ")"
    memo[expr] = out
    return out


def _power(expr, memo: dict) -> str:
    base, exponent = _code(expr.base, memo), expr.exp
    if exponent == sp.S.Half:
        return f"sqrt({base})"
    if exponent == -sp.S.Half:
        return f"(1.0/sqrt({base}))"
    if exponent.is_Integer:
        k = int(exponent)
        if k == 2:
            return f"({base}*{base})"
        if k == -1:
            return f"(1.0/{base})"
        return f"({base}**{k})"
    return f"({base}**{_code(exponent, memo)})"


def _nested(value, memo: dict) -> str:
    if isinstance(value, sp.MatrixBase):
        return (
            "["
            + ", ".join("[" + ", ".join(_code(e, memo) for e in row) + "]" for row in value.tolist())
            + "]"
        )
    return _code(sp.sympify(value), memo)


def function_source(name: str, arguments: list, replacements: list, outputs: list) -> str:
    """Source of ``def name(a0, a1, …)``: each argument a list of symbols (unpacked by index), the
    ``replacements`` (symbol, expression) in order, and the list of ``outputs`` (matrices as
    nested lists)."""
    memo: dict = {}
    names = [f"_a{k}" for k in range(len(arguments))]
    lines = [f"def {name}({', '.join(names)}):"]
    for argument, group in zip(names, arguments, strict=True):
        for k, symbol in enumerate(group):
            lines.append(f"    {symbol.name} = {argument}[{k}]")
    for symbol, value in replacements:
        lines.append(f"    {symbol.name} = {_code(sp.sympify(value), memo)}")
    lines.append("    return [" + ", ".join(_nested(o, memo) for o in outputs) + "]")
    return "\n".join(lines) + "\n"


def build(source, name: str, namespace: dict):
    """The function ``name`` of ``source`` (text, or its compiled code object) run in a copy of
    ``namespace``."""
    scope = dict(namespace)
    code = compile(source, f"<generated {name}>", "exec") if isinstance(source, str) else source
    exec(code, scope)
    return scope[name]
