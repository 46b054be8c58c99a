"""One-screen text summaries: the ``repr`` of the main results (issue 24).

A result printed at the prompt used to be its dataclass ``repr``: every field, residual
arrays and nested records included (75,000 characters for a
:class:`~rlscale.optimize.PlanUncertainty`).  These summaries keep what a person reads
first -- the numbers with their intervals and the level they are at, the status, the
diagnostics by code -- in at most :data:`MAX_LINES` lines; every field is still an
attribute, and ``as_dict()`` holds everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_LINES", "fit_summary", "plan_summary", "recommendation_summary"]

#: Most lines of a summary (one terminal screen).
MAX_LINES = 30
#: Most rows of a table before the rest is counted.
_ROWS = 16


def _g(x: Any) -> str:
    try:
        return f"{float(x):.4g}"
    except (TypeError, ValueError):
        return str(x)


def _table(rows: Sequence[tuple[str, Any, tuple[Any, Any] | None]], head: tuple[str, str]
           ) -> list[str]:
    """``name value [low, high]`` rows, aligned, at most :data:`_ROWS` of them."""
    width = max([len(head[0]), *(len(r[0]) for r in rows[:_ROWS])]) + 2
    out = [f"  {head[0]:<{width}}{head[1]:>11}   interval"]
    for name, value, iv in rows[:_ROWS]:
        text = "" if iv is None else f"[{_g(iv[0])}, {_g(iv[1])}]"
        out.append(f"  {name:<{width}}{_g(value):>11}   {text}".rstrip())
    if len(rows) > _ROWS:
        out.append(f"  ... {len(rows) - _ROWS} more (see .params / .intervals)")
    return out


def _warnings(warnings: Sequence[Any]) -> list[str]:
    if not warnings:
        return ["  diagnostics: none"]
    out = [f"  diagnostics ({len(warnings)}; str() of each gives its message and fix):"]
    for w in warnings[:6]:
        where = ", ".join(w.parameters or w.axes)
        out.append(f"    [{w.code}]" + (f" {where}" if where else ""))
    if len(warnings) > 6:
        out.append(f"    ... {len(warnings) - 6} more (.warnings)")
    return out


def fit_summary(fit: Any) -> str:
    """The ``repr`` of a :class:`FitResult` or :class:`ExpressionFit`."""
    kind = type(fit).__name__
    if kind == "FitResult":
        what = f"{fit.law.family} law on {', '.join(fit.axes)} ({fit.target})"
    else:
        targets = ", ".join(fit.targets) if fit.targets else "y"
        what = f"{fit.law.expr} on {', '.join(fit.law.axes)} ({targets})"
    n_boot = getattr(fit, "n_bootstrap", 0)
    source = getattr(fit, "interval_method", "bootstrap")
    level = (f"{fit.confidence:.0%} {source} intervals"
             + (f" ({n_boot} resamples)" if source == "bootstrap" else "")
             if fit.intervals else "no intervals (bootstrap=0)")
    lines = [f"{kind}: {what}", f"  {fit.n_points} points, {fit.status}; {level}"]
    lines += _table([(k, v, fit.intervals.get(k)) for k, v in fit.params.items()],
                    ("parameter", "value"))
    extra = (fit.extrapolation if kind == "FitResult" else fit.extra.get("extrapolation", {}))
    err = extra.get("mean_abs_rel_error") if isinstance(extra, Mapping) else None
    lines.append(f"  R² {_g(fit.r2)}, RMSE(log) {_g(fit.rmse_log)}, AIC {_g(fit.aic)}, "
                 f"BIC {_g(fit.bic)}"
                 + ("" if err is None else f", hold-out error {_g(err)}"))
    lines += _warnings(fit.warnings)
    return "\n".join(lines)


def plan_summary(unc: Any) -> str:
    """The ``repr`` of a :class:`PlanUncertainty`."""
    plan = unc.point.plan
    lines = [f"PlanUncertainty: budget {_g(unc.budget)}, {unc.confidence:.0%} intervals over "
             f"{unc.n_laws} bootstrap laws"
             + (f" ({unc.n_skipped} skipped)" if unc.n_skipped else ""),
             "  the plug-in plan, judged by the fit that chose it (optimistic: see "
             "recommend for a decision)"]
    rows = [(k, v, unc.allocation_intervals.get(k)) for k, v in plan.values.items()]
    rows.append(("loss at the plan", plan.loss, unc.loss_band))
    lines += _table(rows, ("variable", "plan"))
    lines.append(f"  eta against each baseline ({unc.method} intervals; strongest "
                 f"{unc.strongest}):")
    for name, row in list(unc.point.baselines.items())[:_ROWS]:
        lo, hi = unc.eta_intervals[name]
        lines.append(f"    {name}: {_g(row['eta'])} [{_g(lo)}, {_g(hi)}]")
    lines.append("  robust plan: " + ", ".join(f"{k}={_g(v)}"
                                              for k, v in unc.robust.values.items())
                 # two digits: these differences of expected losses are solver-tolerance
                 # small when the laws agree (1e-4 here, moving in the third digit)
                 + f" (expected loss {unc.robust_gain:.2g} lower; "
                 f"{unc.robust_point_cost:.2g} higher if the point law is right)")
    return "\n".join(lines[:MAX_LINES])


def recommendation_summary(rec: Any) -> str:
    """The ``repr`` of a :class:`Recommendation`."""
    lines = [f"Recommendation: {rec.choice} (status {rec.status}, method {rec.method}, "
             f"needs P(beats) >= {rec.probability:g}; {rec.confidence:.0%} intervals)",
             f"  {rec.reason}"]
    lines += [f"  {k} = {_g(v)}" for k, v in list(rec.values.items())[:_ROWS]]
    lines.append("  against each baseline, judged on the fission copy the choice never saw:")
    for name, c in list(rec.comparisons.items())[:_ROWS]:
        lines.append(f"    {name}: eta {_g(c.eta)} [{_g(c.eta_interval[0])}, "
                     f"{_g(c.eta_interval[1])}], P(beats) {c.p_beats:.2f}, "
                     f"loss saved {c.gain:+.4g}")
    if rec.notes:
        lines.append(f"  {len(rec.notes)} notes (.notes)")
    return "\n".join(lines[:MAX_LINES])
