"""`u` with none of this dashboard's commits left undoes the operator's latest grade in the log (as
`lesson-credit undo`): the keys typed right behind it wait until what it leaves is on screen; and an undo of
a commit graded over since is refused in the engine's words, the next `u` undoing as the CLI's would."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.writes import WriteQueue
from tests.tui.store_down import grades
from tests.tui.tui_fixture import burst, open_session, settle, wait_until

SIZE = (100, 30)


def hold_undos(app: LessonCreditApp) -> threading.Event:
    """The writer's undos wait until the returned event is set (the test sets it)."""
    gate = threading.Event()
    real = app.source.append_undo

    def append_undo(*args: Any, **kwargs: Any) -> Any:
        gate.wait(120)
        return real(*args, **kwargs)

    app.source.append_undo = append_undo  # type: ignore[method-assign]
    return gate


async def test_a_grade_typed_behind_an_undo_of_a_grade_from_before_asks_nothing(
    workspace: Workspace, ws_root: Path
) -> None:
    """manual's 0.5, logged before the dashboard started; `u 6 c` in one burst. The undo takes the 0.5 back (s4
    pending again), so the 0.6 replaces nothing. On the old code the 6 and c went on while the undo was being
    written, and `c` asked "Replace the grade 0.5 of s4 with 0.6?"."""
    Workspace(ws_root).append_grade("s4", 0.5, grader="manual")
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        gate = hold_undos(app)
        burst(pilot, "u", "6", "c")
        await wait_until(pilot, lambda: app.writes.applying() is not None)  # the writer holds the undo
        gate.set()
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen), app.screen.question
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual"), (0.6, "manual")]


async def test_a_step_typed_behind_an_undo_starts_from_what_the_log_undo_left(
    workspace: Workspace, ws_root: Path
) -> None:
    """manual's 0.8 from before; `u 3 c u +`: the undo leaves s4 pending, 0.3 is committed over nothing, u takes it
    back (pending again), and `+` steps from pending: 0.5 + 0.05 = 0.55. On the old code the 0.3 asked to replace
    the 0.8 (and the queue expected the 0.8 back after the second u: + from it made 0.85)."""
    Workspace(ws_root).append_grade("s4", 0.8, grader="manual")
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        gate = hold_undos(app)
        burst(pilot, "u", "3", "c", "u", "plus")
        await wait_until(pilot, lambda: app.writes.applying() is not None)
        gate.set()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionDetailScreen), screen
        assert screen.draft == 0.55
        assert grades(ws_root) == [(0.8, "manual"), (None, "manual"), (0.3, "manual"), (None, "manual")]


async def test_escape_is_not_held_behind_an_undo_being_written(workspace: Workspace, ws_root: Path) -> None:
    """The keys after a log undo wait for it, but escape leaves the session at once (it reads nothing)."""
    Workspace(ws_root).append_grade("s4", 0.5, grader="manual")
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        gate = hold_undos(app)
        burst(pilot, "u", "escape")
        try:
            await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
            # the undo not written yet: being written, or (on a loaded machine) still queued for the writer
            assert [write.kind for write in app.writes.not_written()] == ["undo"]
        finally:
            gate.set()
        await settle(pilot)
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual")]


async def test_keys_held_behind_a_refused_log_undo_go_on(app: LessonCreditApp, ws_root: Path) -> None:
    """s4 is pending, with no grade to undo: `u 6 c` is refused (nothing to undo), then the 6 and c go on."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "u", "6", "c")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert grades(ws_root) == [(0.6, "manual")]


def test_an_undo_of_a_commit_graded_over_by_the_operator_leaves_the_next_u_to_the_logs_latest(
    workspace: Workspace, ws_root: Path
) -> None:
    """The dashboard commits 0.5; the operator grades 0.3 from the CLI (manual again). `u` on the dashboard is
    refused (its 0.5 is no longer manual's latest), in the engine's words; the next `u` takes back the 0.3, as
    `lesson-credit undo s4` would. On the old code every `u` retried the 0.5 and was refused, for good."""
    source = WorkspaceSource(workspace)
    queue = WriteQueue()

    def drain() -> list[str]:
        messages = []
        assert queue.start_draining()
        while (write := queue.take()) is not None:
            outcome = queue.apply(source, write)
            if not outcome.written:
                queue.refused(write)
            messages.append(outcome.message)
        return messages

    queue.commit("s4", 0.5, None, shown=None)
    drain()
    Workspace(ws_root).append_grade("s4", 0.3, grader="manual")  # (lines: the 0.5 is 5, the fixture logs four first)
    queue.undo("s4")
    (first,) = drain()
    assert first.startswith("Not undone on s4: session 's4' was graded elsewhere since line 5")
    queue.undo("s4")
    (second,) = drain()
    assert second == "Undid your grade on s4 (line 6): 0.3 back to 0.5.", second
    assert grades(ws_root) == [(0.5, "manual"), (0.3, "manual"), (0.5, "manual")]  # the 0.3 undone: 0.5 back
