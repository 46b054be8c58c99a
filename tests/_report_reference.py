"""The values of ``rlscale report --quick``'s ``results.json``, pinned section by section.

Issue 25 rebuilt the report on typed outcomes; its ``results.json`` must hold the values
it held before.  A section's digest is the SHA-256 of its canonical JSON: keys sorted,
floats to 12 significant digits, and every ``seconds`` entry left out (wall seconds of a
step, a run or a solve: the only values two runs of the same configuration differ in --
two runs of main gave 173 differences, all of them there).  ``tests/test_report.py``
compares its quick report with ``report_quick_digests.json``.

A change that is meant to change the report's numbers rewrites the reference::

    rlscale report --quick --out /tmp/quick && python tests/_report_reference.py /tmp/quick

and says so in its commit message.  ``python tests/_report_reference.py OLD NEW`` lists
where two reports' values differ.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).with_name("report_quick_digests.json")

#: Top-level entries that are timings (never compared).
TIMINGS = ("seconds", "timings", "cpu_timings", "cpu_total")


def canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


def digests(results: dict[str, Any]) -> dict[str, str]:
    """Per top-level entry of ``results.json`` (timings aside), its digest."""
    return {k: hashlib.sha256(json.dumps(canonical(v), sort_keys=True, ensure_ascii=False)
                              .encode()).hexdigest()[:20]
            for k, v in results.items() if k not in TIMINGS}


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two canonical values differ (paths like ``fit.result.params.a_E``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}: keys {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
        return out + [d for k in a if k in b for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} against {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} against {b!r}"]


def _load(report: str) -> dict[str, Any]:
    return json.loads((Path(report) / "results.json").read_text())


if __name__ == "__main__":
    if len(sys.argv) == 2:
        REFERENCE.write_text(json.dumps(digests(_load(sys.argv[1])), indent=2) + "\n")
        print(f"wrote {REFERENCE}")
    elif len(sys.argv) == 3:
        old, new = (canonical({k: v for k, v in _load(p).items() if k not in TIMINGS})
                    for p in sys.argv[1:])
        found = differences(old, new)
        print("\n".join(found) or "no differences")
    else:
        raise SystemExit(__doc__)
