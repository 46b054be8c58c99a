"""Check a label/KL plan from the fitted reward law against the trainer.

With the law fitted to the exact optimiser and the well-specified reward model
at label noise ``s = 1`` (``a, b, c`` from :mod:`rlscale._trainer_reward_law`),
:func:`rlscale.optimize.plan_labels` gives the best ``(M, K)`` for a budget
under prices ``c_M`` per comparison and ``c_K`` per nat of KL.  Two naive
plans of equal cost spend it on one axis: **labels only** (``K = 0.5``, the
rest on comparisons) and **optimisation only** (``M = 20``, the rest on KL).
All three are then *trained*: fresh comparison pools and labels per seed, a
Bradley–Terry proxy at the plan's ``M``, the exact KL-regularised optimum at
its ``K``, gold gain by exact evaluation; differences carry paired bootstrap
95 % intervals over environments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PLAN_PRICES", "planning_check"]

#: Price per comparison, per nat of KL, and the budget of the check.
PLAN_PRICES = {"price_m": 1.0, "price_k": 100.0, "budget": 2000.0}
NAIVE_K, NAIVE_M = 0.5, 20.0


def planning_check(setup: Any, r2_rows: list[dict[str, Any]], gen: np.random.Generator, *,
                   seeds: int, betas: np.ndarray, n_boot: int = 1000) -> dict[str, Any]:
    """Plan with the fitted law, train the plan and two naive plans of equal cost."""
    from rlscale.optimize import plan_labels
    from rlscale.optimize._label_plan import _law
    from rlscale.simulate._rm_experiment import (
        comparison_labels,
        comparison_pool,
        gold_gains,
        train_proxy,
    )

    row = next(r for r in r2_rows if r["optimiser"] == "soft_vi" and r["capacity"] == "linear"
               and r["noise"] == 1.0)
    a, b, c = row["a_all"], row["b_all"], row["c_all"]
    pm, pk, B = PLAN_PRICES["price_m"], PLAN_PRICES["price_k"], PLAN_PRICES["budget"]
    best = plan_labels(a, b, c, price_m=pm, price_k=pk, budget=B)
    plans = {
        "planned": (best.M, best.K),
        "labels_only": ((B - pk * NAIVE_K) / pm, NAIVE_K),
        "optimisation_only": (NAIVE_M, (B - pm * NAIVE_M) / pk),
    }
    m_max = int(np.ceil(max(p[0] for p in plans.values())))
    gains: dict[str, list[np.ndarray]] = {name: [] for name in plans}
    for _ in range(seeds):
        delta, margin = comparison_pool(setup, m_max, gen)
        labels = comparison_labels(margin, 1.0, gen)
        for name, (M, K) in plans.items():
            theta = train_proxy(delta, labels, round(M), "linear")
            g = gold_gains(setup, theta, "linear", [K], optimisers=("soft_vi",), betas=betas)
            gains[name].append(g["soft_vi"][:, 0])
    env = {name: np.mean(v, axis=0) for name, v in gains.items()}
    T = env["planned"].size
    idx = gen.integers(0, T, size=(n_boot, T))
    out: dict[str, Any] = {"law": {"a": a, "b": b, "c": c, "from": "soft_vi, linear, s=1"},
                           **PLAN_PRICES, "plans": {}}
    for name, (M, K) in plans.items():
        boot = env[name][idx].mean(axis=1)
        out["plans"][name] = {
            "M": float(M), "K": float(K), "cost": float(pm * M + pk * K),
            "predicted_gain": float(_law(a, b, c, M, K)),
            "trained_gain": float(env[name].mean()),
            "trained_ci": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
        }
        if name != "planned":
            d = env["planned"] - env[name]
            db = d[idx].mean(axis=1)
            out["plans"][name]["planned_minus_this"] = float(d.mean())
            out["plans"][name]["planned_minus_this_ci"] = [float(np.percentile(db, 2.5)),
                                                           float(np.percentile(db, 97.5))]
    return out
