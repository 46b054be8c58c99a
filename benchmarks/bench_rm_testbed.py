"""Ridge Bradley–Terry on sparse one-hot designs: truncated Newton against scipy's L-BFGS-B.

The problem: the testbed's reward models (issue 28) — M = 1e5 comparisons of
trajectories on one-hot feature designs of d = 5216 (mixed_k3: 22 features a
trajectory) and d = 32768 (pool: one feature a trajectory, one value per
candidate), ridge at the generator's prior (``bayes``) and 1/100 of it
(``weak``).  Ours: :func:`rlscale.simulate.fit_bradley_terry_sparse`
(Jacobi-preconditioned truncated Newton, decrement below 1e-10 M).  Peer:
``scipy.optimize.minimize(method="L-BFGS-B")`` on the same objective and
gradient, written here from the problem (two sparse products an evaluation),
at its defaults but with the gradient tolerance scaled to the problem (1e-6 M)
and ``ftol = 0``.  Printed beside the times: the peer's objective minus ours
(positive: the peer stopped short).  Also ``verify reward-law --testbed
--quick`` end to end (budget 30 s on 2 cores).
"""

from __future__ import annotations

import os

import numpy as np

from benchmarks._harness import Case


def _problem(H: int, k: int, nu: float, rm: str, m: int):
    from rlscale.simulate._chain_world import make_chain_world
    from rlscale.simulate._reward_model import bt_labels
    from rlscale.simulate._rm_testbed import comparison_pairs, prior_ridge, rm_design

    w = make_chain_world(H, 8, k, nu, rng=0)
    ta, tb, margin = comparison_pairs(w, m, rng=1)
    return rm_design(w, ta, tb, rm), bt_labels(margin, 0.0, 1.0, rng=2), prior_ridge(w, rm, 1.0)


def _objective(x, y, lam, theta) -> float:
    z = x @ theta
    t = 2.0 * y - 1.0
    return float(np.sum(np.logaddexp(0.0, -t * z)) + 0.5 * np.dot(lam * theta, theta))


def _peer(x, y, lam):
    from scipy.optimize import minimize

    xt = x.T.tocsr()
    t = 2.0 * y - 1.0

    def fun(theta):
        z = x @ theta
        g = xt @ (1.0 / (1.0 + np.exp(-z)) - y) + lam * theta
        return float(np.sum(np.logaddexp(0.0, -t * z)) + 0.5 * np.dot(lam * theta, theta)), g

    return minimize(fun, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
                    options={"gtol": 1e-6 * x.shape[0], "ftol": 0.0, "maxiter": 15000}).x


def cases(smoke: bool) -> list[Case]:
    from rlscale.simulate._reward_model import fit_bradley_terry_sparse

    m = 2000 if smoke else 100_000
    specs = [("mixed_k3", 12, 3, 0.5, "bayes"), ("pool", 5, 5, 1.0, "weak")]
    if not smoke:
        specs += [("mixed_k3", 12, 3, 0.5, "weak"), ("pool", 5, 5, 1.0, "bayes")]
    out = []
    for name, H, k, nu, rm in specs:
        x, y, lam = _problem(H, k, nu, rm, m)
        got: dict[str, np.ndarray] = {}

        def ours(x=x, y=y, lam=lam, got=got):
            got["ours"] = fit_bradley_terry_sparse(x, y, ridge=lam).theta

        def peer(x=x, y=y, lam=lam, got=got):
            got["peer"] = _peer(x, y, lam)

        def extra(x=x, y=y, lam=lam, got=got):
            gap = _objective(x, y, lam, got["peer"]) - _objective(x, y, lam, got["ours"])
            diff = float(np.max(np.abs(got["peer"] - got["ours"])))
            return {"peer objective - ours": f"{gap:.3g}",
                    "max |theta_peer - theta_ours|": f"{diff:.3g}",
                    "load (1 min)": round(os.getloadavg()[0], 1)}

        out.append(Case(f"BT fit [{name}, {rm}, M={m}, d={x.shape[1]}]", ours, peer,
                        peer_label="scipy L-BFGS-B, same objective", work=m,
                        work_unit="comparisons", extra=extra, repeats=1 if smoke else 3))
    if not smoke:
        from rlscale.verification._rm_testbed_law import verify_testbed_reward_law

        out.append(Case("verify reward-law --testbed --quick",
                        lambda: verify_testbed_reward_law("quick", rng=0, figures=False),
                        None, repeats=1, warmup=False))
    return out
