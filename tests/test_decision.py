"""recommend: decisions that pay off once deployed (issue 29, item 2 and the bad inputs)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import deployed_efficiency, fit_law, recommend, star_design
from rlscale.theory import AdditiveLaw

DESIGN = star_design({"E": 8, "k": 8}, {"E": [1, 2, 4, 8, 16, 32, 64],
                                        "k": [1, 2, 4, 8, 16, 32, 64]})
BOUNDS = {"E": (1, 1e4), "k": (1, 1e4)}
CENTRE = {"E": 8.0, "k": 8.0}
FAST = {"bootstrap": 30, "plan_laws": 10}


def _pilot(truth: AdditiveLaw, seed: int, noise: float = 0.03) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = {a: np.repeat([p[a] for p in DESIGN], 3) for a in ("E", "k")}
    return {**x, "loss": truth.loss(x) * np.exp(noise * rng.standard_normal(x["E"].size))}


# E is worth four times k at equal cost: the optimum E/k = 4^(2/3) ≈ 2.52 is far from
# proportional scaling of the centre (E = k).
FAR = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
# Equal terms under cost E + k: proportional scaling of E = k is the optimum itself.
NULL = AdditiveLaw(0.2, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})


@pytest.fixture(scope="module")
def far_fit():
    data = _pilot(FAR, 0)
    return data, fit_law(data, axes=["E", "k"], seed=0, n_jobs=1)


def test_a_clear_advantage_is_recommended_with_honest_figures(far_fit) -> None:
    data, fit = far_fit
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, **FAST)
    assert rec.choice == "plan" and rec.departs and rec.status == "plan" and rec.success
    assert rec.strongest == "proportional"
    vs = rec.versus_strongest
    assert vs.p_beats >= 0.95 and vs.gain > 0 and vs.eta_interval[0] <= vs.eta
    # The plan's path judged by the generating law (η_deployed) against proportional:
    # E = k = 50 (cost 100) has loss 0.2 + 2.5/√50.
    d = deployed_efficiency(rec.path, FAR, {"E": 50.0, "k": 50.0}, 100.0)
    oracle_cost = (2.0**(2 / 3) + 0.5**(2 / 3)) ** 3 / (2.5 / math.sqrt(50.0)) ** 2
    assert 1.0 < d.eta <= 100.0 / oracle_cost * (1 + 1e-6)  # at most the oracle η
    lo, hi = vs.eta_interval
    assert lo <= d.eta <= hi  # this data set's interval covers its η_deployed
    assert [s["taken"] for s in rec.steps] == [True]
    assert set(rec.comparisons) == {"E only", "k only", "proportional"}
    assert rec.as_dict()["status"] == "plan"


def test_without_an_advantage_the_baseline_is_recommended_with_the_reason() -> None:
    data = _pilot(NULL, 1)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, **FAST)
    assert rec.choice == "proportional" and not rec.departs and rec.status == "baseline"
    assert rec.reason.startswith("use the baseline (proportional)")
    assert rec.steps[-1]["p_beats"] < 0.95 and not rec.steps[-1]["taken"]
    assert rec.values == pytest.approx({"E": 50.0, "k": 50.0}, rel=1e-9)
    # The candidate plan is reported beside it; the baseline's η against itself is 1.
    assert rec.candidate["comparisons"]["proportional"].p_beats < 0.95
    assert rec.comparisons["proportional"].eta == pytest.approx(1.0, rel=1e-6)


def test_plug_in_method_chooses_the_selection_fits_optimum(far_fit) -> None:
    data, fit = far_fit
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, method="plug-in",
                    **FAST)
    assert rec.method == "plug-in" and rec.candidate["values"]["E"] > 50.0


def test_bad_inputs_are_refused(far_fit) -> None:
    data, fit = far_fit
    kw = {"bounds": BOUNDS, "fit": fit, **FAST}
    with pytest.raises(ValueError, match="outside the design"):
        recommend(data, "E + k", 1e5, CENTRE, **kw)  # proportional needs E = 5e4
    with pytest.raises(ValueError, match=r"cannot be bought.*centre.s 8, outside its bounds"):
        recommend(data, "E + k", 100.0, CENTRE, baseline="E only",
                  bounds={"E": (1, 1e4), "k": (1, 4)}, fit=fit, **FAST)
    with pytest.raises(ValueError, match=r"cannot be bought.*lower bounds"):
        recommend(data, "E + k", 1.5, CENTRE, **kw)
    with pytest.raises(ValueError, match="baseline must be"):
        recommend(data, "E + k", 100.0, CENTRE, baseline="everything", **kw)
    with pytest.raises(ValueError, match="method"):
        recommend(data, "E + k", 100.0, CENTRE, method="oracle", **kw)
    with pytest.raises(ValueError, match="probability"):
        recommend(data, "E + k", 100.0, CENTRE, probability=0.4, **kw)
    with pytest.raises(ValueError, match="pass rate"):
        recommend(data, "E + k", 100.0, CENTRE, law="pass_rate", **kw)
    with pytest.raises(ValueError, match="fit_options must not set"):
        recommend(data, "E + k", 100.0, CENTRE, fit_options={"seed": 3}, **kw)
    with pytest.raises(ValueError, match="fit must be fitted to these rows"):
        recommend({k: v[:-3] for k, v in data.items()}, "E + k", 100.0, CENTRE, **kw)
    with pytest.raises(TypeError, match="fit must be a FitResult"):
        recommend(data, "E + k", 100.0, CENTRE, **{**kw, "fit": "a fit"})
    with pytest.raises(ValueError, match="no column"):
        recommend({"E": data["E"], "loss": data["loss"]}, "E + k", 100.0, CENTRE, **kw)


def test_a_copy_that_cannot_be_fitted_falls_back_to_the_baseline(far_fit, monkeypatch) -> None:
    import rlscale.optimize._decision as decision

    data, fit = far_fit

    def refuse(*args, **kwargs):
        raise ValueError("coefficient['k'] underflowed to 0")

    monkeypatch.setattr(decision, "_fit", refuse)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, **FAST)
    assert rec.status == "fallback" and not rec.success and rec.choice == "proportional"
    assert "could not be fitted" in rec.reason and "underflowed" in rec.reason
    assert rec.versus_strongest is None and rec.comparisons == {}


# k is worth little: spending the whole budget on E ("E only", E = 92, k = 8) beats
# proportional scaling (E = k = 50) by a wide margin: 0.226 against 0.290 in loss.
E_ONLY = AdditiveLaw(0.2, {"E": 2.0, "k": 0.05}, {"E": 0.5, "k": 0.5})


def test_the_strongest_baseline_is_named_and_judged_on_the_whole_datas_laws() -> None:
    data = _pilot(E_ONLY, 2)
    fit = fit_law(data, axes=["E", "k"], seed=2, n_jobs=1, bootstrap=60)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, **FAST)
    assert rec.strongest == "E only" and rec.n_laws["whole"] == len(fit.bootstrap_laws())
    first = rec.steps[0]
    assert (first["frm"], first["to"], first["on"]) == ("proportional", "E only", "whole data")
    # Its probability, recomputed from the fit's own bootstrap laws at the two allocations
    # (E only: the budget on E from the centre; proportional: E = k = 50).
    e_only = {"E": np.array([92.0]), "k": np.array([8.0])}
    prop = {"E": np.array([50.0]), "k": np.array([50.0])}
    want = np.mean([b.loss(e_only)[0] < b.loss(prop)[0] for b in fit.bootstrap_laws()])
    assert first["p_beats"] == pytest.approx(want, abs=1e-12) and first["taken"]
    assert rec.departs and rec.choice in ("E only", "plan")
    if len(rec.steps) > 1:  # the plan, judged on the judgement copy against E only
        assert rec.steps[1]["on"] == "judgement copy" and rec.steps[1]["frm"] == "E only"


def _spy_copies(monkeypatch):
    """Record each copy recommend fits (its target column) and the fit the chooser gets."""
    import rlscale.optimize._decision as decision

    fitted, chosen = {}, []
    real_fit, real_choose = decision._fit, decision._CHOOSERS["bayes"]

    def fit(data, *args, **kwargs):
        out = real_fit(data, *args, **kwargs)
        fitted[id(out)] = np.asarray(data["loss"], dtype=float)
        return out

    def choose(f, laws, ctx):
        chosen.append(fitted[id(f)])
        return real_choose(f, laws, ctx)

    monkeypatch.setattr(decision, "_fit", fit)
    monkeypatch.setitem(decision._CHOOSERS, "bayes", choose)
    return chosen


def test_once_the_default_is_left_the_plan_is_chosen_on_the_sharper_copy_untested(
        monkeypatch) -> None:
    data = _pilot(E_ONLY, 2)
    fit = fit_law(data, axes=["E", "k"], seed=2, n_jobs=1, bootstrap=60)
    every = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, **FAST)
    chosen = _spy_copies(monkeypatch)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, guard="departure",
                    **FAST)
    assert rec.guard == "departure" and every.guard == "every step"
    # The whole-data step is the same under both guards; it leaves the default.
    assert rec.steps[0] == {**every.steps[0], "gated": True} and rec.steps[0]["taken"]
    # guard="departure": the plan is taken whatever its P; "every step" needs 0.95.
    assert rec.choice == "plan" and rec.status == "plan"
    assert not rec.steps[1]["gated"] and rec.steps[1]["taken"]
    assert rec.steps[1]["p_beats"] == rec.versus_strongest.p_beats
    assert "gated" not in every.steps[1]  # every step is gated: the key is left out
    assert every.steps[1]["taken"] == (every.steps[1]["p_beats"] >= 0.95)
    assert "not required" in rec.reason and any("τ = 0.5" in n for n in rec.notes)
    # The copy the plan was chosen on: log(copy / data) is τZ or −Z/τ (τ = 2), so its
    # spread is σ/2 for the sharper copy, 2σ for the other -- a ratio of 4 between them.
    (copy,) = chosen
    spread = np.std(np.log(copy / data["loss"]))
    sigma = rec.sigma
    assert spread == pytest.approx(sigma / 2, rel=0.35)


def test_once_the_default_is_left_a_plan_that_cannot_be_had_leaves_the_strongest(
        monkeypatch) -> None:
    import rlscale.optimize._decision as decision

    data = _pilot(E_ONLY, 2)
    fit = fit_law(data, axes=["E", "k"], seed=2, n_jobs=1, bootstrap=60)
    real, calls = decision._usable, []

    def usable(laws, *args):  # the second call: the sharper copy's laws, after the swap
        calls.append(1)
        return real(laws, *args) if len(calls) == 1 else []

    monkeypatch.setattr(decision, "_usable", usable)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, guard="departure",
                    **FAST)
    assert len(calls) == 2
    assert (rec.choice, rec.status, rec.departs) == ("E only", "baseline", True)
    assert rec.values == pytest.approx({"E": 92.0, "k": 8.0}, rel=1e-9)
    assert rec.reason.startswith("use the baseline (E only): it beats proportional")
    assert "too few usable bootstrap laws" in rec.reason
    assert [(s["to"], s["taken"]) for s in rec.steps] == [("E only", True)]


def test_without_a_departure_the_guards_agree() -> None:
    data = _pilot(NULL, 1)
    a = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, guard="departure", **FAST)
    b = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, **FAST)
    assert a.choice == b.choice == "proportional" and a.values == b.values
    assert a.steps == [{**st, "gated": True} for st in b.steps]
    assert a.candidate["values"] == b.candidate["values"]
    with pytest.raises(ValueError, match="guard"):
        recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, guard="none", **FAST)


def test_without_bootstrap_laws_in_fit_the_whole_data_is_bootstrapped_here() -> None:
    data = _pilot(E_ONLY, 2)
    fit = fit_law(data, axes=["E", "k"], seed=2, n_jobs=1, bootstrap=0)
    rec = recommend(data, "E + k", 100.0, CENTRE, bounds=BOUNDS, fit=fit, **FAST)
    assert 20 <= rec.n_laws["whole"] <= FAST["bootstrap"]
    assert rec.strongest == "E only"
