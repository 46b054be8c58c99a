"""The decision study's pieces (benchmarks/decision_study.py): generators, one data set, scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

import benchmarks.decision_study as study
from benchmarks._decision_scores import (
    _calibration_error,
    paired,
    paired_report,
    recalibration,
    reliability,
    rescore_rule,
    score,
    validity,
)
from benchmarks._trainer_truth import GRID, GRID_SEEDS, TrainerTruth


def test_generators_are_what_their_docstrings_say() -> None:
    v = {"E": np.array([4.0, 8.0]), "t": np.array([2.0, 2.0]), "k": np.array([16.0, 16.0])}
    well = 0.26 + 0.5 * v["E"] ** -0.3 + 0.35 * v["t"] ** -0.3 + 0.2 * v["k"] ** -0.5
    g = study.GENERATORS
    np.testing.assert_allclose(g["well"].loss(v), well, rtol=1e-14)
    np.testing.assert_allclose(g["interaction"].loss(v), well + 0.3 * (v["E"] * v["k"]) ** -0.3,
                               rtol=1e-14)
    np.testing.assert_allclose(g["step"].loss(v), well + np.array([0.08, 0.0]), rtol=1e-14)
    # Saturation: far beyond k = 16 more k no longer helps; below it, k does.
    sat = g["saturating"].loss
    at = {"E": np.array([8.0, 8.0]), "t": np.array([2.0, 2.0])}
    beyond = np.diff(sat({**at, "k": np.array([1e3, 1e4])}))[0]
    below = np.diff(sat({**at, "k": np.array([2.0, 4.0])}))[0]
    assert abs(beyond) < 1e-6 and below < -0.05


def test_correlated_noise_is_shared_by_a_design_points_seeds() -> None:
    gen = study.Generator("c", study._WELL, noise=0.0, point_noise=0.1)
    design = [{"E": 8.0, "t": 4.0, "k": 8.0}, {"E": 16.0, "t": 4.0, "k": 8.0}]
    d = gen.draw(design, 3, np.random.default_rng(0))
    ratio = d["loss"] / study._WELL(d)
    assert np.allclose(ratio[:3], ratio[0]) and np.allclose(ratio[3:], ratio[3])
    assert not np.isclose(ratio[0], ratio[3])


def test_one_data_set_is_recorded_and_judged_against_the_truth(tmp_path) -> None:
    gen, loss, _ = study._generator("far", tmp_path)
    design, reps = study.pilots()["quick"]
    data = gen.draw(design, reps, np.random.default_rng(3))
    rec = study.one(gen, loss, data, seed=3)
    r = rec["recommend"]
    assert r["choice"] in ("plan", "E only", "k only", "t only", "proportional")
    assert set(r["eta_deployed"]) == {"E only", "k only", "t only", "proportional"}
    # A baseline recommendation's η_deployed against itself is 1.
    if r["choice"] != "plan":
        assert r["eta_deployed"][r["choice"]] == pytest.approx(1.0, rel=1e-9)
    assert all(0.0 <= c["p_beats"] <= 1.0 for c in r["candidate"]["comparisons"].values())
    assert rec["plug_in"]["eta_deployed"]["proportional"] > 0


def test_score_counts_by_hand() -> None:
    def rec(choice, eta_star, cand_eta, lo, hi, p):
        return {"recommend": {
            "choice": choice, "departs": choice != "proportional", "strongest": "proportional",
            "eta_deployed": {"proportional": eta_star, "E only": 2.0},
            "comparisons": {}, "candidate": {
                "eta_deployed": {"proportional": cand_eta, "E only": 2.0},
                "comparisons": {"proportional": {"eta_interval": [lo, hi], "p_beats": p}}}}}

    state = {"truth": {"strongest": "proportional",
                       "oracle_eta": {"proportional": 1.2, "E only": 2.5}},
             "records": {"0": rec("plan", 1.1, 1.1, 1.0, 1.2, 0.97),
                         "1": rec("proportional", 1.0, 0.9, 0.95, 1.05, 0.3),
                         "2": rec("plan", 0.9, 0.9, 1.0, 1.3, 0.96)}}
    s = score(state)
    assert s["n"] == 3 and s["ok"] == 2  # the third plan loses to proportional
    assert s["candidate_coverage"] == (1, 3)  # only the first interval holds its η_dep
    assert s["departs"] == pytest.approx(2 / 3) and s["plan"] == pytest.approx(2 / 3)
    bins = {(b["low"], b["n"], b["observed"]) for b in reliability([state])}
    assert (0.9, 2, 0.5) in {(round(lo, 1), n, o) for lo, n, o in bins}


def test_other_rules_rescored_on_the_same_records_by_hand() -> None:
    # Truly strongest: E only.  Each record: the recorded choice, the whole-data step to the
    # strongest baseline, the candidate's P(beats) against each baseline and its η_dep.
    def rec(choice, step_taken, p_e, p_prop, cand_eta_e):
        base = {"E only": {"E only": 1.0, "proportional": 1.4},
                "proportional": {"E only": 0.7, "proportional": 1.0}}
        eta = {"E only": cand_eta_e, "proportional": 1.4 * cand_eta_e}
        return {"recommend": {
            "choice": choice, "departs": choice != "proportional", "strongest": "E only",
            "steps": [{"frm": "proportional", "to": "E only", "taken": step_taken}],
            "eta_deployed": eta if choice == "plan" else base[choice],
            "candidate": {"eta_deployed": eta, "comparisons": {
                "E only": {"p_beats": p_e}, "proportional": {"p_beats": p_prop}}}}}

    state = {"key": {"probability": 0.95},
             "truth": {"strongest": "E only",
                       "oracle_eta": {"E only": 1.2, "proportional": 1.6}},
             "records": {
                 # the sequence stopped at proportional; the plan beats both: IUT takes it
                 "0": rec("proportional", False, 0.97, 0.99, 1.1),
                 # the sequence took the plan over E only, but it does not beat proportional
                 # at 0.95 on the judgement copy: IUT falls back to E only
                 "1": rec("plan", True, 0.96, 0.90, 0.9),
                 # both rules agree: E only
                 "2": rec("E only", True, 0.2, 0.99, 0.8)}}
    seq, iut, either = (rescore_rule(state, r) for r in ("sequence", "iut", "either"))
    # recorded: proportional (0.7 against E only), the plan (0.9), E only (1): one holds
    assert (seq["n"], seq["ok"], seq["changed"]) == (3, 1, 0)
    assert (iut["ok"], iut["changed"], iut["better"], iut["worse"]) == (3, 2, 2, 0)
    assert iut["plan"] == pytest.approx(1 / 3) and iut["departs"] == pytest.approx(1.0)
    # "either": the plan where either rule takes it (records 0 and 1), E only in 2
    assert (either["ok"], either["changed"], either["better"]) == (2, 1, 1)
    assert either["median_eta_prop"] == pytest.approx(1.4)


def test_two_rules_paired_on_the_same_data_sets_by_hand() -> None:
    # Truly strongest E only; oracle η 1.5 against proportional (a gain of 0.5).
    def state(etas):
        return {"truth": {"strongest": "E only",
                          "oracle_eta": {"E only": 1.1, "proportional": 1.5}},
                "records": {str(i): {"recommend": {"eta_deployed": None if e is None else
                                                   {"E only": e[0], "proportional": e[1]}}}
                            for i, e in enumerate(etas)}}

    old = state([(1.0, 1.3), (0.7, 1.0), (1.0, 1.3), (1.0, 1.3), (1.0, 1.3)])
    # data set 4 is beyond the truth under the new rule: left out of both
    new = state([(1.1, 1.45), (0.7, 1.0), (0.9, 1.2), (1.05, 1.4), None])
    s = paired(old, new, resamples=400)
    assert s["n"] == 4 and (s["changed"], s["better"], s["worse"]) == (3, 2, 1)
    assert s["old"]["ok"] == 3 and s["new"]["ok"] == 2
    # medians of η_dep vs proportional: old (1.0, 1.3, 1.3, 1.3) -> 1.3; new
    # (1.0, 1.2, 1.4, 1.45) -> 1.3: kept (1.3 - 1) / 0.5 = 0.6 for both
    assert s["old"]["kept"] == pytest.approx(0.6) and s["new"]["kept"] == pytest.approx(0.6)
    assert s["kept_difference"] == pytest.approx(0.0)
    lo, hi = s["new"]["kept_interval"]
    assert 0.0 <= lo <= 0.6 <= hi <= 0.9  # medians of resamples lie within the data's range
    lo, hi = s["kept_difference_interval"]
    assert lo <= 0.0 <= hi
    table = paired_report({("far", "report"): old}, {("far", "report"): new})
    assert "| far | report | 4 |" in table and "3 / 2 / 1" in table


def test_validity_counts_stated_p_among_plans_that_do_not_beat() -> None:
    def rec(p, eta):
        return {"recommend": {"strongest": "proportional", "candidate": {
            "eta_deployed": {"proportional": eta},
            "comparisons": {"proportional": {"p_beats": p}}}}}

    state = {"records": {"0": rec(0.97, 0.9), "1": rec(0.85, 0.99), "2": rec(0.2, 0.95),
                         "3": rec(0.99, 1.1)}}
    v = validity([state])
    assert (v["n"], v["n_beats"]) == (3, 1)
    assert v["levels"] == {0.8: 2, 0.9: 1, 0.95: 1}


def test_calibration_error_by_hand() -> None:
    p = np.array([0.05, 0.05, 0.95, 0.95, 0.95, 0.95])
    y = np.array([False, True, True, True, True, False])
    # bins: {0.05: observed 0.5, n 2}, {0.95: observed 0.75, n 4}
    assert _calibration_error(p, y) == pytest.approx((2 * 0.45 + 4 * 0.2) / 6)


def test_recalibration_recovers_a_known_probit_map_from_other_cells() -> None:
    from scipy.stats import norm

    # Three cells whose outcomes follow P(beats) = Φ(−0.4 + 0.5·Φ⁻¹(stated)): stated P is
    # over-confident, and the map learnt from two cells must recover it on the third.
    rng = np.random.default_rng(5)

    def cell() -> dict:
        stated = rng.uniform(0.01, 0.99, 4000)
        truth = rng.uniform(size=stated.size) < norm.cdf(-0.4 + 0.5 * norm.ppf(stated))
        return {"records": {str(i): {"recommend": {"strongest": "proportional", "candidate": {
            "eta_deployed": {"proportional": 1.1 if t else 0.9},
            "comparisons": {"proportional": {"p_beats": float(q)}}}}}
            for i, (q, t) in enumerate(zip(stated, truth, strict=True))}}

    cal = recalibration({("a", "x"): cell(), ("b", "x"): cell(), ("c", "x"): cell()})
    for k in (("a", "x"), ("b", "x"), ("c", "x")):
        assert cal[k]["a"] == pytest.approx(-0.4, abs=0.08)
        assert cal[k]["c"] == pytest.approx(0.5, abs=0.06)
        assert cal[k]["recalibrated"] < 0.03 < 0.1 < cal[k]["stated"]
    assert cal["pooled"]["n"] == 12000


def test_trainer_truth_interpolates_in_logs_and_refuses_untrained_cells() -> None:
    rows = []
    for E in GRID["E"][:2]:
        for t in GRID["t"][:2]:
            for k in GRID["k"][:2]:
                for s in GRID_SEEDS:
                    rows.append({"environments": E, "tasks_per_environment": t,
                                 "trajectories_per_task": k, "seed": s,
                                 "loss": 1.0 / (E * t * k) + 0.01 * s})
    truth = TrainerTruth.from_rows(rows)
    mean_seed = 0.01 * np.mean(GRID_SEEDS)
    # Halfway in log between E = 1 and 2 (t = 1, k = 2): the mean of the two corners' means.
    got = truth({"E": np.array([math.sqrt(2.0)]), "t": np.array([1.0]), "k": np.array([2.0])})
    assert got[0] == pytest.approx((0.5 + 0.25) / 2 + mean_seed, rel=1e-12)
    with pytest.raises(ValueError, match="not trained"):
        truth({"E": np.array([3.0]), "t": np.array([1.0]), "k": np.array([2.0])})
    dom = truth.domain  # the whole grid (from its logs, so to rounding)
    assert list(dom) == ["E", "t", "k"]
    for a, edges in (("E", (1.0, 64.0)), ("t", (1.0, 64.0)), ("k", (2.0, 128.0))):
        assert dom[a] == pytest.approx(edges, rel=1e-14)


def test_the_oracle_of_a_truth_measured_on_a_grid_stays_on_its_grid() -> None:
    # The trainer's truth is defined on its grid only (E <= 64) while the study's bounds
    # reach E = 256; its oracle search went beyond the grid at the path's top budgets and
    # the trainer cell failed before its first data set.  Here a smooth law that refuses
    # E > 40, like the trainer's truth: unrestricted, its optimum at 2B is beyond that.
    far = study.GENERATORS["far"].loss

    class Gridded:
        def __init__(self) -> None:
            self.domain = {"E": (1.0, 40.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}

        def __call__(self, v):
            if np.any(np.asarray(v["E"]) > 40.0 * (1 + 1e-12)):
                raise ValueError("outside the grid")
            return far(v)

    from rlscale.optimize._decision_paths import path_budgets

    budgets = path_budgets(study._problem(), study.BUDGET)[-3:]
    free = study._oracle_path(far, budgets)
    held = study._oracle_path(Gridded(), budgets)
    assert free.values["E"][-1] > 45.0
    assert np.all(held.values["E"] <= 40.0 * (1 + 1e-9))
    assert held.values["E"][-1] == pytest.approx(40.0, rel=1e-6)  # the grid's edge binds
    # Where the edge does not bind, the two agree.
    low = path_budgets(study._problem(), study.BUDGET)[:1]
    np.testing.assert_allclose(study._oracle_path(Gridded(), low).values["E"],
                               study._oracle_path(far, low).values["E"], rtol=1e-5)


def test_a_path_beyond_the_truth_is_recorded_and_left_out_not_fatal(tmp_path) -> None:
    # A truth defined on a grid (the trainer's): far's law refusing E > 20.  The study's
    # plans go past that at their top budgets; the data set is recorded as beyond the
    # truth instead of stopping the cell, and the scores leave it out.
    gen, far, _ = study._generator("far", tmp_path)

    class Gridded:
        def __init__(self) -> None:
            self.domain = {"E": (1.0, 20.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}

        def __call__(self, v):
            if np.any(np.asarray(v["E"]) > 20.0):
                raise ValueError("outside the grid")
            return far(v)

    design, reps = study.pilots()["quick"]
    data = gen.draw(design, reps, np.random.default_rng(3))
    rec = study.one(gen, Gridded(), data, seed=3)
    assert rec["beyond_truth"]["plug_in"] == "outside the grid"
    assert rec["plug_in"]["eta_deployed"] is None
    beyond = {w for w, why in rec["beyond_truth"].items() if why == "outside the grid"}
    for what in beyond - {"plug_in"}:
        owner = rec["recommend"] if what == "recommend" else rec["recommend"]["candidate"]
        assert owner["eta_deployed"] is None
    truth = {"strongest": "proportional",
             "oracle_eta": {"proportional": 1.2, "E only": 1.1, "k only": 0.8, "t only": 0.9}}
    s = score({"truth": truth, "records": {"0": rec}})
    assert s["plug_n"] == 0 and s["n"] + s["beyond"] == 1 and s["failed"] == 0
    # An analytic truth still raises: a ValueError there is a real error.
    with pytest.raises(ValueError):
        study.one(gen, lambda v: far(v) * np.where(np.asarray(v["E"]) > 20, np.nan, 1.0),
                  data, seed=3)
