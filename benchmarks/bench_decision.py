"""Decision pieces: bootstrap laws judged along a path at once, and what a recommendation costs.

Issue 29.  First case: η of one budget path (17 budgets, B/8 to 2B) against one baseline
under 200 bootstrap laws of the report's sweep fit -- :class:`~rlscale.optimize._deployed.LawBank`
evaluates every law at every point in one vectorised pass; the peer evaluates each law's
loss along the path with the law's own checked ``loss`` (one call per law, what a
reader would write from the definition) and locates each crossing with ``np.interp``-style
bracketing per law.  Both give the same η to rounding (the extra line says how close).

Second case: :func:`~rlscale.optimize.recommend` on the report's ``--quick`` sweep data
(fission, two fits with 100 resamples each, the Bayes plan, the judgement) against
:func:`~rlscale.optimize.plan_uncertainty` on the same fit (the plug-in analysis it
replaces in the report: the full fit's bootstrap laws re-planned); the ratio is what the
honest judgement costs, CPU seconds in the extra line.
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks._harness import Case
from benchmarks.bench_fit import report_sweep


def _setup(n_boot: int):
    from rlscale.optimize import AllocationProblem, fit_law
    from rlscale.optimize._decision_paths import optimum_path, path_budgets
    from rlscale.report._config import SUBSTITUTE, cost_text, load_config, nested_bounds

    cfg = load_config(quick=True)
    data, axes = report_sweep()
    fit = fit_law(data, axes=axes, holdout=0, bootstrap=n_boot, seed=0, n_jobs=1)
    cost, bounds = cost_text(cfg["costs"]), nested_bounds(cfg)
    problem = AllocationProblem(fit.law, cost, bounds, substitute=SUBSTITUTE)
    budgets = path_budgets(problem, 1000.0)
    plan = problem.allocate(1000.0, round_integers=False).values
    path = optimum_path(fit.law, cost, bounds, SUBSTITUTE, budgets, 1000.0, plan, "plug-in")
    return cfg, data, axes, fit, cost, bounds, problem, path


def _peer_etas(path, laws, base_eff, base_cost) -> np.ndarray:
    """η per law from the definition: each law's loss along the path, the first crossing."""
    out = []
    log_c = np.log(path.costs)
    for law in laws:
        ell = np.asarray(law.loss({a: path.effective[a] for a in law.axes}), dtype=float)
        target = float(law.loss({a: base_eff[a] for a in law.axes}))
        hit = np.flatnonzero(ell <= target)
        if not hit.size:
            out.append(base_cost / path.costs[-1])
        elif hit[0] == 0:
            out.append(base_cost / path.costs[0])
        else:
            i = hit[0]
            w = (ell[i - 1] - target) / (ell[i - 1] - ell[i])
            out.append(base_cost / math.exp((1 - w) * log_c[i - 1] + w * log_c[i]))
    return np.array(out)


def cases(smoke: bool) -> list[Case]:
    from rlscale.optimize import plan_uncertainty, recommend
    from rlscale.optimize._baselines import baseline_allocations
    from rlscale.optimize._deployed import LawBank, path_etas
    from rlscale.report._config import AXES, SUBSTITUTE

    n_boot = 40 if smoke else 200
    cfg, data, axes, fit, cost, bounds, problem, path = _setup(n_boot)
    laws = fit.bootstrap_laws()
    vals, base_cost, _ = baseline_allocations(problem, 1000.0,
                                              {"E": 8.0, "t": 4.0, "k": 8.0})["proportional"]
    base_eff = {a: float(np.ravel(x)[0]) for a, x in problem.effective(vals).items()}
    got: dict[str, np.ndarray] = {}

    def ours() -> None:
        got["ours"] = path_etas(path, LawBank(laws), base_eff, base_cost)[0]

    def peer() -> None:
        got["peer"] = _peer_etas(path, laws, base_eff, base_cost)

    def agree() -> dict[str, str]:
        rel = float(np.max(np.abs(got["ours"] / got["peer"] - 1)))
        return {"η, ours vs the per-law loop": f"max relative difference {rel:.2g} over "
                                               f"{len(laws)} laws"}

    centre = {SUBSTITUTE[a]: float(cfg["sweep"]["base"][a]) for a in AXES}
    kept = [laws[i] for i in np.linspace(0, len(laws) - 1, min(40, len(laws))).astype(int)]
    cpu: dict[str, float] = {}

    def decide() -> None:
        start = time.process_time()
        recommend(data, cost, 1000.0, centre, axes=axes, bounds=bounds,
                  substitute=SUBSTITUTE, fit=fit, bootstrap=20 if smoke else 100,
                  plan_laws=10 if smoke else 40, loss_range=(0.0, 1.0), seed=0)
        cpu["ours"] = time.process_time() - start

    def plug_in() -> None:
        start = time.process_time()
        plan_uncertainty(fit.law, kept, cost, 1000.0, centre, bounds, substitute=SUBSTITUTE,
                         loss_range=(0.0, 1.0))
        cpu["peer"] = time.process_time() - start

    return [Case(f"η of a path under {len(laws)} laws", ours, peer,
                 "each law's checked loss along the path, crossing per law",
                 work=len(laws), work_unit="laws", extra=agree),
            Case("recommend (--quick sweep)", decide, plug_in,
                 "plan_uncertainty on the same fit (the plug-in analysis)", repeats=1,
                 extra=lambda: {"CPU s (process_time, last repeat)":
                                f"recommend {cpu['ours']:.2f}, plan_uncertainty "
                                f"{cpu['peer']:.2f}"})]
