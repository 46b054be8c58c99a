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
    from benchmarks.calibration_eta import study

    r = study(datasets=60, bootstrap=200, seed=1, baseline="k only", progress=False)
    # Nominal 0.9; with 60 data sets the Wilson interval must reach it.
    assert r.coverage_interval[0] <= 0.9 <= r.coverage_interval[1] + 0.05


def test_a_study_names_every_data_set_it_leaves_out(monkeypatch) -> None:
    # Dropping the hard data sets can flatter coverage, so each one left out is
    # reported with its reason; here every second plan fails on purpose.
    import rlscale.optimize._calibration as cal
    from benchmarks.calibration_eta import BOUNDS, CENTRE, COST, LAW, SUBSTITUTE
    from rlscale.optimize import star_design
    from rlscale.theory import AdditiveLaw

    real, calls = cal.plan_uncertainty, []

    def flaky(*args, **kwargs):
        calls.append(len(calls))
        if len(calls) % 2 == 0:
            raise ValueError("plan infeasible (test)")
        return real(*args, **kwargs)

    monkeypatch.setattr(cal, "plan_uncertainty", flaky)
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
