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
from dataclasses import dataclass, field, replace
from dataclasses import fields as fields_of
from pathlib import Path
from typing import Literal

import sympy as sp

from amm.model import AssumedModesModel
from amm.symbolic import store
from amm.symbolic.articulated import articulated_forward
from amm.symbolic.codegen import write_python
from amm.symbolic.lagrange import christoffel, derivatives
from amm.symbolic.numeric import SymbolicModel
from amm.symbolic.parameters import Parameters
from amm.symbolic.planar import planar_terms
from amm.symbolic.recursive import Intermediates, recursive_terms
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
    M, K, D, G, B : sympy.ImmutableMatrix
        Shapes (n, n), (n, n), (n, n), (n, 1), (n, n_joints). In the recursive form M, h, G,
        V, tip and frames are written in the named intermediates of ``intermediates``.
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
        What each symbol is (LaTeX-ready text); also each l-dependent modal integral ``f(l)``.
    functions : mapping str → (int, str, tuple)
        The modal integrals of translating links whose shapes follow the free length, undefined
        functions of it in the expressions (``ta3_1(d3)``, their derivatives where the energies
        are differentiated): name → (link, integral key, index) of the engine's
        ``LengthFollowing.taylor``, which :meth:`to_numeric` evaluates them by
        (:mod:`amm.symbolic.following`). Empty without such links.
    model : AssumedModesModel
        The engine model of the same arm and shapes (bases, damping): a property, built on first
        use when the equations came from the cache.
    description : str
        The engine model's description.
    seconds : float
        Generation wall time [s].
    options : mapping
        The arguments of :func:`derive` other than the arm (shape, modes, shapes, constants,
        symbols, form): what :meth:`rebuild` derives another arm with.
    intermediates : Intermediates or None
        The named intermediates of the recursive form (None: closed form,
        :mod:`amm.symbolic.recursive`).
    origin : {"derived", "cache"}
        Whether this process derived the equations or loaded them from the derivation cache.
    cache_key : str or None
        The derivation's folder name in the cache (:mod:`amm.symbolic.store`), None if not cached.
    inverse, qdd
        Recursive form: the inverse dynamics M q̈ + h + G of the accelerations ``qdd``
        (``theta1_ddot``…) from one Newton–Euler pass (None in the closed form).
    forward, applied
        Recursive form: q̈ of M q̈ + h + G = ``applied`` (``Q_theta1``…: B τ − D q̇ − K q and
        friction) by the articulated-body algorithm (:mod:`amm.symbolic.articulated`; None in
        the closed form).

    ``C`` (the Christoffel matrix) and ``dM`` (∂M/∂q_k, k = 0..n-1) are properties, derived on
    first use in the recursive form (through the intermediates, chain rule).
    """

    arm: Arm
    coordinates: tuple[str, ...]
    q: tuple
    qd: tuple
    M: sp.ImmutableMatrix
    K: sp.ImmutableMatrix
    D: sp.ImmutableMatrix
    G: sp.ImmutableMatrix
    B: sp.ImmutableMatrix
    h: sp.ImmutableMatrix
    V: sp.Expr
    tip: sp.ImmutableMatrix
    frames: tuple
    values: Mapping = field(repr=False)
    definitions: Mapping = field(repr=False)
    description: str = ""
    seconds: float = 0.0
    options: Mapping = field(default_factory=dict, repr=False)
    intermediates: Intermediates | None = field(default=None, repr=False)
    derived: dict = field(default_factory=dict, repr=False, compare=False)
    origin: str = "derived"
    cache_key: str | None = None
    inverse: sp.ImmutableMatrix | None = field(default=None, repr=False)
    qdd: tuple = ()
    forward: sp.ImmutableMatrix | None = field(default=None, repr=False)
    applied: tuple = ()
    functions: Mapping = field(default_factory=dict, repr=False)

    @property
    def n_joints(self) -> int:
        return self.arm.n_joints

    @property
    def model(self) -> AssumedModesModel:
        """The engine model of the same arm and shapes (built on first use after a cache load)."""
        if "model" not in self.derived:
            o = self.options
            self.derived["model"] = AssumedModesModel(
                self.arm, shape=o["shape"], modes=o["modes"], shapes=o["shapes"]
            )
        return self.derived["model"]

    @property
    def dM(self) -> tuple:
        """∂M/∂q_k, k = 0..n-1 (the recursive form's through its intermediates, on first use)."""
        if "dM" not in self.derived:
            X = self.intermediates
            if X is None:
                self.derived["dM"] = tuple(sp.ImmutableMatrix(self.M.diff(qk)) for qk in self.q)
            else:
                self.derived["dM"] = tuple(
                    sp.ImmutableMatrix(self.M.applyfunc(lambda e, x=qk: X.diff(e, x))) for qk in self.q
                )
        return self.derived["dM"]

    @property
    def C(self) -> sp.ImmutableMatrix:
        """C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k (Ṁ − 2C skew)."""
        if "C" not in self.derived:
            self.derived["C"] = christoffel(self.dM, self.qd)
        return self.derived["C"]

    def closed(self, expr):
        """``expr`` with the named intermediates substituted (itself in the closed form)."""
        return expr if self.intermediates is None else self.intermediates.closed(expr)

    def expand(self) -> SymbolicEOM:
        """The closed form: every entry one expression of q, q̇ and the parameters (the
        recursive form with its intermediates substituted; large for long chains)."""
        if self.intermediates is None:
            return self
        X = self.intermediates
        return replace(
            self,
            M=sp.ImmutableMatrix(X.closed(self.M)),
            h=sp.ImmutableMatrix(X.closed(self.h)),
            G=sp.ImmutableMatrix(X.closed(self.G)),
            V=X.closed(self.V),
            tip=sp.ImmutableMatrix(X.closed(self.tip)),
            frames=tuple(tuple(X.closed(e) for e in frame) for frame in self.frames),
            intermediates=None,
            derived={},
            cache_key=None,
            inverse=None if self.inverse is None else sp.ImmutableMatrix(X.closed(self.inverse)),
            forward=None,
            applied=(),
        )

    def numeric(self, expr, closed: bool = True):
        """``expr`` with every parameter symbol replaced by its number (and, in the recursive
        form with ``closed``, the intermediates substituted: the closed form)."""
        subs = {s: sp.Float(v, 17) for s, v in self.values.items()}
        return (self.closed(expr) if closed else expr).xreplace(subs)

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
        triangle for symmetric ones) and the definitions of the symbols; in the recursive form
        first the recursion, one line per named intermediate the matrices use."""
        names = {s: _latex_name(str(s)) for s in (*self.q, *self.qd, *self.values)}
        matrices = (
            ("M", self.M, True),
            ("C", self.C, False) if self.intermediates is None else ("h", self.h, False),
            ("K", self.K, True),
            ("D", self.D, True),
            ("G", self.G, False),
            ("B", self.B, False),
        )
        parts = []
        if self.intermediates is not None:
            X = self.intermediates
            names |= X.latex
            used = X.closure([m for _, m, _ in matrices])
            lines = [f"{names[s]} &= {sp.latex(e, symbol_names=names)}" for s, e in used]
            if lines:
                parts.append("\\begin{align}\n" + " \\\\\n".join(lines) + "\n\\end{align}")
        for label, matrix, symmetric in matrices:
            lines = []
            for i in range(matrix.rows):
                for j in range(matrix.cols):
                    if symmetric and j > i:
                        continue
                    entry = matrix[i, j]
                    if entry == 0:
                        continue
                    index = f"{i + 1}" if label in ("G", "h") else f"{i + 1},{j + 1}"
                    lines.append(f"{label}_{{{index}}} &= {sp.latex(entry, symbol_names=names)}")
            if lines:
                parts.append("\\begin{align}\n" + " \\\\\n".join(lines) + "\n\\end{align}")
        defs = [
            f"{names[s] if s in names else sp.latex(s, symbol_names=names)} &: {text}"
            for s, text in self.definitions.items()
        ]
        if defs:
            parts.append("\\begin{align*}\n" + " \\\\\n".join(defs) + "\n\\end{align*}")
        return "\n\n".join(parts) + "\n"

    def to_python(self, path: str | Path) -> Path:
        """Write a standalone module (numpy only) with ``mass_matrix(q)``,
        ``mass_matrix_derivatives(q)``, ``gravity_forces(q)``, ``coriolis_matrix(q, qd)``,
        ``bias_forces(q, qd)`` (h = C q̇ from its own expression, without C),
        ``stiffness_matrix()``, ``damping_matrix()``, ``input_matrix()``, ``tip_position(q)`` and
        ``COORDINATES``; returns the path. Not for length-following shapes (their integrals are
        the engine's series: use :meth:`to_numeric`)."""
        if self.functions:
            raise ValueError(
                "to_python: the equations hold the modal integrals of length-following shapes as "
                f"functions of the free length ({', '.join(list(self.functions)[:3])}…), which a "
                "standalone numpy module cannot evaluate; use to_numeric()"
            )
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


#: ``form="auto"`` derives planar arms of more links than this in the recursive form.
RECURSIVE_ABOVE = 3


def derive(
    arm: Arm,
    shape: str = "clamped-free",
    modes: int = 2,
    shapes: Mapping[int, tuple] | None = None,
    constants: Literal["symbols", "numeric"] = "symbols",
    symbols: bool = True,
    form: Literal["auto", "recursive", "closed"] = "auto",
    cache: bool = True,
) -> SymbolicEOM:
    """Symbolic equations of motion of an arm of revolute joints (see :mod:`amm.symbolic`); a
    spatial arm may also carry translating flexible links on prismatic joints (frozen or
    length-following shapes, closed form: :mod:`amm.symbolic.translating`,
    :mod:`amm.symbolic.following`).

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
    form : {"auto", "recursive", "closed"}
        ``"recursive"`` (planar arms): Newton–Euler link by link in named intermediates
        (:mod:`amm.symbolic.recursive`), expressions growing about linearly with the links;
        ``"closed"``: one expression per entry (:meth:`SymbolicEOM.expand` turns the recursive
        form into it); ``"auto"``: recursive for planar arms of more than
        :data:`RECURSIVE_ABOVE` links, closed otherwise.
    cache : bool
        Load the derivation from (or store it into) the derivation cache
        (:mod:`amm.symbolic.store`, keyed by the arm, these options, the package version and
        sources); ``SymbolicEOM.origin`` says which.

    Returns
    -------
    SymbolicEOM
    """
    if not isinstance(arm, Arm):
        raise TypeError(f"arm must be an Arm, got {type(arm).__name__}")
    for number, joint in enumerate(arm.joints, start=1):
        if joint.kind != "revolute" and (arm.is_planar or form == "recursive"):
            raise ValueError(
                f"joint {number}: kind {joint.kind!r} is derived in the closed form of a spatial arm only "
                "(translating flexible links, form='closed' or 'auto'); the recursive "
                "and the planar derivations take revolute joints only"
            )
    if constants not in ("symbols", "numeric"):
        raise ValueError(f"constants must be 'symbols' or 'numeric', got {constants!r}")
    if form not in ("auto", "recursive", "closed"):
        raise ValueError(f"form must be 'auto', 'recursive' or 'closed', got {form!r}")
    if form == "recursive" and not arm.is_planar:
        raise ValueError(
            "form='recursive' derives planar arms only (Arm.planar); got a spatial arm: use form='closed'"
        )
    start = time.perf_counter()
    options = {"shape": shape, "modes": modes, "shapes": shapes, "constants": constants, "symbols": symbols}
    options["form"] = form
    if not cache:
        return _derive(arm, options, start)
    name = f"eom-{store.key(arm, options)}"
    where = store.folder(name)
    if where is not None:
        fields = store.load(where / "eom.pkl")
        if fields is not None:
            store.COUNTERS["loaded"] += 1
            fields |= {"arm": arm, "options": options, "origin": "cache", "cache_key": name}
            return SymbolicEOM(**fields, seconds=time.perf_counter() - start)
    eom = _derive(arm, options, start)
    if where is not None:
        kept = {f.name: getattr(eom, f.name) for f in fields_of(SymbolicEOM)}
        for dropped in ("arm", "options", "origin", "cache_key", "seconds"):
            kept.pop(dropped)
        kept["derived"] = {k: v for k, v in kept["derived"].items() if k != "model"}
        store.save(where / "eom.pkl", kept)
        store.COUNTERS["stored"] += 1
        eom = replace(eom, cache_key=name)
    return eom


def _derive(arm: Arm, options: dict, start: float) -> SymbolicEOM:
    """The derivation of :func:`derive` (``options``: its arguments other than the arm)."""
    store.COUNTERS["derived"] += 1
    engine = AssumedModesModel(arm, shape=options["shape"], modes=options["modes"], shapes=options["shapes"])
    form = options["form"]
    recursive = form == "recursive" or (form == "auto" and arm.is_planar and arm.n_links > RECURSIVE_ABOVE)
    P = Parameters(bool(options["symbols"]), options["constants"] == "symbols")
    coordinates = engine.coordinates
    q = tuple(sp.Symbol(name, real=True) for name in coordinates)
    qd = tuple(sp.Symbol(f"{name}_dot", real=True) for name in coordinates)
    if recursive:
        qdd = tuple(sp.Symbol(f"{name}_ddot", real=True) for name in coordinates)
        applied = tuple(sp.Symbol(f"Q_{name}", real=True) for name in coordinates)
        t = recursive_terms(arm, engine, P, q, qd, qdd)
        forward = articulated_forward(t["links"], t["X"], q, qd, applied, t["gravity"])
        qv = sp.Matrix(q)
        return SymbolicEOM(
            arm=arm,
            coordinates=coordinates,
            q=q,
            qd=qd,
            M=sp.ImmutableMatrix(t["M"]),
            h=sp.ImmutableMatrix(t["h"]),
            K=sp.ImmutableMatrix(t["K"]),
            D=sp.ImmutableMatrix(t["D"]),
            G=sp.ImmutableMatrix(t["G"]),
            B=sp.ImmutableMatrix(t["B"]),
            V=t["V"] + (qv.T * t["K"] * qv)[0] / 2,
            tip=sp.ImmutableMatrix(t["tip"]),
            frames=tuple(t["frames"]),
            values=dict(P.values),
            definitions=dict(P.definitions),
            description=engine.description,
            derived={"model": engine},
            seconds=time.perf_counter() - start,
            options=options,
            intermediates=t["X"],
            inverse=sp.ImmutableMatrix(t["inverse"]),
            qdd=qdd,
            forward=sp.ImmutableMatrix(forward),
            applied=applied,
        )
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
        h=h,
        K=sp.ImmutableMatrix(terms.K),
        D=sp.ImmutableMatrix(terms.D),
        G=sp.ImmutableMatrix(sp.Matrix([terms.V]).jacobian(qv).T),
        B=sp.ImmutableMatrix(terms.B),
        V=terms.V + (qv.T * terms.K * qv)[0] / 2,  # gravity + elastic
        tip=sp.ImmutableMatrix(tip),
        frames=tuple(frames),
        values=dict(P.values),
        definitions=dict(P.definitions),
        description=engine.description,
        seconds=time.perf_counter() - start,
        options=options,
        derived={"dM": dM, "model": engine},
        functions=dict(P.functions),
    )
