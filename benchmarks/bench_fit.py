"""Law fitting: 250 points, 2 axes, full Hoffmann initialisation grid (summed vs mean Huber)."""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import fit_law
from rlscale.theory import AdditiveLaw

TRUTH = AdditiveLaw(1.8, {"N": 480.0, "D": 2100.0}, {"N": 0.35, "D": 0.37})


def _data(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    N = np.exp(rng.uniform(np.log(7e7), np.log(1.6e10), n))
    D = np.exp(rng.uniform(np.log(5e9), np.log(5e11), n))
    loss = TRUTH(N=N, D=D) * np.exp(rng.normal(0, 0.01, n))
    return {"N": N, "D": D, "loss": loss}


def cases(smoke: bool) -> list[Case]:
    n = 30 if smoke else 250
    starts = 20 if smoke else "grid"
    data = _data(n)
    fits: dict[str, object] = {}

    def ours():
        fits["sum"] = fit_law(data, axes=["N", "D"], starts=starts, holdout=0)

    def peer():
        fits["mean"] = fit_law(data, axes=["N", "D"], starts=starts, holdout=0, reduction="mean")

    def accuracy():
        out = {}
        truth = {"floor": 1.8, "exponent[N]": 0.35, "exponent[D]": 0.37}
        for key in ("sum", "mean"):
            p = fits[key].params  # type: ignore[attr-defined]
            out[f"{key} Huber: |error|"] = ", ".join(
                f"{k} {abs(p[k] - v):.4f}" for k, v in truth.items())
        return out

    return [Case(f"fit {n} points, 2 axes, {'4500-start grid' if not smoke else '20 starts'}",
                 ours, peer, "same fit with the mean (not summed) Huber loss", work=n,
                 work_unit="points", extra=accuracy, repeats=1 if not smoke else None)]
