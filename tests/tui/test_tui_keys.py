"""No key crashes the app on any screen: empty tables (filtered to nothing, before a run, an empty
workspace) get every navigation and action key, and the app is still running afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.screens.simulation import SimulationScreen
from tests.tui.tui_fixture import fixed_clock, open_sessions, settle

SIZE = (120, 40)
NAVIGATION = ("up", "down", "pageup", "pagedown", "home", "end", "enter")


async def test_navigation_in_a_lessons_table_filtered_to_nothing(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zzz-no-such-lesson", "enter")
        await settle(pilot)
        await pilot.press(*NAVIGATION, "p", "o", "r", "up", "down")
        await settle(pilot)
        assert app.is_running and app.return_code is None
        assert isinstance(app.screen, LessonsScreen)


async def test_navigation_in_a_sessions_table_filtered_to_nothing(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sessions(pilot)
        await pilot.press("slash", *"zzz", "enter")
        await settle(pilot)
        await pilot.press(*NAVIGATION, "up", "down")
        await settle(pilot)
        assert app.is_running and app.return_code is None
        assert isinstance(app.screen, SessionsScreen)


async def test_navigation_on_simulation_before_any_run(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, SimulationScreen)
        app.screen.query_one("#sim-table").focus()
        await pilot.press(*NAVIGATION, "up", "down")
        await settle(pilot)
        assert app.is_running and app.return_code is None


@pytest.mark.long
async def test_every_screen_of_an_empty_workspace_takes_navigation_keys(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(tmp_path / "empty", clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for screen_key in ("l", "s", "a", "h", "m"):
            await pilot.press(screen_key)
            await settle(pilot)
            if isinstance(app.focused, Input):
                await pilot.press("escape")
            await pilot.press(*NAVIGATION, "n", "up", "down", "escape")
            await settle(pilot)
            assert app.is_running and app.return_code is None, screen_key


async def test_an_empty_workspace_says_what_to_do_next(tmp_path: Path) -> None:
    app = LessonCreditApp(Workspace(tmp_path / "empty", clock=fixed_clock), poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        hint = str(app.screen.query_one("#lessons-empty", Static).render())
        assert "lessons/" in hint and "lesson-credit record" in hint
        await open_sessions(pilot)
        hint = str(app.screen.query_one("#sessions-empty", Static).render())
        assert "lesson-credit record" in hint


async def test_a_wrapped_journal_keeps_its_last_characters_clear_of_the_scrollbar() -> None:
    from textual.app import App, ComposeResult

    from lesson_credit.tui.widgets.journal_view import JournalView

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield JournalView(id="journal")

    app = One()
    async with app.run_test(size=(60, 12)) as pilot:
        journal = app.query_one(JournalView)
        journal.show_journal(("word " * 40 + "END\n") * 20, [], [])
        await pilot.pause()
        await pilot.pause()
        assert journal.show_vertical_scrollbar
        # every wrapped line fits the width the text is drawn in (left of the scrollbar)
        assert journal._laid_out_width == journal.scrollable_content_region.width
        assert max(e - s for s, e in journal._lines) <= journal.scrollable_content_region.width
