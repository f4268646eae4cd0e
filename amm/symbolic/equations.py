"""The derived equations of motion (:class:`SymbolicEOM`) and :func:`derive`, which builds them.

:func:`derive` discretizes the arm as :class:`amm.AssumedModesModel` does, names its parameters
and modal constants (:mod:`amm.symbolic.parameters`), sums the bodies of the planar
(:mod:`amm.symbolic.planar`) or spatial (:mod:`amm.symbolic.spatial`) chain and takes ∂M/∂q,
h = C q̇, C and G from them (:mod:`amm.symbolic.lagrange`). A :class:`SymbolicEOM` prints itself
as LaTeX, writes a standalone numpy module and evaluates as a :class:`~core.dynamics.model.Model`
(:mod:`amm.symbolic.codegen`, :mod:`amm.symbolic.numeric`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import sympy as sp

from amm.model import AssumedModesModel
from amm.symbolic.codegen import write_python
from amm.symbolic.lagrange import christoffel, derivatives
from amm.symbolic.numeric import SymbolicModel
from amm.symbolic.parameters import Parameters
from amm.symbolic.planar import planar_terms
from amm.symbolic.spatial import spatial_terms
from core.arm import Arm


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
    options : mapping
        The arguments of :func:`derive` other than the arm (shape, modes, shapes, constants,
        symbols): what :meth:`rebuild` derives another arm with.
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
    options: Mapping = field(default_factory=dict, repr=False)

    @property
    def n_joints(self) -> int:
        return self.arm.n_joints

    def numeric(self, expr):
        """``expr`` with every parameter symbol replaced by its number."""
        subs = {s: sp.Float(v, 17) for s, v in self.values.items()}
        return expr.xreplace(subs)

    def rebuild(self, arm: Arm) -> SymbolicEOM:
        """The equations of ``arm`` derived with the same shapes and options (clamped-mass
        ratios follow the new arm)."""
        return derive(arm, **self.options)

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
        ``bias_forces(q, qd)`` (h = C q̇ from its own expression, without C),
        ``stiffness_matrix()``, ``damping_matrix()``, ``input_matrix()``, ``tip_position(q)`` and
        ``COORDINATES``; returns the path."""
        return write_python(self, path)


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
    if name.endswith("_dot"):
        inner = _latex_name(name[:-4])
        head, _, tail = inner.partition("_")
        return f"\\dot{{{head}}}_{tail}" if tail else f"\\dot{{{inner}}}"
    for pattern, replacement in _LATEX_PATTERNS:
        if re.fullmatch(pattern, name):
            return re.sub(pattern, replacement, name)
    return name


def derive(
    arm: Arm,
    shape: str = "clamped-free",
    modes: int = 2,
    shapes: Mapping[int, tuple] | None = None,
    constants: Literal["symbols", "numeric"] = "symbols",
    symbols: bool = True,
) -> SymbolicEOM:
    """Symbolic equations of motion of an arm of revolute joints (see :mod:`amm.symbolic`).

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
    P = Parameters(bool(symbols), constants == "symbols")
    coordinates = engine.coordinates
    q = tuple(sp.Symbol(name, real=True) for name in coordinates)
    qd = tuple(sp.Symbol(f"{name}_dot", real=True) for name in coordinates)
    terms, tip, frames = (planar_terms if arm.is_planar else spatial_terms)(arm, engine, P, q)
    M = sp.ImmutableMatrix(terms.M)
    dM, h = derivatives(terms.bodies, q, qd)
    qv = sp.Matrix(q)
    return SymbolicEOM(
        arm=arm,
        coordinates=coordinates,
        q=q,
        qd=qd,
        M=M,
        C=christoffel(dM, qd),
        h=h,
        K=sp.ImmutableMatrix(terms.K),
        D=sp.ImmutableMatrix(terms.D),
        G=sp.ImmutableMatrix(sp.Matrix([terms.V]).jacobian(qv).T),
        B=sp.ImmutableMatrix(terms.B),
        dM=dM,
        V=terms.V + (qv.T * terms.K * qv)[0] / 2,  # gravity + elastic
        tip=sp.ImmutableMatrix(tip),
        frames=tuple(frames),
        values=dict(P.values),
        definitions=dict(P.definitions),
        model=engine,
        seconds=time.perf_counter() - start,
        options={
            "shape": shape,
            "modes": modes,
            "shapes": shapes,
            "constants": constants,
            "symbols": symbols,
        },
    )
