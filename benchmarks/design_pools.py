"""Synthetic candidate pools with a known law, for the pilot-design study (issue 23).

Each :class:`SyntheticPool` is a grid of runnable configurations with a cost
each, a true law, a noise level, how the law is fitted, and the held-out
**high-cost target region**: the most expensive tenth of the grid, never
selectable, on which the fitted law's R² is scored.  The plan is the
compute-optimal allocation at 30x the pilot budget, scored under the true law.

Pools (the issue's list):

``chinchilla``
    ``L(N, D) = 1.82 + 482.01 N^-0.3478 + 2085.43 D^-0.3658`` (Besiroglu et al.
    2024's replication of Hoffmann et al.), cost ``6·N·D``, noise 0.02 (log).
``agentic``
    ``L(E, t, k) = 0.26 + 0.5 E^-0.3 + 0.35 t^-0.3 + 0.2 k^-0.5`` (shaped like the
    report's fit), cost ``20E + 2Et + 0.1Etk`` (the report's), noise 0.03.
``data_constrained``
    Muennighoff et al. 2023 (arXiv 2305.16264) with repetition:
    ``L = E + A/N^a + B/D'^b``, ``D' = U + U·R*(1 − e^(−R/R*))``, ``R = D/U − 1``,
    their fitted values (E 1.87, A 521, a 0.35, B 1488, b 0.353, R* 15.4);
    cost ``6·N·D``; the plan keeps ``U`` at most the pool's largest.
``lr_optimum``
    ``L = E + A/N^a + B/D^b + c (log lr − m + g log N)²``: a learning-rate
    optimum ``lr* = e^m N^-g`` that moves with model size; cost ``6·N·D``.
``multi_output``
    Two domains sharing exponents, every run measuring both:
    ``L_d = E_d + A_d N^-a + B_d D^-b``; the plan minimises their mean.
    rlscale's fitters take one target, so this pool's fit is a stacked Huber
    least squares written here (scipy), with a bootstrap over runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize import fit_expression, fit_law
from rlscale.optimize._design_model import (
    DesignModel,
    ExpressionModel,
    FamilyModel,
    MultiOutputModel,
    as_model,
)
from rlscale.theory import AdditiveLaw, ExpressionLaw, parse_posynomial


@dataclass
class SyntheticPool:
    """A grid with a true law (see the module docstring)."""

    name: str
    axes: tuple[str, ...]
    grid: dict[str, np.ndarray]
    cost: str
    truth: DesignModel
    noise: float
    law: Any  # what design()/Designer get as the law (family name or ExpressionLaw)
    fit: Callable[[dict[str, np.ndarray], int, int], Any]  # (data, bootstrap, seed)
    outputs: tuple[str, ...] = ("loss",)
    plan_bounds: dict[str, tuple[float, float]] | None = None
    holdout: float = 0.1
    cost_values: np.ndarray = field(init=False)
    pool_rows: np.ndarray = field(init=False)
    target_rows: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        poly = parse_posynomial(self.cost)
        self.cost_values = np.asarray(poly.evaluate({a: self.grid[a] for a in poly.axes}))
        order = np.argsort(self.cost_values, kind="stable")
        n_out = max(1, round(self.holdout * order.size))
        self.target_rows = np.sort(order[-n_out:])
        self.pool_rows = np.sort(order[:-n_out])

    def table(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {a: self.grid[a][rows] for a in self.axes}

    @property
    def pool(self) -> dict[str, np.ndarray]:
        return self.table(self.pool_rows)

    @property
    def pool_cost(self) -> float:
        return float(self.cost_values[self.pool_rows].sum())

    def noisy(self, seed: int) -> np.ndarray:
        """One noisy observation of every grid row (``(n, m)``): common to every arm."""
        rng = np.random.default_rng([seed, 23])
        y = np.exp(self.truth.log_predict(self.grid))
        return y * np.exp(self.noise * rng.standard_normal(y.shape))

    def predict_log(self, fitted: Any, x: dict[str, np.ndarray]) -> np.ndarray:
        return _point(fitted).log_predict(x)

    def plan_loss(self, model: DesignModel, budget: float) -> tuple[float, dict[str, float]]:
        """The plan ``model`` makes at ``budget`` and its loss under the true law."""
        poly = parse_posynomial(self.cost)
        x = model.plan(poly, budget, self.plan_bounds)
        return self.deployed(x), x

    def deployed(self, x: dict[str, float]) -> float:
        vals = {a: np.array([x[a]]) for a in self.axes}
        loss = np.exp(self.truth.log_predict(vals))[0]
        return float(np.mean(loss))


def _point(fitted: Any) -> DesignModel:
    if isinstance(fitted, tuple):
        return fitted[0]
    return as_model(fitted)


def _grid(**axes: Any) -> dict[str, np.ndarray]:
    names = list(axes)
    rows = np.array(list(itertools.product(*[np.asarray(v, dtype=float)
                                             for v in axes.values()])))
    return {a: rows[:, i] for i, a in enumerate(names)}


def _family_fit(law: str, axes: tuple[str, ...]):
    def fit(data: dict[str, np.ndarray], bootstrap: int, seed: int):
        return fit_law({a: data[a] for a in axes} | {"loss": data["loss"]}, law=law,
                       axes=list(axes), bootstrap=bootstrap, seed=seed, holdout=0)
    return fit


def _expression_fit(law: ExpressionLaw, grid: int):
    def fit(data: dict[str, np.ndarray], bootstrap: int, seed: int):
        return fit_expression(law, {a: data[a] for a in law.axes} | {"loss": data["loss"]},
                              grid=grid, refine=4, bootstrap=bootstrap, seed=seed,
                              holdout=0)
    return fit


def chinchilla() -> SyntheticPool:
    truth = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    grid = _grid(N=np.geomspace(2e7, 2e9, 16), D=np.geomspace(2e8, 2e11, 16))
    return SyntheticPool("chinchilla", ("N", "D"), grid, "6*N*D", FamilyModel(truth), 0.02,
                         "additive", _family_fit("additive", ("N", "D")))


def agentic() -> SyntheticPool:
    truth = AdditiveLaw(0.26, {"E": 0.5, "t": 0.35, "k": 0.2}, {"E": 0.3, "t": 0.3, "k": 0.5})
    grid = _grid(E=2.0 ** np.arange(8), t=2.0 ** np.arange(7), k=2.0 ** np.arange(1, 8))
    return SyntheticPool("agentic", ("E", "t", "k"), grid, "20*E + 2*E*t + 0.1*E*t*k",
                         FamilyModel(truth), 0.03, "additive",
                         _family_fit("additive", ("E", "t", "k")))


DATA_CONSTRAINED = ("E + A/N**a + B/(U + U*Rs*(1 - exp(-(D/U - 1)/Rs)))**b")


def data_constrained() -> SyntheticPool:
    law = ExpressionLaw(DATA_CONSTRAINED, axes=["N", "D", "U"],
                        params={"E": (0.5, 5), "A": (1, 1e5), "a": (0.05, 1.5),
                                "B": (1, 1e5), "b": (0.05, 1.5), "Rs": (0.5, 100)})
    truth = ExpressionModel(law, {"E": 1.87, "A": 521.0, "a": 0.35, "B": 1488.0,
                                  "b": 0.353, "Rs": 15.4})
    rows = _grid(N=np.geomspace(1e7, 1e9, 8), U=np.geomspace(1e8, 1e10, 5),
                 epochs=2.0 ** np.arange(7))
    grid = {"N": rows["N"], "D": rows["U"] * rows["epochs"], "U": rows["U"]}
    return SyntheticPool("data_constrained", ("N", "D", "U"), grid, "6*N*D", truth, 0.02,
                         law, _expression_fit(law, 5), plan_bounds={"U": (1e8, 1e10)})


LR_LAW = "E + A/N**a + B/D**b + c*(log(lr) - m + g*log(N))**2"


def lr_optimum() -> SyntheticPool:
    law = ExpressionLaw(LR_LAW, axes=["N", "D", "lr"],
                        params={"E": (0.5, 5), "A": (1, 1e5), "a": (0.05, 1.5),
                                "B": (1, 1e5), "b": (0.05, 1.5), "c": (1e-4, 1),
                                "m": (-10, 5), "g": (0.01, 1)})
    truth = ExpressionModel(law, {"E": 1.82, "A": 482.0, "a": 0.35, "B": 2085.0, "b": 0.37,
                                  "c": 0.02, "m": -2.0, "g": 0.3})
    grid = _grid(N=np.geomspace(2e7, 2e9, 6), D=np.geomspace(2e8, 2e11, 6),
                 lr=np.geomspace(1e-4, 1e-2, 6))
    return SyntheticPool("lr_optimum", ("N", "D", "lr"), grid, "6*N*D", truth, 0.02, law,
                         _expression_fit(law, 4), plan_bounds={"lr": (1e-6, 1.0)})


MULTI = {"code": "E1 + A1/N**a + B1/D**b", "math": "E2 + A2/N**a + B2/D**b"}
MULTI_RANGES = {"E1": (0.5, 5), "E2": (0.5, 5), "A1": (1, 1e5), "A2": (1, 1e5),
                "B1": (1, 1e5), "B2": (1, 1e5), "a": (0.05, 1.5), "b": (0.05, 1.5)}
MULTI_TRUTH = {"E1": 1.8, "A1": 480.0, "B1": 2000.0, "E2": 2.3, "A2": 300.0, "B2": 3500.0,
               "a": 0.34, "b": 0.36}


def _multi_model(params: dict[str, float]) -> MultiOutputModel:
    return MultiOutputModel(MULTI, params, axes=["N", "D"], ranges=MULTI_RANGES)


def fit_multi(data: dict[str, np.ndarray], bootstrap: int, seed: int):
    """Stacked Huber (δ = 1e-3) least squares of both domains' log losses, log parameters.

    Starts: the exponents on {0.1, 0.3, 0.6} each, floors at half the smallest loss,
    coefficients 1e3; the bootstrap resamples runs and refits from the optimum.
    Returns ``(model, draws, noise)`` as the Designer's ``fit=`` hook expects.
    """
    from scipy.optimize import least_squares

    names = sorted(MULTI_TRUTH)
    x = {"N": data["N"], "D": data["D"]}
    y = np.log(np.column_stack([data["code"], data["math"]]))
    base = _multi_model(MULTI_TRUTH)  # the laws, compiled once; values set per call
    assert [n.removeprefix("log ") for n in base.names] == names

    def at(u):
        return base.with_params(dict(zip(names, np.exp(np.clip(u, -50, 50)))))

    def resid(u, rows):
        try:
            pred = at(u).log_predict({a: v[rows] for a, v in x.items()})
        except ValueError:
            return np.full(2 * rows.size, 1e3)
        return (pred - y[rows]).ravel()

    def jac(u, rows):  # ∂ log f/∂ log θ: the model's own sensitivities, stacked
        try:
            return at(u).jacobian({a: v[rows] for a, v in x.items()}).reshape(
                2 * rows.size, len(names))
        except ValueError:
            return np.zeros((2 * rows.size, len(names)))

    def solve(u0, rows):
        return least_squares(resid, u0, jac=jac, args=(rows,), loss="huber", f_scale=1e-3,
                             x_scale="jac", max_nfev=400)

    allrows = np.arange(y.shape[0])
    best = None
    for a, b in itertools.product((0.1, 0.3, 0.6), repeat=2):
        start = {"E1": 0.5 * data["code"].min(), "E2": 0.5 * data["math"].min(),
                 "A1": 1e3, "A2": 1e3, "B1": 1e3, "B2": 1e3, "a": a, "b": b}
        res = solve(np.log([start[n] for n in names]), allrows)
        if best is None or res.cost < best.cost:
            best = res
    point = at(best.x)
    r = resid(best.x, allrows)
    n, p = r.size, len(names)
    noise = float(np.sqrt(r @ r / max(n - p, 1)))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(bootstrap):
        rows = rng.integers(0, y.shape[0], y.shape[0])
        res = solve(best.x, rows)
        draws.append(at(res.x))
    return point, draws, noise


def multi_output() -> SyntheticPool:
    grid = _grid(N=np.geomspace(2e7, 2e9, 16), D=np.geomspace(2e8, 2e11, 16))
    return SyntheticPool("multi_output", ("N", "D"), grid, "6*N*D", _multi_model(MULTI_TRUTH),
                         0.02, _multi_model(MULTI_TRUTH), fit_multi,
                         outputs=("code", "math"))


POOLS: dict[str, Callable[[], SyntheticPool]] = {
    "chinchilla": chinchilla, "agentic": agentic, "data_constrained": data_constrained,
    "lr_optimum": lr_optimum, "multi_output": multi_output}


def r2_log(pool: SyntheticPool, fitted: Any) -> float:
    """R² of the fitted law's log predictions on the held-out high-cost region (vs the truth)."""
    x = pool.table(pool.target_rows)
    truth = pool.truth.log_predict(x)
    pred = pool.predict_log(fitted, x)
    rss = float(((pred - truth) ** 2).sum())
    tss = float(((truth - truth.mean(axis=0)) ** 2).sum())
    return 1.0 - rss / tss if tss > 0 else math.nan
