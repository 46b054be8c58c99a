"""Check a label/KL plan from the fitted reward law against the trainer.

With the law fitted to the exact optimiser and the well-specified reward model
at label noise ``s = 1`` (``a, b, c`` from :mod:`rlscale.verification._trainer_reward_law`),
:func:`rlscale.optimize.plan_labels` gives the best ``(M, K)`` for a budget
under prices ``c_M`` per comparison and ``c_K`` per nat of KL.  Two naive
plans of equal cost spend it on one axis: **labels only** (``K = 0.5``, the
rest on comparisons) and **optimisation only** (``M = 20``, the rest on KL).
All three are then *trained*: fresh comparison pools and labels per seed, a
Bradley–Terry proxy at the plan's ``M``, the exact KL-regularised optimum at
its ``K``, gold gain by exact evaluation; differences carry paired bootstrap
95 % intervals over environments.

**KL per RL step.**  On the planned proxy, KL-penalised policy gradient
(:func:`rlscale.simulate.kl_policy_gradient`, the grid's ``pg`` recipe) is run
for every penalty of the grid; its ``kl_trace`` is the Monte Carlo KL after
each update.  The KL the recipe can reach after ``S`` updates is the largest
over the penalties, ``K(S) = max_β KL_β(S)``, and ``K = κ·S^γ`` is fitted to it
by least squares in log–log over ``S >= 1`` (seeds averaged).  With
``κ, γ`` the planner prices optimisation per step
(:func:`rlscale.optimize.plan_labels` with ``price_step=``): the step-priced
plan at :data:`PLAN_PRICES` ``price_step`` is reported and trained like the
others (at its ``K``, by the exact optimum).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PLAN_PRICES", "planning_check"]

#: Price per comparison, per nat of KL, per RL step, and the budget of the check.
PLAN_PRICES = {"price_m": 1.0, "price_k": 100.0, "price_step": 5.0, "budget": 2000.0}
NAIVE_K, NAIVE_M = 0.5, 20.0


def kl_per_step(traces: list[np.ndarray]) -> dict[str, Any]:
    """Fit ``K(S) = κ·S^γ`` to the most KL any penalty reached after ``S`` updates.

    ``traces``: per seed, a ``kl_trace`` (steps, B); ``trace[S]`` is the KL
    after ``S`` updates.  Returns ``kappa, gamma``, the log–log R² and the
    fitted curve's points.

    Examples
    --------
    >>> s = np.arange(40.0)[:, None]
    >>> r = kl_per_step([0.2 * s ** 0.5 * np.array([1.0, 0.5])])
    >>> round(r["kappa"], 6), round(r["gamma"], 6), round(r["r2_log"], 6)
    (0.2, 0.5, 1.0)
    """
    frontier = np.mean([t.max(axis=1) for t in traces], axis=0)  # (steps,)
    S = np.arange(frontier.size, dtype=float)
    ok = (S >= 1) & (frontier > 0)
    if ok.sum() < 2:
        raise ValueError("kl_per_step needs at least two updates with positive KL")
    x, y = np.log(S[ok]), np.log(frontier[ok])
    gamma, log_kappa = np.polyfit(x, y, 1)
    resid = y - (log_kappa + gamma * x)
    r2 = 1.0 - float(resid @ resid) / float(np.sum((y - y.mean()) ** 2))
    return {"kappa": float(np.exp(log_kappa)), "gamma": float(gamma), "r2_log": r2,
            "steps": int(frontier.size - 1), "kl_at_last_step": float(frontier[-1])}


def planning_check(setup: Any, r2_rows: list[dict[str, Any]], gen: np.random.Generator, *,
                   seeds: int, betas: np.ndarray, n_boot: int = 1000,
                   pg_betas: np.ndarray | None = None, pg_steps: int = 0) -> dict[str, Any]:
    """Plan with the fitted law, train the plan and two naive plans of equal cost.

    Only with an identified law: where the soft_vi/linear/s = 1 row's ``a, b, c``
    are not identified (or not finite), nothing is planned or trained and the
    result says why (``refused``, ``plans`` empty).
    """
    from rlscale.optimize import plan_labels
    from rlscale.optimize._label_plan import _law
    from rlscale.simulate import kl_policy_gradient
    from rlscale.simulate._rm_experiment import (
        comparison_labels,
        comparison_pool,
        gold_gains,
        proxy_landing,
        train_proxy,
    )

    row = next(r for r in r2_rows if r["optimiser"] == "soft_vi" and r["capacity"] == "linear"
               and r["noise"] == 1.0)
    a, b, c = row["a_all"], row["b_all"], row["c_all"]
    law = {"a": a, "b": b, "c": c, "from": "soft_vi, linear, s=1"}
    if not all(row["identified"].values()) or not np.all(np.isfinite([a, b, c])):
        # a, b, c of a fit at the law's limit are an end point of a runaway solve, not
        # estimates: a plan from them would be an artefact of where the solver stopped.
        return {"law": law, **PLAN_PRICES, "plans": {},
                "refused": f"no plan: the law of {law['from']} is not identified on the grid "
                           f"({row.get('identification', 'non-finite a, b, c')}), so its "
                           "a, b, c are not estimates to plan with"}
    pm, pk, B = PLAN_PRICES["price_m"], PLAN_PRICES["price_k"], PLAN_PRICES["budget"]
    best = plan_labels(a, b, c, price_m=pm, price_k=pk, budget=B)
    plans = {
        "planned": (best.M, best.K),
        "labels_only": ((B - pk * NAIVE_K) / pm, NAIVE_K),
        "optimisation_only": (NAIVE_M, (B - pm * NAIVE_M) / pk),
    }
    m_max = int(np.ceil(max(p[0] for p in plans.values())))
    pools = []
    for _ in range(seeds):
        delta, margin = comparison_pool(setup, m_max, gen)
        pools.append((delta, comparison_labels(margin, 1.0, gen)))
    steps = None
    if pg_steps:  # measure KL per RL step on the planned proxy, then plan per step
        traces = []
        for delta, labels in pools:
            theta = train_proxy(delta, labels, round(best.M), "linear")
            res = kl_policy_gradient(setup.opt, proxy_landing(setup, theta, "linear"),
                                     setup.opt.landing_reward(setup.gold_weights), pg_betas,
                                     steps=pg_steps, rng=gen)
            traces.append(res.kl_trace)
        try:
            steps = kl_per_step(traces)
        except ValueError as exc:  # KL never positive: nothing to price steps by
            steps = {"note": str(exc)}
        steps["price_step"] = PLAN_PRICES["price_step"]
        if "gamma" in steps and not 0.0 < steps["gamma"] <= 10.0:
            # A short or noisy run whose KL does not grow with steps gives no usable rate.
            steps["note"] = (f"the fitted exponent {steps['gamma']:.3g} is outside (0, 10]: "
                             "KL did not grow with steps; no step-priced plan")
        if "note" not in steps:
            by_step = plan_labels(a, b, c, price_m=pm, price_step=PLAN_PRICES["price_step"],
                                  kl_per_step=steps["kappa"],
                                  kl_step_exponent=steps["gamma"], budget=B)
            plans["planned_per_step"] = (by_step.M, by_step.K)
            steps["plan"] = by_step.as_dict()
    gains: dict[str, list[np.ndarray]] = {name: [] for name in plans}
    for delta, labels in pools:
        for name, (M, K) in plans.items():
            theta = train_proxy(delta, labels, round(M), "linear")
            g = gold_gains(setup, theta, "linear", [K], optimisers=("soft_vi",), betas=betas)
            gains[name].append(g["soft_vi"][:, 0])
    env = {name: np.mean(v, axis=0) for name, v in gains.items()}
    T = env["planned"].size
    idx = gen.integers(0, T, size=(n_boot, T))
    out: dict[str, Any] = {"law": law, **PLAN_PRICES, "plans": {}}
    if steps is not None:
        out["kl_per_step"] = steps
    for name, (M, K) in plans.items():
        boot = env[name][idx].mean(axis=1)
        cost = (pm * M + PLAN_PRICES["price_step"] * steps["plan"]["steps"]
                if name == "planned_per_step" else pm * M + pk * K)
        out["plans"][name] = {
            "M": float(M), "K": float(K), "cost": float(cost),
            "predicted_gain": float(_law(a, b, c, M, K)),
            "trained_gain": float(env[name].mean()),
            "trained_ci": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
        }
        if name in ("labels_only", "optimisation_only"):
            d = env["planned"] - env[name]
            db = d[idx].mean(axis=1)
            out["plans"][name]["planned_minus_this"] = float(d.mean())
            out["plans"][name]["planned_minus_this_ci"] = [float(np.percentile(db, 2.5)),
                                                           float(np.percentile(db, 97.5))]
    return out
