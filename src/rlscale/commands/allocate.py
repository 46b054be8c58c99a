"""``rlscale allocate``: what to run with a budget, from a TOML spec and a pilot sweep.

The spec (schema in :mod:`rlscale.optimize._spec`, example in
``examples/allocate.toml``) names a law, a posynomial cost, bounds, synthetic
data methods and optionally a one-axis baseline.

With ``--data PILOT.csv`` (the default way to plan) the spec's law family is fitted to
the pilot and ``--budget`` gets a **decision** (:func:`rlscale.optimize.recommend`): a
plan chosen on one fission copy of the pilot and judged on the other, recommended only
when it beats the baselines with probability ``--probability`` -- with its η against
every baseline, P(beats) and the loss saved -- or "use the baseline" with the reason.
``--method plug-in`` chooses the fitted law's own optimum instead (judged the same way).

Without ``--data`` the spec's law is taken as given: ``--budget`` minimises its loss
within a budget (the plug-in optimum of that law, with no uncertainty to judge it by),
``--target`` the cost of reaching a loss, and ``--sweep START:STOP:NUM`` solves
log-spaced budgets with one compiled problem (and the efficiency curve against the
baseline).  A table goes to stdout; ``--out DIR`` also writes JSON (and, for a sweep,
CSV and a PNG plot, extra ``plot``).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "allocate",
        help="compute-optimal allocation of a data budget (geometric program)",
        description="Solve the compute-optimal allocation of a spec (TOML): minimise the loss "
        "within --budget, the cost of reaching --target, or sweep budgets.",
    )
    parser.add_argument("spec", metavar="SPEC.toml", nargs="?", help="allocation spec (see "
                        "examples/allocate.toml); or give --fit and --cost instead")
    fitted = parser.add_argument_group(
        "planning from a saved fit (rlscale fit --out FIT.json), without a spec")
    fitted.add_argument("--fit", metavar="FIT.json", help="the fitted law and its bootstrap "
                        "laws: prints the plan with its uncertainty (intervals of the plan, "
                        "its loss, eta against each baseline, a robust plan)")
    fitted.add_argument("--cost", metavar="EXPR", help="with --fit: the posynomial cost, "
                        "e.g. '100*environments + trajectories'")
    fitted.add_argument("--bound", action="append", default=[], metavar="VAR=LOW,HIGH",
                        help="with --fit: bounds of a decision variable ('inf' leaves HIGH "
                        "open; repeatable)")
    fitted.add_argument("--substitute", action="append", default=[], metavar="AXIS=MONOMIAL",
                        help="with --fit: a law axis as a monomial of the decision variables, "
                        "e.g. tasks=E*t (repeatable)")
    fitted.add_argument("--confidence", type=float, default=None,
                        help="with --fit: interval level (default: the fit's)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--budget", type=float, help="minimise the loss with this budget")
    what.add_argument("--target", type=float, help="minimise the cost of reaching this loss")
    what.add_argument("--sweep", metavar="START:STOP:NUM",
                      help="log-spaced budgets, e.g. 1e4:1e8:20")
    parser.add_argument("--out", metavar="DIR",
                        help="write allocation/sweep JSON, sweep CSV and a PNG plot here")
    parser.add_argument("--hold", action="append", default=[], metavar="VAR=VALUE",
                        help="with --budget: also solve with VAR held at VALUE (e.g. c=1, the "
                        "plan without the context axis) and print the free plan's eta "
                        "against it (repeatable)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    pilot = parser.add_argument_group(
        "deciding from a pilot sweep (the default way to plan)")
    pilot.add_argument("--data", metavar="PILOT.csv", help="pilot sweep (CSV with a header: "
                       "the law's axes and --loss-column); fits the spec's law family and "
                       "recommends a plan or a baseline for --budget")
    # The pilot's options default to None (their values in PILOT_DEFAULTS), so that one given
    # without --data is refused rather than ignored (issue 22).
    pilot.add_argument("--loss-column", dest="target_column", metavar="COLUMN",
                       help="the pilot's loss column (default: loss)")
    pilot.add_argument("--centre", metavar="VAR=VALUE,...", help="the pilot's reference "
                       "allocation (decision variables), from which the baselines scale")
    pilot.add_argument("--method", choices=("bayes", "plug-in"),
                       help="the plan chosen on the selection copy (default: bayes)")
    pilot.add_argument("--probability", type=float,
                       help="probability a departure from the baseline needs (default 0.95)")
    pilot.add_argument("--default-baseline", metavar="NAME",
                       help="'proportional' (default) or '<variable> only'")
    pilot.add_argument("--bootstrap", type=int,
                       help="bootstrap resamples per fission copy (default 200)")
    pilot.add_argument("--loss-range", metavar="LOW,HIGH",
                       help="the loss's range, e.g. 0,1 for 1 − success")
    pilot.add_argument("--seed", type=int, help="seed of the split and bootstraps (default 0)")
    parser.set_defaults(func=_allocate)


#: The pilot options' values when not given (``--flag``: (attribute, value)).
PILOT_DEFAULTS = {"--loss-column": ("target_column", "loss"), "--method": ("method", "bayes"),
                  "--probability": ("probability", 0.95),
                  "--default-baseline": ("default_baseline", "proportional"),
                  "--bootstrap": ("bootstrap", 200), "--seed": ("seed", 0)}


#: Most budgets one ``--sweep`` solves (about ten minutes at ~50 ms a solve).
MAX_SWEEP = 10_000


def parse_sweep(text: str) -> list[float]:
    """``"1e4:1e8:20"`` -> 20 log-spaced budgets from 1e4 to 1e8."""
    import numpy as np

    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"--sweep must be START:STOP:NUM such as 1e4:1e8:20; got {text!r}")
    try:
        start, stop, num_f = float(parts[0]), float(parts[1]), float(parts[2])
        if not num_f.is_integer():
            raise ValueError
        num = int(num_f)
    except (ValueError, OverflowError):
        raise ValueError(f"--sweep must be START:STOP:NUM such as 1e4:1e8:20; got {text!r}") \
            from None
    if not (0 < start < stop and math.isfinite(stop)) or not 2 <= num <= MAX_SWEEP:
        raise ValueError(f"--sweep needs 0 < START < STOP and 2 <= NUM <= {MAX_SWEEP} (each "
                         f"budget is one solve, ~50 ms); got {text!r}")
    return np.logspace(math.log10(start), math.log10(stop), num).tolist()


def _print_allocation(alloc: Any, eff: Any | None) -> None:
    what = (f"budget {alloc.budget:g}" if alloc.budget is not None
            else f"target loss {alloc.target:g}")
    print(f"# optimal allocation for {what}  ({alloc.method}, status {alloc.status}, KKT "
          f"residual {alloc.kkt_residual:.2e})")
    if alloc.message:
        print(f"# {alloc.message}")
    print(f"{'variable':>24} {'value':>14} {'rounded':>10}")
    for k, v in alloc.values.items():
        r = alloc.rounded.get(k, "") if alloc.rounded else ""
        if isinstance(r, (int, float)) and abs(r) >= 1e15:
            r = f"{r:.6g}"  # a 52-digit count is noise beyond float precision
        print(f"{k:>24} {v:14.6g} {r!s:>10}")
    if alloc.effective != alloc.values:
        for k, v in alloc.effective.items():
            print(f"{'(law) ' + k:>24} {v:14.6g}")
    print(f"{'loss':>24} {alloc.loss:14.6g} {_g(alloc.rounded_loss):>10}")
    print(f"{'cost':>24} {alloc.cost:14.6g} {_g(alloc.rounded_cost):>10}")
    print("# share of the cost: " + ", ".join(f"{k} {v:.1%}" for k, v in alloc.shares.items()))
    if alloc.rounding_note:
        print(f"# rounding: {alloc.rounding_note}")
    if eff is not None:
        if math.isinf(eff.eta):
            print(f"# baseline (scale {eff.scaled} only): {eff.reason}")
        else:
            print(f"# baseline (scale {eff.scaled} only) needs {eff.baseline_budget:.6g} to reach "
                  f"loss {eff.target:.6g}: efficiency eta = {eff.eta:.4g}")


def _held(args: argparse.Namespace, spec: Any, kw: dict[str, Any]) -> Any:
    """``--hold VAR=VALUE``: the best plan with those variables held, and the free plan's η."""
    if not args.hold:
        return None
    if args.budget is None:
        raise ValueError("--hold compares plans at one budget: use it with --budget")
    from rlscale.optimize import held_comparison

    hold = {}
    for text in args.hold:
        name, _, value = text.partition("=")
        try:
            hold[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--hold expects VAR=VALUE such as c=1; got {text!r}") from None
    cmp = held_comparison(spec.law, spec.cost, args.budget, hold, kw["bounds"],
                          substitute=kw["substitute"], synthesis=kw["synthesis"])
    print("# held " + ", ".join(f"{k} = {v:g}" for k, v in hold.items()) + ": "
          + ", ".join(f"{k} {v:.6g}" for k, v in cmp.held.values.items())
          + f", loss {cmp.held.loss:.6g}")
    print(f"# {cmp.message}")
    return cmp


def _g(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


def _pairs(text: str, what: str) -> dict[str, float]:
    """``"E=8,t=4"`` -> ``{"E": 8.0, "t": 4.0}``."""
    out = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"{what} must be VAR=VALUE pairs separated by commas, such as "
                             f"E=8,t=4,k=8; got {text!r}") from None
    return out


def _read_pilot(path: str, columns: list[str]) -> dict[str, Any]:
    """The named columns of a CSV (header row), as float arrays, read as ``rlscale fit``
    reads its data: errors name the line and column, fields up to 1 MiB are read (a ragged
    row was "'<' not supported between instances of 'NoneType' and 'str'", issue 22)."""
    import numpy as np

    from rlscale.commands.fit import read_columns

    try:
        read = read_columns(path, list(dict.fromkeys(columns)))  # --loss-column may be an axis
    except ValueError as exc:
        raise ValueError(f"--data {exc}") from None
    return {c: np.array(v) for c, v in read.items()}


def _decide(args: argparse.Namespace, spec: Any) -> int:
    """``--data``: fit the pilot and recommend (:func:`rlscale.optimize.recommend`)."""
    from pathlib import Path

    from rlscale.files._atomic import write_json_atomic
    from rlscale.optimize import recommend

    if args.budget is None:
        raise ValueError("--data decides how to spend a budget: give --budget (--target and "
                         "--sweep plan a given law, without --data)")
    if spec.synthesis:
        raise ValueError("--data does not take a spec with [[synthesis]]: the decision "
                         "judges plans of the fitted law's own axes")
    if args.hold:
        raise ValueError("--hold compares plans of the spec's law at one budget; not with "
                         "--data (the decision judges plans on the pilot)")
    for name, value in PILOT_DEFAULTS.values():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if not args.centre:
        raise ValueError("--data needs --centre, the pilot's reference allocation in the "
                         "decision variables (e.g. --centre E=8,t=4,k=8): the baselines "
                         "scale from it")
    axes = list(spec.law.axes)
    data = _read_pilot(args.data, [*axes, args.target_column])
    loss_range = None
    if args.loss_range:
        parts = args.loss_range.split(",")
        try:
            loss_range = (float(parts[0]), float(parts[1]))
            if len(parts) != 2:
                raise ValueError
        except (ValueError, IndexError):
            raise ValueError(f"--loss-range must be LOW,HIGH such as 0,1; got "
                             f"{args.loss_range!r}") from None
    rec = recommend(data, spec.cost, args.budget, _pairs(args.centre, "--centre"),
                    law=spec.law.family, axes=axes, target=args.target_column,
                    bounds=spec.bounds or None, substitute=spec.substitute or None,
                    method=args.method, baseline=args.default_baseline,
                    probability=args.probability, bootstrap=args.bootstrap,
                    loss_range=loss_range, seed=args.seed)
    print(f"# {rec.reason}")
    print(f"{'recommended':>24} {rec.choice:>14}  (status {rec.status}, method {rec.method})")
    for k, v in rec.values.items():
        print(f"{k:>24} {v:14.6g}")
    pct = f"{rec.confidence:.0%}"
    print(f"# against each baseline, judged on a fission copy the choice never saw ({pct} "
          "intervals):")
    print(f"{'baseline':>24} {'eta':>10} {'interval':>22} {'P(beats)':>9} {'loss saved':>11}")
    for name, c in rec.comparisons.items():
        iv = f"[{c.eta_interval[0]:.4g}, {c.eta_interval[1]:.4g}]"
        print(f"{name:>24} {c.eta:10.4g} {iv:>22} {c.p_beats:9.2f} {c.gain:+11.4g}")
    if rec.choice != "plan" and rec.candidate:
        v = rec.candidate["values"]
        c = rec.candidate["comparisons"][rec.strongest]
        print("# best plan found (not recommended): "
              + ", ".join(f"{k}={x:.4g}" for k, x in v.items())
              + f"; against {rec.strongest}: eta {c.eta:.4g} [{c.eta_interval[0]:.4g}, "
              f"{c.eta_interval[1]:.4g}], P(beats) {c.p_beats:.2f}")
    for note in rec.notes:
        print(f"# note: {note}")
    if args.out:
        out = Path(args.out)
        write_json_atomic(out / "recommendation.json", {"spec": spec, "recommendation": rec})
        print(f"wrote {out / 'recommendation.json'}", file=sys.stderr)
    return 0


def _allocate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlscale.files._atomic import write_json_atomic, write_text_atomic
    from rlscale.optimize import efficiency, efficiency_curve, load_spec

    if args.fit:
        return _from_fit(args)
    fit_only = [f for f, v in (("--cost", args.cost), ("--bound", args.bound),
                               ("--substitute", args.substitute),
                               ("--confidence", args.confidence)) if v]
    if fit_only:
        raise ValueError(f"{fit_only[0]} belongs with --fit FIT.json (a spec names its cost "
                         "and bounds in TOML)")
    if args.spec is None:
        raise ValueError("give an allocation spec (SPEC.toml, see examples/allocate.toml) "
                         "or a saved fit: --fit FIT.json --cost EXPR")
    spec = load_spec(args.spec)
    if args.data:
        return _decide(args, spec)
    given = {"--centre": args.centre, "--loss-range": args.loss_range,
             **{flag: getattr(args, name) for flag, (name, _) in PILOT_DEFAULTS.items()}}
    pilot_only = [flag for flag, value in given.items() if value is not None]
    if pilot_only:
        raise ValueError(f"{pilot_only[0]} belongs with --data (deciding from a pilot sweep)")
    problem = spec.problem()
    kw = {"bounds": spec.bounds or None, "substitute": spec.substitute or None,
          "synthesis": spec.synthesis or None}
    out = Path(args.out) if args.out else None
    if args.sweep is None:
        if args.budget is not None:
            alloc = problem.allocate(args.budget)
            print("# the spec's law taken as given: its optimum (the plug-in plan). To decide "
                  "from a pilot, judged on data the plan was not chosen on, add --data")
        else:
            alloc = problem.min_cost(args.target)
        eff = curve = None
        if spec.baseline and args.budget is not None:
            # Iso-budget: what the baseline reaches with the same budget, and what
            # the optimum pays to reach that loss.
            curve = efficiency_curve(spec.law, spec.cost, [args.budget],
                                     spec.baseline["scaled"], spec.baseline["fixed"], **kw)
        elif spec.baseline:
            eff = efficiency(spec.law, spec.cost, alloc.loss, spec.baseline["scaled"],
                             spec.baseline["fixed"], **kw)
        _print_allocation(alloc, eff)
        held = _held(args, spec, kw)
        if curve is not None:
            if curve.notes:
                print(f"# baseline: {curve.notes[0]}")
            else:
                print(f"# baseline (scale {curve.scaled} only) reaches loss "
                      f"{curve.baseline_loss[0]:.6g} with this budget; the optimum reaches it "
                      f"with {curve.optimal_budget[0]:.6g}: efficiency eta = {curve.eta[0]:.4g}")
        if out:
            write_json_atomic(out / "allocation.json",
                              {"spec": spec, "allocation": alloc,
                               "efficiency": eff if curve is None else curve, "held": held})
            print(f"wrote {out / 'allocation.json'}", file=sys.stderr)
        return 0

    if args.hold:
        raise ValueError("--hold compares plans at one budget: use it with --budget")
    budgets = parse_sweep(args.sweep)
    allocs = problem.sweep(budgets, progress=not args.no_progress)
    curve = None
    if spec.baseline:
        curve = efficiency_curve(spec.law, spec.cost, budgets, spec.baseline["scaled"],
                                 spec.baseline["fixed"], progress=not args.no_progress, **kw)
    names = list(allocs[0].values)
    header = ["budget", "loss", *names, "kkt_residual"]
    if curve is not None:
        header += ["baseline_loss", "eta", "loss_ratio"]
    rows = []
    for i, a in enumerate(allocs):
        row = [a.budget, a.loss, *(a.values[n] for n in names), a.kkt_residual]
        if curve is not None:
            row += [curve.baseline_loss[i], curve.eta[i], curve.loss_ratio[i]]
        rows.append(row)
    print(" ".join(f"{h:>12}" for h in header))
    for row in rows:
        print(" ".join(f"{v:12.5g}" for v in row))
    if curve is not None and curve.notes:
        for note in curve.notes:
            print(f"# {note}")
    if out:
        csv_text = ",".join(header) + "\n" + "\n".join(
            ",".join(repr(float(v)) for v in row) for row in rows) + "\n"
        write_text_atomic(out / "sweep.csv", csv_text)
        write_json_atomic(out / "sweep.json", {"spec": spec, "allocations": allocs,
                                               "efficiency": curve})
        _plot(out / "sweep.png", budgets, allocs, curve)
        print(f"wrote {out / 'sweep.csv'}, {out / 'sweep.json'}, {out / 'sweep.png'}",
              file=sys.stderr)
    return 0


def _range_pair(flag: str, text: str) -> tuple[str, tuple[float, float | None]]:
    """``VAR=LOW,HIGH`` -> ``(VAR, (low, high))`` (``inf``: an open upper end)."""
    name, sep, rest = text.partition("=")
    parts = rest.split(",")
    try:
        if not sep or not name.strip() or len(parts) != 2:
            raise ValueError
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"{flag} must be VAR=LOW,HIGH such as E=1,1e6; got {text!r}") \
            from None
    return name.strip(), (low, None if math.isinf(high) and high > 0 else high)


def _fit_laws(fit: Any) -> tuple[Any, list[Any], int]:
    """The point law of a saved fit, its bootstrap laws, and the resamples left out."""
    from rlscale.optimize import ExpressionFit

    if not isinstance(fit, ExpressionFit):
        laws = fit.bootstrap_laws()
        return fit.law, laws, fit.n_bootstrap - len(laws)
    law = fit.bound.to_law()
    if law is None:
        raise ValueError(f"--fit: the fitted expression {fit.law.expr} is not a posynomial "
                         "law in its axes, so it has no geometric program (plan it in Python "
                         "with rlscale.optimize.allocate_expression)")
    laws = []
    names = list(fit.params)
    for row in [] if fit.bootstrap_samples is None else fit.bootstrap_samples:
        bound = fit.law.bind({p: float(row[names.index(p)]) for p in fit.law.params})
        try:
            one = bound.to_law()
        except ValueError:
            one = None
        if one is not None:
            laws.append(one)
    n = 0 if fit.bootstrap_samples is None else len(fit.bootstrap_samples)
    return law, laws, n - len(laws)


def _from_fit(args: argparse.Namespace) -> int:
    """``--fit FIT.json --cost EXPR --budget B``: the fitted law's plan with its uncertainty
    (:func:`rlscale.optimize.plan_uncertainty`), or with ``--data`` the decision."""
    from rlscale.optimize import AllocationProblem, load_fit, plan_uncertainty
    from rlscale.optimize._spec import AllocationSpec

    if args.spec is not None:
        raise ValueError("give either SPEC.toml or --fit FIT.json, not both")
    if not args.cost:
        raise ValueError("--fit needs --cost EXPR, the posynomial cost of the decision "
                         "variables (e.g. --cost '100*environments + trajectories')")
    if args.budget is None:
        raise ValueError("--fit plans one budget: give --budget B")
    if args.hold or args.sweep:
        raise ValueError("--hold and --sweep take a spec (SPEC.toml)")
    fit = load_fit(args.fit)
    if not fit.success:
        print(f"warning [{fit.status}] the saved fit: {fit.message}", file=sys.stderr)
    for warning in fit.warnings:
        print(f"warning {warning}", file=sys.stderr)
    law, laws, left_out = _fit_laws(fit)
    bounds = dict(_range_pair("--bound", text) for text in args.bound)
    substitute = {}
    for text in args.substitute:
        axis, sep, mono = text.partition("=")
        if not sep or not axis.strip() or not mono.strip():
            raise ValueError(f"--substitute must be AXIS=MONOMIAL such as tasks=E*t; got "
                             f"{text!r}")
        substitute[axis.strip()] = mono.strip()
    if args.data:
        spec = AllocationSpec(law=law, cost=args.cost, bounds=bounds, substitute=substitute,
                              source=str(args.fit))
        return _decide(args, spec)
    problem = AllocationProblem(law, args.cost, bounds or None, substitute or None)
    alloc = problem.allocate(args.budget)
    _print_allocation(alloc, None)
    level = fit.confidence if args.confidence is None else args.confidence
    for axis in law.axes:
        for w in fit.range_warnings({axis: alloc.effective.get(axis, alloc.values.get(axis))}):
            print(f"warning {w}", file=sys.stderr)
    if len(laws) < 2:
        print(f"# no uncertainty: the fit has {len(laws)} usable bootstrap laws (refit with "
              "rlscale fit --bootstrap 1000 --out FIT.json)")
        unc = None
    else:
        centre = _pairs(args.centre, "--centre") if args.centre else {
            v: math.sqrt(lo * hi) for v, (lo, hi) in fit.data_range.items()}
        unknown = sorted(set(alloc.values) - set(centre))
        if unknown:
            raise ValueError(f"--centre must give every decision variable {sorted(alloc.values)}"
                             f" (the pilot's reference allocation the baselines scale from); "
                             f"missing {unknown}")
        unc = plan_uncertainty(law, laws, args.cost, args.budget, centre, bounds or None,
                               substitute=substitute or None, confidence=level)
        _print_uncertainty(unc, left_out, "--centre" if args.centre else "data")
    if args.out:
        from pathlib import Path

        from rlscale.files._atomic import write_json_atomic

        out = Path(args.out) / "plan.json"
        write_json_atomic(out, {"fit": str(args.fit), "cost": args.cost, "bounds": bounds,
                                "substitute": substitute, "allocation": alloc,
                                "uncertainty": unc})
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _print_uncertainty(unc: Any, left_out: int, centre_from: str) -> None:
    pct = f"{unc.confidence:.0%}"
    print(f"# uncertainty from {unc.n_laws} bootstrap laws of the fit ({pct} intervals"
          + (f"; {left_out} resamples had no valid law" if left_out else "")
          + (f"; {unc.n_skipped} laws the solver could not take" if unc.n_skipped else "")
          + "):")
    for k, (lo, hi) in unc.allocation_intervals.items():
        print(f"{k:>24} {unc.point.plan.values[k]:14.6g}   [{lo:.6g}, {hi:.6g}]")
    lo, hi = unc.loss_band
    print(f"{'loss at the plan':>24} {unc.point.plan.loss:14.6g}   [{lo:.6g}, {hi:.6g}]")
    src = ("the reference allocation --centre" if centre_from == "--centre" else
           "the geometric centre of the data's range (set it with --centre)")
    print(f"# baselines scale {src}; eta = the budget a baseline needs for the plan's loss / "
          "the budget:")
    print(f"{'baseline':>24} {'eta':>10} {'interval':>22}")
    for name, row in unc.point.baselines.items():
        a, b = unc.eta_intervals[name]
        print(f"{name:>24} {float(row['eta']):10.4g} {f'[{a:.4g}, {b:.4g}]':>22}")
    print("# robust plan (bounded trimmed mean over the laws): "
          + ", ".join(f"{k}={v:.4g}" for k, v in unc.robust.values.items())
          + f"; expected loss {unc.robust_gain:+.3g} better than the point plan's, "
          f"{unc.robust_point_cost:+.3g} worse if the point law is right")
    print("# these intervals judge the plan by the fit that chose it (optimistic: the "
          "optimizer's curse); for a decision judged on data it was not chosen on, add "
          "--data PILOT.csv --centre ...")
    for note in unc.notes:
        print(f"# note: {note}")


def _plot(path: Any, budgets: list[float], allocs: list[Any], curve: Any | None) -> None:
    import io

    from rlscale._optional import require
    from rlscale.files._atomic import write_bytes_atomic

    mpl = require("matplotlib", extra="plot", purpose="sweep plots")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    ncols = 2 if curve is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 4), squeeze=False)
    ax = axes[0, 0]
    ax.loglog(budgets, [a.loss for a in allocs], "o-",
              label="compute-optimal")
    if curve is not None:
        ax.loglog(budgets, curve.baseline_loss, "s--", label=f"scale {curve.scaled} only")
    ax.set_xlabel("budget")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    if curve is not None:
        ax2 = axes[0, 1]
        ax2.loglog(budgets, curve.eta, "o-")
        ax2.axhline(1.0, color="grey", lw=0.8)
        ax2.set_xlabel("budget of the baseline")
        ax2.set_ylabel("efficiency η = B_baseline / B_optimal")
        ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
