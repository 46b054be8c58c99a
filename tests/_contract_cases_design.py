"""Contract entries for the ``rlscale.optimize`` names of issue 23 (pilot design).

Imported by ``tests/test_contracts_optimize.py`` (fuzzed one hostile argument at a
time) and ``tests/test_contracts_wrong_types.py`` (the exhaustive wrong-type pass).
The baselines are small: a 4 x 4 Chinchilla-type grid with the cost ``6*N*D``.
The oracles are independent of the design code: a batch's cost is recomputed from
its runs and must stay within the budget, every run must be a pool row, and the
target sd after a batch can only shrink (information only adds).
"""

from __future__ import annotations

import numpy as np
from _contract_cases import Case

import rlscale.optimize as opt
from rlscale.optimize._design_model import FamilyModel
from rlscale.theory import AdditiveLaw

LAW = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
_N, _D = (g.ravel() for g in np.meshgrid(np.geomspace(2e7, 2e9, 4),
                                         np.geomspace(2e8, 2e11, 4)))
POOL = {"N": _N, "D": _D}
COST = "6*N*D"
BUDGET = 0.2 * float(np.sum(6 * _N * _D))
TARGET = opt.PlanTarget(30 * BUDGET)
X = {"N": _N[:3], "D": _D[:3]}


def _numeric_predict(values, params):
    return params["E"] + params["A"] * values["N"] ** -params["a"] + params["B"] * values[
        "D"] ** -params["b"]


NUMERIC = opt.NumericModel(_numeric_predict, {"E": 1.82, "A": 482.01, "B": 2085.43,
                                              "a": 0.3478, "b": 0.3658}, axes=["N", "D"])
_MULTI_LAWS = {"web": "E1 + A/N**a + B/D**b", "code": "E2 + A/N**a + B/D**b"}
_MULTI_PARAMS = {"E1": 1.82, "E2": 1.5, "A": 482.01, "B": 2085.43, "a": 0.3478, "b": 0.3658}
_MULTI_RANGES = {"E1": (0.1, 10), "E2": (0.1, 10), "A": (1, 1e4), "B": (1, 1e4),
                 "a": (0.05, 2), "b": (0.05, 2)}
MULTI = opt.MultiOutputModel(_MULTI_LAWS, _MULTI_PARAMS, axes=["N", "D"], ranges=_MULTI_RANGES)
FAMILY = FamilyModel(LAW)
_DESIGN = opt.design(LAW, POOL, BUDGET, TARGET, cost=COST, method="v-optimal")


def _design_oracle(d):
    c = 6 * np.asarray(d.runs["N"]) * np.asarray(d.runs["D"]) * np.asarray(d.runs["runs"])
    assert float(c.sum()) <= d.budget * (1 + 1e-9) and abs(float(c.sum()) - d.cost) <= (
        1e-9 * d.cost)
    assert set(zip(d.runs["N"].tolist(), d.runs["D"].tolist())) <= set(
        zip(_N.tolist(), _D.tolist()))
    if d.sd_before is not None and d.sd_after is not None:
        assert np.all(np.asarray(d.sd_after) <= np.asarray(d.sd_before) * (1 + 1e-9))


def _fit(data):
    """A ``fit=`` hook: the law itself, no draws, the study's noise."""
    return LAW, [], 0.02


def _designer(**kw):
    return opt.Designer(**kw)


#: A valid ``results`` for the batch at hand (the table is built from the batch itself).
_BATCH_RESULTS = object()


def _observe(results):
    d = opt.Designer(LAW, POOL, BUDGET, TARGET, cost=COST, method="v-optimal", batches=1)
    batch = d.propose()
    if results is _BATCH_RESULTS:
        results = {"N": batch.runs["N"], "D": batch.runs["D"], "loss": _law_oracle(batch.runs)}
    d.observe(results)
    return d.n_observed


def _run(oracle):
    d = opt.Designer(LAW, POOL, BUDGET, TARGET, cost=COST, method="v-optimal", batches=1)
    d.run(oracle)
    return d.n_observed


def _law_oracle(runs):
    return LAW.loss({"N": runs["N"], "D": runs["D"]})


def _method(obj, name):
    def call(**kw):
        return getattr(obj, name)(**kw)
    return call


CASES = [
    Case("design", opt.design,
         {"law": LAW, "pool": POOL, "budget": BUDGET, "target": TARGET, "cost": COST,
          "axes": None, "observed": None, "response": "loss", "method": "v-optimal",
          "laws": None, "n_laws": 4, "bootstrap": 20, "noise": 0.02, "delta": 1e-3,
          "max_repeats": 1, "allow_interior": False, "seed": 0, "solver": None},
         counts=("n_laws", "bootstrap", "max_repeats"),
         skip_midsize=("n_laws", "bootstrap", "max_repeats"),
         oracle=_design_oracle, examples=60, deadline=30.0,
         names={"budget": ("budget", "cheapest", "runs"), "pool": ("pool", "cost", "axis"),
                "cost": ("cost", "axis", "posynomial", "pool"),
                "target": ("target", "budget", "pool"), "law": ("law",),
                "observed": ("observed",), "axes": ("axes", "axis")}),
    Case("PlanTarget", opt.PlanTarget, {"budget": 1e22, "bounds": None, "objective": "loss"}),
    Case("FrontierTarget", opt.FrontierTarget,
         {"low": 1e21, "high": 1e23, "num": 3, "bounds": None, "objective": "loss"},
         counts=("num",), skip_midsize=("num",),
         names={"low": ("low", "high"), "high": ("high", "low")}),
    Case("Designer", _designer,
         {"law": LAW, "pool": POOL, "budget": BUDGET, "target": TARGET, "cost": COST,
          "axes": None, "response": "loss", "observed": None, "method": "v-optimal",
          "batches": 2, "initial": 0.3, "bootstrap": 20, "n_laws": 4, "noise": None,
          "tolerance": None, "min_gain": 0.1, "max_repeats": 1, "fit": _fit, "seed": 0},
         counts=("batches", "bootstrap", "n_laws", "max_repeats"),
         skip_midsize=("batches", "bootstrap", "n_laws", "max_repeats"),
         names={"budget": ("budget", "cheapest", "runs"), "pool": ("pool", "cost", "axis"),
                "cost": ("cost", "axis", "posynomial", "pool"),
                "target": ("target", "budget", "pool"), "axes": ("axes", "axis")}),
    Case("Designer.observe", _observe, {"results": _BATCH_RESULTS}, examples=30,
         names={"results": ("results", "loss", "response")}),
    Case("Designer.run", _run, {"oracle": _law_oracle}, examples=10, deadline=60.0,
         names={"oracle": ("oracle", "results", "loss", "response")}),
    Case("NumericModel", opt.NumericModel,
         {"predict": _numeric_predict, "params": dict(NUMERIC.params), "axes": ["N", "D"],
          "outputs": ("loss",), "positive": None, "weights": None},
         names={"params": ("params", "predict"), "axes": ("axes", "predict")}),
    Case("NumericModel.jacobian", _method(NUMERIC, "jacobian"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("NumericModel.log_predict", _method(NUMERIC, "log_predict"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("NumericModel.plan", _method(NUMERIC, "plan"),
         {"cost": COST, "budget": 1e22, "bounds": None},
         names={"cost": ("cost", "axis", "posynomial"), "budget": ("budget", "cost")}),
    Case("NumericModel.with_params", _method(NUMERIC, "with_params"),
         {"params": dict(NUMERIC.params)}),
    Case("MultiOutputModel", opt.MultiOutputModel,
         {"laws": _MULTI_LAWS, "params": _MULTI_PARAMS, "axes": ["N", "D"],
          "ranges": _MULTI_RANGES, "weights": None},
         names={"laws": ("laws", "law"), "params": ("params", "law")}),
    Case("MultiOutputModel.jacobian", _method(MULTI, "jacobian"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("MultiOutputModel.log_predict", _method(MULTI, "log_predict"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("MultiOutputModel.plan", _method(MULTI, "plan"),
         {"cost": COST, "budget": 1e22, "bounds": None},
         names={"cost": ("cost", "axis", "posynomial"), "budget": ("budget", "cost")}),
    Case("MultiOutputModel.with_params", _method(MULTI, "with_params"),
         {"params": _MULTI_PARAMS}),
    # DesignModel is the protocol; its methods are fuzzed on the built-in family's model.
    Case("DesignModel.jacobian", _method(FAMILY, "jacobian"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("DesignModel.log_predict", _method(FAMILY, "log_predict"), {"x": X},
         names={"x": ("x", "N", "D")}),
    Case("DesignModel.loss", _method(FAMILY, "loss"), {"x": X}, names={"x": ("x", "N", "D")}),
    Case("DesignModel.plan", _method(FAMILY, "plan"),
         {"cost": COST, "budget": 1e22, "bounds": None},
         names={"cost": ("cost", "axis", "posynomial"), "budget": ("budget", "cost")}),
    Case("DesignModel.n_params", lambda: FAMILY.n_params, {}),
    Case("Design.to_frame", lambda: _DESIGN.to_frame().to_dict("list"), {}),
]

#: Result records (fields only; their producers have entries).
RECORDS = {"Design", "DesignModel"}  # DesignModel: the protocol (its methods have entries)

NO_ARGUMENTS = {"Design.as_dict", "Design.pool_rows", "Design.rows", "Design.target_sd_after",
                "Design.target_sd_before", "Design.to_csv", "Design.uncertainty_after",
                "Design.uncertainty_before", "Designer.data", "Designer.done",
                "Designer.final_fit", "Designer.n_observed", "Designer.propose",
                "FrontierTarget.budgets", "FrontierTarget.describe", "PlanTarget.budgets",
                "PlanTarget.describe"}


def no_argument_objects() -> list:
    """One valid object of each class above (for the NO_ARGUMENTS check)."""
    d = opt.Designer(LAW, POOL, BUDGET, TARGET, cost=COST, method="v-optimal", batches=1)
    d.run(_law_oracle)
    return [_DESIGN, d,
            opt.FrontierTarget(1e21, 1e23, 3), TARGET]
