"""Expansion of posynomial sums, products and powers under shared work limits.

Both readers of costs — the string parser (:mod:`rlscale.theory._posynomial_parser`)
and the sympy walker (:class:`SympyWalker`, behind
:meth:`~rlscale.theory._posynomial.Posynomial.from_sympy`) — expand products
and constant powers of sums here, term by term, in the dict form
``{((axis, exponent), ...): coefficient}``.  Multiplying monomials adds their
exponents; ``(Σ a_i)^j`` for a positive integer ``j`` is expanded by repeated
multiplication (binary powering, memoised), the multinomial theorem being the
bound on its term count (:func:`_power_terms_bound`).  A sum to a non-integer or
negative power is refused: it is not a posynomial.
"""

from __future__ import annotations

import math
from typing import Any

from rlscale.theory._posynomial import PosynomialError, _key

__all__ = ["Expander", "SympyWalker", "add", "mul"]

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


class Expander:
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
        out = mul(a, b, self.memo)
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



def add(a: _Poly, b: _Poly) -> _Poly:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0.0) + c
    return out


def mul(a: _Poly, b: _Poly, memo: dict | None = None) -> _Poly:
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



class SympyWalker:
    """Expand a sympy tree into a :data:`_Poly` under the shared work limits."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.expander = Expander()
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
                out = add(out, self.walk(arg))
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


