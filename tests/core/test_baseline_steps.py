"""The baseline steps where the design switches inside a time block (core/analysis/steps.py, docs/estimates.md "A
switch inside a block"), on the five worlds of the outside attack that broke the rule before 2026-12-07 (one
threshold on what a single switch per block takes). Each test builds the steps again by hand (loops and exact
binomial coefficients: tests/support/steps_by_hand.py) and asserts `loo`'s claims against numpy's least squares on
the lessons, the baselines and those step dummies; each fails on the code before (noted per test)."""

from __future__ import annotations

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import Claims, lesson_claims
from lesson_credit.core.analysis.joint import Design, time_blocks
from lesson_credit.core.analysis.joint_posterior import Stream, time_only
from tests.support.oracles import time_columns
from tests.support.steps_by_hand import steps_by_hand

# (least squares over every session of each lesson: the claims fit's first-sessions split is not this file's subject;
# tests/core/test_claims_early.py checks it is the fit with those sessions renamed to a lesson of their own)
pytestmark = pytest.mark.usefixtures("whole_lessons")


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray | None = None) -> Design:
    n, p = x.shape
    rows, arms = np.nonzero(x)
    cat = np.zeros(n, dtype=np.int64) if category is None else category.astype(np.int64)
    return Design(
        np.arange(n), reward, cat, int(cat.max()) + 1, rows, arms, np.ones(len(rows)), p, n_blocks=time_blocks(n)
    )


def least_squares(x: np.ndarray, reward: np.ndarray, steps: set[tuple[int, int]], category: np.ndarray) -> np.ndarray:
    """The lessons' coefficients of numpy's least squares (the minimum-norm one) on the lessons, a baseline per
    category and per time block (the last the reference; `time_columns`: a category's own when it has 12
    sessions a block or more) and each step: its category from its session to the end."""
    n, p = x.shape
    i = np.arange(n)
    cols = [x.astype(float)]
    cols += [(category == c)[:, None].astype(float) for c in np.unique(category)]
    cols += [time_columns(n, time_blocks(n), category)]
    cols += [((i >= t) & (category == c))[:, None].astype(float) for c, t in sorted(steps)]
    coef = np.linalg.lstsq(np.hstack(cols), reward, rcond=None)[0]
    return np.asarray(coef[:p])


def assert_as_least_squares(claims: Claims, ols: np.ndarray, lessons: range) -> None:
    """Every identified lesson's estimate is least squares' (a contrast against the lessons' average when `loo`
    says so), to 5% of its standard error (the fit's weak prior, a sixteenth of the data's, moves it that little)."""
    for j in lessons:
        column = claims.of(j)
        assert column is not None and column.identified and column.effect is not None, j
        expected = ols[j] - (ols.mean() if column.against_average else 0.0)
        assert abs(column.effect.estimate - expected) < 0.05 * column.effect.se, (j, column.effect.estimate, expected)


def test_one_lesson_more_per_session_with_a_reward_step_at_that_moment() -> None:
    # world 1: 1,000 sessions inject 3 of 10 lessons, from session 450 (inside block 4, 400-499) 4, and the reward
    # steps +0.1 there; the lessons' true effects -0.08 to +0.08. The count of lessons steps at 450: the step goes in
    # at 450 and every lesson reads as least squares with it, against the lessons' average (a session's count is
    # fixed within the groups either side), covering its truth less that average. Before: no step, no against-
    # average line; every lesson shifted by about the step (numpy's least squares without it: +0.13), every
    # interval missing its truth
    rng = np.random.default_rng([28, 5, 0])
    n, i = 1000, np.arange(1000)
    truth = np.linspace(-0.08, 0.08, 10)
    x = np.zeros((n, 10), dtype=bool)
    for s in range(n):
        x[s, rng.choice(10, 3 if s < 450 else 4, replace=False)] = True
    reward = 0.4 + 0.1 * (i >= 450) + x @ truth + rng.normal(0, 0.1, n)
    category = np.zeros(n, dtype=np.int64)
    steps = steps_by_hand(x, category)
    assert (0, 450) in steps
    claims = lesson_claims(design_of(x, reward))
    assert_as_least_squares(claims, least_squares(x, reward, steps, category), range(10))
    missed = 0
    for j in range(10):
        column = claims.of(j)
        assert column is not None and column.effect is not None and column.against_average
        low, high = column.effect.bounds(0.95)
        missed += not low <= truth[j] - truth.mean() <= high
    assert missed <= 1  # (a 95% interval misses in 5%)


def test_a_new_lesson_in_part_of_the_sessions_after_a_step() -> None:
    # world 2: lesson 0 first appears at session 950 (inside the last block, 900-999), then in 30% of sessions; the
    # reward steps +0.1 at 950, no effect. The run before its first injection (about 53 of 100 sessions without it,
    # k of about 15) puts a step there, and the fit reads it from the sessions after alone. Before: +0.096, its
    # interval excluding 0 in 16 of 40 worlds
    for seed in range(3):
        rng = np.random.default_rng([28, 1, seed])
        n, i = 1000, np.arange(1000)
        x = rng.random((n, 5)) < 0.5
        x[:, 0] = (i >= 950) & (rng.random(n) < 0.3)
        reward = 0.4 + 0.1 * (i >= 950) + rng.normal(0, 0.1, n)
        category = np.zeros(n, dtype=np.int64)
        steps = steps_by_hand(x, category)
        first = int(np.flatnonzero(x[:, 0])[0])
        assert (0, first) in steps, seed
        claims = lesson_claims(design_of(x, reward))
        assert_as_least_squares(claims, least_squares(x, reward, steps, category), range(5))
        column = claims.of(0)
        assert column is not None and column.effect is not None
        low, high = column.effect.bounds(0.95)
        assert low <= 0.0 <= high, seed


def test_a_switch_with_random_injections_in_earlier_blocks() -> None:
    # world 3: lesson 0 in every session from 450 (inside block 4) and at random in a share Q of blocks 0-3's
    # sessions, the reward steps +0.2 at 450, no effect. Before: at Q 0.2 every interval excluded 0 (it passed the
    # threshold on what one switch takes: about a quarter); now the step at 450 takes the switch and least squares
    # with it covers 0
    for q, seed in ((0.2, 0), (0.3, 1)):
        rng = np.random.default_rng([28, 8, seed])
        n, i = 1000, np.arange(1000)
        x = rng.random((n, 5)) < 0.5
        x[:, 0] = (i >= 450) | ((i < 400) & (rng.random(n) < q))
        reward = 0.4 + 0.2 * (i >= 450) + rng.normal(0, 0.1, n)
        category = np.zeros(n, dtype=np.int64)
        steps = steps_by_hand(x, category)
        assert (0, 450) in steps
        claims = lesson_claims(design_of(x, reward))
        assert_as_least_squares(claims, least_squares(x, reward, steps, category), range(5))
        column = claims.of(0)
        assert column is not None and column.effect is not None
        low, high = column.effect.bounds(0.95)
        assert low <= 0.0 <= high, q


def test_a_pulse_and_a_rollout_inside_one_block_are_identified_only_by_time() -> None:
    # world 4: lesson 0 on only in sessions 940-959 with the reward +0.15 meanwhile (a pulse); or on from 910 in
    # category 0 and from 990 in category 1 (a rollout), each step +0.15; no effect. Two switches in one block: the
    # threshold passed both (40 of 40 intervals excluded 0). Now a step goes in at each: least squares with them
    # leaves nothing of lesson 0 (its column is in their span), so it is identified only by time, in `loo` and in
    # the ranking alike; the other lessons read as least squares
    rng = np.random.default_rng([28, 3, 0])
    n, i = 1000, np.arange(1000)
    x = rng.random((n, 5)) < 0.5
    pulse = (i >= 940) & (i < 960)
    rollout_category = i % 2
    rollout = ((rollout_category == 0) & (i >= 910)) | ((rollout_category == 1) & (i >= 990))
    for on, category in ((pulse, np.zeros(n, dtype=np.int64)), (rollout, rollout_category)):
        x[:, 0] = on
        reward = 0.4 + 0.15 * on + rng.normal(0, 0.1, n)
        steps = steps_by_hand(x, category)
        dummies = np.stack([((i >= t) & (category == c)).astype(float) for c, t in sorted(steps)], axis=1)
        left = on - dummies @ np.linalg.lstsq(dummies, on.astype(float), rcond=None)[0]
        assert np.abs(left).max() < 1e-9  # the steps take all of lesson 0
        design = design_of(x, reward, category)
        claims = lesson_claims(design)
        column = claims.of(0)
        assert column is not None and not column.identified and column.timed and column.effect is None
        assert column.reason is not None and column.reason.startswith("identified only by time"), column.reason
        assert "holds 0% of what the data say of it" in column.reason, column.reason
        assert time_only(Stream.held(design)).tolist() == [True, False, False, False, False]
        assert_as_least_squares(claims, least_squares(x, reward, steps, category), range(1, 5))


def test_a_real_effect_with_gaps_after_a_switch_is_found() -> None:
    # world 5: 4,000 sessions (14 blocks of about 286), lesson 0 in every session from 2142 (inside block 7,
    # 2000-2285) except 5% gaps, true effect +0.05, no step. Before: "identified only by time" (the switch took
    # nearly half of it) in 10 of 10 worlds. Now a step goes in at 2142 and the gaps identify it: as least squares
    # with that step, its interval covering +0.05
    n = 4000
    blocks = time_blocks(n)
    assert blocks == 14
    for seed in range(2):
        rng = np.random.default_rng([28, 2, seed])
        i = np.arange(n)
        x = rng.random((n, 5)) < 0.5
        x[:, 0] = (i >= 2142) & (rng.random(n) >= 0.05)
        reward = 0.4 + 0.05 * x[:, 0] + rng.normal(0, 0.1, n)
        category = np.zeros(n, dtype=np.int64)
        steps = steps_by_hand(x, category)
        assert (0, int(np.flatnonzero(x[:, 0])[0])) in steps
        claims = lesson_claims(design_of(x, reward))
        assert_as_least_squares(claims, least_squares(x, reward, steps, category), range(5))
        column = claims.of(0)
        assert column is not None and column.effect is not None
        low, high = column.effect.bounds(0.95)
        assert low <= 0.05 <= high and low > 0, seed


def test_the_steps_found_are_those_the_rule_names() -> None:
    # the steps of each world above, the production's (`Design.with_steps`, read a block at a time in spans of
    # 64 sessions here, so blocks are pieced together) against the loops': the same set
    rng = np.random.default_rng([28, 9, 0])
    n, i = 1000, np.arange(1000)
    category = rng.integers(0, 2, n)
    x = rng.random((n, 6)) < 0.4
    x[:, 0] = ((category == 0) & (i >= 330)) | (rng.random(n) < 0.02)  # on at 330 in category 0, a few strays
    x[:, 1] = (i >= 640) & (i < 680)  # a pulse
    x[:, 2] = (rng.random(n) < 0.6) & (i < 850)  # dropped at 850 in both categories
    x[i >= 550, 3] = True  # in every session from 550
    design = design_of(x, rng.normal(0, 0.1, n), category)
    found = design.with_steps(span=64).steps
    assert found is not None
    pairs = {(int(k // (n + 1)), int(k % (n + 1))) for k in found.key.tolist()}
    assert pairs == steps_by_hand(x, category)
    # (each at its run's edge: the dropped lesson's last injection of a category may come a session or two before
    # 850, and the first session after it is the step's)
    assert len(pairs) >= 6, pairs
