"""Fault injection for the commands that write files: kill, interrupt, fill, lock (issue 22).

One command line (``rlscale report --quick``, ``rlscale sweep SPEC``) is run
as a child process in its own session and hurt at a random moment:

* **SIGKILL** to the command's own process (``kill -9 PID``): nothing of it
  runs after the signal, and helpers it started are *not* signalled (they must
  notice on their own);
* **SIGINT** to its process group (Ctrl-C in a terminal): every process of the
  command gets it and must stop within :data:`STOP_SECONDS`.

Then the same command is rerun to completion and its output compared with
an uninterrupted run's, file by file, **timings aside** (:func:`snapshot`
drops JSON keys and CSV columns that are wall or CPU seconds and masks
durations in the report's text).  A previous report in the output directory
must survive every interrupted run byte for byte, nothing may appear beside
the output but its own working names, and no process of the command may
outlive it (:func:`orphans`).

A full disk is ``ulimit -f`` (:data:`resource.RLIMIT_FSIZE`: a write that
crosses it fails with ``EFBIG``; Python ignores ``SIGXFSZ``) and, where a
private mount namespace is available (``unshare -rm``), a small tmpfs that
really fills (``ENOSPC``).  A read-only output is a read-only bind mount in such
a namespace (``EROFS``, which root cannot write through either).

Used by ``tests/test_faults*.py`` (one or two faults each) and by
``python -m benchmarks reliability`` (20 or more of each).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Seconds a command may take to stop after SIGINT (more is counted as a hang).
STOP_SECONDS = 10.0
#: JSON keys whose values are wall or CPU seconds (or a table of them).
TIMING_KEYS = frozenset({"seconds", "timings", "cpu_timings", "cpu_total", "cpu_seconds",
                         "process_cpu_seconds"})
#: CSV columns that are durations.
TIMING_COLUMNS = frozenset({"seconds"})
# "19 s", "4.9 s (CPU 5.2 s)": durations in the report's markdown and HTML.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)? (?:s|ms|min)\b")


def rlscale_command(*args: str, entry: str = "module") -> list[str]:
    """``python -m rlscale ARGS`` with this interpreter, or (``entry="script"``) the
    ``rlscale`` console script installed beside it, as a user runs it."""
    if entry == "script":
        script = Path(sys.executable).with_name("rlscale")
        if not script.exists():
            raise FileNotFoundError(f"no rlscale console script at {script}: pip install -e .")
        return [str(script), *args]
    return [sys.executable, "-m", "rlscale", *args]


# ----------------------------------------------------------------------------- snapshots

def _strip_json(value):
    if isinstance(value, dict):
        return {k: _strip_json(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_strip_json(v) for v in value]
    return value


def normalise(name: str, data: bytes) -> bytes:
    """``data`` of the file ``name`` with its timings taken out (see the module docstring)."""
    if name.endswith((".json", ".rlscale-report")):
        with contextlib.suppress(ValueError):
            return json.dumps(_strip_json(json.loads(data)), sort_keys=True).encode()
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(data.decode("utf-8", "replace"))))
        if rows:
            keep = [i for i, c in enumerate(rows[0]) if c not in TIMING_COLUMNS]
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([[r[i] for i in keep if i < len(r)]
                                                            for r in rows])
            return buf.getvalue().encode()
    if name.endswith((".md", ".html")):
        return _DURATION.sub("<duration>", data.decode("utf-8", "replace")).encode()
    return data


def snapshot(root: Path, *, raw: bool = False) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path → bytes, normalised unless ``raw``);
    a symbolic link maps to ``b"-> target"``.  ``{}`` when ``root`` does not exist."""
    out: dict[str, bytes] = {}
    if not root.exists():
        return out
    if root.is_file():
        data = root.read_bytes()
        return {root.name: data if raw else normalise(root.name, data)}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            data = path.read_bytes()
            out[rel] = data if raw else normalise(rel, data)
    return out


def differences(want: dict[str, bytes], got: dict[str, bytes]) -> list[str]:
    """Names of the files that differ, are missing or are extra (empty: identical)."""
    names = sorted(set(want) | set(got))
    return [f"{n} ({'missing' if n not in got else 'extra' if n not in want else 'differs'})"
            for n in names if want.get(n) != got.get(n)]


def beside(out: Path) -> list[str]:
    """What lies in ``out``'s directory apart from ``out`` itself (a finished command
    leaves none of its working names behind)."""
    if not out.parent.exists():
        return []
    return sorted(p.name for p in out.parent.iterdir() if p.name != out.name)


# ----------------------------------------------------------------------------- processes

def _session_members(sid: int) -> list[int]:
    """Processes whose session is ``sid`` (Linux ``/proc``; empty elsewhere)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def orphans(sid: int, wait: float = 5.0) -> list[int]:
    """Processes of the session ``sid`` still alive ``wait`` seconds after its leader
    ended (helpers that outlived the command); they are killed, and returned."""
    deadline = time.monotonic() + wait
    alive = _session_members(sid)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = _session_members(sid)
    for pid in alive:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return alive


@dataclass
class Outcome:
    """One run of the command: how it ended and what it left."""

    returncode: int | None
    stderr: str
    seconds: float
    #: Signal sent (name) and when, or None for a run left to finish.
    fault: str | None = None
    at: float | None = None
    #: Seconds from SIGINT to exit (None: not interrupted, or killed).
    stop_seconds: float | None = None
    orphans: list[int] = field(default_factory=list)

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr


def run(cmd: Sequence[str], *, fault: str | None = None, at: float = 0.0,
        timeout: float = 600.0, cwd: Path | None = None,
        preexec: Callable[[], None] | None = None,
        env: dict[str, str] | None = None) -> Outcome:
    """Run ``cmd``; with ``fault`` ("SIGKILL" or "SIGINT") send it after ``at`` seconds.

    SIGKILL goes to the command's process only, SIGINT to its process group
    (module docstring).  A command that has already finished is not signalled.
    stderr goes to a file, not a pipe: a helper that outlives the command would
    hold a pipe open, and waiting for its end would hide it.
    """
    import tempfile

    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    start = time.monotonic()
    stop = None

    def child() -> None:
        # An ignored SIGINT is inherited through fork and exec, and Python then installs no
        # KeyboardInterrupt handler: started from `nohup ... &` (a background job ignores
        # SIGINT), every command ignored the Ctrl-C it was sent and the SIGINT faults
        # measured nothing (report: "took inf s to stop", sweeps: ran to the end, "ok").
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if preexec is not None:
            preexec()

    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd,
                                env=env, preexec_fn=child)
        try:
            if fault is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=at)
            if proc.poll() is None and fault is not None:
                sent = time.monotonic()
                if fault == "SIGKILL":
                    proc.send_signal(signal.SIGKILL)
                else:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, getattr(signal, fault))
                try:
                    proc.wait(timeout=STOP_SECONDS if fault != "SIGKILL" else 30)
                    stop = time.monotonic() - sent if fault != "SIGKILL" else None
                except subprocess.TimeoutExpired:
                    stop = float("inf")
                    proc.kill()
                    proc.wait()
            else:
                proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            err.write(b"\n(timed out)")
        seconds = time.monotonic() - start
        left = orphans(proc.pid)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Outcome(proc.returncode, text, seconds, fault, at if fault else None, stop, left)


def file_size_limit(limit: int) -> Callable[[], None]:
    """A ``preexec_fn`` applying ``ulimit -f`` (bytes) to the child."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _unshare_works() -> bool:
    """Whether ``unshare -rm`` (a private user and mount namespace) is available."""
    import shutil as _shutil

    if _shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def read_only_command(directory: Path, cmd: Sequence[str]) -> list[str] | None:
    """``cmd`` run with ``directory`` bind-mounted read-only (a read-only file system:
    ``EROFS`` even for root), in a private mount namespace; None where unavailable."""
    if not _unshare_works():
        return None
    d = str(directory)
    return ["unshare", "-rm", "sh", "-c",
            f'mount --bind "{d}" "{d}" && mount -o remount,bind,ro "{d}" && exec "$@"',
            "sh", *cmd]


def full_disk_command(mount: Path, size: int, seed: Path, keep: Path,
                      cmd: Sequence[str]) -> list[str] | None:
    """``cmd`` run on a tmpfs of ``size`` bytes mounted at ``mount`` (``ENOSPC`` when full)
    that holds a copy of ``seed`` as ``mount/R``; afterwards the tmpfs's content is
    copied to ``keep`` (it vanishes with the namespace).  None where unavailable."""
    if not _unshare_works():
        return None
    m, k, sd = str(mount), str(keep), str(seed)
    script = (f'mount -t tmpfs -o size={size} tmpfs "{m}" && cp -a "{sd}" "{m}/R" && '
              f'{{ "$@"; rc=$?; cp -a "{m}/." "{k}/"; exit $rc; }}')
    return ["unshare", "-rm", "sh", "-c", script, "sh", *cmd]


# ----------------------------------------------------------------------------- the study

@dataclass
class KillResult:
    """One kill and the rerun after it."""

    fault: str
    at: float
    killed: Outcome
    rerun: Outcome
    #: Files of the rerun that differ from the uninterrupted run (timings aside).
    diff: list[str]
    #: The previous output changed while the killed run ran (empty: intact).
    previous_damaged: list[str]
    #: Names beside the output after the rerun (working names left behind).
    litter: list[str]
    #: What the output held right after the interrupted run: "previous" (byte for byte
    #: what was there before), "new" (the uninterrupted run's output, timings aside),
    #: or "neither" (a mixture for a report; a partial result for a sweep).
    after_kill: str = "neither"

    @property
    def ok(self) -> bool:
        return (not self.diff and not self.previous_damaged and not self.litter
                and self.rerun.returncode == 0 and not self.killed.orphans
                and not self.rerun.orphans and not self.killed.traceback
                and (self.killed.stop_seconds or 0.0) <= STOP_SECONDS)

    def describe(self) -> str:
        what = []
        if self.diff:
            what.append(f"differs: {', '.join(self.diff[:5])}")
        if self.previous_damaged:
            what.append(f"previous output damaged (neither the previous nor the new one): "
                        f"{', '.join(self.previous_damaged[:5])}")
        if self.litter:
            what.append(f"left beside the output: {', '.join(self.litter)}")
        if self.rerun.returncode != 0:
            what.append(f"rerun exit {self.rerun.returncode}: {self.rerun.stderr[-300:]!r}")
        if self.killed.orphans or self.rerun.orphans:
            what.append(f"orphan processes {self.killed.orphans + self.rerun.orphans}")
        if self.killed.traceback:
            what.append(f"traceback on {self.fault}: {self.killed.stderr[-300:]!r}")
        if (self.killed.stop_seconds or 0.0) > STOP_SECONDS:
            what.append(f"took {self.killed.stop_seconds:.1f} s to stop after SIGINT")
        return (f"{self.fault} at {self.at:.2f} s (left {self.after_kill}): "
                + ("ok" if self.ok else "; ".join(what)))


def kill_and_rerun(cmd: Sequence[str], out: Path, reference: dict[str, bytes],
                   fault: str, at: float, *, previous: Path | None = None,
                   timeout: float = 600.0) -> KillResult:
    """Run ``cmd`` (writing ``out``), send ``fault`` after ``at`` s, rerun to completion,
    and compare with ``reference`` (a :func:`snapshot` of an uninterrupted run).

    ``previous`` is a directory copied to ``out`` before the run (an older report the
    run replaces); after the interrupted run ``out`` must hold it intact or the
    complete new output (a signal after the atomic publish), never a mixture.
    Which of the two it held is :attr:`KillResult.after_kill`.
    """
    import shutil

    if previous is not None:
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(previous, out, symlinks=True)
    before = snapshot(out, raw=True)
    killed = run(cmd, fault=fault, at=at, timeout=timeout)
    after = snapshot(out, raw=True)
    after_kill = ("previous" if previous is not None and after == before else
                  "new" if not differences(reference, snapshot(out)) else "neither")
    # Only a report has a previous output to damage; the complete new one is no damage.
    damaged = ([] if previous is None or after_kill != "neither"
               else differences(before, after))
    rerun = run(cmd, timeout=timeout)
    return KillResult(fault, at, killed, rerun, differences(reference, snapshot(out)),
                      damaged, beside(out), after_kill)
