"""Cold start: a first ``fit_law`` in a fresh interpreter against a plain scipy script.

Issue 24, goal 2: ``python -c "import rlscale.optimize as o; o.fit_law(...)"`` on the
Chinchilla points must cost at most 1.2x a plain ``scipy.optimize.least_squares``
script run the same way -- ratio (peer/ours) >= 0.83.  Both are child interpreters
started afresh for every repeat, so each pays its imports, reading the CSV and the
fit; the harness counts their CPU seconds through ``resource.getrusage``'s
``RUSAGE_CHILDREN`` (and the wall seconds beside them).

* **ours**: ``import rlscale.optimize`` and ``fit_law(data, axes=["N", "D"])`` with its
  defaults (the grid-safe multistart and the 10 % largest-scale hold-out refit), which
  is what a user types.
* **peer**: the script a user would write without rlscale, from the problem: the
  additive law ``E + A N^-α + B D^-β`` in log space (a log-sum-exp), its own residuals
  and analytic Jacobian, one data-driven start and ``least_squares`` with the Huber
  loss (``f_scale=1e-3``, whose cost is the summed Huber loss of Besiroglu et al.).
  Nothing of rlscale's.

Both read the same CSV with the standard library's ``csv`` module and print their
summed Huber objective, so the comparison shows the optimum each reached.

Data: ``../shared/data/chinchilla_fig4_points.csv`` (read in place; absent, the case is
SKIPPED with that reason, never run on a stand-in), the 240 points of Besiroglu et al.
(the 5 highest losses dropped), ``D = C / (6 N)``.
"""

from __future__ import annotations

import subprocess
import sys

from benchmarks._harness import Case, DataMissing, Skipped
from benchmarks.bench_fit import CHINCHILLA

#: Reading the points, shared verbatim by both scripts (standard library and numpy).
_READ = """
import csv, sys
import numpy as np
with open(sys.argv[1], newline="") as fh:
    rows = list(csv.DictReader(fh))
N = np.array([float(r["Model Size"]) for r in rows])
C = np.array([float(r["Training FLOP"]) for r in rows])
L = np.array([float(r["loss"]) for r in rows])
keep = np.argsort(L, kind="stable")[:-5]
N, D, L = N[keep], (C / (6 * N))[keep], L[keep]
"""

OURS = _READ + """
import rlscale.optimize as o
fit = o.fit_law({"N": N, "D": D, "loss": L}, axes=["N", "D"])
print(repr(fit.objective))
"""

PEER = _READ + """
import math
from scipy.optimize import least_squares

logx, logy = np.log(np.column_stack([N, D])), np.log(L)

def terms(th):
    return np.column_stack([np.full(len(logy), th[0]), th[1:3] - th[3:] * logx])

def residuals(th):
    z = terms(th)
    m = z.max(axis=1)
    return m + np.log(np.exp(z - m[:, None]).sum(axis=1)) - logy

def jacobian(th):
    z = terms(th)
    w = np.exp(z - z.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return np.column_stack([w, -w[:, 1:] * logx])

x0 = np.concatenate([[math.log(0.5 * L.min())],
                     math.log(0.5 * np.median(L)) + 0.3 * np.median(logx, axis=0), [0.3, 0.3]])
res = least_squares(residuals, x0, jac=jacobian, loss="huber", f_scale=1e-3,
                    bounds=([-np.inf] * 3 + [0.0, 0.0], np.inf))
print(repr(float(res.cost)))
"""


def _script(code: str, path: str, got: dict[str, str], key: str):
    def run() -> None:
        done = subprocess.run([sys.executable, "-c", code, path], check=True,
                              capture_output=True, text=True)
        got[key] = done.stdout.strip()

    return run


def cases(smoke: bool) -> list[Case | Skipped]:
    if not CHINCHILLA.is_file():
        return [Skipped("cold fit_law, Chinchilla 240 points",
                        str(DataMissing(f"the Chinchilla points are read from {CHINCHILLA}, "
                                        "which is absent; no stand-in is used")))]
    got: dict[str, str] = {}
    path = str(CHINCHILLA)

    def extra() -> dict[str, str]:
        ours, peer = float(got["ours"]), float(got["peer"])
        return {"Huber objective": f"ours {ours:.12e}, peer {peer:.12e}, "
                                   f"(ours - peer)/peer = {(ours - peer) / peer:.1e}",
                "goal": "ratio (peer/ours) >= 0.83, i.e. ours <= 1.2x the peer"}

    return [Case("cold fit_law, Chinchilla 240 points", _script(OURS, path, got, "ours"),
                 _script(PEER, path, got, "peer"),
                 "fresh python: scipy least_squares Huber script, one start",
                 extra=extra)]
