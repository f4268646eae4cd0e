"""Beam finite-element backend (filled by the FEM issue).

Euler–Bernoulli Hermite elements, meshes, assembly and boundary conditions,
supplying element basis data to the shared engine in :mod:`core`. Nothing is
implemented here yet.
"""
