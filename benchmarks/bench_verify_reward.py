"""`verify reward-law --quick` end to end (budget: under 60 s on 2 cores)."""

from __future__ import annotations

from benchmarks._harness import Case


def cases(smoke: bool) -> list[Case]:
    from rlscale.verification._gaussian_reward_law import reward_grid, verify_reward_law

    if smoke:
        from rlscale.theory import reward

        m, k = reward_grid("quick")
        return [Case("reward.gain on the quick grid (bon)", lambda: reward.gain(m, k, 1.0, "bon"),
                     None, work=len(m), work_unit="points")]
    return [Case("verify reward-law --quick", lambda: verify_reward_law("quick", rng=0,
                                                                        figures=False),
                 None, repeats=1)]
