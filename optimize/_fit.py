"""Fitting scaling laws: Hoffmann et al. approach 3 as corrected by Besiroglu et al.

Method (Hoffmann et al. 2022, arXiv 2203.15556, §3.3 and appendix D.2;
Besiroglu, Erdil, Barnett & You 2024, arXiv 2404.10102, §2):

- parameterise in log space, ``e = log L_inf``, ``a_i = log A_i``, so the
  additive law's log-prediction is a log-sum-exp,
  ``log L_hat = LSE(e, a_1 - alpha_1 log x_1, ..., a_n - alpha_n log x_n)``;
- minimise the Huber loss (``delta = 1e-3``) of the residuals
  ``log L_hat - log L``, **summed** over points -- Besiroglu et al. show that
  averaging it (as Hoffmann et al.'s code did) makes L-BFGS stop early, which
  is why the original estimates were off;
- run L-BFGS-B (analytic gradient) from every point of a grid of
  initialisations (``alpha_i in {0, 0.5, ..., 2}``, ``e in {-1, -0.5, ..., 1}``,
  ``a_i in {0, 5, ..., 25}``) and keep the best;
- bootstrap: resample the points with replacement and refit (warm-started
  from the point estimate and the runner-up grid optima), giving percentile
  intervals.  Resamples run in parallel with joblib; each draws its own
  ``SeedSequence`` child, so results do not depend on the number of workers.

Model selection: AIC and BIC use a Gaussian likelihood of the log residuals,
``n log(RSS/n) + 2k`` and ``n log(RSS/n) + k log n``; the extrapolation error
refits on all but the largest-scale points (scale = product of the axes) and
scores the held-out ones.  ``R^2`` is computed on ``log L``.

The multiplicative law ``log L = c - sum alpha_i log x_i`` and the pass-rate
law (fitted on ``1/p``, its additive loss; see :mod:`rlscale.theory._laws`)
use the same machinery.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import (
    FitWarning,
    check_direction,
    design_warnings,
    fit_warnings,
    range_warnings,
)
from rlscale.optimize._lbfgs import _batched_lbfgs
from rlscale.theory._laws import AdditiveLaw, Law, MultiplicativeLaw, PassRateLaw, _check_axes
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["FitResult", "fit_law", "huber"]

LAWS = ("additive", "multiplicative", "pass_rate")

#: Initialisation grid of Hoffmann et al. (2022) as used by Besiroglu et al. (2024).
GRID = {
    "exponent": (0.0, 0.5, 1.0, 1.5, 2.0),
    "log_floor": (-1.0, -0.5, 0.0, 0.5, 1.0),
    "log_coefficient": (0.0, 5.0, 10.0, 15.0, 20.0, 25.0),
}


def huber(r: Any, delta: float = 1e-3) -> np.ndarray:
    """Huber loss ``r**2/2`` for ``|r| <= delta``, ``delta (|r| - delta/2)`` beyond.

    Examples
    --------
    >>> huber(np.array([0.0005, 0.01]), delta=1e-3).tolist()
    [1.25e-07, 9.5e-06]
    """
    d = check_scalar("delta", delta, low=0.0, low_open=True)
    r = check_real("r", r)
    a = np.abs(r)
    # Written as c·(|r| − c/2) with c = min(|r|, δ): no r² overflow for |r| near 1e308.
    c = np.minimum(a, d)
    return c * (a - 0.5 * c)


@dataclass(frozen=True)
class FitResult:
    """Outcome of :func:`fit_law`.

    Attributes
    ----------
    law : Law
        The fitted law (a :class:`~rlscale.theory.PassRateLaw` for pass rates).
    params : dict
        Natural parameters: ``floor``, ``coefficient[axis]``/``coefficient``,
        ``exponent[axis]`` (and ``p_max`` for pass rates).
    objective : float
        Huber loss at the optimum (summed or mean, see ``reduction``).
    n_points, n_params : int
    r2 : float
        ``1 - RSS/TSS`` of ``log L`` (NaN, with nothing to explain, when every target is
        equal and the fit misses it; 1 when it hits it).
    rmse_log : float
        Root mean squared log residual.
    aic, bic : float
        Gaussian-likelihood criteria on the log residuals.
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
        from rlscale.theory._laws import law_from_dict

        names = list(self.params)
        template = self.law.params()
        laws: list[Law] = []
        for row in self.bootstrap_samples:
            p = dict(zip(names, (float(v) for v in row)))
            spec: dict[str, Any] = {"family": self.law.family, "axes": list(self.axes)}
            for key, value in template.items():
                if isinstance(value, dict):  # "coefficients" -> "coefficient[axis]"
                    spec[key] = {a: p[f"{key[:-1]}[{a}]"] for a in self.axes}
                else:
                    spec[key] = p.get(key, value)
            try:
                laws.append(law_from_dict(spec))
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
        preds = np.array([[float(law.pass_rate(p) if pass_rate else law.loss(p))
                           for p in points] for law in laws])
        tail = (1 - level) / 2 * 100
        return np.percentile(preds, tail, axis=0), np.percentile(preds, 100 - tail, axis=0)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "bootstrap_samples"}
        out["law"] = self.law.as_dict()
        out["warnings"] = [w.as_dict() for w in self.warnings]
        out["data_range"] = {a: list(r) for a, r in self.data_range.items()}
        out["floor_bounds"] = None if self.floor_bounds is None else list(self.floor_bounds)
        out["residuals"] = self.residuals.tolist()
        out["intervals"] = {k: list(v) for k, v in self.intervals.items()}
        out["axes"] = list(self.axes)
        return out

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


# ---------------------------------------------------------------------------
# objective
# ---------------------------------------------------------------------------

#: Largest (starts x points) block one vectorised evaluation holds: about ten work
#: arrays of this many float64 (2e6 elements: 16 MB each).
MAX_BATCH_CELLS = 2 * 10**6
#: Upper limit on starts x points of the multistart stage (about a minute of
#: L-BFGS at most); ``starts="auto"`` lowers the number of starts to fit it.
MAX_FIT_WORK = 10**7


class _Objective:
    """Huber loss of log residuals and its gradient for one parameterisation."""

    def __init__(self, family: str, logx: np.ndarray, logy: np.ndarray, delta: float,
                 reduction: str) -> None:
        self.family = family
        self.logx = logx          # (n_points, n_axes)
        self.logy = logy
        self.delta = delta
        self.scale = 1.0 if reduction == "sum" else 1.0 / logy.size
        self.n_axes = logx.shape[1]

    @property
    def n_params(self) -> int:
        return 1 + (2 * self.n_axes if self.family == "additive" else self.n_axes)

    def predict(self, theta: np.ndarray, logx: np.ndarray | None = None) -> np.ndarray:
        logx = self.logx if logx is None else logx
        n = self.n_axes
        if self.family == "additive":
            e, a, alpha = theta[0], theta[1:1 + n], theta[1 + n:]
            z = np.column_stack([np.full(logx.shape[0], e), a - alpha * logx])
            zmax = z.max(axis=1, keepdims=True)
            return (zmax + np.log(np.exp(z - zmax).sum(axis=1, keepdims=True)))[:, 0]
        return theta[0] - logx @ theta[1:]

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        n = self.n_axes
        d = self.delta
        if self.family == "additive":
            e, a, alpha = theta[0], theta[1:1 + n], theta[1 + n:]
            z = np.empty((self.logy.size, n + 1))
            z[:, 0] = e
            z[:, 1:] = a - alpha * self.logx
            zmax = z.max(axis=1, keepdims=True)
            w = np.exp(z - zmax)
            s = w.sum(axis=1, keepdims=True)
            pred = zmax[:, 0] + np.log(s[:, 0])
            w /= s
            r = pred - self.logy
            absr = np.abs(r)
            inside = absr <= d
            loss = np.where(inside, 0.5 * r * r, d * (absr - 0.5 * d)).sum()
            dr = np.where(inside, r, d * np.sign(r))
            g = np.empty(theta.size)
            g[0] = dr @ w[:, 0]
            wa = w[:, 1:] * dr[:, None]
            g[1:1 + n] = wa.sum(axis=0)
            g[1 + n:] = -(wa * self.logx).sum(axis=0)
        else:
            pred = theta[0] - self.logx @ theta[1:]
            r = pred - self.logy
            absr = np.abs(r)
            inside = absr <= d
            loss = np.where(inside, 0.5 * r * r, d * (absr - 0.5 * d)).sum()
            dr = np.where(inside, r, d * np.sign(r))
            g = np.concatenate([[dr.sum()], -(dr @ self.logx)])
        return float(loss) * self.scale, g * self.scale

    def batch(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Objective and gradient for many parameter vectors at once, shape (B, p).

        Evaluated in blocks of starts so that no work array exceeds
        :data:`MAX_BATCH_CELLS` (starts x points) elements: memory stays bounded
        however many points and starts there are.
        """
        rows = max(1, MAX_BATCH_CELLS // max(self.logy.size, 1))
        if thetas.shape[0] <= rows:
            return self._batch_block(thetas)
        parts = [self._batch_block(thetas[i:i + rows]) for i in range(0, thetas.shape[0], rows)]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    def _batch_block(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_axes
        d = self.delta
        if self.family == "additive":
            # One (B, P) array per term: elementwise max/exp/sum over a handful of
            # terms is much faster than reducing a short last axis.
            terms = [np.broadcast_to(thetas[:, :1], (thetas.shape[0], self.logy.size))]
            for i in range(n):
                terms.append(thetas[:, 1 + i:2 + i]
                             - thetas[:, 1 + n + i:2 + n + i] * self.logx[:, i])
            zmax = terms[0]
            for t in terms[1:]:
                zmax = np.maximum(zmax, t)
            w = [np.exp(t - zmax) for t in terms]
            s = w[0].copy()
            for wi in w[1:]:
                s += wi
            pred = zmax + np.log(s)
            for wi in w:
                wi /= s
        else:
            pred = thetas[:, :1] - thetas[:, 1:] @ self.logx.T
        r = pred - self.logy
        # Huber via the clipped residual c: c (r - c/2) is r^2/2 inside, d(|r| - d/2)
        # outside, and c is the derivative.
        dr = np.clip(r, -d, d)
        loss = (dr * (r - 0.5 * dr)).sum(axis=1)
        if self.family == "additive":
            g = np.empty_like(thetas)
            g[:, 0] = np.einsum("bi,bi->b", dr, w[0])
            for i in range(n):
                wa = w[1 + i] * dr
                g[:, 1 + i] = wa.sum(axis=1)
                g[:, 1 + n + i] = -(wa @ self.logx[:, i])
        else:
            g = np.column_stack([dr.sum(axis=1), -(dr @ self.logx)])
        return loss * self.scale, g * self.scale

    def grid(self) -> np.ndarray:
        n = self.n_axes
        if self.family == "additive":
            axes = ([GRID["log_floor"]] + [GRID["log_coefficient"]] * n
                    + [GRID["exponent"]] * n)
        else:
            axes = [GRID["log_coefficient"]] + [GRID["exponent"]] * n
        return np.array(list(itertools.product(*axes)), dtype=np.float64)

    def bounds(self, floor_at_least_one: bool) -> list[tuple[float | None, float | None]]:
        n = self.n_axes
        if self.family == "additive":
            return ([(0.0 if floor_at_least_one else None, None)] + [(None, None)] * n
                    + [(0.0, None)] * n)
        return [(None, None)] + [(0.0, None)] * n


def _minimise(obj: _Objective, starts: np.ndarray, bounds: list) -> list[tuple[float, np.ndarray,
                                                                                bool]]:
    from scipy.optimize import minimize

    out = []
    for x0 in starts:
        res = minimize(obj, x0, jac=True, method="L-BFGS-B", bounds=bounds)
        out.append((float(res.fun), res.x, bool(res.success)))
    return out


def _law_from_theta(family: str, theta: np.ndarray, axes: Sequence[str]) -> Law:
    n = len(axes)
    if family in ("additive", "pass_rate"):
        law = AdditiveLaw(math.exp(theta[0]), dict(zip(axes, np.exp(theta[1:1 + n]))),
                          dict(zip(axes, np.maximum(theta[1 + n:], 1e-12))))
        if family == "pass_rate":
            return PassRateLaw.from_additive(law)
        return law
    return MultiplicativeLaw(math.exp(theta[0]), dict(zip(axes, np.maximum(theta[1:], 1e-12))))


def _natural(family: str, theta: np.ndarray, axes: Sequence[str]) -> dict[str, float]:
    n = len(axes)
    out: dict[str, float] = {}
    if family in ("additive", "pass_rate"):
        floor = math.exp(theta[0])
        if family == "pass_rate":
            out["p_max"] = 1.0 / floor
        else:
            out["floor"] = floor
        for i, a in enumerate(axes):
            c = math.exp(theta[1 + i])
            out[f"coefficient[{a}]"] = c / floor if family == "pass_rate" else c
        for i, a in enumerate(axes):
            out[f"exponent[{a}]"] = float(theta[1 + n + i])
    else:
        out["coefficient"] = math.exp(theta[0])
        for i, a in enumerate(axes):
            out[f"exponent[{a}]"] = float(theta[1 + i])
    return out


def _bootstrap_chunk(obj_args: tuple, seeds: Sequence[np.random.SeedSequence],
                     starts: np.ndarray, bounds: list) -> np.ndarray:
    family, logx, logy, delta, reduction = obj_args
    out = np.empty((len(seeds), starts.shape[1]))
    n = logy.size
    for j, ss in enumerate(seeds):
        idx = np.random.default_rng(ss).integers(0, n, n)
        obj = _Objective(family, logx[idx], logy[idx], delta, reduction)
        best = min(_minimise(obj, starts, bounds), key=lambda t: t[0])
        out[j] = best[1]
    return out


# ---------------------------------------------------------------------------
# data handling
# ---------------------------------------------------------------------------

def _columns(data: Any, axes: Sequence[str], target: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(data, Mapping) and not hasattr(data, "columns"):
        raise TypeError(f"data must be a mapping of column name -> values (or a DataFrame); "
                        f"got {type(data).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (str); got target={target!r:.60}")
    cols = []
    for name in [*axes, target]:
        try:
            col = data[name]
        except (KeyError, IndexError, ValueError) as exc:
            keys = list(data.keys()) if hasattr(data, "keys") else "?"
            raise ValueError(f"data has no column {name!r}; columns: {keys}") from exc
        cols.append(np.asarray(col))
    lengths = {c.shape for c in cols}
    if len(lengths) != 1 or cols[0].ndim != 1:
        raise ValueError(f"columns must be 1-d and of equal length; got shapes "
                         f"{[c.shape for c in cols]}")
    x = np.column_stack([check_real(f"data[{a!r}]", c, low=0.0, low_open=True)
                         for a, c in zip(axes, cols[:-1])])
    y = check_real(f"data[{target!r}]", cols[-1], low=0.0, low_open=True)
    return x, y


def _aggregate(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(x, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    sums = np.bincount(inverse, weights=y, minlength=len(uniq))
    counts = np.bincount(inverse, minlength=len(uniq))
    return uniq, sums / counts


# ---------------------------------------------------------------------------
# the verb
# ---------------------------------------------------------------------------

def _is_expression(law: Any) -> bool:
    """An ExpressionLaw, or a string that is not a family name but an expression."""
    from rlscale.theory._expr import ExpressionLaw

    return isinstance(law, ExpressionLaw) or (
        isinstance(law, str) and law not in LAWS and not law.isidentifier())


def fit_law(data: Any, law: str = "additive", axes: Sequence[str] | None = None,
            target: str = "loss", *, delta: float = 1e-3, reduction: str = "sum",
            starts: str | int = "auto", bootstrap: int = 0, confidence: float = 0.9,
            holdout: float = 0.1, replicates: str = "keep", seed: int = 0,
            n_jobs: int = -1, progress: bool = False,
            floor: tuple[float, float] | None = None,
            p_max: tuple[float, float] | None = None) -> FitResult:
    """Fit a scaling law to data with the Huber/L-BFGS-B method (approach 3).

    Parameters
    ----------
    data : mapping of column name -> 1-d array
        E.g. a dict of numpy arrays or a pandas DataFrame.  Extra columns are
        ignored.
    law : {"additive", "multiplicative", "pass_rate"}, expression string or ExpressionLaw
        The family.  ``"pass_rate"`` fits a success rate in ``(0, 1]`` through
        its loss ``1/p`` and returns a :class:`~rlscale.theory.PassRateLaw`.
        A law written as an expression (``"E + A/N**alpha"`` or a
        :class:`~rlscale.theory.ExpressionLaw`) is fitted by
        :func:`~rlscale.optimize.fit_expression` with the same objective and
        returns its :class:`~rlscale.optimize.ExpressionFit`.
    axes : sequence of str
        Columns that are the law's axes (strictly positive).
    target : str
        Column holding the loss (or the pass rate for ``law="pass_rate"``).
    delta : float
        Huber threshold on log residuals (``1e-3`` as published).
    reduction : {"sum", "mean"}
        ``"sum"`` as corrected by Besiroglu et al.; ``"mean"`` reproduces the
        original code's early stopping (for comparison only).
    starts : "auto", "grid" or int
        ``"grid"``: L-BFGS from every grid point (Hoffmann et al.'s grid;
        4,500 starts for two axes, 135,000 for three).  An integer ``m``: from
        the ``m`` grid points with the lowest objective.  ``"auto"`` (default):
        the full grid up to 5,000 points, else the best 1,000, and at most
        ``MAX_FIT_WORK / points`` (1e7 starts x points); more is refused.
        Memory is bounded: starts are evaluated in blocks of
        ``MAX_BATCH_CELLS`` (2e6) starts x points.
    bootstrap : int
        Number of bootstrap resamples for the intervals (0: none; use at
        least 1,000 for published intervals).
    confidence : float
        Level of the percentile intervals.
    holdout : float
        Fraction of the largest-scale points held out for the extrapolation
        error (at least one point; 0 disables).
    replicates : {"keep", "mean"}
        Rows sharing the same axis values (seeds) are kept as separate
        observations (default; the bootstrap then resamples rows), or
        replaced by their arithmetic mean target.
    seed : int
        Seed of the bootstrap's ``SeedSequence``; same seed, same intervals.
    n_jobs : int
        joblib workers for the bootstrap and for grids of 2,000 starts or more
        (-1: all cores; results do not depend on it).
    progress : bool
        Show a tqdm bar for the bootstrap on stderr.
    floor : (low, high), optional
        Bounds on the additive law's floor ``L_inf`` (``0 <= low <= high``;
        ``low = 0``/``high = inf`` leave a side open; ``low == high`` fixes
        it).  Pass what is known to be achievable -- e.g. ``1 −`` the optimal
        policy's success for a loss ``1 − success`` -- so the fitted floor
        cannot promise more than the optimum allows.
    p_max : (low, high), optional
        Bounds on a pass-rate law's ceiling ``p_max`` (``0 < low <= high <=
        1``), e.g. the optimal policy's success.

    Returns
    -------
    FitResult
        With :attr:`FitResult.warnings` (see :mod:`rlscale.optimize._diagnostics`).

    Raises
    ------
    ValueError
        Bad arguments, too few points, or a target whose direction
        contradicts the law (a rising success fitted with a falling law).

    Notes
    -----
    Search ranges.  Exponents are bounded below by 0 (a law falls, or is
    flat, in every axis) and not above; the starts cover ``α ∈ [0, 2]``
    (Hoffmann et al.'s grid), and an exponent the design cannot resolve --
    most of its term's decline between the axis's two smallest values, or
    fewer than three values -- is flagged ``exponent-unresolved`` rather than
    capped.  The log floor starts on ``[−1, 1]`` (clipped into ``floor``
    bounds), the log coefficients on ``[0, 25]``; a pass-rate law's floor of
    ``1/p`` is ``>= 1`` (``p_max <= 1``).

    Examples
    --------
    Noise-free points of a known law are recovered:

    >>> from rlscale.theory import AdditiveLaw
    >>> truth = AdditiveLaw(1.5, {"N": 400.0, "D": 1000.0}, {"N": 0.35, "D": 0.3})
    >>> N, D = np.meshgrid(np.logspace(7, 10, 6), np.logspace(9, 12, 6))
    >>> data = {"N": N.ravel(), "D": D.ravel(), "loss": truth(N=N.ravel(), D=D.ravel())}
    >>> fit = fit_law(data, axes=["N", "D"], starts=100)
    >>> {k: round(v, 3) for k, v in fit.params.items() if "exponent" in k or k == "floor"}
    {'floor': 1.5, 'exponent[N]': 0.35, 'exponent[D]': 0.3}
    >>> fit_law({"N": [1, 2], "loss": [3.0, 2.0]}, axes=["N"])
    Traceback (most recent call last):
    ...
    ValueError: fitting a 1-axis additive law needs at least 4 points (it has 3 parameters); got 2
    """
    start_time = time.perf_counter()
    if _is_expression(law):  # a law written as an expression: its own fitter
        from rlscale.optimize._fit_expr import fit_expression

        return fit_expression(law, data, axes=axes, target=target, delta=delta,
                              bootstrap=bootstrap, confidence=confidence, seed=seed,
                              holdout=holdout)
    if not isinstance(law, str) or law not in LAWS:
        raise ValueError(f"law must be one of {LAWS} or an expression law; got law={law!r}")
    if (axes is None or isinstance(axes, str) or not isinstance(axes, Sequence)
            or len(axes) == 0 or not all(isinstance(a, str) for a in axes)):
        raise ValueError(f"axes must be a non-empty list of column names; got axes={axes!r}")
    axes = tuple(axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes must be distinct; got {list(axes)}")
    _check_axes(axes)  # the fitted law needs identifiers; refuse before fitting
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1: all cores); "
                         f"got n_jobs={n_jobs!r}")
    if not isinstance(reduction, str) or reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean'; got reduction={reduction!r}")
    if not isinstance(replicates, str) or replicates not in ("keep", "mean"):
        raise ValueError(f"replicates must be 'keep' or 'mean'; got replicates={replicates!r}")
    # Log residuals beyond |r| = 1e3 are meaningless; a larger threshold only overflows δ².
    delta = check_scalar("delta", delta, low=0.0, low_open=True, high=1e3)
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                                  high_open=True)
    holdout = check_scalar("holdout", holdout, low=0.0, high=0.5)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=0)

    floor_bounds = _limit_bounds(law, floor, p_max)
    x, y = _columns(data, axes, target)
    if law == "pass_rate" and np.any(y > 1):
        bad = int(np.argmax(y > 1))
        raise ValueError(f"a pass rate must be in (0, 1]; got data[{target!r}]={y[bad]:g} "
                         f"at index {bad}")
    check_direction(x, y, law, target)
    y_min = float(y.min())
    if replicates == "mean":
        x, y = _aggregate(x, y)
    if law == "pass_rate":
        y = 1.0 / y
    family = "multiplicative" if law == "multiplicative" else "additive"
    logx, logy = np.log(x), np.log(y)
    obj = _Objective(family, logx, logy, delta, reduction)
    k = obj.n_params
    if logy.size <= k:
        raise ValueError(f"fitting a {len(axes)}-axis {law} law needs at least {k + 1} points "
                         f"(it has {k} parameters); got {logy.size}")
    bounds = obj.bounds(floor_at_least_one=(law == "pass_rate"))
    grid = obj.grid()
    if law == "pass_rate":
        grid = grid[grid[:, 0] >= 0]
    if floor_bounds is not None:
        bounds[0] = _log_floor_bounds(law, floor_bounds)
        lo_e = -np.inf if bounds[0][0] is None else bounds[0][0]
        hi_e = np.inf if bounds[0][1] is None else bounds[0][1]
        grid[:, 0] = np.clip(grid[:, 0], lo_e, hi_e)
        grid = np.unique(grid, axis=0)
    n_points = logy.size
    if starts == "auto":
        auto = len(grid) if len(grid) <= 5000 else 1000
        auto = max(1, min(auto, MAX_FIT_WORK // n_points))
        starts = "grid" if auto >= len(grid) else auto
    n_starts = len(grid) if starts == "grid" else check_positive_int("starts", starts)
    if n_starts * n_points > MAX_FIT_WORK:
        raise ValueError(
            f"starts x points = {min(n_starts, len(grid))} x {n_points} = "
            f"{min(n_starts, len(grid)) * n_points:.3g} exceeds the multistart limit "
            f"{MAX_FIT_WORK:.0e}: pass fewer starts (starts='auto' picks "
            f"{max(1, MAX_FIT_WORK // n_points)}) or average replicates (replicates='mean')")
    if bootstrap * n_points > 20 * MAX_FIT_WORK:
        raise ValueError(f"bootstrap x points = {bootstrap} x {n_points} exceeds "
                         f"{20 * MAX_FIT_WORK:.0e}: use fewer resamples or average replicates")
    if starts != "grid":
        m = n_starts
        # Rank the grid on at most MAX_FIT_WORK/len(grid) evenly spaced points: the
        # ranking only picks starting points; the fit itself uses every point.
        step = max(1, -(-len(grid) * n_points // MAX_FIT_WORK))
        ranker = obj if step == 1 else _Objective(family, logx[::step], logy[::step], delta,
                                                  reduction)
        vals = _grid_values(ranker, grid)
        grid = grid[np.argsort(vals, kind="stable")[:m]]
    # Stage 1: L-BFGS from every start, vectorised across starts (and split over
    # joblib workers when the grid is large).
    X, fvals, conv = _grid_stage(obj, grid, n_jobs)
    n_conv = int(conv.sum())
    # Stage 2: scipy's L-BFGS-B (with the bounds) from the best distinct end points.
    finite = np.flatnonzero(np.isfinite(fvals))
    cands: list[np.ndarray] = []
    for i in finite[np.argsort(fvals[finite], kind="stable")]:
        if all(np.max(np.abs(X[i] - c)) > 1e-3 for c in cands):
            cands.append(X[i])
        if len(cands) == 5:
            break
    if floor_bounds is not None:  # stage 1 is unbounded: project, and restart at the mid floor
        mid = 0.5 * (lo_e + hi_e) if np.isfinite(lo_e + hi_e) else (
            lo_e if np.isfinite(lo_e) else hi_e)
        projected = []
        for c in cands:
            projected.append(np.concatenate([[np.clip(c[0], lo_e, hi_e)], c[1:]]))
            projected.append(np.concatenate([[mid], c[1:]]))
        cands = projected
    results = _minimise(obj, np.array(cands), bounds)
    order = sorted(range(len(results)), key=lambda i: results[i][0])
    best_val, theta, _ = results[order[0]]

    pred = obj.predict(theta)
    resid = pred - logy
    rss = float(resid @ resid)
    n = logy.size
    tss = float(((logy - logy.mean()) ** 2).sum())
    ll_term = n * math.log(max(rss / n, 1e-300))
    fitted = _law_from_theta(law, theta, axes)
    params = _natural(law, theta, axes)

    # Warm starts for refits: the optimum plus the best distinct runner-ups.
    warm = [theta]
    for i in order[1:]:
        cand = results[i][1]
        if all(np.max(np.abs(cand - w)) > 1e-3 for w in warm):
            warm.append(cand)
        if len(warm) == 3:
            break
    warm_starts = np.array(warm)

    extrapolation = _extrapolate(obj, family, law, logx, logy, holdout, warm_starts, bounds,
                                 axes)

    intervals: dict[str, tuple[float, float]] = {}
    samples = None
    if bootstrap:
        samples = _run_bootstrap((family, logx, logy, delta, reduction), bootstrap, seed,
                                 warm_starts, bounds, n_jobs, progress)
        nat = np.array([list(_natural(law, s, axes).values()) for s in samples])
        lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2
        for j, name in enumerate(params):
            intervals[name] = (float(np.quantile(nat[:, j], lo_q)),
                               float(np.quantile(nat[:, j], hi_q)))
        samples = nat

    warnings = design_warnings(x, axes)
    warnings += fit_warnings(
        law=law, family=family, theta=theta, x=x, y_min=y_min, target=target, params=params,
        axes=axes, samples=samples, intervals=intervals, floor_bounds=floor_bounds,
        collinear=[a for w in warnings for a in w.axes])
    return FitResult(
        law=fitted, params=params, objective=best_val, n_points=n, n_params=k,
        r2=1.0 - rss / tss if tss > 0 else math.nan if rss > 0 else 1.0,
        rmse_log=math.sqrt(rss / n), aic=ll_term + 2 * k, bic=ll_term + k * math.log(n),
        residuals=resid, extrapolation=extrapolation, intervals=intervals,
        confidence=confidence, n_bootstrap=bootstrap, n_starts=len(grid),
        n_converged=n_conv, axes=axes, target=target, reduction=reduction, delta=delta,
        replicates=replicates, seconds=time.perf_counter() - start_time,
        bootstrap_samples=samples, warnings=tuple(warnings),
        data_range={a: (float(x[:, i].min()), float(x[:, i].max())) for i, a in enumerate(axes)},
        floor_bounds=floor_bounds)


def _limit_bounds(law: str, floor: Any, p_max: Any) -> tuple[float, float] | None:
    """Validate ``floor=(low, high)`` / ``p_max=(low, high)``; the pair for the law."""
    if floor is not None and p_max is not None:
        raise ValueError("pass floor= (additive laws) or p_max= (pass-rate laws), not both")
    if floor is not None and law != "additive":
        raise ValueError(f"floor=(low, high) bounds an additive law's floor; law={law!r} "
                         f"{'has p_max= instead' if law == 'pass_rate' else 'has no floor'}")
    if p_max is not None and law != "pass_rate":
        raise ValueError(f"p_max=(low, high) bounds a pass-rate law; got law={law!r}")
    name, pair = ("floor", floor) if floor is not None else ("p_max", p_max)
    if pair is None:
        return None
    if isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) != 2:
        raise ValueError(f"{name} must be a pair (low, high); got {name}={pair!r}")
    top = 1.0 if name == "p_max" else math.inf
    low = float(check_real(f"{name}[0]", pair[0], low=0.0, high=top,
                           low_open=(name == "p_max")))
    high = float(check_real(f"{name}[1]", pair[1], low=0.0, high=top, low_open=True,
                            allow_inf=(name == "floor")))
    if low > high:
        raise ValueError(f"{name} must have low <= high; got {name}=({low:g}, {high:g})")
    return (low, high)


def _log_floor_bounds(law: str, pair: tuple[float, float]) -> tuple[float | None, float | None]:
    """L-BFGS-B bounds on ``e = log`` of the loss floor (``1/p_max`` for pass rates)."""
    low, high = pair
    if law == "pass_rate":  # floor of 1/p is 1/p_max in [1/high, 1/low], and >= 1
        return (max(0.0, -math.log(high)), -math.log(low))
    return (math.log(low) if low > 0 else None, math.log(high) if math.isfinite(high) else None)


def _grid_stage(obj: _Objective, grid: np.ndarray, n_jobs: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from joblib import Parallel, delayed, effective_n_jobs

    # The chunking depends on the grid only, so results do not depend on n_jobs.
    chunks = np.array_split(grid, max(1, len(grid) // 2000))
    workers = min(effective_n_jobs(n_jobs), len(chunks))
    if workers <= 1:
        parts = [_batched_lbfgs(obj, chunk) for chunk in chunks]
    else:
        parts = Parallel(n_jobs=workers)(delayed(_batched_lbfgs)(obj, c) for c in chunks)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore


def _grid_values(obj: _Objective, grid: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Objective at every grid point, vectorised over starts (135,000 for three axes)."""
    out = np.empty(len(grid))
    for i in range(0, len(grid), chunk):
        out[i:i + chunk] = obj.batch(grid[i:i + chunk])[0]
    return out


def _extrapolate(obj: _Objective, family: str, law: str, logx: np.ndarray, logy: np.ndarray,
                 holdout: float, starts: np.ndarray, bounds: list,
                 axes: Sequence[str]) -> dict[str, Any]:
    n = logy.size
    n_out = max(1, round(holdout * n)) if holdout > 0 else 0
    if n_out == 0 or n - n_out <= obj.n_params:
        return {"n_holdout": 0, "note": "no hold-out (disabled or too few points)"}
    order = np.argsort(logx.sum(axis=1), kind="stable")
    train, test = order[:-n_out], order[-n_out:]
    sub = _Objective(family, logx[train], logy[train], obj.delta,
                     "sum" if obj.scale == 1.0 else "mean")
    best = min(_minimise(sub, starts, bounds), key=lambda t: t[0])
    pred = sub.predict(best[1], logx[test])
    rel = np.abs(np.expm1(pred - logy[test]))
    return {"n_holdout": int(n_out), "mean_abs_rel_error": float(rel.mean()),
            "max_abs_rel_error": float(rel.max()),
            "rmse_log": float(np.sqrt(np.mean((pred - logy[test]) ** 2))),
            "min_heldout_scale": float(np.exp(logx[test].sum(axis=1).min()))}


def _run_bootstrap(obj_args: tuple, n_boot: int, seed: int, starts: np.ndarray, bounds: list,
                   n_jobs: int, progress: bool) -> np.ndarray:
    from joblib import Parallel, delayed

    seeds = np.random.SeedSequence(seed).spawn(n_boot)
    n_chunks = min(n_boot, 64)
    chunks = [seeds[i::n_chunks] for i in range(n_chunks)]
    jobs = (delayed(_bootstrap_chunk)(obj_args, c, starts, bounds) for c in chunks)
    parts = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if progress:
        from tqdm import tqdm

        parts = tqdm(parts, total=n_chunks, desc="bootstrap", unit="chunk",
                     file=sys.stderr)
    results = list(parts)
    out = np.empty((n_boot, starts.shape[1]))
    for i, part in enumerate(results):
        out[i::n_chunks] = part
    return out
