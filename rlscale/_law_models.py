"""Law models, fits and model comparison shared by the reward-law verifications.

Used by :mod:`rlscale._reward_verification` (the Gaussian selection model) and
:mod:`rlscale._trainer_reward_law` (the RL trainer), so both compare the same
candidates the same way:

* the law ``a sqrt(min(log M + b, c K))`` and its smooth-min variant
  ``a ((log M + b)^{-p} + (c K)^{-p})^{-1/(2p)}`` (least squares, several starts);
* against ``a sqrt K``, ``a sqrt(log M + b)``, Gao et al.'s (2023) best-of-n
  ``d (α − β d)`` and RL ``d (α − β log d)`` forms with ``d = sqrt(KL)``
  (coefficients per ``M``, as Gao et al. fit them per reward-model size) and a
  free power law ``a M^p K^q``;
* fitted by least squares with analytic Jacobians (:func:`_jac_min`,
  :func:`_jac_smooth`: the chain rule on the formulas below, checked against
  finite differences in the tests), which costs a fraction of scipy's
  finite-difference Jacobian (three extra evaluations and their overhead per
  iteration) on the trainer's thousands of bootstrap refits;
* scored by held-out R² (:func:`fit_law_group`), AIC/BIC on all points
  (Gaussian likelihood, ``n log(RSS/n) + 2k`` and ``+ k log n``) and
  leave-one-regime-out RMSE over ``K < log M/2``, crossover, ``K > 2 log M``
  (:func:`compare_models`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np


def _law_min(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    a, b, c = np.exp(p[0]), p[1], np.exp(p[2])
    return a * np.sqrt(np.maximum(np.minimum(lm + b, c * k), 0.0))


def _law_smooth(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    # q = e^p3 clamped to [e^-50, e^700]: a solver stepping p3 to -inf would divide by 0.
    a, b, q = np.exp(p[0]), p[1], np.exp(np.clip(p[3], -50.0, 700.0))
    u = np.maximum(lm + b, 1e-12)
    log_v = p[2] + np.log(np.maximum(k, 1e-300))  # log(cK) without overflowing cK
    # (u^-q + v^-q)^(-1/q) in log space so large q (a sharp min) cannot overflow.
    lse = np.logaddexp(-q * np.log(u), -q * log_v)
    return a * np.exp(-lse / (2.0 * q))


def _jac_min(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """∂/∂(log a, b, log c) of :func:`_law_min` (a subgradient at the kink ``lm + b = cK``).

    With ``u = min(lm + b, cK) > 0`` and ``f = a√u``: ``∂f/∂log a = f``,
    ``∂f/∂b = a/(2√u)`` where ``lm + b <= cK``, ``∂f/∂log c = a·cK/(2√u)``
    where ``cK < lm + b``; zero where ``u <= 0`` (the clamp is flat).
    """
    a, b, c = np.exp(p[0]), p[1], np.exp(p[2])
    u1, u2 = lm + b, c * k
    u = np.minimum(u1, u2)
    pos = u > 1e-300
    root = np.sqrt(np.where(pos, u, 1.0))
    half = np.where(pos, a / (2.0 * root), 0.0)
    first = u1 <= u2
    return np.column_stack([np.where(pos, a * root, 0.0), np.where(first, half, 0.0),
                            np.where(first, 0.0, half * u2)])


def _jac_smooth(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """∂/∂(log a, b, log c, log q) of :func:`_law_smooth`.

    ``log f = log a − lse/(2q)``, ``lse = log(u^−q + v^−q)``, ``v = cK``; with the
    weights ``w_u = u^−q/e^lse``, ``w_v = v^−q/e^lse``: ``∂ log f/∂b = w_u/(2u)``
    (zero where ``u`` is clamped), ``∂ log f/∂log c = w_v/2`` and
    ``∂ log f/∂log q = (w_u log u + w_v log v)/2 + lse/(2q)`` (zero where ``q`` is
    clamped to ``[e^−50, e^700]``).
    """
    q = np.exp(np.clip(p[3], -50.0, 700.0))
    raw = lm + p[1]
    u = np.maximum(raw, 1e-12)
    log_u = np.log(u)
    log_v = p[2] + np.log(np.maximum(k, 1e-300))
    lse = np.logaddexp(-q * log_u, -q * log_v)
    w_u, w_v = np.exp(-q * log_u - lse), np.exp(-q * log_v - lse)
    f = np.exp(p[0]) * np.exp(-lse / (2.0 * q))
    d_b = np.where(raw > 1e-12, w_u / (2.0 * u), 0.0)
    d_q = ((w_u * log_u + w_v * log_v) / 2.0 + lse / (2.0 * q) if -50.0 < p[3] < 700.0
           else 0.0 * f)
    return f[:, None] * np.column_stack([np.ones_like(f), d_b, w_v / 2.0, d_q])


def _sqrt_logm(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.exp(p[0]) * np.sqrt(np.maximum(lm + p[1], 0.0))


def _jac_sqrt_logm(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """∂/∂(log a, b) of ``a√(lm + b)``: ``f`` and ``a/(2√(lm + b))`` (zero where clamped)."""
    u = lm + p[1]
    pos = u > 1e-300
    root = np.sqrt(np.where(pos, u, 1.0))
    a = np.exp(p[0])
    return np.column_stack([np.where(pos, a * root, 0.0), np.where(pos, a / (2 * root), 0.0)])


#: Analytic Jacobians of the fitted forms (``_least_squares`` falls back to finite differences).
_JACOBIANS = {_law_min: _jac_min, _law_smooth: _jac_smooth, _sqrt_logm: _jac_sqrt_logm}


@dataclass(frozen=True)
class _Model:
    name: str
    formula: str
    n_params: Callable[[int], int]  # given the number of distinct M
    fit: Callable[[np.ndarray, np.ndarray, np.ndarray], Callable[..., np.ndarray]]


_EFFORT = {"max_nfev": 4000}


@contextmanager
def fit_effort(max_nfev: int):
    """Cap the function evaluations of every least-squares fit inside the block.

    The trainer's grids include degenerate groups (a law whose cap is not
    identified, so ``b, c`` drift to infinity); a smaller cap keeps them cheap.
    """
    old = _EFFORT["max_nfev"]
    _EFFORT["max_nfev"] = int(max_nfev)
    try:
        yield
    finally:
        _EFFORT["max_nfev"] = old


def _least_squares(fn, p0, lm, k, g) -> np.ndarray:
    from scipy.optimize import least_squares

    best = None
    jf = _JACOBIANS.get(fn)
    jac = "2-point" if jf is None else (lambda p: jf(p, lm, k))
    for start in p0:
        res = least_squares(lambda p: fn(p, lm, k) - g, np.asarray(start, float), jac=jac,
                            method="trf", max_nfev=_EFFORT["max_nfev"])
        if best is None or res.cost < best.cost:
            best = res
    return best.x


def _fit_min(lm, k, g):
    p = _least_squares(_law_min, [(0.0, 0.0, 0.0), (0.3, -1.0, 0.5), (-0.3, 1.0, -0.5)],
                       lm, k, g)

    def predict(lm2, k2, _m=None):
        return _law_min(p, lm2, k2)

    predict.params = p
    return predict


def _fit_smooth(lm, k, g):
    p = _least_squares(_law_smooth, [(0.0, 0.0, 0.0, 1.0), (0.3, -1.0, 0.5, 0.0),
                                     (0.0, 0.5, 0.0, 2.0)], lm, k, g)
    return lambda lm2, k2, _m=None: _law_smooth(p, lm2, k2)


def _fit_sqrt_k(lm, k, g):
    a = np.dot(np.sqrt(k), g) / np.dot(k, np.ones_like(k))
    return lambda lm2, k2, _m=None: a * np.sqrt(k2)


def _fit_sqrt_logm(lm, k, g):
    p = _least_squares(_sqrt_logm, [(0.0, 0.0), (0.5, -1.0)], lm, k, g)
    return lambda lm2, k2, _m=None: _sqrt_logm(p, lm2, k2)


def _fit_power(lm, k, g):
    ok = g > 0
    x = np.column_stack([np.ones(ok.sum()), lm[ok], np.log(k[ok])])
    coef, *_ = np.linalg.lstsq(x, np.log(g[ok]), rcond=None)
    return lambda lm2, k2, _m=None: np.exp(coef[0] + coef[1] * lm2 + coef[2] * np.log(k2))


def _gao(kind: str):
    def basis(k):
        d = np.sqrt(k)
        return np.column_stack([d, -d * d if kind == "bon" else -d * np.log(d)])

    def fit(lm, k, g):
        coefs = {}
        for key in np.unique(lm):
            sel = lm == key
            if sel.sum() >= 2:
                coefs[key] = np.linalg.lstsq(basis(k[sel]), g[sel], rcond=None)[0]

        def predict(lm2, k2, _m=None):
            out = np.full(lm2.shape, np.nan)
            for key, c in coefs.items():
                sel = lm2 == key
                if sel.any():
                    out[sel] = basis(k2[sel]) @ c
            return out

        return predict

    return fit


_MODELS = (
    _Model("law_min", "a*sqrt(min(log M + b, c*K))", lambda nm: 3, _fit_min),
    _Model("law_smooth_min", "a*((log M + b)^-p + (c*K)^-p)^(-1/(2p))", lambda nm: 4,
           _fit_smooth),
    _Model("sqrt_K", "a*sqrt(K)", lambda nm: 1, _fit_sqrt_k),
    _Model("sqrt_log_M", "a*sqrt(log M + b)", lambda nm: 2, _fit_sqrt_logm),
    _Model("gao_bon_per_M", "d*(alpha_M - beta_M*d), d = sqrt(K)", lambda nm: 2 * nm,
           _gao("bon")),
    _Model("gao_rl_per_M", "d*(alpha_M - beta_M*log d), d = sqrt(K)", lambda nm: 2 * nm,
           _gao("rl")),
    _Model("power_law", "a*M^p*K^q", lambda nm: 3, _fit_power),
)


def _r2(y: np.ndarray, yhat: np.ndarray) -> float | None:
    """Held-out R²; ``None`` (JSON null) where it is undefined: constant ``y``."""
    ok = np.isfinite(yhat)
    y, yhat = y[ok], yhat[ok]
    ss_tot = float(np.sum((y - y.mean()) ** 2)) if y.size else 0.0
    return float(1.0 - np.sum((y - yhat) ** 2) / ss_tot) if ss_tot > 0 else None


def _regime(lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.where(k < 0.5 * lm, "kl_limited", np.where(k > 2.0 * lm, "data_limited",
                                                          "crossover"))


def fit_law_group(lm: np.ndarray, k: np.ndarray, g: np.ndarray, train: np.ndarray,
                  ) -> tuple[dict[str, Any], np.ndarray]:
    """Fit the law (min and smooth-min) on ``train``; held-out R² on the rest.

    Returns the row (``r2_min, r2_smooth, a, b, c, n_train, n_test``) and the
    min-law's prediction at every point.
    """
    test = ~train
    f_min = _fit_min(lm[train], k[train], g[train])
    f_smooth = _fit_smooth(lm[train], k[train], g[train])
    p_min = f_min.params
    row = {
        "r2_min": _r2(g[test], f_min(lm[test], k[test])),
        "r2_smooth": _r2(g[test], f_smooth(lm[test], k[test])),
        "a": float(np.exp(p_min[0])), "b": float(p_min[1]), "c": float(np.exp(p_min[2])),
        "n_train": int(train.sum()), "n_test": int(test.sum()),
    }
    return row, f_min(lm, k)


def new_totals() -> dict[str, dict[str, Any]]:
    """Accumulators for :func:`compare_models` (one per model)."""
    return {m.name: {"rss": 0.0, "n": 0, "k": 0, "loro": []} for m in _MODELS}


def compare_models(lm: np.ndarray, k: np.ndarray, g: np.ndarray, reg: np.ndarray,
                   totals: dict[str, dict[str, Any]],
                   fitted: dict[str, Callable[..., np.ndarray]] | None = None) -> None:
    """Fit every model to one group on all its points; add RSS, size and LORO errors.

    ``fitted`` maps a model name to its fit on these same points, made by the caller
    (the trainer's verification fits the law on all points anyway): it is used
    instead of fitting again, which gives the same numbers (the fits are deterministic).
    """
    n_m = np.unique(lm).size
    fitted = fitted or {}
    for model in _MODELS:
        fit_all = fitted.get(model.name) or model.fit(lm, k, g)
        pred = fit_all(lm, k)
        ok = np.isfinite(pred)
        t = totals[model.name]
        t["rss"] += float(np.sum((g[ok] - pred[ok]) ** 2))
        t["n"] += int(ok.sum())
        t["k"] += model.n_params(n_m)
        for held in ("kl_limited", "crossover", "data_limited"):
            tr, te = reg != held, reg == held
            if tr.sum() < 4 or te.sum() == 0:
                continue
            pr = model.fit(lm[tr], k[tr], g[tr])(lm[te], k[te])
            okp = np.isfinite(pr)
            if okp.any():
                t["loro"].append(float(np.sqrt(np.mean((g[te][okp] - pr[okp]) ** 2))))


def finish_comparison(totals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """AIC, BIC and mean LORO RMSE per model from :func:`compare_models` totals."""
    comparison = []
    for model in _MODELS:
        t = totals[model.name]
        n, rss = max(t["n"], 1), max(t["rss"], 1e-300)
        comparison.append({
            "model": model.name, "formula": model.formula, "params": t["k"],
            "aic": n * math.log(rss / n) + 2 * t["k"],
            "bic": n * math.log(rss / n) + t["k"] * math.log(n),
            "loro_rmse": float(np.mean(t["loro"])) if t["loro"] else float("nan"),
            "rss": rss, "points": t["n"],
        })
    return comparison
