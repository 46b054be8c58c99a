"""rlscale.proofs: checking cost against plain sympy and uncertified quadrature.

- Refuting a false identity: rlscale's Identity step fails it on a 50-digit
  numeric witness before simplifying; the peer is ``sympy.simplify(lhs - rhs)``
  (what a naive checker runs, and what takes minutes on the Chinchilla
  wrong-exponent mutation).
- Certified lower bounds of e(n) for n = 3..63 (interval arithmetic with a
  series enclosure of Φ) against mpmath.quad of the same integrals, which is
  accurate but certifies nothing: the price of rigour.
- The whole of ``rlscale prove`` (no peer; the issue asks for < 60 s).
"""

from __future__ import annotations

import sympy as sp

from benchmarks._harness import Case


def _false_identity(smoke: bool):
    a, b, c = sp.symbols("a b c", positive=True)
    power = 2 if smoke else 3
    lhs = sp.expand((a + b + c) ** (power + 3)) * sp.exp(a) / (a + b) ** power
    rhs = (a + b + c) ** (power + 3) * sp.exp(a) / (a + b) ** power + sp.Rational(1, 10**6)
    return lhs, rhs


def cases(smoke: bool) -> list[Case]:
    from rlscale.proofs import Identity, check_proofs
    from rlscale.proofs._emax_lower import emax_lower_bound

    lhs, rhs = _false_identity(smoke)
    step = Identity("false", lhs, rhs)

    def ours_identity() -> None:
        assert step.check().status == "failed"

    def peer_identity() -> None:
        assert sp.simplify(lhs - rhs) != 0

    top = 8 if smoke else 64

    def ours_emax() -> None:
        for n in range(3, top):
            emax_lower_bound(n)

    def peer_emax() -> None:
        import mpmath

        for n in range(3, top):
            mpmath.quad(lambda z, n=n: 1 - mpmath.ncdf(z) ** n - mpmath.ncdf(-z) ** n,
                        [0, 2, 4, 8])

    out = [
        Case("refute a false identity", ours_identity, peer_identity, "sympy.simplify(lhs - rhs)",
             repeats=3 if smoke else 5),
        Case(f"e(n) lower bounds, n=3..{top - 1}", ours_emax, peer_emax,
             "mpmath.quad, uncertified", work=top - 3, work_unit="n", repeats=3),
    ]
    if not smoke:
        out.append(Case("rlscale prove (all proofs)", lambda: check_proofs(), None, repeats=3))
    return out
