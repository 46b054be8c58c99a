"""What the report's steps hand on: one frozen outcome per step, and the inputs of a step.

A step is ``step(cfg, inputs) -> outcome``: it reads the frozen configuration
(:class:`~rlscale.report._config_tree.ReportConfig`) and the outcomes of the
steps before it (typed fields of :class:`Inputs`), writes its files into
``inputs.staging`` and returns its outcome.  An outcome's :meth:`as_dict` is its
``results.json`` section (:func:`rlscale.report._typed.plain`), and its ``key``
names that section; the document's renderers read the outcomes' attributes.

:class:`Section` is the plain-data outcome of a step not yet given its own
dataclass (its renderer still reads string keys); it is being retired step by
step (``tests/test_report_typed.py`` pins how many string-key subscripts remain).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from rlscale.report._typed import plain

__all__ = ["Inputs", "Outcome", "Resources", "Section"]


@dataclass
class Resources:
    """What the runner lends every step (not results, never in ``results.json``).

    Attributes
    ----------
    run_ids : dict
        Per results file, the run ids this report asked for, in spec order:
        runs of an interrupted report with another configuration are pruned
        from the file before publishing.
    jobs : int
        Worker processes for the training sweeps and the law fit's bootstrap.
        The report sets it to the cores its side process leaves free: on two
        cores that is 1, and the sweeps run in the main process, because two
        worker processes beside the side process only add their start-up,
        imports and pickling (``trainer sweep`` 3.9 → 2.2 CPU s measured in
        ``rlscale report --quick``) while the two cores are busy anyway.
    """

    run_ids: dict[Path, dict[str, None]] = field(default_factory=dict)
    jobs: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))
    #: Live objects of the law fit and the allocation, until those steps have outcomes.
    fit: Any = None
    laws: list[Any] = field(default_factory=list)
    problem: Any = None


class Outcome:
    """Base of the steps' outcomes (frozen dataclasses): ``key`` names the section."""

    key: ClassVar[str]

    def as_dict(self) -> dict[str, Any]:
        """The ``results.json`` section: the outcome's plain data, keys in field order."""
        return plain(self)


@dataclass(frozen=True)
class Section:
    """The plain-data outcome of a step that has no dataclass of its own yet."""

    key: str  # type: ignore[misc]
    data: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True)
class Inputs:
    """A step's inputs besides the configuration: where it writes, the runner's
    resources, and the outcomes of the steps before it that it may read.

    ``earlier`` holds the plain sections of steps without a dataclass yet.
    """

    staging: Path
    progress: bool = False
    resources: Resources = field(default_factory=Resources)
    earlier: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def add(self, outcome: Any) -> Inputs:
        """These inputs with ``outcome`` available to the steps after it."""
        if isinstance(outcome, Section):
            return replace(self, earlier={**self.earlier, outcome.key: outcome.data})
        return replace(self, **{outcome.key: outcome})
