"""Synthetic data: effective counts, prices, critical ratios and quality filters.

Per axis (environments, tasks, trajectories) a *synthesis method* turns
``x_syn`` synthetic units into effective real units:

- ``linear``:  ``x_eff = x_real + rho * x_syn`` -- each synthetic unit is worth
  ``rho`` real ones.
- ``saturating`` (absolute ``S*``): ``x_eff = x_real + rho*S*(1 - exp(-x_syn/S*))``
  -- at most ``rho*S*`` effective units however much is generated, the form of
  data-constrained scaling (Muennighoff et al. 2023, arXiv 2305.16264, eq. 5,
  where ``D' = U + U*R*(1 - exp(-R/R*))``).
- ``relative`` saturation ``S* = s * x_real``:
  ``x_eff = x_real * (1 + rho*s*(1 - exp(-r/s)))`` with ``r = x_syn/x_real`` --
  synthetic data derived from the real pool saturates in proportion to it, as
  repeated epochs do in Muennighoff et al.  This form is homogeneous of degree
  one, so the best synthetic-to-real *ratio* does not depend on scale.

The *price* of a source is effective real units per unit of cost at the
margin: ``1/c_real`` for real data, ``(d x_eff/d x_syn)/c_syn`` for synthetic.

Critical synthetic-to-real ratio: synthetic data is worth buying while its
marginal value per cost exceeds real data's.  For absolute saturation,
``rho*exp(-x_syn/S*)/c_syn = 1/c_real`` gives ``x_syn* = S* ln(rho c_real/c_syn)``.
For relative saturation, writing ``g(r) = 1 + rho s (1 - e^{-r/s})``, the
condition ``g'(r)(c_real + c_syn r) = c_syn g(r)`` (equivalently, maximal
effective units per cost ``g(r)/(c_real + c_syn r)``) solves with the lower
Lambert-W branch::

    r* = -s W_{-1}(z) - s - c_real/c_syn,
    z = -((1 + rho s)/(rho s)) exp(-1 - c_real/(c_syn s)),

positive exactly when ``rho c_real > c_syn`` (synthetic is cheaper per
effective unit at the start).  (Derivation: put ``y = r + s + c_real/c_syn``;
the condition becomes ``y e^{-y/s} = ((1+rho s)/rho) e^{-(s + c_real/c_syn)/s}``.)

The quality filter (which synthetic units to keep, and at what price) is in
:mod:`rlscale.theory._quality_filter`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._result import Result
from rlscale.theory._validation import (
    check_finite_result,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["CriticalRatio", "SynthesisMethod", "critical_synthetic_ratio"]

_KINDS = ("linear", "saturating", "relative")


@dataclass(frozen=True)
class SynthesisMethod:
    """A priced way to make synthetic units on one axis.

    Parameters
    ----------
    axis : str
        The law's axis the synthetic units add to (e.g. ``"environments"``).
    unit_cost : float
        Cost per synthetic unit generated (and kept).
    rho : float
        Effective real units per synthetic unit at the start (> 0).
    saturation : float, optional
        ``S*`` (``kind="saturating"``) or ``s`` (``kind="relative"``).
    kind : {"linear", "saturating", "relative"}
        Default: ``"saturating"`` when ``saturation`` is given, else ``"linear"``.
    name : str
        Label for reports (default ``"<axis>_synthetic"``).

    Examples
    --------
    >>> m = SynthesisMethod("environments", unit_cost=5.0, rho=0.5, saturation=100.0)
    >>> round(m.effective(200.0, 100.0), 4)
    231.606
    >>> round(m.price(200.0, 0.0), 6)   # effective units per unit cost at the margin
    0.1
    """

    axis: str
    unit_cost: float
    rho: float
    saturation: float | None = None
    kind: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.axis, str) or not self.axis.isidentifier():
            raise ValueError(f"axis must be an identifier; got axis={self.axis!r:.60}")
        unit_cost = check_scalar("unit_cost", self.unit_cost, low=0.0, low_open=True)
        rho = check_scalar("rho", self.rho, low=0.0, low_open=True)
        if not isinstance(self.kind, str):
            raise TypeError(f"kind must be one of {_KINDS}; got kind={self.kind!r:.60}")
        if not isinstance(self.name, str):
            raise TypeError(f"name must be an identifier; got name={self.name!r:.60}")
        kind = self.kind or ("linear" if self.saturation is None else "saturating")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}; got kind={self.kind!r}")
        if kind != "linear":
            if self.saturation is None:
                raise ValueError(f"a {kind} synthesis method needs saturation > 0; got None")
            object.__setattr__(self, "saturation", check_scalar(
                "saturation", self.saturation, low=0.0, low_open=True))
        elif self.saturation is not None:
            raise ValueError("a linear synthesis method takes no saturation; got "
                             f"saturation={self.saturation!r:.60}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "unit_cost", unit_cost)
        object.__setattr__(self, "rho", rho)
        if not self.name:
            object.__setattr__(self, "name", f"{self.axis}_synthetic")
        elif not self.name.isidentifier():
            raise ValueError(f"name must be an identifier; got name={self.name!r}")

    def effective(self, real: Any, synthetic: Any) -> Any:
        """Effective real units from ``real`` and ``synthetic`` counts (vectorised)."""
        r, s = self._counts(real, synthetic, real_positive=False)
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            if self.kind == "linear":
                out = r + self.rho * s
            elif self.kind == "saturating":
                S = float(self.saturation)  # type: ignore[arg-type]
                out = r - self.rho * S * np.expm1(-s / S)
            else:
                S = float(self.saturation) * r  # type: ignore[arg-type]
                gain = np.where(S > 0, -self.rho * S * np.expm1(-s / np.where(S > 0, S, 1.0)),
                                0.0)
                out = r + gain
        check_finite_result(out, f"the effective count of {self.name}", real=real,
                            synthetic=synthetic)
        return return_like(out, real, synthetic)

    def _counts(self, real: Any, synthetic: Any, *, real_positive: bool
                ) -> tuple[np.ndarray, np.ndarray]:
        r = check_real("real", real, low=0.0, low_open=real_positive)
        s = check_real("synthetic", synthetic, low=0.0)
        try:
            np.broadcast_shapes(r.shape, s.shape)
        except ValueError:
            raise ValueError(f"the shapes of real {r.shape} and synthetic {s.shape} do not "
                             "broadcast together") from None
        return r, s

    def marginal(self, real: Any, synthetic: Any) -> Any:
        """``d x_eff / d x_syn``: effective units per extra synthetic unit."""
        r, s = self._counts(real, synthetic, real_positive=False)
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            if self.kind == "linear":
                out = np.full(np.broadcast_shapes(r.shape, s.shape), self.rho)
            elif self.kind == "saturating":
                out = self.rho * np.exp(-s / float(self.saturation))  # type: ignore[arg-type]
            else:
                S = float(self.saturation) * r  # type: ignore[arg-type]
                out = np.where(S > 0, self.rho * np.exp(-s / np.where(S > 0, S, 1.0)), 0.0)
        return return_like(out, real, synthetic)

    def marginal_real(self, real: Any, synthetic: Any) -> Any:
        """``d (x_eff - x_real) / d x_real``: how the synthetic gain moves with real data.

        Zero except for relative saturation, where ``S* = s * x_real`` grows with
        the real pool: ``rho s (1 - e^{-q}) - rho (x_syn/x_real) e^{-q}``,
        ``q = x_syn / (s x_real)``.
        """
        r, s = self._counts(real, synthetic, real_positive=True)
        if self.kind != "relative":
            return return_like(np.zeros(np.broadcast_shapes(r.shape, s.shape)), real, synthetic)
        sat = float(self.saturation)  # type: ignore[arg-type]
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            ratio = s / r                 # may overflow to inf: then q = inf and e^-q = 0
            q = ratio / sat
            # rho s (1 - e^-q) - rho ratio e^-q; the second term -> 0 as q -> inf
            tail = np.where(np.isfinite(q), ratio * np.exp(-np.where(np.isfinite(q), q, 0.0)),
                            0.0)
            out = -self.rho * sat * np.expm1(-q) - self.rho * tail
        check_finite_result(out, f"the real-count derivative of {self.name}", real=real,
                            synthetic=synthetic)
        return return_like(out, real, synthetic)

    def price(self, real: Any = 1.0, synthetic: Any = 0.0) -> Any:
        """Marginal effective real units per unit of cost."""
        with np.errstate(over="ignore"):
            out = np.asarray(self.marginal(real, synthetic)) / self.unit_cost
        check_finite_result(out, f"the price of {self.name}", unit_cost=self.unit_cost,
                            rho=self.rho)
        return return_like(out, real, synthetic)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CriticalRatio(Result):
    """Where synthetic data stops paying (see the module docstring).

    Attributes
    ----------
    ratio : float
        Synthetic-to-real ratio beyond which real data is better value
        (``inf`` when synthetic always is; ``0`` when it never is).
    amount : float
        The corresponding synthetic count (``nan``-free: ``inf`` or a number;
        for relative saturation ``ratio * real``).
    reason : str
        One sentence on what decided it.
    """

    ratio: float
    amount: float
    reason: str


def critical_synthetic_ratio(method: SynthesisMethod, real_cost: float,
                             real: float | None = None) -> CriticalRatio:
    """Closed-form critical synthetic-to-real ratio of ``method`` against real data.

    Parameters
    ----------
    method : SynthesisMethod
    real_cost : float
        Cost per real unit on the same axis.
    real : float, optional
        The real count, needed to turn an absolute amount into a ratio for
        the linear and absolute-saturating kinds (their critical point is an
        amount); the relative kind's ratio is scale-free.

    Examples
    --------
    >>> m = SynthesisMethod("E", unit_cost=1.0, rho=0.5, saturation=2.0, kind="relative")
    >>> c = critical_synthetic_ratio(m, real_cost=10.0)
    >>> round(c.ratio, 4)
    2.5878
    >>> g = lambda r: (1 + 0.5 * 2 * (1 - math.exp(-r / 2))) / (10 + r)
    >>> g(c.ratio) > max(g(c.ratio - 1e-3), g(c.ratio + 1e-3))
    True
    """
    if not isinstance(method, SynthesisMethod):
        raise TypeError(f"method must be a SynthesisMethod; got {type(method).__name__}")
    c_r = check_scalar("real_cost", real_cost, low=0.0, low_open=True)
    if real is not None:
        real = check_scalar("real", real, low=0.0, low_open=True)
    c_s, rho = method.unit_cost, method.rho
    # log of synthetic's initial price relative to real's (the ratio may overflow)
    log_edge = math.log(rho) + math.log(c_r) - math.log(c_s)
    if method.kind == "linear":
        if log_edge > 0:
            return CriticalRatio(math.inf, math.inf, f"synthetic is always cheaper per effective "
                                 f"unit ({rho:g}/{c_s:g} > 1/{c_r:g}); only bounds limit it")
        return CriticalRatio(0.0, 0.0, f"real data is at least as cheap per effective unit "
                             f"(1/{c_r:g} >= {rho:g}/{c_s:g}); buy no synthetic")
    if log_edge <= 0:
        return CriticalRatio(0.0, 0.0, "synthetic's initial price rho/c_syn does not exceed "
                             "real's 1/c_real; buy no synthetic")
    S = float(method.saturation)  # type: ignore[arg-type]
    if method.kind == "saturating":
        amount = _finite_or_refuse(S * log_edge, "the critical synthetic amount", method,
                                   c_r, real)
        reason = (f"marginal synthetic value rho*exp(-x/S*) per cost falls to real's at "
                  f"x = S* ln(rho c_real/c_syn) = {amount:.6g}")
        if real is None:
            reason += "; pass real= for the ratio"
            return CriticalRatio(math.inf if amount > 0 else 0.0, amount, reason)
        ratio = _finite_or_refuse(amount / real, "the critical ratio", method, c_r, real)
        return CriticalRatio(ratio, amount, reason)
    ratio = _relative_critical_ratio(rho, S, c_r, c_s)
    amount = math.inf if real is None else _finite_or_refuse(
        ratio * real, "the critical synthetic amount", method, c_r, real)
    return CriticalRatio(ratio, amount, "maximises effective units per cost g(r)/(c_real + "
                         "c_syn r) (Lambert-W closed form; scale-free)")


def _finite_or_refuse(value: float, what: str, method: SynthesisMethod, real_cost: float,
                      real: float | None) -> float:
    return float(check_finite_result(value, what, real_cost=real_cost, real=real,
                                     unit_cost=method.unit_cost, rho=method.rho,
                                     saturation=method.saturation))


def _relative_critical_ratio(rho: float, S: float, c_r: float, c_s: float) -> float:
    """``r* = -S W_{-1}(z) - S - c_r/c_s`` without cancellation or overflow.

    With ``z = -e^{-L}``, ``L = 1 + c_r/(c_s S) - log1p(1/(rho S))`` (``L > 1``
    when ``rho c_r > c_s``), ``u = -W_{-1}(z) > 1`` solves ``u - log u = L``, so
    ``S u - S - c_r/c_s = S (u - L) - S log1p(1/(rho S)) = S (log u - log1p(1/(rho S)))``:
    the large terms cancel exactly on paper instead of in floating point (the
    direct form lost every digit once ``c_r/(c_s S)`` reached 1e17).
    """
    log1p_inv = float(np.logaddexp(0.0, -(math.log(rho) + math.log(S))))  # log(1 + 1/(rho S))
    log_q = math.log(c_r) - math.log(c_s) - math.log(S)                    # log(c_r/(c_s S))
    if log_q > 690.0:
        # L ~ e^log_q: u = L + log L + o(1), and log u = log L to within log L / L < 1e-290.
        log_u = log_q
    else:
        big_l = 1.0 + math.exp(log_q) - log1p_inv
        # Newton on f(u) = u - log u - L from u0 = 2L >= root (f convex, increasing on u > 1).
        u = 2.0 * big_l
        for _ in range(200):
            step = (u - math.log(u) - big_l) / (1.0 - 1.0 / u)
            u_next = max(u - step, 1.0 + 1e-300)
            if abs(u_next - u) <= 1e-15 * u:
                u = u_next
                break
            u = u_next
        log_u = math.log(u)
    return max(S * (log_u - log1p_inv), 0.0)
