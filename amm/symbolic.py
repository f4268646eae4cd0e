"""Symbolic equations of motion of planar and spatial arms (assumed modes), issue 16.

:func:`derive` builds M, C, K, D, G and B of a planar arm as sympy matrices in
the engine's coordinates (``theta1``, ``w1_1``…) with the same floating-frame
formulation as :mod:`core.dynamics.flexible_body` (planar case), body by body::

    M(q) = Σ_b J_bᵀ M_b(δ) J_b,     C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k

so Ṁ − 2C is skew by construction. ∂M/∂q_k is differentiated through the
(small) body Jacobians and body mass matrices, Σ_b (Xᵀ + X + J_bᵀ ∂M_b/∂q_k J_b)
with X = J_bᵀ M_b ∂J_b/∂q_k, not through the assembled M. Velocities are kept in
the axes of the link carrying them, so M holds only relative angles (q_i and the
tip rotations), as the textbook forms do. A flexible link's body velocity is
ν = (v_x, v_y, ω, δ̇) in beam-frame axes and its planar body mass matrix is

    M_b = [[ m     0      −S_y(δ)   0    ],
           [ 0     m       S_x      Aᵀ   ],
           [ −S_y  S_x     I(δ)     cᵀ   ],
           [ 0     A       c        M_δδ ]]

with S_x = ρA L²/2 + Σ m_j s_j, S_y = A·δ, A = ρA a + Σ m_j φ(s_j),
I(δ) = ρA L³/3 + Σ m_j s_j² + δᵀ(ρA N + Σ m_j φ(s_j)φ(s_j)ᵀ)δ + Σ J_j (the
second-order term in δ the engine keeps), c = ρA b + Σ m_j s_j φ(s_j) + Σ J_j φ'(s_j),
M_δδ = ρA N + Σ (m_j φφᵀ + J_j φ'φ'ᵀ)(s_j).

Parameters and modal constants
------------------------------
The :class:`~core.arm.Arm` validation accepts numbers only, so the arm is given
with numbers and ``symbols=True`` (default) replaces every scalar parameter by a
named symbol (``L1``, ``rhoA1``, ``EI1``, ``m1``, ``lc1``, ``I1``, ``mh2``,
``Jh2``, ``Jr1`` (motor inertia × gear ratio²), ``mp``, ``Jp``, ``gx``, ``gy``,
``bv1``…), its number kept in :attr:`SymbolicEOM.values`. With
``constants="symbols"`` the modal constants of link i are symbols as well
(defined in :attr:`SymbolicEOM.definitions`, all on the physical link,
s ∈ [0, L_i]): ``a{i}_{k}`` = ∫φ_k ds, ``b{i}_{k}`` = ∫sφ_k ds,
``N{i}_{k}{l}`` = ∫φ_kφ_l ds, ``k{i}_{k}{l}`` = ∫φ_k''φ_l'' ds, ``phiL{i}_{k}`` =
φ_k(L), ``dphiL{i}_{k}`` = φ_k'(L), ``dphi0{i}_{k}`` = φ_k'(0) (pinned frames),
``phi{i}{j}_{k}``, ``dphi{i}{j}_{k}`` = φ_k, φ_k' at lumped mass j; with
``constants="numeric"`` they are the numbers of :mod:`shapes`. Zero parameters
(no hub, no payload…) drop their terms.

Spatial arms (``Arm.from_dh``, revolute joints, any constant twist α, links bending in one or
two planes) follow :mod:`core.dynamics.flexible_body` in three dimensions (:func:`_spatial_terms`): the
6 + m body velocity (v, Ω, δ̇) in beam axes, the exact tip rotation exp(θ̃) through the entire
functions :class:`stumpff` of θᵀθ, and ∂J/∂q carried forward through the chain (:class:`_Fwd`)
instead of differentiating the nested Jacobians. Prismatic joints (and so translating links)
are refused.

Limits: Coulomb friction is evaluated
numerically by :meth:`SymbolicEOM.to_numeric` (the smooth model of the engine);
modal structural damping enters D as numbers (it needs an eigendecomposition).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import sympy as sp

from amm.model import AssumedModesModel
from core.arm import Arm
from core.dynamics.basis import dense
from core.dynamics.engine import COULOMB_VELOCITY
from core.dynamics.model import Model

__all__ = ["SymbolicEOM", "SymbolicModel", "derive"]


@dataclass(frozen=True)
class SymbolicEOM:
    """Equations of motion M q̈ + C q̇ + D q̇ + K q + G = B τ of an arm, as sympy.

    Attributes
    ----------
    arm : Arm
    coordinates : tuple of str
        Engine coordinate names, joints first.
    q, qd : tuple of sympy.Symbol
        Coordinates and rates (``theta1_dot``…).
    M, C, K, D, G, B : sympy.ImmutableMatrix
        Shapes (n, n), (n, n), (n, n), (n, n), (n, 1), (n, n_joints).
    dM : tuple of sympy.ImmutableMatrix
        ∂M/∂q_k, k = 0..n-1.
    h : sympy.ImmutableMatrix
        The velocity-product forces h(q, q̇) = C q̇, shape (n, 1), derived directly from the
        bodies (no ∂M/∂q, no C): what forward dynamics evaluates.
    V : sympy.Expr
        Potential energy (elastic + gravity) [J].
    tip : sympy.ImmutableMatrix
        Base-frame (x, y) of the tip of the last link [m] ((x, y, z) for a spatial arm).
    frames : tuple
        Per link (x, y, angle) of the link frame (sympy); for a spatial arm the origin (3) and
        the rotation matrix (9, row by row) of the link frame.
    values : mapping Symbol → float
        Number of every parameter and constant symbol.
    definitions : mapping Symbol → str
        What each symbol is (LaTeX-ready text).
    model : AssumedModesModel
        The engine model of the same arm and shapes (bases, damping).
    seconds : float
        Generation wall time [s].
    """

    arm: Arm
    coordinates: tuple[str, ...]
    q: tuple
    qd: tuple
    M: sp.ImmutableMatrix
    C: sp.ImmutableMatrix
    K: sp.ImmutableMatrix
    D: sp.ImmutableMatrix
    G: sp.ImmutableMatrix
    B: sp.ImmutableMatrix
    dM: tuple
    h: sp.ImmutableMatrix
    V: sp.Expr
    tip: sp.ImmutableMatrix
    frames: tuple
    values: Mapping = field(repr=False)
    definitions: Mapping = field(repr=False)
    model: AssumedModesModel = field(repr=False)
    seconds: float = 0.0
    options: Mapping = field(default_factory=dict, repr=False)  # derive()'s constants, symbols

    @property
    def n_joints(self) -> int:
        return self.arm.n_joints

    def numeric(self, expr):
        """``expr`` with every parameter symbol replaced by its number."""
        subs = {s: sp.Float(v, 17) for s, v in self.values.items()}
        return expr.xreplace(subs)

    def to_numeric(self, compiled: bool = False) -> SymbolicModel:
        """A :class:`core.dynamics.model.Model` evaluating the generated (cse'd) code: lambdified Python
        (``compiled=False``), or for M, h, G and the forward dynamics a numba module compiled once
        per machine and cached (``compiled=True``, see :class:`SymbolicModel`)."""
        return SymbolicModel(self, compiled=compiled)

    def latex(self) -> str:
        """Paper-ready LaTeX: one ``align`` block per matrix (non-zero entries, lower
        triangle for symmetric ones) and the definitions of the symbols."""
        names = {s: _latex_name(str(s)) for s in (*self.q, *self.qd, *self.values)}
        parts = []
        for label, matrix, symmetric in (
            ("M", self.M, True),
            ("C", self.C, False),
            ("K", self.K, True),
            ("D", self.D, True),
            ("G", self.G, False),
            ("B", self.B, False),
        ):
            lines = []
            for i in range(matrix.rows):
                for j in range(matrix.cols):
                    if symmetric and j > i:
                        continue
                    entry = matrix[i, j]
                    if entry == 0:
                        continue
                    index = f"{i + 1}" if label == "G" else f"{i + 1},{j + 1}"
                    lines.append(f"{label}_{{{index}}} &= {sp.latex(entry, symbol_names=names)}")
            if lines:
                parts.append("\\begin{align}\n" + " \\\\\n".join(lines) + "\n\\end{align}")
        defs = [f"{names[s]} &: {text}" for s, text in self.definitions.items()]
        if defs:
            parts.append("\\begin{align*}\n" + " \\\\\n".join(defs) + "\n\\end{align*}")
        return "\n\n".join(parts) + "\n"

    def to_python(self, path: str | Path) -> Path:
        """Write a standalone module (numpy only) with ``mass_matrix(q)``,
        ``mass_matrix_derivatives(q)``, ``gravity_forces(q)``, ``coriolis_matrix(q, qd)``,
        ``bias_forces(q, qd)`` (h = C q̇ from its own expression, without C), ``stiffness_matrix()``, ``damping_matrix()``, ``input_matrix()``, ``tip_position(q)``
        and ``COORDINATES``; returns the path."""
        from sympy.printing.numpy import NumPyPrinter

        printer = NumPyPrinter({"fully_qualified_modules": True, "allow_unknown_functions": True})
        qs, qds = sp.IndexedBase("q"), sp.IndexedBase("qd")
        to_q = {s: qs[i] for i, s in enumerate(self.q)} | {s: qds[i] for i, s in enumerate(self.qd)}
        n = len(self.q)
        lines = [
            f'"""Equations of motion generated by amm.symbolic for {len(self.q)} coordinates."""',
            "",
            "import numpy",
            "from numpy import cos, sin, sqrt",
            "",
            f"COORDINATES = {self.coordinates!r}",
            "",
        ]
        if any(e.has(stumpff) for e in (self.M, self.h, self.G)):
            lines += [*_STUMPFF_SOURCE.strip().splitlines(), "", ""]

        def function(name, args, exprs, shapes):
            exprs = [self.numeric(e).xreplace(to_q) for e in exprs]
            replacements, reduced = sp.cse(exprs)
            out = [f"def {name}({args}):"]
            for sym, value in replacements:
                out.append(f"    {sym} = {printer.doprint(value)}")
            results = []
            for k, (expr, shape) in enumerate(zip(reduced, shapes, strict=True)):
                out.append(f"    r{k} = numpy.array({printer.doprint(expr.tolist())}, dtype=float)")
                results.append(f"r{k}.reshape({shape})")
            out.append(f"    return {', '.join(results)}" if len(results) > 1 else f"    return {results[0]}")
            return [*out, "", ""]

        lines += function("mass_matrix", "q", [self.M], [(n, n)])
        derivatives = sp.Matrix.vstack(*self.dM) if n else self.M
        lines += function("mass_matrix_derivatives", "q", [derivatives], [(n, n, n)])
        lines += function("gravity_forces", "q", [self.G], [(n,)])
        lines += function("coriolis_matrix", "q, qd", [self.C], [(n, n)])
        lines += function("bias_forces", "q, qd", [self.h], [(n,)])
        lines += function("tip_position", "q", [self.tip], [(self.tip.rows,)])
        for name, matrix in (
            ("stiffness_matrix", self.K),
            ("damping_matrix", self.D),
            ("input_matrix", self.B),
        ):
            lines += function(name, "", [matrix], [matrix.shape])
        path = Path(path)
        path.write_text("\n".join(lines).rstrip() + "\n")
        return path


_LATEX_PATTERNS = (
    (r"theta(\d+)", r"\\theta_{\1}"),
    (r"([wv])(\d+)_(\d+)", r"\1_{\2,\3}"),
    (r"rhoA(\d+)", r"(\\rho A)_{\1}"),
    (r"EI(\d+)", r"(EI)_{\1}"),
    (r"EIout(\d+)", r"(EI)^{\\mathrm{out}}_{\1}"),
    (r"I(\d+)([xyz]{2})", r"I_{\1,\2}"),
    (r"Jp(\d*)([xyz]{2})", r"J_{p\1,\2}"),
    (r"phiL(\d+)_(\d+)", r"\\phi_{\1,\2}(L_{\1})"),
    (r"dphiL(\d+)_(\d+)", r"\\phi'_{\1,\2}(L_{\1})"),
    (r"dphi0(\d+)_(\d+)", r"\\phi'_{\1,\2}(0)"),
    (r"phi(\d)(\d+)_(\d+)", r"\\phi_{\1,\3}(s_{\1\2})"),
    (r"dphi(\d)(\d+)_(\d+)", r"\\phi'_{\1,\3}(s_{\1\2})"),
    (r"([A-Za-z]+?)(\d+)_(\d+)", r"\1_{\2,\3}"),
    (r"(lcy|lcz|lc|mh|Jh|Jr|Jp|mp|bv|[A-Za-z])(\d+)", r"\1_{\2}"),
    (r"g([xyz])", r"g_{\1}"),
    (r"([mJ])p", r"\1_p"),
)


def _latex_name(name: str) -> str:
    """LaTeX for a coordinate, rate or parameter name (``w1_2_dot`` → ``\\dot{w}_{1,2}``)."""
    import re

    if name.endswith("_dot"):
        inner = _latex_name(name[:-4])
        head, _, tail = inner.partition("_")
        return f"\\dot{{{head}}}_{tail}" if tail else f"\\dot{{{inner}}}"
    for pattern, replacement in _LATEX_PATTERNS:
        if re.fullmatch(pattern, name):
            return re.sub(pattern, replacement, name)
    return name


class _Parameters:
    """Named symbols with their numbers, or plain numbers (``symbols=False``)."""

    def __init__(self, symbols: bool) -> None:
        self.symbols = symbols
        self.values: dict = {}
        self.definitions: dict = {}

    def __call__(
        self, name: str, value: float, definition: str, named: bool | None = None, math: bool = False
    ):
        value = float(value)
        if value == 0.0:
            return sp.S.Zero
        if not (self.symbols if named is None else named):
            return sp.Float(value, 17)
        symbol = sp.Symbol(name, real=True)
        self.values[symbol] = value
        self.definitions[symbol] = definition if math else f"\\text{{{definition}}}"
        return symbol


def _constant_maker(P, modal: bool):
    """``const(name, value, definition)``: a modal constant; ",k}" in a definition stands for the
    mode number, the name's last index."""

    def const(name, value, definition):
        definition = definition.replace(",k}", f",{name.rsplit('_', 1)[1]}}}")
        return P(name, value, definition, named=modal, math=True)

    return const


def _modal_constants(P, const, number: int, link, basis, EI_text: str) -> tuple:
    """ρA, EI and the modal constants of flexible link ``number``: ∫φ (a), ∫sφ (b), ∫φφᵀ (N),
    ∫φ''φ''ᵀ (k), φ(L), φ'(L), each a named symbol or its number."""
    m = basis.n
    mass, stiffness = dense(basis.mass), dense(basis.stiffness)
    rho = P(f"rhoA{number}", link.mass_per_length, f"mass per length of link {number} [kg/m]")
    EI = P(f"EI{number}", link.EI, EI_text)
    tag = f"\\phi_{{{number},k}}"  # k: the mode number in the symbol's name
    a = sp.Matrix([const(f"a{number}_{k + 1}", basis.first[k], f"\\int_0^L {tag}\\,ds") for k in range(m)])
    b = sp.Matrix([const(f"b{number}_{k + 1}", basis.moment[k], f"\\int_0^L s{tag}\\,ds") for k in range(m)])
    N = _symmetric(
        m,
        lambda r, c: const(
            f"N{number}_{r + 1}{c + 1}",
            mass[r, c],
            f"\\int_0^L \\phi_{{{number},{r + 1}}}\\phi_{{{number},{c + 1}}}\\,ds",
        ),
    )
    Kc = _symmetric(
        m,
        lambda r, c: const(
            f"k{number}_{r + 1}{c + 1}",
            stiffness[r, c],
            f"\\int_0^L \\phi''_{{{number},{r + 1}}}\\phi''_{{{number},{c + 1}}}\\,ds",
        ),
    )
    phiL = sp.Matrix([const(f"phiL{number}_{k + 1}", basis.tip_value[k], f"{tag}(L)") for k in range(m)])
    dphiL = sp.Matrix([const(f"dphiL{number}_{k + 1}", basis.tip_slope[k], f"{tag}'(L)") for k in range(m)])
    return rho, EI, a, b, N, Kc, phiL, dphiL


def _lumped_constants(P, const, number: int, link, basis):
    """(s_j, m_j, J_j, φ(s_j), φ'(s_j)) of each lumped mass on flexible link ``number``, as named
    symbols or numbers."""
    if not link.lumped_masses:
        return
    values, slopes = basis.evaluate(np.array([lm.position for lm in link.lumped_masses], dtype=float))
    tag = f"\\phi_{{{number},k}}"
    for j, lumped in enumerate(link.lumped_masses, start=1):
        s = P(f"s{number}{j}", lumped.position, f"position of lumped mass {j} on link {number} [m]")
        mj = P(f"m{number}{j}", lumped.mass, f"lumped mass {j} on link {number} [kg]")
        Jj = P(f"J{number}{j}", lumped.inertia, f"rotary inertia of lumped mass {j} [kg m$^2$]")
        phi = sp.Matrix(
            [
                const(f"phi{number}{j}_{k + 1}", values[k, j - 1], f"{tag}(s_{{{number}{j}}})")
                for k in range(basis.n)
            ]
        )
        dphi = sp.Matrix(
            [
                const(f"dphi{number}{j}_{k + 1}", slopes[k, j - 1], f"{tag}'(s_{{{number}{j}}})")
                for k in range(basis.n)
            ]
        )
        yield s, mj, Jj, phi, dphi


def _payloads(arm: Arm, number: int) -> list[tuple[str, object]]:
    """(name suffix, payload) of the bodies at link ``number``'s tip: its own payload ("<i>")
    and, on the last link, the arm's ("")."""
    link = arm.links[number - 1]
    payloads = [(f"{number}", link.tip_payload)] if link.tip_payload is not None else []
    if number == arm.n_links and arm.payload is not None:
        payloads.append(("", arm.payload))
    return payloads


def _symmetric(m: int, entry) -> sp.Matrix:
    """Symmetric m × m matrix from ``entry(r, c)`` called for r <= c."""
    out = sp.zeros(m, m)
    for r in range(m):
        for c in range(r, m):
            out[r, c] = out[c, r] = entry(r, c)
    return out


def _diff(matrix: sp.Matrix, x: sp.Symbol) -> sp.Matrix | None:
    """∂matrix/∂x entry by entry (None when no entry depends on x)."""
    out = sp.zeros(*matrix.shape)
    found = False
    for index, entry in enumerate(matrix):
        if x in entry.free_symbols:
            out[index] = entry.diff(x)
            found = True
    return out if found else None


class _Fwd:
    """A matrix and its non-zero partial derivatives {k: ∂/∂q_k}, carried forward through the
    chain (product rule) so that no large expression is ever differentiated: only the small
    leaves (a joint rotation, a tip rotation, an offset) are."""

    __slots__ = ("d", "value")

    def __init__(self, value: sp.Matrix, d: dict | None = None) -> None:
        self.value = value
        self.d = d if d is not None else {}

    @classmethod
    def leaf(cls, value: sp.Matrix, q: tuple) -> _Fwd:
        free = set().union(*(entry.free_symbols for entry in value))
        return cls(value, {k: value.diff(qk) for k, qk in enumerate(q) if qk in free})

    def __mul__(self, other) -> _Fwd:
        if not isinstance(other, _Fwd):
            return _Fwd(self.value * other, {k: v * other for k, v in self.d.items()})
        d = {k: v * other.value for k, v in self.d.items()}
        for k, v in other.d.items():
            d[k] = d[k] + self.value * v if k in d else self.value * v
        return _Fwd(self.value * other.value, d)

    def left(self, other) -> _Fwd:
        """``other`` (a constant matrix or scalar) times this."""
        return _Fwd(other * self.value, {k: other * v for k, v in self.d.items()})

    def __add__(self, other: _Fwd) -> _Fwd:
        d = dict(self.d)
        for k, v in other.d.items():
            d[k] = d[k] + v if k in d else v
        return _Fwd(self.value + other.value, d)

    def __sub__(self, other: _Fwd) -> _Fwd:
        return self + other.left(sp.S.NegativeOne)

    def rows(self, rows) -> _Fwd:
        return _Fwd(self.value[rows, :], {k: v[rows, :] for k, v in self.d.items()})

    def copy(self) -> _Fwd:
        return _Fwd(self.value.copy(), {k: v.copy() for k, v in self.d.items()})


def _stack(parts: list, n: int) -> tuple:
    """Vertically stacked values of ``parts`` (_Fwd or constant matrices) and the derivatives."""
    values = [part.value if isinstance(part, _Fwd) else part for part in parts]
    keys = sorted({k for part in parts if isinstance(part, _Fwd) for k in part.d})
    d = {}
    for k in keys:
        blocks = []
        for part, value in zip(parts, values, strict=True):
            found = part.d.get(k) if isinstance(part, _Fwd) else None
            blocks.append(found if found is not None else sp.zeros(*value.shape))
        d[k] = sp.Matrix.vstack(*blocks)
    return sp.Matrix.vstack(*values), d


def _derivatives(bodies: list, q: tuple, qd: tuple, n: int) -> tuple:
    """(∂M/∂q_k for every k, h = C q̇), differentiated through the body Jacobians and mass
    matrices, not through the assembled (larger) M.

    ∂M/∂q_k = Σ_b (Xᵀ + X + J_bᵀ ∂M_b/∂q_k J_b), X = J_bᵀ M_b ∂J_b/∂q_k. The velocity-product
    forces come from Lagrange's equations of T = Σ_b ½ ν_bᵀ M_b ν_b, ν_b = J_b q̇, body by body
    (p_b = M_b ν_b, J̇_b = Σ_k ∂J_b/∂q_k q̇_k, Ṁ_b likewise)::

        h = Σ_b J̇_bᵀ p_b + J_bᵀ (Ṁ_b ν_b + M_b J̇_b q̇) − [(∂J_b/∂q_i q̇)ᵀ p_b + ½ ν_bᵀ ∂M_b/∂q_i ν_b]_i

    which is Ṁ q̇ − ½ ∂(q̇ᵀMq̇)/∂q = C q̇ without forming ∂M/∂q or C: O(body size × n) terms
    per body instead of the n³ entries of ∂M/∂q.
    """
    rates = sp.Matrix(qd)
    partials = []
    for body in bodies:
        J, Mb = body[0], body[1]
        if len(body) == 3:  # ∂J/∂q_k given (forward mode through the chain, spatial arms)
            partials.append([(body[2].get(k), _diff(Mb, qk)) for k, qk in enumerate(q)])
        else:
            partials.append([(_diff(J, qk), _diff(Mb, qk)) for qk in q])
    bodies = [body[:2] for body in bodies]
    out = []
    for k in range(n):
        D = sp.zeros(n, n)
        for (J, Mb), body in zip(bodies, partials, strict=True):
            dJ, dMb = body[k]
            if dJ is not None:
                X = J.T * (Mb * dJ)
                D += X + X.T
            if dMb is not None:
                D += J.T * dMb * J
        out.append(sp.ImmutableMatrix(D))
    h = sp.zeros(n, 1)
    for (J, Mb), body in zip(bodies, partials, strict=True):
        moving = [k for k in range(n) if body[k][0] is not None]
        deforming = [k for k in range(n) if body[k][1] is not None]
        if not moving and not deforming:
            continue
        nu = J * rates
        p = Mb * nu
        inner = sp.zeros(Mb.rows, 1)
        if moving:
            J_dot = sp.zeros(*J.shape)
            for k in moving:
                J_dot += body[k][0] * qd[k]
            inner += Mb * (J_dot * rates)
            h += J_dot.T * p
        if deforming:
            Mb_dot = sp.zeros(*Mb.shape)
            for k in deforming:
                Mb_dot += body[k][1] * qd[k]
            inner += Mb_dot * nu
        h += J.T * inner
        for k in moving:
            h[k] -= ((body[k][0] * rates).T * p)[0]
        for k in deforming:
            h[k] -= (nu.T * body[k][1] * nu)[0] / 2
    return tuple(out), sp.ImmutableMatrix(h)


def _cse(expressions):
    """sympy.cse without canonical ordering of the terms (several times faster on large M, ∂M/∂q)."""
    return sp.cse(expressions, order="none")


def _lambdify(arguments, expressions, modules, reduced=None):
    """``sympy.lambdify`` of ``expressions`` with their common subexpressions shared (``reduced``:
    a :func:`_cse` of them, reused by several lambdifications). lambdify is handed the reduced
    expressions: it walks its argument tree without memo (looking for implemented functions),
    which on the un-reduced M, h of four links took 10 s, several times the cse itself."""
    replacements, shared = _cse(expressions) if reduced is None else reduced
    return sp.lambdify(arguments, shared, modules=modules, cse=lambda _: (replacements, shared))


def _rotation(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s], [s, c]])


def derive(
    arm: Arm,
    shape: str = "clamped-free",
    modes: int = 2,
    shapes: Mapping[int, tuple] | None = None,
    constants: Literal["symbols", "numeric"] = "symbols",
    symbols: bool = True,
) -> SymbolicEOM:
    """Symbolic equations of motion of an arm of revolute joints (see the module docstring).

    Parameters
    ----------
    arm : Arm
        Any sequence of rigid and flexible links on revolute joints: planar (``Arm.planar``) or
        spatial (``Arm.from_dh``, any constant α, one or two bending planes per link).
    shape, modes, shapes
        Shape family and modes per flexible link, as :class:`amm.AssumedModesModel`.
    constants : {"symbols", "numeric"}
        Modal constants as named symbols or as the numbers of :mod:`shapes`.
    symbols : bool
        Physical parameters as named symbols (numbers in ``values``) or as numbers.

    Returns
    -------
    SymbolicEOM
    """
    if not isinstance(arm, Arm):
        raise TypeError(f"arm must be an Arm, got {type(arm).__name__}")
    for number, joint in enumerate(arm.joints, start=1):
        if joint.kind != "revolute":
            raise ValueError(
                f"joint {number}: kind must be 'revolute' (amm.symbolic derives revolute joints only; "
                f"prismatic joints and translating links are refused), got {joint.kind!r}"
            )
    if constants not in ("symbols", "numeric"):
        raise ValueError(f"constants must be 'symbols' or 'numeric', got {constants!r}")
    start = time.perf_counter()
    engine = AssumedModesModel(arm, shape=shape, modes=modes, shapes=shapes)
    P = _Parameters(bool(symbols))
    modal = constants == "symbols"
    coordinates = engine.coordinates
    q = tuple(sp.Symbol(name, real=True) for name in coordinates)
    qd = tuple(sp.Symbol(f"{name}_dot", real=True) for name in coordinates)
    n, nj = len(q), arm.n_joints
    qv = sp.Matrix(q)

    if not arm.is_planar:
        M, K, D, B, V, bodies, p, frames = _spatial_terms(arm, engine, P, modal, q)
    else:
        M = sp.zeros(n, n)
        K = sp.zeros(n, n)
        D = sp.zeros(n, n)
        B = sp.zeros(n, nj)
        B[:nj, :nj] = sp.eye(nj)
        V = sp.S.Zero
        gx = P("gx", arm.gravity[0], "gravity along base $x$ [m/s$^2$]")
        gy = P("gy", arm.gravity[1], "gravity along base $y$ [m/s$^2$]")
        g = sp.Matrix([gx, gy])

        def rigid_body(position, Jv, Jw, mass, inertia):
            """Jᵀ M J and the gravity potential of a rigid body: mass at ``position`` (base frame)
            whose velocity is Jv q̇ (in any axes: |v|² does not depend on them), rate Jw q̇."""
            nonlocal M, V
            if mass != 0:
                M += mass * (Jv.T * Jv)
                V -= mass * (g.T * position)[0]
                bodies.append((Jv, mass * sp.eye(2)))
            if inertia != 0:
                M += inertia * (Jw.T * Jw)
                bodies.append((Jw, sp.Matrix([[inertia]])))

        # Velocities are kept in the axes of the link that carries them, so that only the relative
        # angles (q_i and the tip rotations) appear in M, as in the textbook forms.
        bodies = []  # (J, M_b) of every body whose J or M_b depends on q, for ∂M/∂q
        angle = sp.S.Zero  # absolute angle of the previous tip frame (gravity, positions)
        p = sp.zeros(2, 1)
        Jv = sp.zeros(2, n)  # velocity of the previous tip point, in the previous link's axes
        Jw = sp.zeros(1, n)  # angular velocity of the previous tip frame
        turn = sp.S.Zero  # angle from the previous link's axes to its tip frame
        frames = []
        for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
            number = i + 1
            link_angle = angle + q[i] + joint.theta_offset
            R = _rotation(link_angle)
            frames.append((p[0], p[1], link_angle))
            Jv_link = _rotation(turn + q[i] + joint.theta_offset).T * Jv  # link-frame origin, link axes
            Jw_link = Jw.copy()
            Jw_link[i] += 1
            hub_rate = Jw_link.copy()  # previous tip rate plus the actuated rate (pinned: + φ'(0)δ̇)
            L = P(f"L{number}", link.length, f"length of link {number} [m]")
            if link.is_flexible:
                basis = engine.bases[number]
                cols = engine.flex_columns[number]
                m = basis.n
                delta = sp.Matrix(q[cols])

                const = _constant_maker(P, modal)
                rho, EI, a, b, N, Kc, phiL, dphiL = _modal_constants(
                    P, const, number, link, basis, f"bending stiffness of link {number} [N m$^2$]"
                )
                tag = f"\\phi_{{{number},k}}"  # k: the mode number in the symbol's name
                # Lumped masses: values and slopes of the shapes where they sit.
                first_x = rho * L**2 / 2
                second_x = rho * L**3 / 3
                A = rho * a
                c = rho * b
                Nm = rho * N
                Mdd = rho * N
                mass = rho * L
                J_sum = sp.S.Zero
                for s, mj, Jj, phi, dphi in _lumped_constants(P, const, number, link, basis):
                    first_x += mj * s
                    second_x += mj * s**2
                    A += mj * phi
                    c += mj * s * phi + Jj * dphi
                    Nm += mj * phi * phi.T
                    Mdd += mj * phi * phi.T + Jj * dphi * dphi.T
                    mass += mj
                    J_sum += Jj
                Sy = (A.T * delta)[0]
                # The δ-quadratic inertia takes ∫φφᵀ dm only: rotary inertia enters through Ψ (first order).
                inertia = second_x + (delta.T * Nm * delta)[0] + J_sum
                Mb = sp.zeros(3 + m, 3 + m)
                Mb[0, 0] = Mb[1, 1] = mass
                Mb[0, 2] = Mb[2, 0] = -Sy
                Mb[1, 2] = Mb[2, 1] = first_x
                Mb[2, 2] = inertia
                Mb[1, 3:] = A.T
                Mb[3:, 1] = A
                Mb[2, 3:] = c.T
                Mb[3:, 2] = c
                Mb[3:, 3:] = Mdd
                Jb = sp.zeros(3 + m, n)
                Jb[0:2, :] = Jv_link
                Jb[2, :] = Jw_link
                Jb[3:, cols] = sp.eye(m)
                M += Jb.T * Mb * Jb
                bodies.append((Jb, Mb))
                V -= mass * (g.T * p)[0] + (g.T * R * sp.Matrix([first_x, Sy]))[0]
                K[cols, cols] = EI * Kc
                if basis.frame == "pinned":
                    dphi0 = sp.Matrix(
                        [const(f"dphi0{number}_{k + 1}", basis.root_slope[k], f"{tag}'(0)") for k in range(m)]
                    )
                    B[cols, i] = dphi0
                    hub_rate[0, cols] = dphi0.T
                damping = link.damping
                if damping is not None:
                    if damping.kind == "rayleigh":
                        D[cols, cols] = damping.alpha * Mdd + damping.beta * EI * Kc
                    else:  # modal ratios need the eigenvectors: numbers
                        block = engine.damping_matrix(engine.home())[cols, cols]
                        D[cols, cols] = sp.Matrix(block.tolist())
                if arm.tip_rotation == "slope":
                    rotation = dphiL
                else:
                    rotation = phiL / L
                tip_turn = (rotation.T * delta)[0]
                offset = sp.Matrix([L, (phiL.T * delta)[0]])
                Jv_tip = Jv_link + sp.Matrix([-offset[1], offset[0]]) * Jw_link
                Jv_tip[1, cols] += phiL.T
                Jw_tip = Jw_link.copy()
                Jw_tip[0, cols] += rotation.T
            else:
                mass = P(f"m{number}", link.mass, f"mass of link {number} [kg]")
                com = link.com
                cx = P(f"lc{number}", com[0], f"centre of mass of link {number} along $x_{number}$ [m]")
                cy = P(f"lcy{number}", com[1], f"centre of mass of link {number} along $y_{number}$ [m]")
                I = P(
                    f"I{number}",
                    link.planar_inertia,
                    f"inertia of link {number} about its centre of mass [kg m$^2$]",
                )
                Jv_com = Jv_link + sp.Matrix([-cy, cx]) * Jw_link
                rigid_body(p + R * sp.Matrix([cx, cy]), Jv_com, Jw_link, mass, I)
                tip_turn = sp.S.Zero
                offset = sp.Matrix([L, 0])
                Jv_tip = Jv_link + sp.Matrix([0, L]) * Jw_link
                Jw_tip = Jw_link
            # Hub on the joint axis at the link-frame origin, turning with joint and beam root.
            rigid_body(
                p, Jv_link, Jw_link, P(f"mh{number}", joint.hub_mass, f"hub mass of joint {number} [kg]"), 0
            )
            Jh = P(f"Jh{number}", joint.hub_inertia, f"hub inertia of joint {number} [kg m$^2$]")
            if Jh != 0:
                M += Jh * (hub_rate.T * hub_rate)
            Jr = P(
                f"Jr{number}",
                joint.reflected_inertia,
                f"reflected motor inertia $I_m N^2$ of joint {number} [kg m$^2$]",
            )
            if Jr != 0:
                b_i = B[:, i]
                M += Jr * (b_i * b_i.T)
            bv = P(f"bv{number}", joint.viscous_friction, f"viscous friction of joint {number} [N m s/rad]")
            if bv != 0:
                D += bv * (B[:, i] * B[:, i].T)
            p = p + R * offset
            angle = link_angle + tip_turn
            Jv, Jw, turn = Jv_tip, Jw_tip, tip_turn
            for tag_, payload in _payloads(arm, number):
                rigid_body(
                    p,
                    Jv,
                    Jw,
                    P(f"mp{tag_}", payload.mass, "payload mass [kg]"),
                    P(
                        f"Jp{tag_}",
                        payload.planar_inertia,
                        "payload inertia about its centre of mass [kg m$^2$]",
                    ),
                )

    M = sp.ImmutableMatrix(M)
    dM, h = _derivatives(bodies, q, qd, n)
    C = sp.zeros(n, n)
    for i in range(n):
        for j in range(n):
            # One Add of the non-zero Christoffel terms (an incremental sum re-flattens n times).
            terms = []
            for k in range(n):
                symbol = dM[k][i, j] + dM[j][i, k] - dM[i][j, k]
                if symbol != 0:
                    terms.append(symbol * qd[k])
            C[i, j] = sp.Add(*terms) / 2
    V_elastic = (qv.T * K * qv)[0] / 2
    G = sp.Matrix([V]).jacobian(qv).T
    return SymbolicEOM(
        arm=arm,
        coordinates=coordinates,
        q=q,
        qd=qd,
        M=M,
        C=sp.ImmutableMatrix(C),
        h=h,
        K=sp.ImmutableMatrix(K),
        D=sp.ImmutableMatrix(D),
        G=sp.ImmutableMatrix(G),
        B=sp.ImmutableMatrix(B),
        dM=dM,
        V=V + V_elastic,
        tip=sp.ImmutableMatrix(p),
        frames=tuple(frames),
        values=dict(P.values),
        definitions=dict(P.definitions),
        model=engine,
        seconds=time.perf_counter() - start,
        options={"constants": constants, "symbols": symbols},
    )


# --------------------------------------------------------------------------- spatial arms
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


#: Below this |x| the generated c_k(x) take their series (12 terms: exact to round-off for |x| < 1).
STUMPFF_SERIES = 1.0

_STUMPFF_SOURCE = '''
def stumpff(k, x):
    """c_k(x) = sum_j (-x)**j / (2j + k)!, x = |theta|**2 (amm.symbolic.stumpff)."""
    if abs(x) < 1.0:
        term = 1.0
        for i in range(2, k + 1):
            term /= i
        total = 0.0 * x
        for j in range(12):
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


def _stumpff_namespace(sqrt, cos, sin) -> dict:
    """``stumpff`` of :data:`_STUMPFF_SOURCE` on the given sqrt, cos, sin (math, cmath, numpy)."""
    namespace = {"sqrt": sqrt, "cos": cos, "sin": sin}
    exec(_STUMPFF_SOURCE, namespace)
    return {"stumpff": namespace["stumpff"]}


def _rot_x(angle: float) -> sp.Matrix:
    c, s = _trig(angle)
    return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _trig(angle: float) -> tuple:
    """cos, sin of a constant angle, exact at multiples of π/2 (the engine's 6e-17 is round-off)."""
    quarter = angle / (np.pi / 2)
    if abs(quarter - round(quarter)) < 1e-12:
        k = round(quarter) % 4
        return (sp.S.One, sp.S.Zero, sp.S.NegativeOne, sp.S.Zero)[k], (0, 1, 0, -1)[k] * sp.S.One
    return sp.Float(np.cos(angle), 17), sp.Float(np.sin(angle), 17)


def _skew(v) -> sp.Matrix:
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _tensor(P, name: str, tensor, what: str) -> sp.Matrix:
    """A symmetric 3 × 3 inertia tensor with named entries (``{name}xx``…; zeros dropped)."""
    out = sp.zeros(3, 3)
    axes = "xyz"
    for r in range(3):
        for c in range(r, 3):
            entry = P(
                f"{name}{axes[r]}{axes[c]}", tensor[r][c], f"{what}, entry {axes[r]}{axes[c]} [kg m$^2$]"
            )
            out[r, c] = out[c, r] = entry
    return out


def _spatial_terms(arm: Arm, engine, P, modal: bool, q: tuple) -> tuple:
    """M, K, D, B, V (gravity), bodies, tip (3,), frames of a spatial (DH) arm of revolute
    joints: the floating-frame bodies of :mod:`core.dynamics.flexible_body` in three dimensions, every
    velocity kept in the axes of the frame that carries it (so M holds relative rotations only).
    """
    n, nj = len(q), arm.n_joints
    M, K, D = sp.zeros(n, n), sp.zeros(n, n), sp.zeros(n, n)
    B = sp.zeros(n, nj)
    B[:nj, :nj] = sp.eye(nj)
    V = sp.S.Zero
    g = sp.Matrix(
        [
            P(f"g{axis}", arm.gravity[k], f"gravity along base ${axis}$ [m/s$^2$]")
            for k, axis in enumerate("xyz")
        ]
    )
    bodies: list = []

    def rigid_body(position, Jv, Jw, mass, inertia):
        """A rigid body: mass at ``position`` (base frame) with velocity Jv q̇ and angular velocity
        Jw q̇ (_Fwd, both in the body's axes), inertia tensor in those axes."""
        nonlocal M, V
        if mass != 0:
            M += mass * (Jv.value.T * Jv.value)
            V -= mass * (g.T * position)[0]
            bodies.append((Jv.value, mass * sp.eye(3), Jv.d))
        if inertia != sp.zeros(*inertia.shape):
            M += Jw.value.T * inertia * Jw.value
            bodies.append((Jw.value, inertia, Jw.d))

    R_abs = sp.eye(3)  # orientation of the previous tip frame (base axes)
    p = sp.zeros(3, 1)
    Jv = _Fwd(sp.zeros(3, n))  # previous tip frame: origin velocity, angular velocity, in its axes
    Jw = _Fwd(sp.zeros(3, n))
    frames = []
    for i, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True)):
        number = i + 1
        if joint.kind != "revolute":
            raise ValueError(
                f"joint {number}: kind must be 'revolute' (amm.symbolic derives revolute joints only: "
                f"prismatic joints and translating links are refused), got {joint.kind!r}"
            )
        Rz = _rot_z(q[i] + joint.theta_offset)
        d = P(f"d{number}", joint.d, f"DH offset $d$ of joint {number} [m]")
        ez = sp.Matrix([0, 0, 1])
        Jw_before = Jw
        turn = _Fwd.leaf(Rz.T, q)
        Jv_link = turn * (Jv - Jw.left(d * _skew(ez)))
        Jw_link = turn * Jw
        Jw_link.value[2, i] += 1
        R_link = R_abs * Rz
        p_link = p + d * R_abs[:, 2]
        frames.append(tuple(p_link) + tuple(R_link))
        hub_rate = Jw_before.rows(2).copy()  # rate of the hub about the joint axis (+ B column below)
        L = P(f"L{number}", link.length, f"length of link {number} [m]")
        if link.is_flexible:
            basis = engine.bases[number]
            body = engine.bodies[number]
            cols = engine.flex_columns[number]
            planes = body.planes
            if basis.frame == "pinned" and planes == 2:
                raise ValueError(
                    f"link {number}: pinned (chord) frames bending in two planes are not derived symbolically "
                    "(their beam frame turns with the out-of-plane root slope); use clamped shapes or the "
                    "numeric AssumedModesModel"
                )
            m = basis.n
            delta = sp.Matrix(q[cols])
            dy = delta[:m, :]
            dz = delta[m:, :] if planes == 2 else sp.zeros(m, 1)

            const = _constant_maker(P, modal)
            rho, EI, a, b, N, Kc, phiL, dphiL = _modal_constants(
                P, const, number, link, basis, f"in-plane bending stiffness of link {number} [N m$^2$]"
            )
            tag = f"\\phi_{{{number},k}}"  # k: the mode number in the symbol's name
            first_x, second_x = rho * L**2 / 2, rho * L**3 / 3
            A, c, Nm = rho * a, rho * b, rho * N
            Rot = sp.zeros(m, m)  # Σ J_j φ'φ'ᵀ (rotary inertia of the lumped masses)
            slope_J = sp.zeros(m, 1)  # Σ J_j φ'(s_j)
            mass, J_sum = rho * L, sp.S.Zero
            for s, mj, Jj, phi, dphi in _lumped_constants(P, const, number, link, basis):
                first_x += mj * s
                second_x += mj * s**2
                A += mj * phi
                c += mj * s * phi
                Nm += mj * phi * phi.T
                Rot += Jj * dphi * dphi.T
                slope_J += Jj * dphi
                mass += mj
                J_sum += Jj
            # The body mass matrix of FlexibleBody.mass_matrix, in beam-frame axes.
            Ay, Az = (A.T * dy)[0], (A.T * dz)[0]
            S1 = sp.Matrix([first_x, Ay, Az])
            by, bz = (c.T * dy)[0], (c.T * dz)[0]
            Qyy, Qyz, Qzz = (dy.T * Nm * dy)[0], (dy.T * Nm * dz)[0], (dz.T * Nm * dz)[0]
            Q = sp.Matrix([[second_x, by, bz], [by, Qyy, Qyz], [bz, Qyz, Qzz]])
            inertia = (second_x + Qyy + Qzz) * sp.eye(3) - Q + sp.diag(0, J_sum, J_sum)
            mb = 6 + planes * m
            Mb = sp.zeros(mb, mb)
            Mb[:3, :3] = mass * sp.eye(3)
            Mb[:3, 3:6] = -_skew(S1)
            Mb[3:6, :3] = _skew(S1)
            Mb[3:6, 3:6] = inertia
            # A = ∫Φ dm (rows y, z) and the coupling ∫ρ̃Φ dm + rotary inertia, per plane.
            Mb[1, 6 : 6 + m] = A.T
            Mb[2, 6 : 6 + m] = sp.zeros(1, m)
            Mb[5, 6 : 6 + m] = (c + slope_J).T  # Ω_z: in-plane
            Mb[3, 6 : 6 + m] = -(Nm * dz).T
            Mb[6 : 6 + m, 6 : 6 + m] = Nm + Rot
            if planes == 2:
                Mb[2, 6 + m :] = A.T
                Mb[4, 6 + m :] = -(c + slope_J).T  # Ω_y: out-of-plane
                Mb[3, 6 + m :] = (Nm * dy).T
                Mb[6 + m :, 6 + m :] = Nm + Rot
            Mb[6:, :6] = Mb[:6, 6:].T
            rates = sp.zeros(planes * m, n)
            rates[:, cols] = sp.eye(planes * m)
            Jb, dJb = _stack([Jv_link, Jw_link, rates], n)
            M += Jb.T * Mb * Jb
            bodies.append((Jb, Mb, dJb))
            V -= mass * (g.T * p_link)[0] + (g.T * R_link * S1)[0]
            stiffness = [EI * Kc]
            if planes == 2:
                EIo = P(
                    f"EIout{number}",
                    link.EI_out,
                    f"out-of-plane bending stiffness of link {number} [N m$^2$]",
                )
                stiffness.append(EIo * Kc)
            K[cols, cols] = sp.diag(*stiffness)
            if basis.frame == "pinned":
                dphi0 = sp.Matrix(
                    [const(f"dphi0{number}_{k + 1}", basis.root_slope[k], f"{tag}'(0)") for k in range(m)]
                )
                B[cols.start : cols.start + m, i] = dphi0
            damping = link.damping
            if damping is not None:
                if damping.kind == "rayleigh":
                    block = sp.diag(*([Nm + Rot] * planes))
                    D[cols, cols] = damping.alpha * block + damping.beta * K[cols, cols]
                else:
                    block = engine.damping_matrix(engine.home())[cols, cols]
                    D[cols, cols] = sp.Matrix(block.tolist())
            rotation = dphiL if arm.tip_rotation == "slope" else phiL / L
            offset = sp.Matrix([L, (phiL.T * dy)[0], (phiL.T * dz)[0]])
            Jv_tip = Jv_link - _Fwd.leaf(_skew(offset), q) * Jw_link
            Jv_tip.value[1, cols.start : cols.start + m] += phiL.T
            Jw_tip = Jw_link.copy()
            if planes == 1:
                E = _rot_z((rotation.T * dy)[0])
                Jw_tip.value[2, cols] += rotation.T
            else:
                Jv_tip.value[2, cols.start + m : cols.stop] += phiL.T
                theta = sp.Matrix([0, -(rotation.T * dz)[0], (rotation.T * dy)[0]])
                x = theta[1] ** 2 + theta[2] ** 2
                c0, c1, c2, c3 = (stumpff(k, x) for k in range(4))
                outer = theta * theta.T
                E = c0 * sp.eye(3) + c1 * _skew(theta) + c2 * outer
                left = c1 * sp.eye(3) + c2 * _skew(theta) + c3 * outer
                Theta = sp.zeros(3, n)  # θ = Θ δ
                Theta[1, cols.start + m : cols.stop] = -rotation.T
                Theta[2, cols.start : cols.start + m] = rotation.T
                Jw_tip = Jw_tip + _Fwd.leaf(left, q) * Theta
            # tip velocities in the axes of the deformed tip (the payloads' axes)
            tip_turn = _Fwd.leaf(E.T, q)
            Jv_end, Jw_end = tip_turn * Jv_tip, tip_turn * Jw_tip
            R_end = R_link * E
            p_tip = p_link + R_link * offset
        else:
            mass = P(f"m{number}", link.mass, f"mass of link {number} [kg]")
            com = sp.Matrix(
                [
                    P(
                        f"{name}{number}",
                        link.com[k],
                        f"centre of mass of link {number} along ${axis}_{number}$ [m]",
                    )
                    for k, (name, axis) in enumerate((("lc", "x"), ("lcy", "y"), ("lcz", "z")))
                ]
            )
            inertia = _tensor(
                P, f"I{number}", link.inertia_tensor(), f"inertia of link {number} about its centre of mass"
            )
            Jv_com = Jv_link - Jw_link.left(_skew(com))
            rigid_body(p_link + R_link * com, Jv_com, Jw_link, mass, inertia)
            a_ = P(f"a{number}", joint.a, f"DH length $a$ of joint {number} [m]")
            offset = sp.Matrix([a_, 0, 0])
            Jv_end = Jv_link - Jw_link.left(_skew(offset))
            Jw_end = Jw_link
            R_end = R_link
            p_tip = p_link + R_link * offset
        hub_rate.value += B[:, i].T
        rigid_body(
            p_link,
            Jv_link,
            Jw_link,
            P(f"mh{number}", joint.hub_mass, f"hub mass of joint {number} [kg]"),
            sp.zeros(3, 3),
        )
        Jh = P(f"Jh{number}", joint.hub_inertia, f"hub inertia of joint {number} [kg m$^2$]")
        if Jh != 0:
            M += Jh * (hub_rate.value.T * hub_rate.value)
            bodies.append((hub_rate.value, sp.Matrix([[Jh]]), hub_rate.d))
        Jr = P(
            f"Jr{number}",
            joint.reflected_inertia,
            f"reflected motor inertia $I_m N^2$ of joint {number} [kg m$^2$]",
        )
        if Jr != 0:
            M += Jr * (B[:, i] * B[:, i].T)
        bv = P(f"bv{number}", joint.viscous_friction, f"viscous friction of joint {number} [N m s/rad]")
        if bv != 0:
            D += bv * (B[:, i] * B[:, i].T)
        for tag_, payload in _payloads(arm, number):
            if isinstance(payload.inertia, float):
                Jp = P(f"Jp{tag_}", payload.inertia, "payload inertia about its centre of mass [kg m$^2$]")
                tensor = Jp * sp.eye(3)
            else:
                tensor = _tensor(P, f"Jp{tag_}", payload.inertia, "payload inertia about its centre of mass")
            rigid_body(p_tip, Jv_end, Jw_end, P(f"mp{tag_}", payload.mass, "payload mass [kg]"), tensor)
        X = _rot_x(joint.alpha)
        Jv, Jw = Jv_end.left(X.T), Jw_end.left(X.T)
        R_abs = R_end * X
        p = p_tip
    return M, K, D, B, V, bodies, p, frames


# --------------------------------------------------------------------------- compiled (numba) code
#: Where the generated numba modules and their compiled machine code are cached (one folder per
#: hash of the generated source); ``FLEXLINK_SYMBOLIC_CACHE`` overrides it.
def _cache_folder() -> Path:
    import os

    root = os.environ.get("FLEXLINK_SYMBOLIC_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flexlink" / "symbolic"


_NUMBA_HEADER = '''"""Generated by amm.symbolic (numba): M, h = C q̇, G of {n} coordinates and the forward dynamics."""

import math
from math import cos, sin, sqrt

import numpy as np
from numba import njit

'''

_NUMBA_SOLVE = '''

@njit(cache=True)
def forward(q, qd, tau, p, B, D, K, M, h, G, out):
    """M q̈ = B τ − D q̇ − K q − h − G (M, h, G filled), solved by Cholesky in place of M."""
    terms(q, qd, p, M, h, G)
    n = q.shape[0]
    for i in range(n):
        s = -h[i] - G[i]
        for j in range(B.shape[1]):
            s += B[i, j] * tau[j]
        for j in range(n):
            s -= D[i, j] * qd[j] + K[i, j] * q[j]
        out[i] = s
    for j in range(n):  # M = L Lᵀ, L in the lower triangle
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    for i in range(n):
        s = out[i]
        for k in range(i):
            s -= M[i, k] * out[k]
        out[i] = s / M[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= M[k, i] * out[k]
        out[i] = s / M[i, i]
'''


def _numba_source(eom: SymbolicEOM, parameters: list, reduced) -> str:
    """Source of a module with ``terms(q, qd, p, M, h, G)`` (the cse'd M, h, G written into the
    given arrays) and ``forward(...)`` (terms and a Cholesky solve), both ``njit(cache=True)``."""
    from sympy.printing.pycode import PythonCodePrinter

    printer = PythonCodePrinter({"allow_unknown_functions": True, "fully_qualified_modules": False})
    replacements, (M, h, G) = reduced
    n = len(eom.q)
    lines = [_NUMBA_HEADER.format(n=n), "@njit(cache=True)", *_STUMPFF_SOURCE.strip().splitlines()]
    lines += ["", "", "@njit(cache=True)", "def terms(q, qd, p, M, h, G):"]
    for k, s in enumerate(eom.q):
        lines.append(f"    {s} = q[{k}]")
    for k, s in enumerate(eom.qd):
        lines.append(f"    {s} = qd[{k}]")
    for k, s in enumerate(parameters):
        lines.append(f"    {s} = p[{k}]")
    for symbol, value in replacements:
        lines.append(f"    {symbol} = {printer.doprint(value)}")
    lines += ["    M[:, :] = 0.0", "    h[:] = 0.0", "    G[:] = 0.0"]
    for i in range(n):
        for j in range(n):
            if M[i, j] != 0:
                lines.append(f"    M[{i}, {j}] = {printer.doprint(M[i, j])}")
    for name, vector in (("h", h), ("G", G)):
        for i in range(n):
            if vector[i] != 0:
                lines.append(f"    {name}[{i}] = {printer.doprint(vector[i])}")
    return "\n".join(lines) + "\n" + _NUMBA_SOLVE


def _load_numba(source: str):
    """Import the generated module from the cache folder (written once per source hash; numba
    caches the machine code beside it): returns (module, seconds to compile or load)."""
    import hashlib
    import importlib.util
    import sys

    key = hashlib.sha256(source.encode()).hexdigest()[:20]
    folder = _cache_folder() / key
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"eom_{key}.py"
    if not path.exists() or path.read_text() != source:
        temporary = path.with_suffix(f".{id(source)}.tmp")
        temporary.write_text(source)
        temporary.replace(path)  # atomic: a concurrent process sees the whole file or none
    spec = importlib.util.spec_from_file_location(f"flexlink_symbolic_{key}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache finds the module's globals by name
    spec.loader.exec_module(module)
    return module


import math as _math  # noqa: E402

#: lambdify modules of the generated code: Python floats (math) and the numpy twin.
_MATH = [_stumpff_namespace(_math.sqrt, _math.cos, _math.sin), "math", "numpy"]
_NUMPY = [_stumpff_namespace(np.sqrt, np.cos, np.sin), "numpy"]


class SymbolicModel(Model):
    """A :class:`core.dynamics.model.Model` evaluating the generated code of a :class:`SymbolicEOM`.

    Three lambdified numpy functions, each with its common subexpressions shared
    (``sympy.cse``): the hot path of forward dynamics, M, h = C q̇ and G of
    (q, q̇) in one call (:meth:`nonlinear_forces`, :meth:`bias_forces`, then
    :meth:`mass_matrix` at the same q from the same call); M, G, the tip, the
    link frames and V of q; and ∂M/∂q, generated on the first
    :meth:`mass_matrix_derivatives` call (C, linearization) and evaluated only
    when asked. K, D and B are constant. Coulomb friction follows the engine's
    smooth model (ε = ``coulomb_velocity``).

    ``compiled=True`` also writes the cse'd M, h, G and a Cholesky forward dynamics as a numba
    module (``njit(cache=True)``) into a cache folder keyed by a hash of its source
    (``$FLEXLINK_SYMBOLIC_CACHE``, else ``~/.cache/flexlink/symbolic``): compiled once per
    machine (16 s for the space arm), loaded later (< 1 s); :attr:`compile_seconds` says which.
    :meth:`forward_dynamics` (composite), :meth:`bias_forces` and :meth:`nonlinear_forces` (and
    :meth:`mass_matrix`, :meth:`gravity_forces` at the same q) then run it; everything else
    stays lambdified.
    """

    def __init__(
        self, eom: SymbolicEOM, coulomb_velocity: float = COULOMB_VELOCITY, compiled: bool = False
    ) -> None:
        self.eom = eom
        self.arm = eom.arm
        self.description = f"symbolic ({eom.model.description})"
        self.coulomb_velocity = float(coulomb_velocity)
        self._coordinates = eom.coordinates
        n = len(eom.q)
        frames = sp.Matrix([list(frame) for frame in eom.frames])
        # The parameters are arguments (their numbers passed at each call), not substituted:
        # rebuilding the large expressions with floats costs more than the cse itself.
        self._parameter_symbols = list(eom.values)
        self._parameters = np.array([eom.values[p] for p in self._parameter_symbols], dtype=float)
        self._parameter_list = self._parameters.tolist()
        # The hot path runs on Python floats with the math module (2-2.5× faster than numpy
        # scalars); the numpy twin, from the same cse, takes the states where math raises
        # (overflow, a domain error) and returns inf or nan as numpy does.
        arguments = [list(eom.q), list(eom.qd), self._parameter_symbols]
        reduced = _cse([eom.M, eom.h, eom.G])
        dynamics = reduced
        self._dynamics = _lambdify(arguments, None, _MATH, reduced)
        self._dynamics_numpy = _lambdify(arguments, None, _NUMPY, reduced)
        static = [list(eom.q), self._parameter_symbols]
        reduced = _cse([eom.M, eom.G, eom.tip, frames, sp.Matrix([eom.V])])
        self._terms_math = _lambdify(static, None, _MATH, reduced)
        self._terms = _lambdify(static, None, _NUMPY, reduced)
        self._derivatives = None  # ∂M/∂q, lambdified when first asked for
        self._K = np.array(eom.numeric(eom.K).tolist(), dtype=float).reshape(n, n)
        self._D = np.array(eom.numeric(eom.D).tolist(), dtype=float).reshape(n, n)
        self._B = np.array(eom.numeric(eom.B).tolist(), dtype=float).reshape(n, eom.n_joints)
        self._coulomb = np.array([j.coulomb_friction for j in self.arm.joints], dtype=float)
        self._last: tuple = (None, None)  # (q, [M, G, tip, frames, V])
        self._last_dynamics: tuple = (None, None, None)  # (q, q̇, [M, h, G])
        self._last_derivatives: tuple = (None, None)  # (q, ∂M/∂q)
        #: Seconds to write, compile (or load from the cache) and first run the numba module.
        self.compile_seconds = 0.0
        self._compiled = None
        if compiled:
            start = time.perf_counter()
            module = _load_numba(_numba_source(eom, self._parameter_symbols, dynamics))
            self._compiled = module
            self._work = (np.zeros((n, n)), np.zeros(n), np.zeros(n))
            self._compile_forward(n)
            self.compile_seconds = time.perf_counter() - start

    def _compile_forward(self, n: int) -> None:
        """First calls of the compiled functions (numba compiles or loads them here)."""
        zeros = np.zeros(n)
        M, h, G = self._work
        self._compiled.forward(
            zeros,
            zeros,
            np.zeros(self.n_joints),
            self._parameters,
            self._B,
            self._D,
            self._K,
            M,
            h,
            G,
            zeros.copy(),
        )

    def __repr__(self) -> str:
        return f"SymbolicModel({self.description})"

    def rebuild(self, arm: Arm) -> SymbolicModel:
        """The equations of ``arm`` derived with the same shapes and options (see
        :meth:`core.dynamics.model.Model.rebuild`); clamped-mass ratios follow the new arm."""
        built = self.eom.model.arguments
        shapes = {k: built[k] for k in ("shape", "modes", "shapes") if k in built}
        eom = derive(arm, **shapes, **self.eom.options)
        return self.replace(eom=eom)

    @property
    def coordinates(self) -> tuple[str, ...]:
        return self._coordinates

    @property
    def n_joints(self) -> int:
        return self.arm.n_joints

    def _evaluate(self, q) -> list:
        """[M, G, tip, frames, V] at q (the last q's kept)."""
        q = np.asarray(q)
        if q.shape != (self.n_dof,):
            raise ValueError(f"q must have shape ({self.n_dof},), got {q.shape}")
        if np.iscomplexobj(q):  # a complex step (e.g. ∂G/∂q): the generated code is analytic
            return self._terms(q, self._parameters)
        q = q.astype(float)
        key = q.tobytes()
        if self._last[0] != key:  # G, the tip and V are asked for at the same q in a step
            try:
                terms = self._terms_math(q.tolist(), self._parameter_list)
            except (ArithmeticError, ValueError):  # math overflows where numpy gives inf (and warns)
                terms = self._terms(q, self._parameters)
            self._last = (key, terms)
        return self._last[1]

    def _evaluate_dynamics(self, q, qd) -> list:
        """[M, h, G] at (q, q̇) from the one generated function of the hot path."""
        q, qd = self._state(q, qd)
        key, rates = q.tobytes(), qd.tobytes()
        last = self._last_dynamics
        if (last[0] != key or last[1] != rates) and self._compiled is not None:
            n = self.n_dof
            terms = [np.zeros((n, n)), np.zeros(n), np.zeros(n)]
            self._compiled.terms(q, qd, self._parameters, *terms)
            self._last_dynamics = last = (key, rates, terms)
        elif last[0] != key or last[1] != rates:
            try:
                terms = self._dynamics(q.tolist(), qd.tolist(), self._parameter_list)
            except (ArithmeticError, ValueError):  # as in _evaluate: numpy's inf and its warning
                terms = self._dynamics_numpy(q, qd, self._parameters)
            self._last_dynamics = last = (key, rates, terms)
        return last[2]

    def _dynamics_at(self, q) -> list | None:
        """The [M, h, G] of the last (q, q̇) if it was at this q (M and G do not depend on q̇)."""
        last = self._last_dynamics
        if last[0] is not None and not np.iscomplexobj(q):
            q = np.asarray(q, dtype=float)
            if q.shape == (self.n_dof,) and q.tobytes() == last[0]:
                return last[2]
        return None

    def mass_matrix(self, q) -> np.ndarray:
        terms = self._dynamics_at(q)
        M = terms[0] if terms is not None else self._evaluate(q)[0]
        return np.array(M, dtype=float).reshape(self.n_dof, self.n_dof)

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        n = self.n_dof
        q = np.asarray(q)
        if q.shape != (n,):
            raise ValueError(f"q must have shape ({n},), got {q.shape}")
        q = q.astype(float)
        key = q.tobytes()
        if self._last_derivatives[0] != key:
            if self._derivatives is None:
                derivatives = sp.Matrix.vstack(*self.eom.dM) if n else self.eom.M
                self._derivatives = _lambdify(
                    [list(self.eom.q), self._parameter_symbols], [derivatives], _NUMPY
                )
            self._last_derivatives = (key, self._derivatives(q, self._parameters)[0])
        return np.array(self._last_derivatives[1], dtype=float).reshape(n, n, n)

    def bias_forces(self, q, qd) -> np.ndarray:
        """h(q, q̇) = C q̇ from the generated h (no ∂M/∂q, no C)."""
        return np.array(self._evaluate_dynamics(q, qd)[1], dtype=float).reshape(self.n_dof)

    def nonlinear_forces(self, q, qd) -> np.ndarray:
        """h + G from one call of the generated M, h, G (M kept for :meth:`mass_matrix`)."""
        _, h, G = self._evaluate_dynamics(q, qd)
        return (np.array(h, dtype=float) + np.array(G, dtype=float)).reshape(self.n_dof)

    def forward_dynamics(self, q, qd, tau, solver: str = "composite", *, friction: bool = True) -> np.ndarray:
        """As :meth:`core.dynamics.model.Model.forward_dynamics`; the composite solver is inlined: one
        call of the generated M, h, G and a dense solve of M q̈ = B(τ + τ_c) − D q̇ − K q − h − G."""
        if solver != "composite":
            return super().forward_dynamics(q, qd, tau, solver, friction=friction)
        q, qd = self._state(q, qd)
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n_joints,):
            raise ValueError(f"tau must have shape ({self.n_joints},), got {tau.shape}")
        if friction and self._coulomb.any():
            tau = tau + self.friction_forces(q, qd)
        if self._compiled is not None:
            out = np.empty(self.n_dof)
            M, h, G = self._work
            self._compiled.forward(q, qd, tau, self._parameters, self._B, self._D, self._K, M, h, G, out)
            return out
        M, h, G = self._evaluate_dynamics(q, qd)
        n = self.n_dof
        rhs = self._B @ tau - self._D @ qd - self._K @ q
        rhs -= np.asarray(h, dtype=float).reshape(n) + np.asarray(G, dtype=float).reshape(n)
        return np.linalg.solve(np.asarray(M, dtype=float).reshape(n, n), rhs)

    def gravity_forces(self, q) -> np.ndarray:
        terms = self._dynamics_at(q)
        if terms is not None:
            return np.array(terms[2], dtype=float).reshape(self.n_dof)
        dtype = complex if np.iscomplexobj(q) else float
        return np.array(self._evaluate(q)[1], dtype=dtype).reshape(self.n_dof)

    def stiffness_matrix(self, q) -> np.ndarray:
        return self._K.copy()

    def damping_matrix(self, q) -> np.ndarray:
        return self._D.copy()

    def input_matrix(self, q) -> np.ndarray:
        return self._B.copy()

    def friction_forces(self, q, qd) -> np.ndarray:
        u = self._B.T @ np.asarray(qd, dtype=float)
        return -self._coulomb * np.tanh(u / self.coulomb_velocity)

    def potential_energy(self, q) -> float:
        return float(np.asarray(self._evaluate(q)[4], dtype=float).reshape(-1)[0])

    def tip_position(self, q) -> np.ndarray:
        tip = np.asarray(self._evaluate(q)[2], dtype=float).reshape(-1)
        return np.array([*tip, 0.0]) if tip.size == 2 else tip

    def point_position(self, link: int, s: float, q) -> np.ndarray:
        if not (isinstance(link, (int, np.integer)) and 1 <= link <= self.arm.n_links):
            raise ValueError(f"link must be a link number from 1 to {self.arm.n_links}, got {link!r}")
        length = self.arm.links[link - 1].length
        if not (np.isfinite(s) and -1e-12 * length <= s <= length * (1 + 1e-12)):
            raise ValueError(f"s must lie in [0, {length}] on link {link}, got {s!r}")
        frame = np.asarray(self._evaluate(q)[3], dtype=float).reshape(self.arm.n_links, -1)[link - 1]
        w = np.zeros(2)
        if link in self.eom.model.bases:
            engine = self.eom.model
            values, _ = engine.bases[link].evaluate(np.array([min(s, length)]))
            delta = np.asarray(q, dtype=float)[engine.flex_columns[link]]
            body = engine.bodies[link]
            w = np.array([float(values[:, 0] @ body.plane(delta, a)) for a in (0, 1)])
        if frame.size == 3:  # planar: (x, y, angle)
            x, y, angle = frame
            c, si = np.cos(angle), np.sin(angle)
            return np.array([x + c * s - si * w[0], y + si * s + c * w[0], 0.0])
        return frame[:3] + frame[3:].reshape(3, 3) @ np.array([s, w[0], w[1]])
