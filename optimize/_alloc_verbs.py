"""The two verbs over :class:`~rlscale.optimize._allocate.AllocationProblem`:
:func:`allocate` (least loss within a budget) and :func:`min_cost` (least cost
reaching a target loss).

They build the problem and call its method of the same name; how the problem
is solved (closed forms first, then the geometric program) is described in
:mod:`rlscale.optimize._allocate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rlscale.optimize._alloc_result import Allocation
from rlscale.optimize._allocate import AllocationProblem
from rlscale.theory._laws import Law
from rlscale.theory._synthetic import SynthesisMethod

__all__ = ["allocate", "min_cost"]


def allocate(law: Law, cost: Any, budget: float, bounds: Mapping[str, Any] | None = None, *,
             substitute: Mapping[str, Any] | None = None,
             synthesis: Iterable[SynthesisMethod] | None = None,
             round_integers: bool = True, method: str = "auto") -> Allocation:
    """Minimise ``law``'s loss subject to ``cost <= budget`` (a geometric program).

    Parameters
    ----------
    law : Law
        E.g. :class:`~rlscale.theory.AdditiveLaw`.
    cost : str, sympy expression or Posynomial
        Posynomial cost such as ``"6*N*D"`` or ``"100*E + 10*E*t + E*t*k"``.
    budget : float
        ``> 0``.
    bounds, substitute, synthesis :
        See :class:`AllocationProblem`.
    round_integers : bool
        Also find the best integer allocation among the floors/ceilings.
    method : {"auto", "closed_form", "gp", "dcp"}
        ``"auto"`` uses a closed form when the problem has one and its point
        lies within the bounds, else the GP: by Newton on its KKT equations
        where that certifies (KKT residual <= 1e-12; ``solver="Newton gp"``),
        else by cvxpy (``"dcp"`` with synthetic data); ``"closed_form"``
        refuses (ValueError) where there is none; ``"gp"`` and ``"dcp"``
        always run cvxpy.  See :mod:`rlscale.optimize._allocate`.

    Returns
    -------
    Allocation

    Raises
    ------
    InfeasibleError
        When no allocation fits the budget and bounds (the message says why).

    Examples
    --------
    Chinchilla (Hoffmann et al. 2022, approach 3 as replicated by Besiroglu
    et al. 2024) at the compute of Chinchilla itself:

    >>> from rlscale.theory import AdditiveLaw, chinchilla_optimal
    >>> law = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    >>> a = allocate(law, "6*N*D", 5.76e23)
    >>> N, D = chinchilla_optimal(482.01, 2085.43, 0.3478, 0.3658, 5.76e23)
    >>> abs(a.values["N"] / N - 1) < 1e-9, abs(a.values["D"] / D - 1) < 1e-9
    (True, True)
    >>> a.kkt_residual < 1e-9, a.method
    (True, 'closed_form')
    >>> g = allocate(law, "6*N*D", 5.76e23, method="gp")   # the certificate
    >>> g.method, abs(g.values["N"] / a.values["N"] - 1) < 1e-12
    ('gp', True)
    """
    return AllocationProblem(law, cost, bounds, substitute, synthesis).allocate(
        budget, round_integers, method=method)


def min_cost(law: Law, cost: Any, target: float, bounds: Mapping[str, Any] | None = None, *,
             substitute: Mapping[str, Any] | None = None,
             synthesis: Iterable[SynthesisMethod] | None = None,
             round_integers: bool = True, method: str = "auto") -> Allocation:
    """The cheapest allocation whose loss is at most ``target``.

    Parameters are those of :func:`allocate`, with ``target`` (a loss above
    the law's floor) in place of the budget.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    >>> a = min_cost(law, "E + K", target=0.4)
    >>> round(a.values["E"], 6), round(a.cost, 6)
    (100.0, 200.0)
    >>> try:
    ...     min_cost(law, "E + K", target=0.18)
    ... except ValueError as err:  # rlscale.InfeasibleError
    ...     print(err)
    target loss 0.18 is below the law's floor 0.2; the floor is reached only with unlimited data
    """
    return AllocationProblem(law, cost, bounds, substitute, synthesis).min_cost(
        target, round_integers, method=method)
