"""Side-by-side timing: ours against a peer, alternated in one run.

These machines are shared and noisy, so absolute times mean little; each
repeat times ours and then the peer back to back, and the report gives both
medians and the ratio ``peer / ours`` (above 1: we are faster), in CPU
seconds by default (user + system of this process, its threads and its
reaped child processes, :func:`cpu_seconds`) with the wall seconds beside
them and the load average before and after.

**Peers.**  A *peer* is the strongest independent way to do the same work:
written from the problem (its own residuals, Jacobians, constraints and
starts), never from rlscale's internals, and its timed call holds only what
the peer would do (``/work/shared/STYLE.md`` item 15).  The harness enforces
the first half: the peer's untimed warm-up call runs under a call tracer
(:class:`PeerTracer`, this thread and any it starts), and a peer that
executes one line of rlscale's code is refused with
:class:`PeerNotIndependent` before anything is timed, and so is one whose code
names rlscale at all -- an ``import``, a global or closure value of ours, a
child interpreter's code that imports it (:func:`static_references`).  A comparison of ours
against ours -- the loop a change replaced, one process against two, one
BLAS thread against many -- is an *ablation*: declared with
``independent=False``, printed as ``ablation`` and never called a peer.
"""

from __future__ import annotations

import dis
import functools
import os
import re
import statistics
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["Case", "DataMissing", "Measurement", "PeerNotIndependent", "PeerTracer", "Skipped",
           "check_independent", "check_static", "check_traced", "cpu_seconds", "measure",
           "rlscale_roots", "static_references"]


class DataMissing(FileNotFoundError):
    """A benchmark's data set is not where it is read from: the case is skipped with this
    reason, never run on a stand-in."""


@dataclass
class Skipped:
    """A case that cannot run here, and why (printed and written to the JSON as such)."""

    name: str
    reason: str

    def line(self) -> str:
        return f"  {self.name:38s} SKIPPED: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "skipped": self.reason}


@dataclass
class Case:
    """One comparison.

    Attributes
    ----------
    name : str
        Case label, e.g. ``"expected_max_normal[10000]"``.
    ours, peer : callable
        Zero-argument callables timed alternately.
    peer_label : str
        What the peer is (a library call, a naive loop, ...).
    work : float
        Items processed per call; throughput = work / median time.
    work_unit : str
        Name of the items (``"trials"``, ``"steps"``).
    extra : callable, optional
        Returns a dict of non-timing figures (accuracy, residuals) to print.
    repeats : int, optional
        Overrides the run's ``--repeats`` for this case.
    warmup : bool
        Run both once untimed first; off for one-shot jobs of minutes (the report).
    independent : bool
        True (default): ``peer`` is an independent peer, traced on its warm-up
        call.  False: ``peer`` is ours in another configuration (an ablation).
    clock : ``"cpu"`` or ``"wall"``
        Which time the ratio compares: CPU seconds (default; what a shared
        machine distorts least) or wall seconds (for parallelism, where
        the point is the elapsed time).
    setup : callable, optional
        Called once before anything is timed (e.g. start interpreters).
    """

    name: str
    ours: Callable[[], Any]
    peer: Callable[[], Any] | None
    peer_label: str = ""
    work: float = 1.0
    work_unit: str = "calls"
    extra: Callable[[], dict[str, Any]] | None = None
    repeats: int | None = None
    warmup: bool = True
    independent: bool = True
    clock: Literal["cpu", "wall"] = "cpu"
    setup: Callable[[], Any] | None = None


@dataclass
class Measurement:
    """Medians of one case: CPU and wall seconds of ours and of the peer, and the load."""

    name: str
    peer_label: str
    ours_s: float
    peer_s: float | None
    work: float
    work_unit: str
    extra: dict[str, Any] = field(default_factory=dict)
    #: The medians on the other clock (wall when ``clock`` is CPU, and vice versa).
    ours_other_s: float = 0.0
    peer_other_s: float | None = None
    independent: bool = True
    clock: str = "cpu"
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def ratio(self) -> float | None:
        return None if self.peer_s is None else self.peer_s / self.ours_s

    def line(self) -> str:
        ours_rate = self.work / self.ours_s
        text = f"  {self.name:38s} ours {_fmt(self.ours_s)}"
        if self.peer_s is not None:
            who = "peer" if self.independent else "ablation"
            text += (f"  {who} {_fmt(self.peer_s)}  ratio {self.ratio:8.2f}x {self.clock}"
                     f"  ({self.peer_label})")
        if self.work != 1.0:
            text += f"  [{ours_rate:.3g} {self.work_unit}/s ours]"
        other = "wall" if self.clock == "cpu" else "cpu"
        text += f"\n    {other}: ours {_fmt(self.ours_other_s).strip()}"
        if self.peer_other_s is not None:
            text += (f", {'peer' if self.independent else 'ablation'} "
                     f"{_fmt(self.peer_other_s).strip()}")
        text += f"; load (1 min) {self.load[0]:.2f} before, {self.load[1]:.2f} after"
        for key, value in self.extra.items():
            text += f"\n    {key}: {value}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "peer": self.peer_label, "peer_independent": self.independent,
            "clock": self.clock, "ours_median_s": self.ours_s, "peer_median_s": self.peer_s,
            "ratio_peer_over_ours": self.ratio, "ours_other_clock_median_s": self.ours_other_s,
            "peer_other_clock_median_s": self.peer_other_s, "load_before_after": self.load,
            "work": self.work, "work_unit": self.work_unit, **self.extra,
        }


def _fmt(seconds: float) -> str:
    for unit, scale in (("s ", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.3f} {unit}"
    return f"{seconds / 1e-9:8.1f} ns"


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and of its
    terminated, reaped child processes (the standard library).

    :func:`time.process_time` (nanosecond clock) for this process;
    :func:`resource.getrusage` (microseconds) for the children where it exists,
    else :func:`os.times` (clock ticks).  ``os.times`` alone ticks in 10 ms,
    too coarse for a call of a millisecond.
    """
    try:
        import resource
    except ImportError:  # not on Windows
        t = os.times()
        return time.process_time() + t.children_user + t.children_system
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + r.ru_utime + r.ru_stime


def _time(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = cpu_seconds(), time.perf_counter()
    fn()
    return cpu_seconds() - cpu, time.perf_counter() - wall


# -- peer independence ---------------------------------------------------------------


class PeerNotIndependent(RuntimeError):
    """A benchmark's peer executed rlscale's code: its ratio would flatter us."""


def rlscale_roots() -> tuple[str, ...]:
    """The directories of rlscale's source: the top package and each installed
    subpackage (the card folders install through ``package-dir``)."""
    import importlib.util

    roots = set()
    for name in ("rlscale", "rlscale.theory", "rlscale.optimize", "rlscale.simulate",
                 "rlscale.proofs"):
        spec = importlib.util.find_spec(name)
        for loc in (spec.submodule_search_locations or []) if spec else []:
            roots.add(str(Path(loc).resolve()) + os.sep)
    return tuple(sorted(roots))


class PeerTracer:
    """Records the first rlscale code a callable runs (in this thread or threads it starts).

    A ``sys.settrace`` hook sees every Python function call, imports
    included (an ``import rlscale.x`` runs the package's module code); it
    returns ``None`` so no line is traced and a peer slows only by one hook
    call per function call.  C code (numpy, scipy's compiled loops) is not
    seen, and needs not be: it cannot be ours.
    """

    def __init__(self) -> None:
        self.roots = rlscale_roots()
        self.hit: str | None = None
        self._cache: dict[str, bool] = {}

    def _ours(self, filename: str) -> bool:
        got = self._cache.get(filename)
        if got is None:
            try:
                path = str(Path(filename).resolve())
            except (OSError, ValueError):
                path = filename
            got = self._cache[filename] = path.startswith(self.roots)
        return got

    def _trace(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and self.hit is None and self._ours(frame.f_code.co_filename):
            code = frame.f_code
            self.hit = f"{code.co_qualname} ({code.co_filename}:{frame.f_lineno})"

    def run(self, fn: Callable[[], Any]) -> Any:
        old, old_thread = sys.gettrace(), threading.gettrace()
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        try:
            return fn()
        finally:
            sys.settrace(old)
            threading.settrace(old_thread)  # type: ignore[arg-type]


_RUNS_RLSCALE = re.compile(r"\b(import\s+rlscale|from\s+rlscale|-m\s+rlscale)\b")


def _ours(value: Any) -> bool:
    """Whether ``value`` is rlscale's: a module, class, function or instance of it."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
    elif isinstance(value, type | types.FunctionType | types.BuiltinFunctionType
                    | types.MethodType):
        name = getattr(value, "__module__", None) or ""
    else:
        name = type(value).__module__ or ""
    return name == "rlscale" or name.startswith("rlscale.")


@functools.cache
def _library_roots() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple(sorted({str(Path(paths[k]).resolve()) + os.sep
                         for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}))


def _library(filename: str) -> bool:
    """Whether code comes from the standard library or an installed third-party package."""
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return True
    return path.startswith(_library_roots()) and not path.startswith(rlscale_roots())


def static_references(fn: Any) -> list[str]:
    """What of rlscale a callable's code names, without running it.

    Walks the bytecode of ``fn`` (a function, a bound method, a
    :func:`functools.partial` or an object with ``__call__``) and, through the
    globals and closure cells it loads, every function of the ``benchmarks``
    package it reaches: an ``import`` of an rlscale module, a global or closure
    value that is rlscale's (a module, function, class or instance, one level
    into lists and tuples: a dict is where a case's callables share results, so
    it is left to the tracer), or a string that imports or runs rlscale (a child
    interpreter's code).  The complement of :class:`PeerTracer`, which
    sees what runs but not an ``import`` of a module already loaded.
    """
    found: list[str] = []
    seen: set[int] = set()

    def value(v: Any, where: str, depth: int = 0) -> None:
        if isinstance(v, str):
            if _RUNS_RLSCALE.search(v):
                found.append(f"{where}: a string that runs rlscale ({v[:60]!r})")
            return
        if _ours(v):
            found.append(f"{where}: {getattr(v, '__qualname__', type(v).__qualname__)} "
                         f"({getattr(v, '__module__', None) or type(v).__module__})")
            return
        # Inputs come in lists and tuples; a dict is the idiom for results the case's
        # callables share (filled with our objects once ours has run), so it is not read.
        if depth == 0 and isinstance(v, list | tuple | set | frozenset):
            for item in list(v)[:100]:
                value(item, where, 1)
            return
        walk(v)

    def code(c: types.CodeType, globs: dict[str, Any], where: str) -> None:
        for ins in dis.get_instructions(c):
            if ins.opname == "IMPORT_NAME" and str(ins.argval).split(".")[0] == "rlscale":
                found.append(f"{where}: import {ins.argval}")
            elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in globs:
                value(globs[ins.argval], f"{where}: global {ins.argval}")
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                code(const, globs, f"{where}.{const.co_name}")
            elif isinstance(const, str) and _RUNS_RLSCALE.search(const):
                found.append(f"{where}: a string that runs rlscale ({const[:60]!r})")

    def walk(f: Any) -> None:
        if id(f) in seen:
            return
        seen.add(id(f))
        if isinstance(f, functools.partial):
            value(f.func, "partial")
            for a in (*f.args, *f.keywords.values()):
                value(a, "partial argument")
            return
        if isinstance(f, types.MethodType):
            value(f.__self__, f"{f.__qualname__} (bound to)")
            f = f.__func__
        if isinstance(f, types.FunctionType):
            if _library(f.__code__.co_filename):
                return  # numpy's, scipy's, the standard library's: not walked
            where = f.__qualname__
            code(f.__code__, f.__globals__, where)
            for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
                try:
                    contents = cell.cell_contents
                except ValueError:  # an empty cell (a name assigned later)
                    continue
                value(contents, f"{where}: closure {name}")
            return
        call = vars(type(f)).get("__call__")  # a class of ours with a __call__ method
        if isinstance(call, types.FunctionType) and not _library(call.__code__.co_filename):
            walk(call)
            for name, attr in vars(f).items():
                value(attr, f"{type(f).__qualname__}.{name}")

    walk(fn)
    return found


def check_static(case: Case) -> None:
    """Refuse a peer whose code names rlscale (:func:`static_references`).  Run before
    anything of the case is called: a results dict the peer shares with ours fills with
    our objects once ours has run, which says nothing about what the peer reads."""
    if case.peer is None or not case.independent:
        return
    hits = static_references(case.peer)
    if hits:
        raise PeerNotIndependent(
            f"benchmark case {case.name!r}: its peer ({case.peer_label or 'unlabelled'}) "
            f"refers to rlscale: {'; '.join(hits[:3])}; write the peer from the problem, or "
            f"declare the comparison an ablation (Case(..., independent=False))")


def check_traced(case: Case) -> None:
    """Call ``case.peer`` once under :class:`PeerTracer`; refuse it if it ran our code."""
    if case.peer is None or not case.independent:
        return
    tracer = PeerTracer()
    tracer.run(case.peer)
    if tracer.hit is not None:
        raise PeerNotIndependent(
            f"benchmark case {case.name!r}: its peer ({case.peer_label or 'unlabelled'}) ran "
            f"rlscale code, {tracer.hit}; write the peer from the problem, or declare the "
            f"comparison an ablation (Case(..., independent=False))")


def check_independent(case: Case) -> None:
    """Both checks: :func:`check_static`, then the traced call (:func:`check_traced`)."""
    check_static(case)
    check_traced(case)


def measure(case: Case, repeats: int) -> Measurement:
    """Warm both callables once (the peer traced), then time them alternately."""
    repeats = case.repeats or repeats
    load0 = os.getloadavg()[0]
    check_static(case)
    if case.setup is not None:
        case.setup()
    if case.warmup:
        case.ours()
        if case.peer is not None:
            if case.independent:
                check_traced(case)
            else:
                case.peer()
    elif case.peer is not None and case.independent:
        raise ValueError(f"benchmark case {case.name!r}: an independent peer needs its traced "
                         "warm-up call (warmup=True)")
    ours, peer = [], []
    for _ in range(repeats):
        ours.append(_time(case.ours))
        if case.peer is not None:
            peer.append(_time(case.peer))
    pick = 0 if case.clock == "cpu" else 1

    def med(rows: list[tuple[float, float]], i: int) -> float:
        return statistics.median(r[i] for r in rows)

    return Measurement(
        case.name, case.peer_label, med(ours, pick), med(peer, pick) if peer else None,
        case.work, case.work_unit, case.extra() if case.extra else {},
        ours_other_s=med(ours, 1 - pick), peer_other_s=med(peer, 1 - pick) if peer else None,
        independent=case.independent, clock=case.clock, load=(load0, os.getloadavg()[0]))
