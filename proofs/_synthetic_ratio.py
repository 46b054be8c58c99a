"""Proof: how much synthetic data to buy under the saturating effective-data model.

Statement.  With x_eff = x_real + ρ·S·(1 − exp(−x_syn/S)) (synthetic data is
worth ρ real samples at first and saturates at ρ·S), unit costs c_real,
c_syn and budget c_real·x_real + c_syn·x_syn = B, the x_eff-maximising
(hence loss-minimising, for any loss decreasing in x_eff) purchase is

    x_syn* = S·ln(ρ·c_real/c_syn)  if ρ·c_real > c_syn,  else 0,

(interior while B ≥ c_syn·x_syn*), and the synthetic-to-real ratio is
r* = c_real·x_syn*/(B − c_syn·x_syn*).  Synthetic data is worth buying at all
exactly when the price ratio c_syn/c_real is below the critical ratio ρ.
For relative saturation (S* = s·x_real) the best ratio r = x_syn/x_real
maximises effective units per cost g(r)/(c_real + c_syn·r); it is
r* = −s·W₋₁(z) − s − c_real/c_syn, z = −((1+ρs)/(ρs))·e^{−1−c_real/(c_syn s)}.

Derivation.  Substituting x_real = (B − c_syn x_syn)/c_real, the marginal
effective data per unit of budget is ρ·e^{−x_syn/S}/c_syn − 1/c_real; the
objective is strictly concave in x_syn, so its unique stationary point is the
maximiser; when ρ·c_real ≤ c_syn the derivative is ≤ 0 on x_syn ≥ 0 and the
corner x_syn = 0 is optimal.  The saturating form follows Muennighoff et al.
2023 (arXiv 2305.16264) for repeated data.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from rlscale.proofs._core import Cited, Identity, PolynomialInequality, Proof, Sign

__all__ = ["NAME", "build", "closed_form"]

NAME = "synthetic-ratio"


def closed_form() -> dict[str, sp.Expr]:
    """The proved optimum as sympy expressions (interior case ρ·c_real > c_syn).

    ``x_syn`` is the optimal synthetic amount, ``ratio`` the synthetic-to-real
    ratio at budget B, ``critical_price_ratio`` the c_syn/c_real below which
    synthetic data is bought, and ``relative_ratio`` the Lambert-W optimum of
    the relative-saturation form (S* = s·x_real).

    Examples
    --------
    >>> sorted(closed_form())
    ['critical_price_ratio', 'ratio', 'relative_ratio', 'x_syn']
    """
    S, rho, cr, cs, B, s = sp.symbols("S rho c_real c_syn B s", positive=True)
    xs = S * sp.log(rho * cr / cs)
    z = -((1 + rho * s) / (rho * s)) * sp.exp(-1 - cr / (cs * s))
    return {"x_syn": xs, "ratio": cr * xs / (B - cs * xs), "critical_price_ratio": rho,
            "relative_ratio": -s * sp.LambertW(z, -1) - s - cr / cs}


def build(*, x_syn_star: sp.Expr | None = None, relative_z: Any = None) -> Proof:
    """The critical synthetic-to-real ratio proof.

    Parameters
    ----------
    x_syn_star : sympy expression, optional
        Claimed optimal synthetic amount; default S·ln(ρ·c_real/c_syn).
    relative_z : callable, optional
        ``(rho, s, c_real, c_syn) -> z``, the claimed Lambert-W argument of the
        relative-saturation optimum (default the true one).

    Examples
    --------
    >>> build().check().passed
    True
    """
    x, S, rho, cr, cs, B = sp.symbols("x_syn S rho c_real c_syn B", positive=True)
    w = sp.Symbol("w", positive=True)  # w = e^{−x/S} ∈ (0, 1]
    xs = S * sp.log(rho * cr / cs) if x_syn_star is None else x_syn_star
    # relative saturation S* = s·x_real: ratio r = x_syn/x_real, y = r + s + c_real/c_syn
    sr, r, y = sp.symbols("s r y", positive=True)
    W = sp.Symbol("W", negative=True)
    g = 1 + rho * sr * (1 - sp.exp(-r / sr))
    foc = sp.diff(g, r) * (cr + cs * r) - cs * g
    lambert_lhs = y * sp.exp(-y / sr)
    lambert_rhs = (1 + rho * sr) / rho * sp.exp(-(sr + cr / cs) / sr)
    zW = (-((1 + rho * sr) / (rho * sr)) * sp.exp(-1 - cr / (cs * sr))
          if relative_z is None else relative_z(rho, sr, cr, cs))
    x_real = (B - cs * x) / cr
    x_eff = x_real + rho * S * (1 - sp.exp(-x / S))
    marginal = sp.diff(x_eff, x)
    steps = (
        Identity("marginal", marginal, rho * sp.exp(-x / S) - cs / cr,
                 text="d x_eff/d x_syn = ρ·e^{−x_syn/S} − c_syn/c_real along the budget line"),
        Sign("concave", sp.diff(x_eff, x, 2), "<",
             text="d² x_eff/d x_syn² = −(ρ/S)·e^{−x_syn/S} < 0"),
        Cited("concave-maximum", "a function with negative second derivative is strictly "
              "concave, and a strictly concave function on an interval is maximised at its "
              "stationary point, or at the end where its slope points when it has none",
              "Boyd & Vandenberghe, Convex Optimization (2004), §3.1.3-3.1.4"),
        Identity("stationary", marginal.subs(x, xs), 0,
                 text="the marginal value vanishes at x_syn* = S·ln(ρ c_real/c_syn)"),
        Identity("equal-marginal-value", rho * sp.exp(-xs / S) / cs, 1 / cr,
                 text="at x_syn*: ρ·e^{−x_syn*/S}/c_syn = 1/c_real (a unit of budget buys the "
                      "same effective data either way)"),
        Identity("positive-iff", sp.exp(xs / S), rho * cr / cs,
                 text="e^{x_syn*/S} = ρ c_real/c_syn, so x_syn* > 0 iff ρ·c_real > c_syn"),
        PolynomialInequality("corner", rho * w - cs / cr <= 0,
                             (rho * cr <= cs, w > 0, w <= 1, cr > 0, cs > 0, rho > 0),
                             text="ρ c_real ≤ c_syn and w = e^{−x_syn/S} ∈ (0, 1] ⇒ the marginal "
                                  "value ρw − c_syn/c_real ≤ 0: buy no synthetic data"),
        PolynomialInequality("critical-price-ratio", sp.Equivalent(cs / cr < rho, rho * cr > cs),
                             (cr > 0,),
                             text="ρ > c_syn/c_real ⇔ ρ·c_real > c_syn: the critical price "
                                  "ratio c_syn/c_real is ρ"),
        Identity("ratio", xs / x_real.subs(x, xs), cr * xs / (B - cs * xs),
                 text="r* = x_syn*/x_real* = c_real·x_syn*/(B − c_syn·x_syn*)"),
        Identity("budget", cr * ((B - cs * xs) / cr) + cs * xs, B,
                 text="x_real* = (B − c_syn x_syn*)/c_real spends the budget"),
        Identity("relative-foc", foc.subs(r, y - sr - cr / cs),
                 cs * rho * sp.exp((sr + cr / cs) / sr) * (lambert_lhs - lambert_rhs),
                 text="relative saturation: the first-order condition of g(r)/(c_real + c_syn r),"
                      " g(r) = 1 + ρs(1 − e^{−r/s}), is y·e^{−y/s} = ((1+ρs)/ρ)e^{−(s + "
                      "c_real/c_syn)/s} with y = r + s + c_real/c_syn"),
        Identity("relative-lambert", lambert_lhs.subs(y, -sr * W).subs(sp.exp(W), zW / W),
                 lambert_rhs,
                 text="y = −s·W(z), z = −((1+ρs)/(ρs))e^{−1−c_real/(c_syn s)}, solves it "
                      "(W e^W = z), so r* = −s·W₋₁(z) − s − c_real/c_syn"),
        Cited("lambert-branch", "y·e^{−y/s} decreases for y > s, so the root on the W₋₁ "
              "branch (W ≤ −1, y ≥ s) is the unique maximiser of g(r)/(c_real + c_syn r)",
              "Corless et al., On the Lambert W function, Adv. Comput. Math. 5 (1996)"),
    )
    return Proof(
        name=NAME,
        title="Critical synthetic-to-real ratio (saturating effective data)",
        statement="x_syn* = S·ln(ρ c_real/c_syn) when ρ c_real > c_syn, else 0; synthetic data "
                  "pays iff c_syn/c_real < ρ",
        statement_latex=r"x_{\mathrm{syn}}^* = S\,\ln\frac{\rho\,c_{\mathrm{real}}}"
                        r"{c_{\mathrm{syn}}}\ \text{if}\ \rho c_{\mathrm{real}} > c_{\mathrm{syn}},"
                        r"\ \text{else}\ 0",
        assumptions=(
            "S, ρ, c_real, c_syn, B are positive; x_real, x_syn ≥ 0 are continuous",
            "the loss is a decreasing function of x_eff only, so maximising x_eff under the "
            "budget minimises the loss",
            "an interior optimum needs B ≥ c_syn·x_syn* (otherwise all budget goes to "
            "synthetic data)",
        ),
        steps=steps,
        concerns=("rlscale.theory.critical_synthetic_ratio", "rlscale.theory.SynthesisMethod"),
        source="Muennighoff et al. 2023, arXiv 2305.16264 (saturating effective data)",
    )
