"""The writing agent as a fixed effect in `loo`'s joint estimate, on a database shared by two
agents whose sessions differ in base rate (the arithmetic: tests/core/test_joint_agents.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.log.pgstore import PgStore
from lesson_credit.core.workspace import Workspace
from tests.pg.pg_helpers import line, make_workspace
from tests.support.cli_run import run_json

GIT, QUOTE = "tools/git.md", "tools/quote.md"
LOO = ["loo", "--no-write", "--min-with", "1", "--min-without", "1"]


def session(sid: str, base: float, lessons: list[str]) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": base,
                 "lessons": [{"path": path, "salience": 1.0} for path in lessons]})  # fmt: skip


def test_loo_takes_the_writing_agent_as_a_fixed_effect(
    ws_root: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "easy" writes sessions that reward 0.7 at base and injects git 85% of the time; "hard" 0.3
    # and 10%. git does nothing; quote adds +0.2 (randomised in both)
    rng = np.random.default_rng(2)
    stores = {name: PgStore(pg_url, agent=name) for name in ("easy", "hard")}
    written = []
    for i in range(120):
        agent = "easy" if i % 2 == 0 else "hard"
        has_git = rng.random() < (0.85 if agent == "easy" else 0.1)
        has_quote = rng.random() < 0.5
        reward = round((0.7 if agent == "easy" else 0.3) + 0.2 * has_quote + float(rng.normal(0, 0.03)), 3)
        lessons = [GIT] * has_git + [QUOTE] * has_quote
        stores[agent].append(session(f"s{i}", reward, lessons))
        written.append(agent)
    ws = Workspace(ws_root, store=PgStore(pg_url, agent="reader"))
    assert list(ws.session_agents()) == written

    def effects(result: dict[str, Any]) -> dict[str, float]:
        return {r["lesson"]: r["effect"]["estimate"] for r in result["results"] if r.get("effect")}

    fleet = run_json(capsys, *LOO, "-w", str(ws_root), "--store", pg_url)
    assert "2 agent effects" in fleet["meta"]["effect_method"]
    assert abs(effects(fleet)[GIT]) < 0.03 and effects(fleet)[QUOTE] == pytest.approx(0.2, abs=0.03)
    # the same events in a file (which does not record who wrote them): no agent effect, and git
    # takes the easy agent's base rate
    on_file = make_workspace(ws_root.parent / "file")
    pulled = run_json(capsys, "store", "pull", str(on_file / "state" / "lesson-thompson" / "sessions.jsonl"),
                      "-w", str(ws_root), "--store", pg_url)  # fmt: skip
    # the pull says that the file loses who wrote each session (and with it the agent baselines)
    assert pulled["events"] == 120
    assert [w for w in pulled["warnings"] if "recorded by 2 agents (easy, hard)" in w and "no agent baselines" in w]
    alone = run_json(capsys, *LOO, "-w", str(on_file))
    assert "agent" not in alone["meta"]["effect_method"]
    assert effects(alone)[GIT] > 0.2
    # one agent's view has one agent: no agent effect either
    easy = run_json(capsys, *LOO, "-w", str(ws_root), "--store", pg_url, "--written-by", "easy")
    assert "agent" not in easy["meta"]["effect_method"]
    for store in stores.values():
        store.close()


def test_one_agents_status_leaves_the_workspaces_bandit_state_as_the_whole_log_has_it(
    ws_root: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # git in a session of each agent: 0.9 by "easy", 0.1 by "hard". The workspace's bandit-state.json folds
    # both (seed credit, salience 1: Beta(1 + 0.9 + 0.1, 1 + 0.1 + 0.9) = Beta(2, 2), n 2); `status --written-by
    # easy` shows easy's view, Beta(1.9, 1.1) n 1, but must not rewrite the file gptme reads from that view
    # (before: it did, with a warning that the file "disagrees with the log", and the next status rewrote it back)
    for sid, agent, reward in (("e1", "easy", 0.9), ("h1", "hard", 0.1)):
        store = PgStore(pg_url, agent=agent)
        store.append(session(sid, reward, [GIT]))
        store.close()
    state = ws_root / "state" / "lesson-thompson" / "bandit-state.json"
    # a write folds the file from the whole log (a person's grade of e1 at the score it has: nothing moves)
    run_json(capsys, "grade", "e1", "0.9", "-w", str(ws_root), "--store", pg_url)
    arm = json.loads(state.read_text())["arms"][GIT]
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == pytest.approx((2.0, 2.0, 2))
    before = state.read_bytes()
    easy = run_json(capsys, "status", "-w", str(ws_root), "--store", pg_url, "--written-by", "easy")
    row = next(r for r in easy["lessons"] if r["path"] == GIT)
    assert (row["alpha"], row["beta"], row["n"]) == pytest.approx((1.9, 1.1, 1))
    assert easy["warnings"] == []
    assert state.read_bytes() == before
    again = run_json(capsys, "status", "-w", str(ws_root), "--store", pg_url)
    assert again["warnings"] == []
