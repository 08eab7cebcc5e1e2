"""Estimates for a world that moves (issue 33 items 1 and 2): worlds written here with numpy (not the
simulator) where the baseline rises over the log, a lesson stops helping, or trouble pulls lessons in
mid-session. A lesson is *claimed* as `loo` claims it: its headline's BH-adjusted p below 0.05."""

from __future__ import annotations

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.estimates import SIGNIFICANCE, Effect, joint_effects
from lesson_credit.core.analysis.joint import Design, fit_joint, time_blocks


def design_of(x: np.ndarray, reward: np.ndarray, *, time: bool = True) -> Design:
    """One category; every injection weight 1; time blocks by the fit's rule (or none)."""
    n, p = x.shape
    rows, arms = np.nonzero(x)
    return Design(
        np.arange(n), reward.astype(np.float64), np.zeros(n, dtype=np.int64), 1, rows, arms, np.ones(len(rows)), p,
        n_blocks=time_blocks(n) if time else 1,
    )  # fmt: skip


def effects_of(design: Design) -> list[Effect | None]:
    """Each lesson's joint headline as `loo` builds it (no dropout logs)."""
    return joint_effects(fit_joint(design), lesson_claims(design), tuple(f"l{j}" for j in range(design.n_arms)))


def claimed(effect: Effect | None) -> bool:
    return effect is not None and effect.p_adjusted is not None and effect.p_adjusted < SIGNIFICANCE


def test_time_blocks_grow_slowly() -> None:
    # none below 50 graded sessions; then floor(2 log2(n / 25)): 50 -> 2, 100 -> 4, 1000 -> 2 x 5.32 = 10
    assert [time_blocks(n) for n in (0, 30, 49, 50, 70, 100, 1000, 10_000, 100_000)] == [1, 1, 1, 2, 2, 4, 10, 17, 23]


def trend_world(seed: int, n: int = 1000, p: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Baseline reward 0.40 -> 0.70 over the log, no lesson has any effect; lesson 0 is injected in
    10% of the first sessions and 70% of the last (the bandit took to it), the others in 30%."""
    rng = np.random.default_rng([33, 1, seed])
    t = np.arange(n) / (n - 1)
    share = np.full((n, p), 0.3)
    share[:, 0] = 0.1 + 0.6 * t
    x = rng.random((n, p)) < share
    return x, 0.40 + 0.30 * t + rng.normal(0.0, 0.15, n)


def test_a_trend_is_not_credited_to_the_lesson_that_rose_with_it() -> None:
    moving, still = [], []
    for seed in range(5):
        x, reward = trend_world(seed)
        moving.append(effects_of(design_of(x, reward))[0])
        still.append(effects_of(design_of(x, reward, time=False))[0])
    # by hand: lesson 0's share rises by 0.6 while the reward rises by 0.3, so a fit without time
    # credits it with about 0.3 x cov(x, t) / var(x) = 0.3 x (0.6 / 12) / 0.21 = +0.07 (here +0.054 to +0.064,
    # claimed; in seed 4 the halves differ and the later half is the headline)
    assert sum(e is not None and e.estimate > 0.03 and claimed(e) for e in still) >= 4
    # with time blocks the estimate is centred on 0 (200 seeds: mean +0.002, claimed in 1.5%): one chance
    # claim in 5 is allowed (probability 0.3%), not two
    assert sum(claimed(e) for e in moving) <= 1
    assert abs(np.mean([e.estimate for e in moving if e is not None])) < 0.015


def stale_world(seed: int, n: int = 600, p: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Lesson 0 adds +0.15 in the first half of the log and nothing after; the bandit, having learnt it,
    injects it more (20% -> 60%); the baseline rises 0.45 -> 0.6; the other lessons do nothing."""
    rng = np.random.default_rng([33, 2, seed])
    t = np.arange(n) / (n - 1)
    share = np.full((n, p), 0.3)
    share[:, 0] = 0.2 + 0.4 * t
    x = rng.random((n, p)) < share
    effect = np.where(t < 0.5, 0.15, 0.0)
    return x, 0.45 + 0.15 * t + effect * x[:, 0] + rng.normal(0.0, 0.15, n)


def test_a_stale_lesson_keeps_no_claim_of_its_old_effect_unflagged() -> None:
    for seed in range(5):
        x, reward = stale_world(seed)
        effect = effects_of(design_of(x, reward))[0]
        assert effect is not None
        if claimed(effect):  # a claim is of the later half, flagged
            assert effect.drifting and effect.method == "joint, later half", seed
        assert not (claimed(effect) and effect.estimate > 0.05), seed


@pytest.mark.long
def test_no_effect_lessons_in_trend_worlds_are_claimed_at_the_nominal_rate() -> None:
    # 20 worlds x 8 no-effect lessons: without time 15-21% were claimed (issue 33); a claim here is a
    # false one, and BH at 0.05 allows a few
    false = sum(claimed(e) for seed in range(20) for e in effects_of(design_of(*trend_world(100 + seed))))
    assert false <= 8  # 5% of 160
