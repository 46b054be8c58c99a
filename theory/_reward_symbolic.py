r"""The symbolic (sympy) side of the reward-optimisation law ``G = Θ(sqrt(min{log M, K}))``.

The Θ form, its piecewise and exact-constant versions, inverses, elasticities
and asymptotic regimes as sympy expressions in the positive symbols ``M``
(comparisons) and ``K`` (KL budget).  Reached as attributes of
:mod:`rlscale.theory.reward` (``reward.law()``, ``reward.M``); this module is
imported only on first use there, so the numeric gain never loads sympy.

Sources: the proved band and its constants are derived step by step in the
docstring of :mod:`rlscale.theory.reward` (steps U1–U6, L1–L7); the regimes
follow from the envelope ``U(M, K)`` there (``sqrt(2K)`` while ``e^K ≪ M``,
``sqrt(2 W(M/(e τ²)))`` past the crossover).
"""

from __future__ import annotations

from typing import Any

import numpy as np  # noqa: F401  (the doctests use it)
import sympy as sp

from rlscale.theory._validation import check_scalar
from rlscale.theory.reward import KAPPA, M_MIN, TAU_MAX, TAU_MIN

__all__ = [
    "K",
    "M",
    "asymptotic_regimes",
    "crossover",
    "elasticities",
    "inverses",
    "latex",
    "law",
    "law_piecewise",
    "lower_bound_expr",
    "to_numpy",
    "upper_bound_expr",
]

#: Positive symbols: comparisons ``M`` and KL budget ``K``.
M, K = sp.symbols("M K", positive=True)


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



def inverses(c: Any = None) -> dict[str, sp.Piecewise]:
    """Inverses of ``G = c sqrt(min(log M, K))`` for a target gain ``G`` (a positive symbol).

    ``"M"``: comparisons needed at budget ``K``, ``exp(G²/c²)`` if
    ``G²/c² <= K`` else ``oo``; ``"K"``: budget needed at ``M``, ``G²/c²`` if
    ``G²/c² <= log M`` else ``oo``.  The default ``c = sqrt 2`` is the exact
    gain's asymptotic constant; :func:`comparisons_needed_theta` and
    :func:`kl_needed_theta` are their numeric forms (:func:`comparisons_needed`
    and :func:`kl_needed` invert the exact gain instead).

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


