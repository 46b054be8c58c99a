"""Proof: the KL divergence of best-of-n sampling from its reference policy.

Statement.  Let the reference policy π0 produce outputs whose reward r has a
continuous CDF F (no ties).  Best-of-n draws n outputs from π0 and keeps the
one with the highest reward.  Then

    KL(π_bon ‖ π0) = log n − (n − 1)/n.

Derivation.  The best reward's CDF is F(r)^n, so π_bon has density ratio
d(F^n)/dF = n·F(r)^(n−1) against π0.  With u = F(r), uniform on (0, 1) under
π0, KL = ∫_0^1 n u^(n−1) log(n u^(n−1)) du, which sympy integrates.  Sources:
Stiennon et al. 2020 (appendix), Beirami et al. 2024 (arXiv 2401.01879), who
also show the formula is only an upper bound when rewards have atoms.
"""

from __future__ import annotations

import sympy as sp

from rlscale.proofs._core import Cited, Identity, Limit, PolynomialInequality, Proof

__all__ = ["NAME", "build"]

NAME = "bon-kl"


def build(*, kl_offset: int = -1, density_exponent_shift: int = 0) -> Proof:
    """The best-of-n KL proof.

    Parameters
    ----------
    kl_offset : int
        The claim is ``log n − (n + kl_offset)/n``; the truth is ``-1``.
        Mutation tests change it to show the integral step fails.
    density_exponent_shift : int
        The claimed density of the maximum of n uniforms is
        ``n·u^(n − 1 + shift)``; the truth is ``0``.

    Examples
    --------
    >>> build().check().passed
    True
    >>> build(kl_offset=0).check().step("kl-integral").status
    'failed'
    """
    n = sp.Symbol("n", positive=True)
    u = sp.Symbol("u", positive=True)
    r = sp.Symbol("r", real=True)
    F = sp.Function("F")
    density = n * u ** (n - 1 + density_exponent_shift)
    claimed = sp.log(n) - (n + kl_offset) / n
    log_density = sp.log(n) + (n - 1 + density_exponent_shift) * sp.log(u)
    steps = (
        Identity("max-density", sp.Derivative(u**n, u), density,
                 text="d/du u^n = n·u^(n−1)"),
        Cited("max-of-uniforms", "the maximum of n iid uniforms on (0, 1) has CDF u^n (so "
              "density n·u^(n−1)); best-of-n's reward has CDF F(r)^n",
              "independence: P(max ≤ u) = Π P(U_i ≤ u); David & Nagaraja, Order Statistics "
              "(2003), §2.1"),
        Identity("chain-rule", sp.Derivative(F(r) ** n, r),
                 n * F(r) ** (n - 1 + density_exponent_shift) * sp.Derivative(F(r), r),
                 text="d/dr F(r)^n = n·F(r)^(n−1)·f(r): the density ratio against π0 is "
                      "n·F^(n−1)"),
        Identity("normalised", sp.Integral(density, (u, 0, 1)), 1,
                 text="∫_0^1 n·u^(n−1) du = 1"),
        Identity("log-density", sp.log(density), log_density,
                 text="log(n·u^(n−1)) = log n + (n−1)·log u (n, u > 0)"),
        Identity("kl-integral", sp.Integral(density * log_density, (u, 0, 1)), claimed,
                 text="∫_0^1 n u^(n−1) log(n u^(n−1)) du = log n − (n−1)/n"),
        Cited("change-of-variables", "u = F(r) is uniform on (0, 1) under π0 and "
              "E_π0[g(F(r))] = ∫_0^1 g(u) du, so KL(best-of-n ‖ π0) = E_π0[ρ log ρ] with "
              "ρ = n·F^(n−1) is the integral above",
              "probability integral transform, Casella & Berger, Statistical Inference (2002), "
              "Thm 2.1.10"),
        Identity("kl-at-one", claimed.subs(n, 1), 0, text="best-of-1 is the reference: KL = 0"),
        Identity("kl-derivative", sp.Derivative(claimed, n), (n - 1) / n**2,
                 text="dKL/dn = (n−1)/n²"),
        PolynomialInequality("kl-increasing", (n - 1) / n**2 >= 0, (n >= 1,),
                             text="n ≥ 1 ⇒ (n−1)/n² ≥ 0: dKL/dn ≥ 0"),
        Cited("monotone", "a function with non-negative derivative on [1, ∞) is "
              "non-decreasing, so KL grows with n",
              "mean value theorem, Rudin, Principles of Mathematical Analysis (1976), Thm 5.11"),
        Limit("log-n-gap", sp.log(n) - claimed, n, sp.oo, 1,
              text="log n − KL → 1: KL = log n − 1 + o(1)"),
    )
    return Proof(
        name=NAME,
        title="Best-of-n KL divergence",
        statement="KL(best-of-n ‖ reference) = log n − (n−1)/n for continuous rewards",
        statement_latex=r"\mathrm{KL}(\pi_{\mathrm{bon}}\,\|\,\pi_0) = \log n - \frac{n-1}{n}",
        assumptions=(
            "the reward r has a continuous CDF F under π0 (no ties, no atoms)",
            "best-of-n returns the output with the largest of n iid rewards",
        ),
        steps=steps,
        concerns=("rlscale.theory.bon_kl", "rlscale.theory.bon_n_for_kl"),
        source="Stiennon et al. 2020; Beirami et al. 2024, arXiv 2401.01879",
    )
