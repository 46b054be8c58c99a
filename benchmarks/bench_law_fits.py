"""Batched reward-law fits vs the scipy least_squares loop they replaced.

Ours: :func:`rlscale.verification._law_models.fit_groups` (every start × {train split, all
points, leave-one-regime-out subsets} of a law form in one batched
trust-region Levenberg–Marquardt solve, :mod:`rlscale.verification._law_solver`) and
:func:`rlscale.verification._law_fits.bootstrap_min_law` (the bootstrap refits in one solve,
with the law's limits for identification).  Peer: the fits written from the
laws' formulas, as the code before did them: one
``scipy.optimize.least_squares(method="trf")`` call per start and subset with
its own residuals and analytic Jacobians (:func:`_peer_forms`: the min law
``a √min(log M + b, cK)``, the smooth min and ``a √(log M + b)``, written here
from the formulas) from the starts the verification has always used (their
numbers copied into :data:`PEER_STARTS`), the bootstrap refits one call each
from the point estimate.

Cases: trainer-like groups on the trainer's ``quick`` design (5 ``M`` × 10
``K``, 12 environments, 30 bootstrap resamples, ``max_nfev`` 200: an identified
law, one with its optimum on the clamp corner ``b = −log 10`` and one whose
``G`` does not grow with ``M``, so ``b → ∞``), and the Gaussian verification's
exact-method groups on its ``quick`` grid.  Printed with each: the largest
relative cost difference ours − peer over the identified fits (negative:
ours lower) and how many of ours are within ``(1 + 1e-9)`` of the peer's cost
or below it.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks._harness import Case

# ----------------------------------------------------------------------------- the peer

#: The multi-start fits' starts (the numbers the verification has always used).
PEER_STARTS = {
    "min": [(0.0, 0.0, 0.0), (0.3, -1.0, 0.5), (-0.3, 1.0, -0.5)],
    "smooth": [(0.0, 0.0, 0.0, 1.0), (0.3, -1.0, 0.5, 0.0), (0.0, 0.5, 0.0, 2.0)],
    "sqrt_logm": [(0.0, 0.0), (0.5, -1.0)],
}


def _min_law(p, lm, k):
    """``a √max(min(lm + b, cK), 0)`` with ``p = (log a, b, log c)``, and its Jacobian (a
    subgradient at the kink, zero where the square root's argument is not positive)."""
    a, b, c = math.exp(p[0]), p[1], math.exp(p[2])
    u1, u2 = lm + b, c * k
    first = u1 <= u2
    u = np.where(first, u1, u2)
    f = a * np.sqrt(np.maximum(u, 0.0))
    pos = u > 1e-300
    half = np.where(pos, a / (2.0 * np.sqrt(np.where(pos, u, 1.0))), 0.0)
    return f, np.column_stack([f, np.where(first, half, 0.0), np.where(first, 0.0, half * u2)])


def _smooth_law(p, lm, k):
    """The smooth min ``a ((lm + b)^-q + (cK)^-q)^(-1/(2q))``, ``p = (log a, b, log c,
    log q)``, in logs (``q`` clamped to ``[e^-50, e^700]``, ``lm + b`` to ``>= 1e-12``)."""
    q = math.exp(min(max(p[3], -50.0), 700.0))
    raw = lm + p[1]
    u = np.maximum(raw, 1e-12)
    log_u, log_v = np.log(u), p[2] + np.log(np.maximum(k, 1e-300))
    lse = np.logaddexp(-q * log_u, -q * log_v)
    f = np.exp(p[0] - lse / (2.0 * q))
    w_u, w_v = np.exp(-q * log_u - lse), np.exp(-q * log_v - lse)
    d_q = ((w_u * log_u + w_v * log_v) / 2.0 + lse / (2.0 * q)) if -50.0 < p[3] < 700.0 \
        else np.zeros_like(f)
    return f, np.column_stack([f, f * np.where(raw > 1e-12, w_u / (2.0 * u), 0.0),
                               f * (w_v / 2.0), f * d_q])


def _sqrt_law(p, lm, k):
    """``a √max(lm + b, 0)``, ``p = (log a, b)``."""
    a = math.exp(p[0])
    u = lm + p[1]
    f = a * np.sqrt(np.maximum(u, 0.0))
    pos = u > 1e-300
    return f, np.column_stack([f, np.where(pos, a / (2.0 * np.sqrt(np.where(pos, u, 1.0))),
                                           0.0)])


def _peer_forms():
    return {"min": _min_law, "smooth": _smooth_law, "sqrt_logm": _sqrt_law}


def _peer_ls(form, starts, lm, k, g, max_nfev):
    """scipy trf from each start, the first lowest cost (the peer's own forms)."""
    from scipy.optimize import least_squares

    fn = _peer_forms()[form]
    best = None
    for start in starts:
        res = least_squares(lambda p: fn(p, lm, k)[0] - g, np.asarray(start, float),
                            jac=lambda p: fn(p, lm, k)[1], method="trf", max_nfev=max_nfev)
        if best is None or res.cost < best.cost:
            best = res
    return best.x, best.cost


def _peer_group(lm, k, g, train, reg, max_nfev, boot=None):
    """The old per-group fits: law and smooth min on train and all points, a√(log M + b)
    on all points, the three leave-one-regime-out refits of each, bootstrap from p0."""
    out = {}
    subsets = {"train": train, "all": np.ones(lm.size, bool)}
    for held in ("kl_limited", "crossover", "data_limited"):
        tr = reg != held
        if tr.sum() >= 4 and (~tr).sum() > 0:
            subsets[held] = tr
    for form in ("min", "smooth", "sqrt_logm"):
        for name, m in subsets.items():
            if form == "sqrt_logm" and name == "train":
                continue
            out[(form, name)] = _peer_ls(form, PEER_STARTS[form], lm[m], k[m], g[m], max_nfev)
    if boot is not None:
        p0 = out[("min", "all")][0]
        out["boot"] = [_peer_ls("min", [p0], lm, k, y, max_nfev) for y in boot]
    return out


# ----------------------------------------------------------------------------- data


def _trainer_like(n_boot: int, seed: int = 0):
    """Three groups on the trainer's quick design, with per-environment gains."""
    from rlscale.verification._law_forms import _law_min
    from rlscale.verification._law_models import _regime

    rng = np.random.default_rng(seed)
    ms, ks = 10.0 ** np.arange(1, 6), np.geomspace(0.05, 30.0, 10)
    lm, k = np.repeat(np.log(ms), ks.size), np.tile(ks, ms.size)
    T = 12
    means = [_law_min(np.array([0.25, -0.5, np.log(0.5)]), lm, k),
             _law_min(np.array([0.4, -np.log(10.0), np.log(0.4)]), lm, k)
             - 0.6 * (lm < 2.4) * np.log1p(k),
             1.1 * np.sqrt(np.minimum(1.0, 0.5 * k)) - 0.01 * lm]
    groups = []
    for mean in means:
        env = mean[None, :] + 0.15 * rng.standard_normal((T, lm.size))
        g = env.mean(axis=0)
        idx = rng.integers(0, T, size=(n_boot, T))
        boot = np.stack([env[i].mean(axis=0) for i in idx])
        groups.append((g, rng.random(lm.size) < 0.7, boot))
    return lm, k, _regime(lm, k), groups


def _gaussian(smoke: bool):
    """The exact-method groups of ``verify reward-law --quick`` (seed 0's split)."""
    from rlscale.theory import reward
    from rlscale.verification._gaussian_reward_law import EXACT_METHODS, NOISES, reward_grid
    from rlscale.verification._law_models import _regime

    m, k = reward_grid("quick")
    if smoke:
        keep = np.isin(m, np.unique(m)[::4])
        m, k = m[keep], k[keep]
    lm = np.log(m)
    rng = np.random.default_rng(0)
    groups = [(np.asarray(reward.gain(m, k, tau, meth), float), rng.random(m.size) < 0.7, None)
              for tau in (NOISES[:1] if smoke else NOISES)
              for meth in (EXACT_METHODS[:1] if smoke else EXACT_METHODS)]
    return lm, k, _regime(lm, k), groups


# ----------------------------------------------------------------------------- cases


def _ours(lm, k, reg, groups, max_nfev):
    from rlscale.verification._law_fits import bootstrap_min_law
    from rlscale.verification._law_models import fit_groups

    G = np.stack([g for g, _, _ in groups])
    train = np.stack([t for _, t, _ in groups])
    fits = fit_groups(lm, k, G, train, reg, max_nfev=max_nfev)
    boot = None
    if groups[0][2] is not None:
        n_b = [len(b) for _, _, b in groups]

        def rep(form):
            return np.repeat(np.array([f.fits[form]["all"] for f in fits]), n_b, axis=0)

        boot = bootstrap_min_law(lm, k, np.concatenate([b for _, _, b in groups]), rep("min"),
                                 rep("sqrt_logm"), rep("plateau"), max_nfev=max_nfev)
    return fits, boot


def _peer(lm, k, reg, groups, max_nfev):
    return [_peer_group(lm, k, g, t, reg, max_nfev, b) for g, t, b in groups]


def _cost(form, x, lm, k, g, mask):
    from rlscale.verification._law_forms import FORMS

    r = (FORMS[form](np.asarray(x, float)[None], lm, k, False)[0][0] - g)[mask]
    return 0.5 * float(r @ r)


def _agreement(lm, k, reg, groups, max_nfev):
    """Largest relative cost difference ours − peer on identified fits, and the count of
    ours <= peer·(1 + 1e-9) (fits and, separately, bootstrap refits)."""
    fits, boot = _ours(lm, k, reg, groups, max_nfev)
    peer = _peer(lm, k, reg, groups, max_nfev)
    rel, ok, n = [], 0, 0
    for fit, (g, train, _), pg in zip(fits, groups, peer):
        for (form, subset), (_, pc) in ((key, v) for key, v in pg.items() if key != "boot"):
            if form == "min" and fit.verdicts.get(subset, "interior") != "interior":
                continue  # not identified: no optimum to agree on
            mask = (train if subset == "train" else np.ones(lm.size, bool) if subset == "all"
                    else reg != subset)
            oc = _cost(form, fit.fits[form][subset], lm, k, g, mask)
            if form == "sqrt_logm":  # where it ran off (b -> inf), its limit, a constant
                oc = min(oc, float(0.5 * np.sum((fit.predictor(form, subset)(lm, k) - g)[mask]
                                                ** 2)))
            rel.append((oc - pc) / max(pc, 1e-300))
            ok += oc <= pc * (1 + 1e-9) + 1e-300
            n += 1
    out = {"fits: max (ours - peer)/peer": f"{max(rel):.2e}",
           "fits: ours <= peer*(1+1e-9)": f"{ok}/{n}"}
    if boot is not None:
        reps, verdicts = boot
        pc = np.array([c for pg in peer for _, c in pg["boot"]])
        Yb = np.concatenate([b for _, _, b in groups])
        oc = np.array([_cost("min", x, lm, k, y, np.ones(lm.size, bool))
                       for x, y in zip(reps, Yb)])
        inter = np.array([v == "interior" for v in verdicts])
        out["bootstrap: identified resamples"] = f"{inter.sum()}/{inter.size}"
        out["bootstrap: ours <= peer*(1+1e-9) (identified)"] = (
            f"{int(np.sum(oc[inter] <= pc[inter] * (1 + 1e-9)))}/{int(inter.sum())}")
        out["bootstrap: max (ours - peer)/peer (identified)"] = (
            f"{np.max((oc[inter] - pc[inter]) / pc[inter]):.2e}")
    return out


def cases(smoke: bool) -> list[Case]:
    n_boot = 3 if smoke else 30
    out = []
    for label, (lm, k, reg, groups), cap in (
            (f"trainer-like groups [3 groups, 5 M x 10 K, {n_boot} resamples]",
             _trainer_like(n_boot), 200),
            (f"Gaussian exact-method groups [{'smoke' if smoke else 'quick'} grid]",
             _gaussian(smoke), 4000)):
        out.append(Case(label, lambda a=(lm, k, reg, groups, cap): _ours(*a),
                        lambda a=(lm, k, reg, groups, cap): _peer(*a),
                        peer_label="scipy least_squares per start and subset, own forms",
                        work=len(groups), work_unit="groups",
                        extra=lambda a=(lm, k, reg, groups, cap): _agreement(*a),
                        repeats=1 if smoke else None))
    return out
