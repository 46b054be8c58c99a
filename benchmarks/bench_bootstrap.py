"""Bootstrap: 1,000 resamples of the report's three-axis fit, batched vs one fit each.

Issue 13, goal 2: the report's fit (51 runs, three axes) with 1,000 bootstrap
resamples in <= 5 s on two cores.  Ours: every resample through one vectorised
Levenberg--Marquardt solver (optimize/_bootstrap.py, ``batched_bootstrap``); the
peer: the implementation before issue 13, one scipy L-BFGS-B fit per resample and
warm start in two joblib workers (``per_resample_bootstrap``).  Both draw the same
resamples from the same seed and start from the same warm starts (the point
estimate and its runner-ups), so the intervals should agree to solver tolerance;
the extra line gives the largest difference of the 90 % interval ends of the
exponents, relative to the interval's width.
"""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case
from benchmarks.bench_fit import report_sweep
from rlscale.optimize import fit_law


def cases(smoke: bool) -> list[Case]:
    from rlscale.optimize._bootstrap import batched_bootstrap, per_resample_bootstrap
    from rlscale.optimize._fit_data import prepare
    from rlscale.optimize._fit_search import search

    data, axes = report_sweep()
    n_boot = 20 if smoke else 1000
    prep = prepare(data, "additive", axes, "loss", 1e-3, "sum", "keep", 0.9, 0.0, 0, 1,
                   None, None)
    warm = search(prep, "auto", 1)["warm"]
    obj = prep.obj
    got: dict[str, np.ndarray] = {}

    def ours():
        got["ours"] = batched_bootstrap(prep.fam, obj.logx, obj.logy, obj.delta, n_boot, 0,
                                        warm, prep.lower, prep.upper)

    def peer():
        got["peer"] = per_resample_bootstrap(
            (obj.family, obj.logx, obj.logy, obj.delta, "sum"), n_boot, 0, warm, prep.bounds,
            2, False)

    def extra():
        out = {}
        for j, a in zip(range(4, 7), axes):
            q = [np.quantile(got[k][:, j], [0.05, 0.95]) for k in ("ours", "peer")]
            width = max(q[1][1] - q[1][0], 1e-300)
            out[f"exponent[{a}] 90% interval"] = (
                f"ours [{q[0][0]:.4f}, {q[0][1]:.4f}], peer [{q[1][0]:.4f}, {q[1][1]:.4f}], "
                f"max end difference / width {np.max(np.abs(q[0] - q[1])) / width:.3f}")
        return out

    def whole():
        fit_law(data, axes=axes, holdout=0, bootstrap=n_boot, seed=0)

    return [Case(f"bootstrap {n_boot} resamples, 51 points, 3 axes", ours, peer,
                 "one scipy L-BFGS-B fit per resample and warm start, 2 joblib workers",
                 work=n_boot, work_unit="resamples", repeats=1, extra=extra),
            Case(f"fit_law(bootstrap={n_boot}), report sweep", whole, None, repeats=3)]
