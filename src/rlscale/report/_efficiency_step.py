"""The report's step 5: the recommendation, and what the plan delivers when trained.

Kept apart from :mod:`rlscale.report._steps` (the other steps) so that each file holds one
idea; the training helper :func:`~rlscale.report._steps._train_points` is shared.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlscale.report._config import AXES, SUBSTITUTE
from rlscale.report._config_tree import ReportConfig
from rlscale.report._figures import figure_eta, figure_realised
from rlscale.report._outcomes import Inputs, Section

__all__ = ["efficiency_step"]


def _decide(cfg: ReportConfig, inputs: Inputs) -> Any:
    """The report's recommendation (:func:`rlscale.optimize.recommend`) on the sweep."""
    from rlscale.optimize import recommend

    data = inputs.sweep.fit_data(AXES)
    f, eff_cfg = cfg.fit, cfg.efficiency
    base = cfg.sweep.base.point()
    return recommend(
        data, cfg.costs.text(), float(cfg.allocation.budget),
        {SUBSTITUTE[a]: float(base[a]) for a in AXES}, axes=list(AXES),
        bounds=cfg.allocation.nested_bounds(), substitute=SUBSTITUTE,
        fit=inputs.fit.result,
        bootstrap=eff_cfg.decision_bootstrap, plan_laws=eff_cfg.plan_laws,
        probability=eff_cfg.probability, confidence=f.confidence,
        loss_range=(0.0, 1.0),  # loss = 1 − success
        fit_options={"floor": (inputs.fit.floor_min, math.inf),
                     "starts": f.starts},
        seed=cfg.seed)


def _path_points(rec, targets: list[float]) -> list[dict[str, int]]:
    """Integer allocations of the candidate plan's path nearest each target cost."""
    path = rec.candidate["path"]
    lower = {"E": 1, "t": 1, "k": 2}
    out: list[dict[str, int]] = []
    for c in targets:
        i = int(np.argmin(np.abs(np.log(path.costs / c))))
        pt = {v: max(lower[v], round(float(path.values[v][i]))) for v in ("E", "t", "k")}
        if pt not in out:
            out.append(pt)
    return out


def efficiency_step(cfg: ReportConfig, inputs: Inputs) -> Section:
    """The recommendation, and what the plan delivers when trained (η_deployed realised).

    The decision (:func:`rlscale.optimize.recommend`): the sweep is split by data
    fission; the strongest of the simple baselines (E, t or k alone from the sweep's
    centre, or all three in proportion, inside the allocation bounds) is named and judged
    over the whole sweep's bootstrap laws, the Bayes plan is chosen on one copy and judged
    on the other -- which its choice never saw -- in the fixed sequence proportional →
    strongest → plan, each step only at probability 0.95.  Its η against each baseline
    (with the interval over the judgement copy's bootstrap laws) estimates η_deployed,
    what the plan delivers under the law that generates outcomes.

    Realised: each of two baselines (trajectories alone, the seed paper's comparison,
    and the strongest) is trained at its integer allocation; the best plan found (the
    candidate, recommended or not) is trained along its budget path (the costs where
    the judgement copy predicts it meets each baseline, times the ``ladder`` factors,
    and at ``B``); the realised η is read off a monotone fit of that measured path where
    it reaches the baseline's held-out success, with a bootstrap interval over seeds
    (:func:`rlscale.optimize.realised_efficiency`), or is "not estimable" when the path
    does not rise.  This is the trainer's η_deployed of the plan.

    For comparison the plug-in optimum of step 4 is judged by the fit that chose it
    (:func:`rlscale.optimize.plan_uncertainty`): that promise is biased up (the
    optimizer's curse) and is shown as such, never as the recommendation.
    """
    from rlscale.optimize import efficiency_curve, plan_uncertainty, realised_efficiency
    from rlscale.report._steps import _train_points
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    problem = inputs.allocation.problem
    law = inputs.fit.result.law
    base = cfg.sweep.base
    centre = {SUBSTITUTE[a]: float(v) for a, v in base.point().items()}
    fixed = {"E": float(base.environments), "t": float(base.tasks_per_environment)}
    bounds = cfg.allocation.nested_bounds()
    budget = float(cfg.allocation.budget)
    conf = cfg.fit.confidence
    eff_cfg = cfg.efficiency
    lo, hi, count = cfg.allocation.budget_grid()
    curve = efficiency_curve(law, problem.cost, np.geomspace(lo, hi, count), scaled="k",
                             fixed=fixed, bounds=bounds, substitute=SUBSTITUTE)
    rec = _decide(cfg, inputs)
    laws = list(inputs.fit.laws)
    if len(laws) > eff_cfg.plan_laws:  # an evenly spaced subset, deterministic
        laws = [laws[i] for i in np.linspace(0, len(laws) - 1, eff_cfg.plan_laws).astype(int)]
    if len(laws) < 2:
        raise ValueError(f"the plan's uncertainty needs at least 2 usable bootstrap laws; the "
                         f"fit gave {len(laws)} (raise fit.bootstrap)")
    unc = plan_uncertainty(law, laws, cfg.costs.text(), budget, centre, bounds,
                           substitute=SUBSTITUTE, confidence=conf, loss_range=(0.0, 1.0))
    point = unc.point
    strongest = rec.strongest
    compared = dict.fromkeys(["k only", strongest])
    candidate = rec.candidate.get("comparisons", {})

    seeds = eff_cfg.seeds
    trained: dict[str, Any] = {}
    lower = {"E": 1, "t": 1, "k": 2}
    arms = {name: {v: max(lower[v], math.floor(rec.baselines[name]["values"][v]
                                               * (1 + 1e-12))) for v in ("E", "t", "k")}
            for name in compared}
    arm_rows = _train_points(cfg, inputs, "efficiency-baseline", list(arms.values()), seeds)
    for (name, ints), rows in zip(arms.items(), arm_rows):
        trained[name] = {**ints, "cost": float(rows[0]["cost"]),
                         "successes": np.array([r["success"] for r in rows]),
                         "env_steps": float(np.mean([r["env_steps"] for r in rows])),
                         "updates": int(rows[0]["updates"])}
    # The candidate plan is trained along its path: around the costs where the judgement
    # copy predicts it meets each baseline, at the budget, and at each baseline's cost.
    targets = [rec.baselines[n]["cost"] / max(candidate[n].eta, 1e-9) * f
               for n in compared if n in candidate for f in eff_cfg.ladder]
    targets = sorted({*targets, budget, *(trained[n]["cost"] for n in compared)})
    pts = _path_points(rec, targets) if rec.candidate else []
    path = []
    for pt, rows in zip(pts, _train_points(cfg, inputs, "efficiency-optimal", pts, seeds)):
        succ = [r["success"] for r in rows]
        ci = iqm_ci(succ, n_boot=2000, confidence=conf, rng=cfg.seed)
        path.append({"budget": float(rows[0]["cost"]), **pt, "cost": float(rows[0]["cost"]),
                     "env_steps": float(np.mean([r["env_steps"] for r in rows])),
                     "updates": int(rows[0]["updates"]),
                     "predicted_loss": float(problem.loss_at(pt)), "success_iqm": ci.estimate,
                     "ci_low": ci.low, "ci_high": ci.high, "successes": succ})
    path.sort(key=lambda p: p["cost"])
    if len(path) < 2:
        raise ValueError(f"the plan's path gave {len(path)} distinct integer allocations to "
                         "train; widen efficiency.ladder")
    # Equal updates: the trainer's updates grow with E·t, not k, so the two arms at
    # equal cost differ in updates; each baseline is trained again with the plan's
    # number of updates at its equal-cost point (same recipe otherwise).
    equals = {name: min(path, key=lambda p, c=trained[name]["cost"]: abs(math.log(p["cost"] / c)))
              for name in compared}
    same_rows = dict(zip(compared, _train_points(
        cfg, inputs, "efficiency-baseline",
        [{**{v: trained[n][v] for v in ("E", "t", "k")}, "steps": equals[n]["updates"]}
         for n in compared], seeds)))
    comparisons = {}
    for name in compared:
        arm = trained[name]
        base_ci = iqm_ci(arm["successes"], n_boot=2000, confidence=conf, rng=cfg.seed)
        real = realised_efficiency([p["cost"] for p in path], [p["successes"] for p in path],
                                   arm["cost"], arm["successes"], n_boot=2000, confidence=conf,
                                   rng=cfg.seed)
        equal = equals[name]
        diff = iqm_difference_ci(equal["successes"], arm["successes"], n_boot=2000,
                                 confidence=conf, rng=cfg.seed)
        # Equal real compute: the same comparison with environment steps as the cost.
        by_steps = realised_efficiency([p["env_steps"] for p in path],
                                       [p["successes"] for p in path], arm["env_steps"],
                                       arm["successes"], n_boot=2000, confidence=conf,
                                       rng=cfg.seed)
        same_diff = iqm_difference_ci(equal["successes"], [r["success"] for r in same_rows[name]],
                                      n_boot=2000, confidence=conf, rng=cfg.seed)
        c = candidate[name]
        comparisons[name] = {
            "baseline": {k: arm[k] for k in ("E", "t", "k", "cost")},
            "baseline_success": base_ci.as_dict(),
            # The plan's η against this baseline judged on the judgement copy: the estimate
            # of η_deployed (the plan was not chosen on those data).
            "predicted": {"eta": c.eta, "interval": list(c.eta_interval), "bound": c.eta_bound,
                          "p_beats": c.p_beats, "gain": c.gain,
                          "gain_interval": list(c.gain_interval),
                          "interval_method": "percentile over the judgement copy's "
                                             "bootstrap laws",
                          "note": rec.baselines[name]["note"]},
            # The plug-in optimum judged by the fit that chose it (biased up).
            "plug_in": {"eta": point.baselines[name]["eta"],
                        "interval": list(unc.eta_intervals[name]),
                        "interval_method": unc.method},
            "realised": real.as_dict(),
            "intervals_overlap": real.overlaps(*c.eta_interval),
            "predicted_covers_realised": (real.eta is not None
                                          and c.eta_interval[0] <= real.eta
                                          <= c.eta_interval[1]),
            "equal_cost": {"E": equal["E"], "t": equal["t"], "k": equal["k"],
                           "cost": equal["cost"], "success_iqm": equal["success_iqm"],
                           "ci_low": equal["ci_low"], "ci_high": equal["ci_high"],
                           "updates": equal["updates"], "baseline_updates": arm["updates"]},
            "difference": diff.as_dict(),
            "by_env_steps": by_steps.as_dict(),
            "equal_updates": {"updates": equal["updates"], "difference": same_diff.as_dict()},
        }
    k_only = comparisons["k only"]
    recd = rec.as_dict()
    efficiency = {
        "confidence": conf,
        "strongest": strongest,
        "recommendation": {k: recd[k] for k in (
            "choice", "status", "departs", "default", "strongest", "reason", "values",
            "steps", "probability", "split", "sigma", "n_laws", "notes", "method",
            "comparisons", "success", "message")},
        "candidate": {"values": rec.candidate.get("values"),
                      "comparisons": {n: c.as_dict() for n, c in candidate.items()}},
        "baselines": {n: {**b, "eta": candidate[n].eta if n in candidate else None,
                          "p_beats": candidate[n].p_beats if n in candidate else None,
                          "plug_in_eta": point.baselines[n]["eta"],
                          "loss": point.baselines[n]["loss"]}
                      for n, b in rec.baselines.items()},
        "comparisons": comparisons,
        "plan": {"allocation_intervals": unc.allocation_intervals,
                 "loss_band": list(unc.loss_band), "n_laws": unc.n_laws,
                 "robust": unc.robust.as_dict(), "robust_gain": unc.robust_gain,
                 "robust_point_cost": unc.robust_point_cost, "notes": list(unc.notes),
                 "interval_method": unc.method, "n_skipped": unc.n_skipped},
        # Kept for readers of earlier results.json: the trajectories-only comparison of the
        # plug-in optimum, as its own fit predicts it.
        "predicted": {"eta": point.baselines["k only"]["eta"], "budget": budget,
                      "baseline_cost": point.baselines["k only"]["cost"],
                      "optimal_budget": point.baselines["k only"]["optimal_cost"],
                      "baseline_loss": point.baselines["k only"]["loss"]},
        "curve": curve.rows(),
        "curve_notes": list(curve.notes),
        "realised": {
            "budget": budget, "seeds": list(seeds),
            "baseline": k_only["baseline"], "baseline_success": k_only["baseline_success"],
            "optimal_path": [{k: v for k, v in p.items() if k != "successes"} for p in path],
            "equal_cost": k_only["equal_cost"], "difference": k_only["difference"],
            "iso_loss_cost": k_only["realised"]["iso_cost"],
            "eta": k_only["realised"]["eta"], "eta_bound": k_only["realised"]["bound"],
            "eta_interval": k_only["realised"]["interval"], "note": k_only["realised"]["note"],
        },
    }
    if cfg.figures:
        figure_eta(curve.rows(), inputs.staging / "efficiency.png")
        figure_realised(efficiency, inputs.staging / "realised.png")
    return Section("efficiency", efficiency)
