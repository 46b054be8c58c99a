"""Run the report: stage, run the steps, write the document, publish.

The steps that need nothing from the others (reward law, inference budget,
proofs: :data:`rlscale.report._steps.INDEPENDENT`) run in a second process
beside the chain sweep → fit → allocation → efficiency, so a two-core
machine runs both at once.

Staging and publishing follow :mod:`rlscale._staging` (nothing the report did
not write is ever deleted); the steps are in :mod:`rlscale.report._steps`.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlscale._io import write_json_atomic, write_text_atomic
from rlscale._staging import (
    PublishOutcome,
    check_destination,
    close_staging,
    open_staging,
    publish,
)
from rlscale.report._config import load_config, to_toml, validate
from rlscale.report._document import build_document
from rlscale.report._steps import INDEPENDENT, STEPS, Shared, prune_results

__all__ = ["ReportResult", "run_report"]


@dataclass
class ReportResult:
    """Everything the report computed (``results.json`` is ``as_dict()``)."""

    out: Path
    config: dict[str, Any]
    sections: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: What publishing kept of the directory it replaced (not in results.json).
    published: PublishOutcome | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rlscale_report": 1, "seconds": self.seconds, "config": self.config,
                **self.sections}


class _Progress:
    def __init__(self, enabled: bool, total: int) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="report", unit="step", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)

    def step(self, label: str) -> None:
        self.bar.set_postfix_str(label)

    def done(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def run_report(out: str | os.PathLike[str] = "rlscale-report", *,
               config: dict[str, Any] | None = None, quick: bool = False,
               progress: bool = True) -> ReportResult:
    """Run every step and write the report to ``out``.

    Parameters
    ----------
    out : path
        Report directory (replaced only if it holds an rlscale report).
    config : dict, optional
        A configuration from :func:`load_config` (default: the built-ins,
        with the ``--quick`` overrides when ``quick``).
    quick : bool
        Use the smaller built-in configuration (ignored with ``config``).
    progress : bool
        Progress bar on stderr.

    Returns
    -------
    ReportResult
        Every number of the report; ``results.json`` is its ``as_dict()``.

    Examples
    --------
    A full run takes a minute or more (``rlscale report --quick``); a
    directory that is not an rlscale report is refused before any work:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "notes.txt").write_text("keep me")
    ...     run_report(tmp, quick=True)
    Traceback (most recent call last):
    ...
    ValueError: --out ... exists and is not an rlscale report (no .rlscale-report); ...
    """
    from rlscale._optional import require

    require("matplotlib", extra="plot", purpose="report figures")
    out = Path(out).resolve()  # "--out ." has no name to stage beside
    check_destination(out)
    config = copy.deepcopy(config) if config is not None else load_config(quick=quick)
    validate(config)
    start = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    # A fixed staging name: a report that was interrupted leaves its finished
    # training runs there, and the next run resumes them (runs are matched by
    # a hash of their full configuration, so a changed config re-trains).
    staging = open_staging(out)
    result = ReportResult(out, config)
    side = None
    bar = _Progress(progress, total=len(STEPS))
    try:
        side = _Side(config, staging)  # the independent steps, beside the others
        shared = Shared()
        sections: dict[str, Any] = {}  # what the main process's steps read and write
        timings: dict[str, float] = {}
        added: dict[str, dict[str, Any]] = {}
        for label, step in STEPS:
            if side.runs(label):
                continue
            bar.step(label)
            added[label], timings[label] = _run_step(step, config, staging, sections, shared,
                                                     progress)
            bar.done()
        for label, (side_sections, seconds) in side.results().items():
            added[label], timings[label] = side_sections, seconds
            bar.done()
        # results.json keeps the steps' order whichever process ran them.
        result.sections["timings"] = {label: timings[label] for label, _ in STEPS}
        for label, _ in STEPS:
            result.sections.update(added[label])
        for csv_path, run_ids in shared.run_ids.items():
            prune_results(csv_path, run_ids)
        result.seconds = time.perf_counter() - start
        doc = build_document(result)
        write_text_atomic(staging / "index.md", doc.to_markdown())
        write_text_atomic(staging / "index.html", doc.to_html(base=staging))
        write_json_atomic(staging / "results.json", result)
        write_text_atomic(staging / "config.toml", to_toml(config))
        result.published = publish(staging, out)
    finally:
        if side is not None:
            side.close()
        close_staging(staging)
        bar.close()
    return result


def _run_step(step, config, staging, sections, shared, progress
              ) -> tuple[dict[str, Any], float]:
    """Run one step; return the sections it added and its wall seconds."""
    before = set(sections)
    t0 = time.perf_counter()
    step(config, staging, sections, shared, progress)
    seconds = time.perf_counter() - t0
    return {k: v for k, v in sections.items() if k not in before}, seconds


def _run_independent(labels: list[str], config: dict[str, Any], staging: Path
                     ) -> dict[str, tuple[dict[str, Any], float]]:
    """Run the named independent steps in order (in the side process)."""
    steps = dict(STEPS)
    sections: dict[str, Any] = {}
    return {label: _run_step(steps[label], config, staging, sections, Shared(), False)
            for label in labels}


class _Side:
    """The steps that need nothing from the others (:data:`INDEPENDENT`), run in
    one spawned process while the main process runs the trainer sweep, fit,
    allocation and efficiency steps.

    With a single CPU they run in the main process, in order, as before.
    Their results do not depend on the process: every random stream is seeded
    from the configuration.  A failure in the side process is raised by
    :meth:`results`; a failure in the main process terminates it.
    """

    def __init__(self, config: dict[str, Any], staging: Path) -> None:
        self.labels = [label for label, _ in STEPS if label in INDEPENDENT]
        self.pool = self.pending = None
        if (os.cpu_count() or 1) >= 2 and self.labels:
            import multiprocessing

            self.pool = multiprocessing.get_context("spawn").Pool(1)
            self.pending = self.pool.apply_async(_run_independent,
                                                 (self.labels, config, staging))

    def runs(self, label: str) -> bool:
        return self.pool is not None and label in self.labels

    def results(self) -> dict[str, tuple[dict[str, Any], float]]:
        if self.pending is None:
            return {}
        out = self.pending.get()
        self.pending = None
        return out

    def close(self) -> None:
        if self.pool is not None:
            # Finished work: let the worker exit on its own, so it releases its
            # semaphores (terminating it leaked one to the resource tracker).
            # Unfinished work (another step failed, Ctrl-C): stop it now.
            if self.pending is None:
                self.pool.close()
            else:
                self.pool.terminate()
            self.pool.join()
            self.pool = None
