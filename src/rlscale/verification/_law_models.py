"""Law models, fits and model comparison shared by the reward-law verifications.

Used by :mod:`rlscale.verification._gaussian_reward_law` (the Gaussian selection model) and
:mod:`rlscale.verification._trainer_reward_law` (the RL trainer), so both compare the same
candidates the same way:

* the law ``a sqrt(min(log M + b, c K))`` and its smooth-min variant
  ``a ((log M + b)^{-p} + (c K)^{-p})^{-1/(2p)}`` (least squares, the three
  starts of :data:`rlscale.verification._law_forms.STARTS` each plus, for the min law, the
  best point of a profile grid and, for the smooth min, the min law's fit);
* against ``a sqrt K``, ``a sqrt(log M + b)`` (two starts and the best point of a
  profile grid over ``b``), Gao et al.'s (2023) best-of-n ``d (α − β d)`` and
  RL ``d (α − β log d)`` forms with ``d = sqrt(KL)`` (coefficients per ``M``, as
  Gao et al. fit them per reward-model size) and a free power law ``a M^p K^q``;
* fitted by least squares with analytic Jacobians (:mod:`rlscale.verification._law_forms`)
  and, for the groups that share a design, *one batched call per law form*
  (:func:`fit_groups`): every start × {the train split, all points, each
  leave-one-regime-out subset} of every group is a row of one trust-region
  Levenberg–Marquardt solve (:mod:`rlscale.verification._law_solver`,
  :mod:`rlscale.verification._law_fits`), where the verifications used to call scipy's
  ``least_squares`` once per start and subset (about a thousand calls in the
  trainer's ``quick`` run).  Measured side by side here (2 cores, load 3–7,
  medians of 3–5 alternated runs): the trainer's group fits 7.2 → 1.2 CPU s
  (6×), the Gaussian verification's ``_fit_all`` 0.86–0.95 → 0.33–0.36 CPU s
  (2.4–2.6×; ``python -m benchmarks law_fits``);
* scored by held-out R² (:func:`fit_law_group`), AIC/BIC on all points
  (Gaussian likelihood, ``n log(RSS/n) + 2k`` and ``+ k log n``) and
  leave-one-regime-out RMSE over ``K < log M/2``, crossover, ``K > 2 log M``
  (:func:`compare_models`);
* with the min law's identification (:func:`rlscale.verification._law_fits.min_law_closure`):
  whether ``a, b, c`` are identified on the fitted points or the best fit is
  one of the law's families at infinity (``c → ∞`` or ``b → ∞``), whose
  predictions then stand for the law's (R², RSS, LORO errors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.verification._law_fits import (
    REASONS,
    MinLawFit,
    fit_form,
    identified,
    min_law_closure,
    profile_start,
)
from rlscale.verification._law_forms import (  # noqa: F401  (the one-row forms, re-exported for tests)
    STARTS,
    _jac_min,
    _jac_smooth,
    _jac_sqrt_logm,
    _law_min,
    _law_smooth,
    _sqrt_logm,
)

REGIMES = ("kl_limited", "crossover", "data_limited")


@dataclass(frozen=True)
class _Model:
    name: str
    formula: str
    n_params: Callable[[int], int]  # given the number of distinct M
    fit: Callable[[np.ndarray, np.ndarray, np.ndarray], Callable[..., np.ndarray]] | None
    form: str | None = None  # the batched least-squares form, for the fitted laws


def _fit_sqrt_k(lm, k, g):
    a = np.dot(np.sqrt(k), g) / np.dot(k, np.ones_like(k))
    return lambda lm2, k2, _m=None: a * np.sqrt(k2)


def _fit_power(lm, k, g):
    ok = g > 0
    x = np.column_stack([np.ones(ok.sum()), lm[ok], np.log(k[ok])])
    coef, *_ = np.linalg.lstsq(x, np.log(g[ok]), rcond=None)
    return lambda lm2, k2, _m=None: np.exp(coef[0] + coef[1] * lm2 + coef[2] * np.log(k2))


def _gao(kind: str):
    """Gao et al.'s form ``d (α − β d)`` (``bon``) or ``d (α − β log d)`` (``rl``),
    ``d = √K``, with ``α, β`` per ``M`` by linear least squares (the 2×2 normal
    equations of every ``M`` at once; ``numpy.linalg.lstsq`` where they are
    singular).  An ``M`` with fewer than two points has no fit (NaN predictions)."""
    def basis(k):
        d = np.sqrt(k)
        return np.column_stack([d, -d * d if kind == "bon" else -d * np.log(d)])

    def fit(lm, k, g):
        keys, inv = np.unique(lm, return_inverse=True)
        X = basis(k)
        n = len(keys)
        sums = [np.bincount(inv, w, minlength=n) for w in (X[:, 0] ** 2, X[:, 0] * X[:, 1],
                                                            X[:, 1] ** 2, X[:, 0] * g,
                                                            X[:, 1] * g)]
        s11, s12, s22, t1, t2 = sums
        det = s11 * s22 - s12 * s12
        count = np.bincount(inv, minlength=n)
        coefs = {}
        for j, key in enumerate(keys):
            if count[j] < 2:
                continue
            if abs(det[j]) > 1e-12 * s11[j] * s22[j]:
                coefs[key] = np.array([(s22[j] * t1[j] - s12[j] * t2[j]) / det[j],
                                       (s11[j] * t2[j] - s12[j] * t1[j]) / det[j]])
            else:
                sel = inv == j
                coefs[key] = np.linalg.lstsq(X[sel], g[sel], rcond=None)[0]

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
    _Model("law_min", "a*sqrt(min(log M + b, c*K))", lambda nm: 3, None, "min"),
    _Model("law_smooth_min", "a*((log M + b)^-p + (c*K)^-p)^(-1/(2p))", lambda nm: 4, None,
           "smooth"),
    _Model("sqrt_K", "a*sqrt(K)", lambda nm: 1, _fit_sqrt_k),
    _Model("sqrt_log_M", "a*sqrt(log M + b)", lambda nm: 2, None, "sqrt_logm"),
    _Model("gao_bon_per_M", "d*(alpha_M - beta_M*d), d = sqrt(K)", lambda nm: 2 * nm,
           _gao("bon")),
    _Model("gao_rl_per_M", "d*(alpha_M - beta_M*log d), d = sqrt(K)", lambda nm: 2 * nm,
           _gao("rl")),
    _Model("power_law", "a*M^p*K^q", lambda nm: 3, _fit_power),
)
_PREDICT = {"min": _law_min, "smooth": _law_smooth, "sqrt_logm": _sqrt_logm}


def _r2(y: np.ndarray, yhat: np.ndarray) -> float | None:
    """Held-out R²; ``None`` (JSON null) where it is undefined: constant ``y``."""
    ok = np.isfinite(yhat)
    y, yhat = y[ok], yhat[ok]
    ss_tot = float(np.sum((y - y.mean()) ** 2)) if y.size else 0.0
    return float(1.0 - np.sum((y - yhat) ** 2) / ss_tot) if ss_tot > 0 else None


def _regime(lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.where(k < 0.5 * lm, "kl_limited", np.where(k > 2.0 * lm, "data_limited",
                                                          "crossover"))


@dataclass(frozen=True)
class GroupFit:
    """Every least-squares fit of one group (one design, one target vector).

    ``fits[form][subset]`` is the best end point's parameter vector of form
    ``"min"``, ``"smooth"`` or ``"sqrt_logm"``, ``status`` the solver's code;
    subsets are ``"train"``, ``"all"`` and the held-out regime of each
    leave-one-regime-out fit.  ``verdicts[subset]`` says whether the min law
    is identified there (:data:`rlscale.verification._law_fits.VERDICTS`), and
    ``predictor("min", subset)`` predicts with the law's best fit, its limit
    where the best fit is at infinity.
    """

    fits: dict[str, dict[str, np.ndarray]]
    status: dict[str, dict[str, int]]
    verdicts: dict[str, str]
    law: MinLawFit = field(repr=False)
    rows: dict[str, int] = field(repr=False)

    def predictor(self, form: str, subset: str) -> Callable[..., np.ndarray]:
        d = self.rows[subset]
        if form == "min":
            return lambda lm2, k2, _m=None: self.law.predict(d, lm2, k2)
        if form == "sqrt_logm" and self.status[form][subset] == 5 and (
                self.law.const_cost[d] < self.law.logm.cost[d]):  # ran off to its constant
            return lambda lm2, k2, _m=None: np.full(np.shape(k2), self.law.const[d])
        p, fn = self.fits[form][subset], _PREDICT[form]
        return lambda lm2, k2, _m=None: fn(p, lm2, k2)


def fit_groups(lm: np.ndarray, k: np.ndarray, G: np.ndarray, train: np.ndarray,
               reg: np.ndarray | None = None, *, max_nfev: int = 4000) -> list[GroupFit]:
    """All least-squares fits of groups sharing one design, one batched solve per law form.

    ``G`` ``(D, n)``: each group's targets; ``train`` ``(D, n)``: its train split.
    Per group, the min law from its three starts and a profile-grid start, the
    smooth min from its three starts and the min law's fit (with ``q = e²``),
    ``a√(log M + b)`` from its two starts and a profile-grid start (the starts:
    :func:`rlscale.verification._law_fits.profile_start`; where it runs off, ``b → ∞``, its
    limit, a constant, predicts for it), on the train split, on all points
    and, with the regimes ``reg``, leaving out each regime that has points while
    at least 4 remain; the min law's limits and identification on each subset
    (:func:`rlscale.verification._law_fits.min_law_closure` with its likelihood-ratio test:
    a fit is identified only where it rejects the law's limits at 95 %).

    Examples
    --------
    >>> lm = np.repeat(np.log([10.0, 1e2, 1e3, 1e4]), 5)
    >>> k = np.tile([0.1, 0.5, 2.0, 8.0, 30.0], 4)
    >>> g = _law_min(np.array([0.1, -1.0, np.log(0.8)]), lm, k)
    >>> fit, = fit_groups(lm, k, g[None, :], (np.arange(20) % 3 > 0)[None, :], _regime(lm, k))
    >>> sorted(fit.fits["min"]), fit.verdicts["all"], fit.verdicts["train"]
    (['all', 'crossover', 'data_limited', 'kl_limited', 'train'], 'interior', 'interior')
    >>> np.round(fit.fits["min"]["all"], 6).tolist()
    [0.1, -1.0, -0.223144]
    """
    G = np.atleast_2d(np.asarray(G, np.float64))
    train = np.atleast_2d(np.asarray(train, bool))
    D = len(G)
    if not np.all(np.isfinite(G)):  # every point is fitted in the "all" subset
        d, j = (int(i[0]) for i in np.nonzero(~np.isfinite(G)))
        raise ValueError(f"G must be finite; got {G[d, j]} in group {d}, point {j}")
    shared = {"all": np.ones(lm.size, bool)}
    if reg is not None:
        for held in REGIMES:
            tr, te = reg != held, reg == held
            if tr.sum() >= 4 and te.sum() > 0:
                shared[held] = tr
    names = ["train", *shared]
    S = len(names)
    W = np.stack([m for d in range(D) for m in (train[d], *shared.values())]).astype(float)
    Y = np.repeat(G, S, axis=0)
    R = D * S
    starts = np.concatenate([np.broadcast_to(STARTS["min"], (R, 3, 3)),
                             profile_start("min", lm, k, Y, W)[:, None, :]], axis=1)
    fmin = fit_form("min", starts, lm, k, Y, W, max_nfev=max_nfev)
    # The smooth min from its starts and from the min law's fit with a sharp min (q = e^2).
    sharp = np.column_stack([fmin.x, np.full(R, 2.0)])
    starts = np.concatenate([np.broadcast_to(STARTS["smooth"], (R, 3, 4)), sharp[:, None, :]],
                            axis=1)
    fsmooth = fit_form("smooth", starts, lm, k, Y, W, max_nfev=max_nfev)
    starts = np.concatenate([np.broadcast_to(STARTS["sqrt_logm"], (R, 2, 2)),
                             profile_start("sqrt_logm", lm, k, Y, W)[:, None, :]], axis=1)
    flogm = fit_form("sqrt_logm", starts, lm, k, Y, W, max_nfev=max_nfev)
    law = min_law_closure(lm, k, Y, W, fmin, logm=flogm, max_nfev=max_nfev, lr_test=True)
    out = []
    for d in range(D):
        rows = {s: d * S + i for i, s in enumerate(names)}
        fits = {f: {s: ff.x[i] for s, i in rows.items()}
                for f, ff in (("min", fmin), ("smooth", fsmooth), ("sqrt_logm", flogm))}
        fits["plateau"] = {s: law.plateau.x[i] for s, i in rows.items()}
        status = {f: {s: int(ff.status[i]) for s, i in rows.items()}
                  for f, ff in (("min", fmin), ("smooth", fsmooth), ("sqrt_logm", flogm))}
        out.append(GroupFit(fits, status, {s: law.verdicts[i] for s, i in rows.items()}, law,
                            rows))
    return out


def fit_group(lm: np.ndarray, k: np.ndarray, g: np.ndarray, train: np.ndarray,
              reg: np.ndarray | None = None, *, max_nfev: int = 4000) -> GroupFit:
    """:func:`fit_groups` for one group."""
    return fit_groups(lm, k, np.asarray(g)[None, :], np.asarray(train)[None, :], reg,
                      max_nfev=max_nfev)[0]


def fit_row_groups(groups: dict[Any, list[dict[str, Any]]], *,
                   max_nfev: int = 4000) -> dict[Any, GroupFit]:
    """:func:`fit_groups` for groups of result rows (``M, K, G, split, regime``), the groups
    with the same ``(M, K)`` points fitted together; a :class:`GroupFit` per key."""
    designs: dict[bytes, list[Any]] = {}
    for key, grp in groups.items():
        designs.setdefault(np.array([(r["M"], r["K"]) for r in grp]).tobytes(), []).append(key)
    fits = {}
    for keys in designs.values():
        grp0 = groups[keys[0]]
        G = np.array([[r["G"] for r in groups[key]] for key in keys])
        train = np.array([[r["split"] == "train" for r in groups[key]] for key in keys])
        fits.update(zip(keys, fit_groups(np.log([r["M"] for r in grp0]),
                                         np.array([r["K"] for r in grp0]), G, train,
                                         np.array([r["regime"] for r in grp0]),
                                         max_nfev=max_nfev)))
    return fits


def verdict_fields(verdict: str) -> dict[str, Any]:
    """The ``identified`` and ``identification`` entries of a result row."""
    return {"identified": identified(verdict), "identification": REASONS[verdict]}


def fit_law_group(lm: np.ndarray, k: np.ndarray, g: np.ndarray, train: np.ndarray,
                  fit: GroupFit | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """The law (min and smooth-min) fitted on ``train``; held-out R² on the rest.

    Returns the row (``r2_min, r2_smooth, a, b, c, n_train, n_test``, and
    ``identified``/``identification`` of ``a, b, c``) and the min law's
    prediction at every point (its limit's where its best fit is at infinity).
    ``fit`` is :func:`fit_group`'s result for these points, made here when not
    given.
    """
    fit = fit if fit is not None else fit_group(lm, k, g, train)
    test = ~train
    f_min = fit.predictor("min", "train")
    p_min = fit.fits["min"]["train"]
    row = {
        "r2_min": _r2(g[test], f_min(lm[test], k[test])),
        "r2_smooth": _r2(g[test], fit.predictor("smooth", "train")(lm[test], k[test])),
        "a": float(np.exp(p_min[0])), "b": float(p_min[1]), "c": float(np.exp(p_min[2])),
        "n_train": int(train.sum()), "n_test": int(test.sum()),
        **verdict_fields(fit.verdicts["train"]),
    }
    return row, f_min(lm, k)


def new_totals() -> dict[str, dict[str, Any]]:
    """Accumulators for :func:`compare_models` (one per model)."""
    return {m.name: {"rss": 0.0, "n": 0, "k": 0, "loro": []} for m in _MODELS}


def compare_models(lm: np.ndarray, k: np.ndarray, g: np.ndarray, reg: np.ndarray,
                   totals: dict[str, dict[str, Any]], fit: GroupFit | None = None) -> None:
    """Fit every model to one group on all its points; add RSS, size and LORO errors.

    The least-squares laws come from ``fit`` (:func:`fit_group` on these points
    with these regimes; made here when not given), the others are fitted here
    (closed forms and linear least squares).
    """
    fit = fit if fit is not None else fit_group(lm, k, g, np.ones(lm.size, bool), reg)
    n_m = np.unique(lm).size
    for model in _MODELS:
        def fitted(subset, mask, model=model):
            if model.form is not None:
                return fit.predictor(model.form, subset)
            return model.fit(lm[mask], k[mask], g[mask])

        pred = fitted("all", np.ones(lm.size, bool))(lm, k)
        ok = np.isfinite(pred)
        t = totals[model.name]
        t["rss"] += float(np.sum((g[ok] - pred[ok]) ** 2))
        t["n"] += int(ok.sum())
        t["k"] += model.n_params(n_m)
        for held in REGIMES:
            tr, te = reg != held, reg == held
            if tr.sum() < 4 or te.sum() == 0:
                continue
            pr = fitted(held, tr)(lm[te], k[te])
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
