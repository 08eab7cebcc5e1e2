"""The simulator's joint selection policy, its regret against the oracle, and the worlds that break the
joint model's assumptions, each checked against a second computation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis.joint import build_design, fit_joint
from lesson_credit.core.sim.loop import joint_design
from lesson_credit.core.sim.simulate import (
    POLICIES,
    SCENARIOS,
    Scenario,
    format_report,
    make_world,
    run_policy,
    run_simulation,
    simulate_seed,
)

TINY = Scenario(name="tiny", n_lessons=30, n_sessions=80, k=4)


@pytest.mark.parametrize(
    "changes",
    [
        {"reward_kind": "poisson"},
        {"noise_spread": 1.5},
        {"category_effect": -0.1},
        {"outcome_mention": 2.0},
        {"always_acts": "yes"},
        {"joint_refit": 0},
        {"joint_tau_min": 0.0},
        {"joint_weights": "journal"},
    ],
)
def test_new_parameters_are_validated(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Scenario(**changes)


def test_joint_loop_fits_the_design_its_log_gives() -> None:
    # the loop builds the joint design from its own arrays; build_design builds it from the run's log
    # (session events through LogIndex): both must give the same fit, lesson by lesson
    sc = TINY.with_(n_sessions=120)
    world = make_world(sc, 3)
    run = run_policy(world, sc, "joint", 3)
    weights = sc.floor + (1.0 - sc.floor) * run.entry_salience
    rows, arms = [run.entry_session.astype(np.int64)], [run.entry_arm.astype(np.int64)]
    ours = joint_design(world, sc.n_sessions, run.reward, rows, arms, [weights])
    data = run.fold_data()
    theirs = build_design(data, [f"c{c}" for c in world.session_category.tolist()], sc.floor)
    fit_ours, fit_theirs = fit_joint(ours), fit_joint(theirs)
    lesson_of_arm = np.array([int(a[1:]) for a in data.arm_ids])
    # the two designs order their columns differently, so sums round differently (by ~1e-9 relative with
    # the oldest numpy/scipy the project allows); a design that differed would move a coefficient by ~1e-2
    assert np.allclose(fit_ours.coef[lesson_of_arm], fit_theirs.coef, rtol=1e-6, atol=1e-9)
    assert np.allclose(fit_ours.coef_sd[lesson_of_arm], fit_theirs.coef_sd, rtol=1e-6)
    never = np.setdiff1d(np.arange(sc.n_lessons), lesson_of_arm)
    assert np.isnan(fit_ours.coef[never]).all()


def test_what_the_joint_policy_reads_of_an_injection() -> None:
    from lesson_credit.core.sim.loop import _Joint

    world = make_world(TINY, 4)
    # injection: every injection weighs 1, the same loop as a salience floor of 1
    injection = run_policy(world, TINY.with_(joint_weights="injection"), "joint", 4)
    floor_one = run_policy(world, TINY.with_(floor=1.0), "joint", 4)
    assert np.array_equal(injection.entry_arm, floor_one.entry_arm)
    # centred, by hand (floor 0.3): the first session's mean salience is the log's so far, so its
    # weights are as usual; the second's lone lesson gets the log's mean salience (0.2 + 0.6 + 0.9) / 3
    learner = _Joint(world, TINY.with_(joint_weights="centred"), np.random.default_rng(0))
    assert learner.weight(np.array([0.2, 0.6])) == pytest.approx([0.3 + 0.7 * 0.2, 0.3 + 0.7 * 0.6])
    assert learner.weight(np.array([0.9])) == pytest.approx([0.3 + 0.7 * (1.7 / 3)])
    salience = _Joint(world, TINY, np.random.default_rng(0))
    assert salience.weight(np.array([0.2, 0.9])) == pytest.approx([0.44, 0.93])


def test_joint_policy_chooses_among_candidates_and_is_seeded() -> None:
    world = make_world(TINY, 2)
    first = run_policy(world, TINY, "joint", 2)
    again = run_policy(world, TINY, "joint", 2)
    assert np.array_equal(first.entry_arm, again.entry_arm)
    starts = first.session_start.tolist()
    for t, cand in enumerate(world.candidates):
        chosen = first.entry_arm[starts[t] : starts[t + 1]].tolist()
        assert len(chosen) == min(TINY.k, len(cand)) and set(chosen) <= set(cand.tolist())


def test_regret_against_the_oracle_recomputed_from_the_runs() -> None:
    sc = TINY
    result = simulate_seed(sc, 1)
    world = make_world(sc, 1)
    gains = {}
    for policy in POLICIES:
        run = run_policy(world, sc, policy, 1, propensities=policy in ("seed", "evidence", "uniform"))
        starts = run.session_start.tolist()
        per_session = []
        for t in range(sc.n_sessions):
            chosen = run.entry_arm[starts[t] : starts[t + 1]].astype(np.int64)
            per_session.append(float(world.gain(t)[chosen].sum()))
        gains[policy] = np.array(per_session)
    for policy in POLICIES:
        assert result.regret[policy] == pytest.approx(float((gains["oracle"] - gains[policy]).sum()), abs=1e-9)
    assert result.regret["oracle"] == 0.0
    assert result.regret["random"] > 0


def test_the_oracle_takes_the_best_expected_gains_of_the_session() -> None:
    sc = SCENARIOS["category-effect"].with_(n_lessons=30, n_sessions=60, k=3)
    world = make_world(sc, 0)
    run = run_policy(world, sc, "oracle", 0)
    starts = run.session_start.tolist()
    assert world.acts_given_candidate is not None
    for t, cand in enumerate(world.candidates):
        # expected gain by hand: effect x (1 at home, 1 - 2 * 1.0 = -1 elsewhere) x P(relevant | candidate, category)
        c = world.session_category[t]
        scale = np.where(world.home == c, 1.0, -1.0)
        value = world.effect * scale * world.acts_given_candidate[c]
        chosen = run.entry_arm[starts[t] : starts[t + 1]].astype(np.int64)
        best = np.sort(value[cand])[::-1][: sc.k].sum()
        assert value[chosen].sum() == pytest.approx(best, abs=1e-12)


def test_binary_rewards_are_coins_with_the_sessions_chance() -> None:
    sc = SCENARIOS["binary-rewards"].with_(n_lessons=30, n_sessions=4000, k=4)
    world = make_world(sc, 5)
    run = run_policy(world, sc, "random", 5)
    assert set(np.unique(run.reward).tolist()) <= {0.0, 1.0}
    chance = np.clip(world.baseline[world.session_category] + run.session_gain, 0.0, 1.0)
    # 4000 coins: the mean is within 4 standard errors (sd <= 0.5 / sqrt(4000) = 0.0079) of the mean chance
    assert abs(run.reward.mean() - chance.mean()) < 4 * 0.5 / math.sqrt(4000)
    assert world.reward_u is not None and np.array_equal(run.reward == 1.0, world.reward_u < chance)


def test_unequal_noise_by_category() -> None:
    world = make_world(SCENARIOS["unequal-noise"].with_(n_lessons=10, n_sessions=20000), 0)
    # 0.15 x (1 + 0.9 x (-1, -1/3, 1/3, 1)) = 0.015, 0.105, 0.195, 0.285
    expected = [0.015, 0.105, 0.195, 0.285]
    for c, sd in enumerate(expected):
        noise = world.noise[world.session_category == c]
        assert noise.std() == pytest.approx(sd, rel=0.05)


def test_an_effect_that_depends_on_the_category() -> None:
    world = make_world(SCENARIOS["category-effect"].with_(n_lessons=40, n_sessions=300), 2)
    lessons = np.flatnonzero(world.effect != 0)
    for t in range(world.n_sessions):
        c = world.session_category[t]
        gain = world.gain(t)[lessons]
        sign = np.where(world.home[lessons] == c, 1.0, -1.0)
        assert np.array_equal(gain, world.effect[lessons] * sign * world.relevant[t, lessons])


def test_salience_rises_with_the_reward() -> None:
    sc = SCENARIOS["outcome-salience"].with_(n_lessons=40, n_sessions=2000)
    world = make_world(sc, 1)
    lessons = np.arange(sc.n_lessons)
    low = np.array([world.salience_of(t, lessons, 0.0) for t in range(sc.n_sessions)])
    high = np.array([world.salience_of(t, lessons, 1.0) for t in range(sc.n_sessions)])
    assert (high >= low).all()  # the same uniforms: a keyword mentioned at reward 0 is mentioned at 1
    irrelevant = ~world.relevant
    # an irrelevant lesson's keyword: 0.05 at reward 0; 1 - 0.95 x (1 - 0.6) = 0.62 at reward 1
    assert low[irrelevant].mean() == pytest.approx(0.05, abs=0.01)
    assert high[irrelevant].mean() == pytest.approx(0.62, abs=0.01)
    # the plain worlds' salience is unchanged by the reward
    plain = make_world(SCENARIOS["default"].with_(n_lessons=40, n_sessions=50), 1)
    assert np.array_equal(plain.salience_of(3, lessons, 1.0), plain.salience[3])


def test_effects_that_act_whatever_the_salience() -> None:
    world = make_world(SCENARIOS["salience-blind"].with_(n_lessons=40, n_sessions=200), 4)
    for t in (0, 57, 199):
        assert np.array_equal(world.gain(t), world.effect)  # relevant or not
    assert np.allclose(world.value, world.final_effect)  # every candidacy gains the effect


def test_a_keyword_that_echoes_success_in_some_lessons_only() -> None:
    sc = SCENARIOS["success-keyword"].with_(n_lessons=60, n_sessions=1500)
    world = make_world(sc, 3)
    assert world.echo is not None
    nulls = world.effect == 0
    assert not world.echo[~nulls].any() and world.echo.sum() == round(0.3 * nulls.sum())  # 0.3 of the nulls
    lessons = np.arange(sc.n_lessons)
    low = np.array([world.salience_of(t, lessons, 0.0) for t in range(sc.n_sessions)])
    high = np.array([world.salience_of(t, lessons, 1.0) for t in range(sc.n_sessions)])
    # an echo lesson's irrelevant keyword: 0.05 at reward 0, 1 - 0.95 x 0.4 = 0.62 at reward 1; others 0.05
    irrelevant = ~world.relevant
    echo_cells, other_cells = irrelevant & world.echo[None, :], irrelevant & ~world.echo[None, :]
    assert high[echo_cells].mean() == pytest.approx(0.62, abs=0.02)
    assert low[echo_cells].mean() == pytest.approx(0.05, abs=0.01)
    assert np.array_equal(high[other_cells], low[other_cells])


def test_the_old_worlds_are_drawn_as_before() -> None:
    # the echo draws from a stream of its own: the default world's value is the closed form it was
    world = make_world(SCENARIOS["default"].with_(n_lessons=30, n_sessions=50), 0)
    assert np.array_equal(world.value, world.final_effect * world.p_relevant_given_candidate)
    assert world.reward_u is None and world.mention_u is None and world.acts is None
    assert world.echo is None


def test_every_scenario_reports_regret_per_policy() -> None:
    for name, sc in SCENARIOS.items():
        small = sc.with_(n_lessons=min(sc.n_lessons, 40), n_sessions=min(sc.n_sessions, 60))
        result = simulate_seed(small, 0)
        assert set(result.regret) == set(POLICIES), name
        assert all(math.isfinite(v) for v in result.regret.values()), name
        assert result.regret["oracle"] == 0.0


def test_report_regret_json_and_text() -> None:
    report = run_simulation(TINY, 3)
    data = report.as_json()
    assert set(data["regret"]) == set(POLICIES)
    for policy, entry in data["regret"].items():
        values = report.regret[policy]
        assert entry["mean"] == pytest.approx(float(np.mean(values)))
        assert entry["std"] == pytest.approx(float(np.std(values, ddof=1)))
        assert entry["per_seed"] == pytest.approx(list(values))
        diff = np.array(values) - np.array(report.regret["seed"])
        assert entry["versus_seed"]["wins"] == pytest.approx(float((diff < 0).mean()))
    assert "oracle" in data["regret_against"]
    text = format_report(report)
    assert "cumulative regret against the oracle" in text and "joint" in text


def test_tempered_draws_cut_the_joint_policys_regret_on_binary_rewards() -> None:
    # 0/1 rewards: noise sd about 0.5 against effects of 0.25 x relevance. The joint policy draws with
    # its posterior sd times 0.7 (POLICY_TEMPER); untempered (1.0) it explores more than pays here.
    # Seeds 0-3 of a small world (60 lessons x 800 sessions, k 6), summed: 100.6 against 104.3 when run (100.0
    # against 109.9 before a lesson nearly one switch was drawn from the prior too: a lesson the untempered policy
    # dropped and still tried now and then is explored again, which cost it less than its wide draws did)
    sc = SCENARIOS["binary-rewards"].with_(n_lessons=60, n_sessions=800, k=6, effect_size=0.25)
    assert sc.joint_temper == 0.7
    tempered = untempered = 0.0
    for seed in range(4):
        world = make_world(sc, seed)
        tempered += run_policy(world, sc, "joint", seed).cumulative_regret
        untempered += run_policy(world, sc.with_(joint_temper=1.0), "joint", seed).cumulative_regret
    assert tempered < 0.98 * untempered


@pytest.mark.long
def test_joint_beats_every_credit_strategy_on_binary_rewards() -> None:
    # the binary-rewards world at its full size (120 lessons x 1,500 sessions), seeds 0-2: when run,
    # joint 81 / 103 / 101 against the best credit strategy's 119 / 111 / 126 (docs/policy.md's table). Each
    # seed beats the credit strategies, and the three by 10% together: a change that moves one early draw
    # (3 time blocks at 50-70 sessions instead of 2) sends a run down another path, and one seed's regret
    # then moves by up to 30 (seed 1: 73 -> 103) while over seeds 0-9 the mean moved 90.2 -> 91.6 (paired sd 14)
    sc = SCENARIOS["binary-rewards"]
    joints, credits = [], []
    for seed in range(3):
        world = make_world(sc, seed)
        joint = run_policy(world, sc, "joint", seed).cumulative_regret
        credit = min(
            run_policy(world, sc, policy, seed).cumulative_regret for policy in ("seed", "evidence", "uniform")
        )
        assert joint < credit, seed
        joints.append(joint)
        credits.append(credit)
    assert sum(joints) < 0.9 * sum(credits)
