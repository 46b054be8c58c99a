"""Each proof's closed form against the rlscale function it concerns.

The proofs do not check that code; these tests do.

The proofs in rlscale.proofs derive closed forms symbolically; these tests
evaluate the *proved* expressions (lambdified from the proof modules) and
compare them with the theory functions at a few points, so a function that
drifts from its proof fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize_scalar

from rlscale.proofs import _chinchilla, _nested_allocation, _synthetic_ratio


def _num(expr: sp.Expr, **values: float) -> float:
    subs = {s: values[s.name] for s in expr.free_symbols}
    return float(sp.N(expr.subs(subs), 30))


@pytest.mark.parametrize(("A", "B", "alpha", "beta", "C"), [
    (406.4, 410.7, 0.34, 0.28, 5.76e23), (1.0, 2.0, 0.5, 0.25, 1e6), (50.0, 3.0, 0.1, 0.9, 1e3)])
def test_chinchilla_optimal_matches_the_proved_closed_form(A, B, alpha, beta, C) -> None:
    from rlscale.theory import chinchilla_optimal

    form = _chinchilla.closed_form()
    n_opt, d_opt = chinchilla_optimal(A, B, alpha, beta, C)
    vals = {"A": A, "B": B, "alpha": alpha, "beta": beta, "C": C}
    assert n_opt == pytest.approx(_num(form["N"], **vals), rel=1e-10)
    assert d_opt == pytest.approx(_num(form["D"], **vals), rel=1e-10)


def test_budget_shares_match_the_spend_of_an_independently_found_optimum() -> None:
    from rlscale.theory import AdditiveLaw, budget_shares

    law = AdditiveLaw(0.5, {"E": 3.0, "K": 1.5}, {"E": 0.6, "K": 0.3})
    costs, budget = {"E": 4.0, "K": 1.0}, 100.0

    def loss(spend_E: float) -> float:
        x = {"E": spend_E / costs["E"], "K": (budget - spend_E) / costs["K"]}
        return float(law.floor + sum(law.coefficients[a] * x[a] ** -law.exponents[a]
                                     for a in law.axes))

    best = minimize_scalar(loss, bounds=(1e-9, budget - 1e-9), method="bounded",
                           options={"xatol": 1e-12})
    x = {"E": best.x / costs["E"], "K": (budget - best.x) / costs["K"]}
    shares = budget_shares(law, x)
    assert shares["E"] == pytest.approx(best.x / budget, abs=1e-6)
    assert shares["K"] == pytest.approx(1 - best.x / budget, abs=1e-6)


@pytest.mark.parametrize(("s", "c", "B"), [((4.0, 1.0, 1.0), (100.0, 10.0, 1.0), 1e4),
                                          ((1.0, 2.0, 9.0), (50.0, 5.0, 0.5), 3e3)])
def test_nested_optimum_matches_the_proved_closed_form(s, c, B) -> None:
    from rlscale.theory import VarianceComponentsLaw, nested_optimum

    law = VarianceComponentsLaw(0.0, sigma2_env=s[0], sigma2_task=s[1], sigma2_traj=s[2])
    opt = nested_optimum(law, *c, budget=B)
    assert opt.pooled == ((0,), (1,), (2,)), "choose cases with t*, k* >= 1 (no pooling)"
    form = _nested_allocation.closed_form()
    vals = {"sigma_E": math.sqrt(s[0]), "sigma_T": math.sqrt(s[1]), "sigma_tau": math.sqrt(s[2]),
                "c_E": c[0], "c_T": c[1], "c_tau": c[2], "B": B}
    E, t, k = law.axes
    assert opt.values[t] == pytest.approx(_num(form["t"], **vals), rel=1e-10)
    assert opt.values[k] == pytest.approx(_num(form["k"], **vals), rel=1e-10)
    assert opt.values[E] == pytest.approx(_num(form["E"], **vals), rel=1e-10)
    assert opt.loss == pytest.approx(_num(form["V"], **vals), rel=1e-10)


@pytest.mark.parametrize(("S", "rho", "c_syn", "c_real"), [
    (100.0, 0.5, 5.0, 20.0), (3.0, 2.0, 1.0, 1.0), (10.0, 0.9, 1.0, 1.2)])
def test_critical_synthetic_ratio_matches_the_proved_closed_form(S, rho, c_syn, c_real) -> None:
    from rlscale.theory import SynthesisMethod, critical_synthetic_ratio

    form = _synthetic_ratio.closed_form()
    method = SynthesisMethod("E", unit_cost=c_syn, rho=rho, saturation=S)
    got = critical_synthetic_ratio(method, real_cost=c_real, real=50.0)
    vals = {"S": S, "rho": rho, "c_syn": c_syn, "c_real": c_real}
    assert rho * c_real > c_syn
    assert got.amount == pytest.approx(_num(form["x_syn"], **vals), rel=1e-12)
    assert got.ratio == pytest.approx(got.amount / 50.0, rel=1e-12)


def test_no_synthetic_below_the_critical_price_ratio() -> None:
    from rlscale.theory import SynthesisMethod, critical_synthetic_ratio

    # c_syn/c_real = 0.6 >= rho = 0.5: the proof's corner case, buy nothing.
    method = SynthesisMethod("E", unit_cost=6.0, rho=0.5, saturation=10.0)
    got = critical_synthetic_ratio(method, real_cost=10.0, real=5.0)
    assert got.amount == 0.0 and got.ratio == 0.0


@pytest.mark.parametrize(("s", "rho", "c_syn", "c_real"), [
    (2.0, 0.5, 1.0, 10.0), (0.5, 3.0, 2.0, 1.0), (4.0, 1.5, 1.0, 2.0)])
def test_relative_saturation_ratio_matches_the_proved_lambert_form(s, rho, c_syn, c_real) -> None:
    from rlscale.theory import SynthesisMethod, critical_synthetic_ratio

    form = _synthetic_ratio.closed_form()["relative_ratio"]
    method = SynthesisMethod("E", unit_cost=c_syn, rho=rho, saturation=s, kind="relative")
    got = critical_synthetic_ratio(method, real_cost=c_real)
    expected = complex(sp.N(form.subs({sp.Symbol("s", positive=True): s,
                                       sp.Symbol("rho", positive=True): rho,
                                       sp.Symbol("c_syn", positive=True): c_syn,
                                       sp.Symbol("c_real", positive=True): c_real}), 30))
    assert abs(expected.imag) < 1e-20
    assert got.ratio == pytest.approx(expected.real, rel=1e-9)
    # and it maximises effective units per cost g(r)/(c_real + c_syn r)
    r = np.array([got.ratio * 0.99, got.ratio, got.ratio * 1.01])
    value = (1 + rho * s * (1 - np.exp(-r / s))) / (c_real + c_syn * r)
    assert value[1] >= value.max()


@pytest.mark.parametrize("method", ["bon", "tilt"])
def test_reward_gain_lies_in_the_proved_band(method: str) -> None:
    from rlscale.theory import reward

    m = np.array([10.0, 31.6, 1e3, 1e6, 1e12, 1e100])[:, None, None]
    k = np.array([1e-3, 0.05, 0.5, 1.0, 3.0, 10.0, 200.0])[None, :, None]
    tau = np.array([reward.TAU_MIN, 1.0, reward.TAU_MAX])[None, None, :]
    m, k, tau = np.broadcast_arrays(m, k, tau)
    g = np.asarray(reward.gain(m, k, noise=tau, method=method))
    root_l = np.sqrt(np.minimum(np.log(m), k))
    assert np.all(g >= reward.C_LO * root_l)
    assert np.all(g <= reward.C_HI * root_l)


def test_reward_constants_are_the_ones_the_proof_checks() -> None:
    from rlscale.proofs import build_proof
    from rlscale.theory import reward

    proof = build_proof("reward-theta")
    assert f"{reward.C_LO!r}" in proof.step("c-lo-covers").claim
    assert f"{reward.C_HI!r}" in proof.step("c-hi-covers").claim


def test_gaussian_functions_match_their_proofs() -> None:
    from rlscale.proofs._emax_lower import CONSTANT, emax_lower_bound
    from rlscale.theory import bon_kl, expected_max_normal, expected_max_normal_bounds, tilt_gain

    n = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 7.0, 64.0, 1e6])
    # bon-kl: log n − (n − 1)/n
    assert np.allclose(bon_kl(n), np.log(n) - (n - 1) / n, rtol=1e-13, atol=1e-300)
    # tilting: gain √(2K)
    K = np.array([0.0, 0.01, 0.5, 2.0, 50.0])
    assert np.allclose(tilt_gain(K), np.sqrt(2 * K), rtol=1e-14)
    # emax-upper and emax-lower: the function lies between the proved bounds
    lo, hi = expected_max_normal_bounds(n)
    e = expected_max_normal(n)
    assert np.all(e <= np.sqrt(2 * np.log(n)) + 1e-12) and np.all(e <= hi + 1e-12)
    c = float(CONSTANT)
    big = n >= 2
    assert np.all(e[big] >= c * np.sqrt(np.log(n[big])) - 1e-12)
    assert np.all(e[~big] >= (n[~big] - 1) / np.sqrt(np.pi) - 1e-12)
    assert np.allclose(lo[big], c * np.sqrt(np.log(n[big])), rtol=1e-14)
    # the certified quadrature lower bound never exceeds the accurate value
    for m in (3.0, 3.7, 10.0, 50.0):
        assert emax_lower_bound(m) <= float(expected_max_normal(m))


def test_every_concerned_function_exists() -> None:
    import importlib

    from rlscale.proofs import build_proof, proof_names

    for name in proof_names():
        proof = build_proof(name)
        assert proof.concerns, f"proof {name} names no function it concerns"
        for dotted in proof.concerns:
            module, _, attr = dotted.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except ModuleNotFoundError:
                parent, _, sub = module.rpartition(".")
                obj = getattr(getattr(importlib.import_module(parent), sub), attr)
            assert obj is not None, dotted
