"""Run the benchmarks and print our median, the peer's median and the ratio.

CPU seconds by default (see :mod:`benchmarks._harness`), with the wall seconds
and the load average beside them; BLAS is pinned to one thread for the whole
run (``--blas-threads``; child interpreters inherit it through the
environment), so a busy machine's oversubscribed BLAS pool cannot distort a
comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import platform
import sys
from pathlib import Path

from benchmarks._harness import Skipped, measure


def _available() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        info.name.removeprefix("bench_")
        for info in pkgutil.iter_modules([str(here)])
        if info.name.startswith("bench_")
    )


#: Studies that count rather than time, each with its own options (``main(argv)``).
STUDIES = {"reliability": "benchmarks.reliability"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in STUDIES:  # python -m benchmarks reliability [--kills N ...]
        return importlib.import_module(STUDIES[argv[0]]).main(argv[1:])
    names = _available()
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"from: {', '.join(names)}")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat (CI)")
    parser.add_argument("--repeats", type=int, default=7, help="alternated repeats (default 7)")
    parser.add_argument("--json", metavar="FILE", help="write all measurements as JSON")
    parser.add_argument("--blas-threads", type=int, default=1, metavar="N",
                        help="BLAS threads for the whole run (default 1)")
    args = parser.parse_args(argv)
    if args.blas_threads < 1:
        parser.error(f"--blas-threads must be at least 1; got {args.blas_threads}")
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {names}")
    repeats = 1 if args.smoke else args.repeats
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.blas_threads)  # for the child interpreters some cases start
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} "
          f"cores, load {load}, BLAS threads {args.blas_threads}, repeats={repeats}"
          f"{' (smoke)' if args.smoke else ''}; ratio = peer / ours (>1: ours faster), CPU "
          "seconds unless marked wall; 'ablation': ours against ours in another configuration")
    with _blas(args.blas_threads):
        results = _run(args.names or names, args.smoke, repeats)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


def _blas(threads: int) -> contextlib.AbstractContextManager:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the environment variables above still reach child interpreters
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def _run(names: list[str], smoke: bool, repeats: int) -> dict[str, list[dict]]:
    results = {}
    for name in names:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        print(f"{name}: {(module.__doc__ or '').strip().splitlines()[0]}", flush=True)
        results[name] = []
        for case in module.cases(smoke):
            m = case if isinstance(case, Skipped) else measure(case, repeats)
            results[name].append(m.as_dict())
            print(m.line(), flush=True)
    skipped = [r for rows in results.values() for r in rows if "skipped" in r]
    if skipped:
        print(f"# {len(skipped)} case(s) SKIPPED (reasons above): "
              f"{', '.join(r['name'] for r in skipped)}", flush=True)
    return results


if __name__ == "__main__":
    sys.exit(main())
