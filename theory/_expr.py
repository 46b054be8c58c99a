"""Laws written as expressions: a whitelisting parser and :class:`ExpressionLaw`.

Researchers write their own scaling forms — ``"E + A/N**alpha + B/D**beta"``,
a sigmoid in compute, a law with an interaction term.  :func:`parse_expression`
turns such a string into a sympy expression **without** ``eval`` or
``sympify``: Python's own parser (``ast.parse``) reads the text into a syntax
tree, and only these nodes are accepted —

* numbers (finite floats), names (letters, digits, ``_``);
* ``+``, ``-`` (binary and unary), ``*``, ``/``, ``**`` and parentheses;
* calls of ``exp``, ``log``, ``sqrt``, ``min``, ``max`` and
  ``sigmoid(x) = 1/(1 + exp(-x))``.

Anything else (attributes, subscripts, other calls, keywords, lambdas,
comparisons, strings) is refused with an :class:`ExpressionError` that says
what and where.  The size of the input is bounded (characters, nodes,
nesting depth), and constant arithmetic is done in floats, so no input can
make the parser build a huge integer or run for long.

:class:`ExpressionLaw` separates a parsed expression's names into **axes**
(the data's columns, strictly positive) and **parameters** (fitted), each
with a search range.  It derives what a researcher asks of a law —
elasticities, inverses, asymptotes, LaTeX — symbolically where sympy can,
and says so where it cannot; bound to parameter values it evaluates
(vectorised, through ``lambdify``) and, when the bound expression is a
posynomial in the axes, becomes a :class:`PosynomialLaw` that the geometric
programming allocator accepts.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from rlscale.theory._laws import Law, LawProperties
from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._validation import check_bool, check_mapping, check_real, check_scalar

__all__ = ["ExpressionError", "ExpressionLaw", "PosynomialLaw", "parse_expression"]

#: Limits on the input: characters, syntax-tree nodes, nesting depth.
MAX_LENGTH, MAX_NODES, MAX_DEPTH = 2000, 400, 40


class ExpressionError(ValueError):
    """An expression string that the whitelisting parser refuses."""


ExpressionError.__module__ = "rlscale.theory"  # its public home, shown in tracebacks


def _sigmoid(x: sp.Expr) -> sp.Expr:
    return 1 / (1 + sp.exp(-x))


_FUNCTIONS: dict[str, Any] = {"exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "min": sp.Min,
                              "max": sp.Max, "sigmoid": _sigmoid}
_ARITY = {"exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "sigmoid": (1, 1), "min": (2, 8),
          "max": (2, 8)}


def _number(value: float, node: ast.AST, text: str) -> sp.Float:
    if not math.isfinite(value):
        raise ExpressionError(f"constant arithmetic overflows at column {node.col_offset + 1} "
                              f"of {text!r}")
    return sp.Float(value)


def parse_expression(text: str) -> sp.Expr:
    """Parse a law's expression through the whitelist (no ``eval``/``sympify``).

    Names become real sympy symbols; :class:`ExpressionLaw` later declares
    which are axes and which are parameters.

    Examples
    --------
    >>> parse_expression("E + A/N**alpha")
    A/N**alpha + E
    >>> parse_expression("__import__('os')")
    Traceback (most recent call last):
    ...
    rlscale.theory.ExpressionError: only exp, log, max, min, sigmoid, sqrt may be \
called; got a call of '__import__' at column 1 of "__import__('os')"
    """
    if not isinstance(text, str):
        raise TypeError(f"expression must be a str; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is {len(text)} characters long; the limit is "
                              f"{MAX_LENGTH}")
    if not text.strip():
        raise ExpressionError("expression is empty")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"expression {text!r} is not valid syntax: {exc.msg} at column "
                              f"{exc.offset}") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise ExpressionError(f"expression has {nodes} syntax nodes; the limit is {MAX_NODES}")
    return _build(tree.body, text, 0)


def _build(node: ast.AST, text: str, depth: int) -> sp.Expr:
    if depth > MAX_DEPTH:
        raise ExpressionError(f"expression nests deeper than {MAX_DEPTH} levels")
    where = f"at column {getattr(node, 'col_offset', 0) + 1} of {text!r}"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"only numbers may appear as constants; got "
                                  f"{node.value!r} {where}")
        try:
            return _number(float(node.value), node, text)
        except OverflowError:
            raise ExpressionError(f"the number {where} is too large") from None
    if isinstance(node, ast.Name):
        return sp.Symbol(node.id, real=True)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _build(node.operand, text, depth + 1)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.Div | ast.Pow):
        a, b = _build(node.left, text, depth + 1), _build(node.right, text, depth + 1)
        if a.is_Number and b.is_Number:  # fold constants in floats, never big integers
            x, y = float(a), float(b)
            try:
                with np.errstate(all="raise"):
                    value = {ast.Add: lambda: x + y, ast.Sub: lambda: x - y,
                             ast.Mult: lambda: x * y, ast.Div: lambda: x / y,
                             ast.Pow: lambda: x ** y}[type(node.op)]()
            except (ZeroDivisionError, OverflowError, FloatingPointError):
                raise ExpressionError(f"constant arithmetic fails {where}") from None
            if isinstance(value, complex):
                raise ExpressionError(f"constant arithmetic is complex {where}")
            return _number(value, node, text)
        if isinstance(node.op, ast.Div) and b.is_zero:
            raise ExpressionError(f"division by zero {where}")
        return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b, ast.Pow: lambda: a ** b}[type(node.op)]()
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS:
            shown = name or ast.unparse(node.func)
            raise ExpressionError(f"only {', '.join(sorted(_FUNCTIONS))} may be called; got a "
                                  f"call of {shown!r} {where}")
        if node.keywords:
            raise ExpressionError(f"{name}() takes no keyword arguments {where}")
        lo, hi = _ARITY[name]
        if not lo <= len(node.args) <= hi:
            raise ExpressionError(f"{name}() takes {lo if lo == hi else f'{lo} to {hi}'} "
                                  f"argument(s); got {len(node.args)} {where}")
        return _FUNCTIONS[name](*(_build(a, text, depth + 1) for a in node.args))
    raise ExpressionError(f"{type(node).__name__} is not allowed in a law's expression {where}")


def _range(name: str, spec: Any) -> tuple[float, float]:
    if not isinstance(spec, Sequence) or isinstance(spec, str) or len(spec) != 2:
        raise ValueError(f"params[{name!r}] must be a (low, high) range; got {spec!r}")
    lo, hi = (check_scalar(f"params[{name!r}]", v) for v in spec)
    if not lo < hi:
        raise ValueError(f"params[{name!r}] must have low < high; got ({lo:g}, {hi:g})")
    return lo, hi


class ExpressionLaw:
    """A law ``target = f(axes; parameters)`` written as an expression.

    Parameters
    ----------
    expr : str or sympy expression
        Strings go through :func:`parse_expression`.
    axes : sequence of str
        The names that are data columns (strictly positive).
    params : mapping of name -> (low, high), optional
        Search ranges of the parameters (every other name).  A range inside
        ``(0, ∞)`` declares the parameter positive and is searched
        log-uniformly; one that includes 0 or negatives is searched
        uniformly.  Undeclared parameters get ``(1e-3, 1e3)``.

    Examples
    --------
    >>> law = ExpressionLaw("E + A/N**alpha", axes=["N"],
    ...                     params={"E": (0.1, 10), "A": (1, 1e4), "alpha": (0.05, 2)})
    >>> law.params
    ('A', 'E', 'alpha')
    >>> law.elasticity("N")
    A*alpha/(A + E*N**alpha)
    >>> law.asymptote("N")
    E
    >>> bound = law.bind(E=1.5, A=400.0, alpha=0.3)
    >>> round(float(bound.loss({"N": 1e9})), 6)  # 1.5 + 400·10**-2.7
    2.298105
    >>> bound.to_law()
    PosynomialLaw(floor=1.5, terms='400*N**-0.3')
    """

    DEFAULT_RANGE: ClassVar[tuple[float, float]] = (1e-3, 1e3)

    def __init__(self, expr: str | sp.Expr, axes: Sequence[str],
                 params: Mapping[str, Any] | None = None) -> None:
        # Anything but a string or a sympy expression is refused as it is, not sympified:
        # sympify raised SympifyError for object() and parses bytes as code.
        parsed = parse_expression(expr) if isinstance(expr, str) else expr
        if not isinstance(parsed, sp.Expr):
            raise TypeError(f"expr must be a string or a sympy expression; got {expr!r:.60}")
        if (isinstance(axes, str) or not isinstance(axes, Sequence)
                or not all(isinstance(a, str) for a in axes)):
            raise TypeError(f"axes must be a sequence of names; got {axes!r}")
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping of name -> (low, high); got {params!r}")
        names = {s.name for s in parsed.free_symbols}
        missing = [a for a in axes if a not in names]
        if missing or not axes:
            raise ValueError(f"axes {missing or list(axes)} do not appear in the expression "
                             f"{parsed}" if axes else "axes must name at least one axis")
        declared = dict(params or {})
        unknown = sorted(set(declared) - names)
        if unknown:
            raise ValueError(f"params names {unknown}, which do not appear in {parsed}")
        both = sorted(set(declared) & set(axes))
        if both:
            raise ValueError(f"{both} are declared both as axes and as params")
        self.axes = tuple(axes)
        self.params = tuple(sorted(names - set(axes)))
        self.ranges = {p: _range(p, declared[p]) if p in declared else self.DEFAULT_RANGE
                       for p in self.params}
        # Positive symbols let sympy simplify logs and powers correctly.
        self._sym = {a: sp.Symbol(a, positive=True) for a in self.axes}
        for p in self.params:
            lo, _ = self.ranges[p]
            self._sym[p] = sp.Symbol(p, positive=True) if lo > 0 else sp.Symbol(p, real=True)
        self.expr = parsed.xreplace({sp.Symbol(n, real=True): self._sym[n] for n in names})

    @property
    def positive(self) -> dict[str, bool]:
        """Per parameter, whether its range lies in ``(0, ∞)`` (fitted in log space)."""
        return {p: self.ranges[p][0] > 0 for p in self.params}

    # -- symbolic ----------------------------------------------------------
    def symbol(self, name: str) -> sp.Symbol:
        """The sympy symbol of an axis or parameter."""
        if not isinstance(name, str):
            raise TypeError(f"name must be an axis or parameter name (str); got {name!r}")
        if name not in self._sym:
            raise ValueError(f"name={name!r} is neither an axis nor a parameter of {self.expr}; "
                             f"axes {list(self.axes)}, params {list(self.params)}")
        return self._sym[name]

    def elasticity(self, axis: str) -> sp.Expr:
        """``−∂ log f / ∂ log x`` for ``axis``, simplified by sympy."""
        x = self.symbol(axis)
        return sp.simplify(-x * sp.diff(self.expr, x) / self.expr)

    def inverse(self, axis: str, target: str = "y") -> list[sp.Expr]:
        """Real solutions of ``f = target`` for ``axis``.

        Empty when sympy finds none or has no algorithm for the equation
        (transcendental mixtures); :meth:`BoundLaw.solve_for` then inverts
        numerically.
        """
        x = self.symbol(axis)
        y = sp.Symbol(target, positive=True)
        try:
            roots = sp.solve(sp.Eq(self.expr, y), x)
        except NotImplementedError:  # sympy: "no algorithms are implemented to solve"
            return []
        return [s for s in roots if not s.has(sp.I)]

    def asymptote(self, axis: str, at: Any = sp.oo) -> sp.Expr:
        """``lim f`` as ``axis`` tends to ``at`` (∞ by default)."""
        return sp.limit(self.expr, self.symbol(axis), at)

    def latex(self) -> str:
        return sp.latex(self.expr)

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"

    def __repr__(self) -> str:
        return f"ExpressionLaw({str(self.expr)!r}, axes={list(self.axes)})"

    # -- numeric -----------------------------------------------------------
    @cached_property
    def _functions(self) -> tuple[Any, Any]:
        """``f`` and ``∂f/∂θ`` as numpy functions of (axes..., params...)."""
        args = [self._sym[n] for n in (*self.axes, *self.params)]
        f = sp.lambdify(args, self.expr, modules="numpy")
        grads = sp.lambdify(args, [sp.diff(self.expr, self._sym[p]) for p in self.params],
                            modules="numpy")
        return f, grads

    def _args(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> list[np.ndarray]:
        """Validated arrays (axes, then parameters) in the lambdified functions' order."""
        values, params = check_mapping("values", values), check_mapping("params", params)
        for label, given, need in (("values", values, self.axes),
                                   ("params", params, self.params)):
            missing = [n for n in need if n not in given]
            if missing:
                raise ValueError(f"{label} must give {list(need)}; missing {missing}")
        args = [check_real(a, values[a], low=0.0, low_open=True) for a in self.axes]
        args += [check_real(p, params[p]) for p in self.params]
        try:
            np.broadcast_shapes(*(a.shape for a in args))
        except ValueError:
            raise ValueError(f"the shapes of the values and params "
                             f"{[a.shape for a in args]} do not broadcast together") from None
        return args

    def evaluate(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> np.ndarray:
        """``f`` at axis ``values`` (> 0) and parameter values (broadcasting)."""
        f, _ = self._functions
        args = self._args(values, params)
        with np.errstate(all="ignore"):
            out = f(*args)
        return np.broadcast_to(np.asarray(out, dtype=float), np.broadcast_shapes(
            *(np.shape(a) for a in args)))

    def gradient(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> np.ndarray:
        """``∂f/∂θ_j`` stacked on the last axis (one column per parameter)."""
        _, g = self._functions
        args = self._args(values, params)
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        with np.errstate(all="ignore"):
            cols = [np.broadcast_to(np.asarray(c, dtype=float), shape) for c in g(*args)]
        return np.stack(cols, axis=-1)

    def bind(self, values: Mapping[str, float] | None = None, **kwargs: float) -> BoundLaw:
        """The law at fixed parameter values."""
        given = dict(check_mapping("values", values) if values is not None else {}, **kwargs)
        missing = [p for p in self.params if p not in given]
        extra = [p for p in given if p not in self.params]
        if missing or extra:
            raise ValueError(f"bind needs a value for every parameter {list(self.params)}; "
                             f"missing {missing}, unknown {extra}")
        return BoundLaw(self, {p: check_scalar(p, given[p]) for p in self.params})


class BoundLaw:
    """An :class:`ExpressionLaw` at fixed parameter values (see :meth:`ExpressionLaw.bind`)."""

    def __init__(self, law: ExpressionLaw, params: Mapping[str, float]) -> None:
        self.law = law
        self.params = dict(params)
        self.axes = law.axes
        self.expr = law.expr.xreplace({law.symbol(p): sp.Float(v) for p, v in params.items()})

    def loss(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """The law's value at axis ``values`` (a mapping or keywords; vectorised)."""
        vals = dict(check_mapping("values", values) if values is not None else {}, **kwargs)
        out = self.law.evaluate(vals, self.params)
        return float(out) if out.ndim == 0 else out

    __call__ = loss

    def elasticities(self, values: Mapping[str, Any]) -> dict[str, float]:
        """``−∂ log f / ∂ log x`` per axis at ``values`` (from the symbolic form)."""
        values = check_mapping("values", values)
        missing = [a for a in self.axes if a not in values]
        if missing:
            raise ValueError(f"values must give {list(self.axes)}; missing {missing}")
        subs = {self.law.symbol(a): check_scalar(a, values[a], low=0.0, low_open=True)
                for a in self.axes}
        subs.update({self.law.symbol(p): v for p, v in self.params.items()})
        return {a: float(self.law.elasticity(a).xreplace(subs)) for a in self.axes}

    def solve_for(self, axis: str, target: float, values: Mapping[str, float]) -> float:
        """The value of ``axis`` at which the law equals ``target`` (others at ``values``).

        Numeric (Brent's method in ``log axis`` over ``[1e-300, 1e300]``), for
        laws whose symbolic :meth:`ExpressionLaw.inverse` sympy cannot find;
        a ``ValueError`` says when ``target`` is not bracketed there.
        """
        from scipy.optimize import brentq

        if not isinstance(axis, str) or axis not in self.axes:
            raise ValueError(f"axis must be one of {list(self.axes)}; got {axis!r}")
        target = check_scalar("target", target)
        values = check_mapping("values", values)
        missing = [a for a in self.axes if a != axis and a not in values]
        if missing:
            raise ValueError(f"values must give the other axes; missing {missing}")
        others = {a: check_scalar(a, values[a], low=0.0, low_open=True)
                  for a in self.axes if a != axis}

        def gap(t: float) -> float:
            return float(self.law.evaluate({**others, axis: math.exp(t)}, self.params)) - target

        lo, hi = -690.0, 690.0
        g_lo, g_hi = gap(lo), gap(hi)
        if not (math.isfinite(g_lo) and math.isfinite(g_hi)) or g_lo * g_hi > 0:
            raise ValueError(f"target={target:g} is not reached for {axis} in [1e-300, 1e300]: "
                             f"the law runs from {g_lo + target:.6g} to {g_hi + target:.6g}")
        return math.exp(brentq(gap, lo, hi, xtol=1e-14, rtol=1e-15))

    def to_law(self) -> PosynomialLaw | None:
        """A :class:`PosynomialLaw` when ``f = floor + posynomial`` with decreasing terms.

        That is the shape the geometric-programming allocator needs; ``None``
        otherwise (allocate it with a general nonlinear solver instead).
        """
        terms = sp.Add.make_args(sp.expand(self.expr))
        floor = 0.0
        monomials = []
        axis_syms = {self.law.symbol(a): a for a in self.axes}
        for term in terms:
            coeff, rest = term.as_coeff_Mul()
            powers: dict[str, float] = {}
            for factor in sp.Mul.make_args(rest) if rest != 1 else ():
                base, exp = factor.as_base_exp()
                if base not in axis_syms or not exp.is_Number:
                    return None
                powers[axis_syms[base]] = powers.get(axis_syms[base], 0.0) + float(exp)
            c = float(coeff)
            if not powers:
                floor += c
                continue
            if c <= 0 or any(e >= 0 for e in powers.values()):
                return None
            monomials.append(Monomial(c, tuple(sorted(powers.items()))))
        if floor < 0 or not monomials:
            return None
        return PosynomialLaw(floor, Posynomial(tuple(monomials)), self.axes)

    def __repr__(self) -> str:
        return f"BoundLaw({self.expr})"


class PosynomialLaw(Law):
    """``L = floor + P(x)`` for any decreasing posynomial ``P`` (e.g. from an expression).

    Examples
    --------
    >>> from rlscale.theory import parse_posynomial
    >>> law = PosynomialLaw(0.5, parse_posynomial("2*N**-0.5*D**-0.25 + D**-1"))
    >>> law.axes, round(law.loss(N=4.0, D=16.0), 6)
    (('D', 'N'), 1.0625)
    """

    family: ClassVar[str] = "posynomial"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True, convex=True, log_log_convex=True, gp_compatible=True,
        bounded=False, domain="every axis value finite and > 0")

    def __init__(self, floor: float, terms: Posynomial | str,
                 axes: Sequence[str] | None = None) -> None:
        from rlscale.theory._posynomial import PosynomialError, parse_posynomial

        try:
            poly = parse_posynomial(terms) if isinstance(terms, str) else terms
        except PosynomialError as exc:
            raise ValueError(f"terms {terms!r:.80} is not a posynomial: {exc}") from None
        if not isinstance(poly, Posynomial) or not poly.terms:
            raise TypeError(f"terms must be a non-empty Posynomial or its text; got {terms!r}")
        for m in poly.terms:
            if not m.exponents or any(e >= 0 for _, e in m.exponents):
                raise ValueError(f"term {m} must decrease in every axis it has (negative "
                                 "exponents only)")
        self.floor = check_scalar("floor", floor, low=0.0)
        self._poly = poly
        if axes is not None and (isinstance(axes, str) or not isinstance(axes, Sequence)
                                 or not all(isinstance(a, str) for a in axes)):
            raise TypeError(f"axes must be a sequence of names; got {axes!r}")
        names = tuple(axes) if axes is not None else poly.axes
        if set(names) != set(poly.axes):
            raise ValueError(f"axes {list(names)} must be the posynomial's axes "
                             f"{list(poly.axes)}")
        self.axes = names

    def reducible_posynomial(self) -> Posynomial:
        return self._poly

    def params(self) -> dict[str, Any]:
        return {"floor": self.floor, "terms": str(self._poly)}

    def expression(self, symbolic: bool = False) -> Any:
        check_bool("symbolic", symbolic)
        syms = self.symbols
        out = sp.Float(self.floor)
        for m in self._poly.terms:
            out += sp.Float(m.coefficient) * sp.Mul(*(syms[a] ** sp.Float(e)
                                                     for a, e in m.exponents))
        return out

    def __repr__(self) -> str:
        return f"PosynomialLaw(floor={self.floor!r}, terms={str(self._poly)!r})"
