"""Ctrl-C or ``kill`` inside :func:`publish` leaves the old report or the new one, never both.

Issue 22: one SIGINT of ``rlscale report --quick`` in ten landed while the report
was being published and left the output a mixture of the two reports until the
next run's recovery.  Here a real signal is sent to this process just before
each file operation that :func:`publish` makes in turn (every one goes through
:class:`~rlscale.files._containment.OutputArea`): the publish must finish and
*then* be interrupted, the new report complete in place with the user's files.
An exception that does get raised between two renames (a full disk, a
permission changed meanwhile) must put the old report back.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from benchmarks._faults import snapshot
from rlscale.files import _containment
from rlscale.files._deferred import deferred_signals
from rlscale.files._staging import STAGING_MARKER, open_staging, publish

#: Every file operation of OutputArea (the points at which a signal is sent).
OPERATIONS = ("move", "remove_file", "remove_dir", "remove_tree", "write_atomic", "make_dir",
              "create_exclusive", "make_anchor")


def _report(out: Path, text: str) -> Path:
    """A staging directory holding a finished (toy) report for ``out``."""
    staging = open_staging(out)
    (staging / "index.md").write_text(text)
    (staging / "reward-law").mkdir(exist_ok=True)
    (staging / "reward-law" / "heatmap.png").write_text(text)
    (staging / "runs.csv").write_text(f"seed,loss\n0,{len(text)}\n")
    return staging


def _previous(out: Path) -> dict[str, bytes]:
    """An older report at ``out`` holding a user's files; its snapshot."""
    publish(_report(out, "old"), out)
    (out / "notes.txt").write_text("mine")
    (out / "reward-law" / "remarks.md").write_text("mine too")
    (out / "drafts").mkdir()
    (out / "drafts" / "a.tex").write_text("draft")
    return snapshot(out, raw=True)


def _expected_new(tmp: Path) -> dict[str, bytes]:
    """The snapshot an uninterrupted publish of the new report over the previous one gives."""
    out = tmp / "expected" / "R"
    _previous(out)
    publish(_report(out, "new"), out)
    return snapshot(out, raw=True)


def _hooked(monkeypatch, at: int, action) -> list[int]:
    """Run ``action()`` just before OutputArea's ``at``-th operation (1-based); the count."""
    count = [0]
    for name in OPERATIONS:
        original = getattr(_containment.OutputArea, name)

        def wrap(self, *args, _original=original, **kwargs):
            count[0] += 1
            if count[0] == at:
                action()
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(_containment.OutputArea, name, wrap)
    return count


def _operations_of_publish(tmp: Path, monkeypatch) -> int:
    out = tmp / "count" / "R"
    _previous(out)
    staging = _report(out, "new")
    with monkeypatch.context() as m:
        count = _hooked(m, 0, lambda: None)
        publish(staging, out)
    return count[0]


@pytest.fixture
def python_sigint():
    """SIGINT raises KeyboardInterrupt here, whatever the test runner set."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


class Terminated(Exception):
    """What this test's SIGTERM handler raises."""


def _raise_terminated(signum, frame):
    raise Terminated


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_at_every_operation_of_publish_waits_for_the_new_report(
        tmp_path: Path, monkeypatch, python_sigint, signum) -> None:
    expected = _expected_new(tmp_path)
    n = _operations_of_publish(tmp_path, monkeypatch)
    assert n >= 6  # aside, three user files across, in, clean-up: all of them probed
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        for at in range(1, n + 1):
            out = tmp_path / f"at-{at}" / "R"
            _previous(out)
            staging = _report(out, "new")
            raised = KeyboardInterrupt if signum == signal.SIGINT else Terminated
            with monkeypatch.context() as m:
                _hooked(m, at, lambda: os.kill(os.getpid(), signum))
                with pytest.raises(raised):
                    publish(staging, out)
            # The interrupt came after the publish had finished, not in its middle.
            assert snapshot(out, raw=True) == expected, at
            assert sorted(p.name for p in out.parent.iterdir()) == ["R"], at
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_exception_between_the_renames_puts_the_previous_report_back(
        tmp_path: Path, monkeypatch) -> None:
    expected = _expected_new(tmp_path)
    n = _operations_of_publish(tmp_path, monkeypatch)
    undone = 0
    for at in range(1, n + 1):
        out = tmp_path / f"at-{at}" / "R"
        before = _previous(out)
        staging = _report(out, "new")

        def fail() -> None:
            raise KeyboardInterrupt  # as if a signal had got through

        with monkeypatch.context() as m:
            _hooked(m, at, fail)
            with pytest.raises(KeyboardInterrupt):
                publish(staging, out)
        now = snapshot(out, raw=True)
        if now != before:
            # Stopped after the move in, in the clean-up: the new report complete (its
            # staging marker perhaps still there; the next process finishes the clean-up).
            now.pop(STAGING_MARKER, None)
            assert now == expected, at
            continue
        undone += 1
        assert not [p for p in out.parent.iterdir() if ".old-" in p.name], at
        # The next run takes the staging directory up and publishes over it.
        publish(_report(out, "newer"), out)
        assert (out / "index.md").read_text() == "newer"
        assert (out / "notes.txt").read_text() == "mine"
        assert (out / "reward-law" / "remarks.md").read_text() == "mine too"
        assert (out / "drafts" / "a.tex").read_text() == "draft"
        assert sorted(p.name for p in out.parent.iterdir()) == ["R"], at
    assert undone >= 5, undone  # before the aside, the user's files across, the move in


def test_signals_are_delivered_once_each_after_the_block_and_handlers_restored() -> None:
    seen: list[str] = []
    previous = signal.signal(signal.SIGTERM, lambda s, f: seen.append("term"))
    try:
        handler = signal.getsignal(signal.SIGTERM)
        with deferred_signals() as pending:
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
            assert seen == [] and pending == [signal.SIGTERM]
            assert signal.getsignal(signal.SIGTERM) is not handler
        assert seen == ["term"]
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_ignored_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with deferred_signals() as pending:
            signal.raise_signal(signal.SIGTERM)
        assert pending == []
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_outside_the_main_thread_the_block_runs_unprotected() -> None:
    result: list[object] = []

    def body() -> None:
        with deferred_signals() as pending:
            result.append(pending)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert result == [[]]
