"""One helper per numerical method: derivatives (complex step, central differences),
quadrature, rotations, and every input check with its message (:mod:`~core.numerics.validation`)."""
