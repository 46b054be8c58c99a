"""Proof: the expected maximum of n standard Gaussians is at most √(2 ln n).

Statement.  For n ≥ 1 iid Z_i ~ N(0, 1), e(n) = E[max_i Z_i] ≤ √(2 ln n).

Derivation.  For λ > 0, Jensen's inequality (exp is convex) and
e^{λ max Z} ≤ Σ_i e^{λ Z_i} give e^{λ e(n)} ≤ E[e^{λ max Z}] ≤ n·E[e^{λZ}]
= n·e^{λ²/2}, the Gaussian moment generating function (checked).  Taking
logs, e(n) ≤ ln n/λ + λ/2 for every λ > 0; the right side is minimised at
λ = √(2 ln n) with value √(2 ln n).  At n = 1 both sides are 0.  Source:
the classical Chernoff argument, e.g. Kamath, "Bounds on the expectation of
the maximum of samples from a Gaussian".
"""

from __future__ import annotations

import sympy as sp

from rlscale.proofs._core import Cited, Identity, PolynomialInequality, Proof

__all__ = ["NAME", "build"]

NAME = "emax-upper"
_HALF = sp.Rational(1, 2)


def build(*, bound_coefficient: int = 2, mgf_coefficient: sp.Expr = _HALF) -> Proof:
    """The Chernoff upper bound on the Gaussian expected maximum.

    Parameters
    ----------
    bound_coefficient : int
        Claimed bound √(bound_coefficient·ln n) (truth 2).
    mgf_coefficient : sympy number
        Claimed Gaussian MGF e^{c·λ²} (truth c = 1/2).

    Examples
    --------
    >>> build().check().passed
    True
    >>> build(bound_coefficient=1).check().step("optimal-value").status
    'failed'
    """
    z = sp.Symbol("z", real=True)
    lam, n, L, s = sp.symbols("lambda n L s", positive=True)
    phi = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    mgf = sp.exp(mgf_coefficient * lam**2)
    bound = L / lam + mgf_coefficient * lam
    lam_star = sp.sqrt(2 * L)
    steps = (
        Identity("gaussian-mgf", sp.Integral(phi * sp.exp(lam * z), (z, -sp.oo, sp.oo)), mgf,
                 text="E[e^{λZ}] = e^{λ²/2}"),
        Identity("log-of-union", sp.log(n * mgf) / lam, sp.log(n) / lam + mgf_coefficient * lam,
                 text="(1/λ)·log(n·e^{λ²/2}) = ln n/λ + λ/2"),
        Cited("jensen-union", "Jensen (exp convex): exp(λ·E[M]) ≤ E[exp(λM)] ≤ "
              "Σ_i E[exp(λZ_i)] = n·e^{λ²/2} (exp(λ·max_i Z_i) ≤ Σ_i exp(λZ_i)), so "
              "e(n) ≤ (1/λ)·log(n·e^{λ²/2}) for every λ > 0",
              "Jensen 1906; Boucheron, Lugosi & Massart, Concentration Inequalities (2013), "
              "§2.5"),
        Identity("stationary", sp.Derivative(bound, lam).subs(lam, lam_star), 0,
                 text="d/dλ (L/λ + λ/2) = 0 at λ = √(2L), L = ln n"),
        Identity("optimal-value", bound.subs(lam, lam_star), sp.sqrt(bound_coefficient * L),
                 text="L/λ + λ/2 at λ = √(2L) equals √(2L)"),
        PolynomialInequality("global-minimum", L / lam + mgf_coefficient * lam >= s,
                             (lam > 0, L > 0, s > 0, sp.Eq(s**2, bound_coefficient * L)),
                             text="λ > 0, s = √(2L) ⇒ L/λ + λ/2 ≥ s: λ = √(2L) gives the "
                                  "smallest bound"),
    )
    return Proof(
        name=NAME,
        title="Upper bound on the Gaussian expected maximum",
        statement="e(n) = E[max of n iid N(0,1)] ≤ √(2 ln n) for n ≥ 1",
        statement_latex=r"\mathbb E\big[\max_{i\le n} Z_i\big] \le \sqrt{2\ln n}",
        assumptions=(
            "n = 1 is trivial (e(1) = 0 = √(2 ln 1)); the steps take L = ln n > 0",
        ),
        steps=steps,
        concerns=("rlscale.theory.expected_max_normal_bounds",),
        source="Chernoff bound; Kamath, 'Bounds on the expectation of the maximum of samples "
               "from a Gaussian'",
    )
