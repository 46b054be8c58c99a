"""Files, figures and the text summary of the testbed's reward-law verification.

``results.json`` (everything but the grid rows), ``grid.csv`` (one row per group ×
``M`` × ``K``), ``groups.csv`` (one row per group: scores, winner, regime, ``γ``) and,
with matplotlib, ``phase.png`` (the phase diagram: each group's LOMO regime with
its ``γ``), ``local_gamma.png`` (the local exponent of the plateau along ``M``,
bands shaded) and ``gain_vs_m.png`` (``G_top`` against ``log M`` per cell).
Every file is written atomically (:mod:`rlscale.files`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import make_output_dir

__all__ = ["summary_text", "write_files", "write_testbed_figures"]

_GRID_COLS = ["cell", "rm", "noise", "optimiser", "M", "K", "G", "G_lo", "G_hi", "reached"]
_REGIME_COLOURS = {"law": "#1b9e77", "saturating": "#d95f02", "no M law": "#7570b3",
                   "interpolation": "#e6ab02"}


def _ci(v: float | None, ci: list[float] | None, fmt: str = ".2f") -> str:
    if v is None:
        return "n/a"
    return f"{v:{fmt}}" + (f" [{ci[0]:{fmt}}, {ci[1]:{fmt}}]" if ci else "")


def law_text(row: dict[str, Any]) -> str:
    """The law's ``a, b, c`` of a group row: identified values with intervals, boundary
    estimates labelled, the rest 'not identified'.

    Examples
    --------
    >>> row = {"verdict": "interior", "law": {"a": 1.0, "b": -2.302585, "c": 0.5},
    ...        "law_ci": {"a": [0.9, 1.1], "b": None, "c": [0.4, 0.6]},
    ...        "identified": {"a": True, "b": True, "c": True},
    ...        "boundary": {"b": "on the clamp corner -log M = -2.303"}}
    >>> law_text(row)
    'a = 1 [0.9, 1.1], b = -2.3 (boundary: on the clamp corner -log M = -2.303), c = 0.5 [0.4, 0.6]'
    """
    if row.get("verdict") is None:
        return row["identification"]
    parts = []
    for p in "abc":
        if not row["identified"][p]:
            parts.append(f"{p} not identified")
        elif p in row["boundary"]:
            parts.append(f"{p} = {row['law'][p]:.3g} (boundary: {row['boundary'][p]})")
        else:
            ci = row["law_ci"][p]
            parts.append(f"{p} = {row['law'][p]:.3g}" + (f" [{ci[0]:.3g}, {ci[1]:.3g}]"
                                                          if ci else ""))
    return ", ".join(parts)


def summary_text(rep: Any) -> str:
    lines = [f"testbed ({rep.mode}, {rep.design['seeds']} seeds; design pre-registered in "
             "rlscale.verification._rm_testbed_design): leave-one-M-out RMSE "
             "of the law a*sqrt(min(log M + b, c*K)) against its competitors; "
             "gamma: G_top ~ (log M)^gamma, 95% jackknife interval over seeds",
             f"{'cell':>9} {'groups':>6} {'law>named':>9} {'law>all':>7} {'LOKO':>5} "
             f"{'gamma med':>9} {'1/2 in CI':>9} {'overopt':>7}  verdict"]
    for c in rep.cells:
        verdict = ("supports sqrt(log M)" if c["supports_sqrt_log_m"] else
                   "supports the law" if c["supports_law"] else "does not support the law")
        gm = "n/a" if c["gamma_median"] is None else f"{c['gamma_median']:.2f}"
        lines.append(f"{c['cell']:>9} {c['groups']:6d} {c['law_beats_named_lomo']:9.0%} "
                     f"{c['law_beats_all_lomo']:7.0%} {c['law_beats_named_loko']:5.0%} "
                     f"{gm:>9} {c['sqrt_log_m_share']:9.0%} "
                     f"{c['over_optimised_groups']:7d}  {verdict}")
    lines.append("exploratory (after the run, outside the pre-registered rule): the law's "
                 "log M side alone, a*sqrt(log M + b)*sqrt(min(1, C*K)), beats the named "
                 "competitors leave-one-M-out in "
                 + ", ".join(f"{c['cell']} {c['exploratory_sqrt_log_m_side_beats_named_lomo']:.0%}"
                             for c in rep.cells) + " of the groups")
    lines.append(f"{'cell':>9} {'rm':>8} {'s':>4} {'opt':>4} {'LOMO winner':>14} "
                 f"{'law':>6} {'best':>6} {'gamma [95%]':>20} {'top decade':>18}  law")
    for g in rep.groups:
        lomo = g["lomo_rmse"]
        best = lomo[g["lomo_winner"]] if g["lomo_winner"] else None
        lines.append(
            f"{g['cell']:>9} {g['rm']:>8} {g['noise']:4.1f} {g['optimiser']:>4} "
            f"{g['lomo_winner'] or 'n/a':>14} {_ci(lomo.get('law'), None, '.3f'):>6} "
            f"{_ci(best, None, '.3f'):>6} {_ci(g['gamma'], g['gamma_ci']):>20} "
            f"{_ci(g['top_decade_growth'], g['top_decade_growth_ci']):>18}  {law_text(g)}"
            + ("  [over-optimised]" if g["breaks"] else ""))
    lines.append(f"{len(rep.points)} grid points; {rep.seconds:.1f} s wall, "
                 f"{rep.cpu_seconds:.1f} s CPU (load {rep.load[0]:.1f} -> {rep.load[-1]:.1f})"
                 + (f"; {rep.resumed_tasks} tasks resumed from checkpoints"
                    if rep.resumed_tasks else ""))
    return "\n".join(lines)


_GROUP_COLS = ["cell", "rm", "noise", "optimiser", "lomo_winner", "regime", "loko_winner",
               "law_beats_named_lomo", "law_beats_all_lomo", "law_beats_named_loko", "verdict",
               "lr", "lr_p_value", "gamma", "gamma_lo", "gamma_hi", "top_decade_growth",
               "efficiency_at_M_max", "over_optimised"]


def _group_csv_rows(rep: Any) -> list[dict[str, Any]]:
    out = []
    for g in rep.groups:
        r = {c: g.get(c) for c in _GROUP_COLS}
        r["gamma_lo"], r["gamma_hi"] = g["gamma_ci"] or (None, None)
        r["over_optimised"] = bool(g["breaks"])
        for m, v in g["lomo_rmse"].items():
            r[f"lomo_{m}"] = v
        for m, v in g["loko_rmse"].items():
            r[f"loko_{m}"] = v
        out.append(r)
    return out


def _csv(rows: list[dict[str, Any]], cols: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_files(rep: Any, out: Path, figures: bool) -> Any:
    from rlscale.files._atomic import write_json_atomic, write_text_atomic

    make_output_dir(out)
    files = {"grid": str(write_text_atomic(out / "grid.csv", _csv(rep.points, _GRID_COLS)))}
    rows = _group_csv_rows(rep)
    cols = list(rows[0]) if rows else _GROUP_COLS
    files["groups"] = str(write_text_atomic(out / "groups.csv", _csv(rows, cols)))
    if figures:
        files.update(write_testbed_figures(rep, out))
    files["json"] = str(out / "results.json")
    rep = replace(rep, files=files)
    write_json_atomic(out / "results.json", rep.as_dict())
    return rep


def write_testbed_figures(rep: Any, out: str | Path) -> dict[str, str]:
    """Write ``phase.png``, ``local_gamma.png`` and ``gain_vs_m.png`` (matplotlib, Agg)."""
    from rlscale._optional import require
    from rlscale.files._atomic import save_figure

    mpl = require("matplotlib", extra="plot", purpose="testbed figures")
    mpl.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    out = Path(out)
    files = {}
    cells = [c["cell"] for c in rep.cells]
    cols = sorted({(g["rm"], g["noise"]) for g in rep.groups},
                  key=lambda t: (t[0] != "bayes", t[0], t[1]))
    opts = [o for o in ("soft", "bon", "pg") if any(g["optimiser"] == o for g in rep.groups)]
    fig, axes = plt.subplots(1, len(opts), figsize=(3.0 + 1.6 * len(cols) * len(opts),
                                                    1.0 + 0.62 * len(cells)), squeeze=False)
    for ax, opt in zip(axes[0], opts):
        for i, name in enumerate(cells):
            for j, (rm, s) in enumerate(cols):
                g = next((g for g in rep.groups if (g["cell"], g["rm"], g["noise"],
                                                    g["optimiser"]) == (name, rm, s, opt)), None)
                if g is None:
                    ax.add_patch(plt.Rectangle((j, i), 1, 1, color="#f0f0f0"))
                    continue
                ax.add_patch(plt.Rectangle((j, i), 1, 1, alpha=0.85,
                                           color=_REGIME_COLOURS.get(g["regime"], "#cccccc")))
                txt = "γ n/a" if g["gamma"] is None else f"γ {g['gamma']:.2f}"
                if g["gamma_ci"]:
                    txt += f"\n[{g['gamma_ci'][0]:.2f}, {g['gamma_ci'][1]:.2f}]"
                if g["breaks"]:
                    txt += "\nover-opt."
                ax.text(j + 0.5, i + 0.5, txt, ha="center", va="center", fontsize=6)
        ax.set_xlim(0, len(cols))
        ax.set_ylim(len(cells), 0)
        ax.set_xticks(np.arange(len(cols)) + 0.5, [f"{rm}\ns={s:g}" for rm, s in cols],
                      fontsize=7)
        ax.set_yticks(np.arange(len(cells)) + 0.5, cells, fontsize=7)
        ax.set_title(f"{opt}: leave-one-M-out winner", fontsize=9)
    fig.legend(handles=[Patch(color=c, label=r) for r, c in _REGIME_COLOURS.items()],
               loc="lower center", ncol=4, fontsize=7)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    files["phase"] = str(save_figure(fig, out / "phase.png", dpi=110, bbox_inches="tight"))
    plt.close(fig)

    fig, axes = plt.subplots(1, len(opts), figsize=(4.6 * len(opts), 3.8), squeeze=False,
                             sharey=True)
    cmap = plt.get_cmap("tab10")
    for ax, opt in zip(axes[0], opts):
        ax.axhspan(-10, 0.2, color="#fde0c5", alpha=0.5)
        ax.axhspan(1.0, 100, color="#d9f0d3", alpha=0.5)
        ax.axhline(0.5, color="k", lw=0.6, ls="--")
        for n, name in enumerate(cells):
            sel = [r for r in rep.local_gamma if r["cell"] == name and r["rm"] == "bayes"
                   and r["noise"] == 1.0 and r["optimiser"] == opt and r["gamma"] is not None]
            if not sel:
                continue
            x = [np.sqrt(r["M_lo"] * r["M_hi"]) for r in sel]
            y = [r["gamma"] for r in sel]
            ax.plot(x, y, "o-", ms=3, color=cmap(n), label=name)
            lo = [r["gamma_ci"][0] if r["gamma_ci"] else r["gamma"] for r in sel]
            hi = [r["gamma_ci"][1] if r["gamma_ci"] else r["gamma"] for r in sel]
            ax.fill_between(x, lo, hi, color=cmap(n), alpha=0.12)
        ax.set_xscale("log")
        ax.set_ylim(-1.0, 4.0)
        ax.set_xlabel("M (between neighbouring levels)")
        ax.set_title(f"{opt}, bayes RM, s = 1: local γ of G_top", fontsize=9)
        ax.legend(fontsize=6)
    axes[0][0].set_ylabel("d log G_top / d log log M  (½: √log M)")
    fig.tight_layout()
    files["local_gamma"] = str(save_figure(fig, out / "local_gamma.png", dpi=110,
                                           bbox_inches="tight"))
    plt.close(fig)

    fig, axes = plt.subplots(1, len(opts), figsize=(4.6 * len(opts), 3.8), squeeze=False)
    for ax, opt in zip(axes[0], opts):
        for n, name in enumerate(cells):
            g = next((g for g in rep.groups if (g["cell"], g["rm"], g["noise"],
                                                g["optimiser"]) == (name, "bayes", 1.0, opt)),
                     None)
            if g is None or not g["G_top"]:
                continue
            ax.plot(np.log(g["M"]), g["G_top"], "o-", ms=3, color=cmap(n), label=name)
        ax.set_xlabel("log M")
        ax.set_title(f"{opt}, bayes RM, s = 1: gain at the largest common K", fontsize=9)
        ax.legend(fontsize=6)
    axes[0][0].set_ylabel("gold gain (reference sd)")
    fig.tight_layout()
    files["gain_vs_m"] = str(save_figure(fig, out / "gain_vs_m.png", dpi=110,
                                         bbox_inches="tight"))
    plt.close(fig)
    return files
