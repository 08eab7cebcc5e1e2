"""Pilot tests for a queued write that fails: the dashboard must then say what the log says.

The append is made to raise (the way a full disk or an unwritable log does) for the first write
only; the keys after it are typed as an operator would. s1 is logged graded 0.8, s4 pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_fixture import log_lines, settle

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.source import WorkspaceSource

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def every_toast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every notification (message and title): a toast expires before a loaded machine finishes."""
    real = LessonCreditApp.notify

    def notify(self: LessonCreditApp, message: str, *args: Any, **kwargs: Any) -> None:
        seen = self.__dict__.setdefault("toasts_seen", [])
        seen.append((str(kwargs.get("title", "")), str(message), str(kwargs.get("severity", "information"))))
        real(self, message, *args, **kwargs)

    monkeypatch.setattr(LessonCreditApp, "notify", notify)


def errors(app: LessonCreditApp) -> list[str]:
    seen = app.__dict__.get("toasts_seen", [])
    return [f"{title}: {message}" for title, message, severity in seen if severity == "error"]


def fail_first_append(source: WorkspaceSource) -> list[str]:
    """The next append raises OSError (nothing reaches the log); later ones write. Returns the
    sessions whose append failed."""
    real = source.append_grade
    failed: list[str] = []

    def append_grade(session_id: str, *args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(session_id)
            raise OSError(28, "No space left on device")
        return real(session_id, *args, **kwargs)

    source.append_grade = append_grade  # type: ignore[method-assign]  # this source's writes fail once
    return failed


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


async def open_detail(pilot: Pilot[None], session_id: str) -> SessionDetailScreen:
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    detail = SessionDetailScreen(app.source, session_id)
    await pilot.app.push_screen(detail)
    await settle(pilot)
    return detail


async def test_a_failed_regrade_leaves_the_confirm_prompt_naming_the_logged_grade(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s1")  # graded 0.8
        failed = fail_first_append(app.source)
        await pilot.press("5", "c", "c")  # asks (over 0.8), confirmed: the append raises
        await settle(pilot)
        assert failed == ["s1"] and grades(ws_root) == []
        shown = errors(app)
        assert len(shown) == 1 and "s1" in shown[0] and "0.5" in shown[0], shown
        await pilot.press("6", "c")
        await settle(pilot)
        prompt = app.screen
        assert isinstance(prompt, ConfirmCommit)
        # the log still says 0.8: the failed 0.5 is not what the new grade replaces
        assert "Grade s1 0.6, in force over the heuristic's 0.8?" in prompt.question, prompt.question
        await pilot.press("c")
        await settle(pilot)
        assert grades(ws_root) == [("s1", 0.6)]


async def test_a_failed_first_grade_leaves_the_session_pending(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = await open_detail(pilot, "s4")  # pending
        failed = fail_first_append(app.source)
        await pilot.press("7", "c")
        await settle(pilot)
        assert failed == ["s4"] and grades(ws_root) == []
        assert any("s4" in e for e in errors(app))
        assert app.writes.expected("s4", None) is None  # the log's "pending", not the typed 0.7
        assert not app.writes.can_undo("s4")  # nothing was written: nothing to undo
        # s4 is still the one pending session: next-pending from it wraps to no other, from s1 finds it
        assert app.snapshot is not None
        assert app.snapshot.next_pending("s1", app.writes.expected, app.writes.touched()) == "s4"
        await pilot.press("8", "c")  # a first grade again: written without asking to replace 0.7
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmCommit)
        assert grades(ws_root) == [("s4", 0.8)]
        assert detail.base is not None and detail.base.session.base_reward == 0.8


async def test_writes_queued_behind_a_failed_one_keep_their_expectation(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_detail(pilot, "s4")
        fail_first_append(app.source)
        await pilot.press("7", "c", "9", "c")  # 0.7 fails; 0.9 (asked over the expected 0.7, confirmed) writes
        if isinstance(app.screen, ConfirmCommit):
            await pilot.press("c")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.9)]
        assert app.writes.expected("s4", 0.9) == 0.9
        await pilot.press("u")  # undoes the 0.9, which replaced what the log had: pending
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.9), ("s4", None)]


def warnings_shown(app: LessonCreditApp) -> list[str]:
    seen = app.__dict__.get("toasts_seen", [])
    return [f"{title}: {message}" for title, message, severity in seen if severity == "warning"]


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
