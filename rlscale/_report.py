"""``rlscale report``: the whole toolkit, end to end, on built-in defaults.

The report chains the same public functions the individual verbs use — it
adds no modelling of its own:

1. the reward-optimisation law: :func:`rlscale._reward_verification.verify_reward_law`
   (``rlscale verify reward-law``) — verified band, held-out R², the gain
   surface over ``(M, K)``;
2. a trainer sweep along environments, tasks and trajectories:
   :func:`rlscale._sweep.run_sweep` (``rlscale sweep``);
3. per-axis laws fitted to that sweep with bootstrap intervals:
   :func:`rlscale.optimize.fit_law` (``rlscale fit``), and the impact
   ordering by elasticity at the sweep's centre;
4. the compute-optimal allocation for a budget and unit costs —
   :func:`rlscale.optimize.allocate` on the nested variables ``E, t, k``
   (``rlscale allocate``) — and, with real environments scarce, with and
   without a priced synthetic-environment generator; the critical
   synthetic-to-real ratio and the quality-filter threshold
   (:mod:`rlscale.theory` synthetic-data functions);
5. efficiency against scaling trajectories alone: the *predicted* η of
   :func:`rlscale.optimize.efficiency`, and the *realised* η — the solver's
   allocation and the trajectories-only allocation trained at equal cost
   with :func:`rlscale.simulate.train`, compared on held-out success;
6. the machine-checked proofs: :func:`rlscale.proofs.check_proofs`.

Configuration
-------------
Every default can be overridden by a TOML file (``--config``); unknown keys
are refused.  ``examples/report.toml`` is the commented schema.  Sections:

``seed``
    Seed of every random stream in the report.
``[reward_law]``
    ``mode`` (``"quick"`` or ``"full"``).
``[sweep]``
    A sweep spec exactly as for ``rlscale sweep`` (``design``, ``seeds``,
    ``algorithms``, ``[sweep.base]``, ``[sweep.axes]``, ``[sweep.train]``).
``[fit]``
    ``law`` (``"additive"``), ``bootstrap`` resamples, ``confidence``,
    ``starts`` (L-BFGS-B starts).
``[costs]``
    Unit costs ``environment``, ``task``, ``trajectory``: a run with ``E``
    environments, ``t`` tasks each and ``k`` trajectories per task costs
    ``cE·E + cT·E·t + cτ·E·t·k`` (the trainer's own cost accounting).
``[allocation]``
    ``budget``; ``budgets = [low, high, count]`` for the curves; upper
    ``bounds`` on ``E``, ``t``, ``k`` (the fitted law is not trusted far
    beyond the sweep).  ``budget`` must buy the cheapest trajectories-only
    baseline (``E, t`` of ``[sweep.base]``, ``k = 2``) and ``low`` the
    cheapest plan (``E = t = 1``, ``k = 2``); :func:`load_config` checks
    every value before any work starts.
``[synthesis]``
    ``real_environments`` available; the generator's ``unit_cost``, ``rho``
    and relative ``saturation``; the quality filter's ``quality_a``,
    ``quality_b`` (a Beta distribution of environment quality),
    ``gen_cost`` and ``train_cost``.
``[efficiency]``
    ``seeds`` of the realised comparison; ``ladder``: factors of the
    predicted optimal budget at which the solver's allocation is trained to
    locate, by interpolation, the cost at which it matches the baseline.
``[proofs]``
    ``enabled``.

Output directory (``--out``, default ``rlscale-report/``): ``index.md``,
a self-contained ``index.html``, ``results.json`` (every number),
``config.toml`` (the configuration used), the training runs
(``sweep.csv``, ``efficiency-baseline.csv``, ``efficiency-optimal.csv``, in
the spec's order) and the PNG figures.  The report is assembled in a
temporary sibling directory and moved into place at the end, so a reader
never sees half a report; an existing directory is replaced only if it
holds an rlscale report (marker file ``.rlscale-report``, which lists the
files the report wrote).  Nothing the report did not write is ever deleted:
files a user added to an old report are moved into the new one, a staging
directory ``.NAME.partial`` that rlscale did not create is refused, and the
destination is checked again at the moment of publishing (the rules are in
:mod:`rlscale._staging`).  The staging directory of an interrupted run is
resumed: its finished training runs are kept, the rest of its outputs are
rewritten.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlscale._document import Document
from rlscale._document import format_value as _fmt
from rlscale._io import write_json_atomic, write_text_atomic
from rlscale._staging import (
    PublishOutcome,
    check_destination,
    close_staging,
    open_staging,
    publish,
)

__all__ = ["DEFAULTS", "QUICK", "ReportResult", "load_config", "run_report"]


#: Built-in configuration (see the module docstring for the schema).
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "reward_law": {"mode": "quick"},
    "sweep": {
        "design": "axes",
        "seeds": [0, 1, 2],
        "algorithms": ["grpo"],
        "base": {"environments": 8, "tasks_per_environment": 4, "trajectories_per_task": 8},
        "axes": {
            "environments": [1, 2, 4, 8, 16, 32, 64],
            "tasks_per_environment": [1, 2, 4, 8, 16, 32],
            "trajectories_per_task": [2, 4, 8, 16, 32, 64],
        },
        "train": {},
    },
    "fit": {"law": "additive", "bootstrap": 1000, "confidence": 0.9, "starts": 64},
    "costs": {"environment": 20.0, "task": 2.0, "trajectory": 0.1},
    "allocation": {
        "budget": 1000.0,
        "budgets": [200.0, 20000.0, 16],
        "bounds": {"E": 256.0, "t": 64.0, "k": 128.0},
    },
    "synthesis": {
        "real_environments": 8.0,
        "unit_cost": 0.5,
        "rho": 0.9,
        "saturation": 4.0,
        "quality_a": 2.0,
        "quality_b": 2.0,
        "gen_cost": 1.0,
        "train_cost": 4.0,
    },
    "efficiency": {"seeds": [0, 1, 2, 3, 4], "ladder": [0.25, 0.5, 1.0, 2.0]},
    "proofs": {"enabled": True},
}

#: Overrides applied by ``--quick`` (a smaller version of every step).
QUICK: dict[str, Any] = {
    "sweep": {
        "seeds": [0, 1],
        "axes": {
            "environments": [1, 4, 16, 64],
            "tasks_per_environment": [1, 4, 16],
            "trajectories_per_task": [2, 8, 32],
        },
    },
    "fit": {"bootstrap": 200, "starts": 16},
    "allocation": {"budgets": [200.0, 20000.0, 8]},
    "efficiency": {"seeds": [0, 1, 2], "ladder": [0.5, 1.0, 2.0]},
}


def _merge(base: dict[str, Any], override: dict[str, Any], where: str = "") -> dict[str, Any]:
    """Deep-merge ``override`` into a copy of ``base``; unknown keys are errors."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        path = f"{where}{key}"
        if key not in base:
            raise ValueError(f"unknown report config key {path!r}; valid here: "
                             f"{sorted(base)}")
        # Free-form tables: the sweep's [train] and [axes] take any trainer field/axis.
        if isinstance(base[key], dict) and path in ("sweep.train", "sweep.axes"):
            if not isinstance(value, dict):
                raise ValueError(f"report config {path} must be a table; got {value!r}")
            out[key] = copy.deepcopy(value) if path == "sweep.axes" else {**base[key], **value}
        elif isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ValueError(f"report config {path} must be a table; got {value!r}")
            out[key] = _merge(base[key], value, path + ".")
        else:
            expected = type(base[key])
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, expected) or isinstance(value, bool) != isinstance(
                    base[key], bool):
                raise ValueError(f"report config {path} must be {expected.__name__}; "
                                 f"got {value!r}")
            out[key] = copy.deepcopy(value)
    return out


def load_config(path: str | os.PathLike[str] | None = None, quick: bool = False
                ) -> dict[str, Any]:
    """The report configuration: defaults, then ``--quick``, then the file.

    Examples
    --------
    >>> cfg = load_config(quick=True)
    >>> cfg["fit"]["bootstrap"], cfg["costs"]["environment"]
    (200, 20.0)
    >>> _merge(DEFAULTS, {"costs": {"environmnet": 1.0}})
    Traceback (most recent call last):
    ...
    ValueError: unknown report config key 'costs.environmnet'; valid here: ['environment', \
'task', 'trajectory']
    """
    config = _merge(DEFAULTS, QUICK) if quick else copy.deepcopy(DEFAULTS)
    if path is not None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise OSError(f"report config {path}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"report config {path} is not valid TOML: {exc}") from exc
        config = _merge(config, data)
    _validate(config)
    return config


def _validate(config: dict[str, Any]) -> None:
    """Check every value up front, so a bad config fails before minutes of work."""
    from rlscale._sweep import expand, parse_spec
    from rlscale.theory import check_positive_int, check_real

    check_positive_int("seed", config["seed"], minimum=0)
    if config["reward_law"]["mode"] not in ("quick", "full"):
        raise ValueError(f"reward_law.mode must be 'quick' or 'full'; got "
                         f"{config['reward_law']['mode']!r}")
    runs = expand(parse_spec({**config["sweep"], "train": _train_fields(config)}))
    # Each exponent of the fitted law needs its axis to vary in the sweep.
    for axis, key in zip(_AXES, ("n_environments", "tasks_per_environment",
                                 "trajectories_per_task")):
        values = sorted({r["config"][key] for r in runs})
        if len(values) < 2:
            raise ValueError(f"the report fits a law over {', '.join(_AXES)}, so the sweep "
                             f"must vary each; {axis} takes only {values} (add it to "
                             "[sweep.axes])")
    f = config["fit"]
    if f["law"] != "additive":  # steps 4-5 read the additive law's terms
        raise ValueError(f"fit.law must be 'additive' (the allocation and synthesis steps "
                         f"use its per-axis terms); got {f['law']!r}")
    check_positive_int("fit.bootstrap", f["bootstrap"], minimum=0)
    check_real("fit.confidence", f["confidence"], low=0.0, high=1.0, low_open=True,
               high_open=True)
    check_positive_int("fit.starts", f["starts"])
    costs = config["costs"]
    for key, value in costs.items():
        check_real(f"costs.{key}", value, low=0.0, low_open=True)
    alloc = config["allocation"]
    for key in ("E", "t", "k"):
        check_real(f"allocation.bounds.{key}", alloc["bounds"][key], low=2.0)
    # The cheapest allocation inside the bounds (E = t = 1, k = 2), and the
    # cheapest trajectories-only baseline at the sweep's centre (k = 2).
    e_b = config["sweep"]["base"]["environments"]
    t_b = config["sweep"]["base"]["tasks_per_environment"]
    cheapest = costs["environment"] + costs["task"] + 2 * costs["trajectory"]
    baseline = (costs["environment"] * e_b + costs["task"] * e_b * t_b
                + 2 * costs["trajectory"] * e_b * t_b)
    check_real("allocation.budget", alloc["budget"], low=round(baseline, 9))
    if len(alloc["budgets"]) != 3:
        raise ValueError(f"allocation.budgets must be [low, high, count]; got "
                         f"{alloc['budgets']!r}")
    lo, hi, count = alloc["budgets"]
    check_real("allocation.budgets[0]", lo, low=round(cheapest, 9))
    check_real("allocation.budgets[1]", hi, low=lo, low_open=True)
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise ValueError(f"allocation.budgets[2] must be an integer >= 2; got {count!r}")
    syn = config["synthesis"]
    check_real("synthesis.real_environments", syn["real_environments"], low=1.0)
    for key in ("unit_cost", "rho", "saturation", "quality_a", "quality_b", "gen_cost",
                "train_cost"):
        check_real(f"synthesis.{key}", syn[key], low=0.0, low_open=True)
    eff = config["efficiency"]
    for seed in eff["seeds"]:
        check_positive_int("efficiency.seeds", seed, minimum=0)
    if len(set(eff["seeds"])) < 2:  # one seed gives a zero-width "interval"
        raise ValueError(f"efficiency.seeds must list at least two distinct seeds (the "
                         f"comparison reports confidence intervals); got {eff['seeds']!r}")
    if not eff["ladder"]:
        raise ValueError("efficiency.ladder must list at least one budget factor; got []")
    for factor in eff["ladder"]:
        check_real("efficiency.ladder", factor, low=0.0, low_open=True)


def _toml(config: dict[str, Any]) -> str:
    """Serialise the (flat-ish) configuration as TOML for ``config.toml``."""

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        return repr(v)

    lines: list[str] = ["# rlscale report configuration (as used)"]

    def table(prefix: str, mapping: dict[str, Any]) -> None:
        plain = {k: v for k, v in mapping.items() if not isinstance(v, dict)}
        if prefix:
            lines.append(f"\n[{prefix}]")
        lines.extend(f"{k} = {scalar(v)}" for k, v in plain.items())
        for k, v in mapping.items():
            if isinstance(v, dict):
                table(f"{prefix}.{k}" if prefix else k, v)

    table("", config)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Output directory
# ---------------------------------------------------------------------------

def _prune_results(path: Path, run_ids: dict[str, None]) -> None:
    """Rewrite a sweep results file with only ``run_ids``, in that order.

    Drops the runs of an earlier, interrupted report with another
    configuration, and replaces completion order (which varies with
    parallel workers) by the spec's order.
    """
    from rlscale._sweep import _render, read_results

    by_id = {r["run_id"]: r for r in read_results(path)}
    write_text_atomic(path, _render([by_id[i] for i in run_ids if i in by_id]))


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

@dataclass
class ReportResult:
    """Everything the report computed (``results.json`` is ``as_dict()``)."""

    out: Path
    config: dict[str, Any]
    sections: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: What publishing kept of the directory it replaced (not in results.json).
    published: PublishOutcome | None = None

    def as_dict(self) -> dict[str, Any]:
        # Underscored sections hold live objects (the fitted law, the compiled
        # problem) shared between steps; everything else is plain data.
        public = {k: v for k, v in self.sections.items() if not k.startswith("_")}
        return {"rlscale_report": 1, "seconds": self.seconds, "config": self.config, **public}


class _Progress:
    def __init__(self, enabled: bool, total: int) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="report", unit="step", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)

    def step(self, label: str) -> None:
        self.bar.set_postfix_str(label)

    def done(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


# The law is fitted on the three nested design variables, which the star-design
# sweep varies one at a time (so each exponent is identified); totals such as
# tasks = E·t move together along the environments axis and are not.
_AXES = ("environments", "tasks_per_environment", "trajectories_per_task")
_SUBSTITUTE = {"environments": "E", "tasks_per_environment": "t", "trajectories_per_task": "k"}


def _cost_text(costs: dict[str, float]) -> str:
    return (f"{costs['environment']!r}*E + {costs['task']!r}*E*t + "
            f"{costs['trajectory']!r}*E*t*k")


def _nested_bounds(config: dict[str, Any]) -> dict[str, tuple[float, float]]:
    b = config["allocation"]["bounds"]
    return {"E": (1.0, b["E"]), "t": (1.0, b["t"]), "k": (2.0, b["k"])}


def run_report(out: str | os.PathLike[str] = "rlscale-report", *,
               config: dict[str, Any] | None = None, quick: bool = False,
               progress: bool = True) -> ReportResult:
    """Run every step and write the report to ``out``.

    Parameters
    ----------
    out : path
        Report directory (replaced only if it holds an rlscale report).
    config : dict, optional
        A configuration from :func:`load_config` (default: the built-ins,
        with the ``--quick`` overrides when ``quick``).
    quick : bool
        Use the smaller built-in configuration (ignored with ``config``).
    progress : bool
        Progress bar on stderr.

    Returns
    -------
    ReportResult
        Every number of the report; ``results.json`` is its ``as_dict()``.

    Examples
    --------
    A full run takes a minute or more (``rlscale report --quick``); a
    directory that is not an rlscale report is refused before any work:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "notes.txt").write_text("keep me")
    ...     run_report(tmp, quick=True)
    Traceback (most recent call last):
    ...
    ValueError: --out ... exists and is not an rlscale report (no .rlscale-report); ...
    """
    from rlscale._optional import require

    require("matplotlib", extra="plot", purpose="report figures")
    out = Path(out).resolve()  # "--out ." has no name to stage beside
    check_destination(out)
    config = copy.deepcopy(config) if config is not None else load_config(quick=quick)
    _validate(config)
    start = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    # A fixed staging name: a report that was interrupted leaves its finished
    # training runs there, and the next run resumes them (runs are matched by
    # a hash of their full configuration, so a changed config re-trains).
    staging = open_staging(out)
    result = ReportResult(out, config)
    bar = _Progress(progress, total=6)
    try:
        steps = [
            ("reward law", _reward_law),
            ("trainer sweep", _sweep),
            ("law fit", _fit),
            ("allocation", _allocation),
            ("efficiency", _efficiency),
            ("proofs", _proofs),
        ]
        for label, step in steps:
            bar.step(label)
            t0 = time.perf_counter()
            step(config, staging, result.sections, progress)
            result.sections.setdefault("timings", {})[label] = time.perf_counter() - t0
            bar.done()
        for csv_path, run_ids in result.sections.pop("_run_ids", {}).items():
            _prune_results(csv_path, run_ids)
        result.seconds = time.perf_counter() - start
        doc = _document(result)
        write_text_atomic(staging / "index.md", doc.to_markdown())
        write_text_atomic(staging / "index.html", doc.to_html(base=staging))
        write_json_atomic(staging / "results.json", result)
        write_text_atomic(staging / "config.toml", _toml(config))
        result.published = publish(staging, out)
    finally:
        close_staging(staging)
        bar.close()
    return result


# -- 1. reward law -----------------------------------------------------------

def _reward_law(config, staging, sections, progress) -> None:
    from rlscale._reward_verification import verify_reward_law

    rep = verify_reward_law(config["reward_law"]["mode"], out=staging / "reward-law",
                            rng=config["seed"], figures=True, progress=False)
    data = rep.as_dict()
    data["files"] = {k: f"reward-law/{Path(v).name}" for k, v in data["files"].items()}
    sections["reward_law"] = data


# -- 2. sweep ----------------------------------------------------------------

def _sweep(config, staging, sections, progress) -> None:
    from rlscale._sweep import parse_spec, summarise

    spec = parse_spec({**config["sweep"], "train": _train_fields(config)})
    rows = _run_spec(spec, staging / "sweep.csv", progress, sections)
    sections["sweep"] = {"runs": len(rows), "summary": summarise(rows), "rows": rows}


# -- 3. fit ------------------------------------------------------------------

def _fit(config, staging, sections, progress) -> None:
    from rlscale.optimize import fit_law

    rows = sections["sweep"]["rows"]
    data = {axis: np.array([r[axis] for r in rows], dtype=float) for axis in _AXES}
    data["loss"] = np.array([r["loss"] for r in rows], dtype=float)
    f = config["fit"]
    fit = fit_law(data, law=f["law"], axes=list(_AXES), target="loss",
                  bootstrap=f["bootstrap"], confidence=f["confidence"], starts=f["starts"],
                  seed=config["seed"], n_jobs=min(2, os.cpu_count() or 1))
    centre = {axis: config["sweep"]["base"][axis] for axis in _AXES}
    elasticities = {k: float(v) for k, v in fit.law.elasticities(centre).items()}
    ordering = sorted(elasticities, key=elasticities.get, reverse=True)
    sections["fit"] = {"result": fit.as_dict(), "centre": centre,
                       "elasticities": elasticities, "impact_ordering": ordering}
    sections["_fit_object"] = fit
    _figure_fits(fit, sections["sweep"]["summary"], config, staging / "fits.png")


def _pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure_fits(fit, summary, config, path: Path) -> None:
    plt = _pyplot()
    from matplotlib.ticker import NullFormatter

    base = config["sweep"]["base"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    shown: list[float] = []  # the y-range: data, intervals and fitted curves, not the band
    for ax, knob in zip(axes, _AXES):
        pts = [s for s in summary if all(s[k] == base[k] for k in _AXES if k != knob)]
        pts.sort(key=lambda s: s[knob])
        xs = np.array([s[knob] for s in pts], dtype=float)
        loss = np.array([1 - s["success_iqm"] for s in pts])
        # Loss = 1 − success, so the success interval's upper end is the loss's lower end.
        err = np.array([[s["ci_high"] - s["success_iqm"] for s in pts],
                        [s["success_iqm"] - s["ci_low"] for s in pts]])
        ax.errorbar(xs, loss, yerr=err, fmt="o", color="k", capsize=3,
                    label="sweep (IQM, 95% CI)")
        grid = np.geomspace(xs.min(), xs.max(), 60)
        points = [{**{k: base[k] for k in _AXES}, knob: g} for g in grid]
        curve = [float(fit.predict(p)) for p in points]
        ax.plot(grid, curve, color="C0", label="fitted law")
        shown += [*curve, *(loss - err[0]), *(loss + err[1])]
        try:
            band = fit.predict_band(points)
        except ValueError:  # too few usable bootstrap laws for a band
            band = None
        if band is not None:
            ax.fill_between(grid, band[0], band[1], color="C0", alpha=0.2,
                            label=f"{int(fit.confidence * 100)}% bootstrap band")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(knob.replace("_", " "))
        others = ", ".join(f"{_SUBSTITUTE[k]}={base[k]}" for k in _AXES if k != knob)
        ax.set_title(f"{knob.replace('_', ' ')} varies ({others})", fontsize=10)
    # A poorly identified resample can put the band's edge orders of magnitude
    # above the data (seen: 900 against losses below 1); it must not set the scale.
    lo, hi = min(shown), max(shown)
    pad = 0.1 * (hi - lo) or 0.05
    axes[0].set_ylim(max(lo - pad, 0.0), hi + pad)
    axes[0].set_ylabel("held-out loss = 1 − success")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- 4. allocation -----------------------------------------------------------

def _allocation(config, staging, sections, progress) -> None:
    from scipy import stats

    from rlscale.optimize import AllocationProblem, allocate
    from rlscale.theory import (
        SynthesisMethod,
        critical_synthetic_ratio,
        optimal_filter_threshold,
    )

    law = sections["_fit_object"].law
    costs = config["costs"]
    cost = _cost_text(costs)
    problem = AllocationProblem(law, cost, _nested_bounds(config), substitute=_SUBSTITUTE)
    plan = problem.allocate(config["allocation"]["budget"])
    lo, hi, count = config["allocation"]["budgets"]
    budgets = np.geomspace(lo, hi, count)
    curve = problem.sweep(budgets)
    sections["_plan"] = plan
    sections["_problem"] = problem

    # Synthetic environments while real ones are scarce.  At the plan's t*, k*
    # an environment costs its unit cost plus the training it carries, so the
    # law restricted to E is a one-axis additive law under a linear cost: the
    # form synthetic allocation takes (and the critical ratio's closed form).
    syn = config["synthesis"]
    budget = config["allocation"]["budget"]
    real_cap = syn["real_environments"]
    t_s, k_s = plan.values["t"], plan.values["k"]
    carried = costs["task"] * t_s + costs["trajectory"] * t_s * k_s
    env_law = law.fix(tasks_per_environment=t_s, trajectories_per_task=k_s)
    real_cost = costs["environment"] + carried
    linear = f"{real_cost!r}*environments"
    method = SynthesisMethod("environments", unit_cost=syn["unit_cost"] + carried,
                             rho=syn["rho"], saturation=syn["saturation"], kind="relative",
                             name="synthetic_environments")
    bounds = _nested_bounds(config)
    bounds["E"] = (1.0, min(real_cap, bounds["E"][1]))
    real_only = AllocationProblem(law, cost, bounds, substitute=_SUBSTITUTE).allocate(budget)
    with_syn = allocate(env_law, linear, budget, {"environments": (1.0, real_cap)},
                        synthesis=[method])
    critical = critical_synthetic_ratio(method, real_cost=real_cost)
    chosen_ratio = with_syn.values[method.name] / with_syn.values["environments"]
    quality = stats.beta(syn["quality_a"], syn["quality_b"])
    threshold = optimal_filter_threshold(quality, gen_cost=syn["gen_cost"],
                                         train_cost=syn["train_cost"])
    sections["allocation"] = {
        "cost": cost, "budget": budget, "plan": plan.as_dict(),
        "curve": [a.as_dict() for a in curve],
        "synthetic": {
            "method": method.as_dict(), "real_unit_cost": real_cost, "t": t_s, "k": k_s,
            "real_environments": real_cap,
            "real_only": real_only.as_dict(), "with_synthetic": with_syn.as_dict(),
            "critical_ratio": critical.as_dict(), "solver_ratio": chosen_ratio,
            "quality_filter": threshold.as_dict(),
        },
    }
    _figure_allocation(curve, budgets, staging / "allocation.png")


def _figure_allocation(curve, budgets, path: Path) -> None:
    plt = _pyplot()

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for var, label in (("E", "environments E"), ("t", "tasks per environment t"),
                       ("k", "trajectories per task k")):
        left.plot(budgets, [a.values[var] for a in curve], marker="o", ms=3, label=label)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("budget")
    left.set_ylabel("optimal allocation")
    left.legend(fontsize=8)
    terms = list(curve[0].shares)
    shares = np.array([[a.shares[t] for t in terms] for a in curve])
    # The cost's terms, named by what they buy (c_E·E, c_T·E·t, c_τ·E·t·k).
    names = {1: "environments", 2: "tasks", 3: "trajectories"}
    labels = [f"{names.get(len(t.split('*')), t)} ({t})" for t in terms]
    right.stackplot(budgets, shares.T, labels=labels)
    right.set_xscale("log")
    right.set_ylim(0, 1)
    right.set_xlabel("budget")
    right.set_ylabel("share of budget")
    right.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- 5. efficiency -----------------------------------------------------------

def _train_points(config, staging, sections, name: str, design: dict[str, Any],
                  seeds: list[int], progress: bool) -> list[dict[str, Any]]:
    """Train configurations through the sweep runner (resumable, parallel)."""
    from rlscale._sweep import parse_spec

    spec = parse_spec({**design, "seeds": list(seeds),
                       "algorithms": config["sweep"]["algorithms"][:1],
                       "train": _train_fields(config)})
    return _run_spec(spec, staging / f"{name}.csv", progress, sections)


def _train_fields(config) -> dict[str, Any]:
    """The sweep's trainer fields with the report's unit costs (one cost model)."""
    costs = config["costs"]
    return {**config["sweep"]["train"], "unit_cost_environment": costs["environment"],
            "unit_cost_task": costs["task"], "unit_cost_trajectory": costs["trajectory"]}


def _run_spec(spec, path: Path, progress: bool, sections) -> list[dict[str, Any]]:
    """Run a sweep spec (resuming ``path``); return only this spec's rows.

    The run ids are recorded so that runs of an earlier, interrupted report
    with another configuration are pruned from ``path`` before publishing,
    and the file is rewritten in the spec's order.
    """
    from rlscale._sweep import expand, run_sweep

    wanted = [r["run_id"] for r in expand(spec)]
    sections.setdefault("_run_ids", {}).setdefault(path, {}).update(dict.fromkeys(wanted))
    rows = run_sweep(spec, path, jobs=min(2, os.cpu_count() or 1), progress=progress)
    # Parallel runs finish in any order, and a fit's result can depend on the
    # order of its rows: return them in the spec's order so that the same
    # seed gives the same report.
    by_id = {r["run_id"]: r for r in rows}
    return [by_id[i] for i in wanted]


def _efficiency(config, staging, sections, progress) -> None:
    """Predicted and realised iso-loss efficiency at the configured budget.

    The baseline spends the budget ``B`` on trajectories alone (``E, t`` at the
    sweep's centre).  Predicted: ``eta = B / B_opt`` where ``B_opt`` is the
    cheapest budget at which the law says the optimal allocation matches the
    baseline's loss (:func:`rlscale.optimize.efficiency_curve`).  Realised:
    the baseline is trained at ``B``; the optimal allocation is trained along
    its budget path (``B_opt`` times the ``ladder`` factors, and at ``B``
    itself for the equal-cost comparison); ``B_opt`` is read off where that
    measured path reaches the baseline's held-out success.
    """
    from rlscale.optimize import Baseline, cost_to_reach, efficiency_curve
    from rlscale.simulate import iqm_ci, iqm_difference_ci

    problem = sections["_problem"]
    law = sections["_fit_object"].law
    base = config["sweep"]["base"]
    e_b, t_b = base["environments"], base["tasks_per_environment"]
    fixed = {"E": float(e_b), "t": float(t_b)}
    bounds = _nested_bounds(config)
    budget = float(config["allocation"]["budget"])
    lo, hi, count = config["allocation"]["budgets"]
    curve = efficiency_curve(law, problem.cost, np.geomspace(lo, hi, count), scaled="k",
                             fixed=fixed, bounds=bounds, substitute=_SUBSTITUTE)
    at_budget = efficiency_curve(law, problem.cost, [budget], scaled="k", fixed=fixed,
                                 bounds=bounds, substitute=_SUBSTITUTE).rows()[0]
    if not math.isfinite(at_budget["eta"]):
        raise ValueError(f"the trajectories-only baseline cannot spend budget {budget:g} "
                         f"with E={e_b}, t={t_b} fixed; raise allocation.budget")
    b_opt = at_budget["optimal_budget_at_baseline_loss"]

    seeds = config["efficiency"]["seeds"]
    # The baseline's trajectories per task: the largest integer k within the budget.
    baseline = Baseline(problem, "k", fixed)
    k_b = max(2, math.floor(baseline.x_for_budget(budget) * (1 + 1e-12)))
    baseline_rows = _train_points(
        config, staging, sections, "efficiency-baseline",
        {"design": "grid", "axes": {"environments": [e_b], "tasks_per_environment": [t_b],
                                    "trajectories_per_task": [k_b]}}, seeds, progress)
    path_budgets = sorted({*(b_opt * f for f in config["efficiency"]["ladder"]), budget})
    path = []
    for b in path_budgets:
        a = problem.allocate(b)
        if a.rounded is None:
            continue
        point = {k: int(v) for k, v in a.rounded.items()}
        rows = _train_points(
            config, staging, sections, "efficiency-optimal",
            {"design": "grid", "axes": {"environments": [point["E"]],
                                        "tasks_per_environment": [point["t"]],
                                        "trajectories_per_task": [point["k"]]}},
            seeds, progress)
        ci = iqm_ci([r["success"] for r in rows], n_boot=2000, rng=config["seed"])
        path.append({"budget": b, **point, "cost": float(rows[0]["cost"]),
                     "predicted_loss": a.rounded_loss, "success_iqm": ci.estimate,
                     "ci_low": ci.low, "ci_high": ci.high,
                     "successes": [r["success"] for r in rows]})
    if not path:
        raise ValueError(f"no budget of the efficiency path {path_budgets} has an integer "
                         "allocation inside allocation.bounds; widen the bounds or "
                         "efficiency.ladder")
    base_success = np.array([r["success"] for r in baseline_rows])
    base_ci = iqm_ci(base_success, n_boot=2000, rng=config["seed"])
    base_cost = float(baseline_rows[0]["cost"])
    equal = min(path, key=lambda p: abs(math.log(p["cost"] / base_cost)))
    diff = iqm_difference_ci(equal["successes"], base_success, n_boot=2000,
                             rng=config["seed"])
    reached = cost_to_reach([p["cost"] for p in path], [p["success_iqm"] for p in path],
                            base_ci.estimate)
    iso_cost, bound, note = reached.cost, reached.bound, reached.note
    # A bound on the iso-loss cost is the opposite bound on η = cost_baseline / cost.
    eta_bound = {"exact": "exact", "upper": "at least", "lower": "at most"}[bound]
    sections["efficiency"] = {
        "predicted": {"eta": at_budget["eta"], "budget": budget, "optimal_budget": b_opt,
                      "baseline_loss": at_budget["baseline_loss"]},
        "curve": curve.rows(),
        "curve_notes": list(curve.notes),
        "realised": {
            "budget": budget, "seeds": list(seeds),
            "baseline": {"E": e_b, "t": t_b, "k": k_b, "cost": base_cost},
            "baseline_success": base_ci.as_dict(),
            "optimal_path": [{k: v for k, v in p.items() if k != "successes"} for p in path],
            "equal_cost": {"E": equal["E"], "t": equal["t"], "k": equal["k"],
                           "cost": equal["cost"], "success_iqm": equal["success_iqm"],
                           "ci_low": equal["ci_low"], "ci_high": equal["ci_high"]},
            "difference": diff.as_dict(),
            "iso_loss_cost": iso_cost, "iso_loss_cost_bound": bound,
            "eta": base_cost / iso_cost, "eta_bound": eta_bound, "note": note,
        },
    }
    _figure_eta(curve.rows(), staging / "efficiency.png")
    _figure_realised(sections["efficiency"], staging / "realised.png")


def _figure_eta(curve, path: Path) -> None:
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.8))
    xs = [c["budget"] for c in curve if math.isfinite(c["eta"])]
    ys = [c["eta"] for c in curve if math.isfinite(c["eta"])]
    ax.plot(xs, ys, marker="o", ms=3)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("budget of the trajectories-only baseline")
    ax.set_ylabel("predicted η = B_baseline / B_optimal")
    ax.set_title("iso-loss efficiency against scaling trajectories alone")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _figure_realised(eff, path: Path) -> None:
    plt = _pyplot()

    real = eff["realised"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    pts = real["optimal_path"]
    left.errorbar([p["cost"] for p in pts], [p["success_iqm"] for p in pts],
                  yerr=[[p["success_iqm"] - p["ci_low"] for p in pts],
                        [p["ci_high"] - p["success_iqm"] for p in pts]],
                  fmt="o-", capsize=3, label="solver's allocation along its budget path")
    b = real["baseline_success"]
    left.errorbar([real["baseline"]["cost"]], [b["estimate"]],
                  yerr=[[b["estimate"] - b["low"]], [b["high"] - b["estimate"]]],
                  fmt="s", color="C3", capsize=3, label="trajectories only")
    left.axhline(b["estimate"], color="C3", lw=0.8, ls=":")
    if real["iso_loss_cost_bound"] == "exact":
        left.axvline(real["iso_loss_cost"], color="C0", lw=0.8, ls=":")
    left.set_xscale("log")
    left.set_xlabel("cost")
    left.set_ylabel("held-out success (IQM, 95% CI)")
    left.legend(fontsize=8)
    pred = eff["predicted"]["eta"]
    shown = {"exact": "", "at least": " (≥)", "at most": " (≤)"}[real["eta_bound"]]
    right.bar(["predicted η", f"realised η{shown}"], [pred, real["eta"]], color=["C0", "C3"])
    right.axhline(1.0, color="grey", lw=0.8, ls="--")
    right.set_ylabel("η = B_baseline / B_optimal at equal loss")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- 6. proofs ---------------------------------------------------------------

def _proofs(config, staging, sections, progress) -> None:
    if not config["proofs"]["enabled"]:
        sections["proofs"] = {"enabled": False, "results": []}
        return
    from rlscale.proofs import check_proofs

    results = check_proofs()
    sections["proofs"] = {"enabled": True, "all_hold": all(r.passed for r in results),
                          "results": [r.as_dict() for r in results]}


# ---------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------

def _document(result: ReportResult) -> Document:
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
    centre = ", ".join(f"{_SUBSTITUTE[a]} = {v}" for a, v in fit["centre"].items())
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
        f"reaches that success at cost {_bounded(real['iso_loss_cost'], real['eta_bound'], True)}"
        f" along its budget path, so realised η {_bounded(real['eta'], real['eta_bound'])}"
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


def _bounded(value: float, eta_bound: str, cost: bool = False) -> str:
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
