"""Numeric evaluation of a law's expression: a tape of numpy operations and its gradient.

:class:`Tape` compiles a sympy expression once into a list of elementwise
numpy operations (a directed acyclic graph: structurally equal subexpressions,
which sympy stores once, are computed once) and evaluates it, with
broadcasting, together with its derivatives by reverse-mode accumulation
(Griewank & Walther 2008, *Evaluating Derivatives*, 2nd ed., ch. 3): one
forward pass stores every node's value, one backward pass carries the adjoint
``∂f/∂node`` from the output to the inputs.  The work is a small constant
times the number of nodes for the value *and* all derivatives together, so a
law of a thousand nodes and thirty parameters costs what its value costs, and
nothing symbolic is differentiated: ``min``/``max`` pass their adjoint to the
argument they select (a subgradient at ties, the first one), where sympy's
symbolic derivative of nested ``Min``/``Max`` is a tree of ``Heaviside`` terms
whose ``lambdify`` took 17 to 70 s (issue 30).

Local derivative rules (``ā`` is the adjoint of a node's output ``v``):

* ``a + b + …``: ``ā`` to each term; ``a·b·…``: ``ā·Π_{j≠i}`` to factor ``i``
  (prefix and suffix products, so a zero factor is exact);
* ``a**b``: ``ā·b·a**(b−1)`` to ``a`` and, where ``b`` is not a constant,
  ``ā·v·log a`` to ``b`` (0 where ``v = 0``);
* ``exp a``: ``ā·v``; ``log a``: ``ā/a``; ``|a|``: ``ā·sign a``;
  ``sin``, ``cos``, ``tanh``: their derivatives.

Outside a function's domain (``log`` of a negative number, a negative base
to a fractional power) the value is NaN, never an exception: the fitter treats
such points as outside the law's valid region.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

__all__: list[str] = []

# Op codes of the tape.
_CONST, _INPUT, _ADD, _MUL, _POW, _EXP, _LOG, _MIN, _MAX, _ABS, _SIN, _COS, _TANH = range(13)
_UNARY = {sp.exp: _EXP, sp.log: _LOG, sp.Abs: _ABS, sp.sin: _SIN, sp.cos: _COS,
          sp.tanh: _TANH}
_NARY = {sp.Add: _ADD, sp.Mul: _MUL, sp.Min: _MIN, sp.Max: _MAX}
#: The functions a tape evaluates (for error messages).
SUPPORTED = "+, -, *, /, **, exp, log, sqrt, abs, min, max, sin, cos, tanh"


class Tape:
    """A sympy expression as a tape of numpy operations, with its reverse-mode gradient.

    Parameters
    ----------
    expr : sympy.Expr
    inputs : sequence of sympy.Symbol
        The free symbols, in the order the evaluation takes their values.

    Examples
    --------
    >>> x, a = sp.symbols("x a", positive=True)
    >>> tape = Tape(sp.Max(x, a) ** 2 + sp.log(x), [x, a])
    >>> f, (dx, da) = tape.gradient([np.array([1.0, 3.0]), np.array(2.0)])
    >>> f.tolist(), dx.tolist(), da.tolist()   # max picks a at x = 1, x at x = 3
    ([4.0, 10.09861228866811], [1.0, 6.333333333333333], [4.0, 0.0])
    """

    def __init__(self, expr: sp.Expr, inputs: Sequence[sp.Symbol]) -> None:
        self.inputs = tuple(inputs)
        position = {s: i for i, s in enumerate(self.inputs)}
        self.ops: list[tuple[int, Any]] = []
        #: Per node, the bit set of the inputs it depends on.
        self.depends: list[int] = []
        index: dict[sp.Basic, int] = {}
        # Iterative post-order walk: no Python recursion on deep expressions.
        stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
        while stack:
            node, expanded = stack.pop()
            if node in index:
                continue
            if node.is_Symbol:
                if node not in position:
                    raise ValueError(f"the expression has a symbol {node} that is not an input "
                                     f"({[str(s) for s in self.inputs]})")
                index[node] = self._emit(_INPUT, position[node])
                continue
            if node.is_Number or isinstance(node, sp.NumberSymbol):
                value = complex(node)
                if value.imag != 0 or not np.isfinite(value.real):
                    raise ValueError(f"the expression has the constant {node}, which is not a "
                                     "finite real number")
                index[node] = self._emit(_CONST, float(value.real))
                continue
            kind = _kind(node)
            if not expanded:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args) if a not in index)
                continue
            index[node] = self._emit(kind, tuple(index[a] for a in node.args))
        self.output = index[expr]
        self.size = len(self.ops)

    def _emit(self, code: int, arg: Any) -> int:
        self.ops.append((code, arg))
        if code == _CONST:
            self.depends.append(0)
        elif code == _INPUT:
            self.depends.append(1 << arg)
        else:
            bits = 0
            for j in arg:
                bits |= self.depends[j]
            self.depends.append(bits)
        return len(self.ops) - 1

    # -- evaluation -----------------------------------------------------------
    def _forward(self, values: Sequence[np.ndarray]) -> list[np.ndarray]:
        out: list[Any] = [None] * self.size
        for i, (code, arg) in enumerate(self.ops):
            if code == _CONST:
                out[i] = np.float64(arg)
            elif code == _INPUT:
                out[i] = values[arg]
            elif code == _ADD:
                acc = out[arg[0]] + out[arg[1]]
                for j in arg[2:]:
                    acc = acc + out[j]
                out[i] = acc
            elif code == _MUL:
                acc = out[arg[0]] * out[arg[1]]
                for j in arg[2:]:
                    acc = acc * out[j]
                out[i] = acc
            elif code == _POW:
                out[i] = np.power(out[arg[0]], out[arg[1]])
            elif code in (_MIN, _MAX):
                fn = np.minimum if code == _MIN else np.maximum
                acc = fn(out[arg[0]], out[arg[1]])
                for j in arg[2:]:
                    acc = fn(acc, out[j])
                out[i] = acc
            else:
                out[i] = _UNARY_FN[code](out[arg[0]])
        return out

    def value(self, values: Sequence[Any]) -> np.ndarray:
        """The expression at the inputs' ``values`` (broadcast together)."""
        with np.errstate(all="ignore"):
            return np.asarray(self._forward([np.asarray(v, np.float64) for v in values])
                              [self.output], dtype=np.float64)

    def gradient(self, values: Sequence[Any], wrt: Sequence[int] | None = None
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The value and ``∂f/∂input`` for the inputs ``wrt`` (default all), each with the
        value's broadcast shape (pointwise derivatives, not sums)."""
        wrt = list(range(len(self.inputs)) if wrt is None else wrt)
        wanted = 0
        for w in wrt:
            wanted |= 1 << w
        with np.errstate(all="ignore"):
            vals = [np.asarray(v, np.float64) for v in values]
            out = self._forward(vals)
            f = np.asarray(out[self.output], dtype=np.float64)
            shape = np.broadcast_shapes(f.shape, *(v.shape for v in vals))
            f = np.broadcast_to(f, shape)
            adj: list[Any] = [None] * self.size
            adj[self.output] = np.ones(shape)
            for i in range(self.size - 1, -1, -1):
                a = adj[i]
                if a is None:
                    continue
                code, arg = self.ops[i]
                if code in (_CONST, _INPUT):
                    continue
                needed = [bool(self.depends[j] & wanted) for j in arg]
                for j, contribution in _local(code, arg, out, out[i], a, needed):
                    adj[j] = contribution if adj[j] is None else adj[j] + contribution
            leaf = {arg: k for k, (code, arg) in enumerate(self.ops) if code == _INPUT}
            grads = []
            for w in wrt:
                k = leaf.get(w)
                g = np.zeros(shape) if k is None or adj[k] is None else adj[k]
                grads.append(np.broadcast_to(np.asarray(g, np.float64), shape))
        return f, grads


def _kind(node: sp.Basic) -> int:
    """The op code of a sympy node (``ValueError`` for anything the tape cannot evaluate)."""
    for cls, code in _NARY.items():
        if isinstance(node, cls):
            return code
    if isinstance(node, sp.Pow):
        return _POW
    if isinstance(node, sp.Function) and type(node) in _UNARY and len(node.args) == 1:
        return _UNARY[type(node)]
    raise ValueError(f"the expression uses {type(node).__name__}, which a law's expression "
                     f"cannot contain (supported: {SUPPORTED})")


_UNARY_FN = {_EXP: np.exp, _LOG: np.log, _ABS: np.abs, _SIN: np.sin, _COS: np.cos,
             _TANH: np.tanh}


def _local(code: int, arg: Any, out: list[Any], v: Any, a: np.ndarray,
           needed: list[bool]) -> list[tuple[int, Any]]:
    """``(child, adjoint contribution)`` pairs of one node (module docstring's rules), for
    the children that depend on an input whose derivative is wanted (``needed``)."""
    if code == _ADD:
        return [(j, a) for j, n in zip(arg, needed) if n]
    if code == _MUL:
        vals = [out[j] for j in arg]
        k = len(vals)
        prefix = [None] * k
        acc: Any = 1.0
        for i in range(k):
            prefix[i] = acc
            acc = acc * vals[i]
        pairs = []
        acc = 1.0
        for i in range(k - 1, -1, -1):
            if needed[i]:
                pairs.append((arg[i], a * (prefix[i] * acc)))
            acc = acc * vals[i]
        return pairs
    if code == _POW:
        base, expo = out[arg[0]], out[arg[1]]
        pairs = []
        if needed[0]:
            pairs.append((arg[0], a * (expo * np.power(base, expo - 1.0))))
        if needed[1]:  # an exponent that varies: d(b**e)/de = b**e log b
            zero = np.asarray(v) == 0
            logb = np.log(np.where(zero, 1.0, base))
            pairs.append((arg[1], a * np.where(zero, 0.0, v * logb)))
        return pairs
    if code in (_MIN, _MAX):
        taken = np.zeros(np.shape(a), dtype=bool)
        pairs = []
        for j, n in zip(arg, needed):  # the first argument equal to the result takes it
            sel = (np.asarray(out[j]) == v) & ~taken
            taken |= sel
            if n:
                pairs.append((j, np.where(sel, a, 0.0)))
        return pairs
    if not needed[0]:
        return []
    x = out[arg[0]]
    if code == _EXP:
        return [(arg[0], a * v)]
    if code == _LOG:
        return [(arg[0], a / x)]
    if code == _ABS:
        return [(arg[0], a * np.sign(x))]
    if code == _SIN:
        return [(arg[0], a * np.cos(x))]
    if code == _COS:
        return [(arg[0], -a * np.sin(x))]
    return [(arg[0], a * (1.0 - v * v))]  # tanh

