"""Pilot design (issue 23) on a real pool: the Chinchilla points (``../shared/data``).

The 240 runs Besiroglu et al. replicate (Hoffmann et al.'s fig. 4, the five
highest losses dropped) are a pool whose costs span four orders of magnitude
(``C = 6ND``).  The most expensive tenth is held out as the target; the
cheapest twenty are the runs already made.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from rlscale.optimize import PlanTarget, design, fit_law


@pytest.fixture
def chinchilla(shared_data):
    with open(shared_data / "chinchilla_fig4_points.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    N = np.array([float(r["Model Size"]) for r in rows])
    C = np.array([float(r["Training FLOP"]) for r in rows])
    L = np.array([float(r["loss"]) for r in rows])
    keep = np.argsort(L, kind="stable")[:-5]
    N, C, L = N[keep], C[keep], L[keep]
    order = np.argsort(C, kind="stable")
    pool, held = order[:-24], order[-24:]
    return {"N": N, "D": C / (6 * N), "loss": L, "C": C, "pool": pool, "held": held}


def test_design_on_the_chinchilla_pool_is_certified_and_within_budget(chinchilla):
    c = chinchilla
    pool = {"N": c["N"][c["pool"]], "D": c["D"][c["pool"]], "C": c["C"][c["pool"]]}
    first = np.argsort(pool["C"], kind="stable")[:20]
    observed = {"N": pool["N"][first], "D": pool["D"][first], "loss": c["loss"][c["pool"]][first]}
    fit = fit_law(observed, axes=["N", "D"], bootstrap=40, holdout=0)
    budget = 0.05 * float(pool["C"].sum())
    assert budget > 30 * float(np.sort(pool["C"])[0])  # a pilot budget, not one run
    d = design(fit, pool, budget, PlanTarget(30 * budget), cost="6*N*D", observed=observed)
    assert d.method == "bayes-v" and d.status == "optimal" and d.success
    assert d.cost <= budget and d.n_runs >= 1
    assert d.certificate.efficiency > 0.999
    assert not set(d.pool_rows.tolist()) & set(first.tolist())  # observed runs left out
    assert d.target_sd_after < d.target_sd_before
    # the cost column and the cost expression are the same costs on this pool
    np.testing.assert_allclose(6 * pool["N"] * pool["D"], pool["C"], rtol=1e-9)
    by_column = design(fit, pool, budget, cost="C", observed=observed, method="d-optimal")
    by_expr = design(fit, pool, budget, cost="6*N*D", observed=observed, method="d-optimal")
    assert by_column.pool_rows.tolist() == by_expr.pool_rows.tolist()
