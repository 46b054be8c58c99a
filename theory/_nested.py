"""Nested data axes and the variance-components reference law.

Agentic RL data is nested: ``E`` environments, ``t`` tasks per environment
and ``k`` trajectories per task, so the totals are ``E``, ``E*t`` tasks and
``E*t*k`` trajectories.  A mechanistic reference model is the classical
three-stage sampling design (Cochran 1977, *Sampling Techniques*, ch. 10):
if environments, tasks within an environment and trajectories within a task
contribute independent variance components ``s_E``, ``s_T``, ``s_tau``
(variances), the generalisation loss of the pooled estimate is::

    L(E, t, k) = L_inf + s_E / E + s_T / (E*t) + s_tau / (E*t*k).

Environments divide every term, which is why environment diversity
dominates.  Under the cost ``c_E*E + c_T*E*t + c_tau*E*t*k`` the optimum
spends on each level in proportion to ``sqrt(s_i * c_i)``: with ``n_0 = E``,
``n_1 = E*t``, ``n_2 = E*t*k``, minimising ``sum_i s_i/n_i`` subject to
``sum_i c_i n_i = B`` gives ``n_i = B * sqrt(s_i/c_i) / sum_j sqrt(s_j c_j)``
(Lagrange; Cochran's ``m_opt = sqrt(c_1 s_2 / (c_2 s_1))`` is the ratio
``n_1/n_0``) and the loss ``L_inf + (sum_j sqrt(s_j c_j))**2 / B``.  Nesting
requires ``t >= 1`` and ``k >= 1`` (``n_0 <= n_1 <= n_2``); when the
unconstrained ratio falls below 1 the adjacent levels are pooled (summing
their variances and costs) -- pool-adjacent-violators on ``sqrt(s/c)``,
which is exact here because for a fixed multiplier the problem is separable
and convex along a chain, and pooling does not depend on the multiplier.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rlscale.theory._laws import Law, LawProperties
from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._result import Result
from rlscale.theory._validation import (
    check_bool,
    check_finite_result,
    check_real,
    check_scalar,
)

__all__ = ["NestedAllocation", "VarianceComponentsLaw", "nested_cost", "nested_optimum",
           "nested_totals"]


def nested_totals(E: Any, t: Any, k: Any) -> dict[str, Any]:
    """Totals ``{"environments": E, "tasks": E*t, "trajectories": E*t*k}``.

    ``E``, ``t`` and ``k`` are real numbers ``>= 0`` or arrays of them (the
    continuous optimum is fractional); integers stay integers.  Totals beyond
    the float range are refused.

    Examples
    --------
    >>> nested_totals(10, 5, 4)
    {'environments': 10, 'tasks': 50, 'trajectories': 200}
    >>> nested_totals("a", 2, 2)
    Traceback (most recent call last):
    ...
    TypeError: E must be a real number or array; got str
    """
    arrays = {n: check_real(n, v, low=0.0) for n, v in (("E", E), ("t", t), ("k", k))}
    if all(isinstance(v, numbers.Integral) for v in (E, t, k)):
        return {"environments": int(E), "tasks": int(E) * int(t),
                "trajectories": int(E) * int(t) * int(k)}
    try:
        np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        raise ValueError("the shapes of E, t and k do not broadcast together") from None
    e, tt, kk = arrays.values()
    with np.errstate(over="ignore"):
        tasks = e * tt
        trajectories = tasks * kk
    check_finite_result(trajectories, "the trajectory total E*t*k", E=E, t=t, k=k)
    scalar = all(np.ndim(v) == 0 for v in (E, t, k))
    conv = (lambda x: float(x)) if scalar else (lambda x: x)
    return {"environments": conv(e), "tasks": conv(tasks), "trajectories": conv(trajectories)}


def _check_nested_axes(axes: Any) -> tuple[str, str, str]:
    if isinstance(axes, str | bytes) or not isinstance(axes, tuple | list):
        raise TypeError(f"axes must be a tuple of three axis names such as ('E', 't', 'k'); "
                        f"got {axes!r:.40}")
    if len(axes) != 3 or len(set(axes)) != 3 or not all(
            isinstance(a, str) and a.isidentifier() for a in axes):
        raise ValueError(f"axes must be three distinct identifiers (E, t, k); got {axes!r:.60}")
    return tuple(axes)  # type: ignore[return-value]


def nested_cost(c_env: float, c_task: float, c_traj: float,
                axes: tuple[str, str, str] = ("E", "t", "k")) -> Posynomial:
    """The cost ``c_env*E + c_task*E*t + c_traj*E*t*k`` as a posynomial.

    Examples
    --------
    >>> str(nested_cost(100, 10, 1))
    '100*E + 10*E*t + E*k*t'
    """
    e, t, k = _check_nested_axes(axes)
    cs = [check_scalar(n, c, low=0.0, low_open=True)
          for n, c in (("c_env", c_env), ("c_task", c_task), ("c_traj", c_traj))]
    terms = (Monomial(cs[0], ((e, 1.0),)),
             Monomial(cs[1], tuple(sorted(((e, 1.0), (t, 1.0))))),
             Monomial(cs[2], tuple(sorted(((e, 1.0), (t, 1.0), (k, 1.0))))))
    return Posynomial(terms, f"{cs[0]:g}*{e} + {cs[1]:g}*{e}*{t} + {cs[2]:g}*{e}*{t}*{k}")


class VarianceComponentsLaw(Law):
    """``L = floor + s_E/E + s_T/(E*t) + s_tau/(E*t*k)`` over nested axes.

    Parameters
    ----------
    floor : float
        Irreducible loss ``L_inf >= 0``.
    sigma2_env, sigma2_task, sigma2_traj : float
        Between-environment, between-task and within-task variances (> 0).
    axes : tuple of three str
        Names of ``(E, t, k)``: environments, tasks per environment,
        trajectories per task.

    Examples
    --------
    >>> law = VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25)
    >>> round(law(E=10, t=5, k=4), 6)
    0.52125
    >>> law.impact_ordering(E=10, t=5, k=4)
    ['E', 't', 'k']
    """

    family: ClassVar[str] = "variance_components"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True, convex=True, log_log_convex=True, gp_compatible=True,
        bounded=False, domain="E > 0, t >= 1, k >= 1 (nesting); any positive values evaluate")

    def __init__(self, floor: float, sigma2_env: float, sigma2_task: float, sigma2_traj: float,
                 axes: tuple[str, str, str] | list[str] = ("E", "t", "k")) -> None:
        self.floor = check_scalar("floor", floor, low=0.0)
        self.sigma2_env = check_scalar("sigma2_env", sigma2_env, low=0.0, low_open=True)
        self.sigma2_task = check_scalar("sigma2_task", sigma2_task, low=0.0, low_open=True)
        self.sigma2_traj = check_scalar("sigma2_traj", sigma2_traj, low=0.0, low_open=True)
        self.axes = _check_nested_axes(axes)

    @property
    def variances(self) -> tuple[float, float, float]:
        return (self.sigma2_env, self.sigma2_task, self.sigma2_traj)

    def default_bounds(self) -> dict[str, tuple[float | None, float | None]]:
        """Nesting: at least one task per environment and one trajectory per task."""
        return {self.axes[1]: (1.0, None), self.axes[2]: (1.0, None)}

    def reducible_posynomial(self) -> Posynomial:
        e, t, k = self.axes
        return Posynomial((
            Monomial(self.sigma2_env, ((e, -1.0),)),
            Monomial(self.sigma2_task, tuple(sorted(((e, -1.0), (t, -1.0))))),
            Monomial(self.sigma2_traj, tuple(sorted(((e, -1.0), (t, -1.0), (k, -1.0)))))),
            str(self))

    def params(self) -> dict[str, Any]:
        return {"floor": self.floor, "sigma2_env": self.sigma2_env,
                "sigma2_task": self.sigma2_task, "sigma2_traj": self.sigma2_traj,
                "axes": list(self.axes)}

    def expression(self, symbolic: bool = False) -> Any:
        import sympy as sp

        check_bool("symbolic", symbolic)
        x = self.symbols
        e, t, k = (x[a] for a in self.axes)
        if symbolic:
            floor = sp.Symbol("L_inf", nonnegative=True)
            s = sp.symbols("sigma2_E sigma2_T sigma2_tau", positive=True)
        else:
            floor = sp.Float(self.floor)
            s = [sp.Float(v) for v in self.variances]
        return floor + s[0] / e + s[1] / (e * t) + s[2] / (e * t * k)

    def __str__(self) -> str:
        e, t, k = self.axes
        return (f"{self.floor:g} + {self.sigma2_env:g}/{e} + {self.sigma2_task:g}/({e}*{t}) + "
                f"{self.sigma2_traj:g}/({e}*{t}*{k})")


@dataclass(frozen=True)
class NestedAllocation(Result):
    """Closed-form optimum of the variance-components law (see module docstring).

    Attributes
    ----------
    values : dict
        ``{E, t, k}`` by the law's axis names (continuous).
    loss, cost : float
        Loss at the optimum and its cost (equal to the budget).
    pooled : tuple of tuple of int
        Levels pooled by the nesting constraints, e.g. ``((0,), (1, 2))``
        when ``k = 1`` binds.
    """

    values: dict[str, float]
    loss: float
    cost: float
    pooled: tuple[tuple[int, ...], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"values": dict(self.values), "loss": self.loss, "cost": self.cost,
                "pooled": [list(p) for p in self.pooled]}


def nested_optimum(law: VarianceComponentsLaw, c_env: float, c_task: float, c_traj: float,
                   budget: float) -> NestedAllocation:
    """Closed-form compute-optimal ``(E, t, k)`` under ``c_E*E + c_T*E*t + c_tau*E*t*k``.

    Continuous relaxation with ``t >= 1`` and ``k >= 1`` (no other bounds).

    Examples
    --------
    >>> law = VarianceComponentsLaw(0.0, sigma2_env=4.0, sigma2_task=1.0, sigma2_traj=1.0)
    >>> opt = nested_optimum(law, 100.0, 10.0, 1.0, budget=1e4)
    >>> {a: round(v, 4) for a, v in opt.values.items()}
    {'E': 82.7737, 't': 1.5811, 'k': 3.1623}
    >>> round(opt.loss, 6), opt.pooled
    (0.058382, ((0,), (1,), (2,)))
    """
    if not isinstance(law, VarianceComponentsLaw):
        raise TypeError(f"law must be a VarianceComponentsLaw; got {type(law).__name__}")
    costs = [check_scalar(n, c, low=0.0, low_open=True)
             for n, c in (("c_env", c_env), ("c_task", c_task), ("c_traj", c_traj))]
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    # Pool adjacent violators on v = sqrt(S/C), compared as log S - log C (S/C may
    # overflow); blocks are [levels, S, C].  Everything below runs in log space.
    blocks: list[list[Any]] = []
    for i, (s, c) in enumerate(zip(law.variances, costs)):
        blocks.append([[i], s, c])
        while len(blocks) > 1 and (math.log(blocks[-2][1]) - math.log(blocks[-2][2])
                                   > math.log(blocks[-1][1]) - math.log(blocks[-1][2])):
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1],
                          blocks[-1][2] + last[2]]
    for b in blocks:
        if not (math.isfinite(b[1]) and math.isfinite(b[2])):
            raise ValueError(f"pooled variances or costs overflow the float range (costs "
                             f"c_env={c_env}, c_task={c_task}, c_traj={c_traj})")
    # log total = log sum_j sqrt(S_j C_j); log n_i = log B + (log S - log C)/2 - log total
    halves = [0.5 * (math.log(s) + math.log(c)) for _, s, c in blocks]
    top = max(halves)
    log_total = top + math.log(math.fsum(math.exp(h - top) for h in halves))
    log_n = [0.0, 0.0, 0.0]
    for levels, s, c in blocks:
        for i in levels:
            log_n[i] = math.log(budget) + 0.5 * (math.log(s) - math.log(c)) - log_total
    e_ax, t_ax, k_ax = law.axes
    logs = {e_ax: log_n[0], t_ax: log_n[1] - log_n[0], k_ax: log_n[2] - log_n[1]}
    log_red = 2.0 * log_total - math.log(budget)  # (sum_j sqrt(S_j C_j))^2 / B
    worst = max([*logs.values(), log_red])
    if worst > 709.0 or logs[e_ax] < -708.0:
        raise ValueError(f"the optimum leaves the float range for budget={budget:g}, "
                         f"c_env={costs[0]:g}, c_task={costs[1]:g}, c_traj={costs[2]:g}")
    values = {a: math.exp(v) for a, v in logs.items()}
    loss = check_finite_result(law.floor + math.exp(log_red), "the optimal loss",
                               budget=budget)
    return NestedAllocation(values, loss, budget, tuple(tuple(b[0]) for b in blocks))
