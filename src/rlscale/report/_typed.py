"""Typed mirrors of plain data: frozen dataclasses that read and write ``results.json``.

The report's steps hand each other, and the document, frozen dataclasses (the
config tree of :mod:`rlscale.report._config_tree`, the step outcomes of
:mod:`rlscale.report._outcomes`) instead of dicts of string keys, so a renamed
or missing key fails where the data is made -- :func:`build` refuses unknown
and missing keys -- not minutes later where a renderer reads it.  The
``results.json`` schema stays the plain data: :func:`plain` writes a mirror
back as the dict it was built from (same keys, same order, same values).

A field's metadata may say:

``key``
    the plain key when it is not a Python name (``"from"``);
``optional``
    the key may be absent: the field is ``None`` then, and :func:`plain`
    leaves the key out again;
``plain``
    ``False`` for a live object a later step needs (a fitted law, a compiled
    problem) that is not part of ``results.json``.

Examples
--------
>>> from dataclasses import dataclass, field
>>> @dataclass(frozen=True)
... class Point:
...     x: float
...     source: str = field(metadata={"key": "from"})
...     note: str | None = field(default=None, metadata={"optional": True})
>>> p = build(Point, {"x": 1.5, "from": "fit"})
>>> p.source, plain(p)
('fit', {'x': 1.5, 'from': 'fit'})
>>> build(Point, {"x": 1.5, "form": "fit"})
Traceback (most recent call last):
...
TypeError: Point: unexpected key(s) ['form'] (known: ['from', 'note', 'x'])
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

__all__ = ["FrozenDict", "build", "plain"]


class FrozenDict(dict):
    """A read-only ``dict`` (for the free-form tables of a frozen tree), picklable and
    ``deepcopy``-able (the report's side process receives the configuration pickled)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a frozen report table cannot be changed; build a new one")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))


@cache
def _schema(cls: type) -> tuple[tuple[str, str, Any, bool, bool], ...]:
    """Per field: (name, plain key, type, optional, in results.json)."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, f.metadata.get("key", f.name), hints[f.name],
                  f.metadata.get("optional", False), f.metadata.get("plain", True))
                 for f in dataclasses.fields(cls))


def build(cls: type, data: Mapping[str, Any], **live: Any) -> Any:
    """The frozen dataclass ``cls`` from its plain data ``data`` (recursively).

    ``live`` gives the fields that are not plain data (metadata ``plain=False``).
    Unknown and missing keys are refused (a ``TypeError`` naming them).
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected a table of keys; got {type(data).__name__}")
    schema = _schema(cls)
    known = {key for _, key, _, _, is_plain in schema if is_plain}
    unknown = [k for k in data if k not in known]
    if unknown:
        raise TypeError(f"{cls.__name__}: unexpected key(s) {sorted(unknown)} "
                        f"(known: {sorted(known)})")
    kwargs: dict[str, Any] = {}
    for name, key, tp, optional, is_plain in schema:
        if not is_plain:
            if name in live:
                kwargs[name] = live.pop(name)
            continue
        if key in data:
            kwargs[name] = _convert(tp, data[key], f"{cls.__name__}.{key}")
        elif not optional:
            raise TypeError(f"{cls.__name__}: missing key {key!r}")
    if live:
        raise TypeError(f"{cls.__name__}: unexpected live field(s) {sorted(live)}")
    return cls(**kwargs)


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _convert(arms[0], value, where) if len(arms) == 1 else value
    if dataclasses.is_dataclass(tp):
        return build(tp, value)
    if origin is tuple:
        args = typing.get_args(tp)
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else Any
        return tuple(_convert(item, v, where) for v in value)
    if origin in (dict, Mapping) or tp is Mapping:
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return FrozenDict({k: _convert(item, v, where) for k, v in value.items()})
    return value


def plain(obj: Any) -> Any:
    """The plain data of a typed mirror: dicts and lists, keys in field order.

    A library object with ``as_dict`` is written as its ``as_dict()``; other leaves
    (numbers, strings, numpy values, the library's own plain data) are returned as
    they are, so ``results.json`` holds exactly what it held when
    the steps wrote dicts.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for name, key, _, optional, is_plain in _schema(type(obj)):
            value = getattr(obj, name)
            if is_plain and not (optional and value is None):
                out[key] = _leaf(value)
        return out
    return _leaf(obj)


def _leaf(obj: Any) -> Any:
    # A library result held live (a FitResult, an Allocation) is written as its own
    # as_dict(), exactly as the steps wrote it before they kept the object.
    if hasattr(obj, "as_dict") and not isinstance(obj, type):
        return obj.as_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return plain(obj)
    if isinstance(obj, tuple):
        return [_leaf(v) for v in obj]
    if isinstance(obj, FrozenDict):
        return {k: _leaf(v) for k, v in obj.items()}
    return obj
