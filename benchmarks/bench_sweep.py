"""The default scaling sweep (examples/sweep.toml, ~60 runs) on 2 worker processes vs serial.

Goal: the default sweep in at most 5 minutes on 2 cores.  Each repeat writes a
fresh results file (so nothing is resumed); the peer runs the same sweep with
one process.  ``--smoke`` runs a 4-run, tiny-budget version of the spec.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks._harness import Case

SPEC = Path(__file__).resolve().parents[1] / "examples" / "sweep.toml"


def _runner(spec, jobs: int):
    from rlscale._sweep import run_sweep

    def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run_sweep(spec, Path(tmp) / "results.csv", jobs=jobs, progress=False)

    return run


def cases(smoke: bool) -> list[Case]:
    from rlscale._sweep import expand, load_spec, parse_spec

    spec = load_spec(SPEC)
    if smoke:
        spec = parse_spec({"design": "grid", "seeds": [0, 1],
                           "axes": {"environments": [2, 4]},
                           "train": {"epochs": 1, "eval_environments": 4, "grid_size": 4}})
    n = len(expand(spec))
    return [Case(f"default sweep [{n} runs], 2 processes", _runner(spec, 2), _runner(spec, 1),
                 "the same sweep, 1 process", work=n, work_unit="runs", repeats=1)]
