"""A session's id longer than 19 characters (Claude Code's are UUIDs, 36) was cut in the title bar at 80 columns
while a write waited to be saved: "Session " and the id, " · " and "waiting to save 1 write (ctrl+d discards)"
(41) leave 71 - 8 - 3 - 41 = 19 cells for the id. The writes waiting are said in fewer words where the title
would be cut otherwise, `1 unsaved (^d discards)`, and the id is said whole."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.support.engine_helpers import make_workspace, session
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, failing_grades, fixed_clock, open_session, settle, wait_until

UUID = "0b7e5d2c-3f4a-4c1e-9a8b-6d5e4f3a2b1c"  # 36 characters, as Claude Code names a session


async def test_a_uuid_session_id_is_said_whole_at_80_columns_while_a_write_waits(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"a.md": (["tests"], "active")}, [session(UUID, None, {"a.md": 0.5})])
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, UUID)
        down = failing_grades(app)
        try:
            burst(pilot, "7", "c")
            await wait_until(pilot, lambda: app.saving.startswith("waiting to save"))
            await pilot.pause()
            # "Session " (8) + the id (36) + " · " (3) + "1 unsaved (^d discards)" (23) = 70 of the 71 cells
            # between the icon (8) and the last cell: no space before it, one after
            heading = f"Session {UUID} · 1 unsaved (^d discards)"
            assert screen_lines(app)[0].text == " ⭘      " + heading + " " + " "
        finally:
            down.clear()
        await wait_until(pilot, lambda: not app.saving)
        assert UUID in screen_lines(app)[0].text


async def test_a_long_session_id_is_cut_in_its_middle_while_a_write_waits(tmp_path: Path) -> None:
    """An id of 48 characters, two sessions alike in their first 41: "Session " and the id (56) with " · " and
    "1 unsaved (^d discards)" (26) are 82 cells, 11 more than the 71 between the icon and the last cell, and the
    old code cut the title's end: "Session 2026-12-06-gptme-autonomous-run-fo…" (the end, which tells the two
    apart, lost). Now the title is cut in its middle: 71 - 26 = 45 cells, 22 of its start, "…", its last 22."""
    first = "2026-12-06-gptme-autonomous-run-for-issue-1234-a"
    second = first[:-1] + "b"
    sessions = [session(first, None, {"a.md": 0.5}), session(second, None, {"a.md": 0.5})]
    root = make_workspace(tmp_path, {"a.md": (["tests"], "active")}, sessions)
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, second)
        down = failing_grades(app)
        try:
            burst(pilot, "7", "c")
            await wait_until(pilot, lambda: app.saving.startswith("waiting to save"))
            await pilot.pause()
            title = f"Session {second}"
            assert len(title) == 56
            cut = title[:22] + "…" + title[-22:]  # 45 cells
            assert cut.endswith("-for-issue-1234-b"), cut
            # the 71 cells filled, the last cell of the 80 left empty
            assert screen_lines(app)[0].text == " ⭘      " + cut + " · 1 unsaved (^d discards)" + " "
        finally:
            down.clear()
        await wait_until(pilot, lambda: not app.saving)
        assert second in screen_lines(app)[0].text
