"""The Gaussian selection model on the trainer's grid, fitted like the trainer's groups.

Beside the trainer's gains (:mod:`rlscale.verification._trainer_reward_law`), the
same ``(M, K)`` grid in the Gaussian pool model (:func:`rlscale.theory.reward.gain`,
``τ = 2s``) and in its generalising-proxy variant
(:func:`rlscale.simulate._generalising_proxy.generalising_proxy_gain`, ``d = 10``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.verification._law_fits import fit_form, min_law_closure, profile_start
from rlscale.verification._law_forms import STARTS, _law_min
from rlscale.verification._law_models import verdict_fields

__all__ = ["theory_on_grid"]


def theory_on_grid(ms, ks, noises) -> list[dict[str, Any]]:
    """The Gaussian pool model and the generalising-proxy variant, fitted on the same grid
    (the twelve data sets in one batched solve of the min law from its three starts and
    a profile-grid start each)."""
    from rlscale.simulate._generalising_proxy import generalising_proxy_gain
    from rlscale.theory import reward

    lm = np.repeat(np.log(ms), ks.size)
    kk = np.tile(ks, ms.size)
    rows, gs = [], []
    for s in noises:
        tau = 2.0 * s
        for meth in ("bon", "tilt"):
            for model in ("pool", "generalising_d10"):
                if model == "pool":
                    g = np.asarray(reward.gain(np.exp(lm), kk, tau, meth), float)
                else:
                    g = np.concatenate([generalising_proxy_gain(
                        float(m), ks, d=10, noise=tau, method=meth, trials=400,
                        rng=int(m) + int(100 * s)).gain for m in ms])
                gs.append(g)
                rows.append({"model": model, "method": meth, "noise_s": s, "tau": tau})
    Y = np.stack(gs)
    W = np.ones_like(Y)
    starts = np.concatenate([np.broadcast_to(STARTS["min"], (len(Y), 3, 3)),
                             profile_start("min", lm, kk, Y, W)[:, None, :]], axis=1)
    fit = fit_form("min", starts, lm, kk, Y, W)
    verdicts = min_law_closure(lm, kk, Y, W, fit).verdicts
    for row, g, p, verdict in zip(rows, Y, fit.x, verdicts):
        ss = float(np.sum((g - g.mean()) ** 2))
        r2 = 1.0 - float(np.sum((g - _law_min(p, lm, kk)) ** 2)) / ss if ss > 0 else None
        row.update({"a": float(np.exp(p[0])), "b": float(p[1]), "c": float(np.exp(p[2])),
                    "r2_in_sample": r2, **verdict_fields(verdict),
                    "G_at_K_max": [float(x) for x in g.reshape(ms.size, -1)[:, -1]]})
    return rows
