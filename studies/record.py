"""What an output folder records, so that it can be trusted and reproduced.

* :func:`effective_config` / :func:`config_toml`: the configuration a run actually ran —
  ``--set`` overrides applied and the study kind's ``[analysis]`` defaults written out —
  as the folder's ``config.toml``; ``flexlink run <folder>/config.toml`` runs the same
  cases with the same settings.
* :func:`case_identity`: a stable hash of everything that determines a case's rows (the
  kind, the arm, the discretization, the analysis settings, the BLAS thread count, the
  versions of the numerical packages and the processor type). ``--resume`` reuses a finished case only when its
  recorded identity equals the identity the current config gives it.
* :func:`study_change`: what makes a folder's earlier cases meaningless for a config (a
  different study kind or arm); ``--resume`` refuses such a folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from core import cache
from studies.config import StudyConfig, build_arm
from studies.discretizations import Discretization

#: Packages whose versions enter every case identity: a case computed with other numerics
#: is run again on resume (round-off, not only bugs, changes between releases).
NUMERIC_PACKAGES = ("flexlink", "numpy", "scipy", "numba")


def _without_none(value: Any) -> Any:
    """``value`` with every None dropped from its tables (TOML has no null; a key left out
    takes its default, which is what None stood for)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def effective_config(config: StudyConfig) -> dict[str, Any]:
    """The config as run, as a TOML-ready dict: every section with its defaults written out,
    except where leaving a key out means something different from any value it could take
    (a preset's ``gravity`` and ``tip_rotation``, ``sweep.geometric_stiffening``: given, the
    result rows get a column); ``[analysis]`` with every setting of its kind explicit."""
    from studies.kinds import KINDS

    kind = KINDS[config.study.kind]
    analysis = kind.analysis_schema.model_validate(config.analysis)
    sweep = config.sweep.model_dump(mode="json")
    if "geometric_stiffening" not in config.sweep.model_fields_set:
        del sweep["geometric_stiffening"]
    data = {
        "study": config.study.model_dump(mode="json"),
        "arm": config.arm.model_dump(mode="json", exclude_unset=True),
        "sweep": sweep,
        "analysis": analysis.model_dump(mode="json"),
        "report": config.report.model_dump(mode="json"),
        "execution": config.execution.model_dump(mode="json"),
    }
    return _without_none(data)


def config_toml(config: StudyConfig, header: str = "") -> str:
    """:func:`effective_config` as TOML text, after ``header`` (comment lines)."""
    import tomli_w

    return header + tomli_w.dumps(effective_config(config))


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def package_version(package: str) -> str | None:
    """The installed version of ``package`` (None when it is not installed)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def numerics_versions() -> dict[str, Any]:
    """What the numbers of a case depend on besides its settings: the versions of
    :data:`NUMERIC_PACKAGES` and the processor as the compiled code sees it — the CPU numba
    compiles for (:func:`host_cpu`) and the kernels OpenBLAS picked (other kernels round
    differently, and an adaptive integrator turns that into other steps: up to 4e-5 relative
    between two CPU types). Cases computed on another machine type are run again on resume."""
    import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS, loaded to be listed)
    from threadpoolctl import threadpool_info

    blas = sorted({f"{i.get('internal_api')} {i.get('architecture')}" for i in threadpool_info()})
    machine = {"machine": platform.machine(), "cpu": host_cpu(), "blas": blas}
    return {package: package_version(package) for package in NUMERIC_PACKAGES} | machine


#: Where :func:`host_cpu` keeps its answer, under the cache folder (:func:`core.cache.root`).
HOST_CPU_FILE = Path("machine") / "cpu.json"


def host_cpu() -> str:
    """The processor as LLVM names it (``znver3``), which numba compiles for.

    Asking LLVM loads it: 0.03 CPU s and 37 MB resident (its relocations) in a run that may
    compile nothing (the quickstart's peak went from 196 to 159 MB without it). So the name
    is kept in :data:`HOST_CPU_FILE` with the key it was found under (:func:`_processor_key`:
    what LLVM reads to name the processor, and LLVM's version) and read from there while the
    key holds; asked again when it changes (another processor, another llvmlite), when there is
    no key (no ``/proc/cpuinfo``) and when the file cannot be read or written."""
    key = _processor_key()
    try:
        path = None if key is None else cache.root() / HOST_CPU_FILE
    except RuntimeError:  # no home to find the cache folder in
        path = None
    if path is not None:
        # a missing, unreadable or damaged file: LLVM is asked below (the same answer, slower)
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            kept = json.loads(path.read_text())
            if kept["key"] == key and isinstance(kept["cpu"], str):
                return kept["cpu"]
    from llvmlite import binding

    cpu = binding.get_host_cpu_name()
    if path is not None:
        # a cache folder that cannot be written: LLVM is asked again next run (no wrong answer)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps({"key": key, "cpu": cpu}))
            os.replace(partial, path)  # whole or not at all, for a process reading it meanwhile
    return cpu


def _processor_key() -> str | None:
    """A digest of what LLVM names the host processor by — its vendor, family, model and
    features (from ``cpuid``; the kernel lists them, less those the system does not enable, as
    LLVM also leaves those out) — as the first processor's entry of ``/proc/cpuinfo`` gives
    them, without its clock (``cpu MHz``, which changes while the machine runs); with the
    machine type and llvmlite's version (LLVM's names change between releases). None where
    there is no ``/proc/cpuinfo``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as listing:
            entry = []
            for line in listing:
                if not line.strip():
                    break  # the first processor's entry ends at the first empty line
                if not line.startswith("cpu MHz"):
                    entry.append(line)
    except OSError:
        return None
    if not entry:
        return None
    return _digest([platform.machine(), package_version("llvmlite"), "".join(entry)])


def case_identity(
    kind: str,
    arm: dict[str, Any],
    discretization: Discretization,
    analysis: dict[str, Any],
    blas_threads: int,
    versions: dict[str, Any] | None = None,
) -> dict[str, str]:
    """The identity of a case: one digest per part (``kind``, ``arm``, ``discretization``,
    ``analysis``, ``numerics``: the BLAS threads, package versions and processor) and ``case``, the
    digest of them all. The case number is not part of it (a case keeps its identity when
    the sweep around it changes). ``arm`` is :meth:`core.arm.Arm.to_dict` and ``analysis``
    the validated analysis settings dumped to JSON types, so equal settings written
    differently (a default given or left out, ``1`` or ``1.0``) have one identity."""
    versions = numerics_versions() if versions is None else versions
    parts = {
        "kind": _digest(kind),
        "arm": _digest(arm),
        "discretization": _digest(discretization.columns()),
        "analysis": _digest(analysis),
        "numerics": _digest({"blas_threads": blas_threads, **versions}),
    }
    return {**parts, "case": _digest(parts)}


def _first_difference(old: Any, new: Any, path: str) -> str | None:
    """The first key path where two JSON-like values differ, with both values."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                return f"{where} {'added' if key not in old else 'removed'}"
            found = _first_difference(old[key], new[key], where)
            if found:
                return found
        return None
    if isinstance(old, list | tuple) and isinstance(new, list | tuple):
        if len(old) != len(new):
            return f"{path}: {len(old)} entries before, {len(new)} now"
        for index, (a, b) in enumerate(zip(old, new, strict=True), start=1):
            found = _first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if old == new else f"{path}: {old!r} before, {new!r} now"


def study_change(earlier: StudyConfig, now: StudyConfig) -> str | None:
    """What makes the cases of a run of ``earlier`` meaningless for ``now`` (None: nothing):
    another study kind, or another arm (compared as built, so a preset and the same arm
    written out inline are one arm)."""
    if earlier.study.kind != now.study.kind:
        return f"study.kind: {earlier.study.kind!r} before, {now.study.kind!r} now"
    difference = _first_difference(build_arm(earlier.arm).to_dict(), build_arm(now.arm).to_dict(), "arm")
    return difference
