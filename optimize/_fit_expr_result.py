"""The result of :func:`~rlscale.optimize.fit_expression`: a fitted expression law, its
uncertainty, its diagnostics and its views."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning, range_warnings
from rlscale.theory._expr import BoundLaw, ExpressionLaw
from rlscale.theory._result import Result

__all__ = ["ExpressionFit"]


@dataclass(frozen=True)
class ExpressionFit(Result):
    """The result of :func:`~rlscale.optimize.fit_expression`.

    Attributes
    ----------
    law : ExpressionLaw
        The law (the first output's, for a law fitted to several targets).
    params : dict
        The fitted parameter values (natural units, every output's together).
    objective : float
        The minimised objective at ``params``: the summed Huber loss (or half the
        sum of squares, ``loss="squared"``) of the residuals, plus the prior's
        ``½ Σ z²`` for a fit with a prior.
    r2 : float
        ``1 − RSS/TSS`` of the fitted quantity (``log y`` for log residuals).
    rmse_log : float
        Root mean squared residual (of ``log y``; of ``y`` for ``residuals="raw"``).
    aic, bic : float
        ``n log(RSS/n) + 2k`` and ``n log(RSS/n) + k log n`` over the ``n`` residuals
        (all outputs) and the ``k`` fitted parameters: -2 times the Gaussian
        log-likelihood at its maximum-likelihood variance, less the constant
        ``n (log 2π + 1)`` (Burnham & Anderson 2002, §2.2 and §6.4). The same convention
        as :class:`FitResult`, so the two fitters' criteria compare for the same law
        and data.
    intervals : dict
        Percentile bootstrap intervals, or the posterior's for a fit with a prior
        (:attr:`interval_method`); empty without either.
    bootstrap_samples : ndarray or None
        One row per resample, columns in the order of ``law.params`` (of
        :attr:`params`).
    warnings : tuple of FitWarning
        Identification diagnostics (:mod:`rlscale.optimize._fit_identify`), a
        parameter on its bound, the iteration limit, a prior-dominated parameter.
        Empty for a clean design and a well-posed law.
    n_points : int
        Runs (rows) fitted.
    n_starts : int
        Candidate starts evaluated (the best of them screened and polished).
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome`: ``success`` when
        the best end point's solve met its tolerance (``status`` ``"converged"``);
        ``"max_evaluations"`` when it stopped at the evaluation limit.
    seconds : float
    extra : dict
        ``extrapolation`` (the hold-out of the largest-scale runs), ``residuals``.
    laws, targets : tuple
        Every output's law and target column (one each for a single-output fit).
    loss, residual_kind, delta, ranges : str, str, float, str
        The objective's options (``residual_kind`` is ``residuals=``).
    bounds : dict
        The bounds the fit held (declared ranges with ``ranges="bounds"``).
    prior : dict or None
        ``name -> (centre, scale)`` of a regularised fit, with its ``noise``.
    interval_method : {"bootstrap", "posterior", "none"}
    data_range : dict
        ``axis -> (min, max)`` of the data, for :meth:`range_warnings`.
    nfev : int
        Model evaluations of the best end point's solve.
    """

    law: ExpressionLaw
    params: dict[str, float]
    objective: float
    r2: float
    rmse_log: float
    aic: float
    bic: float
    intervals: dict[str, tuple[float, float]]
    bootstrap_samples: np.ndarray | None
    warnings: tuple[FitWarning, ...]
    n_points: int
    n_starts: int
    success: bool
    message: str
    confidence: float
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    laws: tuple[ExpressionLaw, ...] = ()
    targets: tuple[str, ...] = ()
    loss: str = "huber"
    residual_kind: str = "log"
    delta: float = 1e-3
    ranges: str = "bounds"
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    prior: dict[str, tuple[float, float]] | None = None
    noise: float | None = None
    interval_method: str = "none"
    data_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    nfev: int = 0
    stop: str = "converged"
    n_bootstrap: int = 0

    @property
    def status(self) -> str:
        return self.stop

    @property
    def bound(self) -> BoundLaw:
        """The law at the fitted parameters (the first output's)."""
        return self.law.bind({p: self.params[p] for p in self.law.params})

    @property
    def bound_laws(self) -> tuple[BoundLaw, ...]:
        """Every output's law at the fitted parameters."""
        laws = self.laws or (self.law,)
        return tuple(law.bind({p: self.params[p] for p in law.params}) for law in laws)

    def predict(self, values: Mapping[str, Any]) -> Any:
        """The law at axis ``values``; for several outputs a dict target -> prediction."""
        if len(self.laws) > 1:
            return {t: b.loss(values) for t, b in zip(self.targets, self.bound_laws)}
        return self.bound.loss(values)

    def range_warnings(self, values: Mapping[str, Any]) -> list[FitWarning]:
        """``extrapolation`` warnings for predicting at ``values`` (an axis more than 10x
        beyond the data range)."""
        return range_warnings(self.data_range, values)

    def as_dict(self) -> dict[str, Any]:
        laws = self.laws or (self.law,)
        return {"expression": str(self.law.expr), "axes": list(self.law.axes),
                "expressions": [str(law.expr) for law in laws],
                "targets": list(self.targets), "params": self.params,
                "objective": self.objective, "r2": self.r2,
                "rmse_log": self.rmse_log, "aic": self.aic, "bic": self.bic,
                "intervals": {k: list(v) for k, v in self.intervals.items()},
                "interval_method": self.interval_method,
                "warnings": [w.as_dict() for w in self.warnings],
                "n_points": self.n_points, "n_starts": self.n_starts, "nfev": self.nfev,
                "success": self.success, "status": self.status, "message": self.message,
                "confidence": self.confidence, "seconds": self.seconds, "loss": self.loss,
                "residuals": self.residual_kind, "delta": self.delta, "ranges": self.ranges,
                "bounds": {k: list(v) for k, v in self.bounds.items()},
                "prior": None if self.prior is None else {k: list(v) for k, v in
                                                          self.prior.items()},
                "noise": self.noise, "n_bootstrap": self.n_bootstrap,
                "data_range": {k: list(v) for k, v in self.data_range.items()},
                "extrapolation": self.extra.get("extrapolation", {})}

    def __repr__(self) -> str:
        """One screen: parameters with intervals, fit statistics, diagnostics by code."""
        from rlscale.optimize._summary import fit_summary

        return fit_summary(self)

    # -- saving and loading (issue 24) -------------------------------------------
    def save(self, path: Any) -> Any:
        """Write the fit to ``path`` as JSON, atomically; return the path.

        Everything is kept (every output's law, by its expression and declared ranges;
        intervals, bootstrap samples, diagnostics, the prior): :meth:`load` gives back
        a fit equal field by field (:mod:`rlscale.optimize._fit_io`).
        """
        from rlscale.optimize._fit_io import save_fit

        return save_fit(self, path)

    @classmethod
    def load(cls, path: Any) -> ExpressionFit:
        """Read a fit written by :meth:`save` (or ``rlscale fit --expr ... --out``).

        Raises ``ValueError`` naming the file when it is not a saved ExpressionFit.
        """
        from rlscale.optimize._fit_io import load_fit

        fit = load_fit(path)
        if not isinstance(fit, cls):
            raise ValueError(f"{path} holds a {type(fit).__name__}, not a {cls.__name__}: "
                             f"load it with {type(fit).__name__}.load or "
                             "rlscale.optimize.load_fit")
        return fit

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """The parameters as a :class:`pandas.DataFrame` indexed by ``parameter``.

        Columns ``value``, ``low`` and ``high`` (the interval; NaN without one).
        Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import parameter_frame

        return parameter_frame(self.params, self.intervals)

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table, latex_math

        rows = [[name, value, *self.intervals.get(name, (None, None))]
                for name, value in self.params.items()]
        level = (f"{self.confidence:.0%} {self.interval_method} interval" if self.intervals
                 else "no interval")
        notes = [f"{latex_math(self.law.expr)} on {self.n_points} points: R² = {self.r2:.4g}, "
                 f"RMSE = {self.rmse_log:.4g}, AIC = {self.aic:.4g}, BIC = {self.bic:.4g}",
                 *(str(w) for w in self.warnings)]
        return html_table("ExpressionFit", ["parameter", "value", f"low ({level})", "high"],
                          rows, notes)
