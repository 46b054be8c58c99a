"""
A law written as an expression, end to end
==========================================

Write a law once, as a string read by rlscale's whitelisting parser (never ``eval``) with declared
parameter ranges, then derive, fit and allocate with it: :class:`rlscale.theory.ExpressionLaw`
gives the symbolic elasticities, :func:`rlscale.optimize.fit_expression` fits it (Huber on log
residuals, exact derivatives from the law's compiled tape, the declared ranges as bounds and
starts built from the data) and
:func:`rlscale.optimize.allocate_expression` allocates a compute budget C = 6·N·D (a geometric
program, since the fitted law is a posynomial). Here the expression is the Chinchilla form, so the
allocation can be checked against the closed form :func:`rlscale.theory.chinchilla_optimal`, and
at every compute-optimal point the two elasticities are equal (the KKT condition of the cost
monomial N·D). The data are the Chinchilla points of ``../shared/data`` where present, else points
drawn around Besiroglu et al.'s published law. Each step prints the time it took.
"""

import csv
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from rlscale.optimize import allocate_expression, fit_expression
from rlscale.theory import ExpressionLaw, chinchilla_optimal


def chinchilla_points():
    here = Path(globals().get("__file__", "plot_expression_law.py")).resolve()
    for parent in here.parents:
        path = parent / "shared" / "data" / "chinchilla_fig4_points.csv"
        if path.is_file():
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
            N = np.array([float(r["Model Size"]) for r in rows])
            C = np.array([float(r["Training FLOP"]) for r in rows])
            L = np.array([float(r["loss"]) for r in rows])
            keep = np.argsort(L, kind="stable")[:-5]
            return {"N": N[keep], "D": (C / (6 * N))[keep], "loss": L[keep]}
    rng = np.random.default_rng(0)
    N, D = 10 ** rng.uniform(7.8, 10.2, 240), 10 ** rng.uniform(9.3, 11.5, 240)
    loss = 1.8172 + 482.01 * N**-0.3478 + 2085.43 * D**-0.3658
    return {"N": N, "D": D, "loss": loss * np.exp(rng.normal(0, 0.02, 240))}


clock = time.perf_counter()
law = ExpressionLaw("E + A/N**alpha + B/D**beta", axes=["N", "D"],
                    params={"E": (0.3, 8), "A": (1, 1e10), "B": (1, 1e10),
                            "alpha": (0.02, 2), "beta": (0.02, 2)})
print(f"law: parameters {law.params} ({time.perf_counter() - clock:.2f} s)")

clock = time.perf_counter()
elasticity = law.elasticity("N")
print(f"elasticity in N: {elasticity} ({time.perf_counter() - clock:.2f} s)")

clock = time.perf_counter()
data = chinchilla_points()
fit = fit_expression(law, data)
print(f"fit: {({k: round(v, 4) for k, v in fit.params.items()})}, R² = {fit.r2:.4f} "
      f"({time.perf_counter() - clock:.2f} s)")

clock = time.perf_counter()
budgets = np.geomspace(1e19, 1e24, 6)
plans = [allocate_expression(fit.bound, "6*N*D", float(c)) for c in budgets]
print(f"allocation ({plans[0].method}) at {len(budgets)} budgets "
      f"({time.perf_counter() - clock:.2f} s)")
p = fit.params
closed = np.array([chinchilla_optimal(p["A"], p["B"], p["alpha"], p["beta"], c) for c in budgets])
solved = np.array([[plan.values["N"], plan.values["D"]] for plan in plans])
print("largest relative gap to the closed form:", f"{np.max(np.abs(solved / closed - 1)):.1e}")
print("elasticities at the largest budget:",
      {a: round(e, 4) for a, e in fit.bound.elasticities(plans[-1].values).items()})

fig, ax = plt.subplots(figsize=(5.5, 4.5))
ax.scatter(data["N"], data["D"], c=data["loss"], s=10, cmap="viridis", label="data")
ax.plot(closed[:, 0], closed[:, 1], "k-", lw=1, label="closed form N*(C), D*(C)")
ax.plot(solved[:, 0], solved[:, 1], "ro", ms=5, label="allocate_expression")
ax.set(xscale="log", yscale="log", xlabel="parameters N", ylabel="tokens D",
       title="compute-optimal frontier of the fitted expression")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
