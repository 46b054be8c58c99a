"""Contract entries for the ``rlscale.optimize`` names added by issue 29 (decisions).

Imported by ``tests/test_contracts_optimize.py`` beside the other entries.  The oracles are
independent computations: η_deployed of an even-split path by its closed form, the trimmed
mean by hand, and a recommendation's internal consistency (its choice is the last step it
took, its probabilities are shares).
"""

from __future__ import annotations

import math

import numpy as np
from _contract_cases import Case

import rlscale.optimize as opt
from rlscale.theory import AdditiveLaw

LAW = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
_B = np.geomspace(10.0, 400.0, 60)
PATH = opt.PlanPath("even", _B, {"E": _B / 2, "k": _B / 2}, {"E": _B / 2, "k": _B / 2}, _B)
BASE = {"E": 10.0, "k": 190.0}
LAWS = [AdditiveLaw(f, {"E": 1.0, "k": c}, {"E": 0.5, "k": 0.5})
        for f, c in ((0.09, 0.9), (0.1, 1.0), (0.11, 1.1))]
_TRUTH = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
_DESIGN = opt.star_design({"E": 8, "k": 8}, {"E": [1, 4, 16, 64], "k": [1, 4, 16, 64]})
_X = {a: np.repeat([p[a] for p in _DESIGN], 2) for a in ("E", "k")}
DATA = {**_X, "loss": _TRUTH.loss(_X) * np.exp(0.03 * np.random.default_rng(0)
                                              .standard_normal(_X["E"].size))}
FIT = opt.fit_law(DATA, axes=["E", "k"], n_jobs=1)
REC_BOUNDS = {"E": (1, 1e4), "k": (1, 1e4)}


def _deployed_oracle(d):
    # The even split E = k = C/2 reaches L_b at C = 8/(L_b − 0.1)² (L = 0.1 + 2√(2/C));
    # whatever the baseline's cost, η is that cost over C.
    assert math.isclose(d.eta * d.path_cost, d.baseline_cost, rel_tol=1e-12, abs_tol=1e-300)
    if d.bound == "exact" and d.baseline_loss == LAW.loss(BASE):
        lb = 0.1 + 10**-0.5 + 190**-0.5
        assert math.isclose(d.path_cost, 8.0 / (lb - 0.1) ** 2, rel_tol=1e-3)


def _robust_oracle(p):
    assert 0.0 <= p.expected_loss <= 1.0
    assert math.isclose(p.cost, p.values["E"] + p.values["k"], rel_tol=1e-9)


def _recommend_oracle(rec):
    taken = [s for s in rec.steps if s["taken"]]
    assert (rec.choice == rec.default) == (not taken)
    for c in rec.comparisons.values():
        assert 0.0 <= c.p_beats <= 1.0 and c.eta_interval[0] <= c.eta_interval[1]


def _plan_path_at(i):
    return PATH.at(i)


def _plan_path_losses(loss):
    return PATH.losses(loss)


CASES = [
    Case("deployed_efficiency", opt.deployed_efficiency,
         {"path": PATH, "generating": LAW, "baseline_effective": BASE, "baseline_cost": 200.0},
         oracle=_deployed_oracle,
         names={"baseline_effective": ("baseline_effective", "loss", "E", "k"),
                "generating": ("loss", "law", "generating")}),
    Case("robust_plan", opt.robust_plan,
         {"laws": LAWS, "cost": "E + k", "budget": 200.0, "bounds": REC_BOUNDS, "trim": 0.25,
          "loss_range": (0.0, 1.0)}, oracle=_robust_oracle, examples=30, deadline=30.0,
         names={"laws": ("laws", "law"), "budget": ("budget", "cost")}),
    Case("recommend", opt.recommend,
         {"data": DATA, "cost": "E + k", "budget": 100.0, "centre": {"E": 8.0, "k": 8.0},
          "bounds": REC_BOUNDS, "fit": FIT, "bootstrap": 20, "plan_laws": 2},
         counts=("bootstrap", "plan_laws"), skip_midsize=("bootstrap", "plan_laws"),
         oracle=_recommend_oracle, examples=10, deadline=60.0,
         names={"data": ("data", "column"), "budget": ("budget", "baseline", "design"),
                "centre": ("centre", "baseline"), "cost": ("cost", "axis", "posynomial"),
                "bounds": ("bounds", "baseline", "design")}),
    # Users build paths of their own to judge (deployed_efficiency's input), so the
    # constructor is an entry, not only a record (issue 22: costs=1 was an AttributeError).
    Case("PlanPath", opt.PlanPath,
         {"name": "even", "budgets": _B, "values": {"E": _B / 2, "k": _B / 2},
          "effective": {"E": _B / 2, "k": _B / 2}, "costs": _B},
         oracle=lambda p: _deployed_oracle(opt.deployed_efficiency(p, LAW, BASE, 200.0)),
         names={"budgets": ("budgets", "budget", "ascending"),
                "costs": ("costs", "cost", "budget"),
                "values": ("values", "variable", "budget"),
                "effective": ("effective", "axis", "budget")}),
    Case("PlanPath.at", _plan_path_at, {"i": 3}, names={"i": ("index", "i")}),
    Case("PlanPath.losses", _plan_path_losses, {"loss": LAW},
         names={"loss": ("loss", "law")}),
]

#: Result records (fields only; their producers have entries).
RECORDS = {"Comparison", "DeployedEfficiency", "Recommendation", "RobustPlan"}

NO_ARGUMENTS = {"RealisedEfficiency.estimable", "RealisedEfficiency.message",
                "RealisedEfficiency.status", "RealisedEfficiency.success",
                "Comparison.as_dict", "DeployedEfficiency.as_dict", "PlanPath.as_dict",
                "Recommendation.as_dict", "Recommendation.message", "Recommendation.success",
                "Recommendation.versus_strongest", "RobustPlan.as_dict"}


def no_argument_objects() -> list:
    """One valid object of each record class above (for the NO_ARGUMENTS check)."""
    rec = opt.recommend(DATA, "E + k", 100.0, {"E": 8.0, "k": 8.0}, bounds=REC_BOUNDS,
                        fit=FIT, bootstrap=20, plan_laws=2)
    return [PATH, opt.deployed_efficiency(PATH, LAW, BASE, 200.0), rec,
            next(iter(rec.comparisons.values())),
            opt.robust_plan(LAWS, "E + k", 200.0, REC_BOUNDS)]
