"""``rlscale design``: which runs to make next, within a budget, for a scaling-law fit.

Reads a pool of runnable configurations (CSV, one per row), the cost of each
(a column, or a cost expression such as ``6*N*D`` read by the whitelisting
posynomial parser), the runs already made (``--observed``, with the response
column) and where the law will be used (``--target``): the compute-optimal
plan at a budget (``budget:B``), the frontier of plans (``frontier:LO:HI:N``)
or a CSV of points.  It designs the next batch with
:func:`rlscale.optimize.design` and writes it as CSV (stdout, or ``--out``),
with ``--json`` the whole result: the runs, their cost, the predicted sd of the
target prediction before and after, the certificate and the method's status.
A one-line summary goes to stderr.
"""

from __future__ import annotations

import argparse
import csv
import sys
from typing import Any

METHODS = ("auto", "random", "cheapest", "cost-random", "surface", "d-optimal", "v-optimal",
           "bayes-d", "bayes-v")


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "design",
        help="choose the next pilot runs within a budget (CSV/JSON out)",
        description="Design the next batch of pilot runs from a pool of configurations with "
        "costs, so that the fitted law predicts well where it will be used (the plan at a "
        "larger budget): D-/V-optimal convex relaxations (cvxpy) with a certificate, robust "
        "over bootstrap laws, rounded to whole runs; or the random/cheapest baselines.",
    )
    parser.add_argument("--law", required=True,
                        help="additive, multiplicative, pass_rate, or an expression such as "
                        "'E + A/N**a + B/D**b' (with --axes and --param ranges)")
    parser.add_argument("--pool", required=True, metavar="POOL.csv",
                        help="candidate configurations, one per row (header row)")
    parser.add_argument("--budget", required=True, type=float,
                        help="what the batch may cost, in the pool's cost units")
    parser.add_argument("--axes", help="comma-separated pool columns that are the law's axes "
                        "(required)")
    parser.add_argument("--cost", help="a pool column or a cost expression such as '6*N*D' "
                        "(default: the pool's 'cost' column)")
    parser.add_argument("--target", help="budget:B (the compute-optimal plan at budget B), "
                        "frontier:LO:HI:N, or a CSV of target points (axes columns, optional "
                        "'weight')")
    parser.add_argument("--objective", choices=("loss", "regret"), default="loss",
                        help="for budget:/frontier: targets, minimise the variance of the "
                        "plan's predicted loss (loss, default) or the plan's expected regret "
                        "under the true law (regret)")
    parser.add_argument("--observed", metavar="RUNS.csv",
                        help="runs already made: the axes and the response column")
    parser.add_argument("--response", default="loss",
                        help="the observed runs' column the law predicts (default loss)")
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="design method (default auto: bayes-v with a fit and a target)")
    parser.add_argument("--bootstrap", type=int, default=100,
                        help="bootstrap resamples of the fit to the observed runs (default 100)")
    parser.add_argument("--n-laws", type=int, default=16,
                        help="bootstrap laws a robust design averages over (default 16)")
    parser.add_argument("--noise", type=float,
                        help="noise sd of one run's log response (default: from the fit)")
    parser.add_argument("--max-repeats", type=int, default=1,
                        help="runs allowed per candidate (default 1)")
    parser.add_argument("--allow-interior", action="store_true",
                        help="accept a target inside the pool's range (interpolation)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=LO:HI",
                        help="search range of an expression law's parameter (repeatable)")
    parser.add_argument("--bounds", action="append", default=[], metavar="AXIS=LO:HI",
                        help="bounds of a plan target's axis (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--out", metavar="NEXT.csv", help="write the batch here (default stdout)")
    parser.add_argument("--json", metavar="NEXT.json", help="also write the whole result as JSON")
    parser.set_defaults(func=_design)


def read_table(path: str) -> dict[str, list[str]]:
    """Every column of a CSV (cells as text); errors name the file."""
    from rlscale.files._atomic import csv_field_limit

    with open(path, newline="", encoding="utf-8-sig") as fh, csv_field_limit(path):
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        if not header:
            raise ValueError(f"{path}: no header row")
        from rlscale.commands.fit import refuse_repeated_columns

        refuse_repeated_columns(path, header)
        cols: dict[str, list[str]] = {h: [] for h in header}
        for line, row in enumerate(reader, start=2):
            if None in row:
                raise ValueError(f"{path}, line {line}: more cells than header columns")
            for h in header:
                cols[h].append((row.get(h) or "").strip())
    if not cols[header[0]]:
        raise ValueError(f"{path}: no data rows")
    return cols


def _ranges(items: list[str], flag: str) -> dict[str, tuple[float, float]]:
    out = {}
    for item in items:
        name, sep, rest = item.partition("=")
        lo, sep2, hi = rest.partition(":")
        try:
            if not sep or not sep2 or not name.strip():
                raise ValueError
            out[name.strip()] = (float(lo), float(hi))
        except ValueError:
            raise ValueError(f"{flag} must be NAME=LO:HI such as a=0.05:2; got {item!r}") \
                from None
    return out


def parse_target(text: str | None, bounds: dict[str, tuple[float, float]],
                 objective: str = "loss") -> Any:
    """``budget:B`` -> PlanTarget, ``frontier:LO:HI:N`` -> FrontierTarget, else a CSV path."""
    from rlscale.optimize import FrontierTarget, PlanTarget

    if text is None:
        return None
    kind, _, rest = text.partition(":")
    try:
        if kind == "budget":
            return PlanTarget(float(rest), bounds or None, objective)
        if kind == "frontier":
            lo, hi, num = rest.split(":")
            n = float(num)
            if not n.is_integer():
                raise ValueError
            return FrontierTarget(float(lo), float(hi), int(n), bounds or None, objective)
    except ValueError as exc:
        if "must be" in str(exc):
            raise ValueError(f"--target {text!r}: {exc}") from None
        raise ValueError(f"--target must be budget:B, frontier:LO:HI:N or a CSV file; got "
                         f"{text!r}") from None
    return read_table(text)


def _law(args: argparse.Namespace, axes: list[str]) -> Any:
    from rlscale.optimize._fit_family import FAMILIES

    if args.law in FAMILIES:
        if args.param:
            raise ValueError("--param declares an expression law's ranges; --law "
                             f"{args.law} is a built-in family")
        return args.law
    from rlscale.theory import ExpressionLaw

    return ExpressionLaw(args.law, axes, _ranges(args.param, "--param") or None)


def _design(args: argparse.Namespace) -> int:
    from rlscale.files._atomic import write_json_atomic, write_text_atomic
    from rlscale.optimize import design

    if not args.axes:
        raise ValueError("--axes must list the pool columns that are the law's axes, e.g. N,D")
    axes = [a.strip() for a in args.axes.split(",") if a.strip()]
    if not axes:
        raise ValueError(f"--axes must list column names; got {args.axes!r}")
    pool = read_table(args.pool)
    observed = read_table(args.observed) if args.observed else None
    target = parse_target(args.target, _ranges(args.bounds, "--bounds"), args.objective)
    result = design(_law(args, axes), pool, args.budget, target, cost=args.cost, axes=axes,
                    observed=observed, response=args.response, method=args.method,
                    n_laws=args.n_laws, bootstrap=args.bootstrap, noise=args.noise,
                    max_repeats=args.max_repeats, allow_interior=args.allow_interior,
                    seed=args.seed)
    text = result.to_csv()
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    if args.json:
        write_json_atomic(args.json, {"pool": args.pool, **result.as_dict()})
    before, after = result.target_sd_before, result.target_sd_after
    def g(v: float | None) -> str:
        return "unbounded" if v is None else f"{v:.4g}"  # None: the runs do not identify

    sds = "" if after is None else f"; target sd {g(before)} -> {g(after)}"
    if result.regret_after is not None:
        sds += f"; expected regret {g(result.regret_before)} -> {g(result.regret_after)}"
    print(f"rlscale design: {result.method} ({result.status}): {result.n_runs} runs costing "
          f"{result.cost:.6g} of {args.budget:.6g}{sds}", file=sys.stderr)
    if not result.success:
        print(f"warning [{result.status}] {result.message}", file=sys.stderr)
    return 0
