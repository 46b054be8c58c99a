"""The proof framework: a statement, its assumptions and machine-checked steps.

A :class:`Proof` is an ordered list of :class:`Step` objects.  Each step makes
one precise claim and knows how to check it:

:class:`Identity`
    ``lhs == rhs``: sympy reduces ``lhs - rhs`` (after ``doit()``, so
    unevaluated integrals, derivatives and limits are computed inside the
    check) to exactly ``0``.  Positive expressions may instead be compared by
    their logarithms (``expand_log`` is valid for positive arguments).
:class:`Sign`
    ``expr > 0`` (or ``>= 0``, ``< 0``, ``<= 0``) decided by sympy's
    assumption system from the declared signs of the symbols.
:class:`Limit`, :class:`Series`
    a limit or a truncated series expansion computed by sympy.
:class:`PolynomialInequality`
    a goal in real (polynomial or rational) arithmetic under hypotheses,
    decided by z3: the step holds when ``hypotheses ∧ ¬goal`` is
    unsatisfiable.  When z3 (extra ``proofs``) is missing, the step runs its
    declared interval fallback or is reported as *skipped*, never as passed.
:class:`IntervalInequality`
    ``f(x) >= 0`` (or ``> 0``) for every ``x`` in a closed range, proved by
    rigorous interval arithmetic (:mod:`mpmath.iv`, outward rounding): the
    range is split into boxes, each box is enclosed, and boxes whose
    enclosure straddles zero are bisected until they are decided or the box
    budget runs out.
:class:`IntervalCertificate`
    a finite list of interval enclosures (computed by a function the proof
    supplies, e.g. a rigorous quadrature bracket) that must all be positive.

Every step returns a :class:`StepResult` whose status is ``"passed"``,
``"failed"`` or ``"skipped"`` with a reason.  A proof holds only when every
step passed: a skipped step is not a pass.  Statements and assumptions that
the machine does *not* check (classical theorems such as Jensen's inequality)
are listed as the proof's assumptions, so a reader sees exactly what is
machine-checked and what is cited.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", positive=True)
>>> proof = Proof(
...     name="demo", title="A two-step demonstration",
...     statement="(x + 1)^2 >= 4x for x > 0",
...     assumptions=("x is a positive real",),
...     steps=(
...         Identity("expand", (x + 1) ** 2 - 4 * x, (x - 1) ** 2),
...         Sign("square", (x - 1) ** 2, ">="),
...     ),
... )
>>> result = proof.check()
>>> result.passed, [s.mark for s in result.steps]
(True, ['✓', '✓'])
>>> bad = proof.replace_step(Identity("expand", (x + 1) ** 2 - 4 * x, (x + 1) ** 2))
>>> bad.check().steps[0].status
'failed'
"""

from __future__ import annotations

import abc
import cmath
import collections
import importlib
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, ClassVar, Literal

import sympy as sp

__all__ = [
    "STATUSES",
    "Identity",
    "IntervalCertificate",
    "IntervalInequality",
    "Limit",
    "PolynomialInequality",
    "Proof",
    "ProofResult",
    "Series",
    "Sign",
    "Step",
    "StepResult",
    "interval_eval",
    "latex_document",
    "z3_available",
]

Status = Literal["passed", "failed", "skipped"]
STATUSES: tuple[str, ...] = ("passed", "failed", "skipped")
_MARKS = {"passed": "✓", "failed": "✗", "skipped": "–"}


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class StepResult:
    """The outcome of checking one step."""

    name: str
    kind: str
    claim: str
    status: str
    reason: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def mark(self) -> str:
        """``✓`` passed, ``✗`` failed, ``–`` skipped."""
        return _MARKS[self.status]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "claim": self.claim,
                "status": self.status, "reason": self.reason, "seconds": self.seconds}


@dataclass(frozen=True)
class ProofResult:
    """The outcome of checking a proof: one :class:`StepResult` per step."""

    name: str
    title: str
    statement: str
    steps: tuple[StepResult, ...]
    seconds: float
    guarantees: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True only when every step passed (a skipped step is not a pass)."""
        return all(s.passed for s in self.steps)

    def count(self, status: str) -> int:
        return sum(s.status == status for s in self.steps)

    def step(self, name: str) -> StepResult:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"proof {self.name!r} has no step {name!r}")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "statement": self.statement,
                "passed": self.passed, "seconds": self.seconds,
                "counts": {s: self.count(s) for s in STATUSES},
                "guarantees": list(self.guarantees),
                "steps": [s.as_dict() for s in self.steps]}


# --------------------------------------------------------------------------- steps
@dataclass(frozen=True)
class Step(abc.ABC):
    """Base class of a checked step; subclasses implement :meth:`_check`."""

    kind: ClassVar[str] = "step"
    name: str

    @property
    def claim(self) -> str:
        """The claim in plain text."""
        return self.name

    @property
    def latex(self) -> str:
        """The claim in LaTeX (math mode content)."""
        return sp.latex(sp.Symbol(self.name))

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
                          time.perf_counter() - start)


def _doit(expr: Any) -> sp.Expr:
    expr = sp.sympify(expr)
    return expr.doit() if hasattr(expr, "doit") else expr


def _is_zero(expr: sp.Expr) -> bool:
    if expr == 0:
        return True
    for simp in (sp.simplify, lambda e: sp.simplify(sp.expand_log(e)),
                 lambda e: sp.simplify(sp.expand(sp.powsimp(sp.expand_power_base(e))))):
        if simp(expr) == 0:
            return True
    return False


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
        gap = _clearly_different(lhs, rhs)
        if gap is not None:
            return "failed", "lhs and rhs differ numerically" + gap
        if _is_zero(diff):
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
        verdict = None
        for candidate in (expr, sp.factor(sp.simplify(expr))):
            verdict = getattr(candidate, _REL[self.relation])
            if verdict is not None:
                break
        if verdict is True:
            return "passed", f"sympy's assumptions give {self.relation} 0"
        if verdict is False:
            return "failed", f"sympy's assumptions refute {self.relation} 0" + _witness(expr)
        return "failed", "sympy cannot decide the sign from the symbols' assumptions"


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


# --------------------------------------------------------------------------- z3
def _import_z3() -> ModuleType | None:
    try:
        return importlib.import_module("z3")
    except ImportError:
        return None


def z3_available() -> bool:
    """Whether the optional z3 solver (extra ``proofs``) can be imported."""
    return _import_z3() is not None


def _to_z3(expr: Any, z3: ModuleType, env: dict[str, Any]) -> Any:
    expr = sp.sympify(expr)
    if isinstance(expr, sp.logic.boolalg.BooleanTrue):
        return z3.BoolVal(True)
    if isinstance(expr, sp.logic.boolalg.BooleanFalse):
        return z3.BoolVal(False)
    if isinstance(expr, sp.And):
        return z3.And(*[_to_z3(a, z3, env) for a in expr.args])
    if isinstance(expr, sp.Or):
        return z3.Or(*[_to_z3(a, z3, env) for a in expr.args])
    if isinstance(expr, sp.Not):
        return z3.Not(_to_z3(expr.args[0], z3, env))
    if isinstance(expr, sp.Equivalent):
        parts = [_to_z3(a, z3, env) for a in expr.args]
        return z3.And(*[parts[0] == p for p in parts[1:]])
    if isinstance(expr, sp.Implies):
        return z3.Implies(_to_z3(expr.args[0], z3, env), _to_z3(expr.args[1], z3, env))
    if isinstance(expr, sp.core.relational.Relational):
        a, b = _to_z3(expr.lhs, z3, env), _to_z3(expr.rhs, z3, env)
        op = expr.rel_op
        return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b, "==": a == b,
                "!=": a != b}[op]
    if isinstance(expr, sp.Min | sp.Max):
        parts = [_to_z3(a, z3, env) for a in expr.args]
        out = parts[0]
        for part in parts[1:]:
            out = z3.If(out <= part, out, part) if isinstance(expr, sp.Min) else z3.If(
                out >= part, out, part)
        return out
    if expr.is_Symbol:
        if expr.name not in env:
            env[expr.name] = z3.Real(expr.name)
        return env[expr.name]
    if expr.is_Rational:
        return z3.RealVal(f"{expr.p}/{expr.q}")
    if expr.is_Add:
        out = _to_z3(expr.args[0], z3, env)
        for a in expr.args[1:]:
            out = out + _to_z3(a, z3, env)
        return out
    if expr.is_Mul:
        out = _to_z3(expr.args[0], z3, env)
        for a in expr.args[1:]:
            out = out * _to_z3(a, z3, env)
        return out
    if expr.is_Pow and expr.exp.is_Integer:
        base = _to_z3(expr.base, z3, env)
        k = int(expr.exp)
        out = z3.RealVal(1)
        for _ in range(abs(k)):
            out = out * base
        return out if k >= 0 else 1 / out
    raise TypeError(f"z3 steps accept rational arithmetic only; cannot translate {expr}")


@dataclass(frozen=True)
class PolynomialInequality(Step):
    """``hypotheses ⇒ goal`` over the reals, decided by z3 (nonlinear real arithmetic).

    ``goal`` and ``hypotheses`` are sympy relations (or ``And``/``Or`` of
    them) built from rational arithmetic.  z3 searches for a counterexample
    to ``hypotheses ∧ ¬goal``: *unsat* proves the step, *sat* refutes it
    with a model, *unknown* (timeout) fails it as not established.

    Without z3 the step runs ``fallback`` (an :class:`IntervalInequality`
    stating the same claim, for one-variable claims on a closed range) or
    is skipped.
    """

    kind: ClassVar[str] = "z3"
    goal: Any = None
    hypotheses: tuple[Any, ...] = ()
    text: str = ""
    timeout_ms: int = 20_000
    fallback: IntervalInequality | None = None

    @property
    def claim(self) -> str:
        hyp = " ∧ ".join(sp.sstr(h) for h in self.hypotheses)
        return self.text or (f"{hyp} ⇒ {sp.sstr(self.goal)}" if hyp else sp.sstr(self.goal))

    @property
    def latex(self) -> str:
        hyp = r" \wedge ".join(sp.latex(h) for h in self.hypotheses)
        return f"{hyp} \\;\\Rightarrow\\; {sp.latex(self.goal)}" if hyp else sp.latex(self.goal)

    def _check(self) -> tuple[Status, str]:
        z3 = _import_z3()
        if z3 is None:
            if self.fallback is not None:
                status, reason = self.fallback._check()
                return status, f"z3 missing; interval fallback: {reason}"
            return "skipped", "z3-solver is not installed (pip install 'rlscale[proofs]')"
        env: dict[str, Any] = {}
        solver = z3.Solver()
        solver.set("timeout", self.timeout_ms)
        # A relation such as `x > 0` on a positive sympy symbol collapses to True
        # before z3 sees it, so the symbols' declared signs are passed explicitly.
        facts = (sp.sympify(self.goal), *map(sp.sympify, self.hypotheses))
        for sym in sorted(set().union(*(f.free_symbols for f in facts)), key=str):
            var = _to_z3(sym, z3, env)
            if sym.is_positive:
                solver.add(var > 0)
            elif sym.is_nonnegative:
                solver.add(var >= 0)
            elif sym.is_negative:
                solver.add(var < 0)
            elif sym.is_nonpositive:
                solver.add(var <= 0)
        for h in self.hypotheses:
            if isinstance(sp.sympify(h), sp.logic.boolalg.BooleanFalse):
                return "failed", ("a hypothesis is literally False (write sp.Eq(a, b), not "
                                  "a == b): the claim would hold vacuously")
            solver.add(_to_z3(h, z3, env))
        # Vacuity guard: contradictory hypotheses would prove anything.
        if solver.check() == z3.unsat:
            return "failed", "the hypotheses are unsatisfiable: the claim would hold vacuously"
        solver.add(z3.Not(_to_z3(self.goal, z3, env)))
        verdict = solver.check()
        if verdict == z3.unsat:
            return "passed", "z3: hypotheses ∧ ¬goal is unsatisfiable"
        if verdict == z3.sat:
            model = solver.model()
            pts = ", ".join(f"{d.name()}={model[d]}" for d in model.decls() if d.arity() == 0)
            return "failed", f"z3 found a counterexample: {pts}"
        return "failed", f"z3 could not decide ({solver.reason_unknown()}): not established"


# --------------------------------------------------------------------------- intervals
def _iv() -> Any:
    from mpmath import iv

    return iv


def interval_eval(expr: Any, bindings: Mapping[Any, Any]) -> Any:
    """Enclose a sympy expression with :mod:`mpmath.iv` interval arithmetic.

    ``bindings`` maps each free symbol to an ``iv.mpf`` interval (or a
    number).  Supported: rationals, floats, ``pi``, ``E``, ``+``, ``*``,
    powers, ``exp``, ``log``, ``sqrt``, ``Abs``.  Outward rounding makes
    the result contain every value the expression takes on the box.

    Examples
    --------
    >>> import sympy as sp
    >>> from mpmath import iv
    >>> x = sp.Symbol("x")
    >>> box = interval_eval(x**2 - 2 * x, {x: iv.mpf([0, 1])})
    >>> float(box.a) <= -1.0 and float(box.b) >= 0.0
    True
    """
    iv = _iv()
    env = {sp.sympify(k): (v if hasattr(v, "a") else iv.mpf(v)) for k, v in bindings.items()}

    def ev(e: sp.Expr) -> Any:
        if e in env:
            return env[e]
        if e.is_Integer:
            return iv.mpf(int(e))
        if e.is_Rational:
            return iv.mpf(int(e.p)) / iv.mpf(int(e.q))
        if e.is_Float:
            return iv.mpf(str(e))  # encloses the decimal, not a rounded double
        if e is sp.pi:
            return iv.pi
        if e is sp.E:
            return iv.e
        if e.is_Add:
            out = ev(e.args[0])
            for a in e.args[1:]:
                out = out + ev(a)
            return out
        if e.is_Mul:
            out = ev(e.args[0])
            for a in e.args[1:]:
                out = out * ev(a)
            return out
        if e.is_Pow:
            if e.exp.is_Integer:
                return ev(e.base) ** int(e.exp)
            if e.exp == sp.Rational(1, 2):
                return iv.sqrt(ev(e.base))
            return iv.exp(ev(e.exp) * iv.log(ev(e.base)))
        if isinstance(e, sp.exp):
            return iv.exp(ev(e.args[0]))
        if isinstance(e, sp.log):
            return iv.log(ev(e.args[0]))
        if isinstance(e, sp.Abs):
            inner = ev(e.args[0])
            lo, hi = inner.a, inner.b
            if lo >= 0:
                return inner
            if hi <= 0:
                return -inner
            return iv.mpf([0, max(-lo, hi)])
        if e.free_symbols:
            raise TypeError(f"unbound symbols {sorted(map(str, e.free_symbols))} in {e}")
        raise TypeError(f"interval arithmetic does not support {type(e).__name__}: {e}")

    return ev(sp.sympify(expr))


@dataclass(frozen=True)
class IntervalInequality(Step):
    """``expr >= 0`` (``> 0`` if ``strict``) for every point of a box.

    One variable: ``var`` in ``[lo, hi]``.  Several: ``ranges`` is a tuple of
    ``(symbol, lo, hi)``.  Proved by rigorous interval arithmetic: the box is
    cut into about ``boxes`` equal cells, each enclosed with
    :func:`interval_eval`; a cell whose enclosure is not decided is bisected
    along its widest side, up to ``max_boxes`` evaluations in all.  A cell
    whose enclosure lies entirely on the wrong side is a counterexample.
    ``params`` binds other symbols to numbers.

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> IntervalInequality("amgm", x**2 + y**2 - x * y + 1, ranges=((x, -2, 2), (y, -2, 2)),
    ...                    strict=True).check().status
    'passed'
    """

    kind: ClassVar[str] = "interval"
    expr: Any = None
    var: Any = None
    lo: Any = 0
    hi: Any = 1
    strict: bool = False
    boxes: int = 64
    max_boxes: int = 20_000
    params: Mapping[Any, Any] = field(default_factory=dict)
    text: str = ""
    ranges: tuple[tuple[Any, Any, Any], ...] = ()

    def _ranges(self) -> tuple[tuple[Any, Any, Any], ...]:
        return self.ranges or ((self.var, self.lo, self.hi),)

    @property
    def claim(self) -> str:
        rel = ">" if self.strict else ">="
        where = ", ".join(f"{v} in [{a}, {b}]" for v, a, b in self._ranges())
        return self.text or f"{sp.sstr(self.expr)} {rel} 0 for {where}"

    @property
    def latex(self) -> str:
        rel = ">" if self.strict else r"\ge"
        where = ",\\ ".join(f"{sp.latex(v)} \\in [{sp.latex(sp.sympify(a))}, "
                             f"{sp.latex(sp.sympify(b))}]" for v, a, b in self._ranges())
        return f"{sp.latex(self.expr)} {rel} 0 \\quad \\forall {where}"

    def _check(self) -> tuple[Status, str]:
        import itertools

        import mpmath

        iv = _iv()
        syms, edges = [], []
        for var, lo_, hi_ in self._ranges():
            # exact binary points: the outer ends of the enclosures of lo_ and hi_
            lo = mpmath.mp.make_mpf(interval_eval(lo_, {})._mpi_[0])
            hi = mpmath.mp.make_mpf(interval_eval(hi_, {})._mpi_[1])
            if not lo <= hi:
                raise ValueError(f"empty range [{lo_}, {hi_}] for {var}")
            syms.append(var)
            edges.append((lo, hi))
        per_dim = max(1, math.ceil(self.boxes ** (1 / len(syms))))

        def cuts(lo: Any, hi: Any) -> list[tuple[Any, Any]]:
            w = (hi - lo) / per_dim
            pts = [lo] + [lo + i * w for i in range(1, per_dim)] + [hi]
            return list(itertools.pairwise(pts))

        # Breadth first: coarse cells everywhere before fine ones, so a counterexample
        # elsewhere is found before the search drills into a tangency.
        queue = collections.deque(
            tuple(cell) for cell in itertools.product(*(cuts(a, b) for a, b in edges)))
        bind = dict(self.params)
        evaluated, worst = 0, None

        def show(cell: tuple[tuple[Any, Any], ...]) -> str:
            return " × ".join(f"[{float(a):.6g}, {float(b):.6g}]" for a, b in cell)

        while queue:
            cell = queue.popleft()
            evaluated += 1
            if evaluated > self.max_boxes:
                return "failed", (f"undecided after {self.max_boxes} boxes near {show(cell)}: "
                                  "not established")
            for var, (a, b) in zip(syms, cell):
                bind[var] = iv.mpf([a, b])
            enc = interval_eval(self.expr, bind)
            ok = enc.a > 0 if self.strict else enc.a >= 0
            if ok:
                worst = enc.a if worst is None or enc.a < worst else worst
                continue
            bad = enc.b <= 0 if self.strict else enc.b < 0
            if bad:
                return "failed", (f"counterexample: on {show(cell)} the expression lies in "
                                  f"[{float(enc.a):.6g}, {float(enc.b):.6g}]")
            for var, (a, b) in zip(syms, cell):
                bind[var] = iv.mpf((a + b) / 2)
            centre = interval_eval(self.expr, bind)
            if centre.b < 0 or (self.strict and centre.b <= 0):
                where = ", ".join(f"{v}={float((a + b) / 2):.6g}" for v, (a, b) in zip(syms, cell))
                return "failed", (f"counterexample: at {where} the expression is in "
                                  f"[{float(centre.a):.6g}, {float(centre.b):.6g}]")
            widest = max(range(len(cell)), key=lambda i: cell[i][1] - cell[i][0])
            a, b = cell[widest]
            mid = (a + b) / 2
            if not a < mid < b:
                return "failed", f"cannot split {show(cell)} further"
            left = (*cell[:widest], (a, mid), *cell[widest + 1:])
            right = (*cell[:widest], (mid, b), *cell[widest + 1:])
            queue.extend([left, right])
        return "passed", (f"interval arithmetic on {evaluated} boxes; smallest lower bound "
                          f"{float(worst):.6g}")


@dataclass(frozen=True)
class IntervalCertificate(Step):
    """Every enclosure from ``enclose()`` is positive (``>= 0`` unless ``strict``).

    ``enclose`` returns ``(label, iv.mpf)`` pairs — rigorous enclosures of
    the quantities the claim says are positive (e.g. a certified quadrature
    bracket minus a bound, one per integer ``n``).
    """

    kind: ClassVar[str] = "interval"
    enclose: Callable[[], Iterable[tuple[str, Any]]] | None = None
    text: str = ""
    latex_text: str = ""
    strict: bool = True

    @property
    def claim(self) -> str:
        return self.text

    @property
    def latex(self) -> str:
        return self.latex_text or rf"\text{{{self.text}}}"

    def _check(self) -> tuple[Status, str]:
        assert self.enclose is not None
        worst_label, worst, count = None, None, 0
        for label, enc in self.enclose():
            count += 1
            ok = enc.a > 0 if self.strict else enc.a >= 0
            if not ok:
                return "failed", (f"at {label} the enclosure [{float(enc.a):.6g}, "
                                  f"{float(enc.b):.6g}] is not "
                                  f"{'positive' if self.strict else 'nonnegative'}")
            if worst is None or enc.a < worst:
                worst_label, worst = label, enc.a
        if count == 0:
            return "failed", "no enclosures were produced"
        return "passed", (f"{count} certified enclosures; smallest lower bound "
                          f"{float(worst):.6g} at {worst_label}")


# --------------------------------------------------------------------------- proofs
@dataclass(frozen=True)
class Proof:
    """A statement, its (cited, unchecked) assumptions and its checked steps.

    ``guarantees`` names the rlscale functions whose behaviour the proof
    underwrites; ``source`` cites where the argument comes from.
    """

    name: str
    title: str
    statement: str
    steps: tuple[Step, ...]
    assumptions: tuple[str, ...] = ()
    statement_latex: str = ""
    guarantees: tuple[str, ...] = ()
    source: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        names = [s.name for s in self.steps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"proof {self.name!r} has duplicate step names {sorted(dup)}")

    def step(self, name: str) -> Step:
        """The step called ``name``."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"proof {self.name!r} has no step {name!r}; steps: "
                       f"{[s.name for s in self.steps]}")

    def replace_step(self, new: Step) -> Proof:
        """A copy with the step of the same name replaced by ``new`` (for mutation tests)."""
        self.step(new.name)
        return replace(self, steps=tuple(new if s.name == new.name else s for s in self.steps))

    def check(self, on_step: Callable[[StepResult], None] | None = None) -> ProofResult:
        """Check every step in order (each step is checked even after a failure)."""
        start = time.perf_counter()
        results = []
        for step in self.steps:
            result = step.check()
            results.append(result)
            if on_step is not None:
                on_step(result)
        return ProofResult(self.name, self.title, self.statement, tuple(results),
                           time.perf_counter() - start, self.guarantees)

    def to_latex(self, result: ProofResult | None = None) -> str:
        """The derivation as a LaTeX fragment (a ``\\section*`` with the steps).

        With ``result`` each step carries its verdict (✓ as ``\\checkmark``).
        """
        marks = {"passed": r"\checkmark", "failed": r"$\times$", "skipped": "skipped"}
        lines = [rf"\section*{{{_tex_text(self.title)}}}", r"\label{proof:" + self.name + "}",
                 r"\paragraph{Statement.} " + (
                     f"${self.statement_latex}$" if self.statement_latex
                     else _tex_text(self.statement))]
        if self.assumptions:
            lines += [r"\paragraph{Assumptions (cited, not machine-checked).}", r"\begin{itemize}"]
            lines += [rf"  \item {_tex_text(a)}" for a in self.assumptions]
            lines.append(r"\end{itemize}")
        lines += [r"\paragraph{Derivation.}", r"\begin{enumerate}"]
        for i, step in enumerate(self.steps):
            verdict = ""
            if result is not None:
                verdict = f" \\hfill {marks[result.steps[i].status]}"
            lines.append(rf"  \item \textbf{{{_tex_text(step.name)}}} ({step.kind}){verdict}")
            lines.append(rf"    \[ {step.latex} \]")
            if step.claim and not isinstance(step, IntervalCertificate):
                lines.append(f"    {_tex_text(step.claim)}")
        lines.append(r"\end{enumerate}")
        if self.source:
            lines.append(r"\paragraph{Source.} " + _tex_text(self.source))
        if self.notes:
            lines.append(r"\paragraph{Notes.} " + _tex_text(self.notes))
        return "\n".join(lines) + "\n"


_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}"}


def _tex_text(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


def latex_document(parts: Sequence[str], title: str = "rlscale proofs") -> str:
    """Wrap LaTeX fragments from :meth:`Proof.to_latex` into a standalone document.

    The plain-text claims keep their Unicode (φ, ≤, √, ...), so compile with
    ``lualatex`` or ``xelatex``.

    Examples
    --------
    >>> doc = latex_document(["x"])
    >>> doc.startswith("% Compile with lualatex"), doc.rstrip().endswith("end{document}")
    (True, True)
    """
    head = ["% Compile with lualatex or xelatex (Unicode text).",
            r"\documentclass{article}", r"\usepackage{amsmath,amssymb}",
            r"\usepackage{fontspec}", r"\setmainfont{DejaVu Serif}",
            rf"\title{{{_tex_text(title)}}}", r"\begin{document}", r"\maketitle"]
    return "\n".join([*head, *parts, r"\end{document}"]) + "\n"


