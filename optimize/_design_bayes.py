"""The laws a design is computed under: a point estimate, or an ensemble for a robust design.

A nonlinear law's best design depends on the parameters it is meant to
estimate (Chernoff 1953): a design computed at one point estimate is only
*locally* optimal.  A robust, pseudo-Bayesian design averages the criterion
over draws of the parameters instead (Chaloner & Verdinelli 1995, *Statist.
Sci.* 10, §2.1; Atkinson, Donev & Tobias 2007, ch. 18): ``E_θ[log det M(w; θ)]``
and ``E_θ[tr(A_θ M(w; θ)⁻¹)]``, both still concave in ``w``
(:mod:`rlscale.optimize._design_criteria`).  The draws are the fit's bootstrap
laws, which approximate the posterior of the parameters given the observed
runs (Efron 2012, *Ann. Appl. Stat.* 6, "Bayesian inference and the parametric
bootstrap"), or laws the caller supplies (a prior).

:func:`ensemble` builds them from whatever the caller has:

- a fit (:class:`~rlscale.optimize.FitResult`,
  :class:`~rlscale.optimize.ExpressionFit`): its point estimate and up to
  ``n_laws`` of its bootstrap laws, and the noise of one run from its
  residuals, ``σ̂ = √(RSS/(n − p))``;
- a law with parameter values (a :class:`~rlscale.theory.Law`, a bound
  expression law, a :class:`~rlscale.optimize._design_model.DesignModel`):
  the point, and the ``laws=`` the caller passes as draws;
- a family name or an expression with observed runs: the law is fitted
  first (:func:`~rlscale.optimize.fit_law` with ``bootstrap`` resamples);
- nothing to fit: no laws (only the selection rules and the parameter-free
  ``surface`` design can run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._design_model import DesignModel, as_model, sample_models

__all__ = ["Ensemble", "bound_parameters", "ensemble", "huber_factor", "in_domain", "law_axes",
           "law_parameter_count"]

#: Fit warnings that put a parameter on a bound of its domain (the fitters' codes).
BOUND_CODES = frozenset({"floor-at-zero", "floor-at-bound", "p_max-at-bound",
                         "exponent-at-bound", "coefficient-at-zero", "at-bound"})
#: A sensitivity column this small against the largest is no information at all.
ZERO_SENSITIVITY = 1e-12

FAMILY_NAMES = ("additive", "multiplicative", "pass_rate")


@dataclass(frozen=True)
class Ensemble:
    """The point law and the draws a robust design averages over.

    Attributes
    ----------
    point : DesignModel or None
        ``None`` when there are no parameter values (nothing fitted).
    draws : tuple of DesignModel
    noise : float or None
        Noise sd of one run's log response (``None``: unknown).
    delta : float
        Huber threshold of the fit the design is for; the prediction sd of
        that fit is ``noise·√κ(δ/noise)`` (:func:`huber_factor`).
    fit : FitResult, ExpressionFit or None
        The fit the laws came from, when the design fitted or was given one.
    source : str
    """

    point: DesignModel | None
    draws: tuple[DesignModel, ...]
    noise: float | None
    fit: Any
    source: str
    delta: float = 1e-3

    @property
    def scale(self) -> float | None:
        """The fit's effective noise sd, ``noise·√κ``: what prediction sds are in."""
        if self.noise is None:
            return None
        return self.noise * math.sqrt(huber_factor(self.delta, self.noise))

    @property
    def models(self) -> list[DesignModel]:
        """The point first, then the draws."""
        return [] if self.point is None else [self.point, *self.draws]


def _is_unfitted(law: Any) -> bool:
    from rlscale.theory._expr import ExpressionLaw

    return isinstance(law, (str, ExpressionLaw))


def law_axes(law: Any, axes: Sequence[str] | None) -> tuple[str, ...]:
    """The axes of ``law`` (from the law itself, or ``axes`` for a family name)."""
    from rlscale.optimize._fit_expr import ExpressionFit
    from rlscale.optimize._fit_result import FitResult
    from rlscale.theory._expr import ExpressionLaw

    if isinstance(law, FitResult):
        return tuple(law.axes)
    if isinstance(law, ExpressionFit):
        return tuple(law.law.axes)
    if isinstance(law, ExpressionLaw) or (hasattr(law, "axes") and not isinstance(law, str)):
        return tuple(law.axes)
    if isinstance(law, str):
        if axes is None:
            raise ValueError(f"axes must name the pool columns that are the law's axes when "
                             f"law is a name or an expression; got law={law!r:.60}")
        if isinstance(axes, str) or not all(isinstance(a, str) for a in axes) or not axes:
            raise TypeError(f"axes must be a sequence of column names; got {axes!r:.60}")
        return tuple(axes)
    raise TypeError(f"law must be a law family name, an expression, a Law, a fit or a "
                    f"DesignModel; got {type(law).__name__}")


def law_parameter_count(law: Any, axes: Sequence[str]) -> int:
    """How many parameters ``law`` has (for the affordable-runs check)."""
    from rlscale.optimize._fit_expr import ExpressionFit
    from rlscale.optimize._fit_family import FAMILIES, family
    from rlscale.optimize._fit_result import FitResult
    from rlscale.theory._expr import ExpressionLaw

    d = len(axes)
    if isinstance(law, str):
        if law in FAMILIES:
            return family(law).n_params(d)
        return len(ExpressionLaw(law, list(axes)).params)
    if isinstance(law, ExpressionLaw):
        return len(law.params)
    if isinstance(law, FitResult):
        return int(law.n_params)
    if isinstance(law, ExpressionFit):
        return len(law.law.params)
    return as_model(law).n_params


def huber_factor(delta: float, sigma: float) -> float:
    """Variance inflation ``κ`` of a Huber-δ M-estimator over least squares, Gaussian noise.

    An M-estimator with score ``ψ`` has asymptotic covariance
    ``E[ψ(r)²]/E[ψ'(r)]² · (JᵀJ)⁻¹`` (Huber 1964; Huber & Ronchetti 2009, §6.2),
    least squares ``σ² (JᵀJ)⁻¹``.  For ``r ~ N(0, σ²)``, ``k = δ/σ`` and the Huber
    score ``ψ = clip(r, −δ, δ)``: ``E[ψ'] = 2Φ(k) − 1`` and ``E[ψ²] = σ²(2Φ(k) − 1 −
    2kφ(k)) + 2δ²(1 − Φ(k))`` (the first term computed as ``σ² P(χ²_3 ≤ k²)``, free
    of cancellation at small ``k``); ``κ = E[ψ²] / (σ² E[ψ']²)``.  It tends to 1 for
    ``δ ≫ σ`` and to ``π/2`` (least absolute deviations) for ``δ ≪ σ`` -- the
    regime of the fitter's ``δ = 1e-3`` on log residuals of a few per cent.

    Examples
    --------
    >>> round(huber_factor(1e-3, 0.02), 4), round(huber_factor(10.0, 0.02), 6)
    (1.5303, 1.0)
    """
    from scipy.special import erf, erfc, gammainc

    k = delta / sigma
    e_dpsi = erf(k / math.sqrt(2.0))  # 2Φ(k) − 1
    # E[Z² 1{|Z| <= k}] = P(χ²_3 <= k²): the stable form of 2Φ(k) − 1 − 2kφ(k).
    e_psi2 = gammainc(1.5, k * k / 2.0) + k * k * erfc(k / math.sqrt(2.0))
    return float(e_psi2 / e_dpsi ** 2)


def _noise_of(fit: Any) -> float | None:
    """``σ̂ = √(RSS/(n − p))`` of the fit's log residuals (``None`` without residual dof)."""
    n = int(fit.n_points)
    p = int(getattr(fit, "n_params", None) or len(fit.law.params))
    if n <= p or not fit.rmse_log > 0:
        return None
    return float(fit.rmse_log * math.sqrt(n / (n - p)))


def ensemble(law: Any, *, axes: Sequence[str], observed: Mapping[str, np.ndarray] | None,
             response: str, laws: Sequence[Any] | None, n_laws: int, bootstrap: int,
             seed: int, noise: float | None, delta: float = 1e-3) -> Ensemble:
    """The laws a design is computed under (see the module docstring)."""
    from rlscale.optimize._fit import fit_law
    from rlscale.optimize._fit_expr import ExpressionFit
    from rlscale.optimize._fit_result import FitResult

    fit = None
    if _is_unfitted(law):
        have = observed is not None and response in observed and observed[response].size
        if not have:
            return Ensemble(None, (), noise, None,
                            "no parameter values (nothing observed to fit)", delta)
        y = observed[response]
        if y.dtype != np.float64:
            raise TypeError(f"the observed runs' response column {response!r} must be numeric")
        data = {a: observed[a] for a in axes} | {response: y}
        fit = fit_law(data, law=law, axes=list(axes), target=response, bootstrap=bootstrap,
                      seed=seed, holdout=0, delta=delta)
        law = fit
    if isinstance(law, FitResult | ExpressionFit):
        fit = law
        draws = sample_models(law, n_laws)
        sd = noise if noise is not None else _noise_of(law)
        src = (f"fit on {law.n_points} runs with {len(draws)} bootstrap laws" if draws
               else f"fit on {law.n_points} runs (no bootstrap laws)")
        return Ensemble(as_model(law), tuple(draws), sd, fit, src,
                        float(getattr(law, "delta", delta)))
    point = as_model(law)
    if laws is not None and (isinstance(laws, str | bytes | Mapping)
                             or not isinstance(laws, Sequence)):
        raise TypeError(f"laws must be a sequence of laws (draws for a robust design); got "
                        f"{type(laws).__name__}")
    draws = tuple(as_model(m, f"laws[{i}]") for i, m in enumerate((laws or ())[:max(n_laws, 0)]))
    for m in draws:
        if m.names != point.names or m.axes != point.axes:
            raise ValueError(f"laws= must share the law's parameters {list(point.names)} and "
                             f"axes {list(point.axes)}; got {list(m.names)} over "
                             f"{list(m.axes)}")
    src = "the given law" + (f" and {len(draws)} given draws" if draws else "")
    return Ensemble(point, draws, noise, None, src, delta)


def _model_name(name: str, names: Sequence[str]) -> str | None:
    """A fit's parameter name as the design model's coordinate (``floor`` -> ``log floor``)."""
    for cand in (name, f"log {name}", "log floor" if name == "p_max" else None):
        if cand is not None and cand in names:
            return cand
    return None


def bound_parameters(ens: Ensemble, x: Mapping[str, np.ndarray]) -> dict[str, str]:
    """Parameters to profile out of the design, each with why: ``{model name: reason}``.

    A parameter the fit reports on a bound of its domain (its warnings with a
    code in :data:`BOUND_CODES`), and one the point law does not depend on at
    any row of ``x`` (the pool and the observed runs: a zero floor or
    coefficient), has no local variance a batch could shrink; left in, its
    zero information makes every uncertainty unbounded.
    """
    if ens.point is None:
        return {}
    names = ens.point.names
    out: dict[str, str] = {}
    for w in getattr(ens.fit, "warnings", ()) or ():
        if w.code in BOUND_CODES:
            for pname in w.parameters:
                got = _model_name(pname, names)
                if got is not None:
                    out.setdefault(got, f"the fit has it on a bound ({w.code})")
    J = np.abs(ens.point.jacobian(x)).max(axis=(0, 1))
    top = float(J.max()) if J.size else 0.0
    for i, nm in enumerate(names):
        if J[i] <= ZERO_SENSITIVITY * top:
            out.setdefault(nm, "the law does not depend on it at any pool or observed run")
    if len(out) >= len(names):
        return {}  # nothing would be left: let the unidentified path say so
    return out


def in_domain(ens: Ensemble, x: Mapping[str, np.ndarray]) -> tuple[Ensemble, str | None]:
    """The ensemble without the draws that leave the law's domain at a row of ``x``.

    A bootstrap law can put a prediction at 0 or below (a negative floor, say)
    or overflow at some pool run, where its log sensitivities do not exist;
    the criterion cannot be averaged over it.  Such draws are dropped, and the
    note says how many and where the first one failed.  The point law is not
    dropped: if it leaves its domain, the design fails on it with its message.
    """
    kept, first, bad = [], None, 0
    for m in ens.draws:
        try:
            m.log_predict(x)
            m.jacobian(x)
        except ValueError as exc:
            bad += 1
            first = first or " ".join(str(exc).split())
            continue
        kept.append(m)
    if not bad:
        return ens, None
    note = (f"{bad} of {len(ens.draws)} bootstrap laws leave the law's domain at a pool or "
            f"observed run and were dropped from the ensemble (the first: {first[:160]})")
    return Ensemble(ens.point, tuple(kept), ens.noise, ens.fit, ens.source, ens.delta), note
