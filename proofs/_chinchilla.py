"""Proof: compute-optimal allocation for additive power laws.

Statement.  (a) Chinchilla: minimising L(N, D) = E + A/N^α + B/D^β subject to
6·N·D = C gives N* = G·(C/6)^(β/(α+β)), D* = G⁻¹·(C/6)^(α/(α+β)) with
G = (αA/(βB))^(1/(α+β)), and N* is the unique minimiser.  (b) Minimising
Σ_i a_i x_i^(−α_i) subject to Σ_i c_i x_i = B (a, α, c > 0) puts the budget
share c_i x_i*/B = α_i ℓ_i / Σ_j α_j ℓ_j on axis i, ℓ_i = a_i x_i*^(−α_i).

Derivation.  (a) Substitute D = C/(6N); L′(N) factorises as
N^(−α−1)·βB(6/C)^β·(N^(α+β) − N*^(α+β)), negative below N* and positive
above it, so N* is the unique minimiser.  (b) The objective is convex (each
term has positive second derivative) and the constraint linear, so the KKT
conditions α_i a_i x_i^(−α_i−1) = μ c_i are necessary and sufficient; they
give c_i x_i = α_i ℓ_i/μ, and summing over i fixes μ = Σ α_j ℓ_j / B.
Sources: Hoffmann et al. 2022 (arXiv 2203.15556), approach 3; Boyd &
Vandenberghe, Convex Optimization §5.5.3 (KKT).
"""

from __future__ import annotations

import sympy as sp

from rlscale.proofs._core import Cited, Identity, Proof, Sign

__all__ = ["NAME", "build", "closed_form"]

NAME = "chinchilla"


def closed_form() -> dict[str, sp.Expr]:
    """The proved Chinchilla optimum as sympy expressions of A, B, alpha, beta, C.

    Examples
    --------
    >>> sorted(closed_form())
    ['D', 'N']
    """
    C, A, B, alpha, beta = sp.symbols("C A B alpha beta", positive=True)
    G = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    return {"N": G * (C / 6) ** (beta / (alpha + beta)),
            "D": (C / 6) ** (alpha / (alpha + beta)) / G}


def build(*, n_exponent: sp.Expr | None = None, share_weights: str = "alpha*ell",
          axes: int = 3) -> Proof:
    """The compute-optimal allocation proof.

    Parameters
    ----------
    n_exponent : sympy expression, optional
        Exponent of C/6 in the claimed N*; default (truth) β/(α+β).
    share_weights : {"alpha*ell", "ell"}
        Claimed budget-share weights (truth ``"alpha*ell"``: α_i·ℓ_i).
    axes : int
        Number of axes in part (b) (the argument is per-axis; 3 by default).

    Examples
    --------
    >>> build().check().passed
    True
    >>> alpha, beta = __import__("sympy").symbols("alpha beta", positive=True)
    >>> build(n_exponent=alpha / (alpha + beta)).check().step("first-order").status
    'failed'
    """
    N, C, A, B, E, alpha, beta = sp.symbols("N C A B E alpha beta", positive=True)
    G = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    n_exp = beta / (alpha + beta) if n_exponent is None else n_exponent
    N_star = G * (C / 6) ** n_exp
    D_star = (C / 6) ** (alpha / (alpha + beta)) / G
    loss_N = E + A * N**-alpha + B * (6 * N / C) ** beta
    dL = sp.diff(loss_N, N)
    kappa = beta * B * (6 / C) ** beta

    a = sp.symbols(f"a1:{axes + 1}", positive=True)
    al = sp.symbols(f"alpha1:{axes + 1}", positive=True)
    c = sp.symbols(f"c1:{axes + 1}", positive=True)
    x = sp.symbols(f"x1:{axes + 1}", positive=True)
    mu = sp.Symbol("mu", positive=True)
    ell = [a[i] * x[i] ** -al[i] for i in range(axes)]
    weight = {"alpha*ell": lambda i: al[i] * ell[i], "ell": lambda i: ell[i]}[share_weights]
    # KKT stationarity fixes x_i through μ; write c_i·x_i as α_i ℓ_i/μ and sum.
    spend = [al[i] * ell[i] / mu for i in range(axes)]
    steps = (
        Identity("budget", 6 * N_star * D_star, C, text="6·N*·D* = C"),
        Identity("first-order", dL.subs(N, N_star), 0, log_compare=False,
                 text="dL/dN = 0 at N* (L with D = C/(6N) substituted)"),
        Identity("factorised-derivative", dL,
                 N ** (-alpha - 1) * kappa * (N ** (alpha + beta) - alpha * A / kappa),
                 text="L′(N) = N^(−α−1)·βB(6/C)^β·(N^(α+β) − αA/(βB(6/C)^β))"),
        Identity("root-of-factor", N_star ** (alpha + beta), alpha * A / kappa, log_compare=True,
                 text="N*^(α+β) = αA/(βB(6/C)^β): N* is the root of the bracket"),
        Cited("sign-change", "N^(α+β) − αA/(βB(6/C)^β) increases in N and vanishes only at "
              "N*, so L′ < 0 before N* and > 0 after: N* is the unique minimiser",
              "first-derivative test, Rudin, Principles of Mathematical Analysis (1976), "
              "Thm 5.11"),
        Identity("exponents-sum", n_exp + alpha / (alpha + beta), 1,
                 text="β/(α+β) + α/(α+β) = 1: both N* and D* grow as powers of C"),
        *(Sign(f"convex-{i + 1}", sp.diff(a[i] * x[i] ** -al[i], x[i], 2), ">",
               text=f"d²/dx² a{i + 1}·x^(−α{i + 1}) > 0")
          for i in range(axes)),
        *(Identity(f"kkt-{i + 1}",
                   c[i] * x[i] * (al[i] * a[i] * x[i] ** (-al[i] - 1) / c[i]), al[i] * ell[i],
                   text=f"with μ = α{i + 1}a{i + 1}x^(−α{i + 1}−1)/c{i + 1} (stationarity), "
                        f"c{i + 1}·x{i + 1}·μ = α{i + 1}·ℓ{i + 1}")
          for i in range(axes)),
        Cited("kkt-sufficient", "a sum of terms with positive second derivative is convex, "
              "and a convex objective under a linear equality constraint with interior feasible "
              "points (Slater) is minimised exactly where the KKT conditions hold",
              "Boyd & Vandenberghe, Convex Optimization (2004), §3.1.4 and §5.5.3"),
        Identity("shares", spend[0] / sum(spend), weight(0) / sum(weight(j) for j in range(axes)),
                 text="share_1 = (α1ℓ1/μ)/Σ_j(αjℓj/μ) = α1ℓ1/Σ_j αjℓj (same for every axis)"),
        Identity("shares-sum", sum(spend[i] / sum(spend) for i in range(axes)), 1,
                 text="the shares add up to the whole budget"),
    )
    return Proof(
        name=NAME,
        title="Compute-optimal allocation (Chinchilla and KKT budget shares)",
        statement="Chinchilla: N* = G(C/6)^(β/(α+β)), D* = G⁻¹(C/6)^(α/(α+β)), "
                  "G = (αA/(βB))^(1/(α+β)); sum of power laws under a linear cost: "
                  "budget share_i = α_iℓ_i/Σ_j α_jℓ_j",
        statement_latex=r"N^* = G\,(C/6)^{\beta/(\alpha+\beta)},\ D^* = G^{-1}(C/6)^{\alpha/"
                        r"(\alpha+\beta)};\quad \frac{c_i x_i^*}{B} = \frac{\alpha_i\ell_i}"
                        r"{\sum_j \alpha_j \ell_j}",
        assumptions=(
            "all constants A, B, α, β, C, a_i, α_i, c_i are positive; N, D, x_i range over "
            "the positive reals (continuous relaxation)",
        ),
        steps=steps,
        concerns=("rlscale.theory.chinchilla_optimal", "rlscale.theory.budget_shares"),
        source="Hoffmann et al. 2022, arXiv 2203.15556; Boyd & Vandenberghe §5.5.3",
    )
