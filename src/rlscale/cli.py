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
import contextlib
import csv
import difflib
import importlib
import io
import os
import pkgutil
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rlscale import __version__
from rlscale._errors import RlscaleError
from rlscale.files._deferred import deferred_signals

__all__ = ["build_parser", "main"]

_USER_ERRORS = (ValueError, TypeError, OSError, RlscaleError)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit 2.

    A mistyped flag is named, with the closest valid one (issue 22): argparse
    checks required arguments before it looks at unknown ones, so ``allocate
    SPEC --budjet 5`` said "one of the arguments --budget --target --sweep is
    required" without a word about ``--budjet``.  Whatever error argparse
    raises, the command line is first scanned for flags no parser on its path
    knows (:func:`_unknown_flag`), and such a flag is the error reported.
    """

    #: The top-level parser (every sub-parser points to it) and the argv it parses.
    _root: _Parser | None = None
    _argv: list[str] | None = None

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if self._root is None or self._root is self:
            self._argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        root = self._root or self
        prog = self.prog
        found = _unknown_flag(root, root._argv or [])
        if found is not None:
            prog, message = found
        else:
            message = _with_suggestion(message)
        sys.stderr.write(f"{prog}: error: {' '.join(message.split())}\n")
        raise SystemExit(2)


def _sub_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
                None)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _known(parser: argparse.ArgumentParser, token: str) -> bool:
    """Whether ``parser`` accepts the flag ``token``: an option string, ``--opt=value``,
    an abbreviation argparse expands (``--bud`` for ``--budget``), or ``-xVALUE``."""
    options = parser._option_string_actions
    name = token.split("=", 1)[0]
    if name in options:
        return True
    if token.startswith("--"):
        return parser.allow_abbrev and any(o.startswith(name) for o in options
                                           if o.startswith("--"))
    return token[:2] in options


def _unknown_flag(root: argparse.ArgumentParser, argv: list[str]) -> tuple[str, str] | None:
    """``(prog, message)`` for the first flag in ``argv`` that the parser it belongs to
    (the verb's, after the verb) does not know, with the closest valid flag; else None.

    Values are not told from positionals here (that needs argparse's own parse):
    only tokens that look like flags are judged, so a negative number (``-1``) or
    anything after ``--`` is never called a flag.
    """
    parser, value_next = root, False
    for token in argv:
        if token == "--":
            return None
        if value_next:  # the value of the flag before (which may look like anything)
            value_next = False
            continue
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            if not _known(parser, token):
                name = token.split("=", 1)[0]
                longs = sorted(o for o in parser._option_string_actions if o.startswith("--"))
                close = difflib.get_close_matches(name, longs, n=1, cutoff=0.6)
                hint = (f"; did you mean {close[0]}?" if close else
                        f"; {parser.prog} takes {', '.join(longs)}")
                return parser.prog, f"unrecognized argument {name}{hint}"
            value_next = _takes_value(parser, token)
            continue
        sub = _sub_action(parser)
        if sub is not None:
            if token not in sub.choices:
                return None  # an unknown verb: argparse's own message, with a suggestion
            parser = sub.choices[token]
    return None


def _takes_value(parser: argparse.ArgumentParser, token: str) -> bool:
    """Whether the flag ``token`` of ``parser`` consumes the next token (an option of the
    parsers above a verb does: the verb is then not the next token)."""
    action = parser._option_string_actions.get(token.split("=", 1)[0])
    return action is not None and "=" not in token and action.nargs not in (0, "?", "*")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice: 'alocate' (choose from ...)" with the closest choice."""
    m = re.search(r"invalid choice: '?([^'()]*?)'? \(choose from (.*)\)", message)
    if m is None:
        return message
    choices = [c.strip().strip("'\"") for c in m[2].split(",")]
    close = difflib.get_close_matches(m[1], choices, n=1, cutoff=0.6)
    return f"{message}; did you mean {close[0]!r}?" if close else message


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
    stack: list[argparse.ArgumentParser] = [parser]
    while stack:  # every sub-parser reports through the top-level one (_Parser.error)
        p = stack.pop()
        p._root = parser
        if (action := _sub_action(p)) is not None:
            stack.extend(action.choices.values())
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
    if argv is not None and (isinstance(argv, str | bytes) or not isinstance(argv, Sequence)
                             or not all(isinstance(a, str) for a in argv)):
        raise TypeError(f"argv must be a sequence of strings or None; got {argv!r:.60}")
    with _noting_ctrl_c() as interrupted:
        try:
            # Inside the guard: building the parser imports every verb and numpy (~0.3 s),
            # and a Ctrl-C there was a traceback; it is held until the imports are done.
            with deferred_signals((signal.SIGINT,)):
                parser = build_parser()
            args = parser.parse_args(argv)
            return _run(args, interrupted)
        except KeyboardInterrupt:
            return _interrupted()
        except Exception:
            if interrupted():
                return _interrupted()
            raise


def _interrupted() -> int:
    sys.stderr.write("rlscale: interrupted\n")
    return 130


@contextlib.contextmanager
def _noting_ctrl_c() -> Iterator[Callable[[], bool]]:
    """Inside the block a Ctrl-C is noted, then raised as ``KeyboardInterrupt`` as ever;
    yields a function that says whether one came.

    Not every layer lets a ``KeyboardInterrupt`` through as one: numpy's C core turns
    one that lands in its own ``import datetime`` into ``ImportError: PyCapsule_Import
    could not import module "datetime"`` (30 lines; 8 of 100 SIGINTs of ``rlscale
    --help`` at load 7, issue 22); one that lands in a weakref callback is printed as
    "Exception ignored" and the command goes on.  Whatever error follows a Ctrl-C is
    reported as the interruption it is, and a swallowed one is raised again.  A SIGINT
    handler other than Python's default (an ignored SIGINT, an embedding program's
    own) is left alone; outside the main thread, where Python runs no handler,
    nothing is noted.
    """
    seen = [False]

    def note(signum: int, frame: object) -> None:
        seen[0] = True
        raise KeyboardInterrupt

    def unraisable(info: Any) -> None:
        if issubclass(info.exc_type, KeyboardInterrupt):
            # Raised where Python cannot propagate it (a weakref callback of importlib's
            # module locks: "Exception ignored in: <function _get_module_lock...>", 1 of
            # 100 SIGINTs of --help), it was printed and the command went on: raise it
            # again in the main thread, once this hook has returned.
            # Not from here: the handler would run inside this hook, which ignores it too.
            # A real signal, to the main thread: it also wakes a blocking call there
            # (_thread.interrupt_main does not; measured: a sleep ran on for its 20 s).
            threading.Timer(0.01, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT)).start()
        else:
            hook(info)

    installed = False
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        with contextlib.suppress(ValueError):  # not the main thread: nothing to note there
            signal.signal(signal.SIGINT, note)
            installed = True
    hook = sys.unraisablehook
    if installed:
        sys.unraisablehook = unraisable
    try:
        yield lambda: seen[0]
    finally:
        if installed:
            sys.unraisablehook = hook
            if signal.getsignal(signal.SIGINT) is note:
                signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(args: argparse.Namespace, interrupted: Callable[[], bool]) -> int:
    """Run the verb ``args`` names; a user's error is one line on stderr, exit 2."""
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader left (``rlscale prove --list | head``): not a user error.
        # Point stdout at /dev/null so the interpreter's final flush is silent.
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a shell reports a process the pipe killed
    except MemoryError:
        if interrupted():
            return _interrupted()
        if args.debug:
            raise
        sys.stderr.write(f"rlscale {args.command}: error: out of memory; the request is too "
                         "large for this machine: use smaller sizes (see the documented "
                         "limits in the README)\n")
        return 2
    except (*_USER_ERRORS, csv.Error) as exc:
        if interrupted():
            return _interrupted()
        if args.debug:
            raise
        sys.stderr.write(f"rlscale {args.command}: error: {_one_line(exc)}\n")
        return 2
