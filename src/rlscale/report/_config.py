"""The report's configuration: built-in defaults, ``--quick``, a TOML file.

Every default can be overridden by a TOML file (``--config``); unknown keys
are refused.  ``examples/report.toml`` is the commented schema.  Sections:

``seed``
    Seed of every random stream in the report.
``[reward_law]``
    ``mode`` (``"quick"`` or ``"full"``).
``[reward_law_trainer]``
    ``enabled``; ``mode`` (``"quick"`` or ``"full"``) of the reward law in the
    RL trainer (:func:`rlscale.verification._trainer_reward_law.verify_trainer_reward_law`,
    ``rlscale verify reward-law --trainer``).
``[sweep]``
    A sweep spec exactly as for ``rlscale sweep`` (``design``, ``seeds``,
    ``algorithms``, ``[sweep.base]``, ``[sweep.axes]``, ``[sweep.train]``).
``[fit]``
    ``law`` (``"additive"``), ``bootstrap`` resamples, ``confidence``,
    ``starts``: ``"auto"`` (the fitter's grid-safe multistart, default), ``"grid"``
    (L-BFGS from every grid point) or a number of grid starts (see
    :func:`rlscale.optimize.fit_law`).
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
    predicted iso-loss cost at which the plan is trained to locate, by a
    monotone fit, the cost at which it matches the baseline;
    ``plan_laws``: bootstrap laws (at most) carried into the plan's
    uncertainty and the Bayes plan; ``decision_bootstrap``: bootstrap
    resamples of each fission copy of the sweep in the recommendation
    (:func:`rlscale.optimize.recommend`); ``probability``: what a departure
    from proportional scaling needs on the judgement copy.
``[inference]``
    ``enabled``; the trained agent of the inference-budget section:
    ``environments``, ``epochs``, ``job_tasks`` (tasks of three turns each
    in the held-out job) and Monte Carlo ``episodes`` per plan
    (:mod:`rlscale.verification._inference_grounding`).
``[proofs]``
    ``enabled``.
``[next_runs]``
    ``enabled``; ``budget_share`` of the sweep's cost for the next pilot batch;
    ``method`` of :func:`rlscale.optimize.design` (:mod:`rlscale.report._next_runs`).
"""

from __future__ import annotations

import copy
import json
import os
import tomllib
from collections.abc import Mapping
from typing import Any

from rlscale.theory._axes import NAMES, SYMBOLS

__all__ = ["AXES", "DEFAULTS", "QUICK", "SUBSTITUTE", "cost_text", "load_config",
           "merged_config", "nested_bounds", "to_toml", "train_fields", "validate"]

#: Built-in configuration (see the module docstring for the schema).
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "figures": True,
    "reward_law": {"mode": "quick"},
    "reward_law_trainer": {"enabled": True, "mode": "quick"},
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
    "fit": {"law": "additive", "bootstrap": 1000, "confidence": 0.9, "starts": "auto"},
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
    "efficiency": {"seeds": [0, 1, 2, 3, 4], "ladder": [0.25, 0.5, 1.0, 2.0],
                   "plan_laws": 100, "decision_bootstrap": 200, "probability": 0.95},
    "inference": {"enabled": True, "environments": 16, "epochs": 4, "job_tasks": 2,
                  "episodes": 2000},
    "proofs": {"enabled": True},
    "next_runs": {"enabled": True, "budget_share": 0.25, "method": "auto"},  # issue 23
}

#: Overrides applied by ``--quick`` (a smaller version of every step).
#:
#: ``--quick`` is a quick look (issue 26's goal: 15 CPU s, against 25 for the
#: default; measured about 31 at load 10-15, main's 35-41): the two reward-law
#: steps run their ``glance`` grids (the trainer's
#: with 8 optimisation environments, 8 KL budgets and B = 39 identification
#: resamples; the Gaussian one with 8 policy-gradient pools instead of 16), which
#: were half of the quick report's CPU, and the inference plans are checked on
#: 1,000 Monte Carlo episodes instead of 2,000 (a third of that step); every
#: interval is computed from what ran, and ``config.toml`` beside the report
#: lists these settings.
QUICK: dict[str, Any] = {
    "reward_law": {"mode": "glance"},
    "reward_law_trainer": {"mode": "glance"},
    "sweep": {
        "seeds": [0, 1],
        "axes": {
            "environments": [1, 4, 16, 64],
            "tasks_per_environment": [1, 4, 16],
            "trajectories_per_task": [2, 8, 32],
        },
    },
    "fit": {"bootstrap": 200},
    "allocation": {"budgets": [200.0, 20000.0, 8]},
    "efficiency": {"seeds": [0, 1, 2], "ladder": [0.5, 1.0, 2.0], "plan_laws": 40,
                   "decision_bootstrap": 100},
    "inference": {"episodes": 1000},
}


# The law is fitted on the three nested design variables, which the star-design
# sweep varies one at a time (so each exponent is identified); totals such as
# tasks = E·t move together along the environments axis and are not.
# Both from the one axis table, rlscale.theory._axes (issue 25).
AXES = NAMES
SUBSTITUTE = dict(SYMBOLS)


def cost_text(costs: dict[str, float]) -> str:
    """The cost posynomial of a plain ``[costs]`` table (:meth:`CostsConfig.text
    <rlscale.report._config_tree.CostsConfig.text>`; for scripts holding the dict)."""
    from rlscale.report._config_tree import CostsConfig
    from rlscale.report._typed import build

    return build(CostsConfig, costs).text()


def nested_bounds(config: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The allocation bounds of a plain configuration (:meth:`AllocationConfig.nested_bounds
    <rlscale.report._config_tree.AllocationConfig.nested_bounds>`)."""
    from rlscale.report._config_tree import as_tree

    return as_tree(config).allocation.nested_bounds()




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
            if path == "fit.starts" and isinstance(value, int) and not isinstance(value, bool):
                expected = int  # "auto", "grid" or a number of starts; FitConfig checks it
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
    config = merged_config(path, quick)
    validate(config)
    return config


def merged_config(path: str | os.PathLike[str] | None = None, quick: bool = False
                  ) -> dict[str, Any]:
    """Defaults, ``--quick`` and the TOML file at ``path`` merged, unknown keys and wrong
    types refused; the values are checked by :func:`validate`."""
    from rlscale.theory._validation import check_bool, check_path

    check_bool("quick", quick)  # issue 22
    config = _merge(DEFAULTS, QUICK) if quick else copy.deepcopy(DEFAULTS)
    if path is not None:
        path = check_path("path", path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise OSError(f"report config {path}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"report config {path} is not valid TOML: {exc}") from exc
        config = _merge(config, data)
    return config


def validate(config: Mapping[str, Any]) -> None:
    """Check every value up front, so a bad config fails before minutes of work.

    The checks are the frozen tree's (:mod:`rlscale.report._config_tree`): each table
    checks its own values as it is built, :class:`~rlscale.report._config_tree.ReportConfig`
    those that span tables.  This builds the tree and drops it.
    """
    from rlscale.report._config_tree import ReportConfig
    from rlscale.report._typed import build

    build(ReportConfig, config)


def to_toml(config: dict[str, Any]) -> str:
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




def train_fields(config) -> dict[str, Any]:
    """The sweep's trainer fields with the report's unit costs, from a plain configuration
    (:meth:`ReportConfig.train_fields <rlscale.report._config_tree.ReportConfig.train_fields>`)."""
    from rlscale.report._config_tree import as_tree

    return as_tree(config).train_fields()


