"""The derivation cache: derived equations and their generated code, keyed by the arm.

A derivation is stored under :func:`folder` (``$FLEXLINK_SYMBOLIC_CACHE`` if set, else the
``symbolic`` folder of :mod:`core.cache`: ``$FLEXLINK_CACHE_DIR``, else the user cache folder
``~/.cache/flexlink``), one subfolder ``eom-<key>`` per derivation. The key (:func:`key`) hashes the
arm (its full ``repr``: every joint, link, payload and gravity number), the options of
:func:`~amm.symbolic.derive` (shape, modes, shapes, constants, symbols, form), the package
version and the sources the derivation runs (``amm/symbolic``, ``amm/model.py``, ``shapes``, the
arm and basis modules of ``core``) with the Python and sympy versions: an edit or an upgrade
gives a new key, so a stale entry is never used (old entries are pruned after
``core.cache.STALE_DAYS`` unused days). Entries are written atomically (a concurrent process sees
a whole file or none); an unreadable entry is derived again. Deleting the folder (or
``flexlink cache clear``) removes them all.

Stored: the sympy matrices and the named intermediates (``eom.pkl``), and the generated source and
compiled bytecode of the numeric model's functions (``numeric-*.py``, ``numeric-*.marshal``), so a
later process neither derives, nor prints, nor compiles.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import warnings
from pathlib import Path

import sympy as sp

#: The environment variable that moves the derivation cache (else ``core.cache``'s folder).
ENVIRONMENT = "FLEXLINK_SYMBOLIC_CACHE"

#: Counters of this process: derivations made, loaded from the cache, and stored.
COUNTERS = {"derived": 0, "loaded": 0, "stored": 0, "numeric_loaded": 0}


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("flexlink")
    except metadata.PackageNotFoundError:
        return "unknown"


def _sources() -> list[Path]:
    here = Path(__file__).resolve().parent
    root = here.parent.parent
    paths = [*sorted(here.glob("*.py")), root / "amm" / "model.py"]
    paths += sorted((root / "shapes").glob("*.py")) + sorted((root / "core" / "arm").glob("*.py"))
    paths += [root / "core" / "dynamics" / "basis.py"]
    return [p for p in paths if p.exists()]


def key(arm, options: dict) -> str:
    """The stable hash of a derivation: the arm, the options, the package version and sources."""
    digest = hashlib.sha256()
    for part in (repr(arm), repr(sorted(options.items(), key=lambda kv: kv[0])), _version(), sp.__version__):
        digest.update(part.encode() + b"\0")
    for path in _sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.version.encode())
    return digest.hexdigest()[:24]


def root() -> Path | None:
    """The cache folder of derivations (None, with one warning of :mod:`core.cache`, if none can be
    written)."""
    override = os.environ.get(ENVIRONMENT)
    if override:
        path = Path(override)
        try:
            path.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()
        except OSError as error:
            warnings.warn(
                f"{ENVIRONMENT}={override} is not writable ({error}); derivations are not cached",
                stacklevel=3,
            )
            return None
        return path
    from core import cache

    return cache.folder("symbolic")


def folder(name: str) -> Path | None:
    """The writable subfolder ``name`` of :func:`root` (created), or None."""
    base = root()
    if base is None:
        return None
    if os.environ.get(ENVIRONMENT):
        path = base / name
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)
        return path
    from core import cache

    return cache.folder("symbolic", name)


def write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def load(path: Path):
    """The pickled object at ``path``, or None (missing, or unreadable: derived again)."""
    try:
        return pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None


def save(path: Path, value) -> None:
    write(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def location() -> Path:
    """The folder :func:`clear` empties (not created): ``$FLEXLINK_SYMBOLIC_CACHE``, else
    ``core.cache.root()/symbolic``."""
    override = os.environ.get(ENVIRONMENT)
    if override:
        return Path(override)
    from core import cache

    return cache.root() / "symbolic"


def clear() -> int:
    """Delete every entry (derivations, generated and compiled modules) of :func:`location`;
    returns how many folders were removed."""
    import shutil

    base = location()
    removed = 0
    if base.is_dir():
        for entry in base.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
    return removed
