"""Data handling of the fitter: columns, replicates and bounds on the floor.

Everything here validates or reshapes user input before any fitting
(:func:`prepare`, the first step of ``fit_law``): column
lookup (:func:`columns`), averaging of replicate rows (:func:`aggregate`), and the
``floor=(low, high)`` / ``p_max=(low, high)`` bounds (:func:`limit_bounds`) with
their image on ``e = log`` floor (:func:`log_floor_bounds`; for a pass-rate law
the loss ``1/p`` has floor ``1/p_max``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import check_direction
from rlscale.optimize._fit_family import FAMILIES, family
from rlscale.optimize._fit_objective import MAX_FIT_WORK, Objective
from rlscale.optimize._lsq import LOG_LIMIT
from rlscale.theory._laws import _check_axes
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__: list[str] = []


def columns(data: Any, axes: Sequence[str], target: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(data, Mapping) and not hasattr(data, "columns"):
        raise TypeError(f"data must be a mapping of column name -> values (or a DataFrame); "
                        f"got {type(data).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (str); got target={target!r:.60}")
    cols = []
    for role, name in [*(("axes", a) for a in axes), ("target", target)]:
        try:
            col = data[name]
        except (KeyError, IndexError, ValueError) as exc:
            keys = list(data.keys()) if hasattr(data, "keys") else "?"
            raise ValueError(f"data has no column {name!r} (named by {role}={name!r}); "
                             f"columns: {keys}") from exc
        cols.append(np.asarray(col))
    lengths = {c.shape for c in cols}
    if len(lengths) != 1 or cols[0].ndim != 1:
        raise ValueError(f"columns must be 1-d and of equal length; got shapes "
                         f"{[c.shape for c in cols]}")
    x = np.column_stack([check_real(f"data[{a!r}]", c, low=0.0, low_open=True)
                         for a, c in zip(axes, cols[:-1])])
    y = check_real(f"data[{target!r}]", cols[-1], low=0.0, low_open=True)
    return x, y


def aggregate(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(x, axis=0, return_inverse=True)
    inverse = inverse.ravel()  # (n,) whatever shape this numpy gives it
    sums = np.bincount(inverse, weights=y, minlength=len(uniq))
    counts = np.bincount(inverse, minlength=len(uniq))
    return uniq, sums / counts


def limit_bounds(law: str, floor: Any, p_max: Any) -> tuple[float, float] | None:
    """Validate ``floor=(low, high)`` / ``p_max=(low, high)``; the pair for the law.

    Each keyword bounds the limit its family declares (:attr:`Family.limit_name`)."""
    if floor is not None and p_max is not None:
        raise ValueError("pass floor= (additive laws) or p_max= (pass-rate laws), not both")
    own = family(law).limit_name
    if floor is not None and own != "floor":
        raise ValueError(f"floor=(low, high) bounds an additive law's floor; law={law!r} "
                         f"{f'has {own}= instead' if own else 'has no floor'}")
    if p_max is not None and own != "p_max":
        raise ValueError(f"p_max=(low, high) bounds a pass-rate law; got law={law!r}")
    name, pair = ("floor", floor) if floor is not None else ("p_max", p_max)
    if pair is None:
        return None
    if isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) != 2:
        raise ValueError(f"{name} must be a pair (low, high); got {name}={pair!r}")
    top = 1.0 if name == "p_max" else math.inf
    low = float(check_real(f"{name}[0]", pair[0], low=0.0, high=top,
                           low_open=(name == "p_max")))
    high = float(check_real(f"{name}[1]", pair[1], low=0.0, high=top, low_open=True,
                            allow_inf=(name == "floor")))
    if low > high:
        raise ValueError(f"{name} must have low <= high; got {name}=({low:g}, {high:g})")
    return (low, high)


def log_floor_bounds(law: str, pair: tuple[float, float]) -> tuple[float | None, float | None]:
    """L-BFGS-B bounds on ``e = log`` of the loss floor (``1/p_max`` for pass rates)."""
    return family(law).log_limit_bounds(pair)


#: The built-in families' names (the registry's, kept importable under this name).
LAWS = tuple(FAMILIES)


@dataclass(frozen=True)
class Prepared:
    """Validated input of one fit: data in log space, its family, objective and box."""

    law: str
    axes: tuple[str, ...]
    x: np.ndarray
    y_min: float
    obj: Objective
    bounds: list
    grid: np.ndarray
    floor_bounds: tuple[float, float] | None
    confidence: float
    holdout: float
    bootstrap: int
    loss: str = "huber"

    @property
    def fam(self) -> Any:
        return family(self.law)

    @property
    def lower(self) -> np.ndarray:
        """The engine's lower bounds: the box, and ``-LOG_LIMIT`` for a log floor or
        coefficient without one (``e^-690`` is positive in float64, so the law object is
        always valid; a term there has no effect and is flagged)."""
        return np.array([(-LOG_LIMIT if self._log[j] else -np.inf) if lo is None else lo
                         for j, (lo, _) in enumerate(self.bounds)])

    @property
    def upper(self) -> np.ndarray:
        """The engine's upper bounds: the box, and ``LOG_LIMIT`` for a log parameter."""
        return np.array([(LOG_LIMIT if self._log[j] else np.inf) if hi is None else hi
                         for j, (_, hi) in enumerate(self.bounds)])

    @property
    def _log(self) -> np.ndarray:
        """Which coordinates are logarithms (the floor and coefficients)."""
        ex = self.fam.exponent_slice(len(self.axes))
        out = np.ones(len(self.bounds), dtype=bool)
        out[ex] = False
        return out


def prepare(data: Any, law: Any, axes: Any, target: Any, delta: Any, reduction: Any,
             replicates: Any, confidence: Any, holdout: Any, bootstrap: Any, n_jobs: Any,
             floor: Any, p_max: Any, loss: str = "huber", starts: Any = "auto") -> Prepared:
    """Validate every argument and build the objective (nothing is fitted here)."""
    if not isinstance(law, str) or law not in LAWS:
        raise ValueError(f"law must be one of {LAWS} or an expression law; got law={law!r}")
    if (axes is None or isinstance(axes, str) or not isinstance(axes, Sequence)
            or len(axes) == 0 or not all(isinstance(a, str) for a in axes)):
        raise ValueError(f"axes must be a non-empty list of column names; got axes={axes!r}")
    axes = tuple(axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes must be distinct; got {list(axes)}")
    _check_axes(axes)  # the fitted law needs identifiers; refuse before fitting
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1: all cores); "
                         f"got n_jobs={n_jobs!r}")
    if not isinstance(reduction, str) or reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean'; got reduction={reduction!r}")
    if not isinstance(replicates, str) or replicates not in ("keep", "mean"):
        raise ValueError(f"replicates must be 'keep' or 'mean'; got replicates={replicates!r}")
    # Log residuals beyond |r| = 1e3 are meaningless; a larger threshold only overflows δ².
    delta = check_scalar("delta", delta, low=0.0, low_open=True, high=1e3)
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                              high_open=True)
    holdout = check_scalar("holdout", holdout, low=0.0, high=0.5)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=0)
    if not isinstance(loss, str) or loss not in ("huber", "squared"):
        raise ValueError(f"loss must be 'huber' or 'squared'; got loss={loss!r:.40}")
    if isinstance(starts, str):
        if starts not in ("auto", "grid"):
            raise ValueError(f"starts must be 'auto', 'grid' or a positive integer; "
                             f"got starts={starts!r:.40}")
    else:  # an array here would be compared elementwise below
        starts = check_positive_int("starts", starts)
    if loss == "squared" and (reduction != "sum" or starts != "auto"):
        raise ValueError("loss='squared' runs on the default search (starts='auto', "
                         "reduction='sum'); the grid and mean-reduction searches reproduce "
                         "the published Huber procedure")
    floor_bounds = limit_bounds(law, floor, p_max)
    x, y = columns(data, axes, target)
    fam = family(law)
    if np.any(y > fam.target_high):
        bad = int(np.argmax(y > fam.target_high))
        raise ValueError(f"a {fam.target} must be in (0, {fam.target_high:g}]; got "
                         f"data[{target!r}]={y[bad]:g} at index {bad}")
    check_direction(x, y, law, target)
    y_min = float(y.min())
    if replicates == "mean":
        x, y = aggregate(x, y)
    y = fam.loss(y)
    obj = Objective(fam.objective_form, np.log(x), np.log(y), delta, reduction)
    k = obj.n_params
    if y.size <= k:
        raise ValueError(f"fitting a {len(axes)}-axis {law} law needs at least {k + 1} points "
                         f"(it has {k} parameters); got {y.size}")
    bounds = fam.bounds(len(axes))
    grid = fam.grid(len(axes))
    if floor_bounds is not None:
        bounds[0] = fam.log_limit_bounds(floor_bounds)
        lo_e = -np.inf if bounds[0][0] is None else bounds[0][0]
        hi_e = np.inf if bounds[0][1] is None else bounds[0][1]
        # Clip the floor column; floors that clip to the same value give the same rows.
        # The grid is a product in lexicographic order, so keeping the rows of each
        # clipped value's first floor equals a row-wise unique (which takes seconds).
        floors = np.unique(grid[:, 0])
        _, first = np.unique(np.clip(floors, lo_e, hi_e), return_index=True)
        grid = grid[np.isin(grid[:, 0], floors[first])]
        grid[:, 0] = np.clip(grid[:, 0], lo_e, hi_e)
    limit = 20 * MAX_FIT_WORK
    if bootstrap * y.size > limit:
        raise ValueError(f"bootstrap x points = {bootstrap} x {y.size} exceeds "
                         f"{limit:.0e}: use fewer resamples or average replicates")
    return Prepared(law, axes, x, y_min, obj, bounds, grid, floor_bounds, confidence,
                    holdout, bootstrap, loss)
