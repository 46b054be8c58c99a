"""``rlscale verify``: check rlscale's claims.

Targets:

``properties``
    Run the registry of named hypothesis properties (:mod:`rlscale.properties`).
``reward-law``
    Verify ``G(M, K) = Θ(sqrt(min{log M, K}))`` on a grid: fits, held-out R²,
    the band against the proved constants, model comparison, files
    (:mod:`rlscale.verification._gaussian_reward_law`); with ``--trainer``, the same law in
    the RL trainer: a Bradley–Terry reward model from M comparisons optimised
    within KL K on gridworlds, gold gain measured exactly
    (:mod:`rlscale.verification._trainer_reward_law`); with ``--testbed``, the
    pre-registered phase diagram on combinatorial trajectory worlds where a
    reward model must generalise (:mod:`rlscale.verification._rm_testbed_law`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "verify",
        help="check rlscale's claims numerically and with property-based tests",
        description="Check rlscale's claims numerically and with property-based tests.",
    )
    targets = parser.add_subparsers(dest="target", metavar="<target>", parser_class=type(parser))
    targets.required = True

    props = targets.add_parser(
        "properties",
        help="run the registry of named hypothesis properties",
        description="Run named hypothesis properties against the installed toolkit "
        "(needs the 'verify' extra). NAME may be a property or an area prefix.",
    )
    props.add_argument("names", nargs="*", metavar="NAME", help="properties to run (default: all)")
    props.add_argument("--profile", choices=("ci", "dev", "deep"), default="ci",
                       help="hypothesis profile: ci (200 derandomised examples, default), "
                       "dev (fast), deep (5000 examples)")
    props.add_argument("--list", action="store_true", help="list the properties and exit")
    props.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    props.set_defaults(func=_properties)

    law = targets.add_parser(
        "reward-law",
        help="verify the reward-optimisation law G = Θ(sqrt(min(log M, K))) on a grid",
        description="Compute the gold gain G(M, K) of best-of-n, a quantilizer, exponential "
        "tilting (exact), soft best-of-n and KL-penalised policy gradient (Monte Carlo) over "
        "M = 10..1e8 comparisons and KL budgets K = 0.05..50 at noise levels 0.5, 1, 2; fit "
        "a*sqrt(min(log M + b, c*K)), report held-out R^2, the band of "
        "G/sqrt(min(log M, K)) against the proved constants, and a model comparison. "
        "Writes results.json, grid.csv and PNG figures to --out.",
    )
    size = law.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="coarse grid, under a minute (default)")
    size.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="dense grid and 1e6-trial Monte Carlo checks, a few minutes")
    size.add_argument("--glance", dest="mode", action="store_const", const="glance",
                      help="rlscale report --quick's smaller samples on the --quick grid "
                      "(not with --testbed; docs/verify.md)")
    law.add_argument("--trainer", action="store_true",
                     help="run the experiment in the RL trainer instead: Bradley-Terry reward "
                     "models from M comparisons (two capacities, noise 0.5/1/2) optimised within "
                     "KL K by soft value iteration, best-of-n and KL-penalised policy gradient; "
                     "exact gold gains; fits, model comparison, over-optimisation, a label/KL "
                     "plan checked by training (quick: about a minute; full: up to 15 minutes)")
    law.add_argument("--testbed", action="store_true",
                     help="run the pre-registered reward-model testbed instead: Bradley-Terry "
                     "reward models on combinatorial trajectory worlds (8^H candidates, gold "
                     "with additive and order-k interaction parts), three optimisers, the law "
                     "scored leave-one-M-out against an M-free plateau, Gao et al.'s forms per "
                     "M and saturating M laws; writes the phase diagram (quick: under 30 s; "
                     "full: up to 10 minutes on 2 cores; resumes from out/checkpoints)")
    law.add_argument("--jobs", type=int, default=2,
                     help="worker processes for --trainer and --testbed (default 2; gains "
                     "agree across values to rounding)")
    law.add_argument("--out", metavar="DIR", default=None,
                     help="output directory (default: ./reward-law-results, or "
                     "./reward-law-trainer-results with --trainer, "
                     "./reward-law-testbed-results with --testbed)")
    law.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    law.add_argument("--no-figures", action="store_true",
                     help="skip the PNG figures (no matplotlib needed)")
    law.set_defaults(func=_reward_law, mode="quick")


def _properties(args: argparse.Namespace) -> int:
    from rlscale._optional import require
    from rlscale.properties import registry, run_property, select

    require("hypothesis", extra="verify", purpose="property checks")
    props = registry()
    if args.list:
        for name, prop in props.items():
            print(f"{name:45s} {prop.description}")
        return 0

    selected = select(args.names)
    results = []
    for prop in selected:
        result = run_property(prop, args.profile)
        results.append(result)
        mark = "✓" if result.passed else "✗"
        print(f"{mark} {result.name:45s} {result.examples:6d} examples {result.seconds:7.2f} s",
              flush=True)
        if not result.passed:
            print(f"    {result.description}")
            for line in (result.falsifying or result.error or "").splitlines():
                print(f"    {line}")
            if result.falsifying and result.error:
                print(f"    {result.error}")
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed", file=sys.stderr)
    if args.json:
        from rlscale.files._atomic import write_json_atomic

        write_json_atomic(args.json, {"profile": args.profile, "results": results})
    return 1 if failed else 0


def _reward_law(args: argparse.Namespace) -> int:
    from rlscale.theory._validation import MAX_JOBS, check_positive_int

    check_positive_int("--jobs", args.jobs, maximum=MAX_JOBS)  # also without --trainer
    if args.trainer and args.testbed:
        raise ValueError("--trainer and --testbed are separate experiments; give one")
    if args.testbed and args.mode == "glance":
        raise ValueError("--glance is for the Gaussian and --trainer experiments; the "
                         "--testbed has --quick and --full")
    if args.testbed:
        from rlscale.verification._rm_testbed_law import verify_testbed_reward_law

        report = verify_testbed_reward_law(
            args.mode, out=args.out or "reward-law-testbed-results", rng=args.seed,
            figures=not args.no_figures, progress=True, jobs=args.jobs)
    elif args.trainer:
        from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

        report = verify_trainer_reward_law(
            args.mode, out=args.out or "reward-law-trainer-results", rng=args.seed,
            figures=not args.no_figures, progress=True, jobs=args.jobs)
    else:
        from rlscale.verification._gaussian_reward_law import verify_reward_law

        report = verify_reward_law(args.mode, out=args.out or "reward-law-results",
                                   rng=args.seed, figures=not args.no_figures, progress=True)
    print(report.summary())
    for kind, path in sorted(report.files.items()):
        print(f"wrote {kind}: {path}")
    return 0
