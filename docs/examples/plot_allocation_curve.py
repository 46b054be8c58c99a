"""
Compute-optimal allocation along budgets
========================================

A law over the three nested data axes of agentic RL — environments E, tasks E·t and
trajectories E·t·k — allocated by :func:`rlscale.optimize.allocate` (a geometric program in cvxpy)
under the cost 100·E + 10·E·t + E·t·k with at most 500 real environments, and its efficiency
η = B_baseline/B_optimal against scaling trajectories alone
(:func:`rlscale.optimize.efficiency_curve`).
"""

import matplotlib.pyplot as plt
import numpy as np

from rlscale.optimize import AllocationProblem, efficiency_curve
from rlscale.theory import AdditiveLaw

law = AdditiveLaw(0.15, coefficients={"environments": 2.0, "tasks": 1.5, "trajectories": 1.2},
                  exponents={"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
cost = "100*E + 10*E*t + E*t*k"
nested = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
bounds = {"E": (1, 500), "t": (1, None), "k": (1, None)}

budgets = np.geomspace(1e5, 1e7, 9)
problem = AllocationProblem(law, cost, bounds, substitute=nested)
plans = problem.sweep(budgets)
curve = efficiency_curve(law, cost, budgets, scaled="k", fixed={"E": 200, "t": 20},
                         bounds=bounds, substitute=nested)

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
for var in ("E", "t", "k"):
    left.plot(budgets, [p.values[var] for p in plans], marker="o", label=var)
left.set(xscale="log", yscale="log", xlabel="budget B", ylabel="optimal value",
         title="allocation")
left.legend()
right.plot(budgets, curve.eta, marker="o")
right.set(xscale="log", xlabel="budget B", ylabel="η = B_baseline / B_optimal",
          title="efficiency against scaling k only")
fig.tight_layout()
plt.show()

# %%
# Each :class:`~rlscale.optimize.Allocation` renders itself as a table in a notebook; so does the
# efficiency curve (``curve.to_frame()`` gives a pandas DataFrame).
plans[-1]
