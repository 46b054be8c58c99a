"""The context axis (issue 27): the window law and its asymptotics, its cost, the context
planner against brute force, and the trainer's memory family against the law."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from rlscale.optimize import compare_context_plans, context_plan
from rlscale.theory import (
    ContextTurn,
    context_cost,
    context_term,
    lag_survival,
    window_loss,
)


@pytest.mark.parametrize(("beta", "lo", "hi"), [(1.0, 1, math.inf), (0.5, 2, math.inf),
                                                (0.0, 1, 40), (1.7, 3, 25), (0.3, 1, 1)])
def test_lag_survival_against_direct_sums_in_mpmath(beta, lo, hi) -> None:
    mpmath.mp.dps = 40
    s = mpmath.mpf(1) + mpmath.mpf(beta)

    def tail(a):  # Σ_{ℓ = a}^{hi} ℓ^(−s), by mpmath's Hurwitz zeta or a direct sum
        if math.isinf(hi):
            return mpmath.zeta(s, a)
        return mpmath.fsum(mpmath.mpf(ell) ** -s for ell in range(a, int(hi) + 1))

    total = tail(lo)
    stop = 60 if math.isinf(hi) else int(hi) + 2
    for c in range(stop):
        first = max(c, lo)
        want = 0.0 if first > hi else float(tail(first) / total)
        assert float(lag_survival(c, beta, lo, hi)) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_the_context_term_is_the_asymptote_of_the_window_loss() -> None:
    for beta, lo in ((1.0, 1), (0.5, 1), (2.0, 3)):
        a, alpha = context_term(beta, lo)
        assert alpha == beta
        # ζ(s, c) = c^(1−s)/(s−1) + c^(−s)/2 + O(c^(−s−1)): the ratio is 1 + β/(2c) + O(c^−2).
        for c in (1e3, 1e5):
            ratio = float(window_loss(c, beta, lo)) / (a * c ** -alpha)
            assert ratio == pytest.approx(1 + beta / (2 * c), rel=1e-6)
    assert float(window_loss(1, 0.7, choices=2)) == 0.5
    with pytest.raises(ValueError, match="exponent must be > 0 when max_lag is infinite"):
        lag_survival(3, 0.0)
    with pytest.raises(ValueError, match="max_lag must be a whole number"):
        lag_survival(3, 1.0, max_lag=4.5)


def test_context_cost_is_the_nested_design_cost() -> None:
    cost = context_cost(20.0, 2.0, 0.1, 0.05)
    vals = {"E": 3.0, "t": 5.0, "k": 7.0, "c": 11.0}
    assert float(cost.evaluate(vals)) == pytest.approx(20 * 3 + 2 * 15 + 0.1 * 105
                                                       + 0.05 * 105 * 11, rel=1e-14)
    assert cost.axes == ("E", "c", "k", "t")
    assert context_cost(1, 1, 1, 0.0).axes == ("E", "k", "t")
    with pytest.raises(ValueError, match="context must be >= 0"):
        context_cost(context=-1)


def test_the_memory_familys_reference_is_the_window_law() -> None:
    """Without slips the reference policy's success is 1 − (3/4)·S(c) per lag law, which the
    family's drawn tasks average to (their lags are drawn from the same pmf)."""
    from rlscale.simulate import MemoryFamily, reference_success

    fam = MemoryFamily(length=12, min_lag=2, lag_exponent=0.8, slippery=0.0)
    world = fam.sample(50, 40, rng=0)
    pmf = fam.lag_pmf()
    for c in (1, 3, 6, 13):
        law = 1.0 - float(window_loss(c, 0.8, 2, 12))
        by_pmf = sum(p * (1.0 if ell <= c - 1 else 0.25) for ell, p in enumerate(pmf, 1))
        assert by_pmf == pytest.approx(law, rel=1e-12)
        got = float(np.mean(reference_success(world, c)))
        assert got == pytest.approx(law, abs=4 * 0.75 * 0.5 / np.sqrt(world.n_tasks))


def _brute(turns, B, allow):
    best, arg = -math.inf, None
    options = [[(c, n) for c in t.levels for n in range(1, B // t.cost(c) + 1)
                if allow(t, c, n)] for t in turns]
    for combo in itertools.product(*options):
        if sum(t.cost(c) * n for t, (c, n) in zip(turns, combo)) > B:
            continue
        v = sum(math.log1p(-(1 - t.q(c)) ** n) for t, (c, n) in zip(turns, combo))
        if v > best + 1e-13:
            best, arg = v, combo
    return best, arg


@pytest.mark.parametrize("B", [7, 10, 14, 21])
def test_context_plans_are_the_brute_force_optima(B) -> None:
    turns = [ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
             ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16)),
             ContextTurn(0.3, 0.8, 1.2, base_cost=2, context_cost=0.3, levels=(1, 2, 8))]
    rules = {"joint": lambda t, c, n: True,
             "samples": lambda t, c, n: c == t.levels[0],
             "context": lambda t, c, n: n == 1}
    for method, allow in rules.items():
        want, arg = _brute(turns, B, allow)
        plan = context_plan(turns, B, method)
        assert plan.log_success == pytest.approx(want, rel=1e-12), (method, arg)
        assert plan.cost <= B
    # One level for every turn: 1 is the only level all three allow.
    fixed = _brute(turns, B, lambda t, c, n: c == 1)[0]
    assert context_plan(turns, B, "fixed").log_success == pytest.approx(fixed, rel=1e-12)
    with pytest.raises(Exception, match="budget 6 is below 7"):
        context_plan(turns, 6)


def test_eta_of_the_joint_plan_is_the_budget_ratio_at_equal_success() -> None:
    turns = [ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
             ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16))]
    cmp = compare_context_plans(turns, 20)
    for m, eta in cmp.eta.items():
        need = round(20 / eta)
        assert context_plan(turns, need).success >= cmp.plans[m].success * (1 - 1e-12)
        assert context_plan(turns, need - 1).success < cmp.plans[m].success
        assert eta >= 1.0
    assert cmp.plans["joint"].context == (4, 1)  # only the context-hungry turn widens


def test_context_turn_validation_names_the_argument() -> None:
    with pytest.raises(ValueError, match=r"q_full must be >= 0\.5"):
        ContextTurn(0.5, 0.4, 1.0)
    with pytest.raises(ValueError, match="levels must be distinct"):
        ContextTurn(0.2, 0.8, 1.0, levels=(1, 1))
    with pytest.raises(TypeError, match="levels must be a sequence"):
        ContextTurn(0.2, 0.8, 1.0, levels="124")
    with pytest.raises(ValueError, match="method must be one of"):
        context_plan([ContextTurn(0.2, 0.8, 1.0)], 10, "greedy")


def test_held_comparison_against_a_one_dimensional_scipy_solve() -> None:
    """L = 0.1 + k^−0.3 + 0.5·c^−0.6 with cost k·(1 + 0.05·c): at budget B the free plan
    spends k = B/(1 + 0.05c) and minimises over c alone (scipy's bounded scalar minimiser);
    the held plan has c = 1; η is B over the root of min_c L(B', c) = L_held (brentq)."""
    from scipy.optimize import brentq, minimize_scalar

    from rlscale.optimize import held_comparison
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(0.1, {"k": 1.0, "c": 0.5}, {"k": 0.3, "c": 0.6})

    def best(B):
        r = minimize_scalar(lambda c: (B / (1 + 0.05 * c)) ** -0.3 + 0.5 * c ** -0.6,
                            bounds=(1, 64), method="bounded", options={"xatol": 1e-12})
        return r.x, 0.1 + r.fun

    c_star, loss = best(1000.0)
    held = 0.1 + (1000 / 1.05) ** -0.3 + 0.5
    need = brentq(lambda B: best(B)[1] - held, 1.0, 1000.0, xtol=1e-12)
    cmp = held_comparison(law, "k + 0.05*k*c", 1000.0, {"c": 1.0},
                          bounds={"c": {"min": 1, "max": 64}})
    assert cmp.free.values["c"] == pytest.approx(c_star, rel=1e-5)
    assert cmp.free.loss == pytest.approx(loss, rel=1e-8)
    assert cmp.held.loss == pytest.approx(held, rel=1e-8)
    assert cmp.eta == pytest.approx(1000.0 / need, rel=1e-5)
    with pytest.raises(ValueError, match="hold names 'q', not a decision variable"):
        held_comparison(law, "k + 0.05*k*c", 1000.0, {"q": 1.0},
                        bounds={"c": {"min": 1, "max": 64}})
    with pytest.raises(ValueError, match=r"hold\['c'\] = 100 is outside the bounds"):
        held_comparison(law, "k + 0.05*k*c", 1000.0, {"c": 100.0},
                        bounds={"c": {"min": 1, "max": 64}})


def test_a_sweep_varies_the_context_and_old_results_files_still_resume(tmp_path) -> None:
    from rlscale.sweep._run import COLUMNS, LEGACY_COLUMNS, parse_spec, read_results, run_sweep

    train = {"env": "memory", "memory_length": 3, "epochs": 1, "eval_environments": 2,
             "eval_episodes": 2, "tasks_per_step": 4}
    spec = parse_spec({"seeds": [0], "base": {"E": 2, "t": 2, "k": 2, "c": 1},
                       "axes": {"c": [1, 3]}, "train": train})
    out = tmp_path / "ctx.csv"
    rows = run_sweep(spec, out, progress=False)
    assert [r["context"] for r in rows] == [1, 3]
    assert out.read_text().splitlines()[0] == ",".join(COLUMNS)
    back = read_results(out)
    assert [(r["context"], r["env"]) for r in back] == [(1, "memory"), (3, "memory")]
    # A file written before the context axis: the old header, read with context 1 and grid.
    legacy = tmp_path / "old.csv"
    row = {**back[0], "env": "grid"}
    legacy.write_text(",".join(LEGACY_COLUMNS) + "\n"
                      + ",".join(str(row[c]) for c in LEGACY_COLUMNS) + "\n")
    (old,) = read_results(legacy)
    assert old["context"] == 1 and old["env"] == "grid" and old["run_id"] == row["run_id"]
    with pytest.raises(ValueError, match=r"\[train\] must not set \['context'\]"):
        parse_spec({"train": {"context": 2}})


def test_the_cli_plans_context_and_holds_a_variable(tmp_path, capsys) -> None:
    from pathlib import Path

    from rlscale.cli import main

    spec = str(Path(__file__).resolve().parents[1] / "examples" / "allocate-context.toml")
    assert main(["infer-plan", "--q", "0.1,0.5", "--q-full", "0.9,0.6", "--context-levels",
                 "1,4,16", "--context-exponent", "0.7", "--context-cost", "0.5", "--budget",
                 "20", "--json", str(tmp_path / "ctx.json")]) == 0
    out = capsys.readouterr().out
    assert "joint    0.9127" in out and "4,1 / 4,4" in out and "# more samples" in out
    assert main(["allocate", spec, "--budget", "500", "--hold", "c=1"]) == 0
    out = capsys.readouterr().out
    assert "# held c = 1:" in out and "eta = " in out
    assert main(["allocate", spec, "--sweep", "100:500:3", "--hold", "c=1"]) == 2
    assert "--hold compares plans at one budget" in capsys.readouterr().err
