"""Which runs to buy: budget-aware design of pilot runs for a scaling-law fit.

:func:`design` chooses, from a pool of runnable configurations with a cost
each, a batch of whole runs within a budget so that the law fitted to them
(and to the runs already observed) predicts well where it will be used --
the target region, typically the compute-optimal plan at a budget far beyond
the pilots.  The method is dispatched once, to one private function each:

``"random"``, ``"cheapest"``, ``"cost-random"``
    Selection rules (the baselines): candidates in random order, in order of
    cost, or in a random order drawn with probability ∝ 1/cost (cheap runs
    first more often; Efraimidis & Spirakis 2006 keys ``U^(c_i)``), each taken
    when it still fits the budget.
``"surface"``
    D-optimal design for a quadratic response surface in the log axes -- no
    parameter values needed: the first batch when nothing has been run.
``"d-optimal"``, ``"v-optimal"``
    Locally optimal designs at the law's point estimate: the budgeted convex
    relaxation (:mod:`rlscale.optimize._design_relax`) with its certificate,
    rounded to whole runs (:mod:`rlscale.optimize._design_round`).  D maximises
    the information about all parameters; V minimises the average prediction
    variance over the target region.
``"bayes-d"``, ``"bayes-v"``
    The same criteria averaged over an ensemble of laws -- the fit's bootstrap
    laws or the ``laws=`` given -- robust to the unknown exponents
    (:mod:`rlscale.optimize._design_bayes`).
``"auto"`` (default)
    ``bayes-v`` when there are a target and at least two laws in the
    ensemble, ``v-optimal`` with a target and one law, ``d-optimal`` (or
    ``bayes-d``) without a target, ``surface`` when there are no parameter values.

The inputs are checked first, and the mistakes a budget-aware design invites
are refused with the fix: a pool without a cost, a budget below the cheapest
run, a target inside the pool's range, and a law with more parameters than
the budget (with the observed runs) can buy runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._design_bayes import (
    Ensemble,
    bound_parameters,
    ensemble,
    in_domain,
    law_axes,
    law_parameter_count,
)
from rlscale.optimize._design_criteria import Certificate, Information
from rlscale.optimize._design_model import DesignModel, ProfiledModel
from rlscale.optimize._design_pool import Pool, make_pool
from rlscale.optimize._design_relax import FIRST_ORDER, relax
from rlscale.optimize._design_result import Design
from rlscale.optimize._design_round import efficiency, round_design
from rlscale.optimize._design_target import (
    FrontierTarget,
    PlanTarget,
    TargetRegion,
    resolve_target,
    target_matrix,
    target_sd,
)
from rlscale.theory._validation import (
    check_bool,
    check_choice,
    check_positive_int,
    check_scalar,
    seed_from,
)

__all__ = ["METHODS", "design"]


@dataclass
class _Problem:
    """Everything a method needs (built once by :func:`design`)."""

    pool: Pool
    budget: float
    cap: np.ndarray
    models: list[DesignModel]
    region: TargetRegion | None
    noise: float | None
    rng: np.random.Generator
    solver: str | None
    fixed_counts: np.ndarray


@dataclass(frozen=True)
class _Chosen:
    """A method's outcome: whole runs per candidate and how they were found."""

    counts: np.ndarray
    status: str
    success: bool
    message: str
    criterion: str | None = None
    value: float | None = None
    certificate: Certificate | None = None
    efficiency: float | None = None
    weights: np.ndarray | None = None
    n_laws: int = 0


# -- selection rules ----------------------------------------------------------------

def _take_in_order(prob: _Problem, order: np.ndarray) -> np.ndarray:
    """Runs in ``order``, each taken when it still fits the budget (one pass)."""
    counts = prob.fixed_counts.copy()
    left = prob.budget - float(prob.pool.cost @ counts)
    tol = 1e-12 * prob.budget
    for i in order:
        while counts[i] < prob.cap[i] and prob.pool.cost[i] <= left + tol:
            counts[i] += 1
            left -= prob.pool.cost[i]
            if prob.cap[i] > 1:
                break  # one run per visit: repeats only on a later pass
    return counts


def _rule(prob: _Problem, order: np.ndarray, what: str) -> _Chosen:
    counts = _take_in_order(prob, order)
    return _Chosen(counts, "exact", True, f"{what}: each candidate taken while it fits the "
                   "budget")


def _random(prob: _Problem) -> _Chosen:
    return _rule(prob, prob.rng.permutation(prob.pool.n), "uniformly random order")


def _cheapest(prob: _Problem) -> _Chosen:
    return _rule(prob, np.argsort(prob.pool.cost, kind="stable"), "cheapest first")


def _cost_random(prob: _Problem) -> _Chosen:
    # Weighted sampling without replacement, weight 1/c: sort by U^(c) (log: c·log U).
    keys = prob.pool.cost / prob.pool.cost.min() * np.log(prob.rng.random(prob.pool.n))
    return _rule(prob, np.argsort(-keys, kind="stable"), "random order with P ∝ 1/cost")


# -- optimal designs --------------------------------------------------------------

def _optimal(prob: _Problem, info: Information, kind: str, n_laws: int, what: str) -> _Chosen:
    cost, cap, budget = prob.pool.cost, prob.cap, prob.budget
    rel = relax(info, kind, cost, cap, budget, prob.solver)
    bound = None if rel.certificate is None else rel.certificate.bound
    rounded = round_design(info, kind, cost, cap, budget, rel.weights,
                           start=prob.fixed_counts, bound=bound)
    eff = None if bound is None else efficiency(kind, rounded.value, bound, info.p)
    if rel.weights is None or rel.certificate is None:
        return _Chosen(rounded.counts, "failed", False,
                       f"{what}: {rel.message}; the batch is the "
                       f"{'greedy design' if rel.weights is None else 'relaxation rounded'}, "
                       "uncertified",
                       kind, rounded.value, None, None, None, n_laws)
    ok = rel.status == "optimal"
    msg = (f"{what}: {rel.message}; rounded to {int(rounded.counts.sum())} whole runs "
           f"({rounded.exchanges} exchanges), guaranteed efficiency {eff:.4f} of the best "
           "design")
    return _Chosen(rounded.counts, rel.status, ok, msg, kind, rounded.value, rel.certificate,
                   eff, rel.weights, n_laws)


def _information(prob: _Problem, models: Sequence[DesignModel], kind: str) -> Information:
    x = prob.pool.x()
    w = 1.0 if prob.noise is None else 1.0 / prob.noise
    J = np.stack([m.jacobian(x) for m in models]) * w
    obs = prob.pool.observed_x()
    p = models[0].n_params
    if obs:
        Jo = np.stack([m.jacobian(obs) for m in models]) * w
        fixed = np.einsum("snmp,snmq->spq", Jo, Jo)
    else:
        fixed = np.zeros((len(models), p, p))
    A = target_matrix(models, prob.region) if kind == "V" else None
    return Information(J, fixed, A)


def _need_models(prob: _Problem, method: str, robust: bool) -> list[DesignModel]:
    if not prob.models:
        raise ValueError(f"method={method!r} needs parameter values: pass a fitted law "
                         "(fit_law(...)), a law with values, or observed runs with the response "
                         "column to fit; 'surface', 'random', 'cheapest' and 'cost-random' "
                         "need none")
    if robust and len(prob.models) < 3:
        raise ValueError(f"method={method!r} averages over an ensemble of laws and has "
                         f"{len(prob.models) - 1} draws: fit with a bootstrap (bootstrap >= 20) "
                         "or pass laws=[...]; or use the local 'v-optimal'/'d-optimal'")
    return prob.models if robust else prob.models[:1]


def _need_target(prob: _Problem, method: str) -> None:
    if prob.region is None:
        raise ValueError(f"method={method!r} minimises the prediction variance over a target "
                         "region: pass target= points, PlanTarget(budget) or FrontierTarget(...)")


def _d_optimal(prob: _Problem) -> _Chosen:
    models = _need_models(prob, "d-optimal", False)
    return _optimal(prob, _information(prob, models, "D"), "D", 1, "local D-optimal")


def _v_optimal(prob: _Problem) -> _Chosen:
    _need_target(prob, "v-optimal")
    models = _need_models(prob, "v-optimal", False)
    return _optimal(prob, _information(prob, models, "V"), "V", 1, "local V-optimal")


def _bayes_d(prob: _Problem) -> _Chosen:
    models = _need_models(prob, "bayes-d", True)
    return _optimal(prob, _information(prob, models, "D"), "D", len(models),
                    f"Bayesian D-optimal over {len(models)} laws")


def _bayes_v(prob: _Problem) -> _Chosen:
    _need_target(prob, "bayes-v")
    models = _need_models(prob, "bayes-v", True)
    return _optimal(prob, _information(prob, models, "V"), "V", len(models),
                    f"Bayesian V-optimal over {len(models)} laws")


def surface_features(logx: np.ndarray) -> np.ndarray:
    """``[1, z_i, z_i z_j (i ≤ j)]`` of standardised log axes: a quadratic response surface."""
    z = (logx - logx.mean(axis=0)) / np.where(logx.std(axis=0) > 0, logx.std(axis=0), 1.0)
    cols = [np.ones(z.shape[0])] + [z[:, i] for i in range(z.shape[1])]
    cols += [z[:, i] * z[:, j] for i in range(z.shape[1]) for j in range(i, z.shape[1])]
    return np.column_stack(cols)


def _surface(prob: _Problem) -> _Chosen:
    axes = prob.pool.axes
    cand = np.log(np.column_stack([prob.pool.columns[a] for a in axes]))
    obs = prob.pool.observed_x()
    allx = cand if not obs else np.vstack([cand, np.log(np.column_stack([obs[a]
                                                                        for a in axes]))])
    feats = surface_features(allx)
    J = feats[None, :cand.shape[0], None, :]
    fo = feats[cand.shape[0]:]
    fixed = (fo.T @ fo)[None]
    info = Information(J, fixed)
    return _optimal(prob, info, "D", 1, "D-optimal for a quadratic surface in the log axes")


#: ``method=`` -> private function; each takes the built problem.
METHODS: dict[str, Callable[[_Problem], _Chosen]] = {
    "random": _random,
    "cheapest": _cheapest,
    "cost-random": _cost_random,
    "surface": _surface,
    "d-optimal": _d_optimal,
    "v-optimal": _v_optimal,
    "bayes-d": _bayes_d,
    "bayes-v": _bayes_v,
}
_NEEDS_NO_LAW = frozenset({"random", "cheapest", "cost-random", "surface"})


def _auto(ens: Ensemble, target: Any) -> str:
    if ens.point is None:
        return "surface"
    robust = len(ens.draws) >= 2
    if target is None:
        return "bayes-d" if robust else "d-optimal"
    return "bayes-v" if robust else "v-optimal"


# -- the verb -------------------------------------------------------------------------

def _posterior(models: Sequence[DesignModel], pool: Pool, counts: np.ndarray | None,
               noise: float | None) -> np.ndarray:
    """Inverse information per law in the models' coordinates (``inf``: not identified)."""
    out = []
    w = 1.0 if noise is None else 1.0 / noise
    obs = pool.observed_x()
    for m in models:
        p = m.n_params
        M = np.zeros((p, p))
        if obs:
            Jo = m.jacobian(obs) * w
            M += np.einsum("nmp,nmq->pq", Jo, Jo)
        if counts is not None and counts.any():
            sel = np.flatnonzero(counts)
            Jc = m.jacobian(pool.x(sel)) * w
            M += np.einsum("n,nmp,nmq->pq", counts[sel].astype(float), Jc, Jc)
        d = np.sqrt(np.maximum(np.diag(M), 1e-300))
        eig = np.linalg.eigvalsh(M / np.outer(d, d))
        if eig[0] <= 1e-10 * max(eig[-1], 1e-300) or not np.all(np.isfinite(eig)):
            out.append(np.full((p, p), np.inf))
        else:
            out.append(np.linalg.inv(M))
    return np.array(out)


def _expected_regret(A: np.ndarray, P: np.ndarray) -> float:
    """``mean_s tr(A_s P_s)``: the plan's expected regret, linearised (``inf``: unidentified)."""
    if not np.all(np.isfinite(P)):
        return float("inf")
    return float(np.mean(np.einsum("spq,sqp->s", A, P)))


def _affordable(cost: np.ndarray, cap: int, budget: float, want: int) -> tuple[int, float]:
    """Runs the budget buys cheapest first (at most ``want`` counted), and what ``want`` cost."""
    left, runs, spent = budget * (1 + 1e-12), 0, 0.0
    for c in np.sort(cost):
        if runs >= want:
            break
        k = int(min(cap, want - runs))
        spent += k * c
        runs += int(min(k, left // c)) if left >= c else 0
        left -= min(k, left // c) * c if left >= c else 0.0
    return runs, float(spent)


#: The note of a design whose law no runs of the pool can identify.
UNIDENTIFIABLE = (
    "not even every run of the pool identifies the law at these parameter values (its "
    "information matrix is singular there: a term that acts as a step, an exponent far "
    "outside the pool's range, or parameters that trade off exactly), so no batch can bound "
    "the target: fit a law with fewer parameters, or add runs where the law changes")


def check_options(*, method: Any, max_repeats: Any, n_laws: Any, bootstrap: Any, seed: Any,
                  noise: Any, axes: Any) -> tuple[str, int, int, int, int, float | None]:
    """The options :func:`design` and :class:`~rlscale.optimize.Designer` share, checked
    (the Designer checks them when it is made, not at its first batch)."""
    method = check_choice("method", method, ("auto", *METHODS))
    max_repeats = check_positive_int("max_repeats", max_repeats, maximum=10**6)
    n_laws = check_positive_int("n_laws", n_laws, minimum=0, maximum=1000)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=100_000)
    seed = check_positive_int("seed", seed, minimum=0)
    if noise is not None:
        noise = check_scalar("noise", noise, low=0.0, low_open=True)
    if axes is not None and (isinstance(axes, str | bytes) or not isinstance(axes, Sequence)
                             or not axes or not all(isinstance(a, str) for a in axes)):
        raise TypeError(f"axes must be a non-empty sequence of column names; got {axes!r:.60}")
    return method, max_repeats, n_laws, bootstrap, seed, noise


def design(law: Any, pool: Any, budget: float, target: Any = None, *, cost: Any = None,
           axes: Sequence[str] | None = None, observed: Any = None, response: str = "loss",
           method: str = "auto", laws: Sequence[Any] | None = None, n_laws: int = 16,
           bootstrap: int = 100, noise: float | None = None, delta: float = 1e-3,
           max_repeats: int = 1, allow_interior: bool = False, seed: int = 0,
           solver: str | None = None, rng: Any = None) -> Design:
    """Choose the runs to make within a budget so that the fitted law extrapolates well.

    Parameters
    ----------
    law : Law, fit, bound expression law, DesignModel, family name or expression
        What will be fitted.  A fit (:func:`~rlscale.optimize.fit_law`'s
        :class:`~rlscale.optimize.FitResult`, an
        :class:`~rlscale.optimize.ExpressionFit`) brings its point estimate,
        bootstrap laws and noise; a law with parameter values is designed for
        at those values; a family name (``"additive"``) or an expression is
        fitted to ``observed`` first (needs ``axes``).
    pool : mapping of columns or DataFrame
        The runnable candidates, one per row, the law's axes among the columns.
    budget : float
        What the batch may cost, in the pool's cost units (``>=`` the cheapest run).
    target : table of points, PlanTarget, FrontierTarget or TargetRegion, optional
        Where the law will be used (:mod:`rlscale.optimize._design_target`).
        Needed by the V criteria; outside the pool's range unless ``allow_interior``.
        A plan target with ``objective="regret"`` makes them minimise the plan's
        expected regret instead of its predicted loss's variance
        (:mod:`rlscale.optimize._design_regret`).  An earlier design's
        :attr:`Design.target` reuses the region it located (its plans and
        regret matrices, the costly part on a small pool) when this design
        has the same laws and pool -- the same design as with the target it came
        from, bit for bit; with other laws or another pool it is located again,
        with a note.
    cost : str, Posynomial or array, optional
        A pool column, a cost expression in the pool's columns (``"6*N*D"``),
        or one cost per row; default: the pool's ``cost`` column.
    axes : sequence of str, optional
        The law's axes, when ``law`` is a name or an expression string.
    observed : table, optional
        Runs already made (the axes' columns; ``response`` too, to fit a law
        given by name).  Their information is fixed; pool rows that repeat one
        are left out (unless ``max_repeats > 1``).
    response : str
        The observed runs' column that the law predicts (default ``"loss"``).
    method : str
        See the module docstring (default ``"auto"``).
    laws : sequence of laws, optional
        Draws for a robust design around a law with values (a prior).
    n_laws : int
        At most this many bootstrap laws enter a robust design (evenly chosen).
    bootstrap : int
        Resamples when ``design`` fits ``observed`` itself.
    noise : float, optional
        Noise sd of one run's log response; default: from the fit's residuals,
        else the uncertainties are in units of it.
    delta : float
        Huber threshold of the fit the runs are for (the fitter's default
        ``1e-3``; a given fit's own).  The reported sds are those of that fit:
        ``noise·√κ(δ/noise)``, with ``κ`` the Huber estimator's variance
        inflation over least squares (about π/2 when ``δ ≪ noise``;
        :func:`~rlscale.optimize._design_bayes.huber_factor`).
    max_repeats : int
        Runs allowed per candidate (1: each configuration at most once).
    allow_interior : bool
        Accept a target inside the pool's range (design for interpolation).
    seed : int
        Seeds the random rules and the fit's bootstrap (same seed, same design).
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness (every verb takes it): an
        integer is the seed; a Generator is drawn from once for it.  ``seed=``
        is kept and means the same as an integer ``rng=``; pass one of them.
    solver : str, optional
        How the relaxation is solved.  Default: the spectral projected gradient
        (``"SPG"``, :mod:`rlscale.optimize._design_spg`), kept when its
        Frank–Wolfe certificate says optimal, else cvxpy (Clarabel, then SCS).
        ``"SPG"`` alone, or a cvxpy solver's name (``"CLARABEL"``, ``"SCS"``)
        for the conic path alone.

    Returns
    -------
    Design

    Raises
    ------
    ValueError
        Bad input, named with the fix (see the module docstring).

    Examples
    --------
    A local D-optimal design for a straight line ``log L = c − α log x`` (a
    multiplicative law) with two candidates of cost 1 and 3: each gets half
    of the budget (a saturated design, ``w_i = B/(p c_i)``), so 6 buys three
    runs of the first and one of the second:

    >>> from rlscale.theory import MultiplicativeLaw
    >>> law = MultiplicativeLaw(2.0, {"x": 0.5})
    >>> pool = {"x": [1.0, 100.0], "cost": [1.0, 3.0]}
    >>> d = design(law, pool, 6.0, method="d-optimal", max_repeats=10)
    >>> d.weights.round(4).tolist(), d.runs["runs"].tolist(), d.cost
    ([3.0, 1.0], [3, 1], 6.0)
    >>> round(d.certificate.equivalence, 4)   # Kiefer-Wolfowitz: 1 at the optimum
    1.0
    >>> design(law, pool, 0.5)
    Traceback (most recent call last):
    ...
    ValueError: budget=0.5 is below the cheapest run's cost 1 (pool row 0): no run fits; \
raise the budget to at least 1
    """
    t0 = time.process_time()
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    method, max_repeats, n_laws, bootstrap, seed, noise = check_options(
        method=method, max_repeats=max_repeats, n_laws=n_laws, bootstrap=bootstrap,
        seed=seed_from(seed, rng), noise=noise, axes=axes)
    allow_interior = check_bool("allow_interior", allow_interior)
    delta = check_scalar("delta", delta, low=0.0, low_open=True)
    if solver is not None:
        from cvxpy import installed_solvers

        solver = check_choice("solver", solver, (FIRST_ORDER, *installed_solvers()))
    if not isinstance(response, str):
        raise TypeError(f"response must be a column name; got {response!r:.60}")
    if target is not None and not isinstance(
            target, PlanTarget | FrontierTarget | TargetRegion | Mapping | Sequence
    ) and not hasattr(target, "columns"):
        raise TypeError(f"target must be a table of points, a PlanTarget, a FrontierTarget or "
                        f"an earlier design's TargetRegion; got {type(target).__name__}")
    axes_ = law_axes(law, axes)
    pl = make_pool(pool, axes_, cost, observed, max_repeats)
    cheapest = int(np.argmin(pl.cost))
    if budget < pl.cost[cheapest] * (1 - 1e-12):
        raise ValueError(f"budget={budget:g} is below the cheapest run's cost "
                         f"{pl.cost[cheapest]:g} (pool row {int(pl.rows[cheapest])}): no run "
                         f"fits; raise the budget to at least {pl.cost[cheapest]:g}")
    p = law_parameter_count(law, axes_)
    affordable, need = _affordable(pl.cost, max_repeats, budget, p - pl.n_observed)
    if affordable + pl.n_observed < p:
        raise ValueError(
            f"the law has {p} parameters but the budget {budget:g} buys at most {affordable} "
            f"runs (the cheapest first) and {pl.n_observed} are observed: a fit cannot "
            f"determine it. Raise the budget to at least {need:g}, add observed runs, or use a "
            "law with fewer parameters")
    rng = np.random.default_rng(seed)
    ens = ensemble(law, axes=axes_, observed=pl.observed or None, response=response,
                   laws=laws, n_laws=n_laws, bootstrap=bootstrap, seed=seed, noise=noise,
                   delta=delta)
    x_all = pl.x()
    if pl.observed_x():
        obs = pl.observed_x()
        x_all = {a: np.concatenate([np.asarray(x_all[a], dtype=float),
                                    np.asarray(obs[a], dtype=float)]) for a in x_all}
    ens, dropped = in_domain(ens, x_all)
    chosen_method = _auto(ens, target) if method == "auto" else method
    robust = chosen_method.startswith("bayes")
    models = ens.models if robust or chosen_method in _NEEDS_NO_LAW else ens.models[:1]
    notes: list[str] = [] if dropped is None else [dropped]
    if models:
        profiled = bound_parameters(ens, x_all)
        if profiled:
            models = [ProfiledModel(m, list(profiled)) for m in models]
            notes.append("profiled out (held at the fitted value; the design and its "
                         "uncertainties are for the other parameters given it): " + "; ".join(
                             f"{k}: {v}" for k, v in profiled.items()))
    region = None
    if target is not None:
        located_by_law = isinstance(target, PlanTarget | FrontierTarget) or (
            isinstance(target, TargetRegion) and target.spec is not None)
        if models or not located_by_law:
            region = resolve_target(target, models, pl, allow_interior=allow_interior)
            notes += list(region.notes)
            if region.objective == "regret":  # each law at its own plan: those that have one
                models = [models[i] for i in region.laws]
        else:
            notes.append("the plan target cannot be located without parameter values; the "
                         "design ignores it")
    if pl.excluded:
        notes.append(f"{pl.excluded} pool rows repeat observed runs and were left out")
    prob = _Problem(pl, budget, np.full(pl.n, max_repeats), models, region, ens.scale, rng,
                    solver, np.zeros(pl.n, dtype=int))
    out = METHODS[chosen_method](prob)
    counts = out.counts
    sd_before = sd_after = regret_before = regret_after = None
    if region is not None and models:
        before, after = (_posterior(models, pl, c, ens.scale) for c in (None, counts))
        sd_before = target_sd(models, region, before, 1.0)
        sd_after = target_sd(models, region, after, 1.0)
        if region.matrices is not None:
            regret_before, regret_after = (_expected_regret(region.matrices, P)
                                           for P in (before, after))
        # A record carries no infinities: an uncertainty the runs cannot bound is None.
        if not np.all(np.isfinite(sd_before)):
            notes.append("the observed runs alone do not identify the law: no uncertainty to "
                         "report (None)")
            sd_before = regret_before = None
        if not np.all(np.isfinite(sd_after)):
            notes.append("the observed runs with this batch do not identify the law: no "
                         "uncertainty to report (None)")
            sd_after = regret_after = None
            # Could any batch do better?  Every pool run, each as often as allowed:
            everything = np.full(pl.n, max_repeats)
            if not np.all(np.isfinite(_posterior(models[:1], pl, everything, ens.scale))):
                notes.append(UNIDENTIFIABLE)
    sel = np.flatnonzero(counts)
    runs = {k: v[sel] for k, v in pl.columns.items()}
    runs["pool_row"] = pl.rows[sel].astype(int)
    runs["runs"] = counts[sel].astype(int)
    runs["run_cost"] = pl.cost[sel]
    spent = float(pl.cost @ counts)
    message = f"{out.message}; {int(counts.sum())} runs costing {spent:.6g} of {budget:.6g}"
    if ens.noise is None and sd_after is not None:
        notes.append("uncertainties are in units of the noise sd of one run's log response "
                     "(the expected regret in units of its variance): no fit to estimate it, "
                     "pass noise=")
    notes.append(f"laws: {ens.source}")
    return Design(
        method=chosen_method, runs=runs, cost=spent, budget=budget,
        n_runs=int(counts.sum()), target=region, noise=ens.noise, sd_before=sd_before,
        sd_after=sd_after, regret_before=regret_before, regret_after=regret_after,
        criterion=out.criterion, value=out.value,
        certificate=out.certificate, efficiency=out.efficiency, weights=out.weights,
        n_laws=out.n_laws or (len(models) if robust else int(bool(models))),
        n_candidates=pl.n, n_observed=pl.n_observed, success=out.success,
        status=out.status, message=message, notes=tuple(notes),
        seconds=time.process_time() - t0)
