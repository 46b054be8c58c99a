"""``rlscale prove``: run the machine-checked proofs of rlscale's laws and bounds.

Each proof (:mod:`rlscale.proofs`) prints its steps with ✓ (checked), ✗
(failed), – (skipped, e.g. a z3 step without the ``proofs`` extra) or †
(cited with its reference, not machine-checked), each labelled with its
checker (sympy, z3, interval or cited), and, when no step failed or was
skipped, the statement proved with the count of checked and cited steps:
``PROVED (10 checked, 2 cited)``.  The exit status is 0 only if every
checked step of every selected proof passed: a skipped step is not a pass.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "prove",
        help="check the machine-checked derivations of rlscale's laws and bounds",
        description="Check the proofs in rlscale.proofs step by step (sympy identities, "
        "interval arithmetic, z3); cited facts are marked † and counted apart. Exit status "
        "0 only if every checked step of every selected proof holds; skipped steps (z3 "
        "missing) are not passes.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="proofs to check (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the proofs and exit")
    parser.add_argument("--latex", metavar="FILE_OR_DIR",
                        help="write the derivations as LaTeX: a directory (existing, or "
                        "ending in '/') gets one NAME.tex per proof, a file one document")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--quiet", action="store_true",
                        help="print only one line per proof")
    parser.set_defaults(func=_prove)


def _prove(args: argparse.Namespace) -> int:
    from rlscale.proofs import build_proof, latex_document, proof_names, z3_available

    if args.list:
        for name in proof_names():
            proof = build_proof(name)
            print(f"{name:20s} {proof.statement}")
            if proof.concerns:
                print(f"{'':20s} concerns: {', '.join(proof.concerns)}")
        return 0
    names = list(args.names) or list(proof_names())
    unknown = [n for n in names if n not in proof_names()]
    if unknown:
        raise ValueError(f"NAME must be one of {', '.join(proof_names())}; got {unknown[0]!r}")
    if not z3_available():
        print("note: z3-solver is not installed; z3 steps use their interval fallback or are "
              "skipped (pip install 'rlscale[proofs]')", file=sys.stderr)

    start = time.perf_counter()
    results, fragments = [], []
    for name in names:
        proof = build_proof(name)
        if not args.quiet:
            print(f"{proof.name}: {proof.title}", flush=True)

        def show(step: Any) -> None:
            if not args.quiet:
                print(f"  {step.mark} {step.name:24s} [{step.checker}] {step.claim}", flush=True)
                if step.status in ("failed", "skipped"):
                    print(f"      {step.status}: {step.reason}", flush=True)

        result = proof.check(on_step=show)
        results.append(result)
        fragments.append((name, proof.to_latex(result)))
        verdict = "PROVED" if result.passed else "NOT PROVED"
        lead = f"{proof.name}: " if args.quiet else "  "
        print(f"{lead}{verdict} ({result.counts_text()}, {result.seconds:.1f} s): "
              f"{proof.statement}", flush=True)
        if not args.quiet:
            print()
    elapsed = time.perf_counter() - start
    proved = sum(r.passed for r in results)
    checked, cited = sum(r.checked for r in results), sum(r.cited for r in results)
    print(f"{proved} of {len(results)} proofs hold ({checked} steps checked, {cited} cited; "
          f"{elapsed:.1f} s)", file=sys.stderr)

    if args.latex:
        from rlscale.files._atomic import write_text_atomic

        target = args.latex
        if Path(target).is_dir() or target.endswith((os.sep, "/")):
            for name, fragment in fragments:
                write_text_atomic(Path(target) / f"{name}.tex", fragment)
        else:
            write_text_atomic(target, latex_document([f for _, f in fragments]))
    if args.json:
        from rlscale.files._atomic import write_json_atomic

        write_json_atomic(args.json, {"passed": proved == len(results), "seconds": elapsed,
                                      "z3": z3_available(), "proofs": results})
    return 0 if proved == len(results) else 1
