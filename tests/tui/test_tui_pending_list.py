"""Sessions listing the pending ones only (`v`), and the grading queue (`I`): a session graded from the
list leaves it when the operator comes back, even while its grade is still being written.

A burst `enter 5 c escape enter 6 c` on the list (s5 then s4, newest first) is meant to grade the two
sessions in turn, as the list would read once the first grade is in. While the first grade was being
written (the writer is held here, as a busy disk or a database holds it), the list still showed s5
first: the second `enter` opened s5 again and `6 c` asked to replace its 0.5, s4 left pending. The
grading queue (oldest first: s4 then s5) did the same.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.tui_fixture import NEW_SESSION, burst, log_lines, record, settle, until_asked, wait_until

SIZE = (100, 30)


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


def hold_writes(app: LessonCreditApp) -> threading.Event:
    """The source's grade appends wait until the returned event is set."""
    gate = threading.Event()
    real = app.source.append_grade

    def append_grade(*args: Any, **kwargs: Any) -> Any:
        gate.wait(60)
        return real(*args, **kwargs)

    app.source.append_grade = append_grade  # type: ignore[method-assign]
    return gate


def add_pending_s5(workspace: Workspace, ws_root: Path) -> None:
    """The fixture's new session, s5, recorded pending (as s4 is)."""
    session_id, journal, lessons, _, category, stamp = NEW_SESSION
    record(workspace, ws_root, (session_id, journal, lessons, None, category, stamp))


async def open_list(pilot: Any, keys: tuple[str, ...]) -> None:
    """Open the list the keys lead to, once the first read has landed."""
    await settle(pilot)
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


@pytest.mark.parametrize(
    ("keys", "first", "second", "back_to"),
    [(("s", "v"), "s5", "s4", SessionsScreen), (("I",), "s4", "s5", GradingQueueScreen)],
    ids=["pending-sessions", "grading-queue"],
)
async def test_a_session_graded_from_the_list_leaves_it_before_its_grade_is_written(
    workspace: Workspace, ws_root: Path, keys: tuple[str, ...], first: str, second: str, back_to: type
) -> None:
    add_pending_s5(workspace, ws_root)
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, keys)
        gate = hold_writes(app)
        burst(pilot, "enter", "5", "c", "escape", "enter", "6", "c")
        await wait_until(pilot, lambda: app.writes.pending >= 1 and app.keys.waiting == 0)
        await pilot.pause()
        screen = app.screen
        assert not isinstance(screen, ConfirmScreen), "the second grade asked to replace the first"
        assert isinstance(screen, SessionDetailScreen) and screen.session_id == second
        gate.set()
        await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert grades(ws_root) == [(first, 0.5), (second, 0.6)]
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, back_to)


@pytest.mark.parametrize(
    ("keys", "order"),
    [(("s", "v"), ["s6", "s5", "s4"]), (("I",), ["s4", "s5", "s6"])],
    ids=["pending-sessions", "grading-queue"],
)
async def test_a_session_graded_from_the_middle_of_the_list_leaves_the_next_one_highlighted(
    workspace: Workspace, ws_root: Path, keys: tuple[str, ...], order: list[str]
) -> None:
    """Three pending sessions (s4, s5, s6; the list newest first, the queue oldest first): the second row
    graded, `escape enter 6 c` grades the row that followed it, the third, as a list closing over a row
    does (and as `n` goes on from it); the highlight jumped to the first row instead, and `6 c` went to a
    session other than the one after it."""
    add_pending_s5(workspace, ws_root)
    _, journal, lessons, _, category, _ = NEW_SESSION
    record(workspace, ws_root, ("s6", journal, lessons, None, category, "2026-03-06T14:00:00Z"))
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, keys)
        screen = app.screen
        assert getattr(screen, "highlighted", None) == order[0]
        await pilot.press("down")
        await settle(pilot)
        assert getattr(screen, "highlighted", None) == order[1]
        burst(pilot, "enter", "5", "c", "escape", "enter", "6", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0 and app.keys.waiting == 0)
        await settle(pilot)
        assert grades(ws_root) == [(order[1], 0.5), (order[2], 0.6)]


@pytest.mark.parametrize(
    ("keys", "screen_type"),
    [(("s", "v"), SessionsScreen), (("I",), GradingQueueScreen)],
    ids=["pending-sessions", "grading-queue"],
)
async def test_a_session_graded_here_and_undone_elsewhere_is_pending_here_again(
    workspace: Workspace, ws_root: Path, keys: tuple[str, ...], screen_type: type
) -> None:
    # s4 graded 0.5 from the list, written and read; another process (the CLI's undo) then retracts it:
    # the log says pending again, and so do the list and `n`. Before, the dashboard remembered its own
    # grade for the rest of the run and kept s4 out of the list and the queue.
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, keys)
        burst(pilot, "enter", "5", "c", "escape")
        await wait_until(pilot, lambda: app.writes.pending == 0 and isinstance(app.screen, screen_type))
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.5)]
        assert "s4" not in app.screen.query_one(ThemedTable).rows  # graded: not pending
        Workspace(ws_root).undo_grade("s4")  # another process: the score in force is pending again
        app._check_source()
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.grade_of("s4") is None)
        await settle(pilot)
        assert "s4" in app.screen.query_one(ThemedTable).rows
        assert (
            app.snapshot is not None
            and app.snapshot.next_pending(None, app.writes.expected, app.writes.touched()) == "s4"
        )


async def test_the_replace_prompt_goes_by_the_log_once_the_grade_here_is_read(
    workspace: Workspace, ws_root: Path
) -> None:
    # s4 graded 0.5 here, written and read; another process then grades it 0.3, then retracts every grade:
    # the prompt before `6 c` asks to replace the 0.3 (not this dashboard's 0.5), and once s4 is pending
    # there is nothing to replace. Before, the prompt kept asking "replace the grade 0.5".
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, ("s", "v"))
        burst(pilot, "enter", "5", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        other = Workspace(ws_root)
        other.append_grade("s4", 0.3, grader="erik")
        app._check_source()
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.grade_of("s4") == 0.3)
        await settle(pilot)
        burst(pilot, "6", "c")
        await until_asked(pilot)
        prompt = app.screen
        assert isinstance(prompt, ConfirmScreen) and prompt.question == "Replace the grade 0.3 of s4 with 0.6?"
        await pilot.press("escape", "escape")  # keeps the draft, then discards it
        await settle(pilot)
        other.undo_grade("s4", grader="erik")  # each undoes their own grade (erik's over the 0.5 first)
        other.undo_grade("s4")
        app._check_source()
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.grade_of("s4") is None)
        await settle(pilot)
        burst(pilot, "7", "c")
        await wait_until(pilot, lambda: app.writes.pending == 0 and app.keys.waiting == 0)
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert grades(ws_root)[-1] == ("s4", 0.7)
