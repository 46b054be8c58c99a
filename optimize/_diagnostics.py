"""Fit diagnostics: when a fitted scaling law cannot be trusted, and what would fix it.

:func:`rlscale.optimize.fit_law` attaches a tuple of :class:`FitWarning` to
every :class:`~rlscale.optimize.FitResult`.  A clean design and a well-posed
law produce none; each warning names the parameters or axes at fault and a
concrete fix.  The checks and their thresholds (module constants, each
justified where it is defined):

``collinear-axes``
    the design cannot separate axes: the variance inflation factor of an
    axis's ``log`` values, ``VIF_i = 1/(1 − R_i²)`` (``R_i²`` of the
    regression of ``log x_i`` on the other ``log`` axes), exceeds
    :data:`VIF_LIMIT`.  Totals from a star design (``environments``, ``E·t``,
    ``E·t·k``) are the typical case: the fix is to fit the per-level counts.
``floor-at-zero``, ``floor-at-bound``, ``p_max-at-bound``
    the floor (or a pass-rate law's ``p_max``) sits at, or within
    :data:`BOUND_MARGIN` of, its bound.
``coefficient-at-zero``
    an axis's term ``a_i x_i^(−α_i)`` never exceeds :data:`BOUND_MARGIN` of
    the smallest target value on the data: the fit gives that axis no effect.
``exponent-at-bound``, ``exponent-unresolved``
    an exponent at its lower bound 0, or one the design cannot resolve (see
    :data:`STEP_FRACTION`).
``not-identified``
    a bootstrap interval spans more than a decade or touches a bound.
``correlated-estimates``
    ``|corr| >`` :data:`CORRELATION_LIMIT` between the estimates of two axes'
    terms (:data:`FLOOR_CORRELATION_LIMIT` for the floor against a term;
    bootstrap correlation, else the local ``(JᵀJ)⁻¹`` one).  A term's own coefficient and exponent
    are not compared: over a finite range of one axis they trade off even in
    a clean design (-0.98 on a 7-point arm with a floor), and whether that
    leaves them determined is what their bootstrap intervals show.
``ill-conditioned``
    the column-scaled Jacobian of the log residuals has condition number
    above :data:`CONDITION_LIMIT`.
``extrapolation``
    (from :meth:`FitResult.range_warnings`) a prediction point lies more than
    :data:`EXTRAPOLATION_FACTOR` times beyond the data range of an axis.

A target whose direction contradicts the law (a success rate fitted with a
falling law) is not a warning but an error: :func:`check_direction` raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rlscale.optimize._fit_family import family

__all__ = ["FitWarning", "check_direction", "design_warnings", "fit_warnings", "range_warnings"]

#: VIF above which an axis is called collinear.  A VIF of v multiplies the variance of
#: a log-linear slope by v against an orthogonal design with the same spread; 5 is the
#: usual "problematic" line (James, Witten, Hastie & Tibshirani, *An Introduction to
#: Statistical Learning*, 2013, §3.3.3).  A full factorial in nested counts fitted in
#: totals has VIF 4 (identifiable); a star design fitted in totals reaches 6-8.
VIF_LIMIT = 5.0
#: Relative margin for "at a bound": a floor or term below 1e-3 of the smallest target
#: changes no prediction on the data by more than 0.1 %, i.e. it is numerically zero.
BOUND_MARGIN = 1e-3
#: An exponent below this is at its lower bound 0 (x^-0.001 varies by < 1 % over 1e4).
EXPONENT_MIN = 1e-3
#: An exponent is unresolved when this share (or more) of its term's decline over the
#: data happens between the axis's two smallest values: the design then sees a step,
#: and any steeper exponent fits as well.  For doubling designs 0.7 corresponds to
#: α ≈ 1.7; one more design point between the two smallest values resolves it.
STEP_FRACTION = 0.7
#: Bootstrap interval ratio high/low above which a positive parameter is not identified.
DECADE = 10.0
#: |correlation| above which the estimates of two axes' terms are called confounded
#: (issue 11's threshold).
CORRELATION_LIMIT = 0.95
#: The same for the floor against a term: over any finite range the floor and a term
#: trade off even in a clean design (a noise-free one-axis law ``0.4 + k^-0.5`` on
#: k = 2..32 has corr(floor, coefficient) = -0.994), while a confounded fit (a star
#: design fitted in totals, floor -> 0) reaches |corr| = 1.000.
FLOOR_CORRELATION_LIMIT = 0.999
#: Condition number of the column-scaled Jacobian above which the fit is ill-conditioned:
#: a relative perturbation ε of the data may move the estimates by up to 1e6·ε, so
#: 0.1 % noise could move them by 1000 x.
CONDITION_LIMIT = 1e6
#: Prediction points more than this factor beyond an axis's data range are extrapolations.
EXTRAPOLATION_FACTOR = 10.0
#: |Spearman ρ| between the target and the total log scale above which its direction is
#: clear; under a falling law ρ is negative, so ρ >= 0.5 contradicts it (for n = 10 the
#: one-sided 5 % critical value of ρ is 0.56, for n = 20 0.38).
DIRECTION_RHO = 0.5


@dataclass(frozen=True)
class FitWarning:
    """One diagnostic: what is wrong, where, and what would fix it.

    Examples
    --------
    >>> w = FitWarning("floor-at-zero", "the fitted floor 1e-12 is ~0", "pass floor=(0.2, 0.3)",
    ...                parameters=("floor",))
    >>> str(w)
    '[floor-at-zero] the fitted floor 1e-12 is ~0. Fix: pass floor=(0.2, 0.3)'
    """

    code: str
    message: str
    fix: str
    parameters: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}. Fix: {self.fix}"

    def __contains__(self, text: object) -> bool:
        """``"phrase" in warning`` searches its text (expression fits' warnings were strings
        before issue 30)."""
        return isinstance(text, str) and text in str(self)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["parameters"], out["axes"] = list(self.parameters), list(self.axes)
        return out


# --------------------------------------------------------------------------- direction
def check_direction(x: np.ndarray, y: np.ndarray, law: str, target: str) -> None:
    """Refuse a target whose direction contradicts the law (``ValueError`` with the fix).

    ``y`` is the raw target (a loss, or a pass rate for ``law="pass_rate"``).
    Its Spearman correlation with the total log scale ``Σ log x_i`` must not
    be clearly (``|ρ| >=`` :data:`DIRECTION_RHO`) of the wrong sign: additive
    and multiplicative laws fall with every axis, a pass rate rises.

    Examples
    --------
    >>> x = np.array([[1.0], [2.0], [4.0], [8.0], [16.0]])
    >>> check_direction(x, np.array([0.1, 0.2, 0.3, 0.4, 0.5]), "additive", "success")
    Traceback (most recent call last):
    ...
    ValueError: target 'success' rises ... (--target loss, ...) or ... --law pass_rate
    """
    scale = np.log(x).sum(axis=1)
    if y.size < 4 or np.ptp(scale) == 0 or np.ptp(y) == 0:
        return
    rho = _spearman(scale, y)
    fam = family(law)
    if fam.direction * rho <= -DIRECTION_RHO:  # clearly the opposite sign of the law's
        raise ValueError(
            f"target {target!r} {'rises' if rho > 0 else 'falls'} as the axes grow (Spearman "
            f"ρ = {rho:.2f} with the total log scale) but {fam.direction_fix}")


def _average_ranks(v: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their mean rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(v, kind="stable")
    sorted_v = v[order]
    # Each run of equal values [start, end) shares the mean of ranks start+1 .. end.
    new = np.r_[True, sorted_v[1:] != sorted_v[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], v.size]
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(v.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ: the Pearson correlation of the average ranks (Spearman 1904).

    Written with numpy rather than ``scipy.stats.spearmanr`` because importing
    scipy.stats costs about 0.3 CPU s, a quarter of a cold ``fit_law`` (issue 24).
    Both inputs must vary (the caller checks).

    Examples
    --------
    >>> _spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0]))
    0.8
    """
    ra, rb = _average_ranks(np.asarray(a, float)), _average_ranks(np.asarray(b, float))
    ra -= ra.mean()
    rb -= rb.mean()
    return float(ra @ rb / math.sqrt((ra @ ra) * (rb @ rb)))


# --------------------------------------------------------------------------- design
def _vif(logx: np.ndarray) -> np.ndarray:
    """Variance inflation factors of the columns (inf for an exact linear dependence)."""
    k = logx.shape[1]
    if k < 2:
        return np.ones(k)
    centred = logx - logx.mean(axis=0)
    sd = centred.std(axis=0)
    out = np.full(k, np.inf)
    ok = sd > 0
    if ok.sum() < 2:
        return np.where(ok, 1.0, np.inf)
    corr = np.corrcoef(centred[:, ok].T)
    try:
        inv = np.linalg.inv(corr)
        diag = np.diag(inv)
        out[ok] = np.where(np.isfinite(diag) & (diag > 0), diag, np.inf)
    except np.linalg.LinAlgError:
        pass
    return out


def _nested_pairs(x: np.ndarray, axes: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs (outer, inner) where ``inner`` is a whole multiple of ``outer`` in every row."""
    pairs = []
    for i, a in enumerate(axes):
        for j, b in enumerate(axes):
            if i != j:
                ratio = x[:, j] / x[:, i]
                if np.all(ratio >= 1) and np.allclose(ratio, np.round(ratio)) and np.ptp(ratio):
                    pairs.append((a, b))
    return pairs


def design_warnings(x: np.ndarray, axes: Sequence[str]) -> list[FitWarning]:
    """``collinear-axes`` when some axis has ``VIF >`` :data:`VIF_LIMIT` (log space).

    Names the collinear axes, the pair with the largest ``|corr|`` and a fix:
    for nested totals (one axis a whole multiple of another in every row) the
    per-level ratios, otherwise runs that vary those axes independently.
    """
    logx = np.log(x)
    vif = _vif(logx)
    bad = [i for i in range(len(axes)) if vif[i] > VIF_LIMIT]
    if not bad:
        return []
    names = tuple(axes[i] for i in bad)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(logx.T) if len(axes) > 1 else np.ones((1, 1))
    corr = np.nan_to_num(corr)
    np.fill_diagonal(corr, 0.0)
    i, j = np.unravel_index(np.argmax(np.abs(corr)), corr.shape)
    vifs = ", ".join(f"{axes[k]} {vif[k]:.3g}" for k in bad)
    message = (f"the design cannot separate the axes {', '.join(names)}: their log values are "
               f"nearly collinear with the other axes (VIF {vifs} > {VIF_LIMIT:g}; "
               f"corr(log {axes[i]}, log {axes[j]}) = {corr[i, j]:.2f}), so their coefficients "
               f"and exponents trade off against each other")
    nested = _nested_pairs(x, axes)
    if nested:
        outers = {a: {o for o, b in nested if b == a} for a in axes}
        per_level = []
        for a in axes:  # each axis over its immediate outer axis (the most nested outer)
            if outers[a]:
                inner_of = max(outers[a], key=lambda o: len(outers[o]))
                ratio = f"{a}/{inner_of}"
                alias = {"tasks/environments": "tasks_per_environment",
                         "trajectories/tasks": "trajectories_per_task"}.get(ratio)
                per_level.append(f"{ratio} ({alias})" if alias else ratio)
            else:
                per_level.append(a)
        fix = (f"these are nested totals: fit the per-level counts {', '.join(per_level)} "
               f"instead (on `rlscale sweep` results: --axes environments,"
               f"tasks_per_environment,trajectories_per_task), which a star design varies one "
               f"at a time; or add runs that change one total while holding the others")
    else:
        fix = (f"add runs that vary {axes[i]} and {axes[j]} independently (a factorial "
               f"block), or re-parametrise them as {axes[j]}/{axes[i]} and {axes[i]}")
    return [FitWarning("collinear-axes", message, fix, axes=names)]


def range_warnings(data_range: Mapping[str, tuple[float, float]],
                   values: Mapping[str, Any]) -> list[FitWarning]:
    """``extrapolation`` for each axis whose value is more than :data:`EXTRAPOLATION_FACTOR`
    times beyond the data range ``(min, max)`` of that axis.

    Examples
    --------
    >>> [w.code for w in range_warnings({"E": (1.0, 64.0)}, {"E": 200.0})]
    []
    >>> print(range_warnings({"E": (1.0, 64.0)}, {"E": 1e4})[0].message)
    E = 1e+04 is 156x the largest value in the data (64)
    """
    from rlscale.theory._validation import check_mapping, check_real

    values = check_mapping("values", values)
    out = []
    for axis, (lo, hi) in data_range.items():
        if axis not in values:
            continue
        v = check_real(axis, values[axis], low=0.0, low_open=True)
        if v.size == 0:
            raise ValueError(f"{axis} must hold at least one value; got an empty array")
        top, bottom = float(v.max()), float(v.min())
        if top > EXTRAPOLATION_FACTOR * hi:
            out.append(FitWarning(
                "extrapolation",
                f"{axis} = {top:.3g} is {top / hi:.3g}x the largest value in the data "
                f"({hi:.3g})",
                f"treat the prediction as an extrapolation; add runs nearer {axis} = "
                f"{top:.3g} before acting on it", axes=(axis,)))
        if bottom < lo / EXTRAPOLATION_FACTOR:
            out.append(FitWarning(
                "extrapolation",
                f"{axis} = {bottom:.3g} is {lo / bottom:.3g}x below the smallest value in the "
                f"data ({lo:.3g})",
                f"treat the prediction as an extrapolation; add runs nearer {axis} = "
                f"{bottom:.3g}", axes=(axis,)))
    return out


# --------------------------------------------------------------------------- the fit
def _floor_warnings(law: str, params: Mapping[str, float], y_min: float, target: str,
                    bounds: tuple[float, float] | None) -> list[FitWarning]:
    if family(law).limit == "ceiling":
        p_max = params["p_max"]
        lo, hi = bounds if bounds is not None else (0.0, 1.0)
        at = [b for b in (lo, hi) if b > 0 and abs(p_max / b - 1) <= BOUND_MARGIN]
        if at:
            return [FitWarning(
                "p_max-at-bound",
                f"the fitted p_max {p_max:.4g} sits at its bound {at[0]:g}: the data do not "
                f"locate the ceiling of the pass rate", "pass the achievable ceiling "
                "p_max=(low, high) (--p-max LOW,HIGH), e.g. the optimal policy's success, or "
                "add runs at larger scale", parameters=("p_max",))]
        return []
    if "floor" not in params:
        return []
    floor = params["floor"]
    if bounds is None:
        if floor < BOUND_MARGIN * y_min:
            return [FitWarning(
                "floor-at-zero",
                f"the fitted floor {floor:.3g} is ~0 (below {BOUND_MARGIN:g} x the smallest "
                f"{target} {y_min:.3g}): the data do not locate the law's asymptote, so "
                f"predictions at large scale fall towards 0",
                "bound it with the known achievable optimum, fit_law(..., floor=(low, high)) "
                "or --floor LOW,HIGH (e.g. 1 − the optimal policy's success), or add runs at "
                "larger scale", parameters=("floor",))]
        return []
    at = [b for b in bounds if 0 < b < math.inf and abs(floor / b - 1) <= BOUND_MARGIN]
    if at:
        return [FitWarning(
            "floor-at-bound",
            f"the fitted floor {floor:.4g} sits at its bound {at[0]:g}: the data push the "
            f"floor past the known limit", "check the bound (is the limit really achievable?) "
            "and whether the law family fits the data", parameters=("floor",))]
    return []


def _exponent_warnings(law: str, params: Mapping[str, float], x: np.ndarray,
                       axes: Sequence[str]) -> list[FitWarning]:
    out = []
    for i, a in enumerate(axes):
        alpha = params[f"exponent[{a}]"]
        name = f"exponent[{a}]"
        if alpha < EXPONENT_MIN:
            out.append(FitWarning(
                "exponent-at-bound",
                f"{name} = {alpha:.3g} is at its lower bound 0: {a} has no effect in the fit",
                f"check that the design varies {a}; with collinear axes see collinear-axes",
                parameters=(name,), axes=(a,)))
            continue
        if family(law).linear:
            continue  # a pure power law (linear in log space) is resolved by any two values
        values = np.unique(x[:, i])
        if values.size < 3:
            out.append(FitWarning(
                "exponent-unresolved",
                f"{name} = {alpha:.3g} rests on only {values.size} distinct values of {a}: "
                f"its coefficient and exponent trade off", f"add runs at a third value of {a}",
                parameters=(name,), axes=(a,)))
            continue
        with np.errstate(over="ignore"):
            t = (values / values[0]) ** -alpha
        share = (1 - t[1]) / (1 - t[-1])
        if share >= STEP_FRACTION:
            out.append(FitWarning(
                "exponent-unresolved",
                f"{name} = {alpha:.3g}: {share:.0%} of the {a} term's decline over the data "
                f"happens between its two smallest values ({values[0]:g}, {values[1]:g}), so "
                f"the design sees a step, not a power law, and any steeper exponent fits as "
                f"well", f"add runs of {a} between {values[0]:g} and {values[1]:g} (or drop "
                f"the smallest value if its runs are degenerate)",
                parameters=(name,), axes=(a,)))
    return out


def _natural_se(law: str, theta: np.ndarray, logx: np.ndarray, axes: Sequence[str],
                residuals: np.ndarray) -> np.ndarray | None:
    """Local standard errors of the natural parameters: ``σ² (JᵀJ)⁻¹`` in the fitter's
    log parameters (``σ² = RSS/(n − p)``), carried to the natural ones by the delta
    method (``G cov Gᵀ``, ``G`` their Jacobian by central differences)."""
    from rlscale.optimize._fit_identify import local_covariance

    fam = family(law)
    J = fam.predict(np.asarray(theta, float)[None, :], logx, jac=True)[1][0]
    cov = local_covariance(J, np.asarray(residuals, float), J.shape[1])
    if cov is None:
        return None
    p = theta.size
    G = np.empty((p, p))
    for j in range(p):
        h = 1e-6 * (1.0 + abs(theta[j]))
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        G[:, j] = (np.array(list(fam.natural(up, axes).values()))
                   - np.array(list(fam.natural(down, axes).values()))) / (2 * h)
    return np.sqrt(np.abs(np.diag(G @ cov @ G.T)))


def _local_correlation(jac: np.ndarray) -> np.ndarray:
    """The correlation matrix of ``(JᵀJ)⁻¹``, from the SVD of the column-scaled ``J``.

    With ``J D⁻¹ = U S Vᵀ`` (``D`` the column norms), ``(JᵀJ)⁻¹ = D⁻¹ V S⁻² Vᵀ D⁻¹``, whose
    correlation is that of ``V S⁻² Vᵀ``: positive semi-definite by construction, so every
    entry lies in [-1, 1].  ``pinv(JᵀJ)`` squared the condition number and, for an
    ill-conditioned fit, returned a matrix that was not positive semi-definite, whose
    "correlations" reached +6.09 (issue 24).  Singular values below ``max(n, p)·eps·s_max``
    are dropped (the pseudo-inverse's rule); what they carried is the ``ill-conditioned``
    warning's business.

    Examples
    --------
    >>> J = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-9], [1.0, 1.0 - 1e-9]])
    >>> c = _local_correlation(J)
    >>> bool(np.all(np.abs(c) <= 1.0)), round(float(c[0, 1]), 6)
    (True, -1.0)
    """
    norms = np.linalg.norm(jac, axis=0)
    _, s, vt = np.linalg.svd(jac / np.where(norms > 0, norms, 1.0), full_matrices=False)
    keep = s > max(jac.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)
    v = vt[keep].T / s[keep]
    cov = v @ v.T
    d = np.sqrt(np.diag(cov))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(d, d)
    return np.clip(corr, -1.0, 1.0)


def fit_warnings(*, law: str, theta: np.ndarray, x: np.ndarray,
                 y_min: float, target: str, params: Mapping[str, float],
                 axes: Sequence[str], samples: np.ndarray | None,
                 intervals: Mapping[str, tuple[float, float]],
                 floor_bounds: tuple[float, float] | None,
                 collinear: Sequence[str] = (), residuals: np.ndarray | None = None,
                 confidence: float = 0.9) -> list[FitWarning]:
    """Every parameter-level diagnostic of one fit (see the module docstring).

    ``theta`` is the optimum in the fitter's log parameterisation, ``params``
    the natural parameters, ``samples`` the bootstrap's natural parameters
    (columns in the order of ``params``), ``y_min`` the smallest raw target,
    ``residuals`` the log residuals at the optimum (for the local standard errors
    the ``collapsed-interval`` check compares the bootstrap with).
    """
    logx = np.log(x)
    fam = family(law)
    out = _floor_warnings(law, params, y_min, target, floor_bounds)
    if fam.limit is not None:  # a sum of terms and the limit: a term can vanish
        n = len(axes)
        # a loss falls to its floor, >= 0; a rate's loss 1/p to 1/p_max >= 1
        loss_min = 1.0 if fam.limit == "ceiling" else y_min
        for i, a in enumerate(axes):
            top = math.exp(theta[1 + i] - theta[1 + n + i] * logx[:, i].min())
            if top < BOUND_MARGIN * loss_min:
                hint = (" (its effect is absorbed by the collinear axes: see collinear-axes)"
                        if a in collinear else "")
                out.append(FitWarning(
                    "coefficient-at-zero",
                    f"the {a} term is at most {top:.3g} on the data (coefficient "
                    f"{params[f'coefficient[{a}]']:.3g}), below {BOUND_MARGIN:g} x the smallest "
                    f"loss: the fit gives {a} no effect{hint}",
                    "fix the design first (collinear-axes) or refit without this axis"
                    if a in collinear else f"check that the design varies {a} enough to show "
                    "its effect, or refit without it", parameters=(f"coefficient[{a}]",),
                    axes=(a,)))
    out += _exponent_warnings(law, params, x, axes)
    names = list(params)
    # Bootstrap intervals: more than a decade, or touching a bound (the shared rules of
    # rlscale.optimize._fit_identify, with this family's own notion of a bound), and
    # intervals that collapsed onto a boundary or kink.
    from rlscale.optimize._fit_identify import interval_warnings

    touches = {}
    for name, (lo, hi) in intervals.items():
        positive = not name.startswith("exponent")
        hit = (lo < EXPONENT_MIN) if not positive else (
            name == "floor" and lo < BOUND_MARGIN * y_min and floor_bounds is None)
        if floor_bounds is not None and name in ("floor", "p_max"):
            b_lo, b_hi = floor_bounds
            hit = hit or any(0 < b < math.inf and abs(v / b - 1) <= BOUND_MARGIN
                             for b, v in ((b_lo, lo), (b_hi, hi)))
        touches[name] = hit
    se = (_natural_se(law, theta, logx, axes, residuals) if residuals is not None
          and samples is not None else None)
    out += interval_warnings(list(params), params, intervals, samples=samples, se=se,
                             confidence=confidence, source="bootstrap", touches=touches)
    # Correlated estimates: bootstrap correlation, else the local (J^T J)^-1 one.
    corr, source = None, ""
    jac, centres = fam.centred_jacobian(theta, logx)
    centre = dict(zip(axes, centres))
    if samples is not None and len(samples) >= 20:
        cols = np.array([np.log(np.maximum(samples[:, j], 1e-300)) if not nm.startswith(
            "exponent") else samples[:, j] for j, nm in enumerate(names)]).T
        for j, nm in enumerate(names):  # coefficients at the data's centre, as in centred_jacobian
            if nm.startswith("coefficient["):
                cols[:, j] -= samples[:, names.index(f"exponent[{nm[12:-1]}]")] * centre[nm[12:-1]]
            elif nm == "coefficient":
                cols[:, j] -= sum(samples[:, names.index(f"exponent[{a}]")] * centre[a]
                                  for a in axes)
        # A resample whose log-coefficient overflowed exp() holds inf (it has no law:
        # FitResult.bootstrap_laws leaves it out); its inf - inf in std() was NaN.
        cols = cols[np.all(np.isfinite(cols), axis=1)]
        # A column constant up to rounding (a floor every resample puts at its bound) has
        # a std of a few ulps, and corrcoef's own variance of it can round to 0 (0/0).
        scale = np.maximum(np.abs(cols).max(axis=0, initial=0.0), 1.0)
        keep = (cols.std(axis=0) > 1e-12 * scale if len(cols) >= 20
                else np.zeros(len(names), dtype=bool))
        if keep.sum() >= 2:
            corr = np.full((len(names), len(names)), np.nan)
            sub = np.corrcoef(cols[:, keep].T)
            idx = np.flatnonzero(keep)
            corr[np.ix_(idx, idx)] = sub
            source = "bootstrap"
    norms = np.linalg.norm(jac, axis=0)
    sv = np.linalg.svd(jac / np.where(norms > 0, norms, 1.0), compute_uv=False)
    cond = math.inf if sv[-1] <= 0 or np.any(norms == 0) else float(sv[0] / sv[-1])
    if corr is None and np.isfinite(cond):
        corr = _local_correlation(jac)
        source = "local (JᵀJ)⁻¹"
    if corr is not None:
        fitted_names = fam.names(axes)
        pairs = []
        for i in range(len(fitted_names)):
            for j in range(i + 1, len(fitted_names)):
                a, b = fitted_names[i], fitted_names[j]
                if a.startswith("coefficient[") and b == f"exponent[{a[12:-1]}]":
                    continue  # one term's own trade-off: judged by its interval (not-identified)
                limit = FLOOR_CORRELATION_LIMIT if i == 0 and fam.limit is not None else (
                    CORRELATION_LIMIT)
                if abs(corr[i, j]) > limit:
                    pairs.append((fitted_names[i], fitted_names[j], corr[i, j]))
        for a, b, r in pairs:
            out.append(FitWarning(
                "correlated-estimates",
                f"the estimates of {a} and {b} are correlated {r:+.3f} ({source}; "
                f"coefficients at their axis's weighted centre): the data pin down a "
                f"combination of them, not each", "add runs that separate their "
                "effects (a wider range of the axis involved, or larger scale for the floor); "
                "report the combination, not each", parameters=(a, b)))
    if cond > CONDITION_LIMIT:
        out.append(FitWarning(
            "ill-conditioned",
            f"the Jacobian of the log residuals is ill-conditioned (condition number "
            f"{cond:.3g} > {CONDITION_LIMIT:g} after scaling its columns): some parameter "
            f"combination barely changes the fit", "see the other warnings for the parameter "
            "at fault; bound it (floor=...) or drop the axis the data cannot inform"))
    return out
