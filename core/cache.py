"""One cache policy for what flexlink compiles or generates: where it lives, how it is keyed, and
what happens when nothing can be written.

**Where.** One folder per user, ``$FLEXLINK_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/flexlink``,
else ``~/.cache/flexlink`` (:func:`root`), with one subfolder per kind of content
(:func:`folder`): ``kernels`` for the machine code of the compiled dynamics
(:mod:`core.dynamics.compiled`), ``symbolic`` for the generated equations of motion
(:mod:`amm.symbolic`) and theirs. Nothing is ever written beside the installed package, so a
read-only install behaves as a writable one.

**Keyed on every source.** numba's own cache index checks only the source file of each compiled
function: a kernel that calls a helper in another module would keep its stale machine code
after the helper changed. So a kind's content goes into a subfolder named by :func:`key`, a hash
of the contents of every source file it is compiled from (and of the compiler's version): any
change anywhere gives a new subfolder. Each use marks its subfolder (its time stamp); a
subfolder of the same kind unused for ``STALE_DAYS`` is deleted, so that edits (or upgrades)
do not pile up machine code nobody loads.

**No usable folder.** If the folder cannot be created or written (an unwritable home, a
read-only ``FLEXLINK_CACHE_DIR``), :func:`folder` returns None and warns once per process
(:class:`CacheWarning`); the caller then works without a cache (the kernels compile in every
process, ~10–20 s), never fails for it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

#: The environment variable that moves the whole cache.
ENVIRONMENT = "FLEXLINK_CACHE_DIR"

#: Keyed subfolders unused for this many days are deleted (:func:`folder`).
STALE_DAYS = 30


class CacheWarning(UserWarning):
    """No writable cache folder: compiled or generated code is rebuilt in every process."""


def root() -> Path:
    """The cache folder: ``$FLEXLINK_CACHE_DIR``, else ``$XDG_CACHE_HOME/flexlink``, else
    ``~/.cache/flexlink`` (RuntimeError if there is no home to find)."""
    override = os.environ.get(ENVIRONMENT)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "flexlink" if base else Path.home() / ".cache" / "flexlink"


#: Whether this process has warned already (one warning, however many kinds or kernels ask).
_warned = False


def folder(kind: str, key: str | None = None) -> Path | None:
    """The writable folder for one kind of cached content, ``root()/kind`` (``root()/kind/key``
    with a ``key``), created if needed; None if it cannot be created or written, with one
    :class:`CacheWarning` per process (the caller then works without a cache)."""
    global _warned
    try:
        path = root() / kind
        if key is not None:
            path = path / key
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()  # writable, not just present
        if key is not None:
            os.utime(path)  # in use
    except (OSError, RuntimeError) as error:
        if not _warned:
            _warned = True
            warnings.warn(
                f"flexlink: no writable cache folder ({error}); compiled and generated code is "
                f"rebuilt in every process. Set {ENVIRONMENT} to a writable folder to keep it.",
                CacheWarning,
                stacklevel=2,
            )
        return None
    if key is not None:
        _prune(path.parent, keep=path)
    return path


def _prune(parent: Path, keep: Path) -> None:
    """Delete the keyed subfolders of ``parent`` other than ``keep`` unused for ``STALE_DAYS``
    (best effort: a folder another process is deleting, or cannot be deleted, is left)."""
    limit = time.time() - STALE_DAYS * 86400
    for other in parent.iterdir():
        try:
            if other != keep and other.is_dir() and other.stat().st_mtime < limit:
                shutil.rmtree(other)
        except OSError:
            continue


def key(paths: Iterable[Path], *versions: str) -> str:
    """A name for the content compiled from ``paths``: a hash of each file's name and bytes (in
    the given order), of the ``versions`` given (the compiler's) and of Python's version."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for version in (*versions, sys.version):
        digest.update(version.encode() + b"\0")
    return digest.hexdigest()[:20]
