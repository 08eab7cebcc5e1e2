"""Yes to the quit's question whether to discard a draft or a note means discarded: nothing of it is written
later. With a write still being saved, the quit waits for it; the draft (or note) answered away stayed in the
session, the question came again once the write landed, and escape there (or any grade committed after) kept it
and wrote the note with the next grade. s4 is pending (tests/tui/tui_fixture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import LeaveQuestion
from tests.tui.test_tui_history_live import held_grades
from tests.tui.test_tui_lock_wait import open_s4
from tests.tui.tui_fixture import burst, log_lines, settle, wait_until

NOTE = ["e", *"important", "enter"]  # the note box, the note, back to the credits


def grades(root: Path) -> list[tuple[str, float | None, str | None]]:
    return [(e["session_id"], e["base_reward"], e.get("note")) for e in log_lines(root) if e.get("type") == "grade"]


@pytest.mark.parametrize(("typed", "asked"), [(["8"], "the draft grade 0.8"), (NOTE, "the note typed")])
async def test_yes_to_discarding_a_draft_or_note_on_quitting_discards_it_while_the_quit_waits_for_a_write(
    app: LessonCreditApp, ws_root: Path, typed: list[str], asked: str
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await open_s4(pilot)
        go = held_grades(app)
        try:
            burst(pilot, "5", "c", *typed, "q")  # 0.5 queued (its write held), then a draft or a note, then quit
            await wait_until(pilot, lambda: isinstance(app.screen, LeaveQuestion))
            assert isinstance(app.screen, LeaveQuestion) and app.screen.question.startswith(f"Discard {asked}")
            await settle(pilot)  # (a key typed before the question is drawn waits and answers nothing: seen, then y)
            burst(pilot, "y")  # discard it and quit: the quit waits for the 0.5 (held: it cannot be written yet)
            await wait_until(pilot, lambda: not isinstance(app.screen, LeaveQuestion))
        finally:
            go.set()  # (whatever happened above: the held write goes on, and the app can stop)
        await settle(pilot)
        # nothing left to ask about: the quit went on once the 0.5 was in the log (the old code asked again, and
        # escape there kept what yes had discarded)
        question = app.screen.question if app.is_running and isinstance(app.screen, LeaveQuestion) else None
        assert (app.is_running, question) == (False, None)
    assert grades(ws_root) == [("s4", 0.5, None)]
