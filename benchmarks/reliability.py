"""Reliability: the counts issue 22's goals name, measured in one run.

    python -m benchmarks reliability [--kills 20] [--cli-cases 500] [--jobs 2]
                                     [--skip api,cli,faults,sweeps,disk]
                                     [--signals SIGKILL,SIGINT] [--json FILE]

1. **API fuzz.**  The contract suites (``tests/test_contracts_*.py``: every
   public callable of every ``__all__``, one hostile argument at a time, and
   the exhaustive wrong-type pass) under the ``ci`` hypothesis profile with at
   least 50 examples per entry; counted per entry from ``RLSCALE_CONTRACT_LOG``.
   A failure is a *traceback* (an exception other than a ``TypeError``/
   ``ValueError``), a *hang* (a call past its 10 s deadline), a *silent
   non-finite* result, or an error that names no argument.  Files changed in
   the repository during the run count as writes outside an output.
2. **CLI fuzz.**  ``--cli-cases`` bad command lines over every verb
   (:mod:`benchmarks._cli_fuzz`), in this process: exit 2 and one line, or a
   failure by kind.
3. **Faults.**  ``--kills`` SIGKILLs and as many SIGINTs of ``rlscale report
   --quick`` (over a previous report holding a user's file) and of ``rlscale
   sweep`` (1 and 2 workers), each at a random moment and rerun: reruns
   identical to an uninterrupted run (timings aside), previous report intact or
   the complete new one in its place (counted apart: ``left_previous``,
   ``left_new``, ``left_neither``; for a report ``neither`` is a mixture),
   nothing left beside the output, no process outliving the command; every
   file operation of staging and publishing as a kill point; ``ulimit -f``, a
   full tmpfs and a read-only file system.

Counts, not times: this is not a speed benchmark, and it prints no ratio.  It
takes about 40 minutes on an idle two-core machine with the defaults (``--kills
3 --cli-cases 100 --skip api`` is a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONTRACT_SUITES = ["tests/test_contracts_theory.py", "tests/test_contracts_optimize.py",
                   "tests/test_contracts_simulate.py", "tests/test_contracts_packages.py",
                   "tests/test_contracts_wrong_types.py", "tests/test_contracts_cli.py"]
SWEEP_SPEC = ('design = "grid"\nseeds = [0, 1, 2, 3]\n[axes]\nenvironments = [2, 3, 4]\n'
              "[train]\nepochs = 2\neval_environments = 8\ngrid_size = 5\n"
              "tasks_per_step = 4\n")


def _load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"load {one:.1f} {five:.1f} {fifteen:.1f}"
    except OSError:
        return "load n/a"


def _repo_state() -> set[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                         capture_output=True, text=True)
    return {line for line in out.stdout.splitlines() if "__pycache__" not in line}


# ----------------------------------------------------------------------------- 1. API fuzz

def api_fuzz(jobs: int) -> dict[str, Any]:
    """Run the contract suites; per entry: examples, outcome, failure kind."""
    log = Path(tempfile.mkdtemp(prefix="rlscale-reliability-")) / "contracts.tsv"
    env = {**os.environ, "HYPOTHESIS_PROFILE": "ci", "RLSCALE_CONTRACT_LOG": str(log),
           "RLSCALE_CONTRACT_MIN_EXAMPLES": "50"}
    before = _repo_state()
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CONTRACT_SUITES]
    if jobs > 1:
        cmd += ["-n", str(jobs), "--dist", "loadfile"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    changed = sorted(_repo_state() - before)
    # One line per test from the worker that ran it (with its count) and, under xdist, one
    # from the controller (count 0): per test, the largest count and any failure.
    tests: dict[str, dict[str, Any]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        node, outcome, calls, _, kind = (line.split("\t") + [""] * 5)[:5]
        t = tests.setdefault(node, {"calls": 0, "failed": False, "kind": ""})
        t["calls"] = max(t["calls"], int(calls or 0))
        if outcome == "failed":
            t["failed"], t["kind"] = True, kind or t["kind"]
    fuzzed = {n: t for n, t in tests.items() if "test_contract[" in n}
    kinds = Counter(t["kind"] for t in tests.values() if t["failed"])
    return {
        "tests": len(tests), "fuzzed_entries": len(fuzzed),
        "examples": sum(t["calls"] for t in tests.values()),
        "fuzz_examples": sum(t["calls"] for t in fuzzed.values()),
        "min_examples_per_fuzzed_entry": min((t["calls"] for t in fuzzed.values()), default=0),
        "entries_below_50": sorted(n.split("[", 1)[1].rstrip("]") for n, t in fuzzed.items()
                                   if t["calls"] < 50),
        "tests_failed": sum(t["failed"] for t in tests.values()), "failure_kinds": dict(kinds),
        "repository_files_changed": changed,
        "seconds": round(seconds, 1), "pytest_exit": proc.returncode,
        "pytest_tail": proc.stdout.strip().splitlines()[-1:] if proc.stdout else [],
    }


# ----------------------------------------------------------------------------- 2. CLI fuzz

def cli_fuzz(cases: int) -> dict[str, Any]:
    from hypothesis import HealthCheck, Phase, given, settings

    from benchmarks._cli_fuzz import Workspace, cli_cases, run_case

    root = Path(tempfile.mkdtemp(prefix="rlscale-cli-fuzz-"))
    ws = Workspace.create(root / "ws")
    before = _repo_state()
    kinds: Counter[str] = Counter()
    slowest = [0.0]
    bad: list[str] = []

    @settings(max_examples=cases, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(cli_cases(ws))
    def go(argv: list[str]) -> None:
        outcome = run_case(argv)
        kinds[outcome.kind] += 1
        slowest[0] = max(slowest[0], outcome.seconds)
        if outcome.kind != "ok" and len(bad) < 10:
            bad.append(f"{outcome.kind}: {' '.join(argv)[:160]} -> {outcome.stderr[-160:]!r}")

    start = time.monotonic()
    cwd = os.getcwd()
    os.chdir(root)  # a case that wrote a relative path would write here, not in the repo
    try:
        go()
    finally:
        os.chdir(cwd)
    stray = sorted(p.name for p in root.iterdir() if p.name != "ws")
    return {"cases": sum(kinds.values()), "kinds": dict(kinds), "examples_of_failures": bad,
            "slowest_case_s": round(slowest[0], 2), "files_written_outside": stray,
            "repository_files_changed": sorted(_repo_state() - before),
            "seconds": round(time.monotonic() - start, 1)}


# ----------------------------------------------------------------------------- 3. faults

def _kills(report: dict[str, Any], label: str, cmd: list[str], out: Path,
           reference: dict[str, bytes], seconds: float, kills: int, seed: int,
           previous: Path | None, signals: tuple[str, ...] = ("SIGKILL", "SIGINT"),
           progress: Callable[[], None] = lambda: None) -> None:
    """``kills`` signals of each kind that land while ``cmd`` runs, each rerun after.

    The moment is drawn uniformly over ``seconds``, the measured length of an
    uninterrupted run under the present load.  A signal that comes after the command
    has finished measured nothing: it is counted (``not_landed``), the length is
    replaced by that run's own (the load fell), and the moment is drawn again, at
    most ``kills`` extra times per signal.
    """
    from benchmarks._faults import kill_and_rerun

    rng = random.Random(seed)
    length = dict.fromkeys(signals, seconds)
    # The signals alternate, so that a run stopped early (a kill of the report costs ~1.5
    # report runs) has measured each of them about as often.
    for _ in range(kills):
        for fault in signals:
            key = f"{label} {fault}"
            entry = report.setdefault(key, {"kills": 0, "signalled": 0, "not_landed": 0,
                                            "identical": 0, "previous_intact": 0,
                                            "left_previous": 0, "left_new": 0,
                                            "left_neither": 0, "tracebacks": 0,
                                            "failures": [], "run_seconds": seconds})
            for _attempt in range(kills + 1):
                if previous is None and out.exists():
                    out.unlink()
                at = rng.uniform(0.0, 1.0) * length[fault]
                result = kill_and_rerun(cmd, out, reference, fault, at, previous=previous)
                if result.killed.returncode == 0:  # finished before the signal
                    entry["not_landed"] += 1
                    if result.killed.traceback:  # or came as it exited: still a failure
                        entry["tracebacks"] += 1
                        entry["failures"].append(result.describe())
                    length[fault] = min(length[fault], result.killed.seconds)
                    print(f"    {key}: at {at:.2f} s, after the end ({result.killed.seconds:.1f}"
                          " s): drawn again", flush=True)
                    continue
                break
            entry["kills"] += 1
            entry["signalled"] += result.killed.returncode != 0
            entry["identical"] += not result.diff and result.rerun.returncode == 0
            entry["previous_intact"] += not result.previous_damaged
            entry["tracebacks"] += result.killed.traceback or result.rerun.traceback
            # Right after the signal: the previous output, the complete new one, or (a
            # report: a failure; a sweep: a partial results file) neither.
            entry[f"left_{result.after_kill}"] += 1
            entry["run_seconds"] = round(length[fault], 2)
            if not result.ok:
                entry["failures"].append(result.describe())
            landed = "" if result.killed.returncode != 0 else " (finished before the signal)"
            print(f"    {key}: {result.describe()}{landed}", flush=True)
            progress()


def faults(kills: int, sweeps: bool = True,
           signals: tuple[str, ...] = ("SIGKILL", "SIGINT"), disk: bool = True,
           entry: str = "module", sweep_kills: int | None = None, report_kills: bool = True,
           progress: Callable[[dict[str, Any]], None] = lambda report: None
           ) -> dict[str, Any]:
    import functools

    from benchmarks import _faults
    from benchmarks._faults import run, snapshot
    from rlscale.files._atomic import write_text_atomic
    from rlscale.files._containment import OutputArea
    from rlscale.files._staging import open_staging, publish

    rlscale_command = functools.partial(_faults.rlscale_command, entry=entry)
    root = Path(tempfile.mkdtemp(prefix="rlscale-faults-"))
    report: dict[str, Any] = {"entry": entry}
    step = functools.partial(progress, report)
    # -- sweeps, 1 and 2 workers
    spec = root / "spec.toml"
    spec.write_text(SWEEP_SPEC)
    for jobs in ("1", "2") if sweeps else ():
        ref_out = root / f"sweep-ref-{jobs}" / "results.csv"
        ref_out.parent.mkdir()
        ref = run(rlscale_command("sweep", str(spec), "--out", str(ref_out), "--no-progress",
                                  "--jobs", jobs))
        out = root / f"sweep-{jobs}" / "results.csv"
        out.parent.mkdir()
        cmd = rlscale_command("sweep", str(spec), "--out", str(out), "--no-progress",
                              "--jobs", jobs)
        report[f"sweep --jobs {jobs} uninterrupted"] = {"seconds": round(ref.seconds, 2),
                                                       "exit": ref.returncode}
        _kills(report, f"sweep --jobs {jobs}", cmd, out, snapshot(ref_out), ref.seconds,
               kills if sweep_kills is None else sweep_kills, int(jobs), None, signals, step)
    if not report_kills and not disk:
        shutil.rmtree(root, ignore_errors=True)
        return report
    # -- the report, over a previous report holding a user's file
    previous = root / "previous" / "R"
    staging = open_staging(previous)
    write_text_atomic(staging / "index.md", "# an older report\n",
                      root=OutputArea.directory(previous))
    publish(staging, previous)
    (previous / "notes.txt").write_text("a user's notes")
    out = root / "report" / "R"
    cmd = rlscale_command("report", "--quick", "--no-progress", "--out", str(out))
    shutil.copytree(previous, out)
    ref = run(cmd)
    reference = snapshot(out)
    report["report --quick uninterrupted"] = {"seconds": round(ref.seconds, 1),
                                              "exit": ref.returncode}
    # -- full disk and read-only: the previous report intact, one line
    if disk:
        _disk_checks(report, root, previous, out, cmd, entry)
    # Last: the longest part (~1.5 report runs a kill), each kill printed as it ends.
    if report_kills:
        _kills(report, "report --quick", cmd, out, reference, ref.seconds, kills, 22, previous,
               signals, step)
    shutil.rmtree(root, ignore_errors=True)
    return report


def _disk_checks(report: dict[str, Any], root: Path, previous: Path, out: Path,
                 cmd: list[str], entry: str = "module") -> None:
    """``ulimit -f``, a full tmpfs, a read-only file system; every file operation of
    staging and publishing as a kill point."""
    import functools

    from benchmarks import _faults
    from benchmarks._faults import (
        file_size_limit,
        full_disk_command,
        read_only_command,
        run,
        snapshot,
    )

    rlscale_command = functools.partial(_faults.rlscale_command, entry=entry)

    checks = {}
    shutil.rmtree(out)
    shutil.copytree(previous, out)
    before = snapshot(out, raw=True)
    full = run(cmd, preexec=file_size_limit(60_000))
    checks["ulimit -f 60 kB"] = {"exit": full.returncode,
                                 "lines": len(full.stderr.strip().splitlines()),
                                 "previous_intact": snapshot(out, raw=True) == before}
    mount, keep = root / "disk", root / "after"
    mount.mkdir()
    keep.mkdir()
    tmpfs = full_disk_command(mount, 256 * 1024, previous, keep, rlscale_command(
        "report", "--quick", "--no-progress", "--out", str(mount / "R")))
    if tmpfs is not None:
        res = run(tmpfs)
        checks["tmpfs 256 kB full"] = {
            "exit": res.returncode, "lines": len(res.stderr.strip().splitlines()),
            "previous_intact": snapshot(keep / "R", raw=True) == snapshot(previous, raw=True)}
    ro = read_only_command(previous.parent, rlscale_command(
        "report", "--quick", "--no-progress", "--out", str(previous)))
    if ro is not None:
        snap = snapshot(previous, raw=True)
        res = run(ro)
        checks["read-only file system"] = {
            "exit": res.returncode, "lines": len(res.stderr.strip().splitlines()),
            "previous_intact": snapshot(previous, raw=True) == snap}
    report["disk"] = checks
    # -- every file operation of staging and publishing as a kill point
    test = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_faults_publish.py"], cwd=REPO, capture_output=True,
                          text=True)
    report["publish kill points"] = {"pytest": (test.stdout.strip().splitlines() or [""])[-1]}
    print(f"  disk: {checks}\n  publish kill points: {report['publish kill points']}",
          flush=True)


# ----------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks reliability",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="kills of each signal (20)")
    parser.add_argument("--cli-cases", type=int, default=500, help="CLI fuzz cases (500)")
    parser.add_argument("--jobs", type=int, default=2, help="pytest workers, API fuzz (2)")
    parser.add_argument("--skip", default="", help="comma list of api,cli,faults to skip; "
                        "sweeps skips the sweep kills of the faults (the report's alone take "
                        "~1.5 report runs per kill), disk the full-disk, read-only and "
                        "publish kill-point checks")
    parser.add_argument("--signals", default="SIGKILL,SIGINT",
                        help="comma list of the faults sent (SIGKILL,SIGINT)")
    parser.add_argument("--json", metavar="FILE", help="write the counts as JSON (after "
                        "every kill too, so a run stopped early keeps what it measured)")
    parser.add_argument("--entry", choices=("module", "script"), default="module",
                        help="run the commands as python -m rlscale (module) or as the "
                        "installed rlscale console script (script)")
    parser.add_argument("--sweep-kills", type=int, default=None,
                        help="kills of each signal per sweep (default: --kills)")
    parser.add_argument("--no-report-kills", action="store_true",
                        help="leave out the report's kills (the sweeps' and disk checks stay)")
    args = parser.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    print(f"# reliability (issue 22): counts, not times; {_load()} at the start", flush=True)
    results: dict[str, Any] = {}
    if "api" not in skip:
        print("1. API fuzz (contract suites, ci profile, >= 50 examples per entry) ...",
              flush=True)
        api = results["api"] = api_fuzz(args.jobs)
        print(f"  tests {api['tests']}, fuzzed entries {api['fuzzed_entries']}, examples "
              f"{api['examples']} ({api['fuzz_examples']} fuzzed), fewest per fuzzed entry "
              f"{api['min_examples_per_fuzzed_entry']} (below 50, no arguments to fuzz: "
              f"{len(api['entries_below_50'])}); failed tests {api['tests_failed']} "
              f"{api['failure_kinds'] or ''}; repository files changed "
              f"{len(api['repository_files_changed'])}; {api['seconds']} s, {_load()}",
              flush=True)
    if "cli" not in skip:
        print(f"2. CLI fuzz ({args.cli_cases} cases) ...", flush=True)
        cli = results["cli"] = cli_fuzz(args.cli_cases)
        print(f"  cases {cli['cases']}: {cli['kinds']}; slowest {cli['slowest_case_s']} s; "
              f"files written outside {len(cli['files_written_outside'])}; {cli['seconds']} s,"
              f" {_load()}", flush=True)
        for line in cli["examples_of_failures"]:
            print(f"    {line}")
    if "faults" not in skip:
        print(f"3. Faults ({args.kills} kills of each signal per command) ...", flush=True)
        signals = tuple(s for s in args.signals.split(",") if s)
        if not signals or set(signals) - {"SIGKILL", "SIGINT"}:
            parser.error(f"--signals must list SIGKILL and/or SIGINT; got {args.signals!r}")
        def progress(report: dict[str, Any]) -> None:
            if args.json:
                Path(args.json).write_text(json.dumps({**results, "faults": report,
                                                       "partial": True}, indent=2,
                                                      default=str) + "\n")

        results["faults"] = faults(args.kills, sweeps="sweeps" not in skip, signals=signals,
                                   disk="disk" not in skip, entry=args.entry,
                                   sweep_kills=args.sweep_kills,
                                   report_kills=not args.no_report_kills, progress=progress)
        for key, value in results["faults"].items():
            shown = {k: v for k, v in value.items() if k != "failures"} if isinstance(
                value, dict) else value
            print(f"  {key}: {shown}")
            for line in value.get("failures", [])[:5] if isinstance(value, dict) else []:
                print(f"    {line}")
        print(f"  ({_load()} at the end)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
