"""The reward law on the testbed (``rlscale verify reward-law --testbed``): run, score, report.

Runs the grid pre-registered in :mod:`rlscale.verification._rm_testbed_design`
on the combinatorial trajectory worlds of :mod:`rlscale.simulate._chain_world`
with Bradley–Terry reward models (:mod:`rlscale.simulate._rm_testbed`), then
scores the law and its competitors leave one level out and names each group's
regime (:mod:`rlscale.verification._rm_testbed_analysis`).

**Work.**  One task per seed × cell (a fresh world, its comparisons, every
reward model, noise, ``M`` and optimiser), in ``jobs`` worker processes; each
task has its own seed stream (``SeedSequence(seed).spawn``), so the same seed
gives bit-identical gains whatever ``jobs`` is (workers and parent use one BLAS
thread in the fits: ``threadpoolctl``).  With ``out``, every finished task is
saved under ``out/checkpoints/`` (atomically) and a rerun with the same mode
and seed loads it instead of recomputing: a killed run resumes without losing
or redoing finished work.  CPU time is the parent's plus every task's own
(``time.process_time`` inside the task), so it is the same with any ``jobs``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import make_output_dir
from rlscale.theory._result import Result
from rlscale.verification._rm_testbed_design import (
    ACTIONS,
    cell,
    rm_grid,
    settings,
    testbed_grid,
)

__all__ = ["TestbedLawReport", "verify_testbed_reward_law"]

#: Version of the task results' layout; part of the checkpoint key.
_TASK_VERSION = 1


@dataclass(frozen=True)
class TestbedLawReport(Result):
    """Outcome of :func:`verify_testbed_reward_law` (``as_dict()`` gives JSON types).

    Attributes
    ----------
    groups : list of dict
        Per cell × RM × noise × optimiser: LOMO/LOKO RMSE, AIC and BIC of every
        model, the LOMO winner and regime, the law's ``a, b, c`` with
        identification (calibrated), boundary labels and jackknife intervals,
        ``gamma`` with its interval, the top decade's growth, over-optimisation.
    cells : list of dict
        Per cell: the share of groups where the law beats the named competitors
        (LOMO, LOKO), ``γ`` over its groups, whether the cell supports the law
        and ``√log M`` (the pre-registered rule).
    local_gamma : list of dict
        Per group and neighbouring ``M`` pair: the local exponent with its interval and band.
    points : list of dict
        Grid rows (``cell, rm, noise, optimiser, M, K, G, G_lo, G_hi, reached``).
    design : dict
        The grid as run (cells, ``M``, ``K``, seeds, settings).
    seconds, cpu_seconds : float
        Wall and CPU time (parent + tasks); ``load`` the 1-minute load before and after.
    """

    mode: str
    seed: int
    groups: list[dict[str, Any]]
    cells: list[dict[str, Any]]
    local_gamma: list[dict[str, Any]]
    points: list[dict[str, Any]]
    design: dict[str, Any]
    seconds: float
    cpu_seconds: float
    load: list[float]
    resumed_tasks: int = 0
    files: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "seed": self.seed, "seconds": self.seconds,
                "cpu_seconds": self.cpu_seconds, "load": self.load,
                "resumed_tasks": self.resumed_tasks, "design": self.design,
                "cells": self.cells, "groups": self.groups, "local_gamma": self.local_gamma,
                "files": self.files, "n_points": len(self.points)}

    def summary(self) -> str:
        """A human-readable account of the results."""
        from rlscale.verification._rm_testbed_files import summary_text

        return summary_text(self)


def _task(name: str, st: dict[str, Any], ms: np.ndarray, ks: np.ndarray,
          rms: list[tuple[str, float]], ss: np.random.SeedSequence) -> dict[str, Any]:
    """One seed of one cell: every RM × noise × M × optimiser; gains ``(nK,)`` each.

    Everything it needs is an argument (the settings, the grid): a worker process does
    not see the parent's module state.
    """
    from threadpoolctl import threadpool_limits

    from rlscale.simulate._chain_optimisers import soft_chain
    from rlscale.simulate._chain_world import chain_max, make_chain_world, sample_reference
    from rlscale.simulate._kl_frontier import frontier_gold
    from rlscale.simulate._reward_model import bt_labels
    from rlscale.simulate._rm_testbed import (
        chain_gold_gains,
        comparison_pairs,
        prior_ridge,
        rm_design,
        train_path,
    )

    t0 = time.process_time()
    c = cell(name)
    world_ss, pair_ss, pool_ss, label_ss, opt_ss = ss.spawn(5)
    noises = sorted({s for _, s in rms})
    label_gen = dict(zip(noises, (np.random.default_rng(x) for x in label_ss.spawn(len(noises)))))
    with threadpool_limits(1):
        world = make_chain_world(c.horizon, ACTIONS, c.order, c.interaction_share,
                                 rng=np.random.default_rng(world_ss))
        ta, tb, margin = comparison_pairs(world, int(ms[-1]), np.random.default_rng(pair_ss))
        pool = sample_reference(world, st["pool"], np.random.default_rng(pool_ss))
        betas = np.geomspace(0.003, 30.0, st["betas"])
        orc = soft_chain(world.gold, world.gold, betas)
        oracle = frontier_gold(np.append(0.0, orc.kl), np.append(0.0, orc.proxy),
                               np.append(0.0, orc.gold), ks)
        labels = {s: bt_labels(margin, 0.0, s, label_gen[s]) for s in noises}
        gains: dict[str, np.ndarray] = {}
        designs: dict[str, Any] = {}
        for (rm, s), gen in zip(rms, (np.random.default_rng(x) for x in
                                      opt_ss.spawn(len(rms)))):
            if rm not in designs:
                designs[rm] = rm_design(world, ta, tb, rm)
            thetas = train_path(designs[rm], labels[s], ms, prior_ridge(world, rm, s))
            for m, theta in zip(ms, thetas):
                opts = ("soft", "bon")
                if s in st["pg_noises"] and m in st["pg_m"]:
                    opts += ("pg",)
                out = chain_gold_gains(world, theta, rm, ks, optimisers=opts, betas=betas,
                                    pool=pool, bon_ns=np.geomspace(1.0, st["pool"],
                                                                   st["bon_ns"]),
                                    pg_betas=np.geomspace(0.03, 3.0, st["pg_betas"]),
                                    pg_steps=st["pg_steps"], pg_batch=st["pg_batch"], rng=gen)
                for opt, g in out.items():
                    gains[f"{rm}|{s}|{opt}|{m:.0f}"] = g
    return {"gains": gains, "oracle": oracle, "ceiling": chain_max(world.gold)[0],
            "cpu": time.process_time() - t0}


def _task_key(mode: str, seed: int, i: int, name: str) -> str:
    spec = json.dumps({"v": _TASK_VERSION, "mode": mode, "settings": settings(mode),
                       "seed": seed, "i": i, "cell": name}, sort_keys=True, default=str)
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def _save_task(path: Path, res: dict[str, Any]) -> None:
    """A task's results as strict JSON (floats round-trip exactly; NaN as "nan")."""
    from rlscale.files._atomic import write_json_atomic

    write_json_atomic(path, {"version": _TASK_VERSION, **res})


def _load_task(path: Path) -> dict[str, Any] | None:
    def arr(v):
        return np.array([np.nan if x == "nan" else x for x in v], dtype=float)

    try:
        with open(path, encoding="utf-8") as f:
            z = json.load(f)
        if z.get("version") != _TASK_VERSION:
            return None
        return {"gains": {k: arr(v) for k, v in z["gains"].items()},
                "oracle": arr(z["oracle"]), "ceiling": float(z["ceiling"]),
                "cpu": float(z["cpu"])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # absent or torn
        return None


def verify_testbed_reward_law(mode: str = "quick", out: str | Path | None = None,
                              rng: Any = 0, *, figures: bool = True, progress: bool = False,
                              jobs: int = 2) -> TestbedLawReport:
    """Run the pre-registered testbed grid, score the law, write files to ``out``.

    Parameters
    ----------
    mode : {"quick", "full"}
        ``quick`` is budgeted at 30 s on 2 cores, ``full`` at 10 minutes.
    out : path, optional
        Directory for ``results.json``, ``grid.csv``, ``groups.csv``, the figures and
        the task checkpoints.
    rng : int
        Seed (>= 0) of everything.
    jobs : int
        Worker processes (joblib) over seed × cell tasks.

    Examples
    --------
    >>> rep = verify_testbed_reward_law("quick", rng=0)  # doctest: +SKIP
    >>> sorted({g["cell"] for g in rep.groups})  # doctest: +SKIP
    ['additive', 'pool', 'rough_k3']
    """
    from tqdm import tqdm

    from rlscale.theory._validation import check_bool, check_positive_int
    from rlscale.verification._rm_testbed_analysis import analyse

    st = settings(mode)
    figures = check_bool("figures", figures)
    progress = check_bool("progress", progress)
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be an int seed >= 0; got {rng!r}")
    seed = check_positive_int("seed", rng, minimum=0)
    jobs = check_positive_int("jobs", jobs, maximum=256)
    if out is not None:
        out = Path(out)
        make_output_dir(out)
        make_output_dir(out / "checkpoints")
    load = [os.getloadavg()[0]]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    root = np.random.SeedSequence(seed)
    task_ss, analysis_ss = root.spawn(2)
    seed_ss = task_ss.spawn(st["seeds"])
    tasks = [(i, name, ss) for i, s_ss in enumerate(seed_ss)
             for name, ss in zip(st["cells"], s_ss.spawn(len(st["cells"])))]
    results: dict[tuple[int, str], dict[str, Any]] = {}
    todo = []
    for i, name, ss in tasks:
        path = None if out is None else \
            out / "checkpoints" / f"{_task_key(mode, seed, i, name)}.json"
        got = None if path is None else _load_task(path)
        if got is not None:
            results[(i, name)] = got
        else:
            todo.append((i, name, ss, path))
    resumed = len(results)
    bar = tqdm(total=len(tasks) + 1, initial=resumed, desc="reward-law --testbed",
               disable=not progress, leave=False)
    def args(name, ss):
        return (name, dict(st), *testbed_grid(mode, name), rm_grid(mode, cell(name)), ss)

    if jobs == 1 or len(todo) <= 1:
        stream = (_task(*args(name, ss)) for _, name, ss, _ in todo)
    else:
        from joblib import Parallel, delayed

        stream = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_task)(*args(name, ss)) for _, name, ss, _ in todo)
    for (i, name, _, path), res in zip(todo, stream):
        results[(i, name)] = res
        if path is not None:
            _save_task(path, res)
        bar.update(1)
    task_cpu = sum(r["cpu"] for r in results.values())
    groups, cells, local, points = analyse(results, mode, np.random.default_rng(analysis_ss))
    bar.update(1)
    bar.close()
    design = {"actions": ACTIONS, "seeds": st["seeds"], "settings": dict(st),
              "cells": [{"name": c, **_cell_info(mode, c)} for c in st["cells"]]}
    load.append(os.getloadavg()[0])
    rep = TestbedLawReport(mode, seed, groups, cells, local, points, design,
                           time.perf_counter() - wall0, time.process_time() - cpu0 + task_cpu,
                           load, resumed)
    if out is not None:
        from rlscale.verification._rm_testbed_files import write_files

        rep = write_files(rep, out, figures)
    return rep


def _cell_info(mode: str, name: str) -> dict[str, Any]:
    c = cell(name)
    ms, ks = testbed_grid(mode, name)
    H, k, nu = c.horizon, c.order, c.interaction_share
    d_add = H * ACTIONS if nu < 1.0 else 0
    d_win = (H - k + 1) * ACTIONS**k if nu > 0.0 else 0
    return {"horizon": H, "order": k, "interaction_share": nu,
            "candidates": float(ACTIONS) ** H, "features": d_add + d_win,
            "max_kl": H * float(np.log(ACTIONS)), "M": ms.tolist(), "K": ks.tolist(),
            "reward_models": [{"rm": rm, "noise": s} for rm, s in rm_grid(mode, c)],
            "probes": c.probes}
