"""Keys typed fast around a write the operator discards (ctrl+d y while it waits to be retried): where `+`, `-`
and `g` start, and what the next `u` undoes, are what the log will hold, not what the screen last read.

manual's 0.5 on s4 is logged before the dashboard starts. The store's undos are made to fail while `down` is
set; a test releases it in `finally`, or the writer (it retries a write until it is written) would keep the app
from closing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from tests.support.textual_private import notification_texts
from tests.tui.store_down import graded_app, keep_toasts, toasts, undos_down
from tests.tui.tui_fixture import burst, log_lines, open_session, settle, until_asked, wait_until

SIZE = (80, 24)
BOUND_S = 30.0  # a generous bound on each wait, never a speed assertion


@pytest.fixture
def app(workspace: Workspace, ws_root: Path) -> LessonCreditApp:
    return graded_app(workspace, ws_root)


@pytest.fixture(autouse=True)
def every_toast(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_toasts(monkeypatch)


def second_attempt_held(real: Callable[..., Any], attempts: list[object], gate: threading.Event) -> Callable[..., Any]:
    """`real` with the store down for its first two attempts (each call's arguments put in `attempts`): the
    first fails at once, the second once the test sets `gate`; the ones after go through."""

    def attempt(*args: Any, **kwargs: Any) -> Any:
        attempts.append((args, kwargs))
        if len(attempts) == 2:
            gate.wait(120)
        if len(attempts) <= 2:
            raise StoreUnavailable("postgresql://db: cannot append: connection refused")
        return real(*args, **kwargs)

    return attempt


async def grade(pilot: Any, root: Path, key: str, logged: list[float | None]) -> None:
    """`key c y`: a grade over the one in force, confirmed, until the log holds `logged`."""
    burst(pilot, key, "c")
    await until_asked(pilot, BOUND_S)
    await pilot.press("y")
    await wait_until(pilot, lambda: grades(root) == logged and pilot.app.writes.pending == 0, BOUND_S)


def grades(root: Path) -> list[float | None]:
    return [e["base_reward"] for e in log_lines(root) if e.get("type") == "grade" and e["session_id"] == "s4"]


async def discard_waiting(pilot: Any) -> None:
    """ctrl+d y once a write waits to be retried, then until the writer has let it go."""
    app = pilot.app
    await wait_until(pilot, lambda: app.writes.waiting() is not None, BOUND_S)
    await pilot.press("ctrl+d")
    await until_asked(pilot, BOUND_S)
    await pilot.press("y")
    await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
    await settle(pilot)


async def test_plus_after_a_discarded_undo_starts_from_the_grade_written_not_the_screens_stale_one(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`6 c y`: the 0.6 is written, and the log cannot be read after it (the screen still shows the 0.5). `u`
    fails (the store is down) and ctrl+d y drops it: the 0.6 stays in force. `+` drafts 0.6 + 0.05 = 0.65. On the
    old code it drafted 0.55 from the screen's 0.5 (the discard forgot what the queue knew was written)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        real = app.source.check

        def check(*args: Any, **kwargs: Any) -> Any:
            if len(grades(ws_root)) > 1:  # once the 0.6 is in the log: no read shows it
                raise OSError(5, "Input/output error")
            return real(*args, **kwargs)

        app.source.check = check  # type: ignore[method-assign]
        down = undos_down(app)
        try:
            burst(pilot, "6", "c")
            await until_asked(pilot, BOUND_S)
            asked = app.screen
            assert isinstance(asked, ConfirmScreen) and asked.question == "Replace the grade 0.5 of s4 with 0.6?"
            await pilot.press("y")
            await wait_until(pilot, lambda: grades(ws_root) == [0.5, 0.6] and app.writes.pending == 0, BOUND_S)
            await settle(pilot)
            assert screen.committed() == 0.5  # the screen's view: read before the 0.6
            burst(pilot, "u")
            await discard_waiting(pilot)
        finally:
            down.clear()
        assert app.screen is screen and grades(ws_root) == [0.5, 0.6]
        burst(pilot, "plus")
        await settle(pilot)
        assert screen.draft == 0.65


async def test_u_typed_while_a_discarded_undo_is_still_tried_undoes_the_grade_on_top(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`6 c y 7 c y` written; `u` (the 0.7) fails, and while its next attempt is under way ctrl+d y discards it
    and `u` is typed again; that attempt fails too, so the first `u` is dropped. The second `u` undoes the 0.7,
    on top in the log: 0.6 is in force again. On the old code it aimed at the 0.6 under the 0.7 and was refused
    ("Not undone on s4: ... graded elsewhere since"), the 0.7 staying in force."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        await grade(pilot, ws_root, "6", [0.5, 0.6])
        await grade(pilot, ws_root, "7", [0.5, 0.6, 0.7])
        attempts: list[object] = []
        gate = threading.Event()
        app.source.append_undo = second_attempt_held(app.source.append_undo, attempts, gate)  # type: ignore[method-assign]
        try:
            burst(pilot, "u")
            await wait_until(pilot, lambda: len(attempts) == 2 and app.writes.waiting() is not None, BOUND_S)
            await pilot.press("ctrl+d")
            await until_asked(pilot, BOUND_S)
            await pilot.press("y")
            burst(pilot, "u")  # behind the attempt under way
            await wait_until(pilot, lambda: app.writes.pending == 2, BOUND_S)
        finally:
            gate.set()
        await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
        await settle(pilot)
        assert app.screen is screen
        assert grades(ws_root) == [0.5, 0.6, 0.7, 0.6]
        assert not [t for t in toasts(app) if "Not undone" in t], toasts(app)
        assert any("Undid your grade on s4" in t and "0.7 back to 0.6" in t for t in toasts(app)), toasts(app)


async def test_after_every_write_is_lost_the_question_names_the_other_persons_grade_the_screen_shows(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`4 c y` fails; while its next attempt is under way ctrl+d y discards it and `u` is typed, then erik grades
    s4 0.3 from the command line. That attempt fails: the 0.4 is dropped and the `u` refused (nothing written to
    undo). The screen, read again, shows erik's 0.3, and `6 c` asks to replace erik's 0.3. On the old code it
    asked to replace the 0.5 the 0.4 was typed over (the queue kept expecting what it had typed)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        attempts: list[object] = []
        gate = threading.Event()
        app.source.append_grade = second_attempt_held(app.source.append_grade, attempts, gate)  # type: ignore[method-assign]
        try:
            burst(pilot, "4", "c")
            await until_asked(pilot, BOUND_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: len(attempts) == 2 and app.writes.waiting() is not None, BOUND_S)
            await pilot.press("ctrl+d")
            await until_asked(pilot, BOUND_S)
            await pilot.press("y")
            burst(pilot, "u")  # behind the attempt under way
            await wait_until(pilot, lambda: app.writes.pending == 2, BOUND_S)
            Workspace(ws_root).append_grade("s4", 0.3, grader="erik")  # another person, from another process
        finally:
            gate.set()
        await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
        app._check_source()  # the poll (off in this test) reads erik's grade
        await settle(pilot)
        assert app.screen is screen and screen.committed() == 0.3 and grades(ws_root) == [0.5, 0.3]
        burst(pilot, "6", "c")
        await until_asked(pilot, BOUND_S)
        asked = app.screen
        assert isinstance(asked, ConfirmScreen) and asked.question == "Replace the grade 0.3 of s4 with 0.6?"


async def test_u_typed_three_times_with_nothing_left_to_undo_says_so_in_one_toast(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`u u u`: the first undoes manual's 0.5 from the log, the other two find nothing to undo and say the same
    thing: one toast says it, beside the "Undid" one. On the old code two identical toasts stacked and pushed the
    "Undid" one out."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "u", "u", "u")
        await wait_until(pilot, lambda: sum("Nothing to undo on s4" in t for t in toasts(app)) == 2, BOUND_S)
        await settle(pilot)
        assert grades(ws_root) == [0.5, None]
        shown = [message for _, message in notification_texts(app)]
        assert sum("Nothing to undo on s4" in m for m in shown) == 1, shown
        assert any(m.startswith("Undid your grade on s4") for m in shown), shown


async def test_u_on_the_grading_queue_says_where_it_undoes_once(app: LessonCreditApp, ws_root: Path) -> None:
    """`I u u u`: the grading queue binds no undo; each `u` says that u undoes on a session's screen, in one
    toast, and nothing is written. On the old code `u` there did nothing, without a word."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "I", "u", "u", "u")
        await settle(pilot)
        assert type(app.screen).__name__ == "GradingQueueScreen"
        said = "u undoes a grade on a session's screen: enter opens the highlighted session."
        assert toasts(app).count(f": {said}") == 3
        assert [message for _, message in notification_texts(app)].count(said) == 1
        assert grades(ws_root) == [0.5]
