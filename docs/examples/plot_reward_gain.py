"""
Reward-optimisation gain surface
================================

The exact gold-reward gain G(M, K) of best-of-n selection on a proxy trained on M comparisons,
within a KL budget K, against the proved band C_LO·√min(log M, K) ≤ G ≤ C_HI·√min(log M, K).
"""

import matplotlib.pyplot as plt
import numpy as np

from rlscale.theory import reward

K = np.geomspace(0.05, 50, 60)
fig, ax = plt.subplots(figsize=(6, 4))
for M in (1e2, 1e4, 1e6, 1e8):
    gain = reward.gain(M, K, noise=1.0, method="bon")
    ax.plot(K, gain, label=f"M = {M:.0e}")
    scale = np.sqrt(np.minimum(np.log(M), K))
    ax.fill_between(K, reward.C_LO * scale, reward.C_HI * scale, alpha=0.08)
ax.set_xscale("log")
ax.set_xlabel("KL budget K (nats)")
ax.set_ylabel("gold-reward gain G")
ax.legend()
fig.tight_layout()
plt.show()
