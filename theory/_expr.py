"""Laws written as expressions: a whitelisting parser and :class:`ExpressionLaw`.

Researchers write their own scaling forms — ``"E + A/N**alpha + B/D**beta"``,
a sigmoid in compute, a law with an interaction term.  :func:`parse_expression`
turns such a string into a sympy expression **without** ``eval`` or
``sympify``: Python's own parser (``ast.parse``) reads the text into a syntax
tree, and only these nodes are accepted —

* numbers (finite floats), names (ASCII letters, digits, ``_``; not a function
  name);
* ``+``, ``-`` (binary and unary), ``*``, ``/``, ``**`` and parentheses;
* calls of ``exp``, ``log``, ``sqrt``, ``abs``, ``min``, ``max`` and
  ``sigmoid(x) = 1/(1 + exp(-x))``.

Anything else (attributes, subscripts, other calls, keywords, lambdas,
comparisons, strings, ``^`` and the other operators) is refused with an
:class:`ExpressionError` that says what and where; non-ASCII text is refused
because Python folds identifiers by NFKC (a fullwidth ``Ｎ`` would silently be
``N``) and look-alike letters (Cyrillic ``А``) would pass for Latin ones.  The
size of the input is bounded (characters, nodes, nesting depth), and constant
sub-expressions are folded in floats, so no input can make the parser build a
huge integer or run for long, and an overflowing or undefined constant
(``exp(1000)``, ``log(0)``, ``sqrt(-1)``) is an error, not ``inf`` or a
complex number.

:class:`ExpressionLaw` separates a parsed expression's names into **axes**
(the data's columns) and **parameters** (fitted), each with a declared range
or none.  It derives what a researcher asks of a law — elasticities,
inverses, asymptotes, LaTeX — symbolically where sympy can in bounded time,
and says so where it cannot; bound to parameter values it evaluates
(vectorised, through a compiled tape with exact reverse-mode derivatives,
:mod:`rlscale.theory._expr_tape`) and, when the bound expression is a
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

from rlscale.theory._expr_tape import Tape
from rlscale.theory._laws import Law, LawProperties
from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._validation import check_bool, check_mapping, check_real, check_scalar

__all__ = ["ExpressionError", "ExpressionLaw", "PosynomialLaw", "parse_expression"]

#: Symbolic work is attempted only on expressions of at most this many operations
#: (``sympy.count_ops``): ``simplify``/``solve`` above :data:`SIMPLIFY_LIMIT`, ``limit``
#: and ``expand`` above :data:`SYMBOLIC_LIMIT` can take minutes.
SIMPLIFY_LIMIT, SYMBOLIC_LIMIT = 60, 300
#: Limits on the input: characters, syntax-tree nodes, nesting depth (after chains of
#: ``+``/``-`` and ``*``/``/`` are flattened, so a sum of many terms is not deep).  A
#: published learning-rate/batch-size law is about 660 nodes; the limits leave room.
MAX_LENGTH, MAX_NODES, MAX_DEPTH = 20_000, 4000, 60


class ExpressionError(ValueError):
    """An expression string that the whitelisting parser refuses."""


ExpressionError.__module__ = "rlscale.theory"  # its public home, shown in tracebacks


def _sigmoid(x: sp.Expr) -> sp.Expr:
    return 1 / (1 + sp.exp(-x))


_FUNCTIONS: dict[str, Any] = {"exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "min": sp.Min,
                              "max": sp.Max, "sigmoid": _sigmoid, "abs": sp.Abs}
_ARITY = {"exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "sigmoid": (1, 1), "abs": (1, 1),
          "min": (2, 8), "max": (2, 8)}
#: Names that cannot be axes or parameters: the callable functions (a parameter named
#: ``exp`` would shadow the function).
RESERVED = frozenset(_FUNCTIONS)
_OPERATORS = {ast.BitXor: "^", ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@",
              ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>"}
#: Non-ASCII characters people paste from papers, and what to write instead.
_ASCII_FOR = {"\u2212": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u2215": "/",
              "\u00f7": "/", "\u00b2": "**2", "\u00b3": "**3", "\u2013": "-"}


def _number(value: float, where: str) -> sp.Float:
    if not math.isfinite(value):
        raise ExpressionError(f"constant arithmetic overflows {where}")
    return sp.Float(value)


def _check_characters(text: str) -> None:
    """Refuse non-ASCII text: Python's parser folds identifiers by NFKC (a fullwidth
    ``Ｎ`` *is* ``N`` to it), and look-alike letters (a Cyrillic ``А``) print like
    Latin ones, so two different names could merge or one could pass for another."""
    import unicodedata

    for col, ch in enumerate(text, start=1):
        if ch.isascii():
            continue
        name = unicodedata.name(ch, "unnamed character")
        folded = unicodedata.normalize("NFKC", ch)
        if ch in _ASCII_FOR:
            hint = f"write {_ASCII_FOR[ch]!r} instead"
        elif folded != ch and folded.isascii():
            hint = (f"Python would read it as {folded!r} (NFKC normalisation), silently "
                    f"merging it with the ASCII name")
        elif ch.isalpha():
            hint = ("names must be ASCII letters, digits and _ (a non-Latin letter can look "
                    "like a Latin one; spell Greek letters out: alpha, beta)")
        else:
            hint = "write expressions in ASCII"
        raise ExpressionError(f"non-ASCII character {ch!r} (U+{ord(ch):04X} {name}) at "
                              f"column {col} of {text!r}: {hint}")


def parse_expression(text: str) -> sp.Expr:
    """Parse a law's expression through the whitelist (no ``eval``/``sympify``).

    Names become real sympy symbols; :class:`ExpressionLaw` later declares
    which are axes and which are parameters.  Constant sub-expressions are
    folded in floats, so an overflowing or undefined constant (``exp(1000)``,
    ``log(0)``, ``sqrt(-1)``) is refused here, with its column, instead of
    becoming ``inf`` or a complex number later.

    Examples
    --------
    >>> parse_expression("E + A/N**alpha")
    A/N**alpha + E
    >>> parse_expression("__import__('os')")
    Traceback (most recent call last):
    ...
    rlscale.theory.ExpressionError: only abs, exp, log, max, min, sigmoid, sqrt may be \
called; got a call of '__import__' at column 1 of "__import__('os')"
    >>> parse_expression("E + A/N^alpha")
    Traceback (most recent call last):
    ...
    rlscale.theory.ExpressionError: '^' is not a power here: write ** for powers (a^b is \
a**b); at column 8 of 'E + A/N^alpha'
    """
    if not isinstance(text, str):
        raise TypeError(f"expression must be a str; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is {len(text)} characters long; the limit is "
                              f"{MAX_LENGTH}")
    if not text.strip():
        raise ExpressionError("expression is empty")
    _check_characters(text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"expression {text!r:.200} is not valid syntax: {exc.msg} at "
                              f"column {exc.offset}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression nests deeper than {MAX_DEPTH} levels") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise ExpressionError(f"expression has {nodes} syntax nodes; the limit is {MAX_NODES}")
    out = _build(tree.body, text.strip(), 0)
    if out.has(sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I):  # e.g. an undefined power
        raise ExpressionError(f"expression {text!r:.200} is undefined or complex ({out})")
    return out


def _chain(node: ast.AST, ops: tuple[type, ...]) -> list[tuple[ast.AST, type | None]]:
    """A left-nested chain of binary ``ops`` as ``[(operand, op applied to it)]``, iteratively
    (``a - b + c`` is ``[(a, None), (b, Sub), (c, Add)]``), so long sums are not deep."""
    items: list[tuple[ast.AST, type | None]] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ops):
        items.append((node.right, type(node.op)))
        node = node.left
    items.append((node, None))
    return items[::-1]


def _fold(fn: Any, args: list[float], where: str) -> sp.Float:
    try:
        with np.errstate(all="raise"):
            value = fn(*args)
    except ZeroDivisionError:
        raise ExpressionError(f"constant arithmetic fails (division by zero) {where}") from None
    except (OverflowError, FloatingPointError):
        raise ExpressionError(f"constant arithmetic fails (overflows float64) {where}") from None
    except ValueError:  # math domain error: log(0), log(-1), sqrt(-1)
        raise ExpressionError(f"constant is undefined or complex {where}") from None
    if isinstance(value, complex):
        raise ExpressionError(f"constant arithmetic is complex {where}")
    return _number(float(value), where)


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


_FOLD = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "sigmoid": _sig, "abs": abs,
         "min": min, "max": max}


def _build(node: ast.AST, text: str, depth: int) -> sp.Expr:
    if depth > MAX_DEPTH:
        raise ExpressionError(f"expression nests deeper than {MAX_DEPTH} levels")
    where = f"at column {getattr(node, 'col_offset', 0) + 1} of {text!r:.200}"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"only numbers may appear as constants; got "
                                  f"{node.value!r:.40} {where}")
        try:
            return _number(float(node.value), where)
        except OverflowError:
            raise ExpressionError(f"the number {where} is too large") from None
    if isinstance(node, ast.Name):
        if node.id in RESERVED:
            raise ExpressionError(f"{node.id!r} is a function name and cannot be an axis or "
                                  f"parameter {where}: call it ({node.id}(...)) or rename "
                                  f"the variable")
        return sp.Symbol(node.id, real=True)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _build(node.operand, text, depth + 1)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        sym = _OPERATORS[type(node.op)]
        col = text.find(sym, getattr(node.left, "end_col_offset", 0) or 0)
        where = f"at column {col + 1} of {text!r:.200}" if col >= 0 else where
        if sym == "^":
            raise ExpressionError(f"'^' is not a power here: write ** for powers (a^b is a**b); "
                                  f"{where}")
        raise ExpressionError(f"operator {sym!r} is not allowed (allowed: + - * / **) {where}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.Div):
        additive = isinstance(node.op, ast.Add | ast.Sub)
        items = _chain(node, (ast.Add, ast.Sub) if additive else (ast.Mult, ast.Div))
        acc = _build(items[0][0], text, depth + 1)
        for operand, op in items[1:]:
            b = _build(operand, text, depth + 1)
            acc = _binary(acc, b, op, where)
        return acc
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        a, b = _build(node.left, text, depth + 1), _build(node.right, text, depth + 1)
        return _binary(a, b, ast.Pow, where)
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS:
            shown = name or ast.unparse(node.func)
            raise ExpressionError(f"only {', '.join(sorted(_FUNCTIONS))} may be called; got a "
                                  f"call of {shown!r:.40} {where}")
        if node.keywords:
            raise ExpressionError(f"{name}() takes no keyword arguments {where}")
        lo, hi = _ARITY[name]
        if not lo <= len(node.args) <= hi:
            raise ExpressionError(f"{name}() takes {lo if lo == hi else f'{lo} to {hi}'} "
                                  f"argument(s); got {len(node.args)} {where}")
        args = [_build(a, text, depth + 1) for a in node.args]
        if all(a.is_Number for a in args):  # fold in floats: exp(1000) overflows here
            return _fold(_FOLD[name], [float(a) for a in args], f"in {name}() {where}")
        return _FUNCTIONS[name](*args)
    raise ExpressionError(f"{type(node).__name__} is not allowed in a law's expression {where}")


def _binary(a: sp.Expr, b: sp.Expr, op: type, where: str) -> sp.Expr:
    if a.is_Number and b.is_Number:  # fold constants in floats, never big integers
        x, y = float(a), float(b)
        fn = {ast.Add: lambda: x + y, ast.Sub: lambda: x - y, ast.Mult: lambda: x * y,
              ast.Div: lambda: x / y, ast.Pow: lambda: x ** y}[op]
        return _fold(fn, [], where)
    if op is ast.Div and b.is_zero:
        raise ExpressionError(f"division by zero {where}")
    if op is ast.Pow and a.is_zero and b.is_Number and float(b) < 0:
        raise ExpressionError(f"division by zero (0 to a negative power) {where}")
    return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
            ast.Div: lambda: a / b, ast.Pow: lambda: a ** b}[op]()


def _range(name: str, spec: Any) -> tuple[float, float]:
    if not isinstance(spec, Sequence) or isinstance(spec, str) or len(spec) != 2:
        raise ValueError(f"params[{name!r}] must be a (low, high) range; got {spec!r}")
    lo, hi = (check_scalar(f"params[{name!r}]", v, allow_inf=True) for v in spec)
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
        The names that are data columns (values >= 0; a law may be evaluated at 0
        where it is finite there, e.g. a mixture proportion).
    params : mapping of name -> (low, high), optional
        Declared ranges of the parameters (every other name); ``-inf``/``inf``
        leave a side open.  The fitter takes them as hard bounds (or, asked to,
        as search ranges only).  A range with ``low >= 0`` declares the
        parameter non-negative (fitted in log space).  Undeclared parameters
        are real numbers of either sign, ``(-inf, inf)``: the fitter finds their
        starts from the data (:func:`rlscale.optimize.fit_expression`).

    Notes
    -----
    Symbolic derivations read an undeclared parameter as positive, the usual
    reading of a scaling law's constants (so ``E + A/N**alpha`` tends to ``E``);
    declare a range with a negative lower end for one that can be negative.
    Evaluation and fitting make no such assumption.

    Numbers come from a compiled tape of numpy operations with reverse-mode
    derivatives (:mod:`rlscale.theory._expr_tape`), never from ``lambdify``.
    Symbolic work is bounded: :meth:`elasticity` simplifies only small
    expressions without ``min``/``max`` (others are returned as derived),
    :meth:`inverse` returns ``[]`` for large or piecewise expressions (use
    :meth:`BoundLaw.solve_for`), :meth:`asymptote` refuses expressions of more
    than :data:`SYMBOLIC_LIMIT` operations.

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

    DEFAULT_RANGE: ClassVar[tuple[float, float]] = (-math.inf, math.inf)

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
        reserved = sorted((names | set(axes)) & RESERVED)
        if reserved:  # a sympy expression given directly skips the parser's check
            raise ValueError(f"{reserved} are function names and cannot be axes or parameters; "
                             "rename them")
        self.axes = tuple(axes)
        self.params = tuple(sorted(names - set(axes)))
        self.declared = frozenset(declared)
        self.ranges = {p: _range(p, declared[p]) if p in declared else self.DEFAULT_RANGE
                       for p in self.params}
        # Symbolic work reads an undeclared parameter as positive (the usual reading of a
        # scaling law's constants: E + A/N**alpha tends to E); a parameter declared with a
        # negative lower end is real.  Numbers come from an expression whose undeclared
        # parameters are real, so that sympy's simplifications under positivity (such as
        # sqrt(A**2) -> A) never change a value the fitter computes at a negative one.
        self._sym = {a: sp.Symbol(a, positive=True) for a in self.axes}
        numeric = dict(self._sym)
        for p in self.params:
            lo, _ = self.ranges[p]
            self._sym[p] = sp.Symbol(p, positive=True) if lo >= 0 or p not in declared else (
                sp.Symbol(p, real=True))
            numeric[p] = self._sym[p] if p in declared else sp.Symbol(p, real=True)
        self.expr = parsed.xreplace({s: self._sym[s.name] for s in parsed.free_symbols})
        self._numeric = parsed.xreplace({s: numeric[s.name] for s in parsed.free_symbols})
        self._numeric_symbols = [numeric[n] for n in (*self.axes, *self.params)]

    @property
    def positive(self) -> dict[str, bool]:
        """Per parameter, whether its declared range lies in ``[0, ∞)`` (fitted in log space)."""
        return {p: self.ranges[p][0] >= 0 for p in self.params}

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
        """``−∂ log f / ∂ log x`` for ``axis``, simplified by sympy where that is cheap
        (an expression of at most :data:`SIMPLIFY_LIMIT` operations without min/max)."""
        x = self.symbol(axis)
        raw = -x * sp.diff(self.expr, x) / self.expr
        if sp.count_ops(self.expr) > SIMPLIFY_LIMIT or self.expr.has(sp.Min, sp.Max):
            return raw
        return sp.simplify(raw)

    def inverse(self, axis: str, target: str = "y") -> list[sp.Expr]:
        """Real solutions of ``f = target`` for ``axis``.

        Empty when sympy finds none or has no algorithm for the equation
        (transcendental mixtures); :meth:`BoundLaw.solve_for` then inverts
        numerically.
        """
        x = self.symbol(axis)
        y = sp.Symbol(target, positive=True)
        if (sp.count_ops(self.expr) > SIMPLIFY_LIMIT
                or self.expr.has(sp.Min, sp.Max, sp.Abs)):  # unbounded symbolic work
            return []
        try:
            roots = sp.solve(sp.Eq(self.expr, y), x)
        except NotImplementedError:  # sympy: "no algorithms are implemented to solve"
            return []
        return [s for s in roots if not s.has(sp.I)]

    def asymptote(self, axis: str, at: Any = sp.oo) -> sp.Expr:
        """``lim f`` as ``axis`` tends to ``at`` (∞ by default); a ``ValueError`` for an
        expression of more than :data:`SYMBOLIC_LIMIT` operations (sympy's limit is
        not bounded in time)."""
        ops = sp.count_ops(self.expr)
        if ops > SYMBOLIC_LIMIT:
            raise ValueError(f"the expression has {ops} operations, more than the "
                             f"{SYMBOLIC_LIMIT} a symbolic limit is attempted on; evaluate "
                             "the bound law at large values instead")
        return sp.limit(self.expr, self.symbol(axis), at)

    def latex(self) -> str:
        return sp.latex(self.expr)

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"

    def __repr__(self) -> str:
        return f"ExpressionLaw({str(self.expr)!r}, axes={list(self.axes)})"

    # -- numeric -----------------------------------------------------------
    @cached_property
    def _tape(self) -> Tape:
        """The expression compiled for numbers, inputs (axes..., params...)."""
        return Tape(self._numeric, self._numeric_symbols)

    def _args(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> list[np.ndarray]:
        """Validated arrays (axes, then parameters) in the tape's order."""
        values, params = check_mapping("values", values), check_mapping("params", params)
        for label, given, need in (("values", values, self.axes),
                                   ("params", params, self.params)):
            missing = [n for n in need if n not in given]
            if missing:
                raise ValueError(f"{label} must give {list(need)}; missing {missing}")
        args = [check_real(a, values[a], low=0.0) for a in self.axes]
        args += [check_real(p, params[p]) for p in self.params]
        try:
            np.broadcast_shapes(*(a.shape for a in args))
        except ValueError:
            raise ValueError(f"the shapes of the values and params "
                             f"{[a.shape for a in args]} do not broadcast together") from None
        return args

    def evaluate(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> np.ndarray:
        """``f`` at axis ``values`` (>= 0) and parameter values (broadcasting).

        A ``ValueError`` where the law is undefined or infinite (``log`` of a
        negative number, ``A/N**a`` at ``N = 0``): never NaN.
        """
        out = self._raw(values, params)
        _check_finite(self, out, values, params)
        return out

    def _raw(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> np.ndarray:
        """:meth:`evaluate` without the finiteness check (NaN outside the domain)."""
        args = self._args(values, params)
        out = self._tape.value(args)
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, *(a.shape for a in args)))

    def gradient(self, values: Mapping[str, Any], params: Mapping[str, Any]) -> np.ndarray:
        """``∂f/∂θ_j`` stacked on the last axis (one column per parameter); a
        ``ValueError`` where the law or a derivative is not finite."""
        args = self._args(values, params)
        n = len(self.axes)
        f, grads = self._tape.gradient(args, wrt=range(n, n + len(self.params)))
        if not grads:
            return np.zeros((*f.shape, 0))
        out = np.stack(grads, axis=-1)
        _check_finite(self, f, values, params)
        _check_finite(self, out, values, params, what="the derivatives of ")
        return out

    def bind(self, values: Mapping[str, float] | None = None, **kwargs: float) -> BoundLaw:
        """The law at fixed parameter values."""
        given = dict(check_mapping("values", values) if values is not None else {}, **kwargs)
        missing = [p for p in self.params if p not in given]
        extra = [p for p in given if p not in self.params]
        if missing or extra:
            raise ValueError(f"bind needs a value for every parameter {list(self.params)}; "
                             f"missing {missing}, unknown {extra}")
        return BoundLaw(self, {p: check_scalar(p, given[p]) for p in self.params})


def _check_finite(law: ExpressionLaw, out: np.ndarray, values: Mapping[str, Any],
                  params: Mapping[str, Any], what: str = "") -> None:
    """``ValueError`` naming the first point where ``out`` is not finite."""
    if np.all(np.isfinite(out)):
        return
    bad = np.argwhere(~np.isfinite(np.atleast_1d(out)))[0]
    shape = np.shape(out)
    point = []
    for name, given in [*((a, values[a]) for a in law.axes),
                        *((p, params[p]) for p in law.params)]:
        arr = np.asarray(given, dtype=float)
        try:
            v = np.broadcast_to(arr, shape)[tuple(bad[:len(shape)])] if shape else arr
        except ValueError:
            v = arr.ravel()[0]
        point.append(f"{name}={float(v):g}")
    raise ValueError(f"{what}the law {law.expr} is not finite (undefined, or infinite) at "
                     f"{', '.join(point)}: outside its domain")


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
        point = [check_scalar(a, values[a], low=0.0, low_open=True) for a in self.axes]
        # Numerically, from the tape's exact derivatives: -x (∂f/∂x) / f.
        f, grads = self.law._tape.gradient(
            [*point, *(self.params[p] for p in self.law.params)], wrt=range(len(self.axes)))
        return {a: float(-x * g / f) for a, x, g in zip(self.axes, point, grads)}

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
            return float(self.law._raw({**others, axis: math.exp(t)}, self.params)) - target

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
        if sp.count_ops(self.expr) > SYMBOLIC_LIMIT:  # expand() could blow up
            return None
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
