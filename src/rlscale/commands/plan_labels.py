"""``rlscale plan-labels``: comparisons against KL budget on the reward law.

Given the law ``G = a·sqrt(min(log M + b, c·K))`` (e.g. the ``a_all, b_all,
c_all`` that ``rlscale verify reward-law --trainer`` fits), a price per
comparison and a price per nat of KL (``--price-k``) or per RL step
(``--price-step`` with the measured ``--kl-per-step`` and optionally
``--kl-step-exponent``, the ``kappa, gamma`` of ``K = kappa·S^gamma`` that the
trainer verification reports), print the cheapest ``(M, K)`` reaching
``--target`` or the best gain for ``--budget`` (:func:`rlscale.optimize.plan_labels`)
as JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "plan-labels",
        help="cheapest (comparisons M, KL budget K) on the reward law for a target or budget",
        description="Plan preference labels against optimisation: on G = a*sqrt(min(log M + b, "
        "c*K)) with cost price_m*M + price_k*K, print the cheapest (M, K) reaching --target or "
        "the best gain for --budget (closed form, Lambert W) as JSON.",
    )
    parser.add_argument("--law", required=True, metavar="A,B,C",
                        help="the fitted law's a, b, c, comma-separated (a, c > 0)")
    parser.add_argument("--price-m", type=float, required=True,
                        help="price of one comparison (> 0)")
    price = parser.add_mutually_exclusive_group(required=True)
    price.add_argument("--price-k", type=float, help="price of one nat of KL budget (> 0)")
    price.add_argument("--price-step", type=float,
                       help="price of one RL step (> 0); needs --kl-per-step")
    parser.add_argument("--kl-per-step", type=float, metavar="KAPPA",
                        help="measured KL after S steps is KAPPA*S^GAMMA nats (> 0; the "
                        "kl_per_step of verify reward-law --trainer's results.json)")
    parser.add_argument("--kl-step-exponent", type=float, default=1.0, metavar="GAMMA",
                        help="GAMMA in (0, 10] (default 1: KL linear in steps)")
    goal = parser.add_mutually_exclusive_group(required=True)
    goal.add_argument("--target", type=float, help="gold gain to reach")
    goal.add_argument("--budget", type=float, help="money to spend")
    parser.set_defaults(func=_plan)


def _plan(args: argparse.Namespace) -> int:
    from rlscale.optimize import plan_labels

    parts = args.law.split(",")
    if len(parts) != 3:
        raise ValueError(f"--law must be three comma-separated numbers a,b,c; got {args.law!r}")
    try:
        a, b, c = (float(x) for x in parts)
    except ValueError:
        raise ValueError(f"--law must be three comma-separated numbers a,b,c; "
                         f"got {args.law!r}") from None
    if args.price_k is not None and (args.kl_per_step is not None
                                     or args.kl_step_exponent != 1.0):
        raise ValueError("--kl-per-step and --kl-step-exponent convert RL steps to KL; they "
                         "go with --price-step, not --price-k")
    plan = plan_labels(a, b, c, price_m=args.price_m, price_k=args.price_k,
                       price_step=args.price_step, kl_per_step=args.kl_per_step,
                       kl_step_exponent=args.kl_step_exponent, target=args.target,
                       budget=args.budget)
    print(json.dumps(plan.as_dict(), indent=2))
    return 0
