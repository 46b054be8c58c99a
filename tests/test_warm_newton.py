"""Warm-started Newton solves (optimize/_warm_newton.py) and the vectorised realised η.

The warm path is checked against the geometric program solved by cvxpy (the
solver of record: a conic interior-point method, an independent algorithm)
and, for the η bootstrap, against ``warm=False`` (every law through cvxpy, the
implementation before warm starts).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, compare_baselines, cost_to_reach
from rlscale.optimize._alloc_kkt import ALLOCATE
from rlscale.optimize._baselines import ETA_FLOOR, eta_bootstrap
from rlscale.optimize._eta_interval import bootstrap_interval
from rlscale.optimize._realised import _costs_to_reach
from rlscale.optimize._warm_newton import _certified, warm_allocate, warm_min_cost, warm_solve
from rlscale.theory import AdditiveLaw, SynthesisMethod

# The report's nested problem: cost 20 E + 2 E t + 0.1 E t k, law on (E, t, k).
SUB = {"environments": "E", "tasks_per_environment": "t", "trajectories_per_task": "k"}
COST = "20*E + 2*E*t + 0.1*E*t*k"
BOUNDS = {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (2.0, 128.0)}


def _law(rng: np.random.Generator, steep: bool = False) -> AdditiveLaw:
    exps = {"environments": rng.uniform(0.1, 0.8), "tasks_per_environment": rng.uniform(0.2, 0.7),
            "trajectories_per_task": rng.uniform(15, 25) if steep else rng.uniform(0.2, 1.5)}
    coefs = {"environments": rng.uniform(0.2, 0.8), "tasks_per_environment": rng.uniform(0.1, 0.6),
             "trajectories_per_task": (2.0 ** exps["trajectories_per_task"]
                                       * rng.uniform(0.05, 0.5)) if steep
             else rng.uniform(0.1, 1.0)}
    return AdditiveLaw(0.26, coefs, exps)


def _problem(law: AdditiveLaw, bounds: dict = BOUNDS) -> AllocationProblem:
    return AllocationProblem(law, COST, bounds, SUB)


def _rel(a: dict, b: dict) -> float:
    return max(abs(a[v] / b[v] - 1) for v in b)


@pytest.mark.parametrize("steep", [False, True])
def test_warm_allocate_and_min_cost_agree_with_the_gp(steep: bool) -> None:
    """From a neighbouring law's optimum the certified Newton point is cvxpy's optimum."""
    rng = np.random.default_rng(11 + steep)
    agreed = 0
    for _ in range(12):
        law = _law(rng, steep)
        pb = _problem(law)
        start = _problem(_law(rng, steep)).allocate(1000.0, round_integers=False).values
        gp = pb.allocate(1000.0, round_integers=False)
        warm = warm_allocate(pb, 1000.0, start)
        if warm is not None:
            assert _rel(warm, gp.values) < 1e-10
            agreed += 1
        for factor in (1.02, 1.4):
            target = gp.loss * factor
            gm = pb.min_cost(target, round_integers=False)
            wm = warm_min_cost(pb, target, gp.values)
            if wm is not None:
                assert _rel(wm, gm.values) < 1e-10
                assert float(pb.cost_at(wm)) == pytest.approx(gm.cost, rel=1e-10)
                agreed += 1
    assert agreed >= 30  # the fast path is taken almost always (36 solves)


def test_warm_solve_with_binding_bounds_matches_the_gp() -> None:
    """Tight bounds: the active-set loop fixes the right coordinates (cvxpy's duals name them)."""
    rng = np.random.default_rng(5)
    tight = {"E": (1.0, 8.0), "t": (1.0, 6.0), "k": (2.0, 128.0)}
    bound_hits = 0
    for _ in range(10):
        pb = _problem(_law(rng), tight)
        gp = pb.allocate(3000.0, round_integers=False)
        warm = warm_allocate(pb, 3000.0, {"E": 3.0, "t": 3.0, "k": 10.0})
        assert warm is not None
        assert _rel(warm, gp.values) < 1e-10
        bound_hits += any("<=" in k or ">=" in k for k in gp.duals)
    assert bound_hits >= 5  # the cases really have binding bounds


def test_warm_solve_refuses_rather_than_guesses() -> None:
    """Unreachable targets, a non-GP problem and a non-optimal point give None."""
    rng = np.random.default_rng(2)
    pb = _problem(_law(rng))
    start = pb.allocate(1000.0, round_integers=False).values
    assert warm_min_cost(pb, pb.lowest_loss() * 0.999, start) is None   # below what bounds allow
    assert warm_min_cost(pb, 0.2, start) is None                         # below the floor
    assert warm_allocate(pb, 5.0, start) is None                         # below the cheapest
    syn = [SynthesisMethod("k", unit_cost=0.01, rho=0.5, name="ks")]
    pd = AllocationProblem(AdditiveLaw(0.1, {"k": 1.0}, {"k": 0.5}), "k", {"k": (1, 100)},
                           synthesis=syn)
    assert warm_solve(pd, ALLOCATE, 10.0, {"k": 5.0, "ks": 5.0}) is None
    # The certificate: the optimum passes; 1e-6 along the budget line (E up, t down by
    # the amount that keeps the cost) is feasible but not stationary, and fails.
    space = pb._space(ALLOCATE, 1000.0)(None)
    p = space.point(start)
    assert _certified(space, p) is not None
    _, grad = space.main(p)
    q = p + 1e-6 * np.array([grad[1], -grad[0], 0.0]) / np.hypot(grad[0], grad[1])
    assert abs(space.main(q)[0]) < 1e-11
    assert _certified(space, q) is None


def _bootstrap_laws(rng: np.random.Generator, n: int) -> tuple[AdditiveLaw, list]:
    point = _law(rng, steep=True)
    laws = []
    for _ in range(n):
        laws.append(AdditiveLaw(point.floor,
                                {a: c * math.exp(rng.normal(0, 0.3))
                                 for a, c in point.coefficients.items()},
                                {a: e * math.exp(rng.normal(0, 0.15))
                                 for a, e in point.exponents.items()}))
    return point, laws


def test_eta_bootstrap_warm_matches_the_gp_for_every_law() -> None:
    """Same η samples, allocations, skips and intervals (1e-9) as cvxpy for every law."""
    rng = np.random.default_rng(7)
    point_law, laws = _bootstrap_laws(rng, 16)
    point = compare_baselines(_problem(point_law), 1000.0, {"E": 8.0, "t": 4.0, "k": 16.0})
    warm = eta_bootstrap(point, laws, COST, BOUNDS, SUB)
    gp = eta_bootstrap(point, laws, COST, BOUNDS, SUB, warm=False)
    assert warm["skipped"] == gp["skipped"] and warm["notes"] == gp["notes"]
    assert [id(b) for b in warm["good"]] == [id(b) for b in gp["good"]]
    for name, etas in gp["etas"].items():
        np.testing.assert_allclose(warm["etas"][name], etas, rtol=1e-9, atol=0)
        eta = float(point.baselines[name]["eta"])
        for method in ("symmetric", "percentile", "bc"):
            np.testing.assert_allclose(
                bootstrap_interval(warm["etas"][name], eta, 0.9, method, floor=ETA_FLOOR),
                bootstrap_interval(etas, eta, 0.9, method, floor=ETA_FLOOR), rtol=1e-9)
    for a, b in zip(warm["alloc"], gp["alloc"]):
        assert _rel(a, b) < 1e-9
    np.testing.assert_allclose(warm["losses"], gp["losses"], rtol=1e-12)


def test_costs_to_reach_is_cost_to_reach_row_by_row() -> None:
    """The vectorised replicate loop gives cost_to_reach's numbers bit for bit."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        costs = rng.choice([1.0, 2.0, 5.0, 10.0, 50.0, 100.0, 1e3], n, replace=False)
        scores = rng.uniform(0, 1, (30, n))
        targets = rng.uniform(-0.1, 1.1, 30)
        got, exact = _costs_to_reach(costs, scores, targets)
        for k in range(30):
            ref = cost_to_reach(costs, scores[k], targets[k])
            assert got[k] == ref.cost
            assert exact[k] == (ref.bound == "exact")


def test_a_start_on_the_wrong_bounds_is_corrected() -> None:
    """A start on bounds the optimum leaves: released by its multiplier's sign, or by
    starting again with every bound free; still cvxpy's optimum."""
    rng = np.random.default_rng(9)
    for _ in range(6):
        pb = _problem(_law(rng))
        gp = pb.allocate(1000.0, round_integers=False)
        assert not any("<=" in k or ">=" in k for k in gp.duals)  # an interior optimum
        for start in ({"E": 256.0, "t": 5.0, "k": 3.0},    # E held at its upper bound
                      {"E": 1.0, "t": 1.0, "k": 2.0},      # every variable at its lower bound
                      {"E": 256.0, "t": 64.0, "k": 128.0}):
            warm = warm_allocate(pb, 1000.0, start)
            assert warm is not None
            assert _rel(warm, gp.values) < 1e-10


def test_the_fast_path_certifies_most_solves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed-up rests on Newton being certified: at most 5 % of the η bootstrap's
    solves may fall back to cvxpy on report-like laws (measured: 0 of 80)."""
    import rlscale.optimize._baselines as baselines

    calls, misses = [0], [0]
    real = baselines.warm_solve

    def counting(*args):
        out = real(*args)
        calls[0] += 1
        misses[0] += out is None
        return out

    monkeypatch.setattr(baselines, "warm_solve", counting)
    point_law, laws = _bootstrap_laws(np.random.default_rng(7), 16)
    point = compare_baselines(_problem(point_law), 1000.0, {"E": 8.0, "t": 4.0, "k": 16.0})
    eta_bootstrap(point, laws, COST, BOUNDS, SUB)
    assert calls[0] == 16 * 5
    assert misses[0] <= 4


def _record(monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """Record every Newton solve (its free coordinates and start) and KKT evaluation."""
    import rlscale.optimize._warm_newton as wn

    solves, evals = [], [0]
    real_newton, real_eqs = wn._damped_newton, wn._kkt_eqs

    def newton(space, start, free, z0):
        solves.append((tuple(int(i) for i in free), start.copy()))
        return real_newton(space, start, free, z0)

    def eqs(*args):
        evals[0] += 1
        return real_eqs(*args)

    monkeypatch.setattr(wn, "_damped_newton", newton)
    monkeypatch.setattr(wn, "_kkt_eqs", eqs)
    return solves, evals


def test_the_fast_path_is_newton_and_converges_quadratically(monkeypatch) -> None:
    """The fast path observed directly (issue 25): from the optimum one KKT evaluation and
    one Newton solve return it; from a neighbouring law's optimum full Newton steps reach
    it in a handful (measured 5–7; quadratic convergence from 1e-1 to 1e-15 needs ~5, a
    damped or over-long step takes tens), every coordinate free."""
    solves, evals = _record(monkeypatch)
    rng = np.random.default_rng(11)
    for _ in range(5):
        pb = _problem(_law(rng))
        start = _problem(_law(rng)).allocate(1000.0, round_integers=False).values
        gp = pb.allocate(1000.0, round_integers=False)
        solves.clear()
        evals[0] = 0
        assert warm_allocate(pb, 1000.0, gp.values) is not None
        assert evals[0] == 1 and [s[0] for s in solves] == [(0, 1, 2)]
        solves.clear()
        evals[0] = 0
        warm = warm_allocate(pb, 1000.0, start)
        assert warm is not None and _rel(warm, gp.values) < 1e-10
        assert [s[0] for s in solves] == [(0, 1, 2)] and evals[0] <= 9, evals[0]


def test_a_bound_the_start_sits_on_is_held_then_released_by_its_multiplier(monkeypatch
                                                                          ) -> None:
    """The active-set loop observed: a start on t's lower bound holds t there; the
    solution of that round has a negative bound multiplier, so the next round frees t
    *from that solution* (the primal active-set step), not from the start again."""
    solves, _ = _record(monkeypatch)
    rng = np.random.default_rng(9)
    pb = _problem(_law(rng))
    gp = pb.allocate(300.0, round_integers=False)
    start = {"E": gp.values["E"], "t": 1.0, "k": gp.values["k"]}
    warm = warm_allocate(pb, 300.0, start)
    assert warm is not None and _rel(warm, gp.values) < 1e-10
    assert len(solves) == 2 and len(solves[0][0]) == 2 and len(solves[1][0]) == 3
    (held,) = set(solves[1][0]) - set(solves[0][0])
    first, second = solves[0][1], solves[1][1]
    assert first[held] == second[held] == 0.0  # log of t's lower bound 1
    assert np.max(np.abs(second - first)) > 0.1  # round 1's solution, not the start


def test_a_start_within_the_tolerance_of_a_bound_holds_it(monkeypatch) -> None:
    """A start on E's upper bound, exactly or 3e-9 inside it in log space (the tolerance
    is 1e-9 · max(1, |log bound|) = 5.5e-9), first holds E at the bound; that active set
    has no KKT point at this budget, so the loop starts again from the start with every
    bound free, and ends at cvxpy's optimum.  2e-8 inside (and 1.2 tolerances), E is free
    from the first round."""
    solves, _ = _record(monkeypatch)
    rng = np.random.default_rng(9)
    pb = _problem(_law(rng))
    gp = pb.allocate(1000.0, round_integers=False)
    tol = 1e-9 * math.log(256.0)  # issue 25: either side of the tolerance itself
    for offset, rounds in ((0.0, 2), (3e-9, 2), (0.8 * tol, 2), (1.2 * tol, 1), (2e-8, 1)):
        solves.clear()
        warm = warm_allocate(pb, 1000.0, {"E": 256.0 * math.exp(-offset), "t": 5.0, "k": 3.0})
        assert warm is not None and _rel(warm, gp.values) < 1e-10
        assert len(solves) == rounds and len(solves[-1][0]) == 3
        if rounds == 2:
            assert len(solves[0][0]) == 2
            assert max(solves[0][1]) == math.log(256.0)  # held at the bound
            assert max(solves[1][1]) == pytest.approx(math.log(256.0) - offset, abs=1e-15)


def test_a_binding_lower_bound_is_held_by_its_positive_multiplier(monkeypatch) -> None:
    """k's lower bound binds at this optimum (cvxpy's duals name ``k>=16``): from an
    interior start k leaves its box, is fixed at 16, and the bound's multiplier
    ``s_k = ∂f/∂p_k + λ ∂g/∂p_k`` comes out positive (the cost saved by less k outweighs
    the loss it buys), so the point is certified, not released; from the optimum itself
    (k already on the bound) one Newton solve over (E, t) returns it."""
    solves, _ = _record(monkeypatch)
    law = AdditiveLaw(0.26, {"environments": 0.5, "tasks_per_environment": 0.4,
                             "trajectories_per_task": 0.02},
                      {"environments": 0.5, "tasks_per_environment": 0.5,
                       "trajectories_per_task": 0.3})
    pb = _problem(law, {"E": (1.0, 256.0), "t": (1.0, 64.0), "k": (16.0, 128.0)})
    gp = pb.allocate(1000.0, round_integers=False)
    assert set(gp.duals) == {"budget", "k>=16"} and gp.duals["k>=16"] > 0
    for start, rounds in (({"E": 3.0, "t": 3.0, "k": 40.0}, 2), (gp.values, 1)):
        solves.clear()
        warm = warm_allocate(pb, 1000.0, start)
        assert warm is not None and _rel(warm, gp.values) < 1e-10
        assert warm["k"] == pytest.approx(16.0, rel=1e-14)
        assert len(solves) == rounds and len(solves[-1][0]) == 2  # k held in the last round


def test_bounds_at_the_edge_of_the_domain() -> None:
    """A target at the floor and a budget of 0 have no optimum: ``None`` (the caller's
    checks name them), not an error from log(0); a budget below 1 is an ordinary one:
    1/sqrt(E) + 1/sqrt(K) at E + K = B is least at E = K = B/2 (by symmetry and
    convexity), here 0.25."""
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    pb = AllocationProblem(law, "E + K", {"E": (1e-3, 1e6), "K": (1e-3, 1e6)})
    start = {"E": 0.3, "K": 0.2}
    assert warm_min_cost(pb, 0.2, start) is None
    assert warm_allocate(pb, 0.0, start) is None
    warm = warm_allocate(pb, 0.5, start)
    assert warm is not None and _rel(warm, {"E": 0.25, "K": 0.25}) < 1e-12


def test_a_refusal_restarts_from_the_warm_start_once(monkeypatch) -> None:
    """Issue 25: a budget below the cheapest allocation has no optimum.  From the 1000-budget
    optimum Newton frees every coordinate, then holds the one that leaves its box, and that
    active set has no KKT point; the loop starts again from the warm start with every bound
    free (the same deterministic path) and, failing again, gives ``None``: two passes of
    the same solves, not a third."""
    solves, _ = _record(monkeypatch)
    rng = np.random.default_rng(2)
    pb = _problem(_law(rng))
    start = pb.allocate(1000.0, round_integers=False).values
    assert warm_allocate(pb, 5.0, start) is None
    frees = [s[0] for s in solves]
    assert len(frees) == 4 and frees[2:] == frees[:2] and frees[0] == (0, 1, 2)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(solves[2:], solves[:2]))
