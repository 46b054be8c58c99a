"""The report as a document: headings, paragraphs, tables and figures.

Built from the plain-data sections alone (what ``results.json`` holds), so
the document says nothing that is not in the results.
"""

from __future__ import annotations

import math
from pathlib import Path

from rlscale._document import Document
from rlscale._document import format_value as _fmt
from rlscale.report._config import SUBSTITUTE

__all__ = ["bounded", "build_document"]


def build_document(result) -> Document:
    s, cfg = result.sections, result.config
    doc = Document("rlscale report")
    doc.paragraph(f"rlscale {_version()} · {result.seconds:.0f} s · seed {cfg['seed']} · "
                  f"reward-law grid '{cfg['reward_law']['mode']}' · every number is in "
                  "results.json, the configuration in config.toml.")

    rl = s["reward_law"]
    band = rl["band"]
    doc.heading("1. Reward optimisation: gain = Θ(√min{log M, K})")
    doc.paragraph(
        "Gold gain G(M, K) of the best selection from a pool scored by a proxy trained on M "
        "comparisons, within KL budget K (rlscale's Gaussian selection model; see the README). "
        f"Measured band of G/√min(log M, K) over the grid: [{band['c_lo']:.3f}, "
        f"{band['c_hi']:.3f}]; proved band [{band['proved_c_lo']:.3f}, "
        f"{band['proved_c_hi']:.3f}] — measured inside proved: {band['inside_proved']}.")
    doc.table(["noise τ", "method", "held-out R² (min)", "R² (smooth-min)", "a", "b", "c"],
              [[r["noise"], r["method"], r["r2_min"], r["r2_smooth"], r["a"], r["b"], r["c"]]
               for r in rl["r2"]])
    doc.table(["model", "params", "AIC", "BIC", "leave-one-regime-out RMSE"],
              [[r["model"], r["params"], r["aic"], r["bic"], r["loro_rmse"]]
               for r in rl["comparison"]])
    for key, caption in (("heatmap", "Gain surface over (log M, K) with the crossover "
                                     "K = log M"),
                         ("collapse", "Collapse of G against √min(log M, K)")):
        path = rl["files"].get(key)
        if path:
            doc.figure(f"reward-law/{Path(path).name}", caption)

    sw = s["sweep"]
    doc.heading("2. Trainer sweep: environments × tasks × trajectories")
    doc.paragraph(f"{sw['runs']} training runs of the numpy trainer "
                  f"({', '.join(cfg['sweep']['algorithms'])}); held-out success on "
                  "environments never trained on, IQM over seeds with stratified bootstrap "
                  "95 % CIs. Raw runs: sweep.csv.")
    doc.table(["E", "t", "k", "runs", "success (IQM)", "95% CI"],
              [[r["environments"], r["tasks_per_environment"], r["trajectories_per_task"],
                r["runs"], r["success_iqm"], f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"]
               for r in sw["summary"]])

    fit = s["fit"]
    fr = fit["result"]
    doc.heading("3. Per-axis laws fitted to the sweep")
    doc.paragraph(
        f"loss = 1 − success fitted as L∞ + a_E·E^(−α_E) + a_t·t^(−α_t) + a_k·k^(−α_k) over "
        f"environments E, tasks per environment t and trajectories per task k (Huber/L-BFGS-B, "
        f"{fr['n_bootstrap']} bootstrap resamples, "
        f"{int(fr['confidence'] * 100)} % intervals). R² (log) = {fr['r2']:.3f}; "
        f"extrapolation error on the largest-scale points: "
        f"{_fmt(fr['extrapolation'].get('mean_abs_rel_error', math.nan))} (mean relative).")
    doc.table(["parameter", "estimate", "interval"],
              [[k, v, "[{:.4g}, {:.4g}]".format(*fr["intervals"][k])
                if k in fr["intervals"] else "—"] for k, v in fr["params"].items()])
    centre = ", ".join(f"{SUBSTITUTE[a]} = {v}" for a, v in fit["centre"].items())
    doc.paragraph("Impact ordering by elasticity −∂log(L − L∞)/∂log x at the sweep's centre "
                  f"({centre}): " + " > ".join(
                      f"{a} ({fit['elasticities'][a]:.3f})" for a in fit["impact_ordering"]))
    doc.figure("fits.png", "Per-axis fits: sweep points (IQM, 95 % CI), the fitted law with the "
                           "other axes at the centre, and its bootstrap band")

    al = s["allocation"]
    plan = al["plan"]
    doc.heading("4. Compute-optimal allocation")
    doc.paragraph(f"Cost {al['cost']}; budget {al['budget']:g}. Solver status "
                  f"{plan['status']}, KKT residual {plan['kkt_residual']:.2g}.")
    doc.table(["", "E", "t", "k", "predicted loss", "cost"],
              [["continuous", plan["values"]["E"], plan["values"]["t"], plan["values"]["k"],
                plan["loss"], plan["cost"]],
               ["integer", *(plan["rounded"][v] if plan["rounded"] else "—"
                             for v in ("E", "t", "k")),
                plan["rounded_loss"], plan["rounded_cost"]]])
    syn = al["synthetic"]
    ro, ws = syn["real_only"], syn["with_synthetic"]
    doc.paragraph(
        f"Synthetic environments, with real environments limited to "
        f"{syn['real_environments']:g}: the best allocation of real data alone "
        f"(E ≤ {syn['real_environments']:g}, t and k re-optimised) predicts loss "
        f"{ro['loss']:.4f}; adding the generator (at the plan's t = {syn['t']:.3g}, "
        f"k = {syn['k']:.3g}, each environment costing what it carries; per-environment cost "
        f"{syn['method']['unit_cost']:.4g} synthetic against {syn['real_unit_cost']:.4g} real, "
        f"ρ = {syn['method']['rho']:g}, relative saturation {syn['method']['saturation']:g}) "
        f"predicts {ws['loss']:.4f} with {ws['values']['environments']:.3g} real and "
        f"{ws['values']['synthetic_environments']:.3g} synthetic environments. "
        f"Critical synthetic-to-real ratio (closed form): {syn['critical_ratio']['ratio']:.3f}; "
        f"ratio the solver picks: {syn['solver_ratio']:.3f}. Quality filter "
        f"(Beta({cfg['synthesis']['quality_a']:g}, {cfg['synthesis']['quality_b']:g}) "
        f"quality): keep environments with quality ≥ "
        f"{syn['quality_filter']['threshold']:.3f} (acceptance "
        f"{syn['quality_filter']['acceptance']:.3f}).")
    doc.figure("allocation.png", "Optimal E, t, k and budget shares against the budget")

    eff = s["efficiency"]
    pred, real = eff["predicted"], eff["realised"]
    eq, bs, d = real["equal_cost"], real["baseline_success"], real["difference"]
    doc.heading("5. Efficiency against scaling trajectories alone")
    doc.paragraph(
        f"Baseline: the budget {pred['budget']:g} spent on trajectories alone "
        f"(E = {real['baseline']['E']}, t = {real['baseline']['t']} fixed, "
        f"k = {real['baseline']['k']}). Predicted by the fitted law: the optimal allocation "
        f"reaches the baseline's loss {pred['baseline_loss']:.4f} with budget "
        f"{pred['optimal_budget']:.4g}, so η = {_fmt(pred['eta'])}. Realised with the "
        f"trainer ({len(real['seeds'])} seeds, held-out success): baseline "
        f"{bs['estimate']:.3f} [{bs['low']:.3f}, {bs['high']:.3f}]; the optimal allocation "
        f"reaches that success at cost {bounded(real['iso_loss_cost'], real['eta_bound'], True)}"
        f" along its budget path, so realised η {bounded(real['eta'], real['eta_bound'])}"
        + (f" ({real['note']})" if real["note"] else "")
        + f". At equal cost ({eq['cost']:.4g}: E, t, k = {eq['E']}, {eq['t']}, {eq['k']}) the "
        f"optimal allocation reaches {eq['success_iqm']:.3f} [{eq['ci_low']:.3f}, "
        f"{eq['ci_high']:.3f}], a difference of {d['estimate']:+.3f} "
        f"[{d['low']:+.3f}, {d['high']:+.3f}] (95 % CI).")
    doc.table(["budget", "E", "t", "k", "cost", "predicted loss", "success (IQM)", "95% CI"],
              [[p["budget"], p["E"], p["t"], p["k"], p["cost"], p["predicted_loss"],
                p["success_iqm"], f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}]"]
               for p in real["optimal_path"]])
    doc.figure("efficiency.png", "Predicted η against the baseline's budget")
    doc.figure("realised.png", "Realised: the optimal allocation along its budget path against "
                               "the trajectories-only baseline; predicted and realised η")

    pr = s["proofs"]
    doc.heading("6. Machine-checked proofs")
    if not pr["enabled"]:
        doc.paragraph("Proofs were disabled in the configuration.")
    else:
        doc.table(["proof", "statement", "steps ✓", "✗", "skipped", "holds"],
                  [[r["name"], r["statement"], r["counts"].get("passed", 0),
                    r["counts"].get("failed", 0), r["counts"].get("skipped", 0),
                    "✓" if r["passed"] else "✗"] for r in pr["results"]])
    timings = s.get("timings", {})
    doc.paragraph("Timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()) + ".")
    return doc


def bounded(value: float, eta_bound: str, cost: bool = False) -> str:
    """``= x``, ``≥ x`` or ``≤ x``; a cost's bound is the opposite of η's."""
    sign = {"exact": "=", "at least": "≥", "at most": "≤"}[eta_bound]
    if cost:
        sign = {"=": "", "≥": "≤ ", "≤": "> "}[sign]
    else:
        sign += " "
    return f"{sign}{_fmt(value)}"


def _version() -> str:
    from rlscale import __version__

    return __version__
