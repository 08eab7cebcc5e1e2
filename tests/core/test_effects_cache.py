"""The joint effects kept in `.cache/effects.msgpack` (the dashboard's `ranking` column) are given back only
for the rewards they were fitted on: a change of config.toml's reward priority or of the gptme-sessions
records, which moves the rewards in force without a byte of the log changing, is fitted again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import CONFIG_REL, grade, make_workspace, session

LESSONS = {"a.md": (["git"], "active"), "b.md": (["pytest"], "active"), "c.md": (["shell"], "active")}


def _events() -> list[dict[str, object]]:
    """24 sessions of two lessons each; a person's grade follows a.md, a judge's grade follows c.md."""
    events: list[dict[str, object]] = []
    for i in range(24):
        pair = [("a.md", "b.md"), ("b.md", "c.md"), ("a.md", "c.md")][i % 3]
        events.append(session(f"s{i}", None, dict.fromkeys(pair, 1.0)))
        events.append(grade(f"s{i}", 0.9 if "a.md" in pair else 0.1))
        events.append(grade(f"s{i}", 0.9 if "c.md" in pair else 0.1, grader="judge"))
    return events


def judge_first(root: Path) -> None:
    (root / CONFIG_REL).write_text('[rewards]\npriority = ["judge", "human", "heuristic", "outcome"]\n')


def records_score_it(root: Path) -> None:
    """A record's judge score for every session, and the judge before people: only the records changed."""
    records = root / "state" / "sessions" / "session-records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"session_id": f"s{i}", "llm_judge_score": 0.9 if i % 2 else 0.1}) for i in range(24)]
    records.write_text("\n".join(lines) + "\n")


CHANGES: list[Callable[[Path], None]] = [judge_first, records_score_it]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_effects_saved_for_other_rewards_are_not_given_back(tmp_path: Path, change: Callable[[Path], None]) -> None:
    config = None if change is judge_first else '[rewards]\npriority = ["judge", "human", "heuristic", "outcome"]\n'
    root = make_workspace(tmp_path, LESSONS, _events(), config=config)
    if change is records_score_it:  # the log's judge grades taken out: the records' scores then count
        log = root / "state" / "lesson-thompson" / "sessions.jsonl"
        log.write_text("".join(line + "\n" for line in log.read_text().splitlines() if '"judge"' not in line))
    before = Workspace(root).effects()
    assert Workspace(root).saved_effects() == before  # kept, and given back while nothing changed
    change(root)
    fresh = Workspace(root, use_cache=False).effects()  # the second way: fitted, no cache read
    assert fresh != before  # the change moved the effects (else this test could not fail)
    assert Workspace(root).saved_effects() in (None, fresh)
    assert Workspace(root).effects() == fresh
    assert Workspace(root).saved_effects() == fresh
