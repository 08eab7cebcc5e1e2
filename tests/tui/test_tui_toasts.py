"""Toasts at 80x24: three quick commits leave at most two one-line confirmations, below the credit table.

The snapshot is the check a person would make (the credits and the grade stay readable); the
Pilot test counts the toasts and finds the credit table's rows uncovered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import TOASTS_SHOWN, LessonCreditApp
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.tui.tui_fixture import settle, toasts_shown

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]
# s4 is pending: the first does not ask, the others do (and each is answered once the question shows)
COMMITS = (("3", "c", "5", "c"), ("c",), ("7", "c"), ("c",))


def make_app(workspace: Workspace) -> LessonCreditApp:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    setattr(app, "NOTIFICATION_TIMEOUT", 3600)  # noqa: B010 (a class variable, set for this app only): toasts must outlive a loaded machine's settle before the screenshot
    return app


async def three_commits(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    await app.push_screen(SessionDetailScreen(app.source, "s4"))
    await settle(pilot)
    for keys in COMMITS:
        await pilot.press(*keys)
        await settle(pilot)
    await toasts_shown(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_toasts_after_three_quick_commits(
    size: tuple[int, int], snap_compare: Any, workspace: Workspace
) -> None:
    assert snap_compare(make_app(workspace), terminal_size=size, run_before=three_commits)


async def test_three_quick_commits_leave_two_toasts_clear_of_the_credits(workspace: Workspace, ws_root: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await three_commits(pilot)
        await toasts_shown(pilot)
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == TOASTS_SHOWN == 2
        shown = [str(t.render()) for t in toasts]
        assert shown == ["Saved grade 0.5 for s4 (was 0.3).", "Saved grade 0.7 for s4 (was 0.5)."]
        credits = app.screen.query_one("#credits")
        for toast in toasts:
            assert toast.region.height == 1  # one line each
            assert not toast.region.overlaps(credits.region)


async def test_toasts_leave_the_grade_bar_readable_at_80_columns(workspace: Workspace) -> None:
    # the grade, the grading keys, the history and the note field stay in view while toasts show
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await three_commits(pilot)
        await toasts_shown(pilot)
        toasts = list(app.screen.query(Toast))
        assert toasts
        bar = app.screen.query_one("#grade-bar")
        for toast in toasts:
            assert not toast.region.overlaps(bar.region), (toast.region, bar.region)


def toast_rows_shown(app: LessonCreditApp, toast: Toast) -> list[int]:
    """The rows of the toast's region where the screen shows the toast (not what lies under it)."""
    region = toast.region
    return [y for y in range(region.y, region.bottom) if app.screen.get_widget_at(region.x + 2, y)[0] is toast]


async def test_a_wrapped_toast_shows_its_last_line_at_80_columns(workspace: Workspace) -> None:
    # escape over a draft says "Draft discarded; nothing was written." (37 characters). At 80 columns a toast
    # is at most 40 cells wide; the left border and the padding take 3 of them. The toast measured its height
    # at 37 cells of text (one line) and drew at 36 (two lines): "written." was cut off with no ellipsis
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        await pilot.press("4", "escape")
        await settle(pilot)
        await toasts_shown(pilot)
        toasts = list(app.screen.query(Toast))
        assert [str(t.render()) for t in toasts] == ["Draft discarded; nothing was written."]
        toast = toasts[0]
        assert toast_rows_shown(app, toast) == list(range(toast.region.y, toast.region.bottom))
        text_cells = toast.region.width - 3  # the border and the padding apart
        lines = 1 if text_cells >= 37 else 2  # "Draft discarded; nothing was" / "written." below 37
        assert toast.region.height == lines


async def test_a_long_toast_above_the_footer_shows_every_line(workspace: Workspace) -> None:
    # the Lessons screen's toasts sit above the footer: a 74-character message is two lines of 37 or three of
    # 36; the toast must show as many as its text takes
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.notify("a" * 74, markup=False)
        await settle(pilot)
        await toasts_shown(pilot)
        (toast,) = app.screen.query(Toast)
        text_cells = toast.region.width - 3
        assert toast.region.height == -(-74 // text_cells)  # ceil(74 / text_cells)
        assert toast_rows_shown(app, toast) == list(range(toast.region.y, toast.region.bottom))


async def test_a_dialog_over_a_session_keeps_its_toasts_off_the_grade_bar(workspace: Workspace) -> None:
    """At 80 columns a session's toasts show at the top right. A dialog opened while one showed (escape over a
    draft, then `g`; or the question `c` asks over a grade, right after a commit) has toasts of its own, which
    Textual put at the bottom right: the same message showed twice, the second over the grade bar's
    history and note (the rows under the dialog)."""
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        bar = app.screen.query_one("#grade-bar").region
        for keys in (("4", "escape", "g"), ("escape", "3", "c", "5", "c")):  # the exact-grade box, the question
            await pilot.press(*keys)
            await settle(pilot)
            await toasts_shown(pilot)
            dialog = app.screen
            assert not isinstance(dialog, SessionDetailScreen)
            toasts = list(dialog.query(Toast))
            assert toasts
            for toast in toasts:
                assert not toast.region.overlaps(bar), (str(toast.render()), toast.region, bar)
