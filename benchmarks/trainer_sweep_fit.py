"""Per-axis scaling laws fitted to a sweep's results, and their held-out predictions.

    python -m benchmarks.trainer_sweep_fit results.csv [--bootstrap 1000]

For each axis of a star ("axes") sweep, the runs where only that axis moves
are fitted with the additive law ``loss = floor + a·x^(−α)`` by
:func:`rlscale.optimize.fit_law` (Huber on log loss, L-BFGS-B, bootstrap over
runs) — ``x`` is ``environments``, ``tasks`` (E·t) or ``trajectories``
(E·t·k).  The largest value of the axis is held out: the law fitted on the
rest predicts its loss, with a bootstrap 95 % interval, and the observed mean
loss there (bootstrap CI over seeds) is compared with it.  The elasticity
``−d log loss / d log x = α·a·x^(−α)/loss`` at the sweep's base point orders
the axes by impact.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

_AXIS = {"environments": "environments", "tasks_per_environment": "tasks",
         "trajectories_per_task": "trajectories"}


def _fit_law():
    try:
        from rlscale.optimize import fit_law
    except ImportError:  # before the fitter is exported
        from rlscale.optimize._fit import fit_law
    return fit_law


def main(argv: list[str] | None = None) -> int:
    from rlscale.sweep._run import read_results

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--base", default="16,4,8", help="E,t,k of the star's centre")
    args = parser.parse_args(argv)
    fit_law = _fit_law()
    rows = read_results(args.results)
    E0, t0, k0 = (int(x) for x in args.base.split(","))
    base = {"environments": E0, "tasks_per_environment": t0, "trajectories_per_task": k0}
    rng = np.random.default_rng(0)
    print(f"{'axis':13s} {'exponent [95% CI]':>26s} {'floor':>7s} {'elasticity':>10s}  "
          f"held-out largest: predicted [95% CI] vs observed [95% CI]")
    for col, x_name in _AXIS.items():
        sub = [r for r in rows if all(r[a] == v for a, v in base.items() if a != col)]
        values = sorted({r[col] for r in sub})
        if len(values) < 4:
            continue
        top = values[-1]
        train_rows = [r for r in sub if r[col] != top]
        test_rows = [r for r in sub if r[col] == top]
        data = {x_name: np.array([r[x_name] for r in train_rows], float),
                "loss": np.array([r["loss"] for r in train_rows])}
        fit = fit_law(data, axes=[x_name], bootstrap=args.bootstrap, confidence=0.95,
                      holdout=0.0, n_jobs=1)
        names = list(fit.params)
        alpha = fit.params[f"exponent[{x_name}]"]
        lo, hi = fit.intervals[f"exponent[{x_name}]"]
        x_base = next(r[x_name] for r in sub if r[col] == base[col])
        x_top = test_rows[0][x_name]
        pred = fit.predict({x_name: x_top})
        samples = fit.bootstrap_samples
        coef_key = next(n for n in names if n.startswith("coefficient"))
        boot_pred = (samples[:, names.index("floor")] + samples[:, names.index(coef_key)]
                     * x_top ** (-samples[:, names.index(f"exponent[{x_name}]")]))
        p_lo, p_hi = np.quantile(boot_pred, [0.025, 0.975])
        obs = np.array([r["loss"] for r in test_rows])
        boots = obs[rng.integers(0, obs.size, (4000, obs.size))].mean(axis=1)
        o_lo, o_hi = np.quantile(boots, [0.025, 0.975])
        l_base = fit.predict({x_name: x_base})
        elasticity = alpha * fit.params[coef_key] * x_base ** (-alpha) / l_base
        inside = p_lo <= obs.mean() <= p_hi
        print(f"{x_name:13s} {alpha:8.3f} [{lo:.3f}, {hi:.3f}]   {fit.params['floor']:7.3f} "
              f"{elasticity:10.3f}  {x_name}={x_top:g}: {float(pred):.3f} "
              f"[{p_lo:.3f}, {p_hi:.3f}] vs {obs.mean():.3f} [{o_lo:.3f}, {o_hi:.3f}] "
              f"({'inside' if inside else 'OUTSIDE'} the prediction interval)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
