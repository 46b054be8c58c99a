r"""Planning labels against optimisation: the cheapest ``(M, K)`` on the reward law.

With the fitted law ``G(M, K) = a·sqrt(min(log M + b, c·K))`` and prices
``c_M`` per comparison and ``c_K`` per nat of KL, the cost of a plan is
``c_M·M + c_K·K``.

**Prices per RL step.**  Optimisation is often paid per RL step, not per nat.
With the KL a run reaches after ``S`` steps measured as ``K(S) = κ·S^γ``
(``rlscale verify reward-law --trainer`` fits ``κ, γ`` to its policy-gradient
runs), a plan of ``S`` steps buys ``K = κ·S^γ`` and costs ``c_M·M + c_S·S``,
``S(K) = (K/κ)^{1/γ}``.  ``S(K)`` rises in ``K``, so the arguments below carry
over unchanged: the target plan is the same corner with ``S = (L/(cκ))^{1/γ}``;
the budget plan still has ``log M + b = c·K``.  For ``γ = 1`` the step price
is a KL price ``c_K = c_S/κ`` and the Lambert-W closed form holds; for
``γ ≠ 1`` the balance ``c_M e^u + c_S ((u + b)/(cκ))^{1/γ} = B`` has no closed
form and is solved by bracketed root finding (its left side rises in ``u``).

**Cheapest plan for a target gain** ``g``.  ``G >= g`` iff both
``log M + b >= L`` and ``c·K >= L`` with ``L = (g/a)²``, and the cost rises in
each of ``M`` and ``K``, so the unique cheapest plan is the corner
``M = e^{L − b}``, ``K = L/c`` (``M >= 1``: where ``L < b`` one comparison
already suffices for the label side).  Gains ``g >= a·sqrt(log M_max + b)``
are unreachable when ``M`` is capped.

**Best gain for a budget** ``B``.  At the optimum the two arguments of the min
are equal (otherwise money moves from the slack axis to the binding one):
``log M + b = c·K``, so with ``A = c_K/c`` and ``u = log M``

.. math::  c_M e^{u} + A (u + b) = B
    \;\Longrightarrow\; u = \frac{B − A b}{A} − W\!\Big(\frac{c_M}{A} e^{(B − A b)/A}\Big),

``W`` the principal Lambert function (substitute ``v = (B − Ab)/A − u``:
``v e^v = (c_M/A) e^{(B−Ab)/A}``); it is evaluated as the root of
``w + log w = x`` in log space, so huge budgets do not overflow.  Where this
gives ``M < 1`` the plan is ``M = 1`` and the rest on ``K``.

:func:`plan_labels_numeric` solves the same problems for any gain function
(the smooth-min variant, a saturating fit) by bounded 1-D search over
``log M`` on the budget line, and the tests check the closed forms against it
and against brute-force grids.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._outcome import from_scipy
from rlscale.theory._result import Result
from rlscale.theory._validation import check_scalar

__all__ = ["LabelPlan", "plan_labels", "plan_labels_numeric"]


@dataclass(frozen=True)
class LabelPlan(Result):
    """A plan of comparisons and KL budget.

    Attributes
    ----------
    M, K : float
        Comparisons and KL budget (nats).
    cost : float
        ``c_M·M + c_K·K``.
    gain : float
        The law's gain at ``(M, K)``.
    label_cost_share : float
        ``c_M·M/cost``.
    steps : float or None
        RL steps ``S`` with ``K = κ·S^γ`` when optimisation is priced per step
        (``price_step=``); ``None`` when it is priced per nat of KL.
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome`:
        ``"closed_form"`` for the Lambert-W plan, ``"converged"`` when a root
        (step-priced plans) or a bounded Brent search
        (:func:`plan_labels_numeric`) met its tolerance.
    """

    M: float
    K: float
    cost: float
    gain: float
    label_cost_share: float
    steps: float | None = None
    success: bool = True
    status: str = "closed_form"
    message: str = "the Lambert-W closed form of the optimality condition"

    def as_dict(self) -> dict[str, Any]:
        out = {"M": self.M, "K": self.K, "cost": self.cost, "gain": self.gain,
               "label_cost_share": self.label_cost_share, "success": self.success,
               "status": self.status, "message": self.message}
        if self.steps is not None:
            out["steps"] = self.steps
        return out


def _law(a: float, b: float, c: float, M: Any, K: Any) -> Any:
    return a * np.sqrt(np.maximum(np.minimum(np.log(M) + b, c * np.asarray(K)), 0.0))


def _w_exp(x: float) -> float:
    """``W(e^x)``: the root of ``w + log w = x`` (Newton from an asymptotic start)."""
    if x > 2.0:
        w = x - math.log(x)
    elif x < -2.0:
        w = math.exp(x)  # W(z) ≈ z for small z
    else:
        w = 0.5 + 0.25 * x
    w = max(w, 1e-300)
    for _ in range(100):
        step = (w + math.log(w) - x) / (1.0 + 1.0 / w)
        w_new = max(w - step, w / 10.0)
        if abs(w_new - w) <= 1e-15 * max(1.0, w):
            return w_new
        w = w_new
    return w


def plan_labels(a: float, b: float, c: float, *, price_m: float, price_k: float | None = None,
                target: float | None = None, budget: float | None = None,
                price_step: float | None = None, kl_per_step: float | None = None,
                kl_step_exponent: float = 1.0) -> LabelPlan:
    """Cheapest ``(M, K)`` reaching ``target``, or the best gain for ``budget`` (closed form).

    Parameters
    ----------
    a, b, c : float
        The fitted law ``a·sqrt(min(log M + b, c·K))`` (``a, c > 0``).
    price_m : float
        Price per comparison, > 0.
    price_k : float, optional
        Price per nat of KL, > 0.  Exactly one of ``price_k`` and ``price_step``.
    target, budget : float
        Exactly one: the gold gain to reach, or the money to spend.
    price_step : float, optional
        Price per RL step, > 0; needs ``kl_per_step``.
    kl_per_step : float, optional
        ``κ`` in the measured KL after ``S`` steps, ``K = κ·S^γ`` (nats), > 0.
    kl_step_exponent : float
        ``γ`` in ``(0, 10]`` (default 1: KL linear in steps, ``c_K = c_S/κ``).

    A plan whose ``M``, ``K`` or cost would leave float64 (``target/a`` outside
    [1e-150, 1e150], ``log M`` beyond 700, ``K`` beyond 1e308, ``budget·c/price_k`` beyond
    1e300) is refused with a ``ValueError`` naming the arguments.

    Examples
    --------
    >>> p = plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0, target=2.0)
    >>> round(p.M, 3), p.K, round(p.cost, 2)          # L = 4: M = e^4, K = 4
    (54.598, 4.0, 454.6)
    >>> q = plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0, budget=p.cost)
    >>> round(q.gain, 6)
    2.0

    Priced per RL step, with 0.05 nats a step (so a step costs 5 at 100 a nat):

    >>> s = plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_step=5.0, kl_per_step=0.05,
    ...                 budget=p.cost)
    >>> round(s.gain, 6), round(s.steps, 6)            # K = 4 nats = 80 steps
    (2.0, 80.0)
    """
    a = check_scalar("a", a, low=0.0, low_open=True)
    b = check_scalar("b", b)
    c = check_scalar("c", c, low=0.0, low_open=True)
    pm = check_scalar("price_m", price_m, low=0.0, low_open=True)
    if (price_k is None) == (price_step is None):
        raise ValueError("give exactly one of price_k= (per nat of KL) and price_step= "
                         "(per RL step, with kl_per_step=)")
    if (target is None) == (budget is None):
        raise ValueError("give exactly one of target= and budget=")
    if price_step is not None:
        return _plan_steps(a, b, c, pm, price_step, kl_per_step, kl_step_exponent, target,
                           budget)
    if kl_per_step is not None:
        raise ValueError("kl_per_step= converts steps to KL; it needs price_step=, not "
                         "price_k=")
    pk = check_scalar("price_k", price_k, low=0.0, low_open=True)
    if target is not None:
        M, K = _target_corner(a, b, c, target)
        if not math.isfinite(pm * M + pk * K):
            raise ValueError(f"target={target} needs K = {K:.4g} (c={c}) at a cost beyond "
                             f"float64 (price_m={pm}, price_k={pk})")
    else:
        B = check_scalar("budget", budget, low=0.0, low_open=True)
        if pm >= B:
            raise ValueError(f"budget={B} does not buy one comparison at price_m={pm}")
        # A = price_k/c; x0 = (B − A b)/A = B·c/price_k − b, kept in range.
        if not B / pk * c <= 1e300:
            raise ValueError(f"budget·c/price_k = {B / pk * c:.4g} is out of floating range; "
                             f"got budget={B}, c={c}, price_k={pk}")
        x0 = B / pk * c - b
        log_ratio = math.log(pm) - math.log(pk) + math.log(c)      # log(c_M/A)
        # u = x0 − W with W + log W = log_ratio + x0, so u = log W − log_ratio: no
        # cancellation of x0 against W when the budget is huge (x0 = 1e298 lost all of u).
        u = math.log(_w_exp(log_ratio + x0)) - log_ratio
        u = min(u, math.log(B / pm))  # never more comparisons than the budget buys
        if u <= 0.0:  # the label side is already saturated at one comparison
            M, K = 1.0, max((B - pm) / pk, 0.0)
        else:
            # On the optimum both arms of the min are equal, c·K = log M + b: K from that,
            # not from the remainder (B − c_M·M)/c_K, which cancels to 0 once M ≈ B/c_M
            # (budget 1e20 gave K = 0 and a gain of 0).
            M = math.exp(u)
            K = max((u + b) / c, 0.0)
            if pm * M + pk * K > B * (1 + 1e-12):
                K = max((B - pm * M) / pk, 0.0)
        if not math.isfinite(K):
            raise ValueError(f"budget/price_k = {K:.4g} nats of KL is out of floating range; "
                             f"got budget={B}, price_k={pk}")
    cost = pm * M + pk * K
    # The gain in Python floats (no overflow warning); a·sqrt(...) past float64 is refused.
    gain = a * math.sqrt(max(min(math.log(M) + b, c * K), 0.0))
    if not math.isfinite(gain):
        raise ValueError(f"the plan's gain a·sqrt(min(log M + b, c·K)) leaves float64; got "
                         f"a={a!r}, b={b!r}, c={c!r}")
    if target is not None:
        return LabelPlan(M, K, cost, gain, pm * M / cost, None, True, "closed_form",
                         "the corner log M + b = c·K = (target/a)²")
    return LabelPlan(M, K, cost, gain, pm * M / cost)


def _target_corner(a: float, b: float, c: float, target: Any) -> tuple[float, float]:
    """The cheapest plan reaching ``target`` is the corner ``log M + b = c·K = (g/a)²``."""
    g = check_scalar("target", target, low=0.0, low_open=True)
    if not 1e-150 <= g / a <= 1e150:
        raise ValueError(f"target/a = {g / a:.4g} is out of floating range ((target/a)², "
                         f"the log M and c·K needed, must lie in [1e-300, 1e300]); got "
                         f"target={g!r}, a={a!r}")
    L = (g / a) ** 2
    if L - b >= 700:
        raise ValueError(f"target={g} needs log M = {L - b:.4g} comparisons' worth (a={a}, "
                         f"b={b}); out of floating range")
    M = max(math.exp(L - b), 1.0)
    for _ in range(4):  # exp rounds: make log M + b >= L hold in float64 too
        if math.log(M) + b >= L:
            break
        M = math.nextafter(M, math.inf)
    return M, L / c


def _plan_steps(a, b, c, pm, price_step, kl_per_step, gamma, target, budget) -> LabelPlan:
    """:func:`plan_labels` with optimisation priced per RL step, ``K = κ·S^γ``."""
    from scipy.optimize import brentq

    ps = check_scalar("price_step", price_step, low=0.0, low_open=True)
    if kl_per_step is None:
        raise ValueError("price_step= needs kl_per_step= (the measured KL per RL step, > 0)")
    kappa = check_scalar("kl_per_step", kl_per_step, low=0.0, high=1e100, low_open=True)
    gamma = check_scalar("kl_step_exponent", gamma, low=0.0, high=10.0, low_open=True)

    def steps_for(K: float) -> float:
        if K <= 0:
            return 0.0
        try:
            return (K / kappa) ** (1.0 / gamma)
        except OverflowError:  # beyond float64: no budget buys it
            return math.inf

    if target is not None:
        M, K = _target_corner(a, b, c, target)
        S = steps_for(K)
        if not math.isfinite(S):
            raise ValueError(f"target={target} needs K = {K:.4g} nats, beyond float64 in "
                             f"steps at kl_per_step={kappa:g}, kl_step_exponent={gamma:g}")
    else:
        B = check_scalar("budget", budget, low=0.0, low_open=True)
        if pm >= B:
            raise ValueError(f"budget={B} does not buy one comparison at price_m={pm}")
        if gamma == 1.0:  # a step price is a KL price: the Lambert-W closed form
            p = plan_labels(a, b, c, price_m=pm, price_k=ps / kappa, budget=B)
            return LabelPlan(p.M, p.K, p.cost, p.gain, p.label_cost_share, p.K / kappa)

        def excess(u: float) -> float:  # rises in u: spend on both axes at log M + b = c·K
            return pm * math.exp(u) + ps * steps_for(max(u + b, 0.0) / c) - B

        hi = math.log(B / pm)
        outcome = (True, "closed_form", "one comparison costs the balance; the rest on steps")
        if excess(0.0) >= 0.0:  # one comparison already costs the balance: rest on steps
            u = 0.0
        else:
            u, root = brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-15, maxiter=500,
                             full_output=True, disp=False)
            outcome = (bool(root.converged), "converged" if root.converged else "failed",
                       f"brentq on the budget line: {root.flag} after {root.iterations} "
                       "iterations")
        M = math.exp(u)
        S = max((B - pm * M) / ps, 0.0)
        K = kappa * S**gamma
    cost = pm * M + ps * S
    if target is not None:
        outcome = (True, "closed_form", "the corner log M + b = c·K = (target/a)²")
    return LabelPlan(M, K, cost, float(_law(a, b, c, M, K)), pm * M / cost, S, *outcome)


def plan_labels_numeric(gain: Callable[[Any, Any], Any], *, price_m: float, price_k: float,
                        budget: float, m_max: float = 1e12) -> LabelPlan:
    """Best gain for ``budget`` under any vectorised ``gain(M, K)`` (1-D search on the budget line).

    A dense log grid of ``M`` brackets the best point, then bounded Brent
    refines it (``scipy.optimize.minimize_scalar``).

    Examples
    --------
    >>> num = plan_labels_numeric(lambda M, K: _law(1.0, 0.0, 1.0, M, K),
    ...                           price_m=1.0, price_k=100.0, budget=454.6)
    >>> round(num.gain, 4)
    2.0
    """
    from scipy.optimize import minimize_scalar

    pm = check_scalar("price_m", price_m, low=0.0, low_open=True)
    pk = check_scalar("price_k", price_k, low=0.0, low_open=True)
    B = check_scalar("budget", budget, low=0.0, low_open=True)
    m_max = check_scalar("m_max", m_max, low=1.0)
    if pm >= B:
        raise ValueError(f"budget={B} does not buy one comparison at price_m={pm}")
    if not math.isfinite(B / pk):
        raise ValueError(f"budget/price_k = {B / pk:.4g} nats of KL is out of floating range; "
                         f"got budget={B}, price_k={pk}")
    hi = math.log(min(B / pm, m_max))

    def neg(u: float) -> float:
        M = math.exp(u)
        return -float(gain(M, max((B - pm * M) / pk, 0.0)))

    grid = np.linspace(0.0, hi, 400)
    vals = np.array([neg(u) for u in grid])
    i = int(np.argmin(vals))
    lo_u, hi_u = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(neg, bounds=(lo_u, hi_u), method="bounded",
                          options={"xatol": 1e-10})
    u = float(res.x) if res.fun <= vals[i] else float(grid[i])
    M = math.exp(u)
    K = max((B - pm * M) / pk, 0.0)
    cost = pm * M + pk * K
    ok, status, message = from_scipy(res, "bounded Brent (minimize_scalar) around the best "
                                          "of 400 grid points")
    return LabelPlan(M, K, cost, -neg(u), pm * M / cost, None, ok, status, message)
