"""The result of :func:`~rlscale.optimize.design`: the runs to make and what they buy.

Kept apart from the verb (:mod:`rlscale.optimize._design`) so that each stays
one idea.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._design_criteria import Certificate
from rlscale.optimize._design_target import TargetRegion
from rlscale.theory._result import Result

__all__ = ["Design"]


def _rms(sd: np.ndarray | None, w: np.ndarray | None) -> float | None:
    if sd is None or w is None:
        return None
    if not np.all(np.isfinite(sd)):
        return math.inf
    return float(math.sqrt(float(w @ (sd ** 2))))


def _sd(v: float | None) -> str:
    return "unbounded" if v is None else f"{v:.3g}"  # None: the runs do not identify the law


@dataclass(frozen=True)
class Design(Result):
    """Outcome of :func:`~rlscale.optimize.design`: a batch of runs within a budget.

    Attributes
    ----------
    method : str
        The selector that chose the runs.
    runs : dict of str -> ndarray
        The chosen candidates, one row each: every pool column, ``pool_row``
        (the row number in the pool as passed), ``runs`` (how many runs of it;
        1 unless repeats are allowed) and ``run_cost`` (cost of one run).
    cost : float
        Total cost of the batch (``Σ runs · run_cost``), ``<= budget``.
    budget : float
    n_runs : int
        Number of runs in the batch (with repeats).
    target : TargetRegion or None
        Where the design aims (``None`` for a design without a target).
    noise : float or None
        The noise sd of one run's ``log`` response (from the fit's residuals,
        or given); ``None``: the uncertainties are in units of it.
    sd_before, sd_after : ndarray or None
        Per target point, the predicted sd of the fitted law's ``log``
        prediction (≈ relative sd of the prediction) from the observed runs
        alone and with this batch added (linearised at the law; averaged over
        the ensemble's laws for a robust design; including the Huber fit's
        variance inflation over least squares).  ``None`` without law values
        or target, and where the runs do not identify the law (a note says so).
    regret_before, regret_after : float or None
        For a plan target with ``objective="regret"``: the plan's expected regret
        (the loss the fitted law's plan gives up under the true law, in loss
        units; linearised, ensemble mean) from the observed runs and with this
        batch.  ``None`` where the runs do not identify the law.
    criterion : str or None
        ``"D"`` or ``"V"`` for an optimal design.
    value : float or None
        The criterion's utility at the chosen runs.
    certificate : Certificate or None
        The relaxation's optimality certificate (Frank–Wolfe gap / Kiefer–Wolfowitz).
    efficiency : float or None
        Guaranteed efficiency of the whole-run batch against the best possible
        design (fractional or whole) for the criterion: from the relaxation's
        bound, D: ``exp((value − bound)/p)``, V: ``V_bound / V``.
    weights : ndarray or None
        The relaxation's fractional runs per candidate (pool order, after
        observed runs are set aside).
    n_laws : int
        Laws the criterion averaged over (1: a local design).
    n_candidates, n_observed : int
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome`: ``status`` is
        cvxpy's for a relaxation (``"optimal"``...), ``"converged"`` for a
        greedy design, ``"exact"`` for a selection rule (random, cheapest).
    notes : tuple of str
    seconds : float
        CPU seconds.
    """

    method: str
    runs: dict[str, np.ndarray]
    cost: float
    budget: float
    n_runs: int
    target: TargetRegion | None
    noise: float | None
    sd_before: np.ndarray | None
    sd_after: np.ndarray | None
    regret_before: float | None
    regret_after: float | None
    criterion: str | None
    value: float | None
    certificate: Certificate | None
    efficiency: float | None
    weights: np.ndarray | None = field(repr=False)
    n_laws: int
    n_candidates: int
    n_observed: int
    success: bool
    status: str
    message: str
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def target_sd_before(self) -> float | None:
        """Root mean square over the target (its weights) of :attr:`sd_before`."""
        return _rms(self.sd_before, None if self.target is None else self.target.weights)

    @property
    def target_sd_after(self) -> float | None:
        """Root mean square over the target of :attr:`sd_after`."""
        return _rms(self.sd_after, None if self.target is None else self.target.weights)

    @property
    def uncertainty_before(self) -> float | None:
        """What the target's objective is uncertain by before the batch: the expected
        regret for a regret target, else :attr:`target_sd_before`."""
        return self.regret_before if self.regret_before is not None else self.target_sd_before

    @property
    def uncertainty_after(self) -> float | None:
        """The same with the batch (:attr:`regret_after` or :attr:`target_sd_after`)."""
        return self.regret_after if self.regret_after is not None else self.target_sd_after

    @property
    def pool_rows(self) -> np.ndarray:
        return self.runs["pool_row"]

    def rows(self) -> list[dict[str, Any]]:
        """The batch as a list of records (what ``rlscale design`` writes as CSV)."""
        n = self.runs["pool_row"].size
        out = []
        for i in range(n):
            row = {}
            for k, v in self.runs.items():
                x = v[i]
                row[k] = int(x) if k in ("pool_row", "runs") else (
                    float(x) if isinstance(x, float | np.floating) else x)
            out.append(row)
        return out

    def to_csv(self) -> str:
        """The batch as CSV text (header row; floats in full precision)."""
        import csv
        import io

        rows = self.rows()
        buf = io.StringIO()
        if rows:
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            for r in rows:
                writer.writerow({k: (f"{v:.17g}" if isinstance(v, float) else v)
                                 for k, v in r.items()})
        return buf.getvalue()

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method, "success": self.success, "status": self.status,
            "message": self.message, "budget": self.budget, "cost": self.cost,
            "n_runs": self.n_runs, "runs": self.rows(),
            "target": None if self.target is None else self.target.as_dict(),
            "noise": self.noise,
            "sd_before": None if self.sd_before is None else self.sd_before.tolist(),
            "sd_after": None if self.sd_after is None else self.sd_after.tolist(),
            "target_sd_before": self.target_sd_before, "target_sd_after": self.target_sd_after,
            "regret_before": self.regret_before, "regret_after": self.regret_after,
            "criterion": self.criterion, "value": self.value,
            "certificate": None if self.certificate is None else self.certificate.as_dict(),
            "efficiency": self.efficiency, "n_laws": self.n_laws,
            "n_candidates": self.n_candidates, "n_observed": self.n_observed,
            "notes": list(self.notes), "seconds": self.seconds}

    def to_frame(self) -> Any:
        """The batch as a :class:`pandas.DataFrame` (needs pandas)."""
        from rlscale.theory._display import data_frame

        return data_frame(self.rows())

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rows = self.rows()
        cols = list(rows[0]) if rows else ["pool_row"]
        before, after = self.target_sd_before, self.target_sd_after
        notes = [f"{self.method}: {self.n_runs} runs, cost {self.cost:.6g} of {self.budget:.6g}"
                 + ("" if after is None else f"; target sd {_sd(before)} -> {_sd(after)}"),
                 self.message]
        return html_table("Design", cols, [[r[c] for c in cols] for r in rows], notes)
