"""Files, figures and the text summary of the trainer's reward-law verification.

``grid.csv`` (one row per optimiser × capacity × noise × M × K), ``results.json``
(everything but the rows) and, with matplotlib, ``gold_vs_kl.png`` (gold gain
against the KL budget per M, noise 1, one panel per capacity × optimiser),
``collapse.png`` (G against sqrt(min(log M, K)) per capacity) and ``gao.png``
(the misspecified reward model's curves with Gao et al.'s forms fitted per M).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import make_output_dir

__all__ = ["law_param", "law_param_text", "summary_text", "write_files",
           "write_trainer_figures"]

_COLS = ["optimiser", "capacity", "noise", "M", "K", "G", "G_lo", "G_hi", "L", "regime",
         "split", "fit_law_min"]


def _fmt(v: float | None, w: int = 7) -> str:
    return f"{'n/a':>{w}}" if v is None else f"{v:{w}.3f}"


def law_param(row: dict[str, Any], name: str) -> str:
    """``a``, ``b`` or ``c`` of an ``r2`` row with its bootstrap interval, for text.

    ``"not identified"`` where the fit on all points is not (the row's
    ``identification`` says why), ``(boundary)`` for an estimate on a clamp
    corner (no interval: it is not interior), and ``∞``/``-∞`` for an unbounded end.

    Examples
    --------
    >>> row = {"a_all": 1.234, "a_ci": [1.1, None], "identified": {"a": True}}
    >>> law_param(row, "a")
    '1.23 [1.1, ∞)'
    >>> law_param({"b_all": 1e4, "b_ci": None, "identified": {"b": False}}, "b")
    'not identified'
    >>> law_param({"b_all": -2.3026, "b_ci": None, "identified": {"b": True},
    ...            "boundary": {"b": "on the clamp corner -log M = -2.303"}}, "b")
    '-2.3 (boundary)'
    >>> law_param({"b_all": -2.97, "b_ci": [-3.19, -2.3026], "identified": {"b": True},
    ...            "ci_boundary": {"b": ["upper"]}}, "b")
    '-2.97 [-3.19, -2.3 corner]'
    """
    identified = row.get("identified", {}).get(name, True)
    return law_param_text(row[f"{name}_all"] if identified else None,
                          row[f"{name}_ci"] if identified else None, identified=identified,
                          boundary=name in row.get("boundary", {}),
                          corner=row.get("ci_boundary", {}).get(name, ()))


def law_param_text(estimate: float | None, interval: Sequence[float | None] | None, *,
                   identified: bool = True, boundary: bool = False,
                   corner: Sequence[str] = ()) -> str:
    """A law parameter's estimate with its bootstrap interval, for text.

    ``identified``: whether the fit on all points identifies it (``"not identified"``
    if not, or if it has no ``interval``); ``boundary``: the estimate sits on a clamp
    corner (``(boundary)``, no interval); ``corner``: the ends (``"lower"``,
    ``"upper"``) of the interval on a clamp corner; an end ``None`` is unbounded.
    :func:`law_param` reads these from a result row.

    Examples
    --------
    >>> law_param_text(1.234, (1.1, None))
    '1.23 [1.1, ∞)'
    >>> law_param_text(-2.97, (-3.19, -2.3026), corner=("upper",))
    '-2.97 [-3.19, -2.3 corner]'
    """
    if not identified:
        return "not identified"
    if boundary:
        return f"{estimate:.3g} (boundary)"
    if interval is None:
        return "not identified"
    lo, hi = interval
    left = "(-∞" if lo is None else f"[{lo:.3g}" + (" corner" if "lower" in corner else "")
    right = "∞)" if hi is None else f"{hi:.3g}" + (" corner" if "upper" in corner else "") + "]"
    return f"{estimate:.3g} {left}, {right}"


def summary_text(rep: Any) -> str:
    lines = ["trainer: held-out R^2 of G = a*sqrt(min(log M + b, c*K)) [smooth-min]; "
             "a, b, c on all points with bootstrap 95% intervals over environments "
             "(∞: more resamples than the tail's share run off)",
             f"{'optimiser':>9} {'capacity':>8} {'s':>4} {'R2':>7} {'[smooth]':>8}  "
             f"{'a [CI]':>22} {'b [CI]':>22} {'c [CI]':>22}"]
    for r in rep.r2:
        lines.append(
            f"{r['optimiser']:>9} {r['capacity']:>8} {r['noise']:4.1f} {_fmt(r['r2_min'])} "
            f"{_fmt(r['r2_smooth'], 8)}  {law_param(r, 'a'):>22} {law_param(r, 'b'):>22} "
            f"{law_param(r, 'c'):>22}")
    for r in rep.r2:
        if not all(r.get("identified", {}).values()):
            lines.append(f"  {r['optimiser']}/{r['capacity']}/s={r['noise']:.1f}: "
                         f"{r['identification']}")
        for name, what in r.get("boundary", {}).items():
            lines.append(f"  {r['optimiser']}/{r['capacity']}/s={r['noise']:.1f}: {name} "
                         f"{what}: a boundary estimate, no interval")
        for name, ends in r.get("ci_boundary", {}).items():
            lines.append(f"  {r['optimiser']}/{r['capacity']}/s={r['noise']:.1f}: the "
                         f"{' and '.join(ends)} end of {name}'s interval sits on a clamp corner "
                         f"-log M_j (resamples piled against the constraint)")
    lomo = [r for r in rep.r2 if "lomo_rmse" in r]
    if lomo:
        models = list(lomo[0]["lomo_rmse"])
        lines.append("leave-one-M-out RMSE (the primary score; identification calibrated by "
                     "a wild cluster bootstrap over M)")
        lines.append(f"{'optimiser':>9} {'capacity':>8} {'s':>4} "
                     + " ".join(f"{m[:13]:>13}" for m in models) + "  winner")
        for r in lomo:
            lines.append(f"{r['optimiser']:>9} {r['capacity']:>8} {r['noise']:4.1f} "
                         + " ".join(_fmt(r["lomo_rmse"][m], 13) for m in models)
                         + f"  {r['lomo_winner'] or 'n/a (fewer than 3 M levels)'}")
        wins = sum(r["law_beats_named_lomo"] for r in lomo)
        lines.append(f"the law beats the M-free plateau, the per-M plateau and Gao's per-M "
                     f"forms leave-one-M-out in {wins} of {len(lomo)} groups")
    lines.append("Gaussian model on the same grid (tau = 2s; in-sample R^2)")
    for t in rep.theory:
        abc = (f"a={t['a']:.3f} b={t['b']:.2f} c={t['c']:.3f}"
               if all(t.get("identified", {}).values()) else "a, b, c: " + t["identification"])
        lines.append(f"  {t['model']:>16} {t['method']:>4} s={t['noise_s']:.1f}: {abc} "
                     f"R2={_fmt(t['r2_in_sample'])}")
    for cap, rows in rep.comparison.items():
        lines.append(f"model comparison, capacity {cap} (lower is better)")
        for row in rows:
            lines.append(f"  {row['model']:>15} params {row['params']:4d} AIC {row['aic']:9.1f} "
                         f"BIC {row['bic']:9.1f} LORO {row['loro_rmse']:.4f}")
    lines.append(f"gold falling past its peak (> 2 SE): {len(rep.breaks)} curves")
    for b in rep.breaks:
        lines.append(f"  {b['optimiser']:>8} {b['capacity']:>8} s={b['noise']:.1f} "
                     f"M={b['M']:.0f}: peak {b['G_peak']:.3f} at K={b['K_peak']:.2f}, "
                     f"{b['G_at_K_max']:.3f} at K max (drop {b['drop']:.3f} ± {b['drop_se']:.3f})")
    p = rep.plan
    lines.append(f"planning (law from {p['law']['from']}; price_m={p['price_m']}, "
                 f"price_k={p['price_k']}, budget={p['budget']})")
    if p.get("refused"):
        lines.append(f"  refused: {p['refused']}")
    for name, q in p["plans"].items():
        extra = ""
        if "planned_minus_this" in q:
            lo, hi = q["planned_minus_this_ci"]
            extra = f"  planned - this = {q['planned_minus_this']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        lines.append(f"  {name:>17}: M={q['M']:9.0f} K={q['K']:6.2f} predicted "
                     f"{q['predicted_gain']:.3f} trained {q['trained_gain']:.3f} "
                     f"[{q['trained_ci'][0]:.3f}, {q['trained_ci'][1]:.3f}]{extra}")
    ks = p.get("kl_per_step")
    if ks and "plan" not in ks:
        lines.append(f"KL per RL step: {ks['note']}")
    elif ks:
        lines.append(f"KL per RL step (pg on the planned RM, {ks['steps']} updates): "
                     f"K = {ks['kappa']:.4g}*S^{ks['gamma']:.3f} (log-log R^2 "
                     f"{ks['r2_log']:.3f}); at price_step={ks['price_step']} the plan is "
                     f"{ks['plan']['steps']:.0f} steps")
    lines.append(f"{len(rep.points)} grid points, {rep.seconds:.1f} s")
    return "\n".join(lines)


def write_files(rep: Any, out: Path, figures: bool) -> Any:
    from rlscale.files._atomic import write_json_atomic, write_text_atomic

    make_output_dir(out)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=_COLS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rep.points)
    files = {"csv": str(write_text_atomic(out / "grid.csv", buf.getvalue()))}
    if figures:
        files.update(write_trainer_figures(rep, out))
    files["json"] = str(out / "results.json")
    rep = replace(rep, files=files)
    write_json_atomic(out / "results.json", rep.as_dict())
    return rep


def _curve(points, opt, cap, s):
    sel = [r for r in points if r["optimiser"] == opt and r["capacity"] == cap
           and r["noise"] == s]
    by_m: dict[float, list[dict[str, Any]]] = {}
    for r in sel:
        by_m.setdefault(r["M"], []).append(r)
    return {m: sorted(v, key=lambda r: r["K"]) for m, v in sorted(by_m.items())}


def write_trainer_figures(rep: Any, out: str | Path) -> dict[str, str]:
    """Write ``gold_vs_kl.png``, ``collapse.png`` and ``gao.png`` (matplotlib, Agg)."""
    from rlscale._optional import require
    from rlscale.files._atomic import write_bytes_atomic
    from rlscale.report._figures import log_scale
    from rlscale.verification._gaussian_reward_law import _png  # lays the figure out once
    from rlscale.verification._law_models import _gao

    mpl = require("matplotlib", extra="plot", purpose="reward-law figures")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    files = {}
    caps = sorted({r["capacity"] for r in rep.points})
    opts = [o for o in ("soft_vi", "bon", "pg") if any(r["optimiser"] == o for r in rep.points)]
    fig, axes = plt.subplots(len(caps), len(opts), figsize=(4.2 * len(opts), 3.4 * len(caps)),
                             squeeze=False, sharey=True)
    for i, cap in enumerate(caps):
        for j, opt in enumerate(opts):
            ax = axes[i][j]
            curves = _curve(rep.points, opt, cap, 1.0)
            cmap = plt.get_cmap("viridis", max(len(curves), 2))
            for n, (m, rows) in enumerate(curves.items()):
                k = [r["K"] for r in rows]
                ax.plot(k, [r["G"] for r in rows], "o-", ms=3, color=cmap(n), label=f"M={m:.0f}")
                ax.fill_between(k, [r["G_lo"] for r in rows], [r["G_hi"] for r in rows],
                                color=cmap(n), alpha=0.15)
            log_scale(ax, "x")  # no minor ticks: a third of a log axis's drawing
            ax.set_title(f"{opt}, {cap} RM, s = 1", fontsize=9)
            ax.set_xlabel("KL budget K (nats)")
            if j == 0:
                ax.set_ylabel("gold gain (reference sd)")
            ax.legend(fontsize=6)
    files["gold_vs_kl"] = str(write_bytes_atomic(out / "gold_vs_kl.png", _png(fig)))
    plt.close(fig)

    fig, axes = plt.subplots(1, len(caps), figsize=(5.2 * len(caps), 4.2), squeeze=False,
                             sharey=True)
    for i, cap in enumerate(caps):
        ax = axes[0][i]
        for opt in opts:
            sel = [r for r in rep.points if r["optimiser"] == opt and r["capacity"] == cap]
            ax.scatter(np.sqrt([r["L"] for r in sel]), [r["G"] for r in sel], s=7, alpha=0.5,
                       label=opt)
        ax.set_xlabel("sqrt(min(log M, K))")
        ax.set_title(f"collapse, {cap} RM (all s)", fontsize=9)
        ax.legend(fontsize=7, markerscale=2)
    axes[0][0].set_ylabel("gold gain (reference sd)")
    files["collapse"] = str(write_bytes_atomic(out / "collapse.png", _png(fig)))
    plt.close(fig)

    fig, axes = plt.subplots(1, len(opts), figsize=(4.4 * len(opts), 3.6), squeeze=False)
    for j, opt in enumerate(opts):
        ax = axes[0][j]
        kind = "bon" if opt == "bon" else "rl"
        curves = _curve(rep.points, opt, "partial", 1.0)
        cmap = plt.get_cmap("plasma", max(len(curves), 2))
        for n, (m, rows) in enumerate(curves.items()):
            k = np.array([r["K"] for r in rows])
            g = np.array([r["G"] for r in rows])
            lm = np.full(k.size, np.log(m))
            pred = _gao(kind)(lm, k, g)(lm, k)
            ax.plot(np.sqrt(k), g, "o", ms=3, color=cmap(n), label=f"M={m:.0f}")
            ax.plot(np.sqrt(k), pred, "-", lw=1, color=cmap(n))
            ax.plot(np.sqrt(k), [r["fit_law_min"] for r in rows], ":", lw=1, color=cmap(n))
        ax.set_xlabel("d = sqrt(KL)")
        ax.set_title(f"{opt}, partial RM, s = 1: Gao {kind} form (—), law (··)", fontsize=8)
        ax.legend(fontsize=6)
    axes[0][0].set_ylabel("gold gain (reference sd)")
    files["gao"] = str(write_bytes_atomic(out / "gao.png", _png(fig)))
    plt.close(fig)
    return files
