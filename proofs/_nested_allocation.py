"""Proof: optimal nested (multi-stage) allocation of environments, tasks, trajectories.

Statement.  Minimising the variance of a three-stage nested mean,
V = σ_E²/E + σ_T²/(E·t) + σ_τ²/(E·t·k), for E environments, t tasks per
environment and k trajectories per task, under the budget
c_E·E + c_T·E·t + c_τ·E·t·k = B, gives

    t* = √(c_E σ_T² / (c_T σ_E²)),   k* = √(c_T σ_τ² / (c_τ σ_T²)),
    E* = B / (c_E + c_T t* + c_τ t* k*),  V* = (σ_E√c_E + σ_T√c_T + σ_τ√c_τ)² / B.

Derivation.  E cancels from V·B = P(t, k) = (σ_E² + σ_T²/t + σ_τ²/(tk))·
(c_E + c_T t + c_τ t k), so (t, k) minimise P and E then spends the budget.
By Lagrange's identity P − (Σ_i √(a_i b_i))² = Σ_{i<j} (√(a_i b_j) −
√(a_j b_i))² ≥ 0 with a = (σ_E², σ_T²/t, σ_τ²/(tk)), b = (c_E, c_T t, c_τ tk)
(Cauchy–Schwarz), and (t*, k*) attain the bound, which does not depend on
(t, k).  Source: Cochran, Sampling Techniques (3rd ed.), ch. 10 (multi-stage
sampling, optimum m = √(c_1 σ_2²/(c_2 σ_1²))).
"""

from __future__ import annotations

import itertools

import sympy as sp

from rlscale.proofs._core import Identity, Proof, Sign

__all__ = ["NAME", "build", "closed_form"]

NAME = "nested-allocation"


def closed_form() -> dict[str, sp.Expr]:
    """The proved optimum (t*, k*, E*, V*) as sympy expressions.

    Symbols: sigma_E, sigma_T, sigma_tau (standard deviations), c_E, c_T,
    c_tau, B.

    Examples
    --------
    >>> sorted(closed_form())
    ['E', 'V', 'k', 't']
    """
    sE, sT, st, cE, cT, ct, B = sp.symbols("sigma_E sigma_T sigma_tau c_E c_T c_tau B",
                                           positive=True)
    t = sp.sqrt(cE * sT**2 / (cT * sE**2))
    k = sp.sqrt(cT * st**2 / (ct * sT**2))
    return {"t": t, "k": k, "E": B / (cE + cT * t + ct * t * k),
            "V": (sE * sp.sqrt(cE) + sT * sp.sqrt(cT) + st * sp.sqrt(ct)) ** 2 / B}


def build(*, t_star: sp.Expr | None = None, k_star: sp.Expr | None = None) -> Proof:
    """The nested variance-components allocation proof.

    Parameters
    ----------
    t_star, k_star : sympy expressions, optional
        Claimed optima; default the closed forms above (truth).  Mutation
        tests swap a cost ratio to show the attainment step fails.

    Examples
    --------
    >>> build().check().passed
    True
    """
    sE, sT, st, cE, cT, ct, t, k, B = sp.symbols(
        "sigma_E sigma_T sigma_tau c_E c_T c_tau t k B", positive=True)
    E = sp.Symbol("E", positive=True)
    t_opt = sp.sqrt(cE * sT**2 / (cT * sE**2)) if t_star is None else t_star
    k_opt = sp.sqrt(cT * st**2 / (ct * sT**2)) if k_star is None else k_star
    V = sE**2 / E + sT**2 / (E * t) + st**2 / (E * t * k)
    cost_per_env = cE + cT * t + ct * t * k
    a = (sE**2, sT**2 / t, st**2 / (t * k))
    b = (cE, cT * t, ct * t * k)
    P = sum(a) * sum(b)
    bound = (sE * sp.sqrt(cE) + sT * sp.sqrt(cT) + st * sp.sqrt(ct)) ** 2
    squares = sum((sp.sqrt(a[i] * b[j]) - sp.sqrt(a[j] * b[i])) ** 2
                  for i, j in itertools.combinations(range(3), 2))
    E_opt = B / cost_per_env.subs({t: t_opt, k: k_opt})
    steps = (
        Identity("e-cancels", V * (E * cost_per_env), P,
                 text="V·B = V·E·(c_E + c_T t + c_τ t k) = P(t, k) does not depend on E"),
        Identity("lagrange-identity", P - (
            sp.sqrt(a[0] * b[0]) + sp.sqrt(a[1] * b[1]) + sp.sqrt(a[2] * b[2])) ** 2, squares,
                 text="P − (Σ√(a_i b_i))² = Σ_{i<j}(√(a_i b_j) − √(a_j b_i))² (Lagrange)"),
        Identity("bound-is-constant", (sp.sqrt(a[0] * b[0]) + sp.sqrt(a[1] * b[1])
                                       + sp.sqrt(a[2] * b[2])) ** 2, bound,
                 text="Σ√(a_i b_i) = σ_E√c_E + σ_T√c_T + σ_τ√c_τ, free of t and k"),
        Sign("squares-nonnegative", squares, ">=",
             text="a sum of squares of reals is ≥ 0, so P(t, k) ≥ (Σ σ√c)²"),
        Identity("attains-bound", P.subs({t: t_opt, k: k_opt}), bound,
                 text="P(t*, k*) = (σ_E√c_E + σ_T√c_T + σ_τ√c_τ)²: (t*, k*) is optimal"),
        Identity("budget-spent", E_opt * cost_per_env.subs({t: t_opt, k: k_opt}), B,
                 text="E* = B/(c_E + c_T t* + c_τ t* k*) spends the budget exactly"),
        Identity("optimal-variance", V.subs({E: E_opt, t: t_opt, k: k_opt}), bound / B,
                 text="V* = (σ_E√c_E + σ_T√c_T + σ_τ√c_τ)²/B"),
    )
    return Proof(
        name=NAME,
        title="Nested variance-components allocation (multi-stage sampling)",
        statement="min σ_E²/E + σ_T²/(Et) + σ_τ²/(Etk) s.t. c_E E + c_T Et + c_τ Etk = B has "
                  "t* = √(c_E σ_T²/(c_T σ_E²)), k* = √(c_T σ_τ²/(c_τ σ_T²)), "
                  "V* = (σ_E√c_E + σ_T√c_T + σ_τ√c_τ)²/B",
        statement_latex=r"t^* = \sqrt{\frac{c_E\sigma_T^2}{c_T\sigma_E^2}},\ k^* = "
                        r"\sqrt{\frac{c_T\sigma_\tau^2}{c_\tau\sigma_T^2}},\ V^* = \frac{(\sigma_E"
                        r"\sqrt{c_E} + \sigma_T\sqrt{c_T} + \sigma_\tau\sqrt{c_\tau})^2}{B}",
        assumptions=(
            "all variances and unit costs are positive",
            "continuous relaxation: E, t, k range over the positive reals (rounding to "
            "integers and the constraints t, k ≥ 1 are handled by the optimiser, not here)",
        ),
        steps=steps,
        concerns=("rlscale.theory.nested_optimum",),
        source="Cochran, Sampling Techniques, 3rd ed., ch. 10",
    )
