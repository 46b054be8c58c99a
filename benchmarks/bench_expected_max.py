"""e(n) at 10,000 pool sizes: fixed-node quadrature (ours) vs scipy quad per point."""

from __future__ import annotations

import numpy as np
from scipy.integrate import quad
from scipy.special import log_ndtr

from benchmarks._harness import Case
from rlscale.theory import expected_max_normal


def _quad_one(n: float) -> float:
    # E[max] = ∫ z n φ(z) Φ(z)^{n-1} dz, split at the Gumbel location so quad
    # sees the peak (without the split it misses it for large n).
    mu = np.sqrt(2 * np.log(n)) if n > 3 else 0.0
    scale = 1 / max(1.0, np.sqrt(2 * np.log(n)))

    def f(z: float) -> float:
        return z * np.exp(np.log(n) - z * z / 2 + (n - 1) * log_ndtr(z)) / np.sqrt(2 * np.pi)

    lo, hi = mu - 12 * scale, mu + 40 * scale
    return (quad(f, -np.inf, lo, epsabs=0, epsrel=1e-12, limit=200)[0]
            + quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
            + quad(f, hi, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0])


def cases(smoke: bool) -> list[Case]:
    count = 50 if smoke else 10_000
    ns = np.exp(np.random.default_rng(0).uniform(np.log(2.0), np.log(1e300), count))

    def ours() -> np.ndarray:
        return expected_max_normal(ns)

    def peer() -> np.ndarray:
        return np.array([_quad_one(n) for n in ns])

    def accuracy() -> dict[str, str]:
        import mpmath as mp

        mp.mp.dps = 30
        sub = ns[:: max(1, count // 12)]

        def log_phi(z):
            return mp.log1p(-mp.ncdf(-z)) if z > 0 else mp.log(mp.ncdf(z))

        def ref(n: float) -> float:
            # μ + ∫_μ^∞ (1 - Φ^n) - ∫_{-∞}^μ Φ^n with Φ(μ)^n = 1/e (no cancellation)
            ln, nn = mp.log(mp.mpf(n)), mp.mpf(n)
            mu = mp.findroot(lambda z: mp.log(-log_phi(z)) + ln,
                             (mp.mpf(-2), mp.sqrt(2 * ln) + 1), solver="bisect", verify=False)
            s = 1 / mp.sqrt(2 * ln)
            right = mp.quad(lambda z: -mp.expm1(nn * log_phi(z)),
                            [mu + k * s for k in range(0, 80, 4)] + [mp.inf])
            left = mp.quad(lambda z: mp.exp(nn * log_phi(z)),
                           [-mp.inf] + [mu - k * s for k in range(40, -1, -4)])
            return float(mu + right - left)

        r = np.array([ref(n) for n in sub])
        ours_err = np.max(np.abs(expected_max_normal(sub) / r - 1))
        peer_err = np.max(np.abs(np.array([_quad_one(n) for n in sub]) / r - 1))
        return {"max rel error vs mpmath (ours / quad)": f"{ours_err:.1e} / {peer_err:.1e}"}

    return [Case(f"expected_max_normal[{count}]", ours, peer,
                 "scipy.integrate.quad, one n at a time", work=count, work_unit="n",
                 extra=None if smoke else accuracy, repeats=3)]
