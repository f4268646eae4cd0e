"""Assumed-modes backend (filled by the engine issue).

Builds each flexible link's basis from :mod:`shapes` (global eigenfunctions),
generates symbolic equations of motion, and tracks the roots β of translating
links. Nothing is implemented here yet; see docs/ARCHITECTURE.md once the
engine lands.
"""
