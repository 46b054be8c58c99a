"""Scaling sweeps over environments × tasks × trajectories (``rlscale sweep``).

``_run``
    The TOML spec (:func:`load_spec`, :class:`SweepSpec`), its expansion into
    configurations, the resumable results CSV (:func:`read_results`) and
    :func:`run_sweep`, which appends each finished run atomically so that a killed
    sweep resumes without losing or redoing work; :func:`summarise` aggregates seeds.
``_pool``
    Where the pending runs execute: serially, on local processes (joblib) or on a
    Dask cluster, in chunks balanced by estimated work.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

_EXPORTS = {
    "SweepSpec": "_run",
    "expand": "_run",
    "load_spec": "_run",
    "parse_spec": "_run",
    "read_results": "_run",
    "run_id": "_run",
    "run_sweep": "_run",
    "summarise": "_run",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
