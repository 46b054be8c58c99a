"""Where the fitted law will be used: the target region a design aims at.

A pilot sweep is run to *extrapolate*: the law will be used at budgets far
beyond the pilots, to choose a plan.  The target region says where, in one of
three forms:

points
    A table of axis values (mapping or DataFrame, optionally a ``weight``
    column), e.g. the largest runs you intend to make.
:class:`PlanTarget`
    The compute-optimal plan at a budget: the point ``x*(θ)`` that
    minimises the law's loss under the pool's cost expression.  Under a
    robust design every law of the ensemble has its own plan, and the region
    is all of them -- the design then pins down the law wherever the plan
    might land (the plan's own uncertainty, not only the point estimate's).
:class:`FrontierTarget`
    The plans at ``num`` budgets log-spaced from ``low`` to ``high``.

The V criterion averages the prediction variance of ``log f`` over the
region's points with their weights (equal unless given).  A region that lies
entirely inside the pool's range -- every point interpolates the candidates
and observed runs, in their convex hull in log axes -- is refused unless
``allow_interior=True``: there the runs can simply be made, and a pilot
design is for what cannot.

Locating a plan target is the costly part of a design on a small pool (a plan
solve per law and budget, and for a regret target the finite differences of
:mod:`rlscale.optimize._design_regret`).  A design's region
(:attr:`~rlscale.optimize.Design.target`, a :class:`TargetRegion`) can
therefore be passed as the ``target`` of further designs with the same laws
and pool -- other methods, other budgets -- and is reused as it is.  It
carries a fingerprint of what it was located under (the laws' log predictions
and sensitivities at its points and at the observed runs, the pool's
candidates, costs and cost expression); a region given with other laws or
another pool is located again from the target it came from, with a note, so
reuse never changes a design, only skips work.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._design_model import DesignModel
from rlscale.optimize._design_model import plan_bounds as _bounds
from rlscale.optimize._design_pool import Pool, table_columns
from rlscale.optimize._design_regret import regret_matrix
from rlscale.theory._posynomial import Posynomial
from rlscale.theory._validation import check_choice, check_positive_int, check_scalar

__all__ = ["FrontierTarget", "PlanTarget", "TargetError", "TargetRegion", "region_key",
           "resolve_target"]


class TargetError(ValueError):
    """A plan target that cannot be located under the law (e.g. a fit too flat to plan with)."""

#: Laws of a robust design whose plans form a plan target's region (evenly chosen); a
#: regret target takes every law at its own plan.
MAX_PLAN_LAWS = 12
#: What a plan target's V criterion minimises.
OBJECTIVES = ("loss", "regret")


@dataclass(frozen=True)
class PlanTarget:
    """The compute-optimal plan at ``budget`` (in the pool's cost units).

    Parameters
    ----------
    budget : float
        The budget at which the plan will be made (> 0), typically tens of
        times the pilot budget.
    bounds : mapping axis -> (low, high), optional
        Bounds of the plan's axes (e.g. the unique data available).
    objective : {"loss", "regret"}
        What the V criterion minimises: the variance of the plan's predicted log
        loss (``"loss"``), or the plan's expected **regret** -- the loss the plan
        made from the fit gives up under the true law (``"regret"``, a
        decision-focused criterion: :mod:`rlscale.optimize._design_regret`).

    Examples
    --------
    >>> PlanTarget(5.76e23).budget
    5.76e+23
    >>> PlanTarget(-1.0)
    Traceback (most recent call last):
    ...
    ValueError: budget must be > 0; got budget=-1
    """

    budget: float
    bounds: Mapping[str, tuple[float, float]] | None = None
    objective: str = "loss"

    def __post_init__(self) -> None:
        object.__setattr__(self, "budget", check_scalar("budget", self.budget, low=0.0,
                                                        low_open=True))
        object.__setattr__(self, "bounds", _bounds(self.bounds))
        object.__setattr__(self, "objective", check_choice("objective", self.objective,
                                                           OBJECTIVES))

    def budgets(self) -> list[float]:
        return [self.budget]

    def describe(self) -> str:
        what = "its regret" if self.objective == "regret" else "its loss"
        return f"compute-optimal plan at budget {self.budget:.6g} ({what})"


@dataclass(frozen=True)
class FrontierTarget:
    """The compute-optimal plans at ``num`` budgets log-spaced over ``[low, high]``.

    ``bounds`` and ``objective`` as for :class:`PlanTarget` (the regret is summed
    over the plans, equally weighted).

    Examples
    --------
    >>> [f"{b:g}" for b in FrontierTarget(1e3, 1e5, 3).budgets()]
    ['1000', '10000', '100000']
    """

    low: float
    high: float
    num: int = 5
    bounds: Mapping[str, tuple[float, float]] | None = None
    objective: str = "loss"

    def __post_init__(self) -> None:
        object.__setattr__(self, "objective", check_choice("objective", self.objective,
                                                           OBJECTIVES))
        lo = check_scalar("low", self.low, low=0.0, low_open=True)
        hi = check_scalar("high", self.high, low=lo)
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)
        object.__setattr__(self, "num", check_positive_int("num", self.num, maximum=100))
        object.__setattr__(self, "bounds", _bounds(self.bounds))

    def budgets(self) -> list[float]:
        if self.num == 1:
            return [self.high]
        return np.geomspace(self.low, self.high, self.num).tolist()

    def describe(self) -> str:
        what = "their regret" if self.objective == "regret" else "their loss"
        return (f"compute-optimal frontier: {self.num} plans at budgets "
                f"{self.low:.6g} to {self.high:.6g} ({what})")


@dataclass(frozen=True)
class TargetRegion:
    """The points a V-optimal design predicts, with their weights.

    Attributes
    ----------
    points : dict axis -> ndarray
    weights : ndarray
        Sum to 1.
    source : str
        What the region is (``"points"``, a plan, a frontier).
    plans : list of dict
        For plan targets: each plan as ``{"budget", "law", axis...}``
        (``law`` 0 is the point estimate).
    inside : ndarray of bool
        Per point, whether it lies inside the pool's range.
    notes : tuple of str
    objective : str
        ``"loss"`` (predict the points) or ``"regret"`` (the plans' regret).
    matrices : ndarray or None
        For a regret target: per law of :attr:`laws`, the matrix ``A`` with
        expected regret ``tr(A Cov θ̂)`` (``(S, p, p)``).
    laws : tuple of int
        For a regret target: the laws (indices into the ensemble) that have a
        plan and a matrix; the design averages over these.
    spec : PlanTarget, FrontierTarget or None
        The target the region was located from (``None`` for target points:
        the points and weights are the target).
    key : str
        Fingerprint of the laws and pool it was located under
        (:func:`region_key`); a design given this region reuses it only when
        its own laws and pool give the same key.
    """

    points: dict[str, np.ndarray]
    weights: np.ndarray
    source: str
    plans: list[dict[str, float]] = field(default_factory=list)
    inside: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    notes: tuple[str, ...] = ()
    objective: str = "loss"
    matrices: np.ndarray | None = field(default=None, repr=False)
    laws: tuple[int, ...] = ()
    spec: PlanTarget | FrontierTarget | None = field(default=None, repr=False, compare=False)
    key: str = field(default="", repr=False, compare=False)

    @property
    def n(self) -> int:
        return int(self.weights.size)

    def rows(self) -> list[dict[str, float]]:
        return [{**{a: float(v[i]) for a, v in self.points.items()},
                 "weight": float(self.weights[i])} for i in range(self.n)]

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "objective": self.objective, "points": self.rows(),
                "plans": self.plans, "inside_pool_range": self.inside.tolist(),
                "notes": list(self.notes)}


def region_key(models: Sequence[DesignModel], pool: Pool,
               points: Mapping[str, np.ndarray]) -> str:
    """A fingerprint of what a region located at ``points`` depends on (SHA-256, hex).

    The pool's axes, candidates, costs, cost expression and observed runs, and
    per law its type, its parameter count and its log predictions and
    sensitivities at ``points`` and at the observed runs, all bit for bit.
    The laws of a design are rebuilt deterministically from its inputs (the
    fit, ``seed``, ``n_laws``, the domain filter, profiling), so the same
    inputs give the same key; a different law, or the same law in other
    coordinates (a profiled parameter changes the sensitivities' shape),
    changes these numbers save by coincidence of every float, and a plan is
    one of ``points``, so a law that moved a plan moved the probe.
    """
    h = hashlib.sha256()

    def put(*parts: Any) -> None:
        for part in parts:
            if isinstance(part, np.ndarray):
                h.update(str(part.shape).encode())
                h.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
            else:
                h.update(repr(part).encode())
            h.update(b"|")

    axes = pool.axes
    put(axes, pool.cost)
    for a in axes:
        put(a, pool.columns[a], pool.observed.get(a, np.zeros(0)))
    expr = pool.cost_expr
    put(None if expr is None else [(m.coefficient, m.exponents) for m in expr.terms])
    probe = {a: np.asarray(points[a], dtype=float) for a in axes}
    if pool.observed:
        probe = {a: np.concatenate([probe[a], np.asarray(pool.observed[a], dtype=float)])
                 for a in axes}
    for m in models:
        put(type(m).__name__, m.n_params)
        try:
            put(m.log_predict(probe), m.jacobian(probe))
        except (ValueError, FloatingPointError) as exc:  # a law outside its domain there
            put(f"{type(exc).__name__}: {exc}")
    return h.hexdigest()


def _inside(points: Mapping[str, np.ndarray], pool: Pool) -> np.ndarray:
    """Per point, whether it interpolates the candidates and observed runs: lies in their
    convex hull in log axes (an LP feasibility problem, scipy's HiGHS).

    The hull, not the bounding box: a grid whose most expensive corner is held
    out spans every axis's range, yet a plan in that corner extrapolates.
    """
    from scipy.optimize import linprog

    axes = pool.axes
    X = np.log(np.column_stack([pool.columns[a] for a in axes]))
    if pool.observed:
        X = np.vstack([X, np.log(np.column_stack([pool.observed[a] for a in axes]))])
    T = np.log(np.column_stack([np.asarray(points[a], dtype=float) for a in axes]))
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.maximum(hi - lo, 1.0)
    inside = np.all((lo - 1e-9 * span <= T) & (hi + 1e-9 * span >= T), axis=1)
    X = np.unique(X, axis=0)
    A = np.vstack([X.T, np.ones(X.shape[0])])
    for i in np.flatnonzero(inside):
        res = linprog(np.zeros(X.shape[0]), A_eq=A, b_eq=np.append(T[i], 1.0),
                      bounds=(0, None), method="highs")
        inside[i] = res.status == 0
    return inside


def _plan_cost(pool: Pool, axes: Sequence[str]) -> Posynomial:
    poly = pool.cost_expr
    if poly is None:
        raise ValueError(f"a plan target needs the cost as an expression in the law's axes "
                         f"(e.g. cost='6*N*D'), not {pool.cost_source}: the plan is chosen "
                         "among configurations that are not in the pool")
    outside = [a for a in poly.axes if a not in axes]
    if outside:
        raise ValueError(f"a plan target needs a cost in the law's axes {list(axes)}; the cost "
                         f"{poly} also reads {outside}")
    return poly


def _point_table(target: Any, axes: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    if isinstance(target, Sequence) and not isinstance(target, str | bytes) and target and all(
            isinstance(t, Mapping) for t in target):
        target = {k: [t[k] for t in target] for k in target[0]}
    cols = table_columns(target, "target")
    pts = {}
    for a in axes:
        if a not in cols:
            raise ValueError(f"the target points have no column {a!r} for the law's axis "
                             f"(columns: {sorted(cols)})")
        v = cols[a]
        if v.dtype != np.float64 or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"target column {a!r} must be finite and > 0")
        pts[a] = v
    n = next(iter(pts.values())).size
    if n == 0:
        raise ValueError("the target has no points")
    w = np.ones(n)
    if "weight" in cols:
        w = cols["weight"]
        if w.dtype != np.float64 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("target weights must be finite, >= 0 and not all 0")
    return pts, w / w.sum()


def resolve_target(target: Any, models: Sequence[DesignModel], pool: Pool, *,
                   allow_interior: bool = False) -> TargetRegion:
    """The target region for the laws ``models`` (the point estimate first).

    A points target needs no law (``models`` may be empty); a plan target is
    located under every law.  A :class:`TargetRegion` (an earlier design's
    ``target``) is returned as it is when ``models`` and ``pool`` give its
    :attr:`~TargetRegion.key`, else located again from the target it came from
    (with a note saying so).  Raises a ``ValueError`` naming the fix for a
    region inside the pool's range (unless ``allow_interior``) and for a plan
    target without a cost expression.
    """
    if not isinstance(target, TargetRegion):
        return _locate(target, models, pool, allow_interior)
    if _key(target.spec, models, pool, target.points) == target.key:
        _refuse_interior(target.source, target.inside, pool, allow_interior)
        return target
    spec = target.spec if target.spec is not None else target.rows()
    again = _locate(spec, models, pool, allow_interior)
    return dataclasses.replace(again, notes=(*again.notes, (
        "the target region given was located under other laws or another pool; located "
        "again from its target")))


def _refuse_interior(source: str, inside: np.ndarray, pool: Pool, allow_interior: bool) -> None:
    if inside.all() and not allow_interior:
        ranges = ", ".join(f"{a} in [{lo:.4g}, {hi:.4g}]" for a, (lo, hi) in
                           pool.log_range().items())
        raise ValueError(
            f"the target ({source}) lies inside the pool's range (in the convex hull of the "
            f"candidates in log axes; {ranges}): those runs can simply be made. Aim the "
            "design where the law will be used beyond the pool -- a PlanTarget at a larger "
            "budget (e.g. 30x the pilot budget) or target points beyond the largest runs -- "
            "or pass allow_interior=True to design for "
            "interpolation")


def _locate(target: Any, models: Sequence[DesignModel], pool: Pool,
            allow_interior: bool) -> TargetRegion:
    axes = pool.axes
    notes: list[str] = []
    plans: list[dict[str, float]] = []
    if isinstance(target, PlanTarget | FrontierTarget):
        if not models:
            raise ValueError("a plan target is located under the law: it needs parameter "
                             "values (a fitted law, or observed runs to fit)")
        cost = _plan_cost(pool, axes)
        regret = target.objective == "regret"
        chosen = list(range(len(models)))
        if len(chosen) > MAX_PLAN_LAWS + 1 and not regret:
            spread = np.linspace(1, len(models) - 1, MAX_PLAN_LAWS).round().astype(int)
            chosen = [0, *sorted(set(spread.tolist()))]
        failed = 0
        budgets = target.budgets()
        p = models[0].n_params
        mats = {s: np.zeros((p, p)) for s in chosen}
        for b in budgets:
            for s in chosen:
                if s not in mats:
                    continue
                try:
                    x = models[s].plan(cost, b, target.bounds)
                    if regret:
                        mats[s] += regret_matrix(models[s], cost, b, x, target.bounds) / len(
                            budgets)
                except ValueError as exc:
                    if s == 0:
                        raise TargetError(f"no plan at budget {b:.6g} under the law: "
                                          f"{exc}") from None
                    failed += 1
                    mats.pop(s)
                    continue
                plans.append({"budget": float(b), "law": int(s), **x})
        if failed:
            notes.append(f"{failed} of the ensemble's laws had no plan and were left out of "
                         "the target region")
        if regret:
            laws_ok = tuple(sorted(mats))
            plans = [q for q in plans if q["law"] in mats]
        pts = {a: np.array([q[a] for q in plans]) for a in axes}
        weights = np.full(len(plans), 1.0 / len(plans))
        source = target.describe()
        objective = target.objective
        matrices = np.array([mats[s] for s in laws_ok]) if regret else None
    else:
        pts, weights = _point_table(target, axes)
        source = f"{weights.size} target point(s)"
        objective, matrices, laws_ok = "loss", None, ()
    if objective == "loss":
        laws_ok = ()
    inside = _inside(pts, pool)
    _refuse_interior(source, inside, pool, allow_interior)
    if inside.any():
        notes.append(f"{int(inside.sum())} of {inside.size} target points lie inside the "
                     "pool's range")
    spec = target if isinstance(target, PlanTarget | FrontierTarget) else None
    return TargetRegion(pts, weights, source, plans, inside, tuple(notes), objective,
                        matrices, laws_ok, spec, _key(spec, models, pool, pts))


def _key(spec: PlanTarget | FrontierTarget | None, models: Sequence[DesignModel], pool: Pool,
         points: Mapping[str, np.ndarray]) -> str:
    # Target points do not depend on the laws: only the pool (the inside test) matters.
    return region_key(models if spec is not None else (), pool, points)


def target_matrix(models: Sequence[DesignModel], region: TargetRegion) -> np.ndarray:
    """``A_s = Σ_t ω_t G_stᵀ G_st / m`` per law (``(S, p, p)``): the V criterion's target;
    for a regret target the laws' regret matrices (``models`` are then ``region.laws``)."""
    if region.matrices is not None:
        return region.matrices
    out = []
    for m in models:
        G = m.jacobian(region.points)  # (T, m, p)
        out.append(np.einsum("t,tmp,tmq->pq", region.weights, G, G) / G.shape[1])
    return np.array(out)


def target_sd(models: Sequence[DesignModel], region: TargetRegion, P: np.ndarray,
              noise: float) -> np.ndarray:
    """Per target point, the linearised sd of ``log f``: ``noise·√(mean_s g M_s⁻¹ gᵀ)``.

    ``P`` holds the inverse information per law in the models' coordinates
    (``(S, p, p)``; ``inf`` entries mark an unidentified design).
    """
    var = []
    for s, m in enumerate(models):
        G = m.jacobian(region.points)
        if not np.all(np.isfinite(P[s])):  # unidentified: inf, not inf·0 = NaN in the sum
            var.append(np.full(G.shape[0], math.inf))
            continue
        var.append(np.einsum("tmp,pq,tmq->t", G, P[s], G) / G.shape[1])
    v = np.mean(var, axis=0)
    return noise * np.sqrt(np.where(v >= 0, v, math.nan))
