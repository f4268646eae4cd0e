"""The multibody engine shared by both backends.

:mod:`~core.dynamics.model` (the ``Model`` interface and what follows from its primitives),
:mod:`~core.dynamics.basis` (the seam: what a backend hands the engine per flexible link),
:mod:`~core.dynamics.flexible_body` and :mod:`~core.dynamics.kinematics` (bodies and frames),
:mod:`~core.dynamics.engine` (``ChainModel``), the compiled kernels
(:mod:`~core.dynamics.compiled`) and the solvers that run on them.
"""
