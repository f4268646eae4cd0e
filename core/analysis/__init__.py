"""What runs on any :class:`~core.dynamics.model.Model`: mode shapes on a common grid
(:mod:`~core.analysis.modes`), simulation (:mod:`~core.analysis.simulation`) with its
controllers and trajectories, and linear analyses (:mod:`~core.analysis.linear`)."""
