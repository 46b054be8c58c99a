"""The trainer's batched law fits against scipy, resample by resample, on the real run.

    python -m benchmarks.law_fits_audit [--seed 0] [--peer-nfev 200]

Runs ``verify_trainer_reward_law("quick", rng=seed, figures=False, jobs=1)``
(about 10 CPU s), keeps the inputs of every design's fits and, per group:

* **point estimate**: the cost of the min law fitted on all points
  (:func:`rlscale.verification._law_models.fit_groups`) against the old code's
  ``least_squares(method="trf")`` with the analytic Jacobian ``_jac_min`` from
  its three starts (:data:`rlscale.verification._law_forms.STARTS`);
* **bootstrap**: each resample's refit (:func:`rlscale.verification._law_fits.bootstrap_min_law`'s
  solve, redone here to read its cost) against scipy trf from the point
  estimate ``p0`` (the start the old code used; ours starts there too, and from a
  profile-grid point), and against scipy from the old code's own ``p0``.

Where a fit is at one of the law's limits (verdict not ``interior``) the
solver stops on the runoff box or on a tolerance while scipy keeps walking to
``b`` of 1e4–1e6; the limit's cost, which the verdict, intervals and predictions
use, is then ours ("effective").  Counts printed: ours lower than scipy by more
than 1e-9 relative, tied within it, and higher (raw min-law cost and effective).
``--peer-nfev``: scipy's evaluation cap (the old code's ``quick`` cap is 200;
ours runs with it too).  Exit status 1 when an effective cost is higher than
scipy's × (1 + 1e-9).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _scipy(starts, lm, k, g, nfev):
    from scipy.optimize import least_squares

    from rlscale.verification._law_forms import _jac_min, _law_min

    best = None
    for s in starts:
        res = least_squares(lambda p: _law_min(p, lm, k) - g, np.asarray(s, float),
                            jac=lambda p: _jac_min(p, lm, k), method="trf", max_nfev=nfev)
        if best is None or res.cost < best.cost:
            best = res
    return best


def _capture(seed: int) -> list[tuple]:
    import rlscale.verification._trainer_reward_law as tr

    calls = []
    original = tr._fit_design

    def spy(*args):
        calls.append(args)
        return original(*args)

    tr._fit_design = spy
    try:
        tr.verify_trainer_reward_law("quick", rng=seed, figures=False, jobs=1)
    finally:
        tr._fit_design = original
    return calls


def audit(seed: int = 0, peer_nfev: int = 200) -> tuple[list[dict], int]:
    """Per group the counts (module docstring); and the number of effective costs above
    scipy's × (1 + 1e-9), point estimates included."""
    from rlscale.verification._law_fits import fit_form, min_law_closure, profile_start
    from rlscale.verification._law_forms import STARTS, _law_min
    from rlscale.verification._law_models import fit_groups

    rows, worse = [], 0
    for grps, envs, idxs, _msel, _ks, max_nfev in _capture(seed):
        lm = np.log([r["M"] for r in grps[0]])
        k = np.array([r["K"] for r in grps[0]])
        reg = np.array([r["regime"] for r in grps[0]])
        G = np.array([[r["G"] for r in grp] for grp in grps])
        train = np.array([[r["split"] == "train" for r in grp] for grp in grps])
        fits = fit_groups(lm, k, G, train, reg, max_nfev=max_nfev)
        for grp, env, idx, fit, g in zip(grps, envs, idxs, fits, G):
            p0 = fit.fits["min"]["all"]
            r = _law_min(p0, lm, k) - g
            ours = min(0.5 * float(r @ r), fit.law.limit_cost[fit.rows["all"]],
                       fit.law.cost[fit.rows["all"]])
            old = _scipy(STARTS["min"], lm, k, g, peer_nfev)
            worse += ours > old.cost * (1 + 1e-9)
            Yb = np.stack([env[:, i].mean(axis=1).reshape(-1) for i in idx])
            R, W = len(Yb), np.ones_like(Yb)
            starts = np.stack([np.broadcast_to(p0, (R, 3)), profile_start("min", lm, k, Yb, W)],
                              axis=1)
            ff = fit_form("min", starts, lm, k, Yb, W, max_nfev=max_nfev)
            logm = fit_form("sqrt_logm", np.stack([
                profile_start("sqrt_logm", lm, k, Yb, W),
                np.broadcast_to(fit.fits["sqrt_logm"]["all"], (R, 2))], axis=1), lm, k, Yb, W,
                max_nfev=max_nfev)
            law = min_law_closure(lm, k, Yb, W, ff, logm=logm, max_nfev=max_nfev,
                                  plateau_x=np.broadcast_to(fit.fits["plateau"]["all"], (R, 2)))
            eff = np.minimum(ff.cost, law.limit_cost)
            peer = np.array([_scipy([p0], lm, k, y, peer_nfev).cost for y in Yb])
            peer_old = np.array([_scipy([old.x], lm, k, y, peer_nfev).cost for y in Yb])
            hi = eff > peer * (1 + 1e-9)
            worse += int(hi.sum() + np.sum(eff > peer_old * (1 + 1e-9)))
            rows.append({
                "group": f"{grp[0]['optimiser']}/{grp[0]['capacity']}/s={grp[0]['noise']:g}",
                "point": f"{ours:.6g} vs {old.cost:.6g}", "verdict": fit.verdicts["all"],
                "lower": int(np.sum(eff < peer * (1 - 1e-9))),
                "tied": int(np.sum(np.abs(eff - peer) <= 1e-9 * peer)),
                "higher raw": int(np.sum(ff.cost > peer * (1 + 1e-9))),
                "higher eff": int(hi.sum()),
                "at a limit": int(sum(v != "interior" for v in law.verdicts)),
                "vs old p0 higher eff": int(np.sum(eff > peer_old * (1 + 1e-9))), "n": R})
    return rows, worse


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.law_fits_audit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peer-nfev", type=int, default=200)
    a = ap.parse_args(argv)
    rows, worse = audit(a.seed, a.peer_nfev)
    for row in rows:
        print("  ".join(f"{key} {val}" for key, val in row.items()))
    tot = {key: sum(r[key] for r in rows) for key in ("n", "lower", "tied", "higher raw",
                                                      "higher eff", "at a limit")}
    print("total", tot, "| effective costs above scipy x (1 + 1e-9), points included:", worse)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
