"""A compact ``repr`` for result dataclasses: one screen, whatever the fields hold.

The ``repr`` a dataclass generates prints every field in full: a path's arrays, a
trained policy's tensor, a proof's steps with their sympy expressions -- tens of
thousands of characters for one result (issue 24).  :func:`compact_repr` prints one
field a line, each value shortened to what a person reads first:

- a numpy array as its shape and dtype with its range (``float64 (20,) in
  [100, 1e+04]``), in full only when it has at most :data:`SHOWN` elements; a boolean
  array as how many are true;
- a float to six significant digits, a long string cut with ``…``;
- a mapping or sequence item by item, at most :data:`SHOWN` items and the rest counted;
- a nested result on one line (its own compact form, cut at :data:`WIDTH`).

At most :data:`FIELDS` fields are shown (the rest are named on one line), and every
line is cut at :data:`WIDTH` characters, so the whole is at most ``FIELDS + 3`` lines
and a little over ``WIDTH·(FIELDS + 3)`` characters.  Nothing is lost: every field is
still an attribute at full precision (and ``as_dict()``, where a result has one, holds
everything).  This module is pure Python plus numpy and imports nothing of rlscale's,
so every package can use it (``theory`` is below all of them).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["FIELDS", "SHOWN", "WIDTH", "compact_repr", "short"]

#: Most fields printed, one a line; the rest are named on one more line.
FIELDS = 20
#: Most characters of one line.
WIDTH = 90
#: Most elements of an array, or items of a sequence or mapping, printed.
SHOWN = 6


def _number(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, numbers.Integral):
        return str(int(x))
    v = float(x)
    return repr(v) if not math.isfinite(v) else f"{v:.6g}"


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= width else text[: width - 1] + "…"


def _array(a: np.ndarray) -> str:
    shape = "(" + ", ".join(map(str, a.shape)) + ("," if a.ndim == 1 else "") + ")"
    if a.dtype == bool:
        return f"bool {shape}, {int(a.sum())} true"
    if a.size <= SHOWN and a.ndim <= 1 and a.dtype.kind in "biuf":
        return "array([" + ", ".join(_number(v) for v in a.tolist()) + "])"
    head = f"{a.dtype} {shape}"
    if a.size == 0 or a.dtype.kind not in "biuf":
        return head
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    if finite.size == 0:
        return f"{head}, no finite value"
    text = f"{head} in [{_number(finite.min())}, {_number(finite.max())}]"
    if finite.size < a.size:
        text += f", {a.size - finite.size} not finite"
    return text


def _items(parts: Iterable[str], n: int, open_: str, close: str) -> str:
    parts = list(parts)
    more = f", … {n - len(parts)} more" if n > len(parts) else ""
    return open_ + ", ".join(parts) + more + close


def short(value: Any, width: int = WIDTH) -> str:
    """One line, at most ``width`` characters, saying what ``value`` holds.

    Examples
    --------
    >>> import numpy as np
    >>> short(np.linspace(0.0, 1.0, 50))
    'float64 (50,) in [0, 1]'
    >>> short(np.array([0.1, 0.25])), short(np.array([True, False, True]))
    ('array([0.1, 0.25])', 'bool (3,), 2 true')
    >>> short({"E": np.ones(3), "k": 2.0}), short(tuple(range(10)))
    ('{E: array([1, 1, 1]), k: 2}', '(0, 1, 2, 3, 4, 5, … 4 more)')
    >>> short(1 / 3), short("x" * 200, width=12)
    ('0.333333', "'xxxxxxxxxx…")
    """
    if isinstance(value, np.ndarray):
        text = _array(value)
    elif isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, complex):
        text = _number(value)
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, Mapping):
        shown = list(value.items())[:SHOWN]
        text = _items((f"{k}: {short(v, width)}" for k, v in shown), len(value), "{", "}")
    elif isinstance(value, (list, tuple)):
        shown = [short(v, width) for v in value[:SHOWN]]
        close = ",)" if isinstance(value, tuple) and len(value) == 1 else (
            ")" if isinstance(value, tuple) else "]")
        text = _items(shown, len(value), "(" if isinstance(value, tuple) else "[", close)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        text = compact_repr(value, one_line=True)
    else:
        text = repr(value)
    return _cut(text, width)


def compact_repr(obj: Any, fields: Iterable[str] | None = None, *, title: str = "",
                 shown: Mapping[str, str] | None = None, one_line: bool = False) -> str:
    """The repr of a dataclass instance on at most :data:`FIELDS` + 3 lines.

    Parameters
    ----------
    obj : dataclass instance
    fields : iterable of str, optional
        The fields (or properties) to print, in order; default every field declared
        with ``repr=True``.  Fields left out are named on the last line.
    title : str
        A line after the class name (a status, the key numbers).
    shown : mapping, optional
        Field name -> the text to print for it instead of its shortened value (the
        names of a proof's steps rather than the first step in full).
    one_line : bool
        ``ClassName(field=…, …)`` on one line of at most :data:`WIDTH` characters (the
        form a nested result takes).

    Examples
    --------
    >>> import numpy as np
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Path:
    ...     name: str
    ...     budgets: np.ndarray
    ...     values: dict
    >>> p = Path("plan", np.geomspace(1e2, 1e4, 20), {"E": np.arange(20.0), "k": np.ones(20)})
    >>> print(compact_repr(p))
    Path(
      name='plan',
      budgets=float64 (20,) in [100, 10000],
      values={E: float64 (20,) in [0, 19], k: float64 (20,) in [1, 1]},
    )
    >>> compact_repr(p, ["name"], one_line=True)
    "Path(name='plan', …)"
    """
    declared = [f.name for f in dataclasses.fields(obj) if f.repr]
    names = list(declared if fields is None else fields)
    hidden = [n for n in declared if n not in names]
    kind = type(obj).__name__
    shown = dict(shown or {})

    def text(name: str, width: int) -> str:
        return _cut(shown[name], width) if name in shown else short(getattr(obj, name), width)

    if one_line:
        body = ", ".join(f"{n}={text(n, WIDTH // 2)}" for n in names)
        return _cut(f"{kind}({body}{', …' if hidden else ''})", WIDTH)
    lines = [f"{kind}("]
    if title:
        lines.append(_cut(f"  # {title}", WIDTH))
    lines += [_cut(f"  {n}={text(n, WIDTH)},", WIDTH) for n in names[:FIELDS]]
    hidden = names[FIELDS:] + hidden
    if hidden:
        lines.append(_cut(f"  … also {', '.join(hidden)}", WIDTH))
    lines.append(")")
    return "\n".join(lines)
