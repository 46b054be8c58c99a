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
* **Optimisation within KL <= K** on the pool, using the proxy only:

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

import mpmath
import numpy as np
import sympy as sp
from scipy.special import lambertw

from rlscale.theory._gaussian import (
    _bon_log_n_for_kl,
    _quantile_mean_log,
    expected_max_normal,
    expected_max_normal_log,
    quantile_mean_normal,
)
from rlscale.theory._validation import check_finite_result, check_real, check_scalar, return_like

__all__ = [
    "C_HI",
    "C_LO",
    "KAPPA",
    "METHODS",
    "M_MIN",
    "TAU_MAX",
    "TAU_MIN",
    "K",
    "M",
    "asymptotic_regimes",
    "comparisons_needed",
    "crossover",
    "elasticities",
    "gain",
    "gain_at_pool",
    "gain_upper",
    "gao_bon",
    "gao_expr",
    "gao_rl",
    "inverses",
    "kl_needed",
    "latex",
    "law",
    "law_piecewise",
    "lower_bound",
    "lower_bound_expr",
    "noise_variance",
    "optimal_pool_size",
    "proved_constants",
    "to_numpy",
    "upper_bound",
    "upper_bound_expr",
]

#: Positive symbols: comparisons ``M`` and KL budget ``K``.
M, K = sp.symbols("M K", positive=True)

#: Proxy-noise constant of the anchor comparison scheme: ``σ_n² = KAPPA τ² n/M``.
KAPPA = 1.0
#: Domain of the proved band.
M_MIN = 10.0
TAU_MIN = 0.5
TAU_MAX = 2.0
#: Optimisation methods with an exact gain in this module.
METHODS = ("bon", "quantile", "tilt")


@dataclass(frozen=True)
class ProvedConstants:
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

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


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
    value = float(exact)
    margin = abs(exact) * mpmath.mpf(10) ** -40
    if up and value < exact + margin:
        value = math.nextafter(value, math.inf)
    elif not up and value > exact - margin:
        value = math.nextafter(value, -math.inf)
    return value


_PC = proved_constants()
#: Proved lower constant on the default domain (step L7).
C_LO: float = _PC.c_lo
#: Proved upper constant on the default domain (step U6).
C_HI: float = _PC.c_hi


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
        var = np.where(np.isfinite(var), var, np.exp(_log_noise_factor(mm, tt) + np.log(nn)))
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
    _method(method)
    nn = check_real("n", n, low=1.0)
    mm = check_real("M", m, low=1.0)
    tt = check_real("noise", noise, low=0.0)
    kk = check_real("K", K, low=0.0, allow_inf=True)
    _broadcast(n=nn, M=mm, noise=tt, K=kk)
    if method == "bon":
        top = np.asarray(expected_max_normal(nn))
    elif method == "quantile":
        top = np.asarray(quantile_mean_normal(nn))
    else:
        top = np.sqrt(2.0 * np.minimum(kk, np.log(nn)))
    return return_like(top * _shrink(np.log(nn), mm, tt), n, m, noise, K)


def _log_noise_factor(m: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``log(κτ²/M)`` (``-inf`` for ``τ = 0``, no noise)."""
    with np.errstate(divide="ignore"):
        return np.log(KAPPA) + 2.0 * np.log(tau) - np.log(m)


def _shrink(log_n: np.ndarray, m: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Regression factor ``1/sqrt(1 + σ_n²)``, ``σ_n² = κτ²n/M``, in log space (any n, τ)."""
    return np.exp(-0.5 * np.logaddexp(0.0, _log_noise_factor(m, tau) + log_n))


def _method(method: str) -> None:
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {', '.join(METHODS)}; got {method!r:.60}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got method={method!r}")


def _lambertw_exp(big_l: np.ndarray) -> np.ndarray:
    """``W(e^L)``, i.e. the root of ``w + log w = L``, for any real ``L`` (no overflow)."""
    big_l = np.asarray(big_l, dtype=np.float64)
    small = big_l <= 2.0
    w = np.where(small, lambertw(np.exp(np.minimum(big_l, 2.0))).real, 0.0)
    # Newton on w + log w = L from w0 = L - log L (>= root for L > 2); convex, monotone.
    lb = np.where(small, 3.0, big_l)
    v = lb - np.log(lb)
    for _ in range(50):
        step = (v + np.log(v) - lb) / (1.0 + 1.0 / v)
        v = v - step
        if np.all(np.abs(step) <= 1e-15 * v):
            break
    return np.where(small, w, v)


def _tilt_pool(m: np.ndarray, k: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log n_opt, U) of the envelope, in log space; tau = 0 means no noise: n = e^K."""
    log_a = _log_noise_factor(m, tau)
    noisy = np.isfinite(log_a)
    # z = M/(e κ τ²) = exp(-1 - log a); K* = 1 + W(z).
    kstar = np.where(noisy, 1.0 + _lambertw_exp(np.where(noisy, -1.0 - log_a, 0.0)), np.inf)
    t = np.minimum(k, kstar)
    return t, np.sqrt(2.0) * np.sqrt(t) * _shrink(t, m, tau)  # sqrt(2t): t may be 1.8e308


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
    return return_like(_tilt_pool(mm, kk, tt)[1], m, k, noise)


def _log_pool_limit(method: str, k: np.ndarray) -> np.ndarray:
    if method == "bon":
        return _bon_log_n_for_kl(k)
    return k  # quantile and tilt: KL = log n


def _pool_gain(method: str, t: np.ndarray, m: np.ndarray, tau: np.ndarray,
               k: np.ndarray) -> np.ndarray:
    """Gold gain on a pool of size ``n = e^t``, in log space (``n`` may exceed 1e308)."""
    t, m, tau, k = np.broadcast_arrays(t, m, tau, k)
    if method == "bon":
        top = np.asarray(expected_max_normal_log(t))
    elif method == "quantile":
        top = _quantile_mean_log(t)
    else:
        top = np.sqrt(2.0 * np.minimum(k, t))
    return top * _shrink(t, m, tau)


_BLOCK = 2048  # inputs optimised at once: the grid is (block, <= 530) floats


def _optimise(method: str, m: np.ndarray, k: np.ndarray, tau: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_optimise_block` over blocks of inputs, so memory stays bounded."""
    m, k, tau = np.broadcast_arrays(m, k, tau)
    flat = [np.ascontiguousarray(a).ravel() for a in (m, k, tau)]
    t, best = np.empty(flat[0].size), np.empty(flat[0].size)
    for start in range(0, flat[0].size, _BLOCK):
        part = slice(start, start + _BLOCK)
        t[part], best[part] = _optimise_block(method, *(a[part] for a in flat))
    return t.reshape(m.shape), best.reshape(m.shape)


def _optimise_block(method: str, m: np.ndarray, k: np.ndarray, tau: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Maximise the pool gain over ``t = log n ∈ [0, t_max(K)]``, vectorised.

    The objective is unimodal in ``t`` (a log-concave numerator over a
    log-convex ``sqrt(1 + a e^t)``), so the best point of *any* grid brackets
    the maximiser between its neighbours.  The grid is 17 evenly spaced
    points plus a geometric ladder (ratio 4) from ``t_max/4`` down to
    ``t = 1e-3``: the maximiser sits near ``log(M/τ²)`` however large the
    KL budget, and an even grid alone bracketed it in ``[0, t_max/16]``, which
    for ``K ≥ 1e15`` is too wide to refine (the gain came out 3.6e-237 or 0;
    issue 10 §4).  Golden-section search then refines the bracket to ~1e-10
    relative.  The grid depends only on ``max t_max``, so ``G`` is monotone in
    ``K`` up to that refinement error.
    """
    tmax = _log_pool_limit(method, k)
    # Past t_cap = K* + 40 no pool can win: every method's pool gain is at most the
    # tilt envelope U(t) = sqrt(2t)/sqrt(1 + a e^t) (Donsker–Varadhan: KL <= t), which
    # decreases beyond its maximiser K*; where U(t_cap) is below the gain found at
    # min(K*, t_max) the search stops at t_cap (the noiseless case keeps t_max).
    log_a = _log_noise_factor(m, tau)
    noisy = np.isfinite(log_a)
    kstar = np.where(noisy, 1.0 + _lambertw_exp(np.where(noisy, -1.0 - log_a, 0.0)), np.inf)
    t_cap = kstar + 40.0
    with np.errstate(over="ignore", invalid="ignore"):
        g_star = _pool_gain(method, np.minimum(kstar, tmax), m, tau, k)
        u_cap = np.sqrt(2.0) * np.sqrt(np.where(noisy, t_cap, 1.0)) * _shrink(
            np.where(noisy, t_cap, 0.0), m, tau)
    full = tmax
    # Without noise the pool gain increases with n (e(n) and the top-1/n mean do), so
    # its maximum is at t_max: no search (the grid below sees t_max = 0 there).
    tmax = np.where(noisy, np.where(u_cap < g_star, np.minimum(tmax, t_cap), tmax), 0.0)
    top = float(np.max(tmax, initial=0.0))
    rungs = max(0, math.ceil((math.log2(top) - math.log2(1e-3)) / 2)) if top > 1e-3 else 0
    ladder = 4.0 ** -np.arange(rungs + 1, dtype=np.float64)  # 1, 1/4, ..., <= 1e-3/top
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, 17), ladder]))
    last = grid.size - 1
    ts = tmax[..., None] * grid
    vals = _pool_gain(method, ts, m[..., None], tau[..., None], k[..., None])
    j = np.argmax(vals, axis=-1)
    lo = np.take_along_axis(ts, np.maximum(j - 1, 0)[..., None], -1)[..., 0]
    hi = np.take_along_axis(ts, np.minimum(j + 1, last)[..., None], -1)[..., 0]
    inv_phi = (math.sqrt(5.0) - 1.0) / 2.0
    c = hi - inv_phi * (hi - lo)
    d = lo + inv_phi * (hi - lo)
    fc = _pool_gain(method, c, m, tau, k)
    fd = _pool_gain(method, d, m, tau, k)
    for _ in range(48):
        left = fc >= fd  # the maximum lies in [lo, d]
        lo, hi = np.where(left, lo, c), np.where(left, d, hi)
        keep_c, keep_f = np.where(left, c, d), np.where(left, fc, fd)
        new = np.where(left, hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo))
        f_new = _pool_gain(method, new, m, tau, k)
        c, fc = np.where(left, new, keep_c), np.where(left, f_new, keep_f)
        d, fd = np.where(left, keep_c, new), np.where(left, keep_f, f_new)
    t = np.where(fc >= fd, c, d)
    best = np.maximum(np.maximum(fc, fd), np.max(vals, axis=-1))
    t = np.where(np.max(vals, axis=-1) > np.maximum(fc, fd),
                 np.take_along_axis(ts, j[..., None], -1)[..., 0], t)
    if not noisy.all():
        t = np.where(noisy, t, full)
        best = np.where(noisy, best, _pool_gain(method, full, m, tau, k))
    return t, best


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
    _method(method)
    mm, kk, tt = _check_mk(m, k, noise)
    if method == "tilt":
        out = _tilt_pool(mm, kk, tt)[1]
    else:
        out = np.where(kk > 0, _optimise(method, mm, kk, tt)[1], 0.0)
    return return_like(out, m, k, noise)


def optimal_pool_size(m: Any, k: Any, noise: Any = 1.0, method: str = "bon"
                      ) -> float | np.ndarray:
    """The pool size ``n`` attaining :func:`gain` (``inf`` past the float range).

    Examples
    --------
    >>> round(optimal_pool_size(1e300, 3.0, method="tilt"), 6)  # e^K
    20.085537
    """
    _method(method)
    mm, kk, tt = _check_mk(m, k, noise)
    t = _tilt_pool(mm, kk, tt)[0] if method == "tilt" else _optimise(method, mm, kk, tt)[0]
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


# --------------------------------------------------------------------------- symbolic


def law() -> sp.Expr:
    """The Θ form ``sqrt(min(log M, K))`` (constants dropped).

    Examples
    --------
    >>> law().subs({M: sp.E**3, K: 2})
    sqrt(2)
    """
    return sp.sqrt(sp.Min(sp.log(M), K))


def _check_constant(c: Any, default: sp.Expr, rational: bool = False) -> sp.Expr:
    """The constant ``c`` of ``c sqrt(min(log M, K))``: a positive number or sympy expression.

    Numbers go through :func:`check_scalar` (finite, ``> 0``; booleans refused);
    a sympy expression must not be known to be non-positive, infinite or NaN.
    """
    if c is None:
        return default
    if isinstance(c, sp.Basic):
        if not isinstance(c, sp.Expr) or c.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or \
                c.is_positive is False or (c.is_number and not (c.is_real and c.is_positive)):
            raise ValueError(f"c must be a positive real constant or symbol; got c={c}")
        return c
    value = check_scalar("c", c, low=0.0, low_open=True)
    return sp.nsimplify(value) if rational else sp.Float(value) if not float(
        value).is_integer() else sp.Integer(int(value))


def law_piecewise(c: Any = 1) -> sp.Piecewise:
    """``c sqrt(K)`` below the crossover ``K = log M``, ``c sqrt(log M)`` above.

    Examples
    --------
    >>> law_piecewise().subs({M: 100, K: 1})
    1
    """
    c = _check_constant(c, sp.Integer(1))
    return sp.Piecewise((c * sp.sqrt(K), sp.log(M) > K), (c * sp.sqrt(sp.log(M)), True))


def _exact_domain() -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """``M_MIN, TAU_MIN, TAU_MAX, KAPPA`` as exact rationals (the floats are exact)."""
    return (sp.Rational(M_MIN), sp.Rational(TAU_MIN), sp.Rational(TAU_MAX), sp.Rational(KAPPA))


def upper_bound_expr() -> sp.Expr:
    """``C_HI sqrt(min(log M, K))`` with ``C_HI = sqrt(2ρ)`` exact (step U6).

    ``ρ = max(1, (1 + log(1 + M_MIN/(e τ_min²)))/log M_MIN)``, built from the
    domain constants, so it is ``C_HI`` before the float's outward rounding.

    Examples
    --------
    >>> round(float(upper_bound_expr().subs({M: 10, K: 100})), 6)
    2.740302
    """
    m_min, tau_min, _, _ = _exact_domain()
    rho = sp.Max(1, (1 + sp.log(1 + m_min / (sp.E * tau_min**2))) / sp.log(m_min))
    return sp.sqrt(2 * rho) * law()


def lower_bound_expr() -> sp.Expr:
    """``C_LO sqrt(min(log M, K))`` with ``C_LO`` exact (step L7).

    ``C_LO = min(sqrt(2/(π(1 + 2κτ_max²/M_MIN))), sqrt(θ/(4π log 2)))``,
    ``θ = 1 − 2 log τ_max/log M_MIN``; on the default domain the second term.

    Examples
    --------
    >>> theta = 1 - 2 * sp.log(2) / sp.log(10)
    >>> sp.simplify(lower_bound_expr() / law() - sp.sqrt(theta / (4 * sp.pi * sp.log(2))))
    0
    >>> round(float(lower_bound_expr().subs({M: 10, K: 100})), 6)
    0.324339
    """
    m_min, _, tau_max, kappa = _exact_domain()
    theta = 1 - 2 * sp.Max(sp.log(tau_max), 0) / sp.log(m_min)
    small = sp.sqrt(2 / (sp.pi * (1 + 2 * kappa * tau_max**2 / m_min)))
    return sp.Min(small, sp.sqrt(theta / (4 * sp.pi * sp.log(2)))) * law()


def crossover() -> sp.Expr:
    """Crossover budget ``K* = log M`` where the two regimes meet.

    Examples
    --------
    >>> crossover()
    log(M)
    """
    return sp.log(M)


def comparisons_needed(target: Any, k: Any, c: float = math.sqrt(2.0)) -> float | np.ndarray:
    """Smallest ``M`` with ``c sqrt(min(log M, K)) >= target``: ``exp(target²/c²)``.

    ``inf`` when the KL budget alone caps the gain below ``target``
    (``c sqrt(K) < target``), and where ``exp(target²/c²)`` exceeds the float
    range (the one documented non-finite result: "more than 1.8e308").  The
    default ``c = sqrt 2`` is the asymptotic constant of the exact gain.

    Examples
    --------
    >>> round(comparisons_needed(2.0, 10.0), 4)  # e^2
    7.3891
    >>> comparisons_needed(2.0, 1.0)
    inf
    """
    g = check_real("target", target, low=0.0)
    kk = check_real("K", k, low=0.0)
    cc = check_scalar("c", c, low=0.0, low_open=True)
    _broadcast(target=g, K=kk)
    with np.errstate(over="ignore"):
        need = (g / cc) ** 2
        out = np.where(need <= kk, np.exp(need), np.inf)
    return return_like(out, target, k)


def kl_needed(target: Any, m: Any, c: float = math.sqrt(2.0)) -> float | np.ndarray:
    """Smallest ``K`` with ``c sqrt(min(log M, K)) >= target``: ``target²/c²`` (``inf`` if
    the comparisons cap the gain below ``target``).

    Examples
    --------
    >>> round(kl_needed(2.0, 1e6), 12)
    2.0
    >>> kl_needed(10.0, 1e6)
    inf
    """
    g = check_real("target", target, low=0.0)
    mm = check_real("M", m, low=1.0)
    cc = check_scalar("c", c, low=0.0, low_open=True)
    _broadcast(target=g, M=mm)
    with np.errstate(over="ignore"):
        need = (g / cc) ** 2
    return return_like(np.where(need <= np.log(mm), need, np.inf), target, m)


def inverses(c: Any = None) -> dict[str, sp.Piecewise]:
    """Inverses of ``G = c sqrt(min(log M, K))`` for a target gain ``G`` (a positive symbol).

    ``"M"``: comparisons needed at budget ``K``, ``exp(G²/c²)`` if
    ``G²/c² <= K`` else ``oo``; ``"K"``: budget needed at ``M``, ``G²/c²`` if
    ``G²/c² <= log M`` else ``oo``.  The default ``c = sqrt 2`` is the exact
    gain's asymptotic constant; :func:`comparisons_needed` and
    :func:`kl_needed` are their numeric forms.

    Examples
    --------
    >>> g = sp.Symbol("G", positive=True)
    >>> inverses()["M"].subs({g: 2, K: 5})
    exp(2)
    >>> inverses()["K"].subs({g: 2, M: 5})  # log 5 < G²/2: M caps the gain
    oo
    """
    c = _check_constant(c, sp.sqrt(2), rational=True)
    g = sp.Symbol("G", positive=True)
    need = g**2 / c**2
    return {
        "M": sp.Piecewise((sp.exp(need), need <= K), (sp.oo, True)),
        "K": sp.Piecewise((need, need <= sp.log(M)), (sp.oo, True)),
    }


def elasticities() -> dict[str, sp.Piecewise]:
    """Elasticities ``∂log G/∂log M`` and ``∂log G/∂log K`` of the Θ form.

    Examples
    --------
    >>> e = elasticities()
    >>> e["K"].subs({M: 1e6, K: 1}), e["M"].subs({M: sp.E**4, K: 10})
    (1/2, 1/8)
    """
    return {
        "M": sp.Piecewise((sp.Integer(0), sp.log(M) > K), (1 / (2 * sp.log(M)), True)),
        "K": sp.Piecewise((sp.Rational(1, 2), sp.log(M) > K), (sp.Integer(0), True)),
    }


def asymptotic_regimes() -> dict[str, sp.Expr]:
    """Leading behaviour of the exact gain in each regime (``κ = 1``).

    ``kl_limited`` (``e^K ≪ M``): ``sqrt(2K)``; ``data_limited`` (``e^K ≫ M``):
    ``sqrt(2 W(M/(e τ²))) ~ sqrt(2 log M)``.

    Examples
    --------
    >>> asymptotic_regimes()["kl_limited"]
    sqrt(2)*sqrt(K)
    """
    tau = sp.Symbol("tau", positive=True)
    return {
        "kl_limited": sp.sqrt(2 * K),
        "data_limited": sp.sqrt(2 * sp.LambertW(M / (sp.E * tau**2))),
        "data_limited_leading": sp.sqrt(2 * sp.log(M)),
    }


def latex(expr: sp.Expr | None = None) -> str:
    """LaTeX of ``expr`` (default: the Θ form).

    Examples
    --------
    >>> latex()
    '\\\\sqrt{\\\\min\\\\left(K, \\\\log{\\\\left(M \\\\right)}\\\\right)}'
    """
    return sp.latex(law() if expr is None else _check_expr(expr))


def to_numpy(expr: sp.Expr | None = None):
    """A numpy function ``f(M, K)`` of ``expr`` (default: the Θ form).

    Examples
    --------
    >>> f = to_numpy()
    >>> [round(float(v), 6) for v in f(np.array([10.0, 1e6]), np.array([1.0, 1.0]))]
    [1.0, 1.0]
    """
    return sp.lambdify((M, K), law() if expr is None else _check_expr(expr), modules="numpy")


def _check_expr(expr: Any) -> sp.Expr:
    if not isinstance(expr, sp.Expr):
        raise TypeError(f"expr must be a sympy expression (or None for the Θ form); got "
                        f"{type(expr).__name__}")
    return expr


def gao_expr(kind: str = "bon") -> sp.Expr:
    """Gao, Schulman & Hilton (2022) gold-score forms as sympy expressions in ``K``.

    ``kind="bon"``: ``d (α − β d)``; ``kind="rl"``: ``d (α − β log d)``; ``d = sqrt(K)``.
    Their coefficients depend on the reward model (here: on ``M``); they have
    no ``M`` term of their own, which is what the verification's model
    comparison tests.

    Examples
    --------
    >>> sp.expand(gao_expr("bon"))
    sqrt(K)*alpha - K*beta
    >>> gao_expr("rl").subs({K: sp.E**2})
    E*(alpha - beta)
    """
    alpha, beta = sp.symbols("alpha beta", positive=True)
    d = sp.sqrt(K)
    if not isinstance(kind, str):
        raise TypeError(f"kind must be 'bon' or 'rl'; got {kind!r:.60}")
    if kind == "bon":
        return d * (alpha - beta * d)
    if kind == "rl":
        return d * (alpha - beta * sp.log(d))
    raise ValueError(f"kind must be 'bon' or 'rl'; got kind={kind!r}")


def gao_bon(kl: Any, alpha: float, beta: float) -> float | np.ndarray:
    """Gao, Schulman & Hilton (2022) best-of-n form ``d (α − β d)``, ``d = sqrt(KL)``.

    Examples
    --------
    >>> gao_bon(4.0, 1.0, 0.1)
    1.6
    """
    d = np.sqrt(check_real("kl", kl, low=0.0))
    a, b = check_real("alpha", alpha), check_real("beta", beta)
    _broadcast(kl=d, alpha=a, beta=b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = d * (a - b * d)
    check_finite_result(out, "the Gao et al. best-of-n score", kl=kl, alpha=alpha, beta=beta)
    return return_like(out, kl, alpha, beta)


def gao_rl(kl: Any, alpha: float, beta: float) -> float | np.ndarray:
    """Gao, Schulman & Hilton (2022) RL form ``d (α − β log d)``, ``d = sqrt(KL)`` (0 at 0).

    Examples
    --------
    >>> round(gao_rl(math.e**2, 1.0, 0.5), 6)  # d = e
    1.359141
    """
    d = np.sqrt(check_real("kl", kl, low=0.0))
    a, b = check_real("alpha", alpha), check_real("beta", beta)
    _broadcast(kl=d, alpha=a, beta=b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(d > 0, d * (a - b * np.log(np.where(d > 0, d, 1.0))), 0.0)
    check_finite_result(out, "the Gao et al. RL score", kl=kl, alpha=alpha, beta=beta)
    return return_like(out, kl, alpha, beta)
