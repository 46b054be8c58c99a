"""Proof: the Θ(√min{log M, K}) band of rlscale's selection model, with its constants.

Statement.  In the selection model of :mod:`rlscale.theory.reward` (gold
rewards N(0, 1); proxy Ŷ = X + σ_n Z with σ_n² = κτ²n/M from M anchor
comparisons spread over a pool of n; optimisation within KL ≤ K), on the
domain M ≥ M_MIN, K > 0, TAU_MIN ≤ τ ≤ TAU_MAX, the gain of best-of-n and of
the tilted policy satisfies, with L = min(log M, K),

    C_LO·√L ≤ G(M, K) ≤ C_HI·√L,

for the constants ``C_LO``, ``C_HI`` imported from ``rlscale.theory.reward``
(the numbers ``rlscale verify reward-law`` reports its band against).

Derivation.
Upper: for any rule on a pool of n, the standardised proxy gain is at most
e(n) ≤ √(2 log n) (proof ``emax-upper``) and at most √(2K) (Donsker–Varadhan,
proof ``tilting``); the gold gain is that over √(1 + an), a = κτ²/M (the
regression factor).  f(n) = log n/(1 + an) is unimodal with maximum W(z),
z = M/(eκτ²) (Lambert W), so G² ≤ 2·min(K, W(z)) — checked below with the
stationary point n* = e^{1+W}.  W(z) ≤ λ(M) = log(1 + M/(eτ_min²)), and
λ(M)/log M decreases on M ≥ M_MIN (needs eτ_min² < 1), so
G² ≤ 2·r·min(K, log M) with r = max(1, λ(M_MIN)/log M_MIN); C_HI² ≥ 2r is
certified.  (The module's own chain uses K* = 1 + W(z) and
ρ = (1 + λ(M_MIN))/log M_MIN; it gives C_HI = √(2ρ), which this tighter chain
covers with room — necessary, because the float C_HI lies 1e-16 below √(2ρ).)
Lower (best-of-n; the tilt dominates it on every pool): for K ≤ 1/2 the pool
n = 1 + √(2K) has KL ≤ (n−1)²/2 = K and e(n) ≥ (n−1)/√π (proof ``emax-lower``);
for K ≥ 1/2 the pool n = max(2, ⌊x⌋), x = min(e^K, M/τ²), is feasible, has
noise an ≤ 1, log n ≥ (3/5)·log x (n⁵ ≥ x³) and log x ≥ θ·L with
θ = 1 − 2 log τ_max/log M_MIN; Kamath's bound (``emax-lower``) then gives
G ≥ √(3θ/(10π ln 2))·√L.  The module's step (L4) uses log n ≥ (log x)/2 and
gets √(θ/(4π ln 2)) = C_LO exactly; the 3/5 here leaves the room the float
C_LO (3e-17 above its exact value) needs.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from rlscale.proofs._core import (
    Cited,
    Identity,
    IntervalCertificate,
    PolynomialInequality,
    Proof,
    Sign,
    interval_eval,
)

__all__ = ["NAME", "build"]

NAME = "reward-theta"


def _model_constants() -> dict[str, Any]:
    from rlscale.theory import reward

    return {"c_lo": reward.C_LO, "c_hi": reward.C_HI, "kappa": reward.KAPPA,
            "m_min": reward.M_MIN, "tau_min": reward.TAU_MIN, "tau_max": reward.TAU_MAX}


def build(*, c_lo: float | None = None, c_hi: float | None = None,
          theta_factor: int = 2, pool_exponents: tuple[int, int] = (5, 3)) -> Proof:
    """The Θ(√min{log M, K}) band with rlscale.theory.reward's constants.

    Parameters
    ----------
    c_lo, c_hi : float, optional
        The band's constants; default ``rlscale.theory.reward.C_LO`` / ``C_HI``.
    theta_factor : int
        θ = 1 − theta_factor·log τ_max/log M_MIN (truth 2: σ² carries τ²).
    pool_exponents : (int, int)
        (p, q) in the claim n^p ≥ x^q, i.e. log n ≥ (q/p)·log x (truth (5, 3)).

    Examples
    --------
    >>> build().check().passed
    True
    >>> build(c_hi=1.3).step("c-hi-covers").check().status
    'failed'
    """
    const = _model_constants()
    c_lo = const["c_lo"] if c_lo is None else c_lo
    c_hi = const["c_hi"] if c_hi is None else c_hi
    # The model's floats are exact binary numbers: enter them as exact rationals.
    kappa, m_min = sp.Rational(const["kappa"]), sp.Rational(const["m_min"])
    tau_min, tau_max = sp.Rational(const["tau_min"]), sp.Rational(const["tau_max"])
    C_LO, C_HI = sp.Rational(c_lo), sp.Rational(c_hi)

    n, a, W, z, m_, c, K = sp.symbols("n a W z M c K", positive=True)
    ell, lam, g2, d, ln, r, c2 = sp.symbols("ell lambda g2 d l_n r c2", positive=True)
    lc = sp.Symbol("l_c", real=True)  # log(eτ_min²), negative on the model's domain
    tau, sig2, x, theta, lt = sp.symbols("tau sigma2 x theta l_tau", positive=True)
    ell_min, lt_max, amount = sp.symbols("ell_min l_taumax A", positive=True)

    f = sp.log(n) / (1 + a * n)
    numerator = 1 / n + a - a * sp.log(n)
    star = {n: sp.exp(1 + W), a: sp.exp(-1 - W) / W}
    slack = sp.log(1 + m_min / (sp.E * tau_min**2)) / sp.log(m_min)
    rho = (1 + sp.log(1 + m_min / (sp.E * tau_min**2))) / sp.log(m_min)
    theta_value = 1 - theta_factor * sp.log(tau_max) / sp.log(m_min)
    c_small = sp.sqrt(2 / (sp.pi * (1 + 2 * kappa * tau_max**2 / m_min)))
    p_exp, q_exp = pool_exponents
    share = sp.Rational(q_exp, p_exp)
    c_large = sp.sqrt(share * theta_value / (2 * sp.pi * sp.log(2)))
    c_large_module = sp.sqrt((1 - 2 * sp.log(tau_max) / sp.log(m_min)) / (4 * sp.pi * sp.log(2)))

    def covers_hi():
        yield "C_HI² − 2r", interval_eval(C_HI**2 - 2 * slack, {})
        yield "C_HI² − 2", interval_eval(C_HI**2 - 2, {})

    def covers_lo():
        yield "K <= 1/2: c_small − C_LO", interval_eval(c_small - C_LO, {})
        yield "K >= 1/2: c_large − C_LO", interval_eval(c_large - C_LO, {})

    def agrees(value, exact, label):
        def enclose():
            yield label, interval_eval(sp.Rational(1, 10**14) - sp.Abs(value - exact), {})
        return enclose

    steps = (
        # ---------------------------------------------------------- the model
        Identity("proxy-variance", tau**2 / (m_ / n), kappa * tau**2 * n / m_,
                 text="τ²/(M/n) = κτ²n/M (κ = 1)"),
        Cited("model-facts", "the mean of m = M/n iid margins with noise variance τ² has "
              "variance τ²/m; for X ~ N(0, 1) and Ŷ = X + σZ, E[X | Ŷ] = Ŷ/(1+σ²) and "
              "s = Ŷ/√(1+σ²) ~ N(0, 1), so a rule selecting on Ŷ gains E[s_sel]/√(1+σ²) in gold",
              "Gaussian conditioning, Bishop, Pattern Recognition and Machine Learning (2006), "
              "§2.3.1; rlscale.theory.reward module docstring"),
        Identity("regression-factor", (1 / (1 + sig2)) * sp.sqrt(1 + sig2),
                 1 / sp.sqrt(1 + sig2),
                 text="(1/(1+σ²))·√(1+σ²) = 1/√(1+σ²)"),
        # ---------------------------------------------------------- upper bound
        Identity("envelope-derivative", sp.Derivative(f, n) * (1 + a * n) ** 2, numerator,
                 text="f(n) = log n/(1+an): f′(n)·(1+an)² = 1/n + a − a log n"),
        Sign("envelope-unimodal", sp.diff(numerator, n), "<",
             text="d/dn (1/n + a − a log n) < 0: the numerator of f′ decreases in n"),
        Identity("envelope-lambert", W * sp.exp(W), 1 / (sp.E * star[a]),
                 text="with a = e^{−1−W}/W, W e^W = 1/(ea) = M/(eκτ²) = z: W = W(z)"),
        Identity("envelope-root", numerator.subs(star), 0,
                 text="the numerator vanishes at n* = e^{1+W(z)}"),
        Identity("envelope-value", f.subs(star), W, text="max_n f(n) = f(n*) = W(z)"),
        Cited("per-pool-upper", "on a pool of n with KL ≤ K the standardised proxy gain is at "
              "most min(e(n), √(2K)) ≤ √(2·min(K, log n)) (the tilted policy dominates "
              "best-of-n on each pool), so the gold gain squared is at most "
              "2·min(K, log n)/(1 + an)",
              "the proofs emax-upper and tilting (checked on their own by rlscale prove)"),
        PolynomialInequality(
            "gain-squared", g2 <= 2 * sp.Min(K, W),
            (g2 <= 2 * sp.Min(K, ln) / d, d >= 1, ln / d <= W),
            text="g² ≤ 2·min(K, l)/d, d ≥ 1, l/d ≤ W ⇒ g² ≤ 2·min(K, W) (g: gain on a "
                 "pool, l = log n, d = 1 + an)"),
        Identity("lambert-log", sp.Derivative((1 + z) * sp.log(1 + z) - z, z), sp.log(1 + z),
                 text="d/dz[(1+z)log(1+z) − z] = log(1+z)"),
        Cited("calculus", "first-derivative test: f(n) = log n/(1+an) rises then falls (the "
              "numerator of f′ decreases through 0), so f(n*) = W(z) is its maximum; "
              "(1+z)log(1+z) − z vanishes at 0 with slope log(1+z) ≥ 0, so (1+z)log(1+z) ≥ z "
              "and, W increasing on z ≥ 0 with W e^W = z, W(z) ≤ log(1+z) ≤ λ(M); a negative "
              "derivative makes λ(M)/log M decrease; (n−1)²/2 − KL(n) vanishes at n = 1 with "
              "slope ≥ 0, so KL(n) ≤ (n−1)²/2; ⌊x⌋ > x − 1; log is increasing",
              "mean value theorem, Rudin, Principles of Mathematical Analysis (1976), Thm 5.11; "
              "Corless et al., On the Lambert W function (1996)"),
        Identity("slack-derivative",
                 sp.Derivative(sp.log(1 + m_ / c) / sp.log(m_), m_) * m_ * sp.log(m_) ** 2,
                 m_ * sp.log(m_) / (m_ + c) - sp.log(1 + m_ / c),
                 text="(λ(M)/log M)′·M log²M = M log M/(M+c) − λ(M), c = eτ_min²"),
        Sign("tau-min-small", -sp.log(sp.E * tau_min**2), ">",
             text="log c = log(eτ_min²) < 0, so λ(M) ≥ log M − log c > log M"),
        PolynomialInequality(
            "slack-decreasing", m_ * ell / (m_ + c) - lam < 0, (lam >= ell - lc, lc < 0),
            text="λ ≥ log M − log c, log c < 0 ⇒ M log M/(M+c) − λ(M) < 0: the derivative "
                 "of λ(M)/log M is negative, so λ(M) ≤ r·log M, r = max(1, λ(M_MIN)/log M_MIN)"),
        IntervalCertificate(
            "c-hi-covers", enclose=covers_hi,
            text=f"C_HI² ≥ 2r = 2·max(1, λ(M_MIN)/log M_MIN) for C_HI = {c_hi!r}",
            latex_text=rf"C_{{HI}}^2 - 2\max\left(1, {sp.latex(slack)}\right) \ge 0"),
        PolynomialInequality(
            "upper-band", g2 <= c2 * sp.Min(K, ell),
            (g2 <= 2 * sp.Min(K, lam), lam <= r * ell, r >= 1, c2 >= 2 * r),
            text="G² ≤ 2 min(K, λ), λ ≤ r log M, C_HI² ≥ 2r ≥ 2 ⇒ G ≤ C_HI·√min(K, log M)"),
        IntervalCertificate(
            "c-hi-formula", enclose=agrees(C_HI, sp.sqrt(2 * rho), "C_HI − √(2ρ)"),
            text="the imported C_HI is the module's √(2ρ), ρ = (1 + λ(M_MIN))/log M_MIN, "
                 "to 1e-14",
            latex_text=rf"\left|C_{{HI}} - \sqrt{{2\cdot{sp.latex(rho)}}}\right| < 10^{{-14}}"),
        # ---------------------------------------------------------- lower bound, K <= 1/2
        Identity("small-k-kl-slope",
                 sp.Derivative((n - 1) ** 2 / 2 - (sp.log(n) - 1 + 1 / n), n),
                 (n - 1) * (1 - 1 / n**2),
                 text="d/dn[(n−1)²/2 − KL(n)] = (n−1)(1 − 1/n²)"),
        PolynomialInequality("small-k-kl", (n - 1) * (1 - 1 / n**2) >= 0, (n >= 1,),
                             text="n ≥ 1 ⇒ (n−1)(1 − 1/n²) ≥ 0: the slope is ≥ 0"),
        Identity("small-k-budget", ((n - 1) ** 2 / 2).subs(n, 1 + sp.sqrt(2 * K)), K,
                 text="(n−1)²/2 = K at n = 1 + √(2K) (and n ≤ 2 for K ≤ 1/2)"),
        PolynomialInequality(
            "small-k-noise", kappa * tau**2 * n / m_ <= 2 * kappa * tau_max**2 / m_min,
            (n <= 2, tau <= tau_max, m_ >= m_min),
            text="n ≤ 2, τ ≤ τ_max, M ≥ M_MIN ⇒ an ≤ 2κτ_max²/M_MIN"),
        Sign("small-k-regime", sp.log(m_min) - sp.Rational(1, 2), ">",
             text="log M_MIN > 1/2, so L = K when K ≤ 1/2"),
        Identity("small-k-constant",
                 ((n - 1) / sp.sqrt(sp.pi)).subs(n, 1 + sp.sqrt(2 * K))
                 / sp.sqrt(1 + 2 * kappa * tau_max**2 / m_min), c_small * sp.sqrt(K),
                 text="((n−1)/√π)/√(1 + 2κτ_max²/M_MIN) at n = 1 + √(2K) equals "
                      "c_small·√K"),
        Cited("emax-lower-bounds", "e(n) ≥ (n−1)/√π on [1, 2] and e(n) ≥ √(log n/(π ln 2)) "
              "for n ≥ 2, and best-of-n on a pool of n gains e(n)/√(1+an) in gold; KL of "
              "best-of-n is log n − (n−1)/n",
              "the proofs emax-lower and bon-kl (checked on their own by rlscale prove)"),
        # ---------------------------------------------------------- lower bound, K >= 1/2
        Sign("two-is-feasible", sp.Rational(1, 2) - (sp.log(2) - sp.Rational(1, 2)), ">",
             text="KL(2) = log 2 − 1/2 < 1/2 ≤ K: the pool n = 2 is always allowed"),
        PolynomialInequality("pool-noise", kappa * tau**2 * n / m_ <= 1, (n * tau**2 <= m_,),
                             text="n ≤ M/τ² ⇒ an ≤ 1 (κ = 1), so 1 + an ≤ 2 (n = 2 beyond "
                                  "M/τ²: small-k-noise)"),
        PolynomialInequality("pool-size", n**p_exp >= x**q_exp, (x >= 1, n >= 2, n >= x - 1),
                             text="x ≥ 1, n ≥ 2, n ≥ x − 1 ⇒ n⁵ ≥ x³, i.e. log n ≥ "
                                  "(3/5)·log x (n = max(2, ⌊x⌋) meets the hypotheses)"),
        PolynomialInequality(
            "theta", ell - 2 * lt >= theta * ell,
            (ell >= ell_min, lt <= lt_max, lt_max >= 0,
             sp.Eq(theta * ell_min, ell_min - theta_factor * lt_max)),
            text="log x = min(K, log M − 2 log τ) and log M − 2 log τ ≥ θ log M for "
                 "M ≥ M_MIN, τ ≤ τ_max, θ = 1 − 2 log τ_max/log M_MIN"),
        Sign("theta-positive", theta_value, ">", text="θ > 0 on the model's domain"),
        PolynomialInequality("theta-min", sp.Min(K, amount) >= theta * sp.Min(K, ell),
                             (amount >= theta * ell, theta <= 1),
                             text="0 < θ ≤ 1 ⇒ min(K, A) ≥ θ·min(K, log M): log x ≥ θL"),
        Identity("large-k-constant",
                 sp.sqrt(share * theta * ell / (sp.pi * sp.log(2))) / sp.sqrt(2),
                 sp.sqrt(share * theta / (2 * sp.pi * sp.log(2))) * sp.sqrt(ell),
                 text="√((3/5)·θL/(π ln 2))/√2 = √(3θ/(10π ln 2))·√L"),
        IntervalCertificate(
            "c-lo-covers", enclose=covers_lo,
            text=f"C_LO = {c_lo!r} ≤ min(c_small, √(3θ/(10π ln 2)))",
            latex_text=rf"\min\left({sp.latex(c_small)}, {sp.latex(c_large)}\right) - C_{{LO}}"
                       r" > 0"),
        IntervalCertificate(
            "c-lo-formula",
            enclose=agrees(C_LO, sp.Min(c_small, c_large_module), "C_LO − min(...)"),
            text="the imported C_LO is the module's min(c_small, √(θ/(4π ln 2))) to 1e-14",
            latex_text=r"\left|C_{LO} - \min(c_{small}, \sqrt{\theta/(4\pi\ln 2)})\right| "
                       r"< 10^{-14}"),
    )
    return Proof(
        name=NAME,
        title="The Θ(√min{log M, K}) reward-optimisation band",
        statement=f"C_LO·√L ≤ G(M, K) ≤ C_HI·√L, L = min(log M, K), for best-of-n and the "
                  f"tilted policy on M ≥ {const['m_min']:g}, K > 0, "
                  f"{const['tau_min']:g} ≤ τ ≤ {const['tau_max']:g}, with C_LO = {c_lo:.6g}, "
                  f"C_HI = {c_hi:.6g} from rlscale.theory.reward",
        statement_latex=r"C_{LO}\sqrt{L} \le G(M,K) \le C_{HI}\sqrt{L},\quad "
                        r"L = \min(\log M, K)",
        assumptions=(
            "the selection model of rlscale.theory.reward (anchor comparisons, proxy "
            "Ŷ = X + σ_n Z, σ_n² = κτ²n/M, selection from proxies only)",
        ),
        notes="the quantilizer is not covered: the module's step (L2) for it needs n ≤ e^K, "
              "which n = 2 violates when 1/2 ≤ K < log 2; no proof here checks the "
              "quantilizer's band",
        steps=steps,
        concerns=("rlscale.theory.reward.gain", "rlscale.theory.reward.C_LO",
                    "rlscale.theory.reward.C_HI"),
        source="rlscale.theory.reward (model and the steps U1–U6, L1–L7 of its docstring); "
               "Lambert W envelope; Kamath's bound",
    )
