"""Bad command lines for every verb, drawn by hypothesis (issue 22, item 5).

Each verb has a cheap *valid* command line (:func:`skeletons`); a case takes
one and breaks it in one way that makes it invalid whatever else it holds:

* a flag no parser knows (``--budjet``), anywhere on the line;
* a typed flag given a value of the wrong kind -- ``abc``, ``""``, ``1e6``
  or ``2.5`` for an integer, ``nan``, ``inf``, ``1e400`` or ``abc`` for a
  real number, a word outside the choices of a ``choices`` flag, a value
  given to a flag that takes none (``--quick=yes``);
* a verb-specific malformed value (:data:`BAD_VALUES`: a sweep range
  ``1e6:1e4:5``, ``--set lr=nan``, probabilities above one, ...);
* a broken input file (:data:`BAD_FILES`: missing, a directory, empty,
  binary, malformed TOML or CSV, a CSV field over 128 kB, a count written
  ``2.0``) in place of the verb's spec, data or configuration;
* a required argument left out.

:func:`run_case` calls :func:`rlscale.cli.main` in this process under a
deadline and classifies what happened; the contract is exit status 2,
exactly one line on stderr starting with ``rlscale``, no traceback, within
:data:`DEADLINE` seconds of CPU.  ``tests/test_cli_fuzz.py`` draws 200 cases in CI;
``python -m benchmarks reliability`` draws 500 or more and prints the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from rlscale.cli import _sub_action, build_parser, main

#: CPU seconds one bad command line may take before it counts as a hang (and six times
#: that, at least a minute, of wall time spent waiting).
DEADLINE = 10.0

GOOD_ALLOC = """
[law]
family = "additive"
floor = 0.15
coefficients = { E = 2.0, k = 1.2 }
exponents = { E = 0.45, k = 0.2 }
[cost]
expression = "100*E + k"
[bounds]
E = { min = 1, max = 500 }
k = { min = 1 }
[baseline]
scaled = "k"
fixed = { E = 20 }
"""
GOOD_SWEEP = ('design = "grid"\nseeds = [0]\n[axes]\nenvironments = [1, 2]\n'
              "[train]\nepochs = 1\ngrid_size = 4\neval_environments = 2\n")
GOOD_DATA = "environments,loss\n1,0.5\n2,0.4\n4,0.33\n8,0.3\n16,0.28\n"
GOOD_COVERAGE = "samples,correct\n10,3\n10,0\n10,9\n10,5\n"
#: A pilot sweep of GOOD_ALLOC's law for ``allocate --data`` (issue 29's decision).
GOOD_PILOT = "E,k,loss\n" + "".join(f"{e},{k},{0.15 + 2 * e**-0.45 + 1.2 * k**-0.2:.6f}\n"
                                     for e in (1, 4, 16, 64) for k in (1, 4, 16, 64))
#: Candidate runs for ``design`` (issue 23): GOOD_PILOT's axes between its levels.
GOOD_POOL = "E,k\n" + "".join(f"{e},{k}\n" for e in (2, 8, 32, 128) for k in (2, 8, 32, 128))

#: Broken versions of each kind of input file (name -> content; None: do not create).
BAD_FILES: dict[str, dict[str, str | bytes | None]] = {
    "any": {
        "missing": None, "binary": b"\x00\xff\xfe\x01\x02garbage\x00",
        "not utf-8": b"\xff\xfe\xfa\xfb", "directory": "<dir>",
    },
    "toml": {
        "unclosed table": "[law\nfamily=", "unclosed string": 'design = "grid',
        "duplicate key": "seeds = [0]\nseeds = [1]\n", "array of tables": "[[axes]]\nx = 1\n",
        "deep nesting": "a = " + "[" * 500 + "]" * 500 + "\n",
    },
    "alloc": {
        "exponent 1e6": GOOD_ALLOC.replace("E = 0.45", "E = 1e6"),
        "floor nan": GOOD_ALLOC.replace("floor = 0.15", "floor = nan"),
        "coefficient inf": GOOD_ALLOC.replace("E = 2.0", "E = inf"),
        "coefficient negative": GOOD_ALLOC.replace("E = 2.0", "E = -2.0"),
        "cost eval": GOOD_ALLOC.replace("100*E + k", "__import__('os').system('x')"),
        "cost power tower": GOOD_ALLOC.replace("100*E + k", "(E+k)**99**99"),
        "bound bool": GOOD_ALLOC.replace("max = 500", "max = true"),
        "unknown table": GOOD_ALLOC + "[extra]\nx = 1\n",
    },
    "sweep": {
        "seeds floats": GOOD_SWEEP.replace("seeds = [0]", "seeds = [0.0]"),
        "environments 2.0": GOOD_SWEEP.replace("[1, 2]", "[1, 2.0]"),
        "environments 1e6": GOOD_SWEEP.replace("[1, 2]", "[1, 1e6]"),
        "environments huge": GOOD_SWEEP.replace("[1, 2]", "[1, 9223372036854775807]"),
        "epochs bool": GOOD_SWEEP.replace("epochs = 1", "epochs = true"),
        "epochs 2.0": GOOD_SWEEP.replace("epochs = 1", "epochs = 2.0"),
        "lr nan": GOOD_SWEEP + "lr = nan\n",
        "unknown field": GOOD_SWEEP + "colour = 1\n",
        "too many runs": GOOD_SWEEP.replace("seeds = [0]", "seeds = [" + ",".join(
            map(str, range(200_000))) + "]"),
    },
    "csv": {
        "empty": "", "header only": "environments,loss\n",
        "text value": "environments,loss\n1,abc\n2,0.4\n",
        "nan": "environments,loss\n1,nan\n2,0.4\n4,0.3\n8,0.3\n",
        "inf axis": "environments,loss\ninf,0.5\n2,0.4\n4,0.3\n8,0.3\n",
        "ragged": "environments,loss\n1,0.5,9\n2\n",
        "field over 128 kB": "environments,loss\n1," + "7" * 200_000 + "\n2,0.4\n",
        "quote unclosed": 'environments,loss\n1,"0.5\n2,0.4\n',
        "nul": "environments,loss\n1,0.5\x00\n2,0.4\n",
        # DictReader keeps the last of two same-named columns (issue 22: E,E,loss).
        "header repeated": "environments,environments,loss\n1,2,0.5\n2,4,0.4\n",
    },
    "coverage": {
        "correct above samples": "samples,correct\n10,11\n10,3\n",
        "negative": "samples,correct\n-10,3\n10,3\n",
        "fractional": "samples,correct\n10.5,3\n10,3\n",
        "no rows": "samples,correct\n",
        "header repeated": "samples,samples,correct\n10,10,3\n10,10,5\n",
    },
    "report": {
        "unknown key": "colour = 1\n", "seed float": "seed = 0.5\n", "seed 2.0": "seed = 2.0\n",
        "seed negative": "seed = -1\n", "seed huge": "seed = 99999999999999999999\n",
        "sweep not a table": "sweep = 3\n",
    },
}

#: Malformed values of the free-text flags, per verb (the typed ones are generated).
BAD_VALUES: dict[str, dict[str, list[str]]] = {
    "rlscale allocate": {"--sweep": ["a:b:c", "1e4:1e6", "1e6:1e4:5", "1e4:1e6:1e8",
                                     "1e4:1e6:2.5", "1e4:1e6:inf", "nan:1:3", ":", ""],
                         "--budget": ["-1", "0", "1e308"], "--target": ["-1", "0"],
                         "--hold": ["", "E", "E=", "E=x", "E=nan", "E=inf", "E=-1", "Z=1",
                                    "E=1e400", "=1", "E=1=2", "k=0"],
                         # the pilot's options without --data
                         "--centre": ["E=10,k=10"], "--loss-range": ["0,1"],
                         "--probability": ["0.9"], "--seed": ["3"], "--bootstrap": ["50"],
                         "--method": ["plug-in"], "--loss-column": ["loss"]},
    # Issue 29's decision from a pilot and issue 27's context axis: their free-text flags.
    "rlscale allocate --data": {
        "--centre": ["", "E=10", "E=10,k=x", "E=10,k=nan", "E=10,k=-1", "E=10,k=10,K=2",
                     "E=10,,k=10", "E=inf,k=1", "E=1e400,k=1", "=1"],
        "--loss-column": ["", "nosuch", "loss,loss"],
        "--default-baseline": ["", "nosuch", "K only", "only", "proportional "],
        "--loss-range": ["1", "1,0", "0,nan", "x,y", "0,1,2", "0.5,0.5", "nan,nan"],
        "--probability": ["0.5", "1", "nan"], "--bootstrap": ["0", "19", "100000"],
        "--hold": ["E=1"], "--budget": ["1e6", "0", "-1"]},
    "rlscale infer-plan --context-levels": {
        "--context-levels": ["", "x", "0", "-1", "1,2,x", "nan", "inf", "1e400", "1,1", "1.5",
                             "1e30", ",", "1,1e300"],
        "--q-full": ["", "x", "1.5", "0.1,0.1", "nan", "0.95", "0.95,0.9,0.8", "0.8,0.4"],
        "--budget": ["100000", "1e6", "20.5", "0"], "--sweep": ["10:100:3"],
        "--fit-coverage": ["x.csv"]},
    # Options of the per-turn plan that the coverage fit does not read (refused, issue 22).
    "rlscale infer-plan --fit-coverage": {
        "--fpr": ["0.1"], "--fnr": ["0.1"], "--failures": ["retried"], "--q": ["0.5"],
        "--costs": ["1"], "--budget": ["20"], "--sweep": ["2:9:3"], "--out": ["x"],
        "--set": ["episodes=10"], "--context-levels": ["1,4"]},
    "rlscale fit": {"--axes": ["", ",", "nosuchcolumn", "environments,environments"],
                    "--starts": ["zero", "-3", "0", "1e9", "2.5", "1000000000"],
                    "--floor": ["2,1", "x", "nan,1", "1"], "--p-max": ["x", "1,0", ""],
                    "--target": ["nosuchcolumn"], "--confidence": ["2", "0", "-0.5"],
                    "--holdout": ["1.5", "-0.1"], "--bootstrap": ["-1", "1000000000"],
                    "--jobs": ["0"]},
    "rlscale infer-plan": {"--q": ["1.5", "", "nan", "0.5,x", "-0.1", ","],
                           "--costs": ["0", "x", "1.5"], "--fpr": ["1.5", "-0.1"],
                           "--fnr": ["2"], "--budget": ["-1", "0.5", "1e300"],
                           "--sweep": ["a:b:c", "5:1:3"], "--bootstrap": ["-1"],
                           "--q-full": ["0.95,0.9"], "--context-exponent": ["2"],
                           "--context-cost": ["1"], "--out": ["x"],
                           "--set": ["nonsense", "bogus=1", "trajectories_per_task=0"]},
    "rlscale plan-labels": {"--law": ["1,2", "nan,1,1", "a,b,c", "", "1,0,-1"],
                            "--price-m": ["-1", "0"], "--price-k": ["-1", "0"],
                            "--target": ["-1"], "--budget": ["-1", "0"]},
    "rlscale prove": {"names": ["no-such-proof", "../etc/passwd"]},
    "rlscale sweep": {"--jobs": ["0", "-1", "100000000"]},
    "rlscale train": {"--env": ["", "x", "memory ", "Memory", "grid,memory"],
                      "--set": ["nonsense", "bogus=1", "lr=nan", "lr=-1", "epochs=1e12",
                                "grid_size=100000", "max_steps=1e9", "tasks_per_step=abc",
                                "=1", "epochs=2.0", "seed=-1"],
                      "--environments": ["0", "1000000000"], "--algorithm": ["ppo", ""],
                      "--policy": ["rnn", ""], "--trajectories-per-task": ["1"],
                      "--defect-rate": ["2", "-0.5"], "--lr": ["-1", "0"],
                      "--frontier": ["0.9 0.1", "-1 0.5"], "--epochs": ["0"],
                      "--seed": ["-1"]},
    "rlscale verify properties": {"names": ["no.such.property"]},
    "rlscale verify reward-law": {"--seed": ["-1"], "--jobs": ["0", "-2"]},
}

_INT_BAD = ["abc", "", "1.5", "1e6", "nan", "inf", "2.0", "0x10", "1e400", str(10**30)]
_FLOAT_BAD = ["nan", "inf", "-inf", "1e400", "-1e400", "abc", "", "1,5", "NaN", "+inf"]


@dataclass(frozen=True)
class Workspace:
    """A folder with good and broken input files (created by :meth:`create`)."""

    root: Path

    @classmethod
    def create(cls, root: Path) -> Workspace:
        root.mkdir(parents=True, exist_ok=True)
        ws = cls(root)
        for name, text in {"alloc.toml": GOOD_ALLOC, "sweep.toml": GOOD_SWEEP,
                           "data.csv": GOOD_DATA, "coverage.csv": GOOD_COVERAGE,
                           "pilot.csv": GOOD_PILOT, "pool.csv": GOOD_POOL,
                           "report.toml": "seed = 0\n"}.items():
            (root / name).write_text(text)
        (root / "foreign.csv").write_text("name,score\nalice,3\n")
        bad = root / "bad"
        bad.mkdir(exist_ok=True)
        for kind, files in BAD_FILES.items():
            for label, content in files.items():
                path = ws.bad_file(kind, label)
                if content is None or path.exists():
                    continue
                if content == "<dir>":
                    path.mkdir()
                elif isinstance(content, bytes):
                    path.write_bytes(content)
                else:
                    path.write_text(content, encoding="utf-8")
        return ws

    def bad_file(self, kind: str, label: str) -> Path:
        return self.root / "bad" / f"{kind}-{label.replace(' ', '_')}"

    def skeletons(self) -> dict[str, list[str]]:
        """A cheap valid command line per verb (the parser's ``prog``), and per use of a verb
        whose options differ (``prog --flag``: the leaf is ``prog``'s)."""
        r = self.root
        return {
            "rlscale allocate": ["allocate", str(r / "alloc.toml"), "--budget", "1e6"],
            "rlscale allocate --data": ["allocate", str(r / "alloc.toml"), "--budget", "200",
                                        "--data", str(r / "pilot.csv"), "--centre",
                                        "E=10,k=10", "--bootstrap", "20"],
            "rlscale design": ["design", "--law", "additive", "--axes", "E,k", "--pool",
                               str(r / "pool.csv"), "--cost", "E*k", "--budget", "300",
                               "--observed", str(r / "pilot.csv"), "--target",
                               "budget:100000", "--method", "cheapest", "--bootstrap", "20"],
            "rlscale fit": ["fit", str(r / "data.csv"), "--axes", "environments", "--starts",
                            "4", "--jobs", "1"],
            "rlscale infer-plan": ["infer-plan", "--q", "0.9,0.5", "--budget", "20"],
            "rlscale infer-plan --fit-coverage": ["infer-plan", "--fit-coverage",
                                                  str(r / "coverage.csv"), "--bootstrap",
                                                  "20"],
            "rlscale infer-plan --context-levels": [
                "infer-plan", "--q", "0.9,0.5", "--q-full", "0.95,0.9", "--budget", "20",
                "--context-levels", "1,4,16", "--context-cost", "0.5"],
            "rlscale plan-labels": ["plan-labels", "--law", "1,0,1", "--price-m", "1",
                                    "--price-k", "1", "--target", "0.5"],
            "rlscale prove": ["prove", "--list"],
            "rlscale report": ["report", "--quick", "--no-progress", "--out",
                               str(r / "report")],
            "rlscale sweep": ["sweep", str(r / "sweep.toml"), "--out", str(r / "sweep.csv"),
                              "--dry-run", "--no-progress"],
            "rlscale train": ["train", "--environments", "1", "--tasks-per-environment", "1",
                              "--trajectories-per-task", "2", "--epochs", "1",
                              "--no-progress", "--set", "grid_size=3", "--set",
                              "eval_environments=1"],
            "rlscale verify properties": ["verify", "properties", "--list"],
            "rlscale verify reward-law": ["verify", "reward-law", "--quick", "--no-figures",
                                          "--out", str(r / "law")],
        }

    def file_slots(self) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        """Per verb: the argument that names an input file (a positional's index in the
        skeleton, or a flag) and the kinds of broken file that fit it."""
        return {
            "rlscale allocate": [("1", ("any", "toml", "alloc"))],
            "rlscale allocate --data": [("--data", ("any", "csv"))],
            "rlscale design": [("--pool", ("any", "csv")), ("--observed", ("any", "csv"))],
            "rlscale fit": [("1", ("any", "csv"))],
            "rlscale infer-plan": [("--fit-coverage", ("any", "csv", "coverage"))],
            "rlscale infer-plan --fit-coverage": [("--fit-coverage",
                                                   ("any", "csv", "coverage"))],
            "rlscale report": [("--config", ("any", "toml", "report"))],
            "rlscale sweep": [("1", ("any", "toml", "sweep"))],
        }


def _leaves(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    sub = _sub_action(parser)
    if sub is None:
        yield parser
        return
    for child in sub.choices.values():
        yield from _leaves(child)


def _typed_mutations(leaf: argparse.ArgumentParser) -> list[list[str]]:
    """Flag-value pairs wrong by type for every typed, choice or valueless flag of ``leaf``."""
    out: list[list[str]] = []
    for action in leaf._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:
            out.append([f"{flag}=yes"])
        elif action.choices is not None:
            out += [[flag, "no-such-choice"], [flag, ""]]
        elif action.type is int:
            out += [[flag, v] for v in _INT_BAD]
        elif action.type is float:
            extra = [] if action.nargs is None else ["0.5"] * (int(action.nargs) - 1)
            out += [[flag, v, *extra] for v in _FLOAT_BAD]
    return out


def cli_cases(ws: Workspace) -> st.SearchStrategy[list[str]]:
    """Bad argv lists over every verb (see the module docstring)."""
    parser = build_parser()
    skeletons = ws.skeletons()
    leaves = {leaf.prog: leaf for leaf in _leaves(parser)}
    missing = sorted(set(leaves) - set(skeletons))
    assert not missing, f"verbs without a fuzz skeleton: {missing}"
    slots = ws.file_slots()
    strategies = []
    for prog, base in sorted(skeletons.items()):
        leaf = leaves[prog.split(" --")[0]]
        known = set(leaf._option_string_actions)
        unknown = st.from_regex(r"--[a-z][a-z0-9-]{0,14}", fullmatch=True).filter(
            lambda f, known=known: not any(o.startswith(f) for o in known))
        # An unknown flag, with or without a value, anywhere after the verb.
        strategies.append(st.tuples(st.just(base), unknown, st.integers(1, len(base)),
                                    st.booleans()).map(
            lambda t: [*t[0][:t[2]], t[1], *(["1"] if t[3] else []), *t[0][t[2]:]]))
        pairs = _typed_mutations(leaf) + [
            [flag, *value.split(" ")] if flag.startswith("-") else [value]
            for flag, values in BAD_VALUES.get(prog, {}).items() for value in values]
        if pairs:
            strategies.append(st.tuples(st.just(base), st.sampled_from(pairs)).map(
                lambda t: _put(t[0], t[1])))
        for slot, kinds in slots.get(prog, []):
            files = [str(ws.bad_file(k, label)) for k in kinds for label in BAD_FILES[k]]
            strategies.append(st.tuples(st.just(base), st.just(slot),
                                        st.sampled_from(files)).map(
                lambda t: _with_file(*t)))
        for drop in _required(leaf, base):
            strategies.append(st.just(drop))
    return st.one_of(strategies)


def _put(base: list[str], pair: list[str]) -> list[str]:
    """``base`` with ``pair`` (``[flag, value...]`` or a bare positional) in effect: a
    flag already there has its value replaced, else the pair is appended."""
    if not pair[0].startswith("-"):  # a positional (a proof or property name)
        return [*base[:2 if base[0] == "verify" else 1], *pair]
    flag = pair[0].split("=", 1)[0]
    out = list(base)
    if flag in out and "=" not in pair[0]:
        i = out.index(flag)
        nargs = len(pair) - 1
        return [*out[:i], *pair, *out[i + 1 + nargs:]]
    return [*out, *pair]


def _with_file(base: list[str], slot: str, path: str) -> list[str]:
    if slot.startswith("-"):
        return _put(base, [slot, path])
    i = int(slot)
    return [*base[:i], path, *base[i + 1:]]


def _required(leaf: argparse.ArgumentParser, base: list[str]) -> list[list[str]]:
    """``base`` without each of its required arguments in turn."""
    out = []
    for action in leaf._actions:
        if not action.required:
            continue
        if action.option_strings:
            flag = next((o for o in action.option_strings if o in base), None)
            if flag is not None:
                i = base.index(flag)
                out.append([*base[:i], *base[i + 2:]])
        elif action.nargs is None:
            positionals = [i for i, t in enumerate(base) if i > 0 and not t.startswith("-")
                           and not base[i - 1].startswith("-")]
            if positionals:
                out.append([*base[:positionals[0]], *base[positionals[0] + 1:]])
    groups = [g for g in leaf._mutually_exclusive_groups if g.required]
    for g in groups:
        flags = {o for a in g._group_actions for o in a.option_strings}
        drop = [i for i, t in enumerate(base) if t in flags]
        if drop:
            i = drop[0]
            out.append([*base[:i], *base[i + 2:]])
    return out


# ----------------------------------------------------------------------------- running

@dataclass(frozen=True)
class CaseOutcome:
    """What one command line did."""

    argv: tuple[str, ...]
    code: int | None
    stderr: str
    seconds: float
    #: "ok" (exit 2, one line), "hang", "traceback", "accepted" (exit 0), "lines" (not one
    #: line), "code" (another exit status).
    kind: str


class _Deadline(BaseException):
    """Raised by the alarm (a BaseException: no ``except Exception`` swallows it)."""


def run_case(argv: list[str], deadline: float = DEADLINE) -> CaseOutcome:
    """Run ``rlscale ARGV`` in this process under ``deadline`` and classify the outcome."""
    err, out = io.StringIO(), io.StringIO()

    def alarm(signum, frame):
        raise _Deadline

    # CPU time bounds the work, wall time a wait (as tests/contracts.time_limit): a loaded
    # host stretches wall time many-fold.
    previous = signal.signal(signal.SIGPROF, alarm), signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_PROF, deadline)
    signal.setitimer(signal.ITIMER_REAL, max(6 * deadline, 60.0))
    start = time.perf_counter()
    code: int | None
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    except _Deadline:
        code = None
    except Exception as exc:  # an exception that escaped main() is what is counted
        import traceback

        err.write("".join(traceback.format_exception(exc)))
        code = 1
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
    seconds = time.perf_counter() - start
    text = err.getvalue()
    lines = text.strip("\n").split("\n")
    if code is None:
        kind = "hang"
    elif "Traceback" in text:
        kind = "traceback"
    elif code == 0:
        kind = "accepted"
    elif code != 2:
        kind = "code"
    elif len(lines) != 1 or not lines[0].startswith("rlscale"):
        kind = "lines"
    else:
        kind = "ok"
    return CaseOutcome(tuple(argv), code, text, seconds, kind)
