"""
A fitted law on the Chinchilla points
=====================================

Fit the Chinchilla form L(N, D) = E + A·N^−α + B·D^−β to the 245 points of Hoffmann et al.'s
figure 4 (as digitised by Besiroglu et al. 2024; the repository's ``../shared/data`` folder) with
:func:`rlscale.optimize.fit_law`: approach 3 as corrected by Besiroglu et al. — Huber loss on
log residuals, summed, L-BFGS from the best starts of the initialisation grid. The published
fit drops the five highest losses; so does this one. Where the data folder is absent, the
example fits 240 points drawn around Besiroglu et al.'s published law instead.
"""

import csv
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from rlscale.optimize import fit_law
from rlscale.theory import AdditiveLaw

# Besiroglu et al. (2024), table 1.
PUBLISHED = AdditiveLaw(1.8172, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})


def chinchilla_points():
    """Model size N, tokens D = C/(6N) and loss of the digitised points, or a stand-in."""
    here = Path(globals().get("__file__", "plot_chinchilla_fit.py")).resolve()
    for parent in here.parents:
        path = parent / "shared" / "data" / "chinchilla_fig4_points.csv"
        if path.is_file():
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
            N = np.array([float(r["Model Size"]) for r in rows])
            C = np.array([float(r["Training FLOP"]) for r in rows])
            L = np.array([float(r["loss"]) for r in rows])
            keep = np.argsort(L, kind="stable")[:-5]
            return N[keep], (C / (6 * N))[keep], L[keep], "Chinchilla figure 4"
    rng = np.random.default_rng(0)
    N = 10 ** rng.uniform(7.8, 10.2, 240)
    D = 10 ** rng.uniform(9.3, 11.5, 240)
    return N, D, PUBLISHED(N=N, D=D) * np.exp(rng.normal(0, 0.02, 240)), "synthetic stand-in"


N, D, loss, source = chinchilla_points()
fit = fit_law({"N": N, "D": D, "loss": loss}, axes=["N", "D"], starts=100, holdout=0, n_jobs=1)
print(source, {k: round(v, 4) for k, v in fit.params.items()})

# %%
# In a notebook the fit renders itself as a table (``_repr_html_``); ``fit.to_frame()`` gives a
# pandas DataFrame.
fit

# %%
# Observed against fitted loss, coloured by model size.
fig, ax = plt.subplots(figsize=(5.5, 4.5))
pred = fit.predict(N=N, D=D)
sc = ax.scatter(loss, pred, c=np.log10(N), s=12, cmap="viridis")
lims = [loss.min() * 0.97, loss.max() * 1.03]
ax.plot(lims, lims, color="0.4", lw=1)
ax.set(xlabel="observed loss", ylabel="fitted loss",
       title=f"{source}: R² = {fit.r2:.3f}, α = {fit.params['exponent[N]']:.3f}, "
             f"β = {fit.params['exponent[D]']:.3f}")
fig.colorbar(sc, label="log10 N (parameters)")
fig.tight_layout()
plt.show()
