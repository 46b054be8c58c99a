"""The search of an expression fit: the engine's stages, the start strategy, output blocks.

:func:`search` builds the data-derived candidates
(:mod:`rlscale.optimize._fit_expr_starts`), screens the best distinct ones and the
best distinct moderate ones, polishes them with the shared start strategy
(:func:`rlscale.optimize._fit_starts.refine`) on the fitting engine
(:func:`rlscale.optimize._lsq.solve`, bounds held), and ends with one polish in
which every undeclared parameter is free in sign.  Outputs that share no
parameter are searched block by block, then polished together.
"""

from __future__ import annotations

import numpy as np

from rlscale.optimize._fit_expr_problem import ExprData, ExpressionProblem
from rlscale.optimize._fit_expr_starts import candidates
from rlscale.optimize._fit_starts import Basin, Found, pick_distinct, refine
from rlscale.optimize._lsq import solve

__all__: list[str] = []

#: Iterations of the screen (the robust majoriser, all screened starts at once).
SCREEN_NFEV = 40


def engine(prob: ExpressionProblem, loss: str, delta: float, stage: str, nfev: int,
            lower: np.ndarray | None = None, upper: np.ndarray | None = None,
            weights: np.ndarray | None = None):
    """The engine call of one stage (screen: the robust majoriser, a few iterations;
    polish: the loss's own curvature to full precision), bounds held."""
    robust = prob.robust

    def run(U: np.ndarray):
        lo = prob.lower if lower is None else lower
        hi = prob.upper if upper is None else upper
        screen = stage == "screen"
        return solve(prob.model, U, prob.target, weights, lower=lo, upper=hi, loss=loss,
                     delta=delta, outside=1.0 if screen else 0.0, robust=robust,
                     x_scale="jac", free=prob.free, max_nfev=SCREEN_NFEV if screen else nfev,
                     ftol=1e-10 if screen else 1e-15, xtol=1e-10 if screen else 1e-15,
                     gtol=1e-10 if screen else 1e-15, nonfinite="drop")
    return run


def predict(prob: ExpressionProblem):
    def predict(U: np.ndarray) -> np.ndarray:
        r = prob.residual_rows(U)
        return np.where(np.isfinite(r), r, 1e6)
    return predict


def _search(prob: ExpressionProblem, linear: list[int], loss: str, delta: float, grid: int,
            refine_n: int, budget: int, nfev: int, rng: np.random.Generator):
    """The optimum (in the final problem's rows), that problem, and the candidate count."""
    theta, _, moderate = candidates(prob, linear, loss, delta, grid, budget, rng)
    if not len(theta):
        raise ValueError("the law is undefined (or, on log residuals, not positive) at some "
                         "data point for every start: check the law and the data, or fit a "
                         "target that can be <= 0 with residuals='raw'")
    rows = prob.rows(theta)
    # The screen: the best distinct candidates, and the best distinct moderate ones
    # (module docstring of _fit_expr_starts: a profile can prefer a degenerate limit).
    n_screen = max(4 * refine_n, 16)
    preds = predict(prob)(rows)
    best = pick_distinct(preds, list(range(len(rows))), 1e-3, n_screen // 2)
    mod = [int(j) for j in np.flatnonzero(moderate) if j not in best]
    best += pick_distinct(preds[mod], mod, 1e-3, n_screen - len(best)) if mod else []
    rows = rows[sorted(best)]

    def solve_stage(U, stage, lower, upper):
        return engine(prob, loss, delta, stage, nfev, lower, upper)(U)

    found = refine(solve_stage, predict(prob), rows, prob.lower, prob.upper,
                   max_polish=refine_n)
    # One polish with every undeclared parameter free in sign (linear coordinates).
    if not prob.slog.any():
        return found, prob, len(theta)
    free_kinds = ["linear" if k == "slog" else k for k in prob.kinds]
    final = prob.with_kinds(free_kinds)
    u0 = final.rows(prob.theta(found.theta))
    res = engine(final, loss, delta, "polish", nfev)(u0)
    ok = np.isfinite(res.cost[0]) and res.cost[0] <= found.objective
    if ok:
        found = Found(theta=res.x[0], objective=float(res.cost[0]),
                      basins=[Basin(float(res.cost[0]), res.x[0], found.basins[0].count)]
                      + [Basin(b.objective, final.rows(prob.theta(b.theta))[0], b.count)
                         for b in found.basins[1:]],
                      n_screened=found.n_screened, n_converged=found.n_converged,
                      # the status of the run whose point is returned: a polish that ran
                      # out of evaluations is not converged because the search before was
                      status=int(res.status[0]), nfev=int(res.nfev[0]))
        return found, final, len(theta)
    # The signed polish did not help: express the search optimum in the final rows.
    return (Found(theta=u0[0], objective=found.objective,
                  basins=[Basin(b.objective, final.rows(prob.theta(b.theta))[0], b.count)
                          for b in found.basins], n_screened=found.n_screened,
                  n_converged=found.n_converged, status=found.status, nfev=found.nfev),
            final, len(theta))


def _components(prob: ExpressionProblem) -> list[list[int]]:
    """Groups of outputs that share parameters (connected components): the objective is a
    sum over outputs, so each group is a separate problem."""
    groups: list[tuple[set[int], set[str]]] = []
    for i, law in enumerate(prob.laws):
        names = set(law.params)
        joined = [g for g in groups if g[1] & names]
        outputs, params = {i}, names
        for g in joined:
            outputs |= g[0]
            params |= g[1]
            groups.remove(g)
        groups.append((outputs, params))
    return sorted(sorted(g[0]) for g in groups)


def search(prob: ExpressionProblem, linear: list[int], loss: str, delta: float,
                       grid: int, refine_n: int, budget: int, nfev: int,
                       rng: np.random.Generator):
    """:func:`_search` on each group of outputs that share parameters, then one joint
    polish of the assembled optimum (a multi-output law of separate blocks is searched
    block by block: a joint ranking of starts mixes a good block with a bad one)."""
    groups = _components(prob)
    if len(groups) == 1:
        return _search(prob, linear, loss, delta, grid, refine_n, budget, nfev, rng)
    theta = np.zeros(prob.p)
    n_cand = n_screened = n_conv = 0
    for outputs in groups:
        laws = [prob.laws[i] for i in outputs]
        data = ExprData(prob.data.axes, prob.data.x, prob.data.y[:, outputs],
                        tuple(prob.data.targets[i] for i in outputs))
        names = sorted(set().union(*(set(law.params) for law in laws)))
        cols = np.array([prob.index[nm] for nm in names])
        sub = ExpressionProblem(laws, data, residuals=prob.residuals, ranges=prob.ranges,
                                prior=None if prob.prior is None else prob.prior.subset(cols),
                                kinds=[prob.kinds[j] for j in cols])
        sub_linear = [k for k, j in enumerate(cols) if j in linear]
        found, final, n = _search(sub, sub_linear, loss, delta, grid, refine_n,
                                  max(budget // len(groups), 64), nfev, rng)
        theta[cols] = final.theta(found.theta[None, :])[0]
        n_cand += n
        n_screened += found.n_screened
        n_conv += found.n_converged
    final = prob.with_kinds(["linear" if k == "slog" else k for k in prob.kinds])
    u0 = final.rows(theta[None, :])
    res = engine(final, loss, delta, "polish", nfev)(u0)
    cost0 = float(final.objective(u0, loss, delta)[0])
    u_best, cost = (res.x[0], float(res.cost[0])) if res.cost[0] <= cost0 else (u0[0], cost0)
    return (Found(theta=u_best, objective=cost, basins=[Basin(cost, u_best, 1)],
                  n_screened=n_screened, n_converged=n_conv, status=int(res.status[0]),
                  nfev=int(res.nfev[0])), final, n_cand)
