"""One surface for every result of rlscale: ``success``, ``status``, ``message``,
``as_dict``, ``to_frame``, a compact ``repr`` and ``_repr_html_`` (issue 25).

A *result* is the record a verb returns: a fit, a plan, a simulation's estimate, a
proof's outcome.  Each is a dataclass that also derives from :class:`Result`, so a
script or a notebook treats them all alike, whatever produced them:

``success``, ``status``, ``message``
    The result convention of :mod:`rlscale.optimize._outcome` (scipy's
    ``OptimizeResult`` and cvxpy's ``Problem.status`` are its models).  A result
    that solves or fits declares them (a field or a property) and keeps its own.
    One that does not computed its numbers directly -- a closed form, a simulation,
    a table -- and reads ``success=True``, ``status="computed"`` and a ``message``
    that says so; made of other results (a comparison holding its plans), it
    succeeds only when they all do (else ``status="part_failed"``, and the
    ``message`` names the parts that did not).  These defaults are not fields, so
    they never enter ``as_dict``.
``as_dict()``
    The fields by name, in declaration order, each value as the result holds it
    (what a plain ``dict(self.__dict__)`` gave).  A result whose record is not just
    that -- arrays as lists, nested results as their own dicts, derived keys --
    overrides it; the report's ``results.json`` is written from these dicts, so no
    override may change (tests/test_report.py pins the file's digests).
``repr``
    The dataclass's own ``repr`` while it fits :data:`EXACT` characters on one line
    (so a small result prints exactly, as before); past that,
    :func:`~rlscale.theory._repr.compact_repr`'s one screen.  A result with its own
    ``__repr__`` keeps it.  (Installed by :meth:`Result.__init_subclass__`: the
    ``dataclass`` decorator writes a ``__repr__`` only where the class has none.)
``to_frame()``
    A :class:`pandas.DataFrame` (pandas is optional): one row per element where the
    result is tabular (1-d array fields of one length: a frontier, a curve), else one
    row of its scalar fields, so many results concatenate into one table.
``_repr_html_()``
    A small HTML table for Jupyter: each field and its shortened value, then the
    message.

This module imports nothing of rlscale's but :mod:`rlscale.theory`'s display helpers,
so every package may build on it (``theory`` is below all of them).

Examples
--------
>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(frozen=True)
... class Curve(Result):
...     budgets: np.ndarray
...     loss: np.ndarray
...     note: str = ""
>>> c = Curve(np.array([1.0, 2.0]), np.array([0.5, 0.25]))
>>> c
Curve(budgets=array([1., 2.]), loss=array([0.5 , 0.25]), note='')
>>> c.success, c.status, list(c.as_dict())
(True, 'computed', ['budgets', 'loss', 'note'])
>>> Curve(np.geomspace(1, 1e4, 50), np.linspace(1, 0, 50))
Curve(
  budgets=float64 (50,) in [1, 10000],
  loss=float64 (50,) in [0, 1],
  note='',
)
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlscale.theory._repr import compact_repr, short

__all__ = ["EXACT", "Result", "is_result"]

#: Longest ``repr`` printed exactly (one line); a longer one is printed compactly.
EXACT = 300

#: Larger arrays or collections go to the compact form without being printed in full.
_LARGE = 50

def _parts(obj: Any) -> list[tuple[str, Any]]:
    """The results a result is made of: fields holding a result, or a mapping or
    sequence of results, whose ``success`` is a verdict (a bool; not a task's
    success probability)."""
    out = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        items = (value.items() if isinstance(value, Mapping)
                 else enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)])
        for key, item in items:
            if isinstance(item, Result) and isinstance(item.success, (bool, np.bool_)):
                out.append((f.name if key is None else f"{f.name}[{key!r}]", item))
    return out


def _failed(obj: Any) -> list[tuple[str, Any]]:
    return [(name, part) for name, part in _parts(obj) if not part.success]


def _default_message(obj: Any) -> str:
    failed = _failed(obj)
    if failed:
        return f"{type(obj).__name__}: not every part succeeded: " + "; ".join(
            f"{name}: {part.status} ({part.message})" for name, part in failed)
    made = " from results that all succeeded" if _parts(obj) else ""
    return (f"{type(obj).__name__}: computed directly{made} (a closed form, simulation "
            "or table; no solver or stopping rule of its own to fail)")


_DEFAULTS: dict[str, Any] = {
    "success": lambda self: not _failed(self),
    "status": lambda self: "part_failed" if _failed(self) else "computed",
    "message": _default_message,
}


def _exact_repr(obj: Any) -> str | None:
    """The dataclass ``repr`` of ``obj`` when it is short, else None (not built in full)."""
    parts, length = [], len(type(obj).__qualname__) + 2
    for f in dataclasses.fields(obj):
        if not f.repr:
            continue
        value = getattr(obj, f.name)
        if ((isinstance(value, np.ndarray) and value.size > _LARGE)
                or (isinstance(value, (list, tuple, Mapping)) and len(value) > _LARGE)):
            return None
        part = f"{f.name}={value!r}"
        length += len(part) + 2
        if length > EXACT or "\n" in part:
            return None
        parts.append(part)
    return f"{type(obj).__qualname__}({', '.join(parts)})"


def _result_repr(self: Any) -> str:
    exact = _exact_repr(self)
    return exact if exact is not None else compact_repr(self)


_result_repr.__name__ = _result_repr.__qualname__ = "__repr__"
_result_repr._rlscale_result = True  # type: ignore[attr-defined]


class Result:
    """Base of rlscale's result dataclasses: the uniform surface of the module docstring.

    A mixin, not a dataclass: it adds no field, so a subclass's fields, their order
    and its ``__init__`` are its own; it works with frozen and plain dataclasses.

    Attributes
    ----------
    success : bool
        Whether the method finished by its own stopping rule (default: True, or
        whether every result it is made of succeeded).
    status : str
        The method's own word (default ``"computed"``, or ``"part_failed"``).
    message : str
        The same in words, for a person.
    """

    # Annotations only, for readers and type checkers (Result is not a dataclass, so
    # they are no fields): a subclass that has none of its own reads the defaults
    # through ``__getattr__``; a class attribute here would hide a subclass's field of
    # the same name, or a deferred field computed on first read.
    success: bool
    status: str
    message: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The dataclass decorator (run after this) writes ``__repr__`` only where the
        # class body has none; give it ours unless the class or a base between wrote
        # its own.
        if "__repr__" not in cls.__dict__ and getattr(cls.__repr__, "_rlscale_result", False):
            cls.__repr__ = _result_repr  # type: ignore[method-assign]

    def __getattr__(self, name: str) -> Any:
        # Ordinary lookup failed: only the three defaults are answered here.
        if name in _DEFAULTS and name not in getattr(type(self), "__dataclass_fields__", {}):
            return _DEFAULTS[name](self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in declaration order, values as held."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    __repr__ = _result_repr

    # -- notebook display and pandas -------------------------------------------
    def _columns(self) -> dict[str, np.ndarray]:
        """The 1-d array fields of the most common length (>= 2): the tabular part."""
        arrays = {f.name: v for f in dataclasses.fields(self)
                  if isinstance(v := getattr(self, f.name), np.ndarray) and v.ndim == 1
                  and v.size >= 2}
        sizes = [a.size for a in arrays.values()]
        if not sizes:
            return {}
        n = max(set(sizes), key=sizes.count)
        return {k: a for k, a in arrays.items() if a.size == n}

    def to_frame(self) -> Any:
        """The result as a :class:`pandas.DataFrame`.

        One row per element of the result's 1-d array fields of one length when it
        has them (a frontier, a curve); else one row of its scalar fields (numbers,
        strings, booleans, one-element arrays).  Needs pandas (``pip install
        'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import data_frame

        columns = self._columns()
        if columns:
            return data_frame([dict(zip(columns, row))
                               for row in zip(*(a.tolist() for a in columns.values()))])
        row = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray) and v.size == 1:  # a one-point grid
                v = v.reshape(()).item()
            if isinstance(v, (numbers.Number, str, np.bool_)):
                row[f.name] = v
        return data_frame([row])

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rows = [[f.name, short(getattr(self, f.name))]
                for f in dataclasses.fields(self) if f.repr]
        notes = [f"{self.status}: {self.message}" if self.message else self.status]
        return html_table(type(self).__name__, ["field", "value"], rows, notes)


def is_result(obj: Any) -> bool:
    """Whether ``obj`` is a result instance (a dataclass deriving from :class:`Result`).

    >>> is_result(1.0), is_result(Result)
    (False, False)
    """
    return isinstance(obj, Result) and dataclasses.is_dataclass(obj)

