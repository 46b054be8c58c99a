"""optimize/_alloc_space.py pinned by independent computations: log-sum-exp and its Hessian in
closed form (two terms) and by central differences, the log- and count-space transforms
written out by hand, and the KKT multipliers of a two-axis problem solved on paper."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.optimize._alloc_space import (
    CountSpace,
    LogSpace,
    _hess,
    grad_counts,
    log_value_grad,
)
from rlscale.theory import AdditiveLaw, SynthesisMethod

# L = 0.5 + 2 N^-1/2 + 3 D^-1/4; the problem's variables are ("D", "N") in that order.
LAW = AdditiveLaw(0.5, {"N": 2.0, "D": 3.0}, {"N": 0.5, "D": 0.25})
AL, BE = 0.5, 0.25


def _reducible(N, D):
    return 2.0 * N ** -AL + 3.0 * D ** -BE


def _central(f, x, h=1e-6):
    """Central differences of a scalar function (its gradient), relative step ``h``."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in range(x.size):
        step = h * max(1.0, abs(x[i]))
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        out[i] = (f(up) - f(down)) / (2 * step)
    return out


# -- log-sum-exp ---------------------------------------------------------------

def test_log_sum_exp_of_huge_terms_without_overflow() -> None:
    A = np.array([[1.0, 0.0], [0.0, 2.0]])
    b = np.array([0.0, math.log(3.0)])
    u = np.array([700.0, 360.0])              # z = (700, 720 + log 3): exp(z) overflows
    z1, z2 = 700.0, 720.0 + math.log(3.0)
    val, grad, w = log_value_grad(A, b, u)
    assert val == pytest.approx(z2 + math.log1p(math.exp(z1 - z2)), rel=1e-15)
    w1 = 1.0 / (1.0 + math.exp(z2 - z1))
    assert w == pytest.approx([w1, 1.0 - w1], rel=1e-12, abs=1e-300)
    assert grad == pytest.approx([w1, 2.0 * (1.0 - w1)], rel=1e-12)


def test_log_sum_exp_of_small_terms() -> None:
    A = np.array([[-0.5, 0.0], [0.0, -0.25], [1.0, 1.0]])
    b = np.log([2.0, 3.0, 0.5])
    u = np.log([4.0, 16.0])
    terms = np.array([2.0 / 2.0, 3.0 / 2.0, 0.5 * 64.0])
    val, grad, w = log_value_grad(A, b, u)
    assert val == pytest.approx(math.log(terms.sum()), rel=1e-15)
    assert w == pytest.approx(terms / terms.sum(), rel=1e-15)
    assert grad == pytest.approx(_central(lambda x: log_value_grad(A, b, x)[0], u), rel=1e-7)


def test_the_hessian_of_two_terms_is_w1_w2_times_the_outer_difference() -> None:
    A = np.array([[-0.5, 0.0], [0.0, -0.25]])
    w = np.array([0.3, 0.7])
    d = A[0] - A[1]
    assert _hess(A, w) == pytest.approx(0.3 * 0.7 * np.outer(d, d), rel=1e-14, abs=1e-17)


def test_the_hessian_of_three_terms_is_the_jacobian_of_the_gradient() -> None:
    A = np.array([[-0.5, 0.2], [0.1, -0.25], [1.0, 1.0]])
    b = np.log([2.0, 3.0, 0.5])
    u = np.array([0.3, -0.2])
    w = log_value_grad(A, b, u)[2]
    jac = np.column_stack([_central(lambda x, j=j: log_value_grad(A, b, x)[1][j], u)
                           for j in range(2)])
    assert _hess(A, w) == pytest.approx(jac, rel=1e-6, abs=1e-9)


# -- log space -----------------------------------------------------------------

def test_log_space_bounds_labels_and_right_hand_side() -> None:
    prob = AllocationProblem(LAW, "6*N*D", {"N": (2, 100)})
    s = LogSpace(prob.state, ALLOCATE, 1e6)
    assert s.variables == ("D", "N")
    assert s.lo.tolist() == [-math.inf, math.log(2.0)]
    assert s.hi.tolist() == [math.inf, math.log(100.0)]
    assert s.labels_lo == [None, "N>=2"] and s.labels_hi == [None, "N<=100"]
    assert s.log_rhs == math.log(1e6) and s.hessians is True
    # a floor below 1 is a bound all the same (a negative log)
    low = LogSpace(AllocationProblem(LAW, "6*N*D", {"N": (0.5, None)}).state, ALLOCATE, 1e6)
    assert low.labels_lo == [None, "N>=0.5"] and low.lo[1] == math.log(0.5)
    m = LogSpace(prob.state, MIN_COST, 0.75)
    assert m.log_rhs == pytest.approx(math.log(0.25), rel=1e-15)
    # at() moves the right-hand side and leaves the original alone.
    assert s.at(2e6, 0.5).log_rhs == math.log(2e6) and s.log_rhs == math.log(1e6)
    assert m.at(0.625, 0.5).log_rhs == pytest.approx(math.log(0.125), rel=1e-15)


def test_log_space_values_and_gradients_by_hand() -> None:
    prob = AllocationProblem(LAW, "N + 2*D")
    N, D, B = 4.0, 16.0, 100.0
    p = np.log([D, N])
    s = LogSpace(prob.state, ALLOCATE, B)
    assert s.point({"N": N, "D": D}) == pytest.approx(p, rel=1e-15)
    assert s.to_values(p) == pytest.approx({"N": N, "D": D}, rel=1e-15)
    lN, lD = 2.0 * N ** -AL, 3.0 * D ** -BE
    assert s.obj_value(p) == pytest.approx(math.log(lN + lD), rel=1e-15)
    assert s.obj_grad(p) == pytest.approx([-BE * lD / (lN + lD), -AL * lN / (lN + lD)],
                                          rel=1e-14)
    g, dg = s.main(p)
    assert g == pytest.approx(math.log((N + 2 * D) / B), rel=1e-14)
    assert dg == pytest.approx([2 * D / (N + 2 * D), N / (N + 2 * D)], rel=1e-14)
    # Hessians: two terms each, so w1 w2 (a1 - a2)(a1 - a2)^T.
    wl = lN / (lN + lD)
    assert s.obj_hess(p) == pytest.approx(wl * (1 - wl) * np.outer([BE, -AL], [BE, -AL]),
                                          rel=1e-13)
    wc = N / (N + 2 * D)
    assert s.main_hess(p) == pytest.approx(wc * (1 - wc) * np.outer([-1, 1], [-1, 1]),
                                           rel=1e-13)
    # min_cost swaps the two: the objective is log C, the constraint log P - log(T - floor).
    m = LogSpace(prob.state, MIN_COST, 0.75)
    assert m.obj_value(p) == pytest.approx(math.log(N + 2 * D), rel=1e-15)
    assert m.obj_grad(p) == pytest.approx(dg, rel=1e-14)
    g, dg = m.main(p)
    assert g == pytest.approx(math.log((lN + lD) / 0.25), rel=1e-14)
    assert m.obj_hess(p) == pytest.approx(s.main_hess(p), rel=1e-13)


def test_a_zero_count_sits_at_log_1e300() -> None:
    s = LogSpace(AllocationProblem(LAW, "N + D").state, ALLOCATE, 10.0)
    assert s.point({"N": 0.0, "D": 1.0}).tolist() == [0.0, math.log(1e-300)]


def test_bound_constraints_in_log_space() -> None:
    prob = AllocationProblem(LAW, "6*N*D", {"N": (2, 100), "D": (None, 50)})
    s = LogSpace(prob.state, ALLOCATE, 1e6)
    p = np.log([10.0, 5.0])
    cons = s.bound_cons(p)
    assert [c[0] for c in cons] == ["D<=50", "N>=2", "N<=100"]
    assert [c[1] for c in cons] == pytest.approx(
        [math.log(10 / 50), math.log(2 / 5), math.log(5 / 100)], rel=1e-14)
    assert [c[2].tolist() for c in cons] == [[1.0, 0.0], [0.0, -1.0], [0.0, 1.0]]


def _chinchilla_point(B):
    """alpha a N^-alpha = beta b D^-beta with 6 N D = B, solved on paper for N."""
    N = ((AL * 2.0) / (BE * 3.0) * (B / 6.0) ** BE) ** (1.0 / (AL + BE))
    return N, B / (6.0 * N)


def test_kkt_at_the_paper_optimum_gives_the_loss_elasticity() -> None:
    B = 1e8
    N, D = _chinchilla_point(B)
    prob = AllocationProblem(LAW, "6*N*D")
    res, mu = LogSpace(prob.state, ALLOCATE, B).kkt({"N": N, "D": D})
    assert res <= 1e-13
    # mu = alpha beta / (alpha + beta) = d log(L - L_inf) / d log B (reported positive).
    assert mu == {"budget": pytest.approx(AL * BE / (AL + BE), rel=1e-12)}
    # Off the optimum (N 10 % high, same cost) the stationarity error is large.
    res, _ = LogSpace(prob.state, ALLOCATE, B).kkt({"N": 1.1 * N, "D": D / 1.1})
    assert 1e-3 < res < 1


def test_kkt_with_a_binding_upper_bound_splits_the_multipliers() -> None:
    B = 1e8
    N_opt, _ = _chinchilla_point(B)
    cap = N_opt / 2
    prob = AllocationProblem(LAW, "6*N*D", {"N": (None, cap)})
    N, D = cap, B / (6 * cap)
    lN, lD = 2.0 * N ** -AL, 3.0 * D ** -BE
    wN, wD = lN / (lN + lD), lD / (lN + lD)
    res, mu = LogSpace(prob.state, ALLOCATE, B).kkt({"N": N, "D": D})
    # D: -beta wD + mu = 0;  N: -alpha wN + mu + nu = 0.
    assert res <= 1e-13
    assert mu == {"budget": pytest.approx(BE * wD, rel=1e-12),
                  f"N<={cap:g}": pytest.approx(AL * wN - BE * wD, rel=1e-12)}


# -- count space (synthetic data) ------------------------------------------------

SLAW = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})


def _syn(kind):
    sat = None if kind == "linear" else 2.0
    return [SynthesisMethod("E", unit_cost=1.5, rho=0.8, saturation=sat, kind=kind, name="gen")]


@pytest.mark.parametrize("kind", ["linear", "saturating", "relative"])
def test_count_gradients_are_the_central_differences(kind) -> None:
    prob = AllocationProblem(SLAW, "10*E + K + 7", synthesis=_syn(kind))
    x = np.array([30.0, 200.0, 45.0])                     # E, K, gen
    gl, gc = grad_counts(prob.state, dict(zip(prob.variables, x)))

    def red(v):
        return float(prob.state.reducible_at(dict(zip(prob.variables, v))))

    def cost(v):
        return float(prob.cost_at(dict(zip(prob.variables, v))))

    assert gl == pytest.approx(_central(red, x), rel=1e-6)
    assert gc.tolist() == [10.0, 1.0, 1.5]
    assert gc == pytest.approx(_central(cost, x), rel=1e-8)


def test_count_space_scales_and_values() -> None:
    prob = AllocationProblem(SLAW, "10*E + K", {"K": (4, 900)}, synthesis=_syn("saturating"))
    vals = {"E": 30.0, "K": 200.0, "gen": 3.0}
    B = 1000.0
    s = CountSpace(prob.state, ALLOCATE, B, vals)
    assert s.hessians is False
    assert s.scale.tolist() == [100.0, 1000.0, pytest.approx(1000.0 / 1.5, rel=1e-15)]
    eff_E = 30.0 + 0.8 * 2.0 * (1 - math.exp(-1.5))
    red0 = 2.0 * eff_E ** -0.5 + 200.0 ** -0.3
    assert s.red0 == pytest.approx(red0, rel=1e-14)
    assert s.cost0 == 300.0 + 200.0 + 1.5 * 3.0
    assert s.lo.tolist() == [0.0, 0.004, 0.0] and s.hi.tolist() == [math.inf, 0.9, math.inf]
    assert s.labels_lo == ["E>=0", "K>=4", "gen>=0"] and s.labels_hi == [None, "K<=900", None]
    p = s.point(vals)
    assert p.tolist() == [0.3, 0.2, pytest.approx(3.0 * 1.5 / 1000.0, rel=1e-15)]
    assert s.to_values(p) == pytest.approx(vals, rel=1e-15)
    assert s.to_values(np.array([-0.1, 0.2, 0.0])) == {"E": 0.0, "K": 200.0, "gen": 0.0}
    assert s.obj_value(p) == pytest.approx(1.0, rel=1e-15)
    q = p * np.array([2.0, 0.5, 1.0])
    red_q = 2.0 * (60.0 + 0.8 * 2.0 * (1 - math.exp(-1.5))) ** -0.5 + 100.0 ** -0.3
    assert s.obj_value(q) == pytest.approx(red_q / red0, rel=1e-14)
    assert s.obj_grad(p) == pytest.approx(_central(s.obj_value, p), rel=1e-6)
    g, dg = s.main(p)
    assert g == pytest.approx((300 + 200 + 4.5) / B - 1.0, rel=1e-14)
    assert dg.tolist() == pytest.approx([1.0, 1.0, 1.0], rel=1e-15)   # gc * scale / B


def test_count_space_for_a_target() -> None:
    prob = AllocationProblem(SLAW, "10*E + K", synthesis=_syn("linear"))
    vals = {"E": 30.0, "K": 200.0, "gen": 45.0}
    target = 0.6
    s = CountSpace(prob.state, MIN_COST, target, vals)
    cost0 = 300.0 + 200.0 + 67.5
    # ref is the cost at the point: scale = cost0 / gc.
    assert s.scale == pytest.approx([cost0 / 10, cost0, cost0 / 1.5], rel=1e-15)
    p = s.point(vals)
    assert s.obj_value(p) == pytest.approx(1.0, rel=1e-15)
    assert s.obj_value(p * 2) == pytest.approx(2.0, rel=1e-14)
    assert s.obj_grad(p) == pytest.approx([1.0, 1.0, 1.0], rel=1e-14)
    red = 2.0 * (30.0 + 0.8 * 45.0) ** -0.5 + 200.0 ** -0.3
    g, dg = s.main(p)
    assert g == pytest.approx(red / 0.5 - 1.0, rel=1e-14)
    assert dg == pytest.approx(_central(lambda q: s.main(q)[0], p), rel=1e-6)


def test_count_space_scale_of_an_uncosted_bounded_axis() -> None:
    # E is free of cost (capped at 50): its scale is max(E, 1).
    prob = AllocationProblem(SLAW, "K", {"E": (None, 50)}, synthesis=_syn("linear"))
    for E, scale in ((0.5, 1.0), (20.0, 20.0)):
        s = CountSpace(prob.state, ALLOCATE, 100.0, {"E": E, "K": 10.0, "gen": 1.0})
        assert s.scale.tolist() == [scale, 100.0, pytest.approx(100 / 1.5, rel=1e-15)]
        assert s.hi[0] == 50.0 / scale


def test_count_space_kkt_on_the_budget_line_by_hand() -> None:
    # On the budget line the main constraint's gradient in scaled counts is gc * (B / gc) / B
    # = (1, 1, 1), so mu = -mean(grad f) and the residual is max|grad f + mu| / max|grad f|,
    # with grad f from central differences of the reducible loss.
    prob = AllocationProblem(SLAW, "10*E + K", synthesis=_syn("saturating"))
    vals = {"E": 30.0, "K": 200.0, "gen": 3.0}
    B = 504.5                                     # exactly the cost of vals
    s = CountSpace(prob.state, ALLOCATE, B, vals)
    x = np.array([30.0, 200.0, 3.0])
    grad = _central(lambda v: float(prob.state.reducible_at(dict(zip(prob.variables, v)))), x)
    grad = grad * s.scale / s.red0
    mu = -grad.mean()
    res, duals = s.kkt(vals)
    assert duals == {"budget": pytest.approx(mu, rel=1e-6)}
    assert res == pytest.approx(np.max(np.abs(grad + mu)) / np.max(np.abs(grad)), rel=1e-5)
    # Pinned on its lower bound K = 200 the bound's multiplier joins in (NNLS, two columns).
    prob = AllocationProblem(SLAW, "10*E + K", {"K": (200, None)}, synthesis=_syn("saturating"))
    s = CountSpace(prob.state, ALLOCATE, B, vals)
    res, duals = s.kkt(vals)
    J = np.column_stack([np.ones(3), [0.0, -1.0, 0.0]])
    from scipy.optimize import nnls

    m, _ = nnls(J, -grad)
    assert set(duals) == {"budget", "K>=200"}
    assert [duals["budget"], duals["K>=200"]] == pytest.approx(m, rel=1e-6)
