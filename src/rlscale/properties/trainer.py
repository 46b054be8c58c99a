"""Properties of the numpy RL trainer, its environments and the KL bandit (issue 5)."""

from __future__ import annotations

from rlscale.properties import register


@register(
    "trainer.rloo_is_scaled_dr_grpo",
    "for any returns of a group of k >= 2 trajectories, RLOO's leave-one-out advantage equals "
    "k/(k-1) times Dr. GRPO's mean-centred advantage",
)
def _rloo_is_scaled_dr_grpo():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    from rlscale.simulate._dr_grpo import dr_grpo_advantages
    from rlscale.simulate._rloo import rloo_advantages

    returns = st.tuples(st.integers(1, 4), st.integers(2, 12)).flatmap(
        lambda shape: arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)))

    @given(r=returns)
    def test(r) -> None:
        k = r.shape[1]
        np.testing.assert_allclose(rloo_advantages(r), k / (k - 1) * dr_grpo_advantages(r),
                                   rtol=1e-9, atol=1e-9)

    return test


@register(
    "trainer.bandit_optimum_is_gibbs",
    "the KL-regularised bandit optimum pi* ~ pi_ref exp(r/beta) beats every policy pi by "
    "exactly beta KL(pi || pi*) in reward minus beta KL to the reference",
)
def _bandit_optimum_is_gibbs():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.properties.strategies import log_uniform, seeds
    from rlscale.simulate import kl_bandit_optimum

    @given(seed=seeds(), n=st.integers(2, 30), beta=log_uniform(1e-2, 1e2))
    def test(seed: int, n: int, beta: float) -> None:
        rng = np.random.default_rng(seed)
        r = rng.normal(size=n)
        ref = rng.dirichlet(np.ones(n))
        pi = rng.dirichlet(np.ones(n))
        opt = kl_bandit_optimum(r, beta, ref)

        def objective(p):
            return p @ r - beta * np.sum(p * np.log(p / ref))

        gap = objective(opt) - objective(pi)
        kl = np.sum(pi * np.log(pi / opt))
        assert gap >= -1e-9
        np.testing.assert_allclose(gap, beta * kl, rtol=1e-6, atol=1e-9)

    return test


@register(
    "trainer.optimal_success_dominates",
    "on any generated gridworld the value-iteration optimum is at least the exact success of "
    "any stochastic policy, and positive exactly when a path exists",
)
def _optimal_success_dominates():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.properties.strategies import seeds
    from rlscale.simulate import GridFamily, optimal_success, policy_success

    @given(seed=seeds(), size=st.integers(3, 6), holes=st.floats(0.0, 0.3),
           sub=st.floats(0.0, 1.0))
    def test(seed: int, size: int, holes: float, sub: float) -> None:
        fam = GridFamily(size=size, hole_rate=holes, wall_rate=0.05, subgoal_rate=sub)
        world = fam.sample(2, 2, rng=seed)
        rng = np.random.default_rng(seed)
        pol = rng.dirichlet(np.ones(4), size=(world.n_tasks, 3, size * size))
        opt = optimal_success(world)
        assert np.all(policy_success(world, pol) <= opt + 1e-12)
        assert np.all((opt > 0) == (world.shortest_path() > 0))

    return test
