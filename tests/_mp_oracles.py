"""mpmath oracles shared by the Gaussian test files (independent of rlscale's code).

The precision is the caller's: each test module sets ``mpmath.mp.dps`` itself.
"""

from __future__ import annotations

import mpmath as mp


def log_phi(z):
    """log Φ(z) without cancellation on either side."""
    return mp.log1p(-mp.ncdf(-z)) if z > 0 else mp.log(mp.ncdf(z))


def emax_mp(log_n) -> float:
    """E[max of n standard normals] for n = exp(log_n), by quadrature.

    For n < 2, e(n) = ∫ z φ (n Φ^{n-1} − 1) dz.  For n >= 2 the integral is split
    at μ with n log Φ(μ) = −1 (no cancellation): e(n) = μ + ∫_μ^∞ (1 − Φ^n) −
    ∫_{−∞}^μ Φ^n.
    """
    ln = mp.mpf(log_n)
    n = mp.exp(ln)
    if n < 2:
        f = lambda z: z * mp.npdf(z) * mp.expm1(ln + (n - 1) * log_phi(z))  # noqa: E731
        return float(mp.quad(f, [-mp.inf, -8, -4, -2, 0, 2, 4, 8, mp.inf]))
    mu = mp.findroot(lambda z: mp.log(-log_phi(z)) + ln, (mp.mpf(-2), mp.sqrt(2 * ln) + 1),
                     solver="bisect", verify=False)
    s = 1 / mp.sqrt(2 * ln)
    right = mp.quad(lambda z: -mp.expm1(n * log_phi(z)),
                    [mu + k * s for k in range(0, 80, 4)] + [mp.inf])
    left = mp.quad(lambda z: mp.exp(n * log_phi(z)),
                   [-mp.inf] + [mu - k * s for k in range(40, -1, -4)])
    return float(mu + right - left)
