"""``rlscale fit``: fit a per-axis scaling law to a CSV of results.

Reads the named columns of a CSV (extra columns are ignored, so the results
CSV of ``rlscale sweep`` feeds it directly), fits the law with
:func:`rlscale.optimize.fit_law` (Hoffmann et al. approach 3 with the summed
Huber loss) and prints the result as JSON.  Rows that repeat the same axis
values (seeds) are kept as separate observations unless ``--replicates mean``.

Diagnostics (collinear axes, a parameter at its bound or not identified,
correlated estimates, an ill-conditioned fit) are printed on stderr, one
``warning [code] ... Fix: ...`` line each, and stored under ``"warnings"`` in
the JSON.  ``--floor LOW,HIGH`` (additive) and ``--p-max LOW,HIGH``
(pass rate) bound the law by a known achievable optimum.

Any other law is written as an expression: ``--expr "E + A/N**alpha + B/D**beta"``
(repeat ``--expr`` with ``--target L1,L2`` for one law per output), fitted by
:func:`rlscale.optimize.fit_expression` with every option it takes: ``--param
NAME=LOW,HIGH`` ranges (hard bounds unless ``--ranges search``), ``--loss``,
``--residuals``, ``--prior NAME=CENTRE,SCALE[,log|normal]`` with ``--noise``,
``--max-nfev``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    from rlscale.optimize._fit_registry import FRONT_ENDS, STARTS_HELP

    parser = sub.add_parser(
        "fit",
        help="fit a per-axis scaling law to a CSV (JSON out)",
        description="Fit L = floor + sum_i a_i x_i^-alpha_i (or a multiplicative or pass-rate "
        "law) to CSV columns with the Huber/L-BFGS-B method; print the fit as JSON.",
    )
    parser.add_argument("csv", metavar="DATA.csv", help="CSV with a header row")
    parser.add_argument("--axes", required=True,
                        help="comma-separated axis columns, e.g. environments,tasks,trajectories")
    parser.add_argument("--law", choices=tuple(FRONT_ENDS), default=None,
                        help="the law: " + "; ".join(f"{name}: {front.summary}" for name, front
                                                     in FRONT_ENDS.items()))
    parser.add_argument("--target", default="loss", help="column to fit (default loss)")
    parser.add_argument("--replicates", choices=("keep", "mean"), default="keep",
                        help="rows with equal axis values: keep each (default) or average them")
    parser.add_argument("--starts", default="auto", help=STARTS_HELP)
    parser.add_argument("--bootstrap", type=int, default=0,
                        help="bootstrap resamples for confidence intervals (default 0; "
                        ">= 1000 for reporting)")
    parser.add_argument("--confidence", type=float, default=0.9,
                        help="interval level (default 0.9, rlscale's one level)")
    parser.add_argument("--holdout", type=float, default=0.1,
                        help="fraction of largest-scale points held out for the extrapolation "
                        "error (default 0.1)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--jobs", type=int, default=-1, help="bootstrap workers (default all)")
    parser.add_argument("--floor", metavar="LOW,HIGH",
                        help="bounds on the additive law's floor, e.g. 1 - optimal success "
                        "for a loss 1 - success ('0.25,0.26'; 'inf' leaves HIGH open)")
    parser.add_argument("--p-max", metavar="LOW,HIGH",
                        help="bounds on a pass-rate law's ceiling p_max in (0, 1], e.g. the "
                        "optimal policy's success")
    parser.add_argument("--out", metavar="FILE.json",
                        help="also write the fit to a file that loads back "
                        "(rlscale.optimize.load_fit; rlscale allocate --fit FILE.json)")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="built-in laws: draw the data, the law per axis with its "
                        "bootstrap band and the residuals (extra plot; .png/.pdf/.svg)")
    parser.add_argument("--figure", metavar="FILE.png",
                        help="sigmoid/gao laws: write a figure of the data and fit (matplotlib)")
    expr = parser.add_argument_group(
        "expression laws", "any law written as an expression (rlscale.optimize.fit_expression)")
    expr.add_argument("--expr", action="append", metavar="EXPR",
                      help="the law, e.g. 'E + A/N**alpha + B/D**beta' (repeat, with --target "
                      "L1,L2,..., for one law per output; they share parameters by name)")
    expr.add_argument("--param", action="append", default=[], metavar="NAME=LOW,HIGH",
                      help="a parameter's range ('inf' leaves a side open); hard bounds "
                      "unless --ranges search")
    expr.add_argument("--ranges", choices=("bounds", "search"), default="bounds",
                      help="declared ranges are hard bounds (default) or search ranges only")
    expr.add_argument("--loss", choices=("huber", "squared"), default="huber",
                      help="the loss of the residuals (default huber, delta 1e-3 on log)")
    expr.add_argument("--residuals", choices=("log", "raw"), default="log",
                      help="log f - log y (default) or f - y (targets that can be <= 0)")
    expr.add_argument("--prior", action="append", default=[], metavar="NAME=CENTRE,SCALE",
                      help="a Gaussian prior (add ',log' for log-normal); needs --noise; "
                      "lets a pilot have fewer runs than parameters")
    expr.add_argument("--noise", type=float, help="residual standard deviation of one run "
                      "(the prior's weight)")
    expr.add_argument("--max-nfev", type=int, help="evaluations per polish (default "
                      "max(500, 200 x parameters))")
    parser.set_defaults(func=_fit)


def refuse_repeated_columns(path: str, header: list[str]) -> None:
    """Refuse a CSV header that names a column twice, naming it.

    ``csv.DictReader`` keeps the last of two same-named columns: a pilot ``E,E,loss`` was
    read as one ``E`` and then reported as "no column 'k'" (issue 22).
    """
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise ValueError(f"{path}: column {repeated[0]!r} appears {header.count(repeated[0])} "
                         f"times in the header {header}; each column needs its own name")


def read_columns(path: str, columns: list[str]) -> dict[str, list[float]]:
    """The named numeric columns of a CSV; errors name the line and column."""
    import csv

    from rlscale.files._atomic import csv_field_limit

    # utf-8-sig: a spreadsheet's byte-order mark is not part of the first column name.
    with open(path, newline="", encoding="utf-8-sig") as fh, csv_field_limit(path):
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        refuse_repeated_columns(path, header)
        missing = [c for c in columns if c not in header]
        if missing:
            raise ValueError(f"{path}: no column {missing[0]!r}; columns: {header}")
        out: dict[str, list[float]] = {c: [] for c in columns}
        for line, row in enumerate(reader, start=2):
            for c in columns:
                text = (row.get(c) or "").strip()
                try:
                    out[c].append(float(text))
                except ValueError:
                    raise ValueError(f"{path}, line {line}: column {c!r} is not a number: "
                                     f"{text!r}") from None
    if not out[columns[0]]:
        raise ValueError(f"{path}: no data rows")
    return out


def _fit(args: argparse.Namespace) -> int:
    from rlscale.optimize import fit_law
    from rlscale.optimize._fit_registry import DEFAULT_LAW, front_end

    axes = [a.strip() for a in args.axes.split(",") if a.strip()]
    if not axes:
        raise ValueError(f"--axes must list column names; got {args.axes!r}")
    starts: str | int = args.starts
    if starts not in ("grid", "auto"):
        try:
            starts = int(starts)
        except ValueError:
            raise ValueError(f"--starts must be 'grid', 'auto' or a positive integer; "
                             f"got {starts!r}") from None
    floor = _pair("--floor", args.floor)
    p_max = _pair("--p-max", args.p_max)
    if args.expr:
        return _fit_expr(args, axes, starts)
    law = args.law or DEFAULT_LAW
    front = front_end(law)
    for flag, value, default in (("--param", args.param, []), ("--prior", args.prior, []),
                                 ("--noise", args.noise, None),
                                 ("--max-nfev", args.max_nfev, None),
                                 ("--ranges", args.ranges, "bounds"),
                                 ("--residuals", args.residuals, "log")):
        if value != default:
            raise ValueError(f"{flag} is for expression laws (--expr); got it with "
                             f"--law {law}")
    data = read_columns(args.csv, [*axes, args.target])
    if front.family is None:  # a curve fit of one axis (issue 15's named RL laws)
        from rlscale.commands._fit_forms import run

        if args.plot:
            raise ValueError(f"--plot draws additive, multiplicative and pass-rate fits; "
                             f"for --law {law} use --figure FILE.png")
        if starts != "auto":
            raise ValueError(f"--starts is for the built-in families and expressions; "
                             f"--law {law} has its own starts")
        return run(args, front, axes, data)
    if args.plot:  # fail before the fit, not after it
        from rlscale._optional import require

        require("matplotlib", extra="plot", purpose="fit plots (--plot)")
    result = fit_law(data, law=law, axes=axes, target=args.target, starts=starts,
                     bootstrap=args.bootstrap, confidence=args.confidence,
                     holdout=args.holdout, replicates=args.replicates, seed=args.seed,
                     n_jobs=args.jobs, progress=args.bootstrap > 0, floor=floor, p_max=p_max,
                     loss=args.loss)
    _emit(args, result)
    if args.plot:
        result.plot({k: data[k] for k in (*axes, args.target)}, path=args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _fit_expr(args: argparse.Namespace, axes: list[str], starts: str | int) -> int:
    """``--expr``: the expression front end, every option forwarded."""
    from rlscale.optimize import fit_law

    if args.plot:
        raise ValueError("--plot draws built-in law fits (--law additive, multiplicative, "
                         "pass_rate); an --expr fit has no plot yet")
    if args.law is not None or args.floor or args.p_max or args.replicates != "keep":
        raise ValueError("--expr replaces --law; --floor/--p-max/--replicates are for the "
                         "built-in laws (declare a range with --param NAME=LOW,HIGH)")
    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    data = read_columns(args.csv, [*axes, *targets])
    params = dict(_named("--param", text, 2) for text in args.param)
    prior = dict(_named("--prior", text, 3) for text in args.prior)
    law = args.expr if len(args.expr) > 1 else args.expr[0]
    result = fit_law(data, law, axes=axes, target=targets if len(targets) > 1 else targets[0],
                     starts=starts, bootstrap=args.bootstrap, confidence=args.confidence,
                     holdout=args.holdout, seed=args.seed, params=params or None,
                     ranges=args.ranges, loss=args.loss, residuals=args.residuals,
                     prior=prior or None, noise=args.noise, max_nfev=args.max_nfev)
    return _emit(args, result)


def _emit(args: argparse.Namespace, result: Any) -> int:
    """Warnings on stderr (one line each), the fit as JSON on stdout and in ``--out``."""
    from rlscale.files._atomic import to_jsonable, write_json_atomic

    if not result.success:
        print(f"warning [{result.status}] {result.message}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning {warning}", file=sys.stderr)
    payload = {"data": args.csv, **result.as_dict()}
    json.dump(to_jsonable(payload), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    if args.out:  # the loadable form: the same summary, plus the format and the state
        from rlscale.optimize._fit_io import fit_to_json

        write_json_atomic(args.out, {"data": args.csv, **fit_to_json(result)})
    return 0


def _named(flag: str, text: str, most: int) -> tuple[str, tuple]:
    """``NAME=A,B[,C]`` -> ``(NAME, (a, b[, c]))``: numbers, and for a prior a kind."""
    name, sep, rest = text.partition("=")
    parts = [p.strip() for p in rest.split(",")]
    if not sep or not name.strip() or not 2 <= len(parts) <= most:
        shape = "NAME=LOW,HIGH" if most == 2 else "NAME=CENTRE,SCALE[,log|normal]"
        raise ValueError(f"{flag} must be {shape}; got {text!r}")
    try:
        values: list = [float(p) for p in parts[:2]]
    except ValueError:
        raise ValueError(f"{flag} {text!r}: {parts[:2]} are not numbers") from None
    if len(parts) == 3:
        values.append(parts[2])
    return name.strip(), tuple(values)


def _pair(flag: str, text: str | None) -> tuple[float, float] | None:
    """``"LOW,HIGH"`` -> (low, high); ranges are checked by :func:`fit_law`."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        return (float(parts[0]), float(parts[1]))
    except ValueError:
        raise ValueError(f"{flag} must be LOW,HIGH (two numbers); got {text!r}") from None
