"""Data-derived starts for expression laws: linear parameters solved for, the others
profiled and gridded.

A law written by a user has no grid of its own, and default search ranges are
what made ``E + A/N**alpha + B/D**beta`` on the Chinchilla points land at
α = 1004 (issue 30).  The starts here are built from the data instead, the way
the built-in fitter builds its own (Hoffmann et al. 2022, appendix D.2;
Golub & Pereyra 1973, "The differentiation of pseudo-inverses and nonlinear
least squares problems whose variables separate", *SIAM J. Numer. Anal.* 10):

1. **Variable projection.**  The laws are affine in some parameters
   (``E, A, B`` above: :meth:`ExpressionProblem.linear_parameters`).  For any
   values of the others (``φ``) those are solved for by linear least squares on
   *relative* residuals ``(f − y)/y`` (a first-order stand-in for log
   residuals; plain residuals for ``residuals="raw"``), all candidates in one
   batched solve of the normal equations with columns scaled to unit norm and a
   ridge of ``1e-10`` of the trace.  So a candidate is a value of ``φ`` only.
2. **Profiles.**  Each nonlinear parameter is scanned alone over a signed
   logarithmic grid (``0, ±10^k`` for ``k = −3, −2.75, …, 3``) and the data's
   own scales (each axis's geometric mean times ``10^−1, 1, 10`` and their
   reciprocals, both signs: a parameter that divides an axis lives near its
   scale), inside its declared range where it has one, with the others at their
   current values,
   the linear ones solved for at every point, and set to its best value;
   :data:`SWEEPS` passes over all of them (coordinate descent on the projected
   objective).  This finds the magnitude of a scale parameter (``A ≈ 10^8``
   inside ``(A/N)^α``) without knowing its role.
3. **Candidates.**  A quarter of ``budget`` each: the product of each
   parameter's :data:`TOP` best profile values, the product of ``grid`` values
   over declared ranges, random perturbations of the profile optimum (a decade
   in log-magnitude, a sign flip one time in ten), and *moderate* draws
   independent of the profiles (magnitudes ``10^U(−2, 1)`` of either sign);
   products larger than their share are seeded subsamples.  Each is completed by
   variable projection and ranked by the true objective.  The screen of
   :func:`rlscale.optimize._fit_starts.refine` takes the best distinct
   candidates *and* the best distinct moderate ones: a profile, which scans one
   parameter with the others fixed, can prefer a degenerate limit (a linear
   coefficient going to 0 while its term's parameters run off, the term then a
   smooth stand-in for another -- seen on a learning-rate loss surface and a
   domain-mixture law), and the moderate starts still reach the basin.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from rlscale.optimize._fit_expr_problem import ExpressionProblem

__all__: list[str] = []

#: Coordinate-descent passes of the profiles.
SWEEPS = 2
#: Best profile values per parameter kept for the product of candidates.
TOP = 3
#: The signed logarithmic grid of an undeclared parameter's profile.
PROFILE_GRID = np.concatenate([[0.0], 10.0 ** np.arange(-3.0, 3.01, 0.25),
                               -(10.0 ** np.arange(-3.0, 3.01, 0.25))])
#: Where an undeclared nonlinear parameter starts before its profile.
REFERENCE = 0.5
#: Random perturbations of the profile optimum per nonlinear parameter.
PERTURBATIONS = 1024


def project(prob: ExpressionProblem, linear: list[int], theta: np.ndarray) -> np.ndarray:
    """``theta`` ``(C, p)`` with its linear columns solved for (module docstring, 1)."""
    theta = np.array(theta, dtype=np.float64)
    if not linear:
        return theta
    C = theta.shape[0]
    base = theta.copy()
    base[:, linear] = 0.0
    f0, J = prob.law_values(base, jac=True)
    G = J[:, :, linear]                                   # (C, N, K): ∂f/∂c_k
    y = prob.data.y.T.ravel()                             # outputs stacked, as f
    scale = 1.0 / np.abs(y) if prob.residuals == "log" else np.full(y.size, 1.0 / max(
        float(np.abs(y).max()), 1e-300))
    ok = np.isfinite(f0) & np.all(np.isfinite(G), axis=2)
    rhs = np.where(ok, (y - f0) * scale, 0.0)
    A = np.where(ok[:, :, None], G * scale[None, :, None], 0.0)
    norms = np.sqrt(np.einsum("cnk,cnk->ck", A, A))
    norms = np.where(norms > 0, norms, 1.0)
    A = A / norms[:, None, :]
    M = np.einsum("cnk,cnl->ckl", A, A)
    K = len(linear)
    M += 1e-10 * np.maximum(np.einsum("ckk->c", M), 1e-300)[:, None, None] * np.eye(K)
    b = np.einsum("cnk,cn->ck", A, rhs)
    try:
        with np.errstate(all="ignore"):
            coef = np.linalg.solve(M, b[:, :, None])[:, :, 0] / norms
    except np.linalg.LinAlgError:
        coef = np.zeros((C, K))
    coef = np.where(np.isfinite(coef), coef, 0.0)
    for k, j in enumerate(linear):
        lo, hi = _range_of(prob, j)
        if lo >= 0 or prob.kinds[j] == "log":  # non-negative: tiny positive, not zero
            coef[:, k] = np.where(coef[:, k] > 0, coef[:, k], _tiny(prob, j))
        coef[:, k] = np.clip(coef[:, k], lo, hi)
    theta[:, linear] = coef
    return theta


def _tiny(prob: ExpressionProblem, j: int) -> float:
    lo, _ = _range_of(prob, j)
    return max(lo, 1e-12) if lo > 0 else 1e-12


def _range_of(prob: ExpressionProblem, j: int) -> tuple[float, float]:
    name = prob.names[j]
    if name in prob.declared and prob.ranges == "bounds":
        return prob.declared[name]
    return (-math.inf, math.inf)


def _scales(prob: ExpressionProblem) -> np.ndarray:
    """Magnitudes the data suggest for a scale parameter: each axis's geometric mean (of
    its positive values) times 10^-1, 1, 10, and their reciprocals -- a parameter that
    divides an axis (``(a_D/D)^b``, ``A/(N ...)``) lives near the axis's scale."""
    out = []
    for v in prob.data.x.values():
        pos = v[v > 0]
        if pos.size:
            gm = float(np.exp(np.mean(np.log(pos))))
            out += [gm * f for f in (0.1, 1.0, 10.0)] + [1.0 / (gm * f) for f in
                                                          (0.1, 1.0, 10.0)]
    arr = np.array(out)
    return arr[np.isfinite(arr) & (arr > 0)]


def _profile_values(prob: ExpressionProblem, j: int, grid: int) -> np.ndarray:
    """The values scanned for nonlinear parameter ``j``: the signed log grid and the
    data's scales (both signs), inside its declared range where it has one."""
    name = prob.names[j]
    scales = _scales(prob)
    full = np.unique(np.concatenate([PROFILE_GRID, scales, -scales]))
    if name in prob.declared:
        lo, hi = prob.declared[name]
        if math.isfinite(lo) and math.isfinite(hi):
            n = max(grid, 25)
            return (np.geomspace(lo, hi, n) if lo > 0 else np.linspace(lo, hi, n))
        values = full[(lo <= full) & (hi >= full)]
        if lo > 0 or (lo == 0 and not math.isfinite(hi)):
            values = values[values > 0]
        return values if values.size else np.array([lo if math.isfinite(lo) else hi])
    return full


def _grid_values(prob: ExpressionProblem, j: int, grid: int) -> np.ndarray | None:
    """``grid`` values over parameter ``j``'s declared finite range (None without one)."""
    name = prob.names[j]
    if name not in prob.declared:
        return None
    lo, hi = prob.declared[name]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return np.geomspace(lo, hi, grid) if lo > 0 else np.linspace(lo, hi, grid)


def _reference(prob: ExpressionProblem, j: int) -> float:
    name = prob.names[j]
    if name in prob.declared:
        lo, hi = prob.declared[name]
        if math.isfinite(lo) and math.isfinite(hi):
            return math.sqrt(lo * hi) if lo > 0 else 0.5 * (lo + hi)
        if lo > 0:
            return max(lo, REFERENCE) if not math.isfinite(hi) else lo
        return float(np.clip(REFERENCE, lo, hi))
    return REFERENCE


def candidates(prob: ExpressionProblem, linear: list[int], loss: str, delta: float,
               grid: int, budget: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate natural parameters ``(C, p)``, best first, their objectives, and which
    are moderate draws (the screen keeps the best of those too)."""
    nonlinear = [j for j in range(prob.p) if j not in linear]
    ref = np.array([_reference(prob, j) for j in range(prob.p)])

    def score(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        full = project(prob, linear, theta)
        return full, prob.objective(prob.rows(full), loss, delta)

    pool = [score(ref[None, :])]
    tops: dict[int, np.ndarray] = {}
    best = ref.copy()
    best_f = float(pool[0][1][0])
    for _ in range(SWEEPS if nonlinear else 0):
        for j in nonlinear:
            values = _profile_values(prob, j, grid)
            rows = np.repeat(best[None, :], values.size, axis=0)
            rows[:, j] = values
            full, f = score(rows)
            pool.append((full, f))
            order = np.argsort(f, kind="stable")
            finite = order[np.isfinite(f[order])]
            if finite.size:
                tops[j] = values[finite[:TOP]]
                if f[finite[0]] < best_f:
                    best_f = float(f[finite[0]])
                    best = full[finite[0]].copy()
    rows: list[np.ndarray] = []
    moderate_rows: np.ndarray | None = None
    if nonlinear:
        quarter = max(budget // 4, 1)
        # (a) the product of each parameter's best profile values
        sets = [tops.get(j, np.array([best[j]])) for j in nonlinear]
        rows.append(_product_rows(best, nonlinear, sets, quarter, rng))
        # (b) the product of grid values over declared ranges
        gsets = [_grid_values(prob, j, grid) for j in nonlinear]
        if any(g is not None for g in gsets):
            gsets = [g if g is not None else np.array([best[j]])
                     for g, j in zip(gsets, nonlinear)]
            rows.append(_product_rows(best, nonlinear, gsets, quarter, rng))
        # (c) perturbations of the profile optimum: a decade in log-magnitude, sign flips;
        # PERTURBATIONS per nonlinear parameter, within the budget
        n_pert = max(min(quarter, PERTURBATIONS * len(nonlinear)), 0)
        pert = np.repeat(best[None, :], n_pert, axis=0)
        for j in nonlinear:
            v = best[j] if best[j] != 0 else REFERENCE * 1e-2
            mag = np.abs(v) * 10.0 ** rng.normal(0.0, 1.0, n_pert)
            sign = np.where(rng.random(n_pert) < 0.1, -np.sign(v), np.sign(v))
            lo, hi = _range_of(prob, j)
            pert[:, j] = np.clip(sign * mag, lo, hi)
        rows.append(pert)
        # (d) moderate draws, independent of the profiles: magnitudes 10^U(-2, 1) of
        # either sign (a tenth exactly 0), uniform in a declared finite range
        moderate_rows = _moderate(prob, ref, nonlinear, max(budget - sum(map(len, rows)),
                                                            quarter), rng)
    for r in rows:
        pool.append(score(r))
    n_other = sum(len(t) for t, _ in pool)
    if moderate_rows is not None:
        pool.append(score(moderate_rows))
    theta = np.concatenate([t for t, _ in pool])
    f = np.concatenate([v for _, v in pool])
    moderate = np.arange(len(f)) >= n_other
    order = np.argsort(f, kind="stable")
    order = order[np.isfinite(f[order])]
    return theta[order], f[order], moderate[order]


def _moderate(prob: ExpressionProblem, base: np.ndarray, cols: list[int], n: int,
              rng: np.random.Generator) -> np.ndarray:
    """``n`` rows of ``base`` with ``cols`` drawn at moderate magnitudes (see candidates):
    starts that a profile cannot mislead.  A profile scans one parameter with the others
    fixed, and where a linear coefficient can vanish it may prefer a degenerate limit
    (``c → 0`` with its term's parameters running off, the term a smooth stand-in for
    another); a screen that keeps the best of these as well still reaches the basin."""
    out = np.repeat(base[None, :], n, axis=0)
    for j in cols:
        name = prob.names[j]
        lo, hi = prob.declared.get(name, (-math.inf, math.inf))
        if math.isfinite(lo) and math.isfinite(hi):
            out[:, j] = (np.exp(rng.uniform(math.log(lo), math.log(hi), n)) if lo > 0
                         else rng.uniform(lo, hi, n))
            continue
        v = 10.0 ** rng.uniform(-2.0, 1.0, n) * rng.choice([-1.0, 1.0], n)
        v[rng.random(n) < 0.1] = 0.0
        out[:, j] = np.clip(v, lo, hi)
    return out


def _product_rows(base: np.ndarray, cols: list[int], sets: list[np.ndarray], cap: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Rows of ``base`` with ``cols`` set to the product of ``sets`` (a seeded
    subsample of at most ``cap`` rows when the product is larger)."""
    sizes = [len(s) for s in sets]
    total = math.prod(sizes)
    cap = max(cap, 1)
    if total <= cap:
        combos = np.array(list(itertools.product(*sets)), dtype=np.float64)
    else:
        combos = np.column_stack([s[rng.integers(0, len(s), cap)] for s in sets])
    out = np.repeat(base[None, :], len(combos), axis=0)
    out[:, cols] = combos
    return out
