"""The report's figures (matplotlib, Agg backend): drawing only, no computation.

Each function takes what a step computed and writes one PNG.  Log axes carry
no minor ticks (:func:`log_scale`): the report's unlabelled minor ticks were a
third of a figure's drawing time (each is a tick object laid out twice, by the
layout and by the render), for marks that say nothing the labelled decades
and the gridless curves do not.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from rlscale.files._atomic import save_figure
from rlscale.report._config import AXES, SUBSTITUTE

__all__ = ["figure_allocation", "figure_eta", "figure_fits", "figure_realised", "log_scale",
           "pyplot"]


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_scale(ax, which: str = "x") -> None:
    """Log scale on the axes ``which`` (``"x"``, ``"y"`` or ``"xy"``) of ``ax``, without
    minor ticks."""
    from matplotlib.ticker import NullLocator

    for name in which:
        getattr(ax, f"set_{name}scale")("log")
        getattr(ax, f"{name}axis").set_minor_locator(NullLocator())


def _band(laws, points, confidence: float):
    """Pointwise percentile band of the bootstrap laws' loss at ``points`` (axis -> array).

    The same band as :meth:`rlscale.optimize.FitResult.predict_band` (the
    ``(1 − confidence)/2`` and ``(1 + confidence)/2`` percentiles over the
    usable bootstrap laws, ``None`` below 20 of them) with one vectorised
    ``law.loss`` call per law instead of one per law and point: with 1,000
    resamples the per-point form cost more than every other figure together.
    """
    if len(laws) < 20:  # predict_band's rule: too few laws for a band
        return None
    preds = np.array([np.asarray(law.loss(points), dtype=float) for law in laws])
    tail = (1 - confidence) / 2 * 100
    return np.percentile(preds, tail, axis=0), np.percentile(preds, 100 - tail, axis=0)


def figure_fits(fit, summary, cfg, path: Path, laws=None) -> None:
    """The sweep's per-axis data, the fitted law and its bootstrap band.

    ``cfg`` is the report's :class:`~rlscale.report._config_tree.ReportConfig`;
    ``laws`` are ``fit.bootstrap_laws()`` when the caller has them already.
    """
    plt = pyplot()

    laws = fit.bootstrap_laws() if laws is None else laws
    base = cfg.sweep.base.point()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    shown: list[float] = []  # the y-range: data, intervals and fitted curves, not the band
    for ax, knob in zip(axes, AXES):
        pts = [s for s in summary if all(s[k] == base[k] for k in AXES if k != knob)]
        pts.sort(key=lambda s: s[knob])
        xs = np.array([s[knob] for s in pts], dtype=float)
        loss = np.array([1 - s["success_iqm"] for s in pts])
        # Loss = 1 − success, so the success interval's upper end is the loss's lower end.
        err = np.array([[s["ci_high"] - s["success_iqm"] for s in pts],
                        [s["success_iqm"] - s["ci_low"] for s in pts]])
        ax.errorbar(xs, loss, yerr=err, fmt="o", color="k", capsize=3,
                    label=f"sweep (IQM, {round(fit.confidence * 100)}% CI)")
        grid = np.geomspace(xs.min(), xs.max(), 60)
        # One vectorised call per law (the others at the sweep's centre), not one per point.
        points = {**{k: np.full(grid.size, float(base[k])) for k in AXES}, knob: grid}
        curve = np.asarray(fit.predict(points), dtype=float)
        ax.plot(grid, curve, color="C0", label="fitted law")
        shown += [*curve, *(loss - err[0]), *(loss + err[1])]
        band = _band(laws, points, fit.confidence)
        if band is not None:
            ax.fill_between(grid, band[0], band[1], color="C0", alpha=0.2,
                            label=f"{int(fit.confidence * 100)}% bootstrap band")
        log_scale(ax)
        ax.set_xlabel(knob.replace("_", " "))
        others = ", ".join(f"{SUBSTITUTE[k]}={base[k]}" for k in AXES if k != knob)
        ax.set_title(f"{knob.replace('_', ' ')} varies ({others})", fontsize=10)
    # A poorly identified resample can put the band's edge orders of magnitude
    # above the data (seen: 900 against losses below 1); it must not set the scale.
    lo, hi = min(shown), max(shown)
    pad = 0.1 * (hi - lo) or 0.05
    axes[0].set_ylim(max(lo - pad, 0.0), hi + pad)
    axes[0].set_ylabel("held-out loss = 1 − success")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)  # atomic, inside the output (rlscale.files)
    plt.close(fig)


def figure_allocation(curve, budgets, path: Path) -> None:
    plt = pyplot()

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for var, label in (("E", "environments E"), ("t", "tasks per environment t"),
                       ("k", "trajectories per task k")):
        left.plot(budgets, [a.values[var] for a in curve], marker="o", ms=3, label=label)
    log_scale(left, "xy")
    left.set_xlabel("budget")
    left.set_ylabel("optimal allocation")
    left.legend(fontsize=8)
    terms = list(curve[0].shares)
    shares = np.array([[a.shares[t] for t in terms] for a in curve])
    # The cost's terms, named by what they buy (c_E·E, c_T·E·t, c_τ·E·t·k).
    names = {1: "environments", 2: "tasks", 3: "trajectories"}
    labels = [f"{names.get(len(t.split('*')), t)} ({t})" for t in terms]
    right.stackplot(budgets, shares.T, labels=labels)
    log_scale(right)
    right.set_ylim(0, 1)
    right.set_xlabel("budget")
    right.set_ylabel("share of budget")
    right.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)  # atomic, inside the output (rlscale.files)
    plt.close(fig)


def figure_eta(curve, path: Path) -> None:
    """The plug-in plan's predicted η along the baseline's budgets (``curve``: the
    :class:`~rlscale.report._outcomes_efficiency.CurveRow` of each budget)."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.8))
    shown = [c for c in curve if math.isfinite(c.eta)]
    ax.plot([c.budget for c in shown], [c.eta for c in shown], marker="o", ms=3)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    log_scale(ax)
    ax.set_xlabel("budget of the trajectories-only baseline")
    ax.set_ylabel("predicted η = B_baseline / B_optimal")
    ax.set_title("iso-loss efficiency against scaling trajectories alone")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)  # atomic, inside the output (rlscale.files)
    plt.close(fig)


def figure_realised(eff, path: Path) -> None:
    """The plan trained along its budget path against the trained baselines, and its η
    predicted (judgement copy) and realised (``eff``: the
    :class:`~rlscale.report._outcomes_efficiency.EfficiencyOutcome`)."""
    plt = pyplot()

    pct = round(eff.confidence * 100)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    pts = eff.realised.optimal_path
    left.errorbar([p.cost for p in pts], [p.success_iqm for p in pts],
                  yerr=[[p.success_iqm - p.ci_low for p in pts],
                        [p.ci_high - p.success_iqm for p in pts]],
                  fmt="o-", capsize=3, label="the plan along its budget path")
    for i, (name, comp) in enumerate(eff.comparisons.items()):
        b = comp.baseline_success
        colour = f"C{3 + i}"
        left.errorbar([comp.baseline.cost], [b.estimate],
                      yerr=[[b.estimate - b.low], [b.high - b.estimate]],
                      fmt="s", color=colour, capsize=3, label=f"baseline: {name}")
        left.axhline(b.estimate, color=colour, lw=0.8, ls=":")
    log_scale(left)
    left.set_xlabel("cost")
    left.set_ylabel(f"held-out success (IQM, {pct}% CI)")
    left.legend(fontsize=8)
    labels, values, errors, colours = [], [], [[], []], []
    for name, comp in eff.comparisons.items():
        pred, rl = comp.predicted, comp.realised
        bars = [(f"predicted\n{name}", pred.eta, pred.interval, "C0")]
        if rl.eta is not None:  # a realised η that is "not estimable" has no bar
            shown = {"exact": "", "at least": " (≥)", "at most": " (≤)"}[rl.bound]
            bars.append((f"realised{shown}\n{name}", rl.eta, rl.interval, "C3"))
        for label, value, (lo, hi), colour in bars:
            labels.append(label)
            values.append(value)
            errors[0].append(max(value - lo, 0.0))
            errors[1].append(max(hi - value, 0.0))
            colours.append(colour)
    right.bar(labels, values, yerr=errors, capsize=4, color=colours)
    right.axhline(1.0, color="grey", lw=0.8, ls="--")
    right.set_ylabel(f"η = B_baseline / B_optimal ({pct}% interval)")
    right.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)  # atomic, inside the output (rlscale.files)
    plt.close(fig)
