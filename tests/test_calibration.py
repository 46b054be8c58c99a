"""Calibration of the predicted-η interval (issue 11, item 9)."""

from __future__ import annotations

import math

import pytest

from rlscale.optimize._calibration import _wilson


def test_wilson_interval_matches_its_closed_form() -> None:
    # 90 of 100 at z = 1.96: centre (0.9 + 1.96²/200)/(1 + 1.96²/100), half-width
    # 1.96·sqrt(0.9·0.1/100 + 1.96²/40000)/(1 + 1.96²/100).
    z = 1.959963984540054
    centre = (0.9 + z * z / 200) / (1 + z * z / 100)
    half = z * math.sqrt(0.0009 + z * z / 40000) / (1 + z * z / 100)
    assert _wilson(90, 100) == pytest.approx((centre - half, centre + half), rel=1e-12)
    assert _wilson(0, 10)[0] == 0.0 and _wilson(10, 10)[1] == pytest.approx(1.0, abs=1e-15)


@pytest.mark.slow
def test_predicted_eta_interval_covers_the_known_eta() -> None:
    # A reduced study (60 data sets, seed 1: not the 200-set, seed-0 study the docs
    # quote, on which the default method was chosen): the default 90 % interval does
    # not under-cover against trajectories only or against proportional scaling.
    from benchmarks.calibration_eta import study
    from rlscale.optimize._eta_interval import DEFAULT_METHOD

    r = study(datasets=60, bootstrap=200, seed=1, baseline="proportional", progress=False)
    assert r.method == DEFAULT_METHOD and r.n_failed == 0
    for baseline in ("k only", "proportional"):
        row = r.table[DEFAULT_METHOD][baseline]
        # The default never under-covers (it may be conservative: 0.955 against
        # proportional on the 200-set study) and is not vacuous.
        assert row["wilson"][1] >= 0.9 and row["coverage"] < 1.0, (baseline, row)
    # The problem it fixes: the percentile interval under-covers against proportional,
    # every miss above the truth.
    pct = r.table["percentile"]["proportional"]
    assert pct["wilson"][1] < 0.9 and pct["below"] == 0, pct
    # One study, every method: the headline fields are the table's entry.
    assert r.coverage == r.table[DEFAULT_METHOD]["proportional"]["coverage"]
    assert len(r.samples) == r.n_datasets == len(r.laws_used)


def test_a_study_names_every_data_set_it_leaves_out(monkeypatch) -> None:
    # Dropping the hard data sets can flatter coverage, so each one left out is
    # reported with its reason; here every second plan fails on purpose.
    import rlscale.optimize._calibration as cal
    from benchmarks.calibration_eta import BOUNDS, CENTRE, COST, LAW, SUBSTITUTE
    from rlscale.optimize import star_design
    from rlscale.theory import AdditiveLaw

    real, calls = cal.eta_bootstrap, []

    def flaky(*args, **kwargs):
        calls.append(len(calls))
        if len(calls) % 2 == 0:
            raise ValueError("plan infeasible (test)")
        return real(*args, **kwargs)

    monkeypatch.setattr(cal, "eta_bootstrap", flaky)
    law = AdditiveLaw(LAW["floor"], LAW["coefficients"], LAW["exponents"])
    design = star_design({"environments": 8, "tasks_per_environment": 4,
                          "trajectories_per_task": 8},
                         {"environments": [2, 8, 32], "tasks_per_environment": [1, 4, 16],
                          "trajectories_per_task": [2, 8, 32]})
    r = cal.calibrate_eta(law, COST, 1000.0, CENTRE, design, noise=0.05, replicates=2,
                          bounds=BOUNDS, substitute=SUBSTITUTE, n_datasets=4, bootstrap=20,
                          plan_laws=5, seed=3)
    assert r.n_datasets == 2 and r.n_failed == 2
    assert r.failures == [(1, "ValueError: plan infeasible (test)"),
                          (3, "ValueError: plan infeasible (test)")]


def test_every_method_is_scored_from_one_set_of_bootstrap_etas() -> None:
    # The table's coverage of each method is recomputed here by hand from the stored
    # point and bootstrap η (percentile: numpy quantiles; basic: 2η̂ − q, clipped at 1).
    import numpy as np

    from benchmarks.calibration_eta import BOUNDS, CENTRE, COST, LAW, SUBSTITUTE
    from rlscale.optimize import calibrate_eta, star_design
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(LAW["floor"], LAW["coefficients"], LAW["exponents"])
    design = star_design({"environments": 8, "tasks_per_environment": 4,
                          "trajectories_per_task": 8},
                         {"environments": [2, 8, 32], "tasks_per_environment": [1, 4, 16],
                          "trajectories_per_task": [2, 8, 32]})
    r = calibrate_eta(law, COST, 1000.0, CENTRE, design, noise=0.05, replicates=2,
                      bounds=BOUNDS, substitute=SUBSTITUTE, n_datasets=3, bootstrap=20,
                      plan_laws=5, seed=2, method="percentile")
    assert r.n_datasets == 3 and set(r.table) == {"percentile", "basic", "basic-log", "bc",
                                                  "symmetric"}
    for name, truth in r.truths.items():
        pct, basic = [], []
        for est, smp in zip(r.estimates, r.samples):
            q_lo, q_hi = np.quantile(smp[name], [0.05, 0.95])
            pct.append(q_lo <= truth <= q_hi)
            basic.append(max(1.0, 2 * est[name] - q_hi) <= truth
                         <= max(1.0, 2 * est[name] - q_lo))
        assert r.table["percentile"][name]["coverage"] == sum(pct) / 3
        assert r.table["basic"][name]["coverage"] == sum(basic) / 3
    for iv, s in zip(r.intervals, r.samples):
        assert iv == pytest.approx(tuple(np.quantile(s["k only"], [0.05, 0.95])), rel=1e-12)
    # Against η_deployed (issue 29): each data set's interval against its own plan's η
    # under the known law, which never exceeds the oracle η (the law's own optimum path).
    for name, truth in r.truths.items():
        hits = []
        for smp, dep in zip(r.samples, r.deployed):
            assert dep[name] <= truth * (1 + 1e-6)
            q_lo, q_hi = np.quantile(smp[name], [0.05, 0.95])
            hits.append(q_lo <= dep[name] <= q_hi)
        assert r.table_deployed["percentile"][name]["coverage"] == sum(hits) / 3
    assert r.coverage_deployed == r.table_deployed["percentile"]["k only"]["coverage"]
    with pytest.raises(ValueError, match="jackknife=True"):
        calibrate_eta(law, COST, 1000.0, CENTRE, design, noise=0.05, method="BCa")


def test_jackknife_etas_refit_without_each_design_point() -> None:
    # BCa's jackknife: η of the law refitted with one design point's replicates left
    # out, re-pricing the point law's baseline allocation; recomputed here from the
    # same noise draw with fit_law and min_cost directly.
    import numpy as np

    from rlscale.optimize import AllocationProblem, calibrate_eta, fit_law, star_design
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
    design = star_design({"E": 8, "k": 8}, {"E": [1, 8, 64], "k": [1, 8, 64]})
    bounds = {"E": (1, 1e6), "k": (1, 1e6)}
    r = calibrate_eta(law, "E + k", 200.0, {"E": 10.0, "k": 10.0}, design, noise=0.02,
                      replicates=2, bounds=bounds, n_datasets=1, bootstrap=10, plan_laws=3,
                      seed=5, jackknife=True, method="BCa")
    n = 2 * len(design)
    assert set(r.table) == {"percentile", "basic", "basic-log", "bc", "BCa", "symmetric"}
    assert len(r.jackknife[0]["k only"]) == len(design)
    x = {a: np.repeat([p[a] for p in design], 2) for a in ("E", "k")}
    clean = law.loss(x)
    data = {**x, "loss": clean * np.exp(0.02 * np.random.default_rng(5).standard_normal(n))}
    keep = np.arange(n) >= 2                        # design point 0 left out
    jack = fit_law({k: v[keep] for k, v in data.items()}, axes=["E", "k"], seed=5,
                   n_jobs=1).law
    point = fit_law(data, axes=["E", "k"], bootstrap=10, seed=5, n_jobs=1).law
    from rlscale.optimize import compare_baselines

    row = compare_baselines(AllocationProblem(point, "E + k", bounds), 200.0,
                            {"E": 10.0, "k": 10.0}).baselines["k only"]
    want = row["cost"] / AllocationProblem(jack, "E + k", bounds).min_cost(
        float(jack.loss(row["values"])), round_integers=False).cost
    assert r.jackknife[0]["k only"][0] == pytest.approx(want, rel=1e-6)
