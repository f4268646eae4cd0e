"""Compiled recursive dynamics of a serial chain of rigid and flexible bodies (numba).

The same mechanics as :mod:`core.dynamics.engine` (frames of :mod:`core.dynamics.kinematics`,
inertia of :mod:`core.dynamics.flexible_body`), written as O(n) recursions over flat arrays and
compiled with numba (compiled once per machine and cached in the flexlink cache folder,
:mod:`core.cache`, ~10–20 s; later processes load it in ~0.3 s). Pure-numpy recursions cannot
be fast on small arms: every 3×3 or 6×6 numpy call costs ~1 µs of dispatch, and a 15-DOF arm
needs hundreds of them.

The package, in the order of a call:

* :mod:`~.packing` — :func:`compile_chain` packs a ChainModel into one record per link (its
  fields defined once, in :mod:`~.layout`) and one float buffer; :class:`CompiledChain` runs
  the kernels on them.
* :mod:`~.kinematics` — one complex pass at q + ih q̇: joint maps ν_i = A_i ν_{i−1} + S_i u_i,
  twists, tip maps, and every J̇_i q̇ as the imaginary part of the twist (no derivative code).
* :mod:`~.bodies` — each body's inertia (constant, or M_b(δ) in its own axes) and its
  Boltzmann–Hamel forces Ṁ_b ν + g(ν, M_b ν) − (0, 0, ∂T/∂δ).
* :mod:`~.algorithms` — composite bodies for M, recursive Newton–Euler for M q̈ + h + G
  (gravity as a base acceleration), the articulated-body algorithm for q̈, and a simulation's
  right-hand side with its Jacobian in one call.
* :mod:`~.series` — the right-hand side of a tabulated linear system (the flexible coordinates
  under prescribed joints, :mod:`core.analysis.prescribed`) read from its Chebyshev table.
* :mod:`~.linalg` (small dense kernels), :mod:`~.jit` (the cached ``njit`` decorator).

The decoupled natural orthogonal complement of Mohan & Saha (DeNOC) gives the same recursions
for flexible chains; docs/MODEL.md, Dynamics states the equations they evaluate.
"""

from core.dynamics.compiled.algorithms import forward, inverse, mass, rates, rates_jacobian
from core.dynamics.compiled.layout import LINK
from core.dynamics.compiled.packing import CompiledChain, compile_chain

__all__ = [
    "LINK",
    "CompiledChain",
    "compile_chain",
    "forward",
    "inverse",
    "mass",
    "rates",
    "rates_jacobian",
]
