"""Compare two ``rlscale report`` results.json files, timings aside.

A change that makes the report cheaper must not change what it reports: every
value in ``results.json`` except the clocks (``seconds``, ``timings``,
``cpu_timings``, ``cpu_total`` and the sections' own ``seconds``) must be the
same.  Prints each differing value with its path, both values and, for numbers,
the absolute and relative difference; exits 1 if any differ (``--rtol`` lets
numbers differ by that relative amount, for a change that only reorders a sum).

    python -m benchmarks.report_identity REFERENCE/results.json NEW/results.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from typing import Any

#: Keys whose values are clocks, wherever they appear.
CLOCKS = frozenset({"seconds", "timings", "cpu_timings", "cpu_total"})


def differences(ref: Any, new: Any, path: str = "", rtol: float = 0.0
                ) -> Iterator[tuple[str, Any, Any]]:
    """``(path, reference value, new value)`` for every leaf that differs."""
    if isinstance(ref, dict) and isinstance(new, dict):
        for key in sorted(set(ref) | set(new), key=str):
            if key in CLOCKS:
                continue
            where = f"{path}.{key}" if path else str(key)
            if key not in ref or key not in new:
                yield where, ref.get(key, "<absent>"), new.get(key, "<absent>")
            else:
                yield from differences(ref[key], new[key], where, rtol)
    elif isinstance(ref, list) and isinstance(new, list):
        if len(ref) != len(new):
            yield f"{path} (length)", len(ref), len(new)
        for i, (a, b) in enumerate(zip(ref, new)):
            yield from differences(a, b, f"{path}[{i}]", rtol)
    elif _number(ref) and _number(new):
        if not (ref == new or (math.isnan(ref) and math.isnan(new))
                or (rtol > 0 and math.isclose(ref, new, rel_tol=rtol))):
            yield path, ref, new
    elif ref != new:
        yield path, ref, new


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report_identity",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("new")
    parser.add_argument("--rtol", type=float, default=0.0,
                        help="relative tolerance for numbers (default 0: bit-identical)")
    args = parser.parse_args(argv)
    with open(args.reference) as fh:
        ref = json.load(fh)
    with open(args.new) as fh:
        new = json.load(fh)
    found = 0
    for where, a, b in differences(ref, new, rtol=args.rtol):
        found += 1
        extra = ""
        if _number(a) and _number(b):
            extra = f"  abs {abs(a - b):.3g}  rel {abs(a - b) / max(abs(a), 1e-300):.3g}"
        print(f"{where}: {a!r:.60} -> {b!r:.60}{extra}")
    print(f"{found} value(s) differ" if found else "identical (clocks aside)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
