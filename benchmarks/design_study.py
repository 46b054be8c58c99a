"""Which runs to buy: designed pilots against the baselines on pools with a known law.

    python -m benchmarks.design_study [--pools NAME,...] [--budgets 0.01,0.05,0.1]
        [--seeds 20] [--out FILE.json] [--quick] [--summary FILE.json]

For every pool of :mod:`benchmarks.design_pools`, pilot budget (a share of the
pool's total cost) and seed, each arm buys pilot runs, observes them (one
noisy draw per grid row and seed, common to every arm), fits the law and
plans at 30x the pilot budget:

``random``, ``cheapest``, ``cost-random``
    The selection rules of :func:`rlscale.optimize.design`, the whole budget.
``d-optimal``, ``v-optimal``
    Two stages: the parameter-free surface design with 30 % of the budget,
    a fit, then the local design at that fit with the rest (one refit); V
    aims at the plan's predicted loss.
``regret-local``
    The same two stages, the local V criterion aimed at the plan's regret
    (``PlanTarget(objective="regret")``): the criterion without the sequential
    loop and the ensemble.
``ours``
    :class:`rlscale.optimize.Designer`: the surface design with 30 %, then
    three Bayesian batches over 16 bootstrap laws minimising the plan's
    expected regret, refitting after each.  Its value-of-information stop is off here
    (``min_gain=0``) so that every arm spends the same budget; each step's
    predicted target sd is recorded, which says where it would have stopped.
``full``
    The whole pool (100 % of its cost), for reference.

Two ablations of ours, run only when asked for (``--arms``): ``bayes-once``
(the two stages of ``regret-local`` with the second Bayesian over the first
fit's 16 bootstrap laws: ours without the sequential loop) and ``ours-local``
(the Designer with the local ``v-optimal`` batches: ours without the
ensemble).

Scores: R² of the fitted law's log prediction on the held-out most expensive
tenth of the grid (never selectable) against the true law, and the plan's
regret: the true loss of the plan the fit makes at 30x the budget over the
true optimum's, in per cent.  A failed fit or plan is counted and scored as
missing.  Results are written after every cell (atomically), and a killed
study resumes where it stopped.  ``--summary`` prints (and writes) the table
with 90 % bootstrap intervals over seeds and the paired difference of ours
against the best baseline of each cell.
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

ARMS = ("random", "cheapest", "cost-random", "d-optimal", "v-optimal", "regret-local", "ours",
        "full")
BASELINES = ("random", "cheapest", "cost-random", "d-optimal", "v-optimal")
#: Ablations of ours (which of its two parts, the loop or the ensemble, does what).
ABLATIONS = ("bayes-once", "ours-local")
PLAN_FACTOR = 30.0
FIRST = 0.3  # share of the budget of the parameter-free first batch


def _observe(pool, seed: int, grid_rows: np.ndarray) -> dict[str, np.ndarray]:
    y = pool.noisy(seed)[grid_rows]
    data = pool.table(grid_rows)
    for j, out in enumerate(pool.outputs):
        data[out] = y[:, j]
    return data


def _grid_rows(pool, design_result, candidates: np.ndarray) -> np.ndarray:
    return candidates[design_result.runs["pool_row"]]


def _fit_args(fitted: Any) -> dict[str, Any]:
    """How a fit enters design(): a fit object, or (model, draws, noise) of a custom fit."""
    if isinstance(fitted, tuple):
        point, draws, noise = fitted
        return {"law": point, "laws": draws, "noise": noise}
    return {"law": fitted}


def run_arm(pool, arm: str, frac: float, seed: int, bootstrap: int) -> dict[str, Any]:
    from rlscale.optimize import Designer, PlanTarget, design

    budget = frac * pool.pool_cost
    target = PlanTarget(PLAN_FACTOR * budget, pool.plan_bounds)
    regret_target = PlanTarget(PLAN_FACTOR * budget, pool.plan_bounds, objective="regret")
    cand = pool.pool_rows
    table = pool.pool
    t0 = time.process_time()
    common = {"cost": pool.cost, "axes": list(pool.axes), "seed": seed}
    if arm == "full":
        rows = cand
    elif arm in ("random", "cheapest", "cost-random"):
        d = design(pool.law, table, budget, method=arm, **common)
        rows = _grid_rows(pool, d, cand)
    elif arm in ("d-optimal", "v-optimal", "regret-local", "bayes-once"):
        d1 = design(pool.law, table, FIRST * budget, method="surface", **common)
        rows1 = _grid_rows(pool, d1, cand)
        fit1 = pool.fit(_observe(pool, seed, rows1), bootstrap if arm == "bayes-once" else 0,
                        seed)
        left = budget - float(pool.cost_values[rows1].sum())
        keep = np.setdiff1d(np.arange(cand.size), d1.runs["pool_row"])
        method = {"regret-local": "v-optimal", "bayes-once": "bayes-v"}.get(arm, arm)
        aim = regret_target if arm in ("regret-local", "bayes-once") else target
        d2 = design(**_fit_args(fit1), pool={a: v[keep] for a, v in table.items()},
                    budget=left, target=aim, observed=pool.table(rows1), method=method,
                    cost=pool.cost, seed=seed)
        rows = np.concatenate([rows1, cand[keep][d2.runs["pool_row"]]])
    elif arm in ("ours", "ours-local"):
        def fit(data):
            return pool.fit(data, bootstrap, seed)

        ds = Designer(pool.law, table, budget, regret_target, cost=pool.cost,
                      axes=list(pool.axes),
                      response=pool.outputs if len(pool.outputs) > 1 else pool.outputs[0],
                      batches=3, initial=FIRST, bootstrap=bootstrap, n_laws=16, fit=fit,
                      seed=seed, min_gain=0.0,
                      method="v-optimal" if arm == "ours-local" else "bayes-v")
        noisy = pool.noisy(seed)
        index = {tuple(r): i for i, r in enumerate(np.column_stack(
            [pool.grid[a] for a in pool.axes]).tolist())}

        def oracle(runs):
            idx = [index[tuple(r)] for r in np.column_stack(
                [runs[a] for a in pool.axes]).tolist()]
            return {out: noisy[idx, j] for j, out in enumerate(pool.outputs)}

        ds.run(oracle)
        rows = np.array([index[tuple(r)] for r in np.column_stack(
            [ds.data[a] for a in pool.axes]).tolist()])
        # The stop rule is off (min_gain=0) so that every arm spends the same budget; each
        # step's predicted target sd before/after says where min_gain would have stopped.
        extra = {"stop": ds.stop_reason, "batches": sum(s.ran for s in ds.history),
                 "steps": [{"spent_share": s.spent / pool.pool_cost,
                            "sd_before": s.batch.target_sd_before,
                            "sd_after": s.batch.target_sd_after,
                            "regret_before": s.batch.regret_before,
                            "regret_after": s.batch.regret_after} for s in ds.history]}
    else:
        raise ValueError(f"unknown arm {arm!r}")
    spent = float(pool.cost_values[rows].sum())
    out: dict[str, Any] = {"runs": int(rows.size), "spent_share": spent / pool.pool_cost}
    if arm in ("ours", "ours-local"):
        out.update(extra)
    try:
        fitted = pool.fit(_observe(pool, seed, rows), 0, seed)
        from benchmarks.design_pools import _point, r2_log

        out["r2"] = r2_log(pool, fitted)
        best, _ = pool.plan_loss(pool.truth, PLAN_FACTOR * budget)
        got, x = pool.plan_loss(_point(fitted), PLAN_FACTOR * budget)
        out["regret_pct"] = 100.0 * (got - best) / best
        out["plan"] = x
    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        out["error"] = " ".join(str(exc).split())[:200]
    out["cpu_s"] = time.process_time() - t0
    return out


def _key(pool: str, frac: float, seed: int, arm: str) -> str:
    return f"{pool}|{frac:g}|{seed}|{arm}"


def study(pools: list[str], budgets: list[float], seeds: int, out: Path, bootstrap: int,
          progress: bool = True, arms: tuple[str, ...] = ARMS) -> dict[str, Any]:
    from benchmarks.design_pools import POOLS
    from rlscale.files._atomic import write_json_atomic

    done: dict[str, Any] = json.loads(out.read_text())["cells"] if out.exists() else {}
    meta = {"load": os.getloadavg(), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    built = {name: POOLS[name]() for name in pools}
    for seed in range(seeds):  # seeds outermost: a study cut short has every pool
        for name, pool in built.items():
            for frac in budgets:
                for arm in arms:
                    if arm == "full" and frac != budgets[0]:
                        continue  # the full pool does not depend on the budget
                    key = _key(name, frac, seed, arm)
                    if key in done:
                        continue
                    try:
                        done[key] = run_arm(pool, arm, frac, seed, bootstrap)
                    except ValueError as exc:  # the budget cannot buy a fit, and the like
                        done[key] = {"error": " ".join(str(exc).split())[:200]}
                    write_json_atomic(out, {"meta": meta, "cells": done})
                    if progress:
                        r = done[key]
                        print(f"{key}: r2 {r.get('r2', math.nan):.3f} regret "
                              f"{r.get('regret_pct', math.nan):.3f}% cpu "
                              f"{r.get('cpu_s', 0):.1f}s {r.get('error', '')}",
                              file=sys.stderr, flush=True)
    return done


def _boot_ci(x: np.ndarray, rng: np.random.Generator, level: float = 0.9,
             stat=np.mean) -> tuple[float, float]:
    if x.size < 2:
        return (math.nan, math.nan)
    boots = np.array([stat(x[rng.integers(0, x.size, x.size)]) for _ in range(2000)])
    return (float(np.quantile(boots, (1 - level) / 2)), float(np.quantile(boots,
                                                                         (1 + level) / 2)))


def summarise(cells: dict[str, Any]) -> dict[str, Any]:
    """Per pool × budget × arm: mean and median regret and R² with 90 % intervals; ours
    against the best baseline of the cell (lowest mean regret), paired over seeds."""
    rng = np.random.default_rng(0)
    table: dict[str, Any] = {}
    keys = [k.split("|") for k in cells]
    for pool in sorted({k[0] for k in keys}):
        fracs = sorted({float(k[1]) for k in keys if k[0] == pool})
        seeds = sorted({int(k[2]) for k in keys if k[0] == pool})
        for frac in fracs:
            row: dict[str, Any] = {}
            present = {k[3] for k in keys if k[0] == pool}
            for arm in (*ARMS, *(a for a in ABLATIONS if a in present)):
                f = fracs[0] if arm == "full" else frac
                got = [cells.get(_key(pool, f, s, arm)) for s in seeds]
                got = [g for g in got if g is not None]
                reg = np.array([g.get("regret_pct", math.nan) for g in got])
                r2 = np.array([g.get("r2", math.nan) for g in got])
                ok = np.isfinite(reg)
                row[arm] = {
                    "n": len(got), "failed": int((~ok).sum()),
                    "regret_mean": float(np.mean(reg[ok])) if ok.any() else math.nan,
                    "regret_ci": _boot_ci(reg[ok], rng),
                    "regret_median": float(np.median(reg[ok])) if ok.any() else math.nan,
                    "r2_median": float(np.nanmedian(r2)) if np.isfinite(r2).any() else math.nan,
                    "r2_median_ci": _boot_ci(r2[np.isfinite(r2)], rng, stat=np.median),
                    "spent_share": float(np.mean([g.get("spent_share", math.nan)
                                                  for g in got])) if got else math.nan}
            base = [a for a in BASELINES if math.isfinite(row[a]["regret_mean"])]
            if base and math.isfinite(row["ours"]["regret_mean"]):
                best = min(base, key=lambda a: row[a]["regret_mean"])
                diffs = []
                for s in seeds:
                    o = cells.get(_key(pool, frac, s, "ours"), {}).get("regret_pct")
                    b = cells.get(_key(pool, frac, s, best), {}).get("regret_pct")
                    if o is not None and b is not None:
                        diffs.append(o - b)
                d = np.array(diffs)
                row["ours_vs_best"] = {"best": best, "n": int(d.size),
                                       "mean_diff": float(d.mean()) if d.size else math.nan,
                                       "ci": _boot_ci(d, rng),
                                       "win_rate": float(np.mean(d < 0)) if d.size else math.nan}
            # Ours against the one-shot regret design and the ablations, paired over seeds.
            row["ours_vs"] = {}
            for other in ("regret-local", *ABLATIONS):
                pairs = [(cells.get(_key(pool, frac, s, "ours"), {}).get("regret_pct"),
                          cells.get(_key(pool, frac, s, other), {}).get("regret_pct"))
                         for s in seeds]
                d = np.array([o - b for o, b in pairs if o is not None and b is not None])
                if d.size:
                    row["ours_vs"][other] = {"n": int(d.size), "mean_diff": float(d.mean()),
                                             "ci": _boot_ci(d, rng),
                                             "win_rate": float(np.mean(d < 0)),
                                             "loss_rate": float(np.mean(d > 0))}
            table[f"{pool}|{frac:g}"] = row
    return table


def print_summary(table: dict[str, Any]) -> None:
    for cell, row in table.items():
        print(f"\n## {cell}")
        print("| arm | regret % mean [90% CI] | median | R² median [90% CI] | failed | spent |")
        print("|---|---|---|---|---|---|")
        for arm in (*ARMS, *(a for a in ABLATIONS if a in row)):
            r = row[arm]
            lo, hi = r["regret_ci"]
            rl, rh = r["r2_median_ci"]
            print(f"| {arm} | {r['regret_mean']:.3f} [{lo:.3f}, {hi:.3f}] | "
                  f"{r['regret_median']:.3f} | {r['r2_median']:.3f} [{rl:.3f}, {rh:.3f}] | "
                  f"{r['failed']}/{r['n']} | {r['spent_share']:.3f} |")
        if "ours_vs_best" in row:
            o = row["ours_vs_best"]
            print(f"ours − {o['best']}: {o['mean_diff']:+.3f} pp [{o['ci'][0]:+.3f}, "
                  f"{o['ci'][1]:+.3f}], ours better in {o['win_rate']:.0%} of {o['n']} seeds")
        for other, o in row.get("ours_vs", {}).items():
            print(f"ours − {other}: {o['mean_diff']:+.3f} pp [{o['ci'][0]:+.3f}, "
                  f"{o['ci'][1]:+.3f}], ours better in {o['win_rate']:.0%}, worse in "
                  f"{o['loss_rate']:.0%} of {o['n']} seeds")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.design_study",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--pools", default="chinchilla,agentic,data_constrained,lr_optimum,"
                        "multi_output")
    parser.add_argument("--budgets", default="0.01,0.05,0.1")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--bootstrap", type=int, default=40)
    parser.add_argument("--out", default="design-study.json")
    parser.add_argument("--summary", metavar="FILE.json", help="also write the summary here")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 5 %% budget, 2 pools")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--arms", default=",".join(ARMS),
                        help=f"arms to run (default: all but the ablations {ABLATIONS})")
    parser.add_argument("--merge", metavar="FILE,...",
                        help="only summarise these result files (from studies run apart)")
    args = parser.parse_args(argv)
    if args.merge:
        cells: dict[str, Any] = {}
        for path in args.merge.split(","):
            cells.update(json.loads(Path(path).read_text())["cells"])
        table = summarise(cells)
        print_summary(table)
        if args.summary:
            from rlscale.files._atomic import write_json_atomic

            write_json_atomic(args.summary, table)
        return 0
    pools = args.pools.split(",")
    budgets = [float(b) for b in args.budgets.split(",")]
    seeds = args.seeds
    if args.quick:
        pools, budgets, seeds = ["chinchilla", "agentic"], [0.05], 2
    arms = tuple(args.arms.split(","))
    unknown = [a for a in arms if a not in (*ARMS, *ABLATIONS)]
    if unknown:
        parser.error(f"--arms: unknown {unknown}; choose from {(*ARMS, *ABLATIONS)}")
    cells = study(pools, budgets, seeds, Path(args.out), args.bootstrap,
                  progress=not args.no_progress, arms=arms)
    table = summarise(cells)
    print_summary(table)
    if args.summary:
        from rlscale.files._atomic import write_json_atomic

        write_json_atomic(args.summary, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
