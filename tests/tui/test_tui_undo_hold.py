"""The keys a session screen holds behind an undo of the log's (`u` with none of this dashboard's commits left)
are held only while waiting helps: not while the undo waits to be retried (ctrl+d, and the keys typed before
it, go on), and not once the read of what the undo left has failed. And what ctrl+d discards (grades and
their undo typed while the store was down) leaves no trace in the next question.

manual's 0.5 on s4 is logged before the dashboard starts, so `u` undoes it as `lesson-credit undo s4` would.
The store's undos are made to fail while `down` is set; a test releases it in `finally`, or the writer (it
retries a write until it is written) would keep the app from closing.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.tui.store_down import graded_app, grades, keep_toasts, toasts, undos_down
from tests.tui.tui_fixture import burst, failing_grades, open_session, settle, until_asked, wait_until

SIZE = (80, 24)
BOUND_S = 30.0  # a generous bound on each wait, never a speed assertion


@pytest.fixture
def app(workspace: Workspace, ws_root: Path) -> LessonCreditApp:
    return graded_app(workspace, ws_root)


@pytest.fixture(autouse=True)
def every_toast(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_toasts(monkeypatch)


async def test_ctrl_d_typed_behind_a_log_undo_waiting_to_be_retried_asks_to_discard_it(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`u 6 ctrl+d` in one burst with the store down: the undo waits to be retried, the 6 goes on (a draft)
    and ctrl+d asks; y discards the undo. On the old code the screen held the 6 behind the undo, and
    ctrl+d behind the 6, for as long as the store stayed down: no question came."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        down = undos_down(app)
        try:
            burst(pilot, "u", "6", "ctrl+d")
            await until_asked(pilot, BOUND_S)
            asked = app.screen
            assert isinstance(asked, ConfirmScreen) and asked.question == "Discard 1 write not saved yet?"
            await pilot.press("y")
            await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
        finally:
            down.clear()
        await settle(pilot)
        assert app.screen is screen and screen.draft == 0.6
        assert grades(ws_root) == [(0.5, "manual")]  # nothing undone
        assert "Not saved: Discarded, not saved: undo for s4." in toasts(app)


async def test_ctrl_d_is_not_held_behind_a_log_undo_being_written(app: LessonCreditApp, ws_root: Path) -> None:
    """`u ctrl+d` in one burst while the writer is still at the undo (not failed): ctrl+d is answered at once,
    that the undo under way cannot be discarded, and the undo is written. An earlier round found ctrl+d waiting
    for the undo; the last one answered "No write is waiting to be saved." beside "Undid ...", as if the undo
    had been discarded or had never been typed."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        gate = threading.Event()
        real = app.source.append_undo

        def append_undo(*args: Any, **kwargs: Any) -> Any:
            gate.wait(120)
            return real(*args, **kwargs)

        app.source.append_undo = append_undo  # type: ignore[method-assign]
        try:
            burst(pilot, "u", "ctrl+d")
            said = ": Undo for s4 is being saved: a write under way cannot be discarded (ctrl+d discards what waits "
            said += "to be tried again)."
            await wait_until(pilot, lambda: said in toasts(app), BOUND_S)
            await wait_until(pilot, lambda: app.writes.applying() is not None, BOUND_S)  # (the undo: being written)
        finally:
            gate.set()
        await settle(pilot)
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual")]


async def test_keys_behind_a_log_undo_go_on_when_the_screen_cannot_read_what_it_left(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The undo is written, but the session's reload fails (and nothing new comes from the source to read
    again): the keys typed behind it go on, and a message says the screen may not show the undo. The 6
    drafts 0.6; `c` asks whether to replace the 0.5 the screen still shows (the queue cannot know better).
    On the old code the 6 and c stayed held for good: only escape left the screen."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        real = app.source.explain

        def explain(session_id: str, *args: Any, **kwargs: Any) -> Any:
            if len(grades(ws_root)) > 1:  # once the undo is in the log
                raise OSError(5, "Input/output error")
            return real(session_id, *args, **kwargs)

        app.source.explain = explain  # type: ignore[method-assign]
        burst(pilot, "u", "6", "c")
        await until_asked(pilot, BOUND_S)
        asked = app.screen
        assert isinstance(asked, ConfirmScreen)
        assert asked.question == "Replace the grade 0.5 of s4 with 0.6?"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and isinstance(screen, SessionDetailScreen)
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual")]
        said = [t for t in toasts(app) if "could not be read again" in t]
        assert len(said) == 1, toasts(app)


async def test_keys_behind_a_log_undo_go_on_when_the_log_cannot_be_read_after_it(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The undo is written, but the log cannot be read after it (the writer's read fails, and no other read
    comes): the keys typed behind it go on, with a warning, as when the screen's own read fails. On the old code
    the 6 and c waited for a read that never came. The writer says so by a message, never waiting on the UI
    thread (`call_from_thread` raises here, as it does once the app's loop has closed): on the old code it
    called it, and the writer failed."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")

        def from_thread(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the event loop is closed")

        app.call_from_thread = from_thread  # type: ignore[method-assign]
        real = app.source.check

        def check(*args: Any, **kwargs: Any) -> Any:
            if len(grades(ws_root)) > 1:  # once the undo is in the log
                raise OSError(5, "Input/output error")
            return real(*args, **kwargs)

        app.source.check = check  # type: ignore[method-assign]
        burst(pilot, "u", "6", "c")
        await until_asked(pilot, BOUND_S)
        asked = app.screen
        assert isinstance(asked, ConfirmScreen)
        assert asked.question == "Replace the grade 0.5 of s4 with 0.6?"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual")]
        said = [t for t in toasts(app) if "could not be read again" in t]
        assert len(said) == 1, toasts(app)


async def test_after_discarding_grades_and_their_undo_the_next_question_names_the_logs_grade(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The store refuses grades: `7 c y` (over your 0.5), `4 c y`, `u` (takes the 0.4 back, as typed), then
    ctrl+d y discards all three. `6 c` asks to replace the 0.5 the log has. On the old code it named the 0.7,
    never written (the discarded undo left the discarded 0.4 as the grade undone last)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        down = failing_grades(app)
        questions = []
        try:
            for keys in (("7", "c"), ("4", "c"), ("u", "ctrl+d")):
                burst(pilot, *keys)
                await until_asked(pilot, BOUND_S)
                asked = app.screen
                assert isinstance(asked, ConfirmScreen)
                questions.append(asked.question)
                await pilot.press("y")
            await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
        finally:
            down.clear()
        await settle(pilot)
        assert questions == [
            "Replace the grade 0.5 of s4 with 0.7?",
            "Replace the grade 0.7 of s4 with 0.4?",
            "Discard 3 writes not saved yet?",
        ]
        burst(pilot, "6", "c")
        await until_asked(pilot, BOUND_S)
        asked = app.screen
        assert isinstance(asked, ConfirmScreen)
        assert asked.question == "Replace the grade 0.5 of s4 with 0.6?"
        await pilot.press("escape")
        await settle(pilot)
        assert grades(ws_root) == [(0.5, "manual")]


async def test_a_grade_typed_behind_a_log_undo_waiting_to_be_retried_is_asked_without_the_grade_it_takes_back(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`u 6 c` in one burst with the store down: the undo waits to be retried, so the 6 and c go on, and the
    question cannot know the grade in force once the undo is saved. On the old code it asked to replace the 0.5,
    the grade the undo takes back."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_session(pilot, "s4")
        down = undos_down(app)
        try:
            burst(pilot, "u", "6", "c")
            await until_asked(pilot, BOUND_S)
            asked = app.screen
            assert isinstance(asked, ConfirmScreen)
            assert asked.question == "Log 0.6 for s4? Its grade in force is not known yet."
            assert asked.detail.endswith("0.6 is logged after it. u undoes the 0.6.")  # (not the undo: "it")
            await pilot.press("escape")  # keeps the draft
            await wait_until(pilot, lambda: app.screen is screen, BOUND_S)
            assert screen.draft == 0.6
        finally:
            down.clear()
        await settle(pilot)
        assert grades(ws_root) == [(0.5, "manual"), (None, "manual")]


async def test_discarding_while_the_write_is_tried_again_says_only_that_it_is_discarded(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The store refuses the 0.7's first attempt; ctrl+d asks while the next attempt is under way, y is pressed,
    and that attempt fails too: one toast says the grade is not saved yet, one that it is discarded. On the old
    code the failed attempt said again that it would be tried until saved, after the discard."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_session(pilot, "s4")
        attempts: list[int] = []
        trying, fail = threading.Event(), threading.Event()
        real = app.source.append_grade

        def append_grade(*args: Any, **kwargs: Any) -> Any:
            attempts.append(1)
            if len(attempts) > 1:  # the attempt under way when y is pressed
                trying.set()
                fail.wait(120)
            raise StoreUnavailable("postgresql://db: cannot append: connection refused")

        app.source.append_grade = append_grade  # type: ignore[method-assign]
        try:
            burst(pilot, "7", "c")
            await until_asked(pilot, BOUND_S)
            await pilot.press("y")
            await wait_until(pilot, trying.is_set, BOUND_S)
            await pilot.press("ctrl+d")
            await until_asked(pilot, BOUND_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), BOUND_S)
            assert app.writes.waiting() is None  # discarded: the attempt under way fails next
        finally:
            fail.set()
        await wait_until(pilot, lambda: app.writes.pending == 0, BOUND_S)
        app.source.append_grade = real  # type: ignore[method-assign]
        await settle(pilot)
        assert [t for t in toasts(app) if "not saved yet" in t or "Discarded" in t] == [
            "Waiting to save: s4: Grade 0.7 for s4 is not saved yet: postgresql://db: cannot append: connection "
            "refused. It is tried again until it is saved (writes after it wait behind it); ctrl+d discards what is "
            "not saved.",
            "Not saved: Discarded, not saved: grade 0.7 for s4.",
        ]
        assert grades(ws_root) == [(0.5, "manual")]
