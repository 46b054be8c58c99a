"""Scoring laws of ``G(M, K)`` by predictions they could fail: leave one level out.

A random split of an ``(M, K)`` grid leaves every held-out point with training
neighbours at its own ``M``, so it tests interpolation: a model with no ``M``
law at all scores well on it.  The test of an ``M`` law is to predict an ``M``
it has not seen (FORMULAS.md, "Testing a law so that it can fail"):

* **leave one M out** (LOMO, the primary score): for each ``M`` level, fit every
  model (:data:`rlscale.verification._law_competitors.MODELS`) on the other levels
  and predict all of that level's points; the score is the pooled RMSE over
  every held-out point (each point predicted once);
* **leave one K out** (LOKO): the same along ``K``;
* **AIC and BIC** on all points beside them (Gaussian likelihood with the
  variance profiled out: ``n log(RSS/n) + 2p`` and ``+ p log n``).

The folds of every group sharing a design are rows of one batched fit per
model (a fold is a 0/1 weight vector).  Points not reached (``NaN``) are in no
fold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlscale.verification._law_competitors import (
    EXPLORATORY,
    MODELS,
    NAMED_COMPETITORS,
    fit_predict,
)

__all__ = ["HoldoutScores", "exploratory_rows", "holdout_scores", "law_wins"]


@dataclass(frozen=True)
class HoldoutScores:
    """Scores of every model on each of ``D`` groups (arrays ``(D, len(models))``).

    Attributes
    ----------
    models : tuple of str
    lomo, loko : ndarray
        Pooled held-out RMSE leaving one ``M`` (one ``K``) level out.
    rss, aic, bic : ndarray
        On all reached points.
    n_points : ndarray, shape (D,)
    n_params : ndarray
    lomo_by_m : ndarray, shape (D, len(models), n_M)
        Held-out RMSE of each ``M`` level (NaN: no reached point).
    m_levels : ndarray
        The ``M`` levels (``log M``) of ``lomo_by_m``.
    """

    models: tuple[str, ...]
    lomo: np.ndarray
    loko: np.ndarray
    rss: np.ndarray
    aic: np.ndarray
    bic: np.ndarray
    n_points: np.ndarray
    n_params: np.ndarray
    lomo_by_m: np.ndarray
    m_levels: np.ndarray

    def column(self, model: str) -> int:
        return self.models.index(model)


def _folds(levels: np.ndarray, reached: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """Train and test weights ``(D·F, n)`` for leaving each level of ``levels`` out."""
    keys = np.unique(levels)
    train, test, which = [], [], []
    for d in range(len(reached)):
        for j, key in enumerate(keys):
            te = reached[d] & (levels == key)
            tr = reached[d] & (levels != key)
            if te.any() and np.unique(levels[tr]).size >= 2:
                train.append(tr)
                test.append(te)
                which.append((d, j))
    return np.array(train, float).reshape(-1, levels.size), \
        np.array(test, bool).reshape(-1, levels.size), which


def holdout_scores(lm: np.ndarray, k: np.ndarray, Y: np.ndarray, reached: np.ndarray, *,
                   models: tuple[str, ...] = tuple(MODELS), max_nfev: int = 1000
                   ) -> HoldoutScores:
    """LOMO, LOKO, AIC and BIC of ``models`` on each row of ``Y`` (module docstring).

    Parameters
    ----------
    lm, k : (n,) arrays
        The design, ``log M`` and ``K``.
    Y : (D, n) array
        Gains (anything where not reached).
    reached : (D, n) bool array

    Examples
    --------
    Data from the law itself: the law predicts every unseen ``M`` exactly.

    >>> from rlscale.verification._law_forms import _law_min
    >>> lm = np.repeat(np.log([10.0, 100.0, 1e3, 1e4]), 5)
    >>> k = np.tile([0.1, 0.5, 2.0, 8.0, 30.0], 4)
    >>> g = _law_min(np.array([0.0, -1.0, np.log(0.8)]), lm, k)
    >>> s = holdout_scores(lm, k, g[None], np.ones((1, 20), bool))
    >>> bool(s.lomo[0, s.column("law")] < 1e-8), law_wins(s)[0]["plateau_per_m"]
    (True, True)
    """
    Y = np.atleast_2d(np.asarray(Y, np.float64))
    reached = np.atleast_2d(np.asarray(reached, bool)) & np.isfinite(Y)
    Y = np.where(reached, Y, 0.0)
    D = len(Y)
    lm, k = np.asarray(lm, float), np.asarray(k, float)
    m_tr, m_te, m_which = _folds(lm, reached)
    k_tr, k_te, k_which = _folds(k, reached)
    n_m = np.unique(lm).size
    M = len(models)
    lomo_sq = np.zeros((D, M))
    lomo_n = np.zeros((D, M))
    loko_sq = np.zeros((D, M))
    loko_n = np.zeros((D, M))
    by_m = np.full((D, M, n_m), np.nan)
    rss = np.zeros((D, M))
    counts = reached.sum(axis=1)
    n_params = np.zeros((D, M))
    rows_m = np.array([d for d, _ in m_which], int)
    rows_k = np.array([d for d, _ in k_which], int)
    Wall = reached.astype(float)
    Yall = np.concatenate([Y, Y[rows_m], Y[rows_k]])
    Wcat = np.concatenate([Wall, m_tr, k_tr])
    for i, name in enumerate(models):
        pred = fit_predict(name, lm, k, Yall, Wcat, max_nfev=max_nfev)
        p_all, p_m, p_k = pred[:D], pred[D:D + len(m_which)], pred[D + len(m_which):]
        rss[:, i] = np.sum(np.where(reached, (Y - p_all) ** 2, 0.0), axis=1)
        spec = MODELS.get(name) or EXPLORATORY[name]
        n_params[:, i] = [spec.n_params(np.unique(lm[reached[d]]).size)
                          for d in range(D)]
        for f, (d, j) in enumerate(m_which):
            e = (Y[d] - p_m[f])[m_te[f]] ** 2
            lomo_sq[d, i] += e.sum()
            lomo_n[d, i] += e.size
            by_m[d, i, j] = math.sqrt(e.mean())
        for f, (d, _j) in enumerate(k_which):
            e = (Y[d] - p_k[f])[k_te[f]] ** 2
            loko_sq[d, i] += e.sum()
            loko_n[d, i] += e.size
    with np.errstate(invalid="ignore", divide="ignore"):
        lomo = np.sqrt(lomo_sq / lomo_n)
        loko = np.sqrt(loko_sq / loko_n)
        nn = counts[:, None].astype(float)
        base = nn * np.log(np.maximum(rss, 1e-300) / nn)
        bic = base + n_params * np.log(nn)
    return HoldoutScores(tuple(models), lomo, loko, rss, base + 2.0 * n_params, bic, counts,
                         n_params, by_m, np.unique(lm))


def exploratory_rows(lm: np.ndarray, k: np.ndarray, Y: np.ndarray, reached: np.ndarray,
                     scores: HoldoutScores, *, max_nfev: int = 1000) -> list[dict[str, object]]:
    """The :data:`rlscale.verification._law_competitors.EXPLORATORY` models' LOMO and LOKO
    RMSE per group, and whether each beats the named competitors and every model of
    ``scores`` (the pre-registered ones) leave-one-``M``-out; one dict per group."""
    names = tuple(EXPLORATORY)
    ex = holdout_scores(lm, k, Y, reached, models=names, max_nfev=max_nfev)
    rows = []
    for d in range(len(ex.lomo)):
        row = {}
        for i, name in enumerate(names):
            v = ex.lomo[d, i]
            others = {m: scores.lomo[d, scores.column(m)] for m in scores.models}
            row[name] = {
                "lomo_rmse": float(v) if np.isfinite(v) else None,
                "loko_rmse": float(ex.loko[d, i]) if np.isfinite(ex.loko[d, i]) else None,
                "beats_named_lomo": bool(all(v < others[c] * (1.0 - 1e-9)
                                             for c in NAMED_COMPETITORS if c in others)),
                "beats_all_lomo": bool(all(v < o * (1.0 - 1e-9) for o in others.values())),
            }
        rows.append(row)
    return rows


def law_wins(scores: HoldoutScores, *, score: str = "lomo",
             against: tuple[str, ...] = NAMED_COMPETITORS) -> list[dict[str, bool]]:
    """Per group, whether the law's held-out RMSE is strictly below each competitor's
    (a tie — e.g. the law's best fit being its ``M``-free limit — is not a win)."""
    s = getattr(scores, score)
    law = s[:, scores.column("law")]
    return [{c: bool(law[d] < s[d, scores.column(c)] * (1.0 - 1e-9)) for c in against
             if c in scores.models} for d in range(len(law))]
