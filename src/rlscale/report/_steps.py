"""The report's steps: each calls the library and records plain data.

A step is ``step(config, staging, sections, shared, progress)``: it reads the
configuration, writes its files into ``staging``, stores its plain-data
section in ``sections[name]`` (what ``results.json`` holds) and hands the live
objects later steps need through ``shared`` (a :class:`Shared`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._atomic import write_text_atomic
from rlscale.report._config import AXES, SUBSTITUTE, cost_text, nested_bounds, train_fields
from rlscale.report._figures import (
    figure_allocation,
    figure_eta,
    figure_fits,
    figure_realised,
)
from rlscale.report._next_runs import next_runs_step

__all__ = ["INDEPENDENT", "SIDE_ORDER", "STEPS", "Shared", "prune_results", "run_spec"]


@dataclass
class Shared:
    """Live objects one step hands to later ones (never written to ``results.json``).

    Attributes
    ----------
    fit : rlscale.optimize.FitResult or None
        The law fitted in step 3; steps 4 and 5 optimise and compare with it.
    laws : list
        ``fit.bootstrap_laws()``, rebuilt once (step 3's ordering and band,
        step 5's plan uncertainty).
    problem : rlscale.optimize.AllocationProblem or None
        The compiled allocation problem of step 4, re-solved by step 5.
    run_ids : dict
        Per results file, the run ids this report asked for, in spec order:
        runs of an interrupted report with another configuration are pruned
        from the file before publishing.
    jobs : int
        Worker processes for the training sweeps and the law fit's bootstrap.
        The report sets it to the cores its side process leaves free: on two
        cores that is 1, and the sweeps run in the main process, because two
        worker processes beside the side process only add their start-up,
        imports and pickling (``trainer sweep`` 3.9 → 2.2 CPU s measured in
        ``rlscale report --quick``) while the two cores are busy anyway.
    """

    fit: Any = None
    laws: list[Any] = field(default_factory=list)
    problem: Any = None
    run_ids: dict[Path, dict[str, None]] = field(default_factory=dict)
    jobs: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))


# -- 1. reward law -----------------------------------------------------------

def reward_law_step(config, staging, sections, shared, progress) -> None:
    from rlscale.verification._gaussian_reward_law import verify_reward_law

    rep = verify_reward_law(config["reward_law"]["mode"], out=staging / "reward-law",
                            rng=config["seed"], figures=True, progress=False)
    data = rep.as_dict()
    data["files"] = {k: f"reward-law/{Path(v).name}" for k, v in data["files"].items()}
    sections["reward_law"] = data


def reward_law_trainer_step(config, staging, sections, shared, progress) -> None:
    """The reward law in the RL trainer (:mod:`rlscale.verification._trainer_reward_law`): its
    :class:`~rlscale.verification._trainer_reward_law.TrainerRewardLawReport`, as plain data."""
    cfg = config["reward_law_trainer"]
    if not cfg["enabled"]:
        sections["reward_law_trainer"] = {"enabled": False}
        return
    from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

    rep = verify_trainer_reward_law(cfg["mode"], out=staging / "reward-law" / "trainer",
                                    rng=config["seed"], figures=True, progress=False,
                                    jobs=_worker_jobs())
    data = rep.as_dict()
    data["files"] = {k: f"reward-law/trainer/{Path(v).name}" for k, v in data["files"].items()}
    sections["reward_law_trainer"] = {"enabled": True, **data}


def _worker_jobs() -> int:
    """Worker processes for a step's joblib loop: 2 on a multi-core machine, but 1 in the
    report's side process (a daemonic pool worker, where joblib cannot start workers and
    would fall back to 1 with a warning).  Results agree to rounding across ``jobs``."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return 1
    return min(2, os.cpu_count() or 1)


def sweep_step(config, staging, sections, shared, progress) -> None:
    from rlscale.sweep._run import parse_spec, summarise

    spec = parse_spec({**config["sweep"], "train": train_fields(config)})
    rows = run_spec(spec, staging / "sweep.csv", progress, shared)
    sections["sweep"] = {
        "runs": len(rows), "summary": summarise(rows, confidence=config["fit"]["confidence"]),
        "rows": rows, "seeds": len(config["sweep"]["seeds"]),
        # Context for every success number: the untrained policy and the optimum.
        "untrained_success": float(np.mean([r["untrained_success"] for r in rows])),
        "optimal_success": float(np.mean([r["optimal_success"] for r in rows]))}


def fit_step(config, staging, sections, shared, progress) -> None:
    from rlscale.optimize import fit_law

    rows = sections["sweep"]["rows"]
    data = {axis: np.array([r[axis] for r in rows], dtype=float) for axis in AXES}
    data["loss"] = np.array([r["loss"] for r in rows], dtype=float)
    f = config["fit"]
    # The held-out tasks' exact optimum (value iteration) bounds the law: no allocation can
    # push the loss below 1 − optimal success, so neither may the fitted floor.
    floor_min = 1.0 - max(r["optimal_success"] for r in rows)
    fit = fit_law(data, law=f["law"], axes=list(AXES), target="loss",
                  bootstrap=f["bootstrap"], confidence=f["confidence"], starts=f["starts"],
                  floor=(floor_min, math.inf), seed=config["seed"],
                  n_jobs=shared.jobs)
    centre = {axis: config["sweep"]["base"][axis] for axis in AXES}
    elasticities = {k: float(v) for k, v in fit.law.elasticities(centre).items()}
    ordering = sorted(elasticities, key=elasticities.get, reverse=True)
    # How sure the ordering is: the share of bootstrap laws that order each pair so.
    laws = fit.bootstrap_laws()
    boot = [law.elasticities(centre) for law in laws]
    pairs = {f"{a} > {b}": (float(np.mean([e[a] > e[b] for e in boot])) if boot else None)
             for i, a in enumerate(ordering) for b in ordering[i + 1:]}
    sections["fit"] = {"result": fit.as_dict(), "centre": centre, "floor_min": floor_min,
                       "elasticities": elasticities, "impact_ordering": ordering,
                       "ordering_probability": pairs}
    shared.fit, shared.laws = fit, laws
    figure_fits(fit, sections["sweep"]["summary"], config, staging / "fits.png", laws=laws)


def allocation_step(config, staging, sections, shared, progress) -> None:
    from scipy import stats

    from rlscale.optimize import AllocationProblem, allocate
    from rlscale.theory import (
        SynthesisMethod,
        critical_synthetic_ratio,
        optimal_filter_threshold,
    )

    law = shared.fit.law
    costs = config["costs"]
    cost = cost_text(costs)
    problem = AllocationProblem(law, cost, nested_bounds(config), substitute=SUBSTITUTE)
    plan = problem.allocate(config["allocation"]["budget"])
    lo, hi, count = config["allocation"]["budgets"]
    budgets = np.geomspace(lo, hi, count)
    curve = problem.sweep(budgets)
    shared.problem = problem

    # Synthetic environments while real ones are scarce.  At the plan's t*, k*
    # an environment costs its unit cost plus the training it carries, so the
    # law restricted to E is a one-axis additive law under a linear cost: the
    # form synthetic allocation takes (and the critical ratio's closed form).
    syn = config["synthesis"]
    budget = config["allocation"]["budget"]
    real_cap = syn["real_environments"]
    t_s, k_s = plan.values["t"], plan.values["k"]
    carried = costs["task"] * t_s + costs["trajectory"] * t_s * k_s
    env_law = law.fix(tasks_per_environment=t_s, trajectories_per_task=k_s)
    real_cost = costs["environment"] + carried
    linear = f"{real_cost!r}*environments"
    method = SynthesisMethod("environments", unit_cost=syn["unit_cost"] + carried,
                             rho=syn["rho"], saturation=syn["saturation"], kind="relative",
                             name="synthetic_environments")
    bounds = nested_bounds(config)
    bounds["E"] = (1.0, min(real_cap, bounds["E"][1]))
    real_only = AllocationProblem(law, cost, bounds, substitute=SUBSTITUTE).allocate(budget)
    with_syn = allocate(env_law, linear, budget, {"environments": (1.0, real_cap)},
                        synthesis=[method])
    critical = critical_synthetic_ratio(method, real_cost=real_cost)
    chosen_ratio = with_syn.values[method.name] / with_syn.values["environments"]
    quality = stats.beta(syn["quality_a"], syn["quality_b"])
    threshold = optimal_filter_threshold(quality, gen_cost=syn["gen_cost"],
                                         train_cost=syn["train_cost"])
    sections["allocation"] = {
        "cost": cost, "budget": budget, "plan": plan.as_dict(),
        "curve": [a.as_dict() for a in curve],
        "synthetic": {
            "method": method.as_dict(), "real_unit_cost": real_cost, "t": t_s, "k": k_s,
            "real_environments": real_cap,
            "real_only": real_only.as_dict(), "with_synthetic": with_syn.as_dict(),
            "critical_ratio": critical.as_dict(), "solver_ratio": chosen_ratio,
            "quality_filter": threshold.as_dict(),
        },
    }
    figure_allocation(curve, budgets, staging / "allocation.png")


def _train_points(config, staging, shared, name: str, points: list[dict[str, int]],
                  seeds: list[int], progress: bool, **train: Any) -> list[list[dict[str, Any]]]:
    """Train each of ``points`` (``{"E", "t", "k"}``) over ``seeds``: one sweep for them all.

    ``train`` overrides trainer fields for every point, a point's own ``"steps"``
    for that point (``steps`` fixes the number of updates).
    All points go out at once, so with two workers both stay busy across
    points instead of one idling at the end of each point's three seeds (13
    sweeps of 3 runs became 3 sweeps; the runs and their rows are the same,
    seeded per configuration); with one (the report on two cores) they run in
    order in this process.  Resumable like :func:`run_spec`: runs already in
    ``name.csv`` are not trained again.  Returns each point's rows in seed order.
    """
    from rlscale.sweep._pool import execute
    from rlscale.sweep._run import _render, expand, parse_spec, read_results

    path = staging / f"{name}.csv"
    runs = [expand(parse_spec({
        "design": "grid", "axes": {"environments": [p["E"]], "tasks_per_environment": [p["t"]],
                                   "trajectories_per_task": [p["k"]]},
        "seeds": list(seeds), "algorithms": config["sweep"]["algorithms"][:1],
        "train": {**train_fields(config), **train, **{k: p[k] for k in ("steps",) if k in p}}}))
        for p in points]
    ids = shared.run_ids.setdefault(path, {})
    for group in runs:
        ids.update(dict.fromkeys(r["run_id"] for r in group))
    rows = read_results(path) if path.exists() else []
    if not rows:
        write_text_atomic(path, _render([]))  # claim the path with a valid empty table
    done = {r["run_id"] for r in rows}
    pending = list({r["run_id"]: r["config"] for group in runs for r in group
                    if r["run_id"] not in done}.values())
    from tqdm import tqdm

    with tqdm(total=len(pending), desc=name, unit="run", disable=not progress) as bar:
        # Shared.jobs: one worker fewer while the report's side process holds a core.
        for chunk in execute(pending, shared.jobs):
            rows.extend(chunk.rows)
            write_text_atomic(path, _render(rows))  # once per chunk, as run_sweep
            bar.update(len(chunk.rows))
    by_id = {r["run_id"]: r for r in rows}
    return [[by_id[r["run_id"]] for r in group] for group in runs]


def run_spec(spec, path: Path, progress: bool, shared: Shared) -> list[dict[str, Any]]:
    """Run a sweep spec (resuming ``path``); return only this spec's rows.

    The run ids are recorded so that runs of an earlier, interrupted report
    with another configuration are pruned from ``path`` before publishing,
    and the file is rewritten in the spec's order.
    """
    from rlscale.sweep._run import expand, run_sweep

    wanted = [r["run_id"] for r in expand(spec)]
    shared.run_ids.setdefault(path, {}).update(dict.fromkeys(wanted))
    rows = run_sweep(spec, path, jobs=shared.jobs, progress=progress)
    # Parallel runs finish in any order, and a fit's result can depend on the
    # order of its rows: return them in the spec's order so that the same
    # seed gives the same report.
    by_id = {r["run_id"]: r for r in rows}
    return [by_id[i] for i in wanted]


def prune_results(path: Path, run_ids: dict[str, None]) -> None:
    """Rewrite a sweep results file with only ``run_ids``, in that order.

    Drops the runs of an earlier, interrupted report with another
    configuration, and replaces completion order (which varies with
    parallel workers) by the spec's order.
    """
    from rlscale.sweep._run import _render, read_results

    by_id = {r["run_id"]: r for r in read_results(path)}
    write_text_atomic(path, _render([by_id[i] for i in run_ids if i in by_id]))


def efficiency_step(config, staging, sections, shared, progress) -> None:
    """Predicted and realised iso-loss efficiency at the configured budget.

    Baselines (:func:`rlscale.optimize.compare_baselines`): the budget ``B``
    spent on one of E, t, k alone (the others at the sweep's centre) or on
    all three in proportion, inside the allocation bounds.  The headline is
    η against the **strongest** of them; trajectories alone (the seed
    paper's comparison) is shown beside it.

    Predicted: ``eta = B_baseline / B_opt`` under the fitted law, with an
    interval from the bootstrap laws (:func:`rlscale.optimize.plan_uncertainty`,
    which also gives the robust plan).  Realised: each of those two baselines
    is trained at its (integer) allocation; the optimal allocation is trained
    along its budget path (``B_opt`` times the ``ladder`` factors, and at
    ``B``); ``B_opt`` is read off where that measured path reaches the
    baseline's held-out success, with a bootstrap interval over seeds
    (:func:`rlscale.optimize.realised_efficiency`).

    Measured here (``--quick``, 2 cores shared at load 4–8, CPU seconds with
    the workers): 7.0–7.7 s with one worker (the report on two cores), against
    7.9–9.7 s before the warm-started η bootstrap and the batched training;
    with two workers 7–9 s, of which 6–7.5 s are the 39 training runs (three
    sweeps: baselines, the plan's path, equal updates) and 1.0–1.5 s this
    process (1.6–2.1 s before).
    """
    from rlscale.optimize import efficiency_curve, plan_uncertainty, realised_efficiency
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    problem = shared.problem
    fit = shared.fit
    law = fit.law
    base = config["sweep"]["base"]
    centre = {SUBSTITUTE[a]: float(base[a]) for a in AXES}
    e_b, t_b = base["environments"], base["tasks_per_environment"]
    fixed = {"E": float(e_b), "t": float(t_b)}
    bounds = nested_bounds(config)
    budget = float(config["allocation"]["budget"])
    conf = config["fit"]["confidence"]
    eff_cfg = config["efficiency"]
    lo, hi, count = config["allocation"]["budgets"]
    curve = efficiency_curve(law, problem.cost, np.geomspace(lo, hi, count), scaled="k",
                             fixed=fixed, bounds=bounds, substitute=SUBSTITUTE)
    laws = shared.laws
    if len(laws) > eff_cfg["plan_laws"]:  # an evenly spaced subset, deterministic
        laws = [laws[i] for i in np.linspace(0, len(laws) - 1, eff_cfg["plan_laws"]).astype(int)]
    if len(laws) < 2:
        raise ValueError(f"the plan's uncertainty needs at least 2 usable bootstrap laws; the "
                         f"fit gave {len(laws)} (raise fit.bootstrap)")
    unc = plan_uncertainty(law, laws, cost_text(config["costs"]), budget, centre, bounds,
                           substitute=SUBSTITUTE, confidence=conf)
    point = unc.point
    b_opt_k = point.baselines["k only"]["optimal_cost"]
    compared = dict.fromkeys(["k only", point.strongest])

    seeds = eff_cfg["seeds"]
    trained: dict[str, Any] = {}
    lower = {"E": 1, "t": 1, "k": 2}
    arms = {name: {v: max(lower[v], math.floor(point.baselines[name]["values"][v]
                                               * (1 + 1e-12))) for v in ("E", "t", "k")}
            for name in compared}
    arm_rows = _train_points(config, staging, shared, "efficiency-baseline",
                             list(arms.values()), seeds, progress)
    for (name, ints), rows in zip(arms.items(), arm_rows):
        trained[name] = {**ints, "cost": float(rows[0]["cost"]),
                         "successes": np.array([r["success"] for r in rows]),
                         "env_steps": float(np.mean([r["env_steps"] for r in rows])),
                         "updates": int(rows[0]["updates"])}
    # The plan is trained along its path up to the iso-loss budget of each baseline.
    # and at each baseline's own cost, for the comparison at equal cost.
    targets = [point.baselines[n]["optimal_cost"] for n in compared]
    path_budgets = sorted({*(t * f for t in targets for f in eff_cfg["ladder"]), budget,
                           *(trained[n]["cost"] for n in compared)})
    path = []
    plans = [(b, a) for b in path_budgets if (a := problem.allocate(b)).rounded is not None]
    pts = [{k: int(v) for k, v in a.rounded.items()} for _, a in plans]
    for (b, a), pt, rows in zip(plans, pts, _train_points(
            config, staging, shared, "efficiency-optimal", pts, seeds, progress)):
        succ = [r["success"] for r in rows]
        ci = iqm_ci(succ, n_boot=2000, confidence=conf, rng=config["seed"])
        path.append({"budget": b, **pt, "cost": float(rows[0]["cost"]),
                     "env_steps": float(np.mean([r["env_steps"] for r in rows])),
                     "updates": int(rows[0]["updates"]),
                     "predicted_loss": a.rounded_loss, "success_iqm": ci.estimate,
                     "ci_low": ci.low, "ci_high": ci.high, "successes": succ})
    if not path:
        raise ValueError(f"no budget of the efficiency path {path_budgets} has an integer "
                         "allocation inside allocation.bounds; widen the bounds or "
                         "efficiency.ladder")
    # Equal updates: the trainer's updates grow with E·t, not k, so the two arms at
    # equal cost differ in updates; each baseline is trained again with the plan's
    # number of updates at its equal-cost point (same recipe otherwise).
    equals = {name: min(path, key=lambda p, c=trained[name]["cost"]: abs(math.log(p["cost"] / c)))
              for name in compared}
    same_rows = dict(zip(compared, _train_points(
        config, staging, shared, "efficiency-baseline",
        [{**{v: trained[n][v] for v in ("E", "t", "k")}, "steps": equals[n]["updates"]}
         for n in compared], seeds, progress)))
    comparisons = {}
    for name in compared:
        arm = trained[name]
        base_ci = iqm_ci(arm["successes"], n_boot=2000, confidence=conf, rng=config["seed"])
        real = realised_efficiency([p["cost"] for p in path], [p["successes"] for p in path],
                                   arm["cost"], arm["successes"], n_boot=2000, confidence=conf,
                                   rng=config["seed"])
        equal = equals[name]
        diff = iqm_difference_ci(equal["successes"], arm["successes"], n_boot=2000,
                                 confidence=conf, rng=config["seed"])
        # Equal real compute: the same comparison with environment steps as the cost.
        by_steps = realised_efficiency([p["env_steps"] for p in path],
                                       [p["successes"] for p in path], arm["env_steps"],
                                       arm["successes"], n_boot=2000, confidence=conf,
                                       rng=config["seed"])
        same_diff = iqm_difference_ci(equal["successes"], [r["success"] for r in same_rows[name]],
                                      n_boot=2000, confidence=conf, rng=config["seed"])
        pred_lo, pred_hi = unc.eta_intervals[name]
        comparisons[name] = {
            "baseline": {k: arm[k] for k in ("E", "t", "k", "cost")},
            "baseline_success": base_ci.as_dict(),
            "predicted": {"eta": point.baselines[name]["eta"], "interval": [pred_lo, pred_hi],
                          "interval_method": unc.method,
                          "interval_percentile": list(unc.eta_interval(name, "percentile")),
                          "loss": point.baselines[name]["loss"],
                          "optimal_budget": point.baselines[name]["optimal_cost"],
                          "note": point.baselines[name]["note"]},
            "realised": real.as_dict(),
            "intervals_overlap": real.overlaps(pred_lo, pred_hi),
            "predicted_covers_realised": pred_lo <= real.eta <= pred_hi,
            "equal_cost": {"E": equal["E"], "t": equal["t"], "k": equal["k"],
                           "cost": equal["cost"], "success_iqm": equal["success_iqm"],
                           "ci_low": equal["ci_low"], "ci_high": equal["ci_high"],
                           "updates": equal["updates"], "baseline_updates": arm["updates"]},
            "difference": diff.as_dict(),
            "by_env_steps": by_steps.as_dict(),
            "equal_updates": {"updates": equal["updates"], "difference": same_diff.as_dict()},
        }
    k_only = comparisons["k only"]
    sections["efficiency"] = {
        "confidence": conf,
        "strongest": point.strongest,
        "baselines": point.baselines,
        "comparisons": comparisons,
        "plan": {"allocation_intervals": unc.allocation_intervals,
                 "loss_band": list(unc.loss_band), "n_laws": unc.n_laws,
                 "robust": unc.robust.as_dict(), "robust_gain": unc.robust_gain,
                 "robust_point_cost": unc.robust_point_cost, "notes": list(unc.notes),
                 "interval_method": unc.method, "n_skipped": unc.n_skipped},
        # Kept for readers of earlier results.json: the trajectories-only comparison.
        "predicted": {"eta": k_only["predicted"]["eta"], "budget": budget,
                      "baseline_cost": point.baselines["k only"]["cost"],
                      "optimal_budget": b_opt_k, "baseline_loss": k_only["predicted"]["loss"]},
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
    figure_eta(curve.rows(), staging / "efficiency.png")
    figure_realised(sections["efficiency"], staging / "realised.png")


def proofs_step(config, staging, sections, shared, progress) -> None:
    if not config["proofs"]["enabled"]:
        sections["proofs"] = {"enabled": False, "results": []}
        return
    from rlscale.proofs import check_proofs

    results = check_proofs()
    sections["proofs"] = {"enabled": True, "all_hold": all(r.passed for r in results),
                          "results": [r.as_dict() for r in results]}


def inference_step(config, staging, sections, shared, progress) -> None:
    """Inference-budget plans for a trained agent.

    (:mod:`rlscale.verification._inference_grounding`)
    """
    inf = config["inference"]
    if not inf["enabled"]:
        sections["inference"] = {"enabled": False}
        return
    from rlscale.verification._inference_grounding import (
        GroundingConfig,
        ground_inference,
        write_figures,
    )

    cfg = GroundingConfig(environments=inf["environments"], epochs=inf["epochs"],
                          job_tasks=inf["job_tasks"], episodes=inf["episodes"],
                          seed=config["seed"])
    result = ground_inference(cfg)
    files = [Path(f).name for f in write_figures(result, staging)]
    sections["inference"] = {"enabled": True, **result.as_dict(), "files": files}


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
