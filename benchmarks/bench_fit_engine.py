"""The fitting engine: batched resamples vs a scipy loop, pilot intervals, expression probes.

Three of issue 30's goals, measured:

* **one engine, batched**: an expression law's bootstrap (200 resamples of the
  Chinchilla form on the real points) solved in one engine call against the loop a
  user writes, scipy's ``least_squares(loss="huber", f_scale=1e-3)`` per resample
  from the point estimate (its own residuals and finite-difference Jacobian); the
  percentile intervals of both are printed side by side.
* **fewer runs than parameters**: 100 pilots of 4 runs of the 5-parameter Chinchilla
  form, each with a Gaussian prior and the posterior intervals of a regularised fit;
  the law of each pilot is drawn from the prior and the noise is the stated one, so
  honest 90 % intervals cover its parameters about 90 % of the time (Bayesian
  calibration: Cook, Gelman & Rubin 2006).  No peer: the figure is the coverage.
* **expression probes** of the issue (nested ``min``/``max``, overflowing and
  undefined constants, look-alike names, ``^``): the slowest of them against the
  2 s goal.  No peer.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from benchmarks._harness import Case

PROBES = ["min(max(N,a,b),c)", "min(max(N,a,b),max(N,c,d))", "N + exp(exp(exp(10)))",
          "exp(exp(exp(exp(10))))*N", "log(0)*N", "sqrt(-1)*N", "exp(1000)*N", "1e308*10*N",
          "\uff2e + A", "\u0410/N", "exp + N", "E + A/N^alpha"]


def _probe_times() -> list[tuple[str, float, str]]:
    from rlscale.theory import ExpressionLaw

    out = []
    N = np.geomspace(1, 100, 1000)
    for text in PROBES:
        start = time.perf_counter()
        try:
            law = ExpressionLaw(text, ["N"])
            p = {q: float(i + 1) for i, q in enumerate(law.params)}
            law.evaluate({"N": N}, p)
            law.gradient({"N": N}, p)
            what = "value"
        except (ValueError, TypeError) as exc:
            what = f"{type(exc).__name__}"
        out.append((text, time.perf_counter() - start, what))
    return out


def _pilots(n_pilots: int, seed: int = 0) -> dict[str, float]:
    """Coverage of the posterior intervals of 4-run pilots (module docstring)."""
    from rlscale.optimize import fit_expression

    prior = {"E": (1.8, 0.1, "log"), "A": (480.0, 0.3, "log"), "B": (2100.0, 0.3, "log"),
             "alpha": (0.35, 0.03), "beta": (0.37, 0.03)}
    rng = np.random.default_rng(seed)
    N = np.array([1e8, 4e8, 1.6e9, 6.4e9])
    D = 20.0 * N
    hits = dict.fromkeys(prior, 0)
    for _ in range(n_pilots):
        truth = {k: (c * math.exp(rng.normal(0, s)) if kind == "log" else rng.normal(c, s))
                 for k, (c, s, *rest) in prior.items() for kind in [rest[0] if rest else ""]}
        y = (truth["E"] + truth["A"] * N ** -truth["alpha"] + truth["B"] * D ** -truth["beta"])
        y = y * np.exp(rng.normal(0, 0.01, N.size))
        fit = fit_expression("E + A/N**alpha + B/D**beta", {"N": N, "D": D, "loss": y},
                             axes=["N", "D"], prior=prior, noise=0.01, loss="squared",
                             holdout=0)
        for k in prior:
            lo, hi = fit.intervals[k]
            hits[k] += lo <= truth[k] <= hi
    return {k: v / n_pilots for k, v in hits.items()}


def cases(smoke: bool) -> list[Case]:
    from benchmarks.bench_published_laws import chinchilla
    from rlscale.optimize import fit_expression

    out = []
    data = chinchilla()
    n_boot = 20 if smoke else 200
    got: dict = {}

    def ours():
        t = time.process_time()
        got["fit"] = fit_expression("E + A/N**alpha + B/D**beta", data, axes=["N", "D"],
                                    bootstrap=n_boot, seed=1, holdout=0)
        got["cpu"] = time.process_time() - t

    def peer():
        from scipy.optimize import least_squares

        t = time.process_time()
        # the same point fit, then the loop a user writes over the resamples
        p = fit_expression("E + A/N**alpha + B/D**beta", data, axes=["N", "D"],
                           holdout=0).params
        lN, lD, ly = np.log(data["N"]), np.log(data["D"]), np.log(data["loss"])
        x0 = [math.log(p["E"]), math.log(p["A"]), math.log(p["B"]), p["alpha"], p["beta"]]
        rng = np.random.default_rng(1)
        rows = []
        for _ in range(n_boot):
            idx = rng.integers(0, ly.size, ly.size)

            def resid(u, idx=idx):
                return np.log(np.exp(u[0]) + np.exp(u[1] - u[3] * lN[idx])
                              + np.exp(u[2] - u[4] * lD[idx])) - ly[idx]

            rows.append(least_squares(resid, x0, loss="huber", f_scale=1e-3).x)
        rows = np.array(rows)
        got["peer_rows"] = np.column_stack([np.exp(rows[:, :3]), rows[:, 3:]])
        got["peer_cpu"] = time.process_time() - t

    def extra():
        fit = got["fit"]
        q = np.quantile(got["peer_rows"], [0.05, 0.95], axis=0)
        names = ["E", "A", "B", "alpha", "beta"]
        text = "; ".join(f"{n} ours [{fit.intervals[n][0]:.4g}, {fit.intervals[n][1]:.4g}] "
                         f"peer [{q[0, j]:.4g}, {q[1, j]:.4g}]" for j, n in enumerate(names))
        return {"90% intervals": text,
                "cpu": f"ours {got['cpu']:.2f} s, peer {got['peer_cpu']:.2f} s; load "
                       f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
                "warnings": sorted({w.code for w in fit.warnings}) or "none"}

    out.append(Case(f"expression bootstrap x{n_boot} (Chinchilla)", ours, peer,
                    "the same point fit, then scipy least_squares per resample",
                    work=n_boot,
                    work_unit="resamples", extra=extra, repeats=1))

    n_pilots = 5 if smoke else 100
    cover: dict = {}

    def pilots():
        t = time.process_time()
        cover.update(_pilots(n_pilots))
        cover["cpu"] = time.process_time() - t

    def pilot_extra():
        cpu = cover.pop("cpu")
        return {"coverage of the 90% posterior intervals": {k: round(v, 2) for k, v in
                                                            cover.items()},
                "cpu": f"{cpu:.1f} s for {n_pilots} pilots; load {os.getloadavg()[0]:.1f}"}

    out.append(Case(f"{n_pilots} pilots of 4 runs, 5 parameters, with a prior", pilots, None,
                    work=n_pilots, work_unit="pilots", extra=pilot_extra, repeats=1,
                    warmup=False))
    times: list = []

    def probes():
        times[:] = _probe_times()

    def probe_extra():
        slow = max(times, key=lambda t: t[1])
        return {"slowest probe": f"{slow[0]!r}: {slow[1]:.3f} s ({slow[2]}; goal <= 2 s)",
                "outcomes": ", ".join(f"{t[0]!r}: {t[2]}" for t in times)}

    out.append(Case("expression probes of issue 30", probes, None, work=len(PROBES),
                    work_unit="probes", extra=probe_extra, repeats=1, warmup=False))
    return out
