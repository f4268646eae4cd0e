"""Shared pytest configuration: hypothesis profiles.

``ci`` (the default) is derandomized with a fixed example budget so that every
run of the suite sees the same examples; ``dev`` explores more and randomly.
Select with ``HYPOTHESIS_PROFILE=dev pytest``.

Derandomized alone is not reproducible: hypothesis also draws literal constants of every local
module loaded so far (its "local constants"), so a test's examples would depend on which of our
modules its xdist worker happened to import first, on generated modules (the symbolic code,
imported from the cache folder), and on any literal edited anywhere. Under ``ci`` that pool is
kept empty (:func:`without_local_constants`), so the examples depend on the test alone; ``dev``
keeps it.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None, print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def without_local_constants() -> None:
    """Keep hypothesis's pool of local constants empty (module docstring). The pool is
    hypothesis-internal (``providers._get_local_constants``, read afresh whenever
    ``sys.modules`` grows), with no public switch; ``tests/test_hypothesis_setup.py`` checks that
    the switch holds."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    empty = Constants()
    providers._get_local_constants = lambda: empty


if PROFILE == "ci":
    without_local_constants()
