"""`rlscale report` and `verify reward-law --quick` end to end, with the time of each step.

Goals (issue 26): ``rlscale report --quick`` <= 15 CPU s and the default <= 25 CPU s, all
processes counted (issue 13's were wall: default <= 30 s, ``--quick`` <= 20 s, ``verify
reward-law --quick`` <= 10 s on an idle 2-core machine).  Each report runs in a
fresh interpreter (``python -m rlscale report``), as a user runs it; its CPU
seconds include every worker process, and each step's wall and CPU seconds
come from its ``results.json`` (``timings``, ``cpu_timings``).  The peer is the
same report with every step in one process, in order (the side process of
:mod:`rlscale.report._run` switched off): the ratio is what sharing the
independent steps between two processes buys.  The fitter and its bootstrap are
timed as the "law fit" step, so the time without them is total − law fit.
Runs once each (no warm-up: a report is minutes).  ``--smoke`` times only the
``--quick`` configuration check (a report is never smoke-sized).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import Case

# The peer: the same report with the side process off (every step in order).
_SERIAL = ("import sys, rlscale.report._run as r; r.INDEPENDENT = frozenset(); "
           "from rlscale.cli import main; sys.exit(main(sys.argv[1:]))")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class _Report:
    """One report run in a fresh interpreter; remembers its step timings and CPU."""

    def __init__(self, args: list[str], serial: bool) -> None:
        self.args, self.serial = args, serial
        self.last: dict[str, Any] = {}

    def __call__(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            head = ["-c", _SERIAL] if self.serial else ["-m", "rlscale"]
            cpu, wall = _children_cpu(), time.perf_counter()
            subprocess.run([sys.executable, *head, "report", *self.args, "--no-progress",
                            "--out", str(out)], check=True, capture_output=True)
            wall = time.perf_counter() - wall
            res = json.loads((out / "results.json").read_text())
            steps = res["timings"]
            self.last = {"wall_s": round(wall, 1),
                         "cpu_s (all processes)": round(_children_cpu() - cpu, 1),
                         "cpu_total in results.json (from staging to the document)":
                             None if res.get("cpu_total") is None else round(res["cpu_total"], 1),
                         "load (1 min) after": round(os.getloadavg()[0], 2),
                         "wall_s without law fit": round(wall - steps["law fit"], 1),
                         "steps (wall s)": {k: round(v, 1) for k, v in steps.items()},
                         "steps (cpu s)": {k: None if v is None else round(v, 1)
                                           for k, v in res.get("cpu_timings", {}).items()}}


def _verify() -> dict[str, Any]:
    """``verify reward-law --quick`` in-process, with figures; CPU per stage."""
    import rlscale.verification._gaussian_reward_law as rv

    stages: dict[str, float] = {}
    originals = {n: getattr(rv, n) for n in ("_pg_rows", "_soft_bon_rows", "_fit_all",
                                             "write_reward_figures")}

    def timed(name, fn):
        def run(*a, **k):
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                stages[name] = round(time.process_time() - t, 2)
        return run

    for name, fn in originals.items():
        setattr(rv, name, timed(name.strip("_"), fn))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cpu, wall = time.process_time(), time.perf_counter()
            rv.verify_reward_law("quick", out=tmp, rng=0, figures=True)
            return {"wall_s": round(time.perf_counter() - wall, 1),
                    "cpu_s": round(time.process_time() - cpu, 1), "stages (cpu s)": stages}
    finally:
        for name, fn in originals.items():
            setattr(rv, name, fn)


def cases(smoke: bool) -> list[Case]:
    if smoke:
        from rlscale.report import load_config

        return [Case("report --quick: load and check the config",
                     lambda: load_config(quick=True), None, repeats=1)]
    verify: dict[str, Any] = {}
    quick, quick_serial = _Report(["--quick"], False), _Report(["--quick"], True)
    full, full_serial = _Report([], False), _Report([], True)
    return [
        Case("verify reward-law --quick", lambda: verify.update(_verify()), None, repeats=1,
             warmup=False, extra=lambda: dict(verify)),
        Case("report --quick", quick, quick_serial, "ours, every step in one process",
             repeats=1, warmup=False, independent=False, clock="wall",
             extra=lambda: {"ours": quick.last, "one process": quick_serial.last}),
        Case("report (default)", full, full_serial, "ours, every step in one process",
             repeats=1, warmup=False, independent=False, clock="wall",
             extra=lambda: {"ours": full.last, "one process": full_serial.last}),
    ]

