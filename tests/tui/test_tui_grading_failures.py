"""Pilot tests for a queued write that fails: it waits, says why, and is tried again until it is
written or the operator discards it; the writes behind it wait behind it (docs/trust.md).

The append is made to raise (the way a full disk, a held lock or a stopped database does); the
keys are typed as an operator would. s1 is logged graded 0.8, s4 pending. The app retries after
0.01 s here (1 s by default): the tests wait on conditions, never on time.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit, ConfirmScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.source import WorkspaceSource
from tests.support.lock_holder import LockHolder
from tests.tui.tui_fixture import log_lines, settle, until_asked, wait_until

SIZE = (120, 40)


@pytest.fixture
def app(workspace: Workspace) -> LessonCreditApp:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    app.retry_seconds = 0.01
    return app


@pytest.fixture(autouse=True)
def every_toast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every notification (message and title): a toast expires before a loaded machine finishes."""
    real = LessonCreditApp.notify

    def notify(self: LessonCreditApp, message: str, *args: Any, **kwargs: Any) -> None:
        seen = self.__dict__.setdefault("toasts_seen", [])
        seen.append((str(kwargs.get("title", "")), str(message), str(kwargs.get("severity", "information"))))
        real(self, message, *args, **kwargs)

    monkeypatch.setattr(LessonCreditApp, "notify", notify)


def toasts(app: LessonCreditApp, severity: str) -> list[str]:
    seen = app.__dict__.get("toasts_seen", [])
    return [f"{title}: {message}" for title, message, shown in seen if shown == severity]


def errors(app: LessonCreditApp) -> list[str]:
    return toasts(app, "error")


class Outage:
    """The source's appends raise while `down` is set (a stopped database: nothing reaches the log),
    and the first `times` appends raise regardless; `failed` lists the session of each failed attempt."""

    def __init__(self, source: WorkspaceSource, times: int = 0, error: Exception | None = None) -> None:
        self.down = threading.Event()
        self.times = times
        self.failed: list[str] = []
        real = source.append_grade
        error = error or StoreUnavailable("postgresql://db: cannot append: connection refused")

        def append_grade(session_id: str, *args: Any, **kwargs: Any) -> Any:
            if self.down.is_set() or len(self.failed) < self.times:
                self.failed.append(session_id)
                raise error
            return real(session_id, *args, **kwargs)

        source.append_grade = append_grade  # type: ignore[method-assign]  # this source's writes fail


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


async def open_detail(pilot: Pilot[None], session_id: str) -> SessionDetailScreen:
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    detail = SessionDetailScreen(app.source, session_id)
    await pilot.app.push_screen(detail)
    await settle(pilot)
    return detail


def waiting(app: LessonCreditApp, count: int) -> bool:
    """The writer waits to retry with `count` writes not saved, and the title bar says so."""
    words = "1 write" if count == 1 else f"{count} writes"  # the noun agrees with the count
    said = app.saving == f"waiting to save {words} (ctrl+d discards)"
    return app.writes.waiting() is not None and app.writes.waiting()[0] == count and said  # type: ignore[index]


async def test_a_failing_grade_waits_says_why_and_is_saved_by_a_retry(app: LessonCreditApp, ws_root: Path) -> None:
    """it showed an error for 8 s, then the grade was gone and nothing retried."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")  # pending
        outage = Outage(app.source, times=3, error=OSError(28, "No space left on device"))
        await pilot.press("7", "c")
        await settle(pilot)  # the writer tries until it writes: three failures, then the append
        assert outage.failed == ["s4"] * 3 and grades(ws_root) == [("s4", 0.7)]
        assert errors(app) == []
        shown = toasts(app, "warning")
        assert len(shown) == 1, shown  # one toast for one reason, however many retries
        assert shown[0].startswith("Waiting to save: s4: Grade 0.7 for s4 is not saved yet: ")
        assert "No space left on device" in shown[0]
        assert app.saving == "" and app.writes.waiting() is None and app.writes.pending == 0
        assert app.writes.can_undo("s4")


async def test_one_toast_for_one_reason_when_the_screen_reads_the_failures_after_the_save(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """A loaded machine: the writer failed three times and saved before the screen read any of its news; each
    failure read then found nothing waiting any more and was toasted again (CI saw three toasts for one reason)."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")
        outage = Outage(app.source, times=3, error=OSError(28, "No space left on device"))
        await pilot.press("7", "c")
        deadline = time.monotonic() + 60
        while grades(ws_root) != [("s4", 0.7)] and time.monotonic() < deadline:
            time.sleep(0.01)  # blocks the app's loop (the test runs on it): the screen reads nothing meanwhile
        assert outage.failed == ["s4"] * 3 and grades(ws_root) == [("s4", 0.7)]
        await settle(pilot)
        shown = toasts(app, "warning")
        assert len(shown) == 1, shown
        assert "No space left on device" in shown[0]
        assert app.saving == "" and app.writes.waiting() is None


async def test_writes_behind_a_waiting_one_wait_and_are_saved_in_order(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")
        outage = Outage(app.source)
        outage.down.set()  # the database stops
        await pilot.press("7", "c", "9", "c")  # 0.9 is asked over the expected 0.7: confirmed
        # once the question is drawn: a key typed before it waits for its answer (on a loaded machine the old
        # `if isinstance(...)` found it pushed, not drawn, or not pushed yet, and the wait below timed out)
        await until_asked(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        await pilot.press("c")
        await wait_until(pilot, lambda: waiting(app, 2) and len(outage.failed) >= 3)
        assert grades(ws_root) == [] and set(outage.failed) == {"s4"}
        assert app.writes.expected("s4", None) == 0.9  # what the queue will write, kept while it waits
        outage.down.clear()  # it is back
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7), ("s4", 0.9)]
        assert app.saving == "" and errors(app) == []
        await pilot.press("u")  # undoes the 0.9: back to the operator's 0.7
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7), ("s4", 0.9), ("s4", 0.7)]


async def test_discarding_what_waits_leaves_the_prompt_naming_the_logged_grade(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s1")  # graded 0.8
        outage = Outage(app.source)
        outage.down.set()
        await pilot.press("5", "c")  # over the heuristic's 0.8, no question: the append fails and waits
        await wait_until(pilot, lambda: waiting(app, 1))
        await pilot.press("ctrl+d")
        await until_asked(pilot)  # the question shows: only keys typed then answer it
        prompt = app.screen
        assert isinstance(prompt, ConfirmScreen) and prompt.question == "Discard 1 write not saved yet?"
        assert "connection refused" in prompt.detail
        assert "The oldest, grade 0.5 for s1, failed: " in prompt.detail  # which write it is (it named none)
        await pilot.press("escape")  # kept: still waiting
        assert app.writes.waiting() is not None and app.writes.pending == 1
        await pilot.press("ctrl+d")
        await until_asked(pilot)
        await pilot.press("y")
        # the writer drops it and ends once its pause between tries is over (a thread: settle does not wait for it)
        await wait_until(pilot, lambda: app.writes.pending == 0 and app.saving == "")
        await settle(pilot)
        assert grades(ws_root) == []
        assert any("Discarded, not saved: grade 0.5 for s1" in t for t in toasts(app, "warning"))
        assert app.writes.expected("s1", 0.8) == 0.8 and not app.writes.can_undo("s1")
        outage.down.clear()
        await pilot.press("6", "c")
        # the log still says the heuristic's 0.8: the discarded 0.5 is no person's grade to replace, no question
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert grades(ws_root) == [("s1", 0.6)]


async def test_quitting_while_a_write_waits_asks_before_discarding_it(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")
        outage = Outage(app.source)
        outage.down.set()
        await pilot.press("7", "c")
        await wait_until(pilot, lambda: waiting(app, 1))
        await pilot.press("q")
        await until_asked(pilot)
        assert app.screen.question == "Discard 1 write not saved yet and quit?"  # type: ignore[attr-defined]
        await pilot.press("escape")  # no: the app stays, the write keeps waiting
        assert app.is_running and app.writes.pending == 1
        outage.down.clear()
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7)]


async def test_a_grade_waits_for_a_lock_another_process_holds(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer holds the log's lock past the lock timeout (0.05 s here, 30 s by default):
    the grade waits, saying so, and is written once the lock is released."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "0.05")
    lock = ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock"
    with LockHolder(lock) as holder:  # another writer, holding the lock
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await open_detail(pilot, "s4")
            await pilot.press("7", "c")
            await wait_until(pilot, lambda: waiting(app, 1) and toasts(app, "warning"))
            shown = toasts(app, "warning")
            # the lock named from the workspace (its absolute path broke mid-word in a toast at 80 columns)
            assert "(sessions.jsonl.lock in state/lesson-thompson)" in shown[0], shown
            assert "another writer held the lock" in shown[0] and str(lock) not in shown[0], shown
            assert grades(ws_root) == []
            holder.release()
            await wait_until(pilot, lambda: grades(ws_root) == [("s4", 0.7)] and app.saving == "")
            await settle(pilot)
            assert grades(ws_root) == [("s4", 0.7)] and errors(app) == []


async def test_a_grade_waiting_for_the_lock_holds_no_view_back(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a commit waited for another writer's lock (up to the lock timeout, 30 s by default), the
    writer held the source: the next session opened blank until the lock was released. The writer now
    waits for the log's lock before it takes the source, and the title bar says it waits for the lock."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "120")  # the writer waits; it does not fail
    lock = ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock"
    with LockHolder(lock) as holder:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await open_detail(pilot, "s4")
            await pilot.press("7", "c")
            await wait_until(pilot, lambda: app.writes.pending == 1)
            detail = SessionDetailScreen(app.source, "s1")
            await app.push_screen(detail)
            await wait_until(pilot, lambda: detail.base is not None)  # loaded while the lock is held
            await wait_until(pilot, lambda: app.saving == "1 write waits for another writer's lock")
            assert grades(ws_root) == [] and app.writes.pending == 1
            holder.release()
            await wait_until(pilot, lambda: grades(ws_root) == [("s4", 0.7)] and app.saving == "")
            await settle(pilot)
    assert grades(ws_root) == [("s4", 0.7)] and errors(app) == []


def test_a_long_read_of_the_dashboards_holds_no_other_writer_back(workspace: Workspace, ws_root: Path) -> None:
    """The writer took the log's lock, then waited for the source while a long read of the dashboard's
    held it (a first read of a big log, LOO): another writer (gptme's record hook) waited on the log's
    lock meanwhile and failed once its lock timeout passed (exit 75). The writer now lets the log's lock
    go while it waits for the source."""
    from lesson_credit.core.base.files import exclusive_lock

    source = WorkspaceSource(workspace)
    reading, done = threading.Event(), threading.Event()

    def long_read() -> None:
        with source._lock:
            reading.set()
            done.wait(timeout=60)

    entered = threading.Event()
    locked = workspace.log.locked

    @contextlib.contextmanager
    def entering(*args: Any, **kwargs: Any) -> Iterator[None]:
        with locked(*args, **kwargs):
            entered.set()  # the writer has the log's lock: whether it lets it go is what is checked below
            yield

    workspace.log.locked = entering  # type: ignore[method-assign]
    reader = threading.Thread(target=long_read)
    reader.start()
    assert reading.wait(timeout=60)
    writer = threading.Thread(target=lambda: source.append_grade("s4", 0.7, grader="manual"))
    writer.start()
    try:
        assert entered.wait(timeout=60)
        # (it waits for the source: before, it held the log's lock all the while, and this timed out)
        with exclusive_lock(ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock", timeout=10):
            assert grades(ws_root) == []  # another writer has the lock while the grade waits
    finally:
        done.set()
        reader.join(timeout=60)
        writer.join(timeout=60)
    assert grades(ws_root) == [("s4", 0.7)]


def warnings_shown(app: LessonCreditApp) -> list[str]:
    return toasts(app, "warning")


def block_state_file(root: Path) -> Path:
    """bandit-state.json cannot be rewritten: a folder stands in its place (the grade itself is logged)."""
    state = root / "state" / "lesson-thompson" / "bandit-state.json"
    state.unlink(missing_ok=True)
    (state / "held").mkdir(parents=True)
    return state


async def test_a_grade_logged_while_the_state_file_fails_is_saved_and_undoable(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """the dashboard said "Grade 0.7 for S1 not saved" and dropped the grade from
    the undo stack though it was in the log; only the derived bandit-state.json had failed."""
    block_state_file(ws_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")  # pending
        await pilot.press("7", "c")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7)]
        assert errors(app) == []  # committed: not reported as "not saved"
        shown = warnings_shown(app)
        assert len(shown) == 1 and "bandit-state.json" in shown[0], shown
        seen = app.__dict__["toasts_seen"]
        assert any(severity == "information" and "Saved grade 0.7 for s4" in m for _, m, severity in seen), seen
        assert app.writes.can_undo("s4")  # the undo stack keeps it
        await pilot.press("u")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7), ("s4", None)]
        assert errors(app) == []


async def test_a_grade_while_gptme_saves_the_state_file_leaves_it_to_gptme(app: LessonCreditApp, ws_root: Path) -> None:
    """gptme's bandit has emptied bandit-state.json to save it (`write_text`, its text not written yet): the
    dashboard's grade replaced the empty file, and gptme's text then went to the file no longer there. The grade
    is saved, the file left to gptme, and one warning says so."""
    state = ws_root / "state" / "lesson-thompson" / "bandit-state.json"
    with state.open("w"):  # gptme's save has opened (emptied) it
        ahead = time.time() + 60  # (a time ahead of the clock is recent: no timing luck)
        os.utime(state, (ahead, ahead))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await open_detail(pilot, "s4")  # pending
            await pilot.press("7", "c")
            await settle(pilot)
            assert grades(ws_root) == [("s4", 0.7)]
            assert errors(app) == []
            shown = warnings_shown(app)
            assert len(shown) == 1 and "may be saving it" in shown[0] and "next command" in shown[0], shown
            assert state.read_bytes() == b""


async def test_a_refused_undo_leaves_the_grade_in_force_as_the_log_says(app: LessonCreditApp, ws_root: Path) -> None:
    """A refused undo promised nothing: the next commit over the grade in force asks first, as before it."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")  # pending
        await pilot.press("7", "c")
        await settle(pilot)
        Workspace(ws_root).grade("s4", 0.4, grader="alice")  # another person, from another process
        app._check_source()  # the poll (off in this test) reads it: 0.4 in force
        await settle(pilot)
        await pilot.press("u")  # refused: alice graded s4 since, her 0.4 stays in force
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7), ("s4", 0.4)]
        assert any("alice's grade on line" in t for t in toasts(app, "warning"))
        # Before, the queue kept what the undo would have left (pending): s4 counted as pending here and
        # the 0.9 below replaced alice's 0.4 without the question
        assert "s4" not in app.writes.touched()
        await pilot.press("9", "c")
        await until_asked(pilot)
        prompt = app.screen
        assert isinstance(prompt, ConfirmCommit), prompt
        assert prompt.question == "Replace the grade 0.4 of s4 with 0.9?", prompt.question


async def test_the_question_to_discard_names_every_write_it_drops(app: LessonCreditApp, ws_root: Path) -> None:
    """Two grades wait (the store is down): ctrl+d asked "Discard 2 writes not saved yet?" and named only the oldest,
    so the 0.5 typed on s1 after it was dropped unnamed. Now the question names both, oldest first."""
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")  # pending
        outage = Outage(app.source)
        outage.down.set()
        await pilot.press("7", "c")
        await wait_until(pilot, lambda: waiting(app, 1))
        # s1, the heuristic's 0.8: no question (the keys wait for its screen to load; the writer's retries
        # keep the app from settling)
        await pilot.press(":", "s", "1", "enter", "5", "c")
        await wait_until(pilot, lambda: waiting(app, 2))
        await pilot.press("ctrl+d")
        await until_asked(pilot)
        prompt = app.screen
        assert isinstance(prompt, ConfirmScreen) and prompt.question == "Discard 2 writes not saved yet?"
        assert "The oldest, grade 0.7 for s4, failed: " in prompt.detail
        assert "Also not saved: grade 0.5 for s1." in prompt.detail
        await pilot.press("y")
        await wait_until(pilot, lambda: app.writes.pending == 0 and app.saving == "")
        await settle(pilot)
        assert grades(ws_root) == []
        dropped = [t for t in toasts(app, "warning") if t.startswith("Not saved: Discarded, not saved: ")]
        assert sorted(dropped) == [  # those behind it at once, the one being retried at its next failure
            "Not saved: Discarded, not saved: grade 0.5 for s1.",
            "Not saved: Discarded, not saved: grade 0.7 for s4.",
        ]


def status_line(detail: SessionDetailScreen) -> str:
    return str(detail.query_one("#grade-status", Static).render())


async def test_a_grade_waiting_to_be_saved_is_said_on_its_sessions_screen(app: LessonCreditApp, ws_root: Path) -> None:
    """The log refuses writes: `7 c` on pending s4 left its screen saying "grade pending" and "never graded", as if
    the c had done nothing (only the title bar's count of writes waiting said otherwise). Now its grade bar says
    what waits for it, until it is saved; another session's screen does not."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        s4 = await open_detail(pilot, "s4")
        outage = Outage(app.source)
        outage.down.set()
        await pilot.press("7", "c")
        await wait_until(pilot, lambda: waiting(app, 1) and "0.7 waiting to be saved" in status_line(s4))
        assert status_line(s4).startswith("grade pending  0.7 waiting to be saved")
        await pilot.press(":", "s", "1", "enter")  # the heuristic's 0.8, nothing of it waits
        await wait_until(pilot, lambda: isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == "s1")
        s1 = app.screen
        assert isinstance(s1, SessionDetailScreen)
        await wait_until(pilot, lambda: s1.base is not None)
        assert "waiting" not in status_line(s1)
        outage.down.clear()
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7)]
        await pilot.press(":", "s", "4", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen)
        assert status_line(app.screen).startswith("grade 0.7 (manual)") and "waiting" not in status_line(app.screen)


async def test_ctrl_d_asks_to_discard_from_a_text_box_too(app: LessonCreditApp, ws_root: Path) -> None:
    """The title bar says "(ctrl+d discards)" on every screen, but with the note box (or a filter) focused the box
    took ctrl+d as its own (delete the character right of the cursor): nothing was asked, nothing said. Now it
    asks; with no write waiting ctrl+d is the box's again ("ab", cursor home: ctrl+d leaves "b")."""
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        s4 = await open_detail(pilot, "s4")
        note = s4.query_one("#note", Input)
        await pilot.press("e", "a", "b", "home", "ctrl+d")  # nothing waits: the box deletes the "a"
        await settle(pilot)
        assert app.focused is note and note.value == "b"
        await pilot.press("escape")
        outage = Outage(app.source)
        outage.down.set()
        await pilot.press("7", "c")
        await wait_until(pilot, lambda: waiting(app, 1))
        await pilot.press("e", "x", "ctrl+d")
        await until_asked(pilot)
        prompt = app.screen
        assert isinstance(prompt, ConfirmScreen) and prompt.question == "Discard 1 write not saved yet?"
        await pilot.press("y")
        await wait_until(pilot, lambda: app.writes.pending == 0 and app.saving == "")
        assert grades(ws_root) == []
        assert note.value == "x"  # the box kept what was typed in it
