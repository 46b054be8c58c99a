"""How the report shares its independent steps between two processes, and how it times them.

Fast tests of :mod:`rlscale.report._run`'s scheduling pieces (the full report
runs once, in ``tests/test_report.py``).
"""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from rlscale.report import _run
from rlscale.report._steps import INDEPENDENT, SIDE_ORDER, STEPS, _worker_jobs


def test_side_order_lists_every_independent_step_once():
    labels = [label for label, _ in STEPS]
    assert sorted(SIDE_ORDER) == sorted(INDEPENDENT)
    assert len(set(SIDE_ORDER)) == len(SIDE_ORDER)
    assert set(SIDE_ORDER) <= set(labels)
    # The chain the main process runs first keeps its order and dependencies.
    chain = [label for label in labels if label not in INDEPENDENT]
    assert chain == ["trainer sweep", "law fit", "allocation", "efficiency", "what to run next"]


def test_claims_hand_out_each_index_once_then_none():
    claims = multiprocessing.get_context("spawn").Value("i", 0)
    got = [_run._claim(claims, 3) for _ in range(5)]
    assert got == [0, 1, 2, None, None]
    assert claims.value == 3


def test_leftovers_are_claimed_lazily_one_at_a_time():
    side = _run._Side.__new__(_run._Side)  # no process: only the claiming logic
    side.labels = ["a", "b", "c"]
    side.pool = side.pending = None
    side.claims = multiprocessing.get_context("spawn").Value("i", 1)  # "a" taken by the side
    it = side.leftovers()
    assert side.claims.value == 1  # a generator: nothing claimed before it is iterated
    assert next(it) == "b"
    assert side.claims.value == 2
    side.claims.value = 3  # the side process claims "c" meanwhile
    assert list(it) == []


def test_single_cpu_runs_everything_in_the_main_process(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    side = _run._Side({}, None)
    try:
        assert side.pool is None
        assert not any(side.runs(label) for label, _ in STEPS)
        assert list(side.leftovers()) == []
        assert side.results() == {}
        assert side.pids() == frozenset()
    finally:
        side.close()


@pytest.mark.parametrize(("cpus", "side", "jobs"), [(1, False, 1), (2, False, 2), (2, True, 1),
                                                   (3, True, 2), (16, True, 2)])
def test_chain_leaves_the_side_process_its_core(monkeypatch, cpus, side, jobs):
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    assert _run._chain_jobs(side) == jobs


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _burn_on_signal(go, done, seconds: float) -> None:
    go.wait(60)
    _burn(seconds)
    done.set()
    time.sleep(60)  # stay alive (terminated by the test): a live worker, as joblib's are


def test_cpu_seconds_count_this_process_and_leave_out_excluded_children():
    if not os.path.exists(f"/proc/{os.getpid()}/task"):
        pytest.skip("live children are read from /proc (Linux); elsewhere counted at exit")
    before = _run._cpu_seconds()
    _burn(0.3)
    own = _run._cpu_seconds() - before
    assert 0.28 <= own <= 1.0
    # A busy live child counts unless excluded (as the report excludes its side process).
    ctx = multiprocessing.get_context("fork")
    go, done = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_burn_on_signal, args=(go, done, 0.4))
    child.start()
    try:
        base_all, base_ex = _run._cpu_seconds(), _run._cpu_seconds(frozenset({child.pid}))
        go.set()
        assert done.wait(60)
        grown_all = _run._cpu_seconds() - base_all
        grown_ex = _run._cpu_seconds(frozenset({child.pid})) - base_ex
    finally:
        child.terminate()
        child.join()
    assert grown_all >= 0.38  # the child's 0.4 s, whatever the machine's load
    assert grown_ex < 0.1  # the parent itself only waited


def _jobs_in_worker(_: int) -> int:
    return _worker_jobs()


def test_worker_jobs_is_one_inside_a_daemonic_pool_worker():
    assert _worker_jobs() == min(2, os.cpu_count() or 1)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.map(_jobs_in_worker, [0]) == [1]


def test_cpu_seconds_count_a_finished_child_once_reaped():
    # The standard library's RUSAGE_CHILDREN: a worker that has exited and been joined.
    before = _run._cpu_seconds()
    child = multiprocessing.get_context("fork").Process(target=_burn, args=(0.3,))
    child.start()
    child.join()
    assert _run._cpu_seconds() - before >= 0.28
