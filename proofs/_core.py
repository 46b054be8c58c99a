"""The proof framework: a statement, its assumptions and its steps, checked or cited.

A :class:`Proof` is an ordered list of :class:`Step` objects (defined in
:mod:`rlscale.proofs._steps` and :mod:`rlscale.proofs._certified`, re-exported
here).  Each step makes one precise claim and knows how to check it, or says
that it cites it:

:class:`Cited`
    a classical fact the derivation uses (Gibbs' inequality, Jensen, the
    layer-cake formula, ...), with its reference; status ``"cited"``, mark
    ``†``, never counted as checked or as failed.

:class:`Identity`
    ``lhs == rhs``: sympy reduces ``lhs - rhs`` (after ``doit()``, so
    unevaluated integrals, derivatives and limits are computed inside the
    check) to exactly ``0`` -- by exact rewrites, the cheap ones (``expand``,
    ``together``, ``powsimp``) first and ``simplify`` last; an integral of a
    sum is evaluated term by term when every term converges.  Positive
    expressions may instead be compared by their logarithms (``expand_log``
    is valid for positive arguments).
:class:`Sign`
    ``expr > 0`` (or ``>= 0``, ``< 0``, ``<= 0``) decided by sympy's
    assumption system from the declared signs of the symbols.
:class:`Limit`, :class:`Series`
    a limit or a truncated series expansion computed by sympy.
:class:`PolynomialInequality`
    a goal in real (polynomial or rational) arithmetic under hypotheses,
    decided by z3: the step holds when ``hypotheses ∧ ¬goal`` is
    unsatisfiable.  When z3 (extra ``proofs``) is missing, the step runs its
    declared interval fallback or is reported as *skipped*, never as passed.
:class:`IntervalInequality`
    ``f(x) >= 0`` (or ``> 0``) for every ``x`` in a closed range, proved by
    rigorous interval arithmetic (:mod:`mpmath.iv`, outward rounding): the
    range is split into boxes, each box is enclosed, and boxes whose
    enclosure straddles zero are bisected until they are decided or the box
    budget runs out.
:class:`IntervalCertificate`
    a finite list of interval enclosures (computed by a function the proof
    supplies, e.g. a rigorous quadrature bracket) that must all be positive.

Every step returns a :class:`StepResult` whose status is ``"passed"``,
``"failed"``, ``"skipped"`` or ``"cited"`` with a reason and the checker that
decided it (``sympy``, ``z3``, ``interval`` or ``cited``).  A proof holds when
no step failed or was skipped: a skipped step is not a pass.  Its count keeps
what the machine checked apart from what it cites (``PROVED (10 checked, 2
cited)``), and a checked step's text claims only what its checker decides --
a fact it relies on beyond that is a separate :class:`Cited` step.  The
proof's assumptions (hypotheses of the statement) are listed as well.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", positive=True)
>>> proof = Proof(
...     name="demo", title="A two-step demonstration",
...     statement="(x + 1)^2 >= 4x for x > 0",
...     assumptions=("x is a positive real",),
...     steps=(
...         Identity("expand", (x + 1) ** 2 - 4 * x, (x - 1) ** 2),
...         Sign("square", (x - 1) ** 2, ">="),
...         Cited("meaning", "a square is >= 0, so (x + 1)^2 >= 4x", "Euclid, Elements II.5"),
...     ),
... )
>>> result = proof.check()
>>> result.passed, [s.mark for s in result.steps], result.counts_text()
(True, ['✓', '✓', '†'], '2 checked, 1 cited')
>>> bad = proof.replace_step(Identity("expand", (x + 1) ** 2 - 4 * x, (x + 1) ** 2))
>>> bad.check().steps[0].status
'failed'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rlscale.proofs._certified import (
    IntervalCertificate,
    IntervalInequality,
    PolynomialInequality,
    interval_eval,
    z3_available,
)
from rlscale.proofs._steps import (
    CHECKERS,
    STATUSES,
    Cited,
    Identity,
    Limit,
    Series,
    Sign,
    Step,
    StepResult,
)
from rlscale.theory._repr import compact_repr
from rlscale.theory._result import Result

__all__ = [
    "CHECKERS",
    "STATUSES",
    "Cited",
    "Identity",
    "IntervalCertificate",
    "IntervalInequality",
    "Limit",
    "PolynomialInequality",
    "Proof",
    "ProofResult",
    "Series",
    "Sign",
    "Step",
    "StepResult",
    "interval_eval",
    "latex_document",
    "z3_available",
]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ProofResult(Result):
    """The outcome of checking a proof: one :class:`StepResult` per step.

    ``concerns`` names the rlscale functions the proof is about (the link
    tests, not the proof, check their code).
    """

    name: str
    title: str
    statement: str
    steps: tuple[StepResult, ...]
    seconds: float
    concerns: tuple[str, ...] = ()

    def __repr__(self) -> str:  # one screen, not every step's expressions (issue 24)
        steps = ", ".join(f"{s.name} {s.status}" for s in self.steps)
        return compact_repr(self, title=f"{'passed' if self.passed else 'NOT passed'}: "
                            f"{self.counts_text()}", shown={"steps": f"({steps})"})

    @property
    def passed(self) -> bool:
        """True when no step failed or was skipped (cited steps neither pass nor fail)."""
        return all(s.status in ("passed", "cited") for s in self.steps)

    # The result convention every rlscale result follows; not in ``as_dict``.
    @property
    def success(self) -> bool:
        """``passed``: the proof's own verdict."""
        return self.passed

    @property
    def status(self) -> str:
        """``"passed"`` or ``"failed"`` (a step failed or was skipped)."""
        return "passed" if self.passed else "failed"

    @property
    def message(self) -> str:
        """The verdict and the step counts, in words."""
        return f"proof {self.name!r} {self.status}: {self.counts_text()}"

    @property
    def checked(self) -> int:
        """Steps a machine checked and found to hold."""
        return self.count("passed")

    @property
    def cited(self) -> int:
        """Steps cited with a reference, not machine-checked."""
        return self.count("cited")

    def count(self, status: str) -> int:
        """How many steps have ``status`` (one of :data:`STATUSES`)."""
        if not isinstance(status, str) or status not in STATUSES:
            raise (TypeError if not isinstance(status, str) else ValueError)(
                f"status must be one of {', '.join(STATUSES)}; got status={status!r:.60}")
        return sum(s.status == status for s in self.steps)

    def counts_text(self) -> str:
        """``"10 checked, 2 cited"`` (plus failed/skipped counts when there are any)."""
        parts = [f"{self.checked} checked", f"{self.cited} cited"]
        parts += [f"{self.count(s)} {s}" for s in ("failed", "skipped") if self.count(s)]
        return ", ".join(parts)

    def step(self, name: str) -> StepResult:
        """The result of the step called ``name`` (:class:`UnknownStep` when none)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a step name (str); got {type(name).__name__} "
                            f"{name!r:.60}")
        for s in self.steps:
            if s.name == name:
                return s
        raise UnknownStep(f"proof {self.name!r} has no step name={name!r}")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "statement": self.statement,
                "passed": self.passed, "seconds": self.seconds,
                "counts": {s: self.count(s) for s in STATUSES},
                "checked": self.checked, "cited": self.cited,
                "concerns": list(self.concerns),
                "steps": [s.as_dict() for s in self.steps]}


# --------------------------------------------------------------------------- proofs
class UnknownStep(KeyError, ValueError):
    """:meth:`Proof.step` found no step of that name (a ``KeyError``, as before, and a
    ``ValueError``, as every bad argument of rlscale is)."""

    def __str__(self) -> str:  # the message, not KeyError's quoted repr of it
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Proof:
    """A statement, its assumptions (hypotheses) and its steps, checked or cited.

    ``concerns`` names the rlscale functions the proof is about -- it does
    not check their code; ``tests/test_proofs_links.py`` evaluates each proved
    closed form against them.  ``guarantees`` is the former name, still
    accepted and merged into ``concerns``.  ``source`` cites where the
    argument comes from.
    """

    name: str
    title: str
    statement: str
    steps: tuple[Step, ...]
    assumptions: tuple[str, ...] = ()
    statement_latex: str = ""
    concerns: tuple[str, ...] = ()
    source: str = ""
    notes: str = ""
    guarantees: tuple[str, ...] = ()

    def __repr__(self) -> str:  # one screen, not every step's expressions (issue 24)
        steps = ", ".join(f"{s.name} ({type(s).__name__})" for s in self.steps)
        return compact_repr(self, title=f"{len(self.steps)} steps", shown={"steps": f"({steps})"})

    def __post_init__(self) -> None:
        _check_proof_fields(self)  # a TypeError naming the field (issue 22)
        if self.guarantees:  # the former name of ``concerns``
            merged = tuple(dict.fromkeys((*self.concerns, *self.guarantees)))
            object.__setattr__(self, "concerns", merged)
            object.__setattr__(self, "guarantees", ())
        names = [s.name for s in self.steps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"proof {self.name!r} has duplicate step names {sorted(dup)}")

    def step(self, name: str) -> Step:
        """The step called ``name`` (:class:`UnknownStep`, a ``KeyError`` and a
        ``ValueError``, when there is none)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a step name (str); got {type(name).__name__} "
                            f"{name!r:.60}")
        for s in self.steps:
            if s.name == name:
                return s
        raise UnknownStep(f"proof {self.name!r} has no step name={name!r}; steps: "
                          f"{[s.name for s in self.steps]}")

    def replace_step(self, new: Step) -> Proof:
        """A copy with the step of the same name replaced by ``new`` (for mutation tests)."""
        if not isinstance(new, Step):
            raise TypeError(f"new must be a Step; got {type(new).__name__} {new!r:.60}")
        self.step(new.name)
        return replace(self, steps=tuple(new if s.name == new.name else s for s in self.steps))

    def check(self, on_step: Callable[[StepResult], None] | None = None) -> ProofResult:
        """Check every step in order (each step is checked even after a failure)."""
        start = time.perf_counter()
        results = []
        for step in self.steps:
            result = step.check()
            results.append(result)
            if on_step is not None:
                on_step(result)
        return ProofResult(self.name, self.title, self.statement, tuple(results),
                           time.perf_counter() - start, self.concerns)

    def to_latex(self, result: ProofResult | None = None) -> str:
        """The derivation as a LaTeX fragment (a ``\\section*`` with the steps).

        With ``result`` each step carries its verdict (✓ as ``\\checkmark``).
        """
        marks = {"passed": r"\checkmark", "failed": r"$\times$", "skipped": "skipped",
                 "cited": r"$\dagger$ cited"}
        lines = [rf"\section*{{{_tex_text(self.title)}}}", r"\label{proof:" + self.name + "}",
                 r"\paragraph{Statement.} " + (
                     f"${self.statement_latex}$" if self.statement_latex
                     else _tex_text(self.statement))]
        if self.assumptions:
            lines += [r"\paragraph{Assumptions (hypotheses of the statement).}", r"\begin{itemize}"]
            lines += [rf"  \item {_tex_text(a)}" for a in self.assumptions]
            lines.append(r"\end{itemize}")
        lines += [r"\paragraph{Derivation.}", r"\begin{enumerate}"]
        for i, step in enumerate(self.steps):
            verdict = ""
            if result is not None:
                verdict = f" \\hfill {marks[result.steps[i].status]}"
            lines.append(rf"  \item \textbf{{{_tex_text(step.name)}}} ({step.checker}){verdict}")
            if not isinstance(step, Cited):
                lines.append(rf"    \[ {step.latex} \]")
            if step.claim and not isinstance(step, IntervalCertificate):
                lines.append(f"    {_tex_text(step.claim)}")
        lines.append(r"\end{enumerate}")
        if self.source:
            lines.append(r"\paragraph{Source.} " + _tex_text(self.source))
        if self.notes:
            lines.append(r"\paragraph{Notes.} " + _tex_text(self.notes))
        return "\n".join(lines) + "\n"


_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}"}


def _tex_text(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


def latex_document(parts: Sequence[str], title: str = "rlscale proofs") -> str:
    """Wrap LaTeX fragments from :meth:`Proof.to_latex` into a standalone document.

    The plain-text claims keep their Unicode (φ, ≤, √, ...), so compile with
    ``lualatex`` or ``xelatex``.

    Examples
    --------
    >>> doc = latex_document(["x"])
    >>> doc.startswith("% Compile with lualatex"), doc.rstrip().endswith("end{document}")
    (True, True)
    """
    if isinstance(parts, str | bytes) or not isinstance(parts, Sequence) or not all(
            isinstance(p, str) for p in parts):
        raise TypeError(f"parts must be a sequence of LaTeX strings; got {parts!r:.60}")
    if not isinstance(title, str):
        raise TypeError(f"title must be a string; got {type(title).__name__} {title!r:.60}")
    head = ["% Compile with lualatex or xelatex (Unicode text).",
            r"\documentclass{article}", r"\usepackage{amsmath,amssymb}",
            r"\usepackage{fontspec}", r"\setmainfont{DejaVu Serif}",
            rf"\title{{{_tex_text(title)}}}", r"\begin{document}", r"\maketitle"]
    return "\n".join([*head, *parts, r"\end{document}"]) + "\n"


def _check_proof_fields(proof: Proof) -> None:
    """Refuse fields :class:`Proof` cannot use, naming the field (``Proof(..., steps="x")``
    raised ``AttributeError: 'str' object has no attribute 'name'``); lists become tuples."""
    for name in ("name", "title", "statement", "statement_latex", "source", "notes"):
        if not isinstance(getattr(proof, name), str):
            raise TypeError(f"{name} must be a string; got "
                            f"{type(getattr(proof, name)).__name__} {getattr(proof, name)!r:.60}")
    for name, kind, what in (("steps", Step, "Step"), ("assumptions", str, "string"),
                             ("concerns", str, "string"), ("guarantees", str, "string")):
        value = getattr(proof, name)
        if isinstance(value, str | bytes) or not isinstance(value, tuple | list):
            raise TypeError(f"{name} must be a tuple of {what}s; got {type(value).__name__} "
                            f"{value!r:.60}")
        for i, item in enumerate(value):
            if not isinstance(item, kind):
                raise TypeError(f"{name}[{i}] must be a {what}; got {type(item).__name__} "
                                f"{item!r:.60}")
        object.__setattr__(proof, name, tuple(value))
