"""A geometric program solved by Newton's method on its KKT equations, from a cold start.

The fast path of ``method="auto"`` for a geometric program without a closed
form (:mod:`._allocate`): about ten Newton steps on a system of ``n + 1``
equations cost less than one conic solve through cvxpy (whose canonicalisation
alone is a millisecond), and the result is accepted only with the same KKT
certificate every allocation carries -- otherwise cvxpy solves the problem, and
stays the solver of record.

**Problem.**  In ``u = log x`` both the objective ``F(u) = log P(u)`` and the
main constraint ``G(u) = log C(u) - log B <= 0`` (for min-cost the two swap and
the right-hand side is ``log(target - floor)``) are log-sum-exps of affine
functions, convex and smooth (Boyd, Kim, Vandenberghe & Hassibi 2007, "A
tutorial on geometric programming", §2.5), with box bounds ``lo <= u <= hi``.
At the optimum the main constraint is active (every costed variable lowers
the loss: :class:`~._allocate.AllocationProblem` refuses a variable that would
be free), so with ``S`` the set of coordinates held at a bound the KKT
conditions are the ``|free| + 1`` equations

    dF/du_i + lam dG/du_i = 0  (i free),   G(u) = 0,   lam >= 0,

and the sign conditions on the bound multipliers ``mu_i = +-(dF/du_i + lam
dG/du_i)`` of the held coordinates.

**Start.**  Each term of the main constraint takes an equal share of its
right-hand side, ``A_g u = rhs - log m - b_g`` (solved where the constraint has
as many terms as variables, by least squares otherwise), clipped into the box;
then the coordinates that can move go together along ``+1`` (or ``-1``) until
``G = 0`` (a one-dimensional convex, monotone equation, by scalar Newton).

**Steps.**  Newton on the bordered system ``[[H_F + lam H_G, dG], [dG^T, 0]]``
with exact log-sum-exp Hessians ``A^T (diag w - w w^T) A`` (Boyd & Vandenberghe
2004, §3.1.5), backtracking on the residual norm (Nocedal & Wright 2006,
§11.2) -- the iteration of :mod:`._warm_newton`, written here over one stacked
term matrix so a step costs a few small array operations.  The active set is
found by the primal active-set loop (Nocedal & Wright 2006, §16.5): a free
coordinate that leaves the box is held at the edge it crossed, a held one whose
multiplier has the wrong sign is released.

**Certificate.**  The caller grades the point with the problem's own KKT
residual (:func:`~rlscale.optimize.kkt_residual`: stationarity with NNLS
multipliers and feasibility) and keeps it only at ``<= 1e-12``: for a convex
problem a feasible point meeting the KKT conditions with non-negative
multipliers is a global optimum (Boyd & Vandenberghe 2004, §5.5.3).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.linalg.lapack import dgesv

__all__ = ["NEWTON_KKT", "NewtonGP", "newton_gp"]

#: Largest KKT residual at which a Newton point is kept (cvxpy solves the problem otherwise).
NEWTON_KKT = 1e-12

#: Newton steps per active set before giving up on it.
_STEPS = 40
#: Rounds of the active-set loop (each one Newton solve).
_ROUNDS = 8
#: Smallest step fraction of the backtracking before giving up.
_MIN_STEP = 1e-4


class NewtonGP:
    """One problem and sense, compiled for Newton: the stacked term matrix and the box.

    Attributes
    ----------
    A, b : array
        ``log`` of every term is ``A @ u + b``: the objective's ``nf`` terms
        first, then the main constraint's.
    nf : int
        Number of objective terms.
    lo, hi : array
        The box in ``u`` (``-inf``/``inf`` where open).
    """

    def __init__(self, space: Any) -> None:
        (A_f, b_f), (A_g, b_g) = space.f, space.g
        self.A = np.ascontiguousarray(np.vstack([A_f, A_g]), dtype=np.float64)
        self.At = np.ascontiguousarray(self.A.T)
        self.b = np.concatenate([b_f, b_g]).astype(np.float64)
        self.A_g, self.b_g = np.asarray(A_g, dtype=np.float64), np.asarray(b_g, np.float64)
        self.nf = nf = A_f.shape[0]
        self.blocks = np.zeros((2, self.A.shape[0]))  # row 0: F's terms, row 1: G's
        self.blocks[0, :nf] = 1.0
        self.blocks[1, nf:] = 1.0
        self.lo = np.asarray(space.lo, dtype=np.float64)
        self.hi = np.asarray(space.hi, dtype=np.float64)
        self.n = self.A.shape[1]

    # -- evaluations (one stacked product; the blocks normalised apart) -------------
    def _eval(self, u: np.ndarray) -> tuple[float, float, np.ndarray, float, float]:
        """``F(u)``, ``G(u)`` (without the right-hand side) and what :meth:`_derivs` needs:
        the terms' exponentials (each block shifted by its maximum) and the block sums."""
        z = self.A @ u + self.b
        nf = self.nf
        zf, zg = z[:nf].max(), z[nf:].max()
        z[:nf] -= zf
        z[nf:] -= zg
        w = np.exp(z)
        sf, sg = w[:nf].sum(), w[nf:].sum()
        return zf + math.log(sf), zg + math.log(sg), w, sf, sg

    def _derivs(self, w: np.ndarray, sf: float, sg: float, lam: float, hessian: bool
                ) -> tuple[np.ndarray, np.ndarray | None]:
        """Gradients (rows ``dF``, ``dG``) and the Hessian of ``F + lam G``."""
        W = self.blocks * w
        W[0] /= sf
        W[1] /= sg
        grads = W @ self.A
        if not hessian:
            return grads, None
        q = W[0] + lam * W[1]
        H = (self.At * q) @ self.A
        # A^T (diag w - w w^T) A per block: the outer products of the two gradients.
        H -= grads[0][:, None] * grads[0] + lam * (grads[1][:, None] * grads[1])
        return grads, H

    # -- one active set ----------------------------------------------------------------
    def _newton(self, u: np.ndarray, held: np.ndarray, rhs: float
                ) -> tuple[np.ndarray, float, np.ndarray | None, int, int] | None:
        """SQP from ``u`` (in the box) with the ``held`` coordinates fixed.

        Returns ``(u, lam, stat, steps, -1)`` at the active set's KKT point
        (``stat = dF + lam dG``), ``(u, lam, None, steps, i)`` where a step
        reached the bound of free coordinate ``i`` (the caller holds it), or
        ``None`` when no acceptable step is found.

        The step solves the bordered Newton system; its length is chosen by
        backtracking on the l1 merit ``F + rho |G|`` (Nocedal & Wright 2006,
        §18.3, with ``rho`` above the multiplier), which accepts the full Newton
        steps that a residual-norm merit refuses far from the optimum (a
        log-sum-exp's curvature changes by orders of magnitude along a step);
        near the solution (``|r| <= 1e-9``) steps are full (no Maratos effect),
        and no step leaves the box.
        """
        n = self.n
        free = np.where(held, 0.0, 1.0)
        mask = np.outer(free, free)
        ident = np.diag(1.0 - free)
        f_val, g_val, w, sf, sg = self._eval(u)
        grads, _ = self._derivs(w, sf, sg, 0.0, False)
        dg = grads[1] * free
        dd = float(dg @ dg)
        lam = max(-float((grads[0] * free) @ dg) / dd, 0.0) if dd > 0 else 0.0
        grads, H = self._derivs(w, sf, sg, lam, True)
        rho = 0.0
        r = np.empty(n + 1)
        K = np.zeros((n + 1, n + 1))
        lo, hi = self.lo, self.hi
        for steps in range(1, _STEPS + 1):
            r[:n] = (grads[0] + lam * grads[1]) * free
            r[n] = g_val - rhs
            K[:n, :n] = H * mask + ident
            K[:n, n] = K[n, :n] = grads[1] * free
            _, _, step, info = dgesv(K, -r)
            big = float(np.abs(step).max())
            if info != 0 or not big < math.inf:
                return None
            d = step[:n]
            lam_new = lam + float(step[n])
            if big <= 1e-11 * max(1.0, float(np.abs(u).max()), abs(lam)):
                u = u + d
                f_val, g_val, w, sf, sg = self._eval(u)
                grads, _ = self._derivs(w, sf, sg, lam_new, False)
                return u, lam_new, grads[0] + lam_new * grads[1], steps, -1
            # Stay in the box: the longest step that keeps the free coordinates inside.
            room = np.where(d > 0, (hi - u) / d, (lo - u) / d)
            room[(d == 0) | (free == 0)] = math.inf
            hit = int(room.argmin())
            t_max = min(1.0, float(room[hit]))
            t = t_max
            if float(r @ r) > 1e-18:
                rho = max(rho, 1.5 * abs(lam_new) + 1e-8)
                viol = abs(r[n])
                merit = f_val + rho * viol
                slope = min(float(grads[0] @ d) - rho * viol, 0.0)  # the merit's derivative
                while True:
                    cand = u + t * d
                    got = self._eval(cand)
                    if got[0] + rho * abs(got[1] - rhs) <= merit + 1e-4 * t * slope:
                        break
                    t *= 0.5
                    if t < _MIN_STEP:
                        return None
            else:
                cand = u + t * d
                got = self._eval(cand)
            u = cand
            lam = lam + t * (lam_new - lam)
            if t == t_max < 1.0:  # a bound reached: hold it and start again from here
                u[hit] = hi[hit] if d[hit] > 0 else lo[hit]
                return u, lam, None, steps, hit
            f_val, g_val, w, sf, sg = got
            grads, H = self._derivs(w, sf, sg, lam, True)
        return None

    # -- start and active-set loop ---------------------------------------------------
    def start(self, rhs: float) -> np.ndarray:
        """The cold start: equal shares of the main constraint, then onto ``G = 0``."""
        m = self.A_g.shape[0]
        y = rhs - math.log(m) - self.b_g
        u = None
        if m == self.n:
            try:
                u = np.linalg.solve(self.A_g, y)
            except np.linalg.LinAlgError:  # singular: least squares below
                u = None
        if u is None:
            u = np.linalg.lstsq(self.A_g, y, rcond=None)[0]
        u = np.clip(u, self.lo, self.hi)
        # Move the coordinates that can move along +-1 until G = 0: with c = A_g d, G along
        # the line is log sum exp(z_j + s c_j), convex and monotone in s (scalar Newton).
        z = self.A_g @ u + self.b_g
        g = float(np.log(np.exp(z - z.max()).sum()) + z.max()) - rhs
        grow = g < 0
        d = np.where(u < self.hi, 1.0, 0.0) if grow else np.where(u > self.lo, -1.0, 0.0)
        c = (self.A_g @ d).tolist()
        zs = z.tolist()
        s = 0.0
        for _ in range(50):
            terms = [zj + s * cj for zj, cj in zip(zs, c)]
            top = max(terms)
            e = [math.exp(t - top) for t in terms]
            tot = sum(e)
            val = top + math.log(tot) - rhs
            slope = sum(ej * cj for ej, cj in zip(e, c)) / tot
            if abs(val) <= 1e-13 or not slope:
                break
            s -= val / slope
            if not math.isfinite(s):
                return u
        return np.clip(u + s * d, self.lo, self.hi)

    def solve(self, rhs: float) -> tuple[np.ndarray, int] | None:
        """The KKT point for right-hand side ``rhs`` (a log), or ``None``; with the total
        number of Newton steps."""
        with np.errstate(all="ignore"):
            return self._solve(rhs)

    def _solve(self, rhs: float) -> tuple[np.ndarray, int] | None:
        first = self.start(rhs)
        if not np.all(np.isfinite(first)):
            return None
        u = first
        lo, hi = self.lo, self.hi
        at_lo = np.isfinite(lo) & (u - lo <= 1e-9 * np.maximum(1.0, np.abs(lo)))
        at_hi = np.isfinite(hi) & (hi - u <= 1e-9 * np.maximum(1.0, np.abs(hi))) & ~at_lo
        total, released = 0, False
        for _ in range(_ROUNDS):
            held = at_lo | at_hi
            u = np.where(at_lo, lo, np.where(at_hi, hi, u))
            if held.all():
                return None
            got = self._newton(u, held, rhs)
            if got is None or got[1] < 0:
                if not held.any() or released:
                    return None
                # This active set has no KKT point: start again with every bound free.
                at_lo[:], at_hi[:], released, u = False, False, True, first
                continue
            u, _, stat, steps, hit = got
            total += steps
            if hit >= 0:
                (at_hi if u[hit] == hi[hit] else at_lo)[hit] = True
                continue
            wrong = (at_lo & (stat < 0)) | (at_hi & (stat > 0))
            if wrong.any():
                # Release the held coordinate whose multiplier is most negative.
                i = int(np.argmax(np.where(wrong, np.abs(stat), -1.0)))
                at_lo[i] = at_hi[i] = False
                continue
            return u, total
        return None


def newton_gp(problem: Any, sense: Any, bound: float) -> tuple[dict[str, float], int] | None:
    """Newton's KKT point of a geometric ``problem`` at ``bound`` (uncertified), with its
    number of Newton steps, or ``None`` (see the module docstring)."""
    space = problem._space(sense, bound)(None)
    kernel = problem._kernels.get(sense.name)
    if kernel is None:
        kernel = problem._kernels[sense.name] = NewtonGP(space)
    got = kernel.solve(space.log_rhs)
    if got is None:
        return None
    u, steps = got
    return dict(zip(problem.variables, np.exp(u).tolist())), steps
