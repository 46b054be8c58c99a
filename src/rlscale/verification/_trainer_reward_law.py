"""The reward-optimisation law in the RL trainer (``rlscale verify reward-law --trainer``).

The Gaussian verification (:mod:`rlscale.verification._gaussian_reward_law`) checks the
selection model's arithmetic; this one runs the experiment the law is about,
in miniature and exactly (issue 12), with
:mod:`rlscale.simulate._rm_experiment`:

1. **Grid.**  ``M`` comparisons log-spaced over 10…1e5 (1 point a decade in
   ``quick``, 2 in ``full``), KL budgets ``K`` log-spaced over 0.05…30,
   label noise ``s ∈ {0.5, 1, 2}`` (gold-sd units), two reward-model
   capacities (``linear``: the gold's features, well specified; ``partial``:
   task events only, misspecified), three optimisers (``soft_vi`` exact
   KL-regularised optimum, ``bon`` best-of-n, ``pg`` KL-penalised RLOO, the
   last on a sub-grid for time), seeds (fresh comparison pools and labels).
2. **Gains** in units of the gold's reference sd, per environment; ``G`` is
   the mean over environments and seeds, with a 95 % bootstrap interval over
   environments.
3. **Fits** per optimiser × capacity × noise.  The primary score is
   leave-one-``M``-out (and leave-one-``K``-out) prediction against the
   competitors (:mod:`rlscale.verification._law_holdout`: an ``M``-free
   plateau, a free plateau per ``M`` interpolated in ``log M``, Gao et al.'s
   forms per ``M``, saturating ``M`` laws); the R² of the law and its smooth-min
   variant on a random 30 % of the points, fitted on the other 70 %, is kept
   but tests interpolation only (every held-out point has neighbours at its
   own ``M``).  ``a, b, c`` on all points with bootstrap (over environments)
   95 % intervals; model comparison per capacity
   (:mod:`rlscale.verification._law_models`); the fits of a design are batched
   solves (:mod:`rlscale.verification._law_solver`).  **Identification** on
   all points: the best fit may be one of the law's limits (``b → ∞``: ``G``
   flat in ``M``; ``c → ∞``: the kink beyond the largest ``K``), or beat the
   nearest limit by less than the likelihood-ratio rule asks — calibrated by a
   wild cluster bootstrap over the ``M`` levels, since one reward model serves
   every ``K`` at an ``M`` and its residuals are correlated
   (:mod:`rlscale.verification._law_calibration`; the iid ``χ²`` cut called a
   flat law identified 22–37 % of the time).  Such a row says so
   (``identified``, ``identification``, ``verdict``, ``lr_p_value``), has no
   interval for what is not identified, and predicts with the limit; ``b`` on a
   clamp corner ``−log M_j`` is labelled (``boundary``) and gets no interval.
4. **Where the law breaks.**  Per curve ``G(K)`` at fixed ``M``, whether gold
   falls after its peak by more than twice its standard error (Gao et al.'s
   over-optimisation); where ``G`` no longer grows with ``M``.
5. **Theory on the same grid.**  The Gaussian pool model
   (:func:`rlscale.theory.reward.gain`, ``τ = 2s``) and its generalising-proxy
   variant (:func:`rlscale.simulate._generalising_proxy.generalising_proxy_gain`,
   ``d = 10``) fitted the same way.
6. **Planning check** (:mod:`rlscale.verification._trainer_reward_plan`), with the KL per
   RL step measured on the planned reward model and a plan priced per step.

**Cost.**  Seed × noise tasks run in ``jobs`` worker processes; then the fits,
one task per design (the groups sharing the same ``M`` values) and one for
the Gaussian model on the same grid, in the same workers (measured in
``docs/verify.md``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import make_output_dir
from rlscale.theory._result import Result
from rlscale.verification._law_calibration import b_boundary, calibrated_identification
from rlscale.verification._law_fits import (
    bootstrap_min_law,
    limits,
    percentile_interval,
)
from rlscale.verification._law_holdout import exploratory_rows, holdout_scores, law_wins
from rlscale.verification._law_models import (
    _regime,
    compare_models,
    finish_comparison,
    fit_groups,
    fit_law_group,
    new_totals,
    verdict_fields,
)

__all__ = ["TrainerRewardLawReport", "verify_trainer_reward_law"]

NOISES = (0.5, 1.0, 2.0)
MODES = ("glance", "quick", "full")
# ``ident_boot``: resamples of the identification's wild cluster bootstrap
# (:mod:`rlscale.verification._law_calibration`).  ``glance`` is the report's
# ``--quick`` look (issue 26): the same grid of M and noise levels, with fewer
# optimisation environments (8: the environment bootstrap's intervals widen
# accordingly), fewer K points, a smaller best-of-n reference pool and B = 39
# identification resamples (α(B + 1) = 2 exceedances decide, against 5 for
# B = 99: a p-value resolved to 0.025 instead of 0.01); its CPU is about two
# thirds of ``quick``'s (the Bradley-Terry fits on the unchanged M grid, the
# Gaussian model on the grid and the figures do not shrink).
_SETTINGS: dict[str, dict[str, Any]] = {
    "glance": {"n_opt": 8, "n_rm": 8, "m_per_decade": 1, "n_k": 8, "seeds": 1, "betas": 14,
               "bon_pool": 1000, "pg_noises": (1.0,), "pg_m": (100.0, 1e4), "pg_betas": 4,
               "pg_steps": 60, "boot": 20, "max_nfev": 200, "ident_boot": 39},
    "quick": {"n_opt": 12, "n_rm": 8, "m_per_decade": 1, "n_k": 10, "seeds": 1, "betas": 20,
              "bon_pool": 2000, "pg_noises": (1.0,), "pg_m": (100.0, 1e4), "pg_betas": 6,
              "pg_steps": 80, "boot": 30, "max_nfev": 200, "ident_boot": 99},
    "full": {"n_opt": 24, "n_rm": 16, "m_per_decade": 2, "n_k": 16, "seeds": 3, "betas": 28,
             "bon_pool": 6000, "pg_noises": NOISES, "pg_m": (10.0, 100.0, 1e3, 1e4, 1e5),
             "pg_betas": 6, "pg_steps": 150, "boot": 200, "max_nfev": 1000, "ident_boot": 99},
}


def _settings(mode: str) -> dict[str, Any]:
    from rlscale.theory._validation import check_choice

    return _SETTINGS[check_choice("mode", mode, MODES)]


def trainer_grid(mode: str = "quick") -> tuple[np.ndarray, np.ndarray]:
    """The ``M`` and ``K`` axes of the trainer grid.

    Examples
    --------
    >>> m, k = trainer_grid("quick")
    >>> m.tolist(), round(float(k[0]), 2), round(float(k[-1]), 2)
    ([10.0, 100.0, 1000.0, 10000.0, 100000.0], 0.05, 30.0)
    """
    s = _settings(mode)
    d = s["m_per_decade"]
    ms = np.round(10.0 ** (1.0 + np.arange(4 * d + 1) / d))
    return ms, np.geomspace(0.05, 30.0, s["n_k"])


@dataclass(frozen=True)
class TrainerRewardLawReport(Result):
    """Outcome of :func:`verify_trainer_reward_law` (``as_dict()`` gives JSON types).

    Attributes
    ----------
    r2 : list of dict
        Per optimiser × capacity × noise: held-out R² (min and smooth-min law),
        ``a, b, c`` on the train split, ``a_all, b_all, c_all`` on all points
        (``None`` where not identified: a runaway solve's end point is no
        estimate) with bootstrap intervals
        ``a_ci, b_ci, c_ci`` (an end ``None``: unbounded; the whole interval
        ``None``: not identified), ``identified`` (``{"a": bool, "b": bool,
        "c": bool}`` of the fit on all points) and ``identification`` (why),
        ``bootstrap_at_boundary`` (resamples whose best fit is one of the law's
        limits) and ``fit_status`` (the solver's code, 5: ``b`` ran off).
    comparison : dict
        Per capacity: model comparison rows (AIC, BIC, LORO RMSE).
    breaks : list of dict
        Curves ``G(K)`` at fixed ``M`` whose gold falls past a peak (significantly).
    m_growth : list of dict
        Per optimiser × capacity × noise: ``G`` at the largest ``K`` for each ``M``.
    theory : list of dict
        The Gaussian pool model and the generalising-proxy variant fitted on the same grid.
    plan : dict
        The planned-vs-naive check (:mod:`rlscale.verification._trainer_reward_plan`); ``refused``
        and no plans where the soft_vi/linear/s = 1 law is not identified.
    points : list of dict
        Grid rows (``M, K, noise, capacity, optimiser, G, G_lo, G_hi, L, regime, split``).
    """

    mode: str
    seed: int
    r2: list[dict[str, Any]]
    comparison: dict[str, list[dict[str, Any]]]
    breaks: list[dict[str, Any]]
    m_growth: list[dict[str, Any]]
    theory: list[dict[str, Any]]
    plan: dict[str, Any]
    points: list[dict[str, Any]]
    setup: dict[str, Any]
    seconds: float
    files: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "seed": self.seed, "seconds": self.seconds,
                "setup": self.setup, "r2": self.r2, "comparison": self.comparison,
                "breaks": self.breaks, "m_growth": self.m_growth, "theory": self.theory,
                "plan": self.plan, "files": self.files, "n_points": len(self.points)}

    def summary(self) -> str:
        """A human-readable account of the results."""
        from rlscale.verification._trainer_reward_files import summary_text

        return summary_text(self)


def verify_trainer_reward_law(mode: str = "quick", out: str | Path | None = None,
                              rng: Any = 0, *, figures: bool = True, progress: bool = False,
                              jobs: int = 2) -> TrainerRewardLawReport:
    """Run the trainer's reward-law experiment; optionally write files to ``out``.

    Parameters
    ----------
    mode : {"glance", "quick", "full"}
        ``quick`` is budgeted at under a minute on 2 cores, ``full`` at 15 minutes;
        ``glance`` (``rlscale report --quick``) at about two thirds of ``quick``.
    out : path, optional
        Directory for ``results.json``, ``grid.csv`` and (with ``figures``) PNGs.
    rng : int
        Seed (>= 0) of everything: environments, comparison pools, labels, policy gradient.
    jobs : int
        Worker processes (joblib) over seed × noise tasks.  Every task has its
        own seed stream, so the same seed and ``jobs`` give bit-identical
        results; across ``jobs`` the gains agree to rounding (workers use
        single-threaded BLAS, the parent may not).

    Examples
    --------
    >>> rep = verify_trainer_reward_law("quick", rng=0)  # doctest: +SKIP
    >>> sorted({r["optimiser"] for r in rep.r2})  # doctest: +SKIP
    ['bon', 'pg', 'soft_vi']
    """
    from tqdm import tqdm

    from rlscale.simulate._gold_reward import sample_trajectories
    from rlscale.simulate._rm_experiment import CAPACITIES, comparison_pool, make_rm_setup
    from rlscale.theory._validation import check_bool, check_positive_int

    st = _settings(mode)
    check_bool("figures", figures)  # issue 22
    check_bool("progress", progress)
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be an int seed >= 0; got {rng!r}")
    seed = check_positive_int("seed", rng, minimum=0)
    jobs = check_positive_int("jobs", jobs)
    if out is not None:  # fail before minutes of computing, not after
        out = Path(out)
        make_output_dir(out)
    start = time.perf_counter()
    ms, ks = trainer_grid(mode)
    root = np.random.SeedSequence(seed)
    setup_ss, *seed_ss = root.spawn(1 + st["seeds"])
    setup = make_rm_setup(st["n_opt"], st["n_rm"], np.random.default_rng(setup_ss))
    betas = np.geomspace(0.003, 30.0, st["betas"])
    pg_betas = np.geomspace(0.02, 3.0, st["pg_betas"])
    per_env: dict[tuple[str, str, float, float], list[np.ndarray]] = {}
    tasks = []
    for ss in seed_ss:
        pool_ss, *noise_ss = ss.spawn(1 + len(NOISES))
        gen = np.random.default_rng(pool_ss)
        delta, margin = comparison_pool(setup, int(ms.max()), gen)
        ref_feats = sample_trajectories(setup.opt, st["bon_pool"], gen)[0]
        tasks.extend((delta, margin, ref_feats, s, nss) for s, nss in zip(NOISES, noise_ss))
    bar = tqdm(total=len(tasks) + 2, desc="reward-law --trainer", disable=not progress,
               leave=False)
    kw = {"setup": setup, "st": st, "ms": ms, "ks": ks, "betas": betas, "pg_betas": pg_betas}
    if jobs == 1:
        results = (_noise_run(*t, **kw) for t in tasks)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_noise_run)(*t, **kw) for t in tasks)
    for res in results:  # in task order whatever the workers' timing: deterministic
        for key, g in res.items():
            per_env.setdefault(key, []).append(g)
        bar.update(1)
    # Seed-averaged per-environment gains: (T, nK) per curve.
    curves = {key: np.mean(v, axis=0) for key, v in per_env.items()}
    split_gen = np.random.default_rng(root.spawn(1)[0])
    points = _points(curves, ks, split_gen)
    r2, comparison, theory = _fit_groups(points, curves, ks, st["boot"], split_gen, jobs=jobs,
                                         max_nfev=st["max_nfev"], theory_ms=ms,
                                         ident_boot=st["ident_boot"])
    bar.update(1)
    from rlscale.verification._trainer_reward_plan import planning_check

    plan = planning_check(setup, r2, np.random.default_rng(root.spawn(1)[0]),
                          seeds=st["seeds"], betas=betas, pg_betas=pg_betas,
                          pg_steps=st["pg_steps"])
    bar.update(1)
    bar.close()
    rep = TrainerRewardLawReport(
        mode, seed, r2, comparison, _breaks(curves, ks), _m_growth(curves, ms),
        theory, plan, points,
        {"optimisation_environments": st["n_opt"], "comparison_environments": st["n_rm"],
         "seeds": st["seeds"], "identification_bootstrap": st["ident_boot"],
         "gold_sd_raw": setup.sd, "M": ms.tolist(), "K": ks.tolist(),
         "noises": list(NOISES), "capacities": {c: list(v) for c, v in CAPACITIES.items()},
         "bon_pool": st["bon_pool"], "pg_grid": {"noises": list(st["pg_noises"]),
                                                 "M": list(st["pg_m"]),
                                                 "steps": st["pg_steps"]}},
        time.perf_counter() - start)
    if out is not None:
        from rlscale.verification._trainer_reward_files import write_files

        rep = write_files(rep, out, figures)
    return rep


def _noise_run(delta, margin, ref_feats, s, ss, *, setup, st, ms, ks, betas, pg_betas,
               ) -> dict[tuple[str, str, float, float], np.ndarray]:
    """One seed's comparison pool at one noise level: every capacity, M and optimiser."""
    from rlscale.simulate._rm_experiment import (
        CAPACITIES,
        comparison_labels,
        gold_gains,
        train_proxy,
    )

    gen = np.random.default_rng(ss)
    labels = comparison_labels(margin, s, gen)
    out = {}
    for cap in CAPACITIES:
        for m in ms:
            theta = train_proxy(delta, labels, int(m), cap)
            opts = ("soft_vi", "bon")
            if s in st["pg_noises"] and m in st["pg_m"]:
                opts += ("pg",)
            gains = gold_gains(setup, theta, cap, ks, optimisers=opts, betas=betas,
                               ref_features=ref_feats, pg_betas=pg_betas,
                               pg_steps=st["pg_steps"], rng=gen)
            for opt, g in gains.items():
                out[(opt, cap, s, float(m))] = g
    return out


def _points(curves, ks, gen) -> list[dict[str, Any]]:
    rows = []
    for (opt, cap, s, m), g_env in sorted(curves.items()):
        T = g_env.shape[0]
        boot = g_env[gen.integers(0, T, size=(200, T))].mean(axis=1)  # (200, nK)
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        g = g_env.mean(axis=0)
        lm = math.log(m)
        reg = _regime(np.full(ks.size, lm), ks)
        for j, k in enumerate(ks):
            rows.append({"M": m, "K": float(k), "noise": s, "capacity": cap, "optimiser": opt,
                         "G": float(g[j]), "G_lo": float(lo[j]), "G_hi": float(hi[j]),
                         "L": float(min(lm, k)), "regime": str(reg[j]),
                         "split": "train" if gen.random() < 0.7 else "test"})
    return rows


def _fit_groups(points, curves, ks, n_boot, gen, *, jobs: int = 1, max_nfev: int = 1000,
                theory_ms=None, ident_boot: int = 99):
    """Fits per optimiser × capacity × noise, model comparison totals.

    The groups that share a design (the same ``M`` values) are fitted together
    (:func:`_fit_design`), one task per design, in ``jobs`` workers.  The
    bootstrap resamples are drawn here, in group order, so the result does not
    depend on ``jobs``; with ``theory_ms`` the Gaussian model on the same grid
    (:func:`rlscale.verification._trainer_reward_theory.theory_on_grid`) runs as one more
    task.
    """
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in points:
        groups.setdefault((r["optimiser"], r["capacity"], r["noise"]), []).append(r)
    tasks = []
    for (opt, cap, s), grp in sorted(groups.items()):
        msel = sorted({r["M"] for r in grp})
        env = np.stack([curves[(opt, cap, s, m)] for m in msel])  # (nM, T, nK)
        T = env.shape[1]
        idx = [gen.integers(0, T, size=T) for _ in range(n_boot)]
        tasks.append(((opt, cap, s), grp, env, np.array(idx).reshape(n_boot, T), msel))
    designs: dict[tuple[float, ...], list[int]] = {}
    for i, t in enumerate(tasks):
        designs.setdefault(tuple(t[4]), []).append(i)
    # One seed per design for the identification's bootstrap, drawn here in design order.
    ident_seeds = [int(gen.integers(0, 2**63)) for _ in designs]
    calls = [(_fit_design, ([tasks[i][1] for i in members], [tasks[i][2] for i in members],
                            [tasks[i][3] for i in members], list(msel), ks, max_nfev, seed,
                            ident_boot))
             for (msel, members), seed in zip(designs.items(), ident_seeds)]
    if theory_ms is not None:
        from rlscale.verification._trainer_reward_theory import theory_on_grid

        calls.append((theory_on_grid, (theory_ms, ks, NOISES)))
    if jobs == 1 or len(calls) == 1:
        done = [fn(*args) for fn, args in calls]
    else:
        from joblib import Parallel, delayed

        done = Parallel(n_jobs=jobs)(delayed(fn)(*args) for fn, args in calls)
    results: list[Any] = [None] * len(tasks)
    for members, out in zip(designs.values(), done):
        for i, res in zip(members, out):
            results[i] = res
    r2_rows = []
    totals: dict[str, dict[str, Any]] = {}
    for ((opt, cap, s), grp, *_), (row, pred, part) in zip(tasks, results):
        for r, v in zip(grp, pred):
            r["fit_law_min"] = float(v)
        r2_rows.append({"optimiser": opt, "capacity": cap, "noise": s, **row})
        acc = totals.setdefault(cap, new_totals())
        for name, t in part.items():  # in group order, as a serial loop would add them
            acc[name]["rss"] += t["rss"]
            acc[name]["n"] += t["n"]
            acc[name]["k"] += t["k"]
            acc[name]["loro"].extend(t["loro"])
    comparison = {cap: finish_comparison(t) for cap, t in totals.items()}
    theory = done[-1] if theory_ms is not None else None
    return r2_rows, comparison, theory


def _fit_design(grps, envs, idxs, msel, ks, max_nfev, ident_seed=0, ident_boot=99):
    """The groups of one design: per group the law on the train split, ``a, b, c`` on all
    points with bootstrap intervals over environments (rows of its ``idx``), its
    identification on all points (calibrated by a wild cluster bootstrap over ``M``,
    :mod:`rlscale.verification._law_calibration`), its leave-one-``M``-out and
    leave-one-``K``-out scores against the competitors
    (:mod:`rlscale.verification._law_holdout`) and its model-comparison totals; a list
    of ``(row, prediction, totals)`` in group order.

    Every fit of a law form, over all the groups, is one batched solve
    (:func:`rlscale.verification._law_models.fit_groups`), the bootstrap refits another
    (:func:`rlscale.verification._law_fits.bootstrap_min_law`).  A resample whose best fit is at
    one of the law's families at infinity enters the percentiles with the limits of
    its parameters (:func:`rlscale.verification._law_fits.limits`), so an end is ``None``
    (unbounded) where more resamples than the tail's share run off; a parameter that
    is not identified on all points gets no interval (``None``).
    """
    grp0 = grps[0]  # the rows of every group: M-major over ks, as env's
    lm = np.log([r["M"] for r in grp0])
    k = np.array([r["K"] for r in grp0])
    reg = np.array([r["regime"] for r in grp0])
    G = np.array([[r["G"] for r in grp] for grp in grps])
    train = np.array([[r["split"] == "train" for r in grp] for grp in grps])
    fits = fit_groups(lm, k, G, train, reg, max_nfev=max_nfev)
    # Bootstrap over environments: resample environments, refit from the point estimates.
    boot = np.concatenate([np.stack([env[:, i].mean(axis=1).reshape(-1) for i in idx])
                           for env, idx in zip(envs, idxs)])
    n_b = [len(idx) for idx in idxs]

    def per_resample(form):
        return np.repeat(np.array([f.fits[form]["all"] for f in fits]), n_b, axis=0)

    reps, verdicts = bootstrap_min_law(lm, k, boot, per_resample("min"),
                                       per_resample("sqrt_logm"), per_resample("plateau"),
                                       max_nfev=max_nfev)
    ident = calibrated_identification(lm, k, G, np.ones_like(G),
                                      rng=np.random.default_rng(ident_seed), max_nfev=max_nfev,
                                      n_boot=ident_boot)
    scores = holdout_scores(lm, k, G, np.ones(G.shape, bool), max_nfev=max_nfev)
    wins_m, wins_k = law_wins(scores), law_wins(scores, score="loko")
    explo = exploratory_rows(lm, k, G, np.ones(G.shape, bool), scores, max_nfev=max_nfev)
    out = []
    for j, fit in enumerate(fits):
        g, tr = G[j], train[j]
        row, pred = fit_law_group(lm, k, g, tr, fit)
        sl = slice(sum(n_b[:j]), sum(n_b[:j + 1]))
        rep, ver = reps[sl], verdicts[sl]
        nat = np.column_stack([np.exp(rep[:, 0]), rep[:, 1], np.exp(rep[:, 2])])
        lo, hi = np.array([limits(v, x) for v, x in zip(ver, nat)]).transpose(1, 0, 2)
        p0 = fit.fits["min"]["all"]
        ok = verdict_fields(ident.verdicts[j])
        boundary = {}
        corner = b_boundary(float(p0[1]), lm) if ok["identified"]["b"] else None
        if corner is not None:  # on the clamp: labelled, and no interval that looks interior
            boundary["b"] = (f"on the clamp corner -log M = {corner:.4g} (the law's gain is 0 "
                             f"at M <= {math.exp(-corner):.4g})")
        cis = {name: percentile_interval(lo[:, i], hi[:, i])
               if ok["identified"][name] and name not in boundary else None
               for i, name in enumerate("abc")}
        # An interval end on a clamp corner is where resamples piled up against the
        # constraint, not a quantile of an interior spread: say so.
        ends = [side for side, v in zip(("lower", "upper"), cis["b"] or ())
                if v is not None and b_boundary(v, lm) is not None]
        ci_boundary = {"b": ends} if ends else {}
        # Unidentified: where a runaway solve stopped (b ~ 1e4) is no estimate, nor is the
        # train split's (a subset of these points); JSON readers get null.
        est = {"a": float(np.exp(p0[0])), "b": float(p0[1]), "c": float(np.exp(p0[2]))}
        for name in (n for n in "abc" if not ok["identified"][n]):
            est[name] = row[name] = None
        row.update({"a_all": est["a"], "b_all": est["b"], "c_all": est["c"],
                    "a_ci": cis["a"], "b_ci": cis["b"], "c_ci": cis["c"],
                    "bootstrap": len(ver),
                    "bootstrap_at_boundary": sum(v != "interior" for v in ver),
                    "fit_status": fit.status["min"]["all"], **ok, "boundary": boundary,
                    "ci_boundary": ci_boundary,
                    "verdict": ident.verdicts[j],
                    "verdict_uncalibrated": ident.uncalibrated[j],
                    "lr": float(ident.lr[j]), "lr_p_value": float(ident.p_value[j]),
                    "lomo_rmse": _scores_row(scores.lomo[j], scores.models),
                    "loko_rmse": _scores_row(scores.loko[j], scores.models),
                    "lomo_winner": (scores.models[int(np.nanargmin(scores.lomo[j]))]
                                    if np.isfinite(scores.lomo[j]).any() else None),
                    "law_beats_lomo": wins_m[j], "law_beats_loko": wins_k[j],
                    "law_beats_named_lomo": all(wins_m[j].values()),
                    "exploratory": explo[j]})
        part = new_totals()
        compare_models(lm, k, g, reg, part, fit)
        out.append((row, pred, part))
    return out


def _scores_row(values: np.ndarray, models: tuple[str, ...]) -> dict[str, float | None]:
    return {m: (float(v) if np.isfinite(v) else None) for m, v in zip(models, values)}


def _breaks(curves, ks) -> list[dict[str, Any]]:
    """Curves whose gold falls past the peak by more than 2 standard errors (and 0.02 sd)."""
    out = []
    for (opt, cap, s, m), g_env in sorted(curves.items()):
        g = g_env.mean(axis=0)
        j = int(np.argmax(g))
        if j == ks.size - 1:
            continue
        diff = g_env[:, j] - g_env[:, -1]
        se = float(diff.std(ddof=1) / math.sqrt(diff.size))
        drop = float(diff.mean())
        if drop > max(2.0 * se, 0.02):
            out.append({"optimiser": opt, "capacity": cap, "noise": s, "M": m,
                        "K_peak": float(ks[j]), "G_peak": float(g[j]), "G_at_K_max": float(g[-1]),
                        "drop": drop, "drop_se": se})
    return out


def _m_growth(curves, ms) -> list[dict[str, Any]]:
    """``G`` at the largest budget for each ``M``: does more data keep helping?"""
    rows: dict[tuple[str, str, float], dict[str, Any]] = {}
    for (opt, cap, s, m), g_env in sorted(curves.items()):
        rows.setdefault((opt, cap, s), {"optimiser": opt, "capacity": cap, "noise": s,
                                        "M": [], "G_at_K_max": []})
        rows[(opt, cap, s)]["M"].append(m)
        rows[(opt, cap, s)]["G_at_K_max"].append(float(g_env.mean(axis=0)[-1]))
    return list(rows.values())
