"""Ctrl-C while the ``rlscale`` command loads: one line, exit 130, never a traceback.

Issue 22: SIGINTs sent at random moments of ``rlscale --help`` (the installed
console script) printed importlib tracebacks in 32 of 40 runs: the script's
``from rlscale.cli import main`` and ``build_parser`` (every verb, numpy: ~0.3 s)
ran before any handler existed.  And a ``KeyboardInterrupt`` raised inside an
import is not always one when it comes out: numpy's C core turned one into
``ImportError: PyCapsule_Import could not import module "datetime"``, and one
that landed in a weakref callback of importlib's module locks was printed as
"Exception ignored" while the command went on.

These tests send a real SIGINT to the command's process group at a known
moment: a ``sitecustomize`` on ``PYTHONPATH`` installs an import hook that,
when the named module is about to load, touches a marker file and then waits
(``MODE`` below says how the wait reacts to the signal).  The test waits for
the marker, sends the signal, and reads what the command printed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SCRIPT = Path(sys.executable).with_name("rlscale")

# The hook: MODE "plain" sleeps (a Ctrl-C raises KeyboardInterrupt in the import, or is
# held); "converted" turns that KeyboardInterrupt into an ImportError, as numpy's C core
# did; "swallowed" waits in a __del__, where Python prints the KeyboardInterrupt as
# "Exception ignored" and goes on.  After its wait the import proceeds normally.
HOOK = '''
import os, sys, time

MODULE, MODE, MARK = (os.environ["I22_" + k] for k in ("MODULE", "MODE", "MARK"))


class _Wait:
    def __del__(self):
        time.sleep(WAIT)


WAIT = float(os.environ["I22_WAIT"])


class SlowImport:
    def find_spec(self, name, path=None, target=None):
        if name != MODULE or os.path.exists(MARK):
            return None
        open(MARK, "w").close()
        if MODE == "plain":
            time.sleep(WAIT)
        elif MODE == "converted":
            try:
                time.sleep(WAIT)
            except KeyboardInterrupt:
                raise ImportError('PyCapsule_Import could not import module "datetime"') from None
        elif MODE == "swallowed":
            _Wait()
            time.sleep(WAIT)  # the command went on: this long, as a run that ignored the Ctrl-C
        return None


sys.meta_path.insert(0, SlowImport())
'''


def _entry(kind: str) -> list[str]:
    if kind == "script":
        if not SCRIPT.exists():
            pytest.skip(f"no console script beside the interpreter ({SCRIPT}): install the "
                        "package with pip as the README says")
        return [str(SCRIPT)]
    return [sys.executable, "-m", "rlscale"]


def _interrupt(tmp_path: Path, argv: list[str], module: str, mode: str,
               wait: float) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``argv``, SIGINT its process group once ``module`` starts loading; return the
    finished process and the seconds from the signal to its end."""
    (tmp_path / "sitecustomize.py").write_text(HOOK)
    mark = tmp_path / "mark"
    env = {**os.environ, "I22_MODULE": module, "I22_MODE": mode, "I22_MARK": str(mark),
           "I22_WAIT": str(wait),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not mark.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate()
            pytest.fail(f"{module} never loaded (exit {proc.returncode}): {err[-500:]}")
        time.sleep(0.01)
    time.sleep(0.05)  # inside the hook's wait
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), time.monotonic() - sent


@pytest.mark.parametrize("entry", ["script", "module"])
@pytest.mark.parametrize("module", [
    "rlscale.cli",             # the console script's / __main__'s own import of the CLI
    "rlscale.commands.fit",    # build_parser, importing every verb
    "numpy",                   # the same, deeper: the import that took ~0.3 s
])
def test_ctrl_c_while_the_cli_loads_is_held_until_loaded_then_one_line(tmp_path, entry,
                                                                       module):
    done, seconds = _interrupt(tmp_path, [*_entry(entry), "prove", "--list"], module,
                               "plain", wait=1.5)
    assert (done.returncode, done.stderr) == (130, "rlscale: interrupted\n"), done.stderr
    assert done.stdout == ""  # stopped before the verb ran
    # Held, not raised: the import finished its wait first (and nothing ran after it).
    assert seconds >= 1.0


@pytest.mark.parametrize("entry", ["script", "module"])
@pytest.mark.parametrize("mode", ["plain", "converted", "swallowed"])
def test_ctrl_c_in_a_verbs_own_import_is_one_line_whatever_the_import_made_of_it(
        tmp_path, entry, mode):
    # rlscale prove imports rlscale.proofs when it runs: not held (a verb's imports are its
    # work), so the KeyboardInterrupt is raised inside the import and comes out as the
    # hook's MODE says.
    done, seconds = _interrupt(tmp_path, [*_entry(entry), "prove", "--list"],
                               "rlscale.proofs", mode, wait=20)
    assert (done.returncode, done.stderr) == (130, "rlscale: interrupted\n"), done.stderr
    assert done.stdout == ""
    assert seconds < 10  # stopped at once, not after the hook's 20 s wait


def test_a_ctrl_c_before_any_error_is_reported_as_the_interruption(capsys):
    # In-process: main() with a verb whose Ctrl-C came out as an ImportError.
    from rlscale import cli

    def converted(args):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            raise ImportError('PyCapsule_Import could not import module "datetime"') from None

    args = cli.build_parser().parse_args(["prove", "--list"])
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cli, "build_parser", lambda: _Fixed(args, converted))
            assert cli.main([]) == 130
        assert capsys.readouterr().err == "rlscale: interrupted\n"
        # The handler main() noted the Ctrl-C with is gone again.
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        # Without a Ctrl-C the same ImportError is not called an interruption.
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cli, "build_parser", lambda: _Fixed(args, _import_error))
            with pytest.raises(ImportError):
                cli.main([])
    finally:
        signal.signal(signal.SIGINT, previous)


def _import_error(args):
    raise ImportError("a broken install")


class _Fixed:
    """A parser whose parse_args returns ``args`` with ``func`` replaced."""

    def __init__(self, args, func):
        self.args = args
        self.args.func = func

    def parse_args(self, argv):
        return self.args


def test_an_ignored_sigint_stays_ignored():
    # Started from `nohup ... &`, SIGINT is ignored: main() must not install a handler.
    from rlscale import cli

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with cli._noting_ctrl_c():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


SWEEP = ('design = "grid"\nseeds = [0, 1]\n[axes]\nenvironments = [2, 3]\n[train]\n'
         "epochs = 2\neval_environments = 8\ngrid_size = 5\ntasks_per_step = 4\n")


@pytest.mark.parametrize("entry", ["script", "module"])
def test_ctrl_c_as_a_parallel_sweep_exits_is_one_line(tmp_path, entry):
    # The sweep's table is printed and its file written; then the interpreter's exit hook
    # joined loky's pool (1-4 s at load) and a Ctrl-C there printed "Exception ignored in:
    # <module 'threading'>" with a traceback, exit 0 (6 of 6 at load 17).
    spec = tmp_path / "spec.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "out" / "results.csv"
    proc = subprocess.Popen([*_entry(entry), "sweep", str(spec), "--out", str(out),
                             "--no-progress", "--jobs", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = proc.stdout.readline()  # the table: the work is done, the exit begins
    os.killpg(proc.pid, signal.SIGINT)
    rest, err = proc.communicate(timeout=120)
    assert first.split()[:2] == ["E", "t"], first + rest + err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    # The finished sweep's own line, then at most the interruption's (the signal may also
    # come after Python has put the default action back: killed by SIGINT, no words). The
    # signal is sent once the table's header is read, so it can also land while the table is
    # still printing, before the sweep's line: then the interruption's line alone.
    lines = err.splitlines()
    if lines and lines[0].endswith(f"runs in {out}"):
        lines = lines[1:]
    assert lines in ([], ["rlscale: interrupted"]), err
    assert proc.returncode in (130, -signal.SIGINT)
    assert len(out.read_text().splitlines()) == 5  # header + 4 runs: complete
