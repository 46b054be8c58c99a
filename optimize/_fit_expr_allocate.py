"""Allocating a fitted expression law under a posynomial cost.

Through the geometric program when the bound law is a posynomial in the axes
(exact, certified), otherwise by SLSQP in log space from several starts — a
local method, which the result's status says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._fit_expr_result import ExpressionFit
from rlscale.theory._expr import BoundLaw
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_scalar, seed_from

__all__ = ["ExpressionAllocation", "allocate_expression"]


@dataclass(frozen=True)
class ExpressionAllocation(Result):
    """The result of :func:`allocate_expression`.

    ``method`` is ``"gp"`` (the bound law is a posynomial: the geometric
    program's global optimum) or ``"slsqp"`` (a local optimum from the best
    of several starts; ``status`` says global optimality is not certified).
    """

    values: dict[str, float]
    loss: float
    cost: float
    budget: float
    method: str
    status: str
    success: bool
    message: str

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """The decision variables as a :class:`pandas.DataFrame` indexed by ``variable``.

        Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import data_frame

        return data_frame([{"variable": v, "value": float(x)} for v, x in self.values.items()],
                          index="variable")

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        notes = [f"budget {self.budget:.6g}: loss {self.loss:.6g}, cost {self.cost:.6g}, "
                 f"method {self.method}, status {self.status}", self.message]
        return html_table("ExpressionAllocation", ["variable", "value"],
                          [[v, x] for v, x in self.values.items()], notes)


def allocate_expression(law: BoundLaw | ExpressionFit, cost: Any, budget: float,
                        bounds: Mapping[str, Any] | None = None, *,
                        starts: int = 8, seed: int = 0, rng: Any = None
                        ) -> ExpressionAllocation:
    """Minimise a fitted expression law under ``cost ≤ budget``.

    Parameters
    ----------
    law : BoundLaw or ExpressionFit
    cost : posynomial string or sympy expression
    budget : float
    bounds : mapping variable -> (low, high), optional
    starts : int
        Local solves from random starts when the law is not a geometric program.
    seed : int
        Seed of those starts.
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness (every verb takes it): an
        integer is the seed; a Generator is drawn from once for it.  ``seed=``
        is kept and means the same as an integer ``rng=``; pass one of them.

    Examples
    --------
    >>> from rlscale.theory import ExpressionLaw
    >>> law = ExpressionLaw("E + A/N**a + B/D**b + C/(N*D)**0.1", axes=["N", "D"])
    >>> bound = law.bind(E=1.0, A=10.0, a=0.5, B=10.0, b=0.5, C=1.0)
    >>> plan = allocate_expression(bound, "N + D", 200.0)
    >>> plan.method, round(plan.values["N"], 3), round(plan.values["D"], 3)  # symmetric
    ('gp', 100.0, 100.0)
    >>> sig = ExpressionLaw("1 - 0.8*sigmoid(log(N) + log(D) - 8)", axes=["N", "D"]).bind()
    >>> sig_plan = allocate_expression(sig, "N + D", 200.0)
    >>> sig_plan.method, round(sig_plan.values["N"], 2)
    ('slsqp', 100.0)
    """
    from rlscale.optimize._allocate import AllocationProblem
    from rlscale.theory._posynomial import parse_posynomial

    bound = law.bound if isinstance(law, ExpressionFit) else law
    if not isinstance(bound, BoundLaw):
        raise TypeError(f"law must be a bound ExpressionLaw or an ExpressionFit; got "
                        f"{type(law).__name__}")
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    starts = check_positive_int("starts", starts, maximum=1000)
    seed = seed_from(seed, rng)
    poly_law = bound.to_law()
    if poly_law is not None:
        a = AllocationProblem(poly_law, cost, bounds).allocate(budget, round_integers=False)
        return ExpressionAllocation(a.values, a.loss, a.cost, budget, "gp", a.status,
                                    a.kkt_residual <= 1e-6, "geometric program (global)")
    from scipy.optimize import minimize

    poly = parse_posynomial(cost)
    axes = list(bound.axes)
    unknown = [v for v in poly.axes if v not in axes]
    if unknown:
        raise ValueError(f"cost mentions {unknown}, which are not axes of the law {axes}")
    box = []
    for a in axes:
        lo, hi = (bounds or {}).get(a, (None, None))
        box.append((math.log(lo) if lo else -50.0, math.log(hi) if hi else 50.0))

    def f(u: np.ndarray) -> float:
        v = float(bound.law._raw(dict(zip(axes, np.exp(u))), bound.params))
        return v if math.isfinite(v) else 1e300

    def g(u: np.ndarray) -> float:  # log B − log cost ≥ 0
        return math.log(budget) - math.log(float(poly.evaluate(dict(zip(axes, np.exp(u))))))

    rng = np.random.default_rng(seed)
    # Starts: the equal split of the budget, then random splits of it.
    best = None
    for i in range(starts):
        share = np.full(len(axes), 1.0 / len(axes)) if i == 0 else rng.dirichlet(
            np.ones(len(axes)))
        u0 = np.log(np.maximum(share * budget / max(len(poly.terms), 1), 1e-12))
        res = minimize(f, u0, method="SLSQP", bounds=box,
                       constraints=[{"type": "ineq", "fun": g}],
                       options={"ftol": 1e-14, "maxiter": 500})
        if res.success and g(res.x) >= -1e-9 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return ExpressionAllocation({}, math.nan, math.nan, budget, "slsqp", "failed", False,
                                    f"SLSQP found no feasible point from {starts} starts")
    values = dict(zip(axes, (float(v) for v in np.exp(best.x))))
    return ExpressionAllocation(values, float(best.fun), float(poly.evaluate(values)), budget,
                                "slsqp", "local optimum (not certified global)", True,
                                f"best of {starts} SLSQP starts in log space; the law is not "
                                "a posynomial, so global optimality is not certified")
