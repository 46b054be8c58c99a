"""The search step of ``fit_law`` (optimize/_fit_search.py): its work limit, the
paths it takes and the warm starts it hands to refits, pinned by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.optimize import fit_law
from rlscale.optimize._fit_objective import MAX_FIT_WORK
from rlscale.optimize._fit_search import _warm


def _power_law(n: int) -> dict[str, np.ndarray]:
    x = np.logspace(0, 4, n)
    noise = np.random.default_rng(3).normal(0, 0.01, n)
    return {"x": x, "loss": 2.0 * x ** -0.3 * np.exp(noise)}


def test_the_work_limit_is_starts_times_points_up_to_and_including_1e7() -> None:
    assert MAX_FIT_WORK == 10**7
    data = _power_law(100)
    # 100,000 starts x 100 points is exactly the limit: allowed (the multiplicative
    # law's one-axis grid has 30 points, so 30 are run)
    fit = fit_law(data, law="multiplicative", axes=["x"], starts=100_000, holdout=0)
    assert fit.n_starts == 30
    assert fit.params["exponent[x]"] == pytest.approx(0.3, abs=0.01)
    with pytest.raises(ValueError, match=r"exceeds the multistart limit 1e\+07: pass fewer "
                                         r"starts \(starts='auto' picks 100000\)"):
        fit_law(data, law="multiplicative", axes=["x"], starts=100_001, holdout=0)


def test_auto_takes_the_multistart_with_the_sum_and_the_grid_with_the_mean() -> None:
    data = _power_law(20)
    total = fit_law(data, axes=["x"], holdout=0)
    assert total.n_starts == 5                   # one start per exponent of the grid
    mean = fit_law(data, axes=["x"], holdout=0, reduction="mean")
    assert mean.n_starts == 150                  # the whole 1-axis grid: 5 x 6 x 5
    grid = fit_law(data, axes=["x"], holdout=0, starts="grid")
    assert grid.n_starts == 150
    some = fit_law(data, axes=["x"], holdout=0, starts=7)
    assert some.n_starts == 7
    # the multistart's optimum is at least as low as L-BFGS from the whole grid
    assert total.objective <= grid.objective * (1 + 1e-9)


def test_warm_starts_are_the_best_and_two_distinct_runner_ups() -> None:
    a, b, c, d = np.array([[0.0, 0.0], [5.0, 0.0], [1e-3, 0.0], [0.0, 2e-3]])
    ranked = [(3.0, b), (1.0, a), (2.0, c), (2.5, d), (4.0, np.array([9.0, 9.0]))]
    warm = _warm(ranked)
    # best first; 1e-3 away (not more) is the same start; at most three
    np.testing.assert_array_equal(warm, [a, d, b])
    np.testing.assert_array_equal(_warm([(1.0, a)]), [a])
    np.testing.assert_array_equal(_warm([(2.0, a + 1.0), (1.0, a)]), [a, a + 1.0])


def _spy_ranker(monkeypatch) -> list[int]:
    """Record how many points the grid ranking is evaluated on."""
    from rlscale.optimize._fit_objective import Objective

    sizes: list[int] = []
    original = Objective.grid_values

    def spy(self, grid, chunk=4096):
        sizes.append(self.logy.size)
        return original(self, grid, chunk)

    monkeypatch.setattr(Objective, "grid_values", spy)
    return sizes


def test_the_ranking_uses_every_point_unless_the_grid_times_points_exceeds_1e7(
        monkeypatch) -> None:
    sizes = _spy_ranker(monkeypatch)
    fit_law(_power_law(20), axes=["x"], holdout=0, starts=7)   # 150 x 20: every point
    assert sizes == [20]
    # three axes: 135,000 grid points x 100 points = 1.35e7 > 1e7: every 2nd point
    rng = np.random.default_rng(0)
    x = np.exp(rng.uniform(0, 5, (100, 3)))
    data = {"a": x[:, 0], "b": x[:, 1], "c": x[:, 2],
            "loss": 0.5 + (x ** -0.4).sum(axis=1)}
    sizes.clear()
    fit_law(data, axes=["a", "b", "c"], holdout=0, starts=2)
    assert sizes == [50]


def test_floor_bounds_project_the_grid_end_points_and_restart_at_the_middle(
        monkeypatch) -> None:
    # The grid stage's end points are hand-made; the starts handed to L-BFGS-B are
    # the five best distinct ones (more than 1e-3 apart) with the floor clipped into
    # its bounds, and each again with the floor at the middle of its range.
    import rlscale.optimize._fit_search as search_mod

    X = np.array([[3.0, 1.0, 0.5], [3.0 + 1.2e-3, 1.0, 0.5], [-3.0, 2.0, 0.4],
                  [0.1, 3.0, 0.3], [0.2, 4.0, 0.2], [0.3, 5.0, 0.1], [0.4, 6.0, 0.6]])
    f = np.arange(7.0)
    seen = []
    monkeypatch.setattr(search_mod, "grid_stage", lambda obj, grid, n_jobs: (X, f, f > 0))

    def fake_minimise(obj, starts, bounds):
        seen.append(np.array(starts))
        return [(float(i), s, True) for i, s in enumerate(starts)]

    monkeypatch.setattr(search_mod, "minimise", fake_minimise)
    data = _power_law(20)
    for floor, mid in [((0.5, 3.0), 0.5 * (np.log(0.5) + np.log(3.0))),
                       ((0.5, np.inf), np.log(0.5)), ((0.0, 2.0), np.log(2.0))]:
        seen.clear()
        fit_law(data, axes=["x"], holdout=0, starts="grid", floor=floor)
        lo, hi = np.log(floor[0]) if floor[0] > 0 else -np.inf, np.log(floor[1])
        cands = X[[0, 1, 2, 3, 4]]   # 1.2e-3 apart is distinct; five at most
        want = []
        for c in cands:
            want += [[np.clip(c[0], lo, hi), *c[1:]], [mid, *c[1:]]]
        np.testing.assert_allclose(seen[0], want, rtol=1e-15)


def test_refits_start_from_the_grid_searchs_results() -> None:
    # the extrapolation refit starts from the grid search's warm starts
    fit = fit_law(_power_law(20), axes=["x"], starts=7, holdout=0.2)
    assert fit.extrapolation["n_holdout"] == 4
    assert fit.extrapolation["mean_abs_rel_error"] < 0.05


def test_auto_never_drops_below_one_start_under_a_tiny_work_limit(monkeypatch) -> None:
    # With the limit at 30 starts x points and 20 points, "auto" (mean reduction)
    # runs one grid start, and the refusal of two names that one.
    import rlscale.optimize._fit_search as search_mod

    monkeypatch.setattr(search_mod, "MAX_FIT_WORK", 30)
    data = _power_law(20)
    fit = fit_law(data, axes=["x"], holdout=0, reduction="mean")
    assert fit.n_starts == 1
    with pytest.raises(ValueError, match=r"\(starts='auto' picks 1\)"):
        fit_law(data, axes=["x"], holdout=0, starts=2)


def test_objective_blocks_and_chunks_give_the_one_block_values(monkeypatch) -> None:
    # Objective.batch splits starts into blocks of MAX_BATCH_CELLS // points rows and
    # grid_values into chunks: the values are those of one family call on all rows.
    import rlscale.optimize._fit_objective as objective_mod
    from rlscale.optimize._fit_family import family

    rng = np.random.default_rng(1)
    logx, logy = rng.uniform(0, 5, (20, 2)), rng.normal(0.5, 0.2, 20)
    thetas = family("additive").grid(2)[rng.choice(4500, 7, replace=False)] * 0.1
    want_f, want_g = family("additive").huber_gradient(thetas, logx, logy, 1e-3)
    monkeypatch.setattr(objective_mod, "MAX_BATCH_CELLS", 50)   # blocks of 2 rows
    obj = objective_mod.Objective("additive", logx, logy, 1e-3, "sum")
    f, g = obj.batch(thetas)
    np.testing.assert_allclose(f, want_f, rtol=1e-14)
    np.testing.assert_allclose(g, want_g, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(obj.grid_values(thetas, chunk=3), want_f, rtol=1e-14)
    mean = objective_mod.Objective("additive", logx, logy, 1e-3, "mean")
    f_mean, g_mean = mean.batch(thetas)
    np.testing.assert_allclose(f_mean, want_f / 20, rtol=1e-14)
    np.testing.assert_allclose(g_mean, want_g / 20, rtol=1e-14, atol=1e-300)


def test_full_grid_search_polishes_the_five_best_distinct_end_points(monkeypatch) -> None:
    import rlscale.optimize._fit_objective as objective_mod

    X = np.array([[0.0, 1.0, 0.5], [1e-3, 1.0, 0.5], [1.0, 1.0, 0.5], [2.0, 1.0, 0.5],
                  [3.0, 1.0, 0.5], [4.0, 1.0, 0.5], [5.0, 1.0, 0.5]])
    f = np.array([0.0, 1.0, 2.0, np.nan, 3.0, 4.0, 5.0])
    seen = []
    monkeypatch.setattr(objective_mod, "grid_stage", lambda obj, grid, n_jobs: (X, f, f > 1))

    def fake_minimise(obj, starts, bounds):
        seen.append(np.array(starts))
        return [(10.0 - i, s, True) for i, s in enumerate(starts)]

    monkeypatch.setattr(objective_mod, "minimise", fake_minimise)
    obj = objective_mod.Objective("additive", np.zeros((4, 1)), np.zeros(4), 1e-3, "sum")
    best, theta, results, n_conv = objective_mod.full_grid_search(obj, X, obj.bounds(False))
    # 1e-3 apart is the same end point; NaN is skipped; five at most; best first
    np.testing.assert_array_equal(seen[0], X[[0, 2, 4, 5, 6]])
    assert [r[0] for r in results] == [6.0, 7.0, 8.0, 9.0, 10.0]
    assert best == 6.0 and theta.tolist() == X[6].tolist() and n_conv == 4  # f > 1


def test_a_start_counts_once_as_converged_however_many_stages_it_ran() -> None:
    # 1e300 x (1 + 3 N^-0.5) once reported "9 of 5 refined starts met their stopping rule":
    # screened and polished runs (and companions) were summed. Each start counts once.
    x = np.logspace(1, 4, 12)
    for scale in (1.0, 1e-280, 1e280):
        fit = fit_law({"N": x, "loss": scale * (1 + 3 * x ** -0.5)}, axes=["N"], holdout=0)
        assert 0 < fit.n_converged <= fit.n_starts, (scale, fit.message)
