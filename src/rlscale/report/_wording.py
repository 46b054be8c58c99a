"""Sentences of the report whose wording depends on what the numbers support.

Plain functions of the plain data in ``results.json``: the impact ordering, stated only
as far as the bootstrap laws support it, and the synthetic-to-real ratio with the reason
the solver's ratio differs from the closed-form one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

__all__ = ["ordering_text", "synthetic_ratio_text"]


def _groups(order: Sequence[str], support: Mapping[str, float], level: float) -> list[list[str]]:
    """Split ``order`` (point estimates, largest first) into groups ordered at ``level``.

    Neighbours whose pairwise support is below ``level`` share a group; groups ``i < j``
    are merged (with those between) while some pair across them falls below it, so
    every ``>`` printed holds for every pair it implies.
    """
    def ok(a: str, b: str) -> bool:
        return support.get(f"{a} > {b}", 0.0) >= level

    groups: list[list[str]] = []
    for name in order:
        if groups and not ok(groups[-1][-1], name):
            groups[-1].append(name)
        else:
            groups.append([name])
    merged = True
    while merged:
        merged = False
        for i, j in combinations(range(len(groups)), 2):
            if not all(ok(a, b) for a in groups[i] for b in groups[j]):
                groups[i:j + 1] = [[n for g in groups[i:j + 1] for n in g]]
                merged = True
                break
    return groups


def ordering_text(order: Sequence[str], support: Mapping[str, float], level: float) -> str:
    """The impact ordering as far as the bootstrap laws support it.

    A pair is called ordered only when at least ``level`` of the bootstrap laws agree
    with it -- the report's confidence level, the one every interval in it uses, so an
    ordering is claimed exactly as strongly as an interval is.  Pairs below it are
    printed as "not resolved" with their support.  Without bootstrap support (``support``
    empty) the order of the point estimates is given as such.

    >>> ordering_text(["t", "E", "k"], {"t > E": 0.575, "t > k": 0.935, "E > k": 0.98}, 0.9)
    't and E (not resolved: a share 0.575 of the bootstrap laws order them so, 0.9 needed) > k'
    >>> ordering_text(["t", "E"], {"t > E": 0.95}, 0.9)
    't > E (a share ≥ 0.95 of the bootstrap laws agrees with each pair)'
    """
    if len(order) < 2:
        return ", ".join(order)
    if not support:
        return " > ".join(order) + " (point estimates; no bootstrap support computed)"
    parts = []
    for g in _groups(order, support, level):
        if len(g) == 1:
            parts.append(g[0])
            continue
        weakest = min(support.get(f"{a} > {b}", 0.0)
                      for i, a in enumerate(g) for b in g[i + 1:])
        names = ", ".join(g[:-1]) + " and " + g[-1]
        parts.append(f"{names} (not resolved: a share {weakest:.3g} of the bootstrap laws "
                     f"order them so, {level:g} needed)")
    text = " > ".join(parts)
    if len(parts) == len(order):
        weakest = min(support.get(f"{a} > {b}", 0.0) for a, b in combinations(order, 2))
        text += f" (a share ≥ {weakest:.3g} of the bootstrap laws agrees with each pair)"
    elif len(parts) == 1:
        text = "not resolved: " + text
    return text


def synthetic_ratio_text(critical: float, chosen: float, real: float, cap: float) -> str:
    """The closed-form critical ratio beside the solver's, with why they differ.

    The relative kind's critical ratio maximises effective environments per unit cost
    (:func:`rlscale.theory.critical_synthetic_ratio`): it is the mix the solver picks
    when real environments are not limited.  When the real count sits at its cap the
    solver can spend the rest of the budget only on synthetic environments, so its ratio
    exceeds the critical one.

    >>> synthetic_ratio_text(0.785, 1.350, 8.0, 8.0)[:60]
    'The critical synthetic-to-real ratio 0.785 (closed form: the'
    """
    head = (f"The critical synthetic-to-real ratio {critical:.3f} (closed form: the mix that buys "
            "the most effective environments per unit of cost, the ratio to use when real "
            "environments are unlimited)")
    if math.isclose(chosen, critical, rel_tol=1e-3):
        return head + f"; the solver picks the same ratio, {chosen:.3f}"
    if real >= cap * (1 - 1e-6) and chosen > critical:
        return (head + f"; the solver picks {chosen:.3f}, more, because real environments "
                f"are capped at {cap:g}: the budget left after them can buy only synthetic "
                "ones")
    return (head + f"; the solver picks {chosen:.3f}: the bounds on environments (real "
            f"count {real:.3g}, cap {cap:g}) or the budget keep it from the critical mix")
