"""
The reward-optimisation law and its proved band
===============================================

The exact gold-reward gain G(M, K) of optimising a proxy reward model trained on M preference
comparisons within a KL budget K (:func:`rlscale.theory.reward.gain`), drawn as the report's
first section draws it: over (log M, K) with the crossover K = log M, and collapsed onto
√min(log M, K) between the proved constants C_LO and C_HI (``rlscale prove reward-theta``). Only
the exact methods are drawn here (best-of-n, quantilizer, tilting); ``rlscale verify reward-law``
adds the Monte Carlo ones and the fits.
"""

import matplotlib.pyplot as plt
import numpy as np

from rlscale.theory import reward

M = np.geomspace(10, 1e8, 22)
K = np.geomspace(0.5, 50, 24)
MM, KK = np.meshgrid(M, K)
G = reward.gain(MM, KK, noise=1.0, method="bon")

fig, (heat, collapse) = plt.subplots(1, 2, figsize=(10, 4))
mesh = heat.pcolormesh(np.log(M), K, G, shading="nearest", cmap="viridis")
heat.plot(np.log(M), np.log(M), "r--", lw=1.5, label="crossover K = log M")
heat.set(yscale="log", ylim=(K[0], K[-1]), xlabel="log M (comparisons)", ylabel="KL budget K",
         title="G(M, K), best-of-n, noise 1")
heat.legend(loc="lower right")
fig.colorbar(mesh, ax=heat, label="G")

L = np.minimum(np.log(MM), KK)
for color, method in enumerate(("bon", "quantile", "tilt")):
    for noise in (0.5, 1.0, 2.0):
        g = reward.gain(MM, KK, noise=noise, method=method)
        collapse.scatter(np.sqrt(L), g, s=4, alpha=0.4, color=f"C{color}",
                         label=method if noise == 1.0 else None)
x = np.linspace(0, np.sqrt(L.max()), 50)
band = f"proved band [{reward.C_LO:.3f}, {reward.C_HI:.3f}]"
collapse.plot(x, reward.C_HI * x, "r--", lw=1, label=band)
collapse.plot(x, reward.C_LO * x, "r--", lw=1)
collapse.set(xlabel="√min(log M, K)", ylabel="gold gain G",
             title="collapse onto √min(log M, K), τ ∈ {½, 1, 2}")
collapse.legend(fontsize=8, markerscale=3)
fig.tight_layout()
plt.show()
