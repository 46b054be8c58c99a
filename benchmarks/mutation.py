"""Mutation testing of rlscale's core modules: do the tests pin values?

    python -m benchmarks.mutation MODULE --tests TEST [TEST ...] [--sample 40] [--seed 0]
    python -m benchmarks.mutation --core [--sample 40]     # the modules issue 16 names

A small AST mutator of our own (no dependency): each mutant changes one
operator or constant of the module — ``+``↔``-``, ``*``↔``/``, a comparison
flipped, ``and``↔``or``, a unary minus dropped, a numeric constant changed,
a ``raise`` removed, ``True``↔``False`` — and the module's tests are run
against it with ``-x``.  A mutant is *killed* when a test fails (or the run
errors or times out) and *survives* when every test passes.  The score is
killed / mutants; survivors are listed with their line so that each can be
killed by a test or argued equivalent.

The mutants run in a private copy of the package laid out as installed
(``rlscale/theory`` ...), put first on ``PYTHONPATH``, so the working tree
is never modified.  Not part of CI: it runs the test files once per mutant.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CARDS = ("theory", "optimize", "simulate", "proofs")

#: The modules issue 16 scores, with the tests that exercise them.
CORE = {
    "simulate/_grpo.py": ["tests/test_algorithm_updates.py", "tests/test_train.py"],
    "simulate/_rloo.py": ["tests/test_algorithm_updates.py", "tests/test_train.py"],
    # The algorithm protocol and the axis vocabulary (issue 16, room 4).
    "simulate/_algorithms.py": ["tests/test_trainer_shape.py", "tests/test_algorithm_updates.py"],
    "simulate/_axes.py": ["tests/test_trainer_shape.py"],
    "optimize/_alloc_closed.py": ["tests/test_allocate.py", "tests/test_allocate_paths.py",
                                  "tests/test_allocate_internals.py",
                                  "tests/test_allocate_closed.py"],
    # its fast path, split out of _alloc_closed (issue 25 item 7): the same tests
    "optimize/_alloc_closed_plan.py": ["tests/test_allocate.py", "tests/test_allocate_paths.py",
                                       "tests/test_allocate_internals.py",
                                       "tests/test_allocate_closed.py"],
    # the allocation modules' value tests (issue 16): one small file each, so a mutant runs fast
    "optimize/_allocate.py": ["tests/test_alloc_problem_values.py"],
    "optimize/_alloc_verbs.py": ["tests/test_alloc_problem_values.py"],
    "optimize/_alloc_checks.py": ["tests/test_alloc_checks_values.py"],
    "optimize/_alloc_kkt.py": ["tests/test_alloc_kkt_values.py"],
    "optimize/_alloc_model.py": ["tests/test_alloc_model_values.py"],
    "optimize/_alloc_polish.py": ["tests/test_alloc_polish_values.py"],
    "optimize/_alloc_result.py": ["tests/test_alloc_result_values.py",
                                  "tests/test_alloc_problem_values.py"],
    "optimize/_alloc_space.py": ["tests/test_alloc_space_values.py"],
    # the η bootstrap's warm-started Newton (issue 13 item 6)
    "optimize/_warm_newton.py": ["tests/test_warm_newton.py"],
    # the new *_values.py files first: with -x a mutant they kill stops there
    "optimize/_fit.py": ["tests/test_fit_values.py", "tests/test_fit.py"],
    "optimize/_fit_result.py": ["tests/test_result_convention.py", "tests/test_fit.py"],
    # the fitter's modules after the split of issue 16, room 3
    "optimize/_fit_family.py": ["tests/test_fit_family_values.py", "tests/test_fit.py",
                                "tests/test_multistart.py"],
    "optimize/_fit_data.py": ["tests/test_fit_data_values.py", "tests/test_fit.py"],
    "optimize/_fit_search.py": ["tests/test_fit_search.py", "tests/test_fit.py",
                                "tests/test_multistart.py"],
    "optimize/_fit_objective.py": ["tests/test_fit_search.py", "tests/test_fit.py",
                                   "tests/test_multistart.py"],
    "optimize/_multistart.py": ["tests/test_multistart_rules.py", "tests/test_multistart.py",
                                "tests/test_fit.py"],
    "optimize/_bootstrap.py": ["tests/test_fit_values.py", "tests/test_multistart.py",
                               "tests/test_fit.py"],
    "optimize/_lbfgs.py": ["tests/test_multistart.py", "tests/test_fit.py"],
    # the proofs' fast paths (issue 13) and their soundness tests (the review of it)
    "proofs/_emax_lower.py": ["tests/test_proofs_soundness.py", "tests/test_proofs_intervals.py",
                              "tests/test_proofs.py"],
    "proofs/_integrals.py": ["tests/test_proofs_soundness.py", "tests/test_proofs.py"],
    "theory/_gaussian.py": ["tests/test_gaussian_values.py", "tests/test_gaussian_pinned.py",
                            "tests/test_gaussian_extremes.py", "tests/test_reward_law.py"],
    # split out of _gaussian (issue 16 room 5): the log-space helpers it shares with reward
    "theory/_normal_selection.py": ["tests/test_selection_values.py",
                                    "tests/test_gaussian_pinned.py",
                                    "tests/test_gaussian_extremes.py",
                                    "tests/test_selection_rules.py"],
    # the selection-rule objects (issue 16 room 5)
    "theory/_selection_rules.py": ["tests/test_selection_values.py",
                                   "tests/test_selection_rules.py"],
    # _posynomial.py as split: the classes, the work-limited expansion, the parser
    "theory/_posynomial.py": ["tests/test_posynomial_values.py", "tests/test_posynomial.py"],
    "theory/_posynomial_expand.py": ["tests/test_posynomial_values.py",
                                     "tests/test_posynomial.py"],
    "theory/_posynomial_parser.py": ["tests/test_posynomial_values.py",
                                     "tests/test_posynomial.py"],
    # the reward-law fits (issue 13 item 6): the batched solver, the forms, the fits
    "src/rlscale/verification/_law_solver.py": ["tests/test_law_fits.py"],
    "src/rlscale/verification/_law_forms.py": ["tests/test_law_fits.py",
                                               "tests/test_trainer_reward_law.py"],
    "src/rlscale/verification/_law_fits.py": ["tests/test_law_fits.py"],
    "src/rlscale/verification/_law_models.py": ["tests/test_law_fits.py"],
}

_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
         ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
         ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.And: ast.Or, ast.Or: ast.And,
         ast.Pow: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    index: int  # position in the module's list of mutation points
    line: int
    what: str


def _points(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """Every (node, description) a mutant can change, in a stable order."""
    out: list[tuple[ast.AST, str]] = []
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef |
                                ast.Module) and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _SWAP:
            out.append((node, f"{type(node.op).__name__} -> {_SWAP[type(node.op)].__name__}"))
        elif isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAP:
            out.append((node, f"{type(node.ops[0]).__name__} -> "
                              f"{_SWAP[type(node.ops[0])].__name__}"))
        elif isinstance(node, ast.BoolOp):
            out.append((node, f"{type(node.op).__name__} -> {_SWAP[type(node.op)].__name__}"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            out.append((node, "drop unary minus"))
        elif (isinstance(node, ast.Constant) and id(node) not in docstrings
              and isinstance(node.value, int | float) and not isinstance(node.value, bool)):
            out.append((node, f"constant {node.value!r} -> {_bumped(node.value)!r}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            out.append((node, f"{node.value} -> {not node.value}"))
        elif isinstance(node, ast.Raise):
            out.append((node, "remove raise"))
    return out


def _bumped(v: float) -> float:
    if v == 0:
        return 1
    return v + 1 if isinstance(v, int) else v * 1.5


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return self.generic_visit(node)
        if isinstance(node, ast.BinOp | ast.BoolOp):
            node.op = _SWAP[type(node.op)]()
        elif isinstance(node, ast.Compare):
            node.ops = [_SWAP[type(node.ops[0])](), *node.ops[1:]]
        elif isinstance(node, ast.UnaryOp):
            return node.operand
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            node.value = not node.value
        elif isinstance(node, ast.Constant):
            node.value = _bumped(node.value)
        elif isinstance(node, ast.Raise):
            return ast.Pass()
        return node


def mutate(source: str, index: int) -> tuple[str, Mutant]:
    """The source with mutation point ``index`` changed, and its description."""
    tree = ast.parse(source)
    node, what = _points(tree)[index]
    line = getattr(node, "lineno", 0)
    tree = ast.fix_missing_locations(_Apply(node).visit(tree))
    return ast.unparse(tree), Mutant(index, line, what)


def _installed_copy(dst: Path) -> None:
    """The package as installed (rlscale/<card>), plus tests and data the tests read."""
    shutil.copytree(REPO / "src" / "rlscale", dst / "rlscale", ignore=shutil.ignore_patterns(
        "__pycache__"))
    for card in CARDS:
        shutil.copytree(REPO / card, dst / "rlscale" / card,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for extra in ("tests", "examples", "benchmarks"):
        shutil.copytree(REPO / extra, dst / extra, ignore=shutil.ignore_patterns(
            "__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, dst / name)
    # ../shared beside the repository: the tests look for it there.
    shared = REPO.parent / "shared"
    if shared.is_dir() and not (dst.parent / "shared").exists():
        (dst.parent / "shared").symlink_to(shared)


def run(module: str, tests: list[str], sample: int, seed: int, timeout: float,
        log=print) -> dict:
    """Score ``module`` (a repository path such as ``optimize/_fit.py``) against ``tests``."""
    card, name = module.split("/", 1)
    with tempfile.TemporaryDirectory(prefix="rlscale-mutation-") as tmp:
        root = Path(tmp) / "repo"
        _installed_copy(root)
        if card in CARDS:
            target = root / "rlscale" / card / name
        else:  # the top package: src/rlscale/... is rlscale/... in the installed copy
            target = root / Path(module).relative_to("src")
        original = target.read_text()
        points = _points(ast.parse(original))
        rng = random.Random(seed)
        chosen = sorted(rng.sample(range(len(points)), min(sample, len(points))))
        env = {**os.environ, "PYTHONPATH": str(root), "HYPOTHESIS_PROFILE": "dev",
               "PYTHONDONTWRITEBYTECODE": "1"}
        tests = [t for t in tests if (root / t).exists()]
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               "-m", "not slow", *tests]
        base = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True,
                              timeout=timeout * 4)
        if base.returncode != 0:
            raise RuntimeError(f"the tests fail without any mutant:\n{base.stdout[-2000:]}")
        killed, survivors = 0, []
        for i in chosen:
            text, mutant = mutate(original, i)
            target.write_text(text)
            try:
                rc = subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                                    timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                rc = -1
            finally:
                target.write_text(original)
            if rc == 0:
                survivors.append(mutant)
                log(f"  survived: line {mutant.line}: {mutant.what}")
            else:
                killed += 1
        score = killed / len(chosen) if chosen else float("nan")
        return {"module": module, "points": len(points), "mutants": len(chosen),
                "killed": killed, "score": score,
                "survivors": [m.__dict__ for m in survivors]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", nargs="?", help="repository path, e.g. optimize/_fit.py")
    parser.add_argument("--tests", nargs="+", default=[])
    parser.add_argument("--core", action="store_true", help="every module issue 16 names")
    parser.add_argument("--sample", type=int, default=40, help="mutants per module")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    args = parser.parse_args(argv)
    jobs = dict(CORE) if args.core else {}
    if args.module:
        jobs[args.module] = args.tests or CORE.get(args.module, [])
    if not jobs:
        parser.error("give a MODULE (with --tests) or --core")
    for module, tests in jobs.items():
        start = time.perf_counter()
        print(f"{module} ({', '.join(tests)})", flush=True)
        r = run(module, tests, args.sample, args.seed, args.timeout)
        print(f"{module}: {r['killed']}/{r['mutants']} killed = {r['score']:.0%} "
              f"({r['points']} mutation points; {time.perf_counter() - start:.0f} s)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
