"""Shared pytest configuration: hypothesis profiles.

``ci`` (the default) is derandomized with a fixed example budget so that every
run of the suite sees the same examples; ``dev`` explores more and randomly.
Select with ``HYPOTHESIS_PROFILE=dev pytest``.
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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
