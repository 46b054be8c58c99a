"""The fitter's one registry (issue 25, item 2): families declare their properties, and
no module outside the registry branches on a law or family name.

The generic tests loop over every registered family and check what it *declares*
(limit, direction, linearity, the target's range, the loss the objective fits)
against what its law *does*, evaluated numerically — so a new family that states a
property wrongly fails here without a test of its own.
"""

from __future__ import annotations

import ast
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlscale.optimize import fit_law
from rlscale.optimize._fit_family import FAMILIES, Family, family
from rlscale.optimize._fit_registry import (
    DEFAULT_LAW,
    EXPRESSION,
    FRONT_ENDS,
    STARTS_HELP,
    front_end,
)

ROOT = Path(__file__).resolve().parents[1]
AXES = ("N", "D")
NAMES = sorted(FAMILIES)


# --------------------------------------------------------------------------- no name branches
def _named(node: ast.AST) -> bool:
    """A name or attribute spelled law*/family* (``law``, ``args.law``, ``fit.law.family``)."""
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)
    return name is not None and (name.startswith(("law", "family")))


def _literal(node: ast.AST) -> bool:
    """A string constant, or a tuple/list/set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return (isinstance(node, ast.Tuple | ast.List | ast.Set) and bool(node.elts)
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts))


def name_comparisons(source: str) -> list[int]:
    """Lines comparing a law/family name with a string literal (==, !=, in, not in; match)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, (a, b) in zip(node.ops, itertools.pairwise(operands)):
                if isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) and (
                        (_named(a) and _literal(b)) or (_literal(a) and _named(b))):
                    lines.append(node.lineno)
        elif isinstance(node, ast.Match) and _named(node.subject) and any(
                isinstance(c.pattern, ast.MatchValue) and _literal(c.pattern.value)
                for c in node.cases):
            lines.append(node.lineno)
    return lines


#: The registry itself may name the laws (it is where the names live).
REGISTRY = {"optimize/_fit_registry.py", "optimize/_fit_family.py"}


def test_detector_finds_every_spelling() -> None:
    """The detector can fail: each spelling the old code used is found, a lookup is not."""
    for text in ('law == "pass_rate"', 'args.law in ("sigmoid", "gao_bon")',
                 'fit.law.family != "additive"', 'family not in ["a", "b"]',
                 '"additive" == law_name', 'match law:\n    case "additive":\n        pass'):
        assert name_comparisons(text) == [1], text
    for text in ("law in FAMILIES", "family(law).limit == 'ceiling'", "name == 'floor'",
                 "law is EXPRESSION"):
        assert name_comparisons(text) == [], text


def test_no_family_string_comparisons_outside_the_registry() -> None:
    """Goal of issue 25: 0 law/family-name comparisons in optimize/, theory/ and the top
    package (28 on main at 152bb3d: optimize 23, the CLI 5)."""
    found = []
    for folder in ("optimize", "theory", "src/rlscale"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in REGISTRY:
                continue
            found += [f"{rel}:{line}" for line in name_comparisons(path.read_text())]
    assert found == [], "ask the registry (rlscale.optimize._fit_registry) instead: " + (
        ", ".join(found))


# --------------------------------------------------------------------------- declared properties
def _theta(fam: Family, rng: np.random.Generator) -> np.ndarray:
    """A random parameter vector inside the family's box (exponents in [0.3, 1.2])."""
    p = fam.n_params(len(AXES))
    theta = rng.uniform(-0.5, 1.5, p)
    ex = fam.exponent_slice(len(AXES))
    theta[ex] = rng.uniform(0.3, 1.2, len(AXES))
    lo = [b[0] for b in fam.bounds(len(AXES))]
    return np.array([max(t, low) if low is not None else t for t, low in zip(theta, lo)])


@pytest.mark.parametrize("name", NAMES)
def test_family_is_the_protocol_and_its_name(name: str) -> None:
    fam = family(name)
    assert isinstance(fam, Family)
    assert fam.name == name and FRONT_ENDS[name].family is fam
    assert fam.direction in (-1, 1) and isinstance(fam.linear, bool)
    assert fam.limit in ("floor", "ceiling", None)
    # a limit has a parameter (and fit_law keyword) of its own, and only then
    assert (fam.limit_name is None) == (fam.limit is None)
    if fam.limit_name is not None:
        assert fam.names(AXES)[0] == fam.limit_name


@pytest.mark.parametrize("name", NAMES)
def test_declared_direction_and_limit_match_the_law(name: str) -> None:
    """The law falls (direction -1) or rises (+1) in every axis, towards its declared limit:
    a floor >= 0 from above, a ceiling <= 1 from below, or 0."""
    fam, rng = family(name), np.random.default_rng(1)
    for _ in range(5):
        theta = _theta(fam, rng)
        law, params = fam.to_law(theta, AXES), fam.natural(theta, AXES)
        grid = np.logspace(0, 6, 25)
        for axis in AXES:
            other = {a: np.full_like(grid, 10.0) for a in AXES if a != axis}
            values = np.asarray(fam.target_value(law, {axis: grid, **other}), float)
            assert np.all(np.sign(np.diff(values)) == fam.direction), (name, axis)
        far = float(fam.target_value(law, dict.fromkeys(AXES, 1e+60)))
        near = float(fam.target_value(law, dict.fromkeys(AXES, 1.0)))
        limit = params[fam.limit_name] if fam.limit_name else 0.0
        assert fam.direction * (limit - near) > 0  # the limit is where the law goes
        assert abs(far - limit) <= 1e-12 * abs(near - limit)  # ... and it gets there
        if fam.limit == "ceiling":
            assert 0 < limit <= 1 == fam.target_high
        elif fam.limit == "floor":
            assert limit >= 0 and fam.target_high == math.inf


@pytest.mark.parametrize("name", NAMES)
def test_declared_loss_is_what_predict_fits(name: str) -> None:
    """``exp(predict) = loss(law(x))``, and the objective's form predicts the same."""
    fam, rng = family(name), np.random.default_rng(2)
    theta = _theta(fam, rng)
    x = rng.uniform(1, 1e4, (30, len(AXES)))
    pred, _ = fam.predict(theta[None, :], np.log(x))
    target = np.asarray(fam.target_value(fam.to_law(theta, AXES),
                                         {a: x[:, i] for i, a in enumerate(AXES)}))
    np.testing.assert_allclose(np.exp(pred[0]), fam.loss(target), rtol=1e-12)
    form = family(fam.objective_form)
    np.testing.assert_allclose(form.predict(theta[None, :], np.log(x))[0], pred, rtol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_declared_linearity_matches_predict(name: str) -> None:
    """Second differences of ``log L_hat`` along random directions vanish iff linear."""
    fam, rng = family(name), np.random.default_rng(3)
    logx = np.log(rng.uniform(1, 1e4, (30, len(AXES))))
    curvature = 0.0
    for _ in range(5):
        theta, d = _theta(fam, rng), rng.normal(size=fam.n_params(len(AXES)))
        stack = np.array([theta - d, theta, theta + d])
        p = fam.predict(stack, logx)[0]
        curvature = max(curvature, float(np.abs(p[0] + p[2] - 2 * p[1]).max()))
    assert (curvature < 1e-9) == fam.linear, curvature


@pytest.mark.parametrize("name", NAMES)
def test_centred_jacobian_spans_the_predict_jacobian(name: str) -> None:
    """Re-centring the coefficients is a change of basis: same column space, same rank."""
    fam, rng = family(name), np.random.default_rng(4)
    theta = _theta(fam, rng)
    logx = np.log(rng.uniform(1, 1e4, (30, len(AXES))))
    J = fam.predict(theta[None, :], logx, jac=True)[1][0]
    Jc, _ = fam.centred_jacobian(theta, logx)
    assert Jc.shape == J.shape
    rank = np.linalg.matrix_rank
    assert rank(J) == rank(Jc) == rank(np.hstack([J, Jc])) == J.shape[1]


@pytest.mark.parametrize("name", NAMES)
def test_fit_law_refuses_the_wrong_direction_per_declaration(name: str) -> None:
    """A target moving against the declared direction is refused, naming the law's fix."""
    fam = family(name)
    x = np.logspace(0, 3, 8)
    against = np.linspace(0.2, 0.8, 8)[::-fam.direction]  # rises for a falling law
    with pytest.raises(ValueError, match=r"as the axes grow .* but a"):
        fit_law({"N": x, "y": against}, law=name, axes=["N"], target="y")


@pytest.mark.parametrize("name", NAMES)
def test_limit_keywords_follow_the_declaration(name: str) -> None:
    """floor= and p_max= are accepted exactly by the family declaring that limit."""
    from rlscale.optimize._fit_data import limit_bounds

    fam = family(name)
    for keyword in ("floor", "p_max"):
        kw = {"floor": None, "p_max": None, keyword: (0.5, 0.9)}
        if fam.limit_name == keyword:
            assert limit_bounds(name, kw["floor"], kw["p_max"]) == (0.5, 0.9)
        else:
            with pytest.raises(ValueError, match=keyword):
                limit_bounds(name, kw["floor"], kw["p_max"])


# --------------------------------------------------------------------------- the front ends
def test_every_name_resolves_to_its_front_end() -> None:
    for name, front in FRONT_ENDS.items():
        assert front_end(name) is front and front.name == name
        assert front.takes_starts == (front.family is not None)
    assert front_end("E + A/N**alpha") is EXPRESSION
    assert front_end(["E + A/N**a", "F + B/N**a"]) is EXPRESSION
    assert DEFAULT_LAW in FAMILIES
    for bad in ("logistic", 3, None, []):
        with pytest.raises(ValueError, match="law must be one of"):
            front_end(bad)


def test_gao_through_fit_law_recovers_the_law() -> None:
    """law='gao_bon'/'gao_rl' is fit_gao on the axis column: noise-free data give back
    (α, β) to 1e-6, and the peak √KL* = α/(2β) (bon), e^(α/β − 1) (rl) in closed form."""
    from rlscale.theory.reward import gao_bon, gao_rl

    kl = np.linspace(0.1, 30.0, 40)
    for name, fn, peak in (("gao_bon", gao_bon, lambda a, b: (a / (2 * b)) ** 2),
                           ("gao_rl", gao_rl, lambda a, b: math.exp(2 * (a / b - 1)))):
        fit = fit_law({"kl": kl, "gold": fn(kl, 0.9, 0.12)}, name, ["kl"], "gold",
                      bootstrap=0)
        assert fit.alpha == pytest.approx(0.9, rel=1e-6)
        assert fit.beta == pytest.approx(0.12, rel=1e-6)
        assert fit.peak.kl == pytest.approx(peak(0.9, 0.12), rel=1e-5)


def test_sigmoid_through_fit_law_is_fit_sigmoid() -> None:
    from rlscale.optimize import fit_sigmoid

    rng = np.random.default_rng(0)
    c = np.logspace(2, 6, 30)
    y = 0.1 + 0.6 / (1 + (3e3 / c) ** 0.8) + rng.normal(0, 0.005, c.size)
    ours = fit_law({"compute": c, "success": y}, "sigmoid", ["compute"], "success",
                   bootstrap=20, seed=3, confidence=0.8)
    direct = fit_sigmoid(c, y, bootstrap=20, rng=3, confidence=0.8)
    assert type(ours) is type(direct)
    assert ours.law.as_dict() == direct.law.as_dict()
    assert ours.asymptote_interval == direct.asymptote_interval
    assert ours.law.asymptote == pytest.approx(0.7, abs=0.02)


@pytest.mark.parametrize("kwargs, word", [
    ({"floor": (0.1, 0.2)}, "floor"), ({"starts": "grid"}, "starts"),
    ({"replicates": "mean"}, "replicates"), ({"delta": 0.01}, "delta"),
    ({"reduction": "mean"}, "reduction"), ({"params": {}}, "params"),
    ({"axes": ["kl", "gold"]}, "one axis")])
def test_curve_front_ends_refuse_what_they_do_not_take(kwargs: dict, word: str) -> None:
    data = {"kl": np.linspace(0.1, 30, 20), "gold": np.linspace(0.1, 2, 20)}
    args = {"axes": ["kl"], **kwargs}
    with pytest.raises(ValueError, match=word):
        fit_law(data, "gao_bon", target="gold", **args)


def test_cli_lists_and_describes_the_registry() -> None:
    """``rlscale fit --help``: the --law choices are the registry's, --starts its text."""
    out = subprocess.run([sys.executable, "-m", "rlscale", "fit", "--help"],
                         capture_output=True, text=True, check=True,
                         env={"COLUMNS": "10000", "PATH": ""}).stdout
    flat = " ".join(out.split())
    assert "{" + ",".join(FRONT_ENDS) + "}" in flat
    assert " ".join(STARTS_HELP.split()).replace("%%", "%") in flat
    for front in FRONT_ENDS.values():
        assert " ".join(front.summary.split()) in flat


def test_cli_refuses_starts_for_a_curve_and_law_with_expr(tmp_path: Path) -> None:
    from rlscale.cli import main

    csv = tmp_path / "d.csv"
    csv.write_text("kl,gold\n" + "\n".join(f"{k},{k * (0.9 - 0.1 * k)}" for k in
                                          np.linspace(0.1, 5, 12)) + "\n")
    assert main(["fit", str(csv), "--law", "gao_bon", "--axes", "kl", "--target", "gold",
                 "--starts", "grid"]) == 2
    assert main(["fit", str(csv), "--law", "additive", "--expr", "E + A/kl**a", "--axes",
                 "kl", "--target", "gold"]) == 2
