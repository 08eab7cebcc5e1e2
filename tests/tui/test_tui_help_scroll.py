"""Help (`?`) at 80x24 is longer than the screen: a burst of scroll keys ends where its keys say. With
Textual's gliding scroll `end home pagedown pageup down down` ended one line down, not two."""

from __future__ import annotations

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.help import HelpScreen
from tests.tui.tui_fixture import burst, settle

SIZE = (80, 24)


async def test_a_burst_in_help_ends_where_its_keys_say(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "question_mark", "end", "home", "pagedown", "pageup", "down", "down")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#help-body").scroll_y == 2
