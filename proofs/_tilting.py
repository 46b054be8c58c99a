"""Proof: Gaussian exponential tilting and the Donsker–Varadhan gain bound.

Statement.  (a) Tilting N(0, 1) by exp(βr) gives N(β, 1), whose KL divergence
from N(0, 1) is β²/2 and whose mean gain is β; so a KL budget K buys the gain
√(2K).  (b) No policy π with KL(π ‖ π0) ≤ K gains more than √(2K) on a reward
that is 1-sub-Gaussian under π0: the tilted policy is optimal.

Derivation of (b).  For h = λ(r − E_π0 r), λ > 0, the Gibbs variational
identity log(π/π_h) = log(π/π0) − h + log E_π0[e^h] (π_h ∝ π0·e^h) and
KL(π ‖ π_h) ≥ 0 give Donsker–Varadhan: λ·gain ≤ K + log E_π0[e^h] ≤ K + λ²/2.
So gain ≤ g(λ) = K/λ + λ/2 for every λ > 0; g is minimised at λ = √(2K) with
value √(2K), and g(λ) − √(2K) = (λ − √(2K))²/(2λ) ≥ 0.  Sources: Donsker &
Varadhan 1975; Mroueh 2024 (arXiv 2406.05883) for best-of-n/RL alignment.
"""

from __future__ import annotations

import sympy as sp

from rlscale.proofs._core import Cited, Identity, PolynomialInequality, Proof

__all__ = ["NAME", "build"]

NAME = "tilting"
_HALF = sp.Rational(1, 2)


def build(*, kl_coefficient: sp.Expr = _HALF, gain_coefficient: int = 2,
          subgaussian_coefficient: sp.Expr = _HALF) -> Proof:
    """The Gaussian tilting / Donsker–Varadhan proof.

    Parameters
    ----------
    kl_coefficient : sympy number
        Claimed KL(N(β,1) ‖ N(0,1)) = kl_coefficient·β² (truth 1/2).
    gain_coefficient : int
        Claimed gain √(gain_coefficient·K) (truth 2).
    subgaussian_coefficient : sympy number
        The log-MGF bound used for the reward, coefficient·λ² (truth 1/2
        for a 1-sub-Gaussian reward, matching the Gaussian MGF).

    Examples
    --------
    >>> build().check().passed
    True
    >>> build(gain_coefficient=1).check().step("dv-value").status
    'failed'
    """
    z = sp.Symbol("z", real=True)
    beta, K, lam, s = sp.symbols("beta K lambda s", positive=True)
    p, q, Z = sp.symbols("p q Z", positive=True)
    h = sp.Symbol("h", real=True)
    phi = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    tilted = phi.subs(z, z - beta)
    gain = sp.sqrt(gain_coefficient * K)
    g = K / lam + subgaussian_coefficient * lam**2 / lam
    steps = (
        Identity("gaussian-mgf", sp.Integral(phi * sp.exp(beta * z), (z, -sp.oo, sp.oo)),
                 sp.exp(subgaussian_coefficient * beta**2),
                 text="E_{N(0,1)}[e^{βr}] = e^{β²/2}: the Gaussian meets the 1-sub-Gaussian "
                      "MGF bound with equality"),
        Identity("tilted-law", phi * sp.exp(beta * z) / sp.exp(beta**2 / 2), tilted,
                 text="φ(z)·e^{βz}/E[e^{βZ}] = φ(z − β): the tilted law is N(β, 1)"),
        Identity("log-ratio", sp.log(tilted / phi), beta * z - beta**2 / 2,
                 text="log(φ(z − β)/φ(z)) = βz − β²/2"),
        Identity("kl-of-tilt", sp.Integral(tilted * (beta * z - beta**2 / 2),
                                           (z, -sp.oo, sp.oo)),
                 kl_coefficient * beta**2, text="KL(N(β,1) ‖ N(0,1)) = β²/2"),
        Identity("gain-of-tilt", sp.Integral(z * tilted, (z, -sp.oo, sp.oo)), beta,
                 text="E_{N(β,1)}[r] − E_{N(0,1)}[r] = β"),
        Identity("gain-of-budget", gain.subs(K, kl_coefficient * beta**2), beta,
                 text="with K = β²/2 the gain β equals √(2K)"),
        Identity("gibbs-identity", sp.log(p / (q * sp.exp(h) / Z)),
                 sp.log(p / q) - h + sp.log(Z),
                 text="log(π/π_h) = log(π/π0) − h + log E_π0[e^h] pointwise, "
                      "π_h = π0·e^h/E_π0[e^h]"),
        Cited("donsker-varadhan", "Gibbs' inequality KL(π‖π_h) ≥ 0: integrating the identity "
              "against π gives E_π[h] ≤ KL(π‖π0) + log E_π0[e^h]; with h = λ(r − E_π0 r), "
              "KL ≤ K and the 1-sub-Gaussian bound, λ·gain ≤ K + λ²/2 for every λ > 0",
              "Gibbs' inequality, Cover & Thomas, Elements of Information Theory (2006), "
              "Thm 2.6.3; Donsker & Varadhan 1975"),
        Identity("dv-objective", (K + subgaussian_coefficient * lam**2) / lam, g,
                 text="(K + λ²/2)/λ = K/λ + λ/2 =: g(λ)"),
        Identity("dv-stationary", sp.Derivative(g, lam).subs(lam, sp.sqrt(2 * K)), 0,
                 text="g′(√(2K)) = 0"),
        Identity("dv-value", g.subs(lam, sp.sqrt(2 * K)), gain,
                 text="g(√(2K)) = √(2K)"),
        Identity("dv-square", g - sp.sqrt(2 * K), (lam - sp.sqrt(2 * K)) ** 2 / (2 * lam),
                 text="g(λ) − √(2K) = (λ − √(2K))²/(2λ)"),
        PolynomialInequality("dv-minimum", K / lam + subgaussian_coefficient * lam >= s,
                             (lam > 0, s > 0, sp.Eq(2 * K, s**2)),
                             text="λ > 0, s = √(2K) ⇒ K/λ + λ/2 ≥ s: the bound g(λ) is "
                                  "smallest at λ = √(2K), where it is √(2K)"),
    )
    return Proof(
        name=NAME,
        title="Gaussian tilting and the Donsker–Varadhan bound",
        statement="KL(N(β,1)‖N(0,1)) = β²/2, so the tilted gain is √(2K); and every policy "
                  "with KL ≤ K gains at most √(2K) on a 1-sub-Gaussian reward",
        statement_latex=r"\mathrm{KL}(\mathcal N(\beta,1)\|\mathcal N(0,1)) = \tfrac{\beta^2}{2},"
                        r"\quad \sup_{\mathrm{KL}(\pi\|\pi_0)\le K} \mathbb E_\pi r - "
                        r"\mathbb E_{\pi_0} r \le \sqrt{2K}",
        assumptions=(
            "r is 1-sub-Gaussian under π0: log E_π0[e^{λ(r − E r)}] ≤ λ²/2 for all λ",
            "π is absolutely continuous with respect to π0 (otherwise KL = ∞)",
        ),
        steps=steps,
        concerns=("rlscale.theory.tilt_gain", "rlscale.theory.reward.gain_upper"),
        source="Donsker & Varadhan 1975; Mroueh 2024, arXiv 2406.05883",
    )
