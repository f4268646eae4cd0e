"""The ``flexlink`` command line.

    flexlink run CONFIG [--output DIR] [--resume] [--workers N]
    flexlink run --example NAME
    flexlink verify CONFIG [--output DIR] [--workers N]
    flexlink show CONFIG
    flexlink presets
    flexlink --version

Exit codes: 0 success; 1 some cases failed; 2 a mistake in the command or
config (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata, resources
from pathlib import Path

from core.presets import PRESETS
from studies.config import expand_cases, load_config
from studies.errors import ConfigError
from studies.tables import markdown_table

EXAMPLES_PACKAGE = "studies.configs"


def examples() -> dict[str, Path]:
    """Shipped example configs by name."""
    folder = resources.files(EXAMPLES_PACKAGE)
    return {Path(item.name).stem: Path(str(item)) for item in folder.iterdir() if item.name.endswith(".toml")}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flexlink", description="Flexible-link robot arm studies.")
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
    verify = commands.add_parser("verify", help="randomized property checks of the config's models")
    verify.add_argument("config")
    verify.add_argument("--output", type=Path)
    verify.add_argument("--workers", type=int)
    show = commands.add_parser("show", help="validate a config and list its cases without running")
    show.add_argument("config")
    commands.add_parser("presets", help="list the reference arms")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _dispatch(parser, args)
    except ConfigError as error:
        print(f"flexlink: error: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(f"flexlink: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flexlink: interrupted; finished cases are on disk (use --resume)", file=sys.stderr)
        return 130


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "presets":
        for name, factory in PRESETS.items():
            print(f"{name:22s} {(factory.__doc__ or '').strip().splitlines()[0]}")
        return 0
    if args.command == "run":
        if (args.config is None) == (args.example is None):
            parser.error("run needs a CONFIG file or --example NAME (one of them)")
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
    config = load_config(path)
    if args.command == "show":
        cases = expand_cases(config)
        print(
            f"{config.study.name}: kind {config.study.kind}, {len(cases)} cases, executor {config.execution.executor}"
        )
        import pandas as pd

        frame = pd.DataFrame([c.columns() for c in cases])
        frame["discretization"] = [c.discretization.label for c in cases]
        print(markdown_table(frame))
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

    result = run_study(
        config,
        output=args.output,
        resume=getattr(args, "resume", False),
        workers=args.workers,
        source=path,
        progress=sys.stderr.isatty(),
    )
    print(
        f"{result.succeeded}/{result.cases} cases succeeded ({result.resumed} resumed) in {result.wall_time:.1f} s"
    )
    print(f"results: {result.folder}")
    summary = result.folder / "summary.md"
    if summary.exists():
        print(f"summary: {summary}")
    for failure in result.failed:
        print(f"case {failure['case']} failed: {failure['error']}", file=sys.stderr)
    return 0 if result.ok else 1


def _version() -> str:
    try:
        return metadata.version("flexlink")
    except metadata.PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
