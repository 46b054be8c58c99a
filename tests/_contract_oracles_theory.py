"""Independent oracles for the theory contract suite (tests/test_contracts_theory.py):
math written out here, never the function under test, and the oracles that decide
when a documented ``inf`` is the right answer.  Split from the suite to keep each file
small; the registry that uses them stays there."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rlscale.theory import reward

LOG_MAX = math.log(np.finfo(float).max)  # 709.78


def _arr(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# -- independent oracles (math only, never the function under test) --------------

def _kamath(kw: dict, e: Any) -> None:
    """Kamath: 0 <= e(n) <= sqrt(2 log n); sqrt(log n/(pi log 2)) <= e(n) for n >= 2."""
    n, e = _arr(kw["n"]), _arr(e)
    ln = np.log(n)
    assert np.all(e >= -1e-15) and np.all(e <= np.sqrt(2 * ln) * (1 + 1e-12) + 1e-15)
    lo = np.where(n >= 2, np.sqrt(ln / (math.pi * math.log(2))), 0.0)
    assert np.all(e >= lo * (1 - 1e-12))


def _kamath_log(kw: dict, e: Any) -> None:
    t, e = _arr(kw["log_n"]), _arr(e)
    assert np.all(e >= -1e-15) and np.all(e <= math.sqrt(2) * np.sqrt(t) * (1 + 1e-12) + 1e-15)


def _envelope(k_name: str) -> Callable[[dict, Any], None]:
    """Any selection gain is at most sqrt(2K) (Donsker–Varadhan), and >= 0."""
    def check(kw: dict, g: Any) -> None:
        k = np.broadcast_to(_arr(kw[k_name]), np.shape(g))
        assert np.all(_arr(g) >= 0)
        assert np.all(_arr(g) <= math.sqrt(2) * np.sqrt(k) * (1 + 1e-12) + 1e-300)
    return check


def _gain_oracle(kw: dict, g: Any) -> None:
    _envelope("k")(kw, g)
    # the proved band on its domain (M >= 10, 1/2 <= tau <= 2; quantile from K >= 1/2)
    m, k, tau = np.broadcast_arrays(_arr(kw["m"]), _arr(kw["k"]), _arr(kw["noise"]))
    ok = (m >= 10) & (tau >= 0.5) & (tau <= 2) & (k > (0.5 if kw["method"] == "quantile"
                                                       else 1e-300))
    if np.any(ok):
        r = np.sqrt(np.minimum(np.log(m), k))[ok]
        gg = np.broadcast_to(_arr(g), m.shape)[ok]
        assert np.all(gg >= reward.C_LO * r) and np.all(gg <= reward.C_HI * r)


def _regressional_oracle(kw: dict, g: Any) -> None:
    # e(n)/sqrt(1 + s^2): undo the shrinkage and check Kamath's bounds on e(n)
    _kamath({"n": kw["n"]}, _arr(g) * np.hypot(1.0, _arr(kw["noise_sd"])))


def _band(c: float) -> Callable[[dict, Any], None]:
    """``c sqrt(min(log M, K))`` computed here."""
    def check(kw: dict, v: Any) -> None:
        want = c * np.sqrt(np.minimum(np.log(_arr(kw["m"])), _arr(kw["k"])))
        np.testing.assert_allclose(v, want, rtol=1e-15)
    return check


def _nonneg(kw: dict, v: Any) -> None:
    assert np.all(_arr(v) >= 0)


def _bon_kl_oracle(kw: dict, v: Any) -> None:
    n = _arr(kw["n"])
    assert np.all(_arr(v) >= 0) and np.all(_arr(v) <= np.log(n) * (1 + 1e-12) + 1e-300)


def _bon_n_oracle(kw: dict, n: Any) -> None:
    k, n = _arr(kw["kl"]), _arr(n)
    # KL(n) = log n - 1 + 1/n, so log n lies in [kl, kl + 1]
    assert np.all(n >= 1) and np.all(np.log(n) <= k + 1 + 1e-9)
    assert np.all(np.log(n) >= k * (1 - 1e-9) - 1e-12)


def _chinchilla_oracle(kw: dict, nd: Any) -> None:
    n, d = nd
    want = math.log(kw["compute"]) - math.log(kw["flops_per_param_token"])
    assert math.isclose(math.log(n) + math.log(d), want, rel_tol=1e-9, abs_tol=1e-9)


def _uniform_filter_oracle(kw: dict, tau: float) -> None:
    # tau solves tau (c_g + c_t (1 - tau)) = c_t (1 - tau^2)/2 on [0, 1] (U(0, 1) quality)
    c_g, c_t = float(kw["gen_cost"]), float(kw["train_cost"])
    assert 0.0 <= tau <= 1.0
    scale = max(c_g, c_t)
    h = tau * (c_g / scale + c_t / scale * (1 - tau)) - c_t / scale * (1 - tau * tau) / 2
    assert abs(h) <= 1e-9


def _shares_oracle(kw: dict, shares: dict) -> None:
    assert math.isclose(sum(shares.values()), 1.0, rel_tol=1e-12)
    assert all(0.0 <= s <= 1.0 for s in shares.values())


def _noise_variance_oracle(kw: dict, v: Any) -> None:
    n, m, tau = (_arr(kw[a]) for a in ("n", "m", "noise"))
    with np.errstate(divide="ignore"):
        want = 2 * np.log(tau) + np.log(n) - np.log(m)
    got = _arr(v)
    pos = got > 1e-300
    assert np.allclose(np.log(got[pos]), np.broadcast_to(want, got.shape)[pos], rtol=1e-12,
                       atol=1e-12)


def _totals_oracle(kw: dict, tot: dict) -> None:
    e, t, k = (_arr(kw[a]) for a in ("E", "t", "k"))
    assert np.allclose(_arr(tot["tasks"]), e * t, rtol=1e-15)
    assert np.allclose(_arr(tot["trajectories"]), e * t * k, rtol=1e-15)


def _bounds_oracle(kw: dict, lo_hi: Any) -> None:
    lo, hi = (_arr(x) for x in lo_hi)
    assert np.all(lo <= hi * (1 + 1e-12) + 1e-300) and np.all(lo >= 0)


def _at_least_floor(floor: float) -> Callable[[dict, Any], None]:
    def check(kw: dict, v: Any) -> None:
        assert np.all(_arr(v) >= floor * (1 - 1e-15))
    return check


def _nested_optimum_oracle(kw: dict, opt: Any) -> None:
    # cost of the allocation equals the budget (c_E E + c_T E t + c_tau E t k = B)
    law = kw["law"]
    e, t, k = (opt.values[a] for a in law.axes)
    cost = kw["c_env"] * e + kw["c_task"] * e * t + kw["c_traj"] * e * t * k
    if math.isfinite(cost):
        assert math.isclose(cost, kw["budget"], rel_tol=1e-9)
    assert t >= 1 - 1e-12 and k >= 1 - 1e-12


# -- documented infinities: allowed only where an oracle says inf is right ------

def _comparisons_inf(kw: dict, v: Any) -> Any:
    v = _arr(v)
    with np.errstate(over="ignore"):
        need = (_arr(kw["target"]) / float(kw["c"])) ** 2
        ok = (need > _arr(kw["k"])) | (need > LOG_MAX)
    assert np.all(np.isfinite(v) | np.broadcast_to(ok, v.shape)), "unexplained inf"
    return np.where(np.isinf(v), 0.0, v)


def _kl_needed_inf(kw: dict, v: Any) -> Any:
    with np.errstate(over="ignore"):
        need = (_arr(kw["target"]) / float(kw["c"])) ** 2
    v = _arr(v)
    ok = np.broadcast_to(need > np.log(_arr(kw["m"])), v.shape)
    assert np.all(np.isfinite(v) | ok), "unexplained inf"
    return np.where(np.isinf(v), 0.0, v)


def _pool_inf(kw: dict, v: Any) -> Any:
    # n <= e^{K+1} for every method; inf only where that can pass the float range
    v = _arr(v)
    ok = np.broadcast_to(_arr(kw["k"]) + 1 > LOG_MAX, v.shape)
    assert np.all(np.isfinite(v) | ok), "unexplained inf"
    return np.where(np.isinf(v), 0.0, v)


def _posy_inf(kw: dict, v: Any) -> Any:
    """inf only at a zero value under a negative power or a true overflow (log space)."""
    p, values = kw["_poly"], kw["values"]
    v = _arr(v)
    if np.all(np.isfinite(v)):
        return v
    logs = []
    for m in p.terms:
        s = math.log(m.coefficient)
        for a, e in m.exponents:
            x = float(values[a])
            s += (-math.inf if e > 0 else math.inf) if x == 0 else e * math.log(x)
        logs.append(s)
    assert max(logs) > LOG_MAX - 1, f"inf where the log value is {max(logs)}"
    return np.zeros_like(v)


def _critical_inf(kw: dict, c: Any) -> Any:
    m, real = kw["method"], kw.get("real")
    if not (math.isfinite(c.ratio) and math.isfinite(c.amount)):
        assert m.kind == "linear" or real is None, "inf ratio outside the documented cases"
    assert c.ratio >= 0 and c.amount >= 0
    return [x if math.isfinite(x) else 0.0 for x in (c.ratio, c.amount)]


# -- round trips and log-probabilities ----------------------------------------------

def _between(r: Any, lo: float, hi: float) -> None:
    r = _arr(r)
    assert np.all((r >= lo - 1e-12) & (r <= hi + 1e-12))


def _round_trip(kw: dict, gain: Any) -> None:
    """The exact inverse reaches its target: gain at the returned value equals it."""
    np.testing.assert_allclose(gain, kw["target"], rtol=1e-9)


def _round_trip_or_one(kw: dict, m: Any, gain: Any) -> None:
    """comparisons_needed: the gain at M equals the target, or M = 1 already reaches it
    (noise 0: the gain does not depend on M; found by the dev profile, noise=0)."""
    if np.all(_arr(m) == 1.0):
        assert np.all(_arr(gain) >= _arr(kw["target"]) * (1 - 1e-9))
    else:
        _round_trip(kw, gain)


def _log_p_oracle(kw: dict, logp: Any) -> None:
    """log p(n) <= 0, and -inf exactly where n = 0 or q = 0 (no success possible)."""
    n = np.arange(kw["lo"], kw["hi"] + 1) if "lo" in kw else _arr(kw["n"])
    q = _arr(kw.get("q", 0.3))
    logp = _arr(logp)
    assert np.all(logp <= 1e-15)
    assert np.array_equal(np.isneginf(logp), np.broadcast_to((n == 0) | (q == 0), logp.shape))


def _without_zero_n(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Check log p at n = 0 is -inf (documented), then return the finite rest."""
    def call(**kw: Any) -> Any:
        out = fn(**kw)
        _log_p_oracle(kw, out)
        arr = _arr(out)
        return arr[np.isfinite(arr)]
    return call
