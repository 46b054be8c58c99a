"""The report as a document: headings, paragraphs, tables and figures.

Built from the report's state alone (:class:`~rlscale.report._outcomes.ReportState`: each
step's outcome, whose ``as_dict()`` is what ``results.json`` holds), so the document says
nothing that is not in the results; one renderer per section.  Sections whose step has no
dataclass yet are still read from their plain data (``result.sections``).
"""

from __future__ import annotations

import math
from pathlib import Path

from rlscale._document import Document
from rlscale._document import format_value as _fmt
from rlscale.report._config import AXES, SUBSTITUTE
from rlscale.report._config_tree import ReportConfig
from rlscale.report._document_efficiency import (
    bounded,
    decision_summary,
    efficiency_caveats,
    efficiency_section,
    eta_summary,
)
from rlscale.report._document_trainer_law import (
    trainer_caveats,
    trainer_law_section,
    trainer_summary,
)
from rlscale.report._next_runs import next_runs_section
from rlscale.report._outcomes import (
    AllocationOutcome,
    FitOutcome,
    InferenceOutcome,
    ProofsOutcome,
    ReportState,
    RewardLawOutcome,
    SweepOutcome,
)
from rlscale.report._wording import ordering_text, synthetic_ratio_text

__all__ = ["bounded", "build_document"]


def build_document(result) -> Document:
    s, tree = result.sections, result.cfg
    doc = Document("rlscale report")
    doc.paragraph(f"rlscale {_version()} · {result.seconds:.0f} s · seed {tree.seed} · "
                  f"reward-law grid '{tree.reward_law.mode}' · every number is in "
                  "results.json, the configuration in config.toml.")
    _summary(doc, s, result.state)

    _reward_law_section(doc, result.state.reward_law)

    trainer_law_section(doc, result.state.reward_law_trainer)

    _sweep_section(doc, result.state.sweep, result.cfg)
    _fit_section(doc, result.state.fit, result.cfg)

    _allocation_section(doc, result.state.allocation, result.cfg)

    efficiency_section(doc, result.state.efficiency)

    next_runs_section(doc, result.state.next_runs)  # issue 23
    _inference(doc, result.state.inference)

    _proofs_section(doc, result.state.proofs)
    _caveats(doc, s, tree, result.state)
    t = result.timings
    doc.paragraph("Timings (wall, and CPU with the step's worker processes): "
                  + ", ".join(f"{k} {v:.1f} s (CPU {t.cpu[k]:.1f} s)"
                              for k, v in t.wall.items())
                  + f". CPU of all the report's processes: {t.cpu_total:.1f} s.")
    if not tree.figures:  # --no-figures: no image was drawn, none is linked
        doc.blocks = [b for b in doc.blocks if b.kind != "figure"]
        doc.paragraph("Figures were not drawn (rlscale report --no-figures).")
    return doc


def _sweep_section(doc: Document, sw: SweepOutcome, cfg: ReportConfig) -> None:
    """Section 2: the trainer sweep, IQM per configuration with its interval."""
    pct = f"{round(cfg.fit.confidence * 100)} %"
    doc.heading("2. Trainer sweep: environments × tasks × trajectories")
    doc.paragraph(f"{sw.runs} training runs of the numpy trainer "
                  f"({', '.join(cfg.sweep.algorithms)}); held-out success on "
                  "environments never trained on, IQM over seeds with stratified bootstrap "
                  f"{pct} CIs. For scale: the untrained policy succeeds "
                  f"{sw.untrained_success:.3f} and the optimal policy (value iteration) "
                  f"{sw.optimal_success:.3f} on the same held-out tasks. Raw runs: sweep.csv.")
    # The summary is a table of the trainer's columns: these are the ones shown.
    columns = (*AXES, "runs", "success_iqm")
    doc.table(["E", "t", "k", "runs", "success (IQM)", f"{pct} CI"],
              [[*(r[c] for c in columns), "[{:.3f}, {:.3f}]".format(
                  *(r[c] for c in ("ci_low", "ci_high")))] for r in sw.summary])


def _fit_section(doc: Document, fit: FitOutcome, cfg: ReportConfig) -> None:
    """Section 3: the per-axis law, its intervals, elasticities and impact ordering."""
    pct = f"{round(cfg.fit.confidence * 100)} %"
    fr = fit.result
    doc.heading("3. Per-axis laws fitted to the sweep")
    doc.paragraph(
        f"loss = 1 − success fitted as L∞ + a_E·E^(−α_E) + a_t·t^(−α_t) + a_k·k^(−α_k) over "
        f"environments E, tasks per environment t and trajectories per task k (Huber/L-BFGS-B, "
        f"{fr.n_bootstrap} bootstrap resamples, "
        f"{int(fr.confidence * 100)} % intervals). R² (log) = {fr.r2:.3f}; "
        f"extrapolation error on the largest-scale points: "
        f"{_fmt(fr.extrapolation.get('mean_abs_rel_error', math.nan))} (mean relative)."
        f" The floor L∞ is bounded below by {fit.floor_min:.3f}, 1 − the optimal "
        "policy's held-out success: no allocation can do better.")
    doc.table(["parameter", "estimate", "interval"],
              [[k, v, "[{:.4g}, {:.4g}]".format(*fr.intervals.get(k))
                if k in fr.intervals else "—"] for k, v in fr.params.items()])
    centre = ", ".join(f"{SUBSTITUTE[a]} = {v}" for a, v in fit.centre.items())
    probs = fit.ordering_probability
    doc.paragraph("Elasticities −∂log(L − L∞)/∂log x at the sweep's centre "
                  f"({centre}): " + ", ".join(
                      f"{a} {fit.elasticities.get(a):.3f}" for a in fit.impact_ordering)
                  + (". Share of bootstrap laws that agree with each pairwise order: "
                     + ", ".join(f"{k}: {_fmt(v)}" for k, v in probs.items()) if probs else "")
                  + ". Impact ordering (a pair counts as ordered only when that share reaches "
                  f"the report's confidence level, {fr.confidence:g}): "
                  + ordering_text(fit.impact_ordering, probs, fr.confidence) + ".")
    doc.figure("fits.png", f"Per-axis fits: sweep points (IQM, {pct} CI), the fitted law with the "
                           "other axes at the centre, and its bootstrap band")


def _allocation_section(doc: Document, al: AllocationOutcome, cfg: ReportConfig) -> None:
    """Section 4: the plan at the budget, synthetic environments, the quality filter."""
    plan = al.plan
    doc.heading("4. Compute-optimal allocation")
    doc.paragraph(f"Cost {al.cost}; budget {al.budget:g}. Solver status "
                  f"{plan.status}, KKT residual {plan.kkt_residual:.2g}.")
    doc.table(["", "E", "t", "k", "predicted loss", "cost"],
              [["continuous", *(plan.values.get(v) for v in ("E", "t", "k")),
                plan.loss, plan.cost],
               ["integer", *(plan.rounded.get(v) if plan.rounded else "—"
                             for v in ("E", "t", "k")),
                plan.rounded_loss, plan.rounded_cost]])
    syn = al.synthetic
    ro, ws, method = syn.real_only, syn.with_synthetic, syn.method
    real, synthetic = (ws.values.get(v) for v in ("environments", method.name))
    doc.paragraph(
        f"Synthetic environments, with real environments limited to "
        f"{syn.real_environments:g}: the best allocation of real data alone "
        f"(E ≤ {syn.real_environments:g}, t and k re-optimised) predicts loss "
        f"{ro.loss:.4f}; adding the generator (at the plan's t = {syn.t:.3g}, "
        f"k = {syn.k:.3g}, each environment costing what it carries; per-environment cost "
        f"{method.unit_cost:.4g} synthetic against {syn.real_unit_cost:.4g} real, "
        f"ρ = {method.rho:g}, relative saturation {method.saturation:g}) "
        f"predicts {ws.loss:.4f} with {real:.3g} real and "
        f"{synthetic:.3g} synthetic environments. "
        + synthetic_ratio_text(syn.critical_ratio.ratio, syn.solver_ratio, real,
                               syn.real_environments)
        + ". Quality filter "
        f"(Beta({cfg.synthesis.quality_a:g}, {cfg.synthesis.quality_b:g}) "
        f"quality): keep environments with quality ≥ "
        f"{syn.quality_filter.threshold:.3f} (acceptance "
        f"{syn.quality_filter.acceptance:.3f}).")
    doc.figure("allocation.png", "Optimal E, t, k and budget shares against the budget")


def _proofs_section(doc: Document, pr: ProofsOutcome) -> None:
    """Section 7: each proof with its checked, failed, skipped and cited steps."""
    doc.heading("7. Machine-checked proofs")
    if not pr.enabled:
        doc.paragraph("Proofs were disabled in the configuration.")
        return
    doc.paragraph("Each step is either checked by a machine (sympy, z3 or rigorous "
                  "interval arithmetic) or cited: a classical fact stated with its "
                  "reference (†), never counted as checked.")
    doc.table(["proof", "statement", "checked ✓", "✗", "skipped", "cited †", "holds"],
              [[r.name, r.statement, *(r.counts.get(c, 0) for c in
                                       ("passed", "failed", "skipped", "cited")),
                "✓" if r.passed else "✗"] for r in pr.results])


def _reward_law_section(doc: Document, rl: RewardLawOutcome) -> None:
    """Section 1: the law in the Gaussian selection model, its band and model comparison."""
    band = rl.band
    doc.heading("1. Reward optimisation: gain = Θ(√min{log M, K})")
    doc.paragraph(
        "Gold gain G(M, K) of the best selection from a pool scored by a proxy trained on M "
        "comparisons, within KL budget K (rlscale's Gaussian selection model; see the README). "
        f"Measured band of G/√min(log M, K) over the grid: [{band.c_lo:.3f}, "
        f"{band.c_hi:.3f}]; proved band [{band.proved_c_lo:.3f}, "
        f"{band.proved_c_hi:.3f}] — measured inside proved: {band.inside_proved}. "
        "The proved band covers best-of-n and the tilted policy; the other methods are "
        "measured only.")
    doc.paragraph(
        "Definitions. The fitted law is G = a·√min(log M + b, c·K): a scales the gain, b "
        "shifts the comparison cap (log M + b), c converts the KL budget into the same units. "
        "Methods, each optimising the proxy only within KL ≤ K of the reference: bon — "
        "best-of-n with KL = log n − (n−1)/n; quantile — the top 1/n of the proxy (a "
        "quantilizer, KL = log n); tilt — exponential tilting π ∝ π0·exp(βŶ), the "
        "KL-regularised optimum; soft_bon — sampling from the pool with softmax weights "
        "(Monte Carlo, KL charged as the expected pool KL); pg — KL-penalised policy gradient "
        "on a finite pool (Monte Carlo). Noise τ is the standard deviation of each "
        "comparison's margin.")
    doc.table(["noise τ", "method", "held-out R² (min)", "R² (smooth-min)", "a", "b", "c"],
              [[r.noise, r.method, r.r2_min, r.r2_smooth, r.a, r.b, r.c] for r in rl.r2])
    doc.table(["model", "params", "AIC", "BIC", "leave-one-regime-out RMSE"],
              [[r.model, r.params, r.aic, r.bic, r.loro_rmse] for r in rl.comparison])
    for key, caption in (("heatmap", "Gain surface over (log M, K) with the crossover "
                                     "K = log M"),
                         ("collapse", "Collapse of G against √min(log M, K)")):
        path = rl.files.get(key)
        if path:
            doc.figure(f"reward-law/{Path(path).name}", caption)


def _version() -> str:
    from rlscale import __version__

    return __version__


def _summary(doc: Document, s, state: ReportState) -> None:
    """The headline numbers, with their intervals, before any detail."""
    doc.heading("Summary of findings")
    items = []
    band = state.reward_law.band
    r2 = [r.r2_min for r in state.reward_law.r2 if r.r2_min is not None]
    if r2:
        items.append(f"Reward optimisation (Gaussian selection model): G/√min(log M, K) stays "
                     f"in [{band.c_lo:.3f}, {band.c_hi:.3f}], inside the proved band "
                     f"[{band.proved_c_lo:.3f}, {band.proved_c_hi:.3f}]; held-out R² of "
                     f"the law {min(r2):.3f}–{max(r2):.3f}.")
    trainer = trainer_summary(state.reward_law_trainer)
    if trainer is not None:
        items.append(trainer)
    sw, fit = state.sweep, state.fit
    items.append(f"Training data: held-out success between the untrained policy's "
                 f"{sw.untrained_success:.3f} and the optimum's {sw.optimal_success:.3f}; "
                 "impact ordering at the sweep's centre: "
                 + ordering_text(fit.impact_ordering, fit.ordering_probability,
                                 fit.result.confidence) + ".")
    items.insert(0, decision_summary(state.efficiency))
    items += eta_summary(state.efficiency)
    doc.paragraph(" ".join(f"({i}) {t}" for i, t in enumerate(items, 1)))


def _caveats(doc: Document, s, cfg: ReportConfig, state: ReportState) -> None:
    """Every diagnostic that limits what the numbers above can be trusted for."""
    out = []
    for w in state.fit.result.warnings:
        out.append(f"Fit [{w.code}]: {w.message}" + (f" Fix: {w.fix}" if w.fix else ""))
    sweep_axes, base = cfg.sweep.axes, cfg.sweep.base.point()
    plan = state.allocation.plan.values
    for axis, var in SUBSTITUTE.items():
        grid = sweep_axes.get(axis) or [base.get(axis)]
        lo, hi = min(grid), max(grid)
        if not lo <= plan[var] <= hi:
            out.append(f"The plan extrapolates: {var} = {plan[var]:.3g} lies outside the "
                       f"sweep's range [{lo:g}, {hi:g}] for {axis}, where the law was not "
                       "measured.")
    out += efficiency_caveats(state.efficiency)
    out += trainer_caveats(state.reward_law_trainer)
    seeds = len(state.efficiency.seeds)
    sweep_seeds = state.sweep.seeds
    if seeds < 5 or sweep_seeds < 5:
        out.append(f"Intervals rest on {min(seeds, sweep_seeds)}–"
                   f"{max(seeds, sweep_seeds)} seeds: bootstrap intervals from so few "
                   "runs are rough and tend to be too narrow.")
    out.append("Training recipe: the trainer's number of optimiser updates grows with the "
               "tasks E·t and not with the trajectories per task k, so arms that differ in k "
               "also differ in updates; the unit costs count data (c_E·E + c_T·E·t + "
               "c_τ·E·t·k), not updates — section 5 repeats each comparison by environment "
               "steps and at equal updates.")
    doc.heading("Caveats")
    doc.paragraph(" ".join(f"({i}) {t.rstrip('.')}." for i, t in enumerate(out, 1)))


def _inference(doc: Document, inf: InferenceOutcome) -> None:
    """Section 6: spending an inference budget across the turns of a multi-turn task."""
    doc.heading("6. Inference budget across turns")
    if not inf.enabled:
        doc.paragraph("The inference-budget section was disabled in the configuration.")
        return
    cfg = inf.config
    doc.paragraph(
        f"A policy trained on {cfg.environments} key → door → goal environments "
        f"({cfg.algorithm}; held-out episode success {inf.train_success:.3f}) solves a "
        f"held-out job of {len(inf.q)} turns (key, door, goal of {cfg.job_tasks} tasks). "
        "At each turn it draws n candidates and a verifier keeps one; a failed turn ends the "
        "episode. Per-turn candidate success q (exact, on the finite MDP): "
        + ", ".join(f"{v:.3f}" for v in inf.q) + ". Static plans fix n per turn in "
        "advance (exact integer optimum); adaptive plans see each turn's outcome and the "
        "budget left (dynamic programming). Realised success: "
        f"{cfg.episodes} episodes with real policy rollouts, Wilson 95 % intervals. The "
        f"noisy verifier has false-positive rate {cfg.fpr:g} and false-negative rate "
        f"{cfg.fnr:g}.")
    rows = []
    for row in inf.rows:
        best = row.best_baseline
        cells = [row.verifier, row.budget]
        for name in ("static", "adaptive", best):
            r = row.plans.get(name)
            cells.append(f"{r.predicted:.3f} / {r.realised:.3f} [{r.low:.3f}, {r.high:.3f}]")
        cells += [best, f"{row.adaptivity_gain:+.3f} / {row.realised_adaptivity_gain:+.3f}",
                  f"{row.eta.get(best):.3g} / {row.realised_eta:.3g}"]
        rows.append(cells)
    doc.table(["verifier", "budget", "static: predicted / realised",
               "adaptive: predicted / realised", "best baseline: predicted / realised",
               "best baseline", "value of adaptivity", "η vs best baseline"], rows)
    for name in inf.files:
        what = "success against budget" if "success" in name else "per-turn allocation"
        doc.figure(name, f"Inference budget: {what} ({name.rsplit('-', 1)[-1][:-4]} verifier)")
