"""The command line: version, help, one-line errors with exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rlscale
from rlscale.cli import build_parser, main


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlscale", *args], capture_output=True, text=True, timeout=300
    )


def test_version_via_python_m() -> None:
    out = _cli("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"rlscale {rlscale.__version__}"


def test_help_lists_every_verb() -> None:
    out = _cli("--help")
    assert out.returncode == 0
    parser = build_parser()
    verbs = next(a for a in parser._actions if a.dest == "command").choices
    assert verbs, "no verbs registered"
    for verb in verbs:
        assert verb in out.stdout


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["no-such-verb"],
        ["verify", "properties", "--profile", "fast"],
        ["verify", "properties", "no_such_property"],
    ],
)
def test_errors_are_one_line_with_exit_2(argv: list[str]) -> None:
    out = _cli(*argv)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "error:" in lines[0]
    assert "Traceback" not in out.stderr


def test_debug_shows_the_traceback() -> None:
    out = _cli("--debug", "verify", "properties", "no_such_property")
    assert out.returncode != 0
    assert "Traceback" in out.stderr


def test_verify_properties_runs_and_lists(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "properties", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "validation.check_real_roundtrip" in listed
    assert main(["verify", "properties", "--profile", "dev", "validation"]) == 0
    out = capsys.readouterr()
    assert "✓ validation.check_real_roundtrip" in out.out
    assert "1 passed, 0 failed" in out.err


def test_a_closed_pipe_is_not_reported_as_an_error() -> None:
    # `rlscale prove --list | head -1`: the reader is gone before we write.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "rlscale", "prove", "--list"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141
