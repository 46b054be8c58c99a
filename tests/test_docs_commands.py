"""Every shell example in README.md and docs/*.md runs, and says what it prints (issue 24).

Each fenced ``bash``/``console``/``shell``/``sh`` block carries, on the line right above
its fence, a marker saying what happens to each of its commands::

    <!-- run: fast -->                        every command, in the default run
    <!-- run: fast; slow; not-run: REASON -->  one entry per command, in order
    <!-- run: tested: PATH -->                 another check runs them (a test, .ci/run)
    <!-- run: smoke: --quick -->              the default run, with these options appended
    <!-- run: fast | uses results.csv from docs/ground.md -->
    <!-- run: fast; not-run: REASON | stand-in samples.csv -->

``fast`` commands run in the default (CI) run, ``slow`` ones under ``pytest -m slow``;
``smoke: OPTIONS`` ones (studies of many CPU minutes) run in the default run with OPTIONS
appended to the command as the page prints it -- the study's own small-size options, which
argparse lets override the page's (``--datasets 200 ... --datasets 1``): the same code end to
end, at a size CI can afford, its numbers not compared with the page's;
``not-run`` needs a reason (the test refuses one without), and
``tested`` names the file that runs the block.  ``uses FILE from PAGE`` copies a file
another page's block writes (that block is run first, in its own folder); ``stand-in FILE``
writes, for a file the page leaves to the reader (``samples.csv``: "columns
samples,correct"), a seeded one from a known law in the form the page describes
(:data:`STAND_INS`).

Every block runs in a temporary folder of its own, its commands in order, with
``examples/`` and ``benchmarks/`` the repository's (the docs name them relative to the
repository root; data under ``../shared/data`` is read where it lies, never copied).
Every ``rlscale`` command -- run or not -- is parsed by the CLI's own parser, and every
``python -m`` one not run is checked against its ``--help``, so no example goes silently
stale.  Where the prose quotes what a command prints, a test below reads the number
from the command's output and the quote from the page (exact: every command here is
seeded; the few approximate quotes say "about" and are compared with the tolerance
that word allows).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(bash|console|shell|sh)\s*$")
MARKER = re.compile(r"^<!--\s*run:\s*(.*?)\s*-->\s*$")
ENTRY = re.compile(r"^(fast|slow|smoke|not-run|tested)(?::\s*(.*))?$", re.S)
#: The modes the default (CI) run executes.
DEFAULT_RUN = ("fast", "smoke")
#: What a block's folder borrows from the repository (read in place, never copied).
LINKED = ("examples", "benchmarks")
TIMEOUT = 900


@dataclasses.dataclass(frozen=True)
class Command:
    page: str          # relative to the repository root
    line: int          # of the command's first line
    text: str          # as the page shows it, continuation lines joined
    argv: tuple[str, ...]
    mode: str          # fast | slow | smoke | not-run | tested
    reason: str        # why not run / which file runs it / the smoke options

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    marker: str | None
    commands: tuple[Command, ...]
    uses: tuple[tuple[str, str], ...]   # (file, page)
    stand_ins: tuple[str, ...]
    problems: tuple[str, ...]           # what is wrong with its marker


def _commands(lines: list[str], first: int) -> list[tuple[int, str]]:
    out, buf, start = [], "", 0
    for i, raw in enumerate(lines):
        if not buf:
            start = first + i
        line = raw.rstrip()
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip() and not buf.strip().startswith("#"):
            out.append((start, " ".join(buf.split())))
        buf = ""
    return out


def _parse_marker(text: str, n: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]],
                                               list[str], list[str]]:
    problems: list[str] = []
    body, _, uses_text = text.partition("|")
    uses, stand_ins = [], []
    for part in filter(None, (p.strip() for p in uses_text.split(","))):
        if (m := re.fullmatch(r"uses (\S+) from (\S+)", part)) is not None:
            uses.append((m[1], m[2]))
        elif (m := re.fullmatch(r"stand-in (\S+)", part)) is not None:
            stand_ins.append(m[1])
        else:
            problems.append(f"cannot read {part!r} (want 'uses FILE from PAGE' or "
                            "'stand-in FILE')")
    entries = []
    for part in (p.strip() for p in body.split(";")):
        m = ENTRY.match(part)
        if m is None:
            problems.append(f"unknown entry {part!r} (fast, slow, smoke: OPTIONS, "
                            "not-run: REASON, tested: PATH)")
            continue
        mode, reason = m[1], (m[2] or "").strip()
        if mode in ("smoke", "not-run", "tested") and not reason:
            problems.append(f"{mode!r} without a reason")
        if mode in ("fast", "slow") and reason:
            problems.append(f"{mode!r} takes no reason; got {reason!r}")
        entries.append((mode, reason))
    if len(entries) == 1:
        entries *= n
    elif len(entries) != n:
        problems.append(f"{len(entries)} entries for {n} commands (one, or one each)")
        entries = [("not-run", "marker unreadable")] * n
    return entries, uses, stand_ins, problems


def _blocks(path: Path) -> list[Block]:
    rel = str(path.relative_to(REPO))
    lines = path.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            cmds = _commands(lines[i + 1:j], i + 2)
            k, marker = i - 1, None
            while k >= 0 and lines[k].startswith("<!--"):   # comments right above the fence
                if (m := MARKER.match(lines[k])) is not None:
                    marker = m[1]
                k -= 1
            if marker is None:
                entries, uses, stand_ins, problems = (
                    [("not-run", "no marker")] * len(cmds), [], [],
                    ["no '<!-- run: ... -->' marker right above the fence"])
            else:
                entries, uses, stand_ins, problems = _parse_marker(marker, len(cmds))
            commands = tuple(
                Command(rel, ln, text, tuple(shlex.split(text, comments=True)), mode, reason)
                for (ln, text), (mode, reason) in zip(cmds, entries, strict=True))
            out.append(Block(rel, i + 1, marker, commands, tuple(uses), tuple(stand_ins),
                             tuple(problems)))
            i = j
        i += 1
    return out


BLOCKS = [b for page in PAGES for b in _blocks(page)]
COMMANDS = [c for b in BLOCKS for c in b.commands]
BLOCK_OF = {c: b for b in BLOCKS for c in b.commands}


def _find(page: str, start: str) -> Command:
    """The command of ``page`` whose text starts with ``start`` (exactly one)."""
    found = [c for c in COMMANDS if c.page == page and c.text.startswith(start)]
    assert len(found) == 1, f"{page}: {len(found)} commands start with {start!r}"
    return found[0]


# --------------------------------------------------------------------------- markers
def test_the_pages_have_shell_blocks() -> None:
    assert len(BLOCKS) >= 15 and len(COMMANDS) >= 40  # a parser that finds none is broken


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"{b.page}:{b.line}")
def test_every_block_says_what_runs_it(block: Block) -> None:
    assert not block.problems, f"{block.page}:{block.line}: {'; '.join(block.problems)}"
    for cmd in block.commands:
        if cmd.mode == "tested":
            target = REPO / cmd.reason
            assert target.is_file(), f"{cmd.id}: {cmd.reason} does not exist"
            assert Path(cmd.page).name in target.read_text(), (
                f"{cmd.id}: {cmd.reason} does not read {cmd.page}")
    for file in block.stand_ins:
        assert file in STAND_INS, f"{block.page}:{block.line}: no writer for stand-in {file}"
    for file, page in block.uses:
        assert any(file in c.text for b in _blocks(REPO / page) for c in b.commands), (
            f"{block.page}:{block.line}: no block of {page} writes {file}")


def test_what_the_default_run_skips_is_listed() -> None:
    """The commands CI does not run, by name: the closing note copies this list."""
    skipped = {c.id: f"{c.mode}: {c.reason or 'pytest -m slow'}" for c in COMMANDS
               if c.mode not in DEFAULT_RUN}
    assert all(reason.split(": ", 1)[1] for reason in skipped.values())
    print("\n".join(f"{k}  {v}" for k, v in skipped.items()))
    smaller = {c.id: c.reason for c in COMMANDS if c.mode == "smoke"}
    print("\n".join(f"{k}  runs with {v}" for k, v in smaller.items()))


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.argv[:1] == ("rlscale",)],
                         ids=lambda c: c.id)
def test_every_rlscale_command_parses(cmd: Command) -> None:
    """Run or not, the flags and values are ones the CLI accepts."""
    from rlscale.cli import build_parser

    try:
        build_parser().parse_args(list(cmd.argv[1:]))
    except SystemExit as exc:
        pytest.fail(f"{cmd.id}: the CLI refuses {cmd.text!r} (exit {exc.code})")


def _module(cmd: Command) -> str | None:
    argv = cmd.argv
    if argv[:1] in (("python",), ("python3",)) and argv[1:2] == ("-m",):
        return argv[2]
    return None


def test_every_module_not_run_knows_its_flags() -> None:
    """A ``python -m`` example CI does not run still names a module and flags that exist.

    (None is left today -- the studies run at smoke size -- so this loops over what a new
    page adds rather than being a parametrised test with nothing to run.)"""
    for cmd in (c for c in COMMANDS if c.mode == "not-run"
                and _module(c) not in (None, "venv")):  # venv: the stdlib's
        module = _module(cmd)
        done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{cmd.id}: {module} --help failed\n{done.stderr[-2000:]}"
        for flag in (a.split("=", 1)[0] for a in cmd.argv[3:] if a.startswith("--")):
            assert flag in done.stdout, f"{cmd.id}: {module} has no {flag}"


# --------------------------------------------------------------------------- running
def _samples_csv(path: Path) -> None:
    """Per-problem coverage data, columns samples,correct: 400 problems of 256 samples,
    success rates from a Beta(0.3, 3) (the fit_coverage doctest's law)."""
    import numpy as np

    gen = np.random.default_rng(0)
    correct = gen.binomial(256, gen.beta(0.3, 3.0, size=400))
    path.write_text("samples,correct\n" + "".join(f"256,{c}\n" for c in correct))


def _gold_csv(path: Path) -> None:
    """Gold reward against KL, columns kl,gold: Gao et al.'s best-of-n form
    d(α − βd), d = √KL, α = 1, β = 0.1, with 1 % noise, 3 seeds at 12 KL levels."""
    import numpy as np

    gen = np.random.default_rng(0)
    kl = np.repeat(np.geomspace(0.05, 20.0, 12), 3)
    d = np.sqrt(kl)
    gold = d * (1.0 - 0.1 * d) + 0.01 * gen.standard_normal(kl.size)
    rows = zip(kl.tolist(), gold.tolist(), strict=True)
    path.write_text("kl,gold\n" + "".join(f"{k!r},{g!r}\n" for k, g in rows))


#: The report's design (docs/solve.md: cost 20E + 2Et + 0.1Etk, centre E, t, k = 8, 4, 8).
_ALLOCATION_SPEC = """\
[law]
family = "additive"
floor = 0.2
coefficients = { E = 1.0, t = 1.0, k = 1.0 }
exponents = { E = 0.5, t = 0.5, k = 0.5 }
[cost]
expression = "20*E + 2*E*t + 0.1*E*t*k"
[bounds]
E = { min = 1, max = 10000 }
t = { min = 1, max = 10000 }
k = { min = 1, max = 10000 }
"""


def _spec_toml(path: Path) -> None:
    """An allocation spec over the report's design (its law's numbers are refitted from
    ``--data``; the family, cost and bounds are what the command uses)."""
    path.write_text(_ALLOCATION_SPEC)


def _far(E, t, k):
    """docs/solve.md's ``far`` generator: proportional scaling far from optimal."""
    return 0.26 + 0.9 * E ** -0.5 + 0.1 * t ** -0.2 + 0.1 * k ** -0.2


def _pilot_csv(path: Path) -> None:
    """A star pilot around E, t, k = 8, 4, 8 (levels 1..32 per axis, 3 seeds a point) from
    the ``far`` generator with 3 % log-normal noise, columns E,t,k,seed,loss."""
    import numpy as np

    gen = np.random.default_rng(0)
    centre = {"E": 8, "t": 4, "k": 8}
    points = [centre] + [{**centre, axis: v} for axis in centre
                         for v in (1, 2, 4, 8, 16, 32) if v != centre[axis]]
    rows = [f"{p['E']},{p['t']},{p['k']},{seed},"
            f"{float(_far(**p) * np.exp(0.03 * gen.standard_normal()))!r}\n"
            for p in points for seed in range(3)]
    path.write_text("E,t,k,seed,loss\n" + "".join(rows))


def _chinchilla(N, D):
    """Hoffmann et al. (2022), approach 3: L = 1.69 + 406.4 N^-0.34 + 410.7 D^-0.28."""
    return 1.69 + 406.4 * N ** -0.34 + 410.7 * D ** -0.28


def _pool_csv(path: Path) -> None:
    """A 10 x 10 grid of (N, D), 1e7..1e10 parameters by 1e9..1e12 tokens."""
    import numpy as np

    grid = [(float(n), float(d)) for n in np.geomspace(1e7, 1e10, 10)
            for d in np.geomspace(1e9, 1e12, 10)]
    path.write_text("N,D\n" + "".join(f"{n!r},{d!r}\n" for n, d in grid))


def _runs_csv(path: Path) -> None:
    """The pool's 16 cheapest corner runs, already made: the Chinchilla loss, 1 % noise."""
    import numpy as np

    gen = np.random.default_rng(1)
    ns, ds = np.geomspace(1e7, 1e10, 10)[:4], np.geomspace(1e9, 1e12, 10)[:4]
    rows = [f"{float(n)!r},{float(d)!r},"
            f"{float(_chinchilla(n, d) * np.exp(0.01 * gen.standard_normal()))!r}\n"
            for n in ns for d in ds]
    path.write_text("N,D,loss\n" + "".join(rows))


#: Writers of the files a page leaves to the reader (``stand-in FILE`` in a marker).
STAND_INS = {"samples.csv": _samples_csv, "gold.csv": _gold_csv, "spec.toml": _spec_toml,
             "pilot.csv": _pilot_csv, "pool.csv": _pool_csv, "runs.csv": _runs_csv}
_RAN: dict[Command, subprocess.CompletedProcess] = {}
# A block's first command, when an earlier block (no stand-ins, no borrowed files) opens
# with the very same one: the two would compute the same files.
_OPENERS = [b for b in BLOCKS if b.commands and not b.stand_ins and not b.uses]
_TWIN = {b.commands[0]: a.commands[0] for i, b in enumerate(_OPENERS) for a in _OPENERS[:i]
         if a.commands[0].argv == b.commands[0].argv and a.commands[0].mode == b.commands[0].mode}
_FOLDERS: dict[Block, Path] = {}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("docs-commands")


def _folder(block: Block, root: Path) -> Path:
    if block not in _FOLDERS:
        folder = root / f"{block.page.replace('/', '_')}-{block.line}"
        folder.mkdir()
        for name in LINKED:
            (folder / name).symlink_to(REPO / name)
        for file in block.stand_ins:
            STAND_INS[file](folder / file)
        for file, page in block.uses:
            source = next(c for b in _blocks(REPO / page) for c in b.commands
                          if file in c.text)
            _run(source, root)
            shutil.copy(_folder(BLOCK_OF[source], root) / file, folder / file)
        _FOLDERS[block] = folder
    return _FOLDERS[block]


def _run(cmd: Command, root: Path) -> subprocess.CompletedProcess:
    """Run ``cmd`` (and the commands before it in its block, once each)."""
    if cmd in _RAN:
        return _RAN[cmd]
    block = BLOCK_OF[cmd]
    if (twin := _TWIN.get(cmd)) is not None and twin in _RAN:
        # README and verify.md open a block with the same minute-long command: it runs
        # once, and this block's folder gets the files it wrote.
        shutil.copytree(_folder(BLOCK_OF[twin], root), _folder(block, root), symlinks=True,
                        dirs_exist_ok=True, ignore=lambda _, names: [n for n in names
                                                                     if n in LINKED])
        _RAN[cmd] = _RAN[twin]
        return _RAN[cmd]
    # The commands before it, in order; a command of the default run runs only the default
    # run's ones (so it must not need a slow one's output: its marker would say slow).
    for before in block.commands[:block.commands.index(cmd)]:
        if before.mode in DEFAULT_RUN or (before.mode == "slow" and cmd.mode == "slow"):
            _run(before, root)
    argv = list(cmd.argv)
    if cmd.mode == "smoke":
        argv += shlex.split(cmd.reason)
    if argv[0] == "rlscale":
        argv = [sys.executable, "-m", "rlscale", *argv[1:]]
    elif argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    else:
        pytest.fail(f"{cmd.id}: cannot run {argv[0]!r} (rlscale or python only)")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run(argv, cwd=_folder(block, root), capture_output=True, text=True,
                          timeout=TIMEOUT, env=env)
    assert done.returncode == 0, (f"{cmd.id}: {cmd.text}\nexit {done.returncode}\n"
                                  f"{done.stderr[-3000:]}")
    _RAN[cmd] = done
    return done


def _ran(page: str, start: str, root: Path) -> subprocess.CompletedProcess:
    return _run(_find(page, start), root)


RUN = [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.mode == "slow" else [])
       for c in COMMANDS if c.mode in (*DEFAULT_RUN, "slow")]


@pytest.mark.parametrize("cmd", RUN)
def test_command_runs(cmd: Command, workspace: Path) -> None:
    _run(cmd, workspace)


# --------------------------------------------------------------------------- the prose
def _prose(page: str) -> str:
    return " ".join((REPO / page).read_text().split())


def test_ground_sweep_and_fit_are_what_the_page_says(workspace: Path) -> None:
    page = "docs/ground.md"
    prose = _prose(page)
    done = _ran(page, "rlscale sweep examples/sweep.toml", workspace)
    sweep = done.stdout
    runs = int(re.search(r"^(\d+) runs in results\.csv$", done.stdout + done.stderr,
                         re.M)[1])
    assert f"the {runs} runs do not locate" in prose
    # "held-out success at most about 0.55 against 0.741": the best IQM of the table.
    best = max(float(m) for m in re.findall(r"grpo\s+\d+\s+(\S+) \[", sweep))
    assert abs(best - 0.55) <= 0.025, f"best IQM success {best}, the page says about 0.55"
    optimal = re.search(r"optimal (\S+);", _ran(page, "rlscale train --environments 16",
                                                 workspace).stdout)[1]
    assert f"against {float(optimal):.3f}" in prose
    fit = _ran(page, "rlscale fit results.csv", workspace)
    codes = re.findall(r"^warning \[(\S+)\]", fit.stderr, re.M)
    assert codes == ["floor-at-zero"] and "leaves one warning, `floor-at-zero`" in prose, codes


def test_ground_totals_fit_trips_the_warnings_the_page_lists(workspace: Path) -> None:
    """The inline example of what the warnings mean, on the same runs."""
    page = "docs/ground.md"
    prose = _prose(page)
    assert "(`--axes environments,tasks,trajectories`)" in prose
    folder = _folder(BLOCK_OF[_find(page, "rlscale fit results.csv")], workspace)
    _ran(page, "rlscale sweep examples/sweep.toml", workspace)
    done = subprocess.run([sys.executable, "-m", "rlscale", "fit", "results.csv", "--axes",
                           "environments,tasks,trajectories", "--target", "loss"],
                          cwd=folder, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    codes = set(re.findall(r"^warning \[(\S+)\]", done.stderr, re.M))
    # collinear axes, the floor and the environments term at zero, the correlation, the
    # ill-conditioned Jacobian: each named in the page's sentence.
    assert {"collinear-axes", "floor-at-zero", "coefficient-at-zero", "correlated-estimates",
            "ill-conditioned"} <= codes, codes
    assert "`collinear-axes`" in prose
    corr = re.search(r"floor and coefficient\[environments\] are correlated ([+-]\d\.\d+)",
                     done.stderr)
    assert corr and f"floor–environments correlation of {corr[1]}" in prose, done.stderr


def test_allocate_spec_prints_the_worked_example(workspace: Path) -> None:
    """docs/solve.md: "The same example as a spec is examples/allocate.toml" -- the CLI's
    plan is the doctest's above it, to the digits the doctest prints."""
    page = "docs/solve.md"
    out = _ran(page, "rlscale allocate examples/allocate.toml --budget 1e6", workspace).stdout
    text = (REPO / page).read_text()
    rows = {m[1]: (float(m[2]), m[3]) for m in
            re.finditer(r"^\s+(\w+)\s+(\S+)\s+(\S+)$", out, re.M) if m[1] in "Ekt"}
    values = "{" + ", ".join(f"'{v}': {round(rows[v][0], 2)}" for v in "Ekt") + "}"
    rounded = "{" + ", ".join(f"'{v}': {int(float(rows[v][1]))}" for v in "Ekt") + "}"
    assert f"({values}, {rounded})" in text, out
    loss = float(re.search(r"^\s+loss\s+(\S+)", out, re.M)[1])
    assert f"({loss:.4f}, True)" in text
    shares = dict(re.findall(r"([\w*]+) ([\d.]+)%", re.search(r"share of the cost: (.*)",
                                                              out)[1]))
    assert ("{" + ", ".join(f"'{k}': {float(v) / 100:g}" for k, v in shares.items()) + "}"
            ) in text, shares
    eta = re.search(r"efficiency eta = (\S+)", out)[1]
    assert f"{eta}× at 1e6" in _prose(page)


def test_allocate_sweep_writes_table_csv_json_png(workspace: Path) -> None:
    page = "docs/solve.md"
    cmd = _find(page, "rlscale allocate examples/allocate.toml --sweep")
    assert cmd.text.endswith("# table, CSV, JSON, PNG"), cmd.text
    out = _run(cmd, workspace).stdout
    assert re.search(r"^\s+budget\s+loss", out, re.M), out
    suffixes = {p.suffix for p in (_folder(BLOCK_OF[cmd], workspace) / "plan").iterdir()}
    assert {".csv", ".json"} <= suffixes, suffixes
    if _has_matplotlib():
        assert ".png" in suffixes, suffixes


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def test_infer_plan_prints_the_doctest_plan(workspace: Path) -> None:
    page = "docs/solve.md"
    out = _ran(page, "rlscale infer-plan --q 0.9,0.5,0.1 --budget 20", workspace).stdout
    row = out.splitlines()[1].split()
    budget, static, adaptive, difficulty, n = row[0], row[1], row[2], row[5], row[-1]
    text = (REPO / page).read_text()
    assert budget == "20"
    assert f"(({n.replace(',', ', ')}), {static}, {float(adaptive):g})" in text, row
    assert f"('difficulty', {difficulty}, " in text, row  # best baseline, its success


def test_inference_on_a_trained_agent_is_the_table_of_ground(workspace: Path) -> None:
    """docs/ground.md's table of the grounded inference plans, from solve.md's command."""
    out = _ran("docs/solve.md", "rlscale infer-plan --ground", workspace).stdout
    prose = _prose("docs/ground.md")
    q = re.search(r"q = ([\d., ]+)$", out.splitlines()[0])[1]
    assert f"(q = {q};" in prose
    inside = 0
    realised_gain = []
    for verifier, budget, body in re.findall(
            r"^\s*(perfect|noisy) verifier, budget (\d+):\n((?:    .*\n){4})", out, re.M):
        cells = []
        for name in ("static", "adaptive", "difficulty"):
            m = re.search(rf"{name}\s+predicted (\S+)\s+realised (\S+) \[(\S+), (\S+)\]", body)
            cells.append(f"{m[1]} / {m[2]} [{m[3]}, {m[4]}]")
            inside += float(m[3]) <= float(m[1]) <= float(m[4])
        eta = re.search(r"η vs difficulty (\S+) predicted, (\S+) realised", body)
        gain = re.search(r"value of adaptivity \S+ predicted, (\S+) realised", body)[1]
        realised_gain.append(gain)
        row = f"| {verifier}, {budget} | {' | '.join(cells)} | {eta[1]} / {eta[2]} |"
        assert row in prose, f"the page should have the row {row}"
    assert len(realised_gain) == 4
    words = {12: "Twelve", 11: "Eleven", 10: "Ten", 9: "Nine"}
    assert f"{words.get(inside, inside)} of the twelve predictions lie in" in prose, inside
    assert (f"adaptivity realised: {realised_gain[0]}, {realised_gain[1]} (perfect verifier), "
            f"{realised_gain[2]}, {realised_gain[3]} (noisy)") in prose


def test_sigmoid_audit_on_the_trainer_curve_is_what_the_page_says(workspace: Path) -> None:
    page = "docs/solve.md"
    prose = _prose(page)
    done = _ran(page, "rlscale train --environments 32 --epochs 40", workspace)
    train, train_err = done.stdout, done.stderr
    points = int(re.search(r"wrote curve\.csv \((\d+) points\)", train + train_err)[1])
    assert f"and the last: {points} here" in prose
    out = _ran(page, "rlscale fit curve.csv --law sigmoid", workspace).stdout
    data = json.JSONDecoder().raw_decode(out)[0]
    fit, audit = data["fit"], data["audit"]

    def iv(x: list[float]) -> str:
        return f"[{x[0]:.3f}, {x[1]:.3f}]"

    assert (f"(the run above, {points} points; the sigmoid fitted on all of them has "
            f"A = {fit['asymptote']:.3f} {iv(fit['asymptote_interval'])}, "
            f"B = {fit['exponent']:.2f})") in prose
    s, p = audit["sigmoid"], audit["power_law"]
    assert (f"the sigmoid gives A = {s['asymptote']:.3f} {iv(s['asymptote_interval'])} and "
            f"the power law extrapolates to A = {p['asymptote']:.1f}") in prose
    lower = audit["power_law_tail_rmse"] < audit["sigmoid_tail_rmse"]
    assert ("the power law's held-out RMSE is the lower" in prose) == lower
    assert (f"({audit['power_law_tail_rmse']:.3f} against {audit['sigmoid_tail_rmse']:.3f}; "
            f"errors at the last point {audit['power_law_final_error']:+.3f} and "
            f"{audit['sigmoid_final_error']:+.3f})").replace("-", "−") in prose
    assert (_folder(BLOCK_OF[_find(page, "rlscale fit curve.csv")], workspace)
            / "audit.png").is_file() or not _has_matplotlib()


def test_plan_labels_per_step_is_what_verify_says(workspace: Path) -> None:
    page = "docs/verify.md"
    out = json.loads(_ran(page, "rlscale plan-labels --law 1.14,2.43,0.60 --price-m 1 "
                                "--price-step 5", workspace).stdout)
    assert (f"buys M = {out['M']:.0f} and {out['steps']:.1f} steps (K = {out['K']:.1f}, "
            f"predicted gain {out['gain']:.2f})") in _prose(page), out


def test_gao_fit_of_the_stand_in_holds_its_law(workspace: Path) -> None:
    """The stand-in gold.csv is d(1 − 0.1·d) with 1 % noise: the printed intervals hold it."""
    fit = json.loads(_ran("docs/solve.md", "rlscale fit gold.csv --law gao_bon",
                          workspace).stdout)["fit"]
    assert fit["alpha_interval"][0] <= 1.0 <= fit["alpha_interval"][1], fit
    assert fit["beta_interval"][0] <= 0.1 <= fit["beta_interval"][1], fit


def test_the_stand_in_pilot_is_decided_as_the_page_says(workspace: Path) -> None:
    """On the ``far`` pilot the decision names a baseline or plan with P(beats) and the
    pilot-range notes the page describes, and judges against proportional."""
    out = _ran("docs/solve.md", "rlscale allocate spec.toml --budget 1000 --data pilot.csv",
               workspace).stdout
    assert "proportional" in out and "P(beats)" in out, out
    assert "2x the pilot's range" in out, out


def test_the_stand_in_design_buys_pool_runs_within_its_budget(workspace: Path) -> None:
    """``rlscale design``'s batch is made of the pool's own rows and costs at most the
    budget (6·N·D summed, computed here from next.csv, not read from the command)."""
    import csv

    done = _ran("docs/solve.md", "rlscale design --law additive --axes N,D --pool pool.csv",
                workspace)
    folder = next(f for b, f in _FOLDERS.items() if b.page == "docs/solve.md"
                  and any(c.text.startswith("rlscale design --law additive") for c in b.commands))
    with open(folder / "pool.csv") as fh:
        pool = {(float(r["N"]), float(r["D"])) for r in csv.DictReader(fh)}
    with open(folder / "next.csv") as fh:
        batch = [(float(r["N"]), float(r["D"])) for r in csv.DictReader(fh)]
    assert batch and all(run in pool for run in batch), done.stderr
    assert sum(6 * n * d for n, d in batch) <= 2e21 * (1 + 1e-12), done.stderr
