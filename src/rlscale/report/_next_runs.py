"""The report's step "what to run next": the pilot runs that would pin the plan down best.

After the sweep has been fitted, the pool is every configuration of the
sweep's own axis values (the full grid of ``[sweep.axes]``) not run yet, at
the report's cost ``cE·E + cT·E·t + cτ·E·t·k``; the budget is
``[next_runs] budget_share`` of what the sweep cost; the target is the
compute-optimal frontier from the plan's budget to the top of the allocation
curve (``[allocation] budget`` to ``budgets[1]``, three plans, inside the
allocation bounds) -- where the fitted law is used -- and what the batch
minimises is those plans' expected **regret** (the loss a plan made from the
fit gives up under the true law; :mod:`rlscale.optimize._design_regret`).
:func:`rlscale.optimize.design` chooses the batch (``method``, default
``auto``: the Bayesian design over the fit's bootstrap laws).  For scale the
section also gives what the random and cheapest-first rules would buy with the
same budget: the expected regret after each, from the same linearisation.  The
batch is written to ``next-runs.csv``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.report._config_tree import ReportConfig
from rlscale.report._outcomes import Inputs, NextRunsOutcome
from rlscale.report._typed import build

__all__ = ["next_runs_section", "next_runs_step"]

#: What the report compares its batch against (same budget, same linearisation).
RULES = ("random", "cheapest")


def _pool(cfg: ReportConfig) -> dict[str, np.ndarray]:
    from rlscale.report._config import AXES

    values = [np.asarray(cfg.sweep.axes[a], dtype=float) for a in AXES]
    mesh = np.meshgrid(*values, indexing="ij")
    return {a: m.ravel() for a, m in zip(AXES, mesh)}


def _cost(cfg: ReportConfig) -> str:
    c = cfg.costs
    e, t, k = "environments", "tasks_per_environment", "trajectories_per_task"
    return (f"{c.environment!r}*{e} + {c.task!r}*{e}*{t} + "
            f"{c.trajectory!r}*{e}*{t}*{k}")


def next_runs_step(cfg: ReportConfig, inputs: Inputs) -> NextRunsOutcome:
    from rlscale.files._atomic import write_text_atomic
    from rlscale.optimize import FrontierTarget, design
    from rlscale.report._config import AXES, SUBSTITUTE

    nr = cfg.next_runs
    if not nr.enabled:
        return NextRunsOutcome(enabled=False)
    observed = {a: inputs.sweep.column(a) for a in AXES}
    from rlscale.theory import parse_posynomial

    # What the sweep cost under the report's unit costs (each seed is a run).
    cost = _cost(cfg)
    spent = float(np.sum(parse_posynomial(cost).evaluate(observed)))
    budget = nr.budget_share * spent
    alloc = cfg.allocation
    nested = alloc.nested_bounds()
    bounds = {a: nested[SUBSTITUTE[a]] for a in AXES}
    target = FrontierTarget(alloc.budget, alloc.budget_grid()[1], 3, bounds,
                            objective="regret")
    common = {"cost": cost, "observed": observed, "seed": cfg.seed}
    out: dict[str, Any] = {"enabled": True, "budget": budget, "sweep_cost": spent,
                           "budget_share": nr.budget_share, "cost": cost}
    fit = inputs.fit.result
    try:
        chosen = design(fit, _pool(cfg), budget, target, method=nr.method, **common)
    except ValueError as exc:  # e.g. every candidate already run: say so, not fail
        return build(NextRunsOutcome, {**out, "error": " ".join(str(exc).split())})
    compare = {}
    for rule in RULES:  # at the batch's own region: its plans are located once, not thrice
        d = design(fit, _pool(cfg), budget, chosen.target, method=rule, **common)
        compare[rule] = {"n_runs": d.n_runs, "cost": d.cost,
                         "target_sd_after": d.target_sd_after,
                         "regret_after": d.regret_after}
    write_text_atomic(inputs.staging / "next-runs.csv", chosen.to_csv())
    return build(NextRunsOutcome, {**out, "design": chosen.as_dict(), "compare": compare,
                                   "file": "next-runs.csv"})


def _g(v: Any) -> str:
    return "—" if v is None else f"{float(v):.3g}"


def next_runs_section(doc: Any, nr: NextRunsOutcome) -> None:
    """Section 5b of the document, from the outcome of :func:`next_runs_step`."""
    from rlscale.report._config import SUBSTITUTE

    doc.heading("5b. What to run next")
    if not nr.enabled:
        doc.paragraph("The pilot design step was disabled in the configuration.")
        return
    if nr.error is not None:
        doc.paragraph(f"No batch was designed: {nr.error}")
        return
    d = nr.design
    doc.paragraph(
        f"Which runs to buy next with {nr.budget_share:.0%} of what the sweep cost "
        f"(budget {nr.budget:.4g} of cost {nr.cost}), among the configurations of the "
        f"sweep's grid not run yet, so that the plans made from the fitted law lose least "
        f"under the true law ({d.target.source}). Method {d.method} "
        f"({d.status}): {d.n_runs} runs costing {d.cost:.4g}. The plans' expected "
        f"regret (loss given up, linearised at the fit over {d.n_laws} laws): "
        f"{_g(d.regret_before)} from the sweep alone, {_g(d.regret_after)} with this "
        "batch; the same budget spent "
        + ", ".join(f"{rule}: {_g(c.regret_after)}" for rule, c in nr.compare.items())
        + f". The predicted sd of the plans' log loss goes from {_g(d.target_sd_before)} "
        f"to {_g(d.target_sd_after)}. The runs are in {nr.file}.")
    if d.regret_after is None and d.target_sd_after is None:
        from rlscale.optimize._design import UNIDENTIFIABLE

        why = ("Not even every configuration of the grid identifies the fitted law"
               if UNIDENTIFIABLE in d.notes else
               "This batch with the sweep does not identify the fitted law")
        doc.paragraph(
            f"{why} of section 3 (a term that acts as a step, or parameters that trade off "
            "exactly, make its information matrix singular), so no uncertainty can be stated "
            "(the dashes above) and the batch below is not certified: read it as runs that "
            "spread the budget, not as a design.")
    # The batch is a table: the pool's axis columns, then the runs and their cost.
    cols = [c for c in d.runs[0] if c in SUBSTITUTE] if d.runs else []
    doc.table([SUBSTITUTE.get(c) for c in cols] + ["runs", "cost"],
              [[r[c] for c in (*cols, "runs", "run_cost")] for r in d.runs])
    doc.paragraph(d.message)
