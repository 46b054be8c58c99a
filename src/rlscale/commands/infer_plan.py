"""``rlscale infer-plan``: spend an inference budget across the turns of an agent task.

Two uses:

* ``rlscale infer-plan --q 0.9,0.5,0.1 --budget 20`` — per-turn candidate
  success rates (and optionally unit costs and a noisy verifier) → the optimal
  static plan (exact integer and continuous), the adaptive plan's success and
  the baselines with η; ``--sweep START:STOP:NUM`` tabulates budgets.
* ``rlscale infer-plan --q 0.1,0.5 --q-full 0.9,0.6 --context-levels 1,4,16
  --context-cost 0.5 --budget 20`` — context per turn: the joint plan of a window and a
  sample count per turn against samples-only, context-only and one-window plans.
* ``rlscale infer-plan --fit-coverage DATA.csv`` — fit the empirical coverage
  law c(k) = exp(a·k^b) from per-problem (samples, correct) counts.
* ``rlscale infer-plan --ground`` — train a policy on key → door → goal
  gridworlds and compare predicted with realised success of the plans
  (``--out DIR`` writes ``results.json`` and figures).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "infer-plan",
        help="allocate an inference budget across the turns of a multi-turn agent",
        description="Optimal static and adaptive allocation of n samples across turns, "
        "against uniform, front-loaded, difficulty-proportional and fixed-n baselines.",
    )
    parser.add_argument("--q", metavar="Q1,Q2,...",
                        help="per-turn probability that one candidate is correct")
    parser.add_argument("--costs", metavar="C1,C2,...",
                        help="per-turn cost of one candidate (whole numbers; default 1)")
    parser.add_argument("--fpr", type=float,
                        help="verifier false-positive rate (default 0: perfect verifier)")
    parser.add_argument("--fnr", type=float,
                        help="verifier false-negative rate (default 0)")
    parser.add_argument("--failures", choices=("terminal", "retried"),
                        help="a wrong commit ends the episode (terminal, the default) or is "
                        "retried")
    parser.add_argument("--context-levels", metavar="C1,C2,...",
                        help="context windows the harness can give each turn: plan a window and "
                        "a sample count per turn (--q is then the success at the smallest "
                        "window; more context or more samples?)")
    parser.add_argument("--q-full", metavar="Q1,Q2,...",
                        help="with --context-levels: per-turn success with unlimited context")
    parser.add_argument("--context-exponent", type=float,
                        help="with --context-levels: q(c) = q_full − (q_full − q)·c^(−γ); "
                        "γ (default 0.5)")
    parser.add_argument("--context-cost", type=float,
                        help="with --context-levels: sample units one candidate costs per unit "
                        "of context (beside --costs, default 0)")
    parser.add_argument("--budget", type=float, help="total budget in sample units")
    parser.add_argument("--sweep", metavar="START:STOP:NUM",
                        help="log-spaced budgets (rounded to whole units)")
    parser.add_argument("--ground", action="store_true",
                        help="train an agent and compare predicted with realised success")
    parser.add_argument("--quick", action="store_true",
                        help="with --ground: a smaller run (fewer environments and episodes)")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="FIELD=VALUE",
                        help="with --ground: any GroundingConfig field, e.g. --set episodes=20000 "
                        "or --set budget_factors=1,2,4 (repeatable)")
    parser.add_argument("--fit-coverage", metavar="DATA.csv",
                        help="fit c(k) = exp(a·k^b) to a CSV with columns samples,correct "
                        "(one row per problem); prints a, b with bootstrap intervals")
    parser.add_argument("--bootstrap", type=int,
                        help="with --fit-coverage: bootstrap resamples (default 200)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--out", metavar="DIR",
                        help="with --ground: write results.json and PNG figures here")
    parser.set_defaults(func=_run)


def _floats(name: str, text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers; got {text!r}") from None


def _turns(args: argparse.Namespace) -> list[Any]:
    from rlscale.theory import Turn

    if args.q is None:
        raise ValueError("give --q Q1,Q2,... (or --ground)")
    q = _floats("--q", args.q)
    if not q:
        raise ValueError("--q must list at least one success rate")
    costs = [1.0] * len(q) if args.costs is None else _floats("--costs", args.costs)
    if len(costs) != len(q):
        raise ValueError(f"--costs must have one entry per turn ({len(q)}); got {len(costs)}")
    for c in costs:
        if c != int(c):
            raise ValueError(f"--costs must be whole numbers; got {c:g}")
    if args.fpr == 0 and args.fnr == 0:
        return [Turn.with_coverage(v, cost=int(c)) for v, c in zip(q, costs)]
    return [Turn.with_verifier(v, fpr=args.fpr, fnr=args.fnr, cost=int(c),
                               failures=args.failures) for v, c in zip(q, costs)]


def _table(turns: list[Any], budgets: list[int]) -> tuple[str, list[Any]]:
    from rlscale.optimize import BASELINES, compare_inference_plans

    head = (f"{'budget':>8s} {'static':>8s} {'adaptive':>9s} "
            + " ".join(f"{b:>12s}" for b in BASELINES) + "   η(best)  static n")
    lines, results = [head], []
    for B in budgets:
        cmp = compare_inference_plans(turns, B)
        results.append(cmp)
        adaptive = "" if cmp.adaptive is None else f"{cmp.adaptive.success:9.4f}"
        lines.append(f"{B:8d} {cmp.optimal.success:8.4f} {adaptive:>9s} "
                     + " ".join(f"{cmp.baselines[b].success:12.4f}" for b in BASELINES)
                     + f"   {cmp.eta[cmp.best_baseline]:7.2f}  "
                     + ",".join(str(n) for n in cmp.optimal.n))
    return "\n".join(lines), results


#: The options each use reads (argparse dests), keyed by the flag that selects the use
#: (``--q`` is the per-turn plan, the default use).  Any other option given is refused with
#: one line naming it: ``--fpr`` with ``--fit-coverage`` or ``--budget`` with ``--ground``
#: was ignored without a word (issue 22).  The defaults of the plan's options are None so
#: that "given" can be told apart; :data:`PLAN_DEFAULTS` fills them in afterwards.
USES: dict[str, frozenset[str]] = {
    "--ground": frozenset({"ground", "quick", "settings", "out", "json"}),
    "--fit-coverage": frozenset({"fit_coverage", "bootstrap", "json"}),
    "--context-levels": frozenset({"q", "costs", "fpr", "fnr", "failures", "context_levels",
                                   "q_full", "context_exponent", "context_cost", "budget",
                                   "sweep", "json"}),
    "--q": frozenset({"q", "costs", "fpr", "fnr", "failures", "budget", "sweep", "json"}),
}
PLAN_DEFAULTS = {"fpr": 0.0, "fnr": 0.0, "failures": "terminal"}


def _use(args: argparse.Namespace) -> str:
    """The use ``args`` select (a key of :data:`USES`)."""
    if args.ground:
        return "--ground"
    if args.fit_coverage is not None:
        return "--fit-coverage"
    return "--context-levels" if args.context_levels is not None else "--q"


def _flag(dest: str) -> str:
    """The command-line spelling of the argparse ``dest``."""
    return "--set" if dest == "settings" else "--" + dest.replace("_", "-")


def _refuse_unread(args: argparse.Namespace) -> None:
    """Refuse the first option given that the selected use does not read."""
    use = _use(args)
    reads = USES[use]
    for dest, value in vars(args).items():
        if dest in ("command", "func", "debug") or dest in reads:
            continue
        if value is None or value is False or value == []:
            continue
        flag, shown = _flag(dest), ", ".join(sorted(_flag(d) for d in reads))
        what = "the per-turn plan (--q)" if use == "--q" else use
        raise ValueError(f"{flag} is not read with {what} (that use reads {shown}); "
                         "drop it or choose the use it belongs to")


def _run(args: argparse.Namespace) -> int:
    from rlscale.files._atomic import write_json_atomic

    # The context options are None by default, so that one given where it does nothing is
    # refused, not ignored (issue 22's fuzz: --context-exponent +inf was accepted).
    context = [flag for flag, value in (
        ("--context-levels", args.context_levels), ("--q-full", args.q_full),
        ("--context-exponent", args.context_exponent), ("--context-cost", args.context_cost))
        if value is not None]
    if context and (args.ground or args.fit_coverage):
        raise ValueError(f"{context[0]} plans context per turn at a budget: not with "
                         f"{'--ground' if args.ground else '--fit-coverage'}")
    if context and args.context_levels is None:
        raise ValueError(f"{context[0]} applies with --context-levels only")
    if args.bootstrap is not None and not args.fit_coverage:  # None by default (as above)
        raise ValueError("--bootstrap applies with --fit-coverage only")
    if args.settings and not args.ground:  # as it always said
        raise ValueError("--set applies to --ground only")
    _refuse_unread(args)
    for dest, default in PLAN_DEFAULTS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    if args.ground:
        from dataclasses import asdict, fields

        from rlscale.commands.train import parse_setting
        from rlscale.verification._inference_grounding import (
            GroundingConfig,
            ground_inference,
            write_figures,
        )

        base = (GroundingConfig(environments=16, epochs=4, job_tasks=2, episodes=2000)
                if args.quick else GroundingConfig())
        values = asdict(base)
        types = {f.name: f.type for f in fields(GroundingConfig)}
        for text in args.settings:
            name, value = parse_setting(text, types)
            values[name] = value
        config = GroundingConfig(**values)
        result = ground_inference(config)
        print(result.summary())
        if args.out:
            from pathlib import Path

            from rlscale.files._containment import make_output_dir

            out = Path(args.out)
            make_output_dir(out)
            write_json_atomic(out / "results.json", result)
            try:
                files = write_figures(result, out)
            except ImportError as exc:
                print(f"no figures: {exc}", file=sys.stderr)
                files = []
            print(f"wrote {out / 'results.json'}" + "".join(f", {f}" for f in files),
                  file=sys.stderr)
        if args.json:
            write_json_atomic(args.json, result)
        return 0
    if args.fit_coverage is not None:
        fit = _fit(args.fit_coverage, 200 if args.bootstrap is None else args.bootstrap)
        if args.json:
            write_json_atomic(args.json, fit)
        return 0
    if args.settings:
        raise ValueError("--set applies to --ground only")
    if args.context_levels is not None:
        return _context(args)
    turns = _turns(args)
    if (args.budget is None) == (args.sweep is None):
        raise ValueError("give exactly one of --budget B or --sweep START:STOP:NUM")
    if args.budget is not None:
        from rlscale.theory._validation import check_scalar

        budgets = [check_scalar("--budget", args.budget, low=0.0)]  # inf: one line, not a crash
    else:
        from rlscale.commands.allocate import parse_sweep

        budgets = parse_sweep(args.sweep)
    whole = sorted({round(float(b)) for b in budgets})
    if args.budget is not None and whole[0] != args.budget:
        raise ValueError(f"--budget must be a whole number of sample units; got {args.budget:g}")
    text, results = _table(turns, whole)
    print(text)
    if args.json:
        write_json_atomic(args.json, {"turns": [t.as_dict() for t in turns],
                                      "comparisons": results})
    return 0


def _context(args: argparse.Namespace) -> int:
    """``--context-levels``: the joint context-and-samples plan against the restricted ones."""
    from rlscale.files._atomic import write_json_atomic
    from rlscale.optimize import compare_context_plans
    from rlscale.theory import ContextTurn

    if args.q is None or args.q_full is None:
        raise ValueError("--context-levels needs --q (success at the smallest window) and "
                         "--q-full (with unlimited context), one entry per turn")
    if args.budget is None or args.sweep is not None:
        raise ValueError("--context-levels plans one budget: give --budget B")
    q, full = _floats("--q", args.q), _floats("--q-full", args.q_full)
    if len(full) != len(q):
        raise ValueError(f"--q-full must have one entry per turn ({len(q)}); got {len(full)}")
    costs = [1.0] * len(q) if args.costs is None else _floats("--costs", args.costs)
    if len(costs) != len(q):
        raise ValueError(f"--costs must have one entry per turn ({len(q)}); got {len(costs)}")
    levels = []
    for v in _floats("--context-levels", args.context_levels):
        if not math.isfinite(v) or v != int(v):  # int(inf) is an OverflowError
            raise ValueError(f"--context-levels must be whole numbers; got {v:g}")
        levels.append(int(v))
    exponent = 0.5 if args.context_exponent is None else args.context_exponent
    context_cost = 0.0 if args.context_cost is None else args.context_cost
    turns = [ContextTurn(a, b, exponent, base_cost=c, context_cost=context_cost,
                         levels=tuple(levels), fpr=args.fpr,
                         fnr=args.fnr, failures=args.failures)
             for a, b, c in zip(q, full, costs)]
    from rlscale.theory._validation import check_scalar

    budget = check_scalar("--budget", args.budget, low=0.0)  # int(inf) was an OverflowError
    if budget != int(budget):
        raise ValueError(f"--budget must be a whole number of sample units; got {budget:g}")
    cmp = compare_context_plans(turns, int(budget))
    print(f"{'plan':>8} {'success':>9} {'cost':>8}  {'eta':>6}  "
          "context per turn / samples per turn")
    for name, plan in cmp.plans.items():
        eta = "" if name == "joint" else f"{cmp.eta[name]:6.3g}"
        print(f"{name:>8} {plan.success:9.4f} {plan.cost:8g}  {eta:>6}  "
              f"{','.join(map(str, plan.context))} / {','.join(map(str, plan.n))}")
    print(f"# {cmp.answer}")
    if args.json:
        write_json_atomic(args.json, {"turns": [t.as_dict() for t in turns], "comparison": cmp})
    return 0


def _fit(path: str, bootstrap: int) -> Any:
    from rlscale.commands.fit import read_columns
    from rlscale.optimize import fit_coverage

    # As `rlscale fit` reads its data: errors name the line and column, a repeated
    # header name is refused, a spreadsheet's byte-order mark is not part of a name.
    cols = read_columns(path, ["samples", "correct"])
    n, c = cols["samples"], cols["correct"]
    fit = fit_coverage(n, c, bootstrap=bootstrap)
    interval = ("" if fit.a_interval is None else
                f" [{fit.a_interval[0]:.4g}, {fit.a_interval[1]:.4g}]")
    b_interval = ("" if fit.b_interval is None else
                  f" [{fit.b_interval[0]:.4g}, {fit.b_interval[1]:.4g}]")
    print(f"c(k) = exp(a·k^b) over {fit.n_problems} problems: a = {fit.a:.4g}{interval}, "
          f"b = {fit.b:.4g}{b_interval} (95 % bootstrap)")
    print(f"extrapolation: fitted on k <= {fit.extrapolation_k // 4}, predicts "
          f"{fit.extrapolation_predicted:.4f} at k = {fit.extrapolation_k} "
          f"(observed {fit.extrapolation_observed:.4f})")
    return fit
