"""BLAS threads: the fitter's hot loops with one BLAS thread vs the library default.

Issue 13, goal 8: under load, a multi-threaded OpenBLAS made scipy's L-BFGS-B
30-45x slower (each small product waits for a busy core).  ``rlscale.theory.
blas_threads`` limits the BLAS pools inside a ``with`` block (threadpoolctl).  Ours:
one start of scipy's L-BFGS-B and the batched multistart on the Chinchilla points
inside ``blas_threads(1)``; peer: the same with the BLAS pool as configured
(OpenBLAS defaults to one thread per core).  The effect depends on the machine's
load: give ``uptime`` with the numbers.  An *ablation* (ours against ours, one
BLAS setting against another), not a peer.  Skipped, with the reason, where the
Chinchilla points are absent.
"""

from __future__ import annotations

import os

import numpy as np

from benchmarks._harness import Case, DataMissing, Skipped
from benchmarks.bench_fit import chinchilla


def cases(smoke: bool) -> list[Case | Skipped]:
    from scipy.optimize import minimize

    from rlscale.optimize._fit_family import family
    from rlscale.optimize._fit_objective import Objective
    from rlscale.optimize._multistart import multistart
    from rlscale.theory._threads import _controller, blas_threads

    try:
        data, axes = chinchilla()
    except DataMissing as exc:
        return [Skipped("BLAS threads, Chinchilla", str(exc))]
    logx = np.log(np.column_stack([data[a] for a in axes]))
    logy = np.log(data["loss"])
    obj = Objective("additive", logx, logy, 1e-3, "sum")
    fam = family("additive")
    lower = np.array([-np.inf] * 3 + [0.0] * 2)
    x0 = np.array([0.5, 6.0, 7.5, 0.3, 0.3])
    # OpenBLAS's own default, one thread per core (the harness pins the run to one thread,
    # so the pool's current size says nothing about it).
    default = os.cpu_count() or 1

    def lbfgs():
        minimize(obj, x0, jac=True, method="L-BFGS-B", bounds=obj.bounds(False))

    def search():
        multistart(fam, logx, logy, 1e-3, fam.grid(2), lower)

    def limited(fn):
        def run():
            with blas_threads(1):
                fn()
        return run

    def unlimited(fn):
        def run():
            with _controller().limit(limits=default, user_api="blas"):
                fn()
        return run

    work = [("one L-BFGS-B start", lbfgs)]
    if not smoke:
        work.append(("multistart", search))
    return [Case(f"{name}, Chinchilla, 1 BLAS thread", limited(fn), unlimited(fn),
                 f"ours with {default} BLAS threads (the default)", independent=False)
            for name, fn in work]
