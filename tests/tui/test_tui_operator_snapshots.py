"""Snapshots of the operator's screens on the demo workspace at 80x24 and 200x50 (the sizes an operator's pass
tries): Lessons' cut names, Sessions' pending rows, a session's credits and "why this credit", Agreement, the
informative grading queue with its legend, and Health's list of a finding's lessons. The demo is copied to a tmp
folder always named `demo`, at the fixed clock and seed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.test_tui_snapshots import SnapCompare, steps
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import settle

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]
sizes = pytest.mark.parametrize("size", SIZES)
Size = tuple[int, int]


@sizes
def test_snapshot_demo_lessons(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps())


@sizes
def test_snapshot_demo_sessions(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps("s"))


@sizes
@pytest.mark.parametrize("session", ["2026-10-07-106", "2026-10-26-167"])
def test_snapshot_demo_session_detail(size: Size, session: str, snap_compare: SnapCompare, tmp_path: Path) -> None:
    """2026-10-07-106: keywords hit and missed both long (they share the line at 200x50); 2026-10-26-167,
    pending: its story a line taller than the box at 80x24 (the mark saying so)."""
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps(session=session))


@sizes
def test_snapshot_demo_agreement(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps("A"))


@sizes
def test_snapshot_demo_informative_queue(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps("I", "o"))


@sizes
def test_snapshot_demo_health_lesson_list(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    """enter on the broad-keywords finding: its two lessons to pick from. The list behind the dialog is put
    at its top first: where focusing the first card leaves it (centred or not, animated) depends on when the
    card was laid out, which a loaded machine changes, and the picture is of the dialog."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("h")(pilot)
        await pilot.wait_for_scheduled_animations()
        pilot.app.screen.query_one("#findings").scroll_home(animate=False, immediate=True)
        await steps("enter")(pilot)
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)
