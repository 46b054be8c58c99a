"""Run the report: stage, run the steps, write the document, publish.

The steps that need nothing from the others (reward law, reward law in the
trainer, inference budget, proofs: :data:`rlscale.report._steps.INDEPENDENT`)
are shared out dynamically: a second process (forked on Linux with the
libraries both need already loaded, spawned elsewhere) claims them one at a time,
longest first, beside the chain sweep → fit → allocation → efficiency, and
the main process takes those left when its chain is done, so a two-core
machine keeps both cores busy to the end (``results.json`` records each
step's wall seconds under ``timings``, its CPU seconds with its worker
processes under ``cpu_timings`` and the CPU seconds of every process of the
report under ``cpu_total``, all measured with the standard library).

Staging and publishing follow :mod:`rlscale.files._staging` (nothing the report did
not write is ever deleted); the steps are in :mod:`rlscale.report._steps`.
"""

from __future__ import annotations

import atexit
import copy
import itertools
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlscale.files._atomic import write_json_atomic, write_text_atomic
from rlscale.files._containment import OutputArea
from rlscale.files._staging import (
    PublishOutcome,
    check_destination,
    close_staging,
    open_staging,
    publish,
)
from rlscale.report._config import DEFAULTS, to_toml
from rlscale.report._config_tree import ReportConfig, as_tree
from rlscale.report._document import build_document
from rlscale.report._outcomes import Inputs, ReportState, Resources, StepTimings
from rlscale.report._steps import INDEPENDENT, SIDE_ORDER, STEPS, prune_results
from rlscale.report._typed import FrozenDict

__all__ = ["ReportResult", "run_report"]

try:
    import resource
except ImportError:  # not on Windows: os.times below
    resource = None  # type: ignore[assignment]


@dataclass
class ReportResult:
    """Everything the report computed (``results.json`` is ``as_dict()``).

    ``config`` is the plain configuration (``results.json``'s ``config``), ``cfg``
    the same as the frozen tree the steps read; ``state`` holds each step's
    outcome and ``timings`` how long each took, ``sections`` their plain data.
    """

    out: Path
    config: dict[str, Any]
    sections: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: What publishing kept of the directory it replaced (not in results.json).
    published: PublishOutcome | None = None
    cfg: ReportConfig | None = None
    state: ReportState | None = None
    timings: StepTimings | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rlscale_report": 1, "seconds": self.seconds, "config": self.config,
                **self.sections}


class _Progress:
    def __init__(self, enabled: bool, total: int) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="report", unit="step", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)

    def step(self, label: str) -> None:
        self.bar.set_postfix_str(label)

    def done(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def run_report(out: str | os.PathLike[str] = "rlscale-report", *,
               config: dict[str, Any] | ReportConfig | None = None, quick: bool = False,
               progress: bool = True) -> ReportResult:
    """Run every step and write the report to ``out``.

    Parameters
    ----------
    out : path
        Report directory (replaced only if it holds an rlscale report).
    config : dict or ReportConfig, optional
        A configuration from :func:`load_config` or
        :meth:`ReportConfig.load <rlscale.report._config_tree.ReportConfig.load>`
        (default: the built-ins, with the ``--quick`` overrides when ``quick``).
    quick : bool
        Use the smaller built-in configuration (ignored with ``config``).
    progress : bool
        Progress bar on stderr.

    Returns
    -------
    ReportResult
        Every number of the report; ``results.json`` is its ``as_dict()``.

    Examples
    --------
    A full run takes a minute or more (``rlscale report --quick``); a
    directory that is not an rlscale report is refused before any work:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "notes.txt").write_text("keep me")
    ...     run_report(tmp, quick=True)
    Traceback (most recent call last):
    ...
    ValueError: --out ... exists and is not an rlscale report (no .rlscale-report); ...
    """
    from rlscale._optional import require
    from rlscale.theory._validation import check_bool, check_mapping, check_path

    out = check_path("out", out)  # wrong types: a TypeError naming them (issue 22)
    check_bool("quick", quick)
    check_bool("progress", progress)
    if config is not None and not isinstance(config, ReportConfig):
        missing = sorted(set(DEFAULTS) - set(check_mapping("config", config)))
        if missing:
            raise ValueError(f"config lacks the sections {missing}; build it with "
                             "load_config (the defaults, a file's overrides)")
    out = Path(out).resolve()  # "--out ." has no name to stage beside
    check_destination(out)
    # Checked again (a dict may have been edited since load_config), and frozen.
    cfg = (ReportConfig.load(quick=quick) if config is None
           else as_tree(config if isinstance(config, ReportConfig) else copy.deepcopy(config)))
    if cfg.figures:  # without figures (--no-figures) the report needs no matplotlib
        require("matplotlib", extra="plot", purpose="report figures (or --no-figures)")
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    area = OutputArea.directory(out)  # every file the report writes stays in it
    area.make_anchor()
    # A fixed staging name: a report that was interrupted leaves its finished
    # training runs there, and the next run resumes them (runs are matched by
    # a hash of their full configuration, so a changed config re-trains).
    staging = open_staging(out)
    result = ReportResult(out, cfg.as_dict(), cfg=cfg)
    side = bar = None
    try:
        side = _Side(cfg, staging)  # the independent steps, beside the others
        bar = _Progress(progress, total=len(STEPS))  # after the fork: its thread stays here
        resources = Resources(jobs=_chain_jobs(side.pool is not None))
        inputs = Inputs(staging, progress, resources)  # grows with each outcome of the chain
        timings: dict[str, float] = {}
        cpu: dict[str, float] = {}
        outcomes: dict[str, Any] = {}
        steps = dict(STEPS)
        # The chain first, then whichever independent steps the side process has not
        # claimed yet (so neither process idles while the other has work queued).
        chain = [label for label, _ in STEPS if not side.runs(label)]
        for label in itertools.chain(chain, side.leftovers()):  # leftovers: claimed lazily
            bar.step(label)
            outcomes[label], timings[label], cpu[label] = _run_step(
                steps[label], cfg, inputs, exclude=side.pids())
            inputs = inputs.add(outcomes[label])
            bar.done()
        for label, (outcome, seconds, cpu_s) in side.results().items():
            outcomes[label], timings[label], cpu[label] = outcome, seconds, cpu_s
            bar.done()
        side.close()  # joined: its CPU is now this process's children's
        # results.json keeps the steps' order whichever process ran them.
        result.timings = StepTimings(
            wall=FrozenDict({label: timings[label] for label, _ in STEPS}),
            cpu=FrozenDict({label: cpu[label] for label, _ in STEPS}),
            # Every process of the report (the side process and the workers included),
            # from the staging to here; the document and the publishing after it are not.
            cpu_total=_cpu_seconds() - cpu_start)
        result.sections.update(result.timings.as_dict())
        result.state = ReportState.of([outcomes[label] for label, _ in STEPS])
        for label, _ in STEPS:
            result.sections[outcomes[label].key] = outcomes[label].as_dict()
        for csv_path, run_ids in resources.run_ids.items():
            prune_results(csv_path, run_ids)
        result.seconds = time.perf_counter() - start
        doc = build_document(result)
        write_text_atomic(staging / "index.md", doc.to_markdown(), root=area)
        write_text_atomic(staging / "index.html", doc.to_html(base=staging), root=area)
        write_json_atomic(staging / "results.json", result, root=area)
        write_text_atomic(staging / "config.toml", to_toml(result.config), root=area)
        result.published = publish(staging, out)
    finally:
        if side is not None:
            side.close()
        close_staging(staging)
        if bar is not None:
            bar.close()
    return result


def _chain_jobs(side: bool) -> int:
    """Worker processes for the chain's sweeps and bootstrap: at most 2, and one
    core fewer while a side process runs (on two cores: 1, see :class:`Shared`)."""
    cpus = os.cpu_count() or 1
    return max(1, min(2, cpus - 1)) if side else min(2, cpus)


def _cpu_seconds(exclude: frozenset[int] = frozenset()) -> float:
    """CPU seconds (user + system) of this process and of its worker processes, from the
    standard library.

    This process with its threads (:func:`resource.getrusage` ``RUSAGE_SELF``),
    its finished and reaped children (``RUSAGE_CHILDREN``: a sweep's workers
    once they exit, the side process once joined) and, where ``/proc`` exists
    (Linux), its live descendants (joblib keeps its workers between calls) read
    from ``/proc/<pid>/stat``.  Processes in ``exclude`` and their descendants
    (the report's side process, whose steps it times itself) are left out.
    Without ``/proc`` a live worker's CPU is counted when it exits, in the
    report's total.
    """
    if resource is None:
        t = os.times()
        total = t.user + t.system + t.children_user + t.children_system
    else:
        me = resource.getrusage(resource.RUSAGE_SELF)
        done = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = me.ru_utime + me.ru_stime + done.ru_utime + done.ru_stime
    return total + sum(_proc_cpu(pid) for pid in _live_descendants(os.getpid(), exclude))


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (``/proc/<pid>/task/*/children``; empty without it)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _live_descendants(pid: int, exclude: frozenset[int]) -> list[int]:
    found, todo = [], _children(pid)
    while todo:
        child = todo.pop()
        if child in exclude:
            continue
        found.append(child)
        todo += _children(child)
    return found


def _proc_cpu(pid: int) -> float:
    """User + system CPU of a live process (its own, not its children's), or 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _run_step(step, cfg: ReportConfig, inputs: Inputs, exclude: frozenset[int] = frozenset()
              ) -> tuple[Any, float, float]:
    """Run one step; return its outcome, its wall and its CPU seconds.

    The CPU seconds (:func:`_cpu_seconds`) include the workers the step ran
    in (sweeps, bootstrap, the trainer's reward-law grid).
    """
    cpu0 = _cpu_seconds(exclude)
    t0 = time.perf_counter()
    outcome = step(cfg, inputs)
    seconds = time.perf_counter() - t0
    cpu = max(_cpu_seconds(exclude) - cpu0, 0.0)
    return outcome, seconds, cpu


#: In the side process: the counter of claimed independent steps (shared with the main process).
_CLAIMS: Any = None


def _init_side(claims: Any, parent: int | None = None) -> None:
    """Initialise the side process: the shared claim counter, and a fast exit.

    A spawned worker ends with ``sys.exit`` in multiprocessing's ``spawn_main``,
    and the interpreter's finalisation (tearing down sympy, matplotlib, cvxpy
    and the heap the steps built) took 0.4–0.9 s that the main process waited
    for in ``join()``.  By the time it runs, multiprocessing has run its own
    exit functions and flushed stdout and stderr (``BaseProcess._bootstrap``),
    the steps' files are written and closed (atomically), and exit handlers
    registered later by the steps' imports have run (``atexit`` is last in,
    first out), so the exit handler registered here skips only the finalisation.
    """
    global _CLAIMS
    if parent is not None:
        # Killed with the report (kill -9): an orphan wrote into the staging directory
        # while the rerun cleaned it (issue 22).
        from rlscale.sweep._lifetime import die_with_parent

        die_with_parent(parent)
    # tqdm's default lock is a multiprocessing RLock: a semaphore the resource tracker
    # reports as leaked ("UserWarning: ... leaked semaphore objects") when the side
    # process is terminated (a failed or interrupted report).  Its bars are off here.
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
    _CLAIMS = claims
    atexit.register(os._exit, 0)


def _claim(claims: Any, total: int) -> int | None:
    """Claim the next unstarted independent step (its index), or ``None`` when all are taken."""
    with claims.get_lock():
        i = claims.value
        if i >= total:
            return None
        claims.value = i + 1
    return i


def _run_independent(labels: list[str], cfg: ReportConfig, staging: Path
                     ) -> dict[str, tuple[Any, float, float]]:
    """In the side process: claim and run independent steps until none is left."""
    steps = dict(STEPS)
    out = {}
    while (i := _claim(_CLAIMS, len(labels))) is not None:
        out[labels[i]] = _run_step(steps[labels[i]], cfg, Inputs(staging))
    return out


#: Libraries both processes of the report import (the chain's fit and figures, and the
#: side's steps): loaded before the fork, the side process shares them instead of paying
#: their import again (about 1.7 CPU s: scipy 0.8, matplotlib 0.5, sympy 0.4; cvxpy 0.1,
#: which the allocation and the inference plan's relaxation both import).
SHARED_IMPORTS = ("scipy.optimize", "scipy.special", "scipy.stats", "sympy", "cvxpy")


def _start_method() -> str:
    """How the side process starts: ``fork`` on Linux (it inherits the loaded libraries,
    see :data:`SHARED_IMPORTS`), ``spawn`` elsewhere (macOS's system libraries are not
    fork-safe; Windows has no fork).  The side process is started before the report's
    progress bar and any step, so no thread of ours is running at the fork."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def _load_shared(figures: bool = True) -> None:
    import importlib

    for name in SHARED_IMPORTS:
        importlib.import_module(name)
    if figures:
        from rlscale.report._figures import pyplot

        pyplot()  # matplotlib on the Agg backend, for both processes


class _Side:
    """The steps that need nothing from the others (:data:`INDEPENDENT`), shared out
    between one side process and the main process.

    The side process claims them one at a time, longest first
    (:data:`SIDE_ORDER`), while the main process runs the chain sweep → fit →
    allocation → efficiency; the main process then runs those still unclaimed
    (:meth:`leftovers`).  Claims go through one shared counter, so each step
    runs exactly once.  With a single CPU every step runs in the main process,
    in order, as before.  Their results do not depend on the process: every
    random stream is seeded from the configuration.  A failure in the side
    process is raised by :meth:`results`; a failure in the main process
    terminates it.
    """

    def __init__(self, cfg: ReportConfig, staging: Path) -> None:
        self.labels = [label for label in SIDE_ORDER if label in INDEPENDENT]
        self.labels += [label for label, _ in STEPS
                        if label in INDEPENDENT and label not in self.labels]
        self.pool = self.pending = self.claims = None
        if (os.cpu_count() or 1) >= 2 and self.labels:
            import multiprocessing

            method = _start_method()
            if method == "fork":
                _load_shared(cfg.figures)
            ctx = multiprocessing.get_context(method)
            self.claims = ctx.Value("i", 0)
            from rlscale.sweep._lifetime import children_ignore_interrupts

            with children_ignore_interrupts():  # Ctrl-C: the main process stops it
                self.pool = ctx.Pool(1, initializer=_init_side,
                                     initargs=(self.claims, os.getpid()))
            self.pending = self.pool.apply_async(_run_independent,
                                                 (self.labels, cfg, staging))

    def runs(self, label: str) -> bool:
        return self.pool is not None and label in self.labels

    def leftovers(self) -> Iterator[str]:
        """Claim, for the main process, the independent steps not started yet, one at a
        time (a generator: each is claimed only when the previous one is done)."""
        while self.claims is not None and (i := _claim(self.claims, len(self.labels))) is not None:
            yield self.labels[i]

    def pids(self) -> frozenset[int]:
        """The side process (its CPU is not the main process's steps')."""
        if self.pool is None:
            return frozenset()
        return frozenset(p.pid for p in getattr(self.pool, "_pool", []) if p.pid is not None)

    def results(self) -> dict[str, tuple[Any, float, float]]:
        if self.pending is None:
            return {}
        out = self.pending.get()
        self.pending = None
        return out

    def close(self) -> None:
        if self.pool is not None:
            # Finished work: let the worker exit on its own, so it releases its
            # semaphores (terminating it leaked one to the resource tracker).
            # Unfinished work (another step failed, Ctrl-C): stop it now.
            if self.pending is None:
                self.pool.close()
            else:
                self.pool.terminate()
            self.pool.join()
            self.pool = None
