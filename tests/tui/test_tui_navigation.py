"""Sessions sorted by any column and filtered by lesson, a session opened from Health, help on columns."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.health import FindingCard
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from tests.tui.tui_fixture import burst, open_health, open_session, open_sessions, settle, table_keys, wait_until

SIZE = (120, 40)


async def test_sessions_sort_by_any_column(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        assert table_keys(table) == ["s4", "s3", "s2", "s1"]  # newest first
        # as `lesson-credit sessions --sort` orders them: pending last either way, ties in log order
        screen.sort_by("grade")  # best first; pending last: s1 0.8, s3 0.6, s2 0.4, s4 pending
        await pilot.pause()
        assert table_keys(table) == ["s1", "s3", "s2", "s4"]
        await pilot.press("r")
        await settle(pilot)
        assert table_keys(table) == ["s2", "s3", "s1", "s4"]
        screen.sort_by("lessons")  # 3, 3, 2, 2 lessons; ties in log order
        await pilot.pause()
        assert table_keys(table) == ["s1", "s2", "s3", "s4"]
        await pilot.press("o")  # lessons -> mean salience
        await settle(pilot)
        assert screen.sort_column == "salience"


async def test_sessions_filter_by_lesson_id(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_sessions(pilot)
        await pilot.press("slash", *"lesson:small-commits", "enter")
        await settle(pilot)
        table = screen.query_one("#sessions-table", DataTable)
        assert table_keys(table) == ["s4", "s3", "s2"]  # the fixture's sessions with workflow/small-commits
        await pilot.press("v")
        await settle(pilot)
        assert table_keys(table) == ["s4"]


async def test_a_session_opens_from_a_health_finding(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_health(pilot)
        cards = list(screen.query(FindingCard))
        waiting = next(c for c in cards if "s4" in c.finding.items)  # s4 is waiting for a grade
        while app.focused is not waiting:
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s4"


async def test_w_opens_what_if_from_any_screen_on_the_lesson_highlighted(app: LessonCreditApp) -> None:
    """`w` opened What-if from Lessons only: typed on Analysis or in a session it did nothing, without a
    word. It opens from any screen, its cursor on the lesson highlighted there (the third row after two
    downs typed in a burst); where no lesson is highlighted (Sessions), on the first row."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for screen_keys, table_id in ((("a",), "#loo-table"), (("l",), "#lessons-table")):
            burst(pilot, *screen_keys, "down", "down", "w")
            await settle(pilot)
            what_if = app.screen
            assert isinstance(what_if, WhatIfScreen), screen_keys
            on_lesson = table_keys(what_if.query_one("#what-if-table", DataTable))[cursor(what_if)]
            burst(pilot, "escape")
            await settle(pilot)
            assert on_lesson == table_keys(app.screen.query_one(table_id, DataTable))[2], screen_keys
        detail = await open_session(pilot, "s1")
        credits = table_keys(detail.query_one("#credits", DataTable))
        assert len(credits) >= 2
        burst(pilot, "down", "w")
        await settle(pilot)
        what_if = app.screen
        assert isinstance(what_if, WhatIfScreen)
        assert table_keys(what_if.query_one("#what-if-table", DataTable))[cursor(what_if)] == credits[1]
        burst(pilot, "escape", "escape", "w")  # back to the session, back to Sessions: no lesson there
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen) and cursor(app.screen) == 0


def cursor(screen: WhatIfScreen) -> int:
    return screen.query_one("#what-if-table", DataTable).cursor_row


async def test_what_if_chosen_in_the_palette_over_a_dialog_leaves_the_dialog_on_top(app: LessonCreditApp) -> None:
    """`w` on a dialog never reaches the app (a modal screen ends the key's bindings), but ctrl+p opens over
    the dialog and lists the app's keys: chosen there, What-if would open over the Help dialog but for the
    app's check for a dialog on top (action_what_if in tui/app_navigation.py). The dialog stays, to be closed first."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "question_mark")
        await settle(pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert any(c.title.startswith("What-if") for c in app.get_system_commands(help_screen))
        burst(pilot, "ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        burst(pilot, "W", "h", "a", "t", "minus", "i", "f")
        await wait_until(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
        burst(pilot, "enter")
        await settle(pilot)
        assert app.screen_stack[-1] is help_screen
        assert not any(isinstance(screen, WhatIfScreen) for screen in app.screen_stack)
