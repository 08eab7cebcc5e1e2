"""A lesson switched on mid-block (injected in every session after) beside a baseline step at that moment, plus a
stray injection or two elsewhere: the baseline steps at the switch (core/analysis/steps.py) and the fit reads the
lesson from the strays alone; when they hold little of what the data said of it before the steps, it is identified
only by time still. Before 2026-12-07 one stray anywhere made the block holding it fail the one-switch test, and
the lesson was identified with the step as its effect."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.joint import Design, time_blocks
from lesson_credit.core.analysis.ranking import timed_arms


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
    # what is left apart from the switch, by hand: its precision about the blocks' baselines (one category), block
    # 0 (s000-s033, 34 sessions) holding s005 alone and block 2 (33 sessions) 17 from s083: 1 * 33 / 34 + 17 * 16 /
    # 33 = 0.97 + 8.24 = 9.21. The baseline's step from s083 on (16 sessions without it, then 17 with: a run of
    # chance 1 / C(33, 17)) takes all of block 2's (blocks 3-5 are the blocks' baselines'), and leaves the 0.97 of
    # s005: 0.97 / 9.21 = 11%, under the 20% asked
    assert "where it switches inside them" in column.reason, column.reason
    assert "holds 11% of what the data say of it; it needs 20%" in column.reason, column.reason
    # the ranking (Analysis and Lessons screens, the joint policy) draws it from the prior too
    assert timed_arms(design).tolist() == [True, False]


def test_strays_gaps_and_switches_off_beside_a_step_claim_nothing_across_seeds() -> None:
    # 200 sessions, the step +0.2 at session 97 (inside block 2, sessions 67-99), noise sd 0.1, no lesson has an
    # effect. Lesson 0 is switched on (or off) there, with 1-3 strays before it or gaps after it at random places;
    # four others at random in half the sessions. The code before identified it in 26 of 30 such worlds (a stray
    # 7 sessions before the switch), every interval excluding 0; with the rule's share at a half, three strays
    # (each worth about one session, the switch 3 * 30 / 33 = 2.7 in its block) passed it and 4 of 40 intervals
    # excluded 0. Now the baseline steps at the switch wherever its run is improbable (every seed here but the
    # gaps among sessions 97-99) and the fit reads the lesson from its strays and gaps (what it keeps of its
    # precision: 22-53%, 200 seeds): a false claim (a 95% interval excluding 0) in at most 2 of 40 (5% of 40 is 2),
    # the random lessons stay identified
    false, identified_random = 0, 0
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
        identified_random += sum(bool(c is not None and c.identified) for c in map(claims.of, range(1, 5)))
    assert false <= 2
    assert identified_random == 160


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
