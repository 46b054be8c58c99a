"""Compute-optimal allocation: DPP sweeps vs rebuilding, and KKT accuracy vs scipy SLSQP."""

from __future__ import annotations

import math

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import AllocationProblem
from rlscale.theory import AdditiveLaw, VarianceComponentsLaw

NESTED = VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25)
NESTED_COST = "100*E + 10*E*t + E*t*k"


def _slsqp(prob: AllocationProblem, budget: float) -> dict[str, float]:
    """The same GP solved by scipy's SLSQP in log variables (the peer)."""
    from scipy.optimize import minimize

    names = prob.variables
    bounds = [(math.log(lo) if lo > 0 else None, math.log(hi) if math.isfinite(hi) else None)
              for lo, hi in (prob.bounds[v] for v in names)]
    # Start: all variables equal (within their bounds) with half the budget spent.
    lo_s, hi_s = -50.0, 50.0
    for _ in range(200):
        mid = (lo_s + hi_s) / 2
        u = np.array([min(max(mid, b[0] if b[0] is not None else -np.inf),
                          b[1] if b[1] is not None else np.inf) for b in bounds])
        if prob._log_value_grad(prob.cost, u)[0] > math.log(budget / 2):
            hi_s = mid
        else:
            lo_s = mid
    u0 = u

    def obj(u):
        val, grad = prob._log_value_grad(prob.objective, u)
        return val, grad

    def con(u):
        return math.log(budget) - prob._log_value_grad(prob.cost, u)[0]

    def con_jac(u):
        return -prob._log_value_grad(prob.cost, u)[1]

    res = minimize(obj, u0, jac=True, method="SLSQP", bounds=bounds,
                   constraints=[{"type": "ineq", "fun": con, "jac": con_jac}],
                   options={"maxiter": 500, "ftol": 1e-12})
    return {v: float(np.exp(x)) for v, x in zip(names, res.x)}


def _instances(n: int, seed: int = 0) -> list[tuple[AllocationProblem, float]]:
    """Random feasible 3-axis problems: nested variance components or additive laws."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = [float(v) for v in np.exp(rng.uniform(-2, 6, 3))]
        cost = f"{c[0]!r}*E + {c[1]!r}*E*t + {c[2]!r}*E*t*k"
        if i % 2 == 0:
            s = np.exp(rng.uniform(-3, 3, 3))
            law = VarianceComponentsLaw(rng.uniform(0, 1), *s)
            bounds = None
        else:
            law = AdditiveLaw(rng.uniform(0, 1), dict(zip("Etk", np.exp(rng.uniform(-2, 4, 3)))),
                              dict(zip("Etk", rng.uniform(0.1, 1.2, 3))))
            bounds = {"E": (1, float(np.exp(rng.uniform(2, 8))))}
        prob = AllocationProblem(law, cost, bounds)
        cheapest = prob.cheapest()[0]
        budget = max(cheapest, 1.0) * float(np.exp(rng.uniform(1, 12)))
        out.append((prob, budget))
    return out


def cases(smoke: bool) -> list[Case]:
    n_budgets = 5 if smoke else 100
    budgets = np.logspace(3, 8, n_budgets)
    swept = AllocationProblem(NESTED, NESTED_COST)
    swept.allocate(1e4)  # compile once

    def build_and_solve():
        AllocationProblem(NESTED, NESTED_COST).allocate(1e5)

    def slsqp_once():
        _slsqp(AllocationProblem(NESTED, NESTED_COST, {"t": (1, None), "k": (1, None)}), 1e5)

    def sweep():
        swept.sweep(budgets)

    def rebuild():
        for b in budgets:
            AllocationProblem(NESTED, NESTED_COST).allocate(float(b))

    n_inst = 20 if smoke else 1000
    inst = _instances(n_inst)
    summary: dict[str, object] = {}

    def ours_all():
        res = [p.allocate(b, round_integers=False).kkt_residual for p, b in inst]
        summary["ours"] = res

    def slsqp_all():
        res = []
        for p, b in inst:
            vals = _slsqp(p, b)
            res.append(p._kkt("allocate", b, vals)[0])
        summary["slsqp"] = res

    def accuracy():
        out = {}
        for key in ("ours", "slsqp"):
            r = np.array(summary[key])
            out[f"{key}: fraction KKT <= 1e-6"] = f"{np.mean(r <= 1e-6):.4f}"
            out[f"{key}: worst KKT residual"] = f"{np.max(r):.3e}"
        return out

    return [
        Case("nested 3-axis build+solve", build_and_solve, slsqp_once,
             "scipy SLSQP in log variables"),
        Case(f"nested sweep, {n_budgets} budgets (DPP)", sweep, rebuild,
             "rebuild the cvxpy problem for each budget", work=n_budgets, work_unit="budgets"),
        Case(f"{n_inst} random feasible instances", ours_all, slsqp_all,
             "scipy SLSQP in log variables (same KKT check)", work=n_inst,
             work_unit="instances", extra=accuracy, repeats=1),
    ]
