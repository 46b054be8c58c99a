"""rlscale.proofs: checking cost against plain sympy and uncertified quadrature.

- ``check_proofs()`` (issue 13, item 6: the report's "proofs" step; goal ≤ 2.5 CPU s,
  from 6.4), each run in a fresh interpreter so that sympy's cache starts empty as in
  a report.  numpy, scipy.special, sympy and mpmath are imported before the clock
  starts, as the report's earlier steps in the same process have.  Against it, the
  straightforward checker a user would write by hand: every ``Identity`` step decided
  by ``sympy.simplify(lhs.doit() - rhs.doit()) == 0`` (the other steps as ours: an
  *ablation*, ours with the plain checker swapped in, on the wall clock).  The
  interpreters start and import before the clock, so the harness's wall time is the
  check alone; the CPU seconds of each run (the goal's unit) are printed below it,
  with the identities the peer proves.
- Refuting a false identity: rlscale's Identity step fails it on a 50-digit
  numeric witness before simplifying; the peer is ``sympy.simplify(lhs - rhs)``
  (what a naive checker runs, and what takes minutes on the Chinchilla
  wrong-exponent mutation).
- Certified lower bounds of e(n) for n = 3..63 (float64 with directed rounding and a
  series enclosure of Φ) against mpmath.quad of the same integrals, which is
  accurate but certifies nothing: the price of rigour.

``--smoke`` checks two small proofs once each (fresh interpreters still).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import sympy as sp

from benchmarks._harness import Case

# One check in a fresh interpreter: imports, says "ready", waits for a line on stdin,
# then checks and prints {"cpu": CPU s of the check, "passed": ..., ...}.
_CHILD = """
import json, sys, time
import mpmath, numpy, scipy.special, sympy as sp  # loaded by the report's earlier steps
names, plain = json.loads(sys.argv[1]), sys.argv[2] == "peer"
print("ready", flush=True)
sys.stdin.readline()
start = time.process_time()
from rlscale.proofs import _steps, check_proofs
if plain:
    def _plain(self):
        lhs, rhs = sp.sympify(self.lhs).doit(), sp.sympify(self.rhs).doit()
        if sp.simplify(lhs - rhs) == 0:
            return "passed", "sympy.simplify(lhs - rhs) == 0"
        return "failed", "sympy.simplify(lhs - rhs) != 0"
    _steps.Identity._check = _plain
results = check_proofs(names or None)
cpu = time.process_time() - start
ident = [s for r in results for s in r.steps if s.kind == "identity"]
print(json.dumps({"cpu": cpu, "passed": all(r.passed for r in results),
                  "identities": len(ident), "proved": sum(s.passed for s in ident)}), flush=True)
"""


class _Fresh:
    """``check_proofs(names)`` in a fresh interpreter per call; keeps each run's CPU seconds.

    The interpreters are started (and their imports done) before timing, ``count`` of
    them, so a timed call is the check alone: send the go, read the result.
    """

    def __init__(self, names: Sequence[str], peer: bool, count: int) -> None:
        self.names, self.peer, self.count = list(names), peer, count
        self.runs: list[dict[str, Any]] = []
        self.ready: list[subprocess.Popen] = []

    def prepare(self) -> None:
        """Start the interpreters (the harness calls it before timing: ``Case.setup``)."""
        self.ready += [self._start() for _ in range(self.count - len(self.ready))]

    def _start(self) -> subprocess.Popen:
        child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(self.names),
                                  "peer" if self.peer else "ours"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        return child

    def __call__(self) -> None:
        child = self.ready.pop() if self.ready else self._start()
        out, _ = child.communicate("go\n")
        if child.returncode != 0:
            raise RuntimeError(f"check_proofs() exited with status {child.returncode}")
        self.runs.append(json.loads(out.strip().splitlines()[-1]))


def _cpu_figures(ours: _Fresh, peer: _Fresh) -> dict[str, Any]:
    cpu_ours = statistics.median(r["cpu"] for r in ours.runs)
    cpu_peer = statistics.median(r["cpu"] for r in peer.runs)
    last_ours, last_peer = ours.runs[-1], peer.runs[-1]
    assert last_ours["passed"], "check_proofs() failed a step"
    return {"CPU s per check (median), ours / peer": f"{cpu_ours:.2f} / {cpu_peer:.2f}",
            "CPU ratio peer / ours": round(cpu_peer / cpu_ours, 2),
            "CPU s of each run, ours": [round(r["cpu"], 2) for r in ours.runs],
            "identities proved, ours / peer": (f"{last_ours['proved']} / "
                                               f"{last_peer['proved']} of "
                                               f"{last_ours['identities']}")}


def _false_identity(smoke: bool):
    a, b, c = sp.symbols("a b c", positive=True)
    power = 2 if smoke else 3
    lhs = sp.expand((a + b + c) ** (power + 3)) * sp.exp(a) / (a + b) ** power
    rhs = (a + b + c) ** (power + 3) * sp.exp(a) / (a + b) ** power + sp.Rational(1, 10**6)
    return lhs, rhs


def cases(smoke: bool) -> list[Case]:
    from rlscale.proofs import Identity
    from rlscale.proofs._emax_lower import emax_lower_bound

    names = ["synthetic-ratio", "emax-upper"] if smoke else []
    fresh = 1 if smoke else 3
    ours_all, peer_all = _Fresh(names, False, fresh), _Fresh(names, True, fresh)
    label = "check_proofs(" + (", ".join(names) if names else "") + "), fresh interpreter"

    lhs, rhs = _false_identity(smoke)
    step = Identity("false", lhs, rhs)

    def ours_identity() -> None:
        assert step.check().status == "failed"

    def peer_identity() -> None:
        assert sp.simplify(lhs - rhs) != 0

    top = 8 if smoke else 64

    def ours_emax() -> None:
        for n in range(3, top):
            emax_lower_bound(n)

    def peer_emax() -> None:
        import mpmath

        for n in range(3, top):
            mpmath.quad(lambda z, n=n: 1 - mpmath.ncdf(z) ** n - mpmath.ncdf(-z) ** n,
                        [0, 2, 4, 8])

    return [
        Case(label, ours_all, peer_all,
             "ours with each Identity by sympy.simplify(lhs.doit() - rhs.doit()) == 0",
             warmup=False, repeats=fresh, extra=lambda: _cpu_figures(ours_all, peer_all),
             independent=False, clock="wall",
             setup=lambda: (ours_all.prepare(), peer_all.prepare())),
        Case("refute a false identity", ours_identity, peer_identity, "sympy.simplify(lhs - rhs)",
             repeats=3 if smoke else 5),
        Case(f"e(n) lower bounds, n=3..{top - 1}", ours_emax, peer_emax,
             "mpmath.quad, uncertified", work=top - 3, work_unit="n", repeats=3),
    ]
