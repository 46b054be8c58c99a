"""Nothing outside the output is ever written or deleted (issue 22, D1).

Three layers: the decision (:class:`~rlscale.files._containment.OutputArea`
and :func:`~rlscale.files._containment.check_relative`) on forged names;
publishing over reports whose manifest is forged (``..``, absolute paths,
symbolic-linked parents, Unicode look-alikes), where every file outside the
old report must survive and every refused entry be reported; and a walk over
the library's syntax trees that fails on any file operation (delete, rename,
write, create) outside the one module that decides.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from rlscale.files._atomic import write_bytes_atomic, write_text_atomic
from rlscale.files._containment import (
    ContainmentError,
    OutputArea,
    check_relative,
    make_output_dir,
)
from rlscale.files._staging import MARKER, open_staging, publish

REPO = Path(__file__).resolve().parents[1]

#: Manifest entries that must never be followed, with what makes each one hostile.
FORGED = {
    "parent": "../victim.txt",
    "parent inside": "reward-law/../../victim.txt",
    "deep parent": "a/b/../../../victim.txt",
    "dot": "./index.md",
    "empty component": "reward-law//heatmap.png",
    "trailing slash": "reward-law/",
    "empty": "",
    "backslash": "..\\victim.txt",
    "nul": "index.md\x00../victim.txt",
    "fullwidth dots": "\uff0e\uff0e/victim.txt",            # NFKC: ../victim.txt
    "one-dot leaders": "\u2024\u2024/victim.txt",            # NFKC: ../victim.txt
    "fullwidth solidus": "..\uff0fvictim.txt",               # NFKC: ../victim.txt
    "right-to-left override": "index\u202egnp.md",
    "zero-width space": "index.md\u200b",
    "decomposed accent": "re\u0301sume\u0301.png",          # not NFC
    "ligature": "\ufb01ts.png",                              # NFKC: fits.png
    "line separator": "index.md\u2028",
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_forged_relative_names_are_refused(name: str) -> None:
    with pytest.raises(ContainmentError, match=r"refused"):
        check_relative(FORGED[name], "manifest entry")


@pytest.mark.parametrize("value", [None, 3, b"index.md", ["index.md"], "/etc/passwd"])
def test_non_strings_and_absolute_names_are_refused(value) -> None:
    with pytest.raises(ContainmentError, match=r"manifest entry"):
        check_relative(value, "manifest entry")


def test_plain_names_pass() -> None:
    for name in ("index.md", "reward-law/trainer/gold_vs_kl.png", "a b.png", "héllo.png"):
        assert str(check_relative(name)) == name


# -- the area ------------------------------------------------------------------

def test_the_area_is_the_output_and_its_working_names(tmp_path: Path) -> None:
    area = OutputArea.directory(tmp_path / "R")
    inside = ["R", "R/a/b.png", ".R.partial/x.csv", ".R.partial.new-1-ab", ".R.old-3-4/y",
              ".R.77.0123abcd.tmp"]
    outside = ["victim.txt", "R2/x", ".R2.partial", ".Rx.old-1", "R/../victim.txt",
               ".R.partial/../victim.txt", "."]
    assert all(area.allows(tmp_path / p) for p in inside)
    assert not any(area.allows(tmp_path / p) for p in outside)
    assert not area.allows(tmp_path.parent / "R")
    single = OutputArea.file(tmp_path / "results.csv")
    assert single.allows(tmp_path / "results.csv")
    assert single.allows(tmp_path / ".results.csv.12.0123abcd.tmp")
    assert not single.allows(tmp_path / "results.csv" / "x")
    assert not single.allows(tmp_path / ".results.csv.partial")
    assert not single.allows(tmp_path / "other.csv")


def test_a_symlinked_parent_that_leaves_is_outside(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "victim.txt").write_text("precious")
    out = tmp_path / "R"
    out.mkdir()
    (out / "link").symlink_to(outside)
    area = OutputArea.directory(out)
    assert not area.allows(out / "link" / "victim.txt")
    with pytest.raises(ContainmentError, match=r"outside the output"):
        area.remove_file(out / "link" / "victim.txt")
    with pytest.raises(ContainmentError, match=r"outside the output"):
        write_text_atomic(out / "link" / "victim.txt", "overwritten", root=out)
    assert (outside / "victim.txt").read_text() == "precious"


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
        tmp_path: Path, monkeypatch) -> None:
    # The window between the decision (realpath) and the operation: simulated by a
    # decision taken while `sub` was a directory, then `sub` replaced by a link.
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "victim.txt").write_text("precious")
    out = tmp_path / "R"
    (out / "sub").mkdir(parents=True)
    area = OutputArea.directory(out)
    parts = area._parts(out / "sub" / "victim.txt", "delete")
    (out / "sub").rmdir()
    (out / "sub").symlink_to(outside)
    monkeypatch.setattr(OutputArea, "_parts", lambda self, path, action: parts)
    with pytest.raises(ContainmentError, match=r"'sub' on the way is a symbolic link"):
        area.remove_file(out / "sub" / "victim.txt")
    assert (outside / "victim.txt").read_text() == "precious"


def test_writing_over_a_link_replaces_the_link_not_its_target(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious")
    link = tmp_path / "results.csv"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert target.read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "new"


def test_atomic_writes_refuse_paths_outside_their_root(tmp_path: Path) -> None:
    (tmp_path / "victim.txt").write_text("precious")
    for path in (tmp_path / "victim.txt", tmp_path / "R" / ".." / "victim.txt"):
        with pytest.raises(ContainmentError):
            write_bytes_atomic(path, b"x", root=tmp_path / "R")
    assert (tmp_path / "victim.txt").read_text() == "precious"
    assert write_bytes_atomic(tmp_path / "R" / "a" / "b.bin", b"y", root=tmp_path / "R") \
        .read_bytes() == b"y"


def test_temporary_files_of_killed_writers_are_cleared(tmp_path: Path) -> None:
    dead = 2**22 + 12345  # above pid_max's default: no such process
    stale = tmp_path / f".results.csv.{dead}.0123abcd.tmp"
    stale.write_text("half a table")
    other = tmp_path / f".other.csv.{dead}.0123abcd.tmp"  # another file's: not ours to clear
    other.write_text("x")
    write_text_atomic(tmp_path / "results.csv", "a,b\n")
    assert not stale.exists() and other.exists()


def test_make_output_dir_creates_parents_and_accepts_a_named_link(tmp_path: Path) -> None:
    assert make_output_dir(tmp_path / "a" / "b").is_dir()
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    make_output_dir(tmp_path / "alias")  # the user named the link: used as it is
    (tmp_path / "file").write_text("x")
    with pytest.raises(ContainmentError, match=r"not a directory"):
        make_output_dir(tmp_path / "file")


# -- forged manifests ----------------------------------------------------------------

def _report(out: Path, text: str) -> Path:
    staging = open_staging(out)
    (staging / "index.md").write_text(text)
    (staging / "reward-law").mkdir(exist_ok=True)
    (staging / "reward-law" / "heatmap.png").write_text(text)
    return staging


def _forge(out: Path, entries: list) -> None:
    (out / MARKER).write_text(json.dumps({"rlscale_report": 1, "files": entries}))


def _snapshot(root: Path, skip: Path) -> dict[str, bytes]:
    """Every file under ``root`` but ``skip`` (the report), with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and skip not in p.parents}


def test_forged_manifests_delete_nothing_outside_the_report(tmp_path: Path) -> None:
    work = tmp_path / "work"
    out = work / "R"
    (tmp_path / "victim.txt").write_text("precious")
    (work).mkdir()
    (work / "victim.txt").write_text("precious too")
    (work / "victims").mkdir()
    (work / "victims" / "heatmap.png").write_text("a user's figure")
    publish(_report(out, "first"), out)
    (out / "notes.txt").write_text("mine")  # a user's file inside the report
    (out / "links").symlink_to(work / "victims")  # a symlinked parent that leaves
    entries = [*FORGED.values(), str(tmp_path / "victim.txt"), str(work / "victim.txt"),
               "links/heatmap.png", "notes.txt", 42, None, "index.md", "reward-law/heatmap.png"]
    _forge(out, entries)
    before = _snapshot(tmp_path, out)
    outcome = publish(_report(out, "second"), out)
    assert _snapshot(tmp_path, out) == before  # nothing outside the report changed
    assert (out / "index.md").read_text() == "second"
    assert (out / "notes.txt").read_text() == "mine"  # listed by the forger: still kept
    assert (work / "victims" / "heatmap.png").read_text() == "a user's figure"
    refused = " | ".join(outcome.refused)
    assert len(outcome.refused) == len(entries) - 2, outcome.refused  # all but the last two
    for reason in ("has a '..' component", "is absolute", "symbolic link",
                   "not a name a report writes", "is a int, not a string",
                   "changes under Unicode normalisation"):
        assert reason in refused, reason
    assert sorted(p.name for p in work.iterdir()) == ["R", "victim.txt", "victims"]


def test_a_symlinked_parent_into_the_new_report_deletes_nothing_of_it(tmp_path: Path) -> None:
    # An old report whose reward-law/ is a link to the path the new report is about to
    # take: following it would delete the new report's own figure.
    out = tmp_path / "R"
    publish(_report(out, "first"), out)
    import shutil

    shutil.rmtree(out / "reward-law")
    (out / "reward-law").symlink_to(out)  # resolves to R itself once the new one is there
    _forge(out, ["index.md", "reward-law/index.md"])
    outcome = publish(_report(out, "second"), out)
    assert (out / "index.md").read_text() == "second"
    assert (out / "reward-law" / "heatmap.png").read_text() == "second"
    assert any("symbolic link" in r for r in outcome.refused), outcome.refused


def test_a_manifest_that_is_not_a_list_is_read_as_a_report_without_one(tmp_path: Path) -> None:
    out = tmp_path / "R"
    publish(_report(out, "first"), out)
    (out / "thesis.tex").write_text("precious")
    (out / MARKER).write_text(json.dumps({"rlscale_report": 1, "files": "../victim.txt"}))
    outcome = publish(_report(out, "second"), out)
    assert (out / "thesis.tex").read_text() == "precious"
    assert outcome.kept == ["thesis.tex"]


def test_the_cli_reports_refused_manifest_entries() -> None:
    # The report verb prints PublishOutcome.refused on stderr (one line); the text is
    # checked here from the source so the check costs no report run.
    src = (REPO / "src" / "rlscale" / "commands" / "report.py").read_text()
    assert "kept.refused" in src and "manifest" in src


# -- no file operation outside the one module that decides -------------------------

LIBRARY = [REPO / "src" / "rlscale", REPO / "theory", REPO / "optimize", REPO / "simulate",
           REPO / "proofs"]
HELPER = Path("src/rlscale/files/_containment.py")
#: Modules allowed to touch files themselves, and why.
ALLOWED = {
    # optimize may not import rlscale.files (the layering test forbids it); FitResult.plot
    # and FitResult.save write the one file their caller names, atomically (temporary file
    # + os.replace), through this module's one writer.
    Path("optimize/_fit_io.py"): {"os.open", "os.fdopen", "os.replace", ".unlink", ".mkdir"},
}
_OS = {"remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "open",
       "mkdir", "makedirs", "truncate", "link", "symlink", "chmod", "chown", "lchown",
       "utime", "mkfifo", "mknod"}
_SHUTIL = {"rmtree", "move", "copy", "copy2", "copyfile", "copytree", "copymode", "copystat"}
_TEMPFILE = {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile",
             "TemporaryDirectory", "SpooledTemporaryFile"}
_NUMPY = {"save", "savez", "savez_compressed", "savetxt"}
#: Other modules' calls that write files or start a program that could (issue 22, item 1:
#: the walker names every way out, not only the ones the code uses today).
_OTHER = {"subprocess": {"run", "Popen", "call", "check_call", "check_output"},
          "zipfile": {"ZipFile"}, "tarfile": {"open"}, "shelve": {"open"},
          "sqlite3": {"connect"}, "joblib": {"dump"}, "pickle": {"dump"}}
_OS_PROGRAMS = {"system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve",
                "execvp", "spawnv", "spawnl", "startfile"}
_METHODS = {"unlink", "rmdir", "rename", "rmtree", "mkdir", "touch", "write_text",
            "write_bytes", "symlink_to", "hardlink_to", "tofile", "to_csv", "to_parquet",
            "to_pickle", "to_excel", "lchmod", "chmod"}


def _writes_mode(call: ast.Call, position: int) -> bool:
    mode = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    if not isinstance(mode, ast.Constant) or not isinstance(mode.value, str):
        return True  # a computed mode: assume the worst
    return any(c in mode.value for c in "wax+")


def _buffers(func: ast.AST) -> set[str]:
    """Names bound to an in-memory buffer (``io.BytesIO()``) in ``func``."""
    names = set()
    for node in ast.walk(func):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) in ("io.BytesIO", "BytesIO", "io.StringIO")):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def file_operations(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, operation)`` for every call in ``tree`` that writes, creates, renames or
    deletes a file."""
    found = []
    scopes = [n for n in ast.walk(tree)
              if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module)]
    buffers = {id(n): _buffers(n) for n in scopes}
    owner: dict[int, set[str]] = {}
    for scope in scopes:  # the innermost scope wins: visited outer to inner
        for node in ast.walk(scope):
            owner[id(node)] = buffers[id(scope)]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = ast.unparse(f)
        op = None
        if isinstance(f, ast.Attribute):
            base, attr = ast.unparse(f.value), f.attr
            if base == "os" and attr in _OS:
                op = f"os.{attr}"
            elif base == "shutil" and attr in _SHUTIL:
                op = f"shutil.{attr}"
            elif base == "tempfile" and attr in _TEMPFILE:
                op = f"tempfile.{attr}"
            elif base in ("np", "numpy") and attr in _NUMPY:
                op = f"np.{attr}"
            elif base == "os" and attr in _OS_PROGRAMS:
                op = f"os.{attr}"
            elif attr in _OTHER.get(base, ()):
                op = f"{base}.{attr}"
            elif attr == "to_csv" and not node.args and not node.keywords:
                pass  # to_csv() without a path returns the text (pandas, and our records)
            elif attr in _METHODS:
                op = f".{attr}"
            elif attr == "replace" and len(node.args) == 1 and not node.keywords:
                op = ".replace"  # Path.replace(target); str.replace takes two arguments
            elif attr == "open" and _writes_mode(node, 0):
                op = ".open"  # Path.open("w")
            elif attr == "fdopen" and _writes_mode(node, 1):
                op = "os.fdopen"
            elif attr == "savefig":
                target = node.args[0] if node.args else None
                if not (isinstance(target, ast.Name) and target.id in owner[id(node)]):
                    op = ".savefig"  # to a file, not into an in-memory buffer
        elif name in ("open", "io.open") and _writes_mode(node, 1):
            op = "open"
        if op is not None and not (node.args and ast.unparse(node.args[0]) == "os.devnull"):
            found.append((node.lineno, op))  # opening /dev/null writes no file
    return found


def test_the_walker_finds_every_kind_of_file_operation() -> None:
    # A test that cannot fail is a defect: the walker itself, on known code.
    code = """
import os, shutil, io
def f(p, fig):
    os.unlink(p); os.remove(p); os.rename(p, p); os.replace(p, p); shutil.rmtree(p)
    p.unlink(); p.rename(p); p.replace(p); p.write_text("x"); p.mkdir()
    open(p, "w"); open(p, mode="ab"); p.open("w"); fig.savefig(p)
    buf = io.BytesIO(); fig.savefig(buf)
    open(p); p.open(); "a".replace("a", "b"); p.read_text()
    subprocess.run(["x"]); os.system("x"); zipfile.ZipFile(p, "w"); p.chmod(0o777)
"""
    ops = [op for _, op in file_operations(ast.parse(code))]
    assert ops == ["os.unlink", "os.remove", "os.rename", "os.replace", "shutil.rmtree",
                   ".unlink", ".rename", ".replace", ".write_text", ".mkdir", "open", "open",
                   ".open", ".savefig", "subprocess.run", "os.system", "zipfile.ZipFile",
                   ".chmod"], ops


def test_no_file_operation_outside_the_containment_module() -> None:
    offenders = []
    for root in LIBRARY:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(REPO)
            if rel == HELPER or ".venv" in rel.parts:
                continue
            allowed = ALLOWED.get(rel, set())
            for line, op in file_operations(ast.parse(path.read_text(encoding="utf-8"))):
                if op not in allowed:
                    offenders.append(f"{rel}:{line}: {op}")
    assert not offenders, ("file operations outside rlscale.files._containment (route them "
                           "through an OutputArea):\n" + "\n".join(offenders))


def test_the_helper_is_where_the_operations_are() -> None:
    ops = {op for _, op in file_operations(ast.parse((REPO / HELPER).read_text()))}
    assert {"os.unlink", "os.rmdir", "os.replace", "os.open", "shutil.rmtree"} <= ops


def test_allowed_exceptions_are_still_needed() -> None:
    # An exception that no longer matches anything must be removed from ALLOWED.
    for rel, ops in ALLOWED.items():
        found = {op for _, op in file_operations(ast.parse((REPO / rel).read_text()))}
        assert ops <= found | {".mkdir"} and found & ops, (rel, found)
        assert os.path.exists(REPO / rel)
