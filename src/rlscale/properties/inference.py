"""Properties of inference-budget allocation (issue 14)."""

from __future__ import annotations

from rlscale.properties import register


def _turns():
    """Hypothesis strategy: 2-3 turns, coverage or noisy-verifier laws, unit costs 1-3."""
    from hypothesis import strategies as st

    from rlscale.theory import Turn

    q = st.floats(0.01, 0.99)
    rate = st.floats(0.0, 0.45)
    cost = st.integers(1, 3)
    one = st.one_of(
        st.builds(lambda v, c: Turn.with_coverage(v, cost=c), q, cost),
        st.builds(lambda v, f, g, c, r: Turn.with_verifier(v, fpr=f, fnr=g, cost=c,
                                                             failures=r),
                  q, rate, rate, cost, st.sampled_from(["terminal", "retried"])),
    )
    return st.lists(one, min_size=2, max_size=3)


@register(
    "inference.integer_plan_is_optimal",
    "for random 2-3 turn tasks (coverage or noisy verifier, unit costs 1-3) and budgets, the "
    "integer plan's log-success equals the best over every feasible allocation (brute force)",
)
def _integer_plan_is_optimal():
    import itertools

    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.optimize import integer_plan

    @given(turns=_turns(), extra=st.integers(0, 9))
    def test(turns, extra) -> None:
        budget = sum(t.cost for t in turns) + extra
        tables = [t.log_success_range(0, budget // t.cost) for t in turns]
        best = max(sum(tab[k] for tab, k in zip(tables, n))
                   for n in itertools.product(*(range(1, len(tab)) for tab in tables))
                   if sum(t.cost * k for t, k in zip(turns, n)) <= budget)
        plan = integer_plan(turns, budget)
        assert plan.cost <= budget
        assert abs(plan.log_success - best) <= 1e-12, (plan.n, best)

    return test


@register(
    "inference.adaptive_dominates_static",
    "the adaptive plan's success is in [0, 1], at least the optimal static plan's, and "
    "nondecreasing in the budget",
)
def _adaptive_dominates_static():
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.optimize import adaptive_plan, integer_plan

    @given(turns=_turns(), extra=st.integers(0, 30))
    def test(turns, extra) -> None:
        budget = sum(t.cost for t in turns) + extra
        plan = adaptive_plan(turns, budget)
        assert 0.0 <= plan.success <= 1.0
        assert plan.success >= integer_plan(turns, budget).success - 1e-12
        assert all(plan.values[0, b] <= plan.values[0, b + 1] + 1e-12 for b in range(budget))

    return test
