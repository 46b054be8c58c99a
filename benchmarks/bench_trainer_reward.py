"""Exact trajectory KL and gold value of soft-VI policies: vectorised DP vs Monte Carlo.

Ours: :func:`rlscale.simulate.soft_optimum` — the KL-regularised optimum for
every ``β`` and environment plus its exact KL, proxy and gold value, in one
backward pass.  Against it, what one would do without the DP, estimating the
same KL and gold value by sampling trajectories of the (given) policies — 2,000
per environment and ``β``, which still leaves a Monte Carlo standard error
(printed) where the DP's is zero.  The sampler is rlscale's own
(``sample_trajectories``), so the row is an *ablation* (two methods of ours),
not an independent peer.

The law fits and bootstrap refits of the verification are measured by
``python -m benchmarks law_fits``.  Also ``verify reward-law --trainer
--quick`` end to end (budget: 60 s on 2 cores).
"""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case


def cases(smoke: bool) -> list[Case]:
    from rlscale.simulate import make_reward_world, sample_trajectories, soft_optimum
    from rlscale.simulate._gold_reward import GOLD_WEIGHTS

    envs, n_beta, n_mc = (2, 2, 200) if smoke else (16, 12, 2000)
    rw = make_reward_world(envs, rng=0)
    g = rw.landing_reward(GOLD_WEIGHTS)
    betas = np.geomspace(0.01, 10.0, n_beta)
    pols = soft_optimum(rw, g, g, betas, keep_policy=True).policy

    def ours():
        return soft_optimum(rw, g, g, betas)

    def peer():
        gen = np.random.default_rng(1)
        out = []
        for b in range(n_beta):
            phi, logr = sample_trajectories(rw, n_mc, gen, pols[b])
            out.append((logr.mean(axis=1), (phi @ GOLD_WEIGHTS).mean(axis=1)))
        return out

    def extra():
        exact = ours()
        mc = peer()
        err = max(float(np.max(np.abs(mc[b][0] - exact.kl[b]))) for b in range(n_beta))
        return {"max |MC - exact| KL": round(err, 4)}

    cases_ = [Case(f"exact KL + gold of soft VI [{envs} envs x {n_beta} betas]", ours, peer,
                   peer_label=f"ours, Monte Carlo with rlscale's trajectory sampler, {n_mc} per "
                              "env and beta", work=envs * n_beta, work_unit="policies",
                   extra=extra, independent=False)]
    if not smoke:
        from rlscale.verification._trainer_reward_law import verify_trainer_reward_law

        cases_.append(Case("verify reward-law --trainer --quick",
                           lambda: verify_trainer_reward_law("quick", rng=0, figures=False),
                           None, repeats=1))
    return cases_
