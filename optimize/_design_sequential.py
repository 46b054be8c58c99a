"""Sequential design: fit, design the next batch, run it, refit -- until the target is settled.

A local or robust design is only as good as the parameter values it is
computed at, and those come from the runs made so far.  :class:`Designer`
closes the loop (Box & Hunter 1965; Chaudhuri & Mykland 1993, "Nonlinear
experiments: optimal design and inference based on likelihood"; the
sequential form of Atkinson, Donev & Tobias 2007, §17.7):

1. **initial batch** (when nothing has been run): the parameter-free
   ``"surface"`` design (D-optimal for a quadratic surface in the log axes)
   spending ``initial`` of the budget, and at least the cost of ``p + 2`` runs
   so the law can be fitted;
2. **refit** the law to every run so far, with a bootstrap (its laws are the
   next design's ensemble);
3. **design** the next batch with ``method`` (default ``"bayes-v"``) at the
   remaining budget divided over the remaining batches -- or, when the fit
   cannot locate a plan target yet (a law too flat to plan with), with the
   D criterion, which identifies the law, and a note saying so;
4. **stop** when the budget cannot buy another run, when the target's
   uncertainty -- its predicted sd, or for a regret target the plan's
   expected regret -- is below ``tolerance``, or when the next batch would
   shrink it by less than ``min_gain`` (its value no longer pays its cost);
   otherwise run the batch (:meth:`Designer.observe`) and go to 2.

Each step is recorded (:class:`DesignStep`): the batch, the budget spent, the
fitted target prediction, its sd and, for a plan target, the plan.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._design import check_options, design
from rlscale.optimize._design_bayes import law_axes, law_parameter_count
from rlscale.optimize._design_model import DesignModel, as_model
from rlscale.optimize._design_pool import make_pool, table_columns
from rlscale.optimize._design_result import Design
from rlscale.optimize._design_target import FrontierTarget, PlanTarget, TargetError, _point_table
from rlscale.theory._repr import compact_repr
from rlscale.theory._validation import check_positive_int, check_scalar, seed_from

__all__ = ["DesignStep", "Designer"]

#: What a custom ``fit=`` returns: a fit, or (point model, draws, noise).
FitOutcome = Any


@dataclass(frozen=True)
class DesignStep:
    """One round of the sequential loop.

    Attributes
    ----------
    batch : Design
        The runs proposed in this round.
    spent : float
        Budget spent before this round's batch.
    n_observed : int
        Runs observed when the batch was designed.
    prediction : ndarray or None
        The fitted law's prediction at the target points (``None`` before a fit).
    plan : dict or None
        For a plan target: the point estimate's plan (axis values) at the
        target budget.
    ran : bool
        Whether the batch was run (the last proposal is not when the loop stops).
    """

    batch: Design
    spent: float
    n_observed: int
    prediction: np.ndarray | None
    plan: dict[str, float] | None
    ran: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"batch": self.batch.as_dict(), "spent": self.spent,
                "n_observed": self.n_observed,
                "prediction": None if self.prediction is None else self.prediction.tolist(),
                "plan": self.plan, "ran": self.ran}


@dataclass
class Designer:
    """Sequential pilot design under a budget (see the module docstring).

    Parameters
    ----------
    law : family name, expression, ExpressionLaw, or a law with values
        What is fitted after each batch (:func:`~rlscale.optimize.fit_law`);
        with ``fit=`` any law a ``DesignModel`` can describe.
    pool, cost, axes, response, max_repeats, noise
        As for :func:`~rlscale.optimize.design` (``response`` may name several
        columns for a multi-output law with a custom ``fit``).
    budget : float
        The total pilot budget.
    target : table of points, PlanTarget or FrontierTarget
    observed : table, optional
        Runs already made (with the response).
    method : str
        Design method for the batches after the first (default ``"bayes-v"``).
    batches : int
        How many batches the budget is spread over (after the initial one).
    initial : float
        Share of the budget of the first, parameter-free batch (when nothing is observed).
    bootstrap, n_laws : int
        Bootstrap resamples of each refit, and laws carried into a robust design.
    tolerance : float, optional
        Stop once the target's uncertainty is below this: the predicted sd of its
        log prediction, or the plan's expected regret (loss units) for a regret target.
    min_gain : float
        Stop when the next batch would reduce that uncertainty by less than this share.
    fit : callable, optional
        ``fit(data) -> FitResult | ExpressionFit | (DesignModel, [DesignModel], noise)``
        for laws ``fit_law`` does not fit (e.g. a multi-output law).
    seed : int
        Seeds every batch's design and refit (same seed, same loop).
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness: an integer is ``seed``; a
        Generator is drawn from once, here, and the draw is stored as ``seed``
        (so the loop is reproducible from it).  Pass ``rng=`` or ``seed=``.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> truth = AdditiveLaw(1.7, {"N": 400.0, "D": 400.0}, {"N": 0.34, "D": 0.28})
    >>> N, D = (g.ravel() for g in np.meshgrid(np.geomspace(1e7, 1e9, 8),
    ...                                          np.geomspace(1e8, 1e10, 8)))
    >>> rng = np.random.default_rng(0)
    >>> oracle = lambda runs: truth(N=runs["N"], D=runs["D"]) * np.exp(
    ...     0.01 * rng.standard_normal(runs["N"].size))
    >>> budget = 0.1 * float(np.sum(6 * N * D))
    >>> d = Designer("additive", {"N": N, "D": D}, budget, PlanTarget(30 * budget),
    ...              cost="6*N*D", axes=["N", "D"], batches=2, bootstrap=40)
    >>> steps = d.run(oracle)
    >>> d.spent <= budget, d.stop_reason in Designer.STOPS
    (True, True)
    """

    law: Any
    pool: Any
    budget: float
    target: Any
    cost: Any = None
    axes: Sequence[str] | None = None
    response: str | Sequence[str] = "loss"
    observed: Any = None
    method: str = "bayes-v"
    batches: int = 3
    initial: float = 0.3
    bootstrap: int = 100
    n_laws: int = 16
    noise: float | None = None
    tolerance: float | None = None
    min_gain: float = 0.1
    max_repeats: int = 1
    fit: Callable[[dict[str, np.ndarray]], FitOutcome] | None = None
    seed: int = 0
    rng: InitVar[Any] = None
    history: list[DesignStep] = field(default_factory=list, init=False)
    stop_reason: str | None = field(default=None, init=False)

    #: Why the loop stopped.
    STOPS = ("budget", "tolerance", "min_gain", "batches")

    def __repr__(self) -> str:  # one screen, not the pool and every batch in full (issue 24)
        spent = getattr(self, "spent", 0.0)
        return compact_repr(
            self, ["law", "budget", "spent", "target", "cost", "axes", "response", "method",
                   "batches", "tolerance", "min_gain", "history", "stop_reason"],
            title=f"{len(self.history)} batches run, spent {spent:.4g} of {self.budget:.4g}, "
                  f"stopped: {self.stop_reason}")

    def __post_init__(self, rng: Any) -> None:
        self.budget = check_scalar("budget", self.budget, low=0.0, low_open=True)
        (self.method, self.max_repeats, self.n_laws, self.bootstrap, self.seed,
         self.noise) = check_options(method=self.method, max_repeats=self.max_repeats,
                                     n_laws=self.n_laws, bootstrap=self.bootstrap,
                                     seed=seed_from(self.seed, rng), noise=self.noise,
                                     axes=self.axes)
        self.batches = check_positive_int("batches", self.batches, maximum=1000)
        self.initial = check_scalar("initial", self.initial, low=0.0, high=1.0, low_open=True)
        self.min_gain = check_scalar("min_gain", self.min_gain, low=0.0, high=1.0)
        if self.tolerance is not None:
            self.tolerance = check_scalar("tolerance", self.tolerance, low=0.0, low_open=True)
        if self.fit is not None and not callable(self.fit):
            raise TypeError(f"fit must be callable; got {type(self.fit).__name__}")
        if not isinstance(self.target, PlanTarget | FrontierTarget | Mapping) and not hasattr(
                self.target, "columns"):
            raise TypeError("target must be a table of points, a PlanTarget or a "
                            f"FrontierTarget; got {type(self.target).__name__}")
        if isinstance(self.response, str):
            self._responses = [self.response]
        elif (isinstance(self.response, Sequence) and not isinstance(self.response, bytes)
              and self.response and all(isinstance(r, str) for r in self.response)):
            self._responses = list(self.response)
        else:
            raise TypeError(f"response must be a column name or a sequence of them; got "
                            f"{self.response!r:.60}")
        self._axes = law_axes(self.law, self.axes)
        pool = make_pool(self.pool, self._axes, self.cost)  # checks the pool and its cost once
        if not isinstance(self.target, PlanTarget | FrontierTarget):
            _point_table(self.target, self._axes)  # a table of points: checked now, not later
        self._pool_cols = pool.columns
        self._cost = pool.cost
        self._p = (law_parameter_count(self.law, self._axes)
                   if not isinstance(self.law, DesignModel) else self.law.n_params)
        self._data: dict[str, list[np.ndarray]] = {}
        self._used = np.zeros(pool.n, dtype=int)
        self.spent = 0.0
        self.current: Any = None
        self._batch_rows: np.ndarray | None = None
        if self.observed is not None:
            cols = table_columns(self.observed, "observed")
            missing = [c for c in (*self._axes, *self._responses) if c not in cols]
            if missing:
                raise ValueError(f"the observed runs need the columns {missing}")
            for c in (*self._axes, *self._responses):
                self._data[c] = [cols[c]]

    # -- state ------------------------------------------------------------------------
    @property
    def data(self) -> dict[str, np.ndarray]:
        """Every observed run so far (axes and responses)."""
        return {k: np.concatenate(v) for k, v in self._data.items()}

    @property
    def n_observed(self) -> int:
        d = self.data
        return int(d[self._axes[0]].size) if d else 0

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    def _refit(self) -> tuple[Any, Sequence[Any] | None, float | None]:
        """The law fitted to every run so far: (law for ``design``, draws, noise)."""
        data = self.data
        if self.fit is not None:
            out = self.fit(data)
            if isinstance(out, tuple):
                point, draws, noise = out
                return as_model(point), list(draws), noise
            return out, None, None
        from rlscale.optimize._fit import fit_law
        from rlscale.optimize._fit_family import FAMILIES
        from rlscale.theory._expr import BoundLaw, ExpressionLaw

        law = self.law
        if isinstance(law, BoundLaw):
            law = law.law  # a bound expression: refit its expression
        elif not isinstance(law, str | ExpressionLaw):
            law = getattr(law, "family", None)  # a law with values: refit its family
            if law not in FAMILIES:
                raise TypeError(f"the Designer refits with fit_law, which cannot fit "
                                f"{type(self.law).__name__}: pass fit=callable")
        y = self._responses[0]
        fit = fit_law({a: data[a] for a in self._axes} | {y: data[y]}, law=law,
                      axes=list(self._axes), target=y, bootstrap=self.bootstrap,
                      seed=self.seed + len(self.history), holdout=0)
        return fit, None, None

    def _remaining_pool(self) -> tuple[dict[str, np.ndarray], Any, np.ndarray, np.ndarray]:
        """The candidates not used up: columns, the cost spec for them, costs, positions."""
        keep = self._used < self.max_repeats
        cols = {k: v[keep] for k, v in self._pool_cols.items()}
        spec = self.cost
        if spec is not None and not isinstance(spec, str) and not hasattr(spec, "terms"):
            spec = self._cost[keep]  # one cost per row: the remaining rows' costs
        return cols, spec, self._cost[keep], np.flatnonzero(keep)

    # -- the loop -----------------------------------------------------------------------
    def propose(self) -> Design | None:
        """The next batch (``None`` once the loop has stopped; see :attr:`stop_reason`)."""
        if self.done:
            return None
        cols, spec, cost, where = self._remaining_pool()
        left = self.budget - self.spent
        if cost.size == 0 or left < cost.min() * (1 - 1e-12):
            self.stop_reason = "budget"
            return None
        rounds = len(self.history)
        observed = self.data or None
        common = {"cost": spec, "max_repeats": 1, "seed": self.seed + rounds}
        if self.n_observed <= self._p:
            # Nothing to fit yet: the parameter-free first batch, at least p + 2 runs' worth.
            need = self._p + 2 - self.n_observed
            floor = float(np.sum(np.sort(cost)[:need]))
            b = min(left, max(self.initial * self.budget, floor))
            axes = list(self._axes)
            batch = design(self.law, cols, b, None, axes=axes,
                           observed=_axes_only(observed, axes), method="surface", **common)
            pred = plan = None
        else:
            if rounds >= self.batches + 1:
                self.stop_reason = "batches"
                return None
            law, draws, noise = self._refit()
            self.current = law
            remaining = max(self.batches + 1 - rounds, 1)
            b = min(left, max(left / remaining, float(cost.min())))
            method = self.method
            if method.startswith("bayes") and draws is None and not _has_draws(law):
                method = method.replace("bayes-", "") + "-optimal"
            kw = dict(axes=list(self._axes), observed=_axes_only(observed, list(self._axes)),
                      laws=draws, n_laws=self.n_laws,
                      noise=self.noise if self.noise is not None else noise, **common)
            try:
                batch = design(law, cols, b, self.target, method=method, **kw)
            except TargetError as exc:
                # The fit cannot locate the plan yet (too flat, say): learn the law first.
                d_method = "bayes-d" if method.startswith("bayes") else "d-optimal"
                batch = design(law, cols, b, None, method=d_method, **kw)
                batch = dataclasses.replace(batch, notes=(*batch.notes, (
                    f"the target could not be located under this fit ({exc}); the batch "
                    f"is {d_method} instead, to identify the law")))
                pred = plan = None
                self._batch_rows = where[batch.runs["pool_row"]]
                self.history.append(DesignStep(batch, self.spent, self.n_observed, pred, plan))
                return batch
            pred, plan = _prediction(law, batch)
            before, after = batch.uncertainty_before, batch.uncertainty_after
            if (self.tolerance is not None and before is not None
                    and before <= self.tolerance):
                self.history.append(DesignStep(batch, self.spent, self.n_observed, pred, plan))
                self.stop_reason = "tolerance"
                return None
            if (before is not None and after is not None and math.isfinite(before)
                    and after >= (1.0 - self.min_gain) * before):
                self.history.append(DesignStep(batch, self.spent, self.n_observed, pred, plan))
                self.stop_reason = "min_gain"
                return None
        self._batch_rows = where[batch.runs["pool_row"]]
        self.history.append(DesignStep(batch, self.spent, self.n_observed, pred, plan))
        return batch

    def observe(self, results: Any) -> None:
        """Record the results of the last proposed batch (a table: axes and response)."""
        if self._batch_rows is None:
            raise ValueError("observe() records the results of the batch propose() returned; "
                             "there is no proposed batch waiting")
        cols = table_columns(results, "results")
        missing = [c for c in (*self._axes, *self._responses) if c not in cols]
        if missing:
            raise ValueError(f"the results need the columns {missing}")
        n = cols[self._axes[0]].size
        if n != self._batch_rows.size:
            raise ValueError(f"the batch has {self._batch_rows.size} runs; got {n} results")
        for c in (*self._axes, *self._responses):
            self._data.setdefault(c, []).append(np.asarray(cols[c], dtype=float))
        self._used[self._batch_rows] += 1
        self.spent += float(self._cost[self._batch_rows].sum())
        self.history[-1] = DesignStep(**{**self.history[-1].__dict__, "ran": True})
        self._batch_rows = None

    def run(self, oracle: Callable[[dict[str, np.ndarray]], Any]) -> list[DesignStep]:
        """Run the loop with ``oracle(runs) -> responses`` until it stops; the history.

        ``oracle`` gets the batch's columns (a mapping) and returns the
        response of each run (an array, or a mapping of response columns).
        """
        if not callable(oracle):
            raise TypeError(f"oracle must be callable (runs -> responses); got "
                            f"{type(oracle).__name__}")
        while (batch := self.propose()) is not None:
            got = oracle(batch.runs)
            res = dict(got) if isinstance(got, Mapping) else {self._responses[0]: got}
            try:
                res = {k: np.asarray(v, dtype=float) for k, v in res.items()}
            except (TypeError, ValueError):
                raise TypeError(f"oracle must return the responses as numbers (an array, or a "
                                f"mapping of response columns); got {got!r:.60}") from None
            self.observe({**{a: batch.runs[a] for a in self._axes}, **res})
        return self.history

    def final_fit(self) -> Any:
        """The law fitted to every run made (what the plan is made from)."""
        law, _, _ = self._refit()
        return law


def _axes_only(data: Mapping[str, np.ndarray] | None, axes: Sequence[str]
               ) -> dict[str, np.ndarray] | None:
    return None if not data else {a: data[a] for a in axes}


def _has_draws(law: Any) -> bool:
    """Whether a fit has at least two usable bootstrap laws (a flat fit's are often invalid)."""
    from rlscale.optimize._design_model import sample_models

    return len(sample_models(law, 3)) >= 2


def _prediction(law: Any, batch: Design) -> tuple[np.ndarray | None, dict | None]:
    if batch.target is None:
        return None, None
    model = as_model(law)
    pred = np.exp(model.log_predict(batch.target.points)).mean(axis=1)
    plans = [p for p in batch.target.plans if p.get("law") == 0]
    plan = {a: plans[-1][a] for a in model.axes} if plans else None
    return pred, plan
