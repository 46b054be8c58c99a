"""The result of :func:`~rlscale.optimize.fit_law`: the fitted law, its uncertainty, its
diagnostics and its views (table, HTML, figure).

Kept apart from the verb (:mod:`rlscale.optimize._fit`) so that each stays small.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning, range_warnings
from rlscale.optimize._fit_family import family
from rlscale.theory._laws import Law, PassRateLaw
from rlscale.theory._result import Result
from rlscale.theory._validation import check_scalar

__all__ = ["FitResult"]


@dataclass(frozen=True)
class FitResult(Result):
    """Outcome of :func:`fit_law`.

    Attributes
    ----------
    law : Law
        The fitted law (a :class:`~rlscale.theory.PassRateLaw` for pass rates).
    params : dict
        Natural parameters: ``floor``, ``coefficient[axis]``/``coefficient``,
        ``exponent[axis]`` (and ``p_max`` for pass rates).
    objective : float
        Huber loss at the optimum (summed or mean, see ``reduction``), or half the
        sum of squares for ``loss="squared"``.
    n_points, n_params : int
    r2 : float
        ``1 - RSS/TSS`` of ``log L`` (NaN, with nothing to explain, when every target is
        equal and the fit misses it; 1 when it hits it).
    rmse_log : float
        Root mean squared log residual.
    aic, bic : float
        ``n log(RSS/n) + 2k`` and ``n log(RSS/n) + k log n`` on the log residuals:
        -2 times the Gaussian log-likelihood at its maximum-likelihood variance, less
        the constant ``n (log 2π + 1)`` (Burnham & Anderson 2002, §2.2 and §6.4); ``k``
        counts the law's parameters. The convention of :class:`ExpressionFit` too.
    residuals : numpy.ndarray
        ``log L_hat - log L`` per (aggregated) point.
    extrapolation : dict
        Hold-out of the largest-scale points: ``n_holdout``,
        ``mean_abs_rel_error``, ``max_abs_rel_error``, ``rmse_log``.
    intervals : dict
        ``param -> (low, high)`` percentile bootstrap intervals (empty when
        ``bootstrap=0``), at level ``confidence``.
    bootstrap_samples : numpy.ndarray or None
        The bootstrap estimates, shape ``(n_bootstrap, n_params)``, columns in
        the order of ``params``.
    warnings : tuple of FitWarning
        Diagnostics (:mod:`rlscale.optimize._diagnostics`): collinear axes, a
        parameter at its bound or not identified, correlated estimates, an
        ill-conditioned Jacobian.  Empty for a clean design and a well-posed law.
    data_range : dict
        ``axis -> (min, max)`` of the data, for :meth:`range_warnings`.
    floor_bounds : tuple or None
        The ``floor`` (or ``p_max``) bounds the fit was given.
    loss : {"huber", "squared"}
        The objective's loss of the log residuals.
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome`: ``success`` when
        at least one refined start met its stopping rule at a finite objective
        (``status`` ``"converged"``, else ``"not_converged"``); ``message`` says so
        and names the diagnostics in ``warnings``, which do not make a fit fail.
    """

    law: Law
    params: dict[str, float]
    objective: float
    n_points: int
    n_params: int
    r2: float
    rmse_log: float
    aic: float
    bic: float
    residuals: np.ndarray
    extrapolation: dict[str, Any]
    intervals: dict[str, tuple[float, float]]
    confidence: float
    n_bootstrap: int
    n_starts: int
    n_converged: int
    axes: tuple[str, ...]
    target: str
    reduction: str
    delta: float
    replicates: str
    seconds: float
    bootstrap_samples: np.ndarray | None = field(default=None, repr=False)
    warnings: tuple[FitWarning, ...] = ()
    data_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    floor_bounds: tuple[float, float] | None = None
    loss: str = "huber"

    @property
    def success(self) -> bool:
        return self.n_converged > 0 and math.isfinite(self.objective)

    @property
    def status(self) -> str:
        return "converged" if self.success else "not_converged"

    @property
    def message(self) -> str:
        text = (f"{self.n_converged} of {self.n_starts} refined starts met their stopping "
                f"rule; Huber objective {self.objective:.6g}")
        if not math.isfinite(self.objective):
            text = f"no finite objective ({self.n_starts} starts refined)"
        if self.warnings:
            codes = sorted({w.code for w in self.warnings})
            text += f"; {len(self.warnings)} diagnostics ({', '.join(codes)})"
        return text

    def range_warnings(self, values: Mapping[str, Any]) -> list[FitWarning]:
        """``extrapolation`` warnings for predicting at ``values`` (axis -> value(s)):
        an axis more than 10x beyond the data range."""
        return range_warnings(self.data_range, values)

    def predict(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """The fitted law's loss (or pass rate, for pass-rate fits) at ``values``."""
        if isinstance(self.law, PassRateLaw):
            return self.law.pass_rate(values, **kwargs)
        return self.law.loss(values, **kwargs)

    def bootstrap_laws(self) -> list[Law]:
        """The fitted law of each bootstrap resample (empty without a bootstrap).

        Rebuilt from :attr:`bootstrap_samples` (columns in the order of
        :attr:`params`).  A resample whose exponent reached its lower bound 0
        no longer depends on that axis and is not a valid law object; it is
        left out, so the list may be shorter than :attr:`n_bootstrap`.
        """
        if self.bootstrap_samples is None:
            return []
        fam = family(self.law.family)
        names = list(self.params)
        laws: list[Law] = []
        for row in self.bootstrap_samples:
            try:
                laws.append(fam.law_from_natural(dict(zip(names, row.tolist())), self.axes))
            except ValueError:
                continue
        return laws

    def predict_band(self, points: Sequence[Mapping[str, Any]],
                     confidence: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise percentile band of the prediction over the bootstrap laws.

        Parameters
        ----------
        points : sequence of mappings
            Axis values at which to predict.
        confidence : float, optional
            Band level (default: the fit's :attr:`confidence`).

        Returns
        -------
        (low, high) : numpy.ndarray
            One value per point.

        Raises
        ------
        ValueError
            When the fit has fewer than 20 usable bootstrap laws.
        """
        level = self.confidence if confidence is None else check_scalar(
            "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
        if (isinstance(points, str | bytes | Mapping) or not isinstance(points, Sequence)
                or not all(isinstance(p, Mapping) for p in points)):
            raise TypeError(f"points must be a sequence of mappings axis -> value; got "
                            f"points={points!r:.60}")
        laws = self.bootstrap_laws()
        if len(laws) < 20:
            raise ValueError(f"a prediction band needs at least 20 usable bootstrap laws; "
                             f"this fit has {len(laws)} (fit with bootstrap >= 20)")
        pass_rate = isinstance(self.law, PassRateLaw)
        keys = set(points[0]) if points else set()
        if points and all(set(p) == keys for p in points):
            # One call per law on columns of every point (issue 24: a point at a time,
            # fit.plot spent 42 CPU s on 1,000 bootstrap laws x 80 points per axis).
            cols = {k: np.array([p[k] for p in points]) for k in keys}
            preds = np.array([np.broadcast_to(np.asarray(
                law.pass_rate(cols) if pass_rate else law.loss(cols), float), len(points))
                for law in laws])
        else:
            preds = np.array([[float(law.pass_rate(p) if pass_rate else law.loss(p))
                               for p in points] for law in laws])
        tail = (1 - level) / 2 * 100
        return np.percentile(preds, tail, axis=0), np.percentile(preds, 100 - tail, axis=0)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in super().as_dict().items() if k != "bootstrap_samples"}
        out["law"] = self.law.as_dict()
        out["warnings"] = [w.as_dict() for w in self.warnings]
        out["data_range"] = {a: list(r) for a, r in self.data_range.items()}
        out["floor_bounds"] = None if self.floor_bounds is None else list(self.floor_bounds)
        out["residuals"] = self.residuals.tolist()
        out["intervals"] = {k: list(v) for k, v in self.intervals.items()}
        out["axes"] = list(self.axes)
        out.update(success=self.success, status=self.status, message=self.message)
        return out

    def __repr__(self) -> str:
        """One screen: parameters with intervals, fit statistics, diagnostics by code."""
        from rlscale.optimize._summary import fit_summary

        return fit_summary(self)

    # -- saving and loading (issue 24) -------------------------------------------
    def save(self, path: Any) -> Any:
        """Write the fit to ``path`` as JSON, atomically; return the path.

        Everything is kept (the law, intervals, bootstrap samples, diagnostics):
        :meth:`load` gives back a fit equal field by field.  The format is described
        in :mod:`rlscale.optimize._fit_io`; ``rlscale fit --out FILE`` writes the same.
        """
        from rlscale.optimize._fit_io import save_fit

        return save_fit(self, path)

    @classmethod
    def load(cls, path: Any) -> FitResult:
        """Read a fit written by :meth:`save` (or ``rlscale fit --out``).

        Raises ``ValueError`` naming the file when it is not a saved FitResult (a
        foreign file, an expression fit: :meth:`ExpressionFit.load`, or another
        format version).

        Examples
        --------
        >>> import tempfile, numpy as np
        >>> from pathlib import Path
        >>> from rlscale.optimize import fit_law
        >>> N = np.repeat([1.0, 2, 4, 8, 16, 32, 64], 2)
        >>> loss = (0.5 + 2 * N ** -0.5) * np.exp(np.tile([0.01, -0.01], 7))
        >>> fit = fit_law({"N": N, "loss": loss}, axes=["N"], bootstrap=20, n_jobs=1)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     back = FitResult.load(fit.save(Path(tmp) / "fit.json"))
        >>> back.law == fit.law, np.array_equal(back.bootstrap_samples, fit.bootstrap_samples)
        (True, True)
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

        Columns ``value``, ``low`` and ``high`` (the bootstrap interval; NaN without a
        bootstrap).  Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import parameter_frame

        return parameter_frame(self.params, self.intervals)

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rows = [[name, value, *self.intervals.get(name, (None, None))]
                for name, value in self.params.items()]
        extra = self.extrapolation.get("mean_abs_rel_error")
        notes = [f"{self.law.family} law on {', '.join(self.axes)} ({self.target}); "
                 f"{self.n_points} points, R² = {self.r2:.4g}, RMSE(log) = {self.rmse_log:.4g}, "
                 f"AIC = {self.aic:.4g}, BIC = {self.bic:.4g}"
                 + ("" if extra is None else f", extrapolation error = {extra:.3g}")]
        level = f"{self.confidence:.0%} interval" if self.intervals else "no bootstrap"
        return html_table("FitResult", ["parameter", "value", f"low ({level})", "high"],
                          rows, notes)

    def plot(self, data: Any, **kwargs: Any) -> Any:
        """Data with intervals, the law per axis with its bootstrap band, residuals (a Figure).

        Arguments and an example: :func:`rlscale.optimize._fit_plot.plot_fit` (extra ``plot``).
        """
        from rlscale.optimize._fit_plot import plot_fit

        return plot_fit(self, data, **kwargs)
