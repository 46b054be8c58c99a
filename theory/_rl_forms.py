"""Named laws of RL post-training: the ScaleRL compute sigmoid and the peaks of Gao et al.'s forms.

Compute sigmoid (Khatri et al. 2025, "The Art of Scaling RL Compute",
arXiv 2510.13786, eq. 1): held-out reward (pass rate) against RL compute C,

    R(C) = R0 + (A − R0) / (1 + (C_mid / C)^B),

with R0 the starting performance, A the asymptote, C_mid the compute at which
half of the gain A − R0 is reached and B the scaling exponent (steepness).
Derived here, by direct differentiation and inversion:

* dR/dC = (A − R0)·B·u / (C·(1 + u)²), u = (C_mid/C)^B;
* elasticity d log(R − R0)/d log C = B·u/(1 + u) (B at small C, 0 at large C);
* inverse C(R) = C_mid·((A − R0)/(R − R0) − 1)^(−1/B) for R0 < R < A;
* for C ≫ C_mid, R ≈ A − D·C^(−B) with D = (A − R0)·C_mid^B (their remark;
  first order of 1/(1 + u) = 1 − u + O(u²)) — the bounded power law the audit
  compares against.

Gao, Schulman & Hilton 2022 (arXiv 2210.10760, eqs. 1–2), d = √KL: best-of-n
R(d) = d(α − βd), RL R(d) = d(α − β·log d).  Their peaks (set dR/dd = 0):
best-of-n α − 2βd = 0 ⇒ d* = α/(2β), R* = α²/(4β); RL α − β·log d − β = 0 ⇒
d* = e^(α/β − 1), R* = d*(α − β(α/β − 1)) = β·d*.  The forms themselves are
:func:`rlscale.theory.reward.gao_bon` and :func:`rlscale.theory.reward.gao_rl`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from rlscale.theory._result import Result
from rlscale.theory._validation import (
    check_finite_result,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["ComputeSigmoid", "GaoPeak", "gao_peak"]

C = sp.Symbol("C", positive=True)


@dataclass(frozen=True)
class ComputeSigmoid:
    """ScaleRL's R(C) = R0 + (A − R0)/(1 + (C_mid/C)^B) (Khatri et al. 2025, eq. 1).

    Attributes
    ----------
    asymptote : float
        A, the performance as C → ∞.
    exponent : float
        B > 0, the steepness.
    midpoint : float
        C_mid > 0, the compute reaching half the gain.
    start : float
        R0, the performance as C → 0.

    Examples
    --------
    >>> law = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=2000.0, start=0.3)
    >>> round(float(law(2000.0)), 12)           # half-way between R0 and A
    0.4725
    >>> round(float(law.inverse(law(12345.0))), 6)
    12345.0
    >>> law.latex()
    'R(C) = 0.3 + \\\\frac{0.345}{1 + \\\\left(\\\\frac{2000}{C}\\\\right)^{1.7}}'
    """

    asymptote: float
    exponent: float
    midpoint: float
    start: float = 0.0

    def __post_init__(self) -> None:
        for name, bounds in (("asymptote", {}), ("exponent", {"low": 0.0, "low_open": True}),
                             ("midpoint", {"low": 0.0, "low_open": True}), ("start", {})):
            object.__setattr__(self, name, check_scalar(name, getattr(self, name), **bounds))
        if not self.asymptote > self.start:
            raise ValueError(f"asymptote must be > start; got asymptote={self.asymptote!r}, "
                             f"start={self.start!r}")

    def _u(self, compute: Any) -> np.ndarray:
        c = check_real("compute", compute, low=0.0, low_open=True, allow_inf=True)
        # u = (C_mid/C)^B in log space: no overflow for tiny C.
        return np.exp(np.clip(self.exponent * (math.log(self.midpoint) - np.log(c)), -700, 700))

    def __call__(self, compute: Any) -> float | np.ndarray:
        """R(C); ``compute`` > 0 (``inf`` gives A)."""
        u = self._u(compute)
        return return_like(self.start + (self.asymptote - self.start) / (1.0 + u), compute)

    def derivative(self, compute: Any) -> float | np.ndarray:
        """dR/dC = (A − R0)·B·u/(C(1 + u)²), u = (C_mid/C)^B."""
        c = check_real("compute", compute, low=0.0, low_open=True)
        # (A − R0)·B·u/(C(1+u)²) in log space: log u − log C − 2·log(1 + u), with
        # log(1 + u) = logaddexp(0, log u), so neither tiny nor huge C overflows.
        log_u = self.exponent * (math.log(self.midpoint) - np.log(c))
        with np.errstate(under="ignore"):
            out = (self.asymptote - self.start) * self.exponent * np.exp(
                log_u - np.log(c) - 2.0 * np.logaddexp(0.0, log_u))
        return return_like(check_finite_result(out, "dR/dC", compute=compute), compute)

    def elasticity(self, compute: Any) -> float | np.ndarray:
        """d log(R − R0)/d log C = B·u/(1 + u): B early, → 0 as C ≫ C_mid."""
        u = self._u(compute)
        return return_like(self.exponent * u / (1.0 + u), compute)

    def inverse(self, success: Any) -> float | np.ndarray:
        """C(R) = C_mid·((A − R0)/(R − R0) − 1)^(−1/B), for R0 < R < A."""
        r = check_real("success", success, low=self.start, high=self.asymptote, low_open=True,
                       high_open=True)
        ratio = (self.asymptote - self.start) / (r - self.start) - 1.0
        return return_like(self.midpoint * ratio ** (-1.0 / self.exponent), success)

    def tail_power_law(self) -> tuple[float, float, float]:
        """(A, D, B) of the large-C form R ≈ A − D·C^(−B), D = (A − R0)·C_mid^B."""
        return (self.asymptote, (self.asymptote - self.start) * self.midpoint**self.exponent,
                self.exponent)

    @staticmethod
    def expr() -> sp.Expr:
        """The law as a sympy expression in ``C`` with symbols R0, A, C_mid, B.

        Examples
        --------
        >>> e = ComputeSigmoid.expr()
        >>> sp.limit(e, C, sp.oo)
        A
        """
        r0, a, c_mid, b = sp.symbols("R0 A C_mid B", positive=True)
        return r0 + (a - r0) / (1 + (c_mid / C) ** b)

    def latex(self) -> str:
        """The fitted law in LaTeX, coefficients to 4 significant digits."""
        def g(x: float) -> str:
            return f"{x:.4g}"
        return (f"R(C) = {g(self.start)} + \\frac{{{g(self.asymptote - self.start)}}}"
                f"{{1 + \\left(\\frac{{{g(self.midpoint)}}}{{C}}\\right)^{{{g(self.exponent)}}}}}")

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"

    def as_dict(self) -> dict[str, float]:
        return {"asymptote": self.asymptote, "exponent": self.exponent,
                "midpoint": self.midpoint, "start": self.start}


@dataclass(frozen=True)
class GaoPeak(Result):
    """Peak of a Gao et al. form: d* = √KL*, KL* = d*², gold gain R* at the peak."""

    kind: str
    d: float
    kl: float
    gain: float


def gao_peak(kind: str, alpha: float, beta: float) -> GaoPeak:
    """Peak of Gao et al.'s gold score: BoN d* = α/(2β), R* = α²/(4β); RL d* = e^(α/β−1), R* = β·d*.

    Derivation in the module docstring (dR/dd = 0).  ``beta`` must be > 0 (no
    interior maximum otherwise).

    Examples
    --------
    >>> gao_peak("bon", 0.913, 0.122).d                 # 60k-comparison reproduction
    3.7418032786885247
    >>> p = gao_peak("rl", 1.0, 0.5)
    >>> round(p.d, 6) == round(math.e, 6), round(p.gain, 6)
    (True, 1.359141)
    """
    if not isinstance(kind, str):
        raise TypeError(f"kind must be 'bon' or 'rl'; got kind={kind!r:.60}")
    a = check_scalar("alpha", alpha)
    b = check_scalar("beta", beta, low=0.0, low_open=True)
    if kind == "bon":
        d = a / (2.0 * b)
        if d <= 0:
            raise ValueError(f"alpha must be > 0 for a best-of-n peak at d > 0; got alpha={a!r}")
        if not math.isfinite(d * d * a):  # d*² = KL and R* = α·d*/2 must stay in range
            raise ValueError(f"the best-of-n peak overflows float64 for alpha={a!r}, "
                             f"beta={b!r} (d* = alpha/(2 beta) = {d:.3g})")
        return GaoPeak("bon", d, d * d, a * d / 2.0)
    if kind == "rl":
        if a / b - 1.0 > 700:
            raise ValueError(f"alpha/beta must be <= 701 (the RL peak e^(alpha/beta - 1) "
                             f"overflows); got alpha={a!r}, beta={b!r}")
        d = math.exp(a / b - 1.0)
        if not math.isfinite(d * d):
            raise ValueError(f"the RL peak's KL d*² overflows float64 for alpha={a!r}, "
                             f"beta={b!r}")
        return GaoPeak("rl", d, d * d, b * d)
    raise ValueError(f"kind must be 'bon' or 'rl'; got kind={kind!r}")
