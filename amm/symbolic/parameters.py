"""The named symbols of a derivation: physical parameters, modal constants and link integrals.

Every scalar of the arm enters the equations either as a named symbol (its number kept aside,
its meaning written for the LaTeX) or as a number (docs/SYMBOLIC.md, parameters and modal
constants); a zero drops its terms. The planar and the spatial derivations take the same
constants of a flexible link from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from amm.symbolic.following import LengthIntegral
from core.arm import Arm
from core.dynamics.basis import dense


class Parameters:
    """Named symbols with their numbers, or plain numbers.

    Parameters
    ----------
    symbols : bool
        Physical parameters as named symbols (else numbers).
    modal : bool
        Modal constants as named symbols (else numbers).
    """

    def __init__(self, symbols: bool, modal: bool) -> None:
        self.symbols = symbols
        self.modal = modal
        self.values: dict = {}
        self.definitions: dict = {}
        #: The l-dependent modal integrals of length-following shapes: function name → (link
        #: number, integral key of ``LengthFollowing.taylor``, index) (:mod:`amm.symbolic.following`).
        self.functions: dict = {}

    def __call__(
        self, name: str, value: float, definition: str, named: bool | None = None, math: bool = False
    ):
        """The parameter ``name`` of number ``value``: zero, a float, or a symbol defined by
        ``definition`` (text, or LaTeX math with ``math=True``)."""
        value = float(value)
        if value == 0.0:
            return sp.S.Zero
        if not (self.symbols if named is None else named):
            return sp.Float(value, 17)
        symbol = sp.Symbol(name, real=True)
        self.values[symbol] = value
        self.definitions[symbol] = definition if math else f"\\text{{{definition}}}"
        return symbol

    def constant(self, name: str, value: float, definition: str):
        """A modal constant (LaTeX ``definition``); ",k}" in it stands for the mode number, the
        name's last index."""
        definition = definition.replace(",k}", f",{name.rsplit('_', 1)[1]}}}")
        return self(name, value, definition, named=self.modal, math=True)

    def length_function(self, name: str, l, where: tuple, definition: str):
        """The modal integral ``name`` of a length-following basis as the function ``name(l)`` of
        the free length symbol ``l``; ``where`` = (link number, integral key, index) binds it
        (:mod:`amm.symbolic.following`), ``definition`` is its LaTeX."""
        applied = LengthIntegral.of(name, l)
        self.functions[name] = where
        self.definitions[applied] = definition
        return applied

    def constants(self, name: str, values, definition: str) -> sp.Matrix:
        """The column of modal constants ``{name}_{k}`` of ``values`` (k from 1)."""
        return sp.Matrix(
            [self.constant(f"{name}_{k + 1}", value, definition) for k, value in enumerate(values)]
        )

    def gravity(self, arm: Arm, axes: str) -> sp.Matrix:
        """The gravity vector along the base ``axes`` ("xy" or "xyz")."""
        return sp.Matrix(
            [
                self(f"g{axis}", arm.gravity[k], f"gravity along base ${axis}$ [m/s$^2$]")
                for k, axis in enumerate(axes)
            ]
        )


@dataclass(frozen=True)
class LinkIntegrals:
    """Constants of flexible link i over its mass (beam and lumped masses), in beam-frame axes.

    Attributes
    ----------
    rho, EI, L
        ρA, EI and the length of the link.
    mass
        ρA L + Σ m_j.
    first_x, second_x
        ∫s dm = ρA L²/2 + Σ m_j s_j and ∫s² dm = ρA L³/3 + Σ m_j s_j².
    A, c
        ∫φ dm = ρA a + Σ m_j φ(s_j) and ∫sφ dm = ρA b + Σ m_j s_j φ(s_j), columns of m.
    N, rotary
        ∫φφᵀ dm = ρA N + Σ m_j φφᵀ(s_j) and Σ J_j φ'φ'ᵀ(s_j), m × m.
    slope
        Σ J_j φ'(s_j), the rotary inertia's coupling to the joint rate.
    J_sum
        Σ J_j.
    K
        ∫φ''φ''ᵀ ds (the stiffness per EI).
    tip, tip_slope
        φ(L) and φ'(L).
    """

    rho: object
    EI: object
    L: object
    mass: object
    first_x: object
    second_x: object
    A: sp.Matrix
    c: sp.Matrix
    N: sp.Matrix
    rotary: sp.Matrix
    slope: sp.Matrix
    J_sum: object
    K: sp.Matrix
    tip: sp.Matrix
    tip_slope: sp.Matrix


def link_integrals(P: Parameters, number: int, link, basis, L, EI_text: str) -> LinkIntegrals:
    """The :class:`LinkIntegrals` of flexible link ``number`` of length ``L`` (its modal constants named
    ``a{i}_{k}``, ``b{i}_{k}``, ``N{i}_{kl}``, ``k{i}_{kl}``, ``phiL{i}_{k}``, ``dphiL{i}_{k}``
    and those of its lumped masses, docs/SYMBOLIC.md)."""
    m = basis.n
    mass_matrix, stiffness = dense(basis.mass), dense(basis.stiffness)
    rho = P(f"rhoA{number}", link.mass_per_length, f"mass per length of link {number} [kg/m]")
    EI = P(f"EI{number}", link.EI, EI_text)
    tag = f"\\phi_{{{number},k}}"  # k: the mode number in the symbol's name
    a = P.constants(f"a{number}", basis.first, f"\\int_0^L {tag}\\,ds")
    b = P.constants(f"b{number}", basis.moment, f"\\int_0^L s{tag}\\,ds")
    N = _products(P, f"N{number}", number, mass_matrix, "")
    Kc = _products(P, f"k{number}", number, stiffness, "''")
    tip = P.constants(f"phiL{number}", basis.tip_value, f"{tag}(L)")
    tip_slope = P.constants(f"dphiL{number}", basis.tip_slope, f"{tag}'(L)")
    first_x, second_x = rho * L**2 / 2, rho * L**3 / 3
    A, c, Nm = rho * a, rho * b, rho * N
    rotary, slope = sp.zeros(m, m), sp.zeros(m, 1)
    mass, J_sum = rho * L, sp.S.Zero
    for s, mj, Jj, phi, dphi in _lumped_masses(P, number, link, basis):
        first_x += mj * s
        second_x += mj * s**2
        A += mj * phi
        c += mj * s * phi
        Nm += mj * phi * phi.T
        rotary += Jj * dphi * dphi.T
        slope += Jj * dphi
        mass += mj
        J_sum += Jj
    return LinkIntegrals(
        rho, EI, L, mass, first_x, second_x, A, c, Nm, rotary, slope, J_sum, Kc, tip, tip_slope
    )


def _lumped_masses(P: Parameters, number: int, link, basis):
    """(s_j, m_j, J_j, φ(s_j), φ'(s_j)) of each lumped mass on flexible link ``number``."""
    if not link.lumped_masses:
        return
    values, slopes = basis.evaluate(np.array([lm.position for lm in link.lumped_masses], dtype=float))
    tag = f"\\phi_{{{number},k}}"
    for j, lumped in enumerate(link.lumped_masses, start=1):
        s = P(f"s{number}{j}", lumped.position, f"position of lumped mass {j} on link {number} [m]")
        mj = P(f"m{number}{j}", lumped.mass, f"lumped mass {j} on link {number} [kg]")
        Jj = P(f"J{number}{j}", lumped.inertia, f"rotary inertia of lumped mass {j} [kg m$^2$]")
        phi = P.constants(f"phi{number}{j}", values[:, j - 1], f"{tag}(s_{{{number}{j}}})")
        dphi = P.constants(f"dphi{number}{j}", slopes[:, j - 1], f"{tag}'(s_{{{number}{j}}})")
        yield s, mj, Jj, phi, dphi


def root_slopes(P: Parameters, number: int, basis) -> sp.Matrix:
    """φ'(0) of flexible link ``number`` (``dphi0{i}_{k}``): a pinned frame's hub turns with it."""
    return P.constants(f"dphi0{number}", basis.root_slope, f"\\phi_{{{number},k}}'(0)")


def damping_block(engine, number: int, link, mass: sp.Matrix, stiffness: sp.Matrix):
    """D of flexible link ``number``'s coordinates: α M + β K (Rayleigh, on the given blocks) or
    the engine's numbers for modal ratios (they need the eigenvectors); None without damping."""
    damping = link.damping
    if damping is None:
        return None
    if damping.kind == "rayleigh":
        return damping.alpha * mass + damping.beta * stiffness
    block = engine.damping_matrix(engine.home())[engine.flex_columns[number], engine.flex_columns[number]]
    return sp.Matrix(block.tolist())


def payloads(arm: Arm, number: int) -> list[tuple[str, object]]:
    """(name suffix, payload) of the bodies at link ``number``'s tip: its own payload ("<i>")
    and, on the last link, the arm's ("")."""
    link = arm.links[number - 1]
    found = [(f"{number}", link.tip_payload)] if link.tip_payload is not None else []
    if number == arm.n_links and arm.payload is not None:
        found.append(("", arm.payload))
    return found


def _products(P: Parameters, name: str, number: int, values: np.ndarray, prime: str) -> sp.Matrix:
    """The symmetric m × m modal constants ``{name}_{r}{c}`` of ``values`` = ∫φ_r φ_c ds
    (``prime`` "") or ∫φ_r'' φ_c'' ds (``prime`` "''") of link ``number``."""
    m = values.shape[0]
    out = sp.zeros(m, m)
    for r in range(m):
        for c in range(r, m):
            phi_r, phi_c = (f"\\phi{prime}_{{{number},{k + 1}}}" for k in (r, c))
            entry = P.constant(f"{name}_{r + 1}{c + 1}", values[r, c], f"\\int_0^L {phi_r}{phi_c}\\,ds")
            out[r, c] = out[c, r] = entry
    return out
