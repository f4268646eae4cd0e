"""The decorator of every compiled kernel: numba's ``njit``, its machine code cached in the
flexlink cache folder (:mod:`core.cache`).

The kernels of this package call each other across modules and compile the helpers and
constants of :mod:`core.numerics.rotations` (the Rodrigues ratios, ``SERIES_THRESHOLD``) and
:mod:`core.numerics.derivatives` (``COMPLEX_STEP``). numba's own index checks only the source
file of each function, so the cache folder is keyed on all of them (:data:`SOURCES`): an edit to
any gives a fresh folder. Without a writable cache folder (:func:`core.cache.folder` warns once)
the kernels compile in every process instead of failing.

A constant argument a kernel passes to another (``True``, ``0``, ``6``) reaches it as a literal
type, and numba compiles the callee, with everything it calls, once per literal value: the
bodies' whole inertia code twice for ``want_force`` True and False (measured: 70 → 62
specializations and about a fifth of a first run's compilation). Callers therefore pass such
flags and offsets as ``bool(True)``, ``int(6)``: typed as plain bool and int64, one compilation.
"""

from __future__ import annotations

from pathlib import Path

import numba
from numba import njit

from core import cache
from core.numerics import derivatives, rotations

#: Every source file the kernels are compiled from: this package's modules and the helper modules
#: whose functions or constants they compile (tests/test_cache.py checks it against the imports).
SOURCES = (
    *sorted(Path(__file__).parent.glob("*.py")),
    Path(rotations.__file__),
    Path(derivatives.__file__),
)

#: The kernels' cache folder, keyed on :data:`SOURCES` and numba's version; None: no cache.
FOLDER = cache.folder("kernels", cache.key(SOURCES, numba.__version__))


def kernel(function=None, **options):
    """``njit(**options)`` of ``function``, cached in :data:`FOLDER` (``@kernel`` or
    ``@kernel(inline="always")``).

    numba places a function's cache through ``numba.config.CACHE_DIR`` when caching is enabled
    (its ``UserProvidedCacheLocator``, which also keys the index on the function's source file);
    the setting is ours only for that moment, so other numba code in the process keeps its own.
    """

    def decorate(function):
        dispatcher = njit(**options)(function)
        if FOLDER is not None:
            saved = numba.config.CACHE_DIR
            numba.config.CACHE_DIR = str(FOLDER)
            try:
                dispatcher.enable_caching()
            finally:
                numba.config.CACHE_DIR = saved
        return dispatcher

    return decorate if function is None else decorate(function)
