"""One result convention across the verbs that fit or solve (issue 16): every result
answers ``success`` (bool), ``status`` (the method's own word) and ``message`` (words),
in its object and in its ``as_dict``; and each can say *no*."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from scipy.optimize import OptimizeResult, least_squares

from rlscale.optimize import (
    AllocationProblem,
    allocate,
    allocate_expression,
    fit_coverage,
    fit_expression,
    fit_gao,
    fit_law,
    fit_power_law,
    fit_sigmoid,
    min_cost,
    plan_labels,
    plan_labels_numeric,
)
from rlscale.optimize._outcome import SOLVED, from_lstsq, from_scipy
from rlscale.theory import AdditiveLaw, ComputeSigmoid, ExpressionLaw

CHIN = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})


def _fit_law():
    truth = AdditiveLaw(1.5, {"N": 400.0, "D": 1000.0}, {"N": 0.35, "D": 0.3})
    N, D = (g.ravel() for g in np.meshgrid(np.logspace(7, 10, 5), np.logspace(9, 12, 5)))
    return fit_law({"N": N, "D": D, "loss": truth(N=N, D=D)}, axes=["N", "D"], starts=20)


def _sigmoid_curve():
    c = np.linspace(500, 50000, 40)
    truth = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)
    return c, truth(c) + np.random.default_rng(1).normal(0, 0.005, c.size)


def _expression_fit():
    N = np.geomspace(1e3, 1e7, 30)
    y = (1.7 + 300.0 * N**-0.35) * np.exp(0.01 * np.random.default_rng(0).standard_normal(30))
    return fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"], bootstrap=0)


def _expression_plan():
    law = ExpressionLaw("E + A/N**a + B/D**b", axes=["N", "D"])
    return allocate_expression(law.bind(E=1.0, A=10.0, a=0.5, B=10.0, b=0.5), "N + D", 200.0)


VERBS = {
    "fit_law": _fit_law,
    "fit_sigmoid": lambda: fit_sigmoid(*_sigmoid_curve(), start=0.3, bootstrap=0),
    "fit_power_law": lambda: fit_power_law(np.geomspace(10, 1e4, 20),
                                           0.9 - 2.0 * np.geomspace(10, 1e4, 20) ** -0.5),
    "fit_gao": lambda: fit_gao(np.linspace(0.1, 30, 20),
                               np.sqrt(np.linspace(0.1, 30, 20)) * 0.9
                               - 0.12 * np.linspace(0.1, 30, 20), "bon", bootstrap=0),
    "fit_coverage": lambda: fit_coverage([20, 20, 20, 20], [1, 5, 10, 0], bootstrap=0),
    "fit_expression": _expression_fit,
    "allocate": lambda: allocate(CHIN, "6*N*D", 5.76e23),
    "frontier": lambda: AllocationProblem(CHIN, "6*N*D").frontier([1e21, 1e22, 5.76e23]),
    "min_cost": lambda: min_cost(CHIN, "6*N*D", 2.0),
    "allocate_expression": _expression_plan,
    "plan_labels": lambda: plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0,
                                       budget=454.6),
    "plan_labels_target": lambda: plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0,
                                              target=2.0),
    "plan_labels_steps": lambda: plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_step=1.0,
                                             kl_per_step=0.01, kl_step_exponent=0.5,
                                             budget=500.0),
    "plan_labels_numeric": lambda: plan_labels_numeric(
        lambda M, K: np.sqrt(np.maximum(np.minimum(np.log(M), K), 0.0)),
        price_m=1.0, price_k=100.0, budget=454.6),
}


@pytest.fixture(scope="module", params=sorted(VERBS))
def result(request):
    return request.param, VERBS[request.param]()


def test_every_verb_answers_the_three_questions(result):
    name, res = result
    assert res.success is True, name
    assert res.status in SOLVED, (name, res.status)
    assert isinstance(res.message, str) and len(res.message) > 10, (name, res.message)
    d = res.as_dict()
    assert (d["success"], d["status"], d["message"]) == (res.success, res.status, res.message)
    json.dumps({k: d[k] for k in ("success", "status", "message")})


def test_statuses_name_the_method_that_ran():
    assert VERBS["plan_labels"]().status == "closed_form"
    assert "corner" in VERBS["plan_labels_target"]().message
    steps = VERBS["plan_labels_steps"]()
    assert steps.status == "converged" and "brentq" in steps.message
    assert VERBS["plan_labels_numeric"]().status == "converged"
    assert VERBS["fit_gao"]().status == "exact" and "rank 2" in VERBS["fit_gao"]().message
    assert VERBS["fit_sigmoid"]().status == "converged"


def test_a_frontier_names_its_methods_and_flags_an_uncertified_budget():
    law = AdditiveLaw(0.5, {"E": 4.0, "k": 4.0}, {"E": 0.5, "k": 0.5})
    # a cap that binds at the larger budget: the GP solves the frontier
    front = AllocationProblem(law, "E + k", {"E": (1, 300)}).frontier([100.0, 800.0])
    assert front.method == ("gp", "gp") and front.status == "optimal" and front.success
    assert front.message.startswith("2 budgets (2 gp); worst KKT residual")
    assert VERBS["frontier"]().status == "closed_form"
    bad = dataclasses.replace(front, kkt_residual=np.array([0.0, 1e-3]))
    assert (bad.success, bad.status) == (False, "uncertified")


def test_a_fit_without_a_converged_start_says_so():
    fit = _fit_law()
    assert fit.success and "refined starts met their stopping rule" in fit.message
    failed = dataclasses.replace(fit, n_converged=0)
    assert (failed.success, failed.status) == (False, "not_converged")
    assert failed.as_dict()["success"] is False
    blown = dataclasses.replace(fit, objective=float("inf"))
    assert not blown.success and "no finite objective" in blown.message


def test_fit_message_names_the_diagnostics():
    # a pure power law: the floor the additive law fits goes to 0
    N, D = (g.ravel() for g in np.meshgrid(np.geomspace(1e3, 1e7, 12)[:4],
                                           np.geomspace(1e4, 1e8, 12)[::-1][:4]))
    fit = fit_law({"N": N, "D": D, "loss": 5 * N**-0.3 + 3 * D**-0.2}, axes=["N", "D"],
                  starts=20)
    assert fit.warnings, "the design must raise a diagnostic for this test to mean anything"
    assert f"{len(fit.warnings)} diagnostics" in fit.message
    assert all(w.code in fit.message for w in fit.warnings)


def test_scipy_outcomes_map_to_the_convention():
    ok = least_squares(lambda x: x - 3.0, [0.0])
    assert from_scipy(ok, "x")[:2] == (True, "converged")
    capped = least_squares(lambda x: np.exp(x) - 3.0, [10.0], max_nfev=1)
    success, status, message = from_scipy(capped, "capped run")
    assert (success, status) == (False, "max_evaluations")
    assert message.startswith("capped run did not converge")
    other = OptimizeResult(success=False, message="Positive directional derivative")
    assert from_scipy(other, "y")[:2] == (False, "failed")


def test_lstsq_outcome_flags_rank_deficiency():
    X = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # second column = 2 x first
    rank = np.linalg.lstsq(X, np.ones(3), rcond=None)[2]
    assert from_lstsq(int(rank), 2, "collinear")[:2] == (False, "rank_deficient")
    assert from_lstsq(2, 2, "full")[:2] == (True, "exact")
