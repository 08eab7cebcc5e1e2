"""Toasts at 80x24: three quick commits leave at most two one-line confirmations, below the credit table.

The snapshot is the check a person would make (the credits and the grade stay readable); the
Pilot test counts the toasts and finds the credit table's rows uncovered.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets._toast import Toast

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as app_module
from lesson_credit.tui.app import TOASTS_SHOWN, LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.textual_private import notification_texts, screen_lines
from tests.tui.store_down import keep_toasts, toasts, undos_down
from tests.tui.tui_fixture import fixed_clock, settle, toasts_shown, until_asked, wait_until

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
    draft, then `g`) has toasts of its own, which Textual put at the bottom right: the same message showed
    twice, the second over the grade bar's history and note (the rows under the dialog). A question (`c` over
    a grade, right after a commit) shows no toast (the next test): none over the grade bar either."""
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        bar = app.screen.query_one("#grade-bar").region
        for keys, shown in ((("4", "escape", "g"), True), (("escape", "3", "c", "5", "c"), False)):
            await pilot.press(*keys)
            await settle(pilot)
            if shown:
                await toasts_shown(pilot)
            dialog = app.screen
            assert not isinstance(dialog, SessionDetailScreen)
            assert isinstance(dialog, ConfirmScreen) is not shown
            toasts = [toast for toast in dialog.query(Toast) if toast.region.area]
            assert bool(toasts) is shown
            for toast in toasts:
                assert not toast.region.overlaps(bar), (str(toast.render()), toast.region, bar)


def waiting_to_save_then_ctrl_d(
    toasts_seen: list[str], downs: list[threading.Event]
) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """s4's undo fails (the store is down: the event put in `downs`, for the test to clear) and waits to be
    retried: its warning shows at the top right (the session screen at 80 columns); then ctrl+d asks whether
    to discard it."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, LessonCreditApp)
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        downs.append(undos_down(app))  # (the test clears it: the writer retries until written)
        await pilot.press("u")
        await wait_until(pilot, lambda: any(t.startswith("Waiting to save: s4: ") for t in toasts(app)))
        await toasts_shown(pilot)
        assert len(app.screen.query(Toast)) == 1  # the warning (at the top right at 80 columns)
        toasts_seen.extend(str(t.render()) for t in app.screen.query(Toast))
        await pilot.press("ctrl+d")
        await until_asked(pilot)  # drawn (no settle while the write waits: the writer is at work until written)

    return run_before


def graded_s4_app(workspace: Workspace, ws_root: Path) -> LessonCreditApp:
    """store_down's dashboard (manual's 0.5 on s4 logged before it starts, a failed write tried again at once),
    the grade logged at the fixed clock: its time is in the snapshot (the session's history)."""
    Workspace(ws_root, clock=fixed_clock).append_grade("s4", 0.5, grader="manual")
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    return app


def region_text(app: LessonCreditApp, widget: Widget) -> list[str]:
    """What the screen shows in the widget's region, row by row."""
    lines, region = screen_lines(app), widget.region
    return [lines[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)]


async def test_the_question_to_discard_a_waiting_write_is_not_under_its_toast(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80x24 ctrl+d's question over a session, asked while the write's "Waiting to save" warning shows: the
    warning (at the top right, 40 columns wide, 10 rows) covered the right half of the question and of why it
    failed for as long as it lasted (8 s). The question shows whole, nothing over it; the warning shows again on
    the session once it is answered (`escape`: the write keeps waiting)."""
    monkeypatch.setattr(app_module, "TOAST_SECONDS", 3600.0)  # the warning outlives a loaded machine's waits
    keep_toasts(monkeypatch)
    app = graded_s4_app(workspace, ws_root)
    seen: list[str] = []
    downs: list[threading.Event] = []
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        try:
            await waiting_to_save_then_ctrl_d(seen, downs)(pilot)
            question = app.screen
            assert isinstance(question, ConfirmScreen) and question.question == "Discard 1 write not saved yet?"
            assert seen and seen[0].startswith("Waiting to save: s4\nUndo for s4 is not saved yet: ")
            dialog = question.query_one("#confirm-dialog")
            for toast in question.query(Toast):
                assert not toast.region.overlaps(dialog.region), (str(toast.render()), toast.region, dialog.region)
            for part in ("#confirm-question", "#confirm-detail"):
                widget = question.query_one(part, Static)
                drawn = [line.text for line in widget.render_lines(Region(0, 0, *widget.region.size))]
                assert drawn and region_text(app, widget) == drawn, part
            assert "Discard 1 write not saved yet?" in region_text(app, question.query_one("#confirm-question"))[0]
            await pilot.press("escape")  # (no settle while the write waits: the writer is at work until written)
            await wait_until(pilot, lambda: isinstance(app.screen, SessionDetailScreen))
            await toasts_shown(pilot)
            assert [str(t.render()) for t in app.screen.query(Toast)] == seen  # back on the session
        finally:
            for down in downs:
                down.clear()  # the store is back


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_the_question_to_discard_a_waiting_write(
    size: tuple[int, int], snap_compare: Any, workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "TOAST_SECONDS", 3600.0)
    keep_toasts(monkeypatch)
    app = graded_s4_app(workspace, ws_root)
    downs: list[threading.Event] = []

    async def run_before(pilot: Pilot[Any]) -> None:
        await waiting_to_save_then_ctrl_d([], downs)(pilot)

    try:
        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        for down in downs:
            down.clear()


async def test_a_toast_raised_while_a_question_is_up_shows_once_it_is_answered(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No toast shows over a question, and one raised while a question was up ran its time out unseen under it
    (a failure's warning gone before the question was answered). It is held, its time not running, and shown on
    the screen under the question once that is answered (`escape`)."""
    shown: list[tuple[str, float | None]] = []
    real = App.notify

    def textual_notify(self: App[Any], message: str, **kwargs: Any) -> None:
        shown.append((message, kwargs.get("timeout")))
        real(self, message, **kwargs)

    monkeypatch.setattr(App, "notify", textual_notify)
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        await pilot.press("3", "c", "5", "c")  # (s4 pending: the 3 is written, the 5 asks whether to replace it)
        await until_asked(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        app.notify("the store is back", severity="warning", timeout=60)
        await settle(pilot)
        assert ("the store is back", 60) not in shown  # held while the question is up
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionDetailScreen))
        await wait_until(pilot, lambda: ("the store is back", 60) in shown)
        await toasts_shown(pilot)
        assert any("the store is back" in str(toast.render()) for toast in app.screen.query(Toast))


async def test_a_toast_trimmed_leaves_no_gap_above_those_shown(workspace: Workspace) -> None:
    """At 80x24 on a session the toasts sit at the top right, from the line under the title. A third toast trims the
    oldest (two are shown), and Textual's rack dropped its toast but kept the holder around it: the two shown
    were drawn a line lower, under an empty one, the session's line clear and the journal's border covered."""
    app = make_app(workspace)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await app.push_screen(SessionDetailScreen(app.source, "s4"))
        await settle(pilot)
        app.notify("first toast")
        app.notify("second toast")
        await wait_until(pilot, lambda: len(app.screen.query(Toast)) == 2)
        await toasts_shown(pilot)
        app.notify("third toast")
        await wait_until(pilot, lambda: [n for _, n in notification_texts(app)] == ["second toast", "third toast"])
        await wait_until(pilot, lambda: len(app.screen.query(Toast)) == 2)
        await toasts_shown(pilot)
        await settle(pilot)
        rows = [line.text for line in screen_lines(app)]
        assert "second toast" in rows[1] and "third toast" in rows[2], rows[:4]
