"""Saving a fit and loading it back: :meth:`FitResult.save`, :func:`load_fit`.

A saved fit is one strict-JSON file (non-finite numbers never appear as bare
``NaN``/``Infinity``) with three parts:

* ``format`` (``"rlscale.FitResult"`` or ``"rlscale.ExpressionFit"``) and ``version``
  (:data:`FORMAT_VERSION`): what the file is, so a foreign or future file is refused
  with a message saying which it is, never half-read;
* the fit's readable summary, the keys of its ``as_dict()`` (``params``,
  ``intervals``, ``warnings``, ...) exactly as ``rlscale fit`` prints them, for a
  script that only reads numbers;
* ``state``: every field of the result, tagged so that loading rebuilds the same
  object: floats by their shortest round-trip ``repr`` (exact in float64), arrays
  with their shape and dtype, tuples as tuples, the law by its parameters (an
  expression law by its expression, axes and declared ranges), each diagnostic as a
  :class:`~rlscale.optimize.FitWarning`.  Bootstrap samples are kept, so
  :meth:`FitResult.bootstrap_laws` and :meth:`FitResult.predict_band` work on a
  loaded fit exactly as on the original.

The file is written atomically (a temporary file beside it, flushed, fsynced and
renamed over the destination): the protocol of ``rlscale.files``, which this
package may not import (imports go one way).  ``rlscale fit --out`` writes the same
form through ``rlscale.files``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FORMAT_VERSION", "fit_from_json", "fit_to_json", "load_fit", "save_fit"]

#: The version of the saved form this rlscale writes and reads.  Bump it when a field's
#: meaning changes; loading refuses other versions with a message saying so.
FORMAT_VERSION = 1
_FORMATS = ("rlscale.FitResult", "rlscale.ExpressionFit")


# --------------------------------------------------------------------------- encoding
def _encode(value: Any) -> Any:
    """A JSON value that :func:`_decode` turns back into ``value`` exactly."""
    from rlscale.optimize._diagnostics import FitWarning
    from rlscale.theory._law_base import Law

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot save an array of dtype {value.dtype}")
        return {"__ndarray__": [_encode(v) for v in value.ravel().tolist()],
                "shape": list(value.shape), "dtype": value.dtype.str}
    if isinstance(value, np.generic):
        return _encode(value.item())
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, FitWarning):
        return {"__warning__": {k: _encode(v) for k, v in value.as_dict().items()}}
    if isinstance(value, Law):
        return {"__law__": _encode(value.as_dict())}
    expr_module = sys.modules.get("rlscale.theory._expr")
    if expr_module is not None and isinstance(value, expr_module.ExpressionLaw):
        return _encode_expression_law(value)
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) and not k.startswith("__") for k in value):
            raise TypeError(f"cannot save a mapping with keys {list(value)[:5]!r}")
        return {k: _encode(v) for k, v in value.items()}
    raise TypeError(f"cannot save a value of type {type(value).__name__}: {value!r:.60}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__float__" in value:
        return float(value["__float__"])
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__ndarray__" in value:
        flat = [_decode(v) for v in value["__ndarray__"]]
        return np.array(flat, dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    if "__warning__" in value:
        from rlscale.optimize._diagnostics import FitWarning

        w = {k: _decode(v) for k, v in value["__warning__"].items()}
        w["parameters"], w["axes"] = tuple(w["parameters"]), tuple(w["axes"])
        return FitWarning(**w)
    if "__law__" in value:
        from rlscale.theory._laws import law_from_dict

        return law_from_dict(_decode(value["__law__"]))
    if "__expression_law__" in value:
        return _expression_law(value["__expression_law__"])
    return {k: _decode(v) for k, v in value.items()}


def _encode_expression_law(law: Any) -> dict[str, Any]:
    """An expression law by its printed expression, axes and declared ranges.

    The printed form is read back by the whitelisting parser on loading (never
    ``sympify``); one it would read as another expression is refused here, at saving,
    rather than loaded as a different law.
    """
    ranges = {p: tuple(float(x) for x in law.ranges[p]) for p in sorted(law.declared)}
    text = str(law.expr)
    try:
        same = _build_expression_law(text, law.axes, ranges).expr == law.expr
    except ValueError:
        same = False
    if not same:
        raise ValueError(f"cannot save the expression law {text!r}: its printed form does "
                         "not read back as the same law")
    return {"__expression_law__": {"expression": text, "axes": list(law.axes),
                                   "ranges": {p: [_encode(x) for x in r]
                                              for p, r in ranges.items()}}}


def _build_expression_law(text: str, axes: Any, ranges: dict[str, Any]) -> Any:
    from rlscale.theory._expr import ExpressionLaw

    return ExpressionLaw(text, list(axes), ranges)


def _expression_law(spec: dict[str, Any]) -> Any:
    return _build_expression_law(spec["expression"], spec["axes"],
                                 {p: tuple(_decode(r)) for p, r in spec["ranges"].items()})


# --------------------------------------------------------------------------- the form
def fit_to_json(fit: Any) -> dict[str, Any]:
    """The saved form of a :class:`FitResult` or :class:`ExpressionFit` (JSON types only).

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.optimize import fit_law
    >>> N = np.array([1.0, 2, 4, 8, 16, 32, 64])
    >>> form = fit_to_json(fit_law({"N": N, "loss": 0.5 + 2 * N ** -0.5}, axes=["N"]))
    >>> form["format"], form["version"], round(form["params"]["exponent[N]"], 6)
    ('rlscale.FitResult', 1, 0.5)
    """
    from rlscale.optimize._fit_expr_result import ExpressionFit
    from rlscale.optimize._fit_result import FitResult

    if not isinstance(fit, FitResult | ExpressionFit):
        raise TypeError(f"fit must be a FitResult or an ExpressionFit; got "
                        f"{type(fit).__name__}")
    state = {f.name: _encode(getattr(fit, f.name)) for f in dataclasses.fields(fit)}
    return {"format": f"rlscale.{type(fit).__name__}", "version": FORMAT_VERSION,
            **_plain(fit.as_dict()), "state": state}


def _plain(value: Any) -> Any:
    """numpy values to Python ones, non-finite floats to ``"nan"``/``"inf"``/``"-inf"``
    (the convention of ``rlscale fit``'s printed JSON and of ``rlscale.files``)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def fit_from_json(form: Any, where: str = "the saved fit") -> Any:
    """Rebuild the fit :func:`fit_to_json` saved; ``where`` names the source in errors."""
    from rlscale.optimize._fit_expr_result import ExpressionFit
    from rlscale.optimize._fit_result import FitResult

    kind = form.get("format") if isinstance(form, dict) else None
    if kind not in _FORMATS:
        hint = (" (an `rlscale fit --out` file written before rlscale 0.1's save format "
                "holds the summary only: refit with --out to get a loadable file)"
                if isinstance(form, dict) and "params" in form else "")
        raise ValueError(f"{where} is not a saved rlscale fit: its 'format' is {kind!r}, "
                         f"expected one of {list(_FORMATS)}{hint}")
    version = form.get("version")
    if version != FORMAT_VERSION:
        newer = isinstance(version, int) and version > FORMAT_VERSION
        raise ValueError(f"{where} is a {kind} of format version {version!r}; this rlscale "
                         f"reads version {FORMAT_VERSION}"
                         + (" (it was written by a newer rlscale: upgrade)" if newer else ""))
    state = form.get("state")
    if not isinstance(state, dict):
        raise ValueError(f"{where} has no 'state' (the fit's fields): it is truncated or "
                         "was edited")
    cls = FitResult if kind == "rlscale.FitResult" else ExpressionFit
    names = {f.name for f in dataclasses.fields(cls)}
    missing = sorted(n for n in names if n not in state and
                     cls.__dataclass_fields__[n].default is dataclasses.MISSING
                     and cls.__dataclass_fields__[n].default_factory is dataclasses.MISSING)
    unknown = sorted(set(state) - names)
    if missing or unknown:
        raise ValueError(f"{where}: the saved {kind} does not match this rlscale's fields "
                         f"(missing {missing}, unknown {unknown})")
    return cls(**{k: _decode(v) for k, v in state.items()})


# --------------------------------------------------------------------------- files
def _check_path(path: Any) -> Path:
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise TypeError(f"path must be a file name (str or path); got {type(path).__name__}")
    out = Path(path)
    if not os.fspath(path) or out.is_dir():
        raise ValueError(f"path must name a file; got path={os.fspath(path)!r}"
                         + (" (a directory)" if out.is_dir() else ""))
    return out


def save_fit(fit: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``fit`` to ``path`` as JSON, atomically; return the path."""
    path = _check_path(path)
    data = (json.dumps(fit_to_json(fit), indent=1, allow_nan=False) + "\n").encode("utf-8")
    return write_atomic(path, data)


def write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path``: a temporary file beside it, flushed, fsynced, renamed over
    it (``rlscale.files``' protocol; the fit's figures and saved fits both use it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def load_fit(path: str | os.PathLike[str]) -> Any:
    """Read a fit saved by :meth:`FitResult.save` or ``rlscale fit --out``.

    Returns a :class:`FitResult` or an :class:`ExpressionFit`, equal field by field to
    the one saved (bootstrap samples and diagnostics included).

    Raises
    ------
    ValueError
        The file is not JSON, not a saved rlscale fit (a foreign file, or an ``rlscale
        fit --out`` summary from before the save format), or of another format version.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from rlscale.optimize import fit_law
    >>> N = np.array([1.0, 2, 4, 8, 16, 32, 64])
    >>> fit = fit_law({"N": N, "loss": 0.5 + 2 * N ** -0.5}, axes=["N"])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = load_fit(fit.save(Path(tmp) / "fit.json"))
    >>> back.params == fit.params and back.law == fit.law
    True
    """
    path = _check_path(path)
    try:
        form = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a saved rlscale fit: not JSON ({exc})") from None
    return fit_from_json(form, where=str(path))
