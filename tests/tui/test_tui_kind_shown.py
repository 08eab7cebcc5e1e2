"""The dashboard shows a session's kind of work by its kind's name, as the Analysis screen groups it: the Sessions
table, the grading queue and the session's own screen. A session recorded as ` Code` or `CODE` read so there,
while the Analysis screen counted it under `code`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import fixed_clock, open_session, open_sessions, record, settle


def cell(table: DataTable[Any], key: str, column: str) -> str:
    labels = [str(c.label).strip() for c in table.ordered_columns]
    return str(table.get_row(key)[labels.index(column)]).strip()


async def test_every_session_of_a_kind_shows_its_name(ws_root: Path) -> None:
    """The fixture's sessions are code (s1, s2, s4: pending) and ops (s3); s5 and s6 spell code `CODE` and
    ` Code`, s6 pending. By hand the kind's name is `code` (3 of its 5 sessions), on every row and screen."""
    ws = Workspace(ws_root, clock=fixed_clock)
    record(ws, ws_root, ("s5", "s5.md", ["tools/git-worktree.md"], 0.9, "CODE", "2026-03-05T14:00:00Z"))
    record(ws, ws_root, ("s6", "s4.md", ["testing/run-tests.md"], None, " Code", "2026-03-06T14:00:00Z"))
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        shown = {key: cell(table, key, "category") for key in ("s1", "s2", "s3", "s4", "s5", "s6")}
        assert shown == {"s1": "code", "s2": "code", "s3": "ops", "s4": "code", "s5": "code", "s6": "code"}
        detail = await open_session(pilot, "s6")
        line = str(detail.query_one("#session-info").render())
        assert "category code  ·" in line, line
        await pilot.press("escape", "escape")
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        queue = app.screen.query_one("#queue-table", DataTable)
        assert {key: cell(queue, key, "category") for key in ("s4", "s6")} == {"s4": "code", "s6": "code"}
