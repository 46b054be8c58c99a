"""The figures of the decision study (``python -m benchmarks.decision_study``), from its files.

Everything here reads the plain records a cell's JSON holds, so ``--rescore`` prints the
tables and ``--figure`` draws the reliability plot without computing anything again.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RULES", "figure", "paired", "paired_report", "recalibration", "reliability", "report",
           "rescore_rule", "score", "validity"]


# -- scoring ------------------------------------------------------------------------------------

def _wilson(hits: int, n: int) -> tuple[float, float]:
    from rlscale.optimize._calibration import _wilson as w

    return w(hits, n) if n else (math.nan, math.nan)


def score(state: dict[str, Any]) -> dict[str, Any]:
    """The cell's figures (see the module docstring)."""
    from rlscale.optimize._eta_interval import bootstrap_interval

    truth = state["truth"]
    star, oracle = truth["strongest"], truth["oracle_eta"]
    # A path the truth is not defined along (beyond the trainer's grid) is recorded as
    # such and left out of every figure it would enter, counted in "beyond".
    recs = [r for r in state["records"].values()
            if "recommend" in r and r["recommend"]["eta_deployed"] is not None]
    beyond = sum("recommend" in r and r["recommend"]["eta_deployed"] is None
                 for r in state["records"].values())
    n = len(recs)
    eta_star = np.array([r["recommend"]["eta_deployed"][star] for r in recs])
    eta_prop = np.array([r["recommend"]["eta_deployed"]["proportional"] for r in recs])
    ok = int(np.sum(eta_star >= 1 - 1e-9))
    departs = np.array([r["recommend"]["departs"] for r in recs])
    plan = np.array([r["recommend"]["choice"] == "plan" for r in recs])
    # Interval coverage for η_deployed, against the strongest baseline of each data set.
    hits = tot = 0
    for r in recs:
        rc = r["recommend"]
        name = rc["strongest"]
        c = rc["comparisons"].get(name)
        if c is None:
            continue
        lo, hi = c["eta_interval"]
        tot += 1
        hits += lo <= rc["eta_deployed"][name] <= hi
    cand_cov = cand_tot = 0
    for r in recs:
        c = r["recommend"].get("candidate")
        if not c or c["eta_deployed"] is None:
            continue
        name = r["recommend"]["strongest"]
        lo, hi = c["comparisons"][name]["eta_interval"]
        cand_tot += 1
        cand_cov += lo <= c["eta_deployed"][name] <= hi
    plug = [r["plug_in"] for r in state["records"].values()
            if "plug_in" in r and r["plug_in"]["eta_deployed"] is not None]
    old = {}
    for method in ("symmetric", "percentile"):
        for name in oracle:
            h_dep = h_or = m = 0
            for p in plug:
                s = np.asarray(p["samples"][name])
                if s.size < 2:
                    continue
                lo, hi = bootstrap_interval(s, p["predicted"][name], 0.9, method, floor=1.0)
                m += 1
                h_dep += lo <= p["eta_deployed"][name] <= hi
                h_or += lo <= oracle[name] <= hi
            old[(method, name)] = (h_dep, h_or, m)
    plug_star = np.array([p["eta_deployed"][star] for p in plug])
    plug_prop = np.array([p["eta_deployed"]["proportional"] for p in plug])
    return {
        "n": n, "failed": len(state["records"]) - n - beyond, "beyond": beyond,
        "strongest": star, "oracle": oracle,
        "ok": ok, "ok_wilson": _wilson(ok, n), "departs": float(departs.mean()) if n else 0,
        "plan": float(plan.mean()) if n else 0,
        "median_eta_star": float(np.median(eta_star)) if n else math.nan,
        "median_eta_prop": float(np.median(eta_prop)) if n else math.nan,
        "coverage": (hits, tot), "candidate_coverage": (cand_cov, cand_tot),
        "plug_ok": int(np.sum(plug_star >= 1 - 1e-9)), "plug_n": len(plug),
        "plug_median_star": float(np.median(plug_star)) if plug else math.nan,
        "plug_median_prop": float(np.median(plug_prop)) if plug else math.nan,
        "old": old,
        "cpu_seconds": sum(r.get("cpu_seconds", 0.0) for r in state["records"].values())}


def _stated(states: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Each data set's candidate plan: stated P(beats the strongest baseline), and whether
    its η_deployed against that baseline exceeds 1."""
    p, y = [], []
    for st in states:
        for r in st["records"].values():
            c = r.get("recommend", {}).get("candidate")
            if not c or c["eta_deployed"] is None:
                continue
            name = r["recommend"]["strongest"]
            p.append(c["comparisons"][name]["p_beats"])
            y.append(c["eta_deployed"][name] > 1.0)
    return np.array(p, dtype=float), np.array(y, dtype=bool)


def _calibration_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: the count-weighted mean |observed − stated| over bins."""
    j = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(y[j == b].mean() - p[j == b].mean()) * np.sum(j == b)
                     for b in range(bins) if np.any(j == b)) / max(p.size, 1))


def recalibration(states: dict[Any, dict[str, Any]], clip: float = 0.005) -> dict[Any, Any]:
    """Would a recalibration of P(beats) learnt from other generators hold on a new one?

    The map ``Φ(a + c·Φ⁻¹(P))`` (Platt scaling on the probit scale; ``a = 0`` is a normal
    prior on the gain centred at no gain) is fitted by maximum likelihood to every cell but
    one and scored on the held-out cell (leave one cell out).  ``P`` is clipped into
    ``[clip, 1 − clip]`` before ``Φ⁻¹``.  Returns, per held-out cell, its calibration error
    stated and recalibrated, the map's ``(a, c)``, and the pooled errors.
    """
    from scipy.optimize import minimize
    from scipy.stats import norm

    data = {k: _stated([st]) for k, st in states.items()}
    data = {k: (norm.ppf(np.clip(p, clip, 1 - clip)), y, p) for k, (p, y) in data.items()
            if p.size}

    def fit(z: np.ndarray, y: np.ndarray) -> np.ndarray:
        def nll(th: np.ndarray) -> float:
            q = np.clip(norm.cdf(th[0] + th[1] * z), 1e-12, 1 - 1e-12)
            return -float(np.sum(np.where(y, np.log(q), np.log1p(-q))))
        return minimize(nll, np.array([0.0, 1.0]), method="Nelder-Mead").x

    out: dict[Any, Any] = {}
    q_all, y_all, p_all = [], [], []
    for k, (z, y, p) in data.items():
        rest = [v for j, v in data.items() if j != k]
        if not rest:
            continue
        th = fit(np.concatenate([v[0] for v in rest]), np.concatenate([v[1] for v in rest]))
        q = norm.cdf(th[0] + th[1] * z)
        out[k] = {"n": int(y.size), "stated": _calibration_error(p, y),
                  "recalibrated": _calibration_error(q, y), "a": float(th[0]),
                  "c": float(th[1])}
        q_all.append(q)
        y_all.append(y)
        p_all.append(p)
    if q_all:
        y = np.concatenate(y_all)
        out["pooled"] = {"n": int(y.size),
                         "stated": _calibration_error(np.concatenate(p_all), y),
                         "recalibrated": _calibration_error(np.concatenate(q_all), y)}
    return out


def reliability(states: list[dict[str, Any]], bins: int = 10) -> list[dict[str, Any]]:
    """P(beats the strongest baseline) of each data set's best plan against the truth, binned.

    Every data set contributes its candidate plan (recommended or not): the stated
    probability that it beats the strongest baseline and whether its η_deployed against
    that baseline exceeds 1.
    """
    p, y = _stated(states)
    edges = np.linspace(0.0, 1.0, bins + 1)
    out = []
    for j in range(bins):
        m = (p >= edges[j]) & ((p < edges[j + 1]) if j < bins - 1 else (p <= 1.0))
        if m.any():
            k = int(y[m].sum())
            out.append({"low": float(edges[j]), "high": float(edges[j + 1]), "n": int(m.sum()),
                        "stated": float(p[m].mean()), "observed": k / int(m.sum()),
                        "wilson": _wilson(k, int(m.sum()))})
    return out


def _share(s: dict[str, Any], key: str) -> str:
    """Median η_dep − 1 over oracle η − 1 against proportional (the issue's 80 % goal)."""
    gain = s["oracle"]["proportional"] - 1.0
    return f"{(s[key] - 1.0) / gain:.2f}" if gain > 0 else "—"


# -- the rule, rescored on the records -------------------------------------------------------
#: Alternative decision rules, applied to what a record holds (the candidate plan's
#: P(beats) against every baseline on the judgement copy, and the whole-data step to the
#: strongest baseline): ``"sequence"`` is what recommend does (default → strongest → plan),
#: ``"iut"`` the intersection-union test (the plan when it beats *every* baseline on the
#: judgement copy, Berger 1982; else the strongest baseline when the whole data give it
#: the step, else the default), ``"either"`` the plan when either of the two would take it.
RULES = ("sequence", "iut", "either")


def _rule_choice(rc: dict[str, Any], rule: str, probability: float) -> str:
    if rule == "sequence" or "candidate" not in rc:  # a fallback is the default everywhere
        return rc["choice"]
    iut = all(c["p_beats"] >= probability for c in rc["candidate"]["comparisons"].values())
    if rule == "either":
        return "plan" if iut else rc["choice"]
    first = rc["steps"][0] if rc["steps"] else None
    baseline = first["to"] if first and first["to"] != "plan" and first["taken"] else None
    default = first["frm"] if first else rc["choice"]
    return "plan" if iut else (baseline or default)


def rescore_rule(state: dict[str, Any], rule: str) -> dict[str, Any]:
    """A cell's figures under ``rule`` (:data:`RULES`), paired with the recorded rule's.

    The same data sets and the same P's: only the choice differs.  A baseline's η_deployed
    is the same on every data set (its path does not depend on the data); it is read from
    a record that recommended it, and a data set whose new choice no record of the cell
    recommended is counted in ``unscored``.
    """
    truth = state["truth"]
    star = truth["strongest"]
    probability = state["key"]["probability"]
    base_eta = {}
    for r in state["records"].values():
        rc = r.get("recommend")
        if rc and rc["choice"] != "plan" and rc["eta_deployed"] is not None:
            base_eta[rc["choice"]] = rc["eta_deployed"]
    new_star, old_star, new_prop, choices = [], [], [], []
    unscored = 0
    for r in state["records"].values():
        rc = r.get("recommend")
        if not rc or rc["eta_deployed"] is None:
            continue
        choice = _rule_choice(rc, rule, probability)
        eta = rc["candidate"]["eta_deployed"] if choice == "plan" else base_eta.get(choice)
        if eta is None:
            unscored += 1
            continue
        new_star.append(eta[star])
        new_prop.append(eta["proportional"])
        old_star.append(rc["eta_deployed"][star])
        choices.append(choice)
    new_star, old_star = np.array(new_star), np.array(old_star)
    n = len(choices)
    ok = int(np.sum(new_star >= 1 - 1e-9))
    return {"rule": rule, "n": n, "unscored": unscored, "ok": ok,
            "ok_wilson": _wilson(ok, n),
            "departs": float(np.mean([c != "proportional" for c in choices])) if n else 0.0,
            "plan": float(np.mean([c == "plan" for c in choices])) if n else 0.0,
            "median_eta_prop": float(np.median(new_prop)) if n else math.nan,
            "oracle": truth["oracle_eta"],
            "changed": int(np.sum(np.abs(new_star - old_star) > 1e-12)),
            "better": int(np.sum(new_star > old_star + 1e-12)),
            "worse": int(np.sum(new_star < old_star - 1e-12))}


def paired(old: dict[str, Any], new: dict[str, Any], resamples: int = 2000,
           seed: int = 0) -> dict[str, Any]:
    """Two rules' records of one cell, paired on the data sets both scored.

    The same data sets (same seeds, same pilots): per data set the truly strongest
    baseline's η_deployed under each rule.  The share of the oracle gain kept (median
    η_dep − 1 over oracle η − 1, against proportional) gets a 95 % percentile interval by
    resampling the data sets, the same resample for both rules, so the interval of the
    difference is paired too.
    """
    truth = new["truth"]
    star = truth["strongest"]
    gain = truth["oracle_eta"]["proportional"] - 1.0

    def eta(rec: dict[str, Any] | None) -> dict[str, float] | None:
        rc = (rec or {}).get("recommend")
        return rc["eta_deployed"] if rc else None

    keys = [k for k in new["records"] if eta(new["records"][k]) is not None
            and eta(old["records"].get(k)) is not None]
    o = np.array([[eta(old["records"][k])[star], eta(old["records"][k])["proportional"]]
                  for k in keys]).reshape(-1, 2)
    w = np.array([[eta(new["records"][k])[star], eta(new["records"][k])["proportional"]]
                  for k in keys]).reshape(-1, 2)
    n = len(keys)
    out: dict[str, Any] = {"n": n, "star": star, "changed": 0, "better": 0, "worse": 0}
    if not n:
        return out
    out.update(changed=int(np.sum(np.abs(w[:, 0] - o[:, 0]) > 1e-12)),
               better=int(np.sum(w[:, 0] > o[:, 0] + 1e-12)),
               worse=int(np.sum(w[:, 0] < o[:, 0] - 1e-12)))
    for name, a in (("old", o), ("new", w)):
        ok = int(np.sum(a[:, 0] >= 1 - 1e-9))
        out[name] = {"ok": ok, "ok_wilson": _wilson(ok, n),
                     "median_prop": float(np.median(a[:, 1]))}
    if gain > 0:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n, size=(resamples, n))
        kept_o = (np.median(o[idx, 1], axis=1) - 1.0) / gain
        kept_w = (np.median(w[idx, 1], axis=1) - 1.0) / gain
        for name, a, k in (("old", o, kept_o), ("new", w, kept_w)):
            out[name]["kept"] = (float(np.median(a[:, 1])) - 1.0) / gain
            out[name]["kept_interval"] = tuple(float(v) for v in np.quantile(k, [0.025, 0.975]))
        out["kept_difference"] = out["new"]["kept"] - out["old"]["kept"]
        out["kept_difference_interval"] = tuple(
            float(v) for v in np.quantile(kept_w - kept_o, [0.025, 0.975]))
    return out


def paired_report(old_states: dict[tuple[str, str], dict[str, Any]],
                  states: dict[tuple[str, str], dict[str, Any]]) -> str:
    """The table of :func:`paired` for every cell both sets of files hold."""
    lines = ["| generator | pilot | n | η_dep ≥ 1 vs strongest: earlier rule → this rule "
             "[Wilson 95 %] | median η_dep vs proportional: earlier → this | share of the "
             "oracle gain kept: earlier [95 %] → this [95 %]; difference [95 %, paired] | "
             "changed / better / worse |", "|---|---|---|---|---|---|---|"]
    for cell, st in states.items():
        if cell not in old_states:
            continue
        s = paired(old_states[cell], st)
        if not s["n"]:
            continue
        o, w = s["old"], s["new"]
        ok = (f"{o['ok'] / s['n']:.3f} [{o['ok_wilson'][0]:.3f}, {o['ok_wilson'][1]:.3f}] → "
              f"{w['ok'] / s['n']:.3f} [{w['ok_wilson'][0]:.3f}, {w['ok_wilson'][1]:.3f}]")
        if "kept" in w:
            kept = (f"{o['kept']:.2f} [{o['kept_interval'][0]:.2f}, {o['kept_interval'][1]:.2f}]"
                    f" → {w['kept']:.2f} [{w['kept_interval'][0]:.2f}, "
                    f"{w['kept_interval'][1]:.2f}]; {s['kept_difference']:+.2f} "
                    f"[{s['kept_difference_interval'][0]:+.2f}, "
                    f"{s['kept_difference_interval'][1]:+.2f}]")
        else:
            kept = "—"
        lines.append(f"| {cell[0]} | {cell[1]} | {s['n']} | {ok} | {o['median_prop']:.3f} → "
                     f"{w['median_prop']:.3f} | {kept} | {s['changed']} / {s['better']} / "
                     f"{s['worse']} |")
    return "\n".join(lines)


def validity(states: list[dict[str, Any]], levels: tuple[float, ...] = (0.8, 0.9, 0.95)
             ) -> dict[str, Any]:
    """P(beats) read as a one-sided confidence: is it valid where the plan does *not* beat?

    A bootstrap P(beats) is one minus a one-sided p-value for "the plan is no better than
    the baseline"; what recommend's guard relies on is that among candidates that truly do
    not beat the strongest baseline, a stated ``P ≥ p`` occurs at most ``1 − p`` of the
    time.  Returns, per level, the count among those candidates and their number.
    """
    p, y = _stated(states)
    null = p[~y]
    return {"n": int(null.size), "n_beats": int(y.sum()),
            "levels": {lv: int(np.sum(null >= lv)) for lv in levels}}


def report(states: dict[tuple[str, str], dict[str, Any]]) -> str:
    lines = ["| generator | pilot | n | truly strongest (oracle η; vs proportional) | "
             "η_dep ≥ 1 vs strongest [Wilson 95 %] | departs (to the plan) | median η_dep vs "
             "strongest / proportional | best plan's 90 % interval covers its η_dep [Wilson] | "
             "plug-in: η_dep ≥ 1, median vs strongest / proportional | share of the oracle "
             "gain kept (median η_dep − 1 over oracle η − 1, vs proportional): rec / plug-in | "
             "beyond the truth |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (g, p), st in states.items():
        s = score(st)
        if not s["n"]:
            continue
        lo, hi = s["ok_wilson"]
        h, t = s["candidate_coverage"]
        cl, ch = _wilson(h, t)
        lines.append(
            f"| {g} | {p} | {s['n']} | {s['strongest']} ({s['oracle'][s['strongest']]:.3f}; "
            f"{s['oracle']['proportional']:.3f}) | {s['ok'] / s['n']:.3f} "
            f"[{lo:.3f}, {hi:.3f}] | {s['departs']:.2f} ({s['plan']:.2f}) | "
            f"{s['median_eta_star']:.3f} / {s['median_eta_prop']:.3f} | "
            f"{h / t if t else math.nan:.3f} [{cl:.3f}, {ch:.3f}] | "
            f"{s['plug_ok'] / max(s['plug_n'], 1):.3f}, {s['plug_median_star']:.3f} / "
            f"{s['plug_median_prop']:.3f} | {_share(s, 'median_eta_prop')} / "
            f"{_share(s, 'plug_median_prop')} | {s['beyond']} |")
    lines += ["", "Old predicted-η intervals of the plug-in plan (90 %), coverage of "
              "η_deployed / of the oracle η:", "",
              "| generator | pilot | method | " + " | ".join(
                  ["E only", "k only", "t only", "proportional"]) + " |",
              "|---|---|---|---|---|---|---|"]
    for (g, p), st in states.items():
        s = score(st)
        for method in ("symmetric", "percentile"):
            cells = []
            for name in ("E only", "k only", "t only", "proportional"):
                hd, ho, m = s["old"].get((method, name), (0, 0, 0))
                cells.append(f"{hd / m:.2f} / {ho / m:.2f}" if m else "—")
            lines.append(f"| {g} | {p} | {method} | " + " | ".join(cells) + " |")
    rel = reliability(list(states.values()))
    lines += ["", "Reliability of P(best plan beats the strongest baseline), all cells:", "",
              "| stated P bin | n | mean stated | observed [Wilson 95 %] |", "|---|---|---|---|"]
    for b in rel:
        lines.append(f"| [{b['low']:.1f}, {b['high']:.1f}) | {b['n']} | {b['stated']:.3f} | "
                     f"{b['observed']:.3f} [{b['wilson'][0]:.3f}, {b['wilson'][1]:.3f}] |")
    lines += ["", "P(beats) as a one-sided confidence: among the candidate plans that truly do "
              "not beat the strongest baseline, the share with stated P ≥ p (valid when at most "
              "1 − p):", "", "| cells | candidates truly not better (of all) | "
              + " | ".join(f"P ≥ {lv:g} [Wilson 95 %]" for lv in (0.8, 0.9, 0.95)) + " |",
              "|---|---|---|---|---|"]
    for label, group in [(f"{g}/{p}", [st]) for (g, p), st in states.items()] + \
            [("all", list(states.values()))]:
        v = validity(group)
        if not v["n"]:
            continue
        cells = []
        for k in v["levels"].values():
            lo, hi = _wilson(k, v["n"])
            cells.append(f"{k / v['n']:.3f} [{lo:.3f}, {hi:.3f}]")
        lines.append(f"| {label} | {v['n']} ({v['n'] + v['n_beats']}) | " + " | ".join(cells)
                     + " |")
    cal = recalibration(states)
    if "pooled" in cal:
        lines += ["", "A recalibration Φ(a + c·Φ⁻¹(P)) learnt from the other cells, scored on each "
                  "held-out cell (calibration error: count-weighted mean |observed − stated| "
                  "over 10 bins):", "", "| held-out cell | n | a, c (fitted without it) | "
                  "error stated | error recalibrated |", "|---|---|---|---|---|"]
        for k, v in cal.items():
            label = "pooled" if k == "pooled" else "/".join(k)
            fitted = "—" if k == "pooled" else f"{v['a']:.2f}, {v['c']:.2f}"
            lines.append(f"| {label} | {v['n']} | {fitted} | {v['stated']:.3f} | "
                         f"{v['recalibrated']:.3f} |")
    lines += ["", "The same data sets under other rules (RULES; paired: η_dep vs the truly "
              "strongest baseline, changed / better / worse than the recorded rule):", "",
              "| generator | pilot | rule | n (unscored) | η_dep ≥ 1 vs strongest [Wilson 95 %] | "
              "departs (to the plan) | median η_dep vs proportional | share of the oracle gain "
              "| changed / better / worse |", "|---|---|---|---|---|---|---|---|---|"]
    for (g, p), st in states.items():
        for rule in RULES:
            s = rescore_rule(st, rule)
            if not s["n"]:
                continue
            lo, hi = s["ok_wilson"]
            lines.append(
                f"| {g} | {p} | {rule} | {s['n']} ({s['unscored']}) | {s['ok'] / s['n']:.3f} "
                f"[{lo:.3f}, {hi:.3f}] | {s['departs']:.2f} ({s['plan']:.2f}) | "
                f"{s['median_eta_prop']:.3f} | {_share(s, 'median_eta_prop')} | "
                f"{s['changed']} / {s['better']} / {s['worse']} |")
    return "\n".join(lines)


def figure(states: dict[tuple[str, str], dict[str, Any]], path: Path) -> None:
    """The reliability plot of P(beats) (docs)."""
    import io

    from rlscale._optional import require
    from rlscale.files._atomic import write_bytes_atomic

    mpl = require("matplotlib", extra="plot", purpose="the reliability plot")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    rel = reliability(list(states.values()))
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, label="calibrated")
    for d in (0.05, -0.05):
        ax.plot([0, 1], [d, 1 + d], color="grey", lw=0.5, ls=":")
    x = [b["stated"] for b in rel]
    y = [b["observed"] for b in rel]
    err = np.array([[b["observed"] - b["wilson"][0] for b in rel],
                    [b["wilson"][1] - b["observed"] for b in rel]])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=2, label="observed (Wilson 95 %)")
    for b in rel:
        ax.annotate(str(b["n"]), (b["stated"], b["observed"]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("stated P(plan beats the strongest baseline)")
    ax.set_ylabel("observed share with η_deployed > 1")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
