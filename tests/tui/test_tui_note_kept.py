"""A note typed on a session without a draft grade is never dropped without a word: leaving the session (another
screen, the next session, quitting) asks first, as with a draft, and escape on the session says it discarded it. It
was dropped silently (`e important enter s`, then back: the note gone). s4 is pending (tests/tui/tui_fixture.py)."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import LeaveQuestion
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.support.textual_private import notification_texts
from tests.tui.tui_fixture import burst, log_lines, settle

NOTE = ["e", *"important", "enter"]  # the note box, the note, back to the credits


def notes(root: Path) -> list[tuple[str, float | None, str | None]]:
    return [(e["session_id"], e["base_reward"], e.get("note")) for e in log_lines(root) if e.get("type") == "grade"]


async def test_leaving_a_session_with_a_note_typed_asks_first_and_escape_keeps_it(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", *NOTE, "s")
        await settle(pilot)
        assert isinstance(app.screen, LeaveQuestion)  # (the old code: Sessions, the note gone)
        assert app.screen.question == "Discard the note typed on s4 and open Sessions?"
        burst(pilot, "escape")  # keep it: back to s4, the note in its box, committed with the grade typed next
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.note == "important"
        burst(pilot, "7", "c")
        await settle(pilot)
        burst(pilot, "s")  # nothing typed left: no question
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
    assert notes(ws_root) == [("s4", 0.7, "important")]


async def test_quitting_with_a_note_typed_asks_first(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", *NOTE, "q")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, LeaveQuestion)
        assert app.screen.question == "Discard the note typed on s4 and quit?"
        await pilot.press("y")  # (the question drawn: settled above)
        await settle(pilot)
        assert not app.is_running
    assert notes(ws_root) == []


async def test_escape_with_a_note_typed_discards_it_saying_so_then_goes_back(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", *NOTE, "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.note == ""
        assert ("", "Note discarded; nothing was written.") in notification_texts(app)
        burst(pilot, "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
    assert notes(ws_root) == []
