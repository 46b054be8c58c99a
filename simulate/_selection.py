"""Gaussian selection simulator: three paths to the gold gain of optimising a noisy proxy.

The model is :mod:`rlscale.theory.reward`'s: gold ``X ~ N(0, 1)`` iid over a
pool of ``n`` candidates, proxy ``Ŷ = X + σ Z`` with ``σ² = κ τ² n/M`` for ``M``
anchor comparisons at noise level ``τ`` (``κ = 1``).

Paths
-----
1. **exact** — closed forms and quadrature: :func:`rlscale.theory.reward.gain_at_pool`.
2. **fast Monte Carlo** (:func:`sample_selection`) — an order-statistics sampler
   whose cost per trial does not depend on ``n``; the ``n`` candidates are
   never materialised.  It samples the *standardised* proxy of the selected
   candidate, ``s = Ŷ_sel/sqrt(1+σ²)``, directly, asking the rule for its law
   (``RULES[method].sample_top``, :mod:`rlscale.theory.reward`):

   * ``bon``: the maximum of ``n`` iid N(0,1) is ``Φ⁻¹(U^{1/n})``; with
     ``E = −log U ~ Exp(1)`` that is ``Φ⁻¹(exp(−E/n))`` (``scipy.special.ndtri_exp``,
     exact in log space, so ``n = 1e300`` is fine);
   * ``quantile``: N(0,1) above its ``1 − 1/n`` quantile is
     ``−Φ⁻¹(U/n)`` (inversion of the truncated law, again in log space);
   * ``tilt``: ``N(β, 1)`` with ``β = sqrt(2 min(K, log n))``;

   then the gold reward given the proxy (bivariate normal):
   ``X | s ~ N(s/sqrt(1+σ²), σ²/(1+σ²))``.  Two random numbers per trial.
3. **brute force** (:func:`brute_force_selection`) — materialise the ``n``
   candidates, run the ``M`` comparisons, fit the proxy, select the best:

   * ``scheme="margin"``: ``m = M/n`` Gaussian margins ``X_i + τ ε`` per
     candidate (``M`` must be a multiple of ``n``); least squares = the mean.
     The proxy error is then exactly ``N(0, τ² n/M)``, so this path and the
     other two estimate the same number; tests check agreement within 3
     standard errors.
   * ``scheme="bradley_terry"``: ``m`` binary outcomes against the anchor with
     ``P(win) = 1/(1 + exp(−X_i/s))``, ``s = τ/2``; the Bradley–Terry MLE with
     the anchor fixed at 0 is ``s·logit(w/m)``, made finite by the
     Haldane–Anscombe correction ``(w + 1/2)/(m + 1)``.  Its Fisher
     information at ``p = 1/2`` is ``m/(4 s²) = m/τ²``, the margin scheme's,
     so the Gaussian model is its large-``m`` limit; at finite ``m`` the
     logit's heteroscedasticity (``var ∝ 1/(p(1−p))``, larger for the
     high-reward candidates that get selected) and bias make the gain
     somewhat lower.  We check it against the model only on an overlap grid
     with logistic scale ``s >= 2`` and ``m >= 64``: within 3 % (measured 0.2–1.3 %).
   * ``proxy_error="student_t"`` (either scheme's place taken by a direct
     proxy error): ``Ŷ = X + σ T``, ``T`` Student-t with ``df`` degrees of
     freedom scaled to unit variance (``df > 2``).  Same variance as the
     Gaussian model, heavier tails: for large ``n`` the selected candidate is
     the one with the largest *error*, proxy gain keeps rising while gold gain
     falls back towards 0 (Kwa et al. 2024, "Catastrophic Goodhart",
     arXiv 2407.14503).  This is where the Gaussian law stops holding.

Soft best-of-n (:func:`soft_bon_frontier`) samples ``n`` proxies and selects
candidate ``i`` with probability ``softmax(Ŷ/λ)_i``.  Its KL is charged as the
expected pool KL ``E[KL(softmax ‖ uniform)] <= log n``, an upper bound on the
KL of the output law from the reference (joint convexity of KL).  It is the
exact optimum of the KL-penalised bandit over the pool with ``β = λ`` (see
:func:`rlscale.simulate.kl_bandit_pg`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import log_softmax

from rlscale.simulate._random import as_generator
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar, return_like
from rlscale.theory.reward import KAPPA, rule_for

__all__ = [
    "SelectionSample",
    "SoftBonFrontier",
    "brute_force_selection",
    "cross_fit_gain",
    "sample_selection",
    "soft_bon_frontier",
]

_CHUNK = 1 << 13  # trials per block: work arrays stay in L2 cache (~3x faster than 1 << 18)

#: Documented upper limits on the work of one call (each about ten seconds on one
#: core): Monte Carlo trials of :func:`sample_selection`; normal draws
#: ``trials·n·max(M/n, 1)`` of :func:`brute_force_selection`; proxy draws
#: ``trials·Σ ns`` (times ``len(lambdas)`` softmaxes) of :func:`soft_bon_frontier`.
MAX_TRIALS = 10**8
MAX_DRAWS = 10**8
#: Largest noise level: squared and summed over a pool it stays within float64.
MAX_NOISE = 1e100
MAX_POOL_DRAWS = 10**7  # soft best-of-n holds (trials, n) arrays: 80 MB each at most


@dataclass(frozen=True)
class SelectionSample(Result):
    """Monte Carlo estimate of a selection's gains.

    Attributes
    ----------
    gold, proxy : float
        Mean gold reward and mean proxy score of the selected candidate.
    gold_se, proxy_se : float
        Their standard errors (sample std / sqrt(trials)).
    trials : int
    n, noise_sd : float
        Pool size and proxy-error standard deviation ``σ``.
    method, path : str
    """

    gold: float
    gold_se: float
    proxy: float
    proxy_se: float
    trials: int
    n: float
    noise_sd: float
    method: str
    path: str


def _noise_sd(n: float, noise_sd: Any, m: Any, noise: Any) -> float:
    if noise_sd is not None:
        if m is not None:
            raise ValueError("give either noise_sd or M (with noise), not both")
        return check_scalar("noise_sd", noise_sd, low=0.0, high=MAX_NOISE)
    if m is None:
        raise ValueError("give noise_sd, or M (and noise) to derive it")
    mm = check_scalar("M", m, low=1.0)
    tau = check_scalar("noise", noise, low=0.0, high=MAX_NOISE)
    return tau * float(np.sqrt(KAPPA * n / mm))


class _Moments:
    """Running sums for means and standard errors over chunks."""

    def __init__(self) -> None:
        self.count = 0
        self.sums = np.zeros(2)
        self.sq = np.zeros(2)

    def add(self, gold: np.ndarray, proxy: np.ndarray) -> None:
        self.count += gold.size
        self.sums += (gold.sum(), proxy.sum())
        self.sq += (np.dot(gold, gold), np.dot(proxy, proxy))

    def result(self) -> tuple[float, float, float, float]:
        mean = self.sums / self.count
        var = np.maximum(self.sq / self.count - mean**2, 0.0) * self.count / max(self.count - 1, 1)
        se = np.sqrt(var / self.count)
        return float(mean[0]), float(se[0]), float(mean[1]), float(se[1])


def sample_selection(
    n: Any,
    noise_sd: Any = None,
    *,
    M: Any = None,
    noise: Any = 1.0,
    method: str = "bon",
    K: Any = np.inf,
    trials: int = 100_000,
    rng: Any = None,
) -> SelectionSample:
    """Fast order-statistics Monte Carlo of one selection; cost independent of ``n``.

    Parameters
    ----------
    n : float
        Pool size, real ``n >= 1`` (up to 1e300 and beyond).
    noise_sd : float, optional
        Proxy-error standard deviation ``σ``; or give ``M`` (and ``noise``) to
        use the model's ``σ² = κ τ² n/M``.
    method : {"bon", "quantile", "tilt"}
    K : float
        KL cap for ``tilt`` (``β = sqrt(2 min(K, log n))``); ignored otherwise.
    trials : int
        At most ``MAX_TRIALS`` (1e8, about ten seconds).
    rng : numpy.random.Generator or int
        Same seed, bit-identical result.

    Examples
    --------
    >>> from rlscale.theory import regressional_gain
    >>> s = sample_selection(1e6, 1.0, trials=200_000, rng=0)
    >>> abs(s.gold - regressional_gain(1e6, 1.0)) < 3 * s.gold_se
    True
    """
    rule = rule_for(method)
    nn = check_scalar("n", n, low=1.0)
    sd = _noise_sd(nn, noise_sd, M, noise)
    kk = check_scalar("K", K, low=0.0, allow_inf=True)
    trials = check_positive_int("trials", trials, minimum=2, maximum=MAX_TRIALS)
    gen = as_generator(rng)
    # scale = sqrt(1 + σ²) = proxy sd; shrink = 1/scale is the gold per unit of the
    # standardised proxy and resid = σ/scale the sd of X given the proxy.  Written
    # to stay finite for σ up to 1e308 (n = 1e300 with M = 1).
    inv = 1.0 / sd if sd > 1.0 else 0.0
    scale = float(np.hypot(1.0, sd))
    shrink = inv / np.hypot(1.0, inv) if sd > 1.0 else 1.0 / scale
    resid = 1.0 / np.hypot(1.0, inv) if sd > 1.0 else sd / scale
    acc = _Moments()
    for start in range(0, trials, _CHUNK):
        size = min(_CHUNK, trials - start)
        s = rule.sample_top(gen, size, nn, kk)  # the selected candidate's standardised proxy
        gold = gen.standard_normal(size)
        gold *= resid
        gold += shrink * s
        acc.add(gold, s)
    g, gse, p, pse = acc.result()
    return SelectionSample(g, gse, p * scale, pse * scale, trials, nn, sd, method, "fast")


def brute_force_selection(
    n: int,
    M: int | None = None,
    noise: float = 1.0,
    *,
    scheme: str = "margin",
    noise_sd: float | None = None,
    proxy_error: str = "gaussian",
    df: float = 3.0,
    trials: int = 2000,
    rng: Any = None,
) -> SelectionSample:
    """Brute-force best-of-n: materialise candidates, comparisons and the fitted proxy.

    Parameters
    ----------
    n : int
        Pool size (materialised: keep ``trials * n`` moderate).
    M : int, optional
        Number of comparisons, a multiple of ``n`` (``m = M/n`` per candidate);
        used by the ``margin`` and ``bradley_terry`` schemes.
    noise : float
        Noise level ``τ``: margin noise sd, or ``2 s`` for Bradley–Terry.
    scheme : {"margin", "bradley_terry"}
        How comparisons are generated and fitted (module docstring).
    noise_sd : float, optional
        With ``proxy_error="student_t"`` (or to skip comparisons), the proxy
        error sd ``σ`` directly: ``Ŷ = X + σ·error``; then ``M`` is not used.
    proxy_error : {"gaussian", "student_t"}
        Error law when ``noise_sd`` is given; ``student_t`` is scaled to unit
        variance and needs ``df > 2``.
    trials : int
        ``trials·n·max(M/n, 1)`` (the normal draws) at most ``MAX_DRAWS`` (1e8).
    rng : numpy.random.Generator or int

    Examples
    --------
    >>> from rlscale.theory import regressional_gain
    >>> s = brute_force_selection(8, 64, noise=1.0, trials=20_000, rng=1)
    >>> abs(s.gold - regressional_gain(8, 8 ** 0.5 / 8)) < 3 * s.gold_se
    True
    """
    n = check_positive_int("n", n, maximum=MAX_DRAWS)
    trials = check_positive_int("trials", trials, minimum=2, maximum=MAX_DRAWS)
    if not isinstance(scheme, str) or scheme not in ("margin", "bradley_terry"):
        raise ValueError(f"scheme must be 'margin' or 'bradley_terry'; got scheme={scheme!r}")
    if not isinstance(proxy_error, str) or proxy_error not in ("gaussian", "student_t"):
        raise ValueError(
            f"proxy_error must be 'gaussian' or 'student_t'; got proxy_error={proxy_error!r}"
        )
    tau = check_scalar("noise", noise, low=0.0, high=MAX_NOISE)
    gen = as_generator(rng)
    direct = noise_sd is not None
    if direct:
        sd = check_scalar("noise_sd", noise_sd, low=0.0, high=MAX_NOISE)
        if proxy_error == "student_t":
            df = check_scalar("df", df, low=2.0, low_open=True)
        m = 0
    else:
        if proxy_error != "gaussian":
            raise ValueError("proxy_error='student_t' needs noise_sd (a direct proxy error)")
        if M is None:
            raise ValueError("M is required unless noise_sd is given")
        M = check_positive_int("M", M, maximum=MAX_DRAWS)
        if M % n:
            raise ValueError(f"M must be a multiple of n={n} (M/n comparisons each); got M={M}")
        m = M // n
        sd = float(np.sqrt(KAPPA * tau * tau / m))
        if scheme == "bradley_terry" and tau == 0.0:
            raise ValueError(f"noise must be > 0 for scheme='bradley_terry' (logistic scale "
                             f"noise/2); got noise={tau:g}")
    draws = trials * n * max(m, 1)
    if draws > MAX_DRAWS:
        raise ValueError(f"trials·n·max(M/n, 1) must be <= {MAX_DRAWS:.0e} normal draws (about "
                         f"10 s); got trials={trials}, n={n}, M/n={max(m, 1)}: {draws:.3g}")
    rows_per_block = max(1, (1 << 22) // max(n * max(m, 1), 1))
    acc = _Moments()
    for start in range(0, trials, rows_per_block):
        b = min(rows_per_block, trials - start)
        x = gen.standard_normal((b, n))
        if direct:
            if proxy_error == "gaussian":
                err = gen.standard_normal((b, n))
            else:
                err = gen.standard_t(df, (b, n)) * np.sqrt((df - 2.0) / df)
            proxy = x + sd * err
        elif scheme == "margin":
            margins = x[..., None] + tau * gen.standard_normal((b, n, m))
            proxy = margins.mean(axis=-1)  # least squares against the anchor
        else:
            s = tau / 2.0
            p_win = 0.5 * (1.0 + np.tanh(x / (2.0 * s)))  # logistic, overflow-free
            wins = (gen.random((b, n, m)) < p_win[..., None]).sum(axis=-1)
            q = (wins + 0.5) / (m + 1.0)
            proxy = s * (np.log(q) - np.log1p(-q))
        pick = np.argmax(proxy, axis=1)
        rows = np.arange(b)
        acc.add(x[rows, pick], proxy[rows, pick])
    g, gse, p, pse = acc.result()
    path = f"brute:{'direct-' + proxy_error if direct else scheme}"
    return SelectionSample(g, gse, p, pse, trials, float(n), sd, "bon", path)


@dataclass(frozen=True)
class SoftBonFrontier(Result):
    """Soft best-of-n over a grid of pool sizes ``n`` and temperatures ``λ``.

    Arrays have shape ``(len(ns), len(lambdas))``: ``kl`` the expected pool
    KL, ``gold`` and ``gold_se`` the gold gain and its standard error;
    ``gold_halves`` (shape ``(2, len(ns), len(lambdas))``) the gold gain on
    each half of the trials, for cross-fitting.
    """

    ns: np.ndarray
    lambdas: np.ndarray
    kl: np.ndarray
    gold: np.ndarray
    gold_se: np.ndarray
    noise_sd: np.ndarray
    gold_halves: np.ndarray

    def gain_at(self, K: Any, *, cross_fit: bool = True) -> float | np.ndarray:
        """Best gold gain over grid points with KL ``<= K`` (0 when none fits).

        With ``cross_fit`` the point is chosen on the first half of the trials
        and scored on the second (:func:`cross_fit_gain`), so taking a maximum
        over noisy estimates does not bias the gain upwards (the winner's
        curse); otherwise the plain maximum of ``gold``.

        Examples
        --------
        >>> f = soft_bon_frontier(1e4, 1.0, ns=(16,), lambdas=(0.2, 1.0), trials=200, rng=0)
        >>> f.gain_at(0.0), bool(f.gain_at(10.0) > 0)
        (0.0, True)
        """
        halves = self.gold_halves if cross_fit else np.stack([self.gold, self.gold])
        return cross_fit_gain(self.kl, halves, K)


def cross_fit_gain(kl: Any, gold_halves: Any, K: Any) -> float | np.ndarray:
    """Best gain of the runs with KL ``<= K``: chosen on half the trials, scored on the rest.

    Taking the maximum over noisy estimates biases it upwards (the winner's
    curse); choosing the run on half A and reporting its estimate on the
    independent half B removes that bias.  The result is floored at 0 (the
    reference policy is always feasible and gains 0), and is 0 when no run fits.

    Parameters
    ----------
    kl : array_like
        KL of each run (any shape).
    gold_halves : array_like, shape ``(2, *kl.shape)``
        The runs' gold gain estimated on halves A and B of the trials.
    K : array_like
        KL budgets.

    Examples
    --------
    >>> cross_fit_gain([0.1, 0.5], [[0.3, 0.9], [0.4, 0.2]], [0.2, 1.0]).tolist()
    [0.4, 0.2]
    """
    kl_arr = check_real("kl", kl, low=0.0).ravel()
    halves = check_real("gold_halves", gold_halves)
    if halves.shape != (2, *np.shape(kl)):
        raise ValueError(f"gold_halves must have shape (2, *kl.shape) = (2, {kl_arr.size}); "
                         f"got {halves.shape}")
    kk = check_real("K", K, low=0.0)
    choose, score = halves.reshape(2, -1)
    ok = kl_arr[None, :] <= kk.reshape(-1, 1)
    best = np.argmax(np.where(ok, choose[None, :], -np.inf), axis=1)
    out = np.where(ok.any(axis=1), score[best], 0.0)
    return return_like(np.maximum(out, 0.0).reshape(kk.shape), K)


def soft_bon_frontier(
    M: float,
    noise: float = 1.0,
    *,
    ns: Any = (2, 4, 16, 64, 256, 1024),
    lambdas: Any = (0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5),
    trials: int = 400,
    rng: Any = None,
) -> SoftBonFrontier:
    """Monte Carlo frontier of soft best-of-n: (pool KL, gold gain) per ``(n, λ)``.

    The temperature acts on the standardised proxy, so ``λ`` is in units of
    the proxy's standard deviation; the gold gain is Rao–Blackwellised,
    ``Σ_i π_i E[X_i | Ŷ_i] = Σ_i π_i Ŷ_i/(1+σ²)``, minus the pool mean
    ``Σ_i Ŷ_i/(n(1+σ²))`` (the reference's gain, mean zero: a control variate
    that removes most of the noise at small KL).

    ``trials·sum(ns)·len(lambdas)`` is limited to ``MAX_DRAWS`` (1e8) and
    ``trials·max(ns)`` to ``MAX_POOL_DRAWS`` (1e7).

    Examples
    --------
    >>> f = soft_bon_frontier(1e4, 1.0, ns=(16,), lambdas=(0.5,), trials=200, rng=0)
    >>> bool(0 < f.kl[0, 0] < np.log(16))
    True
    """
    mm = check_scalar("M", M, low=1.0)
    tau = check_scalar("noise", noise, low=0.0, high=MAX_NOISE)
    ns_list = np.atleast_1d(np.asarray(ns, dtype=object)).tolist()
    if not ns_list or len(ns_list) > 1000:
        raise ValueError(f"ns must hold 1 to 1000 pool sizes; got {len(ns_list)}")
    ns_arr = np.asarray([check_positive_int("ns", v, maximum=MAX_DRAWS) for v in ns_list])
    # >= 1e-300: s/λ stays finite for any standard-normal s (5e-324 overflowed to NaN).
    lam = check_real("lambdas", np.atleast_1d(lambdas), low=1e-300)
    if lam.ndim != 1 or not 1 <= lam.size <= 1000:
        raise ValueError(f"lambdas must be 1 to 1000 temperatures; got shape {lam.shape}")
    trials = check_positive_int("trials", trials, minimum=4, maximum=MAX_DRAWS)
    if trials * int(ns_arr.max()) > MAX_POOL_DRAWS:
        raise ValueError(f"trials·max(ns) must be <= {MAX_POOL_DRAWS:.0e} (one pool's array); "
                         f"got trials={trials}, max(ns)={int(ns_arr.max())}")
    draws = trials * int(ns_arr.sum()) * lam.size
    if draws > MAX_DRAWS:
        raise ValueError(f"trials·sum(ns)·len(lambdas) must be <= {MAX_DRAWS:.0e} (about "
                         f"10 s); "
                         f"got trials={trials}, sum(ns)={int(ns_arr.sum())}, "
                         f"len(lambdas)={lam.size}: {draws:.3g}")
    gen = as_generator(rng)
    kl = np.empty((ns_arr.size, lam.size))
    gold = np.empty_like(kl)
    se = np.empty_like(kl)
    halves = np.empty((2, *kl.shape))
    half = trials // 2
    sds = np.sqrt(KAPPA * tau * tau * ns_arr / mm)
    for i, n in enumerate(ns_arr):
        s = gen.standard_normal((trials, int(n)))  # standardised proxies
        shrink = 1.0 / np.sqrt(1.0 + sds[i] ** 2)
        for j, lj in enumerate(lam):
            logp = log_softmax(s / lj, axis=1)
            p = np.exp(logp)
            kl[i, j] = np.mean(np.sum(p * logp, axis=1) + np.log(n))
            # minus the pool mean: the reference's gain (mean 0), a control variate
            g = shrink * (np.sum(p * s, axis=1) - s.mean(axis=1))
            gold[i, j] = g.mean()
            se[i, j] = g.std(ddof=1) / np.sqrt(trials)
            halves[:, i, j] = g[:half].mean(), g[half:].mean()
    return SoftBonFrontier(ns_arr.astype(float), lam, kl, gold, se, sds, halves)
