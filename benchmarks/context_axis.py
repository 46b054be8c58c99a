"""The context axis measured, fitted and planned, with the plans judged as deployed.

    python -m benchmarks.context_axis [--seeds 10] [--jobs 2] [--out context-axis]
        [--bootstrap 200] [--datasets 100] [--quick]

1. **Price of context.**  CPU seconds per training environment step of the
   memory family at contexts 1, 4, 16, 64 (same design, same seed), fitted by
   least squares to ``κ₀ + κ₁·c``: compute per step grows with the window, and
   the trajectory's unit cost is split accordingly,
   ``cost = 20·E + 2·E·t + 0.1·E·t·k·(κ₀ + κ₁·c)/(κ₀ + κ₁)`` (the report's
   unit costs for E, t and k at ``c = 1``).
2. **Sweep.**  ``examples/sweep-context.toml`` (a star design over E, t, k and
   c around E = 16, t = 4, k = 8, c = 4) with ``--seeds`` seeds, through the
   resumable sweep runner (``OUT/sweep.csv``).
3. **Law.**  ``fit_law`` (additive, loss = 1 − held-out success) over the four
   axes with a bootstrap (``--bootstrap``) and 95 % intervals: exponents,
   elasticities at the base point and their ordering with the share of
   bootstrap laws agreeing with each pairwise order; and a prediction it
   could fail: the law refitted without the largest context predicts it.
4. **Plans** at the base point's budget, inside the design's ranges, chosen
   from the fitted law: the free plan over (E, t, k, c), and the best plan
   holding the context at the base window (c = 4) and at c = 1
   (:func:`rlscale.optimize.held_comparison`); predicted η with its interval
   over the bootstrap laws.
5. **Deployed by training.**  The rounded plans trained with fresh seeds
   (100 …): IQM held-out success with stratified-bootstrap intervals, the
   difference at equal budget, and the realised η — the budget at which the
   free plan's path (chosen at ¼, ½, ¾ and 1 × B) reaches the held plan's
   realised success, by interpolation in log budget, bootstrapped over seeds.
6. **Deployed under a generating law.**  ``--datasets`` synthetic sweeps on the
   same design from a known law (the fitted law: well specified; and the same
   law with its context term replaced by the measured context curve:
   misspecified), log-normal noise at the fit's residual scale.  Each is
   fitted, both plans are chosen from the fit and judged under the generating
   law: η_deployed = B / B′ with B′ the least budget at which the free plan
   path reaches the held plan's true loss, against the held plan chosen from
   the same fit and against the generating law's own best held plan (the
   strongest baseline without the axis).  Reported: median, quartiles and the
   share of data sets with η_deployed ≥ 1 (Wilson 95 % interval).

Everything is written atomically to ``OUT/results.json`` (training runs are
cached per configuration in ``OUT/runs``; rerunning resumes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "sweep-context.toml"
AXES = ("environments", "tasks_per_environment", "trajectories_per_task", "context")
VARS = {"environments": "E", "tasks_per_environment": "t", "trajectories_per_task": "k",
        "context": "c"}
BASE = {"E": 16, "t": 4, "k": 8, "c": 4}
BOUNDS = {"E": {"min": 2, "max": 64}, "t": {"min": 1, "max": 16}, "k": {"min": 2, "max": 32},
          "c": {"min": 1, "max": 32}}
DEPLOY_SEEDS = list(range(100, 110))
FRACTIONS = (0.25, 0.5, 0.75, 1.0)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _train_fields() -> dict[str, Any]:
    import tomllib

    return tomllib.loads(SPEC.read_text())["train"]


def price_of_context(contexts=(1, 4, 16, 64), repeats: int = 3) -> dict[str, Any]:
    """CPU seconds per training env step against the context, and the fit κ₀ + κ₁·c."""
    from rlscale.simulate import TrainConfig, train

    fields = {**_train_fields(), "n_environments": 16, "tasks_per_environment": 4,
              "trajectories_per_task": 8, "eval_environments": 2, "eval_episodes": 1}
    per_step = []
    for c in contexts:
        cfg = TrainConfig.from_dict({**fields, "context": c, "seed": 0})
        train(cfg, steps=2)  # warm
        best = math.inf
        for _ in range(repeats):
            start = _cpu()
            res = train(cfg)
            best = min(best, (_cpu() - start) / res.env_steps)
        per_step.append(best)
    A = np.stack([np.ones(len(contexts)), np.asarray(contexts, float)], axis=1)
    (k0, k1), *_ = np.linalg.lstsq(A, np.asarray(per_step), rcond=None)
    return {"contexts": list(contexts), "cpu_s_per_env_step": per_step, "kappa0": float(k0),
            "kappa1": float(k1), "load": os.getloadavg()[0]}


def cost_text(kappa0: float, kappa1: float) -> str:
    """The design cost with the trajectory's unit split into its fixed and context parts."""
    share = kappa1 / (kappa0 + kappa1)
    return (f"20*E + 2*E*t + {0.1 * (1 - share):.6g}*E*t*k + "
            f"{0.1 * share:.6g}*E*t*k*c")


def run_sweep_rows(out: Path, seeds: list[int], jobs: int) -> list[dict[str, Any]]:
    import tomllib

    from rlscale.sweep._run import parse_spec, run_sweep

    data = tomllib.loads(SPEC.read_text())
    data["seeds"] = seeds
    return run_sweep(parse_spec(data), out / "sweep.csv", jobs=jobs, progress=False)


def _data(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    out = {a: np.array([float(r[a]) for r in rows]) for a in AXES}
    out["loss"] = np.array([float(r["loss"]) for r in rows])
    return out


def fit(rows: list[dict[str, Any]], bootstrap: int):
    from rlscale.optimize import fit_law

    return fit_law(_data(rows), law="additive", axes=list(AXES), target="loss",
                   bootstrap=bootstrap, confidence=0.95, seed=0, n_jobs=1)


def law_in_vars(law):
    """The fitted law over the decision variables (E, t, k, c)."""
    from rlscale.theory import AdditiveLaw

    return AdditiveLaw(law.floor, {VARS[a]: law.coefficients[a] for a in law.axes},
                       {VARS[a]: law.exponents[a] for a in law.axes})


def summarise_law(result, rows) -> dict[str, Any]:
    from rlscale.optimize import fit_law

    law = result.law
    centre = {a: float(BASE[VARS[a]]) for a in AXES}
    el = law.elasticities(centre)
    laws = result.bootstrap_laws()
    boot_el = [lw.elasticities(centre) for lw in laws]
    order = sorted(el, key=lambda a: -el[a])
    agree = {f"{a}>{b}": float(np.mean([e[a] > e[b] for e in boot_el]))
             for i, a in enumerate(order) for b in order[i + 1:]}
    el_ci = {a: [float(np.percentile([e[a] for e in boot_el], q)) for q in (2.5, 97.5)]
             for a in AXES}
    # A prediction the law could fail: refit without the largest context, predict it.
    top = max(r["context"] for r in rows)
    train_rows = [r for r in rows if r["context"] != top]
    held = [r for r in rows if r["context"] == top]
    refit = fit_law(_data(train_rows), law="additive", axes=list(AXES), target="loss",
                    bootstrap=100, confidence=0.95, seed=1, n_jobs=1)
    point = {**centre, "context": float(top)}
    lo, hi = refit.predict_band([point], confidence=0.95)
    observed = float(np.mean([r["loss"] for r in held]))
    from rlscale.simulate import iqm_ci

    obs_ci = iqm_ci([r["loss"] for r in held], rng=0)
    return {"law": law.as_dict(), "params": result.params,
            "intervals": {k: list(v) for k, v in result.intervals.items()},
            "r2_log": result.r2_log if hasattr(result, "r2_log") else None,
            "rmse_log": result.rmse_log, "warnings": [w.as_dict() for w in result.warnings],
            "elasticities": el, "elasticity_intervals": el_ci, "ordering": order,
            "ordering_agreement": agree, "n_bootstrap_laws": len(laws),
            "leave_largest_context_out": {
                "context": top, "predicted": float(refit.predict(point)),
                "band": [float(lo[0]), float(hi[0])], "observed_mean": observed,
                "observed_iqm": obs_ci.as_dict(),
                "inside": bool(lo[0] <= obs_ci.estimate <= hi[0])}}


def plans(law_vars, cost: str, budget: float, hold_c: float):
    from rlscale.optimize import held_comparison

    return held_comparison(law_vars, cost, budget, {"c": hold_c}, BOUNDS)


def _config(values: dict[str, float], seed: int) -> dict[str, Any]:
    return {**_train_fields(), "n_environments": int(values["E"]),
            "tasks_per_environment": int(values["t"]),
            "trajectories_per_task": max(2, int(values["k"])), "context": int(values["c"]),
            "algorithm": "grpo", "seed": seed}


def _rounded(alloc) -> dict[str, float]:
    vals = alloc.rounded if alloc.rounded else {k: round(v) for k, v in alloc.values.items()}
    return {k: float(max(round(v), 1)) for k, v in vals.items()}


def train_many(configs: list[dict[str, Any]], out: Path, jobs: int) -> list[float]:
    from joblib import Parallel, delayed

    from rlscale.files._atomic import write_json_atomic
    from rlscale.simulate import TrainConfig, train
    from rlscale.sweep._run import run_id

    def one(cfg):
        path = out / "runs" / f"{run_id(TrainConfig.from_dict(cfg).as_dict())}.json"
        if path.exists():
            return json.loads(path.read_text())["success"]
        res = train(TrainConfig.from_dict(cfg))
        write_json_atomic(path, {"config": cfg, "success": res.success,
                                 "env_steps": res.env_steps, "cost": res.config.cost})
        return res.success

    (out / "runs").mkdir(parents=True, exist_ok=True)
    return list(Parallel(n_jobs=jobs)(delayed(one)(c) for c in configs))


def _realised_eta(path: dict[float, np.ndarray], held: np.ndarray, B: float,
                  rng: np.random.Generator, n_boot: int = 1000) -> dict[str, Any]:
    """B / b* with b* where the free path's IQM success first reaches the held plan's
    (linear in log budget between budgets), and a bootstrap over seeds."""
    from scipy.stats import trim_mean

    budgets = sorted(path)

    def eta(free: dict[float, np.ndarray], h: np.ndarray) -> float:
        target = trim_mean(h, 0.25)
        s = [trim_mean(free[b], 0.25) for b in budgets]
        if s[0] >= target:
            return B / budgets[0]  # a lower bound: the smallest budget already reaches it
        for i in range(1, len(budgets)):
            if s[i] >= target:
                f = (target - s[i - 1]) / (s[i] - s[i - 1])
                lo, hi = math.log(budgets[i - 1]), math.log(budgets[i])
                return B / math.exp(lo + f * (hi - lo))
        return math.nan  # not reached by B: η < 1, not estimable from this path

    point = eta(path, held)
    boots = []
    for _ in range(n_boot):
        free = {b: v[rng.integers(0, v.size, v.size)] for b, v in path.items()}
        boots.append(eta(free, held[rng.integers(0, held.size, held.size)]))
    boots = np.array(boots)
    finite = boots[np.isfinite(boots)]
    return {"eta": point, "lower_bound": bool(point == B / budgets[0]),
            "interval": ([float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5))]
                         if finite.size else None),
            "share_not_reached": float(np.mean(~np.isfinite(boots)))}


def deploy_by_training(law_vars, cost: str, budget: float, out: Path, jobs: int,
                       seeds: list[int]) -> dict[str, Any]:
    from rlscale.simulate import iqm_ci, iqm_difference_ci
    from rlscale.theory import parse_posynomial

    poly = parse_posynomial(cost)
    result: dict[str, Any] = {}
    free_path = {}
    for frac in FRACTIONS:
        cmp = plans(law_vars, cost, budget * frac, float(BASE["c"]))
        vals = _rounded(cmp.free)
        succ = np.array(train_many([_config(vals, s) for s in seeds], out, jobs))
        free_path[budget * frac] = succ
        result[f"free_at_{frac:g}B"] = {"values": vals, "cost": float(poly.evaluate(vals)),
                                        "success": iqm_ci(succ, rng=0).as_dict()}
    for hold in (float(BASE["c"]), 1.0):
        cmp = plans(law_vars, cost, budget, hold)
        vals = _rounded(cmp.held)
        succ = np.array(train_many([_config(vals, s) for s in seeds], out, jobs))
        free = free_path[budget]
        result[f"held_c{hold:g}"] = {
            "values": vals, "cost": float(poly.evaluate(vals)),
            "success": iqm_ci(succ, rng=0).as_dict(),
            "free_minus_held": iqm_difference_ci(free, succ, rng=0).as_dict(),
            "predicted_eta": cmp.eta,
            "realised_eta": _realised_eta(free_path, succ, budget, np.random.default_rng(0))}
    return result


def predicted_eta_interval(fit_result, cost: str, budget: float, hold: float) -> list[float]:
    etas = []
    for lw in fit_result.bootstrap_laws():
        try:
            etas.append(plans(law_in_vars(lw), cost, budget, hold).eta)
        except Exception:  # a bootstrap law the solver cannot plan with is left out
            continue
    return [float(np.percentile(etas, 2.5)), float(np.percentile(etas, 97.5)), len(etas)]


# ---------------------------------------------------------------------------- generating law
class _EmpiricalContext:
    """The fitted law with its context term replaced by the measured context curve
    (the IQM loss along the sweep's context axis, shifted to the law at the base point and
    interpolated linearly in log c): a generator the additive family does not contain."""

    def __init__(self, law_vars, rows):
        from scipy.stats import trim_mean

        base = {a: BASE[VARS[a]] for a in AXES if a != "context"}
        pts = sorted({r["context"] for r in rows if all(r[a] == v for a, v in base.items())})
        self.logc = np.log(pts)
        curve = np.array([trim_mean([r["loss"] for r in rows
                                     if r["context"] == c
                                     and all(r[a] == v for a, v in base.items())], 0.25)
                          for c in pts])
        at_base = float(np.interp(np.log(BASE["c"]), self.logc, curve))
        term_base = law_vars.coefficients["c"] * BASE["c"] ** -law_vars.exponents["c"]
        self.curve = np.maximum(curve - at_base + term_base, 1e-6)
        self.rest = law_vars

    def loss(self, values: dict[str, float]) -> float:
        c = float(values["c"])
        term = self.rest.coefficients["c"] * c ** -self.rest.exponents["c"]
        return float(self.rest.loss(values)) - term + float(
            np.interp(np.log(c), self.logc, self.curve))


def _design(rows) -> list[dict[str, float]]:
    return [{a: float(r[a]) for a in AXES} for r in rows]


def _deployed(truth, law_hat, cost: str, budget: float, holds: tuple[float, ...],
              oracle_losses: dict[float, float]) -> dict[str, float]:
    """η of the free plan path chosen from ``law_hat``, judged under ``truth``, against the
    held plans chosen from the same fit and against the generator's own held plans."""
    from rlscale.optimize import AllocationProblem

    free = AllocationProblem(law_hat, cost, BOUNDS)
    grid = budget * np.geomspace(1 / 8, 8, 37)
    true = []
    for b in grid:
        try:
            true.append(truth.loss(free.allocate(float(b)).values))
        except Exception:  # a budget below the bounds' cheapest plan
            true.append(math.inf)
    true = np.array(true)

    def first(level: float) -> float:
        ok = np.flatnonzero(true <= level)
        if ok.size == 0:
            return math.nan  # not reached within 8·B: η < 1/8
        i = int(ok[0])
        if i == 0 or not np.isfinite(true[i - 1]):
            return budget / grid[i]  # a lower bound: the cheapest budget tried reaches it
        f = (true[i - 1] - level) / (true[i - 1] - true[i])
        lo, hi = math.log(grid[i - 1]), math.log(grid[i])
        return budget / math.exp(lo + f * (hi - lo))

    out = {"free_c": float(free.allocate(budget).values["c"]),
           "free_true_loss_at_B": float(truth.loss(free.allocate(budget).values))}
    for hold in holds:
        held_bounds = {**BOUNDS, "c": {"min": hold, "max": hold}}
        held = AllocationProblem(law_hat, cost, held_bounds).allocate(budget)
        target = truth.loss(held.values)
        out[f"c{hold:g}_eta_vs_deployed_held"] = first(target)
        out[f"c{hold:g}_eta_vs_oracle_held"] = first(oracle_losses[hold])
        out[f"c{hold:g}_held_true_loss_at_B"] = float(target)
    return out


def generating_law_study(truth, name: str, rows, cost: str, budget: float,
                         holds: tuple[float, ...], noise: float, datasets: int,
                         seed: int) -> dict[str, Any]:
    from rlscale.optimize import AllocationProblem, fit_law

    design = _design(rows)
    clean = np.array([truth.loss({VARS[a]: p[a] for a in AXES}) for p in design])
    # The generator's own best plan with c held: with c fixed its context term is a
    # constant, so the additive part's optimum over (E, t, k) is the generator's optimum.
    additive = getattr(truth, "rest", truth)
    oracle = {}
    for hold in holds:
        held_bounds = {**BOUNDS, "c": {"min": hold, "max": hold}}
        oracle[hold] = truth.loss(AllocationProblem(additive, cost, held_bounds)
                                  .allocate(budget).values)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(datasets):
        data = {a: np.array([p[a] for p in design]) for a in AXES}
        data["loss"] = clean * np.exp(noise * rng.standard_normal(clean.size))
        try:
            hat = fit_law(data, law="additive", axes=list(AXES), target="loss", n_jobs=1)
            out.append(_deployed(truth, law_in_vars(hat.law), cost, budget, holds, oracle))
        except Exception as exc:  # reported, not hidden
            out.append({"error": str(exc)[:200]})
    ok = [r for r in out if "error" not in r]
    summary: dict[str, Any] = {"generator": name, "datasets": datasets,
                               "failed": len(out) - len(ok), "noise_log_sd": noise,
                               "free_c_median": float(np.median([r["free_c"] for r in ok]))
                               if ok else None}
    for hold in holds:
        for against in ("deployed_held", "oracle_held"):
            v = np.array([r[f"c{hold:g}_eta_vs_{against}"] for r in ok], dtype=float)
            wins = int(np.sum(np.nan_to_num(v, nan=0.0) >= 1.0))
            lo, hi = _wilson(wins, len(v))
            q = np.nanpercentile(v, [25, 50, 75]) if np.isfinite(v).any() else [math.nan] * 3
            summary[f"hold_c{hold:g}_vs_{against}"] = {
                "median": float(np.median(np.nan_to_num(v, nan=0.0))),
                "quartiles": [float(q[0]), float(q[2])], "share_at_least_1": wins / max(len(v), 1),
                "share_ci": [lo, hi], "not_reached": int(np.sum(~np.isfinite(v)))}
    return summary


def _wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def main(argv: list[str] | None = None) -> int:
    from rlscale.files._atomic import write_json_atomic

    parser = argparse.ArgumentParser(prog="python -m benchmarks.context_axis",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="context-axis")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, 40 bootstrap resamples, 5 data sets: a check that it runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.bootstrap, args.datasets = 2, 40, 5
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start, cpu0, load0 = time.perf_counter(), _cpu(), os.getloadavg()
    price = price_of_context(repeats=1 if args.quick else 3)
    cost = cost_text(price["kappa0"], price["kappa1"])
    print(f"price of context: {price['cpu_s_per_env_step']} s/step at c = {price['contexts']}"
          f" -> cost {cost}", flush=True)
    rows = run_sweep_rows(out, list(range(args.seeds)), args.jobs)
    result = fit(rows, args.bootstrap)
    law = summarise_law(result, rows)
    print(f"law: {result.law}; exponents {law['intervals']}; ordering {law['ordering']} "
          f"{law['ordering_agreement']}; leave-largest-context-out "
          f"{law['leave_largest_context_out']}", flush=True)
    lv = law_in_vars(result.law)
    from rlscale.theory import parse_posynomial

    budget = float(parse_posynomial(cost).evaluate({k: float(v) for k, v in BASE.items()}))
    planned = {}
    for hold in (float(BASE["c"]), 1.0):
        cmp = plans(lv, cost, budget, hold)
        planned[f"hold_c{hold:g}"] = {"free": cmp.free.values, "held": cmp.held.values,
                                      "free_loss": cmp.free.loss, "held_loss": cmp.held.loss,
                                      "eta": cmp.eta, "eta_interval":
                                      predicted_eta_interval(result, cost, budget, hold)}
        print(f"plan (hold c = {hold:g}): {planned[f'hold_c{hold:g}']}", flush=True)
    deployed = deploy_by_training(lv, cost, budget, out, args.jobs,
                                  DEPLOY_SEEDS[:args.seeds])
    print(f"deployed by training: {deployed}", flush=True)
    generated = []
    truths = [("fitted law (well specified)", lv),
              ("measured context curve (misspecified)", _EmpiricalContext(lv, rows))]
    for name, truth in truths:
        g = generating_law_study(truth, name, rows, cost, budget, (float(BASE["c"]), 1.0),
                                 max(result.rmse_log, 0.02), args.datasets, seed=7)
        generated.append(g)
        print(f"generating law: {g}", flush=True)
    meta = {"load_before": load0, "load_after": os.getloadavg(),
            "wall_seconds": time.perf_counter() - start,
            "cpu_seconds_this_process": _cpu() - cpu0, "seeds": args.seeds,
            "bootstrap": args.bootstrap, "datasets": args.datasets, "budget": budget,
            "cost": cost, "bounds": BOUNDS, "base": BASE}
    write_json_atomic(out / "results.json", {"meta": meta, "price": price, "law": law,
                                             "plans": planned, "deployed": deployed,
                                             "generating_law": generated})
    print(f"wrote {out / 'results.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
