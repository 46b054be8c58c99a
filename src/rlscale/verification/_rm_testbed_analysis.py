"""The testbed's analysis: scores, identification, the log M exponent and the regimes.

Implements the rules of :mod:`rlscale.verification._rm_testbed_design` on the
per-seed gains of :func:`rlscale.verification._rm_testbed_law.verify_testbed_reward_law`.
Groups that share a design (a cell's ``M`` and ``K`` axes) are scored in one
batched call per model (:func:`rlscale.verification._law_holdout.holdout_scores`)
and identified in one (:func:`rlscale.verification._law_calibration.calibrated_identification`).

Intervals over seeds are delete-one-seed jackknife intervals,
``θ̂ ± t₀.₉₇₅(S − 1)·SE``, ``SE² = (S−1)/S Σ (θ₍ᵢ₎ − θ̄)²`` (Efron & Tibshirani
1993, ch. 11): each seed is a fresh world and reward model, the independent
unit; the law's ``a`` and ``c`` on the log scale they are fitted on.  With two
seeds (``quick``) they are very rough.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlscale.verification._law_calibration import b_boundary, calibrated_identification
from rlscale.verification._law_competitors import (
    NAMED_COMPETITORS,
    fit_saturating,
    saturating_form,
    saturating_md_form,
)
from rlscale.verification._law_fits import REASONS, fit_form, identified, profile_start
from rlscale.verification._law_forms import STARTS
from rlscale.verification._law_holdout import exploratory_rows, holdout_scores, law_wins
from rlscale.verification._rm_testbed_design import cell, rm_grid, settings, testbed_grid

__all__ = ["analyse", "gamma_band", "jackknife_interval", "regime_of"]

#: Bands of a local log-M exponent (pre-registered).
GAMMA_BANDS = ((0.2, "saturating"), (1.0, "log-like"), (math.inf, "power-like"))
REGIMES = {"law": "law", "saturating": "saturating", "saturating_md": "saturating",
           "plateau_m_free": "no M law", "plateau_per_m": "interpolation",
           "gao_bon_per_m": "interpolation", "gao_rl_per_m": "interpolation"}


def gamma_band(g: float) -> str:
    """The pre-registered band of a local exponent ``γ``.

    Examples
    --------
    >>> gamma_band(0.05), gamma_band(0.5), gamma_band(3.0)
    ('saturating', 'log-like', 'power-like')
    """
    for top, name in GAMMA_BANDS:
        if g < top:
            return name
    return GAMMA_BANDS[-1][1]


def regime_of(winner: str) -> str:
    """The regime a LOMO winner names (module docstring of the design)."""
    return REGIMES[winner]


def jackknife_interval(full: np.ndarray, leave_one: np.ndarray) -> tuple[np.ndarray, ...]:
    """Jackknife SE and 95 % t-interval: ``full`` ``(...)``, ``leave_one`` ``(S, ...)``.

    Examples
    --------
    The mean's jackknife SE is the usual ``sd/√S``:

    >>> x = np.array([1.0, 2.0, 4.0, 7.0])
    >>> loo = np.array([np.delete(x, i).mean() for i in range(4)])
    >>> se, lo, hi = jackknife_interval(np.array(x.mean()), loo)
    >>> bool(np.isclose(se, x.std(ddof=1) / 2.0))
    True
    """
    from scipy.stats import t

    S = leave_one.shape[0]
    se = np.sqrt((S - 1) / S * np.sum((leave_one - leave_one.mean(axis=0)) ** 2, axis=0))
    q = float(t.ppf(0.975, max(S - 1, 1)))
    return se, full - q * se, full + q * se


def _gamma(g_top: np.ndarray, lm_levels: np.ndarray) -> np.ndarray:
    """Slope of log G_top on log log M over the levels with G_top > 0 (last axis: M)."""
    x = np.log(lm_levels)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(g_top)
    ok = np.isfinite(y)
    out = np.full(g_top.shape[:-1], np.nan)
    for idx in np.ndindex(*g_top.shape[:-1]):
        o = ok[idx]
        if o.sum() >= 2:
            out[idx] = np.polyfit(x[o], y[idx][o], 1)[0]
    return out


def _law_jackknife(lm, k, Yjk, Wjk, x0, max_nfev) -> np.ndarray:
    """The min law refitted to the delete-one-seed means from the point fit (and the
    fixed and profile starts): ``(R, 3)`` natural parameters ``a, b, c``."""
    R = len(Yjk)
    starts = np.concatenate([np.broadcast_to(STARTS["min"], (R, 3, 3)),
                             profile_start("min", lm, k, Yjk, Wjk)[:, None, :],
                             x0[:, None, :]], axis=1)
    x = fit_form("min", starts, lm, k, Yjk, Wjk, max_nfev=max_nfev).x
    return np.column_stack([np.exp(x[:, 0]), x[:, 1], np.exp(x[:, 2])])


def _breaks(per_seed: np.ndarray, ks: np.ndarray, ms: np.ndarray, reached: np.ndarray):
    """M levels whose seed-mean gold falls past its peak by > 2 seed SE and 0.02."""
    out = []
    S = per_seed.shape[0]
    for i, m in enumerate(ms):
        ok = reached[i]
        if ok.sum() < 2:
            continue
        g = per_seed[:, i, ok]
        mean = g.mean(axis=0)
        j = int(np.argmax(mean))
        if j == mean.size - 1:
            continue
        diff = g[:, j] - g[:, -1]
        se = float(diff.std(ddof=1) / math.sqrt(S)) if S > 1 else 0.0
        drop = float(diff.mean())
        if drop > max(2.0 * se, 0.02):
            kk = ks[ok]
            out.append({"M": float(m), "K_peak": float(kk[j]), "G_peak": float(mean[j]),
                        "K_last": float(kk[-1]), "G_last": float(mean[-1]), "drop": drop,
                        "drop_se": se})
    return out


def _collect(results: dict, mode: str) -> dict[tuple, dict[str, Any]]:
    """Per group: per-seed gains ``(S, nM, nK)`` on its own ``M`` axis."""
    st = settings(mode)
    groups: dict[tuple, dict[str, Any]] = {}
    for name in st["cells"]:
        c = cell(name)
        ms, ks = testbed_grid(mode, name)
        seeds = sorted(i for i, n in results if n == name)
        for rm, s in rm_grid(mode, c):
            opts = ["soft", "bon"] + (["pg"] if s in st["pg_noises"] else [])
            for opt in opts:
                msel = ms if opt != "pg" else np.array([m for m in ms if m in st["pg_m"]])
                g = np.array([[results[(i, name)]["gains"][f"{rm}|{s}|{opt}|{m:.0f}"]
                               for m in msel] for i in seeds])
                groups[(name, rm, s, opt)] = {
                    "ms": msel, "ks": ks, "per_seed": g,
                    "oracle": np.mean([results[(i, name)]["oracle"] for i in seeds], axis=0),
                    "ceiling": float(np.mean([results[(i, name)]["ceiling"] for i in seeds]))}
    return groups


def analyse(results: dict, mode: str, gen: np.random.Generator):
    """Group rows, cell summaries, local exponents and grid points (the report's lists)."""
    st = settings(mode)
    groups = _collect(results, mode)
    designs: dict[tuple, list[tuple]] = {}
    for key, g in groups.items():
        designs.setdefault((key[0], tuple(g["ms"])), []).append(key)
    rows: dict[tuple, dict[str, Any]] = {}
    local: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    for (_name, msel), all_keys in designs.items():
        ms = np.array(msel)
        ks = groups[all_keys[0]]["ks"]
        keys = []
        for key in all_keys:  # a group needs 3 M levels with 2 reached points each
            ok = np.all(np.isfinite(groups[key]["per_seed"]), axis=0)
            if np.sum(ok.sum(axis=1) >= 2) >= 3:
                keys.append(key)
            else:
                rows[key] = _unscored_row(key, groups[key], ok)
                points.extend(_point_rows(key, ms, ks, groups[key]["per_seed"], ok))
        if not keys:
            continue
        lm = np.repeat(np.log(ms), ks.size)
        kk = np.tile(ks, ms.size)
        per = np.stack([groups[key]["per_seed"] for key in keys])  # (D, S, nM, nK)
        D, S = per.shape[:2]
        reached = np.all(np.isfinite(per), axis=1)  # (D, nM, nK)
        with np.errstate(invalid="ignore"):
            Y = np.where(reached, np.mean(np.where(np.isfinite(per), per, 0.0), axis=1),
                         0.0).reshape(D, -1)
        R = reached.reshape(D, -1)
        scores = holdout_scores(lm, kk, Y, R)
        explo = exploratory_rows(lm, kk, Y, R, scores)
        ident = calibrated_identification(lm, kk, Y, R.astype(float), rng=gen,
                                          n_boot=st["n_boot"])
        wins_m, wins_k = law_wins(scores), law_wins(scores, score="loko")
        wins_all = law_wins(scores, against=tuple(m for m in scores.models if m != "law"))
        # Delete-one-seed means: the jackknife's data sets.
        loo = (per.sum(axis=1, keepdims=True) - per) / max(S - 1, 1)  # (D, S, nM, nK)
        Yjk = np.where(reached[:, None], loo, 0.0).reshape(D * S, -1)
        Wjk = np.repeat(R, S, axis=0).astype(float)
        x_nat = np.column_stack([np.exp(ident.law.x[:, 0]), ident.law.x[:, 1],
                                 np.exp(ident.law.x[:, 2])])
        jk = _law_jackknife(lm, kk, Yjk, Wjk, np.repeat(ident.law.x, S, axis=0),
                            1000).reshape(D, S, 3) if S > 1 else None
        sat = fit_saturating(saturating_form, lm, kk, Y, R.astype(float))
        md = fit_saturating(saturating_md_form, lm, kk, Y, R.astype(float))
        for d, key in enumerate(keys):
            g = groups[key]
            row = _group_row(key, g, d, ms, ks, reached[d], per[d], scores, ident, wins_m[d],
                             wins_k[d], wins_all[d], x_nat[d], None if jk is None else jk[d],
                             sat[d], md[d], lm)
            row["exploratory"] = explo[d]
            rows[key] = row
            local.extend(_local_rows(key, row, ms, ks, per[d], reached[d]))
            points.extend(_point_rows(key, ms, ks, per[d], reached[d]))
    ordered = [rows[k] for k in sorted(rows, key=_order)]
    return ordered, _cell_rows(ordered, st), local, points


def _order(key):
    name, rm, s, opt = key
    names = settings("full")["cells"]
    return (names.index(name) if name in names else 99, rm != "bayes", rm, s,
            ("soft", "bon", "pg").index(opt))


def _top(per_seed: np.ndarray, reached: np.ndarray) -> tuple[np.ndarray, int]:
    """Per seed ``G_top(M)``: the gain at the largest K every M reached; that K's index."""
    common = np.flatnonzero(np.all(reached, axis=0))
    j = int(common[-1]) if common.size else -1
    return (per_seed[:, :, j] if j >= 0 else np.full(per_seed.shape[:2], np.nan)), j


def _group_row(key, g, d, ms, ks, reached, per, scores, ident, win_m, win_k, win_all, x_nat,
               jk, sat, md, lm) -> dict[str, Any]:
    name, rm, s, opt = key
    S = per.shape[0]
    models = scores.models
    lomo = {m: _f(scores.lomo[d, i]) for i, m in enumerate(models)}
    scored = [m for m in models if lomo[m] is not None]
    winner = min(scored, key=lambda m: lomo[m]) if scored else None
    verdict = ident.verdicts[d]
    ok = identified(verdict)
    law = {"a": float(x_nat[0]), "b": float(x_nat[1]), "c": float(x_nat[2])}
    boundary = {}
    bb = b_boundary(law["b"], lm) if ok["b"] else None
    if bb is not None:
        boundary["b"] = (f"on the clamp corner -log M = {bb:.4g} (the law's gain is 0 at "
                         f"M <= {math.exp(-bb):.4g})")
    cis: dict[str, list[float] | None] = {}
    for i, p in enumerate("abc"):
        if not ok[p] or p in boundary or jk is None:
            cis[p] = None
            law[p] = law[p] if ok[p] else None
            continue
        # a, c > 0 are fitted as logs: their intervals too (then positive); b as it is.
        tr = (lambda v: v) if p == "b" else np.log
        back = (lambda v: v) if p == "b" else np.exp
        _se, lo, hi = jackknife_interval(np.array(tr(x_nat[i])), tr(jk[:, i]))
        cis[p] = [float(back(lo)), float(back(hi))]
    top, j_top = _top(per, reached)
    g_top = top.mean(axis=0)
    levels = np.log(ms)
    gam = float(_gamma(g_top[None], levels)[0])
    gam_loo = _gamma((top.sum(axis=0, keepdims=True) - top) / max(S - 1, 1), levels) \
        if S > 1 else None
    gamma_ci = None
    if gam_loo is not None and np.all(np.isfinite(gam_loo)) and math.isfinite(gam):
        _se, lo, hi = jackknife_interval(np.array(gam), gam_loo)
        gamma_ci = [float(lo), float(hi)]
    growth = growth_ci = None
    i_dec = int(np.argmin(np.abs(ms - ms[-1] / 10.0)))
    if j_top >= 0 and np.isclose(ms[i_dec], ms[-1] / 10.0) and g_top[i_dec] > 0:
        growth = float(g_top[-1] / g_top[i_dec])
        if S > 1:
            loo = (top.sum(axis=0, keepdims=True) - top) / (S - 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = loo[:, -1] / loo[:, i_dec]
            if np.all(np.isfinite(r)):
                _se, lo, hi = jackknife_interval(np.array(growth), r)
                growth_ci = [float(lo), float(hi)]
    oracle_top = float(g["oracle"][j_top]) if j_top >= 0 else None
    return {
        "cell": name, "rm": rm, "noise": s, "optimiser": opt, "seeds": S,
        "M": ms.tolist(), "n_points": int(reached.sum()),
        "lomo_rmse": lomo, "loko_rmse": {m: _f(scores.loko[d, i]) for i, m in enumerate(models)},
        "aic": {m: _f(scores.aic[d, i]) for i, m in enumerate(models)},
        "bic": {m: _f(scores.bic[d, i]) for i, m in enumerate(models)},
        "lomo_winner": winner, "regime": regime_of(winner) if winner else "not scored",
        "loko_winner": min(models, key=lambda m: scores.loko[d, models.index(m)]
                           if math.isfinite(scores.loko[d, models.index(m)]) else math.inf),
        "law_beats_lomo": win_m, "law_beats_loko": win_k,
        "law_beats_named_lomo": all(win_m[c] for c in NAMED_COMPETITORS),
        "law_beats_all_lomo": all(win_all.values()),
        "law_beats_named_loko": all(win_k[c] for c in NAMED_COMPETITORS),
        "law": law, "law_ci": cis, "boundary": boundary, "identified": ok,
        "identification": REASONS[verdict], "verdict": verdict,
        "verdict_uncalibrated": ident.uncalibrated[d],
        "lr": float(ident.lr[d]), "lr_p_value": float(ident.p_value[d]),
        "lr_threshold": _f(ident.threshold[d]),
        "K_top": float(ks[j_top]) if j_top >= 0 else None,
        "G_top": [float(v) for v in g_top], "gamma": _f(gam), "gamma_ci": gamma_ci,
        "sqrt_log_m_in_ci": bool(gamma_ci is not None and gamma_ci[0] <= 0.5 <= gamma_ci[1]),
        "top_decade_growth": growth, "top_decade_growth_ci": growth_ci,
        "oracle_at_K_top": oracle_top, "ceiling": g["ceiling"],
        "efficiency_at_M_max": (float(g_top[-1] / oracle_top)
                                if oracle_top and oracle_top > 0 else None),
        "saturating": {"A": float(np.exp(sat[0])), "M0": float(np.exp(sat[1])),
                       "C": float(np.exp(sat[2]))},
        "saturating_md": {"A": float(np.exp(md[0])), "M1": float(np.exp(md[1])),
                          "C": float(np.exp(md[2]))},
        "breaks": _breaks(per, ks, ms, reached),
    }


def _unscored_row(key, g, reached) -> dict[str, Any]:
    name, rm, s, opt = key
    return {"cell": name, "rm": rm, "noise": s, "optimiser": opt, "seeds": g["per_seed"].shape[0],
            "M": g["ms"].tolist(), "n_points": int(reached.sum()), "lomo_rmse": {},
            "loko_rmse": {}, "aic": {}, "bic": {}, "lomo_winner": None, "regime": "not scored",
            "loko_winner": None, "law_beats_lomo": {}, "law_beats_loko": {},
            "law_beats_named_lomo": False, "law_beats_all_lomo": False,
            "law_beats_named_loko": False, "law": {"a": None, "b": None, "c": None},
            "law_ci": {"a": None, "b": None, "c": None}, "boundary": {},
            "identified": {"a": False, "b": False, "c": False},
            "identification": "not scored: fewer than 3 M levels with 2 budgets reached in "
                              "every seed", "verdict": None, "verdict_uncalibrated": None,
            "lr": None, "lr_p_value": None, "lr_threshold": None, "K_top": None, "G_top": [],
            "gamma": None, "gamma_ci": None, "sqrt_log_m_in_ci": False,
            "top_decade_growth": None, "top_decade_growth_ci": None, "oracle_at_K_top": None,
            "ceiling": g["ceiling"], "efficiency_at_M_max": None, "saturating": None,
            "saturating_md": None, "breaks": []}


def _f(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def _local_rows(key, row, ms, ks, per, reached) -> list[dict[str, Any]]:
    S = per.shape[0]
    top, j = _top(per, reached)
    if j < 0:
        return []
    levels = np.log(ms)
    out = []
    loo = (top.sum(axis=0, keepdims=True) - top) / max(S - 1, 1)
    for i in range(ms.size - 1):
        pair = levels[i:i + 2]
        g = _f(_gamma(top.mean(axis=0)[None, i:i + 2], pair)[0])
        ci = None
        if g is not None and S > 1:
            gl = _gamma(loo[:, i:i + 2], pair)
            if np.all(np.isfinite(gl)):
                _se, lo, hi = jackknife_interval(np.array(g), gl)
                ci = [float(lo), float(hi)]
        out.append({"cell": key[0], "rm": key[1], "noise": key[2], "optimiser": key[3],
                    "M_lo": float(ms[i]), "M_hi": float(ms[i + 1]), "gamma": g,
                    "gamma_ci": ci, "band": None if g is None else gamma_band(g)})
    return out


def _point_rows(key, ms, ks, per, reached) -> list[dict[str, Any]]:
    from scipy.stats import t

    S = per.shape[0]
    q = float(t.ppf(0.975, max(S - 1, 1)))
    fin = np.where(np.isfinite(per), per, 0.0)  # unreached points are reported as such
    mean = fin.mean(axis=0)
    se = fin.std(axis=0, ddof=1) / math.sqrt(S) if S > 1 else np.zeros_like(mean)
    rows = []
    for i, m in enumerate(ms):
        for j, k in enumerate(ks):
            ok = bool(reached[i, j])
            rows.append({"cell": key[0], "rm": key[1], "noise": key[2], "optimiser": key[3],
                         "M": float(m), "K": float(k),
                         "G": float(mean[i, j]) if ok else None,
                         "G_lo": float(mean[i, j] - q * se[i, j]) if ok else None,
                         "G_hi": float(mean[i, j] + q * se[i, j]) if ok else None,
                         "reached": ok})
    return rows


def _cell_rows(rows: list[dict[str, Any]], st: dict) -> list[dict[str, Any]]:
    out = []
    for name in st["cells"]:
        sel = [r for r in rows if r["cell"] == name]
        n = len(sel)

        def share(f, sel=sel, n=n):
            return sum(bool(f(r)) for r in sel) / n if n else 0.0

        gam = [r["gamma"] for r in sel if r["gamma"] is not None]
        beats = share(lambda r: r["law_beats_named_lomo"])
        sqrt_share = share(lambda r: r["sqrt_log_m_in_ci"])
        winners: dict[str, int] = {}
        for r in sel:
            winners[r["lomo_winner"]] = winners.get(r["lomo_winner"], 0) + 1
        out.append({
            "cell": name, "groups": n,
            "law_beats_named_lomo": beats,
            "law_beats_all_lomo": share(lambda r: r["law_beats_all_lomo"]),
            "law_beats_named_loko": share(lambda r: r["law_beats_named_loko"]),
            "law_beats_each_lomo": {c: share(lambda r, c=c: r["law_beats_lomo"].get(c, False))
                                    for c in NAMED_COMPETITORS},
            "lomo_winners": winners,
            "gamma_median": float(np.median(gam)) if gam else None,
            "gamma_range": [float(min(gam)), float(max(gam))] if gam else None,
            "sqrt_log_m_share": sqrt_share,
            "identified_share": share(lambda r: r["verdict"] == "interior"),
            "over_optimised_groups": sum(bool(r["breaks"]) for r in sel),
            "supports_law": bool(n and beats >= 0.8),
            "supports_sqrt_log_m": bool(n and beats >= 0.8 and sqrt_share >= 0.8),
            # Outside the pre-registered rule (the model joined after the run):
            "exploratory_sqrt_log_m_side_beats_named_lomo": share(
                lambda r: r.get("exploratory", {}).get("sqrt_log_m_side", {}).get(
                    "beats_named_lomo", False)),
            "exploratory_sqrt_log_m_side_beats_all_lomo": share(
                lambda r: r.get("exploratory", {}).get("sqrt_log_m_side", {}).get(
                    "beats_all_lomo", False)),
        })
    return out
