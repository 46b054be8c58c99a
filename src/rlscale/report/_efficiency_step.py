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
    FALLBACK_SCHEMA,
    SEED_BASELINE,
    VARIABLES,
    BaselineAtBudget,
    BaselineRow,
    Candidate,
    CurveRow,
    Decision,
    EfficiencyFallback,
    EfficiencyOutcome,
    EqualCost,
    EqualUpdates,
    FallbackDeployed,
    PathPoint,
    PlanRecord,
    PlugInBaseline,
    PlugInEta,
    PredictedEta,
    RealisedSummary,
    SeedPaperPrediction,
    TrainedArm,
    TrainedBaseline,
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

    def arm(self, allocation: Mapping[str, int]) -> TrainedArm:
        """These runs as the trained arm of ``allocation`` (a baseline's integers)."""
        return TrainedArm(**allocation, cost=self.cost, successes=self.successes,
                          env_steps=self.env_steps, updates=self.updates)


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


def _arm(values: Mapping[str, float]) -> dict[str, int]:
    """A baseline's integer allocation: each variable floored (its continuous value
    exhausts the budget; the tolerance keeps a value a rounding error below an integer,
    3.9999999999, from losing a unit), at least :data:`LOWER`."""
    return {v: max(LOWER[v], math.floor(values[v] * (1 + 1e-12))) for v in VARIABLES}


#: What a fallback's section omits of the full one, and why (``results.json``'s
#: ``efficiency.omitted``; the document says the same in words).
_OMITTED = {
    "comparisons": "no plan was chosen, so none was judged on a fission copy or trained "
                   "along a budget path: there is no predicted or realised η of a plan, and "
                   "no plan-against-baseline comparison at equal cost, by environment steps "
                   "or at equal updates",
    "realised": "the trajectories-only comparison of a trained plan: no plan was trained",
    "plan": "the plug-in plan's uncertainty over the bootstrap laws and its robust "
            "alternative were not computed: the recommendation could not judge any plan, "
            "and section 4's plug-in plan is not a recommendation",
    "predicted": "the plug-in plan's η as its own fit predicts it (biased up even when a "
                 "plan can be judged) is not shown when none could be",
    "curve": "the plug-in plan's predicted η along the budgets: likewise not shown",
    "curve_notes": "the curve's notes: no curve",
}


def _fallback(cfg: ReportConfig, inputs: Inputs, rec: Any) -> EfficiencyFallback:
    """The section when the recommendation falls back to the default baseline: the
    recommended baseline, and the seed paper's when it is another one, trained at the
    budget over the section's seeds, and the difference of their held-out success."""
    from rlscale.report._steps import _train_points
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    conf, seeds = cfg.fit.confidence, cfg.efficiency.seeds
    baselines = FrozenDict({n: build(BaselineAtBudget, b) for n, b in rec.baselines.items()})
    names = list(dict.fromkeys([rec.choice, SEED_BASELINE]))
    names = [n for n in names if n in baselines]  # the seed paper's may not be bought
    arms = {n: _arm(baselines[n].values) for n in names}
    trained = {}
    for (name, ints), rows in zip(arms.items(), _train_points(
            cfg, inputs, "efficiency-baseline", list(arms.values()), seeds)):
        runs = _Runs.of(rows)
        trained[name] = TrainedBaseline(
            arm=runs.arm(ints),
            success=iqm_ci(runs.successes, n_boot=2000, confidence=conf, rng=cfg.seed))
    versus = next((n for n in names if n != rec.choice), None)
    difference = None if versus is None else iqm_difference_ci(
        trained[rec.choice].arm.successes, trained[versus].arm.successes, n_boot=2000,
        confidence=conf, rng=cfg.seed)
    return EfficiencyFallback(
        schema=FALLBACK_SCHEMA, confidence=conf, strongest=None,
        recommendation=Decision.of(rec), candidate=Candidate.of(rec.candidate),
        baselines=baselines,
        deployed=FallbackDeployed(budget=float(cfg.allocation.budget), seeds=tuple(seeds),
                                  recommended=rec.choice, baselines=FrozenDict(trained),
                                  versus=versus, difference=difference),
        omitted=FrozenDict(_OMITTED))


def efficiency_step(cfg: ReportConfig,
                    inputs: Inputs) -> EfficiencyOutcome | EfficiencyFallback:
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

    When the recommendation falls back to the default baseline (its reason says why)
    there is no plan to judge or train: the fallback baseline is trained at the budget
    against the seed paper's baseline and the step returns an
    :class:`~rlscale.report._outcomes_efficiency.EfficiencyFallback` (no figure).

    For comparison the plug-in optimum of step 4 is judged by the fit that chose it
    (:func:`rlscale.optimize.plan_uncertainty`): that promise is biased up (the
    optimizer's curse) and is shown as such, never as the recommendation.
    """
    from rlscale.optimize import efficiency_curve, plan_uncertainty, realised_efficiency
    from rlscale.report._steps import _train_points
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    rec = _decide(cfg, inputs)
    if rec.status == "fallback":  # no plan to train: train what the fallback deploys
        return _fallback(cfg, inputs, rec)
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
    arms = {name: _arm(baselines[name].values) for name in compared}
    arm_rows = _train_points(cfg, inputs, "efficiency-baseline", list(arms.values()), seeds)
    trained: dict[str, TrainedArm] = {}
    for (name, ints), rows in zip(arms.items(), arm_rows):
        trained[name] = _Runs.of(rows).arm(ints)
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
