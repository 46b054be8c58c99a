"""``rlscale report``: the end-to-end main job (see :mod:`rlscale.report`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "report",
        help="run the whole toolkit on built-in defaults and write a report",
        description="Verify the reward-optimisation law, run a trainer sweep, fit per-axis "
        "laws, solve the compute-optimal allocation (with and without synthetic "
        "environments), compare predicted and realised efficiency against scaling "
        "trajectories alone, check the proofs; write index.md, index.html, results.json "
        "and figures. Needs the 'plot' extra (not with --no-figures).",
    )
    parser.add_argument("--out", default="rlscale-report", metavar="DIR",
                        help="report directory (default: rlscale-report/); an existing "
                        "directory is replaced only if it holds an rlscale report")
    parser.add_argument("--config", metavar="TOML",
                        help="override defaults (schema: examples/report.toml)")
    parser.add_argument("--quick", action="store_true",
                        help="a smaller version of every step (about a minute)")
    parser.add_argument("--no-figures", action="store_true",
                        help="draw no figures (faster; needs no matplotlib): numbers only")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from rlscale.report import load_config, run_report
    from rlscale.report._document import bounded

    config = load_config(args.config, quick=args.quick)
    if args.no_figures:
        config["figures"] = False
    result = run_report(args.out, config=config, progress=not args.no_progress)
    eff = result.state.efficiency  # EfficiencyOutcome, or EfficiencyFallback (no plan)
    print(f"report written to {result.out}/index.html ({result.seconds:.0f} s)")
    kept = result.published
    if kept is not None and kept.kept:
        print(f"kept {len(kept.kept)} file(s) the old report did not write: "
              f"{', '.join(kept.kept)}", file=sys.stderr)
    if kept is not None and kept.left is not None:
        print(f"files of the old report that could not be moved are kept in {kept.left}",
              file=sys.stderr)
    if kept is not None and kept.refused:
        # A forged or corrupt manifest of the replaced report: never followed (issue 22).
        print(f"ignored {len(kept.refused)} entr{'y' if len(kept.refused) == 1 else 'ies'} "
              f"of the old report's manifest: {'; '.join(kept.refused)}", file=sys.stderr)
    pct = f"{round(eff.confidence * 100)} %"
    print(f"recommendation: {eff.recommendation.reason}")
    if eff.recommendation.status == "fallback":  # an EfficiencyFallback: no plan trained
        dep = eff.deployed
        for name, tb in dep.baselines.items():
            s = tb.success
            print(f"trained at the budget, {name} (cost {tb.arm.cost:.4g}): held-out "
                  f"success {s.estimate:.3f} [{s.low:.3f}, {s.high:.3f}] ({pct} interval)")
        if dep.difference is not None:
            d = dep.difference
            print(f"{dep.recommended} minus {dep.versus}: {d.estimate:+.3f} "
                  f"[{d.low:+.3f}, {d.high:+.3f}] ({pct} interval); no plan was judged or "
                  "trained (section 5 says why)")
        return 0
    for name, comp in eff.comparisons.items():
        pred, real = comp.predicted, comp.realised
        role = "strongest baseline" if name == eff.strongest else "baseline"
        if real.eta is None:
            shown, verdict = "cannot be estimated", "nothing to agree with"
        else:
            shown = (f"{bounded(real.eta, real.bound)} [{real.interval[0]:.3g}, "
                     f"{real.interval[1]:.3g}]")
            verdict = "they agree" if comp.intervals_overlap else "they do not overlap"
        print(f"{role} {name}: the plan's η on the judgement copy {pred.eta:.3g} "
              f"[{pred.interval[0]:.3g}, {pred.interval[1]:.3g}] (P(beats) "
              f"{pred.p_beats:.2f}), realised η {shown} ({pct} intervals; {verdict})")
    return 0
