"""A screen's load is a thread: a reload started by a newer change may post its view first, and the older load's
view, posted after it (its thread was late to run, as on a loaded machine), must not replace it. Each test holds
the older load's thread between its read and its post until the newer view has landed, then lets it post.

The workspace: s4 pending (but in the last test: manual's 0.5 logged before the dashboard starts). Another person
grades from another process (alice: the latest in force).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.base import DataScreen
from lesson_credit.tui.screens.confirm import ConfirmCommit
from lesson_credit.tui.screens.lessons import LessonsScreen
from tests.support.textual_private import messages_waiting, notification_texts
from tests.tui.store_down import graded_app, grades
from tests.tui.tui_fixture import NEW_SESSION, fixed_clock, open_session, record, settle, until_asked, wait_until

SIZE = (120, 40)


class HeldRead:
    """The next read through `name` on `target` returns only once `release` is set; `finished` is set once the load
    that read finishes (`screen.post_result` returned: what it posts is queued)."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, target: Any, name: str, screen: DataScreen, fails: bool = False
    ) -> None:
        self.reading, self.release = threading.Event(), threading.Event()
        self.finished = threading.Event()
        held: list[threading.Thread] = []
        real, post_result = getattr(target, name), screen.post_result

        def read(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if not self.reading.is_set():
                held.append(threading.current_thread())
                self.reading.set()
                assert self.release.wait(60)
                if fails:  # (`fails`: the held read fails once released, as a read of a log being replaced may)
                    raise OSError("the held read failed")
            return result

        def posting(*args: Any, **kwargs: Any) -> None:
            post_result(*args, **kwargs)
            if threading.current_thread() in held:
                self.finished.set()

        monkeypatch.setattr(target, name, read)
        monkeypatch.setattr(screen, "post_result", posting)


class HeldReads:
    """The next two reads through `name` on `target` each return only once their `release` is set; `finished[i]` is
    set once the load of read i has posted (or dropped) its result."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, target: Any, name: str, screen: DataScreen) -> None:
        self.reading = [threading.Event(), threading.Event()]
        self.release = [threading.Event(), threading.Event()]
        self.finished = [threading.Event(), threading.Event()]
        held: dict[threading.Thread, int] = {}
        real, post_result = getattr(target, name), screen.post_result

        def read(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            index = len(held)
            if index < 2:
                held[threading.current_thread()] = index
                self.reading[index].set()
                assert self.release[index].wait(60)
            return result

        def posting(*args: Any, **kwargs: Any) -> None:
            post_result(*args, **kwargs)
            if (index := held.get(threading.current_thread())) is not None:
                self.finished[index].set()

        monkeypatch.setattr(target, name, read)
        monkeypatch.setattr(screen, "post_result", posting)


def grade_elsewhere(root: Path, value: float) -> None:
    Workspace(root, clock=fixed_clock).grade("s4", value, grader="alice")


async def test_an_older_view_of_the_session_landing_last_does_not_undo_the_newer_one(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grade bar said alice's 0.4 after her 0.6 had landed, and `9 c` asked to replace 0.4."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        held = HeldRead(monkeypatch, app.source, "explain", detail)
        grade_elsewhere(ws_root, 0.4)
        app._check_source()  # the poll (off here) sees it: the screen reloads, and that read is held
        await wait_until(pilot, held.reading.is_set)
        grade_elsewhere(ws_root, 0.6)
        app._check_source()
        await wait_until(pilot, lambda: detail.base is not None and detail.base.session.base_reward == 0.6)
        held.release.set()  # the older read (0.4) posts its view now
        await wait_until(pilot, held.finished.is_set)
        await settle(pilot)
        assert detail.committed() == 0.6
        await pilot.press("9", "c")
        await until_asked(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        assert app.screen.question == "Replace the grade 0.6 of s4 with 0.9?", app.screen.question


async def test_an_older_view_of_the_lessons_landing_last_does_not_undo_the_newer_one(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Lessons screen's load is an async worker reading in a thread of its own (no current worker there): its
    older view landed after the newer one and stayed until the log changed again (the log version before alice's
    0.6 shown after it)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lessons = app.screen
        assert isinstance(lessons, LessonsScreen) and lessons.view is not None
        first = lessons.view.version
        held = HeldRead(monkeypatch, app.source, "lessons_view", lessons)
        grade_elsewhere(ws_root, 0.4)
        app._check_source()
        await wait_until(pilot, held.reading.is_set)
        grade_elsewhere(ws_root, 0.6)
        app._check_source()
        await wait_until(pilot, lambda: lessons.view is not None and lessons.view.version > first + 1)
        newer = lessons.view.version  # (two log changes: the held read's view is one version older)
        held.release.set()
        await wait_until(pilot, held.finished.is_set)
        await settle(pilot)
        await wait_until(pilot, lambda: messages_waiting(app) == 0)
        assert lessons.view.version == newer


async def test_a_view_read_while_the_writes_go_on_is_shown_before_the_next_one_lands(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes faster than a read (a big log, an agent grading): each reload is cancelled by the next. Dropping every
    cancelled read's view showed nothing until the writes stopped (the screen stayed on s4 pending throughout)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        held = HeldReads(monkeypatch, app.source, "explain", detail)
        grade_elsewhere(ws_root, 0.4)
        app._check_source()
        await wait_until(pilot, held.reading[0].is_set)
        grade_elsewhere(ws_root, 0.6)
        app._check_source()  # the newer reload cancels the first, and its read is held too
        await wait_until(pilot, held.reading[1].is_set)
        held.release[0].set()  # (no `settle` while the second read is held: it waits for every worker)
        await wait_until(pilot, lambda: detail.base is not None and detail.base.session.base_reward == 0.4)
        held.release[1].set()
        await wait_until(pilot, held.finished[1].is_set)
        await settle(pilot)
        assert detail.base is not None and detail.base.session.base_reward == 0.6 and detail.committed() == 0.6


async def test_an_older_informative_order_landing_last_does_not_replace_the_newer_one(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`n` in the informative order follows the order last computed: the one computed before a session was recorded
    elsewhere, landing after the one computed since, left that session out (s5, pending, recorded by gptme)."""
    from lesson_credit.tui import records_views

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reading, release, delivered = threading.Event(), threading.Event(), threading.Event()
        real, call_from_thread = records_views.queue_view, app.call_from_thread
        held: list[threading.Thread] = []

        def queue_view(*args: Any) -> Any:
            result = real(*args)
            if not reading.is_set():
                held.append(threading.current_thread())
                reading.set()
                assert release.wait(60)
            return result

        monkeypatch.setattr(records_views, "queue_view", queue_view)

        def calling(*args: Any) -> Any:  # the worker hands the order to the app's thread this way, and waits
            result = call_from_thread(*args)
            if threading.current_thread() in held:
                delivered.set()
            return result

        monkeypatch.setattr(app, "call_from_thread", calling)
        app.set_grading_order("informative", None)  # (what the grading queue's `o` does): computed in a thread
        await wait_until(pilot, reading.is_set)
        record(Workspace(ws_root, clock=fixed_clock), ws_root, (*NEW_SESSION[:3], None, *NEW_SESSION[4:]))
        app._check_source()  # the poll (off here) reads it: the order is computed again, with s5
        await wait_until(pilot, lambda: app.queue_ids is not None and "s5" in app.queue_ids)
        release.set()  # the older order (without s5) lands now
        await wait_until(pilot, delivered.is_set)
        await settle(pilot)
        assert app.queue_ids is not None and "s5" in app.queue_ids, app.queue_ids


async def test_an_older_view_landing_last_holds_no_key_after_an_undo_of_the_logs(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`u` undoing manual's 0.5 (logged before the dashboard) holds the keys typed after it until the screen's view
    holds the undo. A view read before it, landing after the one that holds it, held them again, and nothing was
    left to read: every key typed after waited for good."""
    app = graded_app(workspace, ws_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        held = HeldRead(monkeypatch, app.source, "explain", detail)
        Workspace(ws_root, clock=fixed_clock).grade("s1", 0.3, grader="alice")  # another session, elsewhere
        app._check_source()  # the screen reloads: that read is held
        await wait_until(pilot, held.reading.is_set)
        await pilot.press("u")
        await wait_until(pilot, lambda: grades(ws_root)[-1:] == [(None, "manual")] and not detail.keys_held)
        held.release.set()  # the view read before the undo posts now
        await wait_until(pilot, held.finished.is_set)
        await wait_until(pilot, lambda: messages_waiting(app) == 0)
        assert not detail.keys_held


async def test_an_older_read_failing_after_a_newer_view_landed_says_nothing(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read a newer view has replaced that fails afterwards reported its failure over the newer view (a toast
    about a read nobody waits for), and cleared the screen's loading marks and let the keys held for a load go on
    (`WorkFailed`) while a still newer read may be loading."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s4")
        held = HeldRead(monkeypatch, app.source, "explain", detail, fails=True)
        grade_elsewhere(ws_root, 0.4)
        app._check_source()
        await wait_until(pilot, held.reading.is_set)
        grade_elsewhere(ws_root, 0.6)
        app._check_source()
        await wait_until(pilot, lambda: detail.base is not None and detail.base.session.base_reward == 0.6)
        before = notification_texts(app)
        held.release.set()  # the older read fails now
        await wait_until(pilot, held.finished.is_set)
        await settle(pilot)
        await wait_until(pilot, lambda: messages_waiting(app) == 0)
        assert notification_texts(app) == before
        assert detail.committed() == 0.6


async def test_a_result_for_a_choice_since_changed_does_not_hide_the_one_for_the_new_choice(
    app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload in the old order (A) numbered after the read `o` started in the new order (B), a thread late to
    run: A's view, which the queue rejects (not the order in force), still counted as shown, and B's, older by
    number, was dropped: the queue stayed on its old view, its table loading and its keys held, until a change
    of the log. A result counts against those for the same choice only."""
    from lesson_credit.tui.records_views import queue_view as real_view
    from lesson_credit.tui.screens.grading_queue import GradingQueueScreen

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("I")
        await settle(pilot)
        queue = app.screen
        assert isinstance(queue, GradingQueueScreen) and queue.queue is not None and app.grading_order == "oldest"
        newest = queue._newest
        real_start, real_shows = newest.start, newest.shows
        b_numbered, a_posted = threading.Event(), threading.Event()
        numbers: dict[str, int] = {}

        def start() -> int:  # A is descheduled before it takes its number, until B has taken its own
            if not numbers:
                numbers["A"] = -1
                assert b_numbered.wait(60)
                numbers["A"] = real_start()
                return numbers["A"]
            numbers["B"] = real_start()
            b_numbered.set()
            return numbers["B"]

        def shows(kind: str, number: int) -> bool:
            shown = real_shows(kind, number)
            if number == numbers.get("A"):
                a_posted.set()
            return shown

        def queue_view(source: Any, order: str) -> Any:
            if order == "informative":  # B's read lands after A's view was posted
                assert a_posted.wait(60)
            return real_view(source, order)

        monkeypatch.setattr(newest, "start", start)
        monkeypatch.setattr(newest, "shows", shows)
        monkeypatch.setattr("lesson_credit.tui.screens.grading_queue.queue_view", queue_view)
        queue.reload()  # A: a change of the log, read in the order in force (oldest)
        await wait_until(pilot, lambda: "A" in numbers)
        await pilot.press("o")  # B: the informative order; the table busy, its keys held until B's view
        await wait_until(pilot, lambda: queue.queue is not None and queue.queue.order == "informative")
        await settle(pilot)
        assert not queue.keys_held
