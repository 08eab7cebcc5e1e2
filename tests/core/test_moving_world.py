"""Estimates for a world that moves (time blocks; before vs during): worlds written here with numpy (not the
simulator) where the baseline rises over the log, a lesson stops helping, or trouble pulls lessons in
mid-session. A lesson is *claimed* as `loo` claims it: its headline's BH-adjusted p below 0.05."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.effects import LooResult
from lesson_credit.core.analysis.estimates import SIGNIFICANCE, Effect, joint_effects
from lesson_credit.core.analysis.joint import Design, fit_joint, time_blocks
from lesson_credit.core.analysis.ranking import timed_arms
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.sim.loop import run_policy
from lesson_credit.core.sim.scenario import scenario
from lesson_credit.core.sim.world import make_world
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, fixed_clock, make_workspace


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
    arms = tuple(f"l{j}" for j in range(design.n_arms))
    return joint_effects(fit_joint(design), lesson_claims(design), arms, timed_arms(design))


def claimed(effect: Effect | None) -> bool:
    return effect is not None and effect.p_adjusted is not None and effect.p_adjusted < SIGNIFICANCE


def test_time_blocks_grow_slowly() -> None:
    # none below 24 graded sessions, 2 from 24 to 49; then floor(2 log2(n / 25)) but at least 3: 50 -> 2 x 1 = 2
    # (3), 70 -> 2 x 1.49 = 2 (3), 71 -> 2 x 1.51 = 3, 99 -> 2 x 1.99 = 3, 100 -> 4, 1000 -> 2 x 5.32 = 10. With 2
    # blocks at 56-70 the trend world's 90% intervals covered 89% of 1,000 seeds (bench/small_blocks.py), 3 89-93%
    sizes = (0, 16, 23, 24, 30, 49, 50, 64, 70, 71, 99, 100, 1000, 10_000, 100_000)
    assert [time_blocks(n) for n in sizes] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4, 10, 17, 23]


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


def test_a_small_log_does_not_credit_the_trend_either() -> None:
    # 40 graded sessions (two blocks of 20): the fit without time read lesson 0's rise with the baseline as
    # an effect (by hand about +0.07 as above; here a mean of +0.049 over the seeds it identifies, its 90%
    # interval excluding 0 in 11 of 37); with the blocks the mean is about 0 (+0.003) and 3 of 34 exclude 0
    estimates, excluded = [], 0
    for seed in range(40):
        x, reward = trend_world(seed, n=40)
        column = lesson_claims(design_of(x, reward)).of(0)
        if column is None or not column.identified or column.effect is None:
            continue
        low, high = column.effect.bounds(0.90)
        estimates.append(column.effect.estimate)
        excluded += int(low > 0 or high < 0)
    assert len(estimates) >= 30
    assert abs(np.mean(estimates)) < 0.02  # a standard error of the mean is about 0.012
    assert excluded <= 6  # 10% of the seeds is 3-4 expected


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
    # 20 worlds x 8 no-effect lessons: without time 15-21% were claimed by the fit without time; a claim here is a
    # false one, and BH at 0.05 allows a few
    false = sum(claimed(e) for seed in range(20) for e in effects_of(design_of(*trend_world(100 + seed))))
    assert false <= 8  # 5% of 160


def auto_include_events(seed: int, n: int = 400, p: int = 10, *, marked: bool = True) -> list[dict[str, object]]:
    """No lesson has any effect. Each is chosen before a session with probability 0.3; a third of the
    sessions run into trouble (reward -0.25), and trouble's words pull in each lesson not chosen
    before with probability 0.5 (gptme includes a lesson mid-conversation when its keywords come up)."""
    rng = np.random.default_rng([33, 3, seed])
    events: list[dict[str, object]] = []
    for s in range(n):
        chosen = rng.random(p) < 0.3
        trouble = rng.random() < 1 / 3
        pulled = ~chosen & trouble & (rng.random(p) < 0.5)
        lessons = [{"path": f"l{j}.md", "salience": 1.0, "included": "before"} for j in np.flatnonzero(chosen)]
        lessons += [{"path": f"l{j}.md", "salience": 1.0, "included": "during"} for j in np.flatnonzero(pulled)]
        if not marked:  # the log as it was: no telling chosen from pulled in
            lessons = [{"path": str(e["path"]), "salience": 1.0} for e in lessons]
        reward = float(np.clip(0.6 - 0.25 * trouble + rng.normal(0.0, 0.1), 0.0, 1.0))
        events.append(
            {"type": "session", "session_id": f"s{s:03d}", "base_reward": round(reward, 2), "lessons": lessons}
        )
    return events


def loo_of(tmp_path: Path, events: list[dict[str, object]]) -> list[LooResult]:
    lessons = {f"l{j}.md": ([f"k{j}"], "active") for j in range(10)}
    return Workspace(make_workspace(tmp_path, lessons, events), clock=fixed_clock).loo(write=False)


def test_lessons_pulled_in_by_trouble_are_not_claimed(tmp_path: Path) -> None:
    marked = [r for seed in range(3) for r in loo_of(tmp_path / f"m{seed}", auto_include_events(seed))]
    assert len(marked) == 30
    assert sum(claimed(r.effect) for r in marked) <= 3  # at most 10% of the no-effect lessons
    # what a lesson pulled in looked like, reported beside its estimate: n and mean reward of those sessions,
    # by hand from the events
    events = auto_include_events(0)
    first = loo_of(tmp_path / "again", events)
    for result in first:
        rewards = [
            float(e["base_reward"])  # type: ignore[arg-type]
            for e in events
            if any(entry == {"path": result.path, "salience": 1.0, "included": "during"} for entry in e["lessons"])  # type: ignore[attr-defined]
        ]
        assert result.n_during == len(rewards) > 0
        assert result.mean_during == pytest.approx(np.mean(rewards))
        assert result.as_json()["during"] == {"n": result.n_during, "mean_reward": result.mean_during}
    # unmarked, the same world claims the pulled-in lessons as harmful: trouble rode in with them (8 of 10)
    unmarked = loo_of(tmp_path / "unmarked", auto_include_events(0, marked=False))
    assert sum(claimed(r.effect) and r.effect is not None and r.effect.estimate < 0 for r in unmarked) >= 5


def log_text(root: Path) -> str:
    return (root / LOG_REL).read_text(encoding="utf-8")


def test_record_marks_lessons_chosen_before_and_included_during(tmp_path: Path) -> None:
    lessons = {"a.md": (["alpha"], "active"), "b.md": (["beta"], "active"), "c.md": (["gamma"], "active")}
    root = make_workspace(tmp_path, lessons, [], journals={"j.md": "alpha beta gamma"})
    ws = Workspace(root, clock=fixed_clock)
    chosen = ws.select("alpha gamma", k=1, session_id="s1").selected
    assert len(chosen) == 1
    other = ({"a.md", "c.md"} - set(chosen)).pop()
    ws.record("s1", "j.md", [chosen[0], other], reward=0.5, during=["b.md"])
    ws.record("s2", "j.md", ["a.md"], reward=0.7)  # no selection logged: nothing is known, nothing marked
    lines = [json.loads(line) for line in log_text(root).splitlines()]
    s1, s2 = (next(e for e in lines if e.get("session_id") == sid and e["type"] == "session") for sid in ("s1", "s2"))
    assert {e["path"]: e.get("included") for e in s1["lessons"]} == {chosen[0]: "before", other: None, "b.md": "during"}
    assert all("included" not in e for e in s2["lessons"])
    ws = Workspace(root, clock=fixed_clock)
    by_path = {r.path: r for r in ws.loo(write=False)}
    assert (by_path["b.md"].n_during, by_path["b.md"].n_with) == (1, 0)  # not a treatment
    # a.md in s2 (no selection: unmarked, a treatment); in s1 chosen (a treatment), or the candidate the draw
    # passed over and the record named unmarked (read as included during)
    want = (0, 2) if chosen[0] == "a.md" else (1, 1)
    assert (by_path["a.md"].n_during, by_path["a.md"].n_with) == want, chosen
    assert (by_path["c.md"].n_during, by_path["c.md"].n_with) == ((1, 0) if chosen[0] == "a.md" else (0, 1)), chosen
    assert ws.select("alpha", k=1, session_id="s3").selected == ("a.md",)
    before = log_text(root)
    with pytest.raises(WorkspaceError, match="chosen before the session by its select event"):
        ws.record("s3", "j.md", [], reward=0.5, during=["a.md"])
    assert log_text(root) == before  # nothing written


def test_the_simulators_moving_worlds() -> None:
    trend = make_world(scenario("trend", n_lessons=20, n_sessions=101), 0)
    assert trend.shift is not None and trend.pulled is None
    assert trend.shift[[0, 50, 100]] == pytest.approx([-0.15, 0.0, 0.15])  # 0.3 over the log, centred
    sc = scenario("auto-include", n_lessons=20, n_sessions=300)
    world = make_world(sc, 0)
    assert world.shift is not None and world.pulled is not None
    troubled = world.shift < 0
    assert 0.25 < troubled.mean() < 0.42 and not world.pulled[~troubled].any()  # a third in trouble, only they pull
    run = run_policy(world, sc, "seed", 0)
    during = run.entry_during
    assert during.any() and not during.all()
    data = run.fold_data()
    assert data.during.tolist() == np.flatnonzero(during).tolist()  # the log marks them, as record --during does
    # the injections the estimates count are the chosen ones; the seed posterior credits both (alpha grows by
    # base * w for every entry: sum over entries = total alpha - the Beta(1, 1) prior)
    assert run.injections.sum() == (~during).sum()
    w = 0.3 + 0.7 * run.entry_salience
    assert run.alpha.sum() - len(run.alpha) == pytest.approx(float((run.reward[run.entry_session] * w).sum()))


def test_the_joint_policys_cache_knows_a_lesson_included_during_a_session(tmp_path: Path) -> None:
    # two logs that differ only in one lesson's mark: the fits differ (the marked one is no treatment),
    # so the cached fit of one must not serve the other
    from lesson_credit.core.analysis import joint_posterior as jp
    from lesson_credit.core.analysis import joint_posterior_cache as jpc

    def log(mark: str) -> list[dict[str, object]]:
        return [
            {"type": "session", "session_id": f"s{i}", "base_reward": 0.2 + 0.1 * (i % 5),
             "lessons": [{"path": "a.md", "salience": 1.0, "included": mark if i == 3 else "before"}]}
            for i in range(8)
        ]  # fmt: skip

    keys = []
    for mark in ("before", "during"):
        ws = Workspace(make_workspace(tmp_path / mark, {"a.md": (["alpha"], "active")}, log(mark)), clock=fixed_clock)
        keys.append(jpc.fingerprint(ws.data(), ws.session_categories(), ws.session_agents(), 0.3, jp.POLICY_TAU_MIN))
        assert ws.joint_posterior().n.tolist() == ([8] if mark == "before" else [7])
    assert keys[0] != keys[1]
