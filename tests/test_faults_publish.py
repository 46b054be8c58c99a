"""A report killed at every file operation of staging and publishing (issue 22, item 4).

A child process opens the staging directory, writes a report into it and publishes
it over an older report that holds a user's files, with ``kill -9`` sent to itself
just before its n-th file operation (every operation goes through
:class:`~rlscale.files._containment.OutputArea`, so these are all the points where
a kill leaves a different state).  The rerun -- the same steps, uninterrupted --
must then publish the new report, keep the user's files, and leave nothing beside
the output: for every n, deterministically, in well under a second each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks._faults import beside, snapshot

#: The child: OutputArea's operations wrapped to SIGKILL the process at call number KILL_AT.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from rlscale.files import _containment as C

    kill_at, count = int(sys.argv[1]), [0]
    for name in ("move", "remove_file", "remove_dir", "remove_tree", "write_atomic",
                 "make_dir", "create_exclusive", "make_anchor"):
        def wrap(self, *args, _orig=getattr(C.OutputArea, name), **kwargs):
            count[0] += 1
            if count[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return _orig(self, *args, **kwargs)
        setattr(C.OutputArea, name, wrap)
    sys.path.insert(0, sys.argv[3])
    from test_faults_publish import write_report
    write_report(Path(sys.argv[2]), "new")
    print(count[0])
""")


def write_report(out: Path, text: str) -> None:
    """Stage a small report (files at two depths, a results CSV) and publish it over ``out``."""
    from rlscale.files._atomic import write_text_atomic
    from rlscale.files._containment import OutputArea
    from rlscale.files._staging import open_staging, publish

    area = OutputArea.directory(out)
    staging = open_staging(out)
    for rel in ("index.md", "results.json", "sweep.csv", "reward-law/heatmap.png",
                "reward-law/trainer/grid.csv"):
        write_text_atomic(staging / rel, json.dumps({"report": text, "file": rel}), root=area)
    publish(staging, out)


def _old_report(out: Path) -> None:
    write_report(out, "old")
    (out / "notes.txt").write_text("a user's notes")
    (out / "reward-law" / "mine.txt").write_text("a user's file inside an output folder")


def _child(out: Path, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(kill_at), str(out),
                           str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=60)


def test_a_kill_at_any_file_operation_is_recovered_by_the_rerun(tmp_path: Path) -> None:
    reference = tmp_path / "reference" / "R"
    _old_report(reference)
    done = _child(reference, 0)  # counts the operations of one uninterrupted run
    assert done.returncode == 0, done.stderr
    operations = int(done.stdout)
    want = snapshot(reference, raw=True)
    assert want["notes.txt"] == b"a user's notes" and "reward-law/mine.txt" in want
    assert operations > 20, operations
    failures = []
    for kill_at in range(1, operations + 1):
        work = tmp_path / f"k{kill_at}"
        out = work / "R"
        _old_report(out)
        killed = _child(out, kill_at)
        assert killed.returncode == -9, (kill_at, killed.returncode, killed.stderr)
        try:
            write_report(out, "new")  # the rerun
        except Exception as exc:
            failures.append(f"kill at operation {kill_at}: rerun failed: {exc}")
            continue
        got = snapshot(out, raw=True)
        if got != want:
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            failures.append(f"kill at operation {kill_at}: differs in {diff}")
        if beside(out):
            failures.append(f"kill at operation {kill_at}: left {beside(out)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kill_at", [1, 2])
def test_a_kill_before_the_first_report_leaves_a_state_the_rerun_takes(tmp_path, kill_at):
    # No old report: killed while creating the staging directory itself.
    out = tmp_path / "R"
    assert _child(out, kill_at).returncode == -9
    write_report(out, "new")
    assert json.loads((out / "index.md").read_text())["report"] == "new"
    assert beside(out) == [] and not os.path.exists(tmp_path / ".R.partial")


def test_a_forged_working_name_beside_the_output_is_contained(tmp_path: Path) -> None:
    # Recovery acts on names beside the output that look like a dead run's (.R.old-PID-NS):
    # a forged one, whose manifest lists paths outside, or a link, touches nothing outside.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.md").write_text("not a report's")
    out = tmp_path / "work" / "R"
    write_report(out, "old")
    forged = out.parent / f".R.old-{2**22 + 12345}-1"  # no such pid
    forged.mkdir()
    (forged / ".rlscale-report").write_text(json.dumps(
        {"rlscale_report": 1, "files": ["../../victim.txt", str(victim), "index.md"]}))
    (forged / "index.md").write_text("x")
    (out.parent / f".R.old-{2**22 + 12346}-2").symlink_to(elsewhere)
    write_report(out, "new")
    assert victim.read_text() == "precious"
    assert (elsewhere / "index.md").read_text() == "not a report's"
    assert json.loads((out / "index.md").read_text())["report"] == "new"
