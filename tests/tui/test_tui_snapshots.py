"""Snapshot tests: each screen at 120x40 on the fixture workspace (fixed clock, seed, timestamps).

The workspace lives in a tmp folder whose name is always `ws`; no absolute path is rendered.
Update with `pytest tests/tui --snapshot-update` after checking the change is wanted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select
from tui_fixture import FIXED_NOW, settle

from core.workspace import Workspace
from tui.app import LessonCreditApp
from tui.screens.simulation import SimulationScreen

SIZE = (120, 40)

SnapCompare = Callable[..., bool]


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


def test_snapshot_analysis(snap_compare: SnapCompare, analysis_workspace: Workspace) -> None:
    # the fifth row has too little data and two confound flags: dimmed, its reasons in the panel
    keys = ("a", "down", "down", "down", "down")
    assert snap_compare(make_app(analysis_workspace), terminal_size=SIZE, run_before=steps(*keys))


def test_snapshot_lesson_rewards(snap_compare: SnapCompare, analysis_workspace: Workspace) -> None:
    assert snap_compare(make_app(analysis_workspace), terminal_size=SIZE, run_before=steps("a", "enter"))


def test_snapshot_simulation(snap_compare: SnapCompare, workspace: Workspace) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("m")(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SimulationScreen)
        screen.query_one("#scenario", Select).value = "few-sessions"
        screen.query_one("#seeds", Input).value = "2"
        await pilot.press("r")
        for _ in range(600):
            if screen.report is not None:
                break
            await asyncio.sleep(0.05)
            await pilot.pause()
        await settle(pilot)

    assert snap_compare(make_app(workspace), terminal_size=SIZE, run_before=run_before)


def test_snapshot_health(snap_compare: SnapCompare, ws_root: Path) -> None:
    later = FIXED_NOW + dt.timedelta(days=10)  # s4 pending for 11 days: a problem; old-lesson: a ghost arm
    app = make_app(Workspace(ws_root, clock=lambda: later))
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("h"))
