"""BLAS threads: the fitter's hot loops with one BLAS thread vs the library default.

Issue 13, goal 8: under load, a multi-threaded OpenBLAS made scipy's L-BFGS-B
30-45x slower (each small product waits for a busy core).  ``rlscale.theory.
blas_threads`` limits the BLAS pools inside a ``with`` block (threadpoolctl).  Ours:
one start of scipy's L-BFGS-B and the batched multistart on the Chinchilla points
inside ``blas_threads(1)``; peer: the same with the BLAS pool as configured
(OpenBLAS defaults to one thread per core).  The effect depends on the machine's
load: give ``uptime`` with the numbers.
"""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case
from benchmarks.bench_fit import chinchilla


def cases(smoke: bool) -> list[Case]:
    from scipy.optimize import minimize

    from rlscale.optimize._fit_family import family
    from rlscale.optimize._fit_objective import Objective
    from rlscale.optimize._multistart import multistart
    from rlscale.theory._threads import _controller, blas_threads

    data, axes = chinchilla()
    logx = np.log(np.column_stack([data[a] for a in axes]))
    logy = np.log(data["loss"])
    obj = Objective("additive", logx, logy, 1e-3, "sum")
    fam = family("additive")
    lower = np.array([-np.inf] * 3 + [0.0] * 2)
    x0 = np.array([0.5, 6.0, 7.5, 0.3, 0.3])
    default = max(m["num_threads"] for m in _controller().info()) if _controller().info() else 1

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
                 f"{default} BLAS threads (the default)") for name, fn in work]
