"""Decision pieces: bootstrap laws judged along a path at once, and what a recommendation costs.

Issue 29.  First case: η of one budget path (17 budgets, B/8 to 2B) against one baseline
under 200 bootstrap laws of the report's sweep fit -- :class:`~rlscale.optimize._deployed.LawBank`
(built once, outside the timing, as recommend does) evaluates every law at every point in
one vectorised pass over its posynomials; the peer is given the problem as plain arrays
(the path's costs and axes, each law's floor, coefficients and exponents), evaluates
``floor + Σ c_a x_a^(−α_a)`` along the path for all laws at once (broadcast powers, an
einsum) and locates each crossing by bracketing: what a numpy user would write from the
definition of an additive law.  Both give the same η to rounding (the extra line says how
close).

Second case: :func:`~rlscale.optimize.recommend` on the report's ``--quick`` sweep data
(fission, two fits with 100 resamples each, the Bayes plan, the judgement) against
:func:`~rlscale.optimize.plan_uncertainty` on the same fit (the plug-in analysis it
replaces in the report: the full fit's bootstrap laws re-planned).  Both are ours, so the
case is an ablation, not a peer comparison: its ratio is what the honest judgement costs,
CPU seconds in the extra line.
"""

from __future__ import annotations

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


def _plain(path, laws, base_eff):
    """What the peer is given, as plain arrays: the path's costs and effective axes, the
    additive laws' floors, coefficients and exponents, the baseline's effective axes (the
    problem, not our objects: the harness refuses a peer that reaches rlscale)."""
    axes = list(laws[0].axes)
    if any(law.family != "additive" or list(law.axes) != axes for law in laws):
        raise RuntimeError("bench_decision's peer is written for additive laws on one set "
                           "of axes; the report sweep's fit gave another family")
    costs = np.array(path.costs, dtype=float)
    x = np.array([path.effective[a] for a in axes], dtype=float)  # (axes, budgets)
    floor = np.array([float(law.floor) for law in laws])
    coef = np.array([[float(law.coefficients[a]) for a in axes] for law in laws])
    expo = np.array([[float(law.exponents[a]) for a in axes] for law in laws])
    base = np.array([float(base_eff[a]) for a in axes])
    return costs, x, floor, coef, expo, base


def _peer_etas(costs, x, floor, coef, expo, base, base_cost) -> np.ndarray:
    """η per law from the definition, in plain numpy over all laws at once: each law's loss
    ``floor + Σ_a c_a x_a^(−α_a)`` along the path, the first budget where it reaches the
    baseline's loss, log-linear between the bracketing budgets (the ends: the path's first
    or last cost)."""
    ell = floor[:, None] + np.einsum("la,lab->lb", coef, x[None] ** -expo[:, :, None])
    target = floor + (coef * base ** -expo).sum(axis=1)
    below = ell <= target[:, None]
    i = np.argmax(below, axis=1)
    log_c = np.log(costs)
    j = np.maximum(i, 1)
    rows = np.arange(len(floor))
    above, at = ell[rows, j - 1], ell[rows, j]  # above > target >= at at a crossing
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(at < above, (above - target) / (above - at), 1.0)
    reach = np.exp((1 - w) * log_c[j - 1] + w * log_c[j])
    reach = np.where(i == 0, costs[0], reach)
    reach = np.where(below.any(axis=1), reach, costs[-1])
    return base_cost / reach


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
    # Both sides get the laws' numbers once, outside the timing (recommend builds its bank
    # once per fit and judges every baseline and path with it): the bank's arrays for ours,
    # plain floats for the peer.
    plain = _plain(path, laws, base_eff)
    bank = LawBank(laws)
    got: dict[str, np.ndarray] = {}

    def ours() -> None:
        got["ours"] = path_etas(path, bank, base_eff, base_cost)[0]

    def peer() -> None:
        got["peer"] = _peer_etas(*plain, base_cost)

    def agree() -> dict[str, str]:
        rel = float(np.max(np.abs(got["ours"] / got["peer"] - 1)))
        return {"η, ours vs the numpy peer": f"max relative difference {rel:.2g} over "
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
                 "the laws' formula along the path in broadcast numpy",
                 work=len(laws), work_unit="laws", extra=agree),
            Case("recommend (--quick sweep)", decide, plug_in,
                 "ours: plan_uncertainty on the same fit (the plug-in analysis)", repeats=1,
                 independent=False,
                 extra=lambda: {"CPU s (process_time, last repeat)":
                                f"recommend {cpu['ours']:.2f}, plan_uncertainty "
                                f"{cpu['peer']:.2f}"})]
