"""Lazy attribute loading for rlscale's packages (PEP 562).

Every rlscale package exposes its curated names through :func:`attach`, so
importing a package costs nothing until a name is used; this is how
``import rlscale.optimize`` avoids importing cvxpy.  It lives in ``theory``
because ``theory`` is the one package every other may import.
"""

from __future__ import annotations

import importlib

# Not `typing.TYPE_CHECKING`: every rlscale import, the ``rlscale`` command's first
# included, runs this module before any handler of its own, and typing costs 3-11 ms
# there, in which a Ctrl-C is a traceback (issue 22).  Type checkers read the name.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

__all__ = ["attach"]


def attach(
    package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """Return ``(__getattr__, __dir__, __all__)`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping
        Public name -> private module (relative to the package) defining it.
    submodules : iterable of str
        Public sub-modules reachable as attributes.

    Examples
    --------
    A package's ``__init__`` ends with (names here from ``rlscale.theory``)::

        __getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)

    >>> getattr_, dir_, names = attach("rlscale.theory", {"check_real": "_validation"})
    >>> names
    ['check_real']
    >>> getattr_("check_real").__module__
    'rlscale.theory._validation'
    >>> getattr_("nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'rlscale.theory' has no attribute 'nope'
    """
    exports = dict(exports)
    subs = frozenset(submodules)
    names = sorted(set(exports) | subs)
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        elif name in subs:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__, names
