"""The ``rlscale`` command line.

Verbs live in :mod:`rlscale.commands`, one module per verb, each exposing
``register(subparsers)``; they are discovered here so that adding a verb never
touches this file.  Handlers import their heavy dependencies lazily, which
keeps ``rlscale --help`` fast.

Errors a user can cause (``ValueError``, ``TypeError``, ``OSError``,
``csv.Error``, ``MemoryError`` and rlscale's own errors) are printed as one
line on stderr with exit status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import os
import pkgutil
import sys
from collections.abc import Sequence

from rlscale import __version__
from rlscale._errors import RlscaleError

__all__ = ["build_parser", "main"]

_USER_ERRORS = (ValueError, TypeError, OSError, RlscaleError)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _command_modules() -> list[str]:
    import rlscale.commands as pkg

    return sorted(
        f"{pkg.__name__}.{info.name}"
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_")
    )


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every registered verb.

    Examples
    --------
    >>> args = build_parser().parse_args(["report", "--quick"])
    >>> args.command, args.quick, args.out
    ('report', True, 'rlscale-report')
    """
    parser = _Parser(
        prog="rlscale",
        description="Scaling laws for RL post-training: derive, verify, solve, ground, prove.",
    )
    parser.add_argument("--version", action="version", version=f"rlscale {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback on errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="<verb>", parser_class=_Parser)
    sub.required = True
    for name in _command_modules():
        importlib.import_module(name).register(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _silence_stdout() -> None:
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, io.UnsupportedOperation):  # no real stdout (captured)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the process exit status.

    Examples
    --------
    >>> main(["prove", "--list"]) == 0  # doctest: +ELLIPSIS
    bon-kl...
    True
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        sys.stderr.write("rlscale: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader left (``rlscale prove --list | head``): not a user error.
        # Point stdout at /dev/null so the interpreter's final flush is silent.
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a shell reports a process the pipe killed
    except MemoryError:
        if args.debug:
            raise
        sys.stderr.write(f"rlscale {args.command}: error: out of memory; the request is too "
                         "large for this machine: use smaller sizes (see the documented "
                         "limits in the README)\n")
        return 2
    except (*_USER_ERRORS, csv.Error) as exc:
        if args.debug:
            raise
        sys.stderr.write(f"rlscale {args.command}: error: {_one_line(exc)}\n")
        return 2
