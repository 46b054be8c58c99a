"""Does action forecasting help, and when?  CoPE vs GRPO vs RLOO on three families × two horizons.

    python -m benchmarks.cope_study [--seeds 10] [--jobs 2] [--out cope-study] [--quick]
        [SETTING ...]

Every arm trains the same shared-backbone policy (``policy="backbone"``, 32
tanh units, Adam at ``lr = 0.02`` chosen on pilot seeds 100–101 for GRPO, the
baseline, before the study ran) on the same data design and seeds, and
records held-out success against training environment steps every
``eval_every`` updates (exact for the gridworlds, a Monte Carlo mean over
common random numbers for the memory family).  CoPE runs with its defaults
(``forecast_weight`` 0.5, ``forecast_horizon`` 4), fixed before the study.

Settings (family × horizon):

* ``grid`` — the open gridworld, fully observed: side 5 (time limit 20) and 8 (32);
* ``keydoor`` — every task key → door → goal: side 5 and 7, longer multi-stage horizons;
* ``memory`` — cue corridors (partially observed: the cue is seen in the first step
  only; the context window holds the whole corridor): length 4 and 8.

Per setting, the success level is fixed from the data but symmetric in the
algorithms: ``level = untrained + ½·(best final IQM − untrained)``, the
best over the three arms.  Per run: the environment steps at which its curve
first reaches the level (linear interpolation between evaluations; a run that
never does is censored at its last step count and counted), and the area
under its curve (mean success over a common grid of environment steps from 0
to the smallest final step count of the setting, the untrained success at 0).
Reported: IQM over seeds with stratified-bootstrap 95 % intervals
(:func:`rlscale.simulate.iqm_ci`), the ratio of steps to the level
``IQM(CoPE)/IQM(baseline)`` with its interval (:func:`rlscale.simulate.iqm_ratio_ci`,
below 1: CoPE needs fewer) and the AUC difference
(:func:`rlscale.simulate.iqm_difference_ci`).  CPU seconds per run are
recorded too: CoPE's heads cost update compute (not acting compute).

Resumable: each finished run is written atomically to ``OUT/runs/<run_id>.json``
and skipped when the command is run again; ``OUT/results.json`` and
``OUT/results.md`` are rewritten atomically at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ALGORITHMS = ("cope", "grpo", "rloo")
COMMON = {"policy": "backbone", "hidden": 32, "lr": 0.02, "n_environments": 32,
          "tasks_per_environment": 4, "trajectories_per_task": 8, "tasks_per_step": 16,
          "eval_environments": 32, "eval_tasks_per_environment": 4, "eval_every": 4}
SETTINGS: dict[str, dict[str, Any]] = {
    "grid/short": {"grid_size": 5, "subgoal_rate": 0.0, "epochs": 12},
    "grid/long": {"grid_size": 8, "subgoal_rate": 0.0, "epochs": 12},
    "keydoor/short": {"grid_size": 5, "subgoal_rate": 1.0, "epochs": 12},
    "keydoor/long": {"grid_size": 7, "subgoal_rate": 1.0, "epochs": 16},
    "memory/short": {"env": "memory", "memory_length": 4, "min_lag": 4, "slippery": 0.0,
                     "context": 6, "epochs": 16, "eval_episodes": 32},
    "memory/long": {"env": "memory", "memory_length": 8, "min_lag": 8, "slippery": 0.0,
                    "context": 10, "epochs": 24, "eval_episodes": 32},
}
QUICK = {"n_environments": 8, "eval_environments": 8, "eval_every": 4}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_one(config: dict[str, Any]) -> dict[str, Any]:
    """Train one configuration; its learning curve and reference successes."""
    from rlscale.simulate import TrainConfig, train

    start = _cpu()
    res = train(TrainConfig.from_dict(config))
    return {"config": config, "curve": res.curve.tolist(), "success": res.success,
            "untrained": res.untrained_success, "optimal": res.optimal_success,
            "env_steps": res.env_steps, "cpu_seconds": _cpu() - start}


def configs(setting: str, seeds: list[int], quick: bool) -> list[dict[str, Any]]:
    base = {**COMMON, **SETTINGS[setting], **(QUICK if quick else {})}
    return [{**base, "algorithm": a, "seed": s} for a in ALGORITHMS for s in seeds]


def steps_to_level(curve: np.ndarray, level: float, untrained: float) -> tuple[float, bool]:
    """First environment-step count at which the curve reaches ``level`` (interpolated
    linearly from ``(0, untrained)``), and whether it did (else: its last count)."""
    x = np.concatenate([[0.0], curve[:, 1]])
    y = np.concatenate([[untrained], curve[:, 3]])
    hit = np.flatnonzero(y >= level)
    if hit.size == 0:
        return float(x[-1]), False
    i = int(hit[0])
    if i == 0:
        return 1.0, True  # reached before training: one step, to keep ratios finite
    frac = (level - y[i - 1]) / (y[i] - y[i - 1])
    return float(max(x[i - 1] + frac * (x[i] - x[i - 1]), 1.0)), True


def area(curve: np.ndarray, untrained: float, upto: float, points: int = 200) -> float:
    """Mean success over ``points`` environment-step counts in ``[0, upto]``."""
    x = np.concatenate([[0.0], curve[:, 1]])
    y = np.concatenate([[untrained], curve[:, 3]])
    return float(np.mean(np.interp(np.linspace(0.0, upto, points), x, y)))


def analyse(setting: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    from rlscale.simulate import iqm_ci, iqm_difference_ci, iqm_ratio_ci

    by = {a: sorted((r for r in runs if r["config"]["algorithm"] == a),
                    key=lambda r: r["config"]["seed"]) for a in ALGORITHMS}
    untrained = runs[0]["untrained"]
    final = {a: iqm_ci([r["success"] for r in by[a]], rng=0) for a in ALGORITHMS}
    level = untrained + 0.5 * (max(ci.estimate for ci in final.values()) - untrained)
    upto = min(r["curve"][-1][1] for r in runs)
    steps, reached, auc, cpu = {}, {}, {}, {}
    for a in ALGORITHMS:
        hits = [steps_to_level(np.array(r["curve"]), level, untrained) for r in by[a]]
        steps[a] = np.array([h[0] for h in hits])
        reached[a] = int(sum(h[1] for h in hits))
        auc[a] = np.array([area(np.array(r["curve"]), untrained, upto) for r in by[a]])
        cpu[a] = float(np.median([r["cpu_seconds"] / max(r["env_steps"], 1) * 1e6
                                  for r in by[a]]))
    out: dict[str, Any] = {
        "setting": setting, "seeds": len(by["cope"]), "untrained": untrained,
        "optimal": runs[0]["optimal"], "level": level, "auc_upto_env_steps": upto,
        "final_success": {a: final[a].as_dict() for a in ALGORITHMS},
        "steps_to_level": {a: iqm_ci(steps[a], rng=0).as_dict() for a in ALGORITHMS},
        "reached_level": reached,
        "auc": {a: iqm_ci(auc[a], rng=0).as_dict() for a in ALGORITHMS},
        "cpu_us_per_env_step": cpu,
    }
    for base in ("grpo", "rloo"):
        out[f"steps_ratio_cope_over_{base}"] = iqm_ratio_ci(steps["cope"], steps[base],
                                                            rng=0).as_dict()
        out[f"auc_difference_cope_minus_{base}"] = iqm_difference_ci(auc["cope"], auc[base],
                                                                     rng=0).as_dict()
    return out


def _fmt(ci: dict[str, float], digits: int = 3) -> str:
    return (f"{ci['estimate']:.{digits}f} [{ci['low']:.{digits}f}, "
            f"{ci['high']:.{digits}f}]")


def table(results: list[dict[str, Any]]) -> str:
    """The study as Markdown: steps-to-level ratios and AUC differences lead."""
    lines = ["| setting | level | steps ratio CoPE/GRPO | steps ratio CoPE/RLOO | "
             "AUC CoPE − GRPO | AUC CoPE − RLOO | final success CoPE / GRPO / RLOO | "
             "reached (of seeds) |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        fin = " / ".join(f"{r['final_success'][a]['estimate']:.3f}" for a in ALGORITHMS)
        reach = " / ".join(str(r["reached_level"][a]) for a in ALGORITHMS)
        lines.append(
            f"| {r['setting']} | {r['level']:.3f} | {_fmt(r['steps_ratio_cope_over_grpo'], 2)}"
            f" | {_fmt(r['steps_ratio_cope_over_rloo'], 2)} | "
            f"{_fmt(r['auc_difference_cope_minus_grpo'])} | "
            f"{_fmt(r['auc_difference_cope_minus_rloo'])} | {fin} | {reach} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from joblib import Parallel, delayed

    from rlscale.files._atomic import write_json_atomic, write_text_atomic
    from rlscale.simulate import TrainConfig
    from rlscale.sweep._run import run_id

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cope_study",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="*", metavar="SETTING",
                        help=f"from: {', '.join(SETTINGS)} (default: all)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="cope-study")
    parser.add_argument("--quick", action="store_true",
                        help="8 environments, 2 seeds: a check that the study runs")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.settings) - set(SETTINGS))
    if unknown:
        parser.error(f"unknown setting(s) {unknown}; choose from {list(SETTINGS)}")
    seeds = list(range(2 if args.quick else args.seeds))
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    wall, cpu0 = time.perf_counter(), _cpu()
    load = os.getloadavg()
    results = []
    for setting in args.settings or SETTINGS:
        todo, runs = [], []
        for cfg in configs(setting, seeds, args.quick):
            path = out / "runs" / f"{run_id(TrainConfig.from_dict(cfg).as_dict())}.json"
            if path.exists():
                runs.append(json.loads(path.read_text()))
            else:
                todo.append((cfg, path))

        def one(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
            row = run_one(cfg)
            write_json_atomic(path, row)
            return row

        runs += Parallel(n_jobs=args.jobs)(delayed(one)(c, p) for c, p in todo)
        r = analyse(setting, runs)
        results.append(r)
        print(f"{setting}: level {r['level']:.3f}; steps ratio CoPE/GRPO "
              f"{_fmt(r['steps_ratio_cope_over_grpo'], 2)}, CoPE/RLOO "
              f"{_fmt(r['steps_ratio_cope_over_rloo'], 2)}; AUC CoPE−GRPO "
              f"{_fmt(r['auc_difference_cope_minus_grpo'])} "
              f"({len(todo)} runs trained)", flush=True)
    meta = {"load_before": load, "load_after": os.getloadavg(),
            "wall_seconds": time.perf_counter() - wall,
            "cpu_seconds_this_process": _cpu() - cpu0, "seeds": len(seeds),
            "quick": args.quick, "common": COMMON}
    write_json_atomic(out / "results.json", {"meta": meta, "results": results})
    write_text_atomic(out / "results.md", table(results))
    print(table(results))
    print(f"wrote {out / 'results.json'} and {out / 'results.md'} (load {load[0]:.1f} → "
          f"{meta['load_after'][0]:.1f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
