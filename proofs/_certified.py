"""Certified proof steps: real-arithmetic implications (z3) and interval bounds.

:class:`PolynomialInequality` is decided by z3 (checker ``"z3"``, or
``"interval"`` when z3 is missing and it runs its interval fallback);
:class:`IntervalInequality` and :class:`IntervalCertificate` by rigorous
:mod:`mpmath.iv` interval arithmetic (checker ``"interval"``).
"""

from __future__ import annotations

import collections
import importlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar

import sympy as sp

from rlscale.proofs._fields import as_sympy
from rlscale.proofs._steps import Status, Step

__all__ = ["IntervalCertificate", "IntervalInequality", "PolynomialInequality",
           "interval_eval", "z3_available"]


# --------------------------------------------------------------------------- z3
def _import_z3() -> ModuleType | None:
    try:
        return importlib.import_module("z3")
    except ImportError:
        return None


def z3_available() -> bool:
    """Whether the optional z3 solver (extra ``proofs``) can be imported."""
    return _import_z3() is not None


def _to_z3(expr: Any, z3: ModuleType, env: dict[Any, Any]) -> Any:
    expr = as_sympy(expr)
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
        # keyed by the symbol itself (name and assumptions), never by its name alone:
        # Symbol("x", positive=True) and Symbol("x", real=True) are two variables, and
        # merged into one z3 constant they made x_pos − x_real >= 0 "proved"
        if expr not in env:
            name, used = expr.name, {str(v) for v in env.values()}
            k = 1
            while name in used:
                name, k = f"{expr.name}'{k}", k + 1
            env[expr] = z3.Real(name)
        return env[expr]
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
    checker: ClassVar[str] = "z3"
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

    def checker_used(self) -> str:
        """``"z3"``, or ``"interval"`` when z3 is missing and the fallback decides."""
        return "interval" if _import_z3() is None and self.fallback is not None else "z3"

    def _check(self) -> tuple[Status, str]:
        z3 = _import_z3()
        if z3 is None:
            if self.fallback is not None:
                status, reason = self.fallback._check()
                return status, f"z3 missing; interval fallback: {reason}"
            return "skipped", "z3-solver is not installed (pip install 'rlscale[proofs]')"
        env: dict[Any, Any] = {}
        solver = z3.Solver()
        solver.set("timeout", self.timeout_ms)
        # A relation such as `x > 0` on a positive sympy symbol collapses to True
        # before z3 sees it, so the symbols' declared signs are passed explicitly.
        facts = (as_sympy(self.goal, "goal"),
                 *(as_sympy(h, "hypotheses") for h in self.hypotheses))
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
            if isinstance(as_sympy(h, "hypotheses"), sp.logic.boolalg.BooleanFalse):
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
    if not isinstance(bindings, Mapping):
        raise TypeError(f"bindings must be a mapping symbol -> interval; got "
                        f"{type(bindings).__name__}")
    iv = _iv()
    env = {as_sympy(k, "bindings keys"): (v if hasattr(v, "a") else iv.mpf(v))
           for k, v in bindings.items()}

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
            raise TypeError(f"expr has symbols without bindings "
                            f"{sorted(map(str, e.free_symbols))} in {e}")
        raise TypeError(f"expr holds {type(e).__name__}, which interval arithmetic does not "
                        f"support: {e}")

    return ev(as_sympy(expr))


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
    checker: ClassVar[str] = "interval"
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
        where = ",\\ ".join(f"{sp.latex(v)} \\in [{sp.latex(as_sympy(a, 'lo'))}, "
                             f"{sp.latex(as_sympy(b, 'hi'))}]" for v, a, b in self._ranges())
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
    checker: ClassVar[str] = "interval"
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
