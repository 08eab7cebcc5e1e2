"""The credit-strategy simulator: metric functions by hand, the world it draws, its loops, its report."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.bandit.fold import CreditSettings, fold
from lesson_credit.core.sim.simulate import (
    ESTIMATORS,
    SCENARIOS,
    Run,
    Scenario,
    average_ranks,
    bottom_detection,
    ceiling_spearman,
    format_report,
    make_world,
    precision_at_k,
    run_policy,
    run_simulation,
    scenario,
    simulate_seed,
    spearman,
)
from tests.support.oracles import best_gain, selection_regret

TINY = Scenario(name="tiny", n_lessons=30, n_sessions=80, k=4)

# ---------------------------------------------------------------- metrics by hand


def test_average_ranks_share_ties() -> None:
    # sorted: 1 (pos 1), 2 2 (pos 2-3 -> 2.5), 5 (pos 4)
    assert average_ranks(np.array([5.0, 2.0, 1.0, 2.0])).tolist() == [4.0, 2.5, 1.0, 2.5]
    assert average_ranks(np.zeros(3)).tolist() == [2.0, 2.0, 2.0]


def test_spearman_without_ties_by_hand() -> None:
    # rank differences 0, 1, 1, 0: rho = 1 - 6 * 2 / (4 * (16 - 1)) = 1 - 12/60 = 0.8
    assert spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 30.0, 20.0, 40.0])) == pytest.approx(0.8)
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)


def test_spearman_with_ties_by_hand() -> None:
    # ranks x: 1, 2.5, 2.5, 4 (deviations -1.5, 0, 0, 1.5); y: 1..4 (deviations -1.5, -.5, .5, 1.5)
    # covariance sum = 2.25 + 0 + 0 + 2.25 = 4.5; squares 4.5 and 5 -> rho = 4.5 / sqrt(22.5)
    rho = spearman(np.array([1.0, 2.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert rho == pytest.approx(4.5 / math.sqrt(22.5))
    from scipy.stats import spearmanr

    assert rho == pytest.approx(float(spearmanr([1, 2, 2, 3], [1, 2, 3, 4])[0]))


def test_spearman_undefined_for_constant_or_tiny_input() -> None:
    assert math.isnan(spearman(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    assert math.isnan(spearman(np.array([1.0]), np.array([2.0])))


def test_precision_at_10_by_hand() -> None:
    # 12 items, estimate = index; the top 10 are items 2..11, of which 3, 5, 11 are helpful; item 0 is
    # helpful too but ranks last -> 3/10
    estimate = np.arange(12, dtype=np.float64)
    helpful = np.zeros(12, dtype=bool)
    helpful[[0, 3, 5, 11]] = True
    assert precision_at_k(estimate, helpful, 10) == pytest.approx(0.3)
    # fewer items than k: the share among all of them
    assert precision_at_k(np.array([0.2, 0.1, 0.3]), np.array([True, False, False]), 10) == pytest.approx(1 / 3)
    assert math.isnan(precision_at_k(np.zeros(0), np.zeros(0, dtype=bool)))


def test_harmful_detection_by_hand() -> None:
    # 20 items -> bottom 10% is 2 items: the two lowest estimates, items 7 (-0.5) and 3 (-0.2)
    estimate = np.zeros(20)
    estimate[7], estimate[3], estimate[12] = -0.5, -0.2, -0.1
    harmful = np.zeros(20, dtype=bool)
    harmful[[7, 12]] = True
    assert bottom_detection(estimate, harmful) == pytest.approx(0.5)
    harmful[3] = True
    assert bottom_detection(estimate, harmful) == pytest.approx(2 / 3)
    assert math.isnan(bottom_detection(estimate, np.zeros(20, dtype=bool)))
    # at least one item is in the bottom, even for 5 items
    assert bottom_detection(np.array([0.0, -1.0, 0.0, 0.0, 0.0]), np.array([False, True, False, False, False])) == 1.0


def test_regret_in_a_three_lesson_world() -> None:
    # gains this session: lesson 0 helps (+0.2, relevant), 1 is irrelevant (0), 2 harms (-0.1, relevant)
    gain = np.array([0.2, 0.0, -0.1])
    assert best_gain(gain, 2) == pytest.approx(0.2)  # {0, 1}
    assert selection_regret(gain, [0, 1], 2) == pytest.approx(0.0)
    assert selection_regret(gain, [0, 2], 2) == pytest.approx(0.1)  # 0.2 - (0.2 - 0.1)
    assert selection_regret(gain, [1, 2], 2) == pytest.approx(0.3)  # 0.2 - (0 - 0.1)
    assert selection_regret(gain, [1], 1) == pytest.approx(0.2)
    # all three must be taken when k >= n: the harmful one is unavoidable, no regret
    assert best_gain(gain, 5) == pytest.approx(0.1)
    assert selection_regret(gain, [0, 1, 2], 5) == pytest.approx(0.0)


# ---------------------------------------------------------------- scenarios


@pytest.mark.parametrize(
    "changes",
    [
        {"n_lessons": 1},
        {"n_sessions": 0},
        {"n_sessions": 1.5},
        {"k": 0},
        {"k": True},
        {"floor": 1.5},
        {"floor": math.nan},
        {"noise": -0.1},
        {"noise": math.inf},
        {"keyword_breadth": 1.2},
        {"helpful_share": 0.7, "harmful_share": 0.4},
        {"effect_size": -0.1},
        {"mention_prob": 2.0},
        {"context_recall": -0.5},
        {"relevance_a": 0.0},
        {"category_affinity": 1.1},
        {"baseline_mean": 0.9, "baseline_spread": 0.4},
        {"keywords_min": 4, "keywords_max": 3},
        {"keywords_min": 0},
        {"flip_at": 1.0},
        {"flip_at": 0.0},
        {"decay": 0.0},
        {"decay": 1.5},
        {"loo_log": "bogus"},
        {"propensity_draws": 0},
        {"paired_share": 1.5},
        {"injection_mention": 1.5},
        {"dropout": -0.1},
        {"name": ""},
    ],
)
def test_scenario_rejects_bad_parameters(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Scenario(**changes)


def test_named_scenarios_and_overrides() -> None:
    assert set(SCENARIOS) == {
        "default",
        "broad-keywords",
        "always-paired",
        "sign-flip",
        "few-sessions",
        "injection-echo",
        "dropout",
        "binary-rewards",
        "unequal-noise",
        "many-lessons",
        "category-effect",
        "self-selected",
        "outcome-salience",
        "salience-blind",
        "success-keyword",
        "trend",
        "auto-include",
    }
    assert all(sc.name == name for name, sc in SCENARIOS.items())
    assert scenario("default") == Scenario(name="default")
    assert scenario("few-sessions", k=5).k == 5
    assert scenario("few-sessions", k=5).n_sessions == 150
    with pytest.raises(ValueError, match="unknown scenario"):
        scenario("nope")
    with pytest.raises(ValueError):
        scenario("default", floor=2.0)
    sc = SCENARIOS["sign-flip"]
    assert Scenario(**json.loads(json.dumps(sc.as_json()))) == sc  # the JSON form holds every parameter


# ---------------------------------------------------------------- the world and the loops


def test_world_true_value_and_relevance_given_candidate() -> None:
    sc = Scenario(n_lessons=20, n_sessions=6000, k=4, category_affinity=0.6)
    world = make_world(sc, 3)
    assert np.array_equal(world.value, world.final_effect * world.p_relevant_given_candidate)
    assert int(world.helpful.sum()) == 2 and int(world.harmful.sum()) == 1
    # the closed form of P(relevant | candidate) matches the simulated sessions
    is_candidate = np.zeros_like(world.relevant)
    for t, cand in enumerate(world.candidates):
        is_candidate[t, cand] = True
    counts = is_candidate.sum(axis=0)
    empirical = (is_candidate & world.relevant).sum(axis=0) / np.maximum(counts, 1)
    enough = counts >= 300
    assert enough.sum() >= 10
    assert np.allclose(empirical[enough], world.p_relevant_given_candidate[enough], atol=0.06)
    # salience is a share of keywords; relevant lessons are mentioned more
    assert ((world.salience >= 0) & (world.salience <= 1)).all()
    assert world.salience[world.relevant].mean() > 0.6 > 0.1 > world.salience[~world.relevant].mean()


def test_sign_flip_and_pairs_in_the_world() -> None:
    flip = make_world(SCENARIOS["sign-flip"].with_(n_lessons=30, n_sessions=100), 0)
    assert flip.flip_session == 50
    assert np.array_equal(flip.final_effect, -flip.effect)
    assert np.array_equal(flip.effect_at(49), flip.effect) and np.array_equal(flip.effect_at(50), -flip.effect)

    paired = make_world(SCENARIOS["always-paired"].with_(n_lessons=30, n_sessions=100), 0)
    leads = np.flatnonzero(paired.partner >= 0)
    assert len(leads) == 14  # 15 lessons in pairs -> 7 couples
    assert np.array_equal(paired.partner[paired.partner[leads]], leads)
    assert np.array_equal(paired.relevant[:, leads], paired.relevant[:, paired.partner[leads]])
    # every lesson with an effect is paired with a null one
    for lesson in np.flatnonzero(paired.effect != 0):
        assert paired.effect[paired.partner[lesson]] == 0


@pytest.mark.parametrize("strategy", ["seed", "evidence", "uniform"])
@pytest.mark.parametrize("decay", [1.0, 0.97])
def test_online_posterior_is_the_fold_of_the_runs_log(strategy: str, decay: float) -> None:
    sc = TINY.with_(decay=decay, floor=0.25)
    world = make_world(sc, 5)
    run = run_policy(world, sc, strategy, 5)
    data = run.fold_data()
    posterior = fold(data, CreditSettings(strategy=strategy, floor=0.25, decay=decay))
    arms = [int(arm_id[1:]) for arm_id in data.arm_ids]
    assert np.allclose(posterior.alpha, run.alpha[arms], rtol=1e-10)
    assert np.allclose(posterior.beta, run.beta[arms], rtol=1e-10)
    assert np.array_equal(posterior.n, run.injections[arms])
    never = np.setdiff1d(np.arange(sc.n_lessons), arms)
    assert (run.alpha[never] == 1.0).all() and (run.beta[never] == 1.0).all()


@pytest.mark.parametrize("policy", ["seed", "evidence", "uniform", "random", "oracle"])
def test_runs_select_among_candidates_and_regret_is_recomputable(policy: str) -> None:
    sc = TINY
    world = make_world(sc, 2)
    run = run_policy(world, sc, policy, 2, propensities=policy == "uniform")
    starts = run.session_start.tolist()
    for t, cand in enumerate(world.candidates):
        chosen = run.entry_arm[starts[t] : starts[t + 1]].astype(np.int64)
        assert len(chosen) == min(sc.k, len(cand))
        assert set(chosen.tolist()) <= set(cand.tolist())
        position = {lesson: i for i, lesson in enumerate(cand.tolist())}
        expected = selection_regret(world.gain(t)[cand], [position[c] for c in chosen.tolist()], sc.k)
        assert run.regret[t] == pytest.approx(expected, abs=1e-9)
        assert run.regret[t] >= 0
    assert (run.reward >= 0).all() and (run.reward <= 1).all()
    if policy == "oracle":
        assert run.cumulative_regret == pytest.approx(0.0, abs=1e-9)  # no session offers more than k helpful
    if policy == "uniform":
        # propensities of every candidate: P(top-k) sums to min(k, candidates) per session
        assert len(run.candidacy_row) == sum(len(c) for c in world.candidates)
        totals = np.bincount(run.candidacy_row, weights=run.candidacy_propensity, minlength=sc.n_sessions)
        sizes = np.array([min(sc.k, len(c)) for c in world.candidates])
        assert np.allclose(totals, sizes, atol=1e-9)
    else:
        assert len(run.candidacy_row) == 0


def test_always_paired_lessons_are_injected_together() -> None:
    sc = SCENARIOS["always-paired"].with_(n_lessons=30, n_sessions=120, k=5)
    world = make_world(sc, 1)
    run = run_policy(world, sc, "seed", 1)
    starts = run.session_start.tolist()
    for t in range(sc.n_sessions):
        chosen = set(run.entry_arm[starts[t] : starts[t + 1]].tolist())
        assert len(chosen) <= sc.k
        for lesson in chosen:
            mate = int(world.partner[lesson])
            assert mate < 0 or mate in chosen


# ---------------------------------------------------------------- the report


def test_report_is_deterministic_under_the_seeds() -> None:
    first = run_simulation(TINY, [3, 7])
    second = run_simulation(TINY, [3, 7])
    assert json.dumps(first.as_json(), allow_nan=False) == json.dumps(second.as_json(), allow_nan=False)
    # each seed is simulated on its own: seed 7 alone gives the same per-seed numbers
    alone = run_simulation(TINY, [7])
    for name in ESTIMATORS:
        for metric, values in alone.estimator(name).per_seed.items():
            both = first.estimator(name).per_seed[metric][1]
            assert values[0] == both or (math.isnan(values[0]) and math.isnan(both))
    other = run_simulation(TINY, [4, 8])
    assert other.as_json() != first.as_json()


def test_run_simulation_progress_and_arguments() -> None:
    calls: list[tuple[int, int]] = []
    report = run_simulation(TINY, 3, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert report.seeds == (0, 1, 2)
    with pytest.raises(ValueError):
        run_simulation(TINY, [])
    with pytest.raises(ValueError):
        run_simulation(TINY, [-1])


def test_a_report_of_one_seed_shows_values_without_a_spread() -> None:
    # one seed has no spread: "0.355 ±0.000 [0.355, 0.355]" claimed a standard deviation of one value
    report = run_simulation(TINY, [7])
    text = format_report(report)
    assert "±" not in text and "1 seed;" in text
    evidence = next(line for line in text.splitlines() if line.startswith("evidence "))
    value = report.estimator("evidence").per_seed["spearman"][0]
    assert evidence.split()[1] == f"{value:.3f}"  # the row's first cell is seed 7's own spearman
    regret = report.regret["joint"][0]
    assert any(line.split()[:2] == ["joint", f"{regret:.1f}"] for line in text.splitlines() if line.startswith("  "))
    # a share of wins over one seed is 0% or 100%, not a rate: the difference alone
    versus = next(line for line in text.splitlines() if "minus its posterior" in line)
    assert "%" not in versus and "wins" not in versus, versus
    diff = report.versus_posterior("joint")["seed"].mean_diff
    assert f"seed {diff:+.3f}" in versus
    two = format_report(run_simulation(TINY, [3, 7]))
    assert "2 seeds;" in two and "±" in two
    assert "(spearman, wins)" in two  # two seeds: how often the joint estimate won is said


def test_report_shape() -> None:
    report = run_simulation(TINY, 2)
    assert [s.name for s in report.estimators] == list(ESTIMATORS)
    for summary in report.estimators:
        if summary.kind == "reference":
            assert summary.spearman is None and summary.regret is not None
        elif summary.kind in ("loo", "randomized"):
            assert summary.regret is None and summary.spearman is not None
        elif summary.kind == "joint":  # ranks on the credit logs; its regret is the joint policy's own run
            assert summary.spearman is not None and summary.regret is not None
        else:
            assert summary.spearman is not None and summary.regret is not None
            assert summary.regret.n == 2 and summary.regret.mean >= 0
    assert report.estimator("oracle").regret is not None
    assert report.estimator("random").regret is not None
    # no dropout in this world: the randomized estimator has nothing to rank with
    dropout_rank = report.estimator("dropout").spearman
    assert dropout_rank is not None and dropout_rank.n == 0
    ranked = {"seed", "evidence", "uniform", "loo-naive", "loo-category", "loo-ipw", "joint"}
    assert set(report.ranking("spearman")) == ranked
    assert set(report.ranking("regret")) == {"seed", "evidence", "uniform", "joint", "random", "oracle"}
    assert report.ranking("regret")[0] == "oracle"
    data = json.loads(json.dumps(report.as_json(), allow_nan=False))
    assert data["scenario"]["name"] == "tiny"
    assert {row["a"] for row in data["versus_seed"]["spearman"]} == ranked - {"seed"} | {"dropout"}
    assert 0.0 < data["ceiling"] <= 1.0 and len(data["ceiling_per_seed"]) == 2
    assert 0.0 <= data["coverage"]["joint_90"] <= 1.0
    assert set(data["by_log"]["joint"]) == {"seed", "evidence", "uniform"}
    assert set(data["joint_versus_posterior"]) == {"seed", "evidence", "uniform"}
    # the main row of a log-based estimator is the mean of its per-log values, seed by seed
    for i in range(2):
        per_log = [report.by_log["joint"][log][i] for log in ("seed", "evidence", "uniform")]
        assert report.estimator("joint").per_seed["spearman"][i] == pytest.approx(np.mean(per_log))
    comparison = report.compare("evidence", "seed", "spearman")
    assert comparison.n == 2 and 0.0 <= comparison.wins <= 1.0
    text = format_report(report)
    for name in ESTIMATORS:
        assert name in text
    with pytest.raises(KeyError):
        report.estimator("nope")
    with pytest.raises(ValueError):
        report.compare("seed", "uniform", "bogus")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_named_scenario_runs(name: str) -> None:
    sc = SCENARIOS[name].with_(n_lessons=40, n_sessions=min(SCENARIOS[name].n_sessions, 120))
    result = simulate_seed(sc, 0)
    assert set(result.metrics) == set(ESTIMATORS)
    for estimator in ("seed", "evidence", "uniform"):
        assert math.isfinite(result.metrics[estimator]["regret"])
        assert -1.0 <= result.metrics[estimator]["spearman"] <= 1.0
    assert result.metrics["random"]["regret"] >= result.metrics["oracle"]["regret"] >= 0


@pytest.mark.long
def test_strategy_ordering_on_spearman_holds_across_seed_groups() -> None:
    # The default world, smaller. Two disjoint groups of seeds must agree on how the three credit
    # strategies rank lessons by true value, and on which one is worst (seed, in this world).
    sc = SCENARIOS["default"].with_(n_lessons=80, n_sessions=600)
    strategies = ("seed", "evidence", "uniform")
    orderings = []
    for seeds in ([0, 1, 2, 3, 4], [100, 101, 102, 103, 104]):
        report = run_simulation(sc, seeds)
        ranked = [name for name in report.ranking("spearman") if name in strategies]
        orderings.append(ranked)
        assert report.compare("evidence", "seed").wins >= 0.8
        assert report.compare("uniform", "seed").wins >= 0.8
    assert orderings[0] == orderings[1]
    assert orderings[0][-1] == "seed"


def test_ceiling_by_hand() -> None:
    # truth -0.2, 0, 0, 0.1, 0.3: average ranks 1, 2.5, 2.5, 4, 5 (deviations -2, -.5, -.5, 1, 2; squares 9.5)
    # best estimate: the nulls in either order, ranks 1, 2, 3, 4, 5 (deviations -2, -1, 0, 1, 2; squares 10)
    # products: 4 + .5 + 0 + 1 + 4 = 9.5 -> rho = 9.5 / sqrt(9.5 * 10) = 0.97468
    value = np.array([0.3, 0.0, -0.2, 0.1, 0.0])
    for seed in range(5):
        assert ceiling_spearman(value, np.random.default_rng(seed)) == pytest.approx(9.5 / math.sqrt(95))
    assert ceiling_spearman(np.array([0.1, -0.1, 0.2]), np.random.default_rng(0)) == pytest.approx(1.0)


def hand_run() -> Run:
    # 2 lessons, 4 sessions with rewards 0.8 0.4 0.6 0.2: s0 injects l0, s1 l1, s2 both, s3 none.
    # withheld: l0 in s1; l0 and l1 in s3. True gains of the injections: s0 l0 0.3, s1 l1 0, s2 l0 0.1, l1 0.2
    return Run(
        policy="uniform",
        alpha=np.ones(2),
        beta=np.ones(2),
        injections=np.array([2, 2]),
        entry_arm=np.array([0, 1, 0, 1], dtype=np.int32),
        entry_salience=np.full(4, 0.5),
        entry_session=np.array([0, 1, 2, 2], dtype=np.int32),
        session_start=np.array([0, 1, 2, 4, 4]),
        reward=np.array([0.8, 0.4, 0.6, 0.2]),
        regret=np.zeros(4),
        candidacy_row=np.zeros(0, dtype=np.int64),
        candidacy_arm=np.zeros(0, dtype=np.int64),
        candidacy_propensity=np.zeros(0),
        entry_gain=np.array([0.3, 0.0, 0.1, 0.2]),
        withheld_session=np.array([1, 3, 3]),
        withheld_arm=np.array([0, 0, 1]),
    )


def test_dropout_estimate_and_true_gain_by_hand() -> None:
    run = hand_run()
    # l0: kept s0 s2 (0.8, 0.6) mean 0.7, withheld s1 s3 (0.4, 0.2) mean 0.3 -> 0.4
    # l1: kept s1 s2 (0.4, 0.6) mean 0.5, withheld s3 (0.2) -> 0.3
    assert run.dropout_estimate() == pytest.approx([0.4, 0.3])
    # l0: (0.3 + 0.1) / 2 = 0.2; l1: (0 + 0.2) / 2 = 0.1
    assert run.true_gain_per_injection() == pytest.approx([0.2, 0.1])


def test_dropout_in_the_loop_withholds_chosen_lessons() -> None:
    sc = TINY.with_(dropout=0.5)
    world = make_world(sc, 4)
    run = run_policy(world, sc, "uniform", 4, propensities=True)
    plain = run_policy(world, TINY, "uniform", 4, propensities=True)
    withheld, kept = len(run.withheld_arm), len(run.entry_arm)
    assert 0.35 < withheld / (withheld + kept) < 0.65
    # the log holds the kept lessons only, and a withheld lesson was a candidate of its session
    for t, lesson in zip(run.withheld_session.tolist(), run.withheld_arm.tolist(), strict=True):
        assert lesson in world.candidates[t].tolist()
        starts = run.session_start
        assert lesson not in run.entry_arm[starts[t] : starts[t + 1]].tolist()
    # propensities are P(chosen) * (1 - epsilon): per session they sum to half of min(k, candidates)
    totals = np.bincount(run.candidacy_row, weights=run.candidacy_propensity, minlength=sc.n_sessions)
    sizes = np.array([min(sc.k, len(c)) for c in world.candidates])
    assert np.allclose(totals, 0.5 * sizes, atol=1e-9)
    assert len(plain.withheld_arm) == 0 and np.isnan(plain.dropout_estimate()).all()
    assert np.isfinite(run.dropout_estimate()).any()


def test_injection_echo_raises_the_salience_of_irrelevant_lessons() -> None:
    base = make_world(TINY.with_(n_sessions=400), 1)
    echo = make_world(TINY.with_(n_sessions=400, injection_mention=0.5), 1)
    assert np.array_equal(base.relevant, echo.relevant)  # same world otherwise
    # an irrelevant lesson's keyword: 0.05 by accident; with the echo 1 - 0.95 * 0.5 = 0.525
    assert base.salience[~base.relevant].mean() == pytest.approx(0.05, abs=0.01)
    assert echo.salience[~echo.relevant].mean() == pytest.approx(0.525, abs=0.02)


def test_importing_the_simulator_pulls_in_no_ui_and_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, lesson_credit.core.sim.simulate; "
        "print([m for m in sys.modules if m.split('.')[0] in ('scipy', 'textual', 'rich', 'plotext')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_report_of_one_seed_says_its_spread_is_unknown_in_json() -> None:
    """`simulate --seeds 1 --json` (the report's `as_json`) gave `"std": 0.0` and `"p10"` = `"p90"` = the value (an
    interval of width 0) for every metric and policy, where the text prints the value alone: a spread of one value
    is not 0, it is unknown. It is null; the mean and n (1) stay. Two seeds keep their spread (the sample sd of two
    values, |a - b| / sqrt(2), computed here from the per-seed values)."""
    data = json.loads(json.dumps(run_simulation(TINY, [7]).as_json()))
    metrics = ("spearman", "precision_at_10", "harmful_detection", "regret")
    summaries = [e[m] for e in data["estimators"] for m in metrics if e.get(m)]
    summaries += list(data["regret"].values())
    summaries += [s for logs in data["by_log"].values() for s in logs.values()]
    ones = [s for s in summaries if s["n"] == 1]
    assert len(ones) > 20 and all(s["n"] <= 1 for s in summaries)  # (n 0: a metric undefined in this world)
    assert all(s["mean"] is not None for s in ones)
    assert all(s["std"] is None and s["p10"] is None and s["p90"] is None for s in ones), ones[0]
    versus = [v for vs in data["versus_seed"].values() for v in vs] + list(data["joint_versus_posterior"].values())
    versus += [r["versus_seed"] for r in data["regret"].values()]
    assert any(v["n"] == 1 for v in versus)
    assert all(v["std_diff"] is None for v in versus if v["n"] == 1)
    two = run_simulation(TINY, [3, 7]).regret_json("joint")
    a, b = two["per_seed"]
    assert two["std"] == pytest.approx(abs(a - b) / math.sqrt(2))
    assert two["p10"] is not None and two["p90"] is not None
