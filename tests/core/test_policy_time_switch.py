"""The joint policy and a lesson identified only by time: injected in every session from one moment on
while the baseline steps at that moment. `loo` claims nothing for it; the policy draws it as a lesson
the log has no data for (mean 0, the prior's sd), not as the step's +0.15."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.joint import Design, block_codes, time_blocks
from lesson_credit.core.analysis.joint_posterior import Stream, time_only
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session

LESSONS = {
    "t/alpha.md": (["alpha"], "active"),
    "t/beta.md": (["beta"], "active"),
    "t/delta.md": (["delta"], "active"),  # injected in every session from s040 on, in none before
    "t/zeta.md": (["zeta"], "active"),  # never injected: drawn from the prior
}
N, SWITCH = 80, 40


def switch_log(seed: int = 3) -> list[dict[str, object]]:
    """alpha and beta at random in half the sessions; the baseline 0.40 steps +0.15 at s040, alpha
    adds +0.10, noise sd 0.05; categories alternate code / research."""
    rng = np.random.default_rng(seed)
    events: list[dict[str, object]] = []
    for i in range(N):
        injected = [lesson for lesson in ("t/alpha.md", "t/beta.md") if rng.random() < 0.5]
        if i >= SWITCH:
            injected.append("t/delta.md")
        reward = 0.40 + 0.15 * (i >= SWITCH) + 0.10 * ("t/alpha.md" in injected) + rng.normal(0.0, 0.05)
        category = "code" if i % 2 else "research"
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0), category=category))
    return events


def workspace(tmp_path: Path) -> Workspace:
    return Workspace(make_workspace(tmp_path, LESSONS, switch_log()), clock=fixed_clock, use_cache=False)


def test_a_lesson_identified_only_by_time_is_drawn_from_the_prior(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert time_blocks(N) > 1  # the switch is read within the fit's time blocks
    post = ws.joint_posterior()
    assert post is not None
    delta = post.arm_ids.index("t/delta.md")
    alpha = post.arm_ids.index("t/alpha.md")
    for category in (None, "code", "research"):
        mean, sd = post.in_category(category)
        # the old posterior read the step as its effect: about +0.15 with an sd near 0.02
        assert mean[delta] == 0.0 and sd[delta] == post.prior_sd
        # alpha varies within every block: it keeps its own posterior (+0.10 by construction)
        assert 0.05 < mean[alpha] < 0.15 and sd[alpha] < 0.5 * post.prior_sd


def test_its_propensity_is_a_never_injected_lessons(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    # two candidates drawn alike (mean 0, the prior's sd): each tops a draw of one half the time; 4,000
    # draws give the estimate an sd of 0.008 (before: delta's step made it about 1)
    for category in (None, "code"):
        selection = ws.select("delta zeta", k=1, seed=5, log=False, policy="joint", category=category)
        assert set(selection.candidates) == {"t/delta.md", "t/zeta.md"}
        assert abs(selection.propensity["t/delta.md"] - 0.5) < 0.04
        assert abs(selection.propensity["t/zeta.md"] - 0.5) < 0.04


def test_time_only_finds_the_lessons_switched_once_within_their_block() -> None:
    n = 300  # 7 time blocks of about 43 sessions: sessions 149 and 150 in one
    assert time_blocks(n) == 7 and block_codes(n, 7)[149] == block_codes(n, 7)[150]
    rng = np.random.default_rng(5)
    category = np.arange(n) % 2
    after = np.arange(n) >= 150
    x = np.zeros((n, 6), dtype=bool)
    x[:, 0] = after  # on from 150: switched
    x[:, 1] = ~after  # off from 150: switched
    x[:, 2] = rng.random(n) < 0.5  # at random: not
    x[:, 3] = np.where(category == 0, after, rng.random(n) < 0.5)  # at random in one category: not
    # on at 150 in one category, off at 160 in the other: two moments in one block, and not grouped with 0 (on
    # at 160 in the other, it would be: together in 145 of their 150 and 145 sessions, timed as 0's group member);
    # no single switch, but the baseline steps at each moment (in block 3, sessions 129-171, a category's 21 or 22
    # sessions: about 10 of one kind then 11 of the other, a run of chance about 1 / C(21, 10) = 3e-6) and the
    # steps take all of it (before 2026-12-07, without the steps: not timed)
    x[:, 4] = np.where(category == 0, after, np.arange(n) < 160)
    x[:, 5] = np.arange(n) < 10  # in the first ten sessions only: switched off at s010
    rows, arms = np.nonzero(x)
    design = Design(
        np.arange(n),
        rng.random(n),
        category.astype(np.int64),
        2,
        rows,
        arms,
        np.ones(len(rows)),
        6,
        n_blocks=time_blocks(n),
    )
    assert time_only(Stream.held(design)).tolist() == [True, True, False, False, True, True]


def test_the_simulators_joint_policy_draws_it_from_the_prior_too() -> None:
    # the simulated policy learns the switch log's sessions (delta on from session 40 while the baseline steps
    # +0.15 there; alpha +0.10 at random; zeta never injected), then refits: the posterior `select` draws from
    from lesson_credit.core.sim.loop import _Joint
    from lesson_credit.core.sim.scenario import scenario
    from lesson_credit.core.sim.world import make_world

    sc = scenario("default", n_lessons=4, n_sessions=N, k=2)
    world = make_world(sc, 0)
    learner = _Joint(world, sc, np.random.default_rng(0))
    rng = np.random.default_rng(3)
    for t in range(N):
        chosen = [j for j in (0, 1) if rng.random() < 0.5] + ([2] if t >= SWITCH else [])  # alpha, beta, delta
        reward = 0.40 + 0.15 * (t >= SWITCH) + 0.10 * (0 in chosen) + rng.normal(0.0, 0.05)
        learner.learn(t, np.array(chosen, dtype=np.int64), float(reward), np.ones(len(chosen)))
    learner.refit(N)
    # delta as zeta, a lesson without data (before: about +0.15, the step, with a small sd)
    assert learner.mean[2] == learner.mean[3] == 0.0 and learner.sd[2] == learner.sd[3] > 0.1
    assert 0.05 < learner.mean[0] < 0.15 and learner.sd[0] < 0.5 * learner.sd[3]  # alpha keeps its own


def switch_world(seed: int) -> list[dict[str, object]]:
    """23 to 75 graded sessions (either side of the time-block rule's 24 and 50), a few pending among them, one
    or two categories; a, b, c at random; d switched on (or off) at a random graded session, with a +0.15 step
    in the baseline there, e likewise at another (in category y only when there are two); noise sd 0.05 or
    0.20 (noisy grades leave many switches barely moved by the data)."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([23, 24, 25, 48, 49, 50, 51, 75]))
    names = ["x", "y"][: int(rng.integers(1, 3))]
    at = {"t/delta.md": int(rng.integers(n)), "t/zeta.md": int(rng.integers(n))}
    off, noise = bool(rng.random() < 0.5), float(rng.choice([0.05, 0.20]))
    events: list[dict[str, object]] = []
    graded = 0
    for i in range(n + 5):
        pending, category = bool(rng.random() < 0.08), str(rng.choice(names))
        injected = [lesson for lesson in ("t/alpha.md", "t/beta.md") if rng.random() < 0.5]
        for lesson, start in at.items():
            if ((graded >= start) != off) and (lesson == "t/delta.md" or len(names) == 1 or category == "y"):
                injected.append(lesson)
        reward = 0.5 + 0.15 * (graded >= at["t/delta.md"]) + rng.normal(0.0, noise)
        value = None if pending else round(float(np.clip(reward, 0.0, 1.0)), 3)
        events.append(session(f"s{i:03d}", value, dict.fromkeys(injected, 1.0), category=category))
        graded += not pending
    return events


def test_loo_and_the_policy_agree_on_which_lessons_are_identified_only_by_time(tmp_path: Path) -> None:
    # `loo` marked a switched lesson only when the fit would otherwise identify it (or it switched where a block
    # starts); the policy draws every switched lesson from the prior. A switch the data barely moved (a few
    # sessions inside a block, a small log, noisy grades) was ranked by `loo` at the shrunk fit's value, its
    # before-against-after lift printed, while the policy drew it at 0: 52 disagreements in 60 such worlds
    timed = 0
    for seed in range(30):
        root = make_workspace(tmp_path / str(seed), LESSONS, switch_world(seed))
        ws = Workspace(root, clock=fixed_clock, use_cache=False)
        results = {r.path: r for r in ws.loo(write=False)}
        post = ws.joint_posterior()
        for k, arm in enumerate(post.arm_ids):
            result = results.get(arm)
            if result is None or result.effect is None or min(result.n_with, result.n_without) < 5:
                continue  # (too few sessions: no claim either way)
            drawn_from_prior = post.mean[k] == 0.0 and post.sd[k] == post.prior_sd
            assert result.timed == drawn_from_prior, (seed, arm, result.effect.reason)
            if result.timed:
                assert result.delta is None and result.effect.ranking == 0.0, (seed, arm)
                timed += "identified only by time" in (result.effect.reason or "")
    assert timed >= 10  # the worlds hold such switches (each seed's delta and zeta, where enough sessions)


def test_the_time_check_reads_each_span_a_fixed_number_of_times_and_tells_what_loo_tells() -> None:
    # The policy's check that a lesson is identified only by time read a time block's injections again for every
    # 4,096 of them (the rule before 2026-12-07): at a million sessions x 1,000 lessons every span about a hundred
    # times. Now each span is read a fixed number of times, whatever the blocks: once for the baseline's steps
    # (a block's pieces held until it is whole), twice for what the steps leave of each lesson (`kept_share`: its
    # spread beside the baselines without, then with, the steps), once for the lessons whose sessions are one run
    # per group, and, as lesson 0 is one, three more (its injections for the switch check, and the two of grouping
    # it, `switches.with_groups`). 2,400 sessions injecting 40 of 100 lessons each: 96,000 injections in 13 time
    # blocks, read in spans of 100 sessions
    n, n_arms = 2400, 100
    rng = np.random.default_rng(7)
    n_blocks = time_blocks(n)
    assert n_blocks == 13  # floor(2 log2(2400 / 25)) = floor(13.17)
    x = np.zeros((n, n_arms), dtype=bool)
    for i in range(n):
        x[i, rng.choice(n_arms, 40, replace=False)] = True
    x[:, 0] = np.arange(n) >= 1210  # switched on inside block 6 (sessions 1108-1292), a stray one before it
    x[500, 0] = True
    rows, arms = np.nonzero(x)
    category = (np.arange(n) % 3).astype(np.int64)
    design = Design(np.arange(n), rng.random(n), category, 3, rows, arms, np.ones(len(rows)), n_arms, n_blocks=n_blocks)
    calls: list[tuple[int, int]] = []
    held = Stream.held(design)

    def entries(lo: int, hi: int) -> tuple[Any, Any, Any]:
        calls.append((lo, hi))
        return held.entries(lo, hi)

    stream = Stream(design, entries, 100)
    spans = stream.spans()
    assert len(spans) == 24
    found = time_only(stream)
    assert len(calls) == 7 * len(spans)
    # what loo tells of the same design: lesson 0 identified only by time (the steps at its switch leave it only
    # the stray's session), no other
    claims = lesson_claims(design)
    loo_view = [bool(column is not None and column.timed) for column in map(claims.of, range(n_arms))]
    assert loo_view[0] and not any(loo_view[1:])
    assert found.tolist() == loo_view
