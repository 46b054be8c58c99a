"""Step 5's typed outcome (issue 25): its records write what the library's records hold.

The efficiency section of ``results.json`` is pinned as a whole by the quick report's
digest (``tests/test_report.py``); these tests check each mirror against the library's
own ``as_dict()`` on a small decision, and that a key the library adds is refused.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from rlscale.report._outcomes_efficiency import (
    Candidate,
    CurveRow,
    Decision,
    PlanRecord,
    PlugInBaseline,
)
from rlscale.report._typed import build, plain


def _json(value):
    """As results.json holds it (tuples are lists, numpy scalars plain numbers)."""
    return json.loads(json.dumps(value, default=float))


@pytest.fixture(scope="module")
def decision():
    """A recommendation and a plug-in plan's uncertainty on a pilot whose best allocation
    is far from proportional (the example of :func:`rlscale.optimize.recommend`)."""
    from rlscale.optimize import plan_uncertainty, recommend, star_design
    from rlscale.theory import AdditiveLaw

    truth = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
    grid = [1, 2, 4, 8, 16, 32, 64]
    design = star_design({"E": 8, "k": 8}, {"E": grid, "k": grid})
    rng = np.random.default_rng(0)
    x = {a: np.repeat([p[a] for p in design], 3) for a in ("E", "k")}
    data = {**x, "loss": truth.loss(x) * np.exp(0.03 * rng.standard_normal(x["E"].size))}
    bounds = {"E": (1, 1e4), "k": (1, 1e4)}
    rec = recommend(data, "E + k", 100.0, {"E": 8.0, "k": 8.0}, bounds=bounds,
                    bootstrap=50, plan_laws=10, seed=0)
    laws = [AdditiveLaw(0.2, {"E": 2.0 * s, "k": 0.5}, {"E": 0.5, "k": 0.5})
            for s in (0.8, 1.0, 1.25)]
    unc = plan_uncertainty(truth, laws, "E + k", 100.0, {"E": 8.0, "k": 8.0}, bounds)
    return rec, unc


def test_decision_is_the_recommendation_record_less_what_is_held_apart(decision):
    rec, _ = decision
    record = _json(rec.as_dict())
    mine = _json(plain(Decision.of(rec)))
    assert set(record) - set(mine) == {"path", "baselines", "candidate", "confidence"}
    assert mine == {k: record[k] for k in mine}
    assert Decision.of(rec).steps[0].frm == rec.steps[0]["frm"]


def test_candidate_is_the_recommendation_candidate_without_its_path(decision):
    rec, _ = decision
    cand = Candidate.of(rec.candidate)
    assert cand.path is rec.path  # the plan was recommended: its path is the candidate's
    record = _json(rec.as_dict())["candidate"]
    assert _json(plain(cand)) == {k: v for k, v in record.items() if k != "path"}
    # A fallback found no plan: no values, no comparisons, no path -- and the same keys.
    empty = Candidate.of({})
    assert empty.path is None and plain(empty) == {"values": None, "comparisons": {}}


def test_plan_record_is_the_plan_uncertainty_less_its_point_and_samples(decision):
    _, unc = decision
    record = _json(unc.as_dict())
    mine = _json(plain(PlanRecord.of(unc)))
    assert mine.pop("interval_method") == record["method"]
    assert mine == {k: record[k] for k in mine}
    assert set(record) - set(mine) == {"budget", "confidence", "point", "strongest", "method",
                                       "eta_samples", "eta_intervals"}


def test_library_dicts_are_mirrored_strictly(decision):
    rec, unc = decision
    # Every key of the library's dicts is mirrored: a renamed or added key fails here.
    for name, b in unc.point.baselines.items():
        assert _json(plain(build(PlugInBaseline, b))) == _json(b), name
    from rlscale.optimize import efficiency_curve
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
    curve = efficiency_curve(law, "E + k", [50.0, 100.0], scaled="k", fixed={"E": 8.0},
                             bounds={"E": (1, 1e4), "k": (1, 1e4)})
    assert [plain(build(CurveRow, r)) for r in curve.rows()] == curve.rows()
    added = dataclasses.replace(rec, steps=[{**rec.steps[0], "margin": 0.1}])
    with pytest.raises(TypeError, match=r"DecisionStep: unexpected key\(s\) \['margin'\]"):
        Decision.of(added)
    with pytest.raises(TypeError, match=r"LawCounts: missing key 'judgement'"):
        Decision.of(dataclasses.replace(rec, n_laws={"whole": 1, "selection": 1}))
    with pytest.raises(TypeError, match=r"Candidate: unexpected key\(s\) \['score'\]"):
        Candidate.of({**rec.candidate, "score": 1.0})


def test_a_fallback_recommendation_stops_the_step_before_any_training(
        decision, tmp_path, monkeypatch):
    # recommend falls back when the law cannot be fitted or judged: no plan to train. The
    # step says why, instead of training the baselines and then finding no path.
    from types import SimpleNamespace

    import rlscale.report._efficiency_step as step
    import rlscale.report._steps as steps
    from rlscale.report._config_tree import ReportConfig
    from rlscale.report._outcomes import Inputs

    rec, _ = decision
    reason = "use the baseline (proportional): too few usable bootstrap laws (3 ...)"
    fallback = dataclasses.replace(rec, status="fallback", choice="proportional",
                                   candidate={}, comparisons={}, steps=[], reason=reason)
    monkeypatch.setattr(step, "_decide", lambda cfg, inputs: fallback)

    def no_training(*args, **kwargs):
        raise AssertionError("trained without a plan")

    monkeypatch.setattr(steps, "_train_points", no_training)
    inputs = Inputs(tmp_path, allocation=SimpleNamespace(problem=None),
                    fit=SimpleNamespace(result=SimpleNamespace(law=None)))
    with pytest.raises(ValueError, match=r"no plan to train and judge: use the baseline "
                                         r"\(proportional\): too few usable"):
        step.efficiency_step(ReportConfig.load(quick=True), inputs)
