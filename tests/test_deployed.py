"""η_deployed, fission and the bounded Bayes plan (issue 29, items 1, 3 and 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, PlanPath, allocate, deployed_efficiency
from rlscale.optimize._deployed import LawBank, path_etas
from rlscale.optimize._fission import fission, noise_scale
from rlscale.optimize._robust_plan import expected_loss, robust_plan
from rlscale.theory import AdditiveLaw, MixtureLaw

LAW = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})


def _even_path(lo: float = 10.0, hi: float = 400.0, n: int = 400) -> PlanPath:
    B = np.geomspace(lo, hi, n)
    return PlanPath("even", B, {"E": B / 2, "k": B / 2}, {"E": B / 2, "k": B / 2}, B)


# -- η_deployed ------------------------------------------------------------------------------

def test_deployed_eta_is_the_iso_loss_cost_ratio_by_hand() -> None:
    # Baseline E = 10, k = 190 (cost 200) under L = 0.1 + E^-½ + k^-½.  The even split
    # E = k = C/2 has loss 0.1 + 2·√(2/C): it reaches L_b at C = 8/(L_b − 0.1)².
    lb = 0.1 + 10**-0.5 + 190**-0.5
    c_star = 8.0 / (lb - 0.1) ** 2
    d = deployed_efficiency(_even_path(), LAW, {"E": 10.0, "k": 190.0}, 200.0)
    # Linear interpolation in log cost on a grid of ratio 1.0093: error ~ (Δlog C)²/8.
    assert d.eta == pytest.approx(200.0 / c_star, rel=2e-5)
    assert d.bound == "exact" and d.baseline_loss == pytest.approx(lb, rel=1e-14)
    # The equal-cost loss is read at the grid budget nearest 200 (within 1 %).
    B = _even_path().costs
    near = B[np.argmin(np.abs(np.log(B / 200.0)))]
    assert d.plan_loss == pytest.approx(0.1 + 2 * math.sqrt(2 / near), rel=1e-14)
    far = deployed_efficiency(_even_path(300.0, 400.0), LAW, {"E": 10.0, "k": 190.0}, 200.0)
    assert far.plan_loss is None  # no budget of that path within 1 % of 200


def test_deployed_eta_bounds_outside_the_path() -> None:
    # The path's cheapest point already beats the baseline: η is only known from below.
    d = deployed_efficiency(_even_path(60.0, 400.0), LAW, {"E": 10.0, "k": 190.0}, 200.0)
    assert d.bound == "at least" and d.eta == pytest.approx(200.0 / 60.0, rel=1e-12)
    # No point reaches a baseline spending 5,000 well: η is at most its cost / the largest.
    d = deployed_efficiency(_even_path(), LAW, {"E": 2500.0, "k": 2500.0}, 5000.0)
    assert d.bound == "at most" and d.eta == pytest.approx(5000.0 / 400.0, rel=1e-12)


def test_deployed_eta_judges_with_any_callable() -> None:
    # A generating law outside every family: an interaction term.  The iso-loss cost on
    # the even path is found by bisection independently.
    from scipy.optimize import brentq

    def truth(v):
        return 0.1 + np.asarray(v["E"]) ** -0.5 + np.asarray(v["k"]) ** -0.5 \
            + 0.5 * (np.asarray(v["E"]) * np.asarray(v["k"])) ** -0.25

    lb = float(truth({"E": 10.0, "k": 190.0}))
    c_star = brentq(lambda c: float(truth({"E": c / 2, "k": c / 2})) - lb, 10.0, 400.0,
                    xtol=1e-12)
    d = deployed_efficiency(_even_path(), truth, {"E": 10.0, "k": 190.0}, 200.0)
    assert d.eta == pytest.approx(200.0 / c_star, rel=2e-5)


def test_a_worse_path_has_eta_below_one() -> None:
    # All budget on E: the loss at C is 0.1 + C^-½ + 1 (k = 1 fixed), never below the
    # even split's; against the even split's own point at 200, η < 1.
    B = np.geomspace(10.0, 400.0, 200)
    path = PlanPath("E only", B, {"E": B - 1, "k": np.ones_like(B)},
                    {"E": B - 1, "k": np.ones_like(B)}, B)
    d = deployed_efficiency(path, LAW, {"E": 100.0, "k": 100.0}, 200.0)
    assert d.bound == "at most"  # E alone never reaches the even split's loss
    assert d.eta == pytest.approx(200.0 / 400.0)


def test_plan_path_is_checked() -> None:
    B = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="one value per budget"):
        PlanPath("x", B, {"E": np.ones(3)}, {"E": np.ones(2)}, B)
    with pytest.raises(ValueError, match="ascending"):
        PlanPath("x", B[::-1].copy(), {"E": B}, {"E": B}, B)
    with pytest.raises(TypeError, match="PlanPath"):
        deployed_efficiency("path", LAW, {"E": 1.0, "k": 1.0}, 2.0)
    with pytest.raises(ValueError, match="baseline_cost"):
        deployed_efficiency(_even_path(), LAW, {"E": 1.0, "k": 1.0}, -2.0)


def test_law_bank_equals_each_laws_own_loss(rng) -> None:
    laws = [AdditiveLaw(float(f), {"E": float(a), "t": float(b), "k": float(c)},
                        {"E": float(x), "t": float(y), "k": float(z)})
            for f, a, b, c, x, y, z in rng.uniform(0.05, 2.0, (25, 7))]
    pts = {a: rng.uniform(1.0, 300.0, 40) for a in ("E", "t", "k")}
    got = LawBank(laws).losses(pts)
    want = np.stack([law.loss(pts) for law in laws])
    np.testing.assert_allclose(got, want, rtol=1e-13)
    path = PlanPath("p", np.geomspace(10, 500, 40), pts, pts, np.geomspace(10, 500, 40))
    base = {"E": 20.0, "t": 5.0, "k": 30.0}
    e_bank, c_bank = path_etas(path, LawBank(laws), base, 120.0)
    e_loop, c_loop = path_etas(path, laws, base, 120.0)
    np.testing.assert_allclose(e_bank, e_loop, rtol=1e-12)
    assert (c_bank == c_loop).all()


def test_law_bank_pads_laws_with_fewer_terms() -> None:
    one = AdditiveLaw(0.2, {"E": 1.0}, {"E": 0.5})
    mix = MixtureLaw([AdditiveLaw(0.1, {"E": 1.0}, {"E": 0.5}),
                      AdditiveLaw(0.3, {"E": 2.0}, {"E": 1.0})])
    got = LawBank([one, mix]).losses({"E": np.array([4.0])})[:, 0]
    assert got.tolist() == pytest.approx([0.2 + 0.5, 0.2 + 0.25 + 0.25], rel=1e-14)


# -- fission ---------------------------------------------------------------------------------

def test_fission_copies_are_independent_with_the_stated_variances() -> None:
    # log y = 0 + N(0, σ²); the copies have variances σ²(1 + τ²), σ²(1 + 1/τ²) and
    # covariance σ² − σ² = 0.  200,000 rows: standard errors ~0.3 % of each moment.
    sigma, tau, n = 0.1, 0.5, 200_000
    gen = np.random.default_rng(7)
    y = np.exp(sigma * gen.standard_normal(n))
    a, b = fission({"loss": y}, "loss", sigma, tau, gen)
    la, lb = np.log(a["loss"]), np.log(b["loss"])
    assert la.var() == pytest.approx(sigma**2 * (1 + tau**2), rel=0.01)
    assert lb.var() == pytest.approx(sigma**2 * (1 + 1 / tau**2), rel=0.01)
    assert abs(np.corrcoef(la, lb)[0, 1]) < 0.01
    np.testing.assert_allclose(la * tau**-1 + lb * tau, np.log(y) * (tau + 1 / tau),
                               rtol=1e-9, atol=1e-12)


def test_fission_and_noise_scale_check_their_input() -> None:
    assert noise_scale([0.1, -0.1, 0.2, -0.2], 2) == pytest.approx(math.sqrt(0.1 / 2))
    with pytest.raises(ValueError, match="more residuals"):
        noise_scale([0.1, 0.2], 2)
    with pytest.raises(ValueError, match="tau"):
        fission({"loss": [1.0]}, "loss", 0.1, 0.0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        fission({"loss": [1.0]}, "loss", 0.1, 1.0, 0)
    with pytest.raises(ValueError, match="loss"):
        fission({"loss": [-1.0]}, "loss", 0.1, 1.0, np.random.default_rng(0))


# -- the bounded, trimmed Bayes plan ---------------------------------------------------------

def test_expected_loss_stays_in_the_range_however_absurd_a_law() -> None:
    losses = np.array([0.3, 0.4, 0.5, 1e12])
    for trim in (0.0, 0.1, 0.25):
        j = expected_loss(losses, trim, (0.0, 1.0))
        assert 0.0 <= j <= 1.0
    # trim 0.25 of 4 laws drops one at each end: the mean of 0.4 and 0.5.
    assert expected_loss(losses, 0.25, (0.0, 1.0)) == pytest.approx(0.45)
    # Untrimmed and unbounded it is the plain mean (the mixture's loss).
    assert expected_loss(losses, 0.0, (0.0, math.inf)) == pytest.approx(losses.mean())


def test_untrimmed_unbounded_plan_is_the_mixture_optimum() -> None:
    laws = [AdditiveLaw(0.1, {"E": c, "k": 1.0}, {"E": 0.5, "k": 0.5}) for c in (0.5, 1, 2)]
    bounds = {"E": (1, 1e6), "k": (1, 1e6)}
    p = robust_plan(laws, "E + k", 200.0, bounds, trim=0.0)
    want = allocate(MixtureLaw(laws), "E + k", 200.0, bounds, round_integers=False)
    assert p.values["E"] == pytest.approx(want.values["E"], rel=1e-9)
    # The mixture's E-coefficient 7/6 against 1: (E/k)^1.5 = 7/6 (KKT of a·E^-½ + k^-½).
    ratio = (7 / 6) ** (2 / 3)
    assert p.values["E"] == pytest.approx(200.0 * ratio / (1 + ratio), rel=1e-9)
    assert p.expected_loss == pytest.approx(want.loss, rel=1e-9)


def test_robust_plan_ignores_a_dominating_law() -> None:
    good = [AdditiveLaw(f, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
            for f in (0.09, 0.1, 0.11)]
    wild = AdditiveLaw(0.1, {"E": 1e4, "k": 1.0}, {"E": 0.5, "k": 0.5})
    bounds = {"E": (1, 1e6), "k": (1, 1e6)}
    p = robust_plan([*good, wild], "E + k", 200.0, bounds, trim=0.25, loss_range=(0, 1))
    assert p.values == pytest.approx({"E": 100.0, "k": 100.0}, rel=1e-9)
    assert p.converged and 0.0 <= p.expected_loss <= 1.0
    # What the kept laws average is what the plan optimises.
    prob = AllocationProblem(p.law, "E + k", bounds)
    assert prob.allocate(200.0, round_integers=False).values["E"] == pytest.approx(100.0)


def test_robust_plan_checks_its_input() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        robust_plan([LAW], "E + k", 10.0)
    with pytest.raises(ValueError, match="trim"):
        robust_plan([LAW, LAW], "E + k", 10.0, trim=0.5)
    with pytest.raises(ValueError, match="low < high"):
        robust_plan([LAW, LAW], "E + k", 10.0, loss_range=(1.0, 1.0))
    with pytest.raises(TypeError, match="pair"):
        robust_plan([LAW, LAW], "E + k", 10.0, loss_range=1.0)
