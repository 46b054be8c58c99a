"""A whitelisting parser for posynomial cost expressions (strings and sympy trees).

Posynomials themselves (:class:`~rlscale.theory._posynomial.Posynomial`, Boyd,
Kim, Vandenberghe & Hassibi 2007, §2) are defined in
:mod:`rlscale.theory._posynomial`; this module turns text such as
``"100*E + 10*E*t + E*t*k"`` or a sympy expression into one.

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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rlscale.theory._posynomial import Posynomial, PosynomialError, _build, _key
from rlscale.theory._posynomial_expand import (
    _MAX_CHARS,
    _MAX_DEPTH,
    Expander,
    _Poly,
    add,
)

__all__ = ["parse_posynomial"]

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


# -- parser: values are dicts {exponent-key: coefficient} --------------------


class _Parser:
    def __init__(self, text: str, axes: frozenset[str] | None) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.axes = axes
        self.depth = 0
        self.expander = Expander()

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
                value = add(value, self.product())
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

