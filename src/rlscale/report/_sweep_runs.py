"""The runs of a sweep spec, typed: what the report's sweeps and its config check expand.

:func:`rlscale.sweep._run.expand` gives each run as ``{"config": ..., "run_id": ...}``;
:func:`planned_runs` mirrors them (:func:`rlscale.report._typed.build`, which refuses a
renamed key) so that the report reads ``run.run_id``, not ``run["run_id"]``.

Examples
--------
>>> from rlscale.sweep._run import parse_spec
>>> runs = planned_runs(parse_spec({"seeds": [0], "axes": {"environments": [1, 4]}}))
>>> [r.config["n_environments"] for r in runs], len(runs[0].run_id)
([16, 1, 4], 16)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlscale.report._typed import build

__all__ = ["PlannedRun", "planned_runs"]


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep spec: the trainer's fields (a ``TrainConfig`` as a dict, handed
    to the sweep's pool as they are) and the hash of them that names the run."""

    config: Any
    run_id: str


def planned_runs(spec: Any) -> list[PlannedRun]:
    """The runs of ``spec`` (a :class:`rlscale.sweep._run.SweepSpec`) in the spec's order."""
    from rlscale.sweep._run import expand

    return [build(PlannedRun, r) for r in expand(spec)]
