"""The writing agent as a fixed effect in the joint estimate: a dense least-squares
reference with agent indicators, a fleet whose agents differ in base rate, and the cases where
an agent effect has nothing to add (one agent; agents confounded with categories)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis.joint import build_design, fit_joint
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.oracles import ridge_reference, time_columns

A, B, C = "tools/a.md", "tools/b.md", "workflow/c.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active")}


def workspace_of(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[FoldData, list[str | None], list[Any]]:
    """The fold data of the events and each session's agent (the events' "agent", which the test
    keeps beside the log: the store records it, not the event)."""
    root = make_workspace(
        tmp_path, lessons=LESSONS, events=[{k: v for k, v in e.items() if k != "agent"} for e in events]
    )
    ws = Workspace(root, clock=fixed_clock)
    assert not ws.data().problems  # every event was read
    table = ws.session_table()
    agent_of = {e["session_id"]: e["agent"] for e in events}
    return ws.data(), list(table.categories), [agent_of[sid] for sid in table.session_ids]


def random_fleet(rng: np.random.Generator, n: int = 300, lessons: int = 10) -> list[dict[str, Any]]:
    paths = [f"cat{i % 3}/l{i}.md" for i in range(lessons)]
    events = []
    for s in range(n):
        chosen = {p: float(rng.choice([0.0, 0.5, 1.0])) for p in paths if rng.random() < 0.3}
        agent = ["ada", "bob", "cy"][int(rng.integers(0, 3))]
        base = {"ada": 0.7, "bob": 0.4, "cy": 0.55}[agent] + rng.normal(0, 0.15)
        reward = float(np.clip(base, 0, 1)) if s % 11 else None
        events.append({**session(f"s{s}", reward, chosen, category=["x", "y", None][s % 3]), "agent": agent})
    return events


def dense(events: list[dict[str, Any]], arm_ids: tuple[str, ...], floor: float) -> Any:
    """Z (category indicators, then one per agent but the first), X and y, written out from the events."""
    graded = [e for e in events if e["base_reward"] is not None]
    cats = sorted({e.get("category") or "" for e in graded})
    agents = sorted({e["agent"] for e in graded})
    z = np.array(
        [
            [float((e.get("category") or "") == c) for c in cats] + [float(e["agent"] == a) for a in agents[1:]]
            for e in graded
        ]
    )
    x = np.zeros((len(graded), len(arm_ids)))
    for i, e in enumerate(graded):
        for entry in e["lessons"]:
            x[i, arm_ids.index(entry["path"])] = floor + (1 - floor) * entry["salience"]
    return z, x, np.array([e["base_reward"] for e in graded])


def cell_of(events: list[dict[str, Any]]) -> Any:
    """Each graded session's (category, agent) pair as one code (sorted names): the sessions whose time blocks
    are their own when the pair has 12 graded sessions a block or more (docs/estimates.md "Time")."""
    graded = [e for e in events if e["base_reward"] is not None]
    cats = sorted({e.get("category") or "" for e in graded})
    agents = sorted({e["agent"] for e in graded})
    return np.array([cats.index(e.get("category") or "") * len(agents) + agents.index(e["agent"]) for e in graded])


def test_agent_effects_match_dense_least_squares(tmp_path: Path) -> None:
    events = random_fleet(np.random.default_rng(11))
    data, categories, agents = workspace_of(tmp_path, events)
    floor, lam = 0.3, 1.5
    design = build_design(data, categories, floor, agents)
    assert design.n_agents == 3
    fit = fit_joint(design, penalty=lam)
    z, x, y = dense(events, data.arm_ids, floor)
    # 272 graded sessions (1 in 11 is not): 2 log2(272 / 25) = 6.9 -> 6 time blocks
    assert len(y) == 272 and fit.n_blocks == 6
    z = np.hstack([z, time_columns(272, 6, cell_of(events))])
    coef, cov, sigma2 = ridge_reference(z, x, y, lam)  # categories, agents and time blocks unpenalised
    assert fit.coef == pytest.approx(coef, abs=1e-10)
    assert np.linalg.matrix_rank(z) == z.shape[1]  # full column rank: 3 categories + 2 agents + 5 blocks
    assert fit.coef_sd == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-8)
    assert fit.noise_sd == pytest.approx(math.sqrt(sigma2))
    assert fit.n_agents == 3 and "3 agent effects" in fit.method()


def fleet_with_easy_agent(seed: int = 3, n: int = 800) -> list[dict[str, Any]]:
    """Two agents in one category: "easy" sessions reward 0.7 at base, "hard" ones 0.3. A truly
    adds +0.2 (randomised 50/50 in both); C does nothing but the easy agent injects it 85% of the
    time, the hard one 10%; B does nothing, randomised."""
    rng = np.random.default_rng(seed)
    events = []
    for s in range(n):
        easy = s % 2 == 0
        has_a, has_b = rng.random() < 0.5, rng.random() < 0.4
        has_c = rng.random() < (0.85 if easy else 0.1)
        lessons = {A: 1.0} if has_a else {}
        if has_b:
            lessons[B] = 1.0
        if has_c:
            lessons[C] = 1.0
        reward = (0.7 if easy else 0.3) + 0.2 * has_a + rng.normal(0, 0.03)  # within [0, 1] (5 sd)
        assert 0 <= reward <= 1
        events.append({**session(f"s{s}", float(reward), lessons), "agent": "easy" if easy else "hard"})
    return events


def test_agent_effect_recovers_the_truth_better_than_without(tmp_path: Path) -> None:
    events = fleet_with_easy_agent()
    data, categories, agents = workspace_of(tmp_path, events)
    arm = {a: i for i, a in enumerate(data.arm_ids)}
    truth = {A: 0.2, B: 0.0, C: 0.0}  # salience 1: weight 1, so the coefficient is the effect
    with_agents = fit_joint(build_design(data, categories, 0.3, agents))
    without = fit_joint(build_design(data, categories, 0.3))
    assert with_agents.n_agents == 2 and without.n_agents == 0

    def error(fit: Any) -> float:
        return math.sqrt(sum((fit.estimate[arm[j]] - t) ** 2 for j, t in truth.items()))

    # without the agent: C takes most of the easy agent's +0.4 base rate (its injection rates differ
    # by 0.75, so a regression on C alone would give about +0.4; A and B are randomised)
    assert without.estimate[arm[C]] > 0.2
    assert abs(with_agents.estimate[arm[C]]) < 0.03
    assert with_agents.estimate[arm[A]] == pytest.approx(0.2, abs=0.03)
    assert error(with_agents) < 0.05 < error(without)
    # the same numbers written out: the least-squares fit with an intercept and an agent indicator,
    # at the fit's own penalty
    z, x, y = dense(events, data.arm_ids, 0.3)
    z = np.hstack([z, time_columns(800, 10, cell_of(events))])  # 10 blocks; 400 an agent: its own
    assert with_agents.n_blocks == 10
    lam, k = with_agents.penalty, z.shape[1]
    full = np.vstack([np.hstack([z, x]), np.hstack([np.zeros((3, k)), math.sqrt(lam) * np.eye(3)])])
    solution, *_ = np.linalg.lstsq(full, np.concatenate([y, np.zeros(3)]), rcond=None)
    assert with_agents.coef == pytest.approx(solution[k:], abs=1e-9)


def test_one_agent_or_agents_confounded_with_categories_add_nothing(tmp_path: Path) -> None:
    events = random_fleet(np.random.default_rng(4), n=200)
    one = [{**e, "agent": "solo"} for e in events]
    data, categories, agents = workspace_of(tmp_path / "one", one)
    design = build_design(data, categories, 0.3, agents)
    assert design.agent is None and design.n_agents == 0  # one agent: no agent effect at all
    plain = fit_joint(build_design(data, categories, 0.3), penalty=2.0)
    assert fit_joint(design, penalty=2.0).coef.tolist() == plain.coef.tolist()
    # each agent works in its own category: the agent indicators are sums of category ones, so the
    # fit (projection through a pseudo-inverse, degrees of freedom by rank) is the category-only fit
    by_category = [{**e, "agent": f"agent-{e.get('category')}"} for e in events]
    data, categories, agents = workspace_of(tmp_path / "confounded", by_category)
    design = build_design(data, categories, 0.3, agents)
    assert design.n_agents == 3
    fit, reference = fit_joint(design, penalty=2.0), fit_joint(build_design(data, categories, 0.3), penalty=2.0)
    assert fit.coef == pytest.approx(reference.coef, abs=1e-10)
    assert fit.noise_sd == pytest.approx(reference.noise_sd, rel=1e-10)
    assert fit.coef_sd == pytest.approx(reference.coef_sd, rel=1e-8)
