"""Posynomials and a whitelisting parser for cost expressions.

A *monomial* is ``c * x1**e1 * ... * xn**en`` with ``c > 0`` and real
exponents; a *posynomial* is a sum of monomials (Boyd, Kim, Vandenberghe &
Hassibi 2007, "A tutorial on geometric programming", §2).  Costs such as
``"100*E + 10*E*t + E*t*k"`` or ``"6*N*D"`` are posynomials; that is what
makes compute-optimal allocation a geometric program.

:func:`parse_posynomial` reads such strings with a small tokenizer and a
recursive-descent parser that accepts only numbers, axis names, ``+ * / **``
and parentheses.  It never calls ``eval`` or ``sympify`` on user text.
Anything that would leave the posynomial class is refused with a message
naming the offending token or term and why (a subtraction, a negative or zero
coefficient, a division by a sum, a non-integer power of a sum).

Grammar (``**`` binds tighter than unary sign, as in Python)::

    sum     := product ('+' product)*
    product := power (('*' | '/') power)*
    power   := atom ('**' exponent)?
    exponent:= ('+' | '-')? power          # must be a constant
    atom    := NUMBER | NAME | '(' sum ')' | '+' atom
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._validation import (
    check_mapping,
    check_real,
    check_scalar,
)

__all__ = ["Monomial", "Posynomial", "PosynomialError", "parse_posynomial"]

_MAX_CHARS = 10_000
_MAX_TERMS = 10_000
# Work limits that keep pathological input from exhausting the stack or the CPU
# (issue 10 §2): parentheses, unary signs and exponent towers nest at most
# _MAX_DEPTH deep, a sum is raised to at most _MAX_SUM_POWER, any intermediate
# sum has at most _MAX_TERMS terms, and the whole expansion of one cost -- every
# product and power together -- forms at most _MAX_WORK pairs of terms
# (about a second of work on one core).  Each product and power is *predicted* against the
# remaining work before it is expanded; strings and sympy input share them.
_MAX_DEPTH = 100
_MAX_SUM_POWER = 100
_MAX_WORK = 500_000


class PosynomialError(ValueError):
    """A cost expression is malformed or not a posynomial."""


@dataclass(frozen=True)
class Monomial:
    """``coefficient * prod(axis**exponent)`` with a positive coefficient.

    ``exponents`` is a sorted tuple of ``(axis, exponent)`` pairs with
    non-zero exponents, so equal monomials compare equal.

    Examples
    --------
    >>> m = parse_posynomial("10*E*t**2").terms[0]
    >>> m.coefficient, m.exponents, m.power_of("t"), m.power_of("k")
    (10.0, (('E', 1.0), ('t', 2.0)), 2.0, 0.0)
    >>> str(m), m.label()
    ('10*E*t**2', 'E*t**2')
    """

    coefficient: float
    exponents: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        c = check_scalar("coefficient", self.coefficient, low=0.0, low_open=True)
        if not isinstance(self.exponents, tuple | list):
            raise TypeError(f"exponents must be a tuple of (axis, exponent) pairs; got "
                            f"{type(self.exponents).__name__}")
        pairs = []
        for pair in self.exponents:
            if (not isinstance(pair, tuple | list) or len(pair) != 2
                    or not isinstance(pair[0], str) or not pair[0].isidentifier()):
                raise TypeError(f"exponents must be (axis name, exponent) pairs; got {pair!r:.60}")
            pairs.append((pair[0], check_scalar(f"exponents[{pair[0]!r}]", pair[1])))
        if len({a for a, _ in pairs}) != len(pairs):
            raise ValueError(f"exponents name an axis twice: {[a for a, _ in pairs]}")
        object.__setattr__(self, "coefficient", c)
        object.__setattr__(self, "exponents", tuple(sorted((a, e) for a, e in pairs if e != 0)))

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.exponents)

    def power_of(self, axis: str) -> float:
        """Exponent of ``axis`` in this monomial (0 when absent)."""
        if not isinstance(axis, str):
            raise TypeError(f"axis must be an axis name (str); got {axis!r:.60}")
        return dict(self.exponents).get(axis, 0.0)

    def label(self) -> str:
        """The monomial without its coefficient, e.g. ``"E*t"`` (``"1"`` if constant)."""
        parts = [name if e == 1 else f"{name}**{_num(e)}" for name, e in self.exponents]
        return "*".join(parts) or "1"

    def __str__(self) -> str:
        lab = self.label()
        if lab == "1":
            return _num(self.coefficient)
        return lab if self.coefficient == 1 else f"{_num(self.coefficient)}*{lab}"

    def log_evaluate(self, log_values: Mapping[str, Any]) -> np.ndarray:
        """``log`` of the monomial from the logs of the axis values (no overflow).

        ``log_values`` maps each axis to ``log x`` (``-inf`` for ``x = 0``
        is allowed where the exponent is positive, giving ``-inf``).
        """
        check_mapping("log_values", log_values)
        out = np.asarray(math.log(self.coefficient), dtype=np.float64)
        for name, e in self.exponents:
            if name not in log_values:
                raise ValueError(f"log_values has no value for axis {name!r} of {self}")
            lv = check_real(f"log_values[{name!r}]", log_values[name], high=math.inf,
                            allow_inf=True)
            if np.any(np.isposinf(lv)) or (e < 0 and np.any(np.isneginf(lv))):
                raise ValueError(f"log_values[{name!r}] must be finite (or -inf where the "
                                 f"exponent is positive); got exponent {e:g}")
            with np.errstate(over="ignore", invalid="ignore"):
                out = out + e * lv
        if np.any(np.isnan(out) | np.isposinf(out)):
            raise ValueError(f"the log of the monomial {self} overflows the float range at "
                             f"these log_values")
        return out


def _num(x: float) -> str:
    return f"{x:.12g}"


def _key(exps: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((k, float(v)) for k, v in exps.items() if v != 0))


@dataclass(frozen=True)
class Posynomial:
    """A sum of monomials, e.g. the parsed cost ``"100*E + 10*E*t + E*t*k"``.

    Examples
    --------
    >>> p = parse_posynomial("100*E + 10*E*t + E*t*k")
    >>> p.axes
    ('E', 'k', 't')
    >>> float(p.evaluate({"E": 2, "t": 3, "k": 4}))
    284.0
    >>> [str(m) for m in p.terms]
    ['100*E', '10*E*t', 'E*k*t']
    """

    terms: tuple[Monomial, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.terms, tuple | list) or not self.terms or not all(
                isinstance(m, Monomial) for m in self.terms):
            raise TypeError(f"terms must be a non-empty tuple of Monomial; got "
                            f"{self.terms!r:.80}")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a str; got {type(self.source).__name__}")
        object.__setattr__(self, "terms", tuple(self.terms))

    def _arrays(self, values: Mapping[str, Any], positive: bool) -> dict[str, np.ndarray]:
        """Checked axis values: real, finite, ``> 0`` (``>= 0`` unless ``positive``)."""
        check_mapping("values", values)
        arrays = {}
        for name in self.axes:
            if name not in values:
                raise ValueError(f"values has no value for axis {name!r} of {self}")
            arrays[name] = check_real(name, values[name], low=0.0, low_open=positive)
        try:
            np.broadcast_shapes(*(a.shape for a in arrays.values()))
        except ValueError:
            raise ValueError(f"values for axes {list(arrays)} have shapes "
                             f"{[a.shape for a in arrays.values()]} that do not "
                             "broadcast") from None
        return arrays

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(sorted({a for m in self.terms for a in m.axes}))

    @property
    def is_monomial(self) -> bool:
        return len(self.terms) == 1

    def is_linear(self) -> bool:
        """Whether every term is ``c * x`` for a single axis ``x`` (a linear cost)."""
        return all(len(m.exponents) == 1 and m.exponents[0][1] == 1 for m in self.terms)

    def __str__(self) -> str:
        return " + ".join(str(m) for m in self.terms)

    def log_terms(self, values: Mapping[str, Any]) -> np.ndarray:
        """Logs of each term, stacked on the first axis (shape ``(n_terms, ...)``).

        Axis values must be finite and ``> 0``; the logs never overflow.
        """
        logs = {n: np.log(a) for n, a in self._arrays(values, positive=True).items()}
        return np.stack([np.broadcast_to(m.log_evaluate(logs), np.broadcast_shapes(
            *(np.shape(v) for v in logs.values()))) for m in self.terms])

    def evaluate(self, values: Mapping[str, Any]) -> np.ndarray:
        """The posynomial's value at axis ``values`` (vectorised).

        Values must be finite and ``>= 0`` (``ValueError`` naming the axis
        otherwise).  A zero value gives the term's limit -- 0 for a positive
        exponent, ``+inf`` for a negative one (solvers probe slack synthetic
        counts at 0) -- and ``+inf`` is also returned where the true value
        exceeds the float range; use :meth:`log_terms` there.  These are the
        only non-finite results (documented limitation of the input contract).
        """
        with np.errstate(over="ignore"):
            return self.term_values(values).sum(axis=0)

    def term_values(self, values: Mapping[str, Any]) -> np.ndarray:
        """Value of each term (shape ``(n_terms, ...)``).

        Products of powers are exact to rounding; where one power overflows or
        underflows (``1e-200**-2``), the term is recomputed as ``exp`` of its
        log, so a finite value stays finite and only a true overflow is ``inf``.
        """
        arrays = self._arrays(values, positive=False)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        out = np.empty((len(self.terms), *shape))
        # A zero axis value (a slack synthetic count) has log -inf: same limit as x**e.
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            for i, m in enumerate(self.terms):
                term = np.full(shape, m.coefficient)
                for name, e in m.exponents:
                    term = term * arrays[name] ** e
                out[i] = term
            off = ~np.isfinite(out)
            off |= out == 0
            if off.any():
                logs = {n: np.log(a) for n, a in arrays.items()}
                exact = np.stack([np.broadcast_to(np.exp(m.log_evaluate(logs)), shape)
                                  for m in self.terms])
                out = np.where(off, exact, out)
        return out

    def log_gradient(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``d log p / d log x`` per axis: the term-weighted average exponent."""
        from scipy.special import softmax

        w = softmax(self.log_terms(values), axis=0)
        return {a: np.tensordot(np.array([m.power_of(a) for m in self.terms]), w, axes=1)
                for a in self.axes}

    def substitute(self, mapping: Mapping[str, Posynomial]) -> Posynomial:
        """Replace axes by monomials (e.g. ``tasks -> E*t``); other axes stay."""
        check_mapping("mapping", mapping)
        for name, sub in mapping.items():
            if not isinstance(sub, Posynomial) or not sub.is_monomial:
                raise PosynomialError(
                    f"substitution for {name!r} must be a single monomial such as 'E*t'; "
                    f"got {sub}")
        out: dict[tuple[tuple[str, float], ...], float] = {}
        for m in self.terms:
            coef = m.coefficient
            exps: dict[str, float] = {}
            for name, e in m.exponents:
                if name in mapping:
                    sub = mapping[name].terms[0]
                    try:
                        coef *= sub.coefficient ** e
                    except OverflowError:
                        coef = math.inf
                    if not 0 < coef < math.inf:
                        raise PosynomialError(
                            f"substituting {name!r} -> {mapping[name]} makes the coefficient "
                            f"of {m} leave the float range")
                    for n2, e2 in sub.exponents:
                        exps[n2] = exps.get(n2, 0.0) + e * e2
                else:
                    exps[name] = exps.get(name, 0.0) + e
            key = _key(exps)
            out[key] = out.get(key, 0.0) + coef
        return _build(((dict(k), c) for k, c in out.items()), self.source or str(self))

    def to_sympy(self, symbols: Mapping[str, Any] | None = None) -> Any:
        """The posynomial as a sympy expression (positive symbols by default)."""
        import sympy as sp

        symbols = dict(check_mapping("symbols", {} if symbols is None else symbols))
        for a in self.axes:
            symbols.setdefault(a, sp.Symbol(a, positive=True))
        return sp.Add(*[sp.nsimplify(m.coefficient, rational=False) * sp.Mul(
            *[symbols[n] ** sp.nsimplify(e) for n, e in m.exponents]) for m in self.terms])

    @classmethod
    def from_sympy(cls, expr: Any) -> Posynomial:
        """Convert a sympy expression that is a posynomial (after expansion).

        The expression tree is walked structurally (no text is evaluated, and
        ``sympy.expand`` is not called): sums, products and constant powers
        are expanded by the same code and under the same work limits as a
        cost string (:func:`parse_posynomial`), so a sympy input cannot ask
        for more work than a string can.
        """
        import sympy as sp

        if not isinstance(expr, sp.Basic):
            raise TypeError(f"cost must be a string or a sympy expression; got {expr!r:.80}")
        bad = [s for s in expr.free_symbols if not isinstance(s, sp.Symbol)]
        if bad:
            raise PosynomialError(f"cost {expr} has non-symbol atoms {bad}")
        source = str(expr)[:200]
        poly = _SympyWalker(source).walk(expr)
        return _build(((dict(k), c) for k, c in poly.items() if c != 0), source)


class _SympyWalker:
    """Expand a sympy tree into a :data:`_Poly` under the shared work limits."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.expander = _Expander()
        self.depth = 0

    def fail(self, node: Any, why: str) -> PosynomialError:
        return PosynomialError(f"cost {self.source}: {str(node)[:80]}: {why}")

    def constant(self, node: Any) -> float:
        import sympy as sp

        value = sp.N(node, 17)
        if not (value.is_real and value.is_finite):
            raise self.fail(node, "not a finite real number")
        c = float(value)
        if not math.isfinite(c):
            raise self.fail(node, "outside the float range")
        return c

    def walk(self, node: Any) -> _Poly:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(node, f"nested deeper than {_MAX_DEPTH} levels")
        try:
            return self._walk(node)
        finally:
            self.depth -= 1

    def _walk(self, node: Any) -> _Poly:
        import sympy as sp

        if isinstance(node, sp.Symbol):
            return {((node.name, 1.0),): 1.0}
        if not node.free_symbols:
            return {(): self.constant(node)}
        if isinstance(node, sp.Add):
            out: _Poly = {}
            for arg in node.args:
                out = _add(out, self.walk(arg))
            return out
        if isinstance(node, sp.Mul):
            out = {(): 1.0}
            for arg in node.args:
                out = self.expander.mul(out, self.walk(arg), f"cost {self.source}: product")
            return out
        if isinstance(node, sp.Pow):
            base, e = node.args
            if e.free_symbols:
                raise self.fail(node, "a power with a variable exponent is not a posynomial")
            return self.expander.power(self.walk(base), self.constant(e),
                                       f"cost {self.source}: power {str(node)[:60]}")
        raise self.fail(node, "not a power of an axis with a constant exponent (only sums, "
                        "products and constant powers of axes form a posynomial)")


def _build(terms: Iterable[tuple[Mapping[str, float], float]], source: str) -> Posynomial:
    out: dict[tuple[tuple[str, float], ...], float] = {}
    for exps, coef in terms:
        key = _key(exps)
        out[key] = out.get(key, 0.0) + coef
    if not out:
        raise PosynomialError(f"cost {source!r} has no terms")
    for key, c in out.items():
        if not math.isfinite(c):
            raise PosynomialError(f"term {Monomial(1.0, key).label()} of {source!r} has a "
                                  f"non-finite coefficient {c}")
        if not c > 0:
            raise PosynomialError(f"term {Monomial(1.0, key).label()} of {source!r} has "
                                  f"coefficient {c:g} (it underflows): a posynomial needs "
                                  "positive coefficients")
        bad = [(name, e) for name, e in key if not math.isfinite(e)]
        if bad:
            raise PosynomialError(f"the exponents of {bad[0][0]!r} in {source!r} add up to "
                                  f"exponent {bad[0][1]}; exponents must be finite")
    return Posynomial(tuple(Monomial(c, k) for k, c in out.items()), source)


# -- tokenizer ---------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|[-+*/()^]))",
    re.ASCII,  # \d and \s would otherwise accept Unicode digits and spaces
)


_SPACE = " \t\n\r\f\v"  # the ASCII whitespace that the tokenizer's \s matches


@dataclass(frozen=True)
class _Tok:
    kind: str  # "num", "name", "op", "end"
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip(_SPACE) == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:].lstrip(_SPACE)
            bad, col = rest[:1], len(text) - len(rest)
            raise PosynomialError(
                f"cost {text!r}: character {bad!r} at position {col} is not allowed "
                "(only numbers, axis names, + * / ** and parentheses)")
        kind = m.lastgroup or "op"
        start = m.start(kind)
        toks.append(_Tok(kind, m.group(kind), start))
        pos = m.end()
    toks.append(_Tok("end", "", len(text)))
    return toks


# -- expansion under a work budget --------------------------------------------

_Poly = dict[tuple[tuple[str, float], ...], float]


def _power_terms_bound(base: _Poly, j: int) -> int:
    """An upper bound on the number of terms of ``base**j`` (predicted, not expanded).

    At most the number of multisets of ``j`` terms, ``C(n+j-1, j)``; and at most
    the product over axes of the distinct exponent sums that axis can take --
    for integer exponents ``j*(max-min)+1``, which is what makes ``(1+E)**99``
    (100 terms, not ``C(100, 99)``) cheap to predict.
    """
    n = len(base)
    bound = math.comb(n + j - 1, j)
    per_axis = 1
    for a in {name for key in base for name, _ in key}:
        exps = {dict(key).get(a, 0.0) for key in base}
        if all(float(e).is_integer() for e in exps):
            per_axis *= j * int(max(exps) - min(exps)) + 1
        else:
            per_axis *= math.comb(len(exps) + j - 1, j)
        if per_axis >= bound:
            return bound
    return min(bound, per_axis)


class _Expander:
    """Products and powers of :data:`_Poly`, refused *before* they exceed the limits.

    ``work`` counts pairs of terms multiplied so far; every operation predicts
    its own work and refuses when the total would pass :data:`_MAX_WORK`.
    """

    def __init__(self) -> None:
        self.work = 0
        self.memo: dict = {}

    def _charge(self, work: int, where: str, what: str) -> None:
        if self.work + work > _MAX_WORK:
            raise PosynomialError(
                f"{where}: expanding {what} needs up to {work:,} term products, over the "
                f"work limit of {_MAX_WORK:,} per cost ({self.work:,} already used)")
        self.work += work

    def mul(self, a: _Poly, b: _Poly, where: str) -> _Poly:
        self._charge(len(a) * len(b), where,
                     f"a product of a {len(a)}-term and a {len(b)}-term sum")
        out = _mul(a, b, self.memo)
        if len(out) > _MAX_TERMS:
            raise PosynomialError(f"{where}: expansion exceeds {_MAX_TERMS:,} terms")
        return out

    def power(self, base: _Poly, e: float, where: str) -> _Poly:
        if len(base) == 1:
            (key, c), = base.items()
            if c < 0 and not float(e).is_integer():
                raise PosynomialError(f"{where}: a negative number to a non-integer power "
                                      "is not real")
            try:
                ce = c ** e
            except (OverflowError, ZeroDivisionError):
                ce = math.inf
            if isinstance(ce, complex) or not math.isfinite(ce) or ce == 0:
                raise PosynomialError(f"{where}: power {c:g}**{e:g} overflows or underflows")
            keyed = _key({n: p * e for n, p in key})
            if any(not math.isfinite(x) for _, x in keyed):
                raise PosynomialError(f"{where}: exponent {e:g} makes an exponent infinite")
            return {keyed: ce}
        if not float(e).is_integer() or e < 1:
            raise PosynomialError(f"{where}: a sum raised to {e:g} is not a posynomial (only "
                                  "positive integer powers of sums expand)")
        if e > _MAX_SUM_POWER:
            raise PosynomialError(f"{where}: power of a sum {e:g} is above {_MAX_SUM_POWER}; "
                                  "expanding it is refused")
        k = int(e)
        predicted = sum(min(_power_terms_bound(base, j), _MAX_TERMS) for j in range(1, k))
        self._charge(predicted * len(base), where,
                     f"a {len(base)}-term sum to the power {k}")
        self.work -= predicted * len(base)  # charged again, exactly, by each product
        value: _Poly = dict(base)
        for _ in range(k - 1):
            value = self.mul(value, base, where)
        return value


# -- parser: values are dicts {exponent-key: coefficient} --------------------


class _Parser:
    def __init__(self, text: str, axes: frozenset[str] | None) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.axes = axes
        self.depth = 0
        self.expander = _Expander()

    def fail(self, tok: _Tok, why: str) -> PosynomialError:
        shown = tok.text or "end of input"
        return PosynomialError(f"cost {self.text!r}: {shown!r} at position {tok.pos}: {why}")

    def nest(self, tok: _Tok) -> None:
        """Count one level of nesting (callers undo it); refuse beyond _MAX_DEPTH."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(tok, f"nested deeper than {_MAX_DEPTH} levels")

    def where(self, tok: _Tok) -> str:
        return f"cost {self.text[:200]!r}: {tok.text!r} at position {tok.pos}"

    def mul(self, a: _Poly, b: _Poly, op: _Tok) -> _Poly:
        """``a * b`` expanded, refusing expansions beyond the work and term limits."""
        return self.expander.mul(a, b, self.where(op))

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> _Poly:
        if self.peek().kind == "end":
            raise PosynomialError("cost is empty")
        value = self.sum()
        tok = self.peek()
        if tok.kind != "end":
            raise self.fail(tok, "unexpected token (missing operator?)")
        return value

    def sum(self) -> _Poly:
        start = self.peek().pos
        value = self.product()
        while True:
            tok = self.peek()
            if tok.text == "+":
                self.take()
                value = _add(value, self.product())
            elif tok.text == "-":
                raise self.fail(tok, f"subtraction after {self.text[start:tok.pos].strip()!r}"
                                " is not allowed: a cost must be a posynomial (a sum of "
                                "positive terms)")
            else:
                return value

    def product(self) -> _Poly:
        value = self.power()
        while self.peek().text in ("*", "/"):
            op = self.take()
            start = self.peek().pos
            rhs = self.power()
            if op.text == "*":
                value = self.mul(value, rhs, op)
            else:
                if len(rhs) != 1:
                    raise self.fail(op, f"division by the sum {self.text[start:self.peek().pos]!r}"
                                    " is not a posynomial (divide by monomials only)")
                (key, c), = rhs.items()
                value = self.expander.mul(value, {_key({n: -e for n, e in key}): 1.0 / c},
                                          self.where(op))
        return value

    def power(self) -> _Poly:
        base_tok = self.peek()
        base = self.atom()
        if self.peek().text != "**":
            if self.peek().text == "^":
                raise self.fail(self.peek(), "use ** for powers, not ^")
            return base
        op = self.take()
        e = self.exponent()
        if len(base) > 1 and (not float(e).is_integer() or e < 1):
            raise self.fail(op, f"the sum starting at {base_tok.text!r} raised to {e:g} is not "
                            "a posynomial (only positive integer powers of sums expand)")
        return self.expander.power(base, e, self.where(op))

    def exponent(self) -> float:
        """A constant exponent: signed numbers, ``+ - * / **`` and parentheses.

        Signs are allowed here (``E**-0.5``, ``E**(-1/2)``) because an exponent
        is a number, not a term of the cost.
        """
        tok = self.peek()
        e = self.const_unary()
        if not math.isfinite(e):
            raise self.fail(tok, "exponent is not finite")
        return e

    def const_sum(self) -> float:
        value = self.const_product()
        while self.peek().text in ("+", "-"):
            sign = 1.0 if self.take().text == "+" else -1.0
            value += sign * self.const_product()
        return value

    def const_product(self) -> float:
        value = self.const_unary()
        while self.peek().text in ("*", "/"):
            op = self.take()
            rhs = self.const_unary()
            if op.text == "/" and rhs == 0:
                raise self.fail(op, "division by zero in an exponent")
            value = value * rhs if op.text == "*" else value / rhs
        return value

    def const_unary(self) -> float:
        self.nest(self.peek())
        try:
            return self._const_unary()
        finally:
            self.depth -= 1

    def _const_unary(self) -> float:
        tok = self.peek()
        if tok.text in ("+", "-"):
            self.take()
            v = self.const_unary()
            return v if tok.text == "+" else -v
        tok = self.take()
        if tok.kind == "num":
            base = float(tok.text)
        elif tok.text == "(":
            base = self.const_sum()
            close = self.take()
            if close.text != ")":
                raise self.fail(close, "expected ')'")
        elif tok.kind == "end":
            raise self.fail(tok, "expression ends early")
        else:
            raise self.fail(tok, "an exponent must be a constant number")
        if self.peek().text == "**":
            op = self.take()
            e = self.const_unary()
            try:
                base = base ** e
            except (OverflowError, ZeroDivisionError):
                raise self.fail(op, "exponent overflows") from None
            if isinstance(base, complex):
                raise self.fail(op, "exponent is not real")
        return base

    def atom(self) -> _Poly:
        self.nest(self.peek())
        try:
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self) -> _Poly:
        tok = self.take()
        if tok.kind == "num":
            c = float(tok.text)
            if not math.isfinite(c):
                raise self.fail(tok, "number is not finite")
            if c == 0:
                raise self.fail(tok, "a zero coefficient makes the term vanish; a posynomial "
                                "needs positive coefficients")
            return {(): c}
        if tok.kind == "name":
            if self.peek().text == "(":
                raise self.fail(tok, "function calls are not allowed (only numbers, axis "
                                "names, + * / ** and parentheses)")
            if self.axes is not None and tok.text not in self.axes:
                raise self.fail(tok, f"unknown axis name; the axes are {sorted(self.axes)}")
            return {((tok.text, 1.0),): 1.0}
        if tok.text == "(":
            value = self.sum()
            close = self.take()
            if close.text != ")":
                raise self.fail(close, "expected ')'")
            return value
        if tok.text == "+":
            return self.atom()
        if tok.text == "-":
            raise self.fail(tok, "a negative coefficient is not allowed: a cost must be a "
                            "posynomial (a sum of positive terms)")
        if tok.kind == "end":
            raise self.fail(tok, "expression ends early")
        if tok.text == "^":
            raise self.fail(tok, "use ** for powers, not ^")
        raise self.fail(tok, "expected a number, an axis name or '('")


def _add(a: _Poly, b: _Poly) -> _Poly:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0.0) + c
    return out


def _mul(a: _Poly, b: _Poly, memo: dict | None = None) -> _Poly:
    """``a * b`` expanded; ``memo`` caches merged exponent keys across calls."""
    memo = {} if memo is None else memo
    out: _Poly = {}
    get = out.get
    for kb, cb in b.items():
        for ka, ca in a.items():
            if not kb:
                key = ka
            elif not ka:
                key = kb
            else:
                key = memo.get((ka, kb))
                if key is None:
                    exps = dict(ka)
                    for n, e in kb:
                        exps[n] = exps.get(n, 0.0) + e
                    key = memo[(ka, kb)] = _key(exps)
            out[key] = get(key, 0.0) + ca * cb
    return out


def _check_axes_arg(axes: Any) -> frozenset[str]:
    """The ``axes`` argument of :func:`parse_posynomial`: an iterable of identifiers."""
    if isinstance(axes, str | bytes):
        raise TypeError(f"axes must be a list of axis names such as ['E', 'T'], not the "
                        f"single string {axes!r:.40}")
    try:
        names = list(axes)
    except TypeError:
        raise TypeError(f"axes must be a list of axis names; got {type(axes).__name__}") from None
    for a in names:
        if not isinstance(a, str) or not a.isidentifier():
            raise ValueError(f"axes must be identifiers such as 'E'; got axes entry {a!r:.40}")
    return frozenset(names)


def parse_posynomial(text: Any, axes: Iterable[str] | None = None) -> Posynomial:
    """Parse a cost string such as ``"100*E + 10*E*t + E*t*k"`` into a posynomial.

    Parameters
    ----------
    text : str or sympy expression or Posynomial
        The cost.  Strings may hold numbers (``6``, ``1.5e3``), axis names,
        ``+``, ``*``, ``/``, ``**`` and parentheses; nothing else.  A sympy
        expression is converted structurally; a :class:`Posynomial` is returned
        as is (after the axis check).
    axes : iterable of str, optional
        Allowed axis names; any other name is an error naming it.  A single
        string is refused (``axes="ET"`` would otherwise read as ``{E, T}``):
        pass ``["E", "T"]``.

    Returns
    -------
    Posynomial

    Raises
    ------
    PosynomialError
        (a ``ValueError``) naming the offending token or term and why.

    Examples
    --------
    >>> str(parse_posynomial("6*N*D"))
    '6*D*N'
    >>> str(parse_posynomial("(E + 2*T)**2 / E"))
    'E + 4*T + 4*E**-1*T**2'
    >>> parse_posynomial("100*E - 10*T")
    Traceback (most recent call last):
    ...
    rlscale.theory._posynomial.PosynomialError: cost '100*E - 10*T': '-' at position 6: \
subtraction after '100*E' is not allowed: a cost must be a posynomial (a sum of positive terms)
    >>> parse_posynomial("E + K", axes=["E", "T"])
    Traceback (most recent call last):
    ...
    rlscale.theory._posynomial.PosynomialError: cost 'E + K': 'K' at position 4: unknown axis \
name; the axes are ['E', 'T']

    Expansion is bounded before it is done (at most 10,000 terms, powers of
    sums up to 100, and 500,000 term products per cost in all):

    >>> parse_posynomial("+".join(["((1+E)**99)**19"] * 5))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rlscale.theory._posynomial.PosynomialError: cost ...: expanding a 100-term sum to the power \
19 needs up to ... term products, over the work limit of 500,000 per cost (... already used)
    """
    allowed = None if axes is None else _check_axes_arg(axes)
    if isinstance(text, Posynomial):
        result = text
    elif isinstance(text, str):
        if len(text) > _MAX_CHARS:
            raise PosynomialError(f"cost string is longer than {_MAX_CHARS} characters")
        poly = _Parser(text, allowed).parse()
        result = _build(((dict(k), c) for k, c in poly.items()), text)
    else:
        import sympy as sp

        if not isinstance(text, sp.Basic):
            raise TypeError(
                f"cost must be a string, a sympy expression or a Posynomial; got "
                f"{type(text).__name__}")
        result = Posynomial.from_sympy(text)
    if allowed is not None:
        unknown = sorted(set(result.axes) - allowed)
        if unknown:
            raise PosynomialError(f"cost {result.source or result!s} mentions unknown axis "
                                  f"{unknown[0]!r}; the axes are {sorted(allowed)}")
    return result
