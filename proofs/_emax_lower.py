"""Proof: the expected maximum of n standard Gaussians is at least √(ln n/(π ln 2)).

Statement.  For every real n ≥ 2 (e(n) is the mean of the law with CDF
Φ^n; for integers the maximum of n iid N(0, 1)),
e(n) ≥ c·√(ln n) with c = 1/√(π ln 2) ≈ 0.6777; the bound is tight at n = 2,
where e(2) = 1/√π.

Derivation (four ranges; every computation is machine-checked, the classical
facts it uses — concavity of e in n, the layer-cake formula, the Φ series, the
elementary tail inequalities — are cited steps, marked †).

* n = 2: sympy integrates e(2) = ∫ z·2φ(z)Φ(z) dz = 1/√π = c·√(ln 2).  With
  e(1) = 0 and concavity this also gives the chord bound e(n) ≥ (n − 1)/√π on
  [1, 2], where c√(ln n) is not a lower bound (e(n) ~ (n − 1)·const there).
* 2 ≤ n ≤ 3: e is concave in n and c√(ln n) is concave too, so it suffices
  that the chord slope e(3) − e(2) exceeds the bound's slope at 2 (certified).
* 3 ≤ n ≤ N0 (N0 = 64): a certified quadrature on boxes [n1, n2].  By the
  layer-cake formula e(n) = ∫_0^∞ g_n(z) dz, g_n = 1 − Φ^n − (1 − Φ)^n ≥ 0;
  on a grid cell [a, b] g_n ≥ 1 − Φ(b)^n − (1 − Φ(a))^n, which only grows
  with n, so its value at n1 bounds e on the whole box, and dropping the
  tail beyond T only lowers the integral.  Φ is enclosed at the grid points
  by the series Φ(z) = ½ + φ(z)·Σ_k z^(2k+1)/(2k+1)!! with a geometric bound
  on the remainder, all in outward-rounded interval arithmetic (mpmath.iv),
  so each lower bound is rigorous; it must beat c√(ln n2).
* n ≥ N0: an analytic argument.  With t = √(ln n),
  e(n) ≥ t·P(M ≥ t) − E[max(−M, 0)], P(M ≥ t) ≥ 1 − exp(−n·Q(t)) and
  E[max(−M, 0)] = ∫_0^∞ Φ(−s)^n ds ≤ 2^(1−n)/√(2π).  Gordon's inequality
  Q(t) ≥ φ(t)·t/(1 + t²) (proved here from its derivative and limit) and
  n·φ(√(ln n)) = √n/√(2π) give n·Q(t) ≥ A(t) = e^(t²/2)·t/((1 + t²)√(2π)),
  which increases in t.  Hence e(n)/√(ln n) ≥ 1 − e^(−A(t)) −
  2^(1−n)/(√(2π)·t), increasing in n, and its value at N0 (certified by
  interval arithmetic) exceeds c.

Source: Kamath, "Bounds on the expectation of the maximum of samples from a
Gaussian" states the bound; the proof here is rlscale's own.
"""

from __future__ import annotations

import functools

import sympy as sp

from rlscale.proofs._core import (
    Cited,
    Identity,
    IntervalCertificate,
    Limit,
    PolynomialInequality,
    Proof,
    Sign,
    interval_eval,
)

__all__ = ["NAME", "build", "emax_lower_bound", "gaussian_cdf_enclosures"]

NAME = "emax-lower"
CONSTANT = 1 / sp.sqrt(sp.pi * sp.log(2))
_GRID_STEP = sp.Rational(1, 32)
_GRID_END = 6


def gaussian_cdf_enclosures(step: sp.Rational, count: int) -> list:
    """Rigorous ``mpmath.iv`` enclosures of Φ(j·step) for j = 0..count.

    Uses Φ(z) = ½ + φ(z)·S(z), S(z) = Σ_k z^(2k+1)/(2k+1)!!, summed until the
    term ratio z²/(2k+3) is below ½ and the term negligible; the remainder is
    bounded by the geometric series of the last ratio.

    Examples
    --------
    >>> import sympy as sp
    >>> enc = gaussian_cdf_enclosures(sp.Rational(1, 2), 4)
    >>> float(enc[2].a) <= 0.8413447460685429 <= float(enc[2].b)
    True
    """
    from mpmath import iv

    h = iv.mpf(int(sp.Rational(step).p)) / int(sp.Rational(step).q)
    half, one = iv.mpf(1) / 2, iv.mpf(1)
    root = iv.sqrt(2 * iv.pi)
    out = [half]
    for j in range(1, count + 1):
        z = h * j
        z2 = z * z
        term, total, k = z, z, 0
        while True:
            k += 1
            term = term * z2 / (2 * k + 1)
            total = total + term
            ratio = z2 / (2 * k + 3)
            if ratio.b < 0.5 and term.b < 1e-30 * total.a:
                break
        ratio = z2 / (2 * k + 3)
        tail = term * ratio / (one - ratio)
        series = iv.mpf([total.a, (total + tail).b])
        cdf = half + iv.exp(-z2 / 2) / root * series
        out.append(iv.mpf([max(cdf.a, half.a), min(cdf.b, one.b)]))
    return out


@functools.lru_cache(maxsize=8)
def _cdf_upper_ends(step: sp.Rational, count: int) -> tuple[list, list]:
    """Upper ends of the enclosures of Φ(z_j) and of 1 − Φ(z_j), as point intervals."""
    from mpmath import iv

    cdf = gaussian_cdf_enclosures(step, count)
    one = iv.mpf(1)
    return [iv.mpf(p.b) for p in cdf], [iv.mpf((one - p).b) for p in cdf]


def emax_lower_bound(n: float, step: sp.Rational = _GRID_STEP, end: int = _GRID_END) -> float:
    """A certified lower bound of e(m) valid for every real m >= n >= 1.

    e(m) = ∫_0^∞ [1 − Φ^m − (1 − Φ)^m] dz and, on a cell [a, b] of the grid,
    the integrand is at least 1 − Φ(b)^m − (1 − Φ(a))^m ≥ 1 − Φ(b)^n −
    (1 − Φ(a))^n (powers of numbers in [0, 1] fall as the exponent grows);
    the part beyond ``end`` is dropped (the integrand is ≥ 0).  Returned as
    the lower end of an outward-rounded interval sum, so it is rigorous.

    Examples
    --------
    >>> 0.80 < emax_lower_bound(3) < 0.8463  # e(3) = 3/(2√π) ≈ 0.84628
    True
    """
    from mpmath import iv

    step = sp.Rational(step)
    count = int(sp.ceiling(sp.Integer(end) / step))
    cdf_hi, tail_hi = _cdf_upper_ends(step, count)
    one, power = iv.mpf(1), iv.mpf(n)
    total = iv.mpf(0)
    for i in range(count):
        total = total + (one - cdf_hi[i + 1] ** power - tail_hi[i] ** power)
    return float((total * (iv.mpf(int(step.p)) / int(step.q))).a)


def _boxes(start: float, stop: float, growth: float) -> list[tuple[float, float]]:
    """Consecutive boxes [n1, n2] covering [start, stop] exactly (shared float ends)."""
    out, lo = [], float(start)
    while lo < stop:
        hi = min(lo * growth, float(stop))
        out.append((lo, hi))
        lo = hi
    return out


def build(*, constant: sp.Expr = CONSTANT, tail_start: int = 64,
          grid_step: sp.Rational = _GRID_STEP, grid_end: int = _GRID_END,
          box_growth: float = 1.0625) -> Proof:
    """The lower bound on the Gaussian expected maximum, for every real n ≥ 2.

    Parameters
    ----------
    constant : sympy expression
        The constant c of the claim e(n) ≥ c√(ln n) (truth 1/√(π ln 2)).
    tail_start : int
        N0: certified quadrature covers 3 ≤ n ≤ N0, the analytic argument n ≥ N0.
    grid_step, grid_end : rational, int
        The certified quadrature grid on [0, grid_end].
    box_growth : float
        [3, N0] is covered by boxes [n1, n1·box_growth].

    Examples
    --------
    >>> build(constant=1.01 / sp.sqrt(sp.pi * sp.log(2))).step("tight-at-two").check().status
    'failed'
    """
    z, s = sp.Symbol("z", real=True), sp.Symbol("s", real=True)
    t, n, m = sp.symbols("t n m", positive=True)
    phi = lambda x: sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)  # noqa: E731
    Phi = lambda x: (1 + sp.erf(x / sp.sqrt(2))) / 2  # noqa: E731
    Q = sp.erfc(t / sp.sqrt(2)) / 2
    gordon = phi(t) * t / (1 + t**2)
    A = sp.exp(t**2 / 2) * t / ((1 + t**2) * sp.sqrt(2 * sp.pi))
    t0 = sp.sqrt(sp.log(tail_start))
    threshold = (1 - sp.exp(-A.subs(t, t0))
                 - sp.Integer(2) ** (1 - tail_start) / (sp.sqrt(2 * sp.pi) * t0) - constant)
    bound = constant * sp.sqrt(sp.log(n))
    slope_at_two = sp.diff(bound, n).subs(n, 2)

    def two_to_three():
        from mpmath import iv

        # chord of the concave e over [2, 3] against the tangent of the concave bound at 2
        e3 = iv.mpf(emax_lower_bound(3, grid_step, grid_end))
        e2 = interval_eval(1 / sp.sqrt(sp.pi), {})
        yield "n in [2, 3]", e3 - e2 - interval_eval(slope_at_two, {})

    def finite_range():
        from mpmath import iv

        c = interval_eval(constant, {})
        for lo, hi in _boxes(3, tail_start, box_growth):
            low = iv.mpf(emax_lower_bound(lo, grid_step, grid_end))
            yield f"n in [{lo:.4g}, {hi:.4g}]", low - c * iv.sqrt(iv.log(iv.mpf(hi)))

    steps = (
        Identity("two-samples", sp.Integral(z * 2 * phi(z) * Phi(z), (z, -sp.oo, sp.oo)),
                 1 / sp.sqrt(sp.pi), text="e(2) = ∫ z·2φ(z)Φ(z) dz = 1/√π"),
        Sign("tight-at-two", 1 / sp.sqrt(sp.pi) - constant * sp.sqrt(sp.log(2)), ">=",
             text="e(2) − c·√(ln 2) ≥ 0 (equality: the bound is tight at n = 2)"),
        Identity("one-sample", sp.Integral(z * phi(z), (z, -sp.oo, sp.oo)), 0,
                 text="e(1) = ∫ z·φ(z) dz = 0"),
        Cited("concavity", "e is concave in n: e''(n) = −∫ Φ(z)^n (ln Φ(z))² dz < 0 "
              "(differentiation under the layer-cake integral); a concave function lies above "
              "its chords and below its tangents, so e(n) ≥ (n − 1)·e(2) = (n − 1)/√π on "
              "[1, 2] (where c√(ln n) fails) and e lies above its chord on [2, 3]",
              "differentiation under the integral sign, Folland, Real Analysis (1999), "
              "Thm 2.27; chord and tangent inequalities of concave functions, Boyd & "
              "Vandenberghe, Convex Optimization (2004), §3.1.3"),
        Sign("bound-concave", sp.diff(bound, n, 2).subs(n, 1 + m), "<",
             text="(c·√(ln n))'' < 0 for n > 1: the bound is concave, below its tangent at "
                  "n = 2"),
        IntervalCertificate(
            "two-to-three", enclose=two_to_three,
            text="e(3) − e(2) > (d/dn) c√(ln n) at n = 2 (certified enclosures of e(2), "
                 "e(3)): the chord's slope exceeds the bound's tangent slope",
            latex_text=r"\underline{e}(3) - e(2) - \left.\tfrac{d}{dn} c\sqrt{\ln n}"
                       r"\right|_{n=2} > 0"),
        IntervalCertificate(
            "finite-range", enclose=finite_range,
            text=f"certified enclosures: Σ over cells [a, b] of (b − a)·(1 − Φ(b)^n1 − "
                 f"(1 − Φ(a))^n1), minus c√(ln n2), is > 0 on boxes [n1, n2] covering "
                 f"3 ≤ n ≤ {tail_start}",
            latex_text=rf"\underline{{e}}(n_1) - c\sqrt{{\ln n_2}} > 0,\ [n_1, n_2] "
                       rf"\subset [3, {tail_start}]"),
        Cited("layer-cake", "e(n) = ∫_0^∞ [1 − Φ(z)^n − (1 − Φ(z))^n] dz for real n ≥ 1; "
              "the integrand is ≥ 0 (p^n + (1 − p)^n ≤ 1) and on a cell [a, b] at least "
              "1 − Φ(b)^n − (1 − Φ(a))^n, which grows with n (Φ increases, p^n decreases in n), "
              "so the lower sum at n1 bounds e on [n1, n2]; Φ(z) = ½ + φ(z)Σ_k "
              "z^(2k+1)/(2k+1)!! with term ratio z²/(2k+3) encloses Φ",
              "layer-cake representation, Lieb & Loss, Analysis (2001), Thm 1.13; Abramowitz "
              "& Stegun 26.2.11"),
        Identity("gordon-derivative", sp.Derivative(Q - gordon, t),
                 -2 * phi(t) / (1 + t**2) ** 2,
                 text="d/dt [Q(t) − φ(t)t/(1+t²)] = −2φ(t)/(1+t²)²"),
        Sign("gordon-decreasing", -2 * phi(t) / (1 + t**2) ** 2, "<",
             text="the derivative is negative"),
        Limit("gordon-limit", Q - gordon, t, sp.oo, 0,
              text="Q(t) − φ(t)t/(1+t²) → 0 as t → ∞"),
        Identity("negative-part", sp.Integral(Phi(-s), (s, 0, sp.oo)), 1 / sp.sqrt(2 * sp.pi),
                 text="∫_0^∞ Φ(−s) ds = 1/√(2π)"),
        Identity("union-at-threshold", n * phi(sp.sqrt(sp.log(n))), sp.sqrt(n) / sp.sqrt(2 * sp.pi),
                 text="n·φ(√(ln n)) = √n/√(2π)"),
        Cited("tail-argument", "a function decreasing to 0 is positive, so Q(t) ≥ φ(t)t/(1+t²) "
              "(Gordon's inequality) and n·Q(t) ≥ A(t) at t = √(ln n); E[M] ≥ t·P(M ≥ t) − "
              "E[max(−M, 0)] for t ≥ 0; P(M ≥ t) = 1 − (1 − Q(t))^n ≥ 1 − e^(−nQ(t)); "
              "Φ(−s)^n ≤ 2^(1−n)Φ(−s) for s ≥ 0, so E[max(−M, 0)] ≤ 2^(1−n)/√(2π)",
              "Gordon, Ann. Math. Stat. 12 (1941) 364-366; 1 − x ≤ e^(−x)"),
        Identity("growth-rate", sp.Derivative(sp.log(A), t), t + 1 / t - 2 * t / (1 + t**2),
                 text="d/dt log A(t) = t + 1/t − 2t/(1+t²)"),
        PolynomialInequality("growth-positive", t + 1 / t - 2 * t / (1 + t**2) > 0, (),
                             text="t > 0 ⇒ t + 1/t − 2t/(1+t²) > 0: d log A/dt > 0"),
        IntervalCertificate(
            "tail-threshold", enclose=lambda: [(f"n={tail_start}", interval_eval(threshold, {}))],
            text=f"1 − e^(−A(t0)) − 2^(1−N0)/(√(2π)t0) − c > 0 at N0 = {tail_start}, "
                 "t0 = √(ln N0)",
            latex_text=sp.latex(threshold) + " > 0"),
    )
    return Proof(
        name=NAME,
        title="Lower bound on the Gaussian expected maximum",
        statement="e(n) ≥ √(ln n/(π ln 2)) for every real n ≥ 2 (so every integer n ≥ 2; "
                  "tight at n = 2), and e(n) ≥ (n − 1)/√π on 1 ≤ n ≤ 2",
        statement_latex=r"\mathbb E\big[\max_{i\le n} Z_i\big] \ge \sqrt{\frac{\ln n}"
                        r"{\pi \ln 2}},\quad n \ge 2",
        assumptions=(
            "e(n) for real n ≥ 1 is the mean of the law with CDF Φ(z)^n (for integers, the "
            "maximum of n iid N(0, 1))",
        ),
        steps=steps,
        concerns=("rlscale.theory.expected_max_normal_bounds",),
        source="Kamath, 'Bounds on the expectation of the maximum of samples from a Gaussian' "
               "(statement, integers); this proof (certified quadrature, concavity on [2, 3] "
               "and a Gordon-inequality tail) is rlscale's own and covers real n ≥ 2",
    )
