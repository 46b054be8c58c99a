"""The report's steps: each calls the library and returns its outcome.

A step is ``step(cfg, inputs) -> outcome`` (:mod:`rlscale.report._outcomes`): it
reads the frozen configuration and the earlier steps' outcomes, writes its files
into ``inputs.staging`` and returns what it found; the outcome's ``as_dict()`` is
its ``results.json`` section.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._atomic import write_text_atomic
from rlscale.report._config import AXES, SUBSTITUTE
from rlscale.report._config_tree import ReportConfig
from rlscale.report._efficiency_step import efficiency_step
from rlscale.report._figures import figure_allocation, figure_fits
from rlscale.report._next_runs import next_runs_step
from rlscale.report._outcomes import (
    AllocationOutcome,
    FitOutcome,
    InferenceOutcome,
    Inputs,
    ProofRow,
    ProofsOutcome,
    Resources,
    RewardLawOutcome,
    SweepOutcome,
    SyntheticOutcome,
)
from rlscale.report._outcomes_trainer_law import TrainerLawData, TrainerLawOutcome
from rlscale.report._sweep_runs import planned_runs
from rlscale.report._typed import FrozenDict, build

__all__ = ["INDEPENDENT", "SIDE_ORDER", "STEPS", "Shared", "TrainPoint", "prune_results",
           "run_spec"]

#: The runner's resources (the name earlier code and tests know).
Shared = Resources


# -- 1. reward law -----------------------------------------------------------

def reward_law_step(cfg: ReportConfig, inputs: Inputs) -> RewardLawOutcome:
    from rlscale.verification._gaussian_reward_law import verify_reward_law

    rep = verify_reward_law(cfg.reward_law.mode, out=inputs.staging / "reward-law",
                            rng=cfg.seed, figures=cfg.figures, progress=False)
    out = build(RewardLawOutcome, rep.as_dict())
    # The files relative to the report (inside its reward-law/).
    return replace(out, files={k: f"reward-law/{Path(v).name}" for k, v in out.files.items()})


def reward_law_trainer_step(cfg: ReportConfig, inputs: Inputs) -> TrainerLawOutcome:
    """The reward law in the RL trainer (:mod:`rlscale.verification._trainer_reward_law`): its
    :class:`~rlscale.verification._trainer_reward_law.TrainerRewardLawReport`, typed."""
    if not cfg.reward_law_trainer.enabled:
        return TrainerLawOutcome(enabled=False)
    from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

    rep = verify_trainer_reward_law(cfg.reward_law_trainer.mode,
                                    out=inputs.staging / "reward-law" / "trainer",
                                    rng=cfg.seed, figures=cfg.figures, progress=False,
                                    jobs=_worker_jobs())
    data = build(TrainerLawData, rep.as_dict())
    # The files relative to the report (inside its reward-law/trainer/).
    files = FrozenDict({k: f"reward-law/trainer/{Path(v).name}" for k, v in data.files.items()})
    return TrainerLawOutcome(enabled=True, report=replace(data, files=files))


def _worker_jobs() -> int:
    """Worker processes for a step's joblib loop: 2 on a multi-core machine, but 1 in the
    report's side process (a daemonic pool worker, where joblib cannot start workers and
    would fall back to 1 with a warning).  Results agree to rounding across ``jobs``."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return 1
    return min(2, os.cpu_count() or 1)


def sweep_step(cfg: ReportConfig, inputs: Inputs) -> SweepOutcome:
    from rlscale.sweep._run import parse_spec, summarise

    spec = parse_spec(cfg.sweep_spec())
    rows = run_spec(spec, inputs.staging / "sweep.csv", inputs.progress, inputs.resources)
    out = SweepOutcome(runs=len(rows), summary=tuple(summarise(rows,
                                                               confidence=cfg.fit.confidence)),
                       rows=tuple(rows), seeds=len(cfg.sweep.seeds),
                       untrained_success=math.nan, optimal_success=math.nan)
    # Context for every success number: the untrained policy and the optimum.
    return replace(out, untrained_success=float(np.mean(out.column("untrained_success"))),
                   optimal_success=float(np.mean(out.column("optimal_success"))))


def fit_step(cfg: ReportConfig, inputs: Inputs) -> FitOutcome:
    from rlscale.optimize import fit_law

    sweep = inputs.sweep
    data = sweep.fit_data(AXES)
    f = cfg.fit
    # The held-out tasks' exact optimum (value iteration) bounds the law: no allocation can
    # push the loss below 1 − optimal success, so neither may the fitted floor.
    floor_min = 1.0 - float(np.max(sweep.column("optimal_success")))
    fit = fit_law(data, law=f.law, axes=list(AXES), target="loss",
                  bootstrap=f.bootstrap, confidence=f.confidence, starts=f.starts,
                  floor=(floor_min, math.inf), seed=cfg.seed,
                  n_jobs=inputs.resources.jobs)
    centre = cfg.sweep.base.point()
    elasticities = {k: float(v) for k, v in fit.law.elasticities(centre).items()}
    ordering = sorted(elasticities, key=elasticities.get, reverse=True)
    # How sure the ordering is: the share of bootstrap laws that order each pair so.
    laws = fit.bootstrap_laws()
    boot = [law.elasticities(centre) for law in laws]
    pairs = {f"{a} > {b}": (float(np.mean([e[a] > e[b] for e in boot])) if boot else None)
             for i, a in enumerate(ordering) for b in ordering[i + 1:]}
    if cfg.figures:
        figure_fits(fit, sweep.summary, cfg, inputs.staging / "fits.png", laws=laws)
    return FitOutcome(result=fit, centre=centre, floor_min=floor_min, elasticities=elasticities,
                      impact_ordering=tuple(ordering), ordering_probability=pairs,
                      laws=tuple(laws))


def allocation_step(cfg: ReportConfig, inputs: Inputs) -> AllocationOutcome:
    from scipy import stats

    from rlscale.optimize import AllocationProblem, allocate
    from rlscale.theory import (
        SynthesisMethod,
        critical_synthetic_ratio,
        optimal_filter_threshold,
    )

    law = inputs.fit.result.law
    costs = cfg.costs
    cost = costs.text()
    problem = AllocationProblem(law, cost, cfg.allocation.nested_bounds(), substitute=SUBSTITUTE)
    budget = cfg.allocation.budget
    plan = problem.allocate(budget)
    budgets = np.geomspace(*cfg.allocation.budget_grid())
    curve = problem.sweep(budgets)

    # Synthetic environments while real ones are scarce.  At the plan's t*, k*
    # an environment costs its unit cost plus the training it carries, so the
    # law restricted to E is a one-axis additive law under a linear cost: the
    # form synthetic allocation takes (and the critical ratio's closed form).
    syn = cfg.synthesis
    real_cap = syn.real_environments
    t_s, k_s = plan.values["t"], plan.values["k"]
    carried = costs.task * t_s + costs.trajectory * t_s * k_s
    env_law = law.fix(tasks_per_environment=t_s, trajectories_per_task=k_s)
    real_cost = costs.environment + carried
    linear = f"{real_cost!r}*environments"
    method = SynthesisMethod("environments", unit_cost=syn.unit_cost + carried,
                             rho=syn.rho, saturation=syn.saturation, kind="relative",
                             name="synthetic_environments")
    # Real environments capped at what is available (the other bounds as the plan's).
    bounds = {**cfg.allocation.nested_bounds(),
              "E": (1.0, min(real_cap, cfg.allocation.bounds.E))}
    real_only = AllocationProblem(law, cost, bounds, substitute=SUBSTITUTE).allocate(budget)
    with_syn = allocate(env_law, linear, budget, {"environments": (1.0, real_cap)},
                        synthesis=[method])
    critical = critical_synthetic_ratio(method, real_cost=real_cost)
    chosen_ratio = with_syn.values[method.name] / with_syn.values["environments"]
    quality = stats.beta(syn.quality_a, syn.quality_b)
    threshold = optimal_filter_threshold(quality, gen_cost=syn.gen_cost,
                                         train_cost=syn.train_cost)
    if cfg.figures:
        figure_allocation(curve, budgets, inputs.staging / "allocation.png")
    for result in (plan, *curve, real_only, with_syn):
        # Resolve what the results compute lazily now, before step 5 re-solves the problem
        # (the values results.json holds are those of this step, as before).
        result.as_dict()
    synthetic = SyntheticOutcome(
        method=method, real_unit_cost=real_cost, t=t_s, k=k_s, real_environments=real_cap,
        real_only=real_only, with_synthetic=with_syn, critical_ratio=critical,
        solver_ratio=chosen_ratio, quality_filter=threshold)
    return AllocationOutcome(cost=cost, budget=budget, plan=plan, curve=tuple(curve),
                             synthetic=synthetic, problem=problem)


@dataclass(frozen=True)
class TrainPoint:
    """A point to train: ``E`` environments, ``t`` tasks each, ``k`` trajectories per
    task; ``steps`` fixes the number of optimiser updates (else the trainer's rule)."""

    E: int
    t: int
    k: int
    steps: int | None = field(default=None, metadata={"optional": True})


def _train_points(cfg: ReportConfig, inputs: Inputs, name: str,
                  points: Sequence[TrainPoint | Mapping[str, int]],
                  seeds: tuple[int, ...], **train: Any) -> list[list[dict[str, Any]]]:
    """Train each of ``points`` (:class:`TrainPoint`, or its plain ``{"E", "t", "k"}``
    with an optional ``"steps"``) over ``seeds``: one sweep for them all.

    ``train`` overrides trainer fields for every point, a point's own ``steps``
    for that point (``steps`` fixes the number of updates).
    All points go out at once, so with two workers both stay busy across
    points instead of one idling at the end of each point's three seeds (13
    sweeps of 3 runs became 3 sweeps; the runs and their rows are the same,
    seeded per configuration); with one (the report on two cores) they run in
    order in this process.  Resumable like :func:`run_spec`: runs already in
    ``name.csv`` are not trained again.  Returns each point's rows in seed order.
    """
    from rlscale.sweep._pool import execute
    from rlscale.sweep._run import _render, by_run_id, parse_spec, read_results

    shared = inputs.resources
    path = inputs.staging / f"{name}.csv"
    typed = [p if isinstance(p, TrainPoint) else build(TrainPoint, p) for p in points]
    runs = [planned_runs(parse_spec({
        "design": "grid", "axes": {"environments": [p.E], "tasks_per_environment": [p.t],
                                   "trajectories_per_task": [p.k]},
        "seeds": list(seeds), "algorithms": list(cfg.sweep.algorithms[:1]),
        "train": {**cfg.train_fields(), **train,
                  **({} if p.steps is None else {"steps": p.steps})}}))
        for p in typed]
    ids = shared.run_ids.setdefault(path, {})
    for group in runs:
        ids.update(dict.fromkeys(r.run_id for r in group))
    rows = read_results(path) if path.exists() else []
    if not rows:
        write_text_atomic(path, _render([]))  # claim the path with a valid empty table
    done = by_run_id(rows)
    pending = list({r.run_id: r.config for group in runs for r in group
                    if r.run_id not in done}.values())
    from tqdm import tqdm

    with tqdm(total=len(pending), desc=name, unit="run", disable=not inputs.progress) as bar:
        # Shared.jobs: one worker fewer while the report's side process holds a core.
        for chunk in execute(pending, shared.jobs):
            rows.extend(chunk.rows)
            write_text_atomic(path, _render(rows))  # once per chunk, as run_sweep
            bar.update(len(chunk.rows))
    by_id = by_run_id(rows)
    return [[by_id[r.run_id] for r in group] for group in runs]


def run_spec(spec, path: Path, progress: bool, shared: Resources) -> list[dict[str, Any]]:
    """Run a sweep spec (resuming ``path``); return only this spec's rows.

    The run ids are recorded so that runs of an earlier, interrupted report
    with another configuration are pruned from ``path`` before publishing,
    and the file is rewritten in the spec's order.
    """
    from rlscale.sweep._run import by_run_id, run_sweep

    wanted = [r.run_id for r in planned_runs(spec)]
    shared.run_ids.setdefault(path, {}).update(dict.fromkeys(wanted))
    rows = run_sweep(spec, path, jobs=shared.jobs, progress=progress)
    # Parallel runs finish in any order, and a fit's result can depend on the
    # order of its rows: return them in the spec's order so that the same
    # seed gives the same report.
    by_id = by_run_id(rows)
    return [by_id[i] for i in wanted]


def prune_results(path: Path, run_ids: dict[str, None]) -> None:
    """Rewrite a sweep results file with only ``run_ids``, in that order.

    Drops the runs of an earlier, interrupted report with another
    configuration, and replaces completion order (which varies with
    parallel workers) by the spec's order.
    """
    from rlscale.sweep._run import _render, by_run_id, read_results

    by_id = by_run_id(read_results(path))
    write_text_atomic(path, _render([by_id[i] for i in run_ids if i in by_id]))


def proofs_step(cfg: ReportConfig, inputs: Inputs) -> ProofsOutcome:
    if not cfg.proofs.enabled:
        return ProofsOutcome(enabled=False, results=())
    from rlscale.proofs import check_proofs

    results = check_proofs()
    return ProofsOutcome(enabled=True, all_hold=all(r.passed for r in results),
                         results=tuple(build(ProofRow, r.as_dict()) for r in results))


def inference_step(cfg: ReportConfig, inputs: Inputs) -> InferenceOutcome:
    """Inference-budget plans for a trained agent.

    (:mod:`rlscale.verification._inference_grounding`)
    """
    inf = cfg.inference
    if not inf.enabled:
        return InferenceOutcome(enabled=False)
    from rlscale.verification._inference_grounding import (
        GroundingConfig,
        ground_inference,
        write_figures,
    )

    grounding = GroundingConfig(environments=inf.environments, epochs=inf.epochs,
                                job_tasks=inf.job_tasks, episodes=inf.episodes, seed=cfg.seed)
    result = ground_inference(grounding)
    files = ([Path(f).name for f in write_figures(result, inputs.staging)] if cfg.figures
             else [])
    return build(InferenceOutcome, {"enabled": True, **result.as_dict(), "files": files})


#: The steps in order, with the progress bar's labels.
STEPS = (
    ("reward law", reward_law_step),
    ("reward law in the trainer", reward_law_trainer_step),
    ("trainer sweep", sweep_step),
    ("law fit", fit_step),
    ("allocation", allocation_step),
    ("efficiency", efficiency_step),
    ("what to run next", next_runs_step),  # issue 23: src/rlscale/report/_next_runs.py
    ("inference budget", inference_step),
    ("proofs", proofs_step),
)

#: Steps that read only the configuration and write only their own files and
#: section: :func:`rlscale.report.run_report` shares them out between a second
#: process and the main process (after its chain sweep → fit → allocation →
#: efficiency).
INDEPENDENT = frozenset({"reward law", "reward law in the trainer", "inference budget",
                         "proofs"})

#: The order in which the independent steps are claimed: longest first (CPU
#: seconds measured on a 2-core machine: about 20, 10, 7 and 4), so the last
#: step to finish is a short one.
SIDE_ORDER = ("reward law in the trainer", "reward law", "proofs", "inference budget")
