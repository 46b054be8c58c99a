"""Atomic file output: a reader never sees a half-written file.

Each writer writes a temporary file in the destination's directory, flushes
and fsyncs it, then renames it over the destination (atomic on POSIX within
one file system).  The file operations themselves are
:class:`~rlscale.files._containment.OutputArea`'s, so every write is checked
to stay inside its output.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.files._containment import OutputArea

__all__ = ["render_figure", "save_figure", "to_jsonable", "write_bytes_atomic",
           "write_json_atomic", "write_text_atomic"]


def _area(path: str | os.PathLike[str], root: Any) -> OutputArea:
    """The containment area of a write: ``root`` (an :class:`OutputArea` or the output
    directory the file must stay inside), else the file itself (it and its temporary
    files beside it)."""
    if isinstance(root, OutputArea):
        return root
    if root is None:
        return OutputArea.file(path)
    return OutputArea.directory(root)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *,
                       root: OutputArea | str | os.PathLike[str] | None = None) -> Path:
    """Write ``data`` to ``path`` atomically; return the path.

    The write goes through :class:`~rlscale.files._containment.OutputArea`:
    ``root`` is the output directory ``path`` must stay inside (a path or an
    area); without it, the write may touch only ``path`` and its temporary
    file beside it.  Missing parent directories inside the area are created.

    The file gets the permissions of a plain ``open(path, "w")``: those of the
    file it replaces, else ``0o666`` less the umask (``tempfile.mkstemp``
    would leave it ``0o600``, unreadable to the colleague a report is
    forwarded to).

    Raises
    ------
    ContainmentError
        ``path`` is outside ``root`` (a ``ValueError``).
    OSError
        The write failed (full disk, file size limit, read-only directory);
        the previous file at ``path``, if any, is untouched.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_bytes_atomic(Path(tmp) / "a" / "b.txt", b"hello", root=tmp)
    ...     path.read_bytes(), sorted(p.name for p in path.parent.iterdir())
    (b'hello', ['b.txt'])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_bytes_atomic(Path(tmp) / "out" / ".." / "x.txt", b"", root=Path(tmp) / "out")
    Traceback (most recent call last):
    ...
    rlscale.files._containment.ContainmentError: refusing to write ... outside the output ...
    """
    area = _area(path, root)
    area.make_anchor()
    return area.write_atomic(path, bytes(data))


def write_text_atomic(path: str | os.PathLike[str], text: str, *,
                      root: OutputArea | str | os.PathLike[str] | None = None) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically; return the path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_text_atomic(Path(tmp) / "note.md", "η ≥ 1").read_text(encoding="utf-8")
    'η ≥ 1'
    """
    return write_bytes_atomic(path, text.encode("utf-8"), root=root)


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


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *,
                      root: OutputArea | str | os.PathLike[str] | None = None) -> Path:
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
    return write_text_atomic(path, text + "\n", root=root)


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


def save_figure(fig: Any, path: str | os.PathLike[str], *,
                root: OutputArea | str | os.PathLike[str] | None = None, **savefig: Any
                ) -> Path:
    """Render a matplotlib figure and write it atomically to ``path`` (format from its
    suffix); ``savefig`` are :meth:`matplotlib.figure.Figure.savefig` options."""
    data = render_figure(fig, Path(path).suffix.lstrip(".") or "png", **savefig)
    return write_bytes_atomic(path, data, root=root)


def render_figure(fig: Any, fmt: str = "png", **savefig: Any) -> bytes:
    """``fig`` rendered to bytes by :meth:`~matplotlib.figure.Figure.savefig`, in one draw
    when its layout is already done.

    ``Figure.tight_layout()`` leaves a placeholder layout engine behind, and
    ``savefig`` draws a figure that has any engine twice: once with rendering
    disabled (measuring every text and tick, for a layout the placeholder never
    computes), then for real.  Removing the placeholder skips that pass and changes
    nothing drawn (issue 26: the trainer's three reward-law figures 1.37 -> 1.28 CPU s,
    warm, load 20).  A live engine (``layout="constrained"``) is kept, and so is
    ``bbox_inches="tight"``'s own measuring pass.
    """
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, **savefig)
    return buf.getvalue()
