"""What a plan delivers once deployed: η_deployed, the estimand of every η in rlscale.

A plan is chosen from data: a fitted law, or a decision over its bootstrap laws
(:func:`~rlscale.optimize.recommend`).  What the researcher gets is that plan run under
the law that actually generates outcomes, which the fit only estimates.  rlscale names
that quantity and judges every η against it:

**Deployed efficiency.**  Let ``P(B')`` be the plan's allocation at budget ``B'`` (its
*path*: the allocation the same rule picks when the budget changes), ``L*`` the
generating law and ``b`` a baseline allocation that spends ``c_b``.  Then

    η_deployed = c_b / C*,    C* = min{cost(P(B')) : L*(P(B')) <= L*(b)},

the baseline's cost over the cheapest cost at which the plan's path, judged under the
generating law, reaches the baseline's loss (Smith & Winkler 2006 for why the law that
chose the plan must not judge it).  ``η_deployed > 1`` means the plan reaches the
baseline's loss for less; on a path whose loss falls with the budget it is the same as
the plan's loss at the baseline's cost lying below the baseline's.  It is at most the
*oracle* η (the generating law's own optimum path in place of ``P``), with equality only
when the data picked the generating law's optimum.

The same function of a path serves three roles, which differ only in the law that judges:

- **deployed** (this module, :func:`deployed_efficiency`): ``L*`` known -- a
  calibration study's generator (:mod:`rlscale.optimize._calibration`);
- **predicted** (:func:`path_etas`): each bootstrap law in place of ``L*``, the path
  held fixed; :func:`~rlscale.optimize.recommend` turns these into an estimate of
  η_deployed with its selection bias removed;
- **realised** (:func:`~rlscale.optimize.realised_efficiency`): the trainer in place of
  ``L*``, the cost where the measured success path reaches the baseline's.

``C*`` is located on the path's grid of budgets: the first point at which the loss is at
or below the target, interpolated linearly in ``log cost`` from the point before
(:func:`~rlscale.optimize.cost_to_reach`'s rule).  Outside the grid only a bound is known:
the result says ``"at least"`` (even the cheapest point reaches the target) or ``"at
most"`` (no point does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._laws import Law
from rlscale.theory._repr import compact_repr
from rlscale.theory._result import Result
from rlscale.theory._validation import check_real, check_scalar

__all__ = ["DeployedEfficiency", "LawBank", "PlanPath", "deployed_efficiency", "path_etas"]

#: A loss to judge with: a law, or any callable from law-axis values (arrays) to losses.
LossFunction = Law | Callable[[Mapping[str, np.ndarray]], Any]


@dataclass(frozen=True)
class PlanPath(Result):
    """A plan's allocation along budgets (ascending), in decision variables and law axes.

    Attributes
    ----------
    name : str
        What the path is ("bayes plan", "proportional", ...).
    budgets : numpy.ndarray
        The budgets, ascending.
    values : dict
        Decision variable -> array of its value at each budget.
    effective : dict
        Law axis -> array of the axis value the allocation implies (the substitution
        of totals such as ``tasks = E*t``; equal to ``values`` without one).
    costs : numpy.ndarray
        What each allocation spends (below its budget where a bound binds).
    """

    name: str
    budgets: np.ndarray
    values: dict[str, np.ndarray]
    effective: dict[str, np.ndarray]
    costs: np.ndarray

    def __repr__(self) -> str:  # one screen, not every array in full (issue 24)
        return compact_repr(self, title=f"{self.budgets.size} budgets from "
                            f"{self.budgets[0]:.4g} to {self.budgets[-1]:.4g}")

    def __post_init__(self) -> None:
        # Built by users too (a path of their own to judge), not only by recommend: costs=1
        # was an AttributeError and a list of floats one too (issue 22).
        from rlscale.theory._validation import check_mapping, check_real

        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string; got name={self.name!r:.60}")
        put("budgets", check_real("budgets", self.budgets, low=0.0, low_open=True))
        put("costs", check_real("costs", self.costs, low=0.0))
        for field in ("values", "effective"):
            put(field, {k: check_real(f"{field}[{k!r}]", v, low=0.0, low_open=True)
                        for k, v in check_mapping(field, getattr(self, field)).items()})
        n = self.budgets.size
        if n == 0 or self.budgets.shape != (n,) or self.costs.shape != (n,) or any(
                np.shape(v) != (n,) for v in (*self.values.values(), *self.effective.values())):
            raise ValueError(f"a PlanPath needs one value per budget ({n}) for every variable, "
                             "axis and cost")
        if not np.all(np.diff(self.budgets) > 0):
            raise ValueError("a PlanPath's budgets must be strictly ascending")

    def at(self, i: int) -> dict[str, float]:
        """The allocation at ``budgets[i]`` (decision variables)."""
        from rlscale.theory._validation import check_positive_int

        i = check_positive_int("i", i, minimum=0, maximum=self.budgets.size - 1)
        return {v: float(x[i]) for v, x in self.values.items()}

    def losses(self, loss: LossFunction) -> np.ndarray:
        """The loss of every allocation of the path under ``loss``."""
        return _evaluate(loss, self.effective)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "budgets": self.budgets.tolist(),
                "values": {k: v.tolist() for k, v in self.values.items()},
                "effective": {k: v.tolist() for k, v in self.effective.items()},
                "costs": self.costs.tolist()}


class LawBank:
    """Many laws evaluated at once: ``L_b(x) = floor_b + Σ_j c_bj Π_a x_a^e_bja``.

    A fit's bootstrap laws are judged at the same allocations many times (every baseline,
    every point of a path); one vectorised pass over a ``(laws, terms, axes)`` array of
    their posynomials' exponents replaces a Python loop of checked evaluations.  Laws with
    fewer terms are padded with zero coefficients.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> laws = [AdditiveLaw(0.1, {"E": c, "k": 1.0}, {"E": 0.5, "k": 0.5}) for c in (1, 2)]
    >>> LawBank(laws).losses({"E": np.array([4.0]), "k": np.array([16.0])}).ravel().tolist()
    [0.85, 1.35]
    """

    def __init__(self, laws: Sequence[Law]) -> None:
        laws = list(laws)
        if not laws or not all(isinstance(b, Law) for b in laws):
            raise TypeError("a LawBank needs at least one rlscale law")
        self.axes = tuple(laws[0].axes)
        for i, b in enumerate(laws):  # a law over other axes was a KeyError below
            if sorted(b.axes) != sorted(self.axes):
                raise ValueError(f"laws must share their axes: laws[0] has {list(self.axes)}, "
                                 f"laws[{i}] {list(b.axes)}")
        terms = [b.reducible_posynomial().terms for b in laws]
        width = max(len(t) for t in terms)
        self.floor = np.array([float(b.floor) for b in laws])
        self.log_c = np.full((len(laws), width), -np.inf)
        self.expo = np.zeros((len(laws), width, len(self.axes)))
        index = {a: i for i, a in enumerate(self.axes)}
        for i, ts in enumerate(terms):
            for j, m in enumerate(ts):
                self.log_c[i, j] = math.log(m.coefficient)
                for a, e in m.exponents:
                    self.expo[i, j, index[a]] = e

    def __len__(self) -> int:
        return self.floor.size

    def losses(self, effective: Mapping[str, Any]) -> np.ndarray:
        """``(laws, points)`` losses at law-axis values (arrays of one shape, flattened).

        A law whose loss overflows somewhere (a resample's step-like exponent below an
        axis value of 1) is ``inf`` there: it loses every comparison at that point, and
        a loss range clips it; no NaN can arise (every term is added, none subtracted).
        """
        logx = np.stack([np.log(np.asarray(effective[a], dtype=float)).ravel()
                         for a in self.axes], axis=-1)  # (points, axes)
        with np.errstate(over="ignore"):
            # (points, axes) @ (laws, axes, terms) -> (laws, points, terms): a BLAS matrix
            # product, 5x faster than the equivalent einsum (equal to the last bit or so).
            t = self.log_c[:, None, :] + logx @ self.expo.transpose(0, 2, 1)
            return self.floor[:, None] + np.exp(t).sum(axis=-1)


def _evaluate(loss: LossFunction, effective: Mapping[str, np.ndarray]) -> np.ndarray:
    """``loss`` at law-axis values, as a float array; NaN and inf are refused."""
    if isinstance(loss, Law):
        out = loss.loss({a: effective[a] for a in loss.axes})
    elif callable(loss):
        out = loss(effective)
    else:
        raise TypeError(f"loss must be a rlscale law or a callable of the law's axis values; "
                        f"got {type(loss).__name__}")
    try:
        out = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"the judging loss must return numbers; got {type(out).__name__}"
                        ) from None
    shape = np.broadcast_shapes(*(np.shape(v) for v in effective.values()))
    if out.shape != shape:  # a scalar was an IndexError; another length was taken as is
        raise ValueError(f"the judging loss must return one loss per allocation (shape "
                         f"{shape}); got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError("the judging loss is not finite at some allocation of the path")
    return out


@dataclass(frozen=True)
class DeployedEfficiency(Result):
    """η of a plan's path against a baseline under one judging law (:func:`deployed_efficiency`).

    Attributes
    ----------
    eta : float
        ``baseline_cost / path_cost`` (a bound when ``bound`` is not ``"exact"``).
    bound : str
        ``"exact"``, ``"at least"`` (the path's cheapest point already reaches the
        baseline's loss) or ``"at most"`` (no point of the path does).
    path_cost : float
        ``C*``, the cost at which the path reaches the baseline's loss.
    baseline_cost, baseline_loss : float
        What the baseline spends and its loss under the judging law.
    plan_loss : float or None
        The judging law's loss of the path at the budget nearest ``baseline_cost`` (the
        equal-cost comparison; ``None`` when no budget of the path lies within 1 % of it).
    """

    eta: float
    bound: str
    path_cost: float
    baseline_cost: float
    baseline_loss: float
    plan_loss: float | None


def _first_crossing(costs: np.ndarray, losses: np.ndarray, targets: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``losses`` (``(n, len(costs))``), the cost where it first reaches its target.

    The first index ``i`` with ``losses[i] <= target``; between it and ``i - 1`` the
    cost is interpolated linearly in ``log cost`` on the loss.  Returns the costs and a
    code per row: 0 exact, 1 "at least" (reached at the first point), 2 "at most"
    (never reached; the largest cost is returned).
    """
    reached = losses <= targets[:, None]
    any_ = reached.any(axis=1)
    first = np.where(any_, reached.argmax(axis=1), costs.size)
    log_c = np.log(costs)
    out = np.where(first == 0, costs[0], costs[-1]).astype(float)
    code = np.where(first == 0, 1, np.where(any_, 0, 2))
    rows = np.flatnonzero((first > 0) & any_)
    if rows.size:
        i = first[rows]
        hi, lo = losses[rows, i - 1], losses[rows, i]  # hi > target >= lo
        w = (hi - targets[rows]) / (hi - lo)
        out[rows] = np.exp((1 - w) * log_c[i - 1] + w * log_c[i])
    return out, code


_BOUND = ("exact", "at least", "at most")


def path_etas(path: PlanPath, laws: Sequence[LossFunction] | LawBank, baseline_effective:
              Mapping[str, Any], baseline_cost: float) -> tuple[np.ndarray, np.ndarray]:
    """η of ``path`` against one baseline under each of ``laws`` (or a :class:`LawBank`), and
    each one's bound code.

    The path is held fixed (it is what was chosen); each law judges both it and the
    baseline.  Codes: 0 exact, 1 at least, 2 at most (see :func:`deployed_efficiency`).
    """
    reach, code = _reach(path, laws, baseline_effective)
    return baseline_cost / reach, code


def _reach(path: PlanPath, laws: Sequence[LossFunction] | LawBank,
           baseline_effective: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per law, the cost ``C*`` where the path first reaches the baseline's loss, and its code."""
    base = {a: np.asarray(v, dtype=float).reshape(1) for a, v in baseline_effective.items()}
    if isinstance(laws, LawBank):
        L = laws.losses(path.effective)
        targets = laws.losses(base)[:, 0]
    else:
        L = np.stack([path.losses(law) for law in laws])
        targets = np.array([float(_evaluate(law, base)[0]) for law in laws])
    return _first_crossing(path.costs, L, targets)


def deployed_efficiency(path: PlanPath, generating: LossFunction,
                        baseline_effective: Mapping[str, Any], baseline_cost: float
                        ) -> DeployedEfficiency:
    """η_deployed of a plan's path against a baseline, judged by the generating law.

    Parameters
    ----------
    path : PlanPath
        The plan as deployed along budgets (e.g. :attr:`Recommendation.path`).
    generating : Law or callable
        The law that generates outcomes (a study's known truth), as a rlscale law or a
        callable from law-axis values (a mapping of arrays) to losses -- e.g. a law
        outside every fitted family.
    baseline_effective : mapping
        The baseline's allocation in the law's axes.
    baseline_cost : float
        What the baseline spends.

    Examples
    --------
    A path along ``E = k = B/2`` under ``L = 0.1 + 1/√E + 1/√k`` (cost ``E + k``),
    against the baseline ``E = 10, k = 190`` (loss ``0.1 + 10^-½ + 190^-½``):

    >>> import numpy as np
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
    >>> B = np.geomspace(10.0, 400.0, 400)
    >>> path = PlanPath("even split", B, {"E": B / 2, "k": B / 2}, {"E": B / 2, "k": B / 2}, B)
    >>> d = deployed_efficiency(path, law, {"E": 10.0, "k": 190.0}, 200.0)
    >>> # the even split reaches that loss at C = 2·(2/(L_b − 0.1))² = 52.93
    >>> round(d.eta, 3), d.bound
    (3.779, 'exact')
    """
    from rlscale.theory._validation import check_mapping

    if not isinstance(path, PlanPath):
        raise TypeError(f"path must be a PlanPath; got {type(path).__name__}")
    if not isinstance(generating, Law) and not callable(generating):
        raise TypeError(f"generating must be a rlscale law or a callable of the law's axis "
                        f"values; got generating={generating!r:.60}")
    baseline_cost = check_scalar("baseline_cost", baseline_cost, low=0.0, low_open=True)
    base = {a: check_real(f"baseline_effective[{a!r}]", v, low=0.0, low_open=True).reshape(1)
            for a, v in check_mapping("baseline_effective", baseline_effective).items()}
    missing = [a for a in path.effective if a not in base]
    if missing:
        raise ValueError(f"baseline_effective must give every axis of the path "
                         f"{list(path.effective)}; missing {missing}")
    reach_, code = _reach(path, [generating], base)
    target = float(_evaluate(generating, base)[0])
    reach = float(reach_[0])
    gap = np.abs(np.log(path.costs) - math.log(baseline_cost))  # in logs: no overflow
    near = int(np.argmin(gap))
    equal = float(path.losses(generating)[near]) if gap[near] <= 0.01 else None
    return DeployedEfficiency(baseline_cost / reach, _BOUND[int(code[0])], reach,
                              baseline_cost, target, equal)
