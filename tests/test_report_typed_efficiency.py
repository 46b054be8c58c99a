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


@pytest.fixture(scope="module")
def fallback():
    """A real fallback of :func:`rlscale.optimize.recommend` on the quick report's costs,
    bounds, centre and budget: a pilot on E, t, k whose fission copies cannot be fitted
    (the copies' fitter is made to refuse, as it does for a law the data do not identify)."""
    import rlscale.optimize._decision as decision
    from rlscale.optimize import fit_law, recommend, star_design
    from rlscale.report._config_tree import ReportConfig
    from rlscale.theory import AdditiveLaw

    cfg = ReportConfig.load(quick=True)
    truth = AdditiveLaw(0.2, {"E": 2.0, "t": 1.0, "k": 0.5}, {"E": 0.5, "t": 0.3, "k": 0.5})
    centre = {"E": 8.0, "t": 4.0, "k": 8.0}
    design = star_design(centre, {"E": [1, 4, 16, 64], "t": [1, 4, 16], "k": [2, 8, 32]})
    rng = np.random.default_rng(0)
    x = {a: np.repeat([float(p[a]) for p in design], 2) for a in centre}
    data = {**x, "loss": truth.loss(x) * np.exp(0.03 * rng.standard_normal(x["E"].size))}
    fit = fit_law(data, axes=list(centre), seed=0, n_jobs=1)

    def not_identified(*args, **kwargs):
        raise ValueError("the exponent of k is not identified by this copy")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(decision, "_fit", not_identified)
        rec = recommend(data, cfg.costs.text(), float(cfg.allocation.budget), centre,
                        axes=list(centre), bounds=cfg.allocation.nested_bounds(), fit=fit,
                        bootstrap=20, plan_laws=2, seed=0)
    assert rec.status == "fallback", rec.reason
    return cfg, rec


def _cost(p):
    """The quick report's data cost (its ``[costs]``: 20·E + 2·E·t + 0.1·E·t·k)."""
    return 20.0 * p["E"] + 2.0 * p["E"] * p["t"] + 0.1 * p["E"] * p["t"] * p["k"]


def _fake_training(calls, successes):
    """A stand-in for ``_train_points``: records each call and gives every allocation the
    successes of its baseline (by k: the seed paper's k is the larger), one row per seed."""
    def train(cfg, inputs, name, points, seeds):
        calls.append((name, [dict(p) for p in points], tuple(seeds)))
        return [[{"cost": _cost(p), "success": s, "env_steps": 100.0 + s, "updates": 7}
                 for s in successes[p["k"]]] for p in points]
    return train


def test_a_fallback_recommendation_trains_what_it_deploys(fallback, tmp_path, monkeypatch):
    # recommend falls back when the law cannot be fitted or judged: there is no plan to
    # train. The step trains the fallback baseline against the seed paper's at the budget,
    # and nothing of the plan (no path, no curve, no plug-in uncertainty: the allocation
    # and fit are not even read), and its section says what it omits.
    import dataclasses as dc

    import rlscale.report._efficiency_step as step
    import rlscale.report._steps as steps
    from rlscale.report._outcomes import Inputs
    from rlscale.report._outcomes_efficiency import (
        FALLBACK_SCHEMA,
        EfficiencyFallback,
        EfficiencyOutcome,
    )

    cfg, rec = fallback
    assert rec.choice == "proportional" and "fission copy" in rec.reason
    monkeypatch.setattr(step, "_decide", lambda cfg, inputs: rec)
    arms = {n: {v: max(step.LOWER[v], int(np.floor(b["values"][v] * (1 + 1e-12))))
                for v in ("E", "t", "k")} for n, b in rec.baselines.items()}
    assert arms["k only"]["k"] > arms["proportional"]["k"]
    successes = {arms["proportional"]["k"]: (0.5, 0.6, 0.7),
                 arms["k only"]["k"]: (0.2, 0.3, 0.4)}
    calls = []
    monkeypatch.setattr(steps, "_train_points", _fake_training(calls, successes))
    inputs = Inputs(tmp_path, allocation=None, fit=None)  # a fallback reads neither
    eff = step.efficiency_step(cfg, inputs)
    assert isinstance(eff, EfficiencyFallback)
    assert calls == [("efficiency-baseline", [arms["proportional"], arms["k only"]],
                      cfg.efficiency.seeds)]
    assert not list(tmp_path.iterdir())  # no figure: there is no plan to draw
    dep = eff.deployed
    assert (dep.recommended, dep.versus) == ("proportional", "k only")
    # The same successes shifted by 0.3: the IQM difference is 0.3, whatever the IQM.
    assert dep.difference.estimate == pytest.approx(0.3)
    assert dep.difference.low <= 0.3 <= dep.difference.high
    assert dep.baselines["proportional"].success.estimate == pytest.approx(0.6)
    assert dep.baselines["k only"].arm.allocation() == arms["k only"]
    out = _json(eff.as_dict())
    assert list(out) == ["schema", "confidence", "strongest", "recommendation", "candidate",
                         "baselines", "deployed", "omitted"]
    assert out["schema"] == FALLBACK_SCHEMA
    assert out["strongest"] is None  # no baseline was judged the strongest
    assert out["recommendation"] == _json(plain(Decision.of(rec)))
    assert out["candidate"] == {"values": None, "comparisons": {}}
    assert out["baselines"] == _json({n: {k: b[k] for k in ("values", "cost", "note")}
                                      for n, b in rec.baselines.items()})
    # Each key of the full section the fallback lacks is named, with why.
    full = {f.name for f in dc.fields(EfficiencyOutcome)}
    assert set(out["omitted"]) == full - set(out)
    assert all(out["omitted"].values())
    assert out["deployed"]["baselines"]["k only"]["arm"] == {
        **arms["k only"], "cost": pytest.approx(_cost(arms["k only"]))}


def test_a_fallback_to_the_seed_papers_baseline_compares_with_nothing(
        fallback, tmp_path, monkeypatch):
    import rlscale.report._efficiency_step as step
    import rlscale.report._steps as steps
    from rlscale._document import Document
    from rlscale.report._document_efficiency import decision_summary, efficiency_section
    from rlscale.report._outcomes import Inputs

    cfg, rec = fallback
    rec = dataclasses.replace(rec, choice="k only", default="k only", strongest="k only",
                              reason="use the baseline (k only): no plan could be solved")
    monkeypatch.setattr(step, "_decide", lambda cfg, inputs: rec)
    calls = []
    k = max(2, int(np.floor(rec.baselines["k only"]["values"]["k"] * (1 + 1e-12))))
    monkeypatch.setattr(steps, "_train_points", _fake_training(calls, {k: (0.2, 0.3, 0.4)}))
    eff = step.efficiency_step(cfg, Inputs(tmp_path))
    assert [len(c[1]) for c in calls] == [1]
    assert eff.deployed.versus is None and eff.deployed.difference is None
    assert "versus" in eff.as_dict()["deployed"]  # None, not left out: one shape
    text = decision_summary(eff)
    assert text.startswith("Recommendation: use the baseline (k only): no plan could be "
                           "solved. No plan could be judged")
    assert "the seed paper's baseline itself" in text
    doc = Document("t")
    efficiency_section(doc, eff)
    assert not [b for b in doc.blocks if b.kind == "figure"]


def test_a_fallback_outcome_refuses_another_schema_or_a_judged_recommendation(fallback):
    from rlscale.report._outcomes_efficiency import EfficiencyFallback

    _, rec = fallback
    kwargs = {"confidence": 0.9, "strongest": rec.strongest, "candidate": Candidate.of({}),
              "baselines": {}, "deployed": None, "omitted": {}}
    with pytest.raises(ValueError, match=r"schema must be 'efficiency-fallback/1'; got 'v0'"):
        EfficiencyFallback(schema="v0", recommendation=Decision.of(rec), **kwargs)
    judged = dataclasses.replace(rec, status="baseline")
    with pytest.raises(ValueError, match=r"holds a fallback recommendation; got status "
                                         r"'baseline'"):
        EfficiencyFallback(schema="efficiency-fallback/1", recommendation=Decision.of(judged),
                           **kwargs)
