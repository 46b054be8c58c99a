"""Proof: the per-turn log-success laws of an inference budget are concave in n.

Statement.  For real n > 0 and L = −log(1 − q) > 0 (0 < q < 1):

* coverage: log p(n) = log(1 − e^{−Ln}) has second derivative
  −L²w/(1 − w)² < 0 with w = e^{−Ln} ∈ (0, 1);
* noisy verifier, terminal failures: p(n) = π − D·e^{−Ln} with D = π − ρ > 0
  (L = −log(1 − a) for the acceptance rate a) has (log p)'' =
  −π·D·L²·e^{−Ln}/p² < 0; and D > 0 exactly when the verifier is informative
  (fpr + fnr < 1): q(1−fnr)(1−a) − q·fnr·a = q(1−q)(1 − fnr − fpr);
  its one-candidate success is q (π·a + ρ·(1 − a) = q);
* fitted coverage (Brown et al. 2024): log p(k) = a·k^b with a, b < 0 has
  second derivative a·b·(b − 1)·k^{b−2} < 0;
* the log of any positive concave function is concave ((log f)'' =
  (f''f − f'²)/f² ≤ 0), which covers the Gaussian selection law, whose
  concavity p(n) = h(1) − ∫u^n h'(u)du is argued in
  ``rlscale.theory._turns``;
* a concave function has decreasing unit increments on the integers, so the
  marginal gains the greedy allocation ranks are decreasing.

With decreasing marginals and one unit cost, greedy marginal allocation of a
separable objective is optimal (Gross 1956; Fox 1966; Ibaraki & Katoh 1988,
Theorem 4.1.1) — cited, not re-proved here.
"""

from __future__ import annotations

import sympy as sp

from rlscale.proofs._core import Cited, Identity, PolynomialInequality, Proof, Sign

__all__ = ["NAME", "build"]

NAME = "inference-concavity"


def build(*, coverage_power: int = 2, empirical_shift: int = 2,
          informative: bool = True) -> Proof:
    """The concavity proof behind ``rlscale.optimize.integer_plan``.

    Parameters
    ----------
    coverage_power : int
        Claimed power of L in the coverage second derivative (true: 2).
    empirical_shift : int
        Claimed k^{b − shift} in the fitted-coverage second derivative (true: 2).
    informative : bool
        Whether the precision step assumes fpr + fnr < 1 (dropping it must fail).

    Examples
    --------
    >>> build().check().passed
    True
    """
    n, L, k = sp.symbols("n L k", positive=True)
    w = sp.Symbol("w", positive=True)
    pi, D, P = sp.symbols("pi D P", positive=True)
    a, b = sp.symbols("a b", negative=True)
    q, fpr, fnr, acc = sp.symbols("q fpr fnr a_acc", positive=True)
    f0, f1, f2, g, g1, g2 = sp.symbols("f0 f1 f2 g g1 g2", real=True)
    fn = sp.Function("f")
    cover = sp.log(1 - sp.exp(-L * n))
    second = -L**coverage_power * w / (1 - w) ** 2
    verifier = pi - D * sp.exp(-L * n)
    accept = q * (1 - fnr) + (1 - q) * fpr
    informative_hyp = (fpr + fnr < 1,) if informative else ()
    steps = (
        Identity("coverage-second-derivative", sp.diff(cover, n, 2),
                 second.subs(w, sp.exp(-L * n)),
                 text="d²/dn² log(1 − e^{−Ln}) = −L²w/(1 − w)², w = e^{−Ln}"),
        PolynomialInequality("coverage-concave",
                             sp.And((1 - w) ** 2 > 0, -L**2 * w < 0), (w < 1,),
                             text="0 < w < 1 ⇒ (1 − w)² > 0 and −L²w < 0: the coverage "
                                  "log-success is strictly concave"),
        Identity("verifier-second-derivative", sp.diff(sp.log(verifier), n, 2),
                 -pi * D * L**2 * sp.exp(-L * n) / verifier**2,
                 text="p = π − D·e^{−Ln} ⇒ (log p)'' = −π·D·L²·e^{−Ln}/p²"),
        Sign("verifier-concave", -pi * D * L**2 * sp.exp(-L * n) / P**2, "<",
             text="π, D, L > 0 and p(n) = P > 0 ⇒ (log p)'' < 0"),
        Identity("verifier-gap", q * (1 - fnr) * (1 - accept) - q * fnr * accept,
                 q * (1 - q) * (1 - fnr - fpr),
                 text="a·(1 − a)·(π − ρ) = q(1−fnr)(1−a) − q·fnr·a = q(1−q)(1 − fnr − fpr)"),
        PolynomialInequality("precision-above-fallback",
                             q * (1 - q) * (1 - fnr - fpr) > 0,
                             (q < 1, *informative_hyp),
                             text="0 < q < 1 and fpr + fnr < 1 ⇒ π > ρ, i.e. D > 0"),
        Identity("verifier-one-candidate",
                 (q * (1 - fnr) / acc) * acc + (q * fnr / (1 - acc)) * (1 - acc), q,
                 text="π·a + ρ·(1 − a) = q: one candidate succeeds with probability q"),
        Identity("empirical-second-derivative", sp.diff(a * k**b, k, 2),
                 a * b * (b - 1) * k ** (b - empirical_shift),
                 text="d²/dk² (a·k^b) = a·b·(b − 1)·k^{b−2}"),
        Sign("empirical-concave", a * b * (b - 1) * k ** (b - 2), "<",
             text="a < 0, b < 0 ⇒ a·b > 0, b − 1 < 0: log c(k) = a·k^b is concave"),
        Identity("log-of-function", sp.diff(sp.log(fn(n)), n, 2),
                 (sp.diff(fn(n), n, 2) * fn(n) - sp.diff(fn(n), n) ** 2) / fn(n) ** 2,
                 text="(log f)'' = (f''·f − f'²)/f²"),
        PolynomialInequality("log-of-concave", g2 * g - g1**2 <= 0, (g > 0, g2 <= 0),
                             text="f = g > 0 and f'' = g2 ≤ 0 ⇒ f''f − f'² ≤ 0: log of a "
                                  "positive concave function is concave"),
        PolynomialInequality("decreasing-increments", f2 - f1 <= f1 - f0, (2 * f1 >= f0 + f2,),
                             text="concavity at the midpoint, f(n+1) ≥ (f(n) + f(n+2))/2 ⇒ "
                                  "f(n+2) − f(n+1) ≤ f(n+1) − f(n): greedy's marginals decrease"),
        Cited("greedy-optimal",
              fact="greedy marginal allocation is optimal for a separable objective with "
                   "decreasing marginals under one budget of equal unit costs",
              reference="Gross 1956; Fox 1966; Ibaraki & Katoh 1988, Thm 4.1.1"),
    )
    return Proof(
        name=NAME,
        title="Concavity of per-turn log-success in the number of candidates",
        statement="log p(n) is concave in n for the coverage, noisy-verifier and fitted "
                  "coverage laws; unit increments decrease, so greedy allocation is exact",
        statement_latex=r"\frac{d^2}{dn^2}\log\left(1 - e^{-Ln}\right) = "
                        r"-\frac{L^2 e^{-Ln}}{(1 - e^{-Ln})^2} < 0",
        assumptions=(
            "n > 0 real; L = −log(1 − q) > 0, so w = e^{−Ln} ∈ (0, 1) (the exponential "
            "is increasing)",
            "for the verifier law p(n) = π − (π − ρ)(1 − a)^n > 0 (it is ≥ ρ ≥ 0 and > 0 "
            "for n > 0)",
        ),
        steps=steps,
        concerns=("rlscale.optimize.integer_plan", "rlscale.optimize.continuous_plan",
                    "rlscale.theory.Turn"),
        source="Brown et al. 2024 (arXiv 2407.21787) for c(k) = exp(a·k^b); "
               "Ibaraki & Katoh 1988 for greedy resource allocation",
    )
