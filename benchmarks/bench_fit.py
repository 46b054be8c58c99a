"""Law fitting: the grid-safe multistart vs one least_squares start vs the full grid.

Issue 13, goal 1: ``fit_law``'s default search (optimize/_multistart.py) must reach
the full grid's optimum (objective within 1e-9 relative) in at most 3x the time of
the fit a user would write without a grid: ``scipy.optimize.least_squares`` with
the Huber loss (``f_scale=1e-3``: its cost is exactly the summed Huber loss) from
one data-driven start and the same analytic Jacobian -- ratio (peer/ours) >= 0.33.
The full-grid row times ``fit_law(starts="grid")`` (L-BFGS from all 4,500 grid
points, the search before issue 13) as the peer.

Data: the Chinchilla points (``../shared/data/chinchilla_fig4_points.csv``, read
in place; a synthetic 240-point stand-in where it is absent) and the default
report's 51-run three-axis trainer sweep (``benchmarks/data/report_sweep.csv``,
made by ``rlscale report``'s sweep step).  The safety rate on 200 synthetic sets is
``python -m benchmarks.multistart_safety``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import fit_law

HERE = Path(__file__).resolve().parent
CHINCHILLA = HERE.parents[1] / "shared" / "data" / "chinchilla_fig4_points.csv"
REPORT = HERE / "data" / "report_sweep.csv"
REPORT_AXES = ["environments", "tasks_per_environment", "trajectories_per_task"]


def chinchilla() -> tuple[dict[str, np.ndarray], list[str]]:
    """Besiroglu et al.'s 240 points (the 5 highest losses dropped), or a stand-in."""
    if CHINCHILLA.is_file():
        with open(CHINCHILLA, newline="") as fh:
            rows = list(csv.DictReader(fh))
        N = np.array([float(r["Model Size"]) for r in rows])
        C = np.array([float(r["Training FLOP"]) for r in rows])
        L = np.array([float(r["loss"]) for r in rows])
        keep = np.argsort(L, kind="stable")[:-5]
        return {"N": N[keep], "D": (C / (6 * N))[keep], "loss": L[keep]}, ["N", "D"]
    rng = np.random.default_rng(0)
    N = np.exp(rng.uniform(np.log(7e7), np.log(1.6e10), 240))
    D = np.exp(rng.uniform(np.log(5e9), np.log(5e11), 240))
    loss = (1.82 + 482 * N ** -0.348 + 2085 * D ** -0.366) * np.exp(rng.normal(0, 0.01, 240))
    return {"N": N, "D": D, "loss": loss}, ["N", "D"]


def report_sweep() -> tuple[dict[str, np.ndarray], list[str]]:
    with open(REPORT, newline="") as fh:
        rows = list(csv.DictReader(fh))
    data = {a: np.array([float(r[a]) for r in rows]) for a in REPORT_AXES}
    data["loss"] = np.array([float(r["loss"]) for r in rows])
    return data, list(REPORT_AXES)


def single_start(data: dict[str, np.ndarray], axes: list[str]) -> float:
    """The peer: one ``least_squares`` Huber fit from a data-driven start.

    Start: floor at half the smallest loss, exponents 0.3, each term half the
    median loss at the median of its axis.  Returns the summed Huber loss.
    """
    from scipy.optimize import least_squares

    from rlscale.optimize._fit_family import family

    fam = family("additive")
    logx = np.log(np.column_stack([data[a] for a in axes]))
    logy = np.log(data["loss"])
    n = len(axes)
    x0 = np.concatenate([[math.log(0.5 * data["loss"].min())],
                         math.log(0.5 * np.median(data["loss"])) + 0.3 * np.median(logx, axis=0),
                         np.full(n, 0.3)])
    lower = np.array([-np.inf] * (1 + n) + [0.0] * n)
    res = least_squares(lambda t: fam.predict(t[None, :], logx)[0][0] - logy, x0,
                        jac=lambda t: fam.predict(t[None, :], logx, jac=True)[1][0],
                        loss="huber", f_scale=1e-3, bounds=(lower, np.inf))
    return float(res.cost)  # least_squares' cost is exactly the summed Huber loss


def cases(smoke: bool) -> list[Case]:
    out = []
    sets = [("Chinchilla 240 points, 2 axes", *chinchilla())]
    if not smoke:
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
    if not smoke:
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
                        "fit_law(starts='grid'): L-BFGS from all 4,500 grid points",
                        repeats=1, extra=extra_grid))
    return out
