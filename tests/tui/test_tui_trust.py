"""Pilot tests of trust on the dashboard: gptme's outcome words in the Sessions table (item 9)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable
from tui_fixture import fixed_clock, open_sessions, settle, table_keys

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp

SIZE = (120, 40)
LESSON = "---\nmatch:\n  keywords: [git]\n---\n# Git\n"


def imported_workspace(root: Path) -> Path:
    """gptme-sessions records (no base_reward, a string outcome) and one graded session of ours."""
    (root / "lessons").mkdir(parents=True)
    (root / "lessons" / "git.md").write_text(LESSON)
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True)
    records = [
        {
            "session_id": sid,
            "outcome": word,
            "timestamp": f"2026-10-0{i + 1}T10:00:00Z",
            "lessons": [{"path": "git.md", "salience": 1.0}],
        }
        for i, (sid, word) in enumerate(
            [("g1", "noop"), ("g2", "failed"), ("g3", "violated_policy"), ("g4", "productive")]
        )
    ]
    records.append({"type": "session", "session_id": "ours", "timestamp": "2026-10-09T10:00:00Z", "base_reward": 0.25,
                    "lessons": [{"path": "git.md", "salience": 1.0}]})  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


async def test_the_sessions_table_shows_gptmes_words(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(imported_workspace(tmp_path / "ws"), clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        grade_column = [str(c.key.value) for c in table.columns.values()].index("grade")
        cells = {key: str(table.get_row_at(row)[grade_column]) for row, key in enumerate(table_keys(table))}
        assert cells == {"g1": "noop", "g2": "failed", "g3": "violated_policy", "g4": "productive", "ours": "0.25"}
