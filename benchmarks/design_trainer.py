"""Pilot design grounded in the trainer: designed vs random/cheapest vs full-pool pilots.

    python -m benchmarks.design_trainer [--seeds 10] [--share 0.05] [--eval-seeds 3]
        [--out FILE.json] [--runs RUNS.json] [--summary]

The summary (printed, and written beside ``--out`` as ``FILE-summary.json``)
has every arm's deployed loss with its 90 % bootstrap interval over seeds and
ours against every other arm paired over seeds.

The pool is the grid ``E ∈ {1, 2, 4, 8, 16, 32}`` × ``t ∈ {1, 2, 4, 8, 16}`` ×
``k ∈ {2, 4, 8, 16, 32}`` of real runs of rlscale's numpy trainer
(:func:`rlscale.simulate.train`, GRPO, the report's defaults) at the report's
cost ``20E + 2Et + 0.1Etk``.  Every configuration is trained with five seeds
once; a study seed draws, per configuration, which of those five runs a pilot
of it returns (so the arms of one study seed see the same run of a
configuration, and different study seeds see different noise).

Each arm spends ``--share`` of the pool's cost on pilots, fits the report's
additive law (floor bounded by ``1 −`` the optimal policy's held-out
success), and plans the compute-optimal integer allocation at 30x its pilot
budget inside the report's allocation bounds.  The **deployed** plan is
trained with ``--eval-seeds`` fresh seeds and scored by its held-out loss (the
large reference sweep: every plan any arm makes, trained).  Arms: ``ours``
(:class:`rlscale.optimize.Designer`, surface batch then three Bayesian
batches minimising the plan's expected regret), ``v-optimal`` (surface then
one local batch aimed at the plan's loss), ``random``, ``cheapest``,
``cost-random``, and ``full`` (the whole pool, 100 % of its cost).  All
trainer runs are cached in the output file, so a killed study resumes without
retraining.  ``--runs`` keeps that cache in its own file, so studies at several
shares share one set of trainer runs (the pool's runs and every deployed plan's).
``--summary`` only summarises an existing study file.

The deployed loss of a plan is judged against the **reference**: every distinct
plan any arm of any seed made at that target budget, each trained with the same
``--eval-seeds`` seeds; an arm's regret is its plan's loss minus the best
reference plan's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

GRID = {"E": (1, 2, 4, 8, 16, 32), "t": (1, 2, 4, 8, 16), "k": (2, 4, 8, 16, 32)}
COST = "20*E + 2*E*t + 0.1*E*t*k"
BOUNDS = {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}
POOL_SEEDS = 5
EVAL_SEED0 = 1000
ARMS = ("ours", "v-optimal", "random", "cheapest", "cost-random", "full")
PLAN_FACTOR = 30.0


class Runs:
    """Trainer runs cached in the study file (key ``E,t,k,seed``)."""

    def __init__(self, store: dict[str, Any], save) -> None:
        self.store, self.save = store, save

    def get(self, E: int, t: int, k: int, seed: int) -> dict[str, float]:
        key = f"{E},{t},{k},{seed}"
        if key not in self.store:
            from rlscale.simulate import TrainConfig, train

            t0 = time.process_time()
            r = train(TrainConfig(n_environments=E, tasks_per_environment=t,
                                  trajectories_per_task=k, seed=seed,
                                  unit_cost_environment=20.0, unit_cost_task=2.0,
                                  unit_cost_trajectory=0.1))
            self.store[key] = {"loss": r.loss, "optimal_success": r.optimal_success,
                               "cost": r.config.cost, "env_steps": r.env_steps,
                               "cpu_s": time.process_time() - t0}
            self.save()
        return self.store[key]


def pool_table() -> dict[str, np.ndarray]:
    mesh = np.meshgrid(*[np.asarray(v, dtype=float) for v in GRID.values()], indexing="ij")
    return {a: m.ravel() for a, m in zip(GRID, mesh)}


def _fit(data: dict[str, np.ndarray], floor: float, bootstrap: int, seed: int):
    from rlscale.optimize import fit_law

    return fit_law({a: data[a] for a in GRID} | {"loss": data["loss"]}, axes=list(GRID),
                   bootstrap=bootstrap, seed=seed, holdout=0, floor=(floor, math.inf))


def _plan(fit, budget: float) -> dict[str, int]:
    from rlscale.optimize import allocate

    a = allocate(fit.law, COST, budget, BOUNDS)
    return {v: int(a.rounded[v]) for v in GRID}


def run_seed(s: int, runs: Runs, share: float, bootstrap: int) -> dict[str, Any]:
    from rlscale.optimize import Designer, PlanTarget, design

    table = pool_table()
    n = table["E"].size
    which = np.random.default_rng([s, 77]).integers(0, POOL_SEEDS, n)
    rows = {tuple(int(v) for v in r): i for i, r in enumerate(np.column_stack(
        [table[a] for a in GRID]).tolist())}

    def observe(idx) -> dict[str, np.ndarray]:
        got = [runs.get(int(table["E"][i]), int(table["t"][i]), int(table["k"][i]),
                        int(which[i])) for i in idx]
        return {**{a: table[a][idx] for a in GRID},
                "loss": np.array([g["loss"] for g in got]),
                "optimal_success": np.array([g["optimal_success"] for g in got])}

    full_cost = float(sum(20 * e + 2 * e * t + 0.1 * e * t * k for e, t, k in zip(
        table["E"], table["t"], table["k"])))
    budget = share * full_cost
    target = PlanTarget(PLAN_FACTOR * budget, BOUNDS)
    regret_target = PlanTarget(PLAN_FACTOR * budget, BOUNDS, objective="regret")

    def select(arm: str) -> np.ndarray:
        if arm == "full":
            idx = np.arange(n)
        elif arm in ("random", "cheapest", "cost-random"):
            d = design("additive", table, budget, cost=COST, axes=list(GRID), method=arm,
                       seed=s)
            idx = d.pool_rows
        elif arm == "v-optimal":
            d1 = design("additive", table, 0.3 * budget, cost=COST, axes=list(GRID),
                        method="surface", seed=s)
            obs1 = observe(d1.pool_rows)
            fit1 = _fit(obs1, 1 - obs1["optimal_success"].max(), 0, s)
            keep = np.setdiff1d(np.arange(n), d1.pool_rows)
            d2 = design(fit1, {a: v[keep] for a, v in table.items()},
                        budget - d1.cost, target, cost=COST,
                        observed={a: obs1[a] for a in GRID}, method="v-optimal", seed=s)
            idx = np.concatenate([d1.pool_rows, keep[d2.pool_rows]])
        else:
            floor = [0.0]

            def fit(data, floor=floor):
                obs = observe([rows[(int(e), int(t), int(k))] for e, t, k in zip(
                    data["E"], data["t"], data["k"])])
                floor[0] = 1 - obs["optimal_success"].max()
                return _fit(data, floor[0], bootstrap, s)

            def oracle(batch):
                return observe([rows[(int(e), int(t), int(k))] for e, t, k in zip(
                    batch["E"], batch["t"], batch["k"])])["loss"]

            ds = Designer("additive", table, budget, regret_target, cost=COST, axes=list(GRID),
                          batches=3, initial=0.3, bootstrap=bootstrap, n_laws=16, fit=fit,
                          seed=s, min_gain=0.0)
            ds.run(oracle)
            idx = np.array([rows[(int(e), int(t), int(k))] for e, t, k in zip(
                ds.data["E"], ds.data["t"], ds.data["k"])])
        return idx

    out: dict[str, Any] = {}
    for arm in ARMS:
        try:
            idx = select(arm)
        except (ValueError, RuntimeError) as exc:
            # A baseline's second stage can fail on its first fit (a step-like exponent
            # leaves no plan to aim at): the arm buys nothing usable, and it is counted.
            out[arm] = {"error": " ".join(str(exc).split())[:200], "stage": "design"}
            continue
        obs = observe(idx)
        cost = float(np.sum(20 * obs["E"] + 2 * obs["E"] * obs["t"]
                            + 0.1 * obs["E"] * obs["t"] * obs["k"]))
        try:
            fit = _fit(obs, 1 - obs["optimal_success"].max(), 0, s)
            plan = _plan(fit, PLAN_FACTOR * budget)
            out[arm] = {"runs": int(idx.size), "spent_share": cost / full_cost, "plan": plan,
                        "predicted_loss": float(fit.law.loss(plan))}
        except (ValueError, RuntimeError) as exc:
            out[arm] = {"runs": int(idx.size), "spent_share": cost / full_cost,
                        "error": " ".join(str(exc).split())[:200]}
    return {"budget": budget, "target_budget": PLAN_FACTOR * budget, "arms": out}


def deploy(plan: dict[str, int], runs: Runs, eval_seeds: int) -> list[float]:
    return [runs.get(plan["E"], plan["t"], plan["k"], EVAL_SEED0 + j)["loss"]
            for j in range(eval_seeds)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.design_trainer",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--eval-seeds", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=40)
    parser.add_argument("--out", default="design-trainer.json")
    parser.add_argument("--runs", default=None,
                        help="cache the trainer runs in this file instead of --out")
    parser.add_argument("--summary", action="store_true",
                        help="only summarise the study in --out (and --runs)")
    args = parser.parse_args(argv)
    from rlscale.files._atomic import write_json_atomic

    path = Path(args.out)
    runs_path = Path(args.runs) if args.runs else None
    state = json.loads(path.read_text()) if path.exists() else {"runs": {}, "seeds": {}}
    if runs_path is not None:
        state["runs"] = json.loads(runs_path.read_text()) if runs_path.exists() else {}
    summary_path = path.with_name(path.stem + "-summary.json")
    if args.summary:
        write_json_atomic(summary_path, summarise(state))
        return 0
    meta = state.setdefault("meta", {"load_at_start": os.getloadavg(), "share": args.share,
                                     "bootstrap": args.bootstrap,
                                     "eval_seeds": args.eval_seeds})
    meta["eval_seeds"] = max(meta.get("eval_seeds", 0), args.eval_seeds)
    if meta["share"] != args.share:
        parser.error(f"--share {args.share} differs from the study file's {meta['share']}: "
                     "use another --out")

    def save() -> None:
        if runs_path is None:
            write_json_atomic(path, state)
        else:
            write_json_atomic(runs_path, state["runs"])
            write_json_atomic(path, {k: v for k, v in state.items() if k != "runs"})

    runs = Runs(state["runs"], save)
    for s in range(args.seeds):
        key = str(s)
        if key not in state["seeds"]:
            t0, load0 = time.process_time(), os.getloadavg()[0]
            state["seeds"][key] = run_seed(s, runs, args.share, args.bootstrap)
            state["seeds"][key]["cpu_s"] = time.process_time() - t0
            state["seeds"][key]["load"] = (load0, os.getloadavg()[0])
            save()
        for r in state["seeds"][key]["arms"].values():
            if "plan" in r and len(r.get("deployed", ())) < args.eval_seeds:
                r["deployed"] = deploy(r["plan"], runs, args.eval_seeds)
                save()
        print(f"seed {s}: " + ", ".join(
            f"{arm} {np.mean(r['deployed']):.4f}" if "deployed" in r else f"{arm} failed"
            for arm, r in state["seeds"][key]["arms"].items()), file=sys.stderr, flush=True)
    write_json_atomic(summary_path, summarise(state))
    return 0


def _quantiles(b: np.ndarray) -> tuple[float, float]:
    """The 90 % interval of bootstrap replicates (nan when there are none)."""
    b = b[np.isfinite(b)]
    if b.size < 2:
        return (math.nan, math.nan)
    return float(np.quantile(b, 0.05)), float(np.quantile(b, 0.95))


def summarise(state: dict[str, Any], replicates: int = 4000) -> dict[str, Any]:
    """Deployed loss per arm with 90 % intervals, the regret against the best plan of the
    reference, the full pool's plan's interval with ours against it, and ours against
    every other arm paired over seeds.

    Two intervals.  ``ci_seeds`` resamples the study seeds only, every plan's loss held at
    its measured mean: it says how much the arm's choice varies, not what its plans
    really lose.  ``ci`` also resamples the evaluation seeds (once per replicate, shared by
    every plan, since every plan is trained with the same evaluation seeds): a plan's
    measured loss is itself a mean of a few noisy trainer runs (sd up to 0.02), and when
    every seed's full pool plans the same allocation the seeds-only interval of the full
    pool is a single point.  The goal is judged on ``ci``.
    """
    rng = np.random.default_rng(0)
    seeds = sorted(state["seeds"], key=int)
    arms = {s: state["seeds"][s]["arms"] for s in seeds}
    # The reference: every distinct plan any arm made at this target budget, each trained
    # with the same evaluation seeds; its best is the best deployed loss known there (the
    # least of several noisy means, so biased low: a regret against it is an upper bound).
    evals: dict[tuple[int, ...], list[float]] = {}
    for s in seeds:
        for r in arms[s].values():
            if "deployed" in r:
                evals[tuple(r["plan"].values())] = r["deployed"]
    plans = list(evals)
    m = min((len(v) for v in evals.values()), default=0)
    L = np.array([evals[p][:m] for p in plans]).reshape(len(plans), m)
    point = L.mean(axis=1) if m else np.zeros(len(plans))
    where = {arm: np.array([plans.index(tuple(arms[s][arm]["plan"].values()))
                            if "deployed" in arms[s].get(arm, {}) else -1 for s in seeds])
             for arm in ARMS}
    J = rng.integers(0, max(m, 1), (replicates, m))
    K = rng.integers(0, len(seeds), (replicates, len(seeds)))
    boot_plan = L[:, J].mean(axis=-1) if m else np.zeros((len(plans), replicates))  # P × B

    def per_seed(arm: str, evaluation: bool) -> np.ndarray:
        """B × S deployed losses of the arm at resampled seeds (nan where it failed)."""
        w = where[arm][K]
        v = (boot_plan[np.maximum(w, 0), np.arange(replicates)[:, None]] if evaluation
             else point[np.maximum(w, 0)])
        return np.where(w >= 0, v, np.nan)

    def boot(values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            n = np.isfinite(values).sum(axis=1)
            return np.where(n > 0, np.nansum(values, axis=1) / np.maximum(n, 1), np.nan)

    b = int(np.argmin(point)) if plans else None
    best = float(point[b]) if plans else math.nan
    table: dict[str, Any] = {"seeds": len(seeds), "eval_seeds": m,
                             "reference_plans": len(plans),
                             "best_plan": dict(zip(GRID, plans[b])) if plans else None,
                             "best_loss": best, "arms": {}}
    print(f"{len(seeds)} seeds, {m} evaluation seeds per plan; reference: {len(plans)} "
          f"distinct plans, best {table['best_plan']} at loss {best:.4f}")
    print("| arm | deployed loss | 90 % CI (seeds and evaluation) | 90 % CI (seeds only) |"
          " regret vs best plan | failed | spent share | distinct plans |")
    print("|---|---|---|---|---|---|---|---|")
    for arm in ARMS:
        w = where[arm]
        ok = point[w[w >= 0]]
        spent = [arms[s][arm]["spent_share"] for s in seeds if "spent_share" in arms[s][arm]]
        row = {"n": int(ok.size), "failed": int((w < 0).sum()),
               "mean": float(ok.mean()) if ok.size else math.nan,
               "ci": _quantiles(boot(per_seed(arm, True))),
               "ci_seeds": _quantiles(boot(per_seed(arm, False))),
               "regret": float(ok.mean() - best) if ok.size else math.nan,
               "spent_share": float(np.mean(spent)) if spent else math.nan,
               "distinct_plans": len(set(w[w >= 0].tolist()))}
        table["arms"][arm] = row
        print(f"| {arm} | {row['mean']:.4f} | [{row['ci'][0]:.4f}, {row['ci'][1]:.4f}] | "
              f"[{row['ci_seeds'][0]:.4f}, {row['ci_seeds'][1]:.4f}] | {row['regret']:+.4f} |"
              f" {row['failed']}/{len(seeds)} | {row['spent_share']:.3f} |"
              f" {row['distinct_plans']} |")
    table["paired"] = {}
    ours = per_seed("ours", True)
    for other in ARMS[1:]:
        both = (where["ours"] >= 0) & (where[other] >= 0)
        d = point[where["ours"][both]] - point[where[other][both]]
        p = {"n": int(d.size), "mean": float(d.mean()) if d.size else math.nan,
             "ci": _quantiles(boot(ours - per_seed(other, True))),
             "ours_lower": float(np.mean(d < 0)) if d.size else math.nan,
             "ours_higher": float(np.mean(d > 0)) if d.size else math.nan}
        table["paired"][other] = p
        print(f"ours - {other} (deployed loss): {p['mean']:+.4f} [{p['ci'][0]:+.4f}, "
              f"{p['ci'][1]:+.4f}] over {d.size} paired seeds; ours lower in "
              f"{p['ours_lower']:.0%}, higher in {p['ours_higher']:.0%}")
    f, o = table["arms"]["full"], table["arms"]["ours"]
    inside = bool(f["ci"][0] <= o["mean"] <= f["ci"][1]) if math.isfinite(o["mean"]) else False
    table["goal"] = {"ours_mean_inside_full_ci": inside, "ours_spent_share": o["spent_share"]}
    print(f"goal: ours {o['mean']:.4f} at {o['spent_share']:.1%} of the pool's cost; the full "
          f"pool's plan {f['mean']:.4f} [{f['ci'][0]:.4f}, {f['ci'][1]:.4f}]; inside: {inside}")
    return table


if __name__ == "__main__":
    sys.exit(main())
