"""The candidate pool of a design: runnable configurations, their costs, what has been run.

A pool is a table (a mapping of columns or a pandas DataFrame): one row per
runnable configuration, the law's axes among its columns.  The cost of each
candidate is

- a column of the pool (``cost="gpu_hours"``; by default the column named
  ``cost`` when there is one), or
- a cost expression in the pool's columns, such as ``"6*N*D"`` or
  ``"20*E + 2*E*t + 0.1*E*t*k"``, read by rlscale's whitelisting posynomial
  parser (:func:`~rlscale.theory.parse_posynomial`: numbers, names, ``+ * /
  **`` and parentheses, never ``eval``), or
- an array of one positive cost per row.

Runs already observed (an optional table with the axes' columns) are fixed
information; a pool row with the same axis values as an observed run is left
out unless repeats are allowed (``max_repeats > 1``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._posynomial import Posynomial, PosynomialError

__all__ = ["Pool", "make_pool", "table_columns"]


def table_columns(data: Any, name: str) -> dict[str, np.ndarray]:
    """The columns of a table (mapping or DataFrame) as 1-d arrays of equal length.

    Numeric columns become float64; others (names, labels) stay object arrays
    and travel with the rows.
    """
    if hasattr(data, "columns") and hasattr(data, "__getitem__") and not isinstance(
            data, Mapping):
        keys = [str(c) for c in data.columns]
        raw = {k: np.asarray(data[k]) for k in keys}
    elif isinstance(data, Mapping):
        raw = {}
        for k, v in data.items():
            if not isinstance(k, str):
                raise TypeError(f"{name} column names must be strings; got {k!r:.60}")
            arr = np.asarray(v)
            if arr.ndim == 0:
                raise TypeError(f"{name}[{k!r}] must be a column (1-d), not a scalar")
            raw[k] = arr.ravel() if arr.ndim > 1 and 1 in arr.shape else arr
    else:
        raise TypeError(f"{name} must be a table: a mapping of column -> 1-d array or a "
                        f"pandas DataFrame; got {type(data).__name__}")
    if not raw:
        raise ValueError(f"{name} has no columns")
    lengths = {k: v.shape[0] if v.ndim else 0 for k, v in raw.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name} columns must have equal lengths; got {lengths}")
    out = {}
    for k, v in raw.items():
        if v.ndim != 1:
            raise ValueError(f"{name}[{k!r}] must be 1-d; got shape {v.shape}")
        if v.dtype.kind in "iuf":
            out[k] = v.astype(np.float64)
        elif v.dtype.kind == "b":
            out[k] = v.astype(object)
        else:
            try:  # text read from a CSV: numeric when every cell parses
                out[k] = np.array([float(x) for x in v], dtype=np.float64)
            except (TypeError, ValueError):
                out[k] = v.astype(object)
    return out


def _positive_column(name: str, col: np.ndarray, what: str) -> np.ndarray:
    if col.dtype != np.float64:
        raise TypeError(f"{what} column {name!r} must be numeric; got {col[:3].tolist()!r}...")
    bad = ~np.isfinite(col) | (col <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what} column {name!r} must be finite and > 0 in every row; got "
                         f"{name}={col[i]!r} at row {i}")
    return col


@dataclass(frozen=True)
class Pool:
    """The candidates of a design (after observed runs are set aside).

    Attributes
    ----------
    columns : dict of str -> ndarray
        Every column of the candidate rows (in pool order).
    axes : tuple of str
        The law's axes (positive numeric columns).
    cost : ndarray
        Cost of one run of each candidate (> 0).
    cost_source : str
        ``"column 'cost'"``, the cost expression, or ``"array"``.
    cost_expr : Posynomial or None
        The parsed cost expression (a plan target needs one in the law's axes).
    rows : ndarray of int
        Each candidate's row number in the pool the user passed.
    observed : dict of str -> ndarray
        The observed runs' columns (empty when none).
    excluded : int
        Pool rows left out because they repeat an observed run.
    """

    columns: dict[str, np.ndarray]
    axes: tuple[str, ...]
    cost: np.ndarray
    cost_source: str
    cost_expr: Posynomial | None
    rows: np.ndarray
    observed: dict[str, np.ndarray] = field(default_factory=dict)
    excluded: int = 0

    @property
    def n(self) -> int:
        return int(self.cost.size)

    @property
    def n_observed(self) -> int:
        return int(next(iter(self.observed.values())).size) if self.observed else 0

    def x(self, rows: Any = None) -> dict[str, np.ndarray]:
        """Axis columns of the candidates (all, or the given row positions)."""
        sel = slice(None) if rows is None else np.asarray(rows, dtype=int)
        return {a: self.columns[a][sel] for a in self.axes}

    def observed_x(self) -> dict[str, np.ndarray]:
        return {a: self.observed[a] for a in self.axes} if self.observed else {}

    def log_range(self) -> dict[str, tuple[float, float]]:
        """Per axis, the smallest and largest value over candidates and observed runs."""
        out = {}
        for a in self.axes:
            v = self.columns[a]
            if self.observed:
                v = np.concatenate([v, self.observed[a]])
            out[a] = (float(v.min()), float(v.max()))
        return out


def _cost(columns: dict[str, np.ndarray], cost: Any, n: int
          ) -> tuple[np.ndarray, str, Posynomial | None]:
    from rlscale.theory._posynomial_parser import parse_posynomial

    numeric = [k for k, v in columns.items() if v.dtype == np.float64]
    if cost is None:
        if "cost" in columns:
            return _positive_column("cost", columns["cost"], "the pool's cost"), \
                "column 'cost'", None
        raise ValueError("the pool has no cost: pass cost= (--cost) the name of a pool column "
                         "holding each run's cost, or a cost expression in the pool's columns "
                         f"such as '6*N*D' (columns: {sorted(columns)})")
    if isinstance(cost, str) and cost in columns:
        # A column's name is also the expression of that column: a plan target can use it.
        poly = parse_posynomial(cost) if columns[cost].dtype == np.float64 else None
        return _positive_column(cost, columns[cost], "the pool's cost"), \
            f"column {cost!r}", poly
    if isinstance(cost, str | Posynomial):
        try:
            poly = parse_posynomial(cost, axes=numeric)
        except PosynomialError as exc:
            raise ValueError(f"cost={cost!r:.80} is neither a column of the pool nor a cost "
                             f"expression in its numeric columns {sorted(numeric)}: "
                             f"{exc}") from None
        for a in poly.axes:
            _positive_column(a, columns[a], "the cost's")
        with np.errstate(over="ignore"):
            values = poly.evaluate({a: columns[a] for a in poly.axes})
        return _positive_column("cost", np.asarray(values, dtype=float), "the evaluated"), \
            str(poly), poly
    if isinstance(cost, bool | bytes) or not isinstance(cost, Sequence | np.ndarray):
        raise TypeError(f"cost must be a column name, a cost expression or an array of one "
                        f"cost per candidate; got {type(cost).__name__}")
    try:
        arr = np.asarray(cost, dtype=float).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"cost must be a column name, a cost expression or an array of one "
                        f"cost per candidate (numbers); got {cost!r:.60}") from None
    if arr.size != n:
        raise ValueError(f"cost has {arr.size} values for {n} candidates")
    return _positive_column("cost", arr, "the"), "array", None


def make_pool(pool: Any, axes: Sequence[str], cost: Any = None, observed: Any = None,
              max_repeats: int = 1) -> Pool:
    """Read and check a candidate pool (see the module docstring).

    Examples
    --------
    >>> p = make_pool({"N": [1e8, 1e9], "D": [1e9, 1e10]}, ["N", "D"], cost="6*N*D")
    >>> p.cost.tolist(), p.cost_source
    ([6e+17, 6e+19], '6*D*N')
    >>> make_pool({"N": [1e8], "D": [1e9]}, ["N", "D"])
    Traceback (most recent call last):
    ...
    ValueError: the pool has no cost: pass cost= (--cost) the name of a pool column holding \
each run's cost, or a cost expression in the pool's columns such as '6*N*D' (columns: ['D', 'N'])
    """
    columns = table_columns(pool, "pool")
    n = next(iter(columns.values())).size
    if n == 0:
        raise ValueError("the pool has no rows: a design needs at least one candidate")
    for a in axes:
        if a not in columns:
            raise ValueError(f"the pool has no column {a!r} for the law's axis {a!r} "
                             f"(columns: {sorted(columns)})")
        _positive_column(a, columns[a], "the pool's axis")
    values, source, poly = _cost(columns, cost, n)
    rows = np.arange(n)
    obs: dict[str, np.ndarray] = {}
    excluded = 0
    if observed is not None:
        obs = table_columns(observed, "observed")
        for a in axes:
            if a not in obs:
                raise ValueError(f"the observed runs have no column {a!r} for the law's axis "
                                 f"(columns: {sorted(obs)})")
            _positive_column(a, obs[a], "the observed runs'")
        if max_repeats == 1 and next(iter(obs.values())).size:
            seen = {tuple(r) for r in np.column_stack([obs[a] for a in axes]).tolist()}
            mine = np.column_stack([columns[a] for a in axes]).tolist()
            keep = np.array([tuple(r) not in seen for r in mine])
            excluded = int((~keep).sum())
            if not keep.any():
                raise ValueError("every pool candidate repeats an observed run; allow repeats "
                                 "(max_repeats > 1) or add new candidates to the pool")
            rows = rows[keep]
            columns = {k: v[keep] for k, v in columns.items()}
            values = values[keep]
    if not math.isfinite(float(values.sum())):
        raise ValueError("the pool's total cost overflows the float range")
    return Pool(columns, tuple(axes), values, source, poly, rows, obs, excluded)
