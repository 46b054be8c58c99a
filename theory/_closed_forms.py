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
from rlscale.theory._validation import check_mapping, check_scalar

__all__ = ["budget_shares", "chinchilla_optimal"]


def chinchilla_optimal(A: float, B: float, alpha: float, beta: float, compute: float,
                       flops_per_param_token: float = 6.0) -> tuple[float, float]:
    """Compute-optimal ``(N, D)`` for ``E + A/N**alpha + B/D**beta`` at ``C = 6 N D``.

    Everything is computed in log space; an optimum beyond the float range
    (``N`` or ``D`` above 1.8e308 or below 1e-307) is refused with a ``ValueError``.

    Examples
    --------
    >>> N, D = chinchilla_optimal(406.4, 410.7, 0.34, 0.28, 5.76e23)
    >>> f"{N:.3e}", f"{D:.3e}"
    ('3.219e+10', '2.982e+12')
    >>> chinchilla_optimal(1e308, 410.7, 0.34, 0.28, 1e21)
    Traceback (most recent call last):
    ...
    ValueError: the optimum N = e^1156, D = e^-1109 is outside the float range for A=1e+308, \
B=410.7, alpha=0.34, beta=0.28, compute=1e+21
    """
    C, k = compute, flops_per_param_token
    if not all(type(v) is float and 0.0 < v < math.inf  # False for NaN
               for v in (A, B, alpha, beta, C, k)):
        # Anything but six positive finite floats goes through the full checks.
        A, B, alpha, beta = (check_scalar(n, v, low=0.0, low_open=True) for n, v in
                             (("A", A), ("B", B), ("alpha", alpha), ("beta", beta)))
        C = check_scalar("compute", compute, low=0.0, low_open=True)
        k = check_scalar("flops_per_param_token", flops_per_param_token, low=0.0,
                         low_open=True)
    # alpha/(alpha+beta) and beta/(alpha+beta) as ratios: alpha + beta may overflow,
    # and then log G = (log(alpha A) - log(beta B))/(alpha + beta) tends to 0.
    a_share, b_share = 1.0 / (1.0 + beta / alpha), 1.0 / (1.0 + alpha / beta)
    log_g = ((math.log(alpha) + math.log(A)) - (math.log(beta) + math.log(B))) / (alpha + beta)
    log_c = math.log(C) - math.log(k)
    log_n, log_d = log_g + b_share * log_c, a_share * log_c - log_g
    if max(log_n, log_d) > 709.0 or min(log_n, log_d) < -708.0:
        raise ValueError(
            f"the optimum N = e^{log_n:.4g}, D = e^{log_d:.4g} is outside the float range for "
            f"A={A:g}, B={B:g}, alpha={alpha:g}, beta={beta:g}, compute={C:g}")
    return math.exp(log_n), math.exp(log_d)


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
    check_mapping("values", values)
    vals = law._values(values, {})
    for a, v in vals.items():
        if v.ndim:
            raise TypeError(f"{a} must be a real scalar, not an array of shape {v.shape}")
    # log(alpha_i l_i) = log alpha_i + log a_i - alpha_i log x_i: shares by a softmax,
    # so terms that overflow or underflow on their own still give exact shares.
    logs = {a: math.log(law.exponents[a]) + math.log(law.coefficients[a])
            - law.exponents[a] * math.log(float(vals[a])) for a in law.axes}
    top = max(logs.values())
    weights = {a: math.exp(v - top) for a, v in logs.items()}
    total = math.fsum(weights.values())
    return {a: w / total for a, w in weights.items()}
