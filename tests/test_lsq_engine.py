"""The fitting engine (optimize/_lsq.py) against scipy and hand computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from rlscale.optimize._lsq import solve

T = np.linspace(0.0, 3.0, 25)


def _expo(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a·exp(−b t) + c`` for rows ``(a, b, c)``, and its Jacobian."""
    a, b, c = X[:, :1], X[:, 1:2], X[:, 2:3]
    e = np.exp(-b * T)
    J = np.stack([e, -a * T * e, np.ones_like(e)], axis=2)
    return a * e + c, J


def _data(seed: int = 0, outliers: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = 2.0 * np.exp(-1.3 * T) + 0.5 + rng.normal(0, 0.01, T.size)
    if outliers:
        y[[3, 17]] += [0.4, -0.3]
    return y


def _scipy(y, x0, **kw):
    return least_squares(lambda x: _expo(x[None])[0][0] - y, x0,
                         jac=lambda x: _expo(x[None])[1][0], method="trf", **kw)


@pytest.mark.parametrize("loss, delta", [("squared", 1.0), ("huber", 0.05)])
def test_unbounded_fits_follow_scipys_trf(loss, delta) -> None:
    y = _data()
    starts = np.array([[1.0, 1.0, 0.0], [3.0, 0.2, 1.0], [0.5, 4.0, -1.0]])
    res = solve(_expo, starts, y, loss=loss, delta=delta, ftol=1e-12, xtol=1e-12, gtol=1e-12)
    for i, x0 in enumerate(starts):
        ref = _scipy(y, x0, loss="linear" if loss == "squared" else "huber", f_scale=delta,
                     ftol=1e-12, xtol=1e-12, gtol=1e-12)
        assert res.cost[i] == pytest.approx(ref.cost, rel=1e-12)
        np.testing.assert_allclose(res.x[i], ref.x, rtol=1e-7, atol=1e-9)
        assert abs(int(res.nfev[i]) - ref.nfev) <= 2  # the same path, up to rounding
    assert res.converged.all()


def test_the_huber_cost_is_the_summed_huber_loss_by_hand() -> None:
    y = _data()
    x = np.array([[2.0, 1.3, 0.5]])
    res = solve(_expo, x, y, loss="huber", delta=0.05, max_nfev=1)  # no step taken
    r = _expo(x)[0][0] - y
    hand = sum(0.5 * v * v if abs(v) <= 0.05 else 0.05 * (abs(v) - 0.025) for v in r)
    assert res.cost[0] == pytest.approx(hand, rel=1e-14)
    assert res.status[0] == 0 and res.nfev[0] == 1


def test_bounds_hold_at_every_iterate_and_the_optimum_is_scipys() -> None:
    y = _data(outliers=False)
    lower, upper = np.array([0.0, 0.0, 0.6]), np.array([10.0, 1.0, 5.0])  # b and c bind
    seen = []

    def model(X):
        seen.append(X.copy())
        return _expo(X)

    res = solve(model, np.array([[1.0, 0.5, 1.0], [5.0, 0.9, 4.0]]), y, lower=lower,
                upper=upper, ftol=1e-14, xtol=1e-14, gtol=1e-12)
    visited = np.concatenate(seen)
    assert np.all(visited >= lower) and np.all(visited <= upper)
    ref = least_squares(lambda x: _expo(x[None])[0][0] - y, [1.0, 0.5, 1.0],
                        jac=lambda x: _expo(x[None])[1][0], bounds=(lower, upper),
                        ftol=1e-14, xtol=1e-14, gtol=1e-14)
    assert res.cost == pytest.approx([ref.cost, ref.cost], rel=1e-10)
    assert res.x[:, 1].tolist() == [1.0, 1.0] and res.x[:, 2].tolist() == [0.6, 0.6]
    assert res.at_bound[:, 1:].all() and not res.at_bound[:, 0].any()
    assert res.converged.all()


def test_a_held_variable_with_jacobian_scaling_converges() -> None:
    # Regression: a variable held on its bound has a zero singular value; with the
    # trust region in Jacobian-scaled variables its 0/0 made every trial NaN and the
    # solve ran to the evaluation limit.
    y = _data(outliers=False)
    res = solve(_expo, np.array([[2.0, 1.0, 0.6]]), y, lower=np.array([0.0, 0.0, 0.6]),
                upper=np.array([10.0, 1.0, 5.0]), x_scale="jac", max_nfev=200,
                ftol=1e-14, xtol=1e-14, gtol=1e-12)
    assert res.converged[0] and res.nfev[0] < 100
    assert res.x[0, 1] == 1.0 and res.x[0, 2] == 0.6


def test_weights_are_point_counts() -> None:
    y = _data()
    counts = np.random.default_rng(1).integers(0, 3, T.size).astype(float)
    idx = np.repeat(np.arange(T.size), counts.astype(int))

    def model_rep(X):
        f, J = _expo(X)
        return f[:, idx], J[:, idx]

    x0 = np.array([[1.0, 1.0, 0.0]])
    a = solve(_expo, x0, y, counts, loss="huber", delta=0.05, ftol=1e-14, xtol=1e-14,
              gtol=1e-14)
    b = solve(model_rep, x0, y[idx], loss="huber", delta=0.05, ftol=1e-14, xtol=1e-14,
              gtol=1e-14)
    assert a.cost[0] == pytest.approx(b.cost[0], rel=1e-10)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-7)


def test_non_robust_points_are_squared() -> None:
    # Residual 2 beyond delta = 0.1: robust gives 0.1·(2 − 0.05), squared gives 2.
    def const(X):
        return np.broadcast_to(X[:, :1], (len(X), 2)).copy(), np.ones((len(X), 2, 1))

    y = np.array([2.0, 2.0])
    res = solve(const, np.zeros((1, 1)), y, loss="huber", delta=0.1, max_nfev=1,
                robust=np.array([True, False]))
    assert res.cost[0] == pytest.approx(0.1 * (2 - 0.05) + 2.0, rel=1e-14)


def test_jacobian_scaling_makes_units_irrelevant() -> None:
    y = _data()

    def scaled(X):  # a expressed in millionths
        f, J = _expo(np.column_stack([X[:, 0] * 1e-6, X[:, 1:]]))
        J[:, :, 0] *= 1e-6
        return f, J

    a = solve(_expo, np.array([[1.0, 1.0, 0.0]]), y, x_scale="jac", ftol=1e-13, xtol=1e-13)
    b = solve(scaled, np.array([[1e6, 1.0, 0.0]]), y, x_scale="jac", ftol=1e-13, xtol=1e-13)
    assert a.cost[0] == pytest.approx(b.cost[0], rel=1e-10)
    assert b.x[0, 0] * 1e-6 == pytest.approx(a.x[0, 0], rel=1e-7)


def test_non_finite_starts_are_dropped_or_refused() -> None:
    y = _data()
    x0 = np.array([[1.0, 1.0, 0.0], [np.nan, 1.0, 0.0]])
    res = solve(_expo, x0, y, nonfinite="drop")
    assert res.status.tolist()[1] == -1 and np.isinf(res.cost[1]) and res.converged[0]
    with pytest.raises(ValueError, match="x0 must give finite residuals"):
        solve(_expo, x0, y)
    with pytest.raises(ValueError, match="loss must be 'squared' or 'huber'"):
        solve(_expo, x0[:1], y, loss="cauchy")
    with pytest.raises(ValueError, match="lower must be <= upper"):
        solve(_expo, x0[:1], y, lower=np.ones(3), upper=np.zeros(3))


def test_rows_do_not_depend_on_the_batch() -> None:
    y = _data()
    starts = np.random.default_rng(3).uniform([0, 0, -1], [4, 3, 1], (6, 3))
    together = solve(_expo, starts, y, loss="huber", delta=0.05, lower=np.zeros(3) - 1,
                     upper=np.full(3, 5.0))
    alone = solve(_expo, starts[4:5], y, loss="huber", delta=0.05, lower=np.zeros(3) - 1,
                  upper=np.full(3, 5.0))
    assert np.array_equal(together.x[4], alone.x[0])
    assert together.nfev[4] == alone.nfev[0]
