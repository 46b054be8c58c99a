"""``rlscale sweep``: a scaling sweep over environments × tasks × trajectories (× context).

Runs every configuration of a TOML spec (see ``examples/sweep.toml``) and adds
each finished run to a results CSV atomically, so an interrupted sweep resumes
where it stopped when the same command is run again.  The CSV feeds
``rlscale fit`` directly.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a resumable scaling sweep over environments × tasks × trajectories",
        description="Train every configuration of a sweep spec (TOML) and append each "
        "finished run atomically to a results CSV; rerun the same command to resume.",
    )
    parser.add_argument("spec", metavar="SPEC.toml", help="sweep specification")
    parser.add_argument("--out", default="results.csv",
                        help="results CSV, created or resumed (default results.csv)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="local worker processes (joblib; default 1): the largest runs "
                        "first, the small ones in chunks")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run on a Dask distributed cluster, e.g. tcp://host:8786 "
                        "(extra 'cluster')")
    parser.add_argument("--confidence", type=float, default=None,
                        help="level of the table's bootstrap CIs (default 0.9, rlscale's "
                        "one level)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the runs still to do and exit")
    parser.add_argument("--summary", metavar="FILE",
                        help="also write the per-configuration summary as JSON")
    parser.set_defaults(func=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlscale.sweep._run import expand, load_spec, read_results, run_sweep, summarise
    from rlscale.theory._axes import SWEEP_AXES
    from rlscale.theory._validation import MAX_JOBS, check_positive_int, check_scalar

    check_positive_int("--jobs", args.jobs, maximum=MAX_JOBS)  # also with --dry-run
    if args.confidence is not None:  # refused before any work, --dry-run included
        check_scalar("--confidence", args.confidence, low=0.0, high=1.0, low_open=True,
                     high_open=True)
    spec = load_spec(args.spec)
    if args.dry_run:
        out = Path(args.out)
        done = {r["run_id"] for r in read_results(out)} if out.exists() else set()
        runs = expand(spec)
        todo = [r for r in runs if r["run_id"] not in done]
        print(f"{len(runs)} runs in the spec, {len(runs) - len(todo)} already in {out}, "
              f"{len(todo)} to do")
        for r in todo:
            c = r["config"]
            point = " ".join(f"{a.symbol}={c.get(a.field, 1)}" for a in SWEEP_AXES)
            print(f"  {r['run_id']}  {point} {c['algorithm']} seed={c['seed']}")
        return 0
    rows = run_sweep(spec, args.out, jobs=args.jobs, scheduler=args.scheduler,
                     progress=not args.no_progress)
    from rlscale.theory._levels import CONFIDENCE

    level = CONFIDENCE if args.confidence is None else args.confidence
    table = summarise(rows, confidence=level)
    ci = f"success IQM [{level:.0%} CI]"
    print(f"{'E':>5} {'t':>4} {'k':>4} {'c':>4} {'algorithm':>10} {'runs':>4}  "
          f"{ci:>28}  {'env steps':>10}")
    for s in table:
        print(f"{s['environments']:5d} {s['tasks_per_environment']:4d} "
              f"{s['trajectories_per_task']:4d} {s['context']:4d} {s['algorithm']:>10} "
              f"{s['runs']:4d}  "
              f"{s['success_iqm']:.4f} [{s['ci_low']:.4f}, {s['ci_high']:.4f}]  "
              f"{s['env_steps']:10.0f}")
    print(f"{len(rows)} runs in {args.out}", file=sys.stderr)
    if args.summary:
        from rlscale.files._atomic import write_json_atomic

        write_json_atomic(args.summary, {"spec": spec, "confidence": level, "summary": table})
    return 0
