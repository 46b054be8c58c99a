"""The input contract (tests/contracts.py) for every public function and method of theory.

Issue 10 §6.  :data:`CONTRACTS` maps each public callable of ``rlscale.theory``
(``__all__``, ``reward.__all__``, and the public methods and constructors of
its classes) to a call with valid arguments.  One hypothesis test per entry
makes one argument hostile at a time (the others stay valid) and asserts the
contract: a ``ValueError``/``TypeError`` naming that argument, or a finite
result checked by an independent oracle where one exists (Kamath's bounds for
``e(n)``, the Donsker–Varadhan envelope ``sqrt(2K)`` for every gain, closed
forms and identities computed here with ``math``).  Calls without arguments
are in :data:`NO_ARGS`; :func:`test_every_public_name_has_a_contract` fails
when a public name is added without an entry.

Examples per entry follow the hypothesis profile: 5,000 in ``deep``, 25 in
``dev``; in ``ci`` the 200 of the profile are cut to :data:`CI_EXAMPLES` (50)
per entry so that the ~130 fuzzed entries (~6,500 calls) run in about a minute
on a loaded two-core machine -- run ``HYPOTHESIS_PROFILE=deep`` for the full
search.  Non-finite results are allowed only where documented, and then an
oracle decides that the ``inf`` is the right answer (:data:`DOCUMENTED_INF`).
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import sympy as sp
from _contract_oracles_theory import (
    _arr,
    _at_least_floor,
    _band,
    _between,
    _bon_kl_oracle,
    _bon_n_oracle,
    _bounds_oracle,
    _chinchilla_oracle,
    _comparisons_inf,
    _critical_inf,
    _envelope,
    _gain_oracle,
    _kamath,
    _kamath_log,
    _kl_needed_inf,
    _nested_optimum_oracle,
    _noise_variance_oracle,
    _nonneg,
    _pool_inf,
    _posy_inf,
    _regressional_oracle,
    _round_trip,
    _round_trip_or_one,
    _shares_oracle,
    _totals_oracle,
    _uniform_filter_oracle,
    _without_zero_n,
)
from contracts import assert_finite, check_contract, hostile, hostile_counts
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rlscale.theory as T
from rlscale.theory import reward

LOG_MAX = math.log(np.finfo(float).max)  # 709.78
#: Examples per fuzzed entry in the ``ci`` profile (module docstring).
CI_EXAMPLES = 50
_EXAMPLES = settings().max_examples
if _EXAMPLES == 200:  # the ci profile
    _EXAMPLES = CI_EXAMPLES


@dataclass
class Contract:
    """One public callable: ``call(**valid)`` must succeed; each argument is fuzzed."""

    call: Callable[..., Any]
    valid: dict[str, Any]
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    oracle: Callable[[dict[str, Any], Any], None] | None = None
    counts: tuple[str, ...] = ()
    extras: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: Fewer examples for an entry that is slow per call (``None``: the profile's).
    examples: int | None = None

    def names(self, arg: str) -> tuple[str, ...]:
        return self.labels.get(arg, (arg,))



# -- the registry -----------------------------------------------------------------

ADD = T.AdditiveLaw(0.2, {"E": 2.0, "T": 1.0}, {"E": 0.5, "T": 0.3})
MUL = T.MultiplicativeLaw(2.0, {"E": 0.3, "T": 0.1}, floor=0.1)
PASS = T.PassRateLaw(0.8, {"E": 50.0, "T": 5.0}, {"E": 1.0, "T": 0.5})
VC = T.VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25, axes=("E", "T", "k"))
MIX = T.MixtureLaw([ADD, T.AdditiveLaw(0.4, {"E": 1.0, "T": 3.0}, {"E": 0.7, "T": 0.2})],
                   [1.0, 2.0])
POSY = T.PosynomialLaw(0.2, "2*E**-0.5*T**-0.25 + T**-1")
LAWS = {"AdditiveLaw": ADD, "MultiplicativeLaw": MUL, "PassRateLaw": PASS,
        "VarianceComponentsLaw": VC, "MixtureLaw": MIX, "PosynomialLaw": POSY}
EXPR = T.ExpressionLaw("E + A/N**alpha + c*exp(-N/100)", axes=["N"],
                       params={"E": (0.01, 10), "A": (0.1, 1e4), "alpha": (0.05, 2),
                               "c": (-1, 1)})
EXPR_PARAMS = {"E": 0.5, "A": 3.0, "alpha": 0.5, "c": 0.2}
TURN = T.Turn.with_verifier(0.3, fpr=0.1, fnr=0.2)
CTURN = T.ContextTurn(0.2, 0.8, 0.5, context_cost=0.5, levels=(1, 4, 16))
#: One turn of each kind (issue 25: a class per kind), with its constructor's valid fields.
KIND_TURNS = {"CoverageTurn": {"q": 0.3}, "VerifierTurn": {"q": 0.3, "fpr": 0.1, "fnr": 0.2},
              "SelectionTurn": {"q": 0.3, "noise": 1.0}, "EmpiricalTurn": {"a": -1.0, "b": -0.5}}
SIG = T.ComputeSigmoid(asymptote=0.6, exponent=1.5, midpoint=1e4, start=0.1)


POLY = T.parse_posynomial("100*E + 10*E*T**2 + E**-0.5")
MONO = POLY.terms[0]
SAT = T.SynthesisMethod("E", unit_cost=5.0, rho=0.5, saturation=100.0)
REL = T.SynthesisMethod("E", unit_cost=1.0, rho=0.5, saturation=2.0, kind="relative")
FILTER = T.optimal_filter_threshold(stats.uniform(0, 1), 1.0, 1.0)
QUALITY = np.linspace(0.0, 1.0, 33)


def _blas_product(limit: Any) -> float:
    with T.blas_threads(limit):
        return float(np.ones(3) @ np.ones(3))


CONTRACTS: dict[str, Contract] = {
    # -- validation helpers
    "check_real": Contract(lambda value: T.check_real("x", value, low=0.0), {"value": 1.0},
                           {"value": ("x",)}),
    "check_positive_int": Contract(lambda value: T.check_positive_int("n", value,
                                                                      maximum=10**6),
                                   {"value": 3}, {"value": ("n",)}, counts=("value",)),
    "blas_threads": Contract(lambda limit: _blas_product(limit), {"limit": 1},
                             {"limit": ("limit",)}, counts=("limit",)),
    # -- Gaussian extremes
    "expected_max_normal": Contract(T.expected_max_normal, {"n": 10.0}, oracle=_kamath,
                                    extras={"n": (1.0, 2.0, 1e300, 1.5)}),
    "expected_max_normal_log": Contract(T.expected_max_normal_log, {"log_n": 3.0},
                                        oracle=_kamath_log, extras={"log_n": (1e5, 0.1)}),
    "expected_max_normal_bounds": Contract(T.expected_max_normal_bounds, {"n": 10.0},
                                           oracle=_bounds_oracle),
    "expected_max_normal_asymptotic": Contract(T.expected_max_normal_asymptotic, {"n": 10.0}),
    "bon_kl": Contract(T.bon_kl, {"n": 10.0}, oracle=_bon_kl_oracle),
    "bon_n_for_kl": Contract(T.bon_n_for_kl, {"kl": 2.0}, oracle=_bon_n_oracle,
                             extras={"kl": (700.0, 708.0, 1e-9)}),
    "tilt_gain": Contract(T.tilt_gain, {"K": 2.0}, oracle=lambda kw, g: np.testing.assert_allclose(
        g, math.sqrt(2) * np.sqrt(_arr(kw["K"])), rtol=1e-15)),
    "regressional_gain": Contract(T.regressional_gain, {"n": 10.0, "noise_sd": 1.0},
                                  oracle=_regressional_oracle),
    "quantile_mean_normal": Contract(T.quantile_mean_normal, {"n": 10.0}, oracle=_nonneg),
    # -- posynomials
    "parse_posynomial": Contract(T.parse_posynomial, {"text": "E + 2*T", "axes": ["E", "T"]},
                                 {"text": ("cost",)},
                                 extras={"text": ("(1+E)**50", "E**-0.5*T", "6*E*T")}),
    "Monomial": Contract(T.Monomial, {"coefficient": 2.0, "exponents": (("E", 1.0),)}),
    "Monomial.log_evaluate": Contract(lambda log_values: MONO.log_evaluate(log_values),
                                      {"log_values": {"E": 1.0}}),
    "Monomial.power_of": Contract(lambda axis: MONO.power_of(axis), {"axis": "E"}),
    "Posynomial": Contract(T.Posynomial, {"terms": (MONO,), "source": "100*E"}),
    "Posynomial.from_sympy": Contract(T.Posynomial.from_sympy,
                                      {"expr": sp.Symbol("E") * 2 + sp.Symbol("T")},
                                      {"expr": ("cost",)}),
    "Posynomial.substitute": Contract(lambda mapping: POLY.substitute(mapping),
                                      {"mapping": {"T": T.parse_posynomial("E*k")}},
                                      {"mapping": ("mapping", "substitution")}),
    "Posynomial.to_sympy": Contract(lambda symbols: POLY.to_sympy(symbols), {"symbols": None}),
    "Posynomial.is_linear": Contract(lambda: POLY.is_linear(), {}),
    # -- closed forms
    "chinchilla_optimal": Contract(T.chinchilla_optimal, {
        "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28, "compute": 5.76e23,
        "flops_per_param_token": 6.0}, oracle=_chinchilla_oracle),
    "budget_shares": Contract(T.budget_shares, {"law": ADD, "values": {"E": 3.0, "T": 2.0}},
                              oracle=_shares_oracle),
    # -- nested
    "nested_totals": Contract(T.nested_totals, {"E": 10, "t": 5, "k": 4}, oracle=_totals_oracle),
    "nested_cost": Contract(T.nested_cost, {"c_env": 100.0, "c_task": 10.0, "c_traj": 1.0,
                                            "axes": ("E", "t", "k")}),
    "nested_optimum": Contract(T.nested_optimum, {"law": VC, "c_env": 100.0, "c_task": 10.0,
                                                  "c_traj": 1.0, "budget": 1e4},
                               oracle=_nested_optimum_oracle),
    "VarianceComponentsLaw": Contract(T.VarianceComponentsLaw, {
        "floor": 0.1, "sigma2_env": 4.0, "sigma2_task": 1.0, "sigma2_traj": 0.25,
        "axes": ("E", "t", "k")}),
    # -- laws: constructors and law_from_dict
    "AdditiveLaw": Contract(T.AdditiveLaw, {"floor": 0.2, "coefficients": {"E": 2.0},
                                            "exponents": {"E": 0.5}}),
    "MultiplicativeLaw": Contract(T.MultiplicativeLaw, {"coefficient": 2.0,
                                                        "exponents": {"E": 0.5},
                                                        "floor": 0.0}),
    "PassRateLaw": Contract(T.PassRateLaw, {"p_max": 0.8, "coefficients": {"E": 50.0},
                                            "exponents": {"E": 1.0}}),
    "PassRateLaw.from_additive": Contract(T.PassRateLaw.from_additive,
                                          {"law": T.AdditiveLaw(1.25, {"E": 1.0}, {"E": 1.0})},
                                          {"law": ("law", "floor")}),
    "law_from_dict": Contract(T.law_from_dict, {"spec": ADD.as_dict()},
                              {"spec": ("spec", "family")}),
    # -- synthetic data
    "SynthesisMethod": Contract(T.SynthesisMethod, {"axis": "E", "unit_cost": 5.0, "rho": 0.5,
                                                    "saturation": 100.0, "kind": "",
                                                    "name": ""}),
    "critical_synthetic_ratio": Contract(
        lambda method, real_cost, real: _critical_inf(
            {"method": method, "real": real},
            T.critical_synthetic_ratio(method, real_cost, real)),
        {"method": REL, "real_cost": 10.0, "real": 100.0}),
    "filter_price": Contract(T.filter_price, {"threshold": 0.5, "quality": QUALITY,
                                              "gen_cost": 1.0, "train_cost": 1.0},
                             oracle=_nonneg),
    "optimal_filter_threshold": Contract(T.optimal_filter_threshold, {
        "quality": QUALITY, "gen_cost": 1.0, "train_cost": 1.0},
        {"quality": ("quality", "positive")}),
    "uniform_filter_threshold": Contract(T.uniform_filter_threshold,
                                         {"gen_cost": 1.0, "train_cost": 1.0},
                                         oracle=_uniform_filter_oracle,
                                         extras={"gen_cost": (1e-300, 1e300),
                                                 "train_cost": (1e218, 1e-300)}),
    "FilterThreshold.method": Contract(lambda axis, name: FILTER.method(axis, name),
                                       {"axis": "E", "name": ""}),
    # -- the reward law
    "reward.gain": Contract(reward.gain, {"m": 1e4, "k": 2.0, "noise": 1.0, "method": "bon"},
                            {"m": ("M",), "k": ("K",)}, oracle=_gain_oracle,
                            extras={"k": (1e15, 1e16, 1e300), "method": ("quantile", "tilt")}),
    "reward.gain_upper": Contract(reward.gain_upper, {"m": 1e4, "k": 2.0, "noise": 1.0},
                                  {"m": ("M",), "k": ("K",)}, oracle=_envelope("k")),
    "reward.gain_at_pool": Contract(reward.gain_at_pool, {"n": 10.0, "m": 1e4, "noise": 1.0,
                                                          "method": "bon", "K": math.inf},
                                    {"m": ("M",)}, oracle=_nonneg),
    "reward.optimal_pool_size": Contract(
        lambda m, k, noise, method: _pool_inf({"k": k}, reward.optimal_pool_size(
            m, k, noise, method)),
        {"m": 1e4, "k": 2.0, "noise": 1.0, "method": "bon"}, {"m": ("M",), "k": ("K",)}),
    "reward.noise_variance": Contract(reward.noise_variance, {"n": 10.0, "m": 1e4,
                                                              "noise": 1.0},
                                      {"m": ("M",)}, oracle=_noise_variance_oracle),
    "reward.lower_bound": Contract(reward.lower_bound, {"m": 1e4, "k": 2.0},
                                   {"m": ("M",), "k": ("K",)}, oracle=_band(reward.C_LO)),
    "reward.upper_bound": Contract(reward.upper_bound, {"m": 1e4, "k": 2.0},
                                   {"m": ("M",), "k": ("K",)}, oracle=_band(reward.C_HI)),
    "reward.comparisons_needed_theta": Contract(
        lambda target, k, c: _comparisons_inf({"target": target, "k": k, "c": c},
                                              reward.comparisons_needed_theta(target, k, c)),
        {"target": 2.0, "k": 10.0, "c": math.sqrt(2)}, {"k": ("K",)}),
    "reward.kl_needed_theta": Contract(
        lambda target, m, c: _kl_needed_inf({"target": target, "m": m, "c": c},
                                            reward.kl_needed_theta(target, m, c)),
        {"target": 2.0, "m": 1e6, "c": math.sqrt(2)}, {"m": ("M",)}),
    # The exact inverses: a root-finder per call (~0.2 s), so fewer examples.
    "reward.comparisons_needed": Contract(
        reward.comparisons_needed, {"target": 1.0, "k": 4.0, "noise": 1.0, "method": "bon"},
        {"k": ("K", "k", "unreachable"), "target": ("target", "g", "unreachable"),
         "noise": ("noise", "unreachable"), "method": ("method", "unreachable")}, examples=12,
        oracle=lambda kw, m: _round_trip_or_one(kw, m, reward.gain(m, kw["k"], kw["noise"],
                                                                   kw["method"]))),
    "reward.kl_needed": Contract(
        reward.kl_needed, {"target": 1.0, "m": 1e4, "noise": 1.0, "method": "bon"},
        {"m": ("M", "m", "unreachable"), "target": ("target", "g", "unreachable"),
         "noise": ("noise", "unreachable"), "method": ("method", "unreachable")}, examples=12,
        oracle=lambda kw, k: _round_trip(kw, reward.gain(kw["m"], k, kw["noise"],
                                                         kw["method"]))),
    "reward.proved_constants": Contract(reward.proved_constants, {
        "m_min": 10.0, "tau_min": 0.5, "tau_max": 2.0}),
    "reward.law_piecewise": Contract(reward.law_piecewise, {"c": 1}),
    "reward.inverses": Contract(reward.inverses, {"c": None}),
    "reward.latex": Contract(reward.latex, {"expr": None}),
    "reward.to_numpy": Contract(reward.to_numpy, {"expr": None}),
    "reward.gao_expr": Contract(reward.gao_expr, {"kind": "bon"}),
    "reward.gao_bon": Contract(reward.gao_bon, {"kl": 4.0, "alpha": 1.0, "beta": 0.1}),
    "reward.gao_rl": Contract(reward.gao_rl, {"kl": 4.0, "alpha": 1.0, "beta": 0.5}),
    # -- laws written as expressions, mixtures, posynomial laws (issues 11, 15) --
    "parse_expression": Contract(T.parse_expression, {"text": "E + A/N**alpha"},
                                 {"text": ("expression",)}),
    "AdditiveLaw.from_expr": Contract(T.AdditiveLaw.from_expr, {
        "expr": "E + A/N**alpha", "axes": ["N"], "params": None},
        {"expr": ("expr", "expression"), "params": ("params",)}),
    "ExpressionLaw": Contract(T.ExpressionLaw, {"expr": "E + A/N**alpha", "axes": ["N"],
                                                "params": {"E": (0.1, 2.0)}},
                              {"expr": ("expr", "expression")}),
    "ExpressionLaw.evaluate": Contract(
        lambda N, E: EXPR.evaluate({"N": N}, {**EXPR_PARAMS, "E": E}), {"N": 10.0, "E": 0.5},
        {"N": ("N", "values"), "E": ("E", "params")}),
    "ExpressionLaw.gradient": Contract(
        lambda N: EXPR.gradient({"N": N}, EXPR_PARAMS), {"N": 10.0}, {"N": ("N", "values")}),
    "ExpressionLaw.bind": Contract(lambda values: EXPR.bind(values).loss({"N": 10.0}),
                                   {"values": EXPR_PARAMS}, {"values": ("bind", "values")}),
    "ExpressionLaw.elasticity": Contract(lambda axis: str(EXPR.elasticity(axis)),
                                         {"axis": "N"}),
    "ExpressionLaw.inverse": Contract(lambda axis: [str(r) for r in EXPR.inverse(axis)],
                                      {"axis": "N"}),
    "ExpressionLaw.asymptote": Contract(lambda axis: str(EXPR.asymptote(axis)), {"axis": "N"}),
    "ExpressionLaw.symbol": Contract(lambda name: str(EXPR.symbol(name)), {"name": "N"}),
    "MixtureLaw": Contract(T.MixtureLaw, {"laws": [ADD, MUL], "weights": [1.0, 3.0]},
                           {"laws": ("laws",), "weights": ("weights",)}),
    "PosynomialLaw": Contract(T.PosynomialLaw, {"floor": 0.2, "terms": "2*E**-0.5",
                                                "axes": None},
                              {"terms": ("terms", "term", "posynomial")}),
    # -- the RL compute sigmoid and Gao et al.'s peaks (issue 15) --
    "ComputeSigmoid": Contract(T.ComputeSigmoid, {"asymptote": 0.6, "exponent": 1.5,
                                                  "midpoint": 1e4, "start": 0.1}),
    "ComputeSigmoid.__call__": Contract(SIG, {"compute": 1e3},
                                        oracle=lambda kw, r: _between(r, 0.1, 0.6)),
    "ComputeSigmoid.derivative": Contract(SIG.derivative, {"compute": 1e3}, oracle=_nonneg),
    "ComputeSigmoid.elasticity": Contract(SIG.elasticity, {"compute": 1e3}, oracle=_nonneg),
    "ComputeSigmoid.inverse": Contract(SIG.inverse, {"success": 0.3},
                                       oracle=lambda kw, c: np.testing.assert_allclose(
                                           0.1 + 0.5 / (1 + (1e4 / _arr(c)) ** 1.5),
                                           kw["success"], rtol=1e-9)),
    "gao_peak": Contract(T.gao_peak, {"kind": "bon", "alpha": 1.0, "beta": 0.2}),
    # -- inference budget across turns (issue 14) --
    "pass_at_k": Contract(T.pass_at_k, {"n": 20, "c": 5, "k": 4},
                          oracle=lambda kw, v: np.testing.assert_allclose(
                              v, 1 - math.comb(15, 4) / math.comb(20, 4), rtol=1e-12)
                          if (kw["n"], kw["c"], kw["k"]) == (20, 5, 4) else _nonneg(kw, v)),
    "coverage": Contract(T.coverage, {"q": 0.3, "n": 10.0}, oracle=_nonneg),
    "log_coverage": Contract(_without_zero_n(T.log_coverage), {"q": 0.3, "n": 10.0}),
    "episode_success": Contract(T.episode_success, {"turns": [TURN, TURN], "n": [2.0, 3.0]},
                                {"turns": ("turns", "n")}, oracle=_nonneg),
    "Turn": Contract(T.Turn, {"kind": "coverage", "q": 0.3}),
    "Turn.with_coverage": Contract(T.Turn.with_coverage, {"q": 0.3}),
    "Turn.with_verifier": Contract(T.Turn.with_verifier, {"q": 0.3, "fpr": 0.1, "fnr": 0.2}),
    "Turn.with_selection": Contract(T.Turn.with_selection, {"q": 0.3, "noise": 1.0}),
    "Turn.with_empirical": Contract(T.Turn.with_empirical, {"a": -1.0, "b": -0.5}),
    "Turn.success": Contract(TURN.success, {"n": 10.0}, oracle=_nonneg),
    "Turn.log_success": Contract(_without_zero_n(TURN.log_success), {"n": 10.0}),
    "Turn.log_success_range": Contract(_without_zero_n(TURN.log_success_range),
                                       {"lo": 1, "hi": 20}, {"lo": ("lo", "hi")},
                                       counts=("lo", "hi")),
    **{c: Contract(getattr(T, c), v) for c, v in KIND_TURNS.items()},
    **{f"{c}.success": Contract(getattr(T, c)(**v).success, {"n": 10.0}, oracle=_nonneg)
       for c, v in KIND_TURNS.items()},
    **{f"{c}.log_success": Contract(_without_zero_n(getattr(T, c)(**v).log_success),
                                    {"n": 10.0})
       for c, v in KIND_TURNS.items()},
    **{f"{c}.log_success_range": Contract(
        _without_zero_n(getattr(T, c)(**v).log_success_range), {"lo": 1, "hi": 20},
        {"lo": ("lo", "hi")}, counts=("lo", "hi"))
       for c, v in KIND_TURNS.items() if c != "SelectionTurn"},
    # -- the context axis (issue 27) --
    "lag_survival": Contract(T.lag_survival, {"c": 3.0, "exponent": 1.0, "min_lag": 1,
                                              "max_lag": 50.0},
                             {"min_lag": ("min_lag", "max_lag"), "max_lag": ("max_lag",
                                                                             "exponent")},
                             oracle=lambda kw, r: _between(r, 0.0, 1.0), counts=("min_lag",)),
    "window_loss": Contract(T.window_loss, {"c": 3.0, "exponent": 1.0, "min_lag": 1,
                                            "max_lag": 50.0, "choices": 4},
                            {"min_lag": ("min_lag", "max_lag"), "max_lag": ("max_lag",
                                                                            "exponent")},
                            oracle=lambda kw, r: _between(r, 0.0, 1.0),
                            counts=("min_lag", "choices")),
    "context_term": Contract(T.context_term, {"exponent": 1.0, "min_lag": 1, "choices": 4},
                             counts=("min_lag", "choices")),
    "context_cost": Contract(T.context_cost, {"environment": 20.0, "task": 2.0,
                                              "trajectory": 0.1, "context": 0.01},
                             {"environment": ("environment", "unit cost"),
                              "task": ("task", "unit cost"),
                              "trajectory": ("trajectory", "unit cost"),
                              "context": ("context", "unit cost")}),
    "ContextTurn": Contract(T.ContextTurn, {"q_one": 0.2, "q_full": 0.8, "exponent": 0.5,
                                            "base_cost": 1.0, "context_cost": 0.5,
                                            "levels": (1, 4, 16)},
                            {"q_one": ("q_one", "q_full"), "base_cost": ("base_cost", "cost"),
                             "context_cost": ("context_cost", "cost")}),
    "ContextTurn.q": Contract(CTURN.q, {"c": 4.0},
                              oracle=lambda kw, r: _between(r, 0.2, 0.8)),
    "ContextTurn.cost": Contract(CTURN.cost, {"c": 4.0}),
    "ContextTurn.at": Contract(CTURN.at, {"c": 4.0}, {"c": ("c", "cost")}),
}

for _cls_name, _method in (("SynthesisMethod", SAT), ("SynthesisMethod(relative)", REL)):
    for _name in ("effective", "marginal", "marginal_real", "price"):
        CONTRACTS[f"{_cls_name}.{_name}"] = Contract(
            getattr(_method, _name), {"real": 200.0, "synthetic": 100.0},
            oracle=_nonneg if _name != "marginal_real" else None)

for _p_name, _poly_method in (("evaluate", "evaluate"), ("term_values", "term_values"),
                              ("log_terms", "log_terms"), ("log_gradient", "log_gradient")):
    def _posy_call(E, T, _m=_poly_method):
        out = getattr(POLY, _m)({"E": E, "T": T})
        if _m in ("evaluate", "term_values"):
            return _posy_inf({"_poly": POLY, "values": {"E": E, "T": T}}, out)
        return out
    CONTRACTS[f"Posynomial.{_p_name}"] = Contract(_posy_call, {"E": 2.0, "T": 3.0})
    CONTRACTS[f"Posynomial.{_p_name}(values)"] = Contract(
        getattr(POLY, _poly_method), {"values": {"E": 2.0, "T": 3.0}})

for _cls_name, _law in LAWS.items():
    _axes = _law.axes
    _point = dict.fromkeys(_axes, 3.0)
    for _name in ("loss", "reducible", "log_loss", "elasticities", "impact_ordering",
                  *(("pass_rate",) if _cls_name == "PassRateLaw" else ()),
                  *(("term_values",) if _cls_name == "AdditiveLaw" else ())):
        _fn = getattr(_law, _name)
        CONTRACTS[f"{_cls_name}.{_name}"] = Contract(
            lambda _f=_fn, **kw: _f(**kw), dict(_point),
            oracle=_at_least_floor(_law.floor) if _name == "loss" else None)
        CONTRACTS[f"{_cls_name}.{_name}(values)"] = Contract(
            lambda values, _f=_fn: _f(values), {"values": dict(_point)},
            {"values": ("values", *_axes)})
    CONTRACTS[f"{_cls_name}.floor_at_bounds"] = Contract(
        _law.floor_at_bounds, {"upper": {_axes[0]: 10.0}}, oracle=_at_least_floor(_law.floor))
    CONTRACTS[f"{_cls_name}.floor_at_bounds(cap)"] = Contract(
        lambda cap, _l=_law: _l.floor_at_bounds({_l.axes[0]: cap}), {"cap": 10.0},
        {"cap": ("upper",)}, oracle=_at_least_floor(_law.floor),
        extras={"cap": (1e-300, 5e-324, 1e300, math.inf)})
    CONTRACTS[f"{_cls_name}.expression"] = Contract(_law.expression, {"symbolic": False})
    if _cls_name == "PassRateLaw":
        CONTRACTS["PassRateLaw.pass_rate_expression"] = Contract(
            _law.pass_rate_expression, {"symbolic": False})
    if _cls_name == "AdditiveLaw":
        CONTRACTS["AdditiveLaw.fix"] = Contract(lambda T_: ADD.fix(T=T_), {"T_": 4.0},
                                                {"T_": ("fix['T']",)})
        CONTRACTS["AdditiveLaw.fix(values)"] = Contract(ADD.fix, {"values": {"T": 4.0}},
                                                        {"values": ("values", "fix", "T")})

#: Calls without arguments: checked once for a finite result.
NO_ARGS: dict[str, Callable[[], Any]] = {
    "Monomial.axes": lambda: MONO.axes, "Monomial.label": MONO.label,
    "Posynomial.axes": lambda: POLY.axes, "Posynomial.is_monomial": lambda: POLY.is_monomial,
    "LawProperties.as_dict": ADD.properties.as_dict,
    "NestedAllocation.as_dict": lambda: T.nested_optimum(VC, 1.0, 1.0, 1.0, 10.0).as_dict(),
    "CriticalRatio.as_dict": lambda: T.critical_synthetic_ratio(REL, 10.0, 5.0).as_dict(),
    "FilterThreshold.as_dict": FILTER.as_dict, "SynthesisMethod.as_dict": SAT.as_dict,
    # issue 25: the result base's table (pandas is in the test extra)
    "NestedAllocation.to_frame": lambda: T.nested_optimum(VC, 1.0, 1.0, 1.0, 10.0).to_frame(),
    "CriticalRatio.to_frame": lambda: T.critical_synthetic_ratio(REL, 10.0, 5.0).to_frame(),
    "FilterThreshold.to_frame": FILTER.to_frame,
    "PassRateLaw.to_additive": PASS.to_additive,
    "VarianceComponentsLaw.default_bounds": VC.default_bounds,
    "VarianceComponentsLaw.variances": lambda: VC.variances,
    "reward.law": reward.law, "reward.crossover": reward.crossover,
    "reward.elasticities": reward.elasticities,
    "reward.asymptotic_regimes": reward.asymptotic_regimes,
    "reward.upper_bound_expr": reward.upper_bound_expr,
    "reward.lower_bound_expr": reward.lower_bound_expr,
    "ProvedConstants.as_dict": lambda: reward.proved_constants().as_dict(),
    "ExpressionLaw.latex": EXPR.latex, "ExpressionLaw.positive": lambda: EXPR.positive,
    "Turn.accept_rate": lambda: TURN.accept_rate, "Turn.precision": lambda: TURN.precision,
    "Turn.fallback": lambda: TURN.fallback, "Turn.sequential": lambda: TURN.sequential,
    "Turn.as_dict": TURN.as_dict, "ContextTurn.as_dict": CTURN.as_dict,
    "Turn.commits_once": lambda: TURN.commits_once,
    "VerifierTurn.retried": lambda: TURN.retried,
    **{f"{c}.{m}": (lambda c=c, v=v, m=m: getattr(getattr(T, c)(**v), m))
       for c, v in KIND_TURNS.items()
       for m in ("accept_rate", "precision", "fallback", "commits_once")},
    **{f"{c}.as_dict": getattr(T, c)(**v).as_dict for c, v in KIND_TURNS.items()},
    "ComputeSigmoid.as_dict": SIG.as_dict, "ComputeSigmoid.latex": SIG.latex,
    "ComputeSigmoid.expr": T.ComputeSigmoid.expr,
    "ComputeSigmoid.tail_power_law": SIG.tail_power_law,
}
for _cls_name, _law in LAWS.items():
    for _name in ("as_dict", "params", "reducible_posynomial", "symbols"):
        NO_ARGS[f"{_cls_name}.{_name}"] = (lambda _l=_law, _n=_name:
                                           getattr(_l, _n)() if _n != "symbols" else _l.symbols)

#: Public names with no contract of their own, and why.
EXEMPT: dict[str, str] = {
    "RlscaleError": "exception type", "SolverError": "exception type",
    "InfeasibleError": "exception type", "PosynomialError": "exception type",
    "Law": "abstract base: every method is fuzzed on each of the four concrete laws",
    "Turn.dcp_log_success": "takes the cvxpy module; fuzzed through continuous_plan (optimize)",
    **{f"{c}.dcp_log_success": "as Turn.dcp_log_success" for c in KIND_TURNS},
    **{f"{c}.{m}": "the base's builder (Turn.with_*, fuzzed there), inherited"
       for c in KIND_TURNS
       for m in ("with_coverage", "with_verifier", "with_selection", "with_empirical")},
    "SelectionTurn.log_success_range": "a quadrature per entry (~5e-5 s): 1e7 entries, the "
                                       "allowed table, take minutes; log_success is fuzzed",
    "LawProperties": "declared constants of a law family (built by the library only)",
    "CriticalRatio": "result type of critical_synthetic_ratio",
    "FilterThreshold": "result type of optimal_filter_threshold",
    "NestedAllocation": "result type of nested_optimum",
    "ExpressionError": "exception type",
    "GaoPeak": "result type of gao_peak",
    **{f"{c}.from_expr": "the same static method as AdditiveLaw.from_expr, fuzzed there"
       for c in ("Law", "MultiplicativeLaw", "PassRateLaw", "VarianceComponentsLaw",
                 "MixtureLaw", "PosynomialLaw")},
    # issue 25: the result base and the axis table
    "Result": "the result base: its surface is called on every result the examples build "
              "(tests/test_result_reprs_all.py::test_result_surface)",
    **{f"Result.{m}": "as Result" for m in ("as_dict", "to_frame")},
    "is_result": "a type test (tests/test_result_reprs_all.py)",
    **{f"GaoPeak.{m}": "inherited from Result (tests/test_result_reprs_all.py::"
                       "test_result_surface); GaoPeak is exempt above"
       for m in ("as_dict", "to_frame")},
}


# -- the tests ----------------------------------------------------------------------

def _public_names() -> set[str]:
    """Every public callable of rlscale.theory, its reward module and its classes."""
    names = set()
    for name in T.__all__:
        obj = getattr(T, name)
        if inspect.ismodule(obj):
            continue
        names.add(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, _ in inspect.getmembers(obj):
                if member.startswith("_"):
                    continue
                static = inspect.getattr_static(obj, member)
                if callable(getattr(obj, member)) or isinstance(static, property):
                    names.add(f"{name}.{member}")
    for name in reward.__all__:
        obj = getattr(reward, name)
        if callable(obj) and not isinstance(obj, sp.Basic):
            names.add(f"reward.{name}")
    return names


def _covered() -> set[str]:
    base = {k.split("(")[0] for k in CONTRACTS} | set(NO_ARGS) | set(EXEMPT)
    # the abstract base's methods are covered through each concrete law
    return base | {f"Law.{m.split('.', 1)[1]}" for m in base if m.startswith("AdditiveLaw.")}


def test_every_public_name_has_a_contract() -> None:
    missing = sorted(_public_names() - _covered())
    assert not missing, f"public names without a contract entry in {__name__}: {missing}"


def test_the_registry_is_large() -> None:
    # the closing note cites these numbers
    assert len(_public_names() - set(EXEMPT)) >= 120
    assert len(CONTRACTS) >= 120


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_valid_call_succeeds(name: str) -> None:
    c = CONTRACTS[name]
    result = c.call(**c.valid)
    assert_finite(result)
    if c.oracle is not None:
        c.oracle(c.valid, result)


@pytest.mark.parametrize("name", sorted(n for n in CONTRACTS if CONTRACTS[n].valid))
def test_contract(name: str) -> None:
    c = CONTRACTS[name]
    args = sorted(c.valid)

    floor = int(os.environ.get("RLSCALE_CONTRACT_MIN_EXAMPLES", "0"))  # issue 22
    @settings(max_examples=max(floor, min(_EXAMPLES, c.examples or _EXAMPLES)))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        arg = data.draw(st.sampled_from(args), label="argument")
        extra = c.extras.get(arg, ())
        value = data.draw(hostile_counts(*extra) if arg in c.counts else hostile(*extra),
                          label="value")
        kwargs = {**c.valid, arg: value}
        oracle = None if c.oracle is None else (lambda r: c.oracle(kwargs, r))
        check_contract(lambda: c.call(**kwargs), c.names(arg), oracle=oracle)

    run()


@pytest.mark.parametrize("name", sorted(NO_ARGS))
def test_no_argument_calls_are_finite(name: str) -> None:
    assert_finite(NO_ARGS[name]())
