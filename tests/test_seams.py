"""The seams of issue 25, item 5: simulators and planners ask the rule and turn objects.

Each selection rule of :data:`rlscale.theory.reward.RULES` declares the law of its
selected candidate's standardised score (``sample_top``) and its gain at a KL
budget (``top_at_kl``); the simulators use those instead of branching on the
method's name.  Each inference turn is a class of its kind declaring its law, its
DCP form and what the planners need (``sequential``, ``commits_once``); the
planners ask it instead of branching on ``kind``.  The checks hold for every rule
and kind, against independent computations (scipy quadrature, closed forms written
here), so a new rule or kind is tested by being listed.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr

from rlscale.optimize import adaptive_plan, continuous_plan
from rlscale.simulate import generalising_proxy_gain
from rlscale.theory import CoverageTurn, EmpiricalTurn, SelectionTurn, Turn, VerifierTurn
from rlscale.theory._turns import KINDS
from rlscale.theory.reward import RULES


def _top_by_quadrature(name: str, n: float, k: float) -> float:
    """Mean standardised score of the selected candidate, from its density (scipy.quad)."""
    if name == "bon":  # max of n normals: density n φ Φ^{n−1}, in log space
        def f(x: float) -> float:
            return x * math.exp(math.log(n) + stats.norm.logpdf(x)
                                + (n - 1) * float(log_ndtr(x)))

        c = math.sqrt(2 * math.log(n)) if n > 2 else 0.0
        return integrate.quad(f, c - 12, c + 8, points=[c - 1, c, c + 1], limit=400)[0]
    if name == "quantile":  # N(0, 1) above its 1 − 1/n quantile
        z = stats.norm.isf(1.0 / n)
        return n * integrate.quad(lambda x: x * stats.norm.pdf(x), z, np.inf)[0]
    return math.sqrt(2.0 * min(k, math.log(n)))  # tilt: N(β, 1)


@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize(("n", "k"), [(1.5, 10.0), (50.0, 2.0), (1e6, 30.0)])
def test_sample_top_has_the_rules_mean(name: str, n: float, k: float) -> None:
    rule = RULES[name]
    s = rule.sample_top(np.random.default_rng(7), 200_000, n, k)
    want = _top_by_quadrature(name, n, k)
    se = s.std(ddof=1) / math.sqrt(s.size)
    assert abs(s.mean() - want) < 4 * se
    assert math.isclose(float(rule.top(np.float64(n), np.float64(k))), want, rel_tol=1e-7)


@pytest.mark.parametrize("name", list(RULES))
def test_sample_top_is_finite_beyond_the_float_range_of_n(name: str) -> None:
    s = RULES[name].sample_top(np.random.default_rng(0), 50_000, 1e300, 1e4)
    assert np.isfinite(s).all()
    # the selected score of any rule is at most sqrt(2 log n) plus a few units
    assert 30 < s.mean() < math.sqrt(2 * math.log(1e300)) + 1


@pytest.mark.parametrize("name", list(RULES))
def test_generalising_proxy_gain_is_rho_times_the_rules_gain(name: str) -> None:
    K = np.array([0.5, 3.0, 30.0])
    r = generalising_proxy_gain(1e4, K, d=4, method=name, trials=50, rng=1)
    if name == "bon":  # e(n) at the n whose KL log n − (n−1)/n is K
        from scipy.optimize import brentq

        ns = [math.exp(brentq(lambda t, k=k: t - 1 + math.exp(-t) - k, 0, 100)) for k in K]
        std = [_top_by_quadrature("bon", n, 0.0) for n in ns]
    elif name == "quantile":  # KL log n: n = e^K
        std = [_top_by_quadrature("quantile", math.exp(k), 0.0) for k in K]
    else:
        std = np.sqrt(2 * K)
    np.testing.assert_allclose(r.gain, r.rho * np.asarray(std), rtol=1e-7)


def test_generalising_proxy_gain_takes_best_of_n_past_float_pools() -> None:
    # KL 800 needs n ≈ e^801 for best-of-n: computed through log n, below the envelope.
    r = generalising_proxy_gain(1e4, [800.0], d=4, method="bon", trials=50, rng=1)
    assert 0.99 * r.rho * math.sqrt(2 * 800) < r.gain[0] < r.rho * math.sqrt(2 * 800)


# ---------------------------------------------------------- inference turns, one class per kind

#: One turn of each kind, with the closed form of its log p(n) written here from the
#: module docstring's formulas (selection: scipy quadrature over the winner's score).
TURN_CASES = [
    (CoverageTurn(0.3, cost=2), lambda n: math.log(1 - 0.7**n)),
    (VerifierTurn(0.3, 0.1, 0.2), None),  # terminal: filled in below
    (VerifierTurn(0.3, 0.1, 0.2, failures="retried"), lambda n: math.log(1 - (1 - 0.24) ** n)),
    (SelectionTurn(0.2, 0.7), None),
    (EmpiricalTurn(-1.7, -0.4), lambda n: -1.7 * n**-0.4),
]


TURN_IDS = ["coverage", "verifier-terminal", "verifier-retried", "selection", "empirical"]


def _terminal_log_p(n: float) -> float:
    a = 0.3 * 0.8 + 0.7 * 0.1
    pi, rho = 0.3 * 0.8 / a, 0.3 * 0.2 / (1 - a)
    return math.log(pi - (pi - rho) * (1 - a) ** n)


def _selection_log_p(n: float) -> float:
    z, s = stats.norm.isf(0.2), 0.7

    def f(w: float) -> float:
        dens = math.exp(math.log(n) + stats.norm.logpdf(w) + (n - 1) * float(log_ndtr(w)))
        return dens * stats.norm.cdf((w - z * math.sqrt(1 + s * s)) / s)

    return math.log(integrate.quad(f, -10, 12, limit=200)[0])


ORACLES = {"verifier-terminal": _terminal_log_p, "selection": _selection_log_p}


def _oracle(turn: Turn, law: Any) -> Any:
    if law is not None:
        return law
    return ORACLES["selection" if turn.kind == "selection" else "verifier-terminal"]


@pytest.mark.parametrize(("turn", "law"), TURN_CASES, ids=TURN_IDS)
def test_each_kind_has_its_law(turn: Turn, law: Any) -> None:
    law = _oracle(turn, law)
    for n in (1, 2, 7, 40):
        assert math.isclose(float(turn.log_success(n)), law(n), rel_tol=1e-9, abs_tol=1e-12)
    assert float(turn.log_success(0)) == -math.inf


@pytest.mark.parametrize(("turn", "law"), TURN_CASES, ids=TURN_IDS)
def test_the_dcp_form_is_the_law(turn: Turn, law: Any) -> None:
    import cvxpy as cp

    if turn.kind == "selection":
        with pytest.raises(ValueError, match="has none"):
            turn.dcp_log_success(cp, cp.Variable())
        return
    for n in (1.0, 3.5, 40.0):
        x = cp.Variable(nonneg=True)
        x.value = n
        expr = cp.Constant(0.0) + turn.dcp_log_success(cp, x)
        assert expr.is_concave()
        assert math.isclose(float(expr.value), _oracle(turn, law)(n), rel_tol=1e-9)


@pytest.mark.parametrize(("turn", "law"), TURN_CASES, ids=TURN_IDS)
def test_declared_properties_say_what_the_planners_do(turn: Turn, law: Any) -> None:
    turns = [turn, CoverageTurn(0.5)]
    if turn.sequential:
        assert 0 < adaptive_plan(turns, 12).success <= 1
    else:
        with pytest.raises(ValueError, match="sequential"):
            adaptive_plan(turns, 12)
    if turn.commits_once:
        with pytest.raises(ValueError, match="n must be 0 or >= 1"):
            turn.log_success(0.5)
    else:
        assert np.isfinite(float(turn.log_success(0.5)))
    if turn.kind == "selection":
        with pytest.raises(ValueError, match="DCP"):
            continuous_plan(turns, 12)


def test_turn_of_a_kind_is_the_kinds_class() -> None:
    built = {
        "coverage": Turn("coverage", 0.3, cost=2),
        "verifier": Turn("verifier", q=0.3, fpr=0.1, fnr=0.2, failures="retried"),
        "selection": Turn(kind="selection", q=0.2, noise=0.7),
        "empirical": Turn("empirical", a=-1.7, b=-0.4),
    }
    assert set(built) == set(KINDS)
    assert built["coverage"] == Turn.with_coverage(0.3, cost=2) == CoverageTurn(0.3, cost=2)
    assert built["verifier"] == Turn.with_verifier(0.3, fpr=0.1, fnr=0.2, failures="retried")
    assert built["selection"] == Turn.with_selection(0.2, noise=0.7)
    assert built["empirical"] == Turn.with_empirical(-1.7, -0.4)
    for kind, turn in built.items():
        assert isinstance(turn, Turn) and turn.kind == kind
        assert Turn(**turn.as_dict()) == turn  # as_dict round-trips through the factory
    # the old one dataclass's dict (every kind's fields, defaults where unused) still builds
    legacy = {"kind": "coverage", "q": 0.5, "cost": 3, "fpr": 0.0, "fnr": 0.0,
              "failures": "terminal", "noise": 0.0, "a": 0.0, "b": 0.0}
    assert Turn(**legacy) == CoverageTurn(0.5, cost=3)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kind": "coverage", "q": 0.5, "fpr": 0.2}, "a coverage turn takes no fpr"),
    ({"kind": "empirical", "a": -1.0, "b": -0.5, "q": 0.3}, "a empirical turn takes no q"),
    ({"kind": "selection", "q": 0.5, "noise": 1.0, "failures": "retried"},
     "takes no failures"),
])
def test_turn_refuses_a_field_its_kind_does_not_take(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Turn(**kwargs)


# ---------------------------------------------------------- no name chains left (issue 25 goal)
ROOT = Path(__file__).resolve().parents[1]
#: The simulators and the inference modules (laws, context turns, planners).
SEAM_FILES = [*sorted((ROOT / "simulate").glob("*.py")),
              ROOT / "theory" / "_turns.py", ROOT / "theory" / "_context.py",
              ROOT / "optimize" / "_inference.py", ROOT / "optimize" / "_context_plan.py"]
#: Names whose string value picks a behaviour: those are asked of an object or a table.
DISPATCH_NAMES = ("method", "kind", "algorithm", "how")


def _dispatch_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name) and node.id in DISPATCH_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in DISPATCH_NAMES:
        # numpy's dtype.kind ("b", "iu") is a type code, not a name of ours
        inner = node.value
        if not (isinstance(inner, ast.Attribute) and inner.attr == "dtype"):
            return node.attr
    return None


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_is_literal(e) for e in node.elts)
    return False


def name_chains(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each comparison of a dispatch name with a string literal.

    ``kind == "x"``, ``method != "y"``, ``algorithm in ("a", "b")``: the tests of an
    if/elif chain that branches on a name (AST, so comments and strings do not count).
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if not isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn):
                continue
            if (_dispatch_name(left) and _is_literal(right)) or (
                    _dispatch_name(right) and _is_literal(left)):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_detector_finds_a_chain() -> None:
    src = ('if method == "bon":\n    pass\nelif t.kind in ("a", "b"):\n    pass\n'
           'ok = arr.dtype.kind == "b" or method in METHODS or kind == other\n')
    assert [line for line, _ in name_chains(src)] == [1, 3]


@pytest.mark.parametrize("path", SEAM_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_method_or_kind_chains(path: Path) -> None:
    chains = name_chains(path.read_text(encoding="utf-8"))
    assert not chains, (f"{path.relative_to(ROOT)} branches on a name: ask the rule, "
                        f"algorithm or turn object instead: {chains}")
