"""Snapshot tests: each screen at 120x40 on the fixture workspace (fixed clock, seed, timestamps).

The workspace lives in a tmp folder whose name is always `ws`; no absolute path is rendered.
Update with `pytest tests/tui --snapshot-update` after checking the change is wanted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable

from core.workspace import Workspace
from tui.app import LessonCreditApp

SIZE = (120, 40)

SnapCompare = Callable[..., bool]


async def settle(pilot: Pilot[Any]) -> None:
    for _ in range(4):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def steps(*keys: str, session: str | None = None) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Settle, optionally open a session from the Sessions screen, press keys, settle."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        if session is not None:
            await pilot.press("s")
            await settle(pilot)
            table = pilot.app.screen.query_one("#sessions-table", DataTable)
            rows = [str(table.coordinate_to_cell_key(Coordinate(r, 0)).row_key.value) for r in range(table.row_count)]
            table.move_cursor(row=rows.index(session))
            await pilot.press("enter")
            await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def make_app(workspace: Workspace) -> LessonCreditApp:
    return LessonCreditApp(workspace, seed=0, poll_seconds=0)


def test_snapshot_lessons(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("down", "p", "down"))


def test_snapshot_lessons_missing_lesson(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("slash", *"missing", "enter"))


def test_snapshot_sessions(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("s"))


def test_snapshot_session_detail(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps(session="s1"))


def test_snapshot_session_detail_markup_journal(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps(session="s3"))


def test_snapshot_grading_preview(snap_compare: SnapCompare, workspace: Workspace, ws_root: Path) -> None:
    log = (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes()
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("3", "down", session="s1"))
    assert (ws_root / "state" / "lesson-thompson" / "sessions.jsonl").read_bytes() == log


def test_snapshot_what_if(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("w", "t", "right_square_bracket"))


def test_snapshot_help(snap_compare: SnapCompare, workspace: Workspace) -> None:
    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=steps("question_mark"))
