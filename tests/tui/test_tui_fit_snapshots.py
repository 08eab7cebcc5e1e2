"""Snapshots of what must not fall off an 80x24 screen, at 80x24 and 200x50, on the demo: a session whose record's
first line is three rows at 80 columns (2026-09-07-017, five lessons) with a draft beside two other sources
(the grade bar's hint in fewer words at 80x24), and the command palette searching "disc" while a write waits
on that session (the title bar's `1 unsaved (^d discards)`; `Discard unsaved writes…` listed first), and
searching "back" on Sessions (no `Back`: nothing is under Sessions to go back to)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input

from tests.support.textual_private import live_notifications, toasts_laid_out
from tests.tui.test_tui_snapshots import SnapCompare, steps
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, failing_grades, settle, wait_until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]
sizes = pytest.mark.parametrize("size", SIZES)
Size = tuple[int, int]
SESSION = "2026-09-07-017"


@sizes
def test_snapshot_record_first_line_and_a_draft(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=steps("7", session=SESSION))


@sizes
def test_snapshot_palette_disc_while_a_write_waits(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    app.retry_seconds = 3600  # (the write keeps waiting while the picture is taken)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only)

    async def run_before(pilot: Pilot[Any]) -> None:
        await steps(session=SESSION)(pilot)
        failing_grades(app)
        burst(pilot, "7", "c")
        await wait_until(pilot, lambda: app.saving.startswith("waiting to save"))
        await pilot.pause()  # (not `settle`: the write's worker waits to retry it)
        burst(pilot, "ctrl+p", "d", "i", "s", "c")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
        commands = pilot.app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count == 2 and commands.highlighted == 0)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_snapshot_palette_back_over_sessions(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    """The palette searching "back" on Sessions, where there is nothing to go back to: no `Back` listed."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("s")(pilot)
        burst(pilot, "ctrl+p", "b", "a", "c", "k")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
        await wait_until(pilot, lambda: pilot.app.screen.query_one(Input).value == "back")
        await settle(pilot)

    assert snap_compare(demo_app(tmp_path), terminal_size=size, run_before=run_before)


@sizes
def test_snapshot_health_after_ctrl_r(size: Size, snap_compare: SnapCompare, tmp_path: Path) -> None:
    """The demo's Health once ctrl+r's check has run: its toast says what it found (the same three warnings)."""
    app = demo_app(tmp_path)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only)

    async def run_before(pilot: Pilot[Any]) -> None:
        await steps("h")(pilot)
        burst(pilot, "ctrl+r")
        await wait_until(pilot, lambda: toasts_laid_out(pilot.app) and bool(live_notifications(pilot.app)))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
