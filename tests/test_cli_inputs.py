"""What the command line refuses before reading or running anything: config paths
that are not regular files of bounded size, --output paths the file system cannot hold,
and argparse's mistakes — each one line ``flexlink: error: …``, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from studies import cli
from studies.config import MAX_CONFIG_BYTES

QUICKSTART = cli.examples()["quickstart"]


def _refused(capsys, *args: str) -> str:
    assert cli.main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("flexlink: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused_without_reading_it(capsys):
    """Before: `flexlink run /dev/zero` read until the kernel killed it (22.9 GB resident)."""
    err = _refused(capsys, "run", "/dev/zero")
    assert "/dev/zero: the config must be a regular file, got a character device" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    """Before: `flexlink run fifo.toml` blocked forever (open() of a pipe with no writer).
    Run in a child process with a timeout, so a regression fails instead of hanging."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    code = "import sys; from studies.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "show", str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == f"flexlink: error: {fifo}: the config must be a regular file, got a named pipe\n"


def test_a_folder_and_a_huge_file_are_refused(tmp_path, capsys):
    assert "the config must be a regular file, got a folder" in _refused(capsys, "show", str(tmp_path))
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as handle:  # sparse: no megabytes written to find this out
        handle.truncate(MAX_CONFIG_BYTES + 1)
    err = _refused(capsys, "run", str(huge))
    assert (
        f"has {MAX_CONFIG_BYTES + 1} bytes, more than the {MAX_CONFIG_BYTES} a study config may have" in err
    )


def test_an_output_name_too_long_for_the_file_system_is_one_line(tmp_path, capsys):
    """Before: a traceback `OSError: [Errno 36] File name too long`."""
    long = tmp_path / ("x" * 300)
    err = _refused(capsys, "run", str(QUICKSTART), "--output", str(long))
    assert "--output: the folder name 'xxxx" in err and "has 300 bytes, more than the 255" in err
    deep = tmp_path.joinpath(*["y" * 200] * 25)
    assert "is too long a path" in _refused(capsys, "run", str(QUICKSTART), "--output", str(deep))
    assert not list(tmp_path.iterdir())  # nothing created


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["run", "q.toml", "--workers", "abc"],
            "argument --workers: invalid int value: 'abc' (see flexlink run --help)",
        ),
        (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
        (["show"], "the following arguments are required: config (see flexlink show --help)"),
        (["run", "q.toml", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_argparse_mistakes_are_one_line_without_usage(capsys, args, message):
    """Before: a usage block and `flexlink run: error: …`; every other refusal says
    `flexlink: error:`."""
    assert message in _refused(capsys, *args)


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage: flexlink run")
