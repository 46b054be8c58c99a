"""Building an allocation problem's state: every argument validated once, up front.

:func:`build_state` turns what :class:`~rlscale.optimize.AllocationProblem` is given
-- a law, a cost, bounds, a substitution and synthetic sources -- into the frozen
:class:`~._alloc_state.GPState` (no synthetic data) or :class:`~._alloc_state.DCPState`
the solvers read.  Each check raises a ``TypeError``/``ValueError`` naming the argument,
its value and what it may be, or an :class:`~rlscale.InfeasibleError` when no budget can
make the problem well posed (an axis that lowers the loss for free).  The checks run in
the order of the arguments, so the first thing wrong is what the message names.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from rlscale.optimize._alloc_checks import check_exponents, check_mapping_arg, parse_bounds
from rlscale.optimize._alloc_state import DCPState, GPState
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law
from rlscale.theory._posynomial import Posynomial, parse_posynomial
from rlscale.theory._synthetic import SynthesisMethod

__all__ = ["build_state"]

#: Cost and substitution strings parsed once (posynomials are immutable, so they are shared).
_parse = lru_cache(maxsize=256)(parse_posynomial)


def build_state(law: Any, cost: Any, bounds: Mapping[str, Any] | None = None,
                substitute: Mapping[str, Any] | None = None,
                synthesis: Iterable[SynthesisMethod] | None = None) -> GPState | DCPState:
    """The validated state of ``min law s.t. cost <= B`` (arguments as for
    :class:`~rlscale.optimize.AllocationProblem`).

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    >>> state = build_state(law, "E + 2*K", {"K": (None, 50)})
    >>> type(state).__name__, state.variables, dict(state.bounds)["K"]
    ('GPState', ('E', 'K'), (0.0, 50.0))
    >>> build_state(law, "E + Q")
    Traceback (most recent call last):
    ...
    ValueError: cost E + Q mentions unknown axis 'Q'; the decision variables are ['E', 'K']
    """
    if not isinstance(law, Law):
        raise TypeError(f"law must be a rlscale.theory law (AdditiveLaw, ...); got "
                        f"{type(law).__name__}")
    check_mapping_arg("substitute", substitute)
    if synthesis is not None and (isinstance(synthesis, str | bytes)
                                  or not isinstance(synthesis, Iterable)):
        raise TypeError(f"synthesis must be a list of SynthesisMethod; got "
                        f"synthesis={synthesis!r:.60}")
    if not law.properties.gp_compatible:
        raise ValueError(f"{type(law).__name__} is not GP-compatible")
    sources = _synthesis(law, synthesis)
    reducible = law.reducible_posynomial()
    subs = _substitution(law, substitute, sources)
    objective = reducible.substitute(subs) if subs else reducible
    check_exponents("the law (in the decision variables)", objective)
    law_vars = list(objective.axes)
    cost_poly = _parse(cost) if isinstance(cost, str) else parse_posynomial(cost)
    _check_cost(cost_poly, law_vars)
    variables = law_vars + [m.name for m in sources]
    dup = {v for v in variables if variables.count(v) > 1}
    if dup:
        raise ValueError(f"synthesis method names clash with axes: {sorted(dup)}")
    defaults = law.default_bounds() if hasattr(law, "default_bounds") and not subs else {}
    box = parse_bounds(bounds, variables, defaults)
    if sources:
        _check_synthetic(cost_poly, objective)
    free = [v for v in law_vars if v not in cost_poly.axes and not math.isfinite(box[v][1])]
    if free:
        raise InfeasibleError(
            f"axis {free[0]!r} has no cost and no upper bound, so the loss falls to the "
            f"floor {law.floor:g} for free; add {free[0]} to the cost or bound it")
    kind = DCPState if sources else GPState
    return kind(law=law, variables=tuple(variables), bounds=MappingProxyType(box),
                objective=objective, reducible=reducible, cost=cost_poly,
                substitute=MappingProxyType(subs), synthesis=sources,
                labels=tuple(m.label() for m in cost_poly.terms))


def _synthesis(law: Law, synthesis: Iterable[Any] | None) -> tuple[SynthesisMethod, ...]:
    """The synthetic sources, each a SynthesisMethod on an axis of the law."""
    sources = tuple(synthesis) if synthesis is not None else ()
    for m in sources:
        if not isinstance(m, SynthesisMethod):
            raise TypeError(f"synthesis entries must be SynthesisMethod; got {m!r}")
        if m.axis not in law.axes:
            raise ValueError(f"synthesis method {m.name!r} targets axis {m.axis!r}, which "
                             f"the law does not have (axes: {list(law.axes)})")
    return sources


def _substitution(law: Law, substitute: Mapping[str, Any] | None,
                  sources: tuple[SynthesisMethod, ...]) -> dict[str, Posynomial]:
    """Law axis -> monomial in the decision variables (empty without ``substitute``)."""
    subs: dict[str, Posynomial] = {}
    if not substitute:
        return subs
    if sources:
        raise ValueError("synthesis and substitute cannot be combined; express the "
                         "law in the counts you buy")
    for axis, expr in substitute.items():
        if not isinstance(expr, str):
            raise TypeError(f"substitute[{axis!r}] must be a monomial string such as "
                            f"'E*t'; got {expr!r:.60}")
        if axis not in law.axes:
            raise ValueError(f"substitute names {axis!r}, not an axis of the law "
                             f"(axes: {list(law.axes)})")
        mono = _parse(expr)
        if not mono.is_monomial:
            raise ValueError(f"substitute[{axis!r}] = {expr!r} must be a monomial such "
                             "as 'E*t'")
        subs[axis] = mono
    return subs


def _check_cost(cost: Posynomial, law_vars: list[str]) -> None:
    """A cost in the decision variables that does not fall as any of them grows."""
    check_exponents("the cost", cost)
    unknown = [a for a in cost.axes if a not in law_vars]
    if unknown:
        raise ValueError(f"cost {cost.source or cost!s} mentions unknown axis "
                         f"{unknown[0]!r}; the decision variables are {law_vars}")
    for m in cost.terms:
        neg = [a for a, e in m.exponents if e < 0]
        if neg:
            raise ValueError(f"cost term {m} decreases as {neg[0]} grows; costs must not "
                             "fall with more data")


def _check_synthetic(cost: Posynomial, objective: Posynomial) -> None:
    """Synthetic data needs a linear cost and a law with one axis per term."""
    lin = all(len(m.exponents) == 0 or (len(m.exponents) == 1 and m.exponents[0][1] == 1)
              for m in cost.terms)
    if not lin:
        raise ValueError("synthetic data needs a cost linear in the counts (e.g. "
                         f"'100*environments + trajectories'); got {cost}")
    multi = [str(m) for m in objective.terms if len(m.exponents) != 1]
    if multi:
        raise ValueError(f"synthetic data needs a law whose terms each involve one "
                         f"axis (additive or pass-rate); term {multi[0]} does not")
