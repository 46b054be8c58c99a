"""optimize/_alloc_polish.py pinned on problems whose optimum is known on paper: the tolerance
ladder of the active-set guess at its edges, the slack-constraint guard, the exact Newton's
stopping rule and iteration cap counted on a linear model, scipy's hybr in the count space,
and the SLSQP rescue."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import brentq

from rlscale.optimize import AllocationProblem
from rlscale.optimize._alloc_kkt import ALLOCATE
from rlscale.optimize._alloc_polish import _active_set, _exact_newton, _newton, polish, rescue
from rlscale.theory import AdditiveLaw, MultiplicativeLaw, SynthesisMethod

# L = 0.2 + 3 E^-0.45 + 4 K^-0.2 under 100 E + K <= B.
LAW = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
B, CAP = 1e7, 500.0


def _capped():
    """E capped at 500: the unconstrained optimum (E ~ 7e4) is far past it, so the optimum is
    E = 500 and K = B - 100 * 500."""
    prob = AllocationProblem(LAW, "100*E + K", {"E": (None, CAP)})
    return prob, prob.state.space_at(ALLOCATE, B)


def _on_budget(E: float, budget: float = B) -> dict[str, float]:
    return {"E": E, "K": budget - 100.0 * E}


def _interior(budget: float) -> dict[str, float]:
    """No bounds: 0.45 * 3 E^-0.45 / (100 E) = 0.2 * 4 K^-0.2 / K on the budget line."""
    def stat(E):
        K = budget - 100 * E
        return 0.45 * 3 * E ** -0.45 / (100 * E) - 0.2 * 4 * K ** -0.2 / K
    E = brentq(stat, 1e-6, budget / 100 * (1 - 1e-12), xtol=1e-300, rtol=1e-15)
    return _on_budget(E, budget)


# -- the active-set guess --------------------------------------------------------

def test_active_set_windows_are_relative_to_edges_beyond_one() -> None:
    space = SimpleNamespace(lo=np.array([-math.inf, 0.5, 5.0]), hi=np.array([2.0, math.inf, 9.0]))
    # window tol * max(1, |edge|): 1e-4 at the edge 0.5, 5e-4 at the edge 5.
    assert _active_set(space, np.array([1.0, 0.5 + 0.9e-4, 5.0 + 4.5e-4]), 1e-4) == {1: 0.5, 2: 5.0}
    assert _active_set(space, np.array([1.0, 0.5 + 1.2e-4, 5.0 + 5.5e-4]), 1e-4) == {}
    assert _active_set(space, np.array([2.0 - 1e-5, 0.4, 9.0]), 1e-4) == {0: 2.0, 2: 9.0}
    # tolerance 0 keeps exactly the coordinates on an edge.
    assert _active_set(space, np.array([2.0, 0.5, 5.0 + 1e-15]), 0.0) == {0: 2.0, 1: 0.5}
    assert _active_set(space, np.array([-2.0, -0.5, -5.0]), 1e-2) == {}


def test_a_point_1e8_off_its_cap_is_snapped_onto_it() -> None:
    _, space_at = _capped()
    values = _on_budget(CAP * (1 - 1e-8))
    # Its residual is already tiny (two active constraints in two dimensions)...
    assert space_at(values).kkt(values)[0] < 1e-13
    out, moved = polish(space_at, values)
    # ... but the first guess still runs and puts E on the cap exactly.
    assert moved and out["E"] == pytest.approx(CAP, rel=1e-15)
    assert out["K"] == pytest.approx(B - 100 * CAP, rel=1e-14)


@pytest.mark.parametrize(("frac", "moves"), [(0.9e-2, True), (1.2e-2, False)])
def test_the_widest_window_is_1e2_of_the_log_edge(frac, moves) -> None:
    # log-space distance frac * log(500) below the cap: within 1e-2 the active set {E} is
    # guessed and Newton lands on the optimum; beyond it no guess fits (the free Newton point
    # breaks the cap) and the point is returned as it came.
    _, space_at = _capped()
    values = _on_budget(CAP * math.exp(-frac * math.log(CAP)))
    out, moved = polish(space_at, values)
    assert moved is moves
    if moves:
        assert out == pytest.approx(_on_budget(CAP), rel=1e-14)
    else:
        assert out is values


@pytest.mark.parametrize(("slack", "moves"), [(0.9e-4, True), (1.2e-4, False), (5e-3, False)])
def test_a_slack_budget_beyond_1e4_in_logs_is_left_alone(slack, moves) -> None:
    prob = AllocationProblem(LAW, "100*E + K")
    space_at = prob.state.space_at(ALLOCATE, 1e5)
    best = _interior(1e5)
    values = {k: v * math.exp(-slack) for k, v in best.items()}   # cost = B e^-slack
    out, moved = polish(space_at, values)
    assert moved is moves
    assert out == pytest.approx(best if moves else values, rel=1e-12)


def _far_start(edge: float, side: float) -> dict[str, float]:
    """A point on the budget line 0.1 inside ``edge`` in logs (beyond every window)."""
    return _on_budget(edge * math.exp(side * 0.1), 1e5)


@pytest.mark.parametrize(("past", "moves"), [(1e-5, False), (1.2e-12, False), (0.8e-12, True)])
def test_a_free_newton_point_past_a_cap_by_more_than_1e12_is_refused(past, moves) -> None:
    # The interior optimum E* with a cap just below it, e^(past * log cap) of the way: from far
    # inside, the free Newton lands on E*, past the cap.  Within 1e-12 of the edge it is kept
    # (the cap is met to float64 accuracy); beyond, no other guess fits and nothing moves.
    best = _interior(1e5)
    cap = best["E"] * math.exp(-past * math.log(best["E"]))
    prob = AllocationProblem(LAW, "100*E + K", {"E": (None, cap)})
    values = _far_start(cap, -1.0)
    out, moved = polish(prob.state.space_at(ALLOCATE, 1e5), values)
    assert moved is moves
    assert out == pytest.approx(best if moves else values, rel=1e-14)


@pytest.mark.parametrize(("past", "moves"), [(1e-5, False), (1.2e-12, False), (0.8e-12, True)])
def test_a_free_newton_point_below_a_floor_by_more_than_1e12_is_refused(past, moves) -> None:
    best = _interior(1e5)
    floor = best["E"] * math.exp(past * math.log(best["E"]))
    prob = AllocationProblem(LAW, "100*E + K", {"E": (floor, None)})
    values = _far_start(floor, 1.0)
    out, moved = polish(prob.state.space_at(ALLOCATE, 1e5), values)
    assert moved is moves
    assert out == pytest.approx(best if moves else values, rel=1e-14)


def test_polish_reaches_the_interior_optimum_from_the_conic_solvers_distance() -> None:
    prob = AllocationProblem(LAW, "100*E + K")
    space_at = prob.state.space_at(ALLOCATE, 1e5)
    best = _interior(1e5)
    values = _on_budget(best["E"] * (1 + 3e-7), 1e5)
    out, moved = polish(space_at, values)
    assert moved and out == pytest.approx(best, rel=1e-13)
    assert space_at(out).kkt(out)[0] <= 1e-13


def test_a_vertex_of_the_bounds_is_its_own_candidate() -> None:
    # Both variables capped with budget to spare: the conic point sits ~1e-9 inside the caps;
    # the polish puts it on them exactly (residual 0: both caps' multipliers fit the gradient).
    prob = AllocationProblem(LAW, "100*E + K", {"E": (None, 50), "K": (None, 1000)})
    space_at = prob.state.space_at(ALLOCATE, 1e4)
    values = {"E": 50.0 * (1 - 1e-9), "K": 1000.0 * (1 - 2e-9)}
    assert _newton(space_at(values), values, 1e-4, set()) == pytest.approx(
        {"E": 50.0, "K": 1000.0}, rel=1e-15)
    out, moved = polish(space_at, values)
    assert moved and out == pytest.approx({"E": 50.0, "K": 1000.0}, rel=1e-15)
    assert space_at(out).kkt(out)[0] == 0.0
    # A vertex past the budget (cost 6000 > 5000) is no candidate.
    space = prob.state.space_at(ALLOCATE, 5000.0)(values)
    assert _newton(space, values, 1e-4, set()) is None


def test_a_vertex_exactly_on_the_main_constraint_is_a_candidate() -> None:
    # _Quad(1) boxed in [-inf, 0.5]^2: the vertex (0.5, 0.5) has g = 0.5 + 0.5 - 1 = 0 exactly.
    space = _Quad(1.0)
    space.hi = np.array([0.5, 0.5])
    assert _newton(space, {"a": 0.5, "b": 0.5}, 1e-4, set()) == {"a": 0.5, "b": 0.5}
    space.hi = np.array([0.5, 0.75])                      # g = 0.25 > 0: over the constraint
    assert _newton(space, {"a": 0.5, "b": 0.75}, 1e-4, set()) is None


def test_an_active_set_already_tried_is_not_solved_again() -> None:
    _, space_at = _capped()
    values = _on_budget(CAP * (1 - 1e-6))
    tried: set = set()
    first = _newton(space_at(values), values, 1e-4, tried)
    assert first == pytest.approx(_on_budget(CAP), rel=1e-14) and tried == {frozenset({0})}
    assert _newton(space_at(values), values, 1e-2, tried) is None


class _Flat:
    """A space whose gradients are constants, to read the Newton start ``_newton`` builds."""

    hessians = True

    def __init__(self, grad, d, lo=(-math.inf, -math.inf)) -> None:
        self.grad, self.d = np.array(grad), np.array(d)
        self.lo, self.hi = np.array(lo), np.array([math.inf, math.inf])

    def point(self, values):
        return np.array([values["a"], values["b"]])

    def main(self, p):
        return 0.0, self.d

    def obj_grad(self, p):
        return self.grad


@pytest.mark.parametrize(("grad", "d", "lo", "start", "free", "lam0"), [
    # the least-squares multiplier -g.d / d.d = (3 + 1) / 2
    ((-3.0, -1.0), (1.0, 1.0), (-math.inf, -math.inf), (0.5, 2.0), [0, 1], 2.0),
    # a multiplier that would be negative starts at 0
    ((3.0, 1.0), (1.0, 1.0), (-math.inf, -math.inf), (0.5, 2.0), [0, 1], 0.0),
    # a coordinate within 1e-4 of its floor is fixed on it; only the free part counts: 4 / 2
    ((-3.0, -4.0), (5.0, 2.0), (0.5, -math.inf), (0.5, 2.0), [1], 2.0),
    # a constraint gradient of squared norm below 1e-300 is divided by 1e-300
    ((-3.0, -1.0), (1e-160, 0.0), (-math.inf, -math.inf), (0.5, 2.0), [0, 1], 3e140),
])
def test_newton_starts_from_the_least_squares_multiplier(monkeypatch, grad, d, lo, start, free,
                                                         lam0) -> None:
    from rlscale.optimize import _alloc_polish as mod

    seen = []
    monkeypatch.setattr(mod, "_exact_newton", lambda space, st, fr, z0: seen.append(
        (st.copy(), fr.tolist(), z0.copy())))
    monkeypatch.setattr(mod, "_hybr", lambda space, st, fr, z0: None)
    values = {"a": 0.5 + 1e-5 if lo[0] > -1 else 0.5, "b": 2.0}
    assert _newton(_Flat(grad, d, lo), values, 1e-4, set()) is None
    (st, fr, z0), = seen
    assert st.tolist() == list(start) and fr == free
    assert z0.tolist() == pytest.approx([start[i] for i in free] + [lam0], rel=1e-15)


# -- the exact Newton on a linear model -------------------------------------------

class _Linear:
    """f = (a/2)|p - 1|^2 on p0 + p1 = 2 with a deliberately wrong Hessian h I: Newton then
    contracts the error by exactly 1 - a/h per step.  Counts its ``main`` calls."""

    hessians = True

    def __init__(self, a: float, h: float, centre: float = 1.0) -> None:
        self.a, self.h, self.calls, self.centre = a, h, 0, centre

    def main(self, p):
        self.calls += 1
        return float(p[0] + p[1] - 2.0 * self.centre), np.array([1.0, 1.0])

    def obj_grad(self, p):
        return self.a * (p - self.centre)

    def obj_hess(self, p):
        return self.h * np.eye(2)

    def main_hess(self, p):
        return np.zeros((2, 2))


class _Quad(_Linear):
    """(1/2)|p - 1|^2 on p0 + p1 = c, with exact Hessians: the equality-constrained optimum is
    p = (c/2, c/2) with multiplier 1 - c/2 (negative when the free optimum (1, 1) is slack)."""

    def __init__(self, c: float) -> None:
        super().__init__(1.0, 1.0)
        self.c = c
        self.lo, self.hi = np.array([-math.inf] * 2), np.array([math.inf] * 2)

    def main(self, p):
        return float(p[0] + p[1] - self.c), np.array([1.0, 1.0])

    def point(self, values):
        return np.array([values["a"], values["b"]])

    def to_values(self, p):
        return {"a": float(p[0]), "b": float(p[1])}


def test_newton_refuses_a_point_with_a_negative_multiplier() -> None:
    # c = 1: multiplier 1/2, the point (1/2, 1/2) is returned.
    assert _newton(_Quad(1.0), {"a": 0.2, "b": 0.8}, 1e-4, set()) == pytest.approx(
        {"a": 0.5, "b": 0.5}, rel=1e-15)
    # c = 2: the free optimum (1, 1) lies on the constraint, multiplier exactly 0: kept.
    assert _newton(_Quad(2.0), {"a": 0.5, "b": 1.5}, 1e-4, set()) == {"a": 1.0, "b": 1.0}
    # c = 3: the constraint pulls the wrong way (multiplier -1/2): no candidate.
    assert _newton(_Quad(3.0), {"a": 1.2, "b": 1.8}, 1e-4, set()) is None


def test_newton_stops_once_a_step_is_1e11_of_the_iterate() -> None:
    # Error s 2^-k after k steps, so step k is s 2^-(k+1): with s = 1.2e-11 * 2^21 step 20 is
    # 1.2e-11 (go on) and step 21 is 6e-12 (stop): 22 iterations.
    s = 1.2e-11 * 2.0 ** 21
    space = _Linear(1.0, 2.0)
    start = np.array([1.0 + s, 1.0 - s])
    z = _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.0]))
    assert space.calls == 22
    assert z == pytest.approx([1.0, 1.0, 0.0], abs=1e-11)


def test_newton_stop_is_relative_to_iterates_beyond_one() -> None:
    # Centred on (100, 100): the stop is 1e-11 * 100 = 1e-9, so with steps s 2^-(k+1) and
    # s = 1.2e-9 * 2^21 the last step taken is step 21: again 22 iterations.
    s = 1.2e-9 * 2.0 ** 21
    space = _Linear(1.0, 2.0, centre=100.0)
    start = np.array([100.0 + s, 100.0 - s])
    z = _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.0]))
    assert space.calls == 22
    assert z == pytest.approx([100.0, 100.0, 0.0], abs=1e-9)


def test_a_step_of_exactly_1e11_is_the_last() -> None:
    # Exact Hessian on f = |p|^2 / 2, p0 + p1 = 0, from (s, -s): the one step is exactly
    # (-s, s, 0), so s = 1e-11 stops at once (<=).
    s = 1e-11
    space = _Linear(1.0, 1.0, centre=0.0)
    start = np.array([s, -s])
    z = _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.0]))
    assert space.calls == 1 and z.tolist() == [0.0, 0.0, 0.0]


def test_a_main_constraint_slack_of_exactly_1e4_is_still_polished() -> None:
    # _Quad(0): g = p0 + p1, optimum (0, 0) with multiplier 1; from g = -1e-4 Newton runs,
    # from a hair further inside it does not.
    out = _newton(_Quad(0.0), {"a": 0.0, "b": -1e-4}, 1e-4, set())
    assert out == pytest.approx({"a": 0.0, "b": 0.0}, abs=1e-15)
    assert _newton(_Quad(0.0), {"a": 0.0, "b": -1.0000001e-4}, 1e-4, set()) is None


def test_newton_gives_up_after_30_steps() -> None:
    space = _Linear(1.0, 10.0)                     # contraction 0.9: ~250 steps needed
    start = np.array([1.5, 0.5])
    assert _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.0])) is None
    assert space.calls == 30


def test_newton_on_a_singular_system_returns_none() -> None:
    space = _Linear(1.0, 0.0)                      # K = [[0, 0, 1], [0, 0, 1], [1, 1, 0]]
    start = np.array([1.5, 0.5])
    assert _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.0])) is None
    assert space.calls == 1


def test_exact_newton_from_a_perturbed_start_hits_the_paper_optimum() -> None:
    # E + K <= 100 with L = 1/sqrt(E K): E = K = 50, log-log multiplier 1.
    prob = AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K")
    space = prob.state.space_at(ALLOCATE, 100.0)({})
    start = np.log([45.0, 55.0])
    z = _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.9]))
    assert z == pytest.approx([math.log(50.0), math.log(50.0), 1.0], rel=1e-14)


# -- scipy's hybr in the count space -------------------------------------------------

def test_the_count_space_polish_lands_on_the_reduced_optimum() -> None:
    # Linear synthesis at 1.5 per unit and rho 0.8 is 1.875 per effective unit of E against 10
    # for real E, so E = 0 and the problem is min 3 X^-0.45 + 4 K^-0.2, 1.875 X + K = B with
    # X = 0.8 gen: one stationarity equation, solved by brentq.
    syn = [SynthesisMethod("E", unit_cost=1.5, rho=0.8, name="gen")]
    prob = AllocationProblem(LAW, "10*E + K", synthesis=syn)
    budget = 1e4

    def stat(X):
        K = budget - 1.875 * X
        return 0.45 * 3 * X ** -0.45 / (1.875 * X) - 0.2 * 4 * K ** -0.2 / K
    X = brentq(stat, 1e-6, budget / 1.875 * (1 - 1e-12), xtol=1e-300, rtol=1e-15)
    best = {"E": 0.0, "K": budget - 1.875 * X, "gen": X / 0.8}
    space_at = prob.state.space_at(ALLOCATE, budget)
    start = {"E": 1e-9, "K": best["K"] * (1 - 1e-6), "gen": best["gen"] * (1 + 1e-6)}
    out, moved = polish(space_at, start)
    assert moved and out["E"] == 0.0
    assert out["K"] == pytest.approx(best["K"], rel=1e-11)
    assert out["gen"] == pytest.approx(best["gen"], rel=1e-11)


# -- the rescue ---------------------------------------------------------------------

def test_rescue_finds_the_capped_optimum_from_a_poor_point() -> None:
    _, space_at = _capped()
    values, moved = rescue(space_at, {"E": 20.0, "K": 3e6})
    assert moved and values == pytest.approx(_on_budget(CAP), rel=1e-12)
    assert space_at(values).kkt(values)[0] <= 1e-13


def test_rescue_keeps_a_point_it_cannot_improve() -> None:
    prob = AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K")
    values = {"E": 50.0, "K": 50.0}               # residual exactly 0
    assert rescue(prob.state.space_at(ALLOCATE, 100.0), values) == (values, False)


def test_rescue_keeps_the_point_when_slsqp_returns_nan(monkeypatch) -> None:
    import scipy.optimize

    class _Res:
        x = np.array([np.nan, 1.0])

    monkeypatch.setattr(scipy.optimize, "minimize", lambda *a, **k: _Res())
    _, space_at = _capped()
    values = {"E": 20.0, "K": 3e6}
    assert rescue(space_at, values) == (values, False)
