"""Honest comparisons on the numpy RL trainer, with bootstrap CIs over seeds.

    python -m benchmarks.trainer_experiments [--seeds N] [--jobs J] [--json FILE]

1. RLDS-style subtask-decomposed advantage vs scalar GRPO on multi-subtask
   tasks (every task is key → door → goal).
2. Frontier-task selection (pass rate in [0.1, 0.9]) vs uniform task sampling.
3. Verifier filtering vs training on every synthetic environment when 40 % of
   them are defective (unsolvable or reward-leaking), with the epoch budget
   (filtering then also cuts the number of updates) and at equal updates.

Each arm is trained with the same seeds and evaluated exactly on the same
held-out tasks; the reported difference is IQM(arm) − IQM(baseline) over the
(seed × held-out task) success matrix with a stratified bootstrap 95 % CI
(:func:`rlscale.simulate.iqm_difference_ci`).  Whatever the sign, it is
reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

BASE = {"n_environments": 16, "tasks_per_environment": 4, "trajectories_per_task": 8,
        "eval_environments": 64}

EXPERIMENTS = {
    "rlds_vs_grpo_multisubtask": (
        {**BASE, "subgoal_rate": 1.0, "algorithm": "rlds", "epochs": 8},
        {**BASE, "subgoal_rate": 1.0, "algorithm": "grpo", "epochs": 8},
    ),
    "frontier_vs_uniform": (
        {**BASE, "frontier": (0.1, 0.9)},
        {**BASE},
    ),
    "verified_vs_unfiltered_defects": (
        {**BASE, "defect_rate": 0.4, "verify": True},
        {**BASE, "defect_rate": 0.4, "verify": False},
    ),
    # The same, at an equal number of updates (filtering otherwise also cuts compute).
    "verified_vs_unfiltered_equal_updates": (
        {**BASE, "defect_rate": 0.4, "verify": True, "steps": 16},
        {**BASE, "defect_rate": 0.4, "verify": False, "steps": 16},
    ),
}


def _scores(config: dict, seeds: list[int], jobs: int) -> np.ndarray:
    from joblib import Parallel, delayed

    from rlscale.simulate import TrainConfig, train

    def one(seed: int) -> np.ndarray:
        return train(TrainConfig.from_dict({**config, "seed": seed})).success_per_task

    return np.stack(Parallel(n_jobs=jobs)(delayed(one)(s) for s in seeds))


def main(argv: list[str] | None = None) -> int:
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("names", nargs="*", choices=[*EXPERIMENTS, []], default=[])
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds))
    out = {}
    for name in args.names or EXPERIMENTS:
        arm, base = EXPERIMENTS[name]
        start = time.perf_counter()
        a, b = _scores(arm, seeds, args.jobs), _scores(base, seeds, args.jobs)
        diff = iqm_difference_ci(a, b, rng=0)
        # Mean success per seed, and a plain bootstrap CI of the difference of means.
        ma, mb = a.mean(axis=1), b.mean(axis=1)
        rng = np.random.default_rng(0)
        boot = (ma[rng.integers(0, ma.size, (4000, ma.size))].mean(axis=1)
                - mb[rng.integers(0, mb.size, (4000, mb.size))].mean(axis=1))
        mean_diff = (float(ma.mean() - mb.mean()), *np.quantile(boot, [0.025, 0.975]).tolist())
        out[name] = {"arm": iqm_ci(a, rng=0).as_dict(), "baseline": iqm_ci(b, rng=0).as_dict(),
                     "difference": diff.as_dict(), "mean_arm": float(ma.mean()),
                     "mean_baseline": float(mb.mean()), "mean_difference": mean_diff,
                     "seeds": len(seeds), "arm_config": arm, "baseline_config": base}
        print(f"{name}: IQM arm {iqm_ci(a, rng=0)}  baseline {iqm_ci(b, rng=0)}  "
              f"difference {diff}; mean arm {ma.mean():.4f} baseline {mb.mean():.4f} "
              f"difference {mean_diff[0]:.4f} [{mean_diff[1]:.4f}, {mean_diff[2]:.4f}]  "
              f"({len(seeds)} seeds, {time.perf_counter() - start:.1f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2, default=list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
