"""Efficiency step: η under 40 bootstrap laws by warm Newton vs cvxpy per law; realised η.

Issue 13, item 6 (the report's efficiency step).  The report's nested problem
(power laws in E, t, k under the cost ``20 E + 2 E t + 0.1 E t k``, bounds
E <= 256, t <= 64, k in [2, 128]) has no closed form, so before this change
:func:`~rlscale.optimize.plan_uncertainty` solved the geometric program with
cvxpy for every bootstrap law: one allocation and one min-cost solve per
baseline (40 laws × 5 solves).  Ours
(``eta_bootstrap``, the default): Newton on the KKT equations from the previous
law's optimum, kept only with a KKT certificate (optimize/_warm_newton.py),
cvxpy where it is not; against ``eta_bootstrap(warm=False)``, cvxpy for every
law (the implementation before: an *ablation*, ours against ours; the
allocation's independent peer, SLSQP written from the law, is in
``bench_allocate``).  The laws are the report's: the ``--quick``
fit of ``benchmarks/data/report_sweep.csv`` with 200 resamples, 40 evenly
spaced (``efficiency.plan_laws``).  The extra lines give the largest relative
difference of the η samples and the interval ends between the two paths.

Second case: :func:`~rlscale.optimize.realised_efficiency` with 2,000
replicates over a 9-point path (the report's size), vectorised over replicates
(ours) against the loop that called ``cost_to_reach`` per replicate (a faithful
copy of the implementation before: an ablation); the results are bit-identical.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._harness import Case
from benchmarks.bench_fit import report_sweep


def _report_problem(n_boot: int) -> tuple:
    from rlscale.optimize import AllocationProblem, compare_baselines, fit_law
    from rlscale.report._config import AXES, SUBSTITUTE, cost_text, load_config, nested_bounds

    cfg = load_config(quick=True)
    data, axes = report_sweep()
    fit = fit_law(data, axes=axes, holdout=0, bootstrap=n_boot, seed=0)
    laws = fit.bootstrap_laws()
    keep = cfg["efficiency"]["plan_laws"]
    if len(laws) > keep:  # the report's evenly spaced subset
        laws = [laws[i] for i in np.linspace(0, len(laws) - 1, keep).astype(int)]
    cost, bounds = cost_text(cfg["costs"]), nested_bounds(cfg)
    base = cfg["sweep"]["base"]
    centre = {SUBSTITUTE[a]: float(base[a]) for a in AXES}
    problem = AllocationProblem(fit.law, cost, bounds, SUBSTITUTE)
    point = compare_baselines(problem, float(cfg["allocation"]["budget"]), centre)
    return point, laws, cost, bounds, SUBSTITUTE


def _realised_loop(costs, path_scores, base_cost, base_scores, n_boot, conf, seed):
    """The realised-η bootstrap before vectorising: cost_to_reach per replicate."""
    from scipy.stats import trim_mean

    from rlscale.optimize import cost_to_reach

    gen = np.random.default_rng(seed)
    scores = [np.asarray(s, dtype=float) for s in path_scores]
    base = np.asarray(base_scores, dtype=float)

    def iqm(x, axis=-1):
        return trim_mean(x, 0.25, axis=axis)

    boot_path = np.stack([iqm(s[gen.integers(0, s.size, (n_boot, s.size))]) for s in scores],
                         axis=1)
    boot_base = iqm(base[gen.integers(0, base.size, (n_boot, base.size))])
    etas = np.empty(n_boot)
    for b in range(n_boot):
        etas[b] = base_cost / cost_to_reach(costs, boot_path[b], float(boot_base[b])).cost
    q = (1 - conf) / 2
    return tuple(float(v) for v in np.quantile(etas, [q, 1 - q]))


def cases(smoke: bool) -> list[Case]:
    from rlscale.optimize import realised_efficiency
    from rlscale.optimize._baselines import ETA_FLOOR, eta_bootstrap
    from rlscale.optimize._eta_interval import bootstrap_interval

    point, laws, cost, bounds, sub = _report_problem(20 if smoke else 200)
    got: dict[str, dict] = {}

    def ours() -> None:
        got["ours"] = eta_bootstrap(point, laws, cost, bounds, sub)

    def peer() -> None:
        got["peer"] = eta_bootstrap(point, laws, cost, bounds, sub, warm=False)

    def extra() -> dict[str, str]:
        a, b = got["ours"], got["peer"]
        rel = max(float(np.max(np.abs(a["etas"][k] / b["etas"][k] - 1))) for k in b["etas"])
        ends = max(abs(x / y - 1) for k in b["etas"]
                   for x, y in zip(bootstrap_interval(a["etas"][k], point.baselines[k]["eta"],
                                                      0.9, "symmetric", floor=ETA_FLOOR),
                                   bootstrap_interval(b["etas"][k], point.baselines[k]["eta"],
                                                      0.9, "symmetric", floor=ETA_FLOOR)))
        cpu = {}
        for label, fn in (("ours", ours), ("peer", peer), ("ours ", ours), ("peer ", peer)):
            start = time.process_time()
            fn()
            cpu.setdefault(label.strip(), []).append(time.process_time() - start)
        return {"CPU s (process_time, best of 2)":
                f"ours {min(cpu['ours']):.3f}, peer {min(cpu['peer']):.3f}, ratio "
                f"{min(cpu['peer']) / min(cpu['ours']):.2f}x",
                "η samples, ours vs cvxpy": f"max relative difference {rel:.2g} over "
                                            f"{len(b['good'])} laws × {len(b['etas'])} baselines",
                "symmetric 90% interval ends": f"max relative difference {ends:.2g}",
                "laws skipped (ours, peer)": f"{a['skipped']}, {b['skipped']}"}

    rng = np.random.default_rng(0)
    costs = np.geomspace(40.0, 1500.0, 9)
    path = [np.clip(0.1 + 0.1 * np.log(c / 40) + rng.normal(0, 0.03, 3), 0, 1) for c in costs]
    base = np.array([0.35, 0.33, 0.38])
    n_boot = 200 if smoke else 2000
    real: dict[str, tuple] = {}

    def r_ours() -> None:
        real["ours"] = realised_efficiency(costs, path, 600.0, base, method="interpolate",
                                           n_boot=n_boot,
                                           confidence=0.9, rng=0).interval

    def r_peer() -> None:
        real["peer"] = _realised_loop(costs, path, 600.0, base, n_boot, 0.9, 0)

    return [Case(f"η bootstrap, {len(laws)} laws × 5 solves (report --quick)", ours, peer,
                 "ours, cvxpy GP + polish for every law (eta_bootstrap(warm=False))",
                 work=len(laws), work_unit="laws", repeats=1 if smoke else 5, extra=extra,
                 independent=False),
            Case(f"realised η, {n_boot} replicates × 9 points", r_ours, r_peer,
                 "ours before: cost_to_reach per replicate", work=n_boot,
                 work_unit="replicates", independent=False,
                 extra=lambda: {"intervals identical": str(real["ours"] == real["peer"])})]
