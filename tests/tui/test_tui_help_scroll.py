"""Help (`?`) at 80x24 and a long journal are longer than the screen: a burst of scroll keys ends where
its keys say. With Textual's gliding scroll `end home pagedown pageup down down` ended one line down
in Help, and at a fractional line (9.8, 16.3) in the journal, not two lines down."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.help import HelpScreen
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, settle

SIZE = (80, 24)


async def test_a_burst_in_help_ends_where_its_keys_say(app: LessonCreditApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "question_mark", "end", "home", "pagedown", "pageup", "down", "down")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#help-body").scroll_y == 2


async def test_a_burst_in_a_long_journal_ends_where_its_keys_say(tmp_path: Path) -> None:
    from lesson_credit.core.workspace import Workspace
    from tests.support.engine_helpers import make_workspace, session
    from tests.tui.tui_fixture import fixed_clock, open_session

    journal = "".join(f"line {i}: ran the tests again\n" for i in range(300))
    event = {**session("s1", None, {"a.md": 0.5}), "journal_path": "j.md"}
    root = make_workspace(tmp_path, {"a.md": (["tests"], "active")}, [event], journals={"j.md": journal})
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        burst(pilot, "j", "end", "home", "pagedown", "pageup", "down", "down")
        await settle(pilot)
        assert app.screen.query_one("#journal").scroll_y == 2


async def test_the_help_footer_names_its_scroll_keys(app: LessonCreditApp) -> None:
    """Help is longer than 24 rows, and its footer said only `esc Close help`: nothing told the operator that
    the rest is below, nor which keys bring it. It names them as the Rewards screen does (while there is more
    than the box shows), and `end` brings the last line into view."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        footer = screen_lines(app)[-1].text.rstrip()
        assert footer == "esc Close help  ↑ ↓ home end pgup pgdn scroll", footer  # what closes it first
        body = app.screen.query_one("#help-body")
        burst(pilot, "end")
        await settle(pilot)
        assert body.scroll_y == body.max_scroll_y > 0
        burst(pilot, "home")
        await settle(pilot)
        assert body.scroll_y == 0
