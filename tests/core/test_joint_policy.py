"""The `joint` selection policy: its posterior against a closed-form ridge solve, its draws and
propensities against closed forms and Monte Carlo, its cache, the config setting and the CLI."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import joint_posterior as jp
from lesson_credit.core.analysis import joint_posterior_cache as jpc
from lesson_credit.core.analysis.joint import JointFit, build_design, fit_joint, fit_sums
from lesson_credit.core.bandit.config import ConfigError, load_config, save_config
from lesson_credit.core.bandit.policy import NormalPosterior, joint_select, p_top_k_normal
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run as run_cli_main
from tests.support.engine_helpers import CONFIG_REL, LOG_REL, fixed_clock, make_workspace, session

LESSONS = {
    "a.md": (["alpha"], "active"),
    "b.md": (["beta"], "active"),
    "c.md": (["gamma"], "active"),  # never injected: drawn from the prior
    "d.md": (["delta"], "active"),
}
# (reward, category, {lesson: salience}); two categories of different baselines
SESSIONS = [
    (0.9, "easy", {"a.md": 1.0, "b.md": 0.0}),
    (0.8, "easy", {"a.md": 0.5}),
    (0.6, "easy", {"b.md": 1.0}),
    (0.7, "easy", {"d.md": 0.5, "b.md": 0.5}),
    (0.75, "easy", {}),
    (0.5, "hard", {"a.md": 1.0}),
    (0.2, "hard", {"b.md": 0.0, "d.md": 1.0}),
    (0.3, "hard", {}),
    (0.45, "hard", {"a.md": 0.0, "d.md": 0.0}),
    (0.35, "hard", {"b.md": 1.0}),
    (0.4, None, {"a.md": 0.5}),
]
CONTEXT = "alpha beta gamma delta"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_cli_main(capsys, *argv, clock=fixed_clock)


def tiny_workspace(tmp_path: Path, config: str | None = None, name: str = "ws") -> Path:
    events = [
        session(f"s{i}", reward, lessons, **({"category": cat} if cat else {}))
        for i, (reward, cat, lessons) in enumerate(SESSIONS)
    ]
    return make_workspace(tmp_path, LESSONS, events, config=config, name=name)


def test_posterior_is_the_closed_form_ridge_solution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the fit itself: in this log a.md's two easy sessions come first (a step in the baseline at s2 takes half of
    # its spread), so it is identified only by time and drawn from the prior (`jp.time_only`); held off here
    monkeypatch.setattr(jp, "time_only", lambda stream: np.zeros(stream.sessions.n_arms, dtype=bool))
    ws = Workspace(tiny_workspace(tmp_path), clock=fixed_clock, use_cache=False)
    floor = ws.settings.floor
    post = ws.joint_posterior()
    # the penalty and noise chosen by empirical Bayes (with the policy's prior floor)
    fit = fit_joint(build_design(ws.data(), ws.session_categories(), floor), tau_min=jp.POLICY_TAU_MIN)
    lam, sigma2 = fit.penalty, fit.noise_sd**2

    # second computation: the augmented normal equations [Z X]'[Z X] + diag(0, lam I), solved densely
    names = ["", "easy", "hard"]  # sorted category names; "" for the session without one
    lessons = ["a.md", "b.md", "d.md"]  # injected in graded sessions
    n, c, p = len(SESSIONS), len(names), len(lessons)
    design = np.zeros((n, c + p))
    y = np.array([s[0] for s in SESSIONS])
    for i, (_, cat, entries) in enumerate(SESSIONS):
        design[i, names.index(cat or "")] = 1.0
        for lesson, sal in entries.items():
            design[i, c + lessons.index(lesson)] = floor + (1 - floor) * sal
    precision = design.T @ design + np.diag([0.0] * c + [lam] * p)
    solution = np.linalg.solve(precision, design.T @ y)
    cov = sigma2 * np.linalg.inv(precision)
    weights = design[:, c:]
    mean_weight = np.array([weights[weights[:, j] > 0, j].mean() for j in range(p)])
    for j, lesson in enumerate(lessons):
        row = post.arm_ids.index(lesson)
        assert post.mean[row] == pytest.approx(solution[c + j] * mean_weight[j], abs=1e-10)
        assert post.sd[row] == pytest.approx(math.sqrt(cov[c + j, c + j]) * mean_weight[j], rel=1e-8)
        assert post.n[row] == int((weights[:, j] > 0).sum())
    assert post.baseline_of() == pytest.approx(dict(zip(names, solution[:c], strict=True)), abs=1e-10)
    # a lesson without data: mean 0, the prior sd of a coefficient x the mean weight of every injection
    every = weights[weights > 0]
    assert post.prior_sd == pytest.approx(fit.prior_sd * every.mean(), rel=1e-12)
    assert fit.prior_sd >= jp.POLICY_TAU_MIN - 1e-12
    mean, sd = NormalPosterior(post.arm_ids, post.mean, post.sd, post.prior_sd).of(["c.md", "a.md"])
    assert mean[0] == 0.0 and sd[0] == post.prior_sd
    assert mean[1] == post.mean[post.arm_ids.index("a.md")]


def test_propensity_of_two_lessons_is_the_normal_closed_form() -> None:
    # P(X1 > X2) for independent normals = Phi((m1 - m2) / sqrt(s1^2 + s2^2)) = Phi(0.1 / 0.05) = Phi(2)
    mean, sd = np.array([0.1, 0.0]), np.array([0.03, 0.04])
    phi2 = 0.5 * (1 + math.erf(2 / math.sqrt(2)))  # 0.97725
    draws = 200_000
    p = p_top_k_normal(mean, sd, 1, np.random.default_rng(0), draws)
    tolerance = 4 * math.sqrt(phi2 * (1 - phi2) / draws)  # 4 standard errors: 0.0013
    assert p[0] == pytest.approx(phi2, abs=tolerance)
    assert p.sum() == pytest.approx(1.0)
    assert p_top_k_normal(mean, sd, 2, np.random.default_rng(0), 10).tolist() == [1.0, 1.0]


def test_logged_propensities_match_how_often_the_draw_picks_each_lesson() -> None:
    lessons = [Lesson(f"l{i}.md", "", "", "active", "", (), ()) for i in range(5)]
    post = NormalPosterior(
        tuple(lesson.id for lesson in lessons[:4]),
        np.array([0.05, 0.0, -0.02, 0.03]),
        np.array([0.02, 0.05, 0.01, 0.03]),
        prior_sd=0.04,
    )
    k, runs, draws = 2, 3000, 4000
    counts = dict.fromkeys((lesson.id for lesson in lessons), 0)
    logged = None
    for seed in range(runs):
        sel = joint_select(
            "s", lessons, post, k, seed, np.random.default_rng(seed), np.random.default_rng([7, 1]), draws
        )
        for lesson in sel.selected:
            counts[lesson] += 1
        logged = sel.propensity  # the same propensity generator each time: the same estimate
    assert logged is not None and sum(logged.values()) == pytest.approx(k)
    for lesson, count in counts.items():
        p = logged[lesson]
        # difference of two Monte Carlo shares: sd <= 0.5 * sqrt(1/3000 + 1/4000) = 0.0121; 4 sd = 0.048
        assert count / runs == pytest.approx(p, abs=0.048), lesson


def test_seeded_joint_select_repeats_and_logs_its_policy(tmp_path: Path) -> None:
    root = tiny_workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    first = ws.select(CONTEXT, k=2, seed=11, session_id="x1", log=False, policy="joint")
    second = ws.select(CONTEXT, k=2, seed=11, session_id="x1", log=False, policy="joint")
    assert first.selected == second.selected and first.propensity == second.propensity
    assert set(first.candidates) == set(LESSONS) and first.policy == "joint"
    ws.select(CONTEXT, k=2, seed=11, session_id="x2", policy="joint")
    event = json.loads((root / LOG_REL).read_text().splitlines()[-1])
    assert event["type"] == "selection" and event["policy"] == "joint"
    assert event["selected"] == list(first.selected) and event["propensity"] == first.propensity
    default = ws.select(CONTEXT, k=2, seed=11, session_id="x3", log=False)
    assert default.policy == "joint"  # no [select] policy: joint


def test_credit_policies_fold_under_their_strategy(tmp_path: Path) -> None:
    from lesson_credit.core.bandit import select as select_mod

    ws = Workspace(tiny_workspace(tmp_path), clock=fixed_clock)
    for strategy in ("seed", "evidence", "uniform"):
        settings = ws.settings.with_(strategy=strategy)
        ours = ws.select(CONTEXT, k=2, seed=5, session_id="y", log=False, policy=strategy)
        candidates = select_mod.candidates(ws.library().lessons, CONTEXT)
        expected = select_mod.thompson_select(
            "y", candidates, ws.posterior(settings), settings, 2, 5,
            np.random.default_rng(5), np.random.default_rng([5, 1]), 4000,
        )  # fmt: skip
        assert ours.selected == expected.selected and ours.propensity == expected.propensity


def test_the_fit_is_cached_per_log_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tiny_workspace(tmp_path)
    first = Workspace(root, clock=fixed_clock).joint_posterior()
    cache = root / "state" / "lesson-thompson" / ".cache" / jpc.CACHE_NAME
    assert cache.is_file()
    fits: list[int] = []
    real = fit_sums  # the function joint_posterior fits with

    def counting(*args: Any, **kwargs: Any) -> JointFit:
        fits.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jp, "fit_sums", counting)
    # a new process (a new Workspace) reads the cache: no fit
    again = Workspace(root, clock=fixed_clock).joint_posterior()
    assert fits == [] and np.array_equal(again.mean, first.mean) and np.array_equal(again.sd, first.sd)
    # a selection event leaves the fit's inputs as they were: still no fit
    ws = Workspace(root, clock=fixed_clock)
    ws.select(CONTEXT, k=2, seed=1, session_id="new", policy="joint")
    Workspace(root, clock=fixed_clock).joint_posterior()
    assert fits == []
    # a recorded session changes them: one fit, and the cache is rewritten
    with (root / LOG_REL).open("a") as log:
        log.write(json.dumps(session("later", 0.95, {"c.md": 1.0})) + "\n")
    fresh = Workspace(root, clock=fixed_clock).joint_posterior()
    assert fits == [1] and fresh.n[fresh.arm_ids.index("c.md")] == 1
    Workspace(root, clock=fixed_clock).joint_posterior()
    assert fits == [1]


def test_a_damaged_cache_is_refitted_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tiny_workspace(tmp_path)
    first = Workspace(root, clock=fixed_clock).joint_posterior()
    cache = root / "state" / "lesson-thompson" / ".cache" / jpc.CACHE_NAME
    data = bytearray(cache.read_bytes())
    data[-3] ^= 0xFF  # one flipped bit in the payload: the seal no longer holds
    cache.write_bytes(bytes(data))
    again = Workspace(root, clock=fixed_clock).joint_posterior()
    assert np.array_equal(again.mean, first.mean)
    assert "joint-posterior.msgpack is damaged" in capsys.readouterr().err
    # a cache written for other inputs (another floor here) is never used for these
    ws = Workspace(root, clock=fixed_clock)
    other_key = jpc.fingerprint(ws.data(), ws.session_categories(), ws.session_agents(), 0.5, jp.POLICY_TAU_MIN)
    with pytest.raises(ValueError, match="stale"):
        jpc.decode(cache.read_bytes(), other_key)


def test_the_fingerprint_hashes_the_entry_columns_without_gathering_them(tmp_path: Path) -> None:
    # the cache's key, read a piece of each entry column at a time, is xxh3-128 of the columns written out whole
    import xxhash

    root = tiny_workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    data, categories, agents = ws.data(), ws.session_categories(), ws.session_agents()
    key = jpc.fingerprint(data, categories, agents, 0.3, jp.POLICY_TAU_MIN)
    assert "entry_arm" not in data.__dict__  # not gathered for the hash
    for name in ("arm", "salience", "session"):
        pieces = list(data.entry_pieces(name, size=3))
        assert len(pieces) > 1 and np.array_equal(np.concatenate(pieces), getattr(data, f"entry_{name}"))
    h = xxhash.xxh3_128()
    h.update(f"{jpc.CACHE_VERSION}|{0.3!r}|{jp.POLICY_TAU_MIN!r}|{data.n_sessions}|".encode())
    h.update("\x00".join(data.arm_ids).encode())
    for array in (data.base, data.entry_session, data.entry_arm, data.entry_salience, data.during):
        h.update(b"|" + np.ascontiguousarray(array).tobytes())
    for names in (categories, agents):
        h.update(f"|{len(names)}|".encode())
        h.update("\x00".join("\x01" if name is None else name for name in names).encode())
    assert key == h.hexdigest()
    assert jpc.fingerprint(data, categories, agents, 0.3, jp.POLICY_TAU_MIN) == key  # (gathered now: the same)


# ---------------------------------------------------------------- config and CLI


def test_select_policy_setting_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('k = 3\n[select]\npolicy = "joint"\n[store]\nurl = "x"\n')
    config = load_config(path)
    assert config.policy == "joint" and config.k == 3
    save_config(path, config)
    assert load_config(path) == config
    path.write_text('strategy = "uniform"\n')
    assert load_config(path).policy is None  # no [select] policy: Workspace.policy decides (joint)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[select]\npolicy = "thompson"\n', "[select] unknown selection policy 'thompson'"),
        ("[select]\npolicy = 3\n", "[select] unknown selection policy 3"),
        ('select = "joint"\n', "[select] must be a table"),
        ("[select.sub]\nx = 1\n", "[select] unknown key 'sub' (known: policy)"),
    ],
)
def test_bad_select_policy_settings_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_cli_select_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tiny_workspace(tmp_path, config='[select]\npolicy = "joint"\n')
    context = tmp_path / "context.txt"
    context.write_text(CONTEXT)
    before = (root / LOG_REL).read_bytes()
    with pytest.raises(SystemExit) as usage:  # an option's value out of its choices: a usage error
        run(capsys, "select", "-w", str(root), "--context", str(context), "--policy", "bogus")
    out, err = capsys.readouterr()
    assert usage.value.code == 2 and out == ""
    assert "invalid choice: 'bogus' (choose from 'seed', 'evidence', 'uniform', 'joint')" in err
    assert (root / LOG_REL).read_bytes() == before
    code, out, _ = run(capsys, "select", "-w", str(root), "--context", str(context), "--k", "2", "--json")
    assert code == 0 and json.loads(out)["policy"] == "joint"  # from config.toml
    code, out, err = run(capsys, "select", "-w", str(root), "--context", str(context), "--policy", "uniform")
    assert code == 0 and "policy uniform" in err
    assert json.loads((root / LOG_REL).read_text().splitlines()[-1])["policy"] == "uniform"


def test_cli_refuses_a_bad_config_policy_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tiny_workspace(tmp_path, config='[select]\npolicy = "best"\n')
    code, out, err = run(capsys, "status", "-w", str(root))
    assert code == 1 and err.count("\n") == 1 and "unknown selection policy 'best'" in err
    assert (root / CONFIG_REL).read_text() == '[select]\npolicy = "best"\n'


def test_draw_refuses_joint_without_the_estimate() -> None:
    from lesson_credit.core import selection_draw
    from lesson_credit.core.model.settings import CreditSettings

    with pytest.raises(WorkspaceError, match="needs the joint estimate"):
        selection_draw.draw(
            "x", list, lambda settings: pytest.fail("the posterior is not read"), CreditSettings(),
            k=1, seed=1, session_id="s", clock=fixed_clock, draws=10, dropout=0.0, policy="joint",
        )  # fmt: skip


def test_cli_simulate_offers_every_scenario_and_reports_regret(capsys: pytest.CaptureFixture[str]) -> None:
    from lesson_credit.cli.main import build_parser
    from lesson_credit.core.sim.scenario import SCENARIOS

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    simulate = commands.choices["simulate"]
    scenario_option = next(a for a in simulate._actions if a.dest == "scenario")
    assert list(scenario_option.choices) == list(SCENARIOS)  # the hard-coded list (no import at start-up) is whole
    code, out, _ = run(
        capsys, "simulate", "--scenario", "binary-rewards", "--seeds", "2", "--lessons", "20", "--sessions", "40",
        "--json",
    )  # fmt: skip
    assert code == 0
    regret = json.loads(out)["regret"]
    assert set(regret) == {"seed", "evidence", "uniform", "joint", "random", "oracle"}
    assert regret["oracle"]["mean"] == 0.0 and len(regret["joint"]["per_seed"]) == 2


def test_p_top_k_follows_the_policy_in_force(tmp_path: Path) -> None:
    from lesson_credit.core.bandit import select as select_mod

    ws = Workspace(tiny_workspace(tmp_path, config='k = 2\n[select]\npolicy = "joint"\n'), clock=fixed_clock)
    post = ws.joint_posterior()
    ids = ["a.md", "b.md", "c.md", "d.md"]  # the active lessons, in library order
    mean, sd = NormalPosterior(post.arm_ids, post.mean, post.sd, post.prior_sd).of(ids)
    expected = p_top_k_normal(mean, sd * 0.7, 2, np.random.default_rng(3), 500)  # tempered draws: sd x 0.7
    assert ws.p_top_k(seed=3, draws=500) == dict(zip(ids, expected.tolist(), strict=True))
    settings = ws.settings.with_(strategy="uniform")
    credit = select_mod.p_top_k(ws.posterior(settings), settings, ws.library().lessons, 2, 3, 500)
    assert ws.p_top_k(seed=3, draws=500, policy="uniform") == credit
    assert ws.p_top_k(settings, seed=3, draws=500) == credit  # a what-if's settings: its strategy


def test_joint_select_with_dropout_logs_its_policy_and_scaled_propensities(tmp_path: Path) -> None:
    root = tiny_workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    plain = ws.select(CONTEXT, k=2, seed=4, session_id="d0", log=False, policy="joint")
    trial = ws.select(CONTEXT, k=2, seed=4, session_id="d1", policy="joint", dropout=0.5)
    event = json.loads((root / LOG_REL).read_text().splitlines()[-1])
    assert event["policy"] == "joint" and trial.policy == "joint"
    # P(injected) = P(chosen) x (1 - epsilon): the same draw's propensities, halved
    assert trial.propensity == pytest.approx({lesson: p * 0.5 for lesson, p in plain.propensity.items()})
    assert set(trial.selected) | set(trial.withheld) == set(plain.selected)


def test_joint_draws_are_tempered() -> None:
    # each draw is mean + 0.7 x sd x z (POLICY_TEMPER), z from the selection's generator
    lessons = [Lesson(f"l{i}.md", "", "", "active", "", (), ()) for i in range(3)]
    mean, sd = np.array([0.05, 0.0, -0.02]), np.array([0.02, 0.05, 0.01])
    post = NormalPosterior(tuple(lesson.id for lesson in lessons), mean, sd, prior_sd=0.04)
    sel = joint_select("s", lessons, post, 1, 9, np.random.default_rng(9), np.random.default_rng(1), 10)
    z = np.random.default_rng(9).standard_normal(3)
    assert [sel.draws[lesson.id] for lesson in lessons] == pytest.approx((mean + 0.7 * sd * z).tolist(), abs=1e-15)


def test_joint_is_the_default_but_an_imported_prior_keeps_the_credit_strategy(tmp_path: Path) -> None:
    ws = Workspace(tiny_workspace(tmp_path), clock=fixed_clock)
    assert ws.policy == "joint" and ws.select(CONTEXT, k=1, seed=1, log=False).policy == "joint"
    ws.add_prior({"a.md": (5.0, 1.0, 4)})  # gptme's bandit-state, which the joint estimate does not read
    assert ws.policy == "seed" and ws.select(CONTEXT, k=1, seed=1, log=False).policy == "seed"
    seeded = Workspace(tiny_workspace(tmp_path, config='[select]\npolicy = "seed"\n', name="w2"), clock=fixed_clock)
    assert seeded.policy == "seed"  # one setting away
    joint = Workspace(tiny_workspace(tmp_path, config='[select]\npolicy = "joint"\n', name="w3"), clock=fixed_clock)
    joint.add_prior({"a.md": (5.0, 1.0, 4)})
    assert joint.policy == "joint"  # said in config.toml: kept


def test_p_top_k_normal_draws_in_batches_with_memory_linear_in_the_lessons(monkeypatch: pytest.MonkeyPatch) -> None:
    from lesson_credit.core.model import topk

    rng = np.random.default_rng(5)
    mean, sd = rng.normal(0, 0.05, 300), rng.uniform(0.01, 0.05, 300)
    # one shot, by hand: 500 draws of 300 normals from the same stream, the top 4 of each
    z = np.random.default_rng(8).standard_normal((500, 300))
    samples = mean + sd * z
    expected = (samples >= np.sort(samples, axis=1)[:, -4][:, None]).mean(axis=0)
    monkeypatch.setattr(topk, "BATCH_VALUES", 300 * 70)  # batches of 70 draws: the same numbers
    assert p_top_k_normal(mean, sd, 4, np.random.default_rng(8), 500) == pytest.approx(expected, abs=1e-12)
    # past the budget: 450 draws (budget / lessons, at least MIN_DRAWS 400), still k lessons per draw
    monkeypatch.setattr(topk, "VALUE_BUDGET", 300 * 450)
    capped = p_top_k_normal(mean, sd, 4, np.random.default_rng(8), 4000)
    assert capped.sum() == pytest.approx(4.0) and (capped * 450 == np.round(capped * 450)).all()
