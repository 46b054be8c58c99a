"""Fitting Gao et al.'s reward-overoptimisation forms and their peak.

Gao, Schulman & Hilton 2022 (arXiv 2210.10760): gold = α·d − β·d² (best of n)
or α·d − β·d·log d (RL), d = √KL — linear in (α, β), so ordinary least squares
(no intercept: both forms vanish at d = 0), solved exactly (the fitting
engine's problem with a linear model has this closed form; no iteration is
needed); peaks from :func:`rlscale.theory.gao_peak`, intervals by the percentile
bootstrap, identification diagnostics (:mod:`rlscale.optimize._fit_identify`)
in ``warnings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning
from rlscale.optimize._outcome import from_lstsq
from rlscale.optimize._rl_fit import _gen, _interval, _level
from rlscale.theory._result import Result
from rlscale.theory._rl_forms import GaoPeak, gao_peak
from rlscale.theory._validation import check_positive_int, check_real

__all__ = ["GaoFit", "fit_gao"]

_FORMS = {"bon": "d(α − βd)", "rl": "d(α − β log d)"}


@dataclass(frozen=True)
class GaoFit(Result):
    """Fitted Gao et al. form with its peak; intervals from the percentile bootstrap.

    ``success``, ``status`` and ``message``: the result convention of
    :mod:`rlscale.optimize._outcome` for the linear least-squares solve
    (``"exact"`` at full rank 2).
    """

    kind: str
    alpha: float
    beta: float
    alpha_interval: tuple[float, float] | None
    beta_interval: tuple[float, float] | None
    peak: GaoPeak | None
    peak_kl_interval: tuple[float, float] | None
    peak_gain_interval: tuple[float, float] | None
    rmse: float
    n_points: int
    success: bool = True
    status: str = "exact"
    message: str = ""
    warnings: tuple[FitWarning, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["peak"] = None if self.peak is None else self.peak.as_dict()
        out["warnings"] = [w.as_dict() for w in self.warnings]
        return out


def _gao_design(kind: str, kl: np.ndarray) -> np.ndarray:
    d = np.sqrt(kl)
    if kind == "bon":
        return np.stack([d, -d * d], axis=-1)
    if kind == "rl":
        return np.stack([d, -d * np.log(np.where(d > 0, d, 1.0))], axis=-1)
    raise ValueError(f"kind must be 'bon' or 'rl'; got kind={kind!r}")


#: kl <= 1e50 and |gold| <= 1e100: the normal equations square √KL twice.
KL_LIMIT, GOLD_LIMIT = 1e50, 1e100
#: Bootstrap resamples at most for fit_gao (closed-form refits, in blocks).
MAX_GAO_BOOTSTRAP = 10**5


def _gao_draws(X: np.ndarray, y: np.ndarray, n_boot: int, gen: np.random.Generator
               ) -> np.ndarray:
    """(α, β) of each bootstrap resample whose normal equations are not singular.

    Resamples are drawn in blocks of at most 1e6 indices, so memory stays bounded."""
    n = y.size
    block = max(1, 10**6 // n)
    out = []
    for lo in range(0, n_boot, block):
        idx = gen.integers(0, n, (min(block, n_boot - lo), n))
        Xb, yb = X[idx], y[idx]                                   # (b, n, 2), (b, n)
        xtx = np.einsum("bni,bnj->bij", Xb, Xb)
        xty = np.einsum("bni,bn->bi", Xb, yb)
        det = xtx[:, 0, 0] * xtx[:, 1, 1] - xtx[:, 0, 1] * xtx[:, 1, 0]
        ok = np.abs(det) > 1e-12 * xtx[:, 0, 0] * xtx[:, 1, 1]
        # Cramer's rule on the 2x2 normal equations of each resample.
        a = (xtx[ok, 1, 1] * xty[ok, 0] - xtx[ok, 0, 1] * xty[ok, 1]) / det[ok]
        b = (xtx[ok, 0, 0] * xty[ok, 1] - xtx[ok, 1, 0] * xty[ok, 0]) / det[ok]
        out.append(np.column_stack([a, b]))
    return np.concatenate(out)


def _log_peaks(kind: str, alpha: np.ndarray, beta: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """log KL* and log gold* per draw; +inf where a draw has no finite peak.

    best of n: d* = α/(2β), gold* = α²/(4β) (α, β > 0); RL: d* = exp(α/β − 1),
    gold* = β·d* (β > 0) — :func:`rlscale.theory.gao_peak` written in logs.
    """
    log_kl = np.full(alpha.shape, np.inf)
    log_gain = np.full(alpha.shape, np.inf)
    if kind == "bon":
        ok = (alpha > 0) & (beta > 0)
        log_d = np.log(alpha[ok]) - np.log(2.0 * beta[ok])
        log_gain[ok] = 2.0 * np.log(alpha[ok]) - np.log(4.0 * beta[ok])
    else:
        ok = beta > 0
        log_d = alpha[ok] / beta[ok] - 1.0
        log_gain[ok] = np.log(beta[ok]) + log_d
    log_kl[ok] = 2.0 * log_d
    return log_kl, log_gain


def _interval_or_inf(log_draws: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval (linear interpolation, as :func:`numpy.quantile`) of
    ``exp(log_draws)``; an end is ``inf`` where it falls among the draws without a
    finite peak (log ``inf``, or past float64)."""
    v = np.sort(log_draws)
    tail = (1.0 - level) / 2.0
    ends = []
    for q in (tail, 1.0 - tail):
        pos = q * (v.size - 1)
        lo, hi = int(np.floor(pos)), int(np.ceil(pos))
        if v[hi] > 709.0:
            ends.append(math.inf)
            continue
        a, b = math.exp(v[lo]), math.exp(v[hi])
        ends.append(a + (b - a) * (pos - lo))
    return ends[0], ends[1]


def fit_gao(kl: Any, gold: Any, kind: str = "bon", *, bootstrap: int = 200,
            confidence: float = 0.95, rng: Any = 0) -> GaoFit:
    """Fit gold = d(α − βd) (``bon``) or d(α − β log d) (``rl``), d = √KL; derive the peak.

    Parameters
    ----------
    kl, gold : array_like
        At least 3 points, kl in [0, 1e50] with two or more distinct positive
        values, ``abs(gold) <= 1e100``.
    kind : {"bon", "rl"}
    bootstrap, confidence, rng
        Resamples of the points (0: no intervals; at most 1e5), level, seed
        (an integer >= 0 or a Generator).

    Returns
    -------
    GaoFit
        ``peak`` is ``None`` where the fitted form has no finite peak (β <= 0,
        α <= 0 for best of n, or a peak beyond float64).  The upper end of
        ``peak_kl_interval``/``peak_gain_interval`` is ``inf`` when more than the
        upper tail of the resamples has no finite peak (the peak is not bounded
        above at that confidence), and both ends are when most have none.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.theory.reward import gao_bon
    >>> kl = np.linspace(0.1, 30, 40)
    >>> gold = gao_bon(kl, 0.913, 0.122) + np.random.default_rng(0).normal(0, 0.01, 40)
    >>> fit = fit_gao(kl, gold, "bon", bootstrap=200)
    >>> lo, hi = fit.peak_kl_interval
    >>> lo <= (0.913 / (2 * 0.122)) ** 2 <= hi
    True
    """
    if not isinstance(kind, str) or kind not in ("bon", "rl"):
        raise ValueError(f"kind must be 'bon' or 'rl'; got kind={kind!r:.60}")
    x = check_real("kl", kl, low=0.0, high=KL_LIMIT).ravel()
    y = check_real("gold", gold, low=-GOLD_LIMIT, high=GOLD_LIMIT).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"kl and gold must be equal-length with at least 3 points; got "
                         f"{x.size} and {y.size}")
    if np.unique(x[x > 0]).size < 2:
        raise ValueError("kl needs two or more distinct positive values: the two terms of "
                         f"the form are not identified otherwise; got kl={x.tolist()!r:.80}")
    X = _gao_design(kind, x)
    n_boot = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=MAX_GAO_BOOTSTRAP)
    level = _level(confidence)
    gen = _gen(rng)
    coef, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    ok, status, message = from_lstsq(int(rank), 2, f"gold = {_FORMS[kind]}")
    alpha, beta = float(coef[0]), float(coef[1])
    rmse = float(np.sqrt(np.mean((X @ coef - y) ** 2)))
    peak = None
    if beta > 0 and (kind == "rl" or alpha > 0):
        try:
            peak = gao_peak(kind, alpha, beta)
        except ValueError:  # the peak lies beyond float64: no finite peak
            peak = None
    a_int = b_int = kl_int = g_int = None
    warnings: list[FitWarning] = []
    if n_boot:
        from rlscale.optimize._fit_identify import interval_warnings, local_covariance

        draws = _gao_draws(X, y, n_boot, gen)
        if draws.shape[0] < max(2, n_boot // 2):
            raise ValueError(f"only {draws.shape[0]} of bootstrap={n_boot} resamples of kl "
                             "had two distinct positive values (the form is not identified "
                             "in the others); add points at more kl values")
        a_int, b_int = _interval(draws[:, 0], level), _interval(draws[:, 1], level)
        cov = local_covariance(X, X @ coef - y, 2)
        se = None if cov is None else np.sqrt(np.abs(np.diag(cov)))
        warnings = interval_warnings(["alpha", "beta"], {"alpha": alpha, "beta": beta},
                                     {"alpha": a_int, "beta": b_int}, samples=draws, se=se,
                                     confidence=level)
        if peak is not None:
            log_kl, log_gain = _log_peaks(kind, draws[:, 0], draws[:, 1])
            kl_int = _interval_or_inf(log_kl, level)
            g_int = _interval_or_inf(log_gain, level)
    return GaoFit(kind=kind, alpha=alpha, beta=beta, alpha_interval=a_int, beta_interval=b_int,
                  peak=peak, peak_kl_interval=kl_int, peak_gain_interval=g_int, rmse=rmse,
                  n_points=int(x.size), success=ok, status=status, message=message,
                  warnings=tuple(warnings))
