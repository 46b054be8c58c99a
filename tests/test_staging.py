"""Staging and publishing never delete a file the report did not write (issue 10, §1).

Each test is a reproducer of a data loss that the report's output handling
had: a directory created at ``--out`` while the report ran, a user's
``.NAME.partial`` folder, and a file a user added to an existing report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlscale.files._staging import (
    MARKER,
    STAGING_MARKER,
    close_staging,
    open_staging,
    publish,
    staging_path,
)


def _finished(out: Path, text: str = "new") -> Path:
    """A staging directory holding a finished (toy) report for ``out``."""
    staging = open_staging(out)
    (staging / "index.md").write_text(text)
    (staging / "reward-law").mkdir(exist_ok=True)
    (staging / "reward-law" / "heatmap.png").write_text(text)
    return staging


def test_a_directory_created_at_out_during_the_run_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "R"
    staging = _finished(out)  # out was absent when the report started
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(ValueError, match=r"--out .*R exists and is not an rlscale report"):
        publish(staging, out)
    assert (out / "thesis.tex").read_text() == "precious"
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert (staging / "index.md").read_text() == "new"  # the report is not lost either


def test_a_directory_swapped_in_after_the_check_is_put_back(tmp_path: Path,
                                                           monkeypatch) -> None:
    # The window between the last check and the rename: simulated by a check
    # that passes although the directory is foreign.
    import rlscale.files._staging as staging_module

    out = tmp_path / "R"
    staging = _finished(out)
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    monkeypatch.setattr(staging_module, "check_destination", lambda out: None)
    with pytest.raises(ValueError, match=r"changed while publishing and is not an rlscale"):
        publish(staging, out)
    assert (out / "thesis.tex").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".R.partial", "R"]


def test_a_foreign_partial_directory_is_refused_untouched(tmp_path: Path) -> None:
    foreign = staging_path(tmp_path / "Z")
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    (foreign / "index.md").write_text("also mine")
    with pytest.raises(ValueError, match=r"\.Z\.partial exists but is not an rlscale staging "
                                         r"directory \(no valid \.rlscale-staging\)"):
        open_staging(tmp_path / "Z")
    assert sorted(p.name for p in foreign.iterdir()) == ["index.md", "notes.txt"]


def test_the_cli_refuses_a_foreign_partial_directory(tmp_path: Path) -> None:
    from rlscale.cli import main

    foreign = staging_path(tmp_path / "Z")
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["report", "--quick", "--no-progress", "--out", str(tmp_path / "Z")]) == 2
    assert (foreign / "notes.txt").read_text() == "mine"


def test_a_user_file_in_our_staging_directory_is_refused_by_name(tmp_path: Path) -> None:
    staging = open_staging(tmp_path / "out")
    close_staging(staging)
    (staging / "notes.txt").write_text("mine")
    (staging / "fits.png").write_text("stale output")
    with pytest.raises(ValueError, match=r"holds files an rlscale report does not write: "
                                         r"notes\.txt; .*nothing was removed"):
        open_staging(tmp_path / "out")
    assert (staging / "notes.txt").read_text() == "mine"
    assert (staging / "fits.png").exists()
    assert not (staging / ".lock").exists()  # a refused run releases its lock


def test_files_a_user_added_to_a_report_survive_a_rerun(tmp_path: Path) -> None:
    out = tmp_path / "R"
    publish(_finished(out, "first"), out)
    assert json.loads((out / MARKER).read_text())["files"] == [
        MARKER, "index.md", "reward-law/heatmap.png"]
    (out / "notes.txt").write_text("mine")
    (out / "reward-law" / "remarks.md").write_text("mine too")
    (out / "drafts").mkdir()
    (out / "drafts" / "a.tex").write_text("draft")
    outcome = publish(_finished(out, "second"), out)
    assert (out / "index.md").read_text() == "second"
    assert (out / "reward-law" / "heatmap.png").read_text() == "second"
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "reward-law" / "remarks.md").read_text() == "mine too"
    assert (out / "drafts" / "a.tex").read_text() == "draft"
    assert sorted(outcome.kept) == ["drafts", "notes.txt", "reward-law/remarks.md"]
    assert outcome.left is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["R"]  # nothing hidden left behind
    # The user's files are not the report's: they survive every later rerun too.
    assert "notes.txt" not in json.loads((out / MARKER).read_text())["files"]
    publish(_finished(out, "third"), out)
    assert (out / "notes.txt").read_text() == "mine"


def test_a_report_from_before_manifests_keeps_user_files(tmp_path: Path) -> None:
    out = tmp_path / "R"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"rlscale_report": 1}))
    (out / "fits.png").write_text("old figure")
    (out / "thesis.tex").write_text("precious")
    outcome = publish(_finished(out), out)
    assert not (out / "fits.png").exists()
    assert (out / "thesis.tex").read_text() == "precious"
    assert outcome.kept == ["thesis.tex"]


def test_a_fresh_staging_directory_carries_its_marker(tmp_path: Path) -> None:
    staging = open_staging(tmp_path / "out")
    marker = json.loads((staging / STAGING_MARKER).read_text())
    assert marker["rlscale_staging"] == 1 and len(marker["token"]) == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.partial"]
    out = tmp_path / "out"
    publish(staging, out)
    assert not (out / STAGING_MARKER).exists()
