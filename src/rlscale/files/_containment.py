"""Containment: the one place that decides whether rlscale may write or delete a path.

Every file rlscale creates, replaces, renames or deletes goes through an
:class:`OutputArea`: the output a command was asked to write (``--out``) and
the hidden working names rlscale keeps beside it.  Nothing else in the code
base calls ``os.unlink``, ``os.rename``, ``os.replace``, ``shutil.rmtree`` or
opens a file for writing (``tests/test_containment.py`` walks the code and
fails on any such call outside this module).

The rules, decided once here (issue 22, D1):

1. **Inside the area.**  A path may be written or deleted only if it is the
   output itself, lies under it (a directory output), or is one of the
   working names rlscale keeps beside it (:meth:`OutputArea.allows`).
2. **Resolved, and not through a link that leaves.**  The path's parent is
   resolved (``realpath``) before the test, so ``out/link/x`` with ``link``
   pointing elsewhere is outside; the operation itself then walks down from
   the area's directory one component at a time with ``O_NOFOLLOW`` (directory
   file descriptors), so a directory swapped for a symbolic link between the
   check and the operation is refused too, not followed.
3. **Untrusted names are refused, never repaired.**  A relative name read from
   a file (a report's manifest) passes :func:`check_relative`: no absolute
   path, no ``.``/``..``/empty component, no backslash, no control, format or
   separator character (a NUL, a right-to-left override, a zero-width space),
   and the same string after Unicode NFC and NFKC normalisation (so ``．．``
   (fullwidth full stops) or ``․․`` (one-dot leaders), which NFKC folds to
   ``..``, are refused rather than trusted to stay literal on every file
   system).

A path that fails raises :class:`ContainmentError` (a ``ValueError``) naming
the path and the rule; nothing is touched.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import re
import secrets
import shutil
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["ContainmentError", "OutputArea", "check_relative", "make_output_dir"]

#: Longest relative name :func:`check_relative` accepts (PATH_MAX on Linux).
MAX_RELATIVE = 4096

_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


class ContainmentError(ValueError):
    """A path rlscale was about to write or delete is outside its output area."""


def check_relative(name: Any, what: str = "path") -> PurePosixPath:
    """Validate an untrusted relative path (``a/b.png``); return it as a pure path.

    Parameters
    ----------
    name : str
        A POSIX relative path read from a file (e.g. a report's manifest).
    what : str
        How the error message calls it.

    Raises
    ------
    ContainmentError
        ``name`` is not a string, is absolute, has an empty, ``.`` or ``..``
        component, holds a backslash or a control, format or separator
        character, or changes under NFC/NFKC normalisation.

    Examples
    --------
    >>> check_relative("reward-law/heatmap.png")
    PurePosixPath('reward-law/heatmap.png')
    >>> check_relative("../victim.txt")
    Traceback (most recent call last):
    ...
    rlscale.files._containment.ContainmentError: path '../victim.txt' has a '..' component; ...
    >>> check_relative("\\uff0e\\uff0e/victim.txt")  # fullwidth full stops: NFKC gives '..'
    Traceback (most recent call last):
    ...
    rlscale.files._containment.ContainmentError: path '．．/victim.txt' changes under Unicode ...
    """
    def refuse(why: str) -> ContainmentError:
        return ContainmentError(f"{what} {name!r:.200} {why}; refused (a relative path inside "
                                "the output directory is required)")

    if not isinstance(name, str):
        raise refuse(f"is a {type(name).__name__}, not a string")
    if not name or len(name) > MAX_RELATIVE:
        raise refuse(f"has length {len(name)} (1 to {MAX_RELATIVE} characters)")
    if name.startswith("/"):
        raise refuse("is absolute")
    if "\\" in name:
        raise refuse("holds a backslash")
    for ch in name:
        category = unicodedata.category(ch)
        if category[0] == "C" or (category[0] == "Z" and ch != " "):
            raise refuse(f"holds the character U+{ord(ch):04X} ({category})")
    if unicodedata.normalize("NFC", name) != name or unicodedata.normalize("NFKC", name) != name:
        raise refuse(f"changes under Unicode normalisation (NFKC gives "
                     f"{unicodedata.normalize('NFKC', name)!r:.200})")
    for part in name.split("/"):
        if part in ("", ".", ".."):
            raise refuse(f"has a {part or 'empty'!r} component" if part
                         else "has an empty component")
    return PurePosixPath(name)


@dataclass(frozen=True)
class OutputArea:
    """The paths one output may write or delete: itself, what is under it, and its
    working names beside it.

    Build one with :meth:`directory` (an output directory: a report) or
    :meth:`file` (a single output file: a sweep's results CSV).

    Attributes
    ----------
    root : Path
        The output, absolute, its parent resolved.
    is_dir : bool
        Whether the output is a directory (everything under it belongs to it).

    Examples
    --------
    >>> area = OutputArea.directory("/tmp/report")
    >>> area.allows("/tmp/report/fits.png"), area.allows("/tmp/.report.partial/x.csv")
    (True, True)
    >>> area.allows("/tmp/report/../victim.txt"), area.allows("/etc/passwd")
    (False, False)
    >>> OutputArea.file("/tmp/results.csv").allows("/tmp/.results.csv.12.0123abcd.tmp")
    True
    """

    root: Path
    is_dir: bool

    # -- construction ----------------------------------------------------------

    @classmethod
    def directory(cls, out: str | os.PathLike[str]) -> OutputArea:
        """The area of an output directory ``out`` and its staging names beside it."""
        return cls(_anchored(out, "output directory"), True)

    @classmethod
    def file(cls, out: str | os.PathLike[str]) -> OutputArea:
        """The area of one output file ``out`` and its temporary files beside it."""
        return cls(_anchored(out, "output file"), False)

    @property
    def anchor(self) -> Path:
        """The directory holding the output (and its working names)."""
        return self.root.parent

    def _sibling_allowed(self, name: str) -> bool:
        """Working names beside the output: staging (``.N.partial``, ``.N.partial.new-*``)
        and replaced reports (``.N.old-*``) of a directory, temporary files (``.N.*.tmp``)
        of either kind."""
        n = self.root.name
        if name == n:
            return True
        if (m := _TEMP.match(name)) and m["name"] == n:
            return True
        return self.is_dir and (name == f".{n}.partial"
                                or fnmatch.fnmatchcase(name, f".{n}.partial.new-*")
                                or fnmatch.fnmatchcase(name, f".{n}.old-*"))

    # -- the decision ----------------------------------------------------------

    def _parts(self, path: str | os.PathLike[str], action: str) -> tuple[str, ...]:
        """The components of ``path`` below :attr:`anchor`; raise unless allowed."""
        text = os.fspath(path)
        if not isinstance(text, str):
            raise TypeError(f"path must be str or os.PathLike[str]; got {type(text).__name__}")
        if "\x00" in text:
            raise ContainmentError(f"refusing to {action} {text!r:.200}: it holds a NUL")
        p = Path(text)
        if not p.is_absolute():
            p = Path.cwd() / p
        if p.name in ("", ".", ".."):
            raise ContainmentError(f"refusing to {action} {text!r:.200}: it does not name a "
                                   "file or directory")
        full = Path(os.path.realpath(p.parent)) / p.name
        try:
            parts = full.relative_to(self.anchor).parts
        except ValueError:
            parts = ()
        if not parts or not self._sibling_allowed(parts[0]) or (
                not self.is_dir and len(parts) > 1):
            raise ContainmentError(
                f"refusing to {action} {full}: it is outside the output {self.root} "
                "(resolved, symbolic links followed)")
        return parts

    def allows(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` may be written or deleted (rules 1 and 2)."""
        try:
            self._parts(path, "write")
        except ContainmentError:
            return False
        return True

    def check(self, path: str | os.PathLike[str], action: str = "write") -> Path:
        """``path`` made absolute, or :class:`ContainmentError` naming it and the rule."""
        return self.anchor.joinpath(*self._parts(path, action))

    def join(self, base: str | os.PathLike[str], name: Any, what: str = "path") -> Path:
        """``base / name`` for an untrusted relative ``name`` (rule 3), checked (rule 1).

        Raises :class:`ContainmentError` when ``name`` is refused, leaves the area,
        or passes through a symbolic link on its way (even one that stays inside).
        """
        rel = check_relative(name, what)
        lexical = self.check(base, "delete").joinpath(*rel.parts)
        resolved = self.check(lexical, "delete")
        if resolved != lexical:
            raise ContainmentError(f"{what} {name!r:.200} goes through a symbolic link "
                                   f"(it resolves to {resolved}); refused")
        return resolved

    # -- directory descriptors (rule 2 at the moment of the operation) --------

    @contextlib.contextmanager
    def _parent_fd(self, path: str | os.PathLike[str], action: str,
                   create: bool = False) -> Iterator[tuple[int, str]]:
        """A descriptor of ``path``'s parent, reached from the anchor without following any
        link, and ``path``'s last component.  ``create`` makes missing directories."""
        parts = self._parts(path, action)
        fd = os.open(self.anchor, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for i, part in enumerate(parts[:-1]):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                try:
                    sub = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise ContainmentError(
                            f"refusing to {action} {self.anchor.joinpath(*parts)}: "
                            f"{part!r} on the way is a symbolic link or not a directory"
                        ) from None
                    # Name the directory in full, not the component the call saw.
                    where = self.anchor.joinpath(*parts[:i + 1])
                    raise type(exc)(exc.errno, exc.strerror, str(where)) from None
                os.close(fd)
                fd = sub
            yield fd, parts[-1]
        finally:
            os.close(fd)

    # -- operations ------------------------------------------------------------

    def make_anchor(self) -> None:
        """Create the directory that will hold the output (``--out a/b/report`` makes
        ``a/b``): the user named it."""
        try:
            self.anchor.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file where a directory is due, at or above the anchor
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR),
                                     str(self.anchor)) from None

    def make_dir(self, path: str | os.PathLike[str]) -> Path:
        """Create directory ``path`` and its missing parents inside the area."""
        with self._parent_fd(path, "create", create=True) as (fd, name):
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                raise ContainmentError(f"refusing to use {path}: it exists and is not a "
                                       "directory (or is a symbolic link)")
        return Path(path)

    def write_atomic(self, path: str | os.PathLike[str], data: bytes) -> Path:
        """Write ``data`` to ``path`` atomically (temporary file beside it, fsync, rename).

        The file gets the permission bits of the file it replaces, else ``0o666``
        less the umask, as a plain ``open(path, "w")`` would.
        """
        target = self.check(path)
        with self._parent_fd(target, "write", create=True) as (fd, name):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
            except FileNotFoundError:
                mode = None
            while True:
                tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
                try:
                    # 0o666: the kernel applies the umask, as for any new file.
                    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                  | getattr(os, "O_NOFOLLOW", 0), 0o666, dir_fd=fd)
                    break
                except FileExistsError:  # pragma: no cover - 32 random bits collided
                    continue
            try:
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                    if mode is not None:
                        os.fchmod(fh.fileno(), mode)
                os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException as exc:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
                if isinstance(exc, OSError) and exc.filename is None:
                    # A write()/fsync() error names no file: say which one.
                    raise OSError(exc.errno, exc.strerror, str(target)) from exc
                raise
            self._remove_stale_temps(fd, name)
        return target

    def create_exclusive(self, path: str | os.PathLike[str], text: str) -> bool:
        """Create ``path`` holding ``text`` unless it exists (``O_EXCL``); whether it did."""
        with self._parent_fd(path, "create") as (fd, name):
            try:
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                              | getattr(os, "O_NOFOLLOW", 0), 0o644, dir_fd=fd)
            except FileExistsError:
                return False
            with os.fdopen(out, "w", encoding="utf-8") as fh:
                fh.write(text)
        return True

    def remove_file(self, path: str | os.PathLike[str], *, missing_ok: bool = False) -> None:
        """Delete the file (or symbolic link, never its target) ``path``."""
        try:
            with self._parent_fd(path, "delete") as (fd, name):
                os.unlink(name, dir_fd=fd)
        except FileNotFoundError:  # the file, or a directory above it
            if not missing_ok:
                raise

    def remove_dir(self, path: str | os.PathLike[str]) -> None:
        """Delete the empty directory ``path`` (``OSError`` when it is not empty)."""
        with self._parent_fd(path, "delete") as (fd, name):
            os.rmdir(name, dir_fd=fd)

    def remove_tree(self, path: str | os.PathLike[str]) -> None:
        """Delete the directory tree ``path``; links inside are removed, never followed."""
        with self._parent_fd(path, "delete") as (fd, name):
            if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                raise ContainmentError(f"refusing to delete the tree {path}: it is a "
                                       "symbolic link")
            shutil.rmtree(name, dir_fd=fd)

    def move(self, src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
               replace: bool = False) -> None:
        """Move ``src`` to ``dst``, both in the area.

        Without ``replace`` it is ``os.rename`` (which on POSIX still replaces a
        file, or an empty directory, at ``dst``); ``replace=True`` documents that
        replacing is intended (``os.replace``).
        """
        with self._parent_fd(src, "move") as (sfd, sname), \
                self._parent_fd(dst, "move into") as (dfd, dname):
            (os.replace if replace else os.rename)(sname, dname, src_dir_fd=sfd,
                                                   dst_dir_fd=dfd)

    # -- housekeeping ----------------------------------------------------------

    @staticmethod
    def _remove_stale_temps(fd: int, name: str) -> None:
        """Remove temporary files of ``name`` left by writers that were killed (their pid
        is gone), so an interrupted run leaves no litter beside its output."""
        with contextlib.suppress(OSError):
            for entry in os.listdir(fd):
                m = _TEMP.match(entry)
                if m and m["name"] == name and int(m["pid"]) != os.getpid() \
                        and not _alive(int(m["pid"])):
                    with contextlib.suppress(OSError):
                        os.unlink(entry, dir_fd=fd)


def make_output_dir(out: str | os.PathLike[str]) -> Path:
    """Create the output directory ``out`` (and the directories above it) unless it exists;
    return it.  A link the user named as ``out`` is used as it is.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     make_output_dir(Path(tmp) / "a" / "b").is_dir()
    True
    """
    area = OutputArea.directory(out)
    if not os.path.isdir(area.root):
        area.make_anchor()
        area.make_dir(area.root)
    return Path(out)


def _anchored(out: str | os.PathLike[str], what: str) -> Path:
    """``out`` absolute with its parent resolved (the output itself may be a link: it is
    then replaced, never followed)."""
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"{what} must be a path (str or os.PathLike); got "
                        f"{type(out).__name__} {out!r:.60}")
    text = os.fspath(out)
    if not isinstance(text, str) or not text or "\x00" in text:
        raise ValueError(f"{what} must be a non-empty path without NUL; got {text!r:.60}")
    p = Path(text)
    if not p.is_absolute():
        p = Path.cwd() / p
    if p.name in ("", ".", ".."):
        p = Path(os.path.realpath(p))  # "--out ." names the current directory
    return Path(os.path.realpath(p.parent)) / p.name


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (owned by anyone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
