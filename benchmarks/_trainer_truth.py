"""A generating law measured with rlscale's own trainer, for the decision study.

The other generators of ``python -m benchmarks.decision_study`` are formulas; this one is
the numpy RL trainer itself (:func:`rlscale.simulate.train`, the report's configuration
and unit costs).  Its "truth" at an allocation ``(E, t, k)`` is the mean held-out loss
``1 − success`` over seeds, measured on a grid of allocations (log2 steps: ``E ∈ 1..64``,
``t ∈ 1..64``, ``k ∈ 2..128``) and interpolated multilinearly in the logs of the axes
between grid points.  The grid holds every corner of every cell whose cheapest corner
costs at most :data:`MAX_COST`, so every allocation costing up to that (every budget
path of the study, which ends at twice its budget) lies in a fully trained cell.  A
pilot data set draws, at each point of the report's star design, ``replicates`` of the
:data:`STAR_SEEDS` seeds measured there (without replacement), so the fitted pilots see
real trainer noise and real trainer curvature, neither of which an additive law assumes.

The runs go through :func:`rlscale.sweep.run_sweep` into one CSV (``trainer-truth.csv`` in
the study's output directory): a killed run loses at most the run in flight and a rerun
skips every finished run.  About 1,550 runs.

The truth is itself measured: with :data:`GRID_SEEDS` seeds a grid mean has a standard
error of about 0.01-0.02 in loss, which the study reports beside the trainer's results
(``truth_se``); deployed-η figures on this generator are only as sharp as that.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Grid of the truth (log2 steps) and the most an allocation it covers may cost.
GRID = {"E": (1, 2, 4, 8, 16, 32, 64), "t": (1, 2, 4, 8, 16, 32, 64),
        "k": (2, 4, 8, 16, 32, 64, 128)}
MAX_COST = 2200.0
#: Seeds per grid point, and per point of the pilots' star design (a pilot draws from these).
GRID_SEEDS = tuple(range(4))
STAR_SEEDS = tuple(range(12))
_AXES = {"E": "environments", "t": "tasks_per_environment", "k": "trajectories_per_task"}


def _cost(E: float, t: float, k: float, costs: dict[str, float]) -> float:
    return costs["environment"] * E + costs["task"] * E * t + costs["trajectory"] * E * t * k


def _points(star: list[dict[str, float]], costs: dict[str, float]
            ) -> list[tuple[tuple[int, int, int], tuple[int, ...]]]:
    """Every (point, seeds) to train: the grid under :data:`MAX_COST` and the star design."""
    out: dict[tuple[int, int, int], set[int]] = {}
    g = [GRID[a] for a in "Etk"]
    for i, j, m in itertools.product(*(range(len(v)) for v in g)):
        if _cost(g[0][i], g[1][j], g[2][m], costs) > MAX_COST:
            continue
        for di, dj, dm in itertools.product((0, 1), repeat=3):  # the cell's corners
            if i + di < len(g[0]) and j + dj < len(g[1]) and m + dm < len(g[2]):
                key = (g[0][i + di], g[1][j + dj], g[2][m + dm])
                out.setdefault(key, set()).update(GRID_SEEDS)
    for p in star:
        key = (int(p["E"]), int(p["t"]), int(p["k"]))
        out.setdefault(key, set()).update(STAR_SEEDS)
    return [(key, tuple(sorted(seeds))) for key, seeds in sorted(out.items())]


def measure(out: Path, star: list[dict[str, float]], progress: bool = True
            ) -> list[dict[str, Any]]:
    """Train every point (resuming ``out``) and return the rows."""
    from tqdm import tqdm

    from rlscale.report._config import load_config, train_fields
    from rlscale.sweep._run import parse_spec, read_results, run_sweep

    config = load_config()
    train = train_fields(config)
    points = _points(star, config["costs"])
    for (E, t, k), seeds in tqdm(points, desc="trainer truth", unit="point",
                                 disable=not progress):
        spec = parse_spec({"design": "grid", "seeds": list(seeds),
                           "algorithms": config["sweep"]["algorithms"][:1],
                           "axes": {"environments": [E], "tasks_per_environment": [t],
                                    "trajectories_per_task": [k]}, "train": train})
        run_sweep(spec, out, progress=False)
    return read_results(out)


@dataclass(frozen=True)
class TrainerTruth:
    """The trainer's mean loss on the grid, interpolated; and the star design's seeds."""

    grid: dict[str, np.ndarray]
    mean: np.ndarray
    se: np.ndarray
    star: dict[tuple[int, int, int], np.ndarray]

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]]) -> TrainerTruth:
        by: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
        for r in rows:
            key = tuple(int(r[_AXES[a]]) for a in "Etk")
            by.setdefault(key, []).append((int(r["seed"]), float(r["loss"])))
        shape = tuple(len(v) for v in GRID.values())
        mean = np.full(shape, np.nan)
        se = np.full(shape, np.nan)
        for idx in itertools.product(*(range(n) for n in shape)):
            key = tuple(GRID[a][i] for a, i in zip("Etk", idx))
            vals = [v for s, v in by.get(key, []) if s in GRID_SEEDS]
            if vals:
                mean[idx] = float(np.mean(vals))
                se[idx] = float(np.std(vals, ddof=1) / math.sqrt(len(vals))) if len(vals) > 1 \
                    else math.nan
        star = {key: np.array([v for _, v in sorted(vals)]) for key, vals in by.items()
                if len(vals) >= len(STAR_SEEDS)}
        return cls({a: np.log(np.array(v, dtype=float)) for a, v in GRID.items()}, mean, se,
                   star)

    def __call__(self, values: dict[str, Any]) -> np.ndarray:
        """Mean loss at law-axis values (``E``, ``t``, ``k`` arrays), multilinear in logs.

        An allocation outside the grid, or in a cell with an untrained corner (cost above
        :data:`MAX_COST`), is refused: the study only judges what was measured.
        """
        from scipy.interpolate import RegularGridInterpolator

        interp = getattr(self, "_interp", None)
        if interp is None:
            interp = RegularGridInterpolator(tuple(self.grid[a] for a in "Etk"), self.mean,
                                             bounds_error=True)
            object.__setattr__(self, "_interp", interp)
        pts = np.stack([np.log(np.asarray(values[a], dtype=float)).ravel() for a in "Etk"],
                       axis=-1)
        out = interp(pts)
        if not np.all(np.isfinite(out)):
            raise ValueError("an allocation lies in a part of the trainer grid that was not "
                             f"trained (beyond cells costing {MAX_COST:g} at their cheapest)")
        return out.reshape(np.shape(values["E"]))
