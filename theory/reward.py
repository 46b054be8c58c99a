r"""The reward-optimisation law ``G(M, K) = Θ(sqrt(min{log M, K}))``: rlscale's model.

The seed paper's model and constants are not public, so rlscale states its
**own** selection model, computes its gain exactly, and proves explicit
constants for it.  Everything below is about this model; nothing here is a
claim about the paper's constants.

**Scope: a theorem of this model.**  The band ``C_LO·sqrt(L) <= G <= C_HI·sqrt(L)``
below is proved for the anchor-comparison pool model only.  Its ``log M`` cap
comes from one assumption: each candidate's proxy is estimated from its own
comparisons, so the proxy error ``σ_n² = κτ²n/M`` grows with the pool the
optimiser selects from (the proxy never generalises beyond it).  A proxy
whose error does not grow with ``n`` — a linear reward model on ``d`` fixed
features fitted from ``M`` comparisons
(``rlscale.simulate._generalising_proxy``) — gives ``G ≈ ρ(M)·sqrt(2K)`` with
``ρ(M) → 1``: no cap.  Whether a cap appears for learned reward models is an
empirical question, tested in the RL trainer by ``rlscale verify reward-law
--trainer``.

The model
---------
* **Gold rewards.**  Under the reference policy, candidates have gold rewards
  ``X ~ N(0, 1)``, iid.
* **Feedback: the anchor comparison scheme.**  ``M`` comparisons are spread
  evenly over a pool of ``n`` candidates; each compares a candidate with a
  fixed anchor response whose gold reward is 0 and reports a noisy margin
  ``d = X_i − 0 + τ ε`` with ``ε ~ N(0, 1)`` (Thurstone's Case V with observed
  margins; ``τ`` is the *noise level*).  With ``m = M/n`` comparisons per
  candidate, the least-squares (= maximum-likelihood) proxy is the mean
  margin, so ``Ŷ_i = X_i + σ_n Z_i`` with

  .. math::  σ_n^2 = κ τ^2 n / M, \qquad κ = 1 \text{ (exactly)} .

  Real ``n`` and fractional ``M/n`` are allowed in the model (the formula is
  the continuous extension).  Binary Bradley–Terry outcomes
  ``P(win) = 1/(1 + e^{-X/s})`` give the same law asymptotically with
  ``κ_BT = 4 s^2/τ^2`` (Fisher information ``p(1-p)/s^2 = 1/(4 s^2)`` at
  ``p = 1/2``), i.e. ``τ = 2s``; the brute-force simulator checks this, see
  :mod:`rlscale.simulate`.
* **Optimisation within KL <= K** on the pool, using the proxy only (each rule
  is an object in :data:`RULES` that declares its KL, its pool limit and its
  pool gain, :mod:`rlscale.theory._selection_rules`):

  ``bon`` — best-of-n (real ``n >= 1``): KL ``log n − (n−1)/n``;
  gold gain ``e(n)/sqrt(1 + σ_n²)``.

  ``quantile`` — a quantilizer: the reference conditioned on the proxy lying
  in its top ``1/n`` fraction (``n`` candidates scored per output on
  average): KL ``log n``; gold gain ``n φ(Φ⁻¹(1 − 1/n))/sqrt(1 + σ_n²)``.

  ``tilt`` — exponential tilting of the proxy, the KL-regularised optimum.
  For the standardised proxy ``s = Ŷ/sqrt(1 + σ_n²) ~ N(0, 1)`` the tilted law
  is ``N(β, 1)`` at KL ``β²/2``; a policy that picks among ``n`` candidates
  has density ratio ``<= n`` and hence KL ``<= log n``.  So the tilt on a pool
  of size ``n`` reaches standardised gain ``sqrt(2 min(K, log n))`` and gold
  gain ``sqrt(2 min(K, log n)/(1 + σ_n²))``.  This is *idealised* (the
  tilted law is treated as realisable from ``n`` draws); it equals the
  upper bound below, i.e. it is the best any selection rule can do.

  Gold gain given the proxy uses ``E[X | Ŷ] = Ŷ/(1 + σ²)`` (regressional
  Goodhart), so for *any* rule that selects one of the ``n`` candidates from
  their proxies, gold gain ``= E[s_sel]/sqrt(1 + σ_n²)``.
* **The gain** ``G(M, K) = sup_n gain_method(n)`` over the pool sizes (and
  temperatures) allowed by ``K``; computed by :func:`gain`.  Expected shape:
  ``≈ sqrt(2K)`` while ``e^K ≪ M``, saturating near ``sqrt(2 log M)``.

The exact upper envelope (all methods)
--------------------------------------
With ``a = κτ²/M``, any selection rule over a pool of ``n`` has
``E[s_sel] <= e(n) <= sqrt(2 log n)`` and, by Donsker–Varadhan for the
1-sub-Gaussian ``s``, ``E[s_sel] <= sqrt(2 KL) <= sqrt(2K)``.  Hence
``gain_n <= sqrt(2 min(K, log n)/(1 + a n))``.  For ``n >= e^K`` the bound
decreases in ``n``, so ``G <= U(M, K) = max_{1<=n<=e^K} sqrt(2 log n/(1 + a n))``.
``f(n) = log n/(1 + a n)`` is unimodal; ``f'(n) = 0`` iff
``log n = 1 + 1/(a n)``, solved by ``n* = 1/(a W(z))`` with ``z = M/(e κ τ²)``
and ``W`` the Lambert function, where ``log n* = 1 + W(z)`` and
``f(n*) = W(z)``.  Therefore (:func:`gain_upper`)

.. math::

    U(M, K) = \begin{cases}
        \sqrt{2K / (1 + a e^K)} & K \le K^* = 1 + W(z) \\
        \sqrt{2 W(z)} & K \ge K^*
    \end{cases}
    \;\le\; \sqrt{2 \min(K, K^*)} .

Proved constants ``C_LO`` and ``C_HI``
--------------------------------------
Domain ``D``: ``M >= M_MIN = 10``, ``K > 0``, ``TAU_MIN = 1/2 <= τ <= TAU_MAX = 2``
(``κ = 1``).  Write ``L = min(log M, K)``.  Then for best-of-n and tilting
(every ``K > 0``) and for the quantilizer (``K >= 1/2``; see the limit below)

.. math::  C_{LO} \sqrt{L} \;\le\; G(M, K) \;\le\; C_{HI} \sqrt{L} .

*Upper, step by step.*
(U1) ``G <= sqrt(2 min(K, K*))`` (envelope above).
(U2) ``W(z) <= log(1 + z)`` for ``z >= 0`` (``W`` increasing and
``log(1+z) e^{log(1+z)} = (1+z) log(1+z) >= z``).
(U3) so ``K* <= 1 + log(1 + M/(e τ_min²))``.
(U4) ``g(M) = (1 + log(1 + M/(e τ_min²)))/log M`` is decreasing on ``M >= 10``:
numerator's derivative ``1/(M + e τ_min²) < 1/M``, so
``g' <= (log M − numerator)/(M log² M) < 0`` because the numerator
exceeds ``log M`` when ``e τ_min² < e``.  Let ``ρ = g(M_MIN) = 1.6306...``
(``>= 1``).
(U5) ``min(K, K*) <= min(K, ρ log M) <= ρ min(K, log M)``.
(U6) ``C_HI = sqrt(2ρ) = sqrt(2 (1 + log(1 + 40/e))/log 10) = 1.80589...``.

*Lower, step by step* (achieved by best-of-n; the tilt does at least as
well since it is the envelope; the quantilizer for ``K >= 1/2`` by (Q)).
(L1) Case ``K <= 1/2``: take ``n = 1 + sqrt(2K) ∈ [1, 2]``.  Its KL
``log n − 1 + 1/n <= (n−1)²/2 = K`` (the derivative ``(n−1)/n² <= n−1``).
``e`` is concave (``e'' = −∫Φ^n log²Φ < 0``) with ``e(1) = 0``,
``e(2) = 1/sqrt(π)``, so ``e(n) >= (n−1)/sqrt(π) = sqrt(2K/π)``.  Noise:
``a n <= 2 τ_max²/M_MIN = 0.8``.  And ``L = K`` since ``log 10 > 1/2``.  So
``G >= sqrt(2/(π · 1.8)) sqrt(L) = 0.59471... sqrt(L)``.
(L2) Case ``K >= 1/2``: let ``x = min(e^K, M/τ²)`` and ``n = max(2, floor(x))``
(an integer).  Feasible: if ``n <= x`` then ``KL <= log n <= K``; if ``n = 2``
then ``KL = log 2 − 1/2 < 1/2 <= K``.  Noise: ``a n <= 1`` if ``n <= M/τ²``,
else ``n = 2`` and ``a n <= 0.8``; so ``sqrt(1 + a n) <= sqrt 2``.
(L3) Kamath's bound for integers: ``e(n) >= sqrt(log n/(π log 2))``.
(L4) ``log n >= (log x)/2``: if ``x < 4`` then ``log n >= log 2 > (log x)/2``;
if ``x >= 4`` then ``floor(x) >= x − 1 >= sqrt(x)``.
(L5) ``log x = min(K, log M − 2 log τ) >= θ min(K, log M)`` with
``θ = 1 − 2 log(τ_max)/log(M_MIN) = 0.39794...`` (as ``log M >= log 10``).
(L6) So ``G >= e(n)/sqrt 2 >= sqrt(θ L/(4 π log 2))``, i.e.
``0.21374... sqrt(L)``.
(L7) ``C_LO = min(0.59471..., 0.21374...) = 0.21374...``.
(Q) Quantilizer, ``K >= 1/2``.  Its KL is ``log n``, so the pool of (L2)
must also satisfy ``n <= e^K``; ``n = 2`` breaks that when
``1/2 <= K < log 2``.  If ``x >= 2``, take ``n = floor(x) <= x <= e^K``:
(L2)–(L6) go through because ``q(n) = n φ(Φ⁻¹(1−1/n)) >= e(n)`` (``E[max]``
weights the quantile function ``Φ⁻¹(u)`` by the density ``n u^{n−1} <= n``
on ``[0, 1]``; the top-``1/n`` mean puts the largest such density, ``n``,
on the largest values).  If ``x < 2`` then ``e^K < 2 < M/τ²`` (as
``M/τ² >= M_MIN/τ_max² = 2.5``), so ``x = e^K``; take the real pool
``n = x ∈ [e^{1/2}, 2)``: KL ``= K``, ``a n <= 1``, and ``q`` increasing gives
``G >= q(e^{1/2})/sqrt 2 = 0.44841... >= C_LO sqrt(log 2) >= C_LO sqrt(L)``.
The floats: ``C_HI`` is ``sqrt(2ρ)`` rounded up to the next float and
``C_LO`` the exact minimum rounded down (:func:`proved_constants` evaluates
both at 50 digits), so the published floats are themselves valid bounds.

*A documented limit.*  The quantilizer is **not** ``Θ(sqrt K)`` as
``K → 0``: keeping the top ``q = e^{-K}`` fraction gains
``φ(Φ⁻¹(1−q))/q ~ K sqrt(2 log(1/K))``, so its band is ``[C_LO, C_HI]`` only
on ``K >= 1/2`` (on the verification grid, ``K >= 0.05``, it stays above
0.45).  Best-of-n's KL ``~ (n−1)²/2`` near ``n = 1`` is what gives it the
``sqrt K`` start.

The proved band is loose on purpose (simple, checkable steps); the measured
band over the verification grid is much tighter (see
``rlscale verify reward-law``).  :func:`proved_constants` recomputes both
constants for another domain.

Examples
--------
>>> from rlscale.theory import reward
>>> round(reward.C_LO, 5), round(reward.C_HI, 5)
(0.21374, 1.80589)
>>> g = reward.gain(1e6, [0.5, 5.0, 50.0], noise=1.0, method="bon")
>>> [round(float(v), 4) for v in g]
[0.9112, 2.9695, 4.1811]
>>> reward.law()
sqrt(Min(K, log(M)))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._gao import gao_bon, gao_rl  # noqa: F401  (re-exported)
from rlscale.theory._result import Result
from rlscale.theory._reward_inverse import (  # noqa: F401  (re-exported)
    comparisons_needed,
    comparisons_needed_theta,
    kl_needed,
    kl_needed_theta,
)
from rlscale.theory._selection_rules import (
    KAPPA,
    RULES,
    envelope_pool,
    log_noise_factor,
    rule_for,
    shrink,
)
from rlscale.theory._validation import check_finite_result, check_real, check_scalar, return_like

#: Domain of the proved band.
M_MIN = 10.0
TAU_MIN = 0.5
TAU_MAX = 2.0
#: Optimisation methods with an exact gain in this module: the names of :data:`RULES`.
METHODS = tuple(RULES)

#: Names loaded on first use from the module that defines them (sympy and mpmath
#: stay unimported until a symbolic name is asked for).
_LAZY = {
    **dict.fromkeys(("K", "M", "asymptotic_regimes", "crossover", "elasticities", "inverses",
                     "latex", "law", "law_piecewise", "lower_bound_expr", "to_numpy",
                     "upper_bound_expr"), "rlscale.theory._reward_symbolic"),
    "gao_expr": "rlscale.theory._gao",
}


__all__ = sorted([
    "C_HI", "C_LO", "KAPPA", "METHODS", "M_MIN", "RULES", "TAU_MAX", "TAU_MIN",
    "comparisons_needed", "comparisons_needed_theta", "gain", "gain_at_pool", "gain_upper",
    "gao_bon", "gao_rl", "kl_needed", "kl_needed_theta", "lower_bound", "noise_variance",
    "optimal_pool_size", "proved_constants", "upper_bound", *_LAZY,
])


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


@dataclass(frozen=True)
class ProvedConstants(Result):
    """The proved band ``c_lo sqrt(L) <= G <= c_hi sqrt(L)`` and its ingredients."""

    c_lo: float
    c_hi: float
    c_lo_small_k: float
    c_lo_large_k: float
    rho: float
    theta: float
    m_min: float
    tau_min: float
    tau_max: float


def proved_constants(
    m_min: float = M_MIN, tau_min: float = TAU_MIN, tau_max: float = TAU_MAX
) -> ProvedConstants:
    """Constants of the proved band on ``M >= m_min``, ``tau_min <= τ <= tau_max``, ``K > 0``.

    Follows steps (U1)–(U6) and (L1)–(L7) of the module docstring.  Needs
    ``m_min > 2 tau_max²`` (so that ``n = 2`` fits the lower-bound construction)
    and ``m_min > max(1, tau_max²)`` (so that ``θ > 0``).

    Examples
    --------
    >>> pc = proved_constants()
    >>> round(pc.rho, 4), round(pc.theta, 4)
    (1.6306, 0.3979)
    >>> round(proved_constants(m_min=1e4, tau_min=1.0, tau_max=1.0).c_hi, 4)
    1.4142
    """
    m_min = check_scalar("m_min", m_min, low=1.0, low_open=True)
    tau_min = check_scalar("tau_min", tau_min, low=0.0, low_open=True)
    tau_max = check_scalar("tau_max", tau_max, low=0.0, low_open=True)
    if tau_max < tau_min:
        raise ValueError(f"tau_max must be >= tau_min; got tau_min={tau_min:g}, "
                         f"tau_max={tau_max:g}")
    if tau_max >= math.sqrt(m_min / 2.0):  # m_min <= 2 tau_max², without overflowing
        raise ValueError(
            f"m_min must be > 2*tau_max**2 = {2 * tau_max**2 if tau_max < 1e150 else math.inf:g}"
            f"; got m_min={m_min:g}"
        )
    # (U4) needs 1 + log(1 + M/(e tau_min^2)) > log M, true for tau_min <= 1.
    if tau_min > 1.0:
        raise ValueError(f"tau_min must be <= 1 for step (U4); got tau_min={tau_min:g}")
    if math.log(m_min) < 0.5:  # (L1) needs L = K for K <= 1/2
        raise ValueError(f"m_min must be >= e^0.5; got m_min={m_min:g}")
    # Exact values at 50 digits from the (exactly representable) float inputs,
    # then rounded outward, so the published floats are themselves valid bounds.
    import mpmath  # only here: importing the module stays light

    with mpmath.workdps(50):
        mf, lo_t, hi_t = mpmath.mpf(m_min), mpmath.mpf(tau_min), mpmath.mpf(tau_max)
        log_m = mpmath.log(mf)
        rho = max(mpmath.mpf(1), (1 + mpmath.log1p(mf / (mpmath.e * lo_t**2))) / log_m)
        theta = 1 - 2 * max(mpmath.log(hi_t), 0) / log_m
        small = mpmath.sqrt(2 / (mpmath.pi * (1 + 2 * mpmath.mpf(KAPPA) * hi_t**2 / mf)))
        large = mpmath.sqrt(theta / (4 * mpmath.pi * mpmath.log(2)))
        c_lo = _round_outward(min(small, large), up=False)
        c_hi = _round_outward(mpmath.sqrt(2 * rho), up=True)
    return ProvedConstants(c_lo, c_hi, float(small), float(large), float(rho), float(theta),
                           m_min, tau_min, tau_max)


def _round_outward(exact: Any, *, up: bool) -> float:
    """The nearest float on the safe side of ``exact`` (an mpmath number): ``>=`` if ``up``.

    ``float()`` rounds to nearest, which lands on the wrong side about half of
    the time (it did for both default constants).  The margin ``1e-40``
    relative exceeds mpmath's error at 50 digits and is far below a float ulp.
    """
    import mpmath

    value = float(exact)
    margin = abs(exact) * mpmath.mpf(10) ** -40
    if up and value < exact + margin:
        value = math.nextafter(value, math.inf)
    elif not up and value > exact - margin:
        value = math.nextafter(value, -math.inf)
    return value


#: Proved lower constant on the default domain (step L7): ``proved_constants().c_lo``,
#: written out so that importing this module needs no mpmath (the tests recompute it
#: at 50 digits and check the two are the same float).
C_LO: float = 0.21374262563509663
#: Proved upper constant on the default domain (step U6): ``proved_constants().c_hi``.
C_HI: float = 1.8058869159602562


# --------------------------------------------------------------------------- numeric


def _check_mk(m: Any, k: Any, noise: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mm = check_real("M", m, low=1.0)
    kk = check_real("K", k, low=0.0)
    tt = check_real("noise", noise, low=0.0)
    return _broadcast(M=mm, K=kk, noise=tt)


def _broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """``np.broadcast_arrays`` with an error that names the arguments."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"the shapes of {shapes} do not broadcast together") from None


def noise_variance(n: Any, m: Any, noise: Any = 1.0) -> float | np.ndarray:
    """Proxy-error variance ``σ_n² = KAPPA τ² n / M`` of the anchor scheme.

    Examples
    --------
    >>> noise_variance(100, 1e4, noise=2.0)
    0.04
    """
    nn = check_real("n", n, low=1.0)
    mm = check_real("M", m, low=1.0)
    tt = check_real("noise", noise, low=0.0)
    _broadcast(n=nn, M=mm, noise=tt)
    with np.errstate(over="ignore", invalid="ignore"):
        var = KAPPA * tt * tt * nn / mm
        # Where τ² or τ²n overflow, log space; a variance beyond 1.8e308 is refused.
        var = np.where(np.isfinite(var), var, np.exp(log_noise_factor(mm, tt) + np.log(nn)))
    check_finite_result(var, "the noise variance", n=n, M=m, noise=noise)
    return return_like(var, n, m, noise)


def gain_at_pool(n: Any, m: Any, noise: Any = 1.0, method: str = "bon",
                 K: Any = np.inf) -> float | np.ndarray:
    """Gold gain of ``method`` on a pool of size ``n`` (KL at most ``K`` for ``tilt``).

    ``bon``: ``e(n)/sqrt(1+σ_n²)``; ``quantile``: ``n φ(Φ⁻¹(1−1/n))/sqrt(1+σ_n²)``;
    ``tilt``: ``sqrt(2 min(K, log n)/(1+σ_n²))``.

    Examples
    --------
    >>> round(gain_at_pool(2, 1e9, noise=0.0), 6)
    0.56419
    """
    rule = rule_for(method)
    nn = check_real("n", n, low=1.0)
    mm = check_real("M", m, low=1.0)
    tt = check_real("noise", noise, low=0.0)
    kk = check_real("K", K, low=0.0, allow_inf=True)
    _broadcast(n=nn, M=mm, noise=tt, K=kk)
    return return_like(rule.top(nn, kk) * shrink(np.log(nn), mm, tt), n, m, noise, K)


def gain_upper(m: Any, k: Any, noise: Any = 1.0) -> float | np.ndarray:
    """Exact envelope ``U(M, K)``: the best gold gain of any selection rule (= ``tilt``).

    Closed form via the Lambert function, see the module docstring.

    Examples
    --------
    >>> round(gain_upper(1e300, 2.0, noise=1.0), 6)  # sqrt(2K): data is plentiful
    2.0
    >>> round(gain_upper(100, 50.0, noise=1.0) ** 2 / 2, 6)  # W(100/e)
    2.635933
    """
    mm, kk, tt = _check_mk(m, k, noise)
    return return_like(envelope_pool(mm, kk, tt)[1], m, k, noise)


def gain(m: Any, k: Any, noise: Any = 1.0, method: str = "bon") -> float | np.ndarray:
    """The gold gain ``G(M, K)`` of ``method`` in rlscale's selection model.

    ``G = sup`` over pool sizes ``n`` allowed by the KL budget of the method's
    gold gain on that pool (see the module docstring).  ``K = 0`` gives 0.

    Parameters
    ----------
    m : array_like
        Number of comparisons ``M >= 1``.
    k : array_like
        KL budget ``K >= 0``.
    noise : array_like
        Comparison noise level ``τ >= 0``.
    method : {"bon", "quantile", "tilt"}

    Examples
    --------
    >>> round(gain(1e4, 2.0, method="tilt"), 6) == round(gain_upper(1e4, 2.0), 6)
    True
    >>> gain(1e4, 0.0)
    0.0
    """
    rule = rule_for(method)
    mm, kk, tt = _check_mk(m, k, noise)
    return return_like(np.where(kk > 0, rule.optimise(mm, kk, tt)[1], 0.0), m, k, noise)


def optimal_pool_size(m: Any, k: Any, noise: Any = 1.0, method: str = "bon"
                      ) -> float | np.ndarray:
    """The pool size ``n`` attaining :func:`gain` (``inf`` past the float range).

    Examples
    --------
    >>> round(optimal_pool_size(1e300, 3.0, method="tilt"), 6)  # e^K
    20.085537
    """
    rule = rule_for(method)
    mm, kk, tt = _check_mk(m, k, noise)
    t = rule.optimise(mm, kk, tt)[0]
    with np.errstate(over="ignore"):  # n beyond 1.8e308 (K > ~709, tiny noise) is inf
        return return_like(np.exp(np.where(kk > 0, t, 0.0)), m, k, noise)


def lower_bound(m: Any, k: Any) -> float | np.ndarray:
    """Proved lower bound ``C_LO sqrt(min(log M, K))`` (domain ``D``).

    Examples
    --------
    >>> round(lower_bound(1e6, 100.0), 4)
    0.7945
    """
    mm, kk, _ = _check_mk(m, k, 0.0)
    return return_like(C_LO * np.sqrt(np.minimum(np.log(mm), kk)), m, k)


def upper_bound(m: Any, k: Any) -> float | np.ndarray:
    """Proved upper bound ``C_HI sqrt(min(log M, K))`` (domain ``D``).

    Examples
    --------
    >>> round(upper_bound(1e6, 100.0), 4)
    6.7123
    """
    mm, kk, _ = _check_mk(m, k, 0.0)
    return return_like(C_HI * np.sqrt(np.minimum(np.log(mm), kk)), m, k)
