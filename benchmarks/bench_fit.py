"""Law fitting: the grid-safe multistart vs one least_squares start vs the full grid.

Issue 13, goal 1: ``fit_law``'s default search (optimize/_multistart.py) must reach
the full grid's optimum (objective within 1e-9 relative) in at most 3x the time of
the fit a user would write without a grid: ``scipy.optimize.least_squares`` with
the Huber loss (``f_scale=1e-3``: its cost is exactly the summed Huber loss) from
one data-driven start and the same analytic Jacobian -- ratio (peer/ours) >= 0.33.
The peer is written from the problem: its own log-space model
``log L = logsumexp(e, a_i - alpha_i log x_i)``, residuals and Jacobian, and its
own start -- nothing of rlscale's.  The full-grid row is an *ablation*, ours
against ours: ``fit_law(starts="grid")`` (L-BFGS from all 4,500 grid points, the
search before issue 13).

Data: the Chinchilla points (``../shared/data/chinchilla_fig4_points.csv``, read
in place; where they are absent the Chinchilla rows are SKIPPED with that
reason, never run on a stand-in) and the default report's 51-run three-axis
trainer sweep (``benchmarks/data/report_sweep.csv``, made by ``rlscale
report``'s sweep step).  The safety rate on 200 synthetic sets is
``python -m benchmarks.multistart_safety``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from benchmarks._harness import Case, DataMissing, Skipped
from rlscale.optimize import fit_law

HERE = Path(__file__).resolve().parent
CHINCHILLA = HERE.parents[1] / "shared" / "data" / "chinchilla_fig4_points.csv"
REPORT = HERE / "data" / "report_sweep.csv"
REPORT_AXES = ["environments", "tasks_per_environment", "trajectories_per_task"]


def chinchilla() -> tuple[dict[str, np.ndarray], list[str]]:
    """Besiroglu et al.'s 240 points (the 5 highest losses dropped).

    Raises
    ------
    DataMissing
        Where ``../shared/data/chinchilla_fig4_points.csv`` is absent (no stand-in).
    """
    if not CHINCHILLA.is_file():
        raise DataMissing(f"the Chinchilla points are read from {CHINCHILLA}, which is absent "
                          "(the data folder beside the clone); no stand-in is used")
    with open(CHINCHILLA, newline="") as fh:
        rows = list(csv.DictReader(fh))
    N = np.array([float(r["Model Size"]) for r in rows])
    C = np.array([float(r["Training FLOP"]) for r in rows])
    L = np.array([float(r["loss"]) for r in rows])
    keep = np.argsort(L, kind="stable")[:-5]
    return {"N": N[keep], "D": (C / (6 * N))[keep], "loss": L[keep]}, ["N", "D"]


def report_sweep() -> tuple[dict[str, np.ndarray], list[str]]:
    with open(REPORT, newline="") as fh:
        rows = list(csv.DictReader(fh))
    data = {a: np.array([float(r[a]) for r in rows]) for a in REPORT_AXES}
    data["loss"] = np.array([float(r["loss"]) for r in rows])
    return data, list(REPORT_AXES)


def _terms(theta: np.ndarray, logx: np.ndarray) -> np.ndarray:
    """The model's log terms ``(e, a_i - alpha_i log x_i)``, shape ``(P, 1 + n)``."""
    n = logx.shape[1]
    return np.column_stack([np.full(logx.shape[0], theta[0]),
                            theta[1:1 + n] - theta[1 + n:] * logx])


def additive_residuals(theta: np.ndarray, logx: np.ndarray, logy: np.ndarray) -> np.ndarray:
    """``log(E + sum_i A_i x_i^-alpha_i) - log y`` with ``theta = (log E, log A_i, alpha_i)``,
    written out (log-sum-exp of the terms) for the peer."""
    z = _terms(theta, logx)
    zmax = z.max(axis=1)
    return zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1)) - logy


def additive_jacobian(theta: np.ndarray, logx: np.ndarray, logy: np.ndarray) -> np.ndarray:
    """The residuals' Jacobian: the terms' softmax weights ``w`` give ``w_0`` (floor),
    ``w_i`` (coefficients) and ``-w_i log x_i`` (exponents)."""
    z = _terms(theta, logx)
    w = np.exp(z - z.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return np.column_stack([w, -w[:, 1:] * logx])


def single_start(data: dict[str, np.ndarray], axes: list[str]) -> float:
    """The peer: one ``least_squares`` Huber fit from a data-driven start.

    Its own residuals and Jacobian (:func:`additive_residuals`,
    :func:`additive_jacobian`).  Start: floor at half the smallest loss,
    exponents 0.3, each term half the median loss at the median of its axis.
    Returns the summed Huber loss.
    """
    from scipy.optimize import least_squares

    logx = np.log(np.column_stack([data[a] for a in axes]))
    logy = np.log(data["loss"])
    n = len(axes)
    x0 = np.concatenate([[math.log(0.5 * data["loss"].min())],
                         math.log(0.5 * np.median(data["loss"])) + 0.3 * np.median(logx, axis=0),
                         np.full(n, 0.3)])
    lower = np.array([-np.inf] * (1 + n) + [0.0] * n)
    res = least_squares(additive_residuals, x0, jac=additive_jacobian, args=(logx, logy),
                        loss="huber", f_scale=1e-3, bounds=(lower, np.inf))
    return float(res.cost)  # least_squares' cost is exactly the summed Huber loss


def cases(smoke: bool) -> list[Case | Skipped]:
    out: list[Case | Skipped] = []
    try:
        sets = [("Chinchilla 240 points, 2 axes", *chinchilla())]
    except DataMissing as exc:
        sets, missing = [], str(exc)
        out.append(Skipped("fit Chinchilla 240 points, 2 axes", missing))
    if not smoke or not sets:
        sets.append(("report sweep 51 points, 3 axes", *report_sweep()))
    for label, data, axes in sets:
        got: dict[str, float] = {}

        def ours(data=data, axes=axes, got=got):
            got["ours"] = fit_law(data, axes=axes, holdout=0).objective

        def peer(data=data, axes=axes, got=got):
            got["peer"] = single_start(data, axes)

        def extra(got=got):
            rel = (got["ours"] - got["peer"]) / got["peer"]
            return {"Huber objective": f"ours {got['ours']:.12e}, single start "
                                       f"{got['peer']:.12e}, (ours - peer)/peer = {rel:.1e}"}

        out.append(Case(f"fit {label}", ours, peer,
                        "scipy least_squares Huber, one start, analytic Jacobian",
                        extra=extra))
    if not smoke and any(label.startswith("Chinchilla") for label, _, _ in sets):
        data, axes = chinchilla()
        got = {}

        def fast():
            got["ours"] = fit_law(data, axes=axes, holdout=0).objective

        def grid():
            got["grid"] = fit_law(data, axes=axes, holdout=0, starts="grid").objective

        def extra_grid():
            rel = (got["ours"] - got["grid"]) / got["grid"]
            return {"Huber objective": f"ours {got['ours']:.12e}, full grid {got['grid']:.12e}, "
                                       f"(ours - grid)/grid = {rel:.1e}"}

        out.append(Case("fit Chinchilla vs the full grid", fast, grid,
                        "ours before issue 13, fit_law(starts='grid'): L-BFGS from all 4,500 "
                        "grid points", repeats=1, extra=extra_grid, independent=False,
                        clock="wall"))  # the grid runs in joblib workers: wall, not CPU
    elif not smoke:
        out.append(Skipped("fit Chinchilla vs the full grid", missing))
    return out
