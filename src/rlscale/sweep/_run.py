"""Scaling sweeps over environments × tasks × trajectories (× seeds, algorithms).

A sweep is described by a TOML spec (see ``examples/sweep.toml``)::

    design = "axes"          # or "grid"
    seeds = [0, 1, 2, 3]
    algorithms = ["grpo"]
    [base]                   # the centre point of an "axes" design
    environments = 16
    tasks_per_environment = 4
    trajectories_per_task = 8
    [axes]                   # values per axis
    environments = [1, 2, 4, 8, 16, 32, 64]
    tasks_per_environment = [1, 2, 4, 8, 16, 32]
    trajectories_per_task = [2, 4, 8, 16, 32]
    [train]                  # any other TrainConfig field, the same for every run
    epochs = 4

``[base]`` and ``[axes]`` may also name ``context`` (symbol ``c``): the
agent's context window, the harness axis (``examples/sweep-context.toml``
sweeps it on the memory family).  ``design = "grid"`` runs the full product
of the axes; ``"axes"`` varies one axis at a time with the others at
``base`` (a star design: the per-axis laws need the axes, not their
interactions, and it costs a sum instead of a product).  The keys of
``[base]`` and ``[axes]`` are the axes of :data:`rlscale.simulate.SWEEP_AXES`,
in any of their spellings (``E``, ``t``, ``k``, ``c``, ``n_environments``),
read as the canonical names.

Results file (CSV, one row per finished run, columns :data:`COLUMNS`;
``rlscale fit`` reads it directly).  Every finished run (in parallel: every
finished chunk of runs, see :mod:`rlscale.sweep._pool`) is added by
rewriting the whole file atomically (temporary file, fsync, ``os.replace``),
so the file on disk is always a complete table of finished runs: a sweep
killed at any moment loses at most the runs (chunks) in flight, and rerunning the same
command skips every run whose ``run_id`` (a hash of its full configuration)
is already in the file (rows of other specs are kept, so one file can grow
over several specs).  A file whose header is not :data:`COLUMNS` (or
:data:`LEGACY_COLUMNS`, the header before the context axis, read with
``context = 1``), or with a malformed row, is refused with a message and never
overwritten.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlscale.files._atomic import csv_field_limit, write_text_atomic
from rlscale.sweep._pool import execute
from rlscale.theory._axes import SWEEP_AXES, Axis, axis
from rlscale.theory._levels import CONFIDENCE
from rlscale.theory._validation import MAX_COUNT, MAX_JOBS, check_mapping, check_path

__all__ = ["COLUMNS", "LEGACY_COLUMNS", "SweepSpec", "expand", "load_spec", "read_results",
           "run_sweep", "summarise"]

#: Column order of the results file.  ``tasks = E·t``, ``trajectories = E·t·k``,
#: ``success`` = held-out success, ``loss = 1 − success``.
COLUMNS: tuple[str, ...] = (
    "environments", "tasks_per_environment", "trajectories_per_task", "context", "tasks",
    "trajectories", "seed", "algorithm", "success", "loss", "env_steps", "cost",
    "untrained_success", "optimal_success", "rollouts", "updates", "environments_kept",
    "zero_advantage_fraction", "policy", "env", "frontier", "defect_rate", "verify", "seconds",
    "run_id",
)
#: The header before the context axis (issue 27): such files are read with
#: ``context = 1`` and ``env = "grid"`` (what every run then was) and rewritten with
#: :data:`COLUMNS` when a sweep adds to them.
LEGACY_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c not in ("context", "env"))
_LEGACY_DEFAULTS = {"context": "1", "env": "grid"}
_INT_COLUMNS = {"environments", "tasks_per_environment", "trajectories_per_task", "context",
                "tasks", "trajectories", "seed", "env_steps", "rollouts", "updates",
                "environments_kept", "verify"}
_STR_COLUMNS = {"algorithm", "policy", "env", "frontier", "run_id"}
#: Canonical axis names (the sweep keys and results columns) and their TrainConfig fields,
#: from the one axis vocabulary (:mod:`rlscale.theory._axes`): E, t, k and the context.
_AXES = tuple(a.name for a in SWEEP_AXES)
_AXIS_FIELD = {a.name: a.field for a in SWEEP_AXES}
_TOP_KEYS = {"design", "seeds", "algorithms", "base", "axes", "train"}
#: Most runs one spec may hold (each run is validated up front, ~0.1 ms each).
MAX_RUNS = 100_000


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep specification (see the module docstring)."""

    design: str = "axes"
    seeds: tuple[int, ...] = (0, 1, 2, 3)
    algorithms: tuple[str, ...] = ("grpo",)
    base: dict[str, int] = field(default_factory=lambda: {
        "environments": 16, "tasks_per_environment": 4, "trajectories_per_task": 8,
        "context": 1})
    axes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _int_list(name: str, value: Any, minimum: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise TypeError(f"{name} must be a non-empty list (TOML array) of integers; got "
                        f"{type(value).__name__} {value!r:.60}")
    out = []
    for v in value:
        # Integers only (issue 22): 16.0 or 1e6 is a real number, refused as a count is
        # everywhere, so a spec has one canonical form without rounding anything.
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must hold integers (write 16, not 16.0 or 1.6e1); got "
                            f"{name}={value!r:.80}")
        if v < minimum or v > MAX_COUNT:
            raise ValueError(f"{name} must hold integers >= {minimum} and <= {MAX_COUNT}; got "
                             f"{name}={value!r:.80}")
        out.append(v)
    return _distinct(name, out)


def _distinct(name: str, value: list[Any]) -> tuple[Any, ...]:
    """``value`` as a tuple; a repeated value would run one configuration twice."""
    if len(set(value)) != len(value):
        raise ValueError(f"{name} must not repeat a value; got {name}={value!r}")
    return tuple(value)


def _axis_table(table: str, values: dict[str, Any]) -> dict[Axis, Any]:
    """A ``[base]``/``[axes]`` table keyed by axis; any spelling of an axis (``E``,
    ``n_environments``) is read as its canonical name, once."""
    out: dict[Axis, Any] = {}
    for key, value in values.items():
        try:
            found = axis(key)
        except (TypeError, ValueError):
            raise ValueError(f"unknown [{table}] key {key!r}; valid: {list(_AXES)} (or the "
                             "symbols E, t, k, c)") from None
        if found in out:
            raise ValueError(f"[{table}] names the axis {found.name} twice (as {key!r} and "
                             "another spelling)")
        out[found] = value
    return out


def parse_spec(data: dict[str, Any]) -> SweepSpec:
    """Validate a spec mapping (as read from TOML); every run's configuration is checked.

    Examples
    --------
    >>> spec = parse_spec({"design": "grid", "seeds": [0, 1],
    ...                    "axes": {"environments": [1, 2], "trajectories_per_task": [2, 4]}})
    >>> len(expand(spec))  # 2 environments x 2 trajectory counts x 2 seeds
    8
    >>> parse_spec({"axes": {"environments": [0]}})
    Traceback (most recent call last):
    ...
    ValueError: axes.environments must hold integers >= 1 and <= 9223372036854775807; got ...
    """
    check_mapping("data", data)  # issue 22: a TypeError naming it, not AttributeError
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ValueError(f"unknown sweep spec key(s) {unknown}; valid: {sorted(_TOP_KEYS)}")
    design = data.get("design", "axes")
    if design not in ("axes", "grid"):
        raise ValueError(f"design must be 'axes' or 'grid'; got design={design!r}")
    seeds = _int_list("seeds", data.get("seeds", [0, 1, 2, 3]), 0)
    algorithms = data.get("algorithms", ["grpo"])
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    if (not isinstance(algorithms, list) or not algorithms
            or not all(isinstance(a, str) for a in algorithms)):
        raise TypeError(f"algorithms must be a non-empty list of algorithm names; "
                        f"got algorithms={algorithms!r}")
    for table in ("base", "axes", "train"):
        if not isinstance(data.get(table, {}), dict):
            raise TypeError(f"[{table}] must be a table (key = value lines); "
                            f"got {table}={data[table]!r}")
    base = dict(SweepSpec().base)
    for key, value in _axis_table("base", data.get("base", {})).items():
        base[key.name] = _int_list(f"base.{key.name}", [value], key.minimum)[0]
    axes = {}
    for key, values in _axis_table("axes", data.get("axes", {})).items():
        axes[key.name] = _int_list(f"axes.{key.name}", values, key.minimum)
    train = dict(data.get("train", {}))
    clash = sorted(set(train) & {"n_environments", "tasks_per_environment",
                                 "trajectories_per_task", "context", "seed", "algorithm"})
    if clash:
        raise ValueError(f"[train] must not set {clash}: they are sweep axes, seeds or "
                         "algorithms")
    spec = SweepSpec(design, seeds, _distinct("algorithms", algorithms), base, axes, train)
    n_runs = len(seeds) * len(spec.algorithms) * (
        math.prod(len(axes.get(a, (1,))) for a in _AXES) if design == "grid"
        else 1 + sum(len(v) for v in axes.values()))
    if n_runs > MAX_RUNS:
        raise ValueError(f"the spec has {n_runs} runs (at most); the limit is {MAX_RUNS}: "
                         "fewer seeds, algorithms or axis values")
    expand(spec)  # validates every configuration before anything runs
    return spec


def load_spec(path: str | os.PathLike[str]) -> SweepSpec:
    """Read and validate a TOML sweep spec."""
    path = check_path("path", path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from exc
    return parse_spec(data)


def _points(spec: SweepSpec) -> list[dict[str, int]]:
    if spec.design == "grid":
        values = [spec.axes.get(a, (spec.base[a],)) for a in _AXES]
        return [dict(zip(_AXES, combo)) for combo in itertools.product(*values)]
    points = [dict(spec.base)]
    for name in _AXES:
        for v in spec.axes.get(name, ()):
            p = {**spec.base, name: v}
            if p not in points:
                points.append(p)
    return points


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """All run configurations (TrainConfig field dicts), each with its ``run_id``.

    Examples
    --------
    >>> spec = parse_spec({"seeds": [0], "base": {"environments": 4},
    ...                    "axes": {"environments": [1, 4, 16]}})
    >>> [r["config"]["n_environments"] for r in expand(spec)]  # base first, then the axis
    [4, 1, 16]
    """
    from rlscale.simulate import TrainConfig

    _check_spec(spec)
    runs = []
    for point, algorithm, seed in itertools.product(_points(spec), spec.algorithms, spec.seeds):
        values = {**spec.train, **{_AXIS_FIELD[a]: v for a, v in point.items()},
                  "algorithm": algorithm, "seed": seed}
        config = TrainConfig.from_dict(values).as_dict()
        runs.append({"config": config, "run_id": run_id(config)})
    return runs


def _check_spec(spec: Any) -> SweepSpec:
    if not isinstance(spec, SweepSpec):
        raise TypeError(f"spec must be a SweepSpec (from parse_spec or load_spec); got "
                        f"{type(spec).__name__} {spec!r:.60}")
    return spec


def run_id(config: dict[str, Any]) -> str:
    """Stable hash of a full configuration (16 hex digits)."""
    check_mapping("config", config)
    try:
        text = json.dumps(config, sort_keys=True, default=list)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"config must hold JSON values (numbers, strings, lists); {exc}") from None
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def by_run_id(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``rows`` (runs of :func:`expand`, or rows of a results file) keyed by their
    ``run_id``, in order (a repeated id keeps its last row).

    Examples
    --------
    >>> spec = parse_spec({"seeds": [0, 1], "axes": {"environments": [1, 4]}})
    >>> runs = by_run_id(expand(spec))
    >>> len(runs), all(len(i) == 16 for i in runs)
    (6, True)
    """
    return {r["run_id"]: r for r in rows}


def _format(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def _render(rows: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_format(row[c]) for c in COLUMNS])
    return buf.getvalue()


def read_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a results file, typed; refuses foreign or corrupt files.

    Raises
    ------
    ValueError
        If the header is not :data:`COLUMNS` or a row is malformed; the
        message names the file and the line.
    """
    path = check_path("path", path)
    with csv_field_limit(path):
        return _read_results(path, path.read_text(encoding="utf-8-sig"))


def _read_results(path: Path, text: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ValueError(f"{path} is empty, not an rlscale sweep results file; "
                         "move it away or choose another --out")
    if tuple(header) not in (COLUMNS, LEGACY_COLUMNS):
        raise ValueError(f"{path} is not an rlscale sweep results file (its header is "
                         f"{','.join(header)[:80]!r}...); refusing to touch it: move it "
                         "away or choose another --out")
    columns = tuple(header)
    rows = []
    seen: dict[str, int] = {}
    for line_no, values in enumerate(reader, start=2):
        if len(values) != len(columns):
            raise ValueError(f"{path} is corrupt: line {line_no} has {len(values)} fields, "
                             f"expected {len(columns)}; refusing to overwrite it")
        if columns is LEGACY_COLUMNS or columns == LEGACY_COLUMNS:
            named = dict(zip(columns, values), **_LEGACY_DEFAULTS)
            values = [named[c] for c in COLUMNS]
        row: dict[str, Any] = {}
        try:
            for col, v in zip(COLUMNS, values):
                row[col] = v if col in _STR_COLUMNS else int(v) if col in _INT_COLUMNS \
                    else float(v)
        except ValueError as exc:
            raise ValueError(f"{path} is corrupt: line {line_no}: {exc}; refusing to "
                             "overwrite it") from exc
        if not math.isfinite(row["success"]) or len(row["run_id"]) != 16:
            raise ValueError(f"{path} is corrupt: line {line_no} has success={row['success']} "
                             f"run_id={row['run_id']!r}; refusing to overwrite it")
        if row["run_id"] in seen:
            # One run counted twice would inflate the run count and weigh twice in the IQM.
            raise ValueError(f"{path} is corrupt: line {line_no} repeats run_id "
                             f"{row['run_id']} of line {seen[row['run_id']]}; remove the "
                             "duplicated row")
        seen[row["run_id"]] = line_no
        rows.append(row)
    return rows


def run_sweep(
    spec: SweepSpec,
    out: str | os.PathLike[str],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every configuration of ``spec`` not yet in ``out``; return all rows.

    Parameters
    ----------
    spec : SweepSpec
    out : path
        Results CSV; created if absent, resumed if it holds finished runs.
    jobs : int
        Local worker processes (joblib); ignored with ``scheduler``.  With more
        than one, runs go largest first and small runs in chunks (see
        :mod:`rlscale.sweep._pool`); rows are appended in completion order, and
        once every run is done the file is rewritten in the spec's order (rows of
        other specs first, as they were), so it does not depend on the number of
        workers or on how often the sweep was interrupted (issue 22).
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``).
    progress : bool
        Show a tqdm progress bar on stderr.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> spec = parse_spec({"design": "grid", "seeds": [0], "axes": {"environments": [1, 2]},
    ...                    "train": {"epochs": 1, "grid_size": 4, "eval_environments": 2}})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = pathlib.Path(tmp) / "results.csv"
    ...     first = run_sweep(spec, out, progress=False)
    ...     again = run_sweep(spec, out, progress=False)  # resumes: nothing left to run
    ...     back = read_results(out)
    >>> len(first), len(again), [r["environments"] for r in back]
    (2, 2, [1, 2])
    >>> [s["runs"] for s in summarise(back)]
    [1, 1]
    """
    from rlscale.theory._validation import check_bool, check_positive_int

    _check_spec(spec)
    jobs = check_positive_int("jobs", jobs, maximum=MAX_JOBS)
    out = check_path("out", out)
    check_bool("progress", progress)
    if scheduler is not None and (not isinstance(scheduler, str) or ":" not in scheduler):
        raise TypeError(f"scheduler must be a Dask scheduler address ('tcp://host:8786') or "
                        f"None; got scheduler={scheduler!r:.60}")
    if on_row is not None and not callable(on_row):
        raise TypeError(f"on_row must be callable or None; got {on_row!r:.60}")
    rows = read_results(out) if out.exists() else []
    done = {r["run_id"] for r in rows}
    runs = expand(spec)
    pending = [r for r in runs if r["run_id"] not in done]
    if not rows:
        write_text_atomic(out, _render([]))  # claim the path with a valid empty table
    from tqdm import tqdm

    bar = tqdm(total=len(runs), initial=len(runs) - len(pending), desc="sweep", unit="run",
               file=sys.stderr, disable=not progress, dynamic_ncols=True)
    try:
        for chunk in execute([r["config"] for r in pending], jobs, scheduler):
            rows.extend(chunk.rows)
            write_text_atomic(out, _render(rows))  # once per chunk: one fsync, not one per run
            for row in chunk.rows:
                if on_row is not None:
                    on_row(row)
                bar.update(1)
    finally:
        bar.close()
    order = {r["run_id"]: i for i, r in enumerate(runs)}
    canonical = ([r for r in rows if r["run_id"] not in order]
                 + sorted((r for r in rows if r["run_id"] in order),
                          key=lambda r: order[r["run_id"]]))
    if canonical != rows:
        write_text_atomic(out, _render(canonical))
    return canonical


def summarise(rows: list[dict[str, Any]], confidence: float = CONFIDENCE
              ) -> list[dict[str, Any]]:
    """Per configuration (axes × algorithm, and policy, frontier, defects when they differ):
    runs, IQM success and its bootstrap CI over seeds (level ``confidence``), mean env
    steps."""
    from rlscale.simulate import iqm_ci

    keys = ("environments", "tasks_per_environment", "trajectories_per_task", "algorithm",
            "policy", "frontier", "defect_rate", "verify", "context", "env", "success",
            "env_steps")
    if isinstance(rows, str | bytes | dict) or not isinstance(rows, list | tuple) or not all(
            isinstance(r, dict) and all(k in r for k in keys) for r in rows):
        raise TypeError(f"rows must be a list of result rows (read_results or run_sweep); "
                        f"got {rows!r:.60}")
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["environments"], r["tasks_per_environment"], r["trajectories_per_task"],
               r["algorithm"], r["policy"], r["frontier"], r["defect_rate"], r["verify"],
               r["context"], r["env"])
        groups.setdefault(key, []).append(r)
    out = []
    for key in sorted(groups):
        g = groups[key]
        ci = iqm_ci([r["success"] for r in g], n_boot=1000, confidence=confidence, rng=0)
        out.append({
            "environments": key[0], "tasks_per_environment": key[1],
            "trajectories_per_task": key[2], "algorithm": key[3], "policy": key[4],
            "frontier": key[5], "defect_rate": key[6], "verify": key[7], "context": key[8],
            "env": key[9], "runs": len(g),
            "success_iqm": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
            "env_steps": sum(r["env_steps"] for r in g) / len(g),
        })
    return out
