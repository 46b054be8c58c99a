"""The report's section 5 and the summary's first item: the recommendation, judged honestly.

Built from the plain-data efficiency section alone (what ``results.json`` holds), like the
rest of the document (:mod:`rlscale.report._document`).
"""

from __future__ import annotations

from rlscale._document import Document
from rlscale._document import format_value as _fmt

__all__ = ["bounded", "decision_summary", "efficiency_section", "realised_text"]


def bounded(value: float, eta_bound: str, cost: bool = False) -> str:
    """``x`` (an estimate), ``≥ x`` or ``≤ x`` (a bound); a cost's bound is the opposite
    of η's.  An estimate carries no sign: a bare "=" before a number read as a typo."""
    sign = {"exact": "", "at least": "≥ ", "at most": "≤ "}[eta_bound]
    if cost:
        sign = {"": "", "≥ ": "≤ ", "≤ ": "> "}[sign]
    return f"{sign}{_fmt(value)}"


def realised_text(rl) -> str:
    """A realised η as the report prints it: bound, value and interval, or why not."""
    if rl["eta"] is None:
        return "cannot be estimated"
    tag = "" if rl["bound"] == "exact" else " (a bound)"
    return (f"{bounded(rl['eta'], rl['bound'])}{tag} [{rl['interval'][0]:.3g}, "
            f"{rl['interval'][1]:.3g}]")


def efficiency_section(doc: Document, eff) -> None:
    """Section 5: the recommendation, judged honestly, and what the plan delivers trained."""
    pct = f"{round(eff['confidence'] * 100)} %"
    rec, cand = eff["recommendation"], eff["candidate"]
    real = eff["realised"]
    doc.heading("5. The recommendation and what it delivers")
    doc.paragraph(
        f"What to run with the budget {real['budget']:g}, judged by what it delivers once "
        "deployed (η_deployed: the plan chosen from the data, judged under the law that "
        "generates outcomes), not by the fit that chose it. The sweep is split by data "
        f"fission (τ = {rec['split']:g}, log-noise scale {rec['sigma']:.3g}) into a selection "
        "and an independent judgement copy. The strongest of the simple baselines (E, t or "
        "k alone from the sweep's centre, or all three in proportion, inside the allocation "
        "bounds) is named over the whole sweep's bootstrap laws, which judge the step "
        "proportional → strongest; on the selection copy rlscale picks the Bayes plan "
        "(least expected loss over that fit's bootstrap laws, each law's loss clipped to "
        "[0, 1] and the mean 10 % trimmed, so no law dominates), and the judgement copy, "
        "which that choice never saw, judges the step strongest → plan. "
        + ("Each step is taken " if rec.get("guard", "every step") == "every step" else
           "The step that leaves proportional is taken ")
        + f"only if it beats the current choice under at least {rec['probability']:.0%} of "
        f"its laws ({rec['n_laws'].get('whole', 0)} whole-sweep laws, "
        f"{rec['n_laws']['judgement']} judgement laws)"
        + ("" if rec.get("guard", "every step") == "every step" else
           "; once the whole sweep has put the strongest baseline ahead of proportional, "
           "the Bayes plan, then chosen on the sharper copy, is taken as the choice of least "
           "expected loss among the departures, its probability on the other copy reported")
        + ". η = B_baseline / B_plan is "
        "the baseline's cost over the cost at which the plan's budget path reaches the "
        "baseline's loss.")
    doc.paragraph(f"Recommendation: {rec['reason']}.")
    v = rec["values"]
    doc.table(["recommended", "E", "t", "k", "status", "steps (P of each)"],
              [[rec["choice"], v["E"], v["t"], v["k"], rec["status"],
                "; ".join(f"{st['frm']} → {st['to']}: {st['p_beats']:.2f}"
                          f"{'' if st['taken'] else ' (not taken)'}" for st in rec["steps"])]])
    rows = []
    for name, b in eff["baselines"].items():
        c = cand["comparisons"].get(name)
        rows.append([name, b["values"]["E"], b["values"]["t"], b["values"]["k"], b["cost"],
                     "—" if c is None else f"{c['eta']:.3g} [{c['eta_interval'][0]:.3g}, "
                                           f"{c['eta_interval'][1]:.3g}]",
                     "—" if c is None else f"{c['p_beats']:.2f}",
                     "—" if c is None else f"{c['gain']:+.4f} [{c['gain_interval'][0]:+.4f}, "
                                           f"{c['gain_interval'][1]:+.4f}]",
                     f"{b['plug_in_eta']:.3g}", b["note"] or "—"])
    cv = cand["values"] or {}
    doc.paragraph(
        "The best plan found (E, t, k = "
        + ", ".join(f"{cv[x]:.3g}" for x in ("E", "t", "k") if x in cv)
        + ") against every baseline on the judgement copy: its η (the estimate of "
        f"η_deployed) with the {pct} interval over the judgement laws, the probability it "
        f"beats the baseline, and the loss it saves at equal cost with its {pct} interval. "
        "Beside it, the plug-in optimum of section 4 judged by the fit that chose it: that "
        "promise is biased up (the optimizer's curse) and is not a recommendation.")
    doc.table(["baseline", "E", "t", "k", "cost", f"plan's η ({pct})", "P(plan beats)",
               f"loss saved ({pct})", "plug-in's own η", "note"], rows)
    rows = []
    for name, comp in eff["comparisons"].items():
        pred, rl, bs = comp["predicted"], comp["realised"], comp["baseline_success"]
        agree = ("cannot tell" if rl["eta"] is None else
                 "yes" if comp["intervals_overlap"] else "no")
        rows.append([name, f"{pred['eta']:.3g} [{pred['interval'][0]:.3g}, "
                           f"{pred['interval'][1]:.3g}]", realised_text(rl), agree,
                     f"{bs['estimate']:.3f} [{bs['low']:.3f}, {bs['high']:.3f}]",
                     f"{comp['difference']['estimate']:+.3f} [{comp['difference']['low']:+.3f}, "
                     f"{comp['difference']['high']:+.3f}]"])
    doc.paragraph(
        f"Trained ({len(real['seeds'])} seeds): the plan is trained along its budget path and "
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
              [[name, f"{c['equal_cost']['updates']} / {c['equal_cost']['baseline_updates']}",
                realised_text(c["by_env_steps"]),
                "{estimate:+.3f} [{low:+.3f}, {high:+.3f}]".format(
                    **c["equal_updates"]["difference"])]
               for name, c in eff["comparisons"].items()])
    notes = [f"{name}: {c['realised']['note']}" for name, c in eff["comparisons"].items()
             if c["realised"]["note"]]
    if notes:
        doc.paragraph("Realised η: " + "; ".join(notes) + ".")
    wide = [f"{n} ({c['eta_bounded']:.0%})" for n, c in cand["comparisons"].items()
            if c.get("eta_bounded", 0) > (1 - eff["confidence"]) / 2]
    if wide:
        doc.paragraph("Against " + ", ".join(wide) + " that share of the judgement laws put "
                      "the crossing outside the plan's path (budgets B/8 to 2B): the interval's "
                      "ends there (0.5 or 8) are bounds, not estimates.")
    plan = eff["plan"]
    iv = plan["allocation_intervals"]
    rob = plan["robust"]
    doc.paragraph(
        "Uncertainty of the plug-in plan (section 4): its optimum under the full fit's "
        "bootstrap laws spans "
        + ", ".join(f"{x} ∈ [{iv[x][0]:.3g}, {iv[x][1]:.3g}]" for x in ("E", "t", "k"))
        + f"; the loss they predict at the plan lies in [{plan['loss_band'][0]:.4f}, "
        f"{plan['loss_band'][1]:.4f}]. The robust plan over those laws (bounded, trimmed "
        f"mean loss) is E, t, k = {rob['values']['E']:.3g}, {rob['values']['t']:.3g}, "
        f"{rob['values']['k']:.3g}: its expected loss is {rob['expected_loss']:.4f}, "
        f"{plan['robust_gain']:.2g} below the plug-in plan's, and it costs "
        f"{plan['robust_point_cost']:.2g} of loss if the point law is right.")
    doc.table(["cost", "E", "t", "k", "fitted loss", "success (IQM)", f"{pct} CI"],
              [[p["cost"], p["E"], p["t"], p["k"], p["predicted_loss"],
                p["success_iqm"], f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}]"]
               for p in real["optimal_path"]])
    doc.figure("efficiency.png", "The plug-in plan's η against the trajectories-only "
                                 "baseline's budget, as its own fit predicts it")
    doc.figure("realised.png", "Trained: the plan along its budget path against the "
                               "baselines; the plan's η on the judgement copy and realised "
                               "with their intervals")


def decision_summary(eff, pct: str) -> str:
    """The summary's first item: what to run, the deployed-plan comparison and its
    probability -- a null or negative result first when that is what was found."""
    rec = eff["recommendation"]
    cand = eff["candidate"]["comparisons"]
    strongest = rec["strongest"]
    c = cand.get(strongest) or cand.get(rec["default"])
    real = eff["comparisons"].get(strongest, {}).get("realised")
    trained = ""
    if real is not None:
        trained = (" Trained, the plan's realised η against it "
                   + ("cannot be estimated (its success does not rise measurably along its "
                      "path)." if real["eta"] is None else f"{realised_text(real)}."))
    if rec["status"] == "fallback":
        return f"Recommendation: {rec['reason']}."
    if rec["choice"] == "plan":
        return (f"Recommendation: the plan E, t, k = {rec['values']['E']:.3g}, "
                f"{rec['values']['t']:.3g}, {rec['values']['k']:.3g}. On data it was not "
                f"chosen on it beats the strongest baseline ({strongest}) with probability "
                f"{c['p_beats']:.2f}; η = {c['eta']:.3g} [{c['eta_interval'][0]:.3g}, "
                f"{c['eta_interval'][1]:.3g}] ({pct}), loss saved at equal cost "
                f"{c['gain']:+.4f} [{c['gain_interval'][0]:+.4f}, {c['gain_interval'][1]:+.4f}]."
                + trained)
    head = ("No detectable advantage over " + rec["choice"] + " at equal cost"
            if rec["choice"] == rec["default"] else
            f"{rec['choice']} beats {rec['default']}, and no plan beats {rec['choice']} "
            "detectably")
    return (f"{head}: use the baseline ({rec['choice']}). The best plan found beats "
            f"{strongest} with probability {c['p_beats']:.2f} on data it was not chosen on "
            f"(needed: {rec['probability']:g}); η = {c['eta']:.3g} [{c['eta_interval'][0]:.3g}, "
            f"{c['eta_interval'][1]:.3g}], loss saved {c['gain']:+.4f} "
            f"[{c['gain_interval'][0]:+.4f}, {c['gain_interval'][1]:+.4f}] ({pct})." + trained)
