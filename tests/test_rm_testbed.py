"""The sparse Bradley–Terry fit and the testbed's experiment step, against independent
computations (dense Newton, hand-computed frontiers, the gold optimised as its own proxy)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from rlscale.simulate._chain_optimisers import soft_chain
from rlscale.simulate._chain_world import make_chain_world, reference_moments, reward_values
from rlscale.simulate._kl_frontier import frontier_gold
from rlscale.simulate._reward_model import (
    bt_labels,
    fit_bradley_terry,
    fit_bradley_terry_sparse,
    onehot_differences,
)
from rlscale.simulate._rm_testbed import (
    chain_gold_gains,
    comparison_pairs,
    prior_ridge,
    rm_blocks,
    rm_design,
    train_path,
)


def test_sparse_fit_matches_dense_newton():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 6))
    y = bt_labels(x @ np.array([1.0, -0.5, 0.2, 0.0, 0.7, -1.2]), 0.0, 1.0, rng)
    dense = fit_bradley_terry(x, y, ridge=0.3, tol=1e-13)
    fit = fit_bradley_terry_sparse(sp.csr_matrix(x), y, ridge=0.3, tol=1e-16)
    assert fit.success and np.allclose(fit.theta, dense, atol=1e-8)
    # A dense array is accepted as well, and a warm start lands on the same optimum.
    again = fit_bradley_terry_sparse(x, y, ridge=0.3, theta0=dense + 0.5, tol=1e-16)
    assert np.allclose(again.theta, dense, atol=1e-8)


def test_sparse_fit_with_a_ridge_per_feature_meets_its_optimality_condition():
    rng = np.random.default_rng(1)
    ia, ib = rng.integers(0, 50, (3000, 3)), rng.integers(0, 50, (3000, 3))
    x = onehot_differences(ia, ib, 50)
    truth = rng.standard_normal(50)
    y = bt_labels(x @ truth, 0.0, 1.0, rng)
    lam = np.geomspace(0.01, 10.0, 50)
    th = fit_bradley_terry_sparse(x, y, ridge=lam, tol=1e-16).theta
    xd = x.toarray()
    p = 1.0 / (1.0 + np.exp(-xd @ th))
    assert np.max(np.abs(xd.T @ (p - y) + lam * th)) < 1e-5  # of terms summing ~3000


def test_onehot_differences_cancel_shared_features():
    x = onehot_differences([[0, 0, 2], [1, 3, 3]], [[2, 1, 4], [3, 1, 0]], 5)
    assert x.toarray().tolist() == [[2.0, -1.0, 0.0, 0.0, -1.0], [-1.0, 0.0, 0.0, 1.0, 0.0]]
    with pytest.raises(ValueError, match=r"feature indices in 0\.\.4"):
        onehot_differences([[5]], [[0]], 5)
    with pytest.raises(ValueError, match="one shape"):
        onehot_differences([[0, 1]], [[0]], 5)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"ridge": 0.0}, "ridge"), ({"ridge": np.ones(3)}, "ridge must be a scalar or have shape"),
    ({"theta0": np.ones(2)}, "theta0 must have shape"), ({"y": np.ones(4)}, "y must have shape"),
])
def test_sparse_fit_rejects_bad_input(kwargs, match):
    base = {"delta": sp.csr_matrix(np.eye(5, 4)), "y": np.ones(5)}
    with pytest.raises(ValueError, match=match):
        fit_bradley_terry_sparse(**{**base, **kwargs})


def test_prior_ridge_is_noise_squared_over_the_entry_variance():
    w = make_chain_world(6, 4, 3, 0.25, rng=0)
    lam = prior_ridge(w, "bayes", 2.0)
    # additive entries: (1 − ν)/H = 0.125 per entry; windows: ν/W = 0.0625 (W = 4).
    assert lam.shape == (6 * 4 + 4 * 64,)
    assert np.allclose(lam[:24], 4.0 / 0.125) and np.allclose(lam[24:], 4.0 / 0.0625)
    assert np.allclose(prior_ridge(w, "weak", 2.0), 0.01 * lam)
    assert rm_blocks(w, "additive") == ("additive",)
    with pytest.raises(ValueError, match="sees nothing"):
        rm_blocks(make_chain_world(6, 4, 3, 1.0, rng=0), "additive")
    with pytest.raises(ValueError, match="rm must be one of"):
        prior_ridge(w, "mlp", 1.0)


def test_frontier_follows_the_proxy_and_stops_where_kl_ends():
    kl = np.array([0.0, 1.0, 2.0, 3.0])
    proxy = np.array([0.0, 1.0, 0.5, 2.0])   # the KL-2 point lowers the proxy: off the frontier
    gold = np.array([0.0, 2.0, 9.0, 1.0])
    got = frontier_gold(kl, proxy, gold, np.array([0.5, 2.0, 3.0, 3.5]))
    assert got[:3].tolist() == [1.0, 1.5, 1.0] and np.isnan(got[3])


def test_the_gold_optimised_as_its_own_proxy_gains_the_oracle_curve():
    w = make_chain_world(6, 4, 3, 0.5, rng=0)
    theta = np.concatenate([w.gold.additive.ravel(), w.gold.windows.ravel()])
    K = np.array([0.1, 1.0, 4.0])
    g = chain_gold_gains(w, 3.0 * theta, "bayes", K, optimisers=("soft",))["soft"]
    betas = np.geomspace(0.003, 30.0, 24)
    p = soft_chain(w.gold, w.gold, betas)
    oracle = frontier_gold(np.append(0.0, p.kl), np.append(0.0, p.proxy),
                           np.append(0.0, p.gold), K)
    assert np.allclose(g, oracle, atol=1e-12)  # the proxy's scale does not matter


def test_bayes_rm_learns_an_additive_gold_from_many_comparisons():
    w = make_chain_world(8, 4, 1, 0.0, rng=3)
    ta, tb, margin = comparison_pairs(w, 20_000, rng=1)
    y = bt_labels(margin, 0.0, 0.5, rng=2)
    delta = rm_design(w, ta, tb, "bayes")
    thetas = train_path(delta, y, [100, 20_000], prior_ridge(w, "bayes", 0.5))
    traj = ta[:2000]
    gold = reward_values(w.gold, traj)
    corr = [np.corrcoef(gold, th[np.arange(8) * 4 + traj].sum(axis=1))[0, 1] for th in thetas]
    assert corr[0] < corr[1] and corr[1] > 0.98
    with pytest.raises(ValueError, match="ms must increase"):
        train_path(delta, y, [200, 100], prior_ridge(w, "bayes", 0.5))


def test_chain_gold_gains_are_reproducible_and_mark_unreached_budgets():
    w = make_chain_world(6, 4, 3, 1.0, rng=0)
    ta, tb, margin = comparison_pairs(w, 500, rng=1)
    y = bt_labels(margin, 0.0, 1.0, rng=2)
    theta = train_path(rm_design(w, ta, tb, "bayes"), y, [500], prior_ridge(w, "bayes", 1.0))[0]
    pool = ta[:256]
    K = np.array([0.1, 1.0, 7.0])
    kw = {"pool": pool, "pg_steps": 10, "pg_batch": 8}
    a = chain_gold_gains(w, theta, "bayes", K, rng=5, **kw)
    b = chain_gold_gains(w, theta, "bayes", K, rng=5, **kw)
    for opt in ("soft", "bon", "pg"):
        assert np.array_equal(a[opt], b[opt], equal_nan=True)
    assert np.isnan(a["bon"][2])           # best-of-n on 256 trajectories tops out near 4.5
    assert np.all(np.isfinite(a["soft"]))  # the soft optimum reaches H log A = 8.3
    _mean, var = reference_moments(w.gold)
    assert var == pytest.approx(1.0)
    with pytest.raises(ValueError, match="pool"):
        chain_gold_gains(w, theta, "bayes", K, optimisers=("bon",))
