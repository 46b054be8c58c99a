"""Verification of the reward-optimisation law ``G(M, K) = Θ(sqrt(min{log M, K}))``.

What it does (``rlscale verify reward-law``; :func:`verify_reward_law`):

1. **Grid.**  ``M`` from 10 to 1e8 (3 points a decade in ``quick``, 6 in
   ``full``) × ``K`` from 0.05 to 50, log-spaced, plus points packed around
   the crossover ``K = log M``; noise levels ``τ ∈ {0.5, 1, 2}`` (the domain
   of the proved band).
2. **Gains.**  Exact ``G`` of best-of-n, the quantilizer and exponential
   tilting (:func:`rlscale.theory.reward.gain`) on the whole grid; soft
   best-of-n (:func:`rlscale.simulate.soft_bon_frontier`) and KL-penalised
   policy gradient (:func:`rlscale.simulate.kl_bandit_pg`, RLOO) on a
   sub-grid (``τ = 1``, small ``M``), where ``G(K)`` is the best gold gain of
   a (pool size, temperature) run whose KL is ``<= K``: chosen on half of the
   Monte Carlo pools and scored on the other half (cross-fitting, so the
   maximum over noisy runs is not biased upwards), with the pool mean
   subtracted as a control variate.  These two are capped by their largest
   pool (512 in ``quick``, 2048 in ``full``) and by finite training, so their
   fitted ``a`` is smaller; their band includes Monte Carlo noise.  Exact
   values are spot-checked against the fast order-statistics Monte Carlo
   (z-scores).
3. **Fits** per noise level × method on a random 70 % of the points, scored
   by R² on the held-out 30 %: the law ``a sqrt(min(log M + b, c K))`` and a
   smooth-min variant ``a ((log M + b)^{-p} + (cK)^{-p})^{-1/(2p)}``.
4. **Band** ``G/sqrt(min(log M, K))`` over the whole grid, against the proved
   ``[C_LO, C_HI]``.
5. **Model comparison** (AIC, BIC on all points, and leave-one-regime-out
   RMSE over the regimes ``K < log M / 2``, crossover, ``K > 2 log M``)
   against ``a sqrt K``, ``a sqrt(log M + b)``, Gao et al.'s best-of-n and RL
   forms (coefficients ``α, β`` per ``M``, as Gao et al. fit them per reward
   model size) and a free power law ``a M^p K^q``.
6. **Files** (when ``out`` is given): ``results.json``, ``grid.csv`` and, by
   :func:`write_reward_figures`, ``heatmap.png`` (``G`` over ``(log M, K)``
   with the crossover line) and ``collapse.png`` (``G`` against
   ``sqrt(min(log M, K))``).
"""

from __future__ import annotations

import csv
import io
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import make_output_dir
from rlscale.theory._result import Result

# The law models, fits and model comparison live in rlscale.verification._law_models, shared with
# the trainer's verification (rlscale.verification._trainer_reward_law).
from rlscale.verification._law_models import _r2, _regime  # noqa: F401  (_r2 re-exported for tests)

__all__ = ["RewardLawReport", "reward_grid", "verify_reward_law", "write_reward_figures"]

NOISES = (0.5, 1.0, 2.0)
EXACT_METHODS = ("bon", "quantile", "tilt")
SUB_METHODS = ("soft_bon", "pg")
MODES = ("glance", "quick", "full")

# ``glance`` is the report's ``--quick`` look (issue 26): ``quick``'s grid, Monte
# Carlo check and soft best-of-n, with the policy-gradient rows on 8 pools of
# proxies (4 per cross-fitting half) instead of 16.  Those rows were about four
# fifths of ``quick``'s CPU; their gains carry twice the Monte Carlo variance.
_SETTINGS = {
    "glance": {"per_decade": 3, "k_log": 14, "mc_points": 24, "mc_trials": 100_000,
               "sub_m": (100.0, 1000.0), "sub_ns": (2, 8, 32, 128, 512), "soft_trials": 300,
               "pg_pools": 8, "pg_steps": 400},
    "quick": {"per_decade": 3, "k_log": 14, "mc_points": 24, "mc_trials": 100_000,
              "sub_m": (100.0, 1000.0), "sub_ns": (2, 8, 32, 128, 512), "soft_trials": 300,
              "pg_pools": 16, "pg_steps": 400},
    "full": {"per_decade": 6, "k_log": 30, "mc_points": 200, "mc_trials": 1_000_000,
             "sub_m": (10.0, 100.0, 1000.0, 1e4), "sub_ns": (2, 4, 8, 32, 128, 512, 2048),
             "soft_trials": 1000, "pg_pools": 24, "pg_steps": 800},
}


def reward_grid(mode: str = "quick") -> tuple[np.ndarray, np.ndarray]:
    """The ``(M, K)`` points of the grid (flat arrays of equal length).

    ``M = 10^(1 + j/d)`` up to 1e8 (``d`` = 3 or 6 per decade); per ``M`` the
    ``K`` values are log-spaced over ``[0.05, 50]`` plus ``log M`` times
    ``{0.5, 0.7, 0.85, 1, 1.2, 1.5, 2}`` (those inside ``[0.05, 50]``).

    Examples
    --------
    >>> m, k = reward_grid("quick")
    >>> int(m.min()), int(m.max()), float(k.min()), float(k.max())
    (10, 100000000, 0.05, 50.0)
    """
    s = _settings(mode)
    d = s["per_decade"]
    ms = 10.0 ** (1.0 + np.arange(7 * d + 1) / d)
    base = np.geomspace(0.05, 50.0, s["k_log"])
    mm, kk = [], []
    for m in ms:
        dense = math.log(m) * np.array([0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0])
        ks = np.unique(np.concatenate([base, dense[(dense >= 0.05) & (dense <= 50.0)]]))
        mm.append(np.full(ks.size, m))
        kk.append(ks)
    return np.concatenate(mm), np.concatenate(kk)


def _settings(mode: str) -> dict[str, Any]:
    from rlscale.theory._validation import check_choice

    return _SETTINGS[check_choice("mode", mode, MODES)]


# ----------------------------------------------------------------------------- report


@dataclass(frozen=True)
class RewardLawReport(Result):
    """Outcome of :func:`verify_reward_law` (``as_dict()`` gives JSON types).

    Attributes
    ----------
    mode : str
    seed : int or None
    r2 : list of dict
        Per noise level × method: held-out R² of the law (min and smooth-min),
        the fitted ``a, b, c``, whether they are identified (``identified``,
        ``identification``: :mod:`rlscale.verification._law_fits`) and the numbers of
        train/test points.
    band : dict
        Measured ``[c_lo, c_hi]`` of ``G/sqrt(min(log M, K))`` overall and per
        method, and the proved ``[C_LO, C_HI]``.
    comparison : list of dict
        Per model: parameters, AIC, BIC (all points, noise-level × method
        groups summed) and leave-one-regime-out RMSE.
    mc_check : dict
        Exact-vs-fast-Monte-Carlo z-scores on sampled grid points.
    points : list of dict
        The grid rows (``M, K, noise, method, G, L, ratio, regime, split``).
    seconds : float
    methods : tuple of str
    files : dict
        Paths written (empty when ``out`` was not given).
    """

    mode: str
    seed: int | None
    r2: list[dict[str, Any]]
    band: dict[str, Any]
    comparison: list[dict[str, Any]]
    mc_check: dict[str, Any]
    points: list[dict[str, Any]]
    seconds: float
    methods: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "seed": self.seed, "seconds": self.seconds,
            "methods": list(self.methods), "r2": self.r2, "band": self.band,
            "comparison": self.comparison, "mc_check": self.mc_check,
            "files": self.files, "n_points": len(self.points),
        }

    def summary(self) -> str:
        """A human-readable table of the results."""
        lines = ["held-out R^2 of G = a*sqrt(min(log M + b, c*K)) (smooth-min in brackets)",
                 f"{'noise':>6} {'method':>9} {'R2':>8} {'[smooth]':>9} {'a':>7} "
                 f"{'b':>7} {'c':>7} {'test':>5}"]
        def r2(v: float | None, width: int) -> str:
            return f"{'n/a':>{width}}" if v is None else f"{v:{width}.4f}"

        for row in self.r2:
            lines.append(f"{row['noise']:6.2f} {row['method']:>9} {r2(row['r2_min'], 8)} "
                         f"{r2(row['r2_smooth'], 9)} {row['a']:7.3f} {row['b']:7.3f} "
                         f"{row['c']:7.3f} {row['n_test']:5d}")
            if not all(row.get("identified", {}).values()):  # a limit at infinity, not a, b, c
                lines.append(f"       {row['identification']}")
        b = self.band
        lines.append(f"band G/sqrt(min(log M,K)): measured [{b['c_lo']:.4f}, {b['c_hi']:.4f}] "
                     f"(exact methods), proved [{b['proved_c_lo']:.4f}, {b['proved_c_hi']:.4f}]")
        for meth, (lo, hi) in b["per_method"].items():
            lines.append(f"  {meth:>9}: [{lo:.4f}, {hi:.4f}]")
        lines.append("model comparison (lower is better; LORO = leave-one-regime-out RMSE)")
        lines.append(f"{'model':>15} {'params':>6} {'AIC':>10} {'BIC':>10} {'LORO':>8}")
        for row in self.comparison:
            lines.append(f"{row['model']:>15} {row['params']:6d} {row['aic']:10.1f} "
                         f"{row['bic']:10.1f} {row['loro_rmse']:8.4f}")
        mc = self.mc_check
        lines.append(f"exact vs fast Monte Carlo: {mc['points']} points, max |z| = "
                     f"{mc['max_abs_z']:.2f}, within 3 SE: {mc['within_3se']}/{mc['points']}")
        lines.append(f"{len(self.points)} grid points, {self.seconds:.1f} s")
        return "\n".join(lines)


def verify_reward_law(
    mode: str = "quick",
    out: str | Path | None = None,
    rng: Any = 0,
    *,
    figures: bool = True,
    progress: bool = False,
) -> RewardLawReport:
    """Run the reward-law verification; optionally write files to ``out``.

    Parameters
    ----------
    mode : {"glance", "quick", "full"}
        ``quick`` takes well under a minute on 2 cores; ``full`` a few minutes;
        ``glance`` (``rlscale report --quick``) is ``quick`` with half the
        policy-gradient pools, about 60 % of its CPU.
    out : path, optional
        Directory for ``results.json``, ``grid.csv`` and (with ``figures``)
        the PNG figures (matplotlib, extra ``plot``).
    rng : int or numpy.random.Generator
        Seed for the train/test split and the Monte Carlo parts.
    progress : bool
        Show a tqdm progress bar on stderr.

    Examples
    --------
    >>> rep = verify_reward_law("quick", rng=0)  # doctest: +SKIP
    >>> min(r["r2_min"] for r in rep.r2) > 0.97  # doctest: +SKIP
    True
    """
    from tqdm import tqdm

    from rlscale.simulate import sample_selection
    from rlscale.theory import reward
    from rlscale.theory._validation import check_bool, check_positive_int

    settings = _settings(mode)
    check_bool("figures", figures)  # issue 22: flags are booleans
    check_bool("progress", progress)
    seed = None
    if isinstance(rng, np.random.Generator):
        gen = rng
    elif rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        seed = None if rng is None else check_positive_int("seed", rng, minimum=0)
        gen = np.random.default_rng(seed)
    else:
        raise TypeError(f"rng must be a numpy Generator, an int seed >= 0 or None; got {rng!r}")
    if out is not None:  # fail before minutes of computing, not after
        out = Path(out)
        make_output_dir(out)
    start = time.perf_counter()

    # noise levels (exact methods), the Monte Carlo check, the sub-grid methods, fits, files
    stages = len(NOISES) + 1 + len(SUB_METHODS) + 1 + 1
    bar = tqdm(total=stages, desc="reward-law", disable=not progress, leave=False)

    m_all, k_all = reward_grid(mode)
    rows: list[dict[str, Any]] = []
    for tau in NOISES:
        for meth in EXACT_METHODS:
            g = np.asarray(reward.gain(m_all, k_all, tau, meth))
            rows.extend(_rows(m_all, k_all, tau, meth, g))
        bar.update(1)

    # Exact vs fast Monte Carlo at the optimal pool size of sampled grid points.
    picks = gen.choice(len(rows), size=min(settings["mc_points"], len(rows)), replace=False)
    zs = []
    for i in picks:
        r = rows[int(i)]
        n = float(reward.optimal_pool_size(r["M"], r["K"], r["noise"], r["method"]))
        s = sample_selection(n, M=r["M"], noise=r["noise"], method=r["method"], K=r["K"],
                             trials=settings["mc_trials"], rng=gen)
        zs.append((s.gold - r["G"]) / s.gold_se if s.gold_se > 0 else 0.0)
    zs_arr = np.asarray(zs)
    mc = {"points": len(zs), "trials": settings["mc_trials"],
          "max_abs_z": float(np.max(np.abs(zs_arr))) if zs else 0.0,
          "within_3se": int(np.sum(np.abs(zs_arr) <= 3.0)), "z": zs_arr.tolist()}
    bar.update(1)

    sub_m = np.asarray(settings["sub_m"])
    sub = [(m, k) for m, k in zip(m_all, k_all) if np.any(np.isclose(m, sub_m, rtol=1e-9))]
    sm = np.array([p[0] for p in sub])
    sk = np.array([p[1] for p in sub])
    rows.extend(_soft_bon_rows(sm, sk, settings, gen))
    bar.update(1)
    pg_rows = _pg_rows(sm, sk, settings, gen)
    rows.extend(pg_rows)
    methods = EXACT_METHODS + (("soft_bon", "pg") if pg_rows else ("soft_bon",))
    bar.update(1)

    # Random 70/30 split of every noise × method group.
    split = gen.random(len(rows)) < 0.7
    for r, s in zip(rows, split):
        r["split"] = "train" if s else "test"

    r2_rows, comparison = _fit_all(rows)
    bar.update(1)

    exact = [r for r in rows if r["method"] in EXACT_METHODS and r["G"] > 0]
    ratios = np.array([r["ratio"] for r in exact])
    per_method = {}
    for meth in methods:
        rr = np.array([r["ratio"] for r in rows if r["method"] == meth and r["L"] > 0])
        per_method[meth] = [float(rr.min()), float(rr.max())] if rr.size else [0.0, 0.0]
    band = {"c_lo": float(ratios.min()), "c_hi": float(ratios.max()),
            "proved_c_lo": reward.C_LO, "proved_c_hi": reward.C_HI,
            "inside_proved": bool(ratios.min() >= reward.C_LO and ratios.max() <= reward.C_HI),
            "per_method": per_method,
            "domain": {"M_min": reward.M_MIN, "tau": [reward.TAU_MIN, reward.TAU_MAX]}}

    report = RewardLawReport(mode, seed, r2_rows, band, comparison, mc, rows,
                             time.perf_counter() - start, methods)
    if out is not None:
        report = _write(report, out, figures)
    bar.update(1)
    bar.close()
    return report


def _rows(m, k, tau, meth, g) -> list[dict[str, Any]]:
    lm = np.log(m)
    L = np.minimum(lm, k)
    ratio = np.where(L > 0, g / np.sqrt(np.where(L > 0, L, 1.0)), 0.0)
    reg = _regime(lm, k)
    return [{"M": float(m[i]), "K": float(k[i]), "noise": float(tau), "method": meth,
             "G": float(g[i]), "L": float(L[i]), "ratio": float(ratio[i]),
             "regime": str(reg[i])} for i in range(m.size)]


def _soft_bon_rows(sm, sk, settings, gen) -> list[dict[str, Any]]:
    from rlscale.simulate import soft_bon_frontier

    rows = []
    for m in np.unique(sm):
        f = soft_bon_frontier(m, 1.0, ns=settings["sub_ns"], trials=settings["soft_trials"],
                              rng=gen)
        ks = sk[sm == m]
        rows.extend(_rows(np.full(ks.size, m), ks, 1.0, "soft_bon", f.gain_at(ks)))
    return rows


def _pg_rows(sm, sk, settings, gen) -> list[dict[str, Any]]:
    """KL-penalised policy gradient (RLOO) on pools of proxies: its (KL, gold) frontier.

    ``settings["pg_pools"]`` must be even (two halves for cross-fitting).  Each
    (M, pool size) run draws from its own generator, seeded from ``gen`` in a
    fixed order, so the runs go to two threads (numpy releases the GIL inside
    the array operations that dominate them) and the result does not depend
    on which thread ran what.
    """
    try:
        from rlscale.simulate import kl_bandit_pg
    except ImportError:  # the trainer is another capability; ship without it if absent
        return []
    from rlscale.simulate import cross_fit_gain
    from rlscale.theory.reward import KAPPA

    betas = np.geomspace(0.02, 5.0, 14)
    pools = settings["pg_pools"]
    # Fresh runs for every M: reusing one set across M (it only rescales the
    # gain) halves the cost but made the held-out R^2 visibly noisier.
    tasks = [(m, n) for m in np.unique(sm) for n in settings["sub_ns"]]
    seeds = gen.integers(0, 2**63, size=len(tasks))

    def run(i: int) -> tuple[np.ndarray, np.ndarray]:
        m, n = tasks[i]
        rng = np.random.default_rng(int(seeds[i]))
        sd = math.sqrt(KAPPA * n / m)
        # The bandit's rewards are the standardised proxies s = Ŷ/sqrt(1+σ²),
        # so one beta grid covers every pool size and noise level alike.
        s = rng.standard_normal((pools, n))
        res = kl_bandit_pg(np.repeat(s, betas.size, axis=0), np.tile(betas, pools),
                           steps=settings["pg_steps"], batch_size=32, algorithm="rloo",
                           rng=rng, history=False)
        # Rao-Blackwellised gold: E[X_i | proxies] = s_i/sqrt(1+σ²), and the
        # policy depends on the proxies only.  The pool mean (the reference
        # policy's gain, mean zero) is subtracted as a control variate.
        centred = np.repeat(s - s.mean(axis=1, keepdims=True), betas.size, axis=0)
        gold = np.sum(res.probs * centred, axis=1) / math.sqrt(1.0 + sd * sd)
        return (np.asarray(res.kl).reshape(pools, betas.size).mean(axis=0),
                gold.reshape(2, pools // 2, betas.size).mean(axis=1))

    # Largest pools first, so the two threads finish together.
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i][1])
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        done = dict(zip(order, pool.map(run, order)))
    rows = []
    for m in np.unique(sm):
        mine = [i for i in range(len(tasks)) if tasks[i][0] == m]
        kls = [done[i][0] for i in mine]
        golds = [done[i][1] for i in mine]
        ks = sk[sm == m]
        # Cross-fitting: choose the (pool size, beta) run on half A of the pools
        # and report its gold gain on half B, so the max over noisy runs does
        # not inflate G (the winner's curse).
        g = cross_fit_gain(np.concatenate(kls), np.concatenate(golds, axis=1), ks)
        rows.extend(_rows(np.full(ks.size, m), ks, 1.0, "pg", np.asarray(g)))
    return rows


def _fit_all(rows) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """R² rows and model comparison per noise × method group; groups on one design fitted
    together, one batched solve per law form
    (:func:`rlscale.verification._law_models.fit_row_groups`)."""
    from rlscale.verification._law_models import (
        compare_models,
        finish_comparison,
        fit_law_group,
        fit_row_groups,
        new_totals,
    )

    groups: dict[tuple[float, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["noise"], r["method"]), []).append(r)
    fits = fit_row_groups(groups)
    r2_rows = []
    totals = new_totals()
    for (tau, meth), grp in groups.items():
        lm = np.log([r["M"] for r in grp])
        k = np.array([r["K"] for r in grp])
        g = np.array([r["G"] for r in grp])
        train = np.array([r["split"] == "train" for r in grp])
        row, pred_all = fit_law_group(lm, k, g, train, fits[(tau, meth)])
        for r, v in zip(grp, pred_all):
            r["fit_law_min"] = float(v)
        r2_rows.append({"noise": tau, "method": meth, **row})
        # Model comparison on all points of the group, plus leave-one-regime-out.
        compare_models(lm, k, g, np.array([r["regime"] for r in grp]), totals,
                       fits[(tau, meth)])
    return r2_rows, finish_comparison(totals)


def _write(report: RewardLawReport, out: Path, figures: bool) -> RewardLawReport:
    from dataclasses import replace

    from rlscale.files._atomic import write_json_atomic, write_text_atomic

    make_output_dir(out)
    buf = io.StringIO()
    cols = ["M", "K", "noise", "method", "G", "L", "ratio", "regime", "split", "fit_law_min"]
    writer = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(report.points)
    files = {"csv": str(write_text_atomic(out / "grid.csv", buf.getvalue()))}
    if figures:
        files.update(write_reward_figures(report, out))
    files["json"] = str(out / "results.json")  # listed in the file itself
    report = replace(report, files=files)
    write_json_atomic(out / "results.json", report.as_dict())
    return report


def write_reward_figures(report: RewardLawReport, out: str | Path) -> dict[str, str]:
    """Write ``heatmap.png`` and ``collapse.png`` for ``report`` into ``out``.

    Needs matplotlib (extra ``plot``); uses the Agg backend.
    """
    from rlscale._optional import require
    from rlscale.files._atomic import write_bytes_atomic

    if not isinstance(report, RewardLawReport):  # issue 22
        raise TypeError(f"report must be a RewardLawReport (from verify_reward_law); got "
                        f"{type(report).__name__} {report!r:.60}")
    mpl = require("matplotlib", extra="plot", purpose="reward-law figures")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from rlscale.report._figures import log_scale

    out = Path(out)
    make_output_dir(out)
    files = {}

    pts = [r for r in report.points if r["method"] == "bon" and r["noise"] == 1.0]
    lm = np.log([r["M"] for r in pts])
    k = np.array([r["K"] for r in pts])
    g = np.array([r["G"] for r in pts])
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    sc = ax.scatter(lm, k, c=g, s=28, marker="s", cmap="viridis")
    grid_lm = np.linspace(lm.min(), lm.max(), 100)
    ax.plot(grid_lm, grid_lm, "r--", lw=1.5, label="crossover K = log M")
    log_scale(ax, "y")
    ax.set_xlabel("log M (comparisons)")
    ax.set_ylabel("KL budget K")
    ax.set_title("gold gain G(M, K), best-of-n, noise 1")
    ax.legend(loc="lower right")
    fig.colorbar(sc, ax=ax, label="G")
    files["heatmap"] = str(write_bytes_atomic(out / "heatmap.png", _png(fig)))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    # The Monte Carlo methods (soft best-of-n, policy gradient) have few points on
    # a sub-grid: drawn last, larger and outlined, so the exact methods' dense
    # clouds do not hide them.
    style = {"soft_bon": ("^", 22), "pg": ("D", 18)}
    for order, meth in enumerate(report.methods):
        sel = [r for r in report.points if r["method"] == meth]
        x = np.sqrt([r["L"] for r in sel])
        marker, size = style.get(meth, ("o", 6))
        ax.scatter(x, [r["G"] for r in sel], s=size, marker=marker,
                   alpha=0.9 if meth in style else 0.5,
                   edgecolors="k" if meth in style else "none", linewidths=0.4,
                   zorder=3 + order if meth in style else 2, label=meth)
    xs = np.linspace(0, max(np.sqrt([r["L"] for r in report.points])), 50)
    b = report.band
    ax.plot(xs, b["c_hi"] * xs, "k:", lw=1, label=f"measured band [{b['c_lo']:.2f}, "
            f"{b['c_hi']:.2f}]")
    ax.plot(xs, b["c_lo"] * xs, "k:", lw=1)
    ax.plot(xs, b["proved_c_lo"] * xs, "r--", lw=1, label="proved band")
    ax.plot(xs, b["proved_c_hi"] * xs, "r--", lw=1)
    ax.set_xlabel("sqrt(min(log M, K))")
    ax.set_ylabel("gold gain G")
    ax.set_title("collapse of G onto sqrt(min(log M, K))")
    ax.legend(fontsize=8, markerscale=3)
    files["collapse"] = str(write_bytes_atomic(out / "collapse.png", _png(fig)))
    plt.close(fig)
    return files


def _png(fig) -> bytes:
    """``fig`` as PNG bytes, laid out once.

    ``tight_layout`` fits the labels inside the canvas, and the draw that renders the
    PNG is the only other pass over the figure
    (:func:`rlscale.files._atomic.render_figure`).  Before issue 26 the trainer's
    figures were measured three times before that draw (``tight_layout``, the
    placeholder engine's disabled draw, ``bbox_inches="tight"``), for a few pixels
    of margin.
    """
    from rlscale.files._atomic import render_figure

    fig.tight_layout()
    return render_figure(fig, "png", dpi=110)
