"""Proof steps: each makes one claim and says how it is decided (and by what).

Every step names its **checker** -- ``"sympy"`` (:class:`Identity`,
:class:`Sign`, :class:`Limit`, :class:`Series`), ``"z3"``
(:class:`~rlscale.proofs._certified.PolynomialInequality`), ``"interval"``
(:class:`~rlscale.proofs._certified.IntervalInequality`,
:class:`~rlscale.proofs._certified.IntervalCertificate`, or a z3 step's
interval fallback) -- or is a :class:`Cited` fact: a classical result the
derivation uses, stated with its reference, with status ``"cited"`` and mark
``†``.  A cited step is never counted as checked and never as failed: the
count of a proof says how much the machine checked and how much it takes on
trust.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", positive=True)
>>> r = Identity("expand", (x + 1) ** 2, x**2 + 2 * x + 1).check()
>>> r.status, r.mark, r.checker
('passed', '✓', 'sympy')
>>> c = Cited("jensen", "E[f(X)] >= f(E[X]) for convex f", "Jensen 1906").check()
>>> c.status, c.mark, c.checker, c.passed
('cited', '†', 'cited', False)
"""

from __future__ import annotations

import abc
import cmath
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import sympy as sp

from rlscale.proofs._fields import as_sympy, check_step_fields
from rlscale.proofs._integrals import _integrate_by_terms
from rlscale.theory._result import Result

__all__ = ["CHECKERS", "STATUSES", "Cited", "Identity", "Limit", "Series", "Sign", "Step",
           "StepResult"]

Status = Literal["passed", "failed", "skipped", "cited"]
STATUSES: tuple[str, ...] = ("passed", "failed", "skipped", "cited")
#: What decides a step: a machine checker, or nothing (a cited fact).
CHECKERS: tuple[str, ...] = ("sympy", "z3", "interval", "cited")
_MARKS = {"passed": "✓", "failed": "✗", "skipped": "–", "cited": "†"}


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class StepResult(Result):
    """The outcome of checking one step; ``checker`` says what decided it."""

    name: str
    kind: str
    claim: str
    status: str
    reason: str
    seconds: float
    checker: str = ""

    @property
    def passed(self) -> bool:
        """True only for a machine-checked pass (a cited fact is not a pass)."""
        return self.status == "passed"

    @property
    def success(self) -> bool:
        """Whether the step holds: machine-checked (``passed``) or ``cited``."""
        return self.status in ("passed", "cited")

    @property
    def message(self) -> str:
        """The step's status and why (its ``reason``)."""
        return f"step {self.name!r} {self.status}: {self.reason}"

    @property
    def mark(self) -> str:
        """``✓`` passed, ``✗`` failed, ``–`` skipped, ``†`` cited."""
        return _MARKS[self.status]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "checker": self.checker,
                "claim": self.claim, "status": self.status, "reason": self.reason,
                "seconds": self.seconds}


# --------------------------------------------------------------------------- steps
@dataclass(frozen=True)
class Step(abc.ABC):
    """Base class of a step; subclasses implement :meth:`_check` and name their checker."""

    kind: ClassVar[str] = "step"
    checker: ClassVar[str] = "sympy"
    name: str

    def __post_init__(self) -> None:
        check_step_fields(self, Step)  # a TypeError/ValueError naming the field (issue 22)

    @property
    def claim(self) -> str:
        """The claim in plain text."""
        return self.name

    @property
    def latex(self) -> str:
        """The claim in LaTeX (math mode content)."""
        return sp.latex(sp.Symbol(self.name))

    def checker_used(self) -> str:
        """The checker that decides this step here (a z3 step may fall back to intervals)."""
        return self.checker

    @abc.abstractmethod
    def _check(self) -> tuple[Status, str]:
        """Decide the step: ``(status, reason)``."""

    def check(self) -> StepResult:
        """Check the step; an exception while checking is a failure, never a pass."""
        start = time.perf_counter()
        try:
            status, reason = self._check()
        except Exception as exc:  # a checker crash must never count as a pass
            status, reason = "failed", f"checker raised {type(exc).__name__}: {exc}"
        return StepResult(self.name, self.kind, self.claim, status, reason,
                          time.perf_counter() - start, self.checker_used())


@dataclass(frozen=True)
class Cited(Step):
    """A classical fact the derivation uses, cited with its reference, not machine-checked.

    Its status is ``"cited"`` (mark ``†``): a proof counts it apart from the
    checked steps, never as a pass and never as a failure.  ``fact`` and
    ``reference`` must be non-empty.

    Examples
    --------
    >>> Cited("gibbs", "KL(p || q) >= 0", "").check()
    Traceback (most recent call last):
    ...
    ValueError: a cited step needs a reference; got reference='' for step 'gibbs'
    """

    kind: ClassVar[str] = "cited"
    checker: ClassVar[str] = "cited"
    fact: str = ""
    reference: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        for attr in ("fact", "reference"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"a cited step needs a {attr}; got {attr}={value!r} for step "
                                 f"{self.name!r}")

    @property
    def claim(self) -> str:
        return f"{self.fact} [cited: {self.reference}]"

    @property
    def latex(self) -> str:
        return r"	ext{(cited)}"

    def _check(self) -> tuple[Status, str]:
        return "cited", f"cited, not machine-checked: {self.reference}"


def _doit(expr: Any) -> sp.Expr:
    """Evaluate ``expr`` (``doit``); an ``Integral`` is first tried with its integrand expanded.

    Expanded, ``n·u^(n−1)·(log n + (n−1)·log u)`` is a sum that sympy integrates term by
    term in about a sixth of the time its heuristic (``heurisch``) takes on the product
    (the best-of-n KL proof's 4 s step).  A definite integral is first evaluated term by
    term (:func:`_integrate_by_terms`); then, as before, the expanded integrand as a
    whole.  Only an evaluated result is taken: if an integral is left, the original
    expression is evaluated as before, so no integral that sympy could evaluate is
    refused.
    """
    expr = as_sympy(expr)
    if isinstance(expr, sp.Integral):
        by_terms = _integrate_by_terms(expr)
        if by_terms is not None:
            return by_terms
        quick = sp.Integral(sp.expand(expr.function), *expr.limits).doit()
        if not quick.has(sp.Integral):
            return quick
    return expr.doit() if hasattr(expr, "doit") else expr


#: Exact rewrites of an expression, cheapest first; each equals the expression as a
#: function.  Every rewrite is an equivalence sympy applies only where the symbols'
#: assumptions allow it (no ``force=True``), so a rewrite that is literally 0 proves the
#: expression is 0.  The cheap canonical forms: ``expand`` (polynomial and exponential
#: identities) and ``together`` then ``expand`` (rational functions: the numerator over a
#: common denominator expands to 0).
_CHEAP_FORMS: tuple[Callable[[sp.Expr], sp.Expr], ...] = (
    lambda e: e,
    sp.expand,
    lambda e: sp.expand(sp.together(e)),
)
#: Then products of powers with symbolic exponents (``expand_power_base``/``powsimp``;
#: ``together`` puts summed exponents on one denominator) and, as a last resort only,
#: the general ``simplify`` of the original checker.
_COSTLY_FORMS: tuple[Callable[[sp.Expr], sp.Expr], ...] = (
    lambda e: sp.powsimp(sp.together(sp.expand(sp.expand_power_base(e)))),
    lambda e: sp.expand(sp.powsimp(sp.expand_power_base(e))),
    sp.simplify,
    lambda e: sp.simplify(sp.expand_log(e)),
    lambda e: sp.simplify(sp.expand(sp.powsimp(sp.expand_power_base(e)))),
)


def _is_zero(expr: sp.Expr,
             forms: tuple[Callable[[sp.Expr], sp.Expr], ...] = _CHEAP_FORMS + _COSTLY_FORMS
             ) -> bool:
    """Whether an exact rewrite of ``expr`` (``forms``, in order) is literally ``0``.

    Measured here (2026-12-03, load 3-5 on 2 cores, sympy's cache cleared before each):
    the 45 distinct zero tests of ``check_proofs()`` take 0.31 CPU s, against 1.76 s
    with ``simplify`` first as before; the cheap and power forms decide every one, so
    ``simplify`` is never reached (the Chinchilla first-order condition: 0.1 against
    0.7 s).
    """
    return any(form(expr) == 0 for form in forms)


def _sample_points(expr: sp.Expr) -> list[dict[sp.Symbol, sp.Rational]]:
    syms = sorted(expr.free_symbols, key=str)
    return [{s: trial + sp.Rational(i, 11) for i, s in enumerate(syms)}
            for trial in (sp.Rational(37, 17), sp.Rational(13, 7), sp.Rational(5, 3))]


def _clearly_different(lhs: sp.Expr, rhs: sp.Expr) -> str | None:
    """Where lhs and rhs differ numerically at a sample point (50 digits), else None.

    Only ever used to *fail* an identity fast (sympy's simplify can take
    minutes on a false identity); an identity never passes on numbers.
    """
    import mpmath

    syms = sorted((lhs - rhs).free_symbols, key=str)
    try:
        f = sp.lambdify(syms, [lhs, rhs], modules="mpmath")
    except Exception:
        return None
    with mpmath.workdps(50):
        for point in _sample_points(lhs - rhs):
            try:
                a, b = (complex(v) for v in f(*[mpmath.mpf(point[s].p) / point[s].q
                                                 for s in syms]))
            except Exception:
                return None
            if not (cmath.isfinite(a) and cmath.isfinite(b)):
                continue
            if abs(a - b) > 1e-30 * max(1.0, abs(a), abs(b)):
                where = ", ".join(f"{k}={v}" for k, v in point.items())
                return f"; lhs − rhs ≈ {(a - b).real:.6g}" + (f" at {where}" if where else "")
    return None


def _witness(diff: sp.Expr) -> str:
    """Evaluate ``diff`` at a few points to show a residual is really nonzero."""
    for point in _sample_points(diff):
        try:
            val = complex(sp.N(diff.subs(point), 30))
        except (TypeError, ValueError):
            continue
        if abs(val) > 1e-20:
            where = ", ".join(f"{s}={v}" for s, v in point.items())
            return f"; residual ≈ {val.real:.6g} at {where}" if where else \
                f"; residual ≈ {val.real:.6g}"
    return ""


@dataclass(frozen=True)
class Identity(Step):
    """``lhs == rhs`` exactly: sympy reduces the difference to 0.

    ``doit()`` is applied first, so ``lhs`` may be an unevaluated
    ``Integral``, ``Derivative``, ``Sum`` or ``Limit``.  With ``log_compare``
    the two sides (which sympy must be able to show positive) are compared
    through their logarithms, which handles symbolic exponents.
    """

    kind: ClassVar[str] = "identity"
    lhs: Any = None
    rhs: Any = 0
    text: str = ""
    log_compare: bool = False

    @property
    def claim(self) -> str:
        return self.text or f"{sp.sstr(self.lhs)} = {sp.sstr(self.rhs)}"

    @property
    def latex(self) -> str:
        return f"{sp.latex(self.lhs)} = {sp.latex(self.rhs)}"

    def _check(self) -> tuple[Status, str]:
        lhs, rhs = _doit(self.lhs), _doit(self.rhs)
        if lhs.has(sp.Integral) or rhs.has(sp.Integral):
            return "failed", "sympy could not evaluate an integral in closed form"
        diff = lhs - rhs
        if _is_zero(diff, _CHEAP_FORMS):
            return "passed", "sympy simplifies lhs − rhs to 0"
        # The numeric screen only fails a step (sympy's simplify can take minutes on a
        # false identity); it runs once the cheap exact forms have not proved it.
        gap = _clearly_different(lhs, rhs)
        if gap is not None:
            return "failed", "lhs and rhs differ numerically" + gap
        if _is_zero(diff, _COSTLY_FORMS):
            return "passed", "sympy simplifies lhs − rhs to 0"
        if self.log_compare:
            if lhs.is_positive and rhs.is_positive:
                # no force=True: expand_log splits only logs of provably positive factors
                logdiff = sp.expand_log(sp.log(lhs)) - sp.expand_log(sp.log(rhs))
                if _is_zero(logdiff):
                    return "passed", "both sides positive; sympy simplifies log lhs − log rhs to 0"
            else:
                return "failed", "log comparison needs both sides provably positive"
        residual = sp.simplify(diff)
        return "failed", f"lhs − rhs does not simplify to 0: {sp.sstr(residual)[:200]}" + \
            _witness(residual)


_REL = {">": "is_positive", ">=": "is_nonnegative", "<": "is_negative", "<=": "is_nonpositive"}


@dataclass(frozen=True)
class Sign(Step):
    """``expr`` has a sign (``>``, ``>=``, ``<``, ``<=`` 0), decided by sympy's assumptions."""

    kind: ClassVar[str] = "sign"
    expr: Any = None
    relation: str = ">"
    text: str = ""

    @property
    def claim(self) -> str:
        return self.text or f"{sp.sstr(self.expr)} {self.relation} 0"

    @property
    def latex(self) -> str:
        rel = {">": ">", ">=": r"\ge", "<": "<", "<=": r"\le"}[self.relation]
        return f"{sp.latex(self.expr)} {rel} 0"

    def _check(self) -> tuple[Status, str]:
        if self.relation not in _REL:
            raise ValueError(f"relation must be one of {sorted(_REL)}; got {self.relation!r}")
        expr = _doit(self.expr)
        attr = _REL[self.relation]
        verdict = getattr(expr, attr)
        if verdict is None:  # only then the (costly) simplified form, not for every step
            verdict = getattr(sp.factor(sp.simplify(expr)), attr)
        if verdict is True:
            return "passed", f"sympy's assumptions give {self.relation} 0"
        if verdict is False:
            return "failed", f"sympy's assumptions refute {self.relation} 0" + _witness(expr)
        return "failed", "sympy cannot decide the sign from the symbols' assumptions"


def _limit_by_terms(expr: sp.Expr, var: Any, point: Any, direction: str) -> sp.Expr | None:
    """lim Σ_i f_i = Σ_i lim f_i when every term has a finite limit, else None.

    The sum rule needs each limit to exist and be finite, so a term whose limit sympy
    leaves unevaluated, infinite, NaN or a range (``AccumBounds``) makes it None and the
    limit is taken whole.  Measured here: Gordon's Q(t) − φ(t)t/(1+t²) → 0 in 0.04 CPU s
    term by term, 0.12 s whole.
    """
    terms = sp.Add.make_args(expr)
    if len(terms) < 2:
        return None
    total = sp.Integer(0)
    for term in terms:
        value = sp.limit(term, var, point, direction)
        if not value.is_finite or value.has(sp.Limit, sp.AccumBounds):
            return None
        total += value
    return total


@dataclass(frozen=True)
class Limit(Step):
    """``lim_{var → point} expr == value`` computed by sympy."""

    kind: ClassVar[str] = "limit"
    expr: Any = None
    var: Any = None
    point: Any = sp.oo
    value: Any = 0
    direction: str = "+"
    text: str = ""

    @property
    def claim(self) -> str:
        return self.text or f"lim_{{{self.var}→{self.point}}} {sp.sstr(self.expr)} = {self.value}"

    @property
    def latex(self) -> str:
        return (rf"\lim_{{{sp.latex(self.var)} \to {sp.latex(self.point)}}} "
                rf"{sp.latex(self.expr)} = {sp.latex(self.value)}")

    def _check(self) -> tuple[Status, str]:
        got = _limit_by_terms(as_sympy(self.expr), self.var, self.point, self.direction)
        if got is None:
            got = sp.limit(self.expr, self.var, self.point, self.direction)
        if _is_zero(got - self.value):
            return "passed", f"sympy computes the limit {sp.sstr(got)}"
        return "failed", f"sympy computes the limit {sp.sstr(got)}, not {sp.sstr(self.value)}"


@dataclass(frozen=True)
class Series(Step):
    """The expansion of ``expr`` about ``point`` to order ``order`` equals ``expansion``."""

    kind: ClassVar[str] = "series"
    expr: Any = None
    var: Any = None
    point: Any = 0
    order: int = 3
    expansion: Any = 0
    text: str = ""

    @property
    def claim(self) -> str:
        return self.text or (f"{sp.sstr(self.expr)} = {sp.sstr(self.expansion)} "
                             f"+ O(({self.var}-{self.point})^{self.order})")

    @property
    def latex(self) -> str:
        return (f"{sp.latex(self.expr)} = {sp.latex(self.expansion)} + "
                f"O\\left(({sp.latex(self.var)} - {sp.latex(self.point)})^{{{self.order}}}\\right)")

    def _check(self) -> tuple[Status, str]:
        got = sp.series(self.expr, self.var, self.point, self.order).removeO()
        if _is_zero(sp.expand(got - self.expansion)):
            return "passed", "sympy's series expansion matches"
        return "failed", f"sympy's expansion is {sp.sstr(got)}"
