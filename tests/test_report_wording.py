"""The report's wording says what the numbers support (issue 24, item 7).

An impact ordering is stated only where the bootstrap laws support it at the report's
confidence level; the closed-form critical synthetic ratio comes with the reason the
solver's ratio differs; an estimate of η carries no bare "=" and a bound says so.
"""

from __future__ import annotations

from rlscale.report._document_efficiency import bounded, realised_text
from rlscale.report._wording import ordering_text, synthetic_ratio_text

QUICK = {"tasks_per_environment > environments": 0.575,
         "tasks_per_environment > trajectories_per_task": 0.935,
         "environments > trajectories_per_task": 0.98}
ORDER = ["tasks_per_environment", "environments", "trajectories_per_task"]


def test_an_ordering_below_the_level_is_not_resolved() -> None:
    # The quick report's case: 57.5 % of the laws order t above E.
    text = ordering_text(ORDER, QUICK, 0.9)
    assert text.startswith("tasks_per_environment and environments (not resolved: a share "
                           "0.575")
    assert text.endswith("> trajectories_per_task")
    assert "tasks_per_environment > environments" not in text


def test_a_supported_ordering_is_stated_with_its_weakest_support() -> None:
    support = dict.fromkeys(QUICK, 0.95)
    assert ordering_text(ORDER, support, 0.9) == (
        "tasks_per_environment > environments > trajectories_per_task "
        "(a share ≥ 0.95 of the bootstrap laws agrees with each pair)")


def test_a_pair_across_groups_below_the_level_merges_them() -> None:
    # Neighbours are each supported but the outer pair is not: no '>' may imply it.
    support = {"a > b": 0.95, "b > c": 0.95, "a > c": 0.5}
    text = ordering_text(["a", "b", "c"], support, 0.9)
    assert text.startswith("not resolved: a, b and c")
    assert ">" not in text


def test_no_support_says_point_estimates() -> None:
    assert ordering_text(["a", "b"], {}, 0.9) == (
        "a > b (point estimates; no bootstrap support computed)")


def test_the_critical_ratio_is_explained_beside_the_solvers() -> None:
    capped = synthetic_ratio_text(0.785, 1.350, 8.0, 8.0)
    assert "0.785" in capped and "1.350" in capped and "capped at 8" in capped
    same = synthetic_ratio_text(0.785, 0.7852, 5.0, 8.0)
    assert "the same ratio" in same and "capped" not in same
    other = synthetic_ratio_text(0.785, 0.5, 5.0, 8.0)
    assert "bounds on environments" in other and "capped" not in other


def test_an_estimate_has_no_bare_equals_sign_and_a_bound_says_so() -> None:
    assert bounded(2.819, "exact") == "2.819"
    assert bounded(0.5039, "at most") == "≤ 0.5039"
    assert bounded(0.5039, "at least", cost=True) == "≤ 0.5039"
    from rlscale.optimize import RealisedEfficiency

    def realised(eta, bound, interval):
        return RealisedEfficiency(eta=eta, bound=bound, interval=interval,
                                  bounded_fraction=0.0, iso_cost=None, baseline_cost=1.0,
                                  baseline_score=0.5, confidence=0.9, n_boot=100)

    assert realised_text(realised(2.819, "exact", (2.49, 3.15))) == "2.819 [2.49, 3.15]"
    assert (realised_text(realised(0.5039, "at most", (0.504, 1.06)))
            == "≤ 0.5039 (a bound) [0.504, 1.06]")
    assert realised_text(realised(None, "not estimable", None)) == "cannot be estimated"
