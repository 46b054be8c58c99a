"""Atomic file output: a reader never sees a half-written file.

Each writer writes a temporary file in the destination's directory, flushes
and fsyncs it, then ``os.replace``-s it over the destination (atomic on POSIX
and Windows within one file system).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["to_jsonable", "write_bytes_atomic", "write_json_atomic", "write_text_atomic"]


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return the path.

    The file gets the permissions of a plain ``open(path, "w")``: those of the
    file it replaces, else ``0o666`` less the umask (``tempfile.mkstemp``
    would leave it ``0o600``, unreadable to the colleague a report is
    forwarded to).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_bytes_atomic(Path(tmp) / "a" / "b.txt", b"hello")
    ...     path.read_bytes(), sorted(p.name for p in path.parent.iterdir())
    (b'hello', ['b.txt'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666: the kernel applies the umask, as for any new file.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically; return the path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_text_atomic(Path(tmp) / "note.md", "η ≥ 1").read_text(encoding="utf-8")
    'η ≥ 1'
    """
    return write_bytes_atomic(path, text.encode("utf-8"))


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses and paths to JSON types.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` and ``"nan"``
    so the output is strict JSON that any reader accepts.

    Examples
    --------
    >>> to_jsonable({"a": np.float64(1.5), "b": np.arange(2), "c": float("inf")})
    {'a': 1.5, 'b': [0, 1], 'c': 'inf'}
    """
    if hasattr(obj, "as_dict"):
        return to_jsonable(obj.as_dict())
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented strict JSON to ``path`` atomically.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_json_atomic(Path(tmp) / "r.json", {"eta": np.float64(np.inf)})
    ...     json.loads(path.read_text())
    {'eta': 'inf'}
    """
    text = json.dumps(to_jsonable(obj), indent=2, sort_keys=False, allow_nan=False)
    return write_text_atomic(path, text + "\n")


#: Longest CSV field rlscale reads (1 MiB; Python's default limit is 128 KiB).
CSV_FIELD_LIMIT = 1 << 20


@contextlib.contextmanager
def csv_field_limit(path: Any):
    """Read CSV fields up to :data:`CSV_FIELD_LIMIT`; a longer one is refused naming ``path``.

    The module-wide limit is restored afterwards.
    """
    import csv

    old = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        yield
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc}); fields longer than "
                         f"{CSV_FIELD_LIMIT} characters are refused") from exc
    finally:
        csv.field_size_limit(old)
