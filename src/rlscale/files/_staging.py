"""Stage an output directory beside its destination and publish it by rename.

A report is assembled in a hidden staging directory ``.NAME.partial`` beside
its destination ``NAME`` and moved into place at the end, so a reader never
sees half a report.  The rules below exist so that nothing a user wrote is
ever deleted (issue 10, §1):

1. **The staging directory must be ours.**  It is created atomically with a
   marker file (:data:`STAGING_MARKER`, holding a random token); a
   ``.NAME.partial`` without that marker is refused, untouched.
2. **Resuming removes only report outputs.**  An interrupted run's finished
   training runs (``*.csv``) are kept; the other names a report writes
   (:data:`OUTPUT_PATTERNS`) are removed; anything else in the staging
   directory is refused by name, untouched.
3. **A published report lists what it wrote.**  Its marker
   (:data:`MARKER`) records every file the report created.  When a report
   replaces an older one, the older one's listed files are deleted one by
   one; everything else in it (a user's notes, a ``thesis.tex``) is moved
   into the new report at the same relative path.  A report from before
   manifests existed counts as having written the names that match
   :data:`OUTPUT_PATTERNS`.
4. **The destination is checked again at the moment of publishing.**  A
   directory that appeared at ``NAME`` while the report ran is refused,
   untouched (the finished report stays in the staging directory), and the
   directory moved aside is verified to be the report that was checked.
5. **A manifest is untrusted input** (issue 22, D1).  Every entry of an old
   report's ``files`` list must be a plain relative path
   (:func:`~rlscale.files._containment.check_relative`: no ``..``, no
   absolute path, no Unicode that normalises to something else), start with a
   name a report writes (:data:`OUTPUT_PATTERNS`) and resolve inside the old
   report without passing through a symbolic link; an entry that fails is
   ignored and reported (:attr:`PublishOutcome.refused`), never followed.
   Every file operation here goes through the output's
   :class:`~rlscale.files._containment.OutputArea`.

6. **A publish that a kill interrupted is finished or undone by the next run**
   (issue 22).  Publishing moves the old report aside (``.NAME.old-PID-NS``),
   moves the user's files from it into the new report, moves the new report
   into place and deletes the old one's files; ``kill -9`` can stop it between
   any two of these.  :func:`open_staging` looks for the working names of a
   run whose process is gone: with no report at ``NAME``, the old report is put
   back, with the user's files it had already given to the new report; with a
   report at ``NAME``, the old one's clean-up is finished as :func:`publish`
   would have finished it.  A half-made staging directory
   (``.NAME.partial.new-PID-*``) of a dead run is removed.
7. **Ctrl-C and ``kill`` wait for the renames** (issue 22).  :func:`publish`
   runs under :func:`~rlscale.files._deferred.deferred_signals`: a SIGINT or
   SIGTERM that arrives while it moves directories is delivered when it has
   finished, so an interrupted command leaves the previous report or the
   complete new one, never a mixture.  Any other exception between moving the
   old report aside and moving the new one in (a full disk, a permission
   changed meanwhile) puts the old report back before it propagates.

Only :func:`check_destination`, :func:`open_staging`, :func:`close_staging`
and :func:`publish` are meant for callers.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rlscale.files._atomic import write_text_atomic
from rlscale.files._containment import ContainmentError, OutputArea, _alive
from rlscale.files._deferred import deferred_signals

__all__ = ["LOCK", "MARKER", "OUTPUT_PATTERNS", "STAGING_MARKER", "PublishOutcome",
           "check_destination", "close_staging", "open_staging", "publish"]

#: In a published report: JSON ``{"rlscale_report": 1, "files": [...]}``.
MARKER = ".rlscale-report"
#: In a staging directory from its creation: JSON ``{"rlscale_staging": 1, "token": ...}``.
STAGING_MARKER = ".rlscale-staging"
#: In the staging directory while a run writes to it (holds the run's pid).
LOCK = ".lock"
#: Top-level names a report writes (shell patterns).  ``.*.tmp`` are the
#: temporary files of an atomic write that a kill interrupted.
OUTPUT_PATTERNS: tuple[str, ...] = (
    "index.md", "index.html", "results.json", "config.toml", MARKER, STAGING_MARKER, LOCK,
    "*.png", "*.csv", "reward-law", ".*.tmp",
)


def _is_output(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in OUTPUT_PATTERNS)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_destination(out: Path) -> None:
    """Refuse ``out`` unless it is absent, empty, or an rlscale report, and writable.

    Raises
    ------
    ValueError
        ``out`` is a file, a non-empty directory without :data:`MARKER`, or
        cannot be written (a read-only directory or file system), checked
        before any work.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ValueError(f"--out {out} exists and is not a directory; refusing to replace it")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ValueError(f"--out {out} exists and is not an rlscale report (no {MARKER}); "
                         "refusing to overwrite it")
    check_writable(out)


def check_writable(out: Path) -> None:
    """Refuse, before any work, an output whose directory (or the nearest existing one
    above it) cannot be written: a read-only directory or file system.

    ``os.access`` answers for the real user and says ``EROFS`` even to root.
    """
    existing = out if out.is_dir() else next(
        (p for p in out.parents if p.is_dir()), Path(out.anchor or "/"))
    targets = [existing] if existing != out else [out, *([out.parent] if out.parent.is_dir()
                                                        else [])]
    for d in targets:
        if not os.access(d, os.W_OK | os.X_OK):
            raise ValueError(f"--out {out}: cannot write in {d} (read-only directory or file "
                             "system, or no permission); choose another --out")


# ---------------------------------------------------------------------------
# Staging
# ---------------------------------------------------------------------------

def staging_path(out: Path) -> Path:
    """The staging directory of ``out``: ``.NAME.partial`` beside it."""
    return out.parent / f".{out.name}.partial"


def open_staging(out: Path) -> Path:
    """Create or resume, lock and clean the staging directory of ``out``.

    Returns
    -------
    Path
        The staging directory, locked for this process (release it with
        :func:`close_staging`), holding only an interrupted run's ``*.csv``
        results besides its marker and lock.

    Raises
    ------
    ValueError
        The staging path exists but is not rlscale's (rule 1), another live
        run holds it, or it holds files a report does not write (rule 2).
    """
    area = OutputArea.directory(out)
    staging = staging_path(area.root)
    if not os.path.lexists(staging):
        _create_staging(area, staging)
    if staging.is_symlink() or not staging.is_dir():
        raise ValueError(f"staging path {staging} exists and is not a directory; "
                         "move it away and rerun")
    if _read_json(staging / STAGING_MARKER) is None:
        raise ValueError(f"{staging} exists but is not an rlscale staging directory (no valid "
                         f"{STAGING_MARKER}); it was left untouched: move it away and rerun")
    _lock(area, staging)
    try:
        recover_interrupted(area, staging)
        _clean(area, staging)
    except BaseException:
        close_staging(staging)
        raise
    return staging


def close_staging(staging: Path) -> None:
    """Release this process's lock on ``staging`` (idempotent)."""
    _staging_area(staging).remove_file(staging / LOCK, missing_ok=True)


def _staging_area(staging: Path) -> OutputArea:
    """The area of the report whose staging directory is ``staging`` (``.NAME.partial``)."""
    name = staging.name
    if not (name.startswith(".") and name.endswith(".partial") and len(name) > 9):
        raise ContainmentError(f"{staging} is not a staging directory name (.NAME.partial)")
    return OutputArea.directory(staging.parent / name[1:-len(".partial")])


def _create_staging(area: OutputArea, staging: Path) -> None:
    # Made under a private name with its marker, then renamed: a staging
    # directory never exists without the marker, even if a kill interrupts.
    area.make_anchor()
    tmp = staging.with_name(f"{staging.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    area.make_dir(tmp)
    try:
        token = {"rlscale_staging": 1, "token": secrets.token_hex(16)}
        write_text_atomic(tmp / STAGING_MARKER, json.dumps(token) + "\n", root=area)
        try:
            area.move(tmp, staging)  # replaces at most an empty directory
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                raise
            # Another process created it first; the checks that follow decide.
    finally:
        with contextlib.suppress(OSError):
            area.remove_tree(tmp)


def _lock(area: OutputArea, staging: Path) -> None:
    """Claim ``staging`` for this process; refuse while a live run holds it.

    Two runs writing the same report would resume, clean and publish each
    other's half-written files.  A lock left by a run that died (its pid no
    longer exists) is taken over.
    """
    lock = staging / LOCK
    while not area.create_exclusive(lock, f"{os.getpid()}\n"):
        try:
            pid = int(lock.read_text().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid > 0 and pid != os.getpid() and _alive(pid):
            raise ValueError(f"another rlscale report (pid {pid}) is writing into "
                             f"{staging}; wait for it, or remove {lock} if it is not "
                             "running")
        area.remove_file(lock, missing_ok=True)


def _clean(area: OutputArea, staging: Path) -> None:
    """Remove an interrupted run's outputs but its training runs (rule 2)."""
    entries = list(staging.iterdir())
    foreign = sorted(e.name for e in entries if not _is_output(e.name))
    if foreign:
        raise ValueError(f"{staging} holds files an rlscale report does not write: "
                         f"{', '.join(foreign)}; move them away and rerun (nothing was removed)")
    for entry in entries:
        if entry.name in (LOCK, STAGING_MARKER) or (
                entry.suffix == ".csv" and entry.is_file() and not entry.is_symlink()):
            continue
        if entry.is_dir() and not entry.is_symlink():
            area.remove_tree(entry)
        else:
            area.remove_file(entry)


# ---------------------------------------------------------------------------
# Publishing
# ---------------------------------------------------------------------------

@dataclass
class PublishOutcome:
    """What :func:`publish` did besides moving the report into place.

    Attributes
    ----------
    kept : list of str
        Files and folders of the replaced directory that the old report did
        not write, moved into the new report (paths relative to it).
    left : Path or None
        The replaced directory, when something in it could be neither
        deleted (not the old report's, or deleting failed: a read-only
        directory) nor moved (its name is taken in the new report); it is kept
        there, hidden, beside the report.
    refused : list of str
        Entries of the old report's manifest that were ignored, never
        followed, each with the reason (rule 5): a path that leaves the report,
        goes through a symbolic link, or names a file a report does not write.
    """

    kept: list[str] = field(default_factory=list)
    left: Path | None = None
    refused: list[str] = field(default_factory=list)


def _walk(root: Path) -> Iterable[PurePosixPath]:
    """Relative paths of the files (and symlinks) under ``root``, never following links."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = PurePosixPath(Path(dirpath).relative_to(root).as_posix())
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            yield rel / name


def _manifest(area: OutputArea, report: Path) -> tuple[set[str], list[str]]:
    """The files the report at ``report`` wrote (relative paths, rule 3) and the manifest
    entries refused (rule 5), each with its reason."""
    data = _read_json(report / MARKER) or {}
    files = data.get("files")
    if not isinstance(files, list):
        # A report from before manifests: the names a report writes.
        return {str(p) for p in _walk(report) if _is_output(p.parts[0])}, []
    # The staging marker too: a publish killed just after the rename leaves it (rule 6).
    ours, refused = {MARKER, STAGING_MARKER}, []
    for entry in files:
        try:
            area.join(report, entry, "manifest entry")
            rel = PurePosixPath(entry)
            if not _is_output(rel.parts[0]):
                raise ContainmentError(f"manifest entry {entry!r} is not a name a report "
                                       "writes; refused")
        except ContainmentError as exc:
            refused.append(str(exc))
            continue
        ours.add(str(rel))
    return ours, refused


def _foreign(report: Path, ours: set[str]) -> list[PurePosixPath]:
    """Top-most paths under ``report`` that hold nothing of ``ours``."""
    dirs_with_ours = {str(parent) for f in ours for parent in PurePosixPath(f).parents}
    found: list[PurePosixPath] = []

    def visit(rel: PurePosixPath) -> None:
        for entry in sorted((report / rel).iterdir()):
            sub = rel / entry.name
            if str(sub) in ours:
                continue
            if entry.is_dir() and not entry.is_symlink() and str(sub) in dirs_with_ours:
                visit(sub)
            else:
                found.append(sub)

    visit(PurePosixPath("."))
    return found


def publish(staging: Path, out: Path) -> PublishOutcome:
    """Move the finished report in ``staging`` to ``out`` (rules 3, 4 and 5).

    ``staging`` must hold the report's :data:`MARKER`; its ``files`` list is
    completed here from what ``staging`` holds.

    A SIGINT or SIGTERM that arrives meanwhile is delivered when publishing has
    finished (rule 7): ``KeyboardInterrupt`` is then raised with the new report in
    place.

    Raises
    ------
    ValueError
        ``out`` is no longer absent, empty or an rlscale report; the report
        is left complete in ``staging`` and ``out`` is untouched.
    """
    with deferred_signals():
        return _publish(staging, out)


def _publish(staging: Path, out: Path) -> PublishOutcome:
    outcome = PublishOutcome()
    area = OutputArea.directory(out)
    out = area.root
    close_staging(staging)
    files = sorted({str(p) for p in _walk(staging) if str(p) != STAGING_MARKER} | {MARKER})
    write_text_atomic(staging / MARKER,
                      json.dumps({"rlscale_report": 1, "files": files}, indent=1) + "\n",
                      root=area)
    hint = f"the finished report is in {staging}"
    check_destination(out)  # again: the directory may have appeared meanwhile
    if not os.path.lexists(out):
        try:
            area.move(staging, out)  # replaces at most an empty directory
        except OSError as exc:
            raise ValueError(f"--out {out} appeared while the report ran and is not empty; "
                             f"it was left untouched ({hint})") from exc
        area.remove_file(out / STAGING_MARKER, missing_ok=True)
        return outcome

    old = out.with_name(f".{out.name}.old-{os.getpid()}-{time.time_ns()}")
    area.move(out, old)
    if not (old / MARKER).is_file() and any(old.iterdir()):
        # Replaced between the check and the rename: put it back, untouched.
        area.move(old, out)
        raise ValueError(f"--out {out} changed while publishing and is not an rlscale report; "
                         f"it was left untouched ({hint})")
    try:
        ours, outcome.refused = _manifest(area, old)
        for rel in _foreign(old, ours):
            target = staging / rel
            if os.path.lexists(target):
                continue  # name taken by the new report: stays in `old`, reported below
            area.make_dir(target.parent)
            area.move(old / rel, target)
            outcome.kept.append(str(rel))
        area.move(staging, out)
    except BaseException:
        if not os.path.lexists(out):  # the new report is not in place: undo (rule 7)
            # If putting back fails too, the next run's recovery does it (rule 6).
            with contextlib.suppress(OSError, ContainmentError):
                _put_back(area, old, staging)
        raise
    area.remove_file(out / STAGING_MARKER, missing_ok=True)
    _retire(area, old, ours)
    if old.exists():
        outcome.left = old
    return outcome


def _retire(area: OutputArea, old: Path, ours: set[str]) -> None:
    """Delete the files the replaced report ``old`` wrote (``ours``), then its empty
    directories; what is left (a user's file whose name the new report took, a file
    that could not be deleted) stays in ``old``."""
    for rel in sorted(ours, key=lambda r: -len(PurePosixPath(r).parts)):
        path = old / rel
        # Deleting may fail (a read-only directory): the file then stays in `old`,
        # reported through `left`, and the new report is published all the same.
        with contextlib.suppress(OSError, ContainmentError):
            if path.is_symlink() or path.is_file():
                area.remove_file(path)
    for dirpath, _dirnames, _files in sorted(os.walk(old), key=lambda w: -len(w[0])):
        # Not empty: holds what could be neither deleted nor moved.
        with contextlib.suppress(OSError, ContainmentError):
            area.remove_dir(dirpath)


def _dead_working_names(area: OutputArea, kind: str) -> list[Path]:
    """Working names beside the output (``.NAME.old-PID-NS``, ``.NAME.partial.new-PID-HEX``)
    of runs whose process is gone, oldest first; real directories only."""
    out = area.root
    prefix = f".{out.name}.{kind}-"
    found = []
    for entry in out.parent.iterdir() if out.parent.is_dir() else ():
        if not entry.name.startswith(prefix) or entry.is_symlink() or not entry.is_dir():
            continue
        pid, _, tail = entry.name[len(prefix):].partition("-")
        if pid.isdigit() and tail and int(pid) != os.getpid() and not _alive(int(pid)):
            found.append((tail, entry))
    return [entry for _, entry in sorted(found)]


def _put_back(area: OutputArea, old: Path, staging: Path) -> None:
    """Undo a publish stopped before the new report was in place: the old report
    ``old`` goes back to the output, with the user's files it had given the new
    report in ``staging`` (those its manifest does not list)."""
    new_files = (_read_json(staging / MARKER) or {}).get("files")
    if isinstance(new_files, list) and staging.is_dir():
        listed = {f for f in new_files if isinstance(f, str)}
        for rel in sorted(_walk(staging)):
            if str(rel) in listed or str(rel) in (LOCK, STAGING_MARKER) or (
                    os.path.lexists(old / rel)):
                continue
            area.make_dir((old / rel).parent)
            area.move(staging / rel, old / rel)
            # The folders made for it in the staging directory are not the report's:
            # left empty there, the next run would refuse them as foreign.
            for parent in PurePosixPath(rel).parents:
                if str(parent) == ".":
                    break
                with contextlib.suppress(OSError, ContainmentError):
                    area.remove_dir(staging / parent)
    area.move(old, area.root)


def recover_interrupted(area: OutputArea, staging: Path) -> list[str]:
    """Finish or undo the publish of a run that was killed (rule 6); what was done.

    Called by :func:`open_staging` under the staging lock, before cleaning.
    """
    out, done = area.root, []
    for tmp in _dead_working_names(area, "partial.new"):
        with contextlib.suppress(OSError, ContainmentError):
            area.remove_tree(tmp)
            done.append(f"removed the half-made staging directory {tmp.name}")
    for old in _dead_working_names(area, "old"):
        if (old / MARKER).is_file() and not os.path.lexists(out):
            # Killed between moving the old report aside and moving the new one in.
            _put_back(area, old, staging)
            done.append(f"put back the report {old.name} that an interrupted publish had "
                        "moved aside")
        elif os.path.lexists(out):
            # Killed after the new report was in place: finish the old one's clean-up.
            ours, _ = _manifest(area, old)
            for rel in _foreign(old, ours):
                if not os.path.lexists(out / rel):
                    area.make_dir((out / rel).parent)
                    area.move(old / rel, out / rel)
            _retire(area, old, ours)
            done.append(f"finished the clean-up of {old.name}")
    return done
