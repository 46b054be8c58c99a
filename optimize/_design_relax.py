"""Convex relaxations of budgeted D- and V-optimal design: first-order, or by cvxpy.

With fractional runs ``w`` the best design under a budget is a convex program
(Boyd & Vandenberghe 2004, §7.5.2; Kiefer 1974): for the criteria of
:mod:`rlscale.optimize._design_criteria`,

* D: maximise ``(1/S) Σ_s log det(M0_s + Σ_i w_i F_si)`` (cvxpy ``log_det``);
* V: minimise ``(1/S) Σ_s tr(L_sᵀ (M0_s + Σ_i w_i F_si)⁻¹ L_s)`` with
  ``A_s = L_s L_sᵀ`` (cvxpy ``matrix_frac``, an SDP: the Schur complement of
  ``[[M, L], [Lᵀ, T]] ⪰ 0``),

subject to ``Σ_i c_i w_i ≤ B`` and ``0 ≤ w_i ≤ u_i`` (at most ``u_i`` runs of a
candidate).  The information matrix is one affine map of ``w``
(``vec M = vec M0 + K w``), so the problem compiles once whatever the pool's
size.  Costs are divided by the budget so the constraint reads ``c'ᵀw ≤ 1``.

**Large problems** (``S·n·p²`` above :data:`MAX_DENSE`): the relaxation is
solved over a screened set of candidates -- those with the largest gain per
cost at the cost-spread design -- and then certified on the *whole* pool by
the Frank–Wolfe gap.  Where a candidate outside the set would improve the
design (its ``∂Φ/∂w_i / c_i`` beats the set's multiplier), it joins and the
problem is solved again (column generation; at most :data:`MAX_ROUNDS`
rounds).  The certificate is always computed on the full pool, so screening
can cost time, never correctness of the bound.

**Solvers.**  By default (``solver=None`` or ``"SPG"``) the relaxation is
solved by the spectral projected gradient of
:mod:`rlscale.optimize._design_spg` on the whole pool -- no conic program,
a few dozen ``O(S n m p²)`` iterations -- and accepted when its Frank–Wolfe
certificate says optimal within :data:`CERTIFIED`.  Where it does not (and
``solver`` was not ``"SPG"``), the conic path below runs: cvxpy, with the
screening for large problems.  Naming a cvxpy solver (``"CLARABEL"``,
``"SCS"``) runs only the conic path: the cross-check of the tests.

A conic solver that fails is reported (``status``, ``message``): the other
formulation and SCS are tried after Clarabel, and if all fail the relaxation
returns no weights.  Whether a solution is optimal is decided by its
certificate, not by the solver's status.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from rlscale.optimize._design_criteria import Certificate, Information
from rlscale.optimize._design_spg import spg

__all__ = ["FIRST_ORDER", "Relaxation", "relax"]

#: The ``solver=`` name of the first-order method (:mod:`rlscale.optimize._design_spg`).
FIRST_ORDER = "SPG"

#: Dense entries ``S·n·p²`` of the affine map above which candidates are screened
#: (Clarabel's KKT system couples every weight with every law's cone: measured 0.3 s
#: for S = 1, n = 3000, p = 7 and 0.7 s for S = 16, n = 300, p = 7 on one core).
MAX_DENSE = 300_000
#: Rounds of column generation for a screened relaxation.
MAX_ROUNDS = 8
#: A relaxation is ``"optimal"`` when its certificate guarantees this close to the optimum
#: (D- or V-efficiency ``>= 1 − CERTIFIED``), whatever the solver's own status.
CERTIFIED = 1e-4


@dataclass(frozen=True)
class Relaxation:
    """The fractional optimum of a budgeted design problem.

    Attributes
    ----------
    weights : ndarray or None
        Runs per candidate (fractional); ``None`` when the solver failed.
    status : str
        ``"optimal"`` when the certificate guarantees efficiency ``>= 1 − CERTIFIED``,
        ``"optimal_inaccurate"`` when the solver returned weights the certificate
        cannot confirm, ``"failed"`` without weights.
    message : str
    certificate : Certificate or None
        On the whole pool (see :mod:`rlscale.optimize._design_criteria`).
    solver : str
    candidates : int
        How many candidates the last solve had (the pool, or the screened set).
    seconds : float
        CPU seconds of the solves.
    """

    weights: np.ndarray | None
    status: str
    message: str
    certificate: Certificate | None
    solver: str
    candidates: int
    seconds: float


def _problem(info: Information, kind: str, idx: np.ndarray, cost: np.ndarray,
             cap: np.ndarray, budget: float, share: bool):
    """The cvxpy problem over candidates ``idx``; returns it and ``w`` as an expression.

    ``share=True`` (tried first) takes each candidate's *share of the budget*
    ``v_i = c_i w_i / B`` as the variable (``Σ v ≤ 1``, ``0 ≤ v_i ≤ c_i u_i / B``):
    the same problem, but Clarabel solves it reliably where the ``w`` form
    stalled ("insufficient progress") on pools whose costs span orders of
    magnitude.
    """
    import cvxpy as cp

    p = info.p
    c = cost[idx] / budget
    v = cp.Variable(idx.size, nonneg=True)
    mats = []
    for s in range(info.S):
        F = info.F[s, idx].reshape(idx.size, p * p)
        K = (F / c[:, None]).T if share else F.T
        M = cp.reshape(info.M0[s].reshape(-1) + K @ v, (p, p), order="C")
        mats.append((M + M.T) / 2)
    cons = [cp.sum(v) <= 1.0, v <= c * cap[idx]] if share else [c @ v <= 1.0, v <= cap[idx]]
    if kind == "D":
        obj = cp.Maximize(sum(cp.log_det(M) for M in mats) / info.S)
    else:
        terms = []
        for s, M in enumerate(mats):
            vals, vecs = np.linalg.eigh((info.A[s] + info.A[s].T) / 2)
            keep = vals > vals.max() * 1e-12
            L = vecs[:, keep] * np.sqrt(vals[keep])
            terms.append(cp.matrix_frac(L, M))
        obj = cp.Minimize(sum(terms) / info.S)
    return cp.Problem(obj, cons), v, (1.0 / c if share else np.ones(idx.size))


def _solve_once(info, kind, idx, cost, cap, budget, solver):
    """Solve over ``idx``: each (solver, formulation) in turn until one reports a solution."""
    import cvxpy as cp

    tried = [(name, share) for name in ([solver] if solver else ["CLARABEL", "SCS"])
             for share in (True, False)]
    last = "no solver ran"
    for name, share in tried:
        prob, v, to_w = _problem(info, kind, idx, cost, cap, budget, share)
        try:
            with warnings.catch_warnings():  # "may be inaccurate": the certificate decides
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver=name)
        except (cp.error.SolverError, ArithmeticError, ValueError) as exc:
            last = f"{name}: {' '.join(str(exc).split())[:120]}"
            continue
        if prob.status in ("optimal", "optimal_inaccurate") and v.value is not None:
            w = np.clip(np.asarray(v.value, dtype=float) * to_w, 0.0, cap[idx])
            spend = float(cost[idx] @ w)
            if spend > budget:  # a first-order solver's slack: scale back to feasibility,
                w *= budget / spend  # so the certificate is that of a feasible design
            return w, prob.status, name
        last = f"{name}: status {prob.status}"
    return None, last, tried[-1][0]


def _screen(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray, budget: float,
            size: int) -> np.ndarray:
    """Candidates with the largest gain per cost at the design spreading the budget evenly."""
    w0 = np.minimum(cap, budget / (cost.size * cost))
    d = info.gradient(kind, w0) / cost
    return np.sort(np.argsort(-d, kind="stable")[:size])


def _first_order(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray,
                 budget: float, t0: float) -> Relaxation:
    w, iterations, how = spg(info, kind, cost, cap, budget, tol=CERTIFIED / 10)
    cert = info.certificate(kind, w, cost, cap, budget)
    status = "optimal" if cert.efficiency >= 1.0 - CERTIFIED else "optimal_inaccurate"
    msg = (f"{kind}-optimal relaxation solved by {FIRST_ORDER} (spectral projected gradient, "
           f"{iterations} iterations: {how}); Frank-Wolfe gap {cert.gap:.3g} on the whole "
           f"pool (efficiency >= {cert.efficiency:.6f})")
    if cert.equivalence is not None and math.isfinite(cert.equivalence):
        msg += f"; Kiefer-Wolfowitz ratio {cert.equivalence:.4f} (1 at the optimum)"
    return Relaxation(w, status, msg, cert, FIRST_ORDER, info.n, time.process_time() - t0)


def _ridge_set(info: Information, kind: str, rel: Relaxation) -> bool:
    """V only: the target sees a direction the runs leave uninformed, so its variance is
    of order 1/ridge and a gap relative to it certifies nothing."""
    return kind == "V" and rel.weights is not None and info.ridge_bound(rel.weights)


def _ridge_failure(rel: Relaxation, t0: float) -> Relaxation:
    return Relaxation(rel.weights, "failed", "the V-optimal relaxation has no meaningful "
                      "optimum: the target's variance is set by the regularising ridge, not by "
                      "the runs (the runs cannot inform what the target depends on)", None,
                      rel.solver, rel.candidates, time.process_time() - t0)


def relax(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray, budget: float,
          solver: str | None = None) -> Relaxation:
    """Solve the relaxation (module docstring) and certify it on the whole pool."""
    t0 = time.process_time()
    first = None
    if solver is None or solver == FIRST_ORDER:
        first = _first_order(info, kind, cost, cap, budget, t0)
        if _ridge_set(info, kind, first):
            return _ridge_failure(first, t0)  # no solver can do better
        if first.status == "optimal" or solver == FIRST_ORDER:
            return first
        solver = None  # uncertified: the conic path decides, and says so
    rel = _conic(info, kind, cost, cap, budget, solver, t0)
    if _ridge_set(info, kind, rel):
        return _ridge_failure(rel, t0)
    if first is not None:
        better = rel.weights is None or rel.certificate.value < first.certificate.value
        if better:  # the conic path failed or did worse: keep the first-order weights
            return Relaxation(first.weights, first.status, f"{first.message}; the conic path "
                              f"did no better ({rel.message})", first.certificate,
                              first.solver, first.candidates, time.process_time() - t0)
        return Relaxation(rel.weights, rel.status, f"{rel.message}; after {FIRST_ORDER} was "
                          f"not certified (efficiency >= {first.certificate.efficiency:.6f})",
                          rel.certificate, rel.solver, rel.candidates, rel.seconds)
    return rel


def _conic(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray, budget: float,
           solver: str | None, t0: float) -> Relaxation:
    """The cvxpy relaxation, screened and column-generated above :data:`MAX_DENSE`."""
    n, per = info.n, info.S * info.p * info.p
    if n * per <= MAX_DENSE:
        idx = np.arange(n)
        screened = False
    else:
        idx = _screen(info, kind, cost, cap, budget, max(8 * info.p, MAX_DENSE // per))
        screened = True
    weights = cert = None
    status, used = "failed", solver or "CLARABEL"
    for _ in range(MAX_ROUNDS if screened else 1):
        sub, status, used = _solve_once(info, kind, idx, cost, cap, budget, solver)
        if sub is None:
            break
        weights = np.zeros(n)
        weights[idx] = sub
        cert = info.certificate(kind, weights, cost, cap, budget)
        if not screened or cert.gap <= 1e-6 * max(1.0, abs(cert.value)):
            break
        # Column generation: add the candidates that beat the set's multiplier, estimated
        # on its fractional support (0 < w < cap), where d_i/c_i equals it at the optimum.
        d = info.gradient(kind, weights) / cost
        inside = np.zeros(n, dtype=bool)
        inside[idx] = True
        support = weights > 1e-9 * np.maximum(cap, 1)
        frac = support & (weights < cap * (1 - 1e-6))
        lam = float(np.min(d[frac])) if frac.any() else (
            float(np.min(d[support])) if support.any() else 0.0)
        new = np.flatnonzero(~inside & (d > lam))
        if new.size == 0:
            break
        new = new[np.argsort(-d[new], kind="stable")[:max(4 * info.p, idx.size // 2)]]
        idx = np.sort(np.concatenate([idx, new]))
    seconds = time.process_time() - t0
    if weights is None:
        return Relaxation(None, "failed", f"the {kind}-optimal relaxation failed ({status})",
                          None, used, int(idx.size), seconds)
    note = f" over {idx.size} screened candidates of {n}" if screened else ""
    msg = (f"{kind}-optimal relaxation solved by {used} (cvxpy status {status}){note}; "
           f"Frank-Wolfe gap {cert.gap:.3g} on the whole pool (efficiency >= "
           f"{cert.efficiency:.6f})")
    # The certificate, not the solver's own word, decides: optimal within CERTIFIED.
    status = "optimal" if cert.efficiency >= 1.0 - CERTIFIED else "optimal_inaccurate"
    if cert.equivalence is not None and math.isfinite(cert.equivalence):
        msg += f"; Kiefer-Wolfowitz ratio {cert.equivalence:.4f} (1 at the optimum)"
    return Relaxation(weights, status, msg, cert, used, int(idx.size), seconds)
