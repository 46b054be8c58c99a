"""Fault injection, CI-sized (issue 22, item 4): kill, interrupt, fill the disk, lock.

``rlscale sweep`` and ``rlscale report --quick`` are SIGKILLed (their own process:
helpers must notice) and SIGINTed (their process group: Ctrl-C) at random moments,
then rerun; the rerun's output must be the uninterrupted run's, file for file,
timings aside (:mod:`benchmarks._faults`), with nothing left beside the output and
no process outliving the command.  A previous report must survive every failed run
byte for byte: one killed, one interrupted, one stopped by ``ulimit -f`` and one
by a full tmpfs (a full disk), one pointed at a read-only file system (a one-line
error before any work).
The ≥20-kill variants are ``-m slow`` below and ``python -m benchmarks reliability``.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks._faults import (
    STOP_SECONDS,
    beside,
    differences,
    file_size_limit,
    full_disk_command,
    kill_and_rerun,
    read_only_command,
    rlscale_command,
    run,
    snapshot,
)

SPEC = ('design = "grid"\nseeds = [0, 1, 2, 3]\n[axes]\nenvironments = [2, 3, 4]\n'
        "[train]\nepochs = 2\neval_environments = 8\ngrid_size = 5\ntasks_per_step = 4\n")


def _kill_times(seed: int, seconds: float, n: int) -> list[float]:
    """``n`` random moments in the middle 90 % of a run that takes ``seconds``."""
    rng = random.Random(seed)
    return [rng.uniform(0.1, 0.95) * seconds for _ in range(n)]


# -- helpers end with their parent ---------------------------------------------------------

PARENT = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c",
        "import os, sys, time\\n"
        "from rlscale.sweep._lifetime import die_with_parent\\n"
        "die_with_parent(os.getppid(), kernel=" + sys.argv[1] + ")\\n"
        "print('armed', flush=True)\\n"
        "time.sleep(120)\\n"], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "armed"
    print(child.pid, flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("kernel", ["True", "False"])
def test_a_helper_dies_with_its_parent(kernel: str) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, kernel], stdout=subprocess.PIPE,
                              text=True)
    child = int(parent.stdout.readline())
    parent.kill()  # kill -9: nothing of the parent runs afterwards
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        # A zombie (dead, not yet reaped by init) counts as gone.
        stat = Path(f"/proc/{child}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return
        time.sleep(0.05)
    os.kill(child, 9)
    pytest.fail("the helper outlived its parent by 5 s")


# -- sweeps --------------------------------------------------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_killed_or_interrupted_sweep_reruns_to_the_same_file(tmp_path: Path, jobs: str):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    ref_out = tmp_path / "ref" / "results.csv"
    ref_out.parent.mkdir()
    ref = run(rlscale_command("sweep", str(spec), "--out", str(ref_out), "--no-progress",
                              "--jobs", jobs))
    assert ref.returncode == 0, ref.stderr
    reference = snapshot(ref_out)
    out = tmp_path / "run" / "results.csv"
    out.parent.mkdir()
    cmd = rlscale_command("sweep", str(spec), "--out", str(out), "--no-progress", "--jobs", jobs)
    for fault, at in zip(("SIGKILL", "SIGINT"), _kill_times(int(jobs), ref.seconds, 2)):
        if out.exists():
            out.unlink()
        result = kill_and_rerun(cmd, out, reference, fault, at)
        assert not result.diff and not result.litter, result.describe()
        assert result.rerun.returncode == 0, result.describe()
        assert not result.killed.orphans and not result.rerun.orphans, result.describe()
        assert (result.killed.stop_seconds or 0.0) <= STOP_SECONDS, result.describe()


# -- the report ------------------------------------------------------------------------------

def _previous_report(where: Path) -> Path:
    """A small published report holding a user's file (what a run replaces)."""
    from rlscale.files._atomic import write_text_atomic
    from rlscale.files._containment import OutputArea
    from rlscale.files._staging import open_staging, publish

    out = where / "previous"
    staging = open_staging(out)
    write_text_atomic(staging / "index.md", "# an older report\n", root=OutputArea.directory(out))
    publish(staging, out)
    (out / "notes.txt").write_text("a user's notes, to be carried into the next report")
    return out


def _one_error_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rlscale report: error: "), text
    assert "Traceback" not in text
    return lines[0]


def test_a_failed_report_leaves_the_previous_one_and_the_rerun_is_identical(tmp_path: Path):
    """ulimit -f, then SIGKILL, then SIGINT, then a clean rerun: one chain, so the
    resumed training runs make the later steps cheap (about four report runs in all)."""
    previous = _previous_report(tmp_path)
    out = tmp_path / "R"
    cmd = rlscale_command("report", "--quick", "--no-progress", "--out", str(out))
    shutil.copytree(previous, out)
    ref = run(cmd)
    assert ref.returncode == 0, ref.stderr
    assert (out / "notes.txt").is_file() and not ref.orphans
    reference = snapshot(out)
    shutil.rmtree(out)
    shutil.copytree(previous, out)
    before = snapshot(out, raw=True)

    # A full disk: the first file over 60 kB (a figure) fails with EFBIG.
    full = run(cmd, preexec=file_size_limit(60_000))
    assert full.returncode == 2, full.stderr
    assert "File too large" in _one_error_line(full.stderr)
    assert snapshot(out, raw=True) == before and not full.orphans

    # Killed, then interrupted: whatever is at --out stays as it was each time (the
    # previous report; the new one if a run finished before its signal).
    kill_at, interrupt_at = _kill_times(22, ref.seconds, 2)
    for fault, at in (("SIGKILL", kill_at), ("SIGINT", interrupt_at / 2)):
        before = snapshot(out, raw=True)
        hurt = run(cmd, fault=fault, at=at)
        assert not hurt.orphans, (fault, hurt.orphans)
        assert "Traceback" not in hurt.stderr, (fault, hurt.stderr)
        assert (hurt.stop_seconds or 0.0) <= STOP_SECONDS, (fault, hurt.stop_seconds)
        if hurt.returncode != 0:
            assert hurt.returncode == (-9 if fault == "SIGKILL" else 130), hurt.stderr
            # Publishing is one atomic swap: a signal after it (while the process joins its
            # helpers and exits) leaves the complete new report, never a mixture of the two.
            now = snapshot(out, raw=True)
            assert now == before or differences(reference, snapshot(out)) == [], fault

    final = run(cmd)
    assert final.returncode == 0, final.stderr
    assert differences(reference, snapshot(out)) == []
    assert beside(out) == ["previous"]


def test_a_read_only_output_gets_one_line_before_any_work(tmp_path: Path) -> None:
    previous = _previous_report(tmp_path)
    before = snapshot(previous, raw=True)
    for target in (previous, tmp_path / "new-report"):
        cmd = read_only_command(tmp_path, rlscale_command(
            "report", "--quick", "--no-progress", "--out", str(target)))
        if cmd is None:
            pytest.skip("no private mount namespace (unshare -rm) for a read-only mount")
        start = time.monotonic()
        out = run(cmd)
        assert out.returncode == 2, out.stderr
        assert "cannot write in" in _one_error_line(out.stderr)
        assert time.monotonic() - start < 60  # refused up front, not after the steps
    assert snapshot(previous, raw=True) == before and not (tmp_path / "new-report").exists()


def test_a_full_disk_leaves_the_previous_report(tmp_path: Path) -> None:
    previous = _previous_report(tmp_path)
    mount, keep = tmp_path / "disk", tmp_path / "after"
    mount.mkdir()
    keep.mkdir()
    cmd = full_disk_command(mount, 256 * 1024, previous, keep, rlscale_command(
        "report", "--quick", "--no-progress", "--out", str(mount / "R")))
    if cmd is None:
        pytest.skip("no private mount namespace (unshare -rm) for a small tmpfs")
    out = run(cmd)
    assert out.returncode == 2, out.stderr
    assert "No space left on device" in _one_error_line(out.stderr)
    assert snapshot(keep / "R", raw=True) == snapshot(previous, raw=True)


# -- the >= 20-kill variants -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fault", ["SIGKILL", "SIGINT"])
def test_twenty_kills_of_a_sweep(tmp_path: Path, fault: str) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    ref_out = tmp_path / "ref" / "results.csv"
    ref_out.parent.mkdir()
    ref = run(rlscale_command("sweep", str(spec), "--out", str(ref_out), "--no-progress"))
    reference = snapshot(ref_out)
    out = tmp_path / "run" / "results.csv"
    out.parent.mkdir()
    cmd = rlscale_command("sweep", str(spec), "--out", str(out), "--no-progress")
    bad = []
    for at in _kill_times(7, ref.seconds, 20):
        if out.exists():
            out.unlink()
        result = kill_and_rerun(cmd, out, reference, fault, at)
        if not result.ok:
            bad.append(result.describe())
    assert not bad, "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["SIGKILL", "SIGINT"])
def test_twenty_kills_of_a_quick_report(tmp_path: Path, fault: str) -> None:
    previous = _previous_report(tmp_path)
    out = tmp_path / "work" / "R"  # alone in its directory: anything beside it is litter
    cmd = rlscale_command("report", "--quick", "--no-progress", "--out", str(out))
    shutil.copytree(previous, out)
    ref = run(cmd)
    reference = snapshot(out)
    bad = []
    for at in _kill_times(11, ref.seconds, 20):
        result = kill_and_rerun(cmd, out, reference, fault, at, previous=previous)
        if not result.ok:
            bad.append(result.describe())
    assert not bad, "\n".join(bad)
