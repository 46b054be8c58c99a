"""Coverage of the report's predicted-η interval on synthetic sweeps from a known law.

    python -m benchmarks.calibration_eta [--datasets 200] [--bootstrap 200] [--seed 0]

The known law is shaped like the report's (a floor at the optimal policy's
loss 0.26; exponents 0.3, 0.3, 0.5 for environments, tasks per environment
and trajectories per task), the design is the report's default star sweep
with 3 seeds per point, and the noise is the quick report's measured log
residual (0.065).  Each data set is fitted with the bootstrap, its laws are
carried into η against the trajectories-only baseline and the strongest
baseline, and the study counts how often the 90 % interval contains the
known law's η (issue 11, item 9).
"""

from __future__ import annotations

import argparse
import sys
import time

LAW = {"floor": 0.26,
       "coefficients": {"environments": 0.5, "tasks_per_environment": 0.35,
                        "trajectories_per_task": 0.2},
       "exponents": {"environments": 0.3, "tasks_per_environment": 0.3,
                     "trajectories_per_task": 0.5}}
SUBSTITUTE = {"environments": "E", "tasks_per_environment": "t", "trajectories_per_task": "k"}
COST = "20.0*E + 2.0*E*t + 0.1*E*t*k"
BOUNDS = {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}
CENTRE = {"E": 8.0, "t": 4.0, "k": 8.0}


def study(datasets: int, bootstrap: int, seed: int, baseline: str, progress: bool = True):
    from rlscale.optimize import calibrate_eta, star_design
    from rlscale.report import DEFAULTS
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(LAW["floor"], LAW["coefficients"], LAW["exponents"])
    sweep = DEFAULTS["sweep"]
    design = star_design(sweep["base"], sweep["axes"])
    return calibrate_eta(law, COST, 1000.0, CENTRE, design, noise=0.065,
                         replicates=len(sweep["seeds"]), bounds=BOUNDS, substitute=SUBSTITUTE,
                         baseline=baseline, n_datasets=datasets, bootstrap=bootstrap,
                         plan_laws=40, confidence=0.9, seed=seed, progress=progress)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default="k only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    r = study(args.datasets, args.bootstrap, args.seed, args.baseline)
    lo, hi = r.coverage_interval
    print(f"baseline {r.baseline}: true η {r.truth:.4g}; {r.confidence:.0%} intervals cover it "
          f"in {r.coverage:.3f} of {r.n_datasets} data sets (Wilson 95 %: [{lo:.3f}, {hi:.3f}]; "
          f"{r.n_failed} failed) in {time.perf_counter() - start:.0f} s")
    for index, reason in r.failures:
        print(f"  data set {index} left out: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
