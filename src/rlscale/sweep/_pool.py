"""Run a sweep's pending configurations serially, on local processes or on a Dask cluster.

Where a parallel sweep's time goes, measured on the default 64-run sweep
(``benchmarks/bench_sweep.py``, on a shared 2-core machine at load 8–18): one
run costs 0.06–1.3 s of CPU; its configuration and its result row pickle to
~0.6 kB each (negligible); a worker process starts and imports numpy and the
trainer in ~0.25 s of CPU, once per worker (joblib's loky executor and Dask
workers are reused); the held-out world is built once per process (0.1 s,
cached); two BLAS threads instead of one made no measurable difference to the
CPU per run (the trainer's arrays are small).  In joblib workers a run costs
the same CPU as in the parent (within the ±15 % noise of the load), so on an
idle machine two workers should approach 2× — what the benchmark infers from
CPU times (1.8–2.3×); wall-clock ratios on the loaded machine (1.0–1.2×) say
more about the load than about the sweep.  The one large cost found was on
Dask: its workers run with a fixed malloc trim threshold, which tripled the
CPU per run (below).  The schedule was not the problem: list scheduling in
spec order, replayed on the measured run times, is within 1 % of the ideal
2×; ordering and chunking below make it 99.9 % and cut the round trips.
Hence:

* **largest first** — pending runs are ordered by :func:`estimated_work`
  (longest-processing-time-first list scheduling, Graham 1969: a makespan
  within 4/3 − 1/(3m) of the optimum on ``m`` workers);
* **chunks** — the small runs that follow are grouped into chunks of at least
  1/(8·jobs) of the total estimated work, one task and one round trip per
  chunk, so the last chunks are small and the tail stays balanced;
* **a heap that keeps numpy's arrays** — Dask workers start with a fixed
  malloc trim threshold, which made every run 2.6-3x as expensive in CPU;
  :func:`_numpy_friendly_heap` lifts it while a chunk runs;
* **one BLAS thread per worker** — inside a chunk the BLAS pool is limited to
  one thread with ``threadpoolctl`` when it is installed (joblib's loky workers
  and Dask's nanny already set ``OMP/OPENBLAS/MKL_NUM_THREADS=1``): a guard
  against four busy threads on two cores, for runs with larger policies (no
  measurable effect on the default sweep's linear policy).

A chunk returns when all its runs are done, so a sweep killed mid-chunk loses
that chunk's finished runs as well (at most one chunk per worker, each about
1/(8·jobs) of the sweep's work, or one large run).  Serial sweeps (``jobs=1``) run in spec
order, one run at a time.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["ChunkResult", "chunks", "estimated_work", "execute", "run_chunk", "run_one"]

#: Chunks per worker the small runs are grouped into (more: finer tail, more round trips).
CHUNKS_PER_WORKER = 8
#: Cost of one held-out DP cell-step relative to one rollout step, measured: a run costs
#: 0.10 s + 7.6e-5 s per rollout at the default horizon 24 (least squares over the 64
#: default runs), and the default held-out DP is 256 tasks × 36 cells × 24 steps × 3 stages.
_EVAL_WEIGHT = 1.0 / 20.0


def estimated_work(config: dict[str, Any]) -> float:
    """Estimated cost of one run, in rollout steps (only ratios between runs matter).

    ``updates·B·k·horizon`` environment steps of training (``B`` tasks per
    update, ``k`` rollouts each, at most ``horizon`` steps; an upper bound, as
    in :class:`TrainConfig`'s work limit) plus the exact held-out evaluation,
    ``eval tasks·S²·horizon·3`` DP cell-steps weighted by their measured cost.

    Examples
    --------
    >>> small = {"n_environments": 1, "tasks_per_environment": 4, "trajectories_per_task": 8,
    ...          "epochs": 4, "tasks_per_step": 16, "steps": None, "grid_size": 6,
    ...          "max_steps": None, "eval_environments": 64, "eval_tasks_per_environment": 4}
    >>> estimated_work(small)   # 4 updates × 4 tasks × 8 rollouts × 24 steps + 256·36·24·3/20
    36249.6
    >>> round(estimated_work({**small, "n_environments": 64}) / estimated_work(small), 2)
    6.34
    """
    tasks = config["n_environments"] * config["tasks_per_environment"]
    per_update = min(config["tasks_per_step"], tasks)
    updates = config["steps"] or math.ceil(config["epochs"] * tasks / per_update)
    eval_tasks = config["eval_environments"] * config["eval_tasks_per_environment"]
    # Fields added with the memory family and the context axis are absent at their defaults.
    if config.get("env", "grid") == "memory":
        horizon = config["max_steps"] or 4 * config.get("memory_length", 8)
    else:
        horizon = config["max_steps"] or 4 * config["grid_size"]
    train = updates * per_update * config["trajectories_per_task"] * horizon
    if config.get("env", "grid") == "memory" or config.get("context", 1) > 1:
        # Windowed runs: Monte Carlo evaluation, and the backbone's cost per step grows
        # with the context (roughly: one embedding row per slot beside the fixed rest).
        scale = 1.0 + config.get("context", 1) / 8.0
        held_out = eval_tasks * config.get("eval_episodes", 32) * horizon
        return float(scale * (train + held_out))
    held_out = eval_tasks * config["grid_size"] ** 2 * horizon * 3
    return float(train + _EVAL_WEIGHT * held_out)


def chunks(configs: list[dict[str, Any]], jobs: int) -> list[list[dict[str, Any]]]:
    """Largest runs first, the small ones grouped: chunks of >= total/(8·jobs) estimated work.

    Examples
    --------
    >>> base = {"tasks_per_environment": 1, "trajectories_per_task": 2, "epochs": 1,
    ...         "tasks_per_step": 1, "steps": None, "grid_size": 4, "max_steps": None,
    ...         "eval_environments": 1, "eval_tasks_per_environment": 1}
    >>> runs = [{**base, "n_environments": e} for e in (1, 1, 1, 1, 40, 1, 1, 1)]
    >>> [[c["n_environments"] for c in chunk] for chunk in chunks(runs, 2)]
    [[40], [1, 1], [1, 1], [1, 1], [1]]
    """
    work = [estimated_work(c) for c in configs]
    order = sorted(range(len(configs)), key=lambda i: -work[i])  # stable: spec order on ties
    target = sum(work) / (CHUNKS_PER_WORKER * jobs)
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    filled = 0.0
    for i in order:
        current.append(configs[i])
        filled += work[i]
        if filled >= target:
            out.append(current)
            current, filled = [], 0.0
    if current:
        out.append(current)
    return out


@dataclass(frozen=True)
class ChunkResult:
    """Rows of one chunk of runs, with the time it took on its worker.

    ``cpu_seconds`` is the CPU time of the thread that ran the chunk (the
    work); ``process_cpu_seconds`` that of the whole worker process meanwhile
    (the work plus the executor's own threads: Dask's event loop, heartbeats
    and monitors, loky's queue threads).
    """

    rows: list[dict[str, Any]]
    cpu_seconds: float
    wall_seconds: float
    worker: int
    process_cpu_seconds: float = 0.0


def run_one(config: dict[str, Any]) -> dict[str, Any]:
    """Train one configuration and return its results row (runs on workers)."""
    from rlscale.simulate import TrainConfig, train
    from rlscale.sweep._run import run_id

    row = train(TrainConfig.from_dict(config)).row()
    row["run_id"] = run_id(config)
    return row


def _one_blas_thread() -> Any:
    """A context limiting BLAS to one thread (threadpoolctl), or a no-op without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # loky and Dask workers set *_NUM_THREADS=1 themselves
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


#: glibc ``mallopt`` parameters and their default (static) values.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _GLIBC_DEFAULT = -1, -3, 128 * 1024


@contextlib.contextmanager
def _numpy_friendly_heap() -> Iterator[None]:
    """Undo, for the chunk, a fixed malloc trim threshold set by the environment.

    Dask's nanny starts every worker with ``MALLOC_TRIM_THRESHOLD_=65536`` (its
    ``distributed.nanny.pre-spawn-environ``).  Setting any threshold turns off
    glibc's dynamic mmap threshold, so every array over 128 KiB is mmap-ed and
    unmapped afresh: the trainer, which allocates such arrays at every step,
    then took 2.6-3x the CPU per run (measured: 0.21 s against 0.07 s; the same
    slowdown in a plain process with that variable set).  Inside a chunk the
    thresholds are raised to the ceiling of glibc's own dynamic rule (32 MiB
    mmap, 64 MiB trim); afterwards the environment's values come back and the
    heap is trimmed, so the worker still returns memory when idle.  A no-op
    without the variables or off glibc.
    """
    names = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
    if not any(n in os.environ for n in names):
        yield
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        yield
        return

    def env(name: str) -> int:
        try:
            return int(os.environ.get(name, _GLIBC_DEFAULT))
        except ValueError:
            return _GLIBC_DEFAULT

    mallopt(_M_MMAP_THRESHOLD, 32 * 2**20)
    mallopt(_M_TRIM_THRESHOLD, 64 * 2**20)
    try:
        yield
    finally:
        mallopt(_M_MMAP_THRESHOLD, env("MALLOC_MMAP_THRESHOLD_"))
        mallopt(_M_TRIM_THRESHOLD, env("MALLOC_TRIM_THRESHOLD_"))
        trim(0)


def run_chunk(configs: list[dict[str, Any]], parent: int | None = None) -> ChunkResult:
    """Run ``configs`` one after the other on this worker (one BLAS thread, a heap that
    keeps numpy's arrays).  ``parent``: the sweep's process, which a local worker must
    not outlive (``kill -9`` of the sweep left its workers running, issue 22)."""
    if parent is not None and parent != os.getpid():
        from rlscale.sweep._lifetime import die_with_parent

        die_with_parent(parent, kernel=False)
    # The process clock is read first and last so that its interval encloses the thread's.
    process, cpu, wall = time.process_time(), time.thread_time(), time.perf_counter()
    with _one_blas_thread(), _numpy_friendly_heap():
        rows = [run_one(c) for c in configs]
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    return ChunkResult(rows, cpu, wall, os.getpid(), time.process_time() - process)


def execute(configs: list[dict[str, Any]], jobs: int,
            scheduler: str | None = None) -> Iterator[ChunkResult]:
    """Yield chunk results as they finish (serial: one run per chunk, in order)."""
    if scheduler:
        from rlscale._optional import require

        require("distributed", extra="cluster", purpose="sweeps on a Dask cluster")
        from distributed import Client, as_completed

        with Client(scheduler) as client:
            info = client.scheduler_info().get("workers", {})
            workers = max(1, sum(w.get("nthreads", 1) for w in info.values()))
            futures = [client.submit(run_chunk, c, pure=False)
                       for c in chunks(configs, workers)]
            for future in as_completed(futures):
                yield future.result()
        return
    if jobs == 1:
        for c in configs:
            yield run_chunk([c])
        return
    from joblib import Parallel, delayed

    from rlscale.sweep._lifetime import children_ignore_interrupts, quiet_teardown_after_interrupt

    parallel = Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1,
                        pre_dispatch="all")
    with quiet_teardown_after_interrupt():
        # The call dispatches every chunk, starting the workers: Ctrl-C is for this
        # process alone, which stops them (issue 22).
        with children_ignore_interrupts():
            results = parallel(delayed(run_chunk)(c, os.getpid())
                               for c in chunks(configs, jobs))
        yield from results
