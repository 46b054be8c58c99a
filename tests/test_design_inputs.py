"""Pilot design (issue 23): the inputs a user gets wrong, the selection rules, the result."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlscale.files._atomic import to_jsonable
from rlscale.optimize import FrontierTarget, PlanTarget, design, fit_law
from rlscale.optimize._outcome import SOLVED
from rlscale.theory import AdditiveLaw, ExpressionLaw, MultiplicativeLaw

CHIN = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
N, D = (g.ravel() for g in np.meshgrid(np.geomspace(2e7, 2e9, 8), np.geomspace(2e8, 2e11, 8)))
POOL = {"N": N, "D": D}
COST = 6 * N * D
B = 0.1 * COST.sum()


def _observed(k=14, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.choice(N.size, k, replace=False)
    y = CHIN(N=N[idx], D=D[idx]) * np.exp(0.02 * rng.standard_normal(k))
    return {"N": N[idx], "D": D[idx], "loss": y}


# -- the four bad inputs the issue names ------------------------------------------------

def test_a_pool_without_a_cost_names_the_fix():
    with pytest.raises(ValueError, match=r"the pool has no cost: pass cost= .*'6\*N\*D'"):
        design(CHIN, POOL, B)


def test_a_budget_below_the_cheapest_run_names_the_cheapest():
    with pytest.raises(ValueError, match=r"below the cheapest run's cost 2\.4e\+16 \(pool row "
                                         r"0\).*at least 2\.4e\+16"):
        design(CHIN, POOL, 1e16, cost="6*N*D")


def test_a_target_inside_the_pool_range_is_refused_with_the_way_out():
    inside = {"N": [1e8], "D": [1e10]}
    with pytest.raises(ValueError, match=r"lies inside the pool.s range.*PlanTarget at a "
                                         r"larger budget.*allow_interior=True"):
        design(CHIN, POOL, B, inside, cost="6*N*D", method="v-optimal")
    d = design(CHIN, POOL, B, inside, cost="6*N*D", method="v-optimal", allow_interior=True)
    assert d.target.inside.all()
    with pytest.raises(ValueError, match="inside the pool's range"):  # also without a law
        design("additive", POOL, B, inside, cost="6*N*D", axes=["N", "D"], method="random")


def test_a_law_with_more_parameters_than_affordable_runs_says_what_budget_is_needed():
    cheapest_five = float(np.sum(np.sort(COST)[:5]))
    with pytest.raises(ValueError, match=r"the law has 5 parameters but the budget .* buys at "
                                         r"most 2 runs .* at least "):
        design(CHIN, POOL, float(np.sum(np.sort(COST)[:2])), cost="6*N*D")
    d = design(CHIN, POOL, cheapest_five * 1.0000001, cost="6*N*D", method="cheapest")
    assert d.n_runs == 5
    obs = _observed(4)
    # four observed runs: one more run is enough
    design(CHIN, POOL, float(np.sort(COST)[0]) * 1.01, cost="6*N*D", observed=obs,
           method="cheapest")


# -- other argument errors ------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "err", "match"), [
    ({"method": "a-optimal"}, ValueError, "method must be one of auto, random"),
    ({"budget": -1.0}, ValueError, "budget must be > 0"),
    ({"max_repeats": 0}, ValueError, "max_repeats must be an integer >= 1"),
    ({"noise": 0.0}, ValueError, "noise must be > 0"),
    ({"cost": "6*N - D"}, ValueError, "neither a column of the pool nor a cost expression"),
    ({"cost": "6*N*Q"}, ValueError, "unknown axis name"),
    ({"cost": [1.0, 2.0]}, ValueError, "cost has 2 values for 64 candidates"),
    ({"target": 3.0}, TypeError, "target must be a table of points"),
    ({"pool": [1, 2, 3]}, TypeError, "pool must be a table"),
    ({"pool": {"N": N}}, ValueError, "the pool has no column 'D'"),
    ({"pool": {"N": -N, "D": D}}, ValueError, "axis column 'N' must be finite and > 0"),
    ({"response": 3}, TypeError, "response must be a column name"),
])
def test_bad_arguments_name_themselves(kwargs, err, match):
    args = {"law": CHIN, "pool": POOL, "budget": B, "cost": "6*N*D"} | kwargs
    with pytest.raises(err, match=match):
        design(**args)


def test_methods_that_need_a_law_or_a_target_or_an_ensemble_say_so():
    with pytest.raises(ValueError, match="needs parameter values: pass a fitted law"):
        design("additive", POOL, B, cost="6*N*D", axes=["N", "D"], method="d-optimal")
    with pytest.raises(ValueError, match="over a target region: pass target="):
        design(CHIN, POOL, B, cost="6*N*D", method="v-optimal")
    with pytest.raises(ValueError, match="averages over an ensemble of laws and has 0 draws"):
        design(CHIN, POOL, B, PlanTarget(30 * B), cost="6*N*D", method="bayes-v")
    with pytest.raises(ValueError, match="axes must name the pool columns"):
        design("additive", POOL, B, cost="6*N*D")


def test_a_plan_target_needs_a_cost_expression_in_the_law_axes():
    pool = {**POOL, "gpu_hours": COST / 1e15}
    with pytest.raises(ValueError, match=r"a plan target needs a cost in the law.s axes"):
        design(CHIN, pool, B / 1e15, PlanTarget(3e8), cost="gpu_hours", method="v-optimal")


def test_observed_duplicates_leave_the_pool():
    obs = _observed()
    d = design("additive", POOL, B, PlanTarget(30 * B), cost="6*N*D", axes=["N", "D"],
               observed=obs, bootstrap=30)
    assert d.n_candidates == N.size - 14 and d.n_observed == 14
    chosen = set(zip(d.runs["N"].tolist(), d.runs["D"].tolist()))
    assert not chosen & set(zip(obs["N"].tolist(), obs["D"].tolist()))
    assert any("repeat observed runs" in n for n in d.notes)


# -- the selection rules ------------------------------------------------------------

def test_cheapest_first_takes_the_cheapest_runs_that_fit():
    d = design(CHIN, POOL, B, cost="6*N*D", method="cheapest")
    order = np.argsort(COST, kind="stable")
    taken, left = [], B
    for i in order:  # the rule, written out
        if COST[i] <= left:
            taken.append(i)
            left -= COST[i]
    assert sorted(d.pool_rows.tolist()) == sorted(taken)
    assert d.status == "exact" and d.success


def test_random_rules_are_reproducible_and_stay_within_budget():
    a = design(CHIN, POOL, B, cost="6*N*D", method="random", seed=4)
    b = design(CHIN, POOL, B, cost="6*N*D", method="random", seed=4)
    c = design(CHIN, POOL, B, cost="6*N*D", method="random", seed=5)
    assert a.pool_rows.tolist() == b.pool_rows.tolist() != c.pool_rows.tolist()
    assert a.cost <= B


def test_cost_random_draws_the_first_run_with_probability_proportional_to_one_over_cost():
    # Costs 1, 2, 4 and a budget of 4: the batch is {row 2} exactly when row 2 is drawn
    # first (then nothing else fits), else {0, 1}.  P(row 2 first) = (1/4)/(1 + 1/2 + 1/4).
    pool = {"x": [1.0, 2.0, 3.0], "cost": [1.0, 2.0, 4.0]}
    alone = 0
    for s in range(2000):
        d = design(MultiplicativeLaw(1.0, {"x": 0.5}), pool, 4.0, method="cost-random",
                   seed=s)
        rows = sorted(d.pool_rows.tolist())
        assert rows in ([2], [0, 1])
        alone += rows == [2]
    assert alone / 2000 == pytest.approx(1 / 7, abs=0.025)


# -- the result --------------------------------------------------------------------

def test_a_design_answers_the_three_questions_and_serialises():
    fit = fit_law(_observed(), axes=["N", "D"], bootstrap=30, holdout=0)
    d = design(fit, POOL, B, PlanTarget(30 * B), cost="6*N*D")
    assert d.method == "bayes-v" and d.success and d.status in SOLVED
    assert d.n_laws == 17 and d.cost <= B
    # No observed= runs: before the batch nothing bounds the target (None, with a note).
    assert d.target_sd_before is None and 0 < d.target_sd_after < math.inf
    assert any("observed runs alone do not identify the law" in n for n in d.notes)
    with_obs = design(fit, POOL, B, PlanTarget(30 * B), cost="6*N*D", observed=_observed())
    assert 0 < with_obs.target_sd_after < with_obs.target_sd_before < math.inf
    out = d.as_dict()
    assert (out["success"], out["status"], out["message"]) == (d.success, d.status, d.message)
    json.dumps(to_jsonable(out), allow_nan=False)
    assert {"pool_row", "runs", "run_cost", "N", "D"} <= set(d.rows()[0])
    assert "Design" in d._repr_html_()


def test_frontier_target_holds_one_plan_per_budget_and_law():
    fit = fit_law(_observed(), axes=["N", "D"], bootstrap=30, holdout=0)
    d = design(fit, POOL, B, FrontierTarget(10 * B, 100 * B, 3), cost="6*N*D",
               method="v-optimal")
    assert len(d.target.plans) == 3 and d.target.n == 3
    budgets = [p["budget"] for p in d.target.plans]
    np.testing.assert_allclose(budgets, [10 * B, np.sqrt(10 * 100) * B, 100 * B])


def test_an_expression_law_is_designed_and_fitted_like_a_family():
    law = ExpressionLaw("E + A/N**a + B/D**b", axes=["N", "D"],
                        params={"E": (0.5, 5), "A": (1, 1e5), "a": (0.05, 1.5),
                                "B": (1, 1e5), "b": (0.05, 1.5)})
    d = design(law, POOL, B, PlanTarget(30 * B), cost="6*N*D", observed=_observed(),
               bootstrap=20)
    assert d.method == "bayes-v" and d.n_runs > 0 and d.cost <= B
    assert np.isfinite(d.target_sd_after)


def test_inside_means_inside_the_convex_hull_not_the_bounding_box():
    # A grid whose most expensive corner is held out spans every axis, yet the corner
    # extrapolates: a target there is accepted; one in the middle of the grid is not.
    corner = (N > 1e9) & (D > 5e10)
    pool = {"N": N[~corner], "D": D[~corner]}
    ok = design(CHIN, pool, B, {"N": [2e9], "D": [2e11]}, cost="6*N*D", method="v-optimal")
    assert not ok.target.inside.any()
    with pytest.raises(ValueError, match="convex hull"):
        design(CHIN, pool, B, {"N": [1e8], "D": [1e10]}, cost="6*N*D", method="v-optimal")


def test_every_law_of_an_additive_fit_shares_the_floor_coordinate():
    from rlscale.optimize._design_model import FamilyModel

    zero = FamilyModel(AdditiveLaw(0.0, {"N": 2.0}, {"N": 0.5}))
    some = FamilyModel(AdditiveLaw(1.0, {"N": 2.0}, {"N": 0.5}))
    assert zero.names == some.names == ("log floor", "log coefficient[N]", "exponent[N]")
    assert np.all(zero.jacobian({"N": [4.0]})[:, 0, 0] == 0.0)
    assert FamilyModel(MultiplicativeLaw(2.0, {"N": 0.5})).names == (
        "log coefficient", "exponent[N]")


def test_a_law_no_runs_of_the_pool_identify_is_said_so_not_given_an_uncertainty():
    # The quick report's trajectories term: exponent 20, a step between the grid's first two
    # values.  Only the lowest D sees it, where log a and the exponent move L alike.
    from rlscale.optimize._design import UNIDENTIFIABLE

    step = AdditiveLaw(0.3, {"N": 2.0, "D": 2e5}, {"N": 0.4, "D": 20.0})
    n, d = (g.ravel() for g in np.meshgrid([1.0, 2, 4, 8, 16], [2.0, 4, 8, 16]))
    got = design(step, {"N": n, "D": d}, 0.5 * float(np.sum(n * d)), PlanTarget(2000.0),
                 cost="N*D", method="v-optimal")
    assert got.sd_before is None and got.sd_after is None and got.target_sd_after is None
    assert UNIDENTIFIABLE in got.notes
    json.dumps(to_jsonable(got.as_dict()), allow_nan=False)


def test_bootstrap_laws_that_leave_the_domain_at_a_pool_row_are_dropped_with_a_note():
    # A draw with a negative floor predicts a negative loss at the large pool runs: its log
    # sensitivities do not exist there.  It is dropped from the ensemble (with a note that
    # counts it), and the design is the one over the draws that remain.
    law = ExpressionLaw("E + A*N**-a", axes=["N"],
                        params={"E": (-10, 10), "A": (1, 1e4), "a": (0.05, 2)})
    point = law.bind(E=0.5, A=20.0, a=0.5)
    good = [law.bind(E=0.5 * s, A=20.0, a=0.5 * s) for s in (0.9, 0.95, 1.05, 1.1)]
    bad = law.bind(E=-0.5, A=20.0, a=0.5)  # 20/N^0.5 < 0.5 once N > 1600
    pool = {"N": np.geomspace(1.0, 1e4, 30), "cost": np.geomspace(1.0, 1e4, 30)}
    target = [{"N": 1e6}]
    kw = {"method": "bayes-v", "allow_interior": False, "noise": 0.02}
    with_bad = design(point, pool, 2000.0, target, laws=[*good, bad], **kw)
    without = design(point, pool, 2000.0, target, laws=good, **kw)
    assert any("1 of 5 bootstrap laws leave the law's domain" in n for n in with_bad.notes)
    assert with_bad.n_laws == without.n_laws == 5
    assert with_bad.runs["pool_row"].tolist() == without.runs["pool_row"].tolist()


# -- reusing a design's target region (the report designs three batches at one target) ------

def _same(a, b):
    """Two designs equal bit for bit (every field of the record but the CPU time)."""
    da, db = a.as_dict(), b.as_dict()
    da.pop("seconds"), db.pop("seconds")
    assert json.dumps(to_jsonable(da)) == json.dumps(to_jsonable(db))
    assert (a.weights is None) == (b.weights is None)
    if a.weights is not None:
        assert np.array_equal(a.weights, b.weights)


def _never_located(monkeypatch):
    """Make locating a plan target fail: a plan solve's regret matrix or the hull's LP."""
    import rlscale.optimize._design_target as target_module

    def fail(*args, **kwargs):
        raise AssertionError("the target region was located again")

    monkeypatch.setattr(target_module, "regret_matrix", fail)
    monkeypatch.setattr(target_module, "_inside", fail)


@pytest.fixture(scope="module")
def regret_designs():
    fit = fit_law(_observed(), axes=["N", "D"], bootstrap=30, holdout=0)
    target = FrontierTarget(10 * B, 100 * B, 2, objective="regret")
    kw = {"cost": "6*N*D", "observed": _observed(), "seed": 3}
    fresh = {m: design(fit, POOL, B / 3, target, method=m, **kw)
             for m in ("bayes-v", "random", "cheapest")}
    return fit, target, kw, fresh


def test_a_design_s_region_given_back_gives_the_same_designs_without_locating_it(
        regret_designs, monkeypatch):
    fit, _, kw, fresh = regret_designs
    region = fresh["bayes-v"].target
    assert region.objective == "regret" and len(region.laws) > 2 and region.key
    _never_located(monkeypatch)
    for method, want in fresh.items():
        got = design(fit, POOL, B / 3, region, method=method, **kw)
        _same(got, want)
        assert got.target is region
    # Another budget at the same laws and pool: the region does not depend on it.
    assert design(fit, POOL, B / 6, region, method="bayes-v", **kw).target is region


def test_a_region_given_with_other_laws_or_another_pool_is_located_again_with_a_note(
        regret_designs):
    fit, target, kw, fresh = regret_designs
    region = fresh["bayes-v"].target
    again = "the target region given was located under other laws or another pool"
    other_fit = fit_law(_observed(seed=1), axes=["N", "D"], bootstrap=30, holdout=0)
    seen = set(zip(kw["observed"]["N"], kw["observed"]["D"]))
    unseen = [i for i in range(N.size) if (N[i], D[i]) not in seen]
    keep = np.setdiff1d(np.arange(N.size), unseen[:5])  # five candidates fewer
    smaller = {"N": N[keep], "D": D[keep]}
    cases = [({"law": other_fit}, "bayes-v"),     # other laws
             ({"pool": smaller}, "bayes-v"),       # another pool
             ({}, "v-optimal")]                    # the point law alone, not the ensemble
    for change, method in cases:
        args = {"law": fit, "pool": POOL} | change
        got = design(args["law"], args["pool"], B / 3, region, method=method, **kw)
        want = design(args["law"], args["pool"], B / 3, target, method=method, **kw)
        said = [n for n in got.notes if n.startswith(again)]
        assert len(said) == 1 and [n for n in got.notes if n not in said] == list(want.notes)
        assert got.target is not region and got.target.key == want.target.key
        assert got.runs["pool_row"].tolist() == want.runs["pool_row"].tolist()
        assert got.regret_after == want.regret_after


def test_a_points_region_is_reused_under_any_law_and_an_interior_one_still_refused(
        monkeypatch):
    far = {"N": [2e10], "D": [2e12]}
    first = design(CHIN, POOL, B, far, cost="6*N*D", method="v-optimal")
    other = AdditiveLaw(1.7, {"N": 400.0, "D": 2000.0}, {"N": 0.33, "D": 0.37})
    want = design(other, POOL, B, far, cost="6*N*D", method="v-optimal")
    middle = design(CHIN, POOL, B, {"N": [2e8], "D": [2e10]}, cost="6*N*D",
                    method="v-optimal", allow_interior=True)
    _never_located(monkeypatch)
    _same(design(other, POOL, B, first.target, cost="6*N*D", method="v-optimal"), want)
    with pytest.raises(ValueError, match=r"lies inside the pool.s range"):
        design(CHIN, POOL, B, middle.target, cost="6*N*D", method="v-optimal")
    assert design(CHIN, POOL, B, middle.target, cost="6*N*D", method="v-optimal",
                  allow_interior=True).target is middle.target
