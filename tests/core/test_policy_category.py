"""`select --category`: the joint policy draws each lesson's effect in the session's kind of work
(its overall effect plus a partially pooled deviation), the category is logged, and without one
it is read from config.toml's [categories] keyword map."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import joint_posterior as jp
from lesson_credit.core.analysis.joint import Design, JointFit, block_codes, build_design, fit_joint
from lesson_credit.core.analysis.joint_posterior import category_deviations
from lesson_credit.core.bandit.config import ConfigError, load_config, save_config
from lesson_credit.core.bandit.select import category_of
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run as run_cli_main
from tests.support.engine_helpers import LOG_REL, fixed_clock, make_workspace, session
from tests.support.oracles import time_columns

OTHERS = [f"o{i}.md" for i in range(4)]  # no effect anywhere
LESSONS = {"mig.md": (["schema"], "active"), **{lesson: (["schema"], "active") for lesson in OTHERS}}
CONTEXT = "change the schema"
EFFECT = 0.2  # mig.md: +0.2 in migrations, -0.2 in docs
CONFIG = '[categories]\nmigrations = ["alembic", "migration"]\ndocs = ["readme", "docs/"]\n'


def category_log(n: int = 240, seed: int = 7) -> list[dict[str, object]]:
    """n sessions alternating migrations / docs; each lesson injected with probability 1/2 (salience 1);
    reward = the category's baseline + mig.md's effect there + noise sd 0.05, clipped to [0, 1]."""
    rng = np.random.default_rng(seed)
    events: list[dict[str, object]] = []
    for i in range(n):
        category = ("migrations", "docs")[i % 2]
        injected = [lesson for lesson in ["mig.md", *OTHERS] if rng.random() < 0.5]
        effect = (EFFECT if category == "migrations" else -EFFECT) if "mig.md" in injected else 0.0
        reward = float(np.clip(0.5 + effect + rng.normal(0.0, 0.05), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0), category=category))
    return events


def workspace(tmp_path: Path, config: str | None = CONFIG) -> Workspace:
    return Workspace(make_workspace(tmp_path, LESSONS, category_log(), config=config), clock=fixed_clock)


def test_joint_picks_a_lesson_for_the_category_it_helps_and_not_where_it_harms(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    picks = {}
    for category in ("migrations", "docs", None):
        selection = ws.select(CONTEXT, k=1, seed=3, log=False, policy="joint", category=category)
        picks[category] = selection.propensity["mig.md"]
    # 5 candidates, k = 1: random would give each 0.2. Its effect is +0.2 in migrations (about 60
    # sessions with it there, noise 0.05: an sd near 0.01) and -0.2 in docs, far beyond the others' 0
    assert picks["migrations"] > 0.95
    assert picks["docs"] < 0.01
    # without a category it reads the overall effect, which the two cancel to about 0: no such certainty
    assert 0.02 < picks[None] < 0.8
    # the credit policies do not read the category (recorded all the same)
    credit = [ws.select(CONTEXT, k=1, seed=3, log=False, policy="seed", category=c) for c in ("migrations", "docs")]
    assert credit[0].propensity == credit[1].propensity
    assert [s.category for s in credit] == ["migrations", "docs"]


def test_deviations_solve_their_equations_by_hand(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    design = build_design(ws.data(), ws.session_categories(), ws.settings.floor)
    fit = fit_joint(design, tau_min=0.15)
    dev, var, _ = category_deviations(fit, design)
    assert design.n_blocks == 6
    assert_fixed_point(design, fit, dev, var, 40)
    arm = ws.data().arm_ids.index("mig.md")
    names = sorted({"migrations", "docs"})
    # its effect is 0 overall, so the deviations carry it: near +0.2 and -0.2 (noise sd 0.05, ~60 sessions each)
    assert dev[names.index("migrations"), arm] == pytest.approx(EFFECT, abs=0.03)
    assert dev[names.index("docs"), arm] == pytest.approx(-EFFECT, abs=0.03)


def assert_fixed_point(design: Design, fit: JointFit, dev: Any, var: Any, per_block: int) -> None:
    """Every weight is 1 (salience 1), so per injection = per unit weight. Per session: y(U) = reward -
    the injected lessons' coefficients and deviations U in its category - its baselines, those the least
    squares of the rest on the category and time-block indicators (`per_block` sessions a block in log
    order, the last the reference). Each cell's column x (1 in its category's sessions with its lesson)
    less its own least squares on the indicators is x~, A = x~'x~, and its partial estimate is x'y(U) /
    A + its deviation, of noise variance s2 = noise^2 / A. At the fixed point each deviation is the
    partial shrunk by tau^2 / (tau^2 + s2), its variance that times s2, with tau^2 its lesson's."""
    coef = np.nan_to_num(fit.coef)
    injected = [design.entry_arm[design.entry_row == i] for i in range(design.n)]
    block = np.arange(design.n) // per_block
    columns = [design.category == c for c in range(design.n_categories)]
    z = np.column_stack(columns).astype(float)
    assert np.array_equal(block, block_codes(design.n, design.n_blocks))
    z = np.hstack([z, time_columns(design.n, design.n_blocks, design.category)])  # (a category's own blocks)

    def y(u: Any) -> Any:
        rest = np.array([design.reward[i] - (coef[a] + u[design.category[i], a]).sum() for i, a in enumerate(injected)])
        return rest - z @ np.linalg.lstsq(z, rest, rcond=None)[0]

    at_fit, at_none = y(dev), y(np.zeros_like(dev))
    cells = []  # (lesson, partial, partial at no deviation, s2, tau^2)
    for c in range(design.n_categories):
        for arm in range(design.n_arms):
            x = np.array([float(design.category[i] == c and arm in injected[i]) for i in range(design.n)])
            if not x.any():
                continue
            x_left = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
            a = float(x_left @ x_left)
            s2 = fit.noise_sd**2 / a
            partial = float(x @ at_fit) / a + dev[c, arm]
            shrink = var[c, arm] / s2
            assert dev[c, arm] == pytest.approx(shrink * partial, abs=1e-6), (c, arm)
            cells.append((arm, partial, float(x @ at_none) / a, s2, shrink * s2 / (1.0 - shrink)))
    flagged = differing_by_hand(cells)
    # tau^2 by the weighted moments, sum w (partial^2 - s2) / sum w with w = 1 / (tau^2 + s2)^2: one
    # over the cells of the lessons not flagged, and a flagged lesson's own (at least that one)
    shared = [cell for cell in cells if cell[0] not in flagged]
    tau2_shared = shared[0][4] if shared else 0.0
    assert all(cell[4] == pytest.approx(tau2_shared, rel=1e-6, abs=1e-12) for cell in shared)
    assert tau2_shared == pytest.approx(weighted_moments(shared, tau2_shared), rel=1e-4, abs=1e-12)
    for lesson in flagged:
        mine = [cell for cell in cells if cell[0] == lesson]
        own = weighted_moments(mine, mine[0][4])
        assert mine[0][4] == pytest.approx(max(own, tau2_shared), rel=1e-4, abs=1e-12), lesson


def weighted_moments(cells: list[Any], tau2: float) -> float:
    weights = [1 / (tau2 + cell[3]) ** 2 for cell in cells]
    moments = sum(w * (cell[1] ** 2 - cell[3]) for w, cell in zip(weights, cells, strict=True)) / sum(weights)
    return max(0.0, float(moments))


def differing_by_hand(cells: list[Any]) -> set[int]:
    """The lessons whose cells' partial estimates at no deviation differ beyond their noise: Cochran's Q
    (chi-square, cells - 1 degrees of freedom) below p 0.05 and, Benjamini-Hochberg adjusted, 0.2."""
    from scipy.stats import chi2

    p = {}
    for lesson in sorted({cell[0] for cell in cells}):
        mine = [(cell[2], 1 / cell[3]) for cell in cells if cell[0] == lesson]
        if len(mine) < 2:
            continue
        mean = sum(e * w for e, w in mine) / sum(w for _, w in mine)
        p[lesson] = float(chi2.sf(sum(w * (e - mean) ** 2 for e, w in mine), len(mine) - 1))
    order = sorted(p, key=p.__getitem__)
    adjusted = {
        lesson: min(p[later] * len(p) / (k + 1) for k, later in enumerate(order) if k >= order.index(lesson))
        for lesson in order
    }
    return {lesson for lesson in p if p[lesson] < 0.05 and min(1.0, adjusted[lesson]) < 0.2}


def chosen_together_log(tmp_path: Path) -> Design:
    """What a policy choosing 5 of 8 lessons does once it has learned: in 85% of 800 sessions the same
    five (migrations: the first five, docs: the last five), else five at random; each lesson's effect
    differs by category (sd 0.1), noise sd 0.1."""
    lessons = [f"l{i}.md" for i in range(8)]
    rng = np.random.default_rng(2)
    effect = {"migrations": rng.normal(0.0, 0.1, 8), "docs": rng.normal(0.0, 0.1, 8)}
    events = []
    for i in range(800):
        category = ("migrations", "docs")[i % 2]
        usual = lessons[:5] if category == "migrations" else lessons[-5:]
        chosen = usual if rng.random() < 0.85 else list(rng.choice(lessons, 5, replace=False))
        reward = 0.5 + sum(effect[category][lessons.index(lesson)] for lesson in chosen) + rng.normal(0.0, 0.1)
        events.append(
            session(f"s{i}", round(float(np.clip(reward, 0, 1)), 4), dict.fromkeys(chosen, 1.0), category=category)
        )
    library = {lesson: (["schema"], "active") for lesson in lessons}
    ws = Workspace(make_workspace(tmp_path, library, events, config=CONFIG), clock=fixed_clock)
    return build_design(ws.data(), ws.session_categories(), ws.settings.floor)


def test_deviations_reach_their_fixed_point_when_lessons_are_chosen_together(tmp_path: Path) -> None:
    # The backfit moved each deviation half way to its shrunk partial mean per round: with five lessons
    # nearly always together that step overshoots (and, with more together, grows), and after its 50
    # rounds the deviations were far from the equations' solution (at most 0.078 where it is 0.139).
    design = chosen_together_log(tmp_path)
    fit = fit_joint(design, tau_min=0.15)
    dev, var, tau_c = category_deviations(fit, design)
    assert design.n_blocks == 10  # blocks of 80 sessions
    assert tau_c > 0.01
    assert_fixed_point(design, fit, dev, var, 80)


def test_the_deviations_solve_reads_the_injections_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A big log pays a pass over its injections per step of the solve: with room for 2 steps in all,
    # the solve stops there (3 passes of residuals per cell: the first at no deviation, then one a
    # step), and its deviations are finite and on the way to the fixed point: nearer it than 0 is.
    design = chosen_together_log(tmp_path)
    fit = fit_joint(design, tau_min=0.15)
    solved, _, _ = category_deviations(fit, design)
    passes = 0
    counted = jp._cell_products

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal passes
        passes += 1
        return counted(*args, **kwargs)

    monkeypatch.setattr(jp, "_cell_products", counting)
    monkeypatch.setattr(jp, "MIN_PASSES", 2)
    monkeypatch.setattr(jp, "MAX_PASSES", 2)
    early, _, tau_c = category_deviations(fit, design)
    assert passes == 1 + 2
    assert np.isfinite(early).all() and tau_c > 0
    assert 0 < np.linalg.norm(early - solved) < np.linalg.norm(solved)


def moving_log(n: int = 400, seed: int = 11) -> list[dict[str, object]]:
    """A world that moves and no lesson with any effect: the reward rises from 0.4 to 0.7 over the log
    (noise sd 0.05); in migrations mig.md is injected in 10% of the first sessions and 70% of the last,
    in docs in 40% throughout; the others in half the sessions."""
    rng = np.random.default_rng(seed)
    events: list[dict[str, object]] = []
    for i in range(n):
        t, category = i / (n - 1), ("migrations", "docs")[i % 2]
        share = 0.1 + 0.6 * t if category == "migrations" else 0.4
        injected = [lesson for lesson in OTHERS if rng.random() < 0.5]
        if rng.random() < share:
            injected.append("mig.md")
        reward = float(np.clip(0.4 + 0.3 * t + rng.normal(0.0, 0.05), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0), category=category))
    return events


def test_a_reward_trend_is_no_lesson_s_effect_in_a_category(tmp_path: Path) -> None:
    ws = Workspace(make_workspace(tmp_path, LESSONS, moving_log(), config=CONFIG), clock=fixed_clock)
    post = ws.joint_posterior()
    arm = post.arm_ids.index("mig.md")
    # In migrations, the sessions with mig.md come later: mean time 0.625 of the log against 0.417
    # without it, so read without the time blocks they are 0.3 x 0.208 = +0.06 better. Nothing
    # has an effect; every (lesson, category) cell's effect must stay near 0 (cells of ~100
    # sessions, noise 0.05: an sd near 0.005), as the overall effect does.
    assert abs(post.mean[arm]) < 0.02
    for category in ("migrations", "docs"):
        mean, _ = post.in_category(category)
        assert np.abs(mean).max() < 0.02, (category, mean)


def test_an_agent_with_easier_work_is_no_lesson_s_effect_in_a_category(tmp_path: Path) -> None:
    # Two agents share a store; agent b's sessions are 0.2 better whatever the lessons, and in
    # migrations b injects mig.md in 80% of its sessions against 20% for agent a (docs: 40% each).
    # No lesson has an effect: read without the agents' baselines, mig.md's sessions in migrations
    # are about 0.2 x (0.8 - 0.2) / 1 = +0.12 better.
    rng = np.random.default_rng(5)
    events, agents = [], []
    for i in range(400):
        category, agent = ("migrations", "docs")[i % 2], ("a", "b")[(i // 2) % 2]
        share = (0.2 if agent == "a" else 0.8) if category == "migrations" else 0.4
        injected = [lesson for lesson in OTHERS if rng.random() < 0.5]
        if rng.random() < share:
            injected.append("mig.md")
        reward = float(np.clip(0.5 + (0.2 if agent == "b" else 0.0) + rng.normal(0.0, 0.05), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0), category=category))
        agents.append(agent)
    ws = Workspace(make_workspace(tmp_path, LESSONS, events), clock=fixed_clock)
    design = build_design(ws.data(), ws.session_categories(), ws.settings.floor, agents)
    assert design.n_agents == 2
    fit = fit_joint(design, tau_min=0.15)
    dev, _, _ = category_deviations(fit, design)
    assert np.abs(np.nan_to_num(fit.estimate)).max() < 0.02
    assert np.abs(dev).max() < 0.02, dev


def test_a_policy_that_learns_where_a_lesson_helps_keeps_its_deviations(tmp_path: Path) -> None:
    # What a policy that learns does: mig.md (+0.2 in migrations, -0.2 in docs) is injected in
    # migrations in 20% of the first sessions and 90% of the last, in docs in 80% and then 10%. The
    # world has no trend, but the mean reward rises over the log (by about 0.2 x 0.7 in each category)
    # because of where the lesson goes. A fit without deviations reads that rise as its time blocks'
    # (its one effect for mig.md is about 0); holding the blocks there took a fifth of each deviation
    # away (+0.165 and -0.147 here). Refitted with the deviations, the blocks leave them near +-0.2
    # (cells of ~100 sessions, noise 0.05: an sd near 0.01).
    rng = np.random.default_rng(3)
    events = []
    for i in range(400):
        t, category = i / 399, ("migrations", "docs")[i % 2]
        share = 0.2 + 0.7 * t if category == "migrations" else 0.8 - 0.7 * t
        injected = [lesson for lesson in OTHERS if rng.random() < 0.5]
        effect = 0.0
        if rng.random() < share:
            injected.append("mig.md")
            effect = EFFECT if category == "migrations" else -EFFECT
        reward = float(np.clip(0.5 + effect + rng.normal(0.0, 0.05), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0), category=category))
    ws = Workspace(make_workspace(tmp_path, LESSONS, events, config=CONFIG), clock=fixed_clock)
    post = ws.joint_posterior()
    arm = post.arm_ids.index("mig.md")
    assert post.in_category("migrations")[0][arm] == pytest.approx(EFFECT, abs=0.025)
    assert post.in_category("docs")[0][arm] == pytest.approx(-EFFECT, abs=0.025)


def test_the_category_is_logged_and_read_from_the_context(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    given = ws.select(CONTEXT, k=1, seed=5, session_id="x1", policy="joint", category="migrations")
    found = ws.select(CONTEXT + " with an alembic migration", k=1, seed=5, session_id="x2", policy="joint")
    assert found.category == "migrations" and found.propensity == given.propensity
    none = ws.select(CONTEXT, k=1, seed=5, session_id="x3", policy="joint")
    assert none.category is None
    events = [json.loads(line) for line in (ws.root / LOG_REL).read_text().splitlines()[-3:]]
    assert [e.get("category") for e in events] == ["migrations", "migrations", None]
    assert "category" not in events[2]  # nothing written when there is none


def test_category_of_counts_distinct_keywords_and_breaks_ties_in_table_order() -> None:
    table = {"docs": ("readme", "docs/"), "migrations": ("alembic", "migration"), "ci": ("pipeline",)}
    assert category_of("README README in docs/ and a migration", table) == "docs"  # 2 keywords against 1
    assert category_of("a Migration in the pipeline", table) == "migrations"  # tie: first in the table
    assert category_of("nothing here", table) is None
    assert category_of("anything", {}) is None


def test_categories_round_trip_and_bad_tables_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    config = load_config(path)
    assert config.categories == {"migrations": ("alembic", "migration"), "docs": ("readme", "docs/")}
    save_config(path, config)
    assert load_config(path).categories == config.categories
    for text in ('categories = "x"\n', "[categories]\ndocs = []\n", '[categories]\ndocs = "readme"\n'):
        path.write_text(text)
        with pytest.raises(ConfigError, match=r"\[categories\]"):
            load_config(path)


def test_cli_select_category(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path, LESSONS, category_log(), config=CONFIG)
    context = root / "task.md"
    context.write_text(CONTEXT)
    argv = ["select", "-w", str(root), "--context", str(context), "--k", "1", "--seed", "2"]
    code, out, err = run_cli_main(capsys, *argv, "--policy", "joint", "--category", "docs", "--json", clock=fixed_clock)
    assert code == 0 and json.loads(out)["category"] == "docs"
    before = (root / LOG_REL).read_bytes()
    code, out, err = run_cli_main(capsys, *argv, "--category", "bad\nname", clock=fixed_clock)
    assert code == 1 and out == "" and err.count("\n") == 1 and "category must be one line" in err
    assert (root / LOG_REL).read_bytes() == before
    code, out, err = run_cli_main(capsys, *argv, "--category", "docs", "--dry-run", clock=fixed_clock)
    assert code == 0 and "category docs" in err


def test_a_record_without_a_category_takes_the_one_its_session_was_selected_for(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    journal = ws.root / "j.md"
    journal.write_text("the schema changed\n")
    ws.select(CONTEXT + " with an alembic migration", k=1, seed=5, session_id="x1", policy="joint")  # found: migrations
    ws.select(CONTEXT, k=1, seed=5, session_id="x2", policy="joint", category="docs")
    ws.select(CONTEXT, k=1, seed=5, session_id="x3", policy="joint", category="docs")
    ws.select(CONTEXT, k=1, seed=5, session_id="x4", policy="joint")  # none
    ws.record("x1", journal, ["mig.md"], reward=0.5)
    ws.record("x2", journal, ["mig.md"], reward=0.5)
    ws.record("x3", journal, ["mig.md"], reward=0.5, category="migrations")  # given: it wins
    ws.record("x4", journal, ["mig.md"], reward=0.5)
    records = [json.loads(line) for line in (ws.root / LOG_REL).read_text().splitlines()[-4:]]
    assert [(r["session_id"], r["category"]) for r in records] == [
        ("x1", "migrations"),
        ("x2", "docs"),
        ("x3", "migrations"),
        ("x4", None),
    ]
    # read back by a new workspace, as the effect analysis reads them
    assert [s.category for s in Workspace(ws.root, clock=fixed_clock).sessions()[-4:]] == [
        "migrations",
        "docs",
        "migrations",
        None,
    ]


def test_an_empty_category_is_none_in_the_python_api_as_on_the_command_line(tmp_path: Path) -> None:
    """`Workspace.select(category="")` (a caller passing a hook's unset variable) reads the kind from [categories]
    as `select --category ""` does, and logs that kind, not `""` (before: "" was a kind of its own, the map skipped);
    `record(category="")` takes the selection's kind likewise."""
    ws = workspace(tmp_path)
    selection = ws.select("bump the alembic revision", k=1, seed=3, session_id="e1", policy="seed", category="")
    assert selection.category == "migrations"  # [categories]: migrations = ["alembic", ...]
    (root := tmp_path / "ws" / "j.md").write_text("schema", encoding="utf-8")
    ws.record("e1", root, list(selection.selected), reward=0.5, category="")
    logged = [json.loads(line) for line in (tmp_path / "ws" / LOG_REL).read_text(encoding="utf-8").splitlines()]
    assert [e["category"] for e in logged if e.get("session_id") == "e1"] == ["migrations", "migrations"]
