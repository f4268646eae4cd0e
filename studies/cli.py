"""The ``flexlink`` command line.

    flexlink run CONFIG [--output DIR] [--resume] [--workers N] [--force] [--set KEY=VALUE ...]
    flexlink run --example NAME
    flexlink verify CONFIG [--output DIR] [--workers N]
    flexlink show CONFIG
    flexlink init EXAMPLE [FILE]
    flexlink schema [--kind KIND]
    flexlink presets
    flexlink --version

Exit codes: 0 success; 1 some cases failed; 2 a mistake in the command or
config (one line on stderr, no traceback); 130 stopped by Ctrl-C (SIGINT) and 143
by SIGTERM, finished cases kept on disk in both.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
from importlib import metadata, resources
from pathlib import Path
from typing import NoReturn

from studies.errors import ConfigError
from studies.text import shown

# The numerical packages (numpy, scipy, pandas, pydantic, numba: ~1.5 s of imports) load
# in the commands that need them, so `flexlink --help`, `init` and mistakes on the
# command line answer at once.

EXAMPLES_PACKAGE = "studies.configs"


def examples() -> dict[str, Path]:
    """Shipped example configs by name."""
    folder = resources.files(EXAMPLES_PACKAGE)
    return {Path(item.name).stem: Path(str(item)) for item in folder.iterdir() if item.name.endswith(".toml")}


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line refusals of every other mistake: ``flexlink: error: …``
    (exit 2); the usage stays on ``--help``."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("flexlink").strip()
        hint = f"flexlink {command} --help" if command else "flexlink --help"
        raise ConfigError(f"{message} (see {hint})")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="flexlink", description="Flexible-link robot arm studies.")
    parser.add_argument("--version", action="version", version=f"flexlink {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a study")
    run.add_argument("config", nargs="?", help="study TOML file")
    run.add_argument("--example", help=f"run a shipped example ({', '.join(sorted(examples()))})")
    run.add_argument("--output", type=Path, help="output folder (default: flexlink-output/<study name>)")
    run.add_argument(
        "--resume", action="store_true", help="skip cases an earlier run of this folder finished"
    )
    run.add_argument("--workers", type=int, help="worker processes (overrides [execution] workers)")
    run.add_argument(
        "--force", action="store_true", help="run cases above the study kind's coordinate limit anyway"
    )
    verify = commands.add_parser("verify", help="randomized property checks of the config's models")
    verify.add_argument("config")
    verify.add_argument("--output", type=Path)
    verify.add_argument("--workers", type=int)
    verify.add_argument("--force", action="store_true")
    init = commands.add_parser("init", help="copy a shipped example config to edit")
    init.add_argument("example", help=f"one of: {', '.join(sorted(examples()))}")
    init.add_argument(
        "destination", nargs="?", type=Path, help="file to write (default: <example>.toml here)"
    )
    schema = commands.add_parser("schema", help="print the JSON schema of study configs")
    schema.add_argument("--kind", help="the [analysis] schema of one study kind instead")
    show = commands.add_parser("show", help="validate a config and list its cases without running")
    show.add_argument("config")
    show.add_argument("--force", action="store_true", help="accept cases above the size limit")
    for command in (run, verify, show):
        command.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a config value, e.g. --set analysis.t_end=0.5 (VALUE in TOML syntax; repeatable)",
        )
    commands.add_parser("presets", help="list the reference arms")
    cache = commands.add_parser("cache", help="the cache of derived equations (amm.symbolic)")
    cache.add_argument("action", choices=["clear", "where"], help="delete its entries, or print its folder")
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM: the run stops like Ctrl-C (finished cases stay on disk, workers end), and
    exits 143 (128 + SIGTERM) instead of Ctrl-C's 130."""


def _terminate(signum, frame) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv``, by default this process's own command line (``sys.argv``, as
    the ``flexlink`` entry point and ``python -m studies.cli`` call it); returns the exit code.
    Without ``argv`` the command is the whole process, and keeps the garbage collector off the
    objects that live as long as it (:func:`_outlive_collections`)."""
    parser = _parser()
    handler = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if handler else None
    try:
        return _dispatch(parser, parser.parse_args(argv), whole_process=argv is None)
    except ConfigError as error:
        print(f"flexlink: error: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(f"flexlink: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`flexlink show cfg | head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        what = "terminated (SIGTERM)" if terminated else "interrupted"
        print(f"flexlink: {what}; finished cases are on disk (use --resume)", file=sys.stderr)
        return 128 + signal.SIGTERM if terminated else 128 + signal.SIGINT
    finally:
        if handler:
            signal.signal(signal.SIGTERM, previous)
        if argv is None:
            _outlive_collections()  # the process ends: its last collection need not look at it all


def _outlive_collections() -> None:
    """Move every object the garbage collector tracks now out of its reach for good
    (``gc.freeze``): called once a run's imports are in (some 66,000 objects: modules, classes,
    functions, alive until the process ends) and again when the command is done. The run's full
    collections then skip them (the quickstart's one after its imports: 38 → 14 ms), and so does
    the interpreter's collection at exit, which finds the whole module graph garbage and frees it
    object by object: 0.2–0.3 CPU s of the quickstart's, 0.03 s with everything frozen (the
    memory goes back with the process; every file the run writes is closed before). The
    quickstart took 0.3 CPU s less (2.81 → 2.50 s, median of 12). Only where the command is the
    whole process (:func:`main` without ``argv``): in a caller's process (a test calling
    ``main``), garbage waiting for its collection would be frozen with them, never to be freed."""
    gc.freeze()


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, whole_process: bool = False) -> int:
    if args.command == "init":
        return _init(args.example, args.destination)
    if args.command == "schema":
        return _schema(args.kind)
    if args.command == "presets":
        from core.arm.presets import PRESETS

        for name, factory in PRESETS.items():
            print(f"{name:22s} {(factory.__doc__ or '').strip().splitlines()[0]}")
        return 0
    if args.command == "cache":
        from amm.symbolic import store

        if args.action == "clear":
            print(f"removed {store.clear()} entries from {store.location()}")
        else:
            print(store.location())
        return 0
    if args.command == "run":
        if (args.config is None) == (args.example is None):
            raise ConfigError(
                "run needs a CONFIG file or --example NAME, one of them (see flexlink run --help)"
            )
        if args.example is not None:
            available = examples()
            if args.example not in available:
                raise ConfigError(
                    f"--example: unknown example {args.example!r}; choose one of {sorted(available)}"
                )
            path = available[args.example]
        else:
            path = Path(args.config)
    else:
        path = Path(args.config)
    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise ConfigError(f"--workers: must be >= 1, got {args.workers}")
    if getattr(args, "output", None) is not None:
        _check_output(args.output)
    from studies.config import expand_cases, load_config
    from studies.text import counted, pipe_table

    overrides = list(getattr(args, "set", []) or [])
    if getattr(args, "workers", None) == 1:  # valid with any executor, e.g. a --set serial one
        overrides.append("execution.workers=1")
    config = load_config(path, overrides=overrides)
    if getattr(args, "workers", None) not in (None, 1) and config.execution.executor == "serial":
        raise ConfigError(
            f"--workers: {args.workers} workers need [execution] executor = 'processes' or 'dask' "
            "(the serial executor runs one case at a time)"
        )
    _check_sizes(config, force=args.force)
    from studies.config import check_limits

    check_limits(config, force=args.force, workers=getattr(args, "workers", None))
    if args.command == "show":
        cases = expand_cases(config)
        print(
            f"{config.study.name}: kind {config.study.kind}, {counted(len(cases), 'case')}, executor {config.execution.executor}"
        )
        rows = [
            ["" if value is None else value for value in case.columns().values()]
            + [case.discretization.label]
            for case in cases
        ]
        print(pipe_table((*cases[0].columns(), "discretization"), rows))
        return 0
    if args.command == "verify":
        config = config.model_copy(
            update={
                "study": config.study.model_copy(
                    update={"kind": "verify", "name": f"{config.study.name}-verify"}
                ),
                "analysis": {},
            }
        )
    from studies.runner import run_study
    from studies.text import counted, warned_by

    if whole_process:
        _outlive_collections()
    result = run_study(
        config,
        output=args.output,
        resume=getattr(args, "resume", False),
        workers=args.workers,
        source=path,
        progress=sys.stderr.isatty(),
        overrides=args.set,
    )
    for note in result.notes:
        print(note)
    print(
        f"{result.succeeded}/{counted(result.cases, 'case')} succeeded ({result.resumed} resumed) in {result.wall_time:.1f} s"
    )
    print(f"results: {result.folder}")
    summary = result.folder / "summary.md"
    if summary.exists():
        print(f"summary: {summary}")
    for text, numbers in result.warnings.items():
        print(f"warning ({warned_by(numbers)}): {text}", file=sys.stderr)
    for failure in result.failed:
        print(f"case {failure['case']} failed: {failure['error']}", file=sys.stderr)
    return 0 if result.ok else 1


def _init(example: str, destination: Path | None) -> int:
    """Copy a shipped example to ``destination`` (never over an existing file)."""
    available = examples()
    if example not in available:
        raise ConfigError(f"init: unknown example {example!r}; choose one of {sorted(available)}")
    destination = Path(f"{example}.toml") if destination is None else destination
    if destination.exists():
        raise ConfigError(f"init: {str(destination)!r} exists; choose another destination")
    try:
        destination.write_text(available[example].read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"init: cannot write {str(destination)!r} ({error.strerror})") from None
    print(f"wrote {destination}; run it with: flexlink run {destination}")
    return 0


def _schema(kind: str | None) -> int:
    """Print the JSON schema of the config, or of one kind's [analysis] table."""
    import json

    from studies.config import config_schema
    from studies.kinds import KINDS

    if kind is None:
        schema = config_schema().model_json_schema()
    elif kind in KINDS:
        schema = KINDS[kind].analysis_schema.model_json_schema()
    else:
        raise ConfigError(f"--kind: must be one of {sorted(KINDS)}, got {kind!r}")
    print(json.dumps(schema, indent=1))
    return 0


def _check_output(folder: Path) -> None:
    """Refuse an --output that is a file, too long a path, or cannot be created, before
    anything runs."""
    name_max, path_max = _limits(folder)
    long = next((part for part in folder.parts if len(os.fsencode(part)) > name_max), None)
    if long is not None:
        raise ConfigError(
            f"--output: the folder name {shown(long)} has {len(os.fsencode(long))} bytes, "
            f"more than the {name_max} this file system allows"
        )
    if len(os.fsencode(folder.absolute())) + len("/cases/superseded/") + 80 > path_max:
        raise ConfigError(
            f"--output: {shown(str(folder))} is too long a path for the files a run writes inside it "
            f"(at most {path_max - 100} bytes here)"
        )
    try:
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"--output: {str(folder)!r} is a file, not a folder")
        existing = folder
        while not existing.exists():
            existing = existing.parent
    except OSError as error:
        raise ConfigError(f"--output: cannot use {shown(str(folder))}: {error.strerror}") from None
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"--output: cannot create or write {str(folder)!r} (no write permission in {str(existing)!r})"
        )
    # Permissions are not the whole story (read-only mounts, /proc): try to create it, then
    # leave the disk as it was (the run creates it again).
    created = []
    try:
        for path in [*reversed(folder.parents), folder]:
            if not path.exists():
                path.mkdir()
                created.append(path)
    except OSError as error:
        raise ConfigError(f"--output: cannot create {str(folder)!r}: {error.strerror}") from None
    finally:
        for path in reversed(created):
            path.rmdir()


def _limits(folder: Path) -> tuple[int, int]:
    """The longest file name and path of the file system ``folder`` would be on (POSIX's
    pathconf of its nearest existing parent; 255 and 4096, Linux's, where it cannot say)."""
    existing = folder.absolute()
    try:
        while not existing.exists():
            existing = existing.parent
        return os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 255, 4096


def _check_sizes(config, force: bool) -> None:
    """Refuse cases whose dense matrices and O(n³) work this tool is not meant for, unless forced."""
    from studies.config import build_arm, expand_cases
    from studies.kinds import KINDS

    arm = build_arm(config.arm)
    limit = KINDS[config.study.kind].coordinate_limit
    for case in expand_cases(config):
        n = case.discretization.coordinates(arm)
        if n > limit and not force:
            raise ConfigError(
                f"sweep: case {case.number} ({case.discretization.label}) has {n} coordinates, above the "
                f"limit of {limit} of a {config.study.kind} study (dense n × n matrices of "
                f"{8 * n * n / 2**30:.2g} GiB and O(n³) work per evaluation); use --force to run it anyway"
            )


def _version() -> str:
    try:
        return metadata.version("flexlink")
    except metadata.PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
