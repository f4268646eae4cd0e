"""Symbolic equations of motion of planar and spatial arms (assumed modes).

:func:`derive` builds M, C, K, D, G and B of an arm of revolute joints (and translating links, see
:mod:`~amm.symbolic.translating`) as sympy matrices in the
engine's coordinates (``theta1``, ``w1_1``…) with the same floating-frame formulation as
:mod:`core.dynamics.flexible_body`, body by body::

    M(q) = Σ_b J_bᵀ M_b(δ) J_b,     C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k

so Ṁ − 2C is skew by construction. ∂M/∂q_k is differentiated through the (small) body
Jacobians and body mass matrices, Σ_b (Xᵀ + X + J_bᵀ ∂M_b/∂q_k J_b) with X = J_bᵀ M_b ∂J_b/∂q_k,
not through the assembled M (docs/SYMBOLIC.md; docs/MODEL.md, Dynamics).

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

Rooms
-----
:mod:`~amm.symbolic.equations`
    :class:`SymbolicEOM` and :func:`derive`.
:mod:`~amm.symbolic.parameters`
    the named parameters, modal constants and link integrals.
:mod:`~amm.symbolic.planar`, :mod:`~amm.symbolic.spatial`
    the bodies of a planar arm, and of a spatial (DH) arm: links bending in one or two planes,
    the exact tip rotation through the entire functions of :mod:`~amm.symbolic.tip_rotation`, ∂J/∂q
    carried forward through the chain. A prismatic joint with a translating flexible link (frozen
    or length-following shapes) is derived there too (closed form of a spatial arm).
:mod:`~amm.symbolic.translating`
    the translating link's body mass matrix, its kinetic energy integrated from first principles
    (η-integrals of the shapes as named constants ``ta``, ``tN``, ``tP``…; K(l) ∝ 1/l³).
:mod:`~amm.symbolic.following`
    the η-integrals of shapes that follow the free length (``shape="beta-ode"``) as functions of
    it, ``ta3_1(d3)``, their l-derivatives where the energies are differentiated, bound by
    :meth:`SymbolicEOM.to_numeric` to the engine's series (:mod:`shapes.following_series`).
:mod:`~amm.symbolic.lagrange`
    the sums over the bodies and Lagrange's equations of them: ∂M/∂q, h = C q̇, C.
:mod:`~amm.symbolic.recursive`
    the recursive form of a planar arm (``form="recursive"``, the default above three links):
    Newton–Euler link by link in named intermediate symbols, so the expressions grow about
    linearly with the links; :meth:`SymbolicEOM.expand` gives the closed form.
:mod:`~amm.symbolic.articulated`
    the generated articulated-body forward dynamics of the recursive form (no M assembled).
:mod:`~amm.symbolic.store`
    the derivation cache keyed by the arm, options, version and sources
    (``$FLEXLINK_SYMBOLIC_CACHE``; ``flexlink cache clear``).
:mod:`~amm.symbolic.codegen`, :mod:`~amm.symbolic.printing`, :mod:`~amm.symbolic.numeric`
    the generated code (Python functions, a standalone numpy module, a cached numba module) and the
    :class:`SymbolicModel` that evaluates it.

Limits: Coulomb friction is evaluated numerically by :meth:`SymbolicEOM.to_numeric` (the smooth
model of the engine); modal structural damping enters D as numbers (it needs an
eigendecomposition).
"""

from amm.symbolic.equations import SymbolicEOM, derive
from amm.symbolic.numeric import SymbolicModel
from amm.symbolic.tip_rotation import stumpff

__all__ = ["SymbolicEOM", "SymbolicModel", "derive", "stumpff"]
