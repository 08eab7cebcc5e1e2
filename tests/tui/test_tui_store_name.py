"""The dashboard names the store its log problems are in (on a database store: tests/pg)."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.support.textual_private import notification_texts
from tests.tui.tui_fixture import LOG_REL, settle

SIZE = (120, 40)


async def test_log_problems_name_the_file(workspace: Workspace, ws_root: Path) -> None:
    with open(ws_root / LOG_REL, "a", encoding="utf-8") as log:
        log.write("this is not json\n")
    app = LessonCreditApp(workspace, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [title for title, _ in notification_texts(app)]
        assert "1 unreadable line in sessions.jsonl" in titles
        await pilot.press("s")
        await settle(pilot)
        problems = str(app.screen.query_one("#log-problems").render())
        assert problems.startswith("⚠ 1 problem in sessions.jsonl: line ")
