"""The report's step 5: the recommendation, and what the plan delivers when trained.

Kept apart from :mod:`rlscale.report._steps` (the other steps) so that each file holds one
idea; the training helper :func:`~rlscale.report._steps._train_points` is shared.  The
outcome is :class:`~rlscale.report._outcomes_efficiency.EfficiencyOutcome`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.report._config import AXES, SUBSTITUTE
from rlscale.report._config_tree import ReportConfig
from rlscale.report._figures import figure_eta, figure_realised
from rlscale.report._outcomes import Inputs
from rlscale.report._outcomes_efficiency import (
    SEED_BASELINE,
    VARIABLES,
    BaselineRow,
    Candidate,
    CurveRow,
    Decision,
    EfficiencyOutcome,
    EqualCost,
    EqualUpdates,
    PathPoint,
    PlanRecord,
    PlugInBaseline,
    PlugInEta,
    PredictedEta,
    RealisedSummary,
    SeedPaperPrediction,
    TrainedArm,
    TrainedComparison,
)
from rlscale.report._typed import FrozenDict, build

__all__ = ["efficiency_step"]

#: The least integer allocation trained: one environment, one task, and two trajectories
#: per task (RLOO's leave-one-out baseline needs two; the allocation's k starts there too).
LOWER = {"E": 1, "t": 1, "k": 2}


@dataclass(frozen=True)
class _Runs:
    """One allocation trained over the seeds, read once from the trainer's run rows (a
    table of the trainer's columns, one row per seed)."""

    cost: float  # the same for every seed
    successes: tuple[float, ...]
    env_steps: float  # the mean over the seeds
    updates: int  # the same for every seed

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> _Runs:
        cost, success, env_steps, updates = ([r[c] for r in rows] for c in (
            "cost", "success", "env_steps", "updates"))
        return cls(float(cost[0]), tuple(success), float(np.mean(env_steps)), int(updates[0]))


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


def _path_points(path: Any, targets: list[float]) -> list[dict[str, int]]:
    """Integer allocations of the plan's budget path (a :class:`~rlscale.optimize.PlanPath`)
    nearest each target cost."""
    out: list[dict[str, int]] = []
    for c in targets:
        i = int(np.argmin(np.abs(np.log(path.costs / c))))
        pt = {v: max(LOWER[v], round(float(path.values[v][i]))) for v in VARIABLES}
        if pt not in out:
            out.append(pt)
    return out


def efficiency_step(cfg: ReportConfig, inputs: Inputs) -> EfficiencyOutcome:
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
    rec = _decide(cfg, inputs)
    if rec.status == "fallback":  # before any training: there is no plan to train
        raise ValueError(f"the efficiency step has no plan to train and judge: {rec.reason}")
    lo, hi, count = cfg.allocation.budget_grid()
    curve = efficiency_curve(law, problem.cost, np.geomspace(lo, hi, count), scaled="k",
                             fixed=fixed, bounds=bounds, substitute=SUBSTITUTE)
    laws = list(inputs.fit.laws)
    if len(laws) > eff_cfg.plan_laws:  # an evenly spaced subset, deterministic
        laws = [laws[i] for i in np.linspace(0, len(laws) - 1, eff_cfg.plan_laws).astype(int)]
    if len(laws) < 2:
        raise ValueError(f"the plan's uncertainty needs at least 2 usable bootstrap laws; the "
                         f"fit gave {len(laws)} (raise fit.bootstrap)")
    unc = plan_uncertainty(law, laws, cfg.costs.text(), budget, centre, bounds,
                           substitute=SUBSTITUTE, confidence=conf, loss_range=(0.0, 1.0))
    plug_in = {n: build(PlugInBaseline, b) for n, b in unc.point.baselines.items()}
    strongest = rec.strongest
    compared = dict.fromkeys([SEED_BASELINE, strongest])
    candidate = Candidate.of(rec.candidate)
    judged = candidate.comparisons  # baseline -> Comparison, on the judgement copy
    baselines = FrozenDict({n: build(BaselineRow, {
        **b, "eta": judged[n].eta if n in judged else None,
        "p_beats": judged[n].p_beats if n in judged else None,
        "plug_in_eta": plug_in[n].eta, "loss": plug_in[n].loss})
        for n, b in rec.baselines.items()})

    seeds = eff_cfg.seeds
    arms = {name: {v: max(LOWER[v], math.floor(baselines[name].values[v] * (1 + 1e-12)))
                   for v in VARIABLES} for name in compared}
    arm_rows = _train_points(cfg, inputs, "efficiency-baseline", list(arms.values()), seeds)
    trained: dict[str, TrainedArm] = {}
    for (name, ints), rows in zip(arms.items(), arm_rows):
        runs = _Runs.of(rows)
        trained[name] = TrainedArm(**ints, cost=runs.cost, successes=runs.successes,
                                   env_steps=runs.env_steps, updates=runs.updates)
    # The candidate plan is trained along its path: around the costs where the judgement
    # copy predicts it meets each baseline, at the budget, and at each baseline's cost.
    targets = [baselines[n].cost / max(judged[n].eta, 1e-9) * f
               for n in compared if n in judged for f in eff_cfg.ladder]
    targets = sorted({*targets, budget, *(trained[n].cost for n in compared)})
    pts = _path_points(candidate.path, targets) if candidate.path is not None else []
    path = []
    for pt, rows in zip(pts, _train_points(cfg, inputs, "efficiency-optimal", pts, seeds)):
        runs = _Runs.of(rows)
        ci = iqm_ci(runs.successes, n_boot=2000, confidence=conf, rng=cfg.seed)
        path.append(PathPoint(budget=runs.cost, **pt, cost=runs.cost, env_steps=runs.env_steps,
                              updates=runs.updates, predicted_loss=float(problem.loss_at(pt)),
                              success_iqm=ci.estimate, ci_low=ci.low, ci_high=ci.high,
                              successes=runs.successes))
    path.sort(key=lambda p: p.cost)
    if len(path) < 2:
        raise ValueError(f"the plan's path gave {len(path)} distinct integer allocations to "
                         "train; widen efficiency.ladder")
    # Equal updates: the trainer's updates grow with E·t, not k, so the two arms at
    # equal cost differ in updates; each baseline is trained again with the plan's
    # number of updates at its equal-cost point (same recipe otherwise).
    equals = {name: min(path, key=lambda p, c=trained[name].cost: abs(math.log(p.cost / c)))
              for name in compared}
    same_runs = {name: _Runs.of(rows) for name, rows in zip(compared, _train_points(
        cfg, inputs, "efficiency-baseline",
        [{**trained[n].allocation(), "steps": equals[n].updates} for n in compared], seeds))}
    path_costs = [p.cost for p in path]
    path_steps = [p.env_steps for p in path]
    path_scores = [p.successes for p in path]
    comparisons = {}
    for name in compared:
        arm = trained[name]
        base_ci = iqm_ci(arm.successes, n_boot=2000, confidence=conf, rng=cfg.seed)
        real = realised_efficiency(path_costs, path_scores, arm.cost, arm.successes,
                                   n_boot=2000, confidence=conf, rng=cfg.seed)
        equal = equals[name]
        diff = iqm_difference_ci(equal.successes, arm.successes, n_boot=2000,
                                 confidence=conf, rng=cfg.seed)
        # Equal real compute: the same comparison with environment steps as the cost.
        by_steps = realised_efficiency(path_steps, path_scores, arm.env_steps, arm.successes,
                                       n_boot=2000, confidence=conf, rng=cfg.seed)
        same_diff = iqm_difference_ci(equal.successes, same_runs[name].successes,
                                      n_boot=2000, confidence=conf, rng=cfg.seed)
        c = judged[name]
        comparisons[name] = TrainedComparison(
            baseline=arm, baseline_success=base_ci,
            # The plan's η against this baseline judged on the judgement copy: the estimate
            # of η_deployed (the plan was not chosen on those data).
            predicted=PredictedEta(
                eta=c.eta, interval=tuple(c.eta_interval), bound=c.eta_bound,
                p_beats=c.p_beats, gain=c.gain, gain_interval=tuple(c.gain_interval),
                interval_method="percentile over the judgement copy's bootstrap laws",
                note=baselines[name].note),
            # The plug-in optimum judged by the fit that chose it (biased up).
            plug_in=PlugInEta(eta=plug_in[name].eta, interval=tuple(unc.eta_intervals[name]),
                              interval_method=unc.method),
            realised=real,
            intervals_overlap=real.overlaps(*c.eta_interval),
            predicted_covers_realised=(real.eta is not None
                                       and c.eta_interval[0] <= real.eta <= c.eta_interval[1]),
            equal_cost=EqualCost(E=equal.E, t=equal.t, k=equal.k, cost=equal.cost,
                                 success_iqm=equal.success_iqm, ci_low=equal.ci_low,
                                 ci_high=equal.ci_high, updates=equal.updates,
                                 baseline_updates=arm.updates),
            difference=diff, by_env_steps=by_steps,
            equal_updates=EqualUpdates(updates=equal.updates, difference=same_diff))
    seed_paper, plugged = comparisons[SEED_BASELINE], plug_in[SEED_BASELINE]
    seed_real = seed_paper.realised
    efficiency = EfficiencyOutcome(
        confidence=conf, strongest=strongest, recommendation=Decision.of(rec),
        candidate=candidate, baselines=baselines, comparisons=FrozenDict(comparisons),
        plan=PlanRecord.of(unc),
        # Kept for readers of earlier results.json: the trajectories-only comparison of the
        # plug-in optimum, as its own fit predicts it.
        predicted=SeedPaperPrediction(eta=plugged.eta, budget=budget,
                                      baseline_cost=plugged.cost,
                                      optimal_budget=plugged.optimal_cost,
                                      baseline_loss=plugged.loss),
        curve=tuple(build(CurveRow, r) for r in curve.rows()),
        curve_notes=tuple(curve.notes),
        realised=RealisedSummary(
            budget=budget, seeds=tuple(seeds), baseline=seed_paper.baseline,
            baseline_success=seed_paper.baseline_success, optimal_path=tuple(path),
            equal_cost=seed_paper.equal_cost, difference=seed_paper.difference,
            iso_loss_cost=seed_real.iso_cost, eta=seed_real.eta, eta_bound=seed_real.bound,
            eta_interval=seed_real.interval, note=seed_real.note))
    if cfg.figures:
        figure_eta(efficiency.curve, inputs.staging / "efficiency.png")
        figure_realised(efficiency, inputs.staging / "realised.png")
    return efficiency
