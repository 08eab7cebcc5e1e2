"""A lesson switched on mid-block (injected in every session after) beside a baseline step at that moment, plus a
stray injection or two elsewhere: nearly all it varies within the time blocks is the switch, so it is identified
only by time still (core/analysis/switch_evidence.py). Before, one stray anywhere made the block holding it fail
the one-switch test, and the lesson was identified with the step as its effect."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.joint import Design, time_blocks
from lesson_credit.core.analysis.ranking import timed_arms
from lesson_credit.core.analysis.switch_evidence import SHARE_MIN, block_split


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray | None = None) -> Design:
    """Every injection weight 1; time blocks by the fit's rule; one category unless given."""
    n, p = x.shape
    rows, arms = np.nonzero(x)
    cat = np.zeros(n, dtype=np.int64) if category is None else category
    weights = np.ones(len(rows))
    return Design(np.arange(n), reward, cat, int(cat.max()) + 1, rows, arms, weights, p, n_blocks=time_blocks(n))


def repro() -> tuple[np.ndarray, np.ndarray]:
    """The attack's log: 200 sessions; a in every session from s083 and in s005; b in every third; the reward
    steps +0.2 at s083 with a small wobble, no lesson has an effect."""
    i = np.arange(200)
    x = np.stack([(i >= 83) | (i == 5), i % 3 == 0], axis=1)
    reward = np.round(0.4 + 0.2 * (i >= 83) + 0.05 * ((i * 7) % 5 - 2), 3)
    return x, reward


def test_one_stray_injection_before_a_mid_block_switch_leaves_it_identified_only_by_time() -> None:
    x, reward = repro()
    design = design_of(x, reward)
    assert time_blocks(200) == 6  # blocks of about 33: s083 inside block 2 (s067-s099), s005 in block 0
    ids = [f"s{i:03d}" for i in range(200)]
    column = lesson_claims(design, session_ids=ids, arm_ids=["t/a.md", "t/b.md"]).of(0)
    # the code before: identified, +0.162 [+0.09, +0.24], the step as its effect
    assert column is not None and not column.identified and column.timed and column.effect is None
    assert column.reason is not None and column.reason.startswith("identified only by time")
    assert "at session s083" in column.reason, column.reason
    # what is left apart from the switch, by hand: its precision about the blocks' baselines (one category), block
    # 0 (s000-s033, 34 sessions) holding s005 alone and block 2 (33 sessions) 17 from s083: 1 * 33 / 34 + 17 * 16 /
    # 33 = 0.97 + 8.24 = 9.21. A step in the baseline from s083 on takes all of block 2's (blocks 3-5 are the
    # blocks' baselines'), and leaves the 0.97 of s005: 0.97 / 9.21 = 11%
    assert "holds 11% of what the data say of it" in column.reason, column.reason
    # the ranking (Analysis and Lessons screens, the joint policy) draws it from the prior too
    assert timed_arms(design).tolist() == [True, False]


def test_the_split_of_one_block_by_hand() -> None:
    # one group of 10 sessions, the lesson in sessions 2 and 6-9. Spread: 5 * 5 / 10 = 2.5. A step from session 6
    # leaves sessions 0-5 with one injection among 6 (1 * 5 / 6) and 6-9 all injected (0): 5/6. The step from
    # session 2 leaves less of its spread taken: sessions 0-1 none (0), 2-9 five of 8 (5 * 3 / 8 = 1.875)
    group = np.zeros(10, dtype=np.int64)
    row = np.array([2, 6, 7, 8, 9])
    within, apart, at, on = block_split(group, row, np.zeros(5, dtype=np.int64), 1)
    assert abs(within[0] - 2.5) < 1e-12 and abs(apart[0] - 5 / 6) < 1e-12
    assert at[0] == 6 and on[0]
    assert apart[0] / within[0] < SHARE_MIN  # a third: the switch takes two thirds of it
    # a lesson injected in alternate sessions keeps most of it: 0101010101, spread 2.5; the best step (from
    # session 1: 0 | 101010101, 5 of 9, 5 * 4 / 9 = 2.22) keeps 2.22
    _, apart_alt, _, _ = block_split(group, np.array([1, 3, 5, 7, 9]), np.zeros(5, dtype=np.int64), 1)
    assert abs(apart_alt[0] - 20 / 9) < 1e-12


def test_a_step_common_to_two_categories_switching_opposite_ways_takes_little() -> None:
    # one block, categories alternate (a b a b ...), 20 sessions: in a the lesson is on from session 10, in b it
    # is on before session 10 and off after. Spread per category: 5 * 5 / 10 = 2.5, 5 in all. A step in both at
    # once from session 10 moves their contrasts opposite ways: centred indicators' products, k1 - k n1 / n, are
    # 5 - 2.5 = +2.5 in a and 0 - 2.5 = -2.5 in b, 0 together: it takes nothing. The most a step takes is from
    # session 1 (only a's session 0 before it): in a 5 - 5 * 9 / 10 = 0.5 over the step's spread 1 * 9 / 10 = 0.9,
    # in b nothing (every b session after it): 0.5^2 / 0.9 = 0.278, so 5 - 0.278 = 4.722 is left
    group = np.arange(20, dtype=np.int64) % 2
    rows = [i for i in range(20) if (i % 2 == 0 and i >= 10) or (i % 2 == 1 and i < 10)]
    within, apart, at, _ = block_split(group, np.array(rows), np.zeros(len(rows), dtype=np.int64), 1)
    assert abs(within[0] - 5.0) < 1e-12
    assert abs(apart[0] - (5.0 - 0.25 / 0.9)) < 1e-12 and at[0] == 1


def test_strays_gaps_and_switches_off_beside_a_step_claim_nothing_across_seeds() -> None:
    # 200 sessions, the step +0.2 at session 97 (inside block 2, sessions 67-99), noise sd 0.1, no lesson has an
    # effect. Lesson 0 is switched on (or off) there, with 1-3 strays before it or gaps after it at random places;
    # four others at random in half the sessions. The code before identified it in 26 of 30 such worlds (a stray
    # 7 sessions before the switch), every interval excluding 0; with the rule's share at a half, three strays
    # (each worth about one session, the switch 3 * 30 / 33 = 2.7 in its block) passed it and 4 of 40 intervals
    # excluded 0. Now: a false claim (a 95% interval excluding 0) in at most 2 of 40 (5% of 40 is 2), the random
    # lessons stay identified
    false, identified_random, timed = 0, 0, 0
    for seed in range(40):
        rng = np.random.default_rng([25, 7, seed])
        i = np.arange(200)
        x = rng.random((200, 5)) < 0.5
        on = i >= 97
        n_odd = int(rng.integers(1, 4))
        if seed % 2 == 0:  # strays before the switch, anywhere earlier
            on[rng.choice(97, n_odd, replace=False)] = True
        else:  # gaps after it
            on[97 + rng.choice(103, n_odd, replace=False)] = False
        x[:, 0] = ~on if seed % 4 == 3 else on  # some switched off instead
        reward = 0.4 + 0.2 * (i >= 97) + rng.normal(0.0, 0.1, 200)
        claims = lesson_claims(design_of(x, reward))
        column = claims.of(0)
        assert column is not None
        if column.identified:
            assert column.effect is not None
            low, high = column.effect.bounds(0.95)
            false += low > 0 or high < 0
        else:
            timed += column.timed
        identified_random += sum(bool(c is not None and c.identified) for c in map(claims.of, range(1, 5)))
    assert false <= 2
    assert identified_random == 160
    assert timed >= 36, timed  # (40: each is identified only by time)


def test_a_real_effect_with_enough_evidence_besides_the_switch_stays_identified() -> None:
    # lesson 0 is injected at random in half of sessions 0-66 (blocks 0 and 1), then in none until session 90 and
    # in every one from it on: the switch is in block 2 (sessions 67-99). Its true effect +0.1, no step. By hand:
    # blocks 0 and 1 hold about 33 * 0.25 = 8.3 each of its spread, the switch block 10 * 23 / 33 = 7.0; the
    # switch takes at most that 7.0, so about 16.5 of 23.5 (70%) is left. Identified, the interval covers +0.1
    hits = 0
    for seed in range(10):
        rng = np.random.default_rng([25, 9, seed])
        i = np.arange(200)
        x = rng.random((200, 3)) < 0.5
        x[:, 0] = np.where(i < 67, rng.random(200) < 0.5, i >= 90)
        reward = 0.4 + 0.1 * x[:, 0] + rng.normal(0.0, 0.1, 200)
        column = lesson_claims(design_of(x, reward)).of(0)
        assert column is not None and column.identified and column.effect is not None, seed
        low, high = column.effect.bounds(0.95)
        hits += low <= 0.1 <= high
        assert not timed_arms(design_of(x, reward))[0]
    assert hits >= 9


def test_a_switch_in_one_category_or_agent_with_a_stray_is_identified_only_by_time() -> None:
    # 300 sessions (7 blocks of about 43: session 150 inside block 3), two categories (or two agents) at random;
    # lesson 0 on in every session of the first from session 150 on and in one of its sessions before (session
    # 60's, or the next of that kind); the first's baseline steps +0.2 at 150, no effect. Its variation beside the
    # switch: the stray alone (one session's worth), so both `loo` and the ranking read it by time. The code
    # before identified it (its interval the step)
    for by_agent in (False, True):
        rng = np.random.default_rng([25, 11, int(by_agent)])
        i = np.arange(300)
        kind = rng.integers(0, 2, 300)
        on = (kind == 0) & (i >= 150)
        on[np.flatnonzero((kind == 0) & (i >= 60))[0]] = True
        x = np.stack([on, rng.random(300) < 0.5], axis=1)
        reward = 0.4 + 0.2 * ((kind == 0) & (i >= 150)) + rng.normal(0.0, 0.1, 300)
        rows, arms = np.nonzero(x)
        zeros = np.zeros(300, dtype=np.int64)
        design = Design(
            i,
            reward,
            zeros if by_agent else kind,
            1 if by_agent else 2,
            rows,
            arms,
            np.ones(len(rows)),
            2,
            agent=kind if by_agent else None,
            n_agents=2 if by_agent else 0,
            n_blocks=time_blocks(300),
        )
        column = lesson_claims(design).of(0)
        assert column is not None and not column.identified and column.timed, by_agent
        assert timed_arms(design).tolist() == [True, False], by_agent
