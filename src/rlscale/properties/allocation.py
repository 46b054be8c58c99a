"""Properties of compute-optimal allocation (issue 4)."""

from __future__ import annotations

from rlscale.properties import register


@register(
    "allocation.no_random_point_beats_solver",
    "for random additive laws, linear costs and budgets, no random allocation within the "
    "budget has a lower loss than the solver's, and the KKT residual is at most 1e-6",
)
def _no_random_point_beats_solver():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.optimize import AllocationProblem
    from rlscale.properties.strategies import additive_laws, linear_costs, log_uniform

    @given(law=additive_laws(), cost=linear_costs(), budget=log_uniform(1e2, 1e12),
           seed=st.integers(0, 2**32 - 1))
    def test(law, cost, budget, seed) -> None:
        prob = AllocationProblem(law, cost)
        a = prob.allocate(budget, round_integers=False)
        assert a.kkt_residual <= 1e-6, a
        rng = np.random.default_rng(seed)
        # Random points on and inside the budget surface (Dirichlet shares of the budget).
        shares = rng.dirichlet(np.ones(3), 500) * rng.uniform(0.5, 1.0, (500, 1))
        unit = {m.exponents[0][0]: m.coefficient for m in prob.cost.terms}
        pts = {ax: shares[:, i] * budget / unit[ax] for i, ax in enumerate(("E", "T", "K"))}
        assert np.all(prob.loss_at(pts) >= a.loss * (1 - 1e-9))

    return test


@register(
    "allocation.cobb_douglas_shares",
    "at the solver's optimum of an additive law under a linear cost, the budget share of each "
    "axis equals alpha_i l_i / sum_j alpha_j l_j (KKT closed form)",
)
def _cobb_douglas_shares():
    from hypothesis import given

    from rlscale.optimize import allocate
    from rlscale.properties.strategies import additive_laws, linear_costs, log_uniform
    from rlscale.theory import budget_shares

    @given(law=additive_laws(), cost=linear_costs(), budget=log_uniform(1e2, 1e12))
    def test(law, cost, budget) -> None:
        a = allocate(law, cost, budget, round_integers=False)
        for axis, share in budget_shares(law, a.values).items():
            assert abs(a.shares[axis] - share) <= 1e-6, (axis, a.shares, share)

    return test


@register(
    "allocation.nested_closed_form",
    "for random variance components and nested costs c_E E + c_T E t + c_tau E t k, the "
    "solver's loss equals the closed form (pooled where t >= 1 or k >= 1 binds) to 1e-8",
)
def _nested_closed_form():
    from hypothesis import given

    from rlscale.optimize import allocate
    from rlscale.properties.strategies import log_uniform
    from rlscale.theory import VarianceComponentsLaw, nested_optimum

    v = log_uniform(1e-2, 1e2)
    c = log_uniform(1e-2, 1e3)

    @given(s1=v, s2=v, s3=v, c1=c, c2=c, c3=c, budget=log_uniform(1e3, 1e9))
    def test(s1, s2, s3, c1, c2, c3, budget) -> None:
        law = VarianceComponentsLaw(0.0, s1, s2, s3)
        a = allocate(law, f"{c1!r}*E + {c2!r}*E*t + {c3!r}*E*t*k", budget,
                     round_integers=False)
        cf = nested_optimum(law, c1, c2, c3, budget)
        assert abs(a.loss / cf.loss - 1) <= 1e-8, (a.values, cf.values)

    return test


@register(
    "allocation.chinchilla_closed_form",
    "for random Chinchilla parameters and compute, allocate with cost 6*N*D reproduces the "
    "closed-form compute-optimal N and D to 1e-6 relative",
)
def _chinchilla_closed_form():
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.optimize import allocate
    from rlscale.properties.strategies import log_uniform
    from rlscale.theory import AdditiveLaw, chinchilla_optimal

    @given(A=log_uniform(10, 1e4), B=log_uniform(10, 1e4), alpha=st.floats(0.1, 0.9),
           beta=st.floats(0.1, 0.9), C=log_uniform(1e15, 1e27))
    def test(A, B, alpha, beta, C) -> None:
        law = AdditiveLaw(1.7, {"N": A, "D": B}, {"N": alpha, "D": beta})
        a = allocate(law, "6*N*D", C, round_integers=False)
        N, D = chinchilla_optimal(A, B, alpha, beta, C)
        assert abs(a.values["N"] / N - 1) <= 1e-6 and abs(a.values["D"] / D - 1) <= 1e-6

    return test
