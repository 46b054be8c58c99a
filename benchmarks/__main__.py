"""Run the benchmarks and print our median, the peer's median and the ratio."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
from pathlib import Path

from benchmarks._harness import measure


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
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {names}")
    repeats = 1 if args.smoke else args.repeats
    print(f"# python {platform.python_version()} on {platform.machine()}, repeats={repeats}"
          f"{' (smoke)' if args.smoke else ''}; ratio = peer / ours (>1: ours faster)")
    results = {}
    for name in args.names or names:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        print(f"{name}: {(module.__doc__ or '').strip().splitlines()[0]}", flush=True)
        results[name] = []
        for case in module.cases(args.smoke):
            m = measure(case, repeats)
            results[name].append(m.as_dict())
            print(m.line(), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
