"""The Bayes plan: least expected loss over a fit's bootstrap laws, no law allowed to dominate.

The Bayes decision under a fit's uncertainty minimises the expected loss over the laws
the data allow, ``E_θ[L_θ(x)]``; a fit's bootstrap laws stand in for that posterior
(Efron 2012, "Bayesian inference and the parametric bootstrap").  The plain mean over
the laws (:class:`~rlscale.theory.MixtureLaw`, a geometric program) has one flaw in
practice: a resample of a poorly identified fit can carry a law whose loss at the plan is
absurd (ten or a hundred times the data's), and the mean then follows that one law.  In
``rlscale report --quick`` that made the "robust plan" lower the expected loss by 33 for
a loss bounded by 1.

This module's objective bounds every law's influence twice:

- **bounded**: each law's loss is clipped into the loss's range ``[low, high]``
  (``loss_range``; ``(0, 1)`` for ``1 − success``), so a law's contribution is at most
  ``(high − low)/m``;
- **trimmed**: the mean is a ``trim``-trimmed mean over the laws at each allocation
  (the ``trim`` share of laws with the highest and with the lowest loss there left out;
  :func:`scipy.stats.trim_mean`), so a few laws cannot move it however extreme they are.

``J(x) = trim_mean(clip(L_b(x), low, high), trim)`` lies in the loss's range by
construction, which is what every expected-loss figure reports.  It is not a geometric
program; it is minimised by **concentration steps** (as least trimmed squares is,
Rousseeuw & Van Driessen 2006): at the current allocation take the laws ``J`` keeps
(inside the trim, below ``high``), minimise their mean exactly (a geometric program),
and repeat until the kept set repeats; the iterate with the least ``J`` is returned,
whether or not the set settled (``converged`` says which).  A law above ``high`` at the
current allocation is flat there (clipped), so leaving it out of the step is its true
gradient, zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._allocate import AllocationProblem
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._validation import check_scalar

__all__ = ["RobustPlan", "expected_loss", "robust_plan"]

#: Most concentration steps before the best iterate is returned.
MAX_STEPS = 8


def check_loss_range(loss_range: Any) -> tuple[float, float]:
    """``(low, high)`` with ``0 <= low < high`` (``high`` may be ``inf``); ``None`` is (0, inf)."""
    if loss_range is None:
        return 0.0, math.inf
    if isinstance(loss_range, str | bytes) or not isinstance(loss_range, Sequence) \
            or len(loss_range) != 2:
        raise TypeError(f"loss_range must be a pair (low, high); got {loss_range!r:.60}")
    low = check_scalar("loss_range[0]", loss_range[0], low=0.0)
    high = check_scalar("loss_range[1]", loss_range[1], low=0.0, allow_inf=True)
    if not high > low:
        raise ValueError(f"loss_range must have low < high; got {tuple(loss_range)}")
    return low, high


def check_trim(trim: Any) -> float:
    return check_scalar("trim", trim, low=0.0, high=0.5, high_open=True)


def expected_loss(losses: np.ndarray, trim: float, loss_range: tuple[float, float]
                  ) -> Any:
    """``J`` over the first axis of ``losses`` (laws, or laws × allocations); a float for
    one allocation.

    Examples
    --------
    >>> round(expected_loss(np.array([0.2, 0.3, 0.4, 50.0]), 0.0, (0.0, 1.0)), 6)
    0.475
    >>> round(expected_loss(np.array([0.2, 0.3, 0.4, 50.0]), 0.25, (0.0, 1.0)), 6)
    0.35
    """
    from scipy.stats import trim_mean

    out = trim_mean(np.clip(losses, *loss_range), trim, axis=0)
    return float(out) if np.ndim(out) == 0 else np.asarray(out)


def _kept(losses: np.ndarray, trim: float, high: float) -> np.ndarray:
    """Which laws the trimmed, clipped mean at one allocation depends on (a mask)."""
    m = losses.size
    cut = math.floor(trim * m)  # trim_mean's rule: floor(trim·m) from each end
    order = np.argsort(losses, kind="stable")
    keep = np.zeros(m, dtype=bool)
    keep[order[cut:m - cut]] = True
    below = keep & (losses < high)
    # Where every kept law is clipped the objective is flat: step on the trimmed laws
    # alone (unclipped) to leave the flat region, as a start far from the data needs.
    return below if below.any() else keep


@dataclass(frozen=True)
class RobustPlan(Result):
    """The allocation of least bounded, trimmed expected loss (:func:`robust_plan`).

    Attributes
    ----------
    values, effective : dict
        The allocation (decision variables) and its law-axis values.
    cost : float
    expected_loss : float
        ``J`` at the plan (inside ``loss_range``).
    law : Law
        The mean of the laws kept at the plan (a :class:`~rlscale.theory.MixtureLaw`): the
        plan is its optimum, and its optimum path is the plan's path.
    kept : numpy.ndarray
        Mask of the laws that law averages.
    trim : float
    loss_range : tuple
        ``(low, high)`` the losses were clipped into; ``high`` is ``None`` for an open top
        (no finite bound: a record holds no infinities, and JSON has none).
    steps : int
        Concentration steps taken.
    converged : bool
        Whether the kept set repeated (else the best of :data:`MAX_STEPS` iterates).
    """

    values: dict[str, float]
    effective: dict[str, float]
    cost: float
    expected_loss: float
    law: Law
    kept: np.ndarray = field(repr=False)
    trim: float = 0.1
    loss_range: tuple[float, float | None] = (0.0, None)
    steps: int = 0
    converged: bool = True

    # The result convention (rlscale.optimize._outcome): the iteration's own stopping rule
    # is the kept set repeating; not in ``as_dict`` (the report's results.json is pinned).
    @property
    def success(self) -> bool:
        """Whether the kept set repeated (``converged``)."""
        return bool(self.converged)

    @property
    def status(self) -> str:
        """``"converged"``, or ``"max_iterations"`` (the best of :data:`MAX_STEPS` iterates)."""
        return "converged" if self.converged else "max_iterations"

    @property
    def message(self) -> str:
        """What ran and how it ended, in words."""
        kept = f"{int(self.kept.sum())} of {self.kept.size} laws kept (trim {self.trim:g})"
        if self.converged:
            return f"the kept set repeated after {self.steps} concentration steps; {kept}"
        return (f"the kept set did not repeat in {self.steps} concentration steps: the best "
                f"iterate is returned; {kept}")

    def as_dict(self) -> dict[str, Any]:
        return {"values": self.values, "effective": self.effective, "cost": self.cost,
                "expected_loss": self.expected_loss, "kept": int(self.kept.sum()),
                "laws": int(self.kept.size), "trim": self.trim,
                "loss_range": list(self.loss_range), "steps": self.steps,
                "converged": self.converged}


def solve_warm(problem: AllocationProblem, budget: float, start: Mapping[str, float] | None
               ) -> dict[str, float]:
    """``problem.allocate(budget)``'s continuous optimum, by warm Newton from ``start`` when
    it certifies (:func:`~._warm_newton.warm_solve`), else the geometric program."""
    from rlscale.optimize._alloc_kkt import ALLOCATE
    from rlscale.optimize._warm_newton import warm_solve

    if start is not None:
        values = warm_solve(problem, ALLOCATE, budget, start)
        if values is not None:
            return values
    return problem.allocate(budget, round_integers=False).values


def robust_plan(laws: Sequence[Law], cost: Any, budget: float,
                bounds: Mapping[str, Any] | None = None, *,
                substitute: Mapping[str, Any] | None = None, trim: float = 0.1,
                loss_range: tuple[float, float] | None = None,
                start: Mapping[str, float] | None = None) -> RobustPlan:
    """The allocation minimising the bounded, trimmed mean loss over ``laws``.

    Parameters
    ----------
    laws : sequence of Law
        GP-compatible laws over the same axes (e.g. a fit's bootstrap laws), at least 2.
    cost, budget, bounds, substitute :
        As for :func:`~rlscale.optimize.allocate`.
    trim : float
        Share of laws left out at each end of the mean, in [0, 0.5).
    loss_range : (low, high), optional
        The loss's range; ``None`` is ``(0, inf)`` (only the trim bounds a law then).
    start : mapping, optional
        An allocation to begin from (default: the optimum of the plain mean).

    Examples
    --------
    Three laws that agree on the terms (they differ only in the floor, so each puts its
    optimum at ``E = k = 100``) and one absurd law whose E-term is 10⁴ times theirs: the
    plain mean follows the absurd law to an E-heavy plan; the trimmed, bounded mean does
    not.

    >>> from rlscale.optimize import allocate
    >>> from rlscale.theory import AdditiveLaw, MixtureLaw
    >>> good = [AdditiveLaw(f, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
    ...         for f in (0.09, 0.1, 0.11)]
    >>> wild = AdditiveLaw(0.1, {"E": 1e4, "k": 1.0}, {"E": 0.5, "k": 0.5})
    >>> p = robust_plan([*good, wild], "E + k", 200.0, {"E": (1, 1e6), "k": (1, 1e6)},
    ...                 trim=0.25, loss_range=(0.0, 1.0))
    >>> round(p.values["E"], 6), round(p.values["k"], 6)   # the agreeing laws' split
    (100.0, 100.0)
    >>> plain = allocate(MixtureLaw([*good, wild]), "E + k", 200.0,
    ...                  {"E": (1, 1e6), "k": (1, 1e6)}, round_integers=False)
    >>> round(plain.values["k"], 2)   # KKT: (k/E)^1.5 = 1/2500.75, k/E = 0.0054
    1.08
    >>> 0.0 <= p.expected_loss <= 1.0, int(p.kept.sum())
    (True, 2)
    """
    from rlscale.theory._mixture import MixtureLaw

    if isinstance(laws, str | bytes) or not isinstance(laws, Sequence):
        raise TypeError(f"laws must be a sequence of laws; got {type(laws).__name__}")
    laws = list(laws)
    if len(laws) < 2 or not all(isinstance(b, Law) for b in laws):
        raise ValueError(f"laws must hold at least 2 rlscale laws; got {len(laws)}")
    trim = check_trim(trim)
    rng_ = check_loss_range(loss_range)
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    base = AllocationProblem(laws[0], cost, bounds, substitute)

    from rlscale.optimize._deployed import LawBank

    bank = LawBank(laws)

    def losses_at(values: Mapping[str, float]) -> np.ndarray:
        eff = base.effective(values)
        return bank.losses({a: np.atleast_1d(np.asarray(eff[a], dtype=float))
                            for a in bank.axes})[:, 0]

    def step(mask: np.ndarray, x0: Mapping[str, float] | None) -> tuple[dict[str, float], Law]:
        kept = [b for b, k in zip(laws, mask) if k]
        law = kept[0] if len(kept) == 1 else MixtureLaw(kept)
        problem = AllocationProblem(law, cost, bounds, substitute)
        return solve_warm(problem, budget, x0), law

    mask = np.ones(len(laws), dtype=bool)
    x, law = step(mask, start) if start is None else (dict(start), None)
    best: tuple[float, dict[str, float], Law | None, np.ndarray] | None = None
    seen: set[bytes] = set()
    steps, converged = 0, False
    while steps < MAX_STEPS:
        ell = losses_at(x)
        j = float(expected_loss(ell, trim, rng_))
        new = _kept(ell, trim, rng_[1])
        if law is not None and (best is None or j < best[0]):
            best = (j, x, law, mask)
        key = new.tobytes()
        if key in seen:
            converged = True
            break
        seen.add(key)
        mask = new
        x, law = step(mask, x)
        steps += 1
    if best is None or (law is not None and not converged):
        ell = losses_at(x)
        j = float(expected_loss(ell, trim, rng_))
        if best is None or j < best[0]:
            best = (j, x, law, mask)
    j, x, law, mask = best
    return RobustPlan(values=dict(x), effective={a: float(v) for a, v in
                                                 base.effective(x).items()},
                      cost=float(base.cost_at(x)), expected_loss=j, law=law, kept=mask,
                      trim=trim,
                      loss_range=(rng_[0], rng_[1] if math.isfinite(rng_[1]) else None),
                      steps=steps, converged=converged)
