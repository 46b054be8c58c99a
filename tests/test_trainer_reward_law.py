"""The trainer's reward-law verification, the label plan and the generalising proxy."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.optimize import plan_labels, plan_labels_numeric
from rlscale.simulate import generalising_proxy_gain
from rlscale.theory import expected_max_normal

# ----------------------------------------------------------------------------- planning


def _law(a, b, c, M, K):
    return a * np.sqrt(np.maximum(np.minimum(np.log(M) + b, c * K), 0.0))


@pytest.mark.parametrize("a,b,c,budget", [(1.5, -1.3, 0.42, 2000.0), (0.8, 2.0, 3.0, 5e4),
                                          (1.0, 0.0, 1.0, 350.0)])
def test_budget_plan_is_the_brute_force_optimum(a, b, c, budget) -> None:
    pm, pk = 1.0, 100.0
    plan = plan_labels(a, b, c, price_m=pm, price_k=pk, budget=budget)
    assert plan.cost == pytest.approx(budget, rel=1e-12)
    # Brute force over the budget line: a fine grid of M.
    M = np.exp(np.linspace(0.0, math.log(budget / pm), 200_001))
    K = np.maximum((budget - pm * M) / pk, 0.0)
    best = _law(a, b, c, M, K).max()
    assert plan.gain == pytest.approx(best, rel=2e-5)  # the grid misses the kink by a step
    assert plan.gain >= best - 1e-12
    # The generic solver agrees.
    num = plan_labels_numeric(lambda m, k: _law(a, b, c, m, k), price_m=pm, price_k=pk,
                              budget=budget)
    assert num.gain == pytest.approx(plan.gain, rel=1e-7)
    assert num.cost == pytest.approx(budget, rel=1e-12)
    assert num.gain == pytest.approx(_law(a, b, c, num.M, num.K), rel=1e-12)


def test_target_plan_is_cheapest_and_consistent_with_the_budget_plan() -> None:
    a, b, c = 1.2, -0.5, 0.6
    tgt = plan_labels(a, b, c, price_m=2.0, price_k=50.0, target=2.5)
    assert tgt.gain == pytest.approx(2.5, rel=1e-12)
    # Nothing on a grid reaching the target is cheaper.
    M, K = np.meshgrid(np.geomspace(1, 1e6, 600), np.geomspace(0.01, 100, 600))
    ok = _law(a, b, c, M, K) >= 2.5
    assert (2.0 * M + 50.0 * K)[ok].min() >= tgt.cost * (1 - 1e-3)
    back = plan_labels(a, b, c, price_m=2.0, price_k=50.0, budget=tgt.cost)
    assert back.gain == pytest.approx(2.5, rel=1e-9)
    assert pytest.approx(tgt.M, rel=1e-6) == back.M and pytest.approx(tgt.K, rel=1e-6) == back.K


def test_plan_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="exactly one of target= and budget="):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=1.0)
    with pytest.raises(ValueError, match="price_k must be > 0"):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=0.0, budget=10.0)
    with pytest.raises(ValueError, match="does not buy one comparison"):
        plan_labels(1.0, 5.0, 1.0, price_m=10.0, price_k=1.0, budget=5.0)
    with pytest.raises(ValueError, match=r"target=40\.0 needs log M = 1600"):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=1.0, target=40.0)
    with pytest.raises(ValueError, match="price_m must be > 0"):
        plan_labels_numeric(lambda m, k: _law(1.0, 0.0, 1.0, m, k), price_m=0.0, price_k=1.0,
                            budget=9.0)
    cheap = plan_labels_numeric(lambda m, k: _law(1.0, 0.0, 1.0, m, k), price_m=0.5,
                                price_k=1.0, budget=9.0)  # prices below 1 are prices too
    assert cheap.cost == pytest.approx(9.0, rel=1e-12)


def test_plan_labels_cli() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan-labels", "--law", "1,0,1", "--price-m", "1", "--price-k", "100",
                     "--target", "2"]) == 0
    assert json.loads(out.getvalue())["K"] == 4.0
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["plan-labels", "--law", "1,0", "--price-m", "1", "--price-k", "1",
                     "--budget", "9"]) == 2
    assert len(err.getvalue().strip().splitlines()) == 1


@pytest.mark.parametrize("a,b,c,kappa,gamma,budget", [
    (1.14, 2.43, 0.60, 0.05, 0.6, 5000.0), (1.5, -1.3, 0.42, 0.02, 1.4, 3000.0),
    (0.8, 0.5, 2.0, 0.2, 0.5, 800.0), (1.0, 0.0, 1.0, 0.05, 1.0, 454.6)])
def test_step_priced_budget_plan_is_the_brute_force_optimum(a, b, c, kappa, gamma,
                                                             budget) -> None:
    pm, ps = 1.0, 2.0
    plan = plan_labels(a, b, c, price_m=pm, price_step=ps, kl_per_step=kappa,
                       kl_step_exponent=gamma, budget=budget)
    assert plan.cost == pytest.approx(budget, rel=1e-12)
    assert pytest.approx(kappa * plan.steps**gamma, rel=1e-12) == plan.K
    # Brute force over the budget line in (M, S): the steps left buy K = kappa*S^gamma.
    M = np.exp(np.linspace(0.0, math.log(budget / pm), 200_001))
    S = np.maximum((budget - pm * M) / ps, 0.0)
    best = _law(a, b, c, M, kappa * S**gamma).max()
    assert plan.gain >= best - 1e-12
    assert plan.gain == pytest.approx(best, rel=2e-5)
    # The generic solver, handed gain(M, S) and the step price as its "K" price, agrees.
    num = plan_labels_numeric(lambda m, s: _law(a, b, c, m, kappa * np.asarray(s)**gamma),
                              price_m=pm, price_k=ps, budget=budget)
    assert num.gain == pytest.approx(plan.gain, rel=1e-7)


def test_step_priced_target_plan_is_the_corner_and_linear_steps_are_a_kl_price() -> None:
    a, b, c, kappa, gamma = 1.2, -0.5, 0.6, 0.03, 0.7
    tgt = plan_labels(a, b, c, price_m=2.0, price_step=3.0, kl_per_step=kappa,
                      kl_step_exponent=gamma, target=2.5)
    L = (2.5 / a) ** 2  # both arguments of the min at L: M = e^(L - b), K = L/c
    assert (pytest.approx(math.exp(L - b)), pytest.approx(L / c)) == (tgt.M, tgt.K)
    assert tgt.steps == pytest.approx((L / c / kappa) ** (1 / gamma), rel=1e-12)
    assert tgt.cost == pytest.approx(2.0 * tgt.M + 3.0 * tgt.steps, rel=1e-12)
    # Nothing on a grid of (M, S) reaching the target is cheaper.
    M, S = np.meshgrid(np.geomspace(1, 1e6, 700), np.geomspace(1e-2, 1e6, 700))
    ok = _law(a, b, c, M, kappa * S**gamma) >= 2.5
    assert (2.0 * M + 3.0 * S)[ok].min() >= tgt.cost * (1 - 2e-2)
    # gamma = 1: a price per step is a price per nat of c_S/kappa, the same plan.
    by_step = plan_labels(a, b, c, price_m=1.0, price_step=5.0, kl_per_step=0.05,
                          budget=2000.0)
    by_kl = plan_labels(a, b, c, price_m=1.0, price_k=100.0, budget=2000.0)
    assert (by_step.M, by_step.K, by_step.gain) == (by_kl.M, by_kl.K, by_kl.gain)
    assert by_step.steps == pytest.approx(by_kl.K / 0.05, rel=1e-12) and by_kl.steps is None


def test_step_priced_plan_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"exactly one of price_k= .* and price_step="):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=1.0, price_step=1.0, budget=9.0)
    with pytest.raises(ValueError, match="price_step= needs kl_per_step="):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_step=1.0, budget=9.0)
    with pytest.raises(ValueError, match="kl_step_exponent must be > 0 and <= 10"):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_step=1.0, kl_per_step=0.1,
                    kl_step_exponent=0.0, budget=9.0)
    with pytest.raises(ValueError, match="kl_per_step= converts steps"):
        plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=1.0, kl_per_step=0.1, budget=9.0)


def test_plan_labels_cli_prices_steps() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan-labels", "--law", "1,0,1", "--price-m", "1", "--price-step", "5",
                     "--kl-per-step", "0.05", "--target", "2"]) == 0
    res = json.loads(out.getvalue())
    assert (res["K"], res["steps"]) == (4.0, 80.0)  # K = 4 nats at 0.05 nats a step
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["plan-labels", "--law", "1,0,1", "--price-m", "1", "--price-k", "1",
                     "--kl-per-step", "0.1", "--budget", "9"]) == 2
    assert "go with --price-step" in err.getvalue()


@pytest.mark.parametrize("p", [(0.1, -1.0, 0.3, 1.2), (-0.4, 2.5, -1.0, -0.7),
                               (0.3, 0.0, 0.5, 3.0)])
def test_law_jacobians_match_finite_differences(p) -> None:
    from scipy.optimize._numdiff import approx_derivative

    from rlscale.verification._law_models import (
        _jac_min,
        _jac_smooth,
        _jac_sqrt_logm,
        _law_min,
        _law_smooth,
        _sqrt_logm,
    )

    rng = np.random.default_rng(0)
    lm, k = np.log(rng.uniform(10, 1e5, 300)), rng.uniform(0.05, 30, 300)
    for fn, jac, q in ((_law_min, _jac_min, p[:3]), (_law_smooth, _jac_smooth, p),
                       (_sqrt_logm, _jac_sqrt_logm, p[:2])):
        q = np.asarray(q, float)
        f = fn(q, lm, k)
        num = approx_derivative(lambda x, fn=fn: fn(x, lm, k), q, method="3-point")
        # Away from the kinks (min switching, clamp at 0) the derivative is smooth.
        h = 1e-5
        smooth = np.all([np.abs(fn(q + h * e, lm, k) + fn(q - h * e, lm, k) - 2 * f)
                         < 1e-6 for e in np.eye(q.size)], axis=0)
        assert smooth.sum() > 200
        assert np.allclose(jac(q, lm, k)[smooth], num[smooth], rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- generalising proxy


def test_generalising_proxy_matches_brute_force_selection() -> None:
    """Fit w-hat from M noisy margins, select the proxy's best of n, average the gold."""
    rng = np.random.default_rng(5)
    d, M, tau, nu, n, trials = 3, 40, 1.0, 0.5, 8, 2500
    gold_sum = 0.0
    for _ in range(trials):
        fa, fb = rng.standard_normal((M, d)), rng.standard_normal((M, d))
        ea, eb = rng.standard_normal(M), rng.standard_normal(M)
        xa = (fa[:, 0] + math.sqrt(nu) * ea) / math.sqrt(1 + nu)
        xb = (fb[:, 0] + math.sqrt(nu) * eb) / math.sqrt(1 + nu)
        w_hat = np.linalg.lstsq(fa - fb, xa - xb + tau * rng.standard_normal(M), rcond=None)[0]
        pool = rng.standard_normal((n, d))
        gold = (pool[:, 0] + math.sqrt(nu) * rng.standard_normal(n)) / math.sqrt(1 + nu)
        gold_sum += gold[np.argmax(pool @ w_hat)]
    brute = gold_sum / trials
    from rlscale.theory._gaussian import bon_kl

    r = generalising_proxy_gain(M, [float(bon_kl(n))], d=d, noise=tau, misspecification=nu,
                                method="bon", trials=20_000, rng=1)
    se = 1.0 / math.sqrt(trials)  # gold has unit variance
    assert abs(r.gain[0] - brute) < 4 * se
    assert r.gain[0] == pytest.approx(r.rho * float(expected_max_normal(n)), rel=1e-9)


def test_generalising_proxy_has_no_log_m_cap() -> None:
    r = generalising_proxy_gain(1e3, [1.0, 100.0], d=10, noise=1.0, method="tilt", rng=0)
    # G = rho * sqrt(2K): the ratio over K is exactly sqrt(100), whatever M is.
    assert r.gain[1] / r.gain[0] == pytest.approx(10.0, rel=1e-12)
    assert r.gain[1] > 2 * math.sqrt(2 * math.log(1e3))  # far above the pool model's cap
    with pytest.raises(ValueError, match="M must be >= 10"):
        generalising_proxy_gain(5, [1.0], d=10)


# ----------------------------------------------------------------------------- the verification

_TINY = {"n_opt": 3, "n_rm": 3, "m_per_decade": 1, "n_k": 4, "seeds": 1, "betas": 8,
         "bon_pool": 200, "pg_noises": (1.0,), "pg_m": (100.0,), "pg_betas": 2, "pg_steps": 5,
         "boot": 3, "max_nfev": 50, "ident_boot": 19}


@pytest.mark.slow  # about 40 s: three runs with dozens of law fits, even on a toy grid
def test_trainer_verification_is_deterministic_and_the_cli_matches(tmp_path, monkeypatch) -> None:
    import rlscale.verification._trainer_reward_law as tr
    from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

    monkeypatch.setitem(tr._SETTINGS, "quick", _TINY)
    monkeypatch.setattr(tr, "NOISES", (1.0,))
    rep = verify_trainer_reward_law("quick", rng=3, figures=False, jobs=2)
    one = verify_trainer_reward_law("quick", rng=3, figures=False, jobs=1)
    # Workers run single-threaded BLAS, the parent does not: grid values agree to rounding.
    g2, g1 = (np.array([p["G"] for p in r.points]) for r in (rep, one))
    assert np.max(np.abs(g2 - g1)) < 1e-12 and np.ptp(g2) > 0.1
    assert {r["optimiser"] for r in rep.r2} == {"soft_vi", "bon", "pg"}
    assert {(r["capacity"], r["noise"]) for r in rep.r2 if r["optimiser"] == "soft_vi"} == {
        ("linear", 1.0), ("partial", 1.0)}
    key = next(r for r in rep.r2 if (r["optimiser"], r["capacity"], r["noise"]) == (
        "soft_vi", "linear", 1.0))
    if all(key["identified"].values()):
        assert set(rep.plan["plans"]) == {"planned", "labels_only", "optimisation_only"}
        costs = {round(p["cost"], 6) for p in rep.plan["plans"].values()}
        assert len(costs) == 1  # the naive plans cost what the planned one does
    else:  # five M levels and three environments: the calibrated rule may not identify it
        assert rep.plan["plans"] == {} and "not identified" in rep.plan["refused"]
    for r in rep.r2:  # the primary score and the calibrated verdict are in every row
        assert set(r["lomo_rmse"]) >= {"law", "plateau_m_free", "gao_bon_per_m"}
        assert r["verdict"] in ("interior", "c_inf", "b_inf", "k_only", "flat")
        assert 0.0 < r["lr_p_value"] <= 1.0
    assert "held-out R^2" in rep.summary()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["verify", "reward-law", "--trainer", "--seed", "3", "--out",
                     str(tmp_path), "--no-figures", "--jobs", "2"])
    assert code == 0
    cli = json.loads((tmp_path / "results.json").read_text())
    first = json.loads(json.dumps(rep.as_dict()))
    for key in ("r2", "comparison", "breaks", "plan", "theory", "n_points"):
        assert cli[key] == first[key], key
    header = (tmp_path / "grid.csv").read_text().splitlines()[0]
    assert header.startswith("optimiser,capacity,noise,M,K,G")


def test_trainer_verification_bad_input(tmp_path) -> None:
    from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

    with pytest.raises(ValueError, match="mode must be one of glance, quick, full"):
        verify_trainer_reward_law("medium")
    with pytest.raises(TypeError, match="rng must be an int seed"):
        verify_trainer_reward_law("quick", rng="0")
    with pytest.raises(ValueError, match="jobs must be"):
        verify_trainer_reward_law("quick", jobs=0)
    (tmp_path / "file").write_text("x")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["verify", "reward-law", "--trainer", "--out",
                     str(tmp_path / "file" / "sub")]) == 2
    assert len(err.getvalue().strip().splitlines()) == 1


def test_planning_check_refuses_an_unidentified_law() -> None:
    """The soft_vi/linear/s = 1 row is identified in the report's run; here it is not (its
    a, b, c the end point of a runaway solve): nothing is planned or trained, and the
    summary says why instead of a plan from a solver's stopping point."""
    from types import SimpleNamespace

    from rlscale.verification._law_fits import REASONS
    from rlscale.verification._trainer_reward_files import summary_text
    from rlscale.verification._trainer_reward_plan import PLAN_PRICES, planning_check

    row = {"optimiser": "soft_vi", "capacity": "linear", "noise": 1.0, "a_all": 0.01,
           "b_all": 10776.9, "c_all": 4.6e3, "identified": {"a": False, "b": False, "c": False},
           "identification": REASONS["b_inf"]}
    other = {**row, "noise": 2.0, "identified": {"a": True, "b": True, "c": True}}

    class NoSetup:  # planning must not touch the environments at all
        def __getattr__(self, name):
            raise AssertionError(f"setup.{name} read for an unidentified law")

    gen = np.random.default_rng(0)
    out = planning_check(NoSetup(), [other, row], gen, seeds=1, betas=np.ones(2), pg_steps=5)
    assert out["plans"] == {} and "kl_per_step" not in out
    assert "not identified" in out["refused"] and "b -> inf" in out["refused"]
    assert out["law"]["b"] == 10776.9 and out["budget"] == PLAN_PRICES["budget"]
    assert gen.integers(0, 2**32) == np.random.default_rng(0).integers(0, 2**32)  # no draws
    # One parameter not identified (c -> inf) is enough; a non-finite one too.
    row_c = {**row, "identified": {"a": True, "b": True, "c": False}}
    assert "refused" in planning_check(NoSetup(), [row_c], gen, seeds=1, betas=np.ones(2))
    row_nan = {**row, "identified": {"a": True, "b": True, "c": True}, "c_all": math.inf}
    assert "refused" in planning_check(NoSetup(), [row_nan], gen, seeds=1, betas=np.ones(2))
    rep = SimpleNamespace(r2=[], theory=[], comparison={}, breaks=[], points=[], seconds=0.0,
                          plan=out)
    assert "refused: no plan: the law of soft_vi, linear, s=1 is not identified" in (
        summary_text(rep))
    from rlscale._document import Document
    from rlscale.report._document_trainer_law import trainer_law_section
    from rlscale.report._outcomes_trainer_law import (
        PgGrid,
        TrainerLawData,
        TrainerLawOutcome,
        TrainerPlan,
        TrainerSetup,
    )
    from rlscale.report._typed import FrozenDict, build, plain

    plan = build(TrainerPlan, out)  # the report's mirror holds the refused shape as it is
    assert plain(plan) == out
    setup = TrainerSetup(optimisation_environments=2, comparison_environments=2, seeds=1,
                         identification_bootstrap=99,
                         gold_sd_raw=1.0, M=(), K=(), noises=(), capacities=FrozenDict(),
                         bon_pool=1, pg_grid=PgGrid(noises=(), M=(), steps=0))
    data = TrainerLawData(mode="quick", seed=0, seconds=0.0, setup=setup, r2=(),
                          comparison=FrozenDict(), breaks=(), m_growth=(), theory=(),
                          plan=plan, files=FrozenDict(), n_points=0)
    doc = Document("t")
    trainer_law_section(doc, TrainerLawOutcome(enabled=True, report=data))
    md = doc.to_markdown()
    assert "Planning labels against optimisation: no plan: the law of soft_vi" in md
    assert "optimisation_only" not in md


def test_glance_is_quick_made_smaller_on_the_same_m_and_noise_grid() -> None:
    """``glance`` (``rlscale report --quick``) shrinks sample sizes, never the design the law
    is judged on: the same ``M`` levels, noise levels, pg sub-grid and fit budget as
    ``quick``, and no setting larger than ``quick``'s."""
    from rlscale.verification._trainer_reward_law import _SETTINGS, trainer_grid

    glance, quick = _SETTINGS["glance"], _SETTINGS["quick"]
    assert trainer_grid("glance")[0].tolist() == trainer_grid("quick")[0].tolist()
    assert trainer_grid("glance")[1].size < trainer_grid("quick")[1].size
    for key in ("m_per_decade", "pg_noises", "pg_m", "max_nfev", "seeds"):
        assert glance[key] == quick[key], key
    for key in ("n_opt", "n_rm", "n_k", "betas", "bon_pool", "pg_betas", "pg_steps", "boot",
                "ident_boot"):
        assert glance[key] <= quick[key], key
    # The identification's p-value must still be able to reach alpha: (1 + 0)/(B + 1) <= 0.05
    # with alpha·(B + 1) an integer (Davidson & MacKinnon 2000).
    for mode in _SETTINGS.values():
        assert 1.0 / (mode["ident_boot"] + 1) <= 0.05
        assert (0.05 * (mode["ident_boot"] + 1)) == int(0.05 * (mode["ident_boot"] + 1))
