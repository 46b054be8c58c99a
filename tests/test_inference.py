"""Inference-budget allocation: laws, plans, grounding, CLI (issue 14).

Every number is checked against an independent computation: exhaustive
enumeration of candidate outcomes, brute force over allocations, a plain
recursive Bellman solver, a hand-written gridworld solver, or Monte Carlo.
"""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.optimize import (
    BASELINES,
    adaptive_plan,
    baseline_plan,
    budget_to_reach,
    compare_inference_plans,
    continuous_plan,
    fit_coverage,
    integer_plan,
)
from rlscale.simulate import (
    run_turn_episodes,
    subtask_success,
    wilson_interval,
    world_from_text,
)
from rlscale.theory import InfeasibleError, Turn, coverage, log_coverage, pass_at_k


# ------------------------------------------------------------------------- theory
def _pass_at_k_enumerated(n: int, c: int, k: int) -> float:
    """Average over every k-subset of n samples (c correct) of 'contains a correct one'."""
    items = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(items[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(6, 0, 2), (6, 1, 1), (6, 2, 3), (7, 3, 4), (8, 5, 4)])
def test_pass_at_k_equals_enumeration_over_subsets(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(_pass_at_k_enumerated(n, c, k), abs=1e-12)


def test_pass_at_k_is_stable_for_millions_of_samples() -> None:
    n, c, k = 2_000_000, 3, 1000
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)  # exact integers, then one division
    assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-10)
    with pytest.raises(ValueError, match="c must be <= n"):
        pass_at_k(5, 6, 1)


def test_coverage_is_stable_and_matches_the_formula() -> None:
    assert coverage(0.3, 4) == pytest.approx(1 - 0.7**4, abs=1e-15)
    # log(1 - (1-q)^n) for tiny q: -expm1 path equals the series n*q to first order
    assert float(log_coverage(1e-12, 1)) == pytest.approx(math.log(1e-12), rel=1e-9)
    assert float(log_coverage(0.5, 200)) == pytest.approx(-(0.5**200), rel=1e-9)


def _enumerate_verifier(q: float, fpr: float, fnr: float, n: int, failures: str) -> float:
    """Exact success by enumerating each candidate's (correct, accepted) outcome."""
    outcomes = [((True, True), q * (1 - fnr)), ((True, False), q * fnr),
                ((False, True), (1 - q) * fpr), ((False, False), (1 - q) * (1 - fpr))]
    total = 0.0
    for combo in itertools.product(outcomes, repeat=n):
        prob = math.prod(p for _, p in combo)
        states = [s for s, _ in combo]
        if failures == "retried":
            ok = any(c and a for c, a in states)
        else:
            accepted = [c for c, a in states if a]
            rejected = [c for c, a in states if not a]
            # the first accepted, else a uniformly random rejected candidate
            ok = accepted[0] if accepted else sum(rejected) / len(rejected)
        total += prob * ok
    return total


@pytest.mark.parametrize("failures", ["terminal", "retried"])
@pytest.mark.parametrize(("q", "fpr", "fnr"), [(0.3, 0.1, 0.2), (0.7, 0.3, 0.0), (0.05, 0.0, 0.5)])
def test_verifier_law_equals_enumeration(q: float, fpr: float, fnr: float, failures: str) -> None:
    turn = Turn.with_verifier(q, fpr=fpr, fnr=fnr, failures=failures)
    for n in range(1, 5):
        assert float(turn.success(n)) == pytest.approx(
            _enumerate_verifier(q, fpr, fnr, n, failures), abs=1e-12)


def test_selection_law_matches_monte_carlo() -> None:
    from scipy.stats import norm

    turn = Turn.with_selection(0.2, noise=0.7)
    gen = np.random.default_rng(5)
    z = norm.ppf(0.8)
    for n in (1, 3, 10):
        x = gen.standard_normal((100_000, n))
        y = x + 0.7 * gen.standard_normal(x.shape)
        hits = x[np.arange(x.shape[0]), y.argmax(axis=1)] > z
        se = math.sqrt(hits.mean() * (1 - hits.mean()) / hits.size)
        assert abs(float(turn.success(n)) - hits.mean()) < 5 * se


@pytest.mark.parametrize("turn", [
    Turn.with_coverage(0.05), Turn.with_verifier(0.2, fpr=0.2, fnr=0.3),
    Turn.with_verifier(0.2, fpr=0.2, fnr=0.3, failures="retried"),
    Turn.with_selection(0.1, noise=1.5), Turn.with_empirical(-2.0, -0.4)])
def test_log_success_has_decreasing_increments(turn: Turn) -> None:
    """The concavity the greedy plan relies on (proved in proofs/_inference_concavity)."""
    logs = np.asarray(turn.log_success(np.arange(1, 400, dtype=float)))
    assert np.all(np.diff(logs) >= -1e-15)
    assert np.all(np.diff(logs, 2) <= 1e-12)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kind": "coverage", "q": 0.0}, "q must be > 0"),
    ({"kind": "verifier", "q": 0.5, "fpr": 0.6, "fnr": 0.5}, "fpr \\+ fnr must be < 1"),
    ({"kind": "empirical", "a": -1.0, "b": 0.5}, "b must be < 0"),
    ({"kind": "coverage", "q": 0.5, "cost": 0}, "cost must be an integer >= 1"),
    ({"kind": "beam", "q": 0.5}, "kind must be one of"),
])
def test_turn_rejects_bad_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Turn(**kwargs)


# ------------------------------------------------------------------------- static plans
def _brute_force(turns: list[Turn], budget: int) -> float:
    best = -math.inf
    ranges = [range(1, budget // t.cost + 1) for t in turns]
    for n in itertools.product(*ranges):
        if sum(t.cost * k for t, k in zip(turns, n)) <= budget:
            best = max(best, sum(float(t.log_success(k)) for t, k in zip(turns, n)))
    return best


def _random_turns(gen: np.random.Generator, T: int, costs: bool) -> list[Turn]:
    out = []
    for _ in range(T):
        cost = int(gen.integers(1, 4)) if costs else 1
        kind = gen.integers(0, 3)
        q = float(gen.uniform(0.02, 0.9))
        if kind == 0:
            out.append(Turn.with_coverage(q, cost=cost))
        elif kind == 1:
            out.append(Turn.with_verifier(q, fpr=float(gen.uniform(0, 0.4)),
                                          fnr=float(gen.uniform(0, 0.4)), cost=cost))
        else:
            out.append(Turn.with_empirical(-float(gen.uniform(0.5, 3)),
                                           -float(gen.uniform(0.1, 0.9)), cost=cost))
    return out


@pytest.mark.parametrize("costs", [False, True])
def test_integer_plan_equals_brute_force(costs: bool) -> None:
    gen = np.random.default_rng(11 + costs)
    for _ in range(12):
        turns = _random_turns(gen, int(gen.integers(2, 4)), costs)
        budget = sum(t.cost for t in turns) + int(gen.integers(0, 12))
        plan = integer_plan(turns, budget)
        assert plan.method == ("dp" if costs and len({t.cost for t in turns}) > 1 else "greedy")
        assert plan.cost <= budget
        assert plan.log_success == pytest.approx(_brute_force(turns, budget), abs=1e-12)


def test_continuous_plan_bounds_the_integer_plan() -> None:
    gen = np.random.default_rng(3)
    for _ in range(4):
        turns = _random_turns(gen, 4, costs=False)
        for budget in (6, 30):
            cont, whole = continuous_plan(turns, budget), integer_plan(turns, budget)
            assert cont.cost <= budget * (1 + 1e-6)
            assert cont.log_success >= whole.log_success - 1e-6
            floor = [max(1, math.floor(x)) for x in cont.n]  # rounding down is feasible
            assert whole.log_success >= sum(float(t.log_success(k))
                                            for t, k in zip(turns, floor)) - 1e-12
    with pytest.raises(ValueError, match="selection turn has none"):
        continuous_plan([Turn.with_selection(0.3, noise=1.0)], 5)


def test_baselines_respect_the_budget_and_eta_is_at_least_one() -> None:
    turns = [Turn.with_coverage(q, cost=c) for q, c in ((0.9, 1), (0.3, 2), (0.05, 1))]
    cmp = compare_inference_plans(turns, 60)
    for kind in BASELINES:
        plan = cmp.baselines[kind]
        assert plan.cost <= 60 and min(plan.n) >= 1
        assert cmp.optimal.success >= plan.success - 1e-12
        assert cmp.eta[kind] >= 1.0
    assert cmp.success_ratio >= 1.0
    # front-loaded spends most on the first turn
    assert baseline_plan(turns, 60, "front-loaded").n[0] >= baseline_plan(turns, 60, "uniform").n[0]


def test_budget_to_reach_equals_a_linear_scan() -> None:
    turns = [Turn.with_coverage(q) for q in (0.6, 0.2, 0.4)]
    for how in ("optimal", "uniform", "adaptive"):
        target = 0.8
        scan = next(B for B in range(3, 200)
                    if (integer_plan(turns, B).success if how == "optimal" else
                        adaptive_plan(turns, B).success if how == "adaptive" else
                        baseline_plan(turns, B, how).success) >= target)
        assert budget_to_reach(turns, target, how) == scan
    with pytest.raises(InfeasibleError, match="not reached"):
        budget_to_reach([Turn.with_verifier(0.5, fpr=0.2, fnr=0.2)], 0.9, max_budget=64)


def test_infeasible_budget_is_refused_in_the_users_terms() -> None:
    with pytest.raises(InfeasibleError, match="below 3"):
        integer_plan([Turn.with_coverage(0.5, cost=c) for c in (1, 2)], 2)
    with pytest.raises(TypeError, match="budget must be an integer"):
        integer_plan([Turn.with_coverage(0.5)], 2.5)


# ------------------------------------------------------------------------- adaptive
def _bellman(turns: list[Turn], budget: int) -> float:
    """Plain recursion over (turn, budget, holding a rejected candidate)."""

    @functools.cache
    def value(t: int, b: int, hold: bool) -> float:
        if t == len(turns):
            return 1.0
        turn = turns[t]
        q, c = turn.q, turn.cost
        fpr, fnr = (turn.fpr, turn.fnr) if turn.kind == "verifier" else (0.0, 0.0)
        retried = turn.kind == "verifier" and turn.failures == "retried"
        options = []
        if hold and not retried:
            rho = q * fnr / (q * fnr + (1 - q) * (1 - fpr))
            options.append(rho * value(t + 1, b, False))
        if b >= c:
            good, bad_acc = q * (1 - fnr), (1 - q) * fpr
            rej = 1 - good - bad_acc
            draw = good * value(t + 1, b - c, False) + rej * value(t, b - c, not retried)
            if retried:
                draw += bad_acc * value(t, b - c, False)
            options.append(draw)
        return max(options) if options else 0.0

    return value(0, budget, False)


def test_adaptive_plan_equals_plain_bellman_recursion() -> None:
    cases = [
        [Turn.with_coverage(q) for q in (0.5, 0.2, 0.7)],
        [Turn.with_verifier(q, fpr=0.15, fnr=0.25) for q in (0.4, 0.2, 0.8)],
        [Turn.with_verifier(q, fpr=0.1, fnr=0.3, failures="retried", cost=c)
         for q, c in ((0.4, 1), (0.3, 2))],
        [Turn.with_verifier(0.3, fpr=0.1, fnr=0.2, cost=2), Turn.with_coverage(0.4)],
    ]
    for turns in cases:
        for budget in (sum(t.cost for t in turns), 7, 12):
            got = adaptive_plan(turns, budget).success
            assert got == pytest.approx(_bellman(turns, budget), abs=1e-12)
            assert got >= integer_plan(turns, budget).success - 1e-12


def test_adaptive_plan_with_fitted_coverage_is_the_first_success_convolution() -> None:
    turns = [Turn.with_empirical(-1.5, -0.5), Turn.with_empirical(-0.8, -0.3)]
    c1, c2 = (lambda k: math.exp(-1.5 * k**-0.5) if k else 0.0,
              lambda k: math.exp(-0.8 * k**-0.3) if k else 0.0)
    B = 9
    direct = sum((c1(k) - c1(k - 1)) * c2(B - k) for k in range(1, B))
    assert adaptive_plan(turns, B).success == pytest.approx(direct, abs=1e-12)
    with pytest.raises(ValueError, match="selection turn"):
        adaptive_plan([Turn.with_selection(0.3, noise=1.0)], 4)


# ------------------------------------------------------------------------- fitting
def test_fit_coverage_tracks_the_beta_closed_form_and_is_reproducible() -> None:
    from scipy.special import betaln

    gen = np.random.default_rng(2)
    alpha, beta = 0.4, 2.5
    q = gen.beta(alpha, beta, size=3000)
    n = np.full(q.size, 128)
    c = gen.binomial(128, q)
    fit = fit_coverage(n, c, bootstrap=30, rng=1)
    # E[pass@k] = 1 - E[(1-q)^k] = 1 - B(α, β+k)/B(α, β) for q ~ Beta(α, β)
    truth = 1 - np.exp(betaln(alpha, beta + fit.k) - betaln(alpha, beta))
    assert np.max(np.abs(fit.observed - truth)) < 0.03
    assert np.max(np.abs(fit.predicted - fit.observed)) < 0.04
    assert fit.a_interval[0] <= fit.a <= fit.a_interval[1]
    assert fit.b_interval[0] <= fit.b <= fit.b_interval[1]
    again = fit_coverage(n, c, bootstrap=30, rng=1)
    assert again.a_interval == fit.a_interval
    with pytest.raises(ValueError, match="at least 4 samples"):
        fit_coverage([3, 3], [1, 2])


# ------------------------------------------------------------------------- gridworld
MAP = ["SFKF", "FHFF", "FFFD", "HFFG"]


def _hand_solver(rows: list[str], slippery: bool, policy: np.ndarray, stage: int,
                 start: int, horizon: int) -> float:
    """Independent reach probability: explicit grid moves, door rule, holes."""
    S = len(rows)
    text = "".join(rows)
    door = text.index("D")
    target = (text.index("K"), door, text.index("G"))[stage]
    dr, dc = (0, 1, 0, -1), (-1, 0, 1, 0)

    def move(cell: int, a: int) -> int:
        r, col = divmod(cell, S)
        nr, nc = r + dr[a], col + dc[a]
        if not (0 <= nr < S and 0 <= nc < S) or text[nr * S + nc] == "W":
            return cell
        nxt = nr * S + nc
        return cell if (nxt == door and stage == 0) else nxt

    @functools.cache
    def v(cell: int, h: int) -> float:
        if h == 0:
            return 0.0
        total = 0.0
        for a in range(4):
            moves = [(a + d) % 4 for d in (-1, 0, 1)] if slippery else [a]
            for m in moves:
                nxt = move(cell, m)
                land = 1.0 if nxt == target else 0.0 if text[nxt] == "H" else v(nxt, h - 1)
                total += policy[0, stage, cell, a] * land / len(moves)
        return total

    return v(start, horizon)


@pytest.mark.parametrize("slippery", [False, True])
def test_subtask_success_equals_a_hand_written_solver(slippery: bool) -> None:
    world = world_from_text(MAP, slippery=slippery, max_steps=9)
    gen = np.random.default_rng(4)
    policy = gen.dirichlet(np.ones(4), size=(1, 3, 16))
    q = subtask_success(world, policy)
    starts = (0, 2, 11)
    for stage in range(3):
        assert q[0, stage] == pytest.approx(
            _hand_solver(MAP, slippery, policy, stage, starts[stage], 9), abs=1e-12)


def test_monte_carlo_episodes_match_predicted_plans() -> None:
    world = world_from_text(MAP, slippery=True, max_steps=9)
    gen = np.random.default_rng(8)
    policy = gen.dirichlet(np.ones(4) * 2, size=(1, 3, 16))
    q = subtask_success(world, policy)[0]
    tasks, stages = [0, 0, 0], [0, 1, 2]
    for fpr, fnr in ((0.0, 0.0), (0.1, 0.2)):
        turns = [Turn.with_verifier(float(v), fpr=fpr, fnr=fnr) for v in q] if fpr else \
            [Turn.with_coverage(float(v)) for v in q]
        B = 12
        static, adaptive = integer_plan(turns, B), adaptive_plan(turns, B)
        s = run_turn_episodes(world, policy, tasks, stages, budget=B, caps=static.n, fpr=fpr,
                              fnr=fnr, episodes=3000, rng=1)
        a = run_turn_episodes(world, policy, tasks, stages, budget=B, commit=adaptive.commit,
                              fpr=fpr, fnr=fnr, episodes=3000, rng=2)
        for pred, out in ((static.success, s), (adaptive.success, a)):
            se = math.sqrt(pred * (1 - pred) / out.success.size)
            assert abs(out.rate - pred) < 4.5 * se + 1e-9
        assert s.used.max() <= sum(static.n) and a.used.max() <= B
    again = run_turn_episodes(world, policy, tasks, stages, budget=6, caps=[2, 2, 2],
                              episodes=200, rng=9)
    once = run_turn_episodes(world, policy, tasks, stages, budget=6, caps=[2, 2, 2],
                             episodes=200, rng=9)
    assert np.array_equal(again.success, once.success) and np.array_equal(again.used, once.used)


def test_wilson_interval_against_the_closed_form() -> None:
    lo, hi = wilson_interval(7, 40)
    z, p, n = 1.959963984540054, 7 / 40, 40
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_grounding_predicted_within_realised_intervals() -> None:
    from rlscale.verification._inference_grounding import GroundingConfig, ground_inference

    cfg = GroundingConfig(environments=8, epochs=2, job_tasks=1, q_min=0.05,
                          budget_factors=(1.0, 2.0), episodes=1500)
    res = ground_inference(cfg, grid_points=3)
    assert len(res.rows) == 2 * len(res.budgets)
    for row in res.rows:
        for r in row["plans"].values():
            se = math.sqrt(max(r["predicted"] * (1 - r["predicted"]), 1e-4) / 1500)
            assert abs(r["realised"] - r["predicted"]) < 4.5 * se
        assert row["adaptivity_gain"] >= -1e-12


# ------------------------------------------------------------------------- CLI
def test_cli_infer_plan_prints_the_table_and_writes_json(tmp_path, capsys) -> None:
    out = tmp_path / "plan.json"
    assert main(["infer-plan", "--q", "0.9,0.5,0.1", "--budget", "20", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2,4,14" in text and "0.7158" in text
    data = json.loads(out.read_text())
    assert data["comparisons"][0]["optimal"]["n"] == [2, 4, 14]


@pytest.mark.parametrize("argv", [
    ["infer-plan", "--q", "0.5,abc", "--budget", "5"],
    ["infer-plan", "--q", "0.5", "--budget", "5", "--sweep", "2:9:3"],
    ["infer-plan", "--q", "0.5,0.5", "--budget", "1"],
    ["infer-plan", "--budget", "4"],
])
def test_cli_infer_plan_errors_are_one_line(argv, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error" in err[0]


# ------------------------------------------------------------------------- proof links
def _second_difference(turn: Turn, n: float, h: float = 1e-3) -> float:
    f = [float(turn.log_success(n + d)) for d in (-h, 0.0, h)]
    return (f[0] - 2 * f[1] + f[2]) / (h * h)


def test_proved_second_derivatives_are_those_of_the_laws() -> None:
    """The closed forms `rlscale prove inference-concavity` checks, against Turn's numbers."""
    import sympy as sp

    from rlscale.proofs import build_proof

    proof = build_proof("inference-concavity")
    sym = {s.name: s for step in proof.steps
           for s in getattr(step, "rhs", sp.S.Zero).free_symbols}
    cover = Turn.with_coverage(0.2)
    rhs = proof.step("coverage-second-derivative").rhs
    L = -math.log1p(-0.2)
    for n in (1.5, 4.0, 12.0):
        want = float(rhs.subs({sym["L"]: L, sym["n"]: n}))
        assert _second_difference(cover, n) == pytest.approx(want, rel=1e-5)
    noisy = Turn.with_verifier(0.3, fpr=0.1, fnr=0.2)
    rhs = proof.step("verifier-second-derivative").rhs
    vals = {sym["pi"]: noisy.precision, sym["D"]: noisy.precision - noisy.fallback,
            sym["L"]: -math.log1p(-noisy.accept_rate)}
    for n in (1.5, 4.0, 12.0):
        want = float(rhs.subs({**vals, sym["n"]: n}))
        assert _second_difference(noisy, n) == pytest.approx(want, rel=1e-5)
    fitted = Turn.with_empirical(-1.7, -0.4)
    rhs = proof.step("empirical-second-derivative").rhs
    for k in (1.5, 4.0, 12.0):
        want = float(rhs.subs({sym["a"]: -1.7, sym["b"]: -0.4, sym["k"]: k}))
        assert _second_difference(fitted, k) == pytest.approx(want, rel=1e-5)


def test_cli_fit_coverage_reads_a_csv(tmp_path, capsys) -> None:
    gen = np.random.default_rng(6)
    correct = gen.binomial(64, gen.beta(0.5, 2.0, 200))
    data = tmp_path / "cov.csv"
    data.write_text("samples,correct\n" + "".join(f"64,{c}\n" for c in correct))
    out = tmp_path / "fit.json"
    assert main(["infer-plan", "--fit-coverage", str(data), "--bootstrap", "20",
                 "--json", str(out)]) == 0
    fit = json.loads(out.read_text())
    direct = fit_coverage(np.full(200, 64), correct, bootstrap=20)
    assert fit["a"] == pytest.approx(direct.a) and fit["b"] == pytest.approx(direct.b)
    assert "c(k) = exp(a·k^b) over 200 problems" in capsys.readouterr().out
    data.write_text("samples\n64\n")
    assert main(["infer-plan", "--fit-coverage", str(data)]) == 2


def test_cli_ground_writes_results_and_figures(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "ground"
    argv = ["infer-plan", "--ground", "--quick", "--set", "episodes=300", "--set", "job_tasks=1",
            "--set", "environments=8", "--set", "budget_factors=1.5", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "value of adaptivity" in text and "realised" in text
    data = json.loads((out / "results.json").read_text())
    assert len(data["q"]) == 3 and data["config"]["episodes"] == 300
    for name in ("inference-success-perfect.png", "inference-allocation-noisy.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["infer-plan", "--q", "0.5", "--budget", "3", "--set", "episodes=1"]) == 2


def test_adaptive_plan_fft_path_agrees_with_direct_sums() -> None:
    turns = [Turn.with_coverage(q) for q in (0.002, 0.01, 0.004)]
    direct = adaptive_plan(turns, 4096).values       # np.convolve path
    fft = adaptive_plan(turns, 6000).values          # FFT path (size > 4096)
    assert np.max(np.abs(fft[:, :4097] - direct)) < 1e-12


def test_plans_refuse_a_budget_whose_table_would_not_fit() -> None:
    # budget 1e9 asked numpy for 15-22 GiB; 1e218 for an impossible dimension.
    from rlscale.optimize import adaptive_plan, integer_plan
    from rlscale.theory import Turn

    turns = [Turn.with_coverage(0.5), Turn.with_coverage(0.2)]
    for plan in (integer_plan, adaptive_plan):
        with pytest.raises(ValueError, match=r"budget=.* needs a table of .* > 5e\+07"):
            plan(turns, 3 * 10**7)
        for budget in (10**9, 10**218):
            with pytest.raises(ValueError, match=r"budget must be an integer >= 0 and <= "
                                                 r"50000000; got budget="):
                plan(turns, budget)
        with pytest.raises(TypeError, match=r"not a float"):  # issue 22: a count is an int
            plan(turns, 1e9)
