"""The grade history dialog (H) follows the log while it is open: opened right after typed-ahead writes, while
they still wait to be written, it showed the log as it was when it opened (no grades) and kept showing that
after they landed, while the history line under it said "retracted". s4 is pending (tests/tui/tui_fixture.py)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.widgets import Static

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.grade_history import GradeHistoryScreen
from tests.tui.test_tui_lock_wait import grades, open_s4
from tests.tui.tui_fixture import burst, settle, wait_until

HOLD_S = 120.0


def held_grades(app: LessonCreditApp) -> threading.Event:
    """The source's grade writes wait while the returned event is clear (a slow store)."""
    go = threading.Event()
    real = app.source.append_grade

    def append_grade(*args: Any, **kwargs: Any) -> Any:
        go.wait(HOLD_S)  # (bounded: a test that fails while writes are held must not leave the app unable to stop)
        return real(*args, **kwargs)

    app.source.append_grade = append_grade  # type: ignore[method-assign]
    return go


def dialog_text(app: LessonCreditApp) -> str:
    screen = app.screen
    assert isinstance(screen, GradeHistoryScreen)
    title = str(screen.query_one("#history-body").border_title)
    return f"{title}\n{screen.query_one('#history-text', Static).render()}"


async def test_the_history_dialog_shows_the_writes_that_land_while_it_is_open(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await open_s4(pilot)
        go = held_grades(app)
        try:
            burst(pilot, "5", "c", "u", "H")
            await wait_until(pilot, lambda: isinstance(app.screen, GradeHistoryScreen))
            assert dialog_text(app) == "0 grades of s4\nnever graded"  # nothing written yet
        finally:
            go.set()  # (whatever happened above: the held writes go on, and the app can stop)
        await settle(pilot)
        # the 0.5, then its retraction (u), newest first: the retraction in force
        lines = dialog_text(app).splitlines()
        assert lines[0] == "2 grades of s4"
        assert lines[1].startswith("retracted manual ") and lines[1].endswith("(in force)")
        assert lines[3].startswith("0.5 manual ")
    assert grades(ws_root) == [("s4", 0.5), ("s4", None)]
