"""Grounding inference-budget plans in a trained agent (composes simulate and optimize).

1. Train a policy with :func:`rlscale.simulate.train` on key → door → goal
   tasks (``subgoal_rate = 1``).
2. Draw a held-out *job* from the same family with its own seed: the first
   ``job_tasks`` tasks whose every subtask the trained policy solves with
   per-rollout probability at least ``q_min`` (a documented selection rule so
   that the job is solvable within the budgets studied); its 3·``job_tasks``
   subtasks are the turns, in order.
3. Per-turn candidate success q_t exactly (backward induction on the finite
   MDP, :func:`rlscale.simulate.subtask_success`); turns as
   :class:`rlscale.theory.Turn` with a perfect verifier and with a noisy one
   of known (fpr, fnr); terminal failures.
4. For each verifier and budget: the optimal static plan, the adaptive plan
   and the baselines predicted by :mod:`rlscale.optimize`, and realised by
   playing ``episodes`` episodes with real policy rollouts
   (:func:`rlscale.simulate.run_turn_episodes`), with Wilson 95 % intervals;
   η against the best baseline predicted (budget ratio at equal predicted
   success) and realised (the least budget at which the realised static plan
   matches the baseline's realised success, by bisection with common random
   numbers).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real

__all__ = ["GroundingConfig", "GroundingResult", "ground_inference", "write_figures"]


@dataclass(frozen=True)
class GroundingConfig:
    """Settings of :func:`ground_inference` (plain numbers; see the module docstring)."""

    environments: int = 32
    tasks_per_environment: int = 4
    trajectories_per_task: int = 8
    algorithm: str = "rlds"
    epochs: int = 6
    seed: int = 0
    job_tasks: int = 4
    q_min: float = 0.05
    job_seed: int = 2027
    budget_factors: tuple[float, ...] = (1.5, 3.0)
    fpr: float = 0.1
    fnr: float = 0.2
    episodes: int = 10000
    mc_seed: int = 7

    def __post_init__(self) -> None:
        for name in ("environments", "tasks_per_environment", "epochs", "job_tasks", "episodes"):
            check_positive_int(name, getattr(self, name))
        check_positive_int("trajectories_per_task", self.trajectories_per_task, minimum=2)
        for name in ("seed", "job_seed", "mc_seed"):
            check_positive_int(name, getattr(self, name), minimum=0)
        check_real("q_min", self.q_min, low=0.0, high=1.0, low_open=True, high_open=True)
        check_real("fpr", self.fpr, low=0.0, high=1.0)
        check_real("fnr", self.fnr, low=0.0, high=1.0)
        if self.fpr + self.fnr >= 1:
            raise ValueError(f"fpr + fnr must be < 1; got fpr={self.fpr:g}, fnr={self.fnr:g}")
        factors = tuple(float(f) for f in self.budget_factors)
        if not factors:
            raise ValueError("budget_factors must hold at least one factor")
        check_real("budget_factors", factors, low=0.0, low_open=True)
        object.__setattr__(self, "budget_factors", factors)


@dataclass(frozen=True)
class Realised(Result):
    """Predicted success of a plan and its Monte Carlo realisation."""

    predicted: float
    realised: float
    low: float
    high: float
    mean_used: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GroundingResult(Result):
    """Everything :func:`ground_inference` measured (``as_dict`` for JSON)."""

    config: GroundingConfig
    train_success: float
    q: list[float]
    turn_labels: list[str]
    budgets: list[int]
    rows: list[dict[str, Any]] = field(default_factory=list)
    curves: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "train_success": self.train_success,
                "q": self.q, "turn_labels": self.turn_labels, "budgets": self.budgets,
                "rows": self.rows, "curves": self.curves, "seconds": self.seconds}

    def summary(self) -> str:
        lines = [f"trained policy: held-out episode success {self.train_success:.3f}; "
                 f"job of {len(self.q)} turns, q = "
                 + ", ".join(f"{v:.3f}" for v in self.q)]
        for row in self.rows:
            head = f"{row['verifier']:>7s} verifier, budget {row['budget']}:"
            lines.append(head)
            for name in ("static", "adaptive", row["best_baseline"]):
                r = row["plans"][name]
                lines.append(f"    {name:13s} predicted {r['predicted']:.3f}  realised "
                             f"{r['realised']:.3f} [{r['low']:.3f}, {r['high']:.3f}]  "
                             f"mean budget used {r['mean_used']:.1f}")
            lines.append(f"    value of adaptivity {row['adaptivity_gain']:+.3f} predicted, "
                         f"{row['realised_adaptivity_gain']:+.3f} realised; "
                         f"static/best-baseline success ratio {row['success_ratio']:.2f}; "
                         f"η vs {row['best_baseline']} {row['eta'][row['best_baseline']]:.2f} "
                         f"predicted, {row['realised_eta']:.2f} realised")
        return "\n".join(lines)


def _job(config: GroundingConfig, result: Any):
    from rlscale.simulate import subtask_success, trained_policy_table

    family = result.config.family
    rng = np.random.default_rng(np.random.SeedSequence([config.job_seed, 0x10B]))
    world = family.sample(4 * config.job_tasks, 4, rng)
    table = trained_policy_table(result, world)
    q = subtask_success(world, table)
    eligible = np.flatnonzero((world.start_stage == 0) & (q.min(axis=1) >= config.q_min))
    if eligible.size < config.job_tasks:
        raise ValueError(f"only {eligible.size} held-out tasks have every subtask solvable with "
                         f"q >= q_min={config.q_min:g}; lower q_min or train longer")
    chosen = eligible[: config.job_tasks]
    return world, table, q, chosen


def ground_inference(config: GroundingConfig | None = None, *,
                     grid_points: int = 12) -> GroundingResult:
    """Train, plan and realise (see the module docstring).

    Examples
    --------
    >>> cfg = GroundingConfig(environments=8, epochs=2, job_tasks=1, q_min=0.01,
    ...                       budget_factors=(1.0,), episodes=200)
    >>> res = ground_inference(cfg, grid_points=3)
    >>> len(res.q), len(res.rows)       # 3 turns; perfect and noisy verifier, one budget
    (3, 2)
    """
    import time

    from rlscale.optimize import (
        BASELINES,
        adaptive_plan,
        baseline_plan,
        compare_inference_plans,
        integer_plan,
    )
    from rlscale.simulate import run_turn_episodes, train
    from rlscale.theory import Turn
    from rlscale.theory._validation import check_positive_int

    check_positive_int("grid_points", grid_points, minimum=2, maximum=10_000)
    if config is not None and not isinstance(config, GroundingConfig):  # issue 22
        raise TypeError(f"config must be a GroundingConfig or None; got "
                        f"{type(config).__name__} {config!r:.60}")
    config = GroundingConfig() if config is None else config
    start = time.perf_counter()
    result = train(n_environments=config.environments,
                   tasks_per_environment=config.tasks_per_environment,
                   trajectories_per_task=config.trajectories_per_task,
                   algorithm=config.algorithm, epochs=config.epochs, seed=config.seed,
                   subgoal_rate=1.0)
    world, table, q_all, chosen = _job(config, result)
    tasks = np.repeat(chosen, 3)
    stages = np.tile(np.arange(3), chosen.size)
    q = [float(q_all[t, s]) for t, s in zip(tasks, stages)]
    labels = [f"task {i + 1} {name}" for i in range(chosen.size)
              for name in ("key", "door", "goal")]
    scale = sum(1.0 / v for v in q)  # expected draws to succeed at every turn once
    budgets = sorted({max(len(q), round(f * scale)) for f in config.budget_factors})
    verifiers = {"perfect": [Turn.with_coverage(v) for v in q],
                 "noisy": [Turn.with_verifier(v, fpr=config.fpr, fnr=config.fnr) for v in q]}
    rng = np.random.default_rng(config.mc_seed)
    rows, curves = [], {}
    for vname, turns in verifiers.items():
        fp, fn = (0.0, 0.0) if vname == "perfect" else (config.fpr, config.fnr)
        for B in budgets:
            cmp = compare_inference_plans(turns, B)
            best = cmp.best_baseline
            plans: dict[str, Realised] = {}
            for name, caps, pred in (("static", cmp.optimal.n, cmp.optimal.success),
                                     (best, cmp.baselines[best].n, cmp.baselines[best].success)):
                out = run_turn_episodes(world, table, tasks, stages, budget=B, caps=caps,
                                        fpr=fp, fnr=fn, episodes=config.episodes, rng=rng)
                plans[name] = Realised(pred, out.rate, *out.interval(), float(out.used.mean()))
            out = run_turn_episodes(world, table, tasks, stages, budget=B,
                                    commit=cmp.adaptive.commit, fpr=fp, fnr=fn,
                                    episodes=config.episodes, rng=rng)
            plans["adaptive"] = Realised(cmp.adaptive.success, out.rate, *out.interval(),
                                         float(out.used.mean()))
            # Realised η: the least budget at which the realised static plan reaches the best
            # baseline's realised success (bisection; one seed for every budget tried, so the
            # comparison uses common random numbers).
            target = plans[best].realised
            seed = int(rng.integers(2**31))

            def realised_static(b: int, turns=turns, fp=fp, fn=fn, seed=seed) -> float:
                caps = integer_plan(turns, b).n
                return run_turn_episodes(world, table, tasks, stages, budget=b, caps=caps,
                                         fpr=fp, fnr=fn, episodes=config.episodes,
                                         rng=seed).rate

            lo_b, hi_b = len(turns), B
            if realised_static(lo_b) >= target:
                hi_b = lo_b
            while hi_b - lo_b > 1:
                mid = (lo_b + hi_b) // 2
                lo_b, hi_b = (lo_b, mid) if realised_static(mid) >= target else (mid, hi_b)
            rows.append({
                "verifier": vname, "budget": B, "best_baseline": best,
                "plans": {k: v.as_dict() for k, v in plans.items()},
                "static_n": list(cmp.optimal.n),
                "baseline_success": {k: v.success for k, v in cmp.baselines.items()},
                "success_ratio": cmp.success_ratio, "eta": cmp.eta,
                "realised_eta": B / hi_b,
                "adaptivity_gain": cmp.adaptivity_gain,
                "realised_adaptivity_gain": plans["adaptive"].realised
                - plans["static"].realised,
            })
        lo = sum(t.cost for t in turns)
        grid = sorted({int(v) for v in np.geomspace(lo, 2 * max(budgets), grid_points)})
        curves[vname] = {
            "budgets": grid,
            "static": [integer_plan(turns, b).success for b in grid],
            "adaptive": [adaptive_plan(turns, b).success for b in grid],
            **{k: [baseline_plan(turns, b, k).success for b in grid] for k in BASELINES},
            "allocation": [list(integer_plan(turns, b).n) for b in grid],
        }
    return GroundingResult(config=config, train_success=result.success, q=q,
                           turn_labels=labels, budgets=budgets, rows=rows, curves=curves,
                           seconds=time.perf_counter() - start)


def write_figures(result: GroundingResult, out: Any) -> list[str]:
    """Success against budget per policy, and the per-turn allocation as the budget grows."""
    from pathlib import Path

    from rlscale._optional import require

    require("matplotlib", extra="plot", purpose="inference figures")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlscale.files._atomic import write_bytes_atomic

    out = Path(out)
    written = []

    def plain_log_x(ax: Any) -> None:
        from matplotlib.ticker import LogLocator, NullLocator, ScalarFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())  # unlabelled marks: a third of the drawing

    for vname, curve in result.curves.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for key in ("static", "adaptive", "uniform", "front-loaded", "difficulty", "fixed-n"):
            # fixed-n equals uniform when every turn costs the same: dashed, so both show
            ax.plot(curve["budgets"], curve[key], marker="o" if key in ("static", "adaptive")
                    else None, linestyle="--" if key == "fixed-n" else "-", label=key)
        for row in result.rows:
            if row["verifier"] != vname:
                continue
            for key, style in (("static", "s"), ("adaptive", "D")):
                r = row["plans"][key]
                ax.errorbar([row["budget"]], [r["realised"]],
                            yerr=[[max(0.0, r["realised"] - r["low"])],
                                  [max(0.0, r["high"] - r["realised"])]],
                            fmt=style, color="k", capsize=3)
        plain_log_x(ax)
        ax.set_xlabel("budget (samples)")
        ax.set_ylabel("episode success")
        ax.set_title(f"{vname} verifier: predicted curves, realised points (95 % CI)")
        ax.legend(fontsize=7)
        written.append(_save(fig, out / f"inference-success-{vname}.png", write_bytes_atomic))
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 4))
        alloc = np.array(curve["allocation"], dtype=float)
        shares = alloc / alloc.sum(axis=1, keepdims=True)
        ax.stackplot(curve["budgets"], shares.T, labels=result.turn_labels)
        plain_log_x(ax)
        ax.set_xlabel("budget (samples)")
        ax.set_ylabel("share of candidates per turn")
        ax.set_title(f"optimal static allocation, {vname} verifier")
        ax.legend(fontsize=6, ncol=2, loc="upper right")
        written.append(_save(fig, out / f"inference-allocation-{vname}.png", write_bytes_atomic))
        plt.close(fig)
    return written


def _save(fig: Any, path: Any, write: Any) -> str:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    write(path, buf.getvalue())
    return str(path)

