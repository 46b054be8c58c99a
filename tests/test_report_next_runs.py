"""The report's "what to run next" step (issue 23), on the default report's own sweep."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import numpy as np
import pytest

from rlscale._document import Document
from rlscale.optimize import fit_law
from rlscale.report._config import AXES, load_config, validate
from rlscale.report._config_tree import ReportConfig
from rlscale.report._next_runs import next_runs_section, next_runs_step
from rlscale.report._outcomes import FitOutcome, Inputs, NextRunsOutcome, SweepOutcome
from rlscale.report._typed import build

REPO = Path(__file__).resolve().parents[1]


def _inputs(staging):
    with open(REPO / "benchmarks" / "data" / "report_sweep.csv", newline="") as fh:
        rows = [{k: float(v) for k, v in r.items() if k in (*AXES, "loss")}
                for r in csv.DictReader(fh)]
    data = {a: np.array([r[a] for r in rows]) for a in AXES} | {
        "loss": np.array([r["loss"] for r in rows])}
    fit = FitOutcome(result=fit_law(data, axes=list(AXES), bootstrap=100, seed=0),
                     centre={}, floor_min=0.0, elasticities={}, impact_ordering=(),
                     ordering_probability={})
    sweep = SweepOutcome(runs=len(rows), summary=(), rows=tuple(rows), seeds=1,
                         untrained_success=0.0, optimal_success=1.0)
    return Inputs(staging, sweep=sweep, fit=fit), rows


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    staging = tmp_path_factory.mktemp("staging")
    inputs, rows = _inputs(staging)
    outcome = next_runs_step(ReportConfig.load(), inputs)
    return outcome.as_dict(), staging, rows, outcome


def test_the_target_is_located_once_for_the_batch_and_both_rules(step, tmp_path,
                                                                  monkeypatch):
    # Locating the frontier's plans under 17 laws is most of the step's CPU: the rules reuse
    # the batch's region (design(target=chosen.target)), and get what they got when each
    # design located it again (every fingerprint made unique, so nothing is reused).
    import itertools

    import rlscale.optimize._design_target as target_module

    located = []
    locate = target_module._locate
    monkeypatch.setattr(target_module, "_locate",
                        lambda *a, **k: located.append(1) or locate(*a, **k))
    reused = next_runs_step(ReportConfig.load(), _inputs(tmp_path / "a")[0])
    assert len(located) == 1
    fresh = itertools.count()
    monkeypatch.setattr(target_module, "_key", lambda *a, **k: str(next(fresh)))
    again = next_runs_step(ReportConfig.load(), _inputs(tmp_path / "b")[0])
    assert len(located) == 4
    for got in (reused, again):
        out = got.as_dict()
        assert out["compare"] == step[0]["compare"]
        out["design"].pop("seconds")
        assert out["design"] == {k: v for k, v in step[0]["design"].items() if k != "seconds"}


def test_the_batch_is_new_runs_of_the_sweep_grid_within_its_budget(step):
    nr, staging, rows, _ = step
    d = nr["design"]
    assert d["method"] == "bayes-v" and d["status"] == "optimal"
    assert nr["budget"] == pytest.approx(0.25 * nr["sweep_cost"])
    cost = sum(20 * r["environments"] + 2 * r["environments"] * r["tasks_per_environment"]
               + 0.1 * r["environments"] * r["tasks_per_environment"]
               * r["trajectories_per_task"] for r in rows)
    assert nr["sweep_cost"] == pytest.approx(cost)
    assert 0 < d["cost"] <= nr["budget"]
    ran = {tuple(r[a] for a in AXES) for r in rows}
    chosen = {tuple(r[a] for a in AXES) for r in d["runs"]}
    grid = load_config()["sweep"]["axes"]
    assert not chosen & ran
    assert all(v in grid[a] for c in chosen for a, v in zip(AXES, c))
    if d["target_sd_before"] is None:
        # The sweep's fit puts its floor on the bound 0 (the fitting engine of issue 30 and
        # the correlation fix of issue 24 moved it there): the observed runs do not identify
        # the law, and the design must say so rather than print a number.
        assert d["target_sd_after"] is None and d["regret_after"] is None
        assert any("do not identify the law" in n for n in d["notes"])
    else:
        assert d["target_sd_after"] < d["target_sd_before"]
        assert 0 < d["regret_after"] < d["regret_before"]
    assert d["target"]["objective"] == "regret"
    with open(staging / nr["file"], newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(d["runs"])


def test_the_section_says_what_the_batch_buys_against_the_rules(step):
    nr, _, _, outcome = step
    doc = Document("t")
    next_runs_section(doc, outcome)
    text = doc.to_markdown()
    assert "5b. What to run next" in text and "random:" in text and "cheapest:" in text
    assert f"{nr['design']['n_runs']} runs" in text
    doc = Document("t")
    next_runs_section(doc, NextRunsOutcome(enabled=False))
    assert "disabled" in doc.to_markdown()


def test_next_runs_config_is_checked_before_any_work():
    cfg = copy.deepcopy(load_config())
    cfg["next_runs"]["method"] = "best"
    with pytest.raises(ValueError, match=r"next_runs\.method must be one of auto"):
        validate(cfg)
    cfg["next_runs"] = {"enabled": True, "budget_share": 0.0, "method": "auto"}
    with pytest.raises(ValueError, match=r"next_runs\.budget_share must be > 0"):
        validate(cfg)


def test_the_section_says_when_no_runs_can_identify_the_fit():
    # The quick report's sweep fits a step-like trajectories term: the section must say why
    # its numbers are dashes instead of printing a failed design as if it were one.
    from rlscale.optimize._design import UNIDENTIFIABLE

    d = {"target": {"source": "frontier", "objective": "regret"}, "method": "bayes-v",
         "success": False, "status": "failed", "budget": 20.0, "n_runs": 1, "cost": 10.0,
         "n_laws": 16, "regret_before": None, "regret_after": None, "noise": None,
         "sd_before": None, "sd_after": None, "target_sd_before": None,
         "target_sd_after": None, "criterion": None, "value": None, "certificate": None,
         "efficiency": None, "n_candidates": 1, "n_observed": 1, "seconds": 0.0,
         "notes": [UNIDENTIFIABLE], "message": "greedy", "runs": [
             {"environments": 1.0, "tasks_per_environment": 1.0,
              "trajectories_per_task": 2.0, "runs": 1, "run_cost": 10.0}]}
    nr = {"enabled": True, "budget_share": 0.25, "budget": 20.0, "cost": "E", "design": d,
          "compare": {"random": {"n_runs": 1, "cost": 10.0, "target_sd_after": None,
                                 "regret_after": None}}, "file": "next-runs.csv"}
    doc = Document("t")
    next_runs_section(doc, build(NextRunsOutcome, nr))
    text = doc.to_markdown()
    assert "Not even every configuration of the grid identifies the fitted law" in text
    assert "not certified" in text
