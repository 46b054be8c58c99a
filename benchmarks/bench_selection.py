"""Fast order-statistics sampler of best-of-n (cost independent of n) against a naive one."""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case
from rlscale.simulate import sample_selection


def _naive(n: int, trials: int, rng: np.random.Generator) -> float:
    # Materialise the n candidates: gold X, proxy X + σZ, take the proxy's argmax.
    total = 0.0
    block = max(1, (1 << 22) // n)
    for start in range(0, trials, block):
        b = min(block, trials - start)
        x = rng.standard_normal((b, n))
        y = x + rng.standard_normal((b, n))
        total += x[np.arange(b), np.argmax(y, axis=1)].sum()
    return total / trials


def cases(smoke: bool) -> list[Case]:
    out = []
    # Equal trials for both; the naive sampler costs ~2n normals per trial.
    for n, trials in ((1e3, 20_000), (1e6, 20)):
        if smoke:
            trials = max(2, trials // 100)
        rng = np.random.default_rng(0)
        out.append(Case(
            f"best-of-n[n={n:.0e}, {trials} trials]",
            lambda n=n, t=trials: sample_selection(n, 1.0, trials=t, rng=1).gold,
            lambda n=n, t=trials, r=rng: _naive(int(n), t, r),
            "naive sampler materialising n candidates", work=trials, work_unit="trials"))
    # Throughput of ours alone at 2e6 trials (the goal: >= 5e6 trials/s per core).
    big = 20_000 if smoke else 2_000_000
    for n in (1e3, 1e6, 1e12):
        out.append(Case(f"sample_selection[n={n:.0e}] throughput",
                        lambda n=n: sample_selection(n, 1.0, trials=big, rng=1).gold, None,
                        work=big, work_unit="trials"))
    raw = np.random.default_rng(2)
    out.append(Case("numpy standard_normal (for scale)", lambda: raw.standard_normal(big), None,
                    work=big, work_unit="normals"))
    return out
