"""Import optional dependencies with an actionable error when absent."""

from __future__ import annotations

import importlib
from types import ModuleType

from rlscale._errors import RlscaleError

__all__ = ["MissingDependencyError", "require"]


class MissingDependencyError(RlscaleError, ImportError):
    """An optional extra needed for this operation is not installed."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise naming the extra that provides it.

    Examples
    --------
    >>> require("json", extra="none", purpose="tests").__name__
    'json'
    >>> require("no_such_module_xyz", extra="plot", purpose="figures")
    Traceback (most recent call last):
    ...
    rlscale._optional.MissingDependencyError: figures need the optional package ...
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} need the optional package {module!r}: pip install 'rlscale[{extra}]'"
        ) from exc
