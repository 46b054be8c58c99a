"""Closed-form optima used as independent oracles for the allocation solver.

Chinchilla compute-optimal frontier (Hoffmann et al. 2022, arXiv 2203.15556,
appendix D.2): minimising ``E + A N**-alpha + B D**-beta`` subject to
``6 N D = C`` gives, with ``G = (alpha A / (beta B))**(1/(alpha+beta))``,
``N = G (C/6)**(beta/(alpha+beta))`` and ``D = (C/6)**(alpha/(alpha+beta)) / G``.

Budget shares (KKT for a sum of power laws under a *linear* cost
``sum_i c_i x_i``): stationarity ``alpha_i l_i / x_i = lambda c_i`` with
``l_i = a_i x_i**-alpha_i`` gives the share of the budget spent on axis
``i``: ``c_i x_i / B = alpha_i l_i / sum_j alpha_j l_j`` -- the Cobb-Douglas
result.  It holds at the optimum only, so it checks a solver without
solving anything.
"""

from __future__ import annotations

import math
from typing import Any

from rlscale.theory._laws import AdditiveLaw
from rlscale.theory._validation import check_real

__all__ = ["budget_shares", "chinchilla_optimal"]


def chinchilla_optimal(A: float, B: float, alpha: float, beta: float, compute: float,
                       flops_per_param_token: float = 6.0) -> tuple[float, float]:
    """Compute-optimal ``(N, D)`` for ``E + A/N**alpha + B/D**beta`` at ``C = 6 N D``.

    Examples
    --------
    >>> N, D = chinchilla_optimal(406.4, 410.7, 0.34, 0.28, 5.76e23)
    >>> f"{N:.3e}", f"{D:.3e}"
    ('3.219e+10', '2.982e+12')
    """
    A, B, alpha, beta = (float(check_real(n, v, low=0.0, low_open=True)) for n, v in
                         (("A", A), ("B", B), ("alpha", alpha), ("beta", beta)))
    C = float(check_real("compute", compute, low=0.0, low_open=True))
    k = float(check_real("flops_per_param_token", flops_per_param_token, low=0.0,
                         low_open=True))
    s = alpha + beta
    log_g = (math.log(alpha * A) - math.log(beta * B)) / s
    log_c = math.log(C / k)
    return math.exp(log_g + beta / s * log_c), math.exp(alpha / s * log_c - log_g)


def budget_shares(law: AdditiveLaw, values: dict[str, Any]) -> dict[str, float]:
    """Optimal budget shares ``alpha_i l_i / sum_j alpha_j l_j`` at ``values``.

    Examples
    --------
    >>> law = AdditiveLaw(0.0, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.25})
    >>> {a: round(s, 4) for a, s in budget_shares(law, {"E": 1.0, "K": 1.0}).items()}
    {'E': 0.6667, 'K': 0.3333}
    """
    if not isinstance(law, AdditiveLaw):
        raise TypeError(f"law must be an AdditiveLaw; got {type(law).__name__}")
    terms = law.term_values(values)
    weights = {a: law.exponents[a] * float(terms[a]) for a in law.axes}
    total = sum(weights.values())
    return {a: w / total for a, w in weights.items()}
