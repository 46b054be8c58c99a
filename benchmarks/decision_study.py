"""Does the recommended plan pay off once deployed?  The decision study of issue 29.

    python -m benchmarks.decision_study [--datasets 200] [--extra 100] [--small 50]
        [--jobs 2] [--out DIR] [--only NAME ...] [--rescore] [--figure PNG]
        [--against DIR]

Every cell draws pilot sweeps from a **known** generating law, runs what a user runs on
each -- :func:`~rlscale.optimize.recommend` (the default decision) and the plug-in optimum
with its old predicted-η intervals (:func:`~rlscale.optimize.plan_uncertainty`'s method) --
and judges each plan by what it delivers under the generating law: **η_deployed**
(:mod:`rlscale.optimize._deployed`), with the oracle η (the generating law's own optimum
path) beside it.

Generators (the report's axes E, t, k, cost ``20E + 2Et + 0.1Etk``, budget 1,000, bounds
E ≤ 256, t ≤ 64, 2 ≤ k ≤ 128, pilot centre E, t, k = 8, 4, 8; log noise 0.065 unless
said):

``well``          the calibration study's additive law (in the fitted family);
``far``           ``0.26 + 0.9·E^−0.5 + 0.1·t^−0.2 + 0.1·k^−0.2``: proportional is far
                  from optimal (oracle η 1.61 against it);
``interaction``   ``well`` plus ``0.3·(E·k)^−0.3``, a term no additive law has;
``saturating``    k's benefit stops at k ≈ 16 (a smooth min(k, 16) inside its term);
``step``          ``well`` plus 0.08 of loss while E < 6 (a step between design points);
``correlated``    ``well`` with noise shared by a design point's seeds (σ 0.05 per point,
                  0.04 per run), which the fitter's row bootstrap does not know;
``trainer``       rlscale's own trainer (:mod:`benchmarks._trainer_truth`): the truth is
                  the trainer's mean held-out loss on a grid, the pilots its real seeds.

Pilot sizes: ``report`` (the report's star design, 3 seeds, 51 runs) for every generator
(``--datasets`` data sets for the goal's four generators, ``well``, ``interaction``,
``saturating``, ``step``; ``--extra`` for the others); ``quick`` (the ``--quick`` design,
2 seeds, 16 runs) and ``large`` (the report's design, 5 seeds, 85 runs) for ``well``,
``far`` and ``interaction`` (``--small`` data sets).  One data set costs about 2.3 CPU s
(three fits with their bootstraps; on the shared 2-core machine at load 15), the default
study about an hour of CPU.

Output: one JSON file per cell in ``--out`` (default ``decision-study/``), rewritten
atomically after every data set, so a killed study resumes where it stopped (finished
data sets are read back, not redone; a file from another configuration is refused).
``--rescore`` prints the tables from the files without computing anything;
``--figure`` writes the reliability plot of P(beats); ``--against DIR`` pairs every cell
with the same cell of another rule's files (the same seeds, so the same data sets).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._decision_scores import figure, paired_report, report

COST = "20.0*E + 2.0*E*t + 0.1*E*t*k"
BOUNDS = {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}
CENTRE = {"E": 8.0, "t": 4.0, "k": 8.0}
BUDGET = 1000.0
NOISE = 0.065
AXES = ("E", "t", "k")
#: Settings of the decision and of the plug-in comparison (fixed: part of each cell's key).
SETTINGS = {"bootstrap_full": 200, "bootstrap": 100, "plan_laws": 40, "old_laws": 40,
            "probability": 0.95, "confidence": 0.9, "split": 2.0, "loss_range": [0.0, 1.0],
            "guard": "departure", "version": 3}


# -- generators -------------------------------------------------------------------------------

def _additive(floor: float, coef: tuple[float, ...], expo: tuple[float, ...]
              ) -> Callable[[Mapping[str, Any]], np.ndarray]:
    def loss(v: Mapping[str, Any]) -> np.ndarray:
        return floor + sum(c * np.asarray(v[a], dtype=float) ** -e
                           for a, c, e in zip(AXES, coef, expo))
    return loss


_WELL = _additive(0.26, (0.5, 0.35, 0.2), (0.3, 0.3, 0.5))


def _interaction(v: Mapping[str, Any]) -> np.ndarray:
    E, k = (np.asarray(v[a], dtype=float) for a in ("E", "k"))
    return _WELL(v) + 0.3 * (E * k) ** -0.3


def _saturating(v: Mapping[str, Any]) -> np.ndarray:
    E, t, k = (np.asarray(v[a], dtype=float) for a in AXES)
    k_eff = (k**-4 + 16.0**-4) ** -0.25  # a smooth min(k, 16)
    return 0.26 + 0.5 * E**-0.3 + 0.35 * t**-0.3 + 0.4 * k_eff**-0.5


def _step(v: Mapping[str, Any]) -> np.ndarray:
    return _WELL(v) + 0.08 * (np.asarray(v["E"], dtype=float) < 6.0)


@dataclass(frozen=True)
class Generator:
    """A known generating law and its noise: ``loss(values)`` over the axes E, t, k."""

    name: str
    loss: Callable[[Mapping[str, Any]], np.ndarray]
    noise: float = NOISE
    point_noise: float = 0.0  # a component shared by a design point's seeds
    trainer: bool = False

    def draw(self, design: list[dict[str, float]], replicates: int, rng: np.random.Generator,
             truth: Any = None) -> dict[str, np.ndarray]:
        x = {a: np.repeat([p[a] for p in design], replicates) for a in AXES}
        if self.trainer:  # real trainer seeds: `replicates` of each point's measured runs
            loss = np.concatenate([rng.choice(truth.star[tuple(int(p[a]) for a in AXES)],
                                              replicates, replace=False) for p in design])
            return {**x, "loss": loss}
        eps = self.noise * rng.standard_normal(x["E"].size)
        if self.point_noise:
            eps = eps + self.point_noise * np.repeat(rng.standard_normal(len(design)),
                                                     replicates)
        return {**x, "loss": self.loss(x) * np.exp(eps)}


GENERATORS = {
    "well": Generator("well", _WELL),
    "far": Generator("far", _additive(0.26, (0.9, 0.1, 0.1), (0.5, 0.2, 0.2))),
    "interaction": Generator("interaction", _interaction),
    "saturating": Generator("saturating", _saturating),
    "step": Generator("step", _step),
    "correlated": Generator("correlated", _WELL, noise=0.04, point_noise=0.05),
    "trainer": Generator("trainer", lambda v: None, trainer=True),  # loss set at run time
}


def pilots() -> dict[str, tuple[list[dict[str, float]], int]]:
    """Pilot designs: name -> (star design points, replicates)."""
    from rlscale.optimize import star_design
    from rlscale.report import DEFAULTS, QUICK

    def design(axes: Mapping[str, Any]) -> list[dict[str, float]]:
        base = DEFAULTS["sweep"]["base"]
        return star_design({"E": base["environments"], "t": base["tasks_per_environment"],
                            "k": base["trajectories_per_task"]},
                           {"E": axes["environments"], "t": axes["tasks_per_environment"],
                            "k": axes["trajectories_per_task"]})

    full = design(DEFAULTS["sweep"]["axes"])
    return {"report": (full, 3), "quick": (design(QUICK["sweep"]["axes"]), 2),
            "large": (full, 5)}


#: The generators of the issue's first goal (the well-specified one and three
#: misspecified ones, ``--datasets`` data sets each); the other report-pilot cells get
#: ``--extra``, the quick and large pilots ``--small``.
GOAL = ("well", "interaction", "saturating", "step")
#: The cells in the order they run (the trainer last: its truth takes the longest to build).
CELLS = [*((g, "report") for g in GOAL), ("far", "report"), ("correlated", "report"),
         *((g, p) for p in ("quick", "large") for g in ("well", "far", "interaction")),
         ("trainer", "report")]


# -- the truth's side: baselines, oracle, deployed η --------------------------------------------

def _problem() -> Any:
    from rlscale.optimize import AllocationProblem
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(0.26, dict(zip(AXES, (0.5, 0.35, 0.2))), dict(zip(AXES, (0.3, 0.3, 0.5))))
    return AllocationProblem(law, COST, BOUNDS)


def _oracle_path(loss: Callable, budgets: np.ndarray) -> Any:
    """The generating law's own optimum along ``budgets``: multistart SLSQP in log space
    (the generators are smooth but for ``step``, which is searched on each side of E = 6,
    and the trainer's piecewise-multilinear truth, searched inside its grid: its
    ``domain``)."""
    from scipy.optimize import minimize

    from rlscale.optimize._decision_paths import make_path

    problem = _problem()
    lo = np.log([BOUNDS[a][0] for a in AXES])
    hi = np.log([BOUNDS[a][1] for a in AXES])
    # A truth measured on a grid (the trainer's) is searched inside its grid only: the study's
    # bounds reach E = 256, the trained grid E = 64 (asked beyond it, the truth refuses).
    domain = getattr(loss, "domain", None)
    if domain is not None:
        lo = np.maximum(lo, np.log([domain[a][0] for a in AXES]))
        hi = np.minimum(hi, np.log([domain[a][1] for a in AXES]))
    starts = [np.clip(np.log([e, t, k]), lo, hi)
              for e in (4, 32) for t in (1.5, 12) for k in (4, 32)]
    rows: list[dict[str, float]] = []
    for b in budgets:
        if rows:  # the previous budget's optimum, scaled to this budget
            starts = [*starts[:8], np.log(list(rows[-1].values())) + math.log(2.0) / 12]
        def f(p: np.ndarray) -> float:
            try:
                return float(np.ravel(loss(dict(zip(AXES, np.exp(p)))))[0])
            except ValueError:  # an SLSQP iterate beyond the trained cells (cost > MAX_COST)
                return math.inf

        def con(p: np.ndarray, b: float = float(b)) -> float:
            return math.log(b) - math.log(float(problem.cost_at(dict(zip(AXES, np.exp(p))))))

        best = None
        for s in starts:
            for box in ((lo, hi), (np.maximum(lo, [math.log(6.0), lo[1], lo[2]]), hi),
                        (lo, np.minimum(hi, [math.log(6.0), hi[1], hi[2]]))):
                if np.any(box[0] > box[1]):
                    continue
                r = minimize(f, np.clip(s, *box), method="SLSQP",
                             bounds=list(zip(*box)),
                             constraints=[{"type": "ineq", "fun": con}],
                             options={"ftol": 1e-12, "maxiter": 300})
                if (con(r.x) > -1e-9 and math.isfinite(r.fun)
                        and (best is None or r.fun < best[0])):
                    best = (float(r.fun), r.x)
        if best is None:
            raise RuntimeError(f"the oracle path found no feasible optimum at budget {b:g} "
                               "from any start")
        rows.append(dict(zip(AXES, np.exp(best[1]).tolist(), strict=True)))
    return make_path(problem, "oracle", budgets, rows)


def truth_summary(gen: Generator, loss: Callable) -> dict[str, Any]:
    """Baselines' losses under the truth, the truly strongest, oracle η against each."""
    from rlscale.optimize._baselines import baseline_allocations
    from rlscale.optimize._decision_paths import path_budgets
    from rlscale.optimize._deployed import path_etas

    problem = _problem()
    bases = baseline_allocations(problem, BUDGET, CENTRE)
    budgets = path_budgets(problem, BUDGET)
    oracle = _oracle_path(loss, budgets)
    losses = {n: float(np.ravel(loss(v))[0]) for n, (v, _, _) in bases.items()}
    oracle_eta = {n: float(path_etas(oracle, [loss], v, c)[0][0])
                  for n, (v, c, _) in bases.items()}
    mid = int(np.argmin(np.abs(np.log(budgets / BUDGET))))
    return {"baseline_loss": losses, "strongest": min(losses, key=losses.get),
            "oracle_eta": oracle_eta, "oracle_values": oracle.at(mid),
            "oracle_loss": float(oracle.losses(loss)[mid])}


# -- one data set ------------------------------------------------------------------------------

def one(gen: Generator, loss: Callable, data: dict[str, np.ndarray], seed: int
        ) -> dict[str, Any]:
    """Everything recorded for one pilot data set (plain JSON)."""
    from rlscale.optimize import AllocationProblem, fit_law, recommend
    from rlscale.optimize._baselines import (
        baseline_allocations,
        compare_baselines,
        eta_bootstrap,
    )
    from rlscale.optimize._decision_paths import optimum_path, path_budgets
    from rlscale.optimize._deployed import path_etas

    s = SETTINGS
    out: dict[str, Any] = {"seed": seed}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
        try:
            fit = fit_law(data, axes=list(AXES), bootstrap=s["bootstrap_full"], seed=seed,
                          n_jobs=1)
        except (ValueError, RuntimeError, ArithmeticError) as exc:
            out["fit_error"] = f"{type(exc).__name__}: {exc}"
            return out
    problem = _problem()
    bases = {n: (v, c) for n, (v, c, _) in
             baseline_allocations(problem, BUDGET, CENTRE).items()}
    budgets = path_budgets(problem, BUDGET)

    def deployed(path: Any, what: str) -> dict[str, float] | None:
        """η_deployed of ``path`` against each baseline; ``None`` where the truth is not
        defined along it (a trainer path beyond the trained grid), said in
        ``out["beyond_truth"][what]`` -- one such path must not stop the cell."""
        try:
            return {n: float(path_etas(path, [loss], v, c)[0][0])
                    for n, (v, c) in bases.items()}
        except ValueError as exc:
            if getattr(loss, "domain", None) is None:  # an analytic truth: a real error
                raise
            out.setdefault("beyond_truth", {})[what] = str(exc)
            return None

    # The plug-in plan and its old predicted η (the point law's own optimum per law).
    try:
        point = compare_baselines(AllocationProblem(fit.law, COST, BOUNDS), BUDGET, CENTRE)
        laws = fit.bootstrap_laws()
        laws = [laws[j] for j in np.linspace(0, len(laws) - 1,
                                             min(s["old_laws"], len(laws))).astype(int)]
        boot = eta_bootstrap(point, laws, COST, BOUNDS, None, allocations=False)
        path = optimum_path(fit.law, COST, BOUNDS, None, budgets, BUDGET,
                             point.plan.values, "plug-in")
        out["plug_in"] = {"values": point.plan.values, "eta_deployed": deployed(path, "plug_in"),
                          "predicted": {n: float(r["eta"]) for n, r in point.baselines.items()},
                          "samples": {n: v.tolist() for n, v in boot["etas"].items()}}
    except (ValueError, RuntimeError, ArithmeticError) as exc:
        out["plug_in_error"] = f"{type(exc).__name__}: {exc}"
    rec = recommend(data, COST, BUDGET, CENTRE, axes=list(AXES), bounds=BOUNDS, fit=fit,
                    bootstrap=s["bootstrap"], plan_laws=s["plan_laws"],
                    probability=s["probability"], confidence=s["confidence"],
                    split=s["split"], loss_range=tuple(s["loss_range"]), seed=seed,
                    guard=s["guard"])
    r = {"choice": rec.choice, "status": rec.status, "departs": rec.departs,
         "strongest": rec.strongest, "steps": rec.steps, "reason": rec.reason,
         "values": rec.values, "eta_deployed": deployed(rec.path, "recommend"),
         "comparisons": {n: c.as_dict() for n, c in rec.comparisons.items()}}
    if rec.candidate:
        r["candidate"] = {"values": rec.candidate["values"],
                          "eta_deployed": deployed(rec.candidate["path"], "candidate"),
                          "comparisons": {n: c.as_dict()
                                          for n, c in rec.candidate["comparisons"].items()}}
    out["recommend"] = r
    return out


# -- cells, resumable ---------------------------------------------------------------------------

def _worker(args: tuple[str, str, int, int, str]) -> tuple[int, dict[str, Any]]:
    gen_name, pilot, i, seed, out = args
    start = time.process_time()
    gen, loss, truth = _generator(gen_name, Path(out))
    design, reps = pilots()[pilot]
    rng = np.random.default_rng(seed)
    data = gen.draw(design, reps, rng, truth)
    rec = one(gen, loss, data, seed)
    rec["cpu_seconds"] = time.process_time() - start
    return i, rec


_CACHE: dict[str, Any] = {}


def _generator(name: str, out: Path) -> tuple[Generator, Callable, Any]:
    if name not in _CACHE:
        gen = GENERATORS[name]
        truth = None
        loss = gen.loss
        if gen.trainer:
            from benchmarks._trainer_truth import TrainerTruth, measure

            design, _ = pilots()["report"]
            rows = measure(out / "trainer-truth.csv", design, progress=True)
            truth = TrainerTruth.from_rows(rows)
            loss = truth
        _CACHE[name] = (gen, loss, truth)
    return _CACHE[name]


def run_cell(gen_name: str, pilot: str, n: int, out: Path, jobs: int) -> dict[str, Any]:
    """Run (or resume) one cell; returns its file's content."""
    from rlscale.files._atomic import write_text_atomic

    path = out / f"{gen_name}-{pilot}.json"
    key = {"generator": gen_name, "pilot": pilot, **SETTINGS}
    if path.exists():
        state = json.loads(path.read_text(encoding="utf-8"))
        if state["key"] != key:
            raise SystemExit(f"{path} was written with another configuration {state['key']}; "
                             "move it away or use another --out")
    else:
        gen, loss, _ = _generator(gen_name, out)
        state = {"key": key, "truth": truth_summary(gen, loss), "records": {}}
        write_text_atomic(path, json.dumps(state))
    todo = [i for i in range(n) if str(i) not in state["records"]]
    seeds = {i: 1000 * CELLS.index((gen_name, pilot)) + i for i in todo}
    args = [(gen_name, pilot, i, seeds[i], str(out)) for i in todo]

    def keep(i: int, rec: dict[str, Any]) -> None:
        state["records"][str(i)] = rec
        write_text_atomic(path, json.dumps(state))
        print(f"  {gen_name}/{pilot}: {len(state['records'])}/{n}", file=sys.stderr, flush=True)

    if jobs > 1 and todo:
        from multiprocessing import get_context

        with get_context("spawn").Pool(jobs) as pool:
            for i, rec in pool.imap_unordered(_worker, args):
                keep(i, rec)
    else:
        for i, rec in map(_worker, args):
            keep(i, rec)
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200, help="data sets of the goal "
                        f"cells ({', '.join(GOAL)} on the report's pilot)")
    parser.add_argument("--extra", type=int, default=100, help="data sets of the other "
                        "report-pilot cells (far, correlated, trainer)")
    parser.add_argument("--small", type=int, default=50, help="data sets of the quick and "
                        "large pilots")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="decision-study")
    parser.add_argument("--only", nargs="*", metavar="GEN[/PILOT]")
    parser.add_argument("--rescore", action="store_true", help="print the tables only")
    parser.add_argument("--figure", metavar="PNG")
    parser.add_argument("--against", metavar="DIR", help="another rule's files of the same "
                        "cells (e.g. an earlier settings version): print the two paired")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cells = [c for c in CELLS if not args.only or c[0] in args.only
             or f"{c[0]}/{c[1]}" in args.only]
    states = {}
    for g, p in cells:
        n = (args.datasets if (g in GOAL and p == "report") else
             args.extra if p == "report" else args.small)
        path = out / f"{g}-{p}.json"
        if args.rescore:
            if path.exists():
                states[(g, p)] = json.loads(path.read_text(encoding="utf-8"))
            continue
        print(f"{g}/{p}: {n} data sets", file=sys.stderr, flush=True)
        states[(g, p)] = run_cell(g, p, n, out, args.jobs)
    print(report(states))
    if args.against:
        old = {c: json.loads((Path(args.against) / f"{c[0]}-{c[1]}.json").read_text(
            encoding="utf-8")) for c in states
            if (Path(args.against) / f"{c[0]}-{c[1]}.json").exists()}
        print("\nPaired with the files in", args.against, "(the same data sets):\n")
        print(paired_report(old, states))
    if args.figure:
        figure(states, Path(args.figure))
    return 0


if __name__ == "__main__":
    sys.exit(main())
