"""The default 64-run sweep (examples/sweep.toml): 2 worker processes vs serial, Dask vs joblib.

Goal (issue 13, goal 5): 2 workers at least 1.7x faster than 1 on an idle 2-core
machine, and a Dask LocalCluster of 2 single-threaded worker processes within
20 % of joblib's 2 processes.  Each repeat writes a fresh results file (nothing
is resumed).  The machines these run on are shared, so next to the wall-clock
ratio each case prints the load and what it implies: the CPU seconds per run
(serial) and per worker (parallel, summed over its chunks), the load balance
``all workers' CPU / (workers × busiest worker's CPU)``, the parallel
efficiency ``serial CPU / (workers × busiest worker's CPU)`` and the speed-up it
implies on an idle machine, ``serial CPU / busiest worker's CPU`` (worker
start-up and the parent's writes left out: they are in the wall-clock ratio).
The first, cold call (fresh worker processes) is reported apart; the timed
repeats reuse warm workers, as a second sweep in one session does.
``--smoke`` runs a 4-run, tiny-budget spec.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import Case

SPEC = Path(__file__).resolve().parents[1] / "examples" / "sweep.toml"


class _Recorder:
    """Wraps the sweep's executor to keep every call's chunk results and wall time."""

    def __init__(self) -> None:
        self.calls: dict[str, list[dict[str, Any]]] = {}

    def runner(self, label: str, spec: Any, jobs: int, scheduler: Any = None):
        import rlscale.sweep._run as sweep

        real = sweep.execute

        def run() -> None:
            chunks: list[Any] = []

            def recording(configs, jobs_, scheduler_=None):
                for chunk in real(configs, jobs_, scheduler_):
                    chunks.append(chunk)
                    yield chunk

            sweep.execute = recording
            start = time.perf_counter()
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    sweep.run_sweep(spec, Path(tmp) / "results.csv", jobs=jobs,
                                    scheduler=scheduler() if scheduler else None,
                                    progress=False)
            finally:
                sweep.execute = real
            self.calls.setdefault(label, []).append(
                {"wall": time.perf_counter() - start, "chunks": chunks})

        return run

    def cpu(self, label: str) -> tuple[float, float, float, dict[int, float], int]:
        """Medians over the timed calls: work CPU (chunk threads), worker-process CPU, the
        busiest worker's work CPU; the last call's work CPU per worker; runs per call."""
        calls = self.calls[label][1:] or self.calls[label]
        totals, process, busiest = [], [], []
        by_worker: dict[int, float] = {}
        for call in calls:
            by_worker = {}
            for c in call["chunks"]:
                by_worker[c.worker] = by_worker.get(c.worker, 0.0) + c.cpu_seconds
            totals.append(sum(by_worker.values()))
            process.append(sum(c.process_cpu_seconds for c in call["chunks"]))
            busiest.append(max(by_worker.values()))
        runs = sum(len(c.rows) for c in calls[-1]["chunks"])
        return (statistics.median(totals), statistics.median(process),
                statistics.median(busiest), by_worker, runs)

    def summary(self, ours: str, peer: str, workers: int) -> dict[str, Any]:
        cpu_peer, _, _, _, runs = self.cpu(peer)
        cpu_ours, process_ours, busiest, by_ours, _ = self.cpu(ours)
        return {
            "load (1/5/15 min) after the runs": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            f"{peer}: CPU per run": f"{cpu_peer / runs:.3f} s ({cpu_peer:.2f} s for {runs} runs)",
            f"{ours}: CPU per worker": ", ".join(f"{v:.2f} s" for v in by_ours.values())
            + f" ({len(by_ours)} workers, {cpu_ours / runs:.3f} s per run; worker processes "
            f"{process_ours / runs:.3f} s per run with their executor threads)",
            "load balance (all workers' CPU / (workers x busiest))":
                f"{cpu_ours / (workers * busiest):.2f}",
            "parallel efficiency (CPU)": f"{cpu_peer / (workers * busiest):.2f}",
            "implied speed-up when idle": f"{cpu_peer / busiest:.2f}x",
            "cold first call (fresh workers) vs serial": (
                f"{self.calls[ours][0]['wall']:.2f} s vs {self.calls[peer][0]['wall']:.2f} s"),
        }


def _dask_cluster():
    """A LocalCluster of 2 single-threaded worker processes, started once (not timed)."""
    from distributed import LocalCluster

    holder: dict[str, Any] = {}

    def address() -> str:
        if "cluster" not in holder:
            holder["cluster"] = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
        return holder["cluster"].scheduler_address

    return address


def cases(smoke: bool) -> list[Case]:
    from rlscale.sweep._run import expand, load_spec, parse_spec

    spec = load_spec(SPEC)
    if smoke:
        spec = parse_spec({"design": "grid", "seeds": [0, 1],
                           "axes": {"environments": [2, 4]},
                           "train": {"epochs": 1, "eval_environments": 4, "grid_size": 4}})
    n = len(expand(spec))
    rec = _Recorder()
    out = [Case(f"default sweep [{n} runs], 2 processes", rec.runner("2 workers", spec, 2),
                rec.runner("serial", spec, 1), "ours, the same sweep in 1 process", work=n,
                work_unit="runs", repeats=1, independent=False, clock="wall",
                extra=lambda: rec.summary("2 workers", "serial", 2))]
    try:
        import distributed  # noqa: F401
    except ImportError:  # extra 'cluster' not installed: the Dask row is left out
        return out
    address = _dask_cluster()
    out.append(Case(f"sweep [{n} runs], joblib 2 processes", rec.runner("joblib", spec, 2),
                    rec.runner("dask", spec, 2, scheduler=address),
                    "ours on a Dask LocalCluster, 2 worker processes", work=n,
                    work_unit="runs", repeats=1, independent=False, clock="wall",
                    extra=lambda: rec.summary("dask", "serial", 2)))
    return out
