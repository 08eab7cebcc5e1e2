"""A lesson identified only by time: worlds written here with numpy where a lesson is switched on (or off) at
one moment and injected in every session after it, while the baseline steps at that same moment. Within the
time block that holds the moment, the sessions with the lesson are exactly those after it: the data cannot
tell the lesson from the step, so the lesson claims nothing. A lesson is *claimed* as `loo` claims it: its
headline's BH-adjusted p below 0.05."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import sparse

from lesson_credit.core.analysis.claims import lesson_claims, switched
from lesson_credit.core.analysis.estimates import SIGNIFICANCE, Effect, Randomized, headlines, joint_effects, notes
from lesson_credit.core.analysis.joint import Design, block_codes, fit_joint, time_blocks
from lesson_credit.core.analysis.joint_ops import centred, indicators
from lesson_credit.core.analysis.ranking import timed_arms
from lesson_credit.core.analysis.switches import switches, with_edges
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace

N = 1000  # 10 time blocks of 100 sessions: block 4 holds sessions 400-499
STEP_AT = 450  # mid-block


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray | None = None) -> Design:
    """Every injection weight 1; time blocks by the fit's rule; one category unless given."""
    n, p = x.shape
    rows, arms = np.nonzero(x)
    cat = np.zeros(n, dtype=np.int64) if category is None else category
    n_categories = int(cat.max()) + 1
    weights = np.ones(len(rows))
    return Design(
        np.arange(n), reward.astype(np.float64), cat, n_categories, rows, arms, weights, p, n_blocks=time_blocks(n)
    )


def effects_of(design: Design) -> list[Effect | None]:
    arms = tuple(f"l{j}" for j in range(design.n_arms))
    return joint_effects(fit_joint(design), lesson_claims(design), arms, timed_arms(design))


def claimed(effect: Effect | None) -> bool:
    return effect is not None and effect.p_adjusted is not None and effect.p_adjusted < SIGNIFICANCE


def switch_world(seed: int, *, at: int = STEP_AT, off: bool = False, p: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """No lesson has any effect; the baseline steps 0.50 -> 0.60 at session `at`. Lesson 0 is injected in
    every session from `at` on and in none before (`off`: the reverse); the others at random in 30%."""
    rng = np.random.default_rng([71, 1, seed])
    x = rng.random((N, p)) < 0.3
    after = np.arange(N) >= at
    x[:, 0] = ~after if off else after
    return x, 0.50 + 0.10 * after + rng.normal(0.0, 0.15, N)


def test_a_lesson_switched_on_with_a_baseline_step_mid_block_claims_nothing() -> None:
    assert time_blocks(N) == 10 and STEP_AT % 100 != 0  # the switch falls inside a block
    for seed in range(6):
        for off in (False, True):
            effects = effects_of(design_of(*switch_world(seed, off=off)))
            lesson = effects[0]
            # the fit before read the block's step as the lesson's effect: about +0.10 (-0.10 switched off), claimed
            assert lesson is not None and not lesson.identified and lesson.ci_low is None, (seed, off)
            assert not claimed(lesson) and lesson.reason is not None
            assert lesson.reason.startswith("identified only by time"), lesson.reason
            # the lessons injected at random are still read within blocks
            assert all(e is not None and e.identified for e in effects[1:]), (seed, off)


def test_a_switch_at_a_block_boundary_was_already_unidentified() -> None:
    # sessions 0-499 and 500-999 fill whole blocks: the lesson never varies within a block
    lesson = effects_of(design_of(*switch_world(0, at=500)))[0]
    assert lesson is not None and not lesson.identified and not claimed(lesson)


def test_a_switch_in_every_category_at_once_claims_nothing() -> None:
    # two categories interleaved at random: within each category and block the switch is still one step
    x, reward = switch_world(3)
    category = np.random.default_rng(5).integers(0, 2, N)
    lesson = effects_of(design_of(x, reward, category))[0]
    assert lesson is not None and not lesson.identified
    assert lesson.reason is not None and lesson.reason.startswith("identified only by time")


def test_a_lesson_switched_on_and_then_varied_is_identified() -> None:
    # introduced mid-block, then injected in 70% of the sessions after: the sessions after the switch without
    # it separate it from the step, so it is identified. Its true effect +0.2. What is left of the step: in
    # the block of the switch, by hand, with-lesson sessions average 0.80 and the others (50 at 0.50, 15 at
    # 0.60) 0.52, a difference of 0.28 (+0.08 of bias) in one of the 6 blocks where it varies: about +0.013
    # overall, against a standard error of about 0.014
    for seed in range(6):
        rng = np.random.default_rng([71, 4, seed])
        x, _ = switch_world(seed)
        x[:, 0] &= rng.random(N) < 0.7
        after = np.arange(N) >= STEP_AT
        reward = 0.50 + 0.10 * after + 0.20 * x[:, 0] + rng.normal(0.0, 0.15, N)
        column = lesson_claims(design_of(x, reward)).of(0)
        assert column is not None and column.identified and column.effect is not None, seed
        assert abs(column.effect.estimate - 0.213) < 0.05, seed


def test_randomized_dropout_evidence_still_gives_a_switched_lesson_its_headline() -> None:
    joint = effects_of(design_of(*switch_world(1)))
    # a dropout estimate with 30 kept and 30 withheld sessions, wider than the biased joint interval was (in
    # this seed the fit before claimed +0.17, 95% interval +0.10 to +0.23: narrower, so it won)
    rnd = Randomized(0.01, -0.12, 0.14, 30, 30, p_value=0.88)
    first = headlines(joint, [rnd] + [None] * (len(joint) - 1))[0]
    assert first is not None and first.method == "randomized" and first.estimate == 0.01 and first.identified


def op_of(x: list[list[int]], block: list[int], category: list[int] | None = None) -> object:
    n = len(block)
    cat = np.zeros(n, dtype=np.int64) if category is None else np.array(category)
    z, group = indicators(n, cat, int(cat.max()) + 1, None, 1, np.array(block), max(block) + 1)
    return centred(sparse.csr_matrix(np.array(x, dtype=np.float64)), z, group)


def test_switched_reads_each_block_in_log_order() -> None:
    # 8 sessions in two blocks of 4; columns by hand:
    #   0: 0011 | 1111  switch on in block 0, constant in block 1          -> switched
    #   1: 1100 | 0001  switch off in block 0, on in block 1               -> switched
    #   2: 0101 | 0000  alternates in block 0                              -> not
    #   3: 0011 | 0100  switch in block 0, a lone middle session in block 1 -> not
    #   4: 1111 | 0000  never varies within a block                        -> not (nothing within blocks at all)
    #   5: 0110 | 1111  a run in the middle of block 0                     -> not
    cols = ["00111111", "11000001", "01010000", "00110100", "11110000", "01101111"]
    x = [[int(c[i]) for c in cols] for i in range(8)]
    block = [0, 0, 0, 0, 1, 1, 1, 1]
    op = op_of(x, block)
    assert switched(op, np.array(block)).tolist() == [True, True, False, False, False, False]  # type: ignore[arg-type]


def test_switched_asks_for_one_moment_across_categories() -> None:
    # one block of 8 sessions, categories a b a b a b a b (log order); by hand:
    #   0: 0 0 1 1 1 1 1 1  on from the 3rd session in both categories: one moment        -> switched
    #   1: 0 0 0 0 1 0 1 0  on from the 5th session, only in category a (b never varies)  -> switched
    #   2: 0 1 1 1 1 1 1 1  on from the 2nd in b, the 3rd in a: one moment (none between) -> switched
    #   3: 1 0 0 0 0 1 0 1  off after the 1st in a, on from the 6th in b: two moments      -> not
    #   4: 0 1 1 0 1 0 1 0  a switches on at the 3rd, b off after the 2nd                  -> not
    cols = ["00111111", "00001010", "01111111", "10000101", "01101010"]
    x = [[int(c[i]) for c in cols] for i in range(8)]
    category = [0, 1, 0, 1, 0, 1, 0, 1]
    op = op_of(x, [0] * 8, category)
    assert switched(op).tolist() == [True, True, True, False, False]  # type: ignore[arg-type]


def test_loo_says_why_a_lesson_introduced_mid_block_claims_nothing(tmp_path: Path) -> None:
    # 200 graded sessions: 6 time blocks, sessions 100-132 the fourth. a.md is injected in every session from 115
    # on, when the reward steps up by 0.10; b.md and c.md at random, no lesson has any effect
    rng = np.random.default_rng([71, 5])
    events: list[dict[str, object]] = []
    for i in range(200):
        used = ["a.md"] * (i >= 115) + [name for name in ("b.md", "c.md") if rng.random() < 0.5]
        reward = 0.5 + 0.1 * (i >= 115) + rng.normal(0.0, 0.1)
        lessons = [{"path": path, "salience": 1.0} for path in used]
        events.append(
            {"type": "session", "session_id": f"s{i:03d}", "base_reward": round(reward, 2), "lessons": lessons}
        )
    library = {name: ([name[0]], "active") for name in ("a.md", "b.md", "c.md")}
    results = {
        r.path: r for r in Workspace(make_workspace(tmp_path, library, events), clock=fixed_clock).loo(write=False)
    }
    a = results["a.md"].effect
    assert a is not None and not a.identified and a.ci_low is None
    assert any(note.startswith("unidentified: identified only by time") for note in notes(a))
    # the one block it varies in switches at s115, the first session with it
    assert (
        a.reason is not None
        and "it switched at session s115 (never injected in a graded session before it and in every" in a.reason
    )
    assert all(results[p].effect is not None and results[p].effect.identified for p in ("b.md", "c.md"))  # type: ignore[union-attr]


def switched_by_hand(x: np.ndarray, group: np.ndarray, block: np.ndarray) -> list[bool]:
    """`switched` read off its definition, one column and one block at a time: among the sessions of the
    block's groups where the column varies, those with it all before those without, or all after."""
    verdicts: list[bool] = []
    for j in range(x.shape[1]):
        steps = []
        for b in sorted(set(block.tolist())):
            on: list[int] = []
            off: list[int] = []
            for g in sorted(set(group[block == b].tolist())):
                members = np.flatnonzero(group == g).tolist()
                with_it = [s for s in members if x[s, j] != 0]
                if 0 < len(with_it) < len(members):
                    on += with_it
                    off += [s for s in members if x[s, j] == 0]
            if on:
                steps.append(max(on) < min(off) or min(on) > max(off))
        verdicts.append(bool(steps) and all(steps))
    return verdicts


def test_switched_agrees_with_its_definition_on_random_designs() -> None:
    rng = np.random.default_rng([5, 11])
    seen = set()
    for _ in range(400):
        n, p = int(rng.integers(1, 40)), int(rng.integers(1, 7))
        n_categories, n_agents, n_blocks = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 5))
        category = rng.integers(0, n_categories, n)
        agent = rng.integers(0, n_agents, n)
        block = block_codes(n, n_blocks)
        z, group = indicators(n, category, n_categories, agent, n_agents, block, n_blocks)
        # columns from sparse to dense (and switch-like runs), some entries stored as explicit zeros
        x = (rng.random((n, p)) < rng.random(p)).astype(np.float64)
        runs = rng.integers(0, n + 1, p)
        x[:, ::2] = (np.arange(n)[:, None] >= runs[None, ::2]).astype(np.float64)
        rows, cols = np.nonzero(np.ones((n, p)) * (rng.random((n, p)) < 0.8) + x)
        stored = sparse.csr_matrix((x[rows, cols], (rows, cols)), shape=(n, p))
        op = centred(stored, z, group)
        for blocks in (block, None):
            expected = switched_by_hand(x, group, np.zeros(n, dtype=np.int64) if blocks is None else blocks)
            got = switched(op, blocks).tolist()
            assert got == expected, (n, p, x.tolist(), group.tolist(), blocks)
            seen.update(expected)
    assert seen == {True, False}  # both verdicts were asked for


def edge_by_hand(
    x: np.ndarray, group: np.ndarray, whole: np.ndarray, block: np.ndarray, category: np.ndarray, agent: np.ndarray
) -> tuple[list[bool], list[int]]:
    """Per column: varies in no block group (`group`) yet over the whole log's groups (`whole`), and there either
    those with it all come before those without or all after (then the first session of the later side, else
    -1), or its injections are a combination of the categories', the agents' and the blocks' indicators (the
    fit's baselines, added together: least squares leaves no residual, no fit with them can tell it apart)."""
    edges, ats = [], []
    baselines = np.hstack([np.eye(int(f.max()) + 1)[f] for f in (category, agent, block)])
    for j in range(x.shape[1]):
        on: list[int] = []
        off: list[int] = []
        in_a_block = False
        for g in sorted(set(whole.tolist())):
            members = np.flatnonzero(whole == g).tolist()
            with_it = [s for s in members if x[s, j] != 0]
            if 0 < len(with_it) < len(members):
                on += with_it
                off += [s for s in members if x[s, j] == 0]
        for g in sorted(set(group.tolist())):
            k = int(np.count_nonzero(x[group == g, j]))
            in_a_block |= 0 < k < int(np.count_nonzero(group == g))
        once = bool(on) and not in_a_block and (max(on) < min(off) or min(on) > max(off))
        injected = (x[:, j] != 0).astype(np.float64)
        coef = np.linalg.lstsq(baselines, injected, rcond=None)[0]
        spanned = bool(np.abs(baselines @ coef - injected).max() < 1e-6)
        edges.append(once or (bool(on) and not in_a_block and spanned))
        ats.append((min(off) if max(on) < min(off) else min(on)) if once else -1)
    return edges, ats


def test_a_switch_where_a_block_starts_is_found_over_the_whole_log() -> None:
    rng = np.random.default_rng([5, 12])
    seen: set[object] = set()
    for _ in range(400):
        n, p = int(rng.integers(2, 40)), int(rng.integers(1, 8))
        n_categories, n_agents, n_blocks = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(2, 5))
        category, agent = rng.integers(0, n_categories, n), rng.integers(0, n_agents, n)
        block = block_codes(n, n_blocks)
        _, group = indicators(n, category, n_categories, agent, n_agents, block, n_blocks)
        _, whole = indicators(n, category, n_categories, agent, n_agents, None, 1)
        # step columns, some switched where a block starts, and random ones; then columns on in some blocks
        # (the same for every group: the blocks' baselines take it) and on in a random table of group x block
        # cells (mostly not a group's number plus a block's)
        starts = np.flatnonzero(np.diff(block)) + 1
        cut = np.where(rng.random(p) < 0.6, rng.choice(starts, p) if len(starts) else 0, rng.integers(0, n + 1, p))
        x = (np.arange(n)[:, None] >= cut[None, :]).astype(np.float64)
        x[:, ::3] = rng.random((n, len(range(0, p, 3)))) < 0.5
        x[:, 1::2] = 1.0 - x[:, 1::2]
        in_blocks = (rng.random((n_blocks, 2)) < 0.5)[block].astype(np.float64)
        table = rng.random((int(whole.max()) + 1, n_blocks, 2)) < 0.5
        x = np.hstack([x, in_blocks, table[whole, block].astype(np.float64)])
        stored = sparse.csr_matrix(x)
        found = with_edges(switches(stored, group, block), stored, whole, block, (category, agent))
        edges, ats = edge_by_hand(x, group, whole, block, category, agent)
        assert found.edge is not None and found.edge.tolist() == edges, (x.tolist(), group.tolist())
        assert found.at[found.edge].tolist() == [a for a, e in zip(ats, edges, strict=True) if e]
        assert (found.timed[found.edge]).all()
        seen.update(edges)
        seen.update(f"at {a >= 0}" for a, e in zip(ats, edges, strict=True) if e)
    assert seen == {True, False, "at True", "at False"}  # switched once where a block starts, and more often


def test_the_reason_names_the_session_of_a_switch_in_one_block() -> None:
    ids = [f"x{i}" for i in range(N)]
    on = lesson_claims(design_of(*switch_world(0)), session_ids=ids).of(0)
    off = lesson_claims(design_of(*switch_world(0, off=True)), session_ids=ids).of(0)
    # on: injected from session 450 (x450) on; off: injected before 450, so x450 is the first without it
    assert on is not None and on.reason is not None and off is not None and off.reason is not None
    assert (
        "it switched at session x450 (never injected in a graded session before it and in every one from it on"
        in on.reason
    )
    assert (
        "it switched at session x450 (injected in every graded session before it and in none from it on" in off.reason
    )
    # without the ids (the simulator): its place among the graded sessions, counted from 1
    plain = lesson_claims(design_of(*switch_world(0))).of(0)
    assert plain is not None and plain.reason is not None and "graded session 451 (in log order)" in plain.reason


def test_the_reason_counts_the_blocks_of_a_lesson_switched_in_several() -> None:
    # on from 450 (block 4, sessions 400-499), off from 750 (block 7): blocks 5 and 6 always have it, so it
    # varies in two blocks, a single switch in each
    x, reward = switch_world(2)
    x[:, 0] = (np.arange(N) >= 450) & (np.arange(N) < 750)
    column = lesson_claims(design_of(x, reward), session_ids=[f"x{i}" for i in range(N)]).of(0)
    assert column is not None and not column.identified and column.reason is not None
    assert column.reason.startswith("identified only by time: in each of the 2 time blocks where it varies"), (
        column.reason
    )


def test_a_lesson_on_in_exactly_one_block_claims_nothing() -> None:
    # injected in every session of block 4 (sessions 400-499) and in none of the others, no effect, while the
    # baseline steps +0.10 in that block only: two switches, both where a block starts; its column is block 4's
    # indicator, which the block baselines hold (no fit with them can move it). Its comparison is block 4 against
    # the rest: a step of that block's baseline looks the same. Before, one such switch was read as time, two were
    # not ("the data barely move it"), and `loo` showed the block's step as its leave-one-out lift
    assert time_blocks(N) == 10
    ids = [f"x{i}" for i in range(N)]
    for seed in range(3):
        x, reward = switch_world(seed)
        inside = (np.arange(N) >= 400) & (np.arange(N) < 500)
        x[:, 0] = inside
        reward = 0.50 + 0.10 * inside + np.random.default_rng([71, 9, seed]).normal(0.0, 0.15, N)
        design = design_of(x, reward)
        column = lesson_claims(design, session_ids=ids).of(0)
        assert column is not None and column.timed and not column.identified and column.reason is not None
        assert column.reason.startswith(
            "identified only by time: it was injected in every graded session of some time blocks and in none of "
            "the others (within its category and agent), which the time blocks' baselines take all of"
        ), column.reason
        assert timed_arms(design).tolist() == [True] + [False] * (x.shape[1] - 1)
        lesson = effects_of(design)[0]
        assert lesson is not None and lesson.ranking == 0.0 and not claimed(lesson)


def test_a_lesson_on_in_one_block_of_one_category_only_is_still_identified() -> None:
    # two categories (category 1: every tenth session, 100 of 1,000: too few for blocks of its own, 12 a block, so it
    # shares category 0's); the lesson is in every category-1 session of block 4 and nowhere else, with a real
    # effect of +0.20 and no step in any baseline: its column is not a category's number plus a block's (category
    # 0's sessions of block 4 tell the block's baseline apart), so the fit estimates it; a rule reading "constant in
    # every category x block cell" as time-only would hide it. With categories of 500 each (even and odd sessions)
    # each has its own blocks, and the lesson's column is category 1's baseline in block 4: not estimable
    rng = np.random.default_rng([71, 10])
    x, _ = switch_world(0)
    for category, identified in ((np.asarray(np.arange(N) % 10 == 9, dtype=np.int64), True), (np.arange(N) % 2, False)):
        inside = (np.arange(N) >= 400) & (np.arange(N) < 500) & (category == 1)
        x[:, 0] = inside
        reward = 0.50 + 0.20 * inside + rng.normal(0.0, 0.10, N)
        design = design_of(x, reward, category)
        column = lesson_claims(design, session_ids=[f"x{i}" for i in range(N)]).of(0)
        assert column is not None and not column.timed and column.identified == identified, column
        if identified:
            assert timed_arms(design).tolist() == [False] * x.shape[1]
        else:
            assert column.reason is not None and column.reason.startswith("not estimable"), column.reason


def test_a_lesson_the_agents_baselines_tell_apart_is_identified() -> None:
    # review30: categories x and y, agents a and b; (x,a), (x,b), (y,a) throughout, (y,b) in the last block only.
    # The lesson is in blocks 1 and 3 of 3 except in (y,b) sessions (+0.15): constant in every cell, and its cells
    # are a (category x agent) group's number plus a block's, but not a category's plus an agent's plus a block's
    # (the fit's baselines, added together): (y,b) in block 3 is off where (y,a), (x,b) and block 3 say on. The fit
    # estimates it; before, it was read as time-only (ranking 0)
    n = 900
    rng = np.random.default_rng([71, 11])
    block = block_codes(n, 3)
    category, agent = np.arange(n) % 2, (np.arange(n) // 2) % 2
    agent[(category == 1) & (block < 2)] = 0  # (y,b) only in the last block
    lesson = ((block != 1) & ~((category == 1) & (agent == 1))).astype(np.float64)
    x = np.stack([lesson, (rng.random(n) < 0.5).astype(np.float64)], axis=1)
    reward = 0.5 + 0.15 * lesson + 0.05 * block + rng.normal(0.0, 0.1, n)
    rows, arms = np.nonzero(x)
    design = Design(
        np.arange(n), reward, category, 2, rows, arms, np.ones(len(rows)), 2, n_blocks=3, agent=agent, n_agents=2
    )
    column = lesson_claims(design, session_ids=[f"x{i}" for i in range(n)]).of(0)
    assert column is not None and not column.timed and column.identified, column
    assert column.effect is not None and abs(column.effect.estimate - 0.15) < 3 * column.effect.se, column.effect
