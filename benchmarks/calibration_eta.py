"""Coverage of the plug-in plan's predicted-η intervals, against η_deployed and the oracle η.

    python -m benchmarks.calibration_eta [--datasets 200] [--bootstrap 200] [--seed 0]
        [--baseline NAME] [--method NAME] [--plan-laws 40] [--jackknife] [--json FILE]

The known law is shaped like the report's (a floor at the optimal policy's
loss 0.26; exponents 0.3, 0.3, 0.5 for environments, tasks per environment
and trajectories per task), the design is the report's default star sweep
with 3 seeds per point, and the noise is the quick report's measured log
residual (0.065).  Each data set is fitted with the bootstrap, its laws are
carried into η against every baseline, and every interval method is formed
from those same η: one study prints two tables method × baseline → coverage of
the 90 % interval with its Wilson 95 % interval, the misses below and above
the truth, and the wall time (issue 11, item 9): against each data set's
η_deployed (its plug-in plan judged by the known law, issue 29) and against the
oracle η (the known law's own optimum).  The decision that replaces the plug-in
plan is studied by ``python -m benchmarks.decision_study``.  ``--jackknife`` adds BCa
(one refit per design point and data set).
"""

from __future__ import annotations

import argparse
import json
import sys

LAW = {"floor": 0.26,
       "coefficients": {"environments": 0.5, "tasks_per_environment": 0.35,
                        "trajectories_per_task": 0.2},
       "exponents": {"environments": 0.3, "tasks_per_environment": 0.3,
                     "trajectories_per_task": 0.5}}
SUBSTITUTE = {"environments": "E", "tasks_per_environment": "t", "trajectories_per_task": "k"}
COST = "20.0*E + 2.0*E*t + 0.1*E*t*k"
BOUNDS = {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}
CENTRE = {"E": 8.0, "t": 4.0, "k": 8.0}


def study(datasets: int, bootstrap: int, seed: int, baseline: str = "k only",
          progress: bool = True, *, method: str | None = None, plan_laws: int = 40,
          jackknife: bool = False):
    from rlscale.optimize import calibrate_eta, star_design
    from rlscale.report import DEFAULTS
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(LAW["floor"], LAW["coefficients"], LAW["exponents"])
    sweep = DEFAULTS["sweep"]
    design = star_design(sweep["base"], sweep["axes"])
    extra = {} if method is None else {"method": method}
    return calibrate_eta(law, COST, 1000.0, CENTRE, design, noise=0.065,
                         replicates=len(sweep["seeds"]), bounds=BOUNDS, substitute=SUBSTITUTE,
                         baseline=baseline, n_datasets=datasets, bootstrap=bootstrap,
                         plan_laws=plan_laws, confidence=0.9, seed=seed, jackknife=jackknife,
                         progress=progress, **extra)


def table(r, which: str = "table") -> str:
    """The method × baseline coverage table of a study, as Markdown.

    ``which="table"`` scores against the oracle η (in the header), ``"table_deployed"``
    against each data set's η_deployed (the header gives the oracle η for scale).
    """
    names = list(r.truths)
    lines = ["| method | " + " | ".join(f"{b} (oracle η = {r.truths[b]:.4g})" for b in names)
             + " |", "|---|" + "---|" * len(names)]
    for m, row in getattr(r, which).items():
        cells = []
        for b in names:
            c = row[b]
            if c["coverage"] is None:
                cells.append("—")
                continue
            lo, hi = c["wilson"]
            n = "" if c["n"] == r.n_datasets else f", n = {c['n']}"
            cells.append(f"{c['coverage']:.3f} [{lo:.3f}, {hi:.3f}] ↓{c['below']} ↑{c['above']}"
                         f" w {c['median_width']:.3g}{n}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rescore(path: str) -> int:
    """Print the coverage table of a saved study, every method re-scored from its η."""
    from types import SimpleNamespace

    from rlscale.optimize._calibration import score_intervals

    with open(path, encoding="utf-8") as fh:
        saved = json.load(fh)
    args = (saved["truths"], saved["estimates"], saved["samples"], saved["jackknife"],
            saved["confidence"])
    _, tab = score_intervals(*args)
    dep = saved.get("deployed") or None
    r = SimpleNamespace(truths=saved["truths"], table=tab, n_datasets=saved["n_datasets"],
                        table_deployed=score_intervals(*args, dep)[1] if dep else {})
    print(f"{path}: {saved['n_datasets']} data sets ({saved['n_failed']} left out), nominal "
          f"{saved['confidence']:.0%}, re-scored")
    if dep:
        print("against η_deployed (each data set's plug-in plan under the known law):")
        print(table(r, "table_deployed"))
        print("against the oracle η:")
    print(table(r))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default="k only")
    parser.add_argument("--method", default=None, help="the headline method (default: "
                        "plan_uncertainty's default)")
    parser.add_argument("--plan-laws", type=int, default=40)
    parser.add_argument("--jackknife", action="store_true", help="add BCa (slower)")
    parser.add_argument("--json", metavar="FILE", help="write the whole result as JSON")
    parser.add_argument("--rescore", metavar="FILE", help="re-score a study saved with --json "
                        "with every current interval method (no refits) and print its table")
    args = parser.parse_args(argv)
    if args.rescore:
        return rescore(args.rescore)
    r = study(args.datasets, args.bootstrap, args.seed, args.baseline, method=args.method,
              plan_laws=args.plan_laws, jackknife=args.jackknife)
    print(f"{r.n_datasets} data sets ({r.n_failed} left out), seed {args.seed}, "
          f"{args.bootstrap} resamples, {args.plan_laws} laws carried into η; nominal "
          f"{r.confidence:.0%}; wall time {r.seconds:.0f} s")
    print("cells: coverage [Wilson 95 %] ↓misses below ↑misses above, median width")
    dep = {b: sorted(d[b] for d in r.deployed) for b in r.truths}
    print("η_deployed of the plug-in plan (the plan a user deploys, judged by the known law): "
          + "; ".join(f"{b} median {v[len(v) // 2]:.4g}, below 1 in "
                      f"{sum(x < 1 for x in v) / len(v):.0%}" for b, v in dep.items()))
    print("against η_deployed:")
    print(table(r, "table_deployed"))
    print("against the oracle η (the known law's own optimum; the earlier estimand):")
    print(table(r))
    skip = [s / (s + u) for s, u in zip(r.laws_skipped, r.laws_used)]
    print(f"carried laws skipped (exponent beyond ±1000 or no plan): in "
          f"{sum(s > 0 for s in r.laws_skipped)} data sets, at most {max(skip):.1%} of one; "
          f"resamples with no law (an exponent at 0): median "
          f"{sorted(r.laws_invalid)[len(r.laws_invalid) // 2]}, max {max(r.laws_invalid)} "
          f"of {args.bootstrap}")
    for index, reason in r.failures:
        print(f"  data set {index} left out: {reason}")
    if args.json:
        from rlscale.files._atomic import write_text_atomic

        write_text_atomic(args.json, json.dumps(r.as_dict(), default=float, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
