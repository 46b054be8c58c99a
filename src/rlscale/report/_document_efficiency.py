"""The report's section 5, and its items in the summary and the caveats: the
recommendation, judged honestly, and what the plan delivers trained.

Rendered from step 5's outcome alone
(:class:`~rlscale.report._outcomes_efficiency.EfficiencyOutcome`, whose ``as_dict()`` is
``results.json``'s ``efficiency``), like the rest of the document
(:mod:`rlscale.report._document`).
"""

from __future__ import annotations

from typing import Any

from rlscale._document import Document
from rlscale._document import format_value as _fmt
from rlscale.report._outcomes_efficiency import (
    VARIABLES,
    EfficiencyFallback,
    EfficiencyOutcome,
)

__all__ = ["bounded", "decision_summary", "efficiency_caveats", "efficiency_section",
           "eta_summary", "realised_text"]


def bounded(value: float, eta_bound: str, cost: bool = False) -> str:
    """``x`` (an estimate), ``≥ x`` or ``≤ x`` (a bound); a cost's bound is the opposite
    of η's.  An estimate carries no sign: a bare "=" before a number read as a typo."""
    sign = {"exact": "", "at least": "≥ ", "at most": "≤ "}[eta_bound]
    if cost:
        sign = {"": "", "≥ ": "≤ ", "≤ ": "> "}[sign]
    return f"{sign}{_fmt(value)}"


def realised_text(rl: Any) -> str:
    """A realised η (a :class:`~rlscale.optimize.RealisedEfficiency`) as the report prints
    it: bound, value and interval, or why not."""
    if rl.eta is None:
        return "cannot be estimated"
    tag = "" if rl.bound == "exact" else " (a bound)"
    return f"{bounded(rl.eta, rl.bound)}{tag} [{rl.interval[0]:.3g}, {rl.interval[1]:.3g}]"


def _percent(eff: EfficiencyOutcome | EfficiencyFallback) -> str:
    return f"{round(eff.confidence * 100)} %"


def _interval(value: float, interval: tuple[float, float], spec: str) -> str:
    """``value [low, high]``, each formatted by ``spec``."""
    return f"{value:{spec}} [{interval[0]:{spec}}, {interval[1]:{spec}}]"


def efficiency_section(doc: Document, eff: EfficiencyOutcome | EfficiencyFallback) -> None:
    """Section 5: the recommendation, judged honestly, and what the plan delivers trained
    (or, when the recommendation fell back, what the fallback deploys)."""
    if isinstance(eff, EfficiencyFallback):
        _fallback_section(doc, eff)
        return
    pct = _percent(eff)
    rec, cand = eff.recommendation, eff.candidate
    real = eff.realised
    doc.heading("5. The recommendation and what it delivers")
    doc.paragraph(
        f"What to run with the budget {real.budget:g}, judged by what it delivers once "
        "deployed (η_deployed: the plan chosen from the data, judged under the law that "
        "generates outcomes), not by the fit that chose it. The sweep is split by data "
        f"fission (τ = {rec.split:g}, log-noise scale {rec.sigma:.3g}) into a selection "
        "and an independent judgement copy. The strongest of the simple baselines (E, t or "
        "k alone from the sweep's centre, or all three in proportion, inside the allocation "
        "bounds) is named over the whole sweep's bootstrap laws, which judge the step "
        "proportional → strongest; on the selection copy rlscale picks the Bayes plan "
        "(least expected loss over that fit's bootstrap laws, each law's loss clipped to "
        "[0, 1] and the mean 10 % trimmed, so no law dominates), and the judgement copy, "
        "which that choice never saw, judges the step strongest → plan. "
        + ("Each step is taken " if rec.guard == "every step" else
           "The step that leaves proportional is taken ")
        + f"only if it beats the current choice under at least {rec.probability:.0%} of "
        f"its laws ({rec.n_laws.whole} whole-sweep laws, "
        f"{rec.n_laws.judgement} judgement laws)"
        + ("" if rec.guard == "every step" else
           "; once the whole sweep has put the strongest baseline ahead of proportional, "
           "the Bayes plan, then chosen on the sharper copy, is taken as the choice of least "
           "expected loss among the departures, its probability on the other copy reported")
        + ". η = B_baseline / B_plan is "
        "the baseline's cost over the cost at which the plan's budget path reaches the "
        "baseline's loss.")
    doc.paragraph(f"Recommendation: {rec.reason}.")
    doc.table(["recommended", "E", "t", "k", "status", "steps (P of each)"],
              [[rec.choice, *(rec.values[x] for x in VARIABLES), rec.status,
                "; ".join(f"{st.frm} → {st.to}: {st.p_beats:.2f}"
                          f"{'' if st.taken else ' (not taken)'}" for st in rec.steps)]])
    rows = []
    for name, b in eff.baselines.items():
        c = cand.comparisons.get(name)
        rows.append([name, *(b.values[x] for x in VARIABLES), b.cost,
                     "—" if c is None else _interval(c.eta, c.eta_interval, ".3g"),
                     "—" if c is None else f"{c.p_beats:.2f}",
                     "—" if c is None else _interval(c.gain, c.gain_interval, "+.4f"),
                     f"{b.plug_in_eta:.3g}", b.note or "—"])
    cv = cand.values or {}
    doc.paragraph(
        "The best plan found (E, t, k = "
        + ", ".join(f"{cv[x]:.3g}" for x in VARIABLES if x in cv)
        + ") against every baseline on the judgement copy: its η (the estimate of "
        f"η_deployed) with the {pct} interval over the judgement laws, the probability it "
        f"beats the baseline, and the loss it saves at equal cost with its {pct} interval. "
        "Beside it, the plug-in optimum of section 4 judged by the fit that chose it: that "
        "promise is biased up (the optimizer's curse) and is not a recommendation.")
    doc.table(["baseline", "E", "t", "k", "cost", f"plan's η ({pct})", "P(plan beats)",
               f"loss saved ({pct})", "plug-in's own η", "note"], rows)
    rows = []
    for name, comp in eff.comparisons.items():
        pred, rl, bs, diff = comp.predicted, comp.realised, comp.baseline_success, comp.difference
        agree = ("cannot tell" if rl.eta is None else
                 "yes" if comp.intervals_overlap else "no")
        rows.append([name, _interval(pred.eta, pred.interval, ".3g"), realised_text(rl), agree,
                     _interval(bs.estimate, (bs.low, bs.high), ".3f"),
                     _interval(diff.estimate, (diff.low, diff.high), "+.3f")])
    doc.paragraph(
        f"Trained ({len(real.seeds)} seeds): the plan is trained along its budget path and "
        "each baseline at its allocation; the realised η, the trainer's η_deployed of the "
        "plan, is read off a monotone (isotonic) fit of the plan's held-out success where it "
        "reaches the baseline's, with an interval that resamples seeds and refits; when the "
        "path's success does not measurably rise with cost it cannot be estimated, and the "
        "report says so instead of printing a number. '≤ x' marks a bound, not an estimate: "
        "no point of the plan's measured path reaches the baseline's success, so the plan "
        "would need more than the path's largest cost and η is at most x ('≥ x': the path's "
        "cheapest point already beats the baseline); the interval then partly bounds η "
        "too.")
    doc.table(["trained against", f"plan's η, judgement copy ({pct})",
               f"realised η ({pct})", "intervals agree", "baseline success",
               "plan − baseline at equal cost"], rows)
    doc.paragraph(
        "The same comparisons at equal real compute, and at equal optimiser updates: the "
        "trainer's updates grow with the tasks E·t and not with k, so arms of equal data cost "
        "can differ in updates. 'η by env steps' measures cost in environment steps; "
        "'equal updates' retrains the baseline with the plan's number of updates.")
    doc.table(["baseline", "updates (plan / baseline)", f"η by env steps ({pct})",
               f"plan − baseline, equal updates ({pct})"],
              [[name, f"{c.equal_cost.updates} / {c.equal_cost.baseline_updates}",
                realised_text(c.by_env_steps),
                _interval(d.estimate, (d.low, d.high), "+.3f")]
               for name, c in eff.comparisons.items() for d in [c.equal_updates.difference]])
    notes = [f"{name}: {c.realised.note}" for name, c in eff.comparisons.items()
             if c.realised.note]
    if notes:
        doc.paragraph("Realised η: " + "; ".join(notes) + ".")
    wide = [f"{n} ({c.eta_bounded:.0%})" for n, c in cand.comparisons.items()
            if c.eta_bounded > (1 - eff.confidence) / 2]
    if wide:
        doc.paragraph("Against " + ", ".join(wide) + " that share of the judgement laws put "
                      "the crossing outside the plan's path (budgets B/8 to 2B): the interval's "
                      "ends there (0.5 or 8) are bounds, not estimates.")
    plan = eff.plan
    iv = plan.allocation_intervals
    rob = plan.robust  # rlscale.optimize.RobustPlan
    doc.paragraph(
        "Uncertainty of the plug-in plan (section 4): its optimum under the full fit's "
        "bootstrap laws spans "
        + ", ".join(f"{x} ∈ [{iv[x][0]:.3g}, {iv[x][1]:.3g}]" for x in VARIABLES)
        + f"; the loss they predict at the plan lies in [{plan.loss_band[0]:.4f}, "
        f"{plan.loss_band[1]:.4f}]. The robust plan over those laws (bounded, trimmed "
        "mean loss) is E, t, k = " + ", ".join(f"{rob.values[x]:.3g}" for x in VARIABLES)
        + f": its expected loss is {rob.expected_loss:.4f}, "
        f"{plan.robust_gain:.2g} below the plug-in plan's, and it costs "
        f"{plan.robust_point_cost:.2g} of loss if the point law is right.")
    doc.table(["cost", "E", "t", "k", "fitted loss", "success (IQM)", f"{pct} CI"],
              [[p.cost, p.E, p.t, p.k, p.predicted_loss,
                p.success_iqm, f"[{p.ci_low:.3f}, {p.ci_high:.3f}]"]
               for p in real.optimal_path])
    doc.figure("efficiency.png", "The plug-in plan's η against the trajectories-only "
                                 "baseline's budget, as its own fit predicts it")
    doc.figure("realised.png", "Trained: the plan along its budget path against the "
                               "baselines; the plan's η on the judgement copy and realised "
                               "with their intervals")


def _success(iv: Any) -> str:
    """A held-out success (an :class:`~rlscale.simulate.Interval`) with its interval."""
    return _interval(iv.estimate, (iv.low, iv.high), ".3f")


def _difference(iv: Any) -> str:
    return _interval(iv.estimate, (iv.low, iv.high), "+.3f")


def _deployed_text(eff: EfficiencyFallback) -> str:
    """What the fallback deploys, trained: its success against the seed paper's baseline,
    and whether they compare at equal cost."""
    dep, pct = eff.deployed, _percent(eff)
    mine = dep.baselines[dep.recommended]
    said = (f"Trained at the budget ({len(dep.seeds)} seeds), {dep.recommended}'s held-out "
            f"success is {_success(mine.success)}")
    if dep.versus is None:
        return said + f" ({pct}); it is the seed paper's baseline itself."
    other = dep.baselines[dep.versus]
    said += (f" against {dep.versus}'s {_success(other.success)}: a difference of "
             f"{_difference(dep.difference)} ({pct} intervals)")
    a, b = mine.arm.cost, other.arm.cost
    if min(a, b) < 0.95 * max(a, b):  # a baseline at a bound spends less of the budget
        return (said + f", at costs {a:.4g} and {b:.4g}: what the budget buys each, not "
                "equal cost.")
    return said + f", at (nearly) equal cost ({a:.4g} and {b:.4g})."


def _fallback_section(doc: Document, eff: EfficiencyFallback) -> None:
    """Section 5 of a fallback: the baseline recommended and why, what it delivers
    trained, and what the section cannot hold without a plan (and why)."""
    pct = _percent(eff)
    rec, dep = eff.recommendation, eff.deployed
    doc.heading("5. The recommendation and what it delivers")
    doc.paragraph(
        f"What to run with the budget {dep.budget:g}. rlscale departs from the default "
        f"baseline ({rec.default}) only for a plan that beats it on data the plan's choice "
        "never saw (a fission copy of the sweep, judged over its bootstrap laws). Here no "
        "plan could be chosen and judged, so the recommendation falls back to the default "
        "baseline: it names no strongest simple baseline and judged no step of the "
        "sequence proportional → strongest → plan.")
    doc.paragraph(f"Recommendation: {rec.reason}.")
    doc.table(["recommended", "E", "t", "k", "status", "steps (P of each)"],
              [[rec.choice, *(rec.values[x] for x in VARIABLES), rec.status,
                "none judged"]])
    doc.table(["baseline at the budget", "E", "t", "k", "cost", "note"],
              [[name, *(b.values[x] for x in VARIABLES), b.cost, b.note or "—"]
               for name, b in eff.baselines.items()])
    doc.paragraph(
        "What the fallback delivers, trained: the recommended baseline"
        + ("" if dep.versus is None else f" and the seed paper's ({dep.versus})")
        + f" at their integer allocations of the budget, {len(dep.seeds)} seeds each, "
        f"with the held-out success's IQM and its {pct} interval over seeds. "
        + _deployed_text(eff)
        + " The trainer's updates grow with E·t, not k, so the arms need not have equal "
          "updates.")
    doc.table(["trained", "E", "t", "k", "cost", "updates", f"success (IQM, {pct})"],
              [[name, tb.arm.E, tb.arm.t, tb.arm.k, tb.arm.cost, tb.arm.updates,
                _success(tb.success)] for name, tb in dep.baselines.items()])
    doc.paragraph(
        "Not in this section, since there is no plan: no plan was trained along a budget "
        "path, so there is no predicted or realised η of a plan and no comparison of a "
        "plan with a baseline at equal cost, by environment steps or at equal updates; the "
        "plug-in optimum of section 4 was not judged and is not a recommendation (its "
        "uncertainty over the bootstrap laws and its own predicted η are not shown). "
        "results.json's efficiency.omitted lists each with why.")
    doc.paragraph(
        "Figures not drawn: the plug-in plan's predicted η along the budgets and the "
        "trained plan against the baselines both need a plan that could be judged.")


def decision_summary(eff: EfficiencyOutcome | EfficiencyFallback) -> str:
    """The summary's first item: what to run, the deployed-plan comparison and its
    probability -- a null or negative result first when that is what was found (for a
    fallback: the baseline, why, and what it delivers trained)."""
    if isinstance(eff, EfficiencyFallback):
        return (f"Recommendation: {eff.recommendation.reason}. No plan could be judged, so "
                "none is recommended and no probability that one beats the baseline can be "
                "stated. " + _deployed_text(eff))
    pct = _percent(eff)
    rec = eff.recommendation
    cand = eff.candidate.comparisons
    strongest = rec.strongest
    c = cand.get(strongest) or cand.get(rec.default)
    trained = eff.comparisons.get(strongest)
    said = ""
    if trained is not None:
        real = trained.realised
        said = (" Trained, the plan's realised η against it "
                + ("cannot be estimated (its success does not rise measurably along its "
                   "path)." if real.eta is None else f"{realised_text(real)}."))
    if rec.choice == "plan":
        return ("Recommendation: the plan E, t, k = "
                + ", ".join(f"{rec.values[x]:.3g}" for x in VARIABLES)
                + f". On data it was not chosen on it beats the strongest baseline "
                f"({strongest}) with probability {c.p_beats:.2f}; η = "
                f"{_interval(c.eta, c.eta_interval, '.3g')} ({pct}), loss saved at equal cost "
                f"{_interval(c.gain, c.gain_interval, '+.4f')}." + said)
    head = ("No detectable advantage over " + rec.choice + " at equal cost"
            if rec.choice == rec.default else
            f"{rec.choice} beats {rec.default}, and no plan beats {rec.choice} "
            "detectably")
    return (f"{head}: use the baseline ({rec.choice}). The best plan found beats "
            f"{strongest} with probability {c.p_beats:.2f} on data it was not chosen on "
            f"(needed: {rec.probability:g}); η = {_interval(c.eta, c.eta_interval, '.3g')}, "
            f"loss saved {_interval(c.gain, c.gain_interval, '+.4f')} ({pct})." + said)


def eta_summary(eff: EfficiencyOutcome | EfficiencyFallback) -> list[str]:
    """The summary's items on η: per trained baseline, the plan's η on the judgement copy
    and realised, and whether their intervals agree (none for a fallback: no plan)."""
    if isinstance(eff, EfficiencyFallback):
        return []
    pct = _percent(eff)
    items = []
    for name, comp in eff.comparisons.items():
        pred, rl = comp.predicted, comp.realised
        label = ("the strongest baseline" if name == eff.strongest
                 else "the seed paper's baseline")
        if name == eff.strongest and len(eff.comparisons) == 1:
            label = "the strongest baseline, which is also the seed paper's"
        if rl.eta is None:
            verdict = ("realised η cannot be estimated (the trained plan's success does not "
                       "measurably rise along its path), so nothing can agree with the "
                       "prediction.")
        else:
            verdict = (f"realised {realised_text(rl)} ({pct} intervals) — the intervals "
                       + ("agree." if comp.intervals_overlap else "do not overlap."))
        items.append(f"The plan's η against {label} ({name}): on the judgement copy "
                     f"{_interval(pred.eta, pred.interval, '.3g')}; {verdict}")
    return items


def efficiency_caveats(eff: EfficiencyOutcome | EfficiencyFallback) -> list[str]:
    """The caveats of section 5: the baselines' and realised η's notes, the curve's, the
    plug-in plan's and the recommendation's diagnostics, and what the fission copy
    resolves (for a fallback: what it leaves unjudged)."""
    out = [f"Baseline {name}: {row.note}." for name, row in eff.baselines.items() if row.note]
    if isinstance(eff, EfficiencyFallback):
        out += [f"Recommendation: {note}" for note in eff.recommendation.notes]
        out.append("The recommendation fell back to the default baseline (section 5 says "
                   "why): the law of section 3 and the plug-in plan of section 4 could not "
                   "be judged on data they were not fitted on; read the plug-in plan as an "
                   "unjudged promise, and fix the cause (a wider or denser sweep, more "
                   "seeds, more bootstrap resamples) before acting on any plan")
        return out
    out += [f"Realised η against {name}: {comp.realised.note}."
            for name, comp in eff.comparisons.items() if comp.realised.note]
    out += [*eff.curve_notes, *eff.plan.notes]
    out += [f"Recommendation: {note}" for note in eff.recommendation.notes]
    out.append("The recommendation is judged on a fission copy of the sweep with "
               f"{1 + 1 / eff.recommendation.split ** 2:.2g}× the sweep's noise variance: "
               "an advantage smaller than what that copy resolves is reported as no "
               "detectable advantage, not as a gain (python -m benchmarks.decision_study "
               "measures how often a recommendation pays off under known generating laws)")
    return out
