"""The body of a translating flexible link (a beam sliding through the hub of a prismatic joint),
its kinetic energy integrated from first principles, with frozen or length-following shapes.

The model is the engine's (:class:`core.dynamics.flexible_body.TranslatingBody`, docs/TRANSLATING.md;
Theodore & Ghosal 1997 without the convective term): the beam of total length L lies along x of
its beam frame at the hub exit, the free part s = lη ∈ [0, l] (l the joint variable) bends,
w(s) = ψ(η; l)δ, the part inside, s ∈ [−(L − l), 0], moves rigidly. A free point at ρ = (lη,
ψᵀδ_y, ψᵀδ_z) moves with

    v + Ω × ρ + Φ δ̇ + (e_x + Φ_l δ) l̇,   Φ_l = ∂Φ/∂l|_s = g(η)/l,  g = −ηψ'(η) + l ∂ψ/∂l|_η

(the last term zero for frozen shapes), a point inside with v + Ω × ρ + e_x l̇. The body mass
matrix of ν = (v, Ω, δ̇, l̇) in beam axes is M_b = ∫ Vᵀ V dm (V the 3 × (7 + m) map ν ↦
velocity): the integrand is expanded here as a polynomial in η, ψ_k(η), g_k(η) and every
monomial replaced by its η-integral, a named modal integral of the link (``ta``, ``tb``, ``tN``,
``tg``, ``tgb``, ``tP``, ``tR``: :func:`translating_constants`): a constant of the engine's
basis (``unit_integrals``) for frozen shapes, a function of the free length (``ta3_1(d3)``,
bound to the engine's series by :mod:`amm.symbolic.following`) for shapes that follow it, whose
l-derivatives then enter wherever the energies are differentiated in l. The inside part is
integrated in s exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from amm.symbolic.parameters import Parameters


@dataclass(frozen=True)
class TranslatingConstants:
    """The η-integrals of the shapes ψ (unit length, η ∈ [0, 1]) of a translating link: named
    constants of frozen shapes, named functions of the free length l for shapes that follow it
    (``following``; :mod:`amm.symbolic.following`).

    Attributes
    ----------
    first, moment : sympy.Matrix
        ∫ψ dη, ∫ηψ dη (columns of m).
    mass, stiffness : sympy.Matrix
        ∫ψψᵀ dη, ∫ψ''ψ''ᵀ dη.
    rate_first, rate_second : sympy.Matrix
        ∫g dη, ∫ηg dη, g = −ηψ' + l ∂ψ/∂l|_η.
    rate_cross, rate_mass : sympy.Matrix
        ∫ψgᵀ dη (not symmetric), ∫ggᵀ dη.
    tip, tip_slope : sympy.Matrix
        ψ(1) and ψ'(1) = dψ/dη at the tip.
    following : bool
        The entries are functions of l.
    """

    first: sp.Matrix
    moment: sp.Matrix
    mass: sp.Matrix
    stiffness: sp.Matrix
    rate_first: sp.Matrix
    rate_second: sp.Matrix
    rate_cross: sp.Matrix
    rate_mass: sp.Matrix
    tip: sp.Matrix
    tip_slope: sp.Matrix
    following: bool = False


#: The integrals of :class:`TranslatingConstants`: (field, name prefix, key of the engine's
#: ``unit_integrals`` and ``LengthFollowing.taylor``, LaTeX, square matrix, symmetric).
_INTEGRALS = (
    ("first", "ta", "first", r"\int_0^1 \psi_{k} d\eta", False, False),
    ("moment", "tb", "moment", r"\int_0^1 \eta\psi_{k} d\eta", False, False),
    ("mass", "tN", "mass", r"\int_0^1 \psi_r\psi_c d\eta", True, True),
    ("stiffness", "tk", "stiffness", r"\int_0^1 \psi_r''\psi_c'' d\eta", True, True),
    ("rate_first", "tg", "rate_first", r"\int_0^1 g_{k} d\eta", False, False),
    ("rate_second", "tgb", "rate_second", r"\int_0^1 \eta g_{k} d\eta", False, False),
    ("rate_cross", "tP", "rate_cross", r"\int_0^1 \psi_r g_c d\eta", True, False),
    ("rate_mass", "tR", "rate_mass", r"\int_0^1 g_r g_c d\eta", True, True),
    ("tip", "tphi", "tip_value", r"\psi_{k}(1)", False, False),
    ("tip_slope", "tdphi", "tip_slope", r"\psi'_{k}(1)", False, False),
)


def translating_constants(P: Parameters, number: int, basis, l=None) -> TranslatingConstants:
    """The named η-integrals of translating link ``number``'s basis: constants of frozen shapes;
    for a length-following basis (``basis.follow``) functions of the free length symbol ``l``
    (``ta3_1(d3)``…, whatever ``constants``: their numbers depend on l)."""
    following = getattr(basis, "follow", None) is not None
    unit = basis.unit_integrals()
    m = basis.n
    g = r",\ g = -\eta\psi' + l\,\partial\psi/\partial l" if following else r",\ g = -\eta\psi'"

    def entry(name: str, key: str, index: tuple, text: str):
        if following:
            where = rf",\ \text{{at the free length }} {sp.latex(l)}"
            return P.length_function(name, l, (number, key, index), text + where)
        return P(name, np.asarray(unit[key], dtype=float)[index], text, P.modal, True)

    def matrix(prefix: str, key: str, text: str, square: bool, symmetric: bool) -> sp.Matrix:
        text = text + (g if prefix in ("tg", "tgb", "tP", "tR") else "")
        if not square:
            return sp.Matrix(
                [
                    entry(f"{prefix}{number}_{k + 1}", key, (k,), text.replace("_{k}", f"_{{{k + 1}}}"))
                    for k in range(m)
                ]
            )
        out = sp.zeros(m, m)
        for r in range(m):
            for c in range(m):
                if symmetric and c < r:
                    out[r, c] = out[c, r]
                    continue
                definition = text.replace("_r", f"_{r + 1}").replace("_c", f"_{c + 1}")
                out[r, c] = entry(f"{prefix}{number}_{r + 1}{c + 1}", key, (r, c), definition)
        return out

    fields = {
        field: matrix(prefix, key, text, square, symmetric)
        for field, prefix, key, text, square, symmetric in _INTEGRALS
    }
    return TranslatingConstants(**fields, following=following)


def _skew(v) -> sp.Matrix:
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _integrator(k: TranslatingConstants, eta, psi: list, g: list):
    """∫₀¹ (·) dη of a polynomial in η, ψ_k, g_k of degree ≤ 2 in the shapes (the integrals of
    ``k``)."""
    gens = (eta, *psi, *g)
    m = len(psi)

    def monomial(powers: tuple):
        p, shapes = powers[0], powers[1:]
        index = [j for j, e in enumerate(shapes) for _ in range(e)]
        if not index:
            return sp.Rational(1, p + 1)
        if len(index) == 1 and p <= 1:
            j = index[0]
            if j < m:
                return (k.first, k.moment)[p][j]
            return (k.rate_first, k.rate_second)[p][j - m]
        if len(index) == 2 and p == 0:
            a, b = index
            if b < m:
                return k.mass[a, b]
            if a < m:
                return k.rate_cross[a, b - m]
            return k.rate_mass[a - m, b - m]
        raise ValueError(f"no η-integral for the monomial of powers {powers}")  # pragma: no cover

    def integrate(expr) -> sp.Expr:
        expr = sp.expand(expr)
        if expr == 0:
            return sp.S.Zero
        poly = sp.Poly(expr, *gens)
        return sp.Add(*(coefficient * monomial(powers) for powers, coefficient in poly.terms()))

    return integrate


def translating_mass_matrix(
    k: TranslatingConstants, rho, L, l, dy: sp.Matrix, dz: sp.Matrix, planes: int
) -> tuple[sp.Matrix, sp.Matrix]:
    """The body mass matrix M_b(δ, l) of ν = (v, Ω, δ̇, l̇) in beam axes (module docstring), and the
    first moment S₁ = ∫ρ dm of the whole beam."""
    m = dy.rows
    eta, s = sp.Symbol("eta", real=True), sp.Symbol("s", real=True)
    psi = [sp.Symbol(f"psi_{j}", real=True) for j in range(m)]
    g = [sp.Symbol(f"g_{j}", real=True) for j in range(m)]
    psi_v, g_v = sp.Matrix(psi), sp.Matrix(g)
    size = 7 + planes * m
    # The free part: velocity map V(η) of ν.
    wy, wz = (psi_v.T * dy)[0], (psi_v.T * dz)[0]
    rho_free = sp.Matrix([l * eta, wy, wz])
    V = sp.zeros(3, size)
    V[:, :3] = sp.eye(3)
    V[:, 3:6] = -_skew(rho_free)
    V[1, 6 : 6 + m] = psi_v.T
    if planes == 2:
        V[2, 6 + m : 6 + 2 * m] = psi_v.T
    V[:, size - 1] = sp.Matrix([1, (g_v.T * dy)[0] / l, (g_v.T * dz)[0] / l])
    integrate = _integrator(k, eta, psi, g)
    Mb = sp.zeros(size, size)
    product = V.T * V
    for r in range(size):
        for c in range(r, size):
            Mb[r, c] = Mb[c, r] = rho * l * integrate(product[r, c])
    # The part inside the hub: rigid, s ∈ [−(L − l), 0].
    W = sp.zeros(3, size)
    W[:, :3] = sp.eye(3)
    W[:, 3:6] = -_skew(sp.Matrix([s, 0, 0]))
    W[0, size - 1] = 1
    inside = W.T * W
    for r in range(size):
        for c in range(r, size):
            if inside[r, c] != 0:
                term = rho * sp.integrate(inside[r, c], (s, l - L, 0))
                Mb[r, c] = Mb[c, r] = sp.expand(Mb[r, c] + term)
    S1 = sp.Matrix([rho * L * (l - L / 2), rho * l * (k.first.T * dy)[0], rho * l * (k.first.T * dz)[0]])
    return Mb, S1
