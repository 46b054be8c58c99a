"""Write ``examples/pilot.csv``: the tutorial's pilot sweep, a known law with noise.

The law is ``loss = 0.25 + 1.2 E^-0.45 + 0.9 k^-0.35`` (E environments, k trajectories per
environment), observed on a 7 x 6 factorial with two seeds per cell and 2 % multiplicative
log-normal noise (seed 24): the truth is known, so the tutorial (docs/first-plan.md) can show
what the fit recovers.  Run from the repository root: ``python examples/make_pilot.py``.
"""

import csv

import numpy as np

rng = np.random.default_rng(24)
with open("examples/pilot.csv", "w", newline="") as fh:
    out = csv.writer(fh)
    out.writerow(["environments", "trajectories", "seed", "loss"])
    for E in (1, 2, 4, 8, 16, 32, 64):
        for k in (1, 2, 4, 8, 16, 32):
            for seed in (0, 1):
                loss = (0.25 + 1.2 * E**-0.45 + 0.9 * k**-0.35) * np.exp(rng.normal(0, 0.02))
                out.writerow([E, k, seed, f"{loss:.6f}"])
