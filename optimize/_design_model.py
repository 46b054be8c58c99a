"""Sensitivities of a law's predictions to its parameters: what a local design is built on.

A design for a nonlinear law linearises the law at parameter values ``θ̂``
(Chernoff 1953, *Ann. Math. Statist.* 24, "locally optimal designs"): a run at
``x_i`` carries the information ``J_iᵀ W J_i`` about the parameters, with
``J_i = ∂ log f(x_i; u) / ∂u`` (Atkinson, Donev & Tobias 2007, ch. 17).  The
coordinates are the fitter's: the fit minimises the Huber loss of *log*
residuals (Hoffmann et al. 2022, approach 3), so predictions are ``log f``,
and positive parameters enter through their logarithms (``u = log θ``; the
exponents of the built-in families stay linear, as in
:func:`~rlscale.optimize.fit_law`).  A design is invariant to any smooth
reparameterisation at the optimum (D-optimality up to a constant, V-optimality
exactly), so the choice only matters for the conditioning of the solves.

Models (each a :class:`DesignModel`: a law *bound to parameter values*):

:class:`FamilyModel`
    :class:`~rlscale.theory.AdditiveLaw`, :class:`~rlscale.theory.MultiplicativeLaw`
    and :class:`~rlscale.theory.PassRateLaw` (designed on its loss ``1/p``,
    the additive law the fitter fits).  Analytic: for ``L = E + Σ_i a_i
    x_i^(−α_i)`` with ``l_i = a_i x_i^(−α_i)``, ``∂ log L/∂ log E = E/L``,
    ``∂ log L/∂ log a_i = l_i/L`` and ``∂ log L/∂α_i = −l_i log x_i / L``
    (differentiate ``log(E + Σ l_i)``; the softmax weights of the
    log-sum-exp), computed in log space.
:class:`ExpressionModel`
    An :class:`~rlscale.theory.ExpressionLaw` at parameter values: sympy's
    symbolic ``∂f/∂θ`` (:meth:`~rlscale.theory.ExpressionLaw.gradient`),
    ``∂ log f/∂u_j = (∂f/∂θ_j)/f · θ_j`` for a positive parameter (chain rule
    through ``θ = e^u``), ``(∂f/∂θ_j)/f`` otherwise.
:class:`MultiOutputModel`
    Several expression laws over the same axes sharing parameters (one loss
    per domain, measured by every run): ``J_i`` has one row per output.
:class:`NumericModel`
    Any function ``f(values, params)``: central differences in ``u`` (step
    ``h_j = 1e-5·max(1, |u_j|)``, truncation error ``O(h²)``).  The fallback
    for a law the others do not cover; tests cross-check the analytic models
    against it and against complex-step derivatives.

Every model also plans: :meth:`DesignModel.plan` is the compute-optimal
allocation at a budget (the geometric program for built-in and posynomial
laws, SLSQP otherwise), which a plan target (:mod:`rlscale.optimize._design_target`)
evaluates under every law of a robust design.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rlscale.theory._laws import AdditiveLaw, Law, MultiplicativeLaw, PassRateLaw
from rlscale.theory._posynomial import Posynomial
from rlscale.theory._validation import check_mapping, check_scalar

__all__ = ["DesignModel", "ExpressionModel", "FamilyModel", "MultiOutputModel", "NumericModel",
           "ProfiledModel", "as_model"]


def _columns(x: Mapping[str, Any], axes: Sequence[str]) -> np.ndarray:
    """``(n, d)`` log axis values in ``axes`` order (checked positive and finite)."""
    if not isinstance(x, Mapping) and not hasattr(x, "columns"):
        raise TypeError(f"x must be a table (a mapping axis -> values, or a DataFrame) with "
                        f"the columns {list(axes)}; got {type(x).__name__}")
    cols = []
    for a in axes:
        if a not in x:
            raise ValueError(f"x has no column {a!r} (the law's axes are {list(axes)})")
        try:
            v = np.asarray(x[a], dtype=float).ravel()
        except (TypeError, ValueError):
            raise TypeError(f"x[{a!r}] must hold numbers; got {x[a]!r:.60}") from None
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            bad = int(np.flatnonzero(~np.isfinite(v) | (v <= 0))[0])
            raise ValueError(f"axis {a!r} must be finite and > 0 at every point; got "
                             f"{a}={v[bad]!r} at row {bad}")
        cols.append(np.log(v))
    n = {c.size for c in cols}
    if len(n) > 1:
        raise ValueError(f"axis columns {list(axes)} have different lengths {sorted(n)}")
    return np.column_stack(cols) if cols else np.empty((0, 0))


def _names(name: str, value: Any) -> tuple[str, ...]:
    """A non-empty sequence of names (axes, outputs), not a bare string."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value or not all(
            isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a non-empty sequence of names; got {value!r:.60}")
    return tuple(value)


def _weights(outputs: Sequence[str], weights: Any) -> np.ndarray:
    """The plan's weights over the outputs (default: equal)."""
    if weights is None:
        return np.full(len(outputs), 1.0 / len(outputs))
    weights = check_mapping("weights", weights)
    missing = [o for o in outputs if o not in weights]
    if missing:
        raise ValueError(f"weights must give every output {list(outputs)}; missing {missing}")
    return np.array([check_scalar(f"weights[{o!r}]", weights[o], low=0.0) for o in outputs])


def _new_params(params: Any, order: Sequence[str]) -> dict[str, float]:
    """``params`` checked to give a value for each name of ``order``."""
    params = check_mapping("params", params)
    missing = [p for p in order if p not in params]
    if missing:
        raise ValueError(f"params must give every parameter {list(order)}; missing {missing}")
    return {p: check_scalar(f"params[{p!r}]", params[p]) for p in order}


def plan_bounds(bounds: Any) -> dict[str, tuple[float, float]] | None:
    """``bounds`` as ``{axis: (low, high)}``, ``0 < low <= high <= inf``."""
    if bounds is None:
        return None
    if not isinstance(bounds, Mapping):
        raise TypeError(f"bounds must be a mapping axis -> (low, high); got "
                        f"{type(bounds).__name__}")
    out = {}
    for a, b in bounds.items():
        if not isinstance(b, Sequence) or isinstance(b, str | bytes) or len(b) != 2:
            raise ValueError(f"bounds[{a!r}] must be (low, high); got {b!r:.60}")
        lo = check_scalar(f"bounds[{a!r}] low", b[0], low=0.0, low_open=True)
        hi = check_scalar(f"bounds[{a!r}] high", b[1], low=lo, allow_inf=True)
        out[str(a)] = (lo, hi)
    return out


def plan_arguments(cost: Any, budget: Any, bounds: Any
                   ) -> tuple[Posynomial, float, dict[str, tuple[float, float]] | None]:
    """:meth:`DesignModel.plan`'s arguments checked: a cost expression is parsed."""
    from rlscale.theory._posynomial_parser import parse_posynomial

    if isinstance(cost, str):
        cost = parse_posynomial(cost)
    elif not isinstance(cost, Posynomial):
        raise TypeError(f"cost must be a Posynomial or a cost expression such as '6*N*D'; "
                        f"got {type(cost).__name__}")
    if not cost.axes:
        raise ValueError(f"cost must depend on the law's axes (a plan spends the budget on "
                         f"them); got the constant cost={cost}")
    return cost, check_scalar("budget", budget, low=0.0, low_open=True), plan_bounds(bounds)


class DesignModel(abc.ABC):
    """A law bound to parameter values, with the sensitivities a design needs.

    Subclasses set :attr:`axes`, :attr:`outputs` and :attr:`names` and
    implement :meth:`log_predict`, :meth:`jacobian` and :meth:`plan`.

    Attributes
    ----------
    axes : tuple of str
        The columns the law reads (strictly positive).
    outputs : tuple of str
        What one run measures (one name for a single-output law).
    names : tuple of str
        The coordinates ``u`` the sensitivities are taken in (``log E``,
        ``exponent[N]``, ...).
    """

    axes: tuple[str, ...]
    outputs: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def n_params(self) -> int:
        return len(self.names)

    @abc.abstractmethod
    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        """``log f`` at the rows of ``x`` (a mapping of axis columns): shape ``(n, m)``."""

    @abc.abstractmethod
    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        """``∂ log f / ∂u`` at the rows of ``x``: shape ``(n, m, p)``."""

    @abc.abstractmethod
    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        """The compute-optimal axis values at ``budget`` (continuous) under this law."""

    def loss(self, x: Mapping[str, Any]) -> np.ndarray:
        """``f`` itself (``exp`` of :meth:`log_predict`), shape ``(n, m)``."""
        return np.exp(self.log_predict(x))

    def _finite(self, out: np.ndarray, what: str) -> np.ndarray:
        bad = ~np.isfinite(out)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(f"{type(self).__name__}: the {what} is not finite at row {row} "
                             "(the law leaves its domain there: a non-positive prediction, "
                             "or an overflow); the design works on log predictions")
        return out


# -- built-in families ----------------------------------------------------------

class FamilyModel(DesignModel):
    """An additive, multiplicative or pass-rate law with its analytic sensitivities.

    Coordinates: ``log floor`` (always for the additive and pass-rate laws, a
    zero floor with zero sensitivity, so that every bootstrap law of a fit has
    the same coordinates; for the multiplicative law only when its floor is >
    0), ``log coefficient[axis]`` (one per axis; one ``log coefficient`` for the
    multiplicative law) and ``exponent[axis]``.
    A pass-rate law is designed on its loss ``1/p`` (floor ``1/p_max``,
    coefficients ``c_i/p_max``), the quantity its fit minimises.

    Examples
    --------
    >>> law = AdditiveLaw(1.0, {"N": 2.0}, {"N": 0.5})
    >>> m = FamilyModel(law)
    >>> m.names
    ('log floor', 'log coefficient[N]', 'exponent[N]')
    >>> J = m.jacobian({"N": [4.0]})[0, 0]   # L = 1 + 2/2 = 2: weights 1/2, 1/2
    >>> [round(float(v), 6) for v in J]
    [0.5, 0.5, -0.693147]
    """

    def __init__(self, law: Law) -> None:
        if isinstance(law, PassRateLaw):
            law_loss: Law = law.to_additive()
        elif isinstance(law, AdditiveLaw | MultiplicativeLaw):
            law_loss = law
        else:
            raise TypeError(f"FamilyModel takes an AdditiveLaw, MultiplicativeLaw or "
                            f"PassRateLaw; got {type(law).__name__}")
        self.law = law
        self._loss_law = law_loss
        self.axes = tuple(law.axes)
        self.outputs = ("loss",)
        # The additive floor is always a coordinate (so every law of an ensemble has the
        # same ones; a zero floor has zero sensitivity); the multiplicative law's only
        # when it is > 0 (its fitted family has none).
        self._has_floor = isinstance(law_loss, AdditiveLaw) or law_loss.floor > 0
        head = ["log floor"] if self._has_floor else []
        if isinstance(law_loss, AdditiveLaw):
            self.names = tuple(head + [f"log coefficient[{a}]" for a in self.axes]
                               + [f"exponent[{a}]" for a in self.axes])
        else:
            self.names = tuple(head + ["log coefficient"]
                               + [f"exponent[{a}]" for a in self.axes])

    def _log_terms(self, logx: np.ndarray) -> np.ndarray:
        """Log of each term of the loss, ``(n, T)``: the floor first (``-inf`` when 0)."""
        law = self._loss_law
        log_floor = math.log(law.floor) if law.floor > 0 else -math.inf
        cols = [np.full(logx.shape[0], log_floor)] if self._has_floor else []
        if isinstance(law, AdditiveLaw):
            for i, a in enumerate(self.axes):
                cols.append(math.log(law.coefficients[a]) - law.exponents[a] * logx[:, i])
        else:
            alpha = np.array([law.exponents[a] for a in self.axes])
            cols.append(math.log(law.coefficient) - logx @ alpha)
        return np.column_stack(cols)

    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        from scipy.special import logsumexp

        return logsumexp(self._log_terms(_columns(x, self.axes)), axis=1)[:, None]

    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        from scipy.special import softmax

        logx = _columns(x, self.axes)
        w = softmax(self._log_terms(logx), axis=1)  # each term's share l_j / L
        _n, d = logx.shape
        head = [w[:, 0]] if self._has_floor else []
        terms = w[:, 1:] if self._has_floor else w
        if isinstance(self._loss_law, AdditiveLaw):
            cols = head + [terms[:, i] for i in range(d)] + [-terms[:, i] * logx[:, i]
                                                              for i in range(d)]
        else:
            cols = head + [terms[:, 0]] + [-terms[:, 0] * logx[:, i] for i in range(d)]
        return np.stack(cols, axis=-1)[:, None, :]

    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        from rlscale.optimize._alloc_verbs import allocate

        cost, budget, bounds = plan_arguments(cost, budget, bounds)
        a = allocate(self.law, cost, budget, bounds, round_integers=False)
        return {k: float(v) for k, v in a.values.items()}

    def __repr__(self) -> str:
        return f"FamilyModel({self.law!r})"


# -- expression laws ---------------------------------------------------------------

def _expression_law(law: Any) -> Any:
    from rlscale.theory._expr import ExpressionLaw

    if not isinstance(law, ExpressionLaw):
        raise TypeError(f"expected an ExpressionLaw; got {type(law).__name__}")
    return law


class ExpressionModel(DesignModel):
    """An :class:`~rlscale.theory.ExpressionLaw` at parameter values.

    Coordinates ``log θ`` for the parameters whose declared range lies in
    ``(0, ∞)`` (as the expression fitter fits them), ``θ`` otherwise.

    Examples
    --------
    >>> from rlscale.theory import ExpressionLaw
    >>> law = ExpressionLaw("E + A/N**a", axes=["N"], params={"E": (0.1, 10), "A": (1, 1e4),
    ...                                                       "a": (0.05, 2)})
    >>> m = ExpressionModel(law, {"E": 1.0, "A": 2.0, "a": 0.5})
    >>> m.names
    ('log A', 'log E', 'log a')
    >>> [round(float(v), 6) for v in m.jacobian({"N": [4.0]})[0, 0]]  # a·∂/∂a = -0.5·ln 4/2
    [0.5, 0.5, -0.346574]
    """

    def __init__(self, law: Any, params: Mapping[str, float]) -> None:
        self.law = _expression_law(law)
        params = check_mapping("params", params)
        missing = [p for p in self.law.params if p not in params]
        if missing:
            raise ValueError(f"params must give a value for every parameter "
                             f"{list(self.law.params)}; missing {missing}")
        self.params = {p: check_scalar(f"params[{p!r}]", params[p]) for p in self.law.params}
        self.positive = np.array([self.law.positive[p] for p in self.law.params])
        for p, pos in zip(self.law.params, self.positive):
            if pos and self.params[p] <= 0:
                raise ValueError(f"parameter {p} is declared positive (range "
                                 f"{self.law.ranges[p]}) but has the value {self.params[p]:g}")
        self.axes = tuple(self.law.axes)
        self.outputs = ("loss",)
        self.names = tuple(f"log {p}" if pos else p
                           for p, pos in zip(self.law.params, self.positive))

    def _x(self, x: Mapping[str, Any]) -> dict[str, np.ndarray]:
        logx = _columns(x, self.axes)
        return {a: np.exp(logx[:, i]) for i, a in enumerate(self.axes)}

    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        f = self.law.evaluate(self._x(x), self.params)
        with np.errstate(all="ignore"):
            out = np.log(np.where(f > 0, f, np.nan))
        return self._finite(out, "log prediction")[:, None]

    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        vals = self._x(x)
        f = self.law.evaluate(vals, self.params)
        g = self.law.gradient(vals, self.params)
        theta = np.array([self.params[p] for p in self.law.params])
        with np.errstate(all="ignore"):
            jac = g / f[:, None] * np.where(self.positive, theta, 1.0)[None, :]
        return self._finite(jac, "sensitivity")[:, None, :]

    def bound(self) -> Any:
        return self.law.bind(self.params)

    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        from rlscale.optimize._fit_expr import allocate_expression

        cost, budget, bounds = plan_arguments(cost, budget, bounds)
        a = allocate_expression(self.bound(), cost, budget, bounds)
        if not a.success:
            raise ValueError(f"no plan at budget {budget:g} under {self.bound()}: "
                             f"{a.message}")
        return {k: float(v) for k, v in a.values.items()}

    def __repr__(self) -> str:
        return f"ExpressionModel({str(self.law.expr)!r}, {self.params})"


def _slsqp_plan(model: DesignModel, cost: Posynomial, budget: float,
                bounds: Mapping[str, tuple[float, float]] | None,
                weights: np.ndarray, starts: int = 6, seed: int = 0) -> dict[str, float]:
    """Minimise ``Σ_d weights_d f_d(x)`` under ``cost(x) ≤ budget`` by SLSQP in ``log x``.

    A local method from the equal split and random splits of the budget; the
    best feasible end point is returned (a ``ValueError`` when none is).
    """
    from scipy.optimize import minimize

    cost, budget, bounds = plan_arguments(cost, budget, bounds)
    axes = list(model.axes)
    unknown = [v for v in cost.axes if v not in axes]
    if unknown:
        raise ValueError(f"the cost mentions {unknown}, which are not axes of the law {axes}: "
                         "a plan target needs a cost in the law's axes")
    box = []
    for a in axes:
        lo, hi = (bounds or {}).get(a, (None, None))
        box.append((math.log(lo) if lo else -50.0, math.log(hi) if hi else 50.0))

    def values(u: np.ndarray) -> dict[str, np.ndarray]:
        return {a: np.array([math.exp(min(v, 700.0))]) for a, v in zip(axes, u)}

    def f(u: np.ndarray) -> float:
        try:
            v = float(np.exp(model.log_predict(values(u)))[0] @ weights)
        except ValueError:
            return 1e300
        return v if math.isfinite(v) else 1e300

    def g(u: np.ndarray) -> float:
        return math.log(budget) - math.log(float(cost.evaluate(values(u))[0]))

    rng = np.random.default_rng(seed)
    best = None
    for i in range(starts):
        share = np.full(len(axes), 1.0 / len(axes)) if i == 0 else rng.dirichlet(
            np.ones(len(axes)))
        u0 = np.clip(np.log(np.maximum(share * budget / max(len(cost.terms), 1), 1e-12)),
                     [b[0] for b in box], [b[1] for b in box])
        res = minimize(f, u0, method="SLSQP", bounds=box,
                       constraints=[{"type": "ineq", "fun": g}],
                       options={"ftol": 1e-12, "maxiter": 500})
        if g(res.x) >= -1e-9 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise ValueError(f"no feasible plan at budget {budget:g} from {starts} SLSQP starts")
    return {a: float(math.exp(v)) for a, v in zip(axes, best.x)}


class MultiOutputModel(DesignModel):
    """Several expression laws (one per output, e.g. one loss per domain) sharing parameters.

    Every run measures every output, so a candidate's sensitivity ``J_i`` has
    one row per output.  The plan minimises ``Σ_d weights_d f_d`` (default:
    the mean of the outputs).  rlscale's fitters fit one target at a time, so a
    multi-output law is designed for at the law level: pass its parameter
    values (and, for a robust design, parameter draws) yourself.

    Parameters
    ----------
    laws : mapping output -> ExpressionLaw or str
        Strings are parsed with ``axes``; every law must have the same axes.
    params : mapping name -> float
        Values of the union of the laws' parameters.
    axes : sequence of str, optional
        Needed when ``laws`` holds strings.
    ranges : mapping name -> (low, high), optional
        Declared ranges (positive ones are designed in log coordinates).
    weights : mapping output -> float, optional
        The plan's weights.

    Examples
    --------
    >>> m = MultiOutputModel({"code": "E1 + A/N**a", "math": "E2 + A/N**a"},
    ...                      {"E1": 1.0, "E2": 2.0, "A": 4.0, "a": 0.5}, axes=["N"],
    ...                      ranges={"E1": (0.1, 10), "E2": (0.1, 10), "A": (1, 100),
    ...                              "a": (0.1, 2)})
    >>> m.names, m.outputs
    (('log A', 'log E1', 'log E2', 'log a'), ('code', 'math'))
    >>> m.jacobian({"N": [4.0]}).shape   # one run, two outputs, four parameters
    (1, 2, 4)
    """

    def __init__(self, laws: Mapping[str, Any], params: Mapping[str, float], *,
                 axes: Sequence[str] | None = None,
                 ranges: Mapping[str, tuple[float, float]] | None = None,
                 weights: Mapping[str, float] | None = None) -> None:
        from rlscale.theory._expr import ExpressionLaw, parse_expression

        laws = check_mapping("laws", laws)
        if len(laws) < 1:
            raise ValueError("laws must name at least one output")
        if axes is not None:
            axes = _names("axes", axes)
        if ranges is not None:
            ranges = check_mapping("ranges", ranges)
            for p, r in ranges.items():
                if isinstance(r, str | bytes) or not isinstance(r, Sequence) or len(r) != 2:
                    raise TypeError(f"ranges[{p!r}] must be (low, high); got {r!r:.60}")
        parsed = {}
        for name, law in laws.items():
            if isinstance(law, str):
                if axes is None:
                    raise ValueError("axes must be given when laws are expression strings")
                expr = parse_expression(law)
                own = {s.name for s in expr.free_symbols} - set(axes)
                parsed[name] = ExpressionLaw(expr, list(axes), {
                    p: r for p, r in (ranges or {}).items() if p in own})
            elif isinstance(law, ExpressionLaw):
                parsed[name] = law
            else:
                raise TypeError(f"laws[{name!r}] must be an ExpressionLaw or an expression "
                                f"string; got {type(law).__name__}")
        first = next(iter(parsed.values())).axes
        for name, law in parsed.items():
            if set(law.axes) != set(first):
                raise ValueError(f"every output's law must have the same axes; {name!r} has "
                                 f"{list(law.axes)}, the first {list(first)}")
        self.laws = parsed
        self.axes = tuple(first)
        self.outputs = tuple(parsed)
        names = sorted({p for law in parsed.values() for p in law.params})
        self.params = _new_params(params, names)
        pos = {}
        for law in parsed.values():
            for p in law.params:
                pos[p] = pos.get(p, True) and law.positive[p]
        self.positive = np.array([pos[p] for p in names])
        self._order = names
        self.names = tuple(f"log {p}" if pos[p] else p for p in names)
        self.weights = _weights(self.outputs, weights)

    def _x(self, x: Mapping[str, Any]) -> dict[str, np.ndarray]:
        logx = _columns(x, self.axes)
        return {a: np.exp(logx[:, i]) for i, a in enumerate(self.axes)}

    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        vals = self._x(x)
        cols = []
        for law in self.laws.values():
            f = law.evaluate(vals, {p: self.params[p] for p in law.params})
            with np.errstate(all="ignore"):
                cols.append(np.log(np.where(f > 0, f, np.nan)))
        return self._finite(np.column_stack(cols), "log prediction")

    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        vals = self._x(x)
        n = next(iter(vals.values())).size
        out = np.zeros((n, len(self.outputs), len(self._order)))
        col = {p: j for j, p in enumerate(self._order)}
        theta = np.array([self.params[p] for p in self._order])
        scale = np.where(self.positive, theta, 1.0)
        for d, law in enumerate(self.laws.values()):
            own = {p: self.params[p] for p in law.params}
            f = law.evaluate(vals, own)
            g = law.gradient(vals, own)
            with np.errstate(all="ignore"):
                for k, p in enumerate(law.params):
                    out[:, d, col[p]] = g[:, k] / f * scale[col[p]]
        return self._finite(out, "sensitivity")

    def with_params(self, params: Mapping[str, float]) -> MultiOutputModel:
        """The same laws at other parameter values (one draw of a robust design)."""
        new = object.__new__(MultiOutputModel)
        new.__dict__.update(self.__dict__)
        new.params = _new_params(params, self._order)
        return new

    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        return _slsqp_plan(self, cost, budget, bounds, self.weights)

    def __repr__(self) -> str:
        return f"MultiOutputModel(outputs={list(self.outputs)}, params={self.params})"


# -- any function -------------------------------------------------------------

class NumericModel(DesignModel):
    """Any law ``f(values, params)`` with central-difference sensitivities.

    Parameters
    ----------
    predict : callable
        ``predict(values, params) -> array`` of shape ``(n,)`` or ``(n, m)``:
        positive predictions at ``values`` (a mapping axis -> ``(n,)`` array)
        for ``params`` (a mapping name -> float).
    params : mapping name -> float
    axes : sequence of str
    outputs : sequence of str, optional
        Default ``("loss",)``.
    positive : mapping name -> bool, optional
        Parameters differentiated in ``log θ`` (default: those with a value > 0).
    weights : mapping output -> float, optional
        The plan's weights over outputs (default equal).

    Examples
    --------
    >>> m = NumericModel(lambda v, p: p["E"] + p["A"] * v["N"] ** -p["a"],
    ...                  {"E": 1.0, "A": 2.0, "a": 0.5}, axes=["N"])
    >>> [round(float(v), 6) for v in m.jacobian({"N": [4.0]})[0, 0]]
    [0.5, 0.5, -0.346574]
    """

    def __init__(self, predict: Callable[..., Any], params: Mapping[str, float],
                 axes: Sequence[str], outputs: Sequence[str] = ("loss",), *,
                 positive: Mapping[str, bool] | None = None,
                 weights: Mapping[str, float] | None = None) -> None:
        if not callable(predict):
            raise TypeError(f"predict must be callable; got {type(predict).__name__}")
        params = check_mapping("params", params)
        self._predict = predict
        self.params = {p: check_scalar(f"params[{p!r}]", v) for p, v in params.items()}
        self._order = list(self.params)
        if positive is not None:
            positive = check_mapping("positive", positive)
            for p, v in positive.items():
                if not isinstance(v, bool | np.bool_):
                    raise TypeError(f"positive[{p!r}] must be True or False; got {v!r:.60}")
        pos = {p: self.params[p] > 0 for p in self._order} if positive is None else {
            p: bool(positive.get(p, self.params[p] > 0)) for p in self._order}
        for p in self._order:
            if pos[p] and self.params[p] <= 0:
                raise ValueError(f"parameter {p} is declared positive but has the value "
                                 f"{self.params[p]:g}")
        self.positive = np.array([pos[p] for p in self._order])
        self.axes = _names("axes", axes)
        self.outputs = _names("outputs", outputs)
        self.names = tuple(f"log {p}" if pos[p] else p for p in self._order)
        self.weights = _weights(self.outputs, weights)

    def _u(self) -> np.ndarray:
        theta = np.array([self.params[p] for p in self._order])
        return np.where(self.positive, np.log(np.abs(theta) + (theta == 0)), theta)

    def _eval(self, vals: Mapping[str, np.ndarray], u: np.ndarray) -> np.ndarray:
        theta = np.where(self.positive, np.exp(u), u)
        out = np.asarray(self._predict(vals, dict(zip(self._order, theta.tolist()))),
                         dtype=float)
        n = next(iter(vals.values())).size
        out = out.reshape(n, -1)
        if out.shape[1] != len(self.outputs):
            raise ValueError(f"predict returned {out.shape[1]} outputs per row; the model "
                             f"declares {len(self.outputs)} ({list(self.outputs)})")
        with np.errstate(all="ignore"):
            return np.log(np.where(out > 0, out, np.nan))

    def _x(self, x: Mapping[str, Any]) -> dict[str, np.ndarray]:
        logx = _columns(x, self.axes)
        return {a: np.exp(logx[:, i]) for i, a in enumerate(self.axes)}

    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        return self._finite(self._eval(self._x(x), self._u()), "log prediction")

    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        vals = self._x(x)
        u = self._u()
        cols = []
        for j in range(u.size):
            h = 1e-5 * max(1.0, abs(u[j]))
            up, down = u.copy(), u.copy()
            up[j] += h
            down[j] -= h
            cols.append((self._eval(vals, up) - self._eval(vals, down)) / (2 * h))
        return self._finite(np.stack(cols, axis=-1), "sensitivity")

    def with_params(self, params: Mapping[str, float]) -> NumericModel:
        """The same function at other parameter values."""
        new = object.__new__(NumericModel)
        new.__dict__.update(self.__dict__)
        new.params = _new_params(params, self._order)
        return new

    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        return _slsqp_plan(self, cost, budget, bounds, self.weights)

    def __repr__(self) -> str:
        return f"NumericModel(axes={list(self.axes)}, params={self.params})"


# -- conversion ----------------------------------------------------------------------

class ProfiledModel(DesignModel):
    """A model with some parameters held fixed: the sensitivities of the others only.

    A fitted parameter on its bound (a floor at 0 or at a declared limit, an
    exponent at 0) has no local variance to shrink and, at a zero floor or
    coefficient, no sensitivity at all: its information is zero and the
    whole matrix singular.  The design profiles it out -- it is treated as
    known at its fitted value, the criteria and the reported uncertainties
    are those of the remaining parameters given it (Pukelsheim 2006, §3.10:
    the information for a parameter subsystem).

    Examples
    --------
    >>> m = ProfiledModel(FamilyModel(AdditiveLaw(1.0, {"N": 2.0}, {"N": 0.5})), ["log floor"])
    >>> m.names, m.jacobian({"N": [4.0]}).shape
    (('log coefficient[N]', 'exponent[N]'), (1, 1, 2))
    """

    def __init__(self, model: DesignModel, fixed: Sequence[str]) -> None:
        unknown = [f for f in fixed if f not in model.names]
        if unknown:
            raise ValueError(f"fixed names {unknown} are not parameters of the model "
                             f"{list(model.names)}")
        self.model = model
        self.fixed = tuple(f for f in model.names if f in fixed)
        self._keep = np.array([i for i, nm in enumerate(model.names) if nm not in fixed])
        if self._keep.size == 0:
            raise ValueError("every parameter is fixed: nothing left to design for")
        self.axes, self.outputs = model.axes, model.outputs
        self.names = tuple(model.names[i] for i in self._keep)
        if hasattr(model, "weights"):
            self.weights = model.weights

    def log_predict(self, x: Mapping[str, Any]) -> np.ndarray:
        return self.model.log_predict(x)

    def jacobian(self, x: Mapping[str, Any]) -> np.ndarray:
        return self.model.jacobian(x)[..., self._keep]

    def plan(self, cost: Posynomial, budget: float,
             bounds: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        return self.model.plan(cost, budget, bounds)


def as_model(law: Any, name: str = "law") -> DesignModel:
    """The :class:`DesignModel` of a law, a bound expression law or a fit's point estimate.

    Accepts a :class:`DesignModel` (returned as is), an additive,
    multiplicative or pass-rate :class:`~rlscale.theory.Law`, a bound
    expression law (:meth:`~rlscale.theory.ExpressionLaw.bind`), a
    :class:`~rlscale.optimize.FitResult` or an
    :class:`~rlscale.optimize.ExpressionFit`.
    """
    from rlscale.optimize._fit_expr import ExpressionFit
    from rlscale.optimize._fit_result import FitResult
    from rlscale.theory._expr import BoundLaw

    if isinstance(law, DesignModel):
        return law
    if isinstance(law, FitResult):
        return FamilyModel(law.law)
    if isinstance(law, ExpressionFit):
        return ExpressionModel(law.law, law.params)
    if isinstance(law, BoundLaw):
        return ExpressionModel(law.law, law.params)
    if isinstance(law, AdditiveLaw | MultiplicativeLaw | PassRateLaw):
        return FamilyModel(law)
    raise TypeError(f"{name} must be a fitted law (FitResult, ExpressionFit), an additive/"
                    f"multiplicative/pass-rate Law, a bound ExpressionLaw or a DesignModel; "
                    f"got {type(law).__name__}")


def sample_models(law: Any, n: int) -> list[DesignModel]:
    """Up to ``n`` models of a fit's bootstrap laws (evenly spaced, deterministic subset).

    A :class:`~rlscale.optimize.FitResult` gives its
    :meth:`~rlscale.optimize.FitResult.bootstrap_laws`; an
    :class:`~rlscale.optimize.ExpressionFit` its ``bootstrap_samples`` rows
    (columns in the order of ``law.params``); rows at which the law is
    invalid are skipped.  Anything else has no bootstrap: ``[]``.
    """
    from rlscale.optimize._fit_expr import ExpressionFit
    from rlscale.optimize._fit_result import FitResult

    if isinstance(law, FitResult):
        laws = law.bootstrap_laws()
        pick = _evenly(len(laws), n)
        names = FamilyModel(law.law).names
        models = [FamilyModel(laws[i]) for i in pick]
        return [m for m in models if m.names == names]
    if isinstance(law, ExpressionFit) and law.bootstrap_samples is not None:
        rows = np.asarray(law.bootstrap_samples)
        out: list[DesignModel] = []
        for i in _evenly(rows.shape[0], n):
            try:
                out.append(ExpressionModel(law.law, dict(zip(law.law.params, rows[i]))))
            except ValueError:
                continue
        return out
    return []


def _evenly(total: int, n: int) -> list[int]:
    if total <= n:
        return list(range(total))
    return sorted(set(np.linspace(0, total - 1, n).round().astype(int).tolist()))
