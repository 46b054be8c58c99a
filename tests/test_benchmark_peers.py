"""Benchmarks cannot flatter us: every independent peer is free of rlscale (issue 26).

- The harness refuses a peer that *runs* rlscale code (a call tracer on its warm-up
  call, threads included) or *names* it (an import, a global or closure value of
  ours, a child interpreter's code that imports it): cheats built here are caught,
  honest peers pass.
- Every benchmark module's independent peers (smoke sizes) pass the static check,
  here on every run; the traced warm-up runs in ``python -m benchmarks --smoke``
  (CI) and in the slow test below.
- Data: a benchmark whose data set is absent is skipped with the reason, never run on
  a stand-in.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import threading
from pathlib import Path

import numpy as np
import pytest

import benchmarks
from benchmarks._harness import (
    Case,
    DataMissing,
    PeerNotIndependent,
    PeerTracer,
    Skipped,
    check_independent,
    measure,
    static_references,
)
from rlscale.theory import expected_max_normal

MODULES = sorted(info.name for info in pkgutil.iter_modules(benchmarks.__path__)
                 if info.name.startswith("bench_"))


def _numpy_peer() -> float:
    return float(np.sqrt(np.arange(10.0)).sum())


def _calls_ours() -> float:
    return float(expected_max_normal(10.0))


def _imports_ours() -> object:
    from rlscale.theory import _gaussian  # noqa: F401  already loaded: runs no code

    return None


def test_an_honest_peer_passes_and_is_timed() -> None:
    m = measure(Case("sqrt", _numpy_peer, _numpy_peer, "numpy"), repeats=2)
    assert m.independent and m.peer_s is not None and m.peer_s > 0
    assert static_references(_numpy_peer) == []


def test_a_peer_calling_rlscale_is_refused_before_timing() -> None:
    timed = []

    def peer() -> None:
        timed.append(1)
        _calls_ours()

    with pytest.raises(PeerNotIndependent, match=r"refers to rlscale: .*expected_max_normal"):
        measure(Case("cheat", _numpy_peer, peer, "a cheat"), repeats=3)
    assert timed == []  # refused by the static check, before a single call


def test_the_tracer_sees_rlscale_code_the_static_check_cannot() -> None:
    # Reached only through an object handed in at run time: invisible to the bytecode.
    hidden = {"fn": None}

    def peer() -> None:
        hidden["fn"](3.0)

    hidden["fn"] = importlib.import_module("rlscale.theory").expected_max_normal
    tracer = PeerTracer()
    tracer.run(peer)
    assert tracer.hit is not None and "expected_max_normal" in tracer.hit
    tracer = PeerTracer()
    tracer.run(_numpy_peer)
    assert tracer.hit is None


def test_the_tracer_follows_threads_the_peer_starts() -> None:
    def peer() -> None:
        t = threading.Thread(target=lambda: expected_max_normal(4.0))
        t.start()
        t.join()

    tracer = PeerTracer()
    tracer.run(peer)
    assert tracer.hit is not None


def test_an_import_of_rlscale_inside_the_peer_is_refused() -> None:
    # The module is loaded already, so importing it runs nothing: only the bytecode shows it.
    tracer = PeerTracer()
    tracer.run(_imports_ours)
    assert tracer.hit is None
    assert any("import rlscale.theory" in h for h in static_references(_imports_ours))
    with pytest.raises(PeerNotIndependent, match=r"import rlscale\.theory"):
        check_independent(Case("cheat", _numpy_peer, _imports_ours, "imports ours"))


def test_closures_partials_and_child_interpreters_are_looked_into() -> None:
    import functools
    import subprocess
    import sys

    law = importlib.import_module("rlscale.theory").AdditiveLaw(
        0.1, {"N": 1.0}, {"N": 0.5})

    def uses_law() -> float:
        return law.floor

    assert any("closure law: AdditiveLaw" in h for h in static_references(uses_law))
    assert static_references(functools.partial(_calls_ours))
    code = "import rlscale.optimize"

    def child() -> None:
        subprocess.run([sys.executable, "-c", code], check=True)

    assert any("runs rlscale" in h for h in static_references(child))


def test_an_ablation_may_use_ours_and_is_labelled_as_one() -> None:
    m = measure(Case("ablation", _numpy_peer, _calls_ours, "ours before",
                     independent=False), repeats=1)
    assert not m.independent and "ablation" in m.line() and "peer" not in m.line().split("(")[0]
    assert m.as_dict()["peer_independent"] is False


def test_cpu_seconds_resolve_a_millisecond() -> None:
    from benchmarks._harness import cpu_seconds

    start = cpu_seconds()
    x = 0.0
    while cpu_seconds() - start < 2e-3:
        x += math.sqrt(2.0)
    assert 2e-3 <= cpu_seconds() - start < 0.5


@pytest.fixture(scope="module")
def smoke_cases() -> dict[str, list]:
    return {name: importlib.import_module(f"benchmarks.{name}").cases(True) for name in MODULES}


def test_every_independent_peer_is_free_of_rlscale(smoke_cases) -> None:
    checked, bad = 0, []
    for name, cases in smoke_cases.items():
        for case in cases:
            if isinstance(case, Skipped) or case.peer is None or not case.independent:
                continue
            checked += 1
            hits = static_references(case.peer)
            if hits:
                bad.append((name, case.name, hits[:2]))
    assert not bad, bad
    assert checked >= 25  # every module's peers, not a vacuous pass


def test_every_ablation_says_it_is_ours(smoke_cases) -> None:
    for cases in smoke_cases.values():
        for case in cases:
            if isinstance(case, Case) and case.peer is not None and not case.independent:
                assert case.peer_label.startswith("ours"), case.peer_label


@pytest.mark.slow
def test_every_independent_peer_runs_no_rlscale_code(smoke_cases) -> None:
    for cases in smoke_cases.values():
        for case in cases:
            if isinstance(case, Case) and case.setup is not None:
                case.setup()
            if isinstance(case, Case) and case.independent and case.peer is not None:
                check_independent(case)


def test_missing_data_is_skipped_with_the_reason_never_substituted(monkeypatch) -> None:
    import benchmarks.bench_fit as bench_fit
    import benchmarks.bench_threads as bench_threads

    monkeypatch.setattr(bench_fit, "CHINCHILLA", Path("/nonexistent/chinchilla.csv"))
    with pytest.raises(DataMissing, match=r"/nonexistent/chinchilla\.csv.*no stand-in"):
        bench_fit.chinchilla()
    rows = bench_fit.cases(smoke=True)
    skipped = [r for r in rows if isinstance(r, Skipped)]
    assert [s.name for s in skipped] == ["fit Chinchilla 240 points, 2 axes"]
    assert "absent" in skipped[0].reason and "SKIPPED" in skipped[0].line()
    # The run goes on with the data that is there, labelled as what it is.
    assert [r.name for r in rows if isinstance(r, Case)] == ["fit report sweep 51 points, "
                                                             "3 axes"]
    assert all(isinstance(r, Skipped) for r in bench_threads.cases(smoke=True))


def test_a_results_dict_shared_with_ours_is_not_a_reference() -> None:
    # The peer is checked as built, before ours has filled the shared dict with our objects.
    law_cls = importlib.import_module("rlscale.theory").AdditiveLaw
    got: dict[str, object] = {}

    def ours() -> None:
        got["ours"] = law_cls(0.1, {"N": 1.0}, {"N": 0.5})

    def peer() -> None:
        got["peer"] = _numpy_peer()

    m = measure(Case("shared results", ours, peer, "numpy"), repeats=1)
    assert m.peer_s is not None and isinstance(got["ours"], law_cls)
