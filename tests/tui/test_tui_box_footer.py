"""While a text box has the focus, Textual gives it every letter and digit, so the footer lost the
screen's keys: it was empty (the note box, the jump dialog, What-if's floor) or read `/ Filter`, a key
that only types a `/` there. It now says what the box's own keys do, the same way for every box."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, open_session, settle

# what each box's keys do, read in the screens' code and tried: a filter's enter applies it and goes to the
# table, its escape empties it; the note's enter and escape both go back to the credits with the note kept;
# What-if's floor keeps what was typed either way; the seeds' enter runs (escape cancels a run going, else leaves);
# the transcript's search finds the next match; the dialogs open / preview or cancel; tab moves the focus on.
# A screen key the box's keys already name (the seeds' enter runs, as Simulation's ctrl+r does) is not said twice
BOX_FOOTERS = {
    "lessons filter": ((), ("slash",), "filter", "⏎ Apply esc Clear tab Next"),
    "sessions filter": (("s",), ("slash",), "session-filter", "⏎ Apply esc Clear tab Next"),
    "note": (("s1",), ("e",), "note", "⏎ Keep note esc Back tab Next"),
    "exact grade": (("s1",), ("g",), "grade-value", "⏎ Preview esc Cancel"),
    "transcript search": (("s1",), ("V", "slash"), "transcript-search", "⏎ Next match esc Back tab Next"),
    "jump": ((), ("colon",), "jump-id", "⏎ Open the session esc Cancel"),
    "what-if floor": (("w",), ("tab", "tab"), "floor", "⏎ Keep floor esc Back tab Next ^s Save settings…"),
    "simulation seeds": (("m",), ("tab", "tab"), "seeds", "⏎ Run esc Back tab Next"),
}


@pytest.mark.parametrize("box", list(BOX_FOOTERS))
async def test_a_focused_text_box_footer_says_how_to_leave_it(workspace: Workspace, box: str) -> None:
    before, keys, box_id, expected = BOX_FOOTERS[box]
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        if before == ("s1",):
            await open_session(pilot, "s1")
        else:
            burst(pilot, *before)
        await settle(pilot)
        burst(pilot, *keys)
        await settle(pilot)
        assert isinstance(app.focused, Input) and app.focused.id == box_id, app.focused
        assert screen_lines(app)[-1].text.rstrip() == expected


async def test_the_keys_the_note_box_footer_names_do_what_it_says(workspace: Workspace) -> None:
    """`⏎ Keep note esc Back`: either key leaves the box for the credits and the note stays typed."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s1")
        assert isinstance(screen, SessionDetailScreen)
        burst(pilot, "e", "o", "k")
        for leave in ("enter", "e", "escape"):
            burst(pilot, leave)
            await settle(pilot)
            if leave != "e":
                assert app.focused is not None and app.focused.id == "credits", app.focused
            assert screen.note == "ok"
