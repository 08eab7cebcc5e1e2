"""Quitting keeps what the operator typed: ctrl+q over a dialog on a session with a draft asks first, as `q` does
with no dialog (over the replace-grade question it quit at once, the draft it asks about dropped); and `q` while a
write waits for another writer's lock says at once that the quit waits for it (nothing was drawn until the lock
timeout), then quits once the write is in the log. s4 is pending (tests/tui/tui_fixture.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import app as app_module
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit, LeaveQuestion
from lesson_credit.tui.screens.grade_value import GradeValueScreen
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.lock_holder import LockHolder
from tests.support.textual_private import notification_texts
from tests.tui.test_tui_lock_wait import LOCK, grades, make_app
from tests.tui.tui_fixture import burst, settle, wait_until


async def test_ctrl_q_over_the_replace_grade_question_asks_before_dropping_the_draft(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", "7", "c")  # s4, the operator's own 0.7
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.7)]
        burst(pilot, "8", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        burst(pilot, "ctrl+q")
        await settle(pilot)
        assert app.is_running
        assert isinstance(app.screen, LeaveQuestion)
        assert app.screen.question == "Discard the draft grade 0.8 of s4 and quit?"
        burst(pilot, "ctrl+q")  # over the question itself: nothing more is asked
        await settle(pilot)
        assert app.is_running and len([s for s in app.screen_stack if isinstance(s, LeaveQuestion)]) == 1
        burst(pilot, "escape")  # keep the draft: back to the replace-grade question, which replaces it
        await settle(pilot)
        assert isinstance(app.screen, ConfirmCommit)
        burst(pilot, "c")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen)
    assert grades(ws_root) == [("s4", 0.7), ("s4", 0.8)]


@pytest.mark.parametrize("opens", ["g", "question_mark"])
async def test_ctrl_q_over_the_grade_box_or_help_asks_before_dropping_the_draft(
    app: LessonCreditApp, ws_root: Path, opens: str
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "n", "6", opens)
        await settle(pilot)
        assert isinstance(app.screen, GradeValueScreen if opens == "g" else HelpScreen)
        burst(pilot, "ctrl+q")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, LeaveQuestion)
        burst(pilot, "y")  # discard and quit
        await settle(pilot)
        assert not app.is_running
    assert grades(ws_root) == []


async def graded_under_the_lock(pilot: Any, app: LessonCreditApp) -> None:
    """`s n 7 c` (s4, the first pending session, graded 0.7), its write waiting for the lock another writer holds."""
    await settle(pilot)
    burst(pilot, "s", "n", "7", "c")
    await wait_until(pilot, lambda: app.saving == "1 write waits for another writer's lock")


async def test_q_while_a_write_waits_for_the_lock_says_so_at_once_and_quits_once_it_is_written(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quit waited in the key's action, which stopped the app's messages: nothing was drawn until the write
    failed at the lock timeout (30 s). The lock is held for real until the toast is raised."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")  # the writer waits; it does not fail
    monkeypatch.setattr(app_module, "TOAST_SECONDS", 3600.0)  # the toast outlives a loaded machine's waits
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await graded_under_the_lock(pilot, app)
            burst(pilot, "q")
            said = ("", "Quitting once 1 write is saved…")  # (the app's own messages go on: its toast is raised)
            try:  # (bounded: the old code's wait never ended, its key's action holding the app's messages)
                await asyncio.wait_for(wait_until(pilot, lambda: said in notification_texts(app)), 120)
                assert app.is_running and grades(ws_root) == []
            finally:
                holder.release()
            await wait_until(pilot, lambda: not app.is_running)
    assert grades(ws_root) == [("s4", 0.7)]


async def test_a_draft_typed_while_the_quit_waits_is_asked_about_before_quitting(
    workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review30: `q` while a write waits for the lock leaves the app answering keys; a draft typed meanwhile (4 on
    the next session) was dropped without a word when the write landed and the app quit. Now the quit asks about
    it first, as `q` does over a draft; `y` then quits."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")  # the writer waits; it does not fail
    app = make_app(workspace)
    with LockHolder(ws_root / LOCK) as holder:
        async with app.run_test(size=(80, 24)) as pilot:
            await graded_under_the_lock(pilot, app)
            burst(pilot, "q", "n", "4")
            await wait_until(pilot, lambda: getattr(app.screen, "draft", None) == 0.4)
            holder.release()
            await wait_until(pilot, lambda: isinstance(app.screen, LeaveQuestion) or not app.is_running)
            assert app.is_running and isinstance(app.screen, LeaveQuestion)
            await settle(pilot)  # the question drawn: a key typed before it waits, named in it, and answers nothing
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.is_running)
    assert grades(ws_root) == [("s4", 0.7)]
