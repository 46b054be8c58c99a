"""
A tiny scaling sweep with the RL trainer
========================================

Train a linear softmax policy with GRPO (:func:`rlscale.simulate.train`) on generated
FrozenLake-like gridworlds, scaling the number of training environments E with t = 4 tasks per
environment and k = 8 trajectories per task, and read the **exact** held-out success (dynamic
programming on 16 unseen environments) against the untrained and the optimal policy. Two seeds
per point keep it to a few seconds.
"""

import matplotlib.pyplot as plt
import numpy as np

from rlscale.simulate import train

environments = [1, 2, 4, 8, 16, 32]
seeds = [0, 1]
success = np.array([[train(n_environments=E, tasks_per_environment=4, trajectories_per_task=8,
                           eval_environments=16, seed=s).success for s in seeds]
                    for E in environments])
ref = train(n_environments=1, tasks_per_environment=1, trajectories_per_task=2,
            eval_environments=16, seed=0)

fig, ax = plt.subplots(figsize=(5.5, 4))
ax.plot(environments, success.mean(axis=1), marker="o", label="trained (mean of 2 seeds)")
ax.scatter(np.repeat(environments, len(seeds)), success.ravel(), color="C0", alpha=0.4, s=12)
ax.axhline(ref.untrained_success, color="0.5", ls="--", label="untrained")
ax.axhline(ref.optimal_success, color="C2", ls=":", label="optimal")
ax.set(xscale="log", xlabel="training environments E", ylabel="held-out success")
ax.legend()
fig.tight_layout()
plt.show()
