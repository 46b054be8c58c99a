"""``rlscale verify``: check rlscale's claims.

Targets:

``properties``
    Run the registry of named hypothesis properties (:mod:`rlscale.properties`).
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
        from rlscale._io import write_json_atomic

        write_json_atomic(args.json, {"profile": args.profile, "results": results})
    return 1 if failed else 0
